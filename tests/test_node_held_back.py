"""``nertz node --json`` says on whom a table waits when a member's events wait for events
that never came (``held_back``), beside the votes short of a majority (``vote_short``):
docs/protocol.md §9.5, *Why a table waits* (session 38).

Three real ``nertz node`` processes over ZeroMQ on 127.0.0.1, short timers. In play, Bob is
killed (SIGKILL), then Cy, a liar (``tests/aimed_liar_node.py``), names in its next event's
frontier two events of Bob's nobody signed. Ann holds Cy's events back from then on, its vote
on Bob with them: her vote on Bob is one of the two a drop needs, and no honest majority runs,
so the table waits for good (§9.3). Before session 38 Ann said the vote short alone; now she
says too that the table waits on Cy, and for which of Bob's events, in the table's words.

The silences are the test's own (session 43): each node's silence votes are aimed
(:class:`~p2p_nertz.testing.silences.SilenceAim`), Ann's at Bob once he is killed, Cy's at
Bob once its lie is armed, Bob's at nobody. On the quick timer alone a loaded machine's stall
of one process is a silence too: before the kill two nodes could vote the third out, Ann's
first vote short could be on a stalled Cy, and Cy's vote on Bob, cast before a late signal
armed its lie, would not be held back and would drop Bob.

A real ``nertz watch`` follows the same game (session 39): every node pushes to it, and its
spectator, which holds Cy's events back as Ann does, shows on its 80×24 screen that the table
waits on Cy (session 38 built the spectator's rows, never checked on a real ``watch``).
"""

from __future__ import annotations

import json
import re
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import json_lines_until, node_game, node_spec, stop_all
from test_cli_play import Tty

from cli.keyfile import write_key
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.unmet import FeedHeld, HeldBack
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.testing.said import lines
from p2p_nertz.ui.view import feed_held_words

pytestmark = [
    pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="needs SIGKILL and SIGUSR1 (POSIX)"),
    pytest.mark.slow,
    pytest.mark.timeout(300),
]

NAMES = ("Ann", "Bob", "Cy")
TIMERS = ["--suspect-after", "1", "--drop-after", "3"]
LIAR = Path(__file__).with_name("aimed_liar_node.py")
TIMED = Path(__file__).with_name("timed_node.py")
AIMS = ("Bob", "")
"""Whom Ann and Bob vote out for silence once told (``SIGUSR2``; Cy, the liar, aims at Bob
as its lie is armed: ``tests/aimed_liar_node.py``)."""
RULES = Rules(target=None, rounds=1)


def _until(proc: Any, events: set[str]) -> dict[str, dict[str, Any]]:
    """The first JSON line of each of ``events`` that ``proc`` prints (each line's wait
    bounded: a hang's bound)."""
    found: dict[str, dict[str, Any]] = {}
    for text in lines(proc, "Ann", bound=120.0):
        if text.startswith("{"):
            line = json.loads(text)
            found.setdefault(line["event"], line)
            if events <= set(found):
                return found
    raise AssertionError(f"Ann ended before {events - set(found)}: {found}")


def watch_game(
    tmp_path: Path, keys: bytes, salt: bytes, names: Sequence[str] = NAMES
) -> tuple[Tty, str]:
    """``nertz watch`` of :func:`node_game`'s game of ``names`` (:data:`RULES`) on a port it
    binds itself, and the ``--watcher`` address it says the members push to (as
    ``tests/test_cli_watch.py``; tests/test_node_owing.py's watcher too)."""
    _, spec = node_spec(names, RULES, keys=keys, salt=salt)
    (tmp_path / "watched.spec").write_bytes(spec.to_wire())
    spy = Identity.generate(derive_seed(b"test-node-held-back-watcher"))
    write_key(tmp_path / "spy.key", spy)
    watcher = Tty(["watch", "--spec", str(tmp_path / "watched.spec"),
                   "--key", str(tmp_path / "spy.key"), "--bind", "127.0.0.1:0"])  # fmt: skip
    pattern = rb"members push here with: --watcher (tcp://127\.0\.0\.1:\d+#\w+)"
    deadline = time.monotonic() + 60.0
    while (said := re.search(pattern, watcher.raw)) is None:
        if time.monotonic() > deadline or not watcher.pump(0.1):
            raise AssertionError(f"the watcher never said its address: {watcher.raw[-400:]!r}")
    return watcher, said.group(1).decode()


def test_a_node_says_on_whom_the_table_waits_in_json(tmp_path: Path) -> None:
    keys, salt = b"test-node-held-back", b"held-back"
    watcher, address = watch_game(tmp_path, keys, salt)
    spec, procs, _ = node_game(
        tmp_path, NAMES, RULES, keys=keys, salt=salt,
        args=lambda n: [*TIMERS, "--speed", "1", "--progress", "--watcher", address],
        wrap=lambda n: [sys.executable, str(LIAR), "Bob", "--"] if n == 2 else
                       [sys.executable, str(TIMED), "60", f"--aim={AIMS[n]}", "--"],
    )  # fmt: skip
    ann, bob, cy = procs
    seat = {m.name: s for s, m in enumerate(spec.members)}  # (the spec orders the seats)
    names = [m.name for m in spec.members]
    try:
        json_lines_until(ann, "lake")  # the round is in play
        bob.kill()
        bob.wait(timeout=60)
        cy.send_signal(signal.SIGUSR1)  # (its next event names two of Bob's, never signed)
        ann.send_signal(signal.SIGUSR2)  # (Bob's silence is the one her timer answers)
        found = _until(ann, {"held_back", "vote_short"})
        held = found["held_back"]
        assert (held["seat"], held["name"]) == (seat["Cy"], "Cy")
        (waits,) = held["waits"]
        assert (waits["seat"], waits["name"]) == (seat["Bob"], "Bob")
        assert waits["first"] <= waits["last"]
        told = HeldBack(held["seat"], held["held"], ((seat["Bob"], waits["first"], waits["last"]),))
        assert held["words"] == " — ".join(feed_held_words(FeedHeld(told), names.__getitem__))
        assert held["words"].startswith("the table waits on Cy: its events name Bob's #")
        short = found["vote_short"]
        assert (short["seat"], short["voters"], short["majority"]) == (
            seat["Bob"],
            [seat["Ann"]],
            2,
        )
        # The watcher says it too: its row, or its one-row summary where the rows do not fit.
        screen = watcher.wait(lambda t: "the table waits on Cy" in t or "Cy held back" in t)
        row = "the table waits on Cy: its events name Bob's #"
        assert "Cy held back" in screen or row in screen
    finally:
        stop_all(procs)
