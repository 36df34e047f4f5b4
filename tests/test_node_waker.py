"""A real node stopped (``SIGSTOP``) past its own silence timers, then continued (``SIGCONT``),
votes out none of the members it hears (docs/protocol.md §9.2, *a member woken from a sleep*).

Four ``nertz node`` processes over ZeroMQ on 127.0.0.1. The sleeper's timers are short
(suspected after 1 s, voted out after 3 s) and the others' are the node's defaults (5 s,
30 s): stopped for 5 s, the sleeper wakes with every other member's timer run out, while the
others have not voted it out, and every one of them talks (their beats wait in its socket,
and they go on beating). Its first input on waking (a tick, or the first burst it reads) used
to vote out every member it had not read yet. The order of things is read from the processes'
own JSON lines and exits; the stop's length is the fault under test, not a wait for something.

The sleeper's silences are the test's own (session 44): its silence votes and abandons are
aimed (:class:`~p2p_nertz.testing.silences.SilenceAim`, ``tests/timed_node.py``'s ``--aim``)
at every other member for its waking alone: at nobody until it is stopped, at all three from
its waking (the signal waits while it is stopped, and is handled before its first input) until
its log shows it took an input since, at nobody after. On its 3 s timer alone a loaded
machine's stall of another process, before the stop or after the waking, is a silence too,
and its vote a drop in its log that the fault did not make.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import json_lines_until, node_game, stop_all

from p2p_nertz.logfile import RecordKind, read_log
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.rules import Rules

pytestmark = [
    pytest.mark.skipif(not hasattr(signal, "SIGUSR2"), reason="needs SIGSTOP, SIGCONT, SIGUSR2"),
    pytest.mark.slow,
    pytest.mark.timeout(240),
]

SLEEPER_TIMERS = ["--suspect-after", "1", "--drop-after", "3"]
STOPPED_FOR = 5.0  # past the sleeper's 3 s, short of the others' 30 s and of zmq's 6 s heartbeat
TIMED = Path(__file__).with_name("timed_node.py")
NAMES = ("Ann", "Bob", "Cy", "Di")


def _records(log: Path) -> int:
    """How many records ``log`` (a node's, being written: read leniently) holds now."""
    return sum(1 for _ in read_log(log))


def test_a_node_woken_past_its_timers_votes_out_nobody_it_hears(tmp_path: Path) -> None:
    aim = f"--aim={','.join(NAMES[1:])}"
    _, procs, logs = node_game(
        tmp_path,
        NAMES,
        Rules(target=None, rounds=1),
        keys=b"test-node-waker",
        salt=b"waker-sigstop",
        args=lambda n: [*SLEEPER_TIMERS, "--progress"] if n == 0 else [],
        wrap=lambda n: [sys.executable, str(TIMED), "60", aim, "--"] if n == 0 else [],
    )
    try:
        sleeper = procs[0]
        json_lines_until(sleeper, "lake")  # the round is in play, and Ann in it
        sleeper.send_signal(signal.SIGSTOP)
        before = _records(logs[0])  # (nothing is written while it is stopped)
        sleeper.send_signal(signal.SIGUSR2)  # (handled on waking: aimed at the three others)
        try:
            time.sleep(STOPPED_FOR)
        finally:
            sleeper.send_signal(signal.SIGCONT)
        # Its first inputs on waking are where the fault voted: once its log holds a record
        # written since, it is aimed at nobody again (a later stall of another is not the test's).
        deadline = time.monotonic() + 120.0
        while _records(logs[0]) <= before and sleeper.poll() is None:
            assert time.monotonic() < deadline, "the sleeper wrote nothing in 120 s of waking"
            time.sleep(0.05)
        sleeper.send_signal(signal.SIGUSR2)
        outs = [proc.communicate(timeout=180) for proc in procs]
    finally:
        stop_all(procs)
    for proc, (_, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    # Every event the sleeper signed is in its log: not one of them is a drop.
    kinds = [
        decode_message(record.data).kind
        for record in read_log(logs[0])
        if record.kind is RecordKind.SENT_EVENT
    ]
    assert Kind.MOVE in kinds or Kind.READY in kinds  # (it played: its events are there)
    assert Kind.DROP not in kinds
