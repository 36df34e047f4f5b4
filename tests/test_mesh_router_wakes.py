"""The mesh's ROUTER survives a node stopped past its members' ZMTP heartbeat timeout.

libzmq 4.3.5 aborts the process ("Assertion failed: !_io_error (src/stream_engine_base.cpp:310)")
when a ZMTP heartbeat falls due on a connection whose input stopped at the receive HWM and then
broke. A node SIGSTOPped longer than ``HEARTBEAT_TIMEOUT_MS`` wakes so: its members' DEALERs
dropped the connection meanwhile, and the backlog fills the ROUTER's pipe before the node reads
it (chaos seed 19304: a node stopped 16 s during a partition died of it). The mesh's ROUTER,
never sent on, runs no heartbeat timer of its own; this test stops a real process holding one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import zmq

from p2p_nertz.runtime.zmqtrio import HEARTBEAT_TIMEOUT_MS, create_socket

pytestmark = pytest.mark.slow

#: The node's side: the mesh's own ROUTER, bound, its endpoint printed; then the node busy
#: (reading nothing) until ``AWAKE`` seconds after it started, then reading until quiet.
NODE = """
import sys, time
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.runtime.mesh import Mesh
mesh = Mesh(Identity.generate(bytes(32)).peer_id, [])
print(mesh.bind(), flush=True)
start = time.monotonic()
time.sleep(max(0.0, float(sys.argv[1]) - (time.monotonic() - start)))
router = mesh.router._sock
read = 0
while router.poll(2000):
    router.recv_multipart()
    read += 1
print(read, flush=True)
mesh.router.close()
mesh.ctx.term()
"""


def test_mesh_router_survives_a_stop_past_the_heartbeat_timeout() -> None:
    stop = HEARTBEAT_TIMEOUT_MS / 1000 + 2.0  # the member's DEALER drops the link meanwhile
    awake = stop + 3.0  # the node reads nothing for 3 s after it wakes
    node = subprocess.Popen(
        [sys.executable, "-c", NODE, str(awake)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        assert node.stdout is not None
        endpoint = node.stdout.readline().decode().strip()
        dealer = create_socket(ctx, zmq.DEALER, hwm=100_000, identity=b"Nmember", heartbeat=True)
        dealer.connect(endpoint)
        time.sleep(0.5)  # connected and handshaken before the stop (a real peer's wait)
        os.kill(node.pid, signal.SIGSTOP)
        stopped = time.monotonic()
        while time.monotonic() - stopped < stop:  # a member playing on: its beats pile up
            dealer.try_send_multipart([b"x" * 200])
            time.sleep(0.001)
        os.kill(node.pid, signal.SIGCONT)
        out, err = node.communicate(timeout=60)
    finally:
        if node.poll() is None:
            node.kill()
            node.wait()
        ctx.destroy(linger=0)
    assert node.returncode == 0, err.decode(errors="replace")
    assert int(out.decode().split()[-1]) > 0  # it read the backlog
