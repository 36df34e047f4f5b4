"""The test helpers' own cleanup: what a test started is stopped, reaped and closed whatever
way the test ends, so that nothing it leaves is blamed on a later test of the same worker."""

from __future__ import annotations

import subprocess
import sys

from cli_helpers import _kill_running


def test_kill_running_reaps_and_closes_the_pipes_of_running_and_ended_processes() -> None:
    # One still running, one ended with output nobody read (a test failed before reading it):
    # both reaped and every pipe closed, so the garbage collector finds no open file later
    # (session 34: its ResourceWarning failed a simulator test after a lab test's failure).
    running = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    ended = subprocess.Popen(
        [sys.executable, "-c", "print('unread')"], stdout=subprocess.PIPE, text=True
    )
    ended.wait(timeout=60)
    _kill_running([running, ended])
    assert running.returncode is not None and ended.returncode == 0
    for proc in (running, ended):
        pipes = [p for p in (proc.stdin, proc.stdout, proc.stderr) if p is not None]
        assert pipes and all(p.closed for p in pipes)
