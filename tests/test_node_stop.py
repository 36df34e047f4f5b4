"""SIGTERM stops a node promptly in every state, a frozen game included (issue 13 §2).

Real ``nertz node`` processes on 127.0.0.1: once both members of a game have each other's
events, one is frozen (SIGSTOP) and the other gets SIGTERM. It signs its ``leave``, waits a
bounded time for the frozen one to hold it, and exits with a plain message and no traceback;
the bound is the test's timeout, not a timing assertion.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
from pathlib import Path

import pytest

from cli.bots import introduce_children, start_node_child
from p2p_nertz.logfile import RecordKind, read_log
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

#: How long the node may take to stop after SIGTERM (its leave waits 2 s at most, then 1 s of
#: linger); before the fix it waited for the frozen member for its whole grace (10 s) and more.
STOP_WITHIN = 8.0


def _authors(log: Path) -> set[bytes]:
    """The authors of the events ``log`` holds so far (it may be mid-write: read leniently)."""
    authors: set[bytes] = set()
    with contextlib.suppress(OSError):
        for record in read_log(log):
            if record.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT):
                authors.add(bytes(decode_message(record.data).author))
    return authors


def test_sigterm_stops_a_node_whose_game_is_frozen(tmp_path: Path) -> None:
    identities = [Identity.generate(derive_seed(b"test-node-stop", s)) for s in range(2)]
    spec = GameSpec.create(
        [(i.peer_id, f"p{n}") for n, i in enumerate(identities)],
        Rules(target=None, rounds=1),
        b"test-node-stop",
    )
    spec_path = tmp_path / "game.spec"
    spec_path.write_bytes(spec.to_wire())
    by_id = {i.peer_id: i for i in identities}
    children = [
        start_node_child(
            tmp_path,
            spec_path,
            spec,
            by_id[pid],
            seat=seat,
            name=f"p{seat}",
            stem=f"p{seat}",
            endpoint_of=None,  # (each binds any free port, says it, and is told the other's)
            strategy="greedy",
            speed="1",  # a slow bot: the round is still on when the other freezes
            own_session=True,
        )
        for seat, pid in enumerate(spec.peer_ids)
    ]
    stopping, frozen = children
    assert stopping.proc is not None and frozen.proc is not None
    try:
        introduce_children(children, spec, {})
        # Synchronise on the game: the stopping node holds the other's events (it has dealt).
        other = bytes(spec.peer_ids[frozen.seat])
        while other not in _authors(stopping.log):
            with contextlib.suppress(subprocess.TimeoutExpired):  # (a poll, bounded: no sleep)
                stopping.proc.wait(timeout=0.05)
            assert stopping.proc.poll() is None, stopping.err.read_text()
        frozen.proc.send_signal(signal.SIGSTOP)
        stopping.proc.send_signal(signal.SIGTERM)
        status = stopping.proc.wait(timeout=STOP_WITHIN)
        assert status == 128 + signal.SIGTERM
        err = stopping.err.read_text()
        assert "Traceback" not in err
        assert f"left the game on signal {int(signal.SIGTERM)}" in err
        # The leave is in its log, signed, for the others to learn when they wake.
        kinds = [
            decode_message(r.data).kind
            for r in read_log(stopping.log)
            if r.kind is RecordKind.SENT_EVENT
        ]
        assert kinds[-1] is Kind.LEAVE
    finally:
        for child in children:
            if child.proc is not None and child.proc.poll() is None:
                child.proc.send_signal(signal.SIGCONT)
                child.proc.kill()
                child.proc.wait()
            for f in child.files:
                f.close()
