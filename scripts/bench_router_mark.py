#!/usr/bin/env python3
"""What a member's flood can make a node hold at the ROUTER's high-water mark (session 32).

A node's ROUTER holds up to its mark of frames per connection before zmq stops reading that
connection (:data:`p2p_nertz.runtime.mesh.ROUTER_HWM`, sized to the longest heartbeat
window a member's timers give). Only a member's key gets a connection past the CURVE handshake
(docs/protocol.md §4.7), so the worst a sender can do is a member's: open ``--connections``
connections with its key, each under a routing id of its own, and fill each with frames of the
largest size allowed (``MAX_FRAME``, a drop's 12,288 bytes) while the node's loop reads nothing.

For each mark of ``--marks`` (by default session 21's and the mesh's own) this starts the mesh's
own ROUTER (a real
:class:`~p2p_nertz.runtime.mesh.Mesh`, a game of two) in a process of its own, busy for
``--busy`` seconds (zmq's I/O thread runs on and fills the pipes), floods it from this process
over real CURVE connections, then has it read everything and print its peak RSS (``VmHWM``)
and the frames it read; printed beside a node flooded by no one (the reference, same run).

    python scripts/bench_router_mark.py [--marks 512,992] [--connections 8] [--busy 6]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Sequence

import zmq

from p2p_nertz.protocol.envelope import MAX_MESSAGE_SIZE
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.runtime.gate import client_keys, server_keys
from p2p_nertz.runtime.mesh import ROUTER_HWM, routing_id
from p2p_nertz.testing.said import first_line, lines

NODE = """
import sys
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.runtime import mesh as meshes
meshes.ROUTER_HWM = int(sys.argv[1])  # (the mark under test, read as the ROUTER is bound)
me, member = Identity.generate(bytes(32)), Identity.generate(bytes([1]) * 32)
mesh = meshes.Mesh(me, [me.peer_id, member.peer_id])
print(mesh.bind(), flush=True)
sys.stdin.readline()  # (busy: nothing read until the flooder says so)
router = mesh.router._sock
read = 0
while router.poll(1000):
    router.recv_multipart()
    read += 1
with open("/proc/self/status") as status:
    hwm = next(line.split()[1] for line in status if line.startswith("VmHWM"))
print(read, int(hwm) // 1024, flush=True)
mesh.close()
"""

FRAME = MAX_MESSAGE_SIZE
"""The largest message a node's ROUTER takes (in its CURVE box, ``MAX_FRAME``)."""
NODE_ID, MEMBER = Identity.generate(bytes(32)), Identity.generate(bytes([1]) * 32)


def flood(mark: int, connections: int, busy: float) -> tuple[int, int]:
    """Frames the node read and its peak RSS (MB) after ``connections`` floods of ``busy`` s."""
    node = subprocess.Popen(
        [sys.executable, "-c", NODE, str(mark)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert node.stdin is not None and node.stdout is not None
    endpoint = first_line(node, "the node")
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    frame = b"x" * FRAME
    try:
        dealers = []
        for k in range(connections):
            dealer = ctx.socket(zmq.DEALER)
            dealer.set(zmq.ROUTING_ID, routing_id(MEMBER.peer_id) + bytes([k]))
            client_keys(server_keys(MEMBER), NODE_ID.peer_id).apply(dealer)
            dealer.set(zmq.SNDHWM, 100_000)
            dealer.set(zmq.LINGER, 0)
            dealer.connect(endpoint)
            dealers.append(dealer)
        end = time.monotonic() + busy
        while time.monotonic() < end:
            for dealer in dealers:
                with contextlib.suppress(zmq.Again):
                    dealer.send(frame, zmq.NOBLOCK)
        node.stdin.write("go\n")
        node.stdin.flush()
        said = next(lines(node, "the node"), None)  # (a hang's bound: said.READY_BOUND)
        if said is None:
            raise RuntimeError(f"the node ended without its count (exit {node.poll()})")
        read, rss = said.split()
        node.wait(timeout=60)
    finally:
        if node.poll() is None:
            node.kill()
            node.wait()
        ctx.destroy(linger=0)
    return int(read), int(rss)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--marks", default=f"512,{ROUTER_HWM}")
    p.add_argument("--connections", type=int, default=8)
    p.add_argument("--busy", type=float, default=6.0)
    args = p.parse_args(argv)
    print(f"load {os.getloadavg()[0]:.1f}; {args.connections} connections, {args.busy:g} s busy")
    for mark in (int(m) for m in args.marks.split(",")):
        _, quiet = flood(mark, 0, 0.5)
        read, rss = flood(mark, args.connections, args.busy)
        print(
            f"mark {mark} ({mark * MAX_MESSAGE_SIZE / 2**20:.1f} MiB a"
            f" connection): read {read} frames, peak RSS {rss} MB (unflooded {quiet} MB)",
            flush=True,
        )
    print(f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
