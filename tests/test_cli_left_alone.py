"""Left alone, on real processes (docs/protocol.md §9.3, *Left alone*): two ``nertz node``
bots on 127.0.0.1, one leaves in play (a signal: a node leaves cleanly on the first one); the
other ends with the game over, the round void, the win its own (the leaver forfeits the
game, session 33), and exits 0. Until
session 32 it played on alone until the table was gone (§9.9) and stopped in play, exit 3,
"the others have left the game", its round unscored and the game never over in any log.

The fold's cases (in play, in the deal, after the end, the audit, the words) are pure tests in
``tests/test_left_alone.py``; this is the one that shows it on real sockets.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import cli_run, json_lines_until, node_game, stop_all

from p2p_nertz.audit import LogSource, audit
from p2p_nertz.rules import Rules

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def test_node_left_alone_by_a_leave_ends_the_game_with_its_result(tmp_path: Path) -> None:
    # One round, in play: Bea (--progress) leaves after the first card to the lake.
    spec, procs, logs = node_game(
        tmp_path, ("Ann", "Bea"), Rules(target=None, rounds=1),
        keys=b"test-cli-left-alone", salt=b"left-alone",
        args=lambda n: ("--progress",) if n == 1 else (),
    )  # fmt: skip
    try:
        json_lines_until(procs[1], "lake")
        procs[1].send_signal(signal.SIGTERM)
        assert procs[1].wait(timeout=60) == 128 + signal.SIGTERM
        lines = json_lines_until(procs[0], "final")
        assert procs[0].wait(timeout=60) == 0  # not 3: the table is not gone, the game is over
        err = procs[0].stderr.read() if procs[0].stderr else ""
    finally:
        stop_all(procs)
    assert "Traceback" not in err and "have left" not in err, err
    (over,) = [x for x in lines if x["event"] == "over"]
    final = lines[-1]
    bea = [m.name for m in spec.members].index("Bea")  # (seats are in the spec's order)
    # The round in play is void: no round scored, 0 all; Ann wins, Bea forfeiting the game
    # by her leave (rules.md: leaving the game; until session 33 the 0-0 tie was shared).
    assert over["termination"] == "abandoned" and over["totals"] == [0, 0]
    assert over["winners"] == [1 - bea] and not [x for x in lines if x["event"] == "round"]
    assert final["over"] and final["rounds"] == 0 and final["gone"] is None
    assert final["totals"] == [0, 0] and not final["provisional"]
    # Ended by Bea's leave, not by an abandon of her (the same result): the logs say so, and
    # the audit of the two finds the game valid and finished.
    report = audit([LogSource.from_bytes(p.name, p.read_bytes()) for p in logs])
    assert report.valid and report.finished, report.violations
    assert report.state is not None and report.state.left_alone == bea
    assert report.state.abandoned is None and report.winners == (1 - bea,)


def test_node_that_leaves_unheard_says_its_leave_provisional(tmp_path: Path) -> None:
    """Bea leaves while Ann is stopped (SIGSTOP: no ack of the leave can come): Bea's node
    stops after its grace with the leave held by nobody else, and its last line marks what
    the leave decided provisional, never the leave's end as final (session 38: a vote or an
    abandon Ann signs without the leave may undo it, docs/protocol.md §9.3); a resume of
    Bea's log says the same."""
    _spec, procs, logs = node_game(
        tmp_path, ("Ann", "Bea"), Rules(target=None, rounds=1),
        keys=b"test-cli-leave-unheard", salt=b"leave-unheard",
        args=lambda n: ("--progress",) if n == 1 else (),
    )  # fmt: skip
    try:
        json_lines_until(procs[1], "lake")
        procs[0].send_signal(signal.SIGSTOP)
        procs[1].send_signal(signal.SIGTERM)
        lines = json_lines_until(procs[1], "final")
        assert procs[1].wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        procs[0].send_signal(signal.SIGCONT)
        stop_all(procs)
    final = lines[-1]
    assert final["leave_pending"] and final["provisional"] and not final["over"]
    assert not [x for x in lines if x["event"] == "over"]  # (no end said as final)
    done = cli_run(
        [sys.executable, "-m", "cli", "resume", str(logs[1]), "--key", str(tmp_path / "1.key"),
         "--json"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False, timeout=60,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    (line,) = [json.loads(x) for x in done.stdout.splitlines()]
    assert line["event"] == "ended" and line["left"] and line["provisional"]
