"""``nertz node --json`` says when a vote to drop a member stands short of a majority for a
while (``vote_short``), and when it no longer does (``vote_short_over``, with ``why``):
docs/protocol.md §9.5, *Votes short of a majority* (session 37; before, the node logged the
first as a text line alone, and its end not at all).

Four real ``nertz node`` processes over ZeroMQ on 127.0.0.1, short timers. Two are stopped
(``SIGSTOP``) in play: each of the two left votes both out for silence, two votes of the
three a drop needs, and they stand so. Then one of the two is continued (``SIGCONT``): heard
again, the votes on it are withdrawn; it votes the other out in turn (a waker votes nobody
out before it has listened a while, §9.2), the third vote, and that member is dropped. Each
begins and ends once, as the node's JSON lines say, in the words the table shows.

The silences are the test's own (session 43): each node's silence votes are aimed
(``tests/timed_node.py --aim``, :class:`~p2p_nertz.testing.silences.SilenceAim`), Ann's and
Bob's at Cy and Di once they are stopped, Di's at Cy once it is continued, Cy's at nobody, and
a member voted out once is not voted out for silence again. On the quick timer alone a loaded
machine's stall of one process is a silence too: before the stops three could vote the
fourth out, and meanwhile a vote on a stalled Ann, Bob or a just-woken Di would be told short
beside the test's, or, once Cy was out, drop Di.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import json_lines_until, node_game, stop_all

from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.unmet import Unmet, UnmetEnd, VoteShort
from p2p_nertz.rules import Rules
from p2p_nertz.ui.view import vote_short_words

pytestmark = [
    pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs SIGSTOP and SIGCONT (POSIX)"),
    pytest.mark.slow,
    pytest.mark.timeout(300),
]

NAMES = ("Ann", "Bob", "Cy", "Di")
TIMERS = ["--suspect-after", "1", "--drop-after", "3"]
TIMED = Path(__file__).with_name("timed_node.py")
AIMS = ("Cy,Di", "Cy,Di", "", "Cy")
"""Whom each node votes out for silence once told (``SIGUSR2``), by seat in :data:`NAMES`."""


def _each(proc: subprocess.Popen[str], event: str, seats: set[int]) -> dict[int, dict[str, Any]]:
    """The first JSON line ``event`` about each of ``seats`` that ``proc`` prints, by seat;
    read until each has come (other lines skipped), failing if one comes twice."""
    found: dict[int, dict[str, Any]] = {}
    while set(found) != seats:
        line = json_lines_until(proc, event)[-1]
        assert line["seat"] not in found, (line, found)
        found[line["seat"]] = line
    return found


def _words(line: dict[str, Any], ended: UnmetEnd | None, names: list[str]) -> str:
    """The words the node's line must have: the table's, for the vote the line describes."""
    vote = Unmet(
        line["seat"],
        tuple(DropReason[r.upper()] for r in line["reasons"]),
        tuple(line["voters"]),
        line["majority"],
        line["members"],
    )
    return " — ".join(vote_short_words(VoteShort(vote, ended), names.__getitem__))


def test_a_node_says_a_vote_short_of_a_majority_and_its_end_in_json(tmp_path: Path) -> None:
    spec, procs, _ = node_game(
        tmp_path, NAMES, Rules(target=None, rounds=1), keys=b"test-node-vote-short",
        salt=b"vote-short", args=lambda n: [*TIMERS, "--speed", "1", "--progress"],
        wrap=lambda n: [sys.executable, str(TIMED), "60", f"--aim={AIMS[n]}", "--"],
    )  # fmt: skip
    ann, bob, cy, di = procs
    seat = {m.name: s for s, m in enumerate(spec.members)}  # (the spec orders the seats)
    names = [m.name for m in spec.members]
    try:
        json_lines_until(ann, "lake")  # the round is in play
        cy.send_signal(signal.SIGSTOP)
        di.send_signal(signal.SIGSTOP)
        ann.send_signal(signal.SIGUSR2)  # (the silences Ann and Bob answer: Cy's and Di's)
        bob.send_signal(signal.SIGUSR2)
        # Ann and Bob vote both out for silence: two of three, short; said once it stood.
        short = _each(ann, "vote_short", {seat["Cy"], seat["Di"]})
        voters = sorted((seat["Ann"], seat["Bob"]))
        for s, line in short.items():
            assert line["name"] == names[s]
            assert line["reasons"] == ["silent"]
            assert line["voters"] == voters and line["voter_names"] == [names[v] for v in voters]
            assert (line["votes"], line["majority"], line["members"]) == (2, 3, 4)
            assert line["words"] == _words(line, None, names)
            assert "2 of 3 votes" in line["words"]
        di.send_signal(signal.SIGUSR2)  # (pending until continued: then it answers Cy's)
        di.send_signal(signal.SIGCONT)
        # Di heard again: the votes on it withdrawn. Di votes Cy out, the third vote: dropped.
        ended = _each(ann, "vote_short_over", {seat["Cy"], seat["Di"]})
        assert ended[seat["Di"]]["why"] == UnmetEnd.WITHDRAWN.value
        assert ended[seat["Cy"]]["why"] == UnmetEnd.DROPPED.value
        for s, line in ended.items():
            assert {k: v for k, v in line.items() if k not in ("event", "why", "words")} == {
                k: v for k, v in short[s].items() if k not in ("event", "words")
            }  # (the vote as it was told)
            assert line["words"] == _words(line, UnmetEnd(line["why"]), names)
        # Each said once: the rest of the game tells neither again; Cy is out, Di in (Ann's
        # leave counts her out too).
        ann.send_signal(signal.SIGTERM)
        rest, err = ann.communicate(timeout=120)
        assert "Traceback" not in err
        lines = [json.loads(x) for x in rest.splitlines() if x.startswith("{")]
        assert not {"vote_short", "vote_short_over"} & {line["event"] for line in lines}
        final = lines[-1]
        assert final["event"] == "final", final
        assert seat["Cy"] in final["dropped"] and seat["Di"] not in final["dropped"], final
    finally:
        stop_all(procs)
