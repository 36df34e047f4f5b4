"""A lobby host stopped with a backlog from a sender that then dropped it wakes and seats a guest.

Until session 22 the lobby was a ZeroMQ ROUTER, and libzmq 4.3.5 aborted the process
("Assertion failed: !_io_error (src/stream_engine_base.cpp)") when a ZMTP heartbeat fell due on
a connection whose input had stopped at the receive HWM and then broke: a host stopped
(SIGSTOP, a laptop's lid, a debugger) past a sender's heartbeat timeout while it kept sending
woke exactly so. The lobby now speaks its own stream on plain TCP (docs/lobby.md §3, §8): a
sender's backlog only fills that connection's kernel buffers.

A real process serves a real :class:`~p2p_nertz.runtime.lobby.LobbyHost`; it is stopped while a
connection floods it in the lobby's stream until the connection takes no more bytes, the
connection is reset, the host continued (busy for a while, as after a deal), and a real guest
then sits at its table and the game starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from stranger_helpers import assert_seated_and_lived, flood_the_lobby_then_reset, seat_a_guest

from p2p_nertz.lobby.framing import frame
from p2p_nertz.testing.said import first_line, reap

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
# a loaded machine).
signal.signal(signal.SIGCONT, lambda *_: time.sleep(float(sys.argv[1])))

trio.run(main)
"""


#: Seconds the host's loop is busy as it wakes, reading nothing.
BUSY = 3.0


def test_lobby_host_stopped_with_a_flood_then_reset_wakes_and_seats_a_guest() -> None:
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, str(BUSY)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.PIPE,
    )
    try:
        assert host.stdout is not None
        endpoint = first_line(host, "the lobby's host")
        assert endpoint.startswith("tcp://127.0.0.1:"), endpoint
        os.kill(host.pid, signal.SIGSTOP)
        try:
            sent = flood_the_lobby_then_reset(endpoint, frame(b"x" * 200) * 100)
        finally:
            os.kill(host.pid, signal.SIGCONT)
        session, refused, out, err = seat_a_guest(host, endpoint, b"test-lobby-wakes", 30.0)
    finally:
        reap(host, "the host")
    assert sent > 0
    assert_seated_and_lived(host, session, refused, out, err)
