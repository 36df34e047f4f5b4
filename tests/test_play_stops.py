"""Nodes stopped (SIGSTOP) in play for 1, 6 and 12 s, at 2 and 3 players, come back and the game
goes on to its end (docs/lobby.md §8).

Real ``nertz node`` processes over ZeroMQ on 127.0.0.1 with their default timers: the ZMTP
heartbeat timeout is 5 s (the others' DEALERs drop the link to a stopped node and reconnect),
a member is suspected after 5 s of silence and voted out after 30 s. Once the round is in play,
one node is stopped 1 s (shorter than every timer), another 6 s (longer than the heartbeat and
the suspicion), and one 12 s (longer than those, shorter than the drop): each wakes to a backlog
and catches up. Between two stops the woken node is seen signing again (its log grows), or the
game is over. Every node then finishes the same game, nobody dropped: nothing aborts, nothing
hangs (the test's timeout), no traceback.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cli_helpers import json_lines_until, node_game, stop_all
from cli_results import final_event

from p2p_nertz.logfile import RecordKind, read_log
from p2p_nertz.rules import Rules

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs SIGSTOP/SIGCONT (POSIX)"),
]


def _signed(log: Path) -> int:
    """The events ``log`` holds as sent so far (it may be mid-write: read leniently)."""
    with contextlib.suppress(OSError):
        return sum(1 for r in read_log(log) if r.kind is RecordKind.SENT_EVENT)
    return 0


def _signs_again(procs: list[subprocess.Popen[str]], log: Path, before: int) -> None:
    """Return once ``log`` holds more sent events than ``before``, or a node has exited (the
    game may end meanwhile); the test's timeout bounds it."""
    while _signed(log) <= before and all(p.poll() is None for p in procs):
        with contextlib.suppress(subprocess.TimeoutExpired):  # (a poll, bounded: no sleep)
            procs[0].wait(timeout=0.05)


@pytest.mark.parametrize("names", [("Ann", "Bob"), ("Ann", "Bob", "Cy")])
def test_nodes_stopped_in_play_come_back_and_the_game_goes_on(
    tmp_path: Path, names: tuple[str, ...]
) -> None:
    spec, procs, logs = node_game(
        tmp_path,
        names,
        Rules(target=None, rounds=1),
        keys=b"test-play-stops",
        salt=b"play-stops-%d" % len(names),
        args=lambda n: ["--progress"] if n == 0 else [],
    )
    # (node, seconds): each of the three lengths, on a different node where there are three.
    stops = [(1, 1.0), (0, 6.0), (len(names) - 1, 12.0)]
    stopped: list[float] = []
    try:
        json_lines_until(procs[0], "lake")  # the round is in play
        for node, seconds in stops:
            if procs[node].poll() is not None:
                break  # the game is over: nothing left to stop
            before = _signed(logs[node])
            procs[node].send_signal(signal.SIGSTOP)
            try:
                time.sleep(seconds)  # (the stop itself, not a wait for something)
            finally:
                procs[node].send_signal(signal.SIGCONT)
            stopped.append(seconds)
            _signs_again(procs, logs[node], before)
        outs = [proc.communicate(timeout=150) for proc in procs]
    finally:
        stop_all(procs)
    assert stopped, "the game was over before its first stop"
    for proc, (_, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    finals = [final_event(out) for out, _ in outs]
    assert all(f["over"] and f["dropped"] == [] for f in finals), (stopped, finals)
    assert len({f["digest"] for f in finals}) == 1, finals
    assert len(spec.members) == len(names)
