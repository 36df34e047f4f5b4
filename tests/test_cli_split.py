"""A real two-player game with one node stopped (``SIGSTOP``) past its opponent's
``--drop-after``, then continued (issue 13: each side used to end with its own totals and
digest, and on some seeds each declared itself the winner).

Two ``nertz node`` processes play over ZeroMQ on 127.0.0.1 with short timers. Once a round is
scored, one is stopped; the other abandons it (its ``over`` line says so) and waits for it; the
stopped one is continued, learns it was abandoned, answers with its own abandon, and both end
on the same settled result, which ``nertz audit`` finds valid from their two logs. The order
of things is read from the processes' own JSON lines: no sleep stands in for it.

The silence is the test's own (session 44): both nodes' silence votes and abandons are aimed
(:class:`~p2p_nertz.testing.silences.SilenceAim`, ``tests/timed_node.py``'s ``--aim``), Ann's
at Bob once he is stopped, Bob's at nobody. On the timer alone a loaded machine's stall of one
process is a silence too: Ann could abandon a starved Bob before a round was scored (CI met
that once), or a woken Bob abandon Ann before reading her abandon.
"""

from __future__ import annotations

import signal
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from cli_helpers import SHORT_ROUND, json_lines_until, node_game, stop_all
from cli_results import assert_audit_valid, final_event

pytestmark = pytest.mark.skipif(
    not hasattr(signal, "SIGUSR2"), reason="needs SIGSTOP, SIGCONT and SIGUSR2 (POSIX)"
)

TIMERS = ["--suspect-after", "1", "--drop-after", "3"]
TIMED = Path(__file__).with_name("timed_node.py")
AIMS = ("Bob", "")
"""Whom Ann and Bob abandon (or vote out) for silence once told (``SIGUSR2``): Ann, Bob."""


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_split_a_node_stopped_past_drop_after_then_continued_ends_on_the_same_result(
    tmp_path: Path,
) -> None:
    _, procs, logs = node_game(
        tmp_path,
        ("Ann", "Bob"),
        replace(SHORT_ROUND, rounds=6),
        keys=b"test-cli-split",
        salt=b"split-sigstop",
        args=lambda n: TIMERS,
        wrap=lambda n: [sys.executable, str(TIMED), "60", f"--aim={AIMS[n]}", "--"],
    )
    try:
        ann, bob = procs
        json_lines_until(ann, "round")  # a round is scored on both sides' tables
        bob.send_signal(signal.SIGSTOP)
        ann.send_signal(signal.SIGUSR2)  # (Bob's silence is the one her timer answers)
        try:
            ended = json_lines_until(ann, "over")  # Bob silent past Ann's --drop-after
        finally:
            bob.send_signal(signal.SIGCONT)
        assert ended[-1]["termination"] == "abandoned"
        outs = [proc.communicate(timeout=60) for proc in procs]
    finally:
        stop_all(procs)
    for proc, (_, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    finals = [final_event(out) for out, _ in outs]
    # One result on both sides, settled: the same rounds counted, the same winner.
    assert all(f["over"] for f in finals)
    assert finals[0]["totals"] == finals[1]["totals"]
    assert finals[0]["winners"] == finals[1]["winners"]
    assert finals[0]["digest"] == finals[1]["digest"]
    assert finals[0]["provisional"] is finals[1]["provisional"] is False
    assert finals[0]["rounds"] >= 1
    # And the audit of the two logs agrees: valid, no split.
    assert_audit_valid(logs)
