"""Real nodes say on whom a table waits when a member heard owes its phase event: ``nertz node
--json``'s ``owing``/``owing_over`` and a real ``nertz watch``'s screen (docs/protocol.md §9.5,
*Why a table waits*; session 40). Session 39 built the notices and tested their printers and
the simulator's tables; no real process had said one.

Real ``nertz node`` processes over ZeroMQ on 127.0.0.1, short liveness timers, and a phase
timer of a few seconds (``tests/timed_node.py``: 60 s by default, no option of the commands).
A member that beats but never signs its ``ready`` (``timed_node.py --withhold``) is told owing
it by the others after :data:`~p2p_nertz.protocol.unmet.UNMET_AFTER` seconds; at three
players the two others vote it out *withheld* at the phase timer (the end: ``dropped``); at
two, released by a signal, it signs it (the end: ``given``).

A drop decided, not final (session 41): on real nodes the five-player table of the simulator's
tests (``tests/test_ui_table_waits.py``: a member killed, a liar naming two of its events past
those the liar holds) is a race, the killed member's last events sometimes in flight and
relayed later (session 40). At three players it holds for as long as a test likes: Cy killed,
Bob votes it out first and Ann's vote decides the drop; Bob's node stops right as it holds
that vote (``timed_node.py --stop-at-drop``: its effects wait, as a stopped process's would),
so its word on Ann's vote, which the drop's finality needs, never comes until a signal
releases it; Ann alone cannot drop Bob (one of the two members left).

Which vote comes first is the test's, not the clock's (session 43): every node's silence votes
are aimed (``timed_node.py --aim``, :class:`~p2p_nertz.testing.silences.SilenceAim`), Bob's
at Cy once it is killed, Ann's at Cy once she has told Bob's vote short; Cy's at nobody.
Before, Bob voted first on a shorter ``--drop-after`` (2 s to Ann's 8): a stall of Bob's
process past the difference on a loaded machine would make his vote the one that decides,
held back by his own stop, and a stall of one node before the kill could draw the two
others' votes.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import json_lines_until, node_game, stop_all
from test_node_held_back import watch_game

from cli.node_cmd import notice_line
from p2p_nertz.protocol.finality import KNOWN
from p2p_nertz.protocol.phase_waits import Awaited
from p2p_nertz.protocol.state import Phase
from p2p_nertz.protocol.unmet import DropEnd, DropPending, DropWaits, Owed, OwedEnd, Owing
from p2p_nertz.rules import Rules
from p2p_nertz.testing.said import lines

pytestmark = [
    pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="needs SIGKILL and SIGUSR1 (POSIX)"),
    pytest.mark.slow,
    pytest.mark.timeout(300),
]

TIMERS = ["--suspect-after", "1", "--drop-after", "3"]
UNSILENCED = ["--suspect-after", "1", "--drop-after", "480"]
"""Timers under which no silence votes anybody out within a test (session 42): a loaded
machine can stall a node's own log sync for seconds (8 s at a load of 40), and short ones
answered it by voting out the honest member stalled (``tests/test_node_liars.py``)."""
TIMED = Path(__file__).with_name("timed_node.py")
LIAR = Path(__file__).with_name("aimed_liar_node.py")
RULES = Rules(target=None, rounds=1)


def _until(proc: Any, name: str, events: set[str]) -> dict[str, dict[str, Any]]:
    """The first JSON line of each of ``events`` that ``proc`` prints (each line's wait
    bounded: a hang's bound)."""
    found: dict[str, dict[str, Any]] = {}
    for text in lines(proc, name, bound=120.0):
        if text.startswith("{"):
            line = json.loads(text)
            found.setdefault(line["event"], line)
            if events <= set(found):
                return found
    raise AssertionError(f"{name} ended before {events - set(found)}: {found}")


def _timed(
    timeout: float, *, withhold: bool = False, stop: bool = False, aim: str | None = None
) -> list[str]:
    options = [*(["--withhold"] if withhold else []), *(["--stop-at-drop"] if stop else [])]
    options += [] if aim is None else [f"--aim={aim}"]
    return [sys.executable, str(TIMED), str(timeout), *options, "--"]


def _owing(
    line: dict[str, Any],
    seat: int,
    names: list[str],
    ended: OwedEnd | None,
    others: list[dict[str, Any]] | None = None,
) -> None:
    """``line`` is the ``owing`` notice (``ended`` ``None``) or the ``owing_over`` (why:
    ``ended``; ``others``: the members it names silent) of member ``seat`` owing its ``ready``
    of round 1, in the node's words."""
    assert (line["seat"], line["name"]) == (seat, names[seat])
    assert line["phase_event"] == {"round": 1, "phase": "play"}
    assert line["events"] is None and line["cover"] == [] and line["relays"] == []
    owing = Owing(seat, 0.0, event=Awaited(1, Phase.PLAY, b"", seat))  # (its time: not said)
    silent = tuple(other["seat"] for other in others or [])
    event, text, fields = notice_line(Owed(owing, ended, silent), names)
    assert line["event"] == event and line["words"] == text
    assert line.get("why") == fields.get("why")


def _owing_lines(proc: Any, name: str, seat: int) -> Iterator[dict[str, Any]]:
    """The ``owing`` and ``owing_over`` JSON lines ``proc`` prints about member ``seat``, in
    order (each line's wait bounded: a hang's bound)."""
    for text in lines(proc, name, bound=120.0):
        if text.startswith("{"):
            line = json.loads(text)
            if line["event"] in ("owing", "owing_over") and line["seat"] == seat:
                yield line
    raise AssertionError(f"{name} ended before the owing of seat {seat} did")


def _owing_end(said: Iterator[dict[str, Any]], seat: int, names: list[str]) -> dict[str, Any]:
    """The end of an owing told (``said``: :func:`_owing_lines` past the first ``owing``) that
    is no silence: a loaded machine can starve the member owing past ``--suspect-after``
    (1 s), a real silence, and the wait is told ended *silent now*, or another member, and the
    wait is told timed anew (*anew*, naming it), then told anew once every member is heard and
    the member owes the while (session 43: 3 runs in 10 at a load of 20-33; the second was
    told *given* before session 43). Each line between is checked as such."""
    for over in said:
        assert over["event"] == "owing_over", over
        _owing(over, seat, names, OwedEnd(over["why"]), over.get("silent", []))
        if over["why"] not in (OwedEnd.SILENT.value, OwedEnd.ANEW.value):
            return over
        again = next(said)  # (told anew, or the game's end fails it)
        assert again["event"] == "owing", again
        _owing(again, seat, names, None)
    raise AssertionError("unreachable: _owing_lines raises at the end")


def _given_or_moot(proc: Any, name: str, seat: int, names: list[str]) -> dict[str, Any] | None:
    """The end of the owing told (its ``owing`` read) of member ``seat``, once its ready is
    signed, that is no silence (each silence end, and the owing told anew, checked as such);
    ``None`` if the ready came while the wait was not told (ended *silent now* or *anew*, not
    told anew: a card to the lake, ``--progress``, says play began). A stall of the member's
    process past Ann's 1 s suspicion, the signal's moment, ends the wait *silent* (session 43:
    1 run in 10 beside 4 CPU burners at a load of 45)."""
    told = True
    for text in lines(proc, name, bound=120.0):
        line = json.loads(text) if text.startswith("{") else {"event": None}
        if line["event"] == "lake" and not told:
            return None
        if line["event"] not in ("owing", "owing_over") or line["seat"] != seat:
            continue
        assert told is (line["event"] == "owing_over"), line  # (told, then its end)
        told = line["event"] == "owing"
        _owing(line, seat, names, None if told else OwedEnd(line["why"]), line.get("silent"))
        if not told and line["why"] not in (OwedEnd.SILENT.value, OwedEnd.ANEW.value):
            return line
    raise AssertionError(f"{name} ended before the owing of seat {seat} did")


def test_node_owing_a_ready_withheld_is_told_then_dropped_and_watched(tmp_path: Path) -> None:
    names, keys, salt = ("Ann", "Bob", "Cy"), b"test-node-owing-3", b"owing-3"
    watcher, address = watch_game(tmp_path, keys, salt, names)
    # Only Ann's and Bob's phase timer votes within the game (Cy's is past it, none votes for
    # silence): a drop takes two votes of three, so only Cy can be dropped, whatever the load.
    spec, procs, _ = node_game(
        tmp_path, names, RULES, keys=keys, salt=salt,
        args=lambda n: [*UNSILENCED, "--watcher", address],
        wrap=lambda n: _timed(480.0 if n == 2 else 12.0, withhold=n == 2),
    )  # fmt: skip
    seat = {m.name: s for s, m in enumerate(spec.members)}  # (the spec orders the seats)
    names_ = [m.name for m in spec.members]
    try:
        ann, bob, _ = procs
        said = _owing_lines(ann, "Ann", seat["Cy"])
        told = next(said)
        _owing(told, seat["Cy"], names_, None)
        assert told["words"] == "the table waits on Cy, heard but not sending its ready of round 1"
        # The watcher says it too, as a player's table: its row, or the one-row summary.
        screen = watcher.wait(lambda t: told["words"] in t or "Cy heard, not sending" in t)
        assert told["words"] in screen or "Cy heard, not sending" in screen
        # Ann and Bob vote Cy out at the phase timer: the wait ends, dropped.
        _owing(_owing_end(said, seat["Cy"], names_), seat["Cy"], names_, OwedEnd.DROPPED)
        said = _owing_lines(bob, "Bob", seat["Cy"])  # (Bob says both as well)
        _owing(next(said), seat["Cy"], names_, None)
        _owing(_owing_end(said, seat["Cy"], names_), seat["Cy"], names_, OwedEnd.DROPPED)
    finally:
        stop_all(procs)
        watcher.close()


def test_node_owing_a_ready_given_at_two_players_is_told_given(tmp_path: Path) -> None:
    names, keys, salt = ("Ann", "Bob"), b"test-node-owing-2", b"owing-2"
    # No timer but the signal ends the owing (session 43): Ann votes Bob out neither for
    # silence nor for withholding within the test (at two, either was an abandon on a stall).
    spec, procs, _ = node_game(
        tmp_path, names, RULES, keys=keys, salt=salt,
        args=lambda n: [*UNSILENCED, "--progress"],
        wrap=lambda n: _timed(480.0, withhold=n == 1),
    )  # fmt: skip
    seat = {m.name: s for s, m in enumerate(spec.members)}
    names_ = [m.name for m in spec.members]
    try:
        ann, bob = procs
        _owing(_until(ann, "Ann", {"owing"})["owing"], seat["Bob"], names_, None)
        bob.send_signal(signal.SIGUSR1)  # (it signs its ready now)
        over = _given_or_moot(ann, "Ann", seat["Bob"], names_)
        if over is not None:
            _owing(over, seat["Bob"], names_, OwedEnd.GIVEN)
    finally:
        stop_all(procs)


def test_node_drop_waits_on_a_stopped_member_told_then_final_and_watched(tmp_path: Path) -> None:
    names, keys, salt = ("Ann", "Bob", "Cy"), b"test-node-drop-waits", b"drop-waits"
    watcher, address = watch_game(tmp_path, keys, salt, names)
    spec, procs, _ = node_game(
        tmp_path, names, RULES, keys=keys, salt=salt,
        args=lambda n: [*TIMERS, "--speed", "1", "--progress", "--watcher", address],
        wrap=lambda n: _timed(60.0, stop=n == 1, aim="" if n == 2 else "Cy"),
    )  # fmt: skip
    seat = {m.name: s for s, m in enumerate(spec.members)}
    try:
        ann, bob, cy = procs
        json_lines_until(ann, "lake")  # the round is in play
        cy.kill()
        cy.wait(timeout=60)
        bob.send_signal(signal.SIGUSR2)  # (Bob votes Cy out: the first vote)
        short = _until(ann, "Ann", {"vote_short"})["vote_short"]
        assert (short["seat"], short["voters"]) == (seat["Cy"], [seat["Bob"]]), short
        ann.send_signal(signal.SIGUSR2)  # (Ann's vote, the second, decides the drop)
        told = _until(ann, "Ann", {"drop_waits"})["drop_waits"]
        assert (told["seat"], told["name"]) == (seat["Cy"], "Cy")
        # What holds it back is Bob: its events (it can still send one timed before Ann's
        # vote: its last beat came before), or its word on Ann's events (a beat of Bob's was
        # timed past the vote before the vote reached it), as the clocks fell.
        on = told["on"]
        if on["kind"] == "events":
            assert (on["seat"], on["name"]) == (seat["Bob"], "Bob")
            term = (KNOWN, seat["Bob"])
        else:
            assert on == {"kind": "word", "seat": seat["Ann"], "name": "Ann"} | {
                "by": seat["Bob"], "by_name": "Bob"
            }  # fmt: skip
            term = (seat["Bob"], seat["Ann"])
        names_ = [m.name for m in spec.members]
        pending = DropPending(seat["Cy"], term)
        assert told["words"] == notice_line(DropWaits(pending), names_)[1]
        assert told["words"].startswith("Cy's drop is decided, not final: it waits on Bob's")
        # The watcher tells it too, by the same rule: its row, or the one-row summary.
        screen = watcher.wait(lambda t: told["words"] in t or "Cy: drop not final" in t)
        assert told["words"] in screen or "Cy: drop not final" in screen
        bob.send_signal(signal.SIGUSR1)  # (its word comes: the drop is final)
        over = _until(ann, "Ann", {"drop_waits_over"})["drop_waits_over"]
        assert (over["seat"], over["why"]) == (seat["Cy"], DropEnd.FINAL.value)
        assert over["words"] == notice_line(DropWaits(pending, DropEnd.FINAL), names_)[1]
        watcher.wait(lambda t: told["words"] not in t and "Cy: drop not final" not in t)
    finally:
        stop_all(procs)
        watcher.close()
