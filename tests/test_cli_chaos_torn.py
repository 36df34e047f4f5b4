"""A real three-player game in which one node is killed (``SIGKILL``) mid-round, its log's last
record torn (a few bytes cut off its tail, as a power cut leaves it), and ``nertz resume``d
while the two others play on: it recovers its own events from them (docs/protocol.md §9.6),
plays the game to its end with them, and every log stays valid.

The kind of fault ``scripts/chaos.py`` calls ``kill-torn``, at three players with the others
going on (``tests/test_cli_resume_recovery.py`` has two players, the other one stopped).
Three ``nertz node`` processes over ZeroMQ on 127.0.0.1; the order of things is read from the
processes' own JSON lines and exits: no sleep stands in for it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import SHORT_ROUND, cli_popen, json_lines_until, node_game, stop_all
from cli_results import assert_audit_valid, final_event, json_events

from p2p_nertz.testing.said import reap

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")

# Long enough that the killed node, resumed at once, is not voted out on a loaded machine
# (its silence holds a process start: 10 s and more there; the drop is not under test).
TIMERS = ["--suspect-after", "2", "--drop-after", "60"]
TORN = 5  # bytes cut off the log's tail: fewer than any record frame holds


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_cli_chaos_torn_a_node_killed_with_a_torn_log_resumes_and_finishes_with_the_others(
    tmp_path: Path,
) -> None:
    _, procs, logs = node_game(
        tmp_path,
        ("Ann", "Bob", "Cy"),
        SHORT_ROUND,
        keys=b"test-cli-chaos-torn",
        salt=b"chaos-torn",
        args=lambda n: [*TIMERS, *(["--progress"] if n == 2 else [])],
    )
    try:
        victim = procs[2]
        for _ in range(3):  # three cards to the lake: Cy has signed and sent a few events
            json_lines_until(victim, "lake")
        reap(victim, "Cy's node")
        torn_size = logs[2].stat().st_size - TORN
        os.truncate(logs[2], torn_size)
        resumed = cli_popen(
            [sys.executable, "-m", "cli", "resume", str(logs[2]), "--key",
             str(tmp_path / "2.key"), "--bot", "greedy", "--json", *TIMERS],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        procs.append(resumed)
        out, err = resumed.communicate(timeout=90)
        others = [proc.communicate(timeout=60) for proc in procs[:2]]
    finally:
        stop_all(procs)
    assert resumed.returncode == 0, err
    assert "Traceback" not in err
    events = json_events(out)
    kinds = [e["event"] for e in events]
    recovering = events[kinds.index("recovering")]
    # The torn last record is cut whole: the log's good end is where that record began.
    assert recovering["reason"] == "torn"
    assert recovering["at"] + recovering["cut"] == torn_size
    assert "recovered" in kinds
    mine = events[-1]
    assert mine["event"] == "final" and mine["over"] and mine["dropped"] == []
    finals = [final_event(o) for o, _ in others]
    for proc, (_, their_err) in zip(procs[:2], others, strict=True):
        assert proc.returncode == 0, their_err
        assert "Traceback" not in their_err
    assert {f["digest"] for f in finals} == {mine["digest"]}
    assert_audit_valid(logs)
