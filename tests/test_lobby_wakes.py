"""A lobby host survives being stopped past a guest's ZMTP heartbeat timeout with a backlog.

libzmq 4.3.5 aborts the process ("Assertion failed: !_io_error (src/stream_engine_base.cpp)")
when a ZMTP heartbeat of its own falls due on a connection whose input stopped at the receive
HWM and then broke (tests/test_mesh_router_wakes.py, the mesh's ROUTER). The lobby host's
ROUTER holds only :data:`~p2p_nertz.runtime.lobby.ROUTER_RECV_HWM` messages per connection: a
host stopped (SIGSTOP, a laptop's lid, a debugger) longer than ``HEARTBEAT_TIMEOUT_MS`` while a
sender keeps sending wakes exactly so, its sender's DEALER having dropped the link meanwhile.

A real process serves a real :class:`~p2p_nertz.runtime.lobby.LobbyHost`; it is stopped while
a DEALER floods it, continued, and a real guest then sits at its table and the game starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import trio
import zmq
from zmq.utils.monitor import recv_monitor_message

from p2p_nertz.lobby.state import LobbyError, Session
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed
from p2p_nertz.runtime.lobby import MAX_FRAME, join_lobby, lobby_routing_id
from p2p_nertz.runtime.zmqtrio import HEARTBEAT_TIMEOUT_MS, AsyncSocket, create_socket

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(90),
    pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs SIGSTOP/SIGCONT (POSIX)"),
]

#: The host: a lobby for two that starts itself once a guest sits; prints its lobby endpoint,
#: then the names of the started game's players, and exits.
HOST = """
import signal, sys, time
import trio
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.lobby.state import LobbyError, Session
from p2p_nertz.runtime.lobby import LobbyHost

async def main():
    host = LobbyHost(
        Identity.generate(derive_seed(b"test-lobby-wakes", 0)), "Ann", Rules(target=None, rounds=1),
        address="127.0.0.1", game_port=9, auto_start=2,
    )
    async with trio.open_nursery() as nursery:
        print(await nursery.start(host.serve), flush=True)
        session = await host.wait_started()
        print(" ".join(sorted(m.name for m in session.spec.members)), flush=True)
        await trio.to_thread.run_sync(sys.stdin.read)  # serving on until the guest has it
        nursery.cancel_scope.cancel()

# Continued, the host's loop is busy for BUSY seconds before it reads again (its game's deal,
# a loaded machine): zmq's I/O thread meanwhile runs on, its heartbeat timer with it.
signal.signal(signal.SIGCONT, lambda *_: time.sleep(float(sys.argv[1])))

trio.run(main)
"""


#: Seconds the host's loop is busy as it wakes, reading nothing (more than a heartbeat).
BUSY = 3.0


def _handshaken(dealer: AsyncSocket, endpoint: str) -> None:
    """Connect ``dealer`` to ``endpoint`` and return once the ZMTP handshake is done (so that
    both ends run their heartbeat timers), as zmq's socket monitor says."""
    monitor = dealer._sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
    try:
        dealer.connect(endpoint)
        assert monitor.poll(30_000), f"no ZMTP handshake with {endpoint} in 30 s"
        assert recv_monitor_message(monitor)["event"] == zmq.EVENT_HANDSHAKE_SUCCEEDED
    finally:
        dealer._sock.disable_monitor()
        monitor.close(linger=0)


def _flood(dealer: AsyncSocket, seconds: float) -> None:
    """Keep sending lobby-sized frames (not lobby messages: the host drops them) for
    ``seconds``; the DEALER's heartbeat drops the link to a host that stopped answering, and
    reconnects."""
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        dealer.try_send_multipart([b"x" * 200])
        time.sleep(0.001)


def test_lobby_host_stopped_past_the_heartbeat_timeout_wakes_and_seats_a_guest() -> None:
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, str(BUSY)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.PIPE,
    )
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        assert host.stdout is not None
        endpoint = host.stdout.readline().strip()
        assert endpoint.startswith("tcp://127.0.0.1:"), host.stderr and host.stderr.read()
        # A sender that drops a silent link (a heartbeat, as the mesh's DEALERs; a stranger
        # or an older guest), under a guest's routing id.
        flooder = create_socket(
            ctx,
            zmq.DEALER,
            hwm=100_000,
            identity=lobby_routing_id(bytes(32)),
            max_message_size=MAX_FRAME,
            heartbeat=True,
        )
        _handshaken(flooder, endpoint)
        os.kill(host.pid, signal.SIGSTOP)
        try:
            # The flooder's DEALER drops the link after HEARTBEAT_TIMEOUT of silence; the
            # backlog waits in the stopped host's socket buffers.
            _flood(flooder, HEARTBEAT_TIMEOUT_MS / 1000 + 2.0)
        finally:
            os.kill(host.pid, signal.SIGCONT)
        guest = Identity.generate(derive_seed(b"test-lobby-wakes", 1))
        session: Session | None = None
        refused = ""
        try:
            session = trio.run(
                lambda: join_lobby(guest, "Bob", "tcp://127.0.0.1:10", endpoint, timeout=30.0)
            )
        except LobbyError as exc:
            refused = str(exc)  # (the host's exit says why, first)
        out, err = host.communicate(timeout=30)  # (closes its stdin: it stops serving)
    finally:
        if host.poll() is None:
            host.kill()
            host.communicate()
        ctx.destroy(linger=0)
    assert host.returncode == 0, err  # libzmq's abort: -SIGABRT and its assertion
    assert session is not None, refused
    assert sorted(m.name for m in session.spec.members) == ["Ann", "Bob"]
    assert out.split() == ["Ann", "Bob"]
    assert "Traceback" not in err
