"""What the ROUTER's small read batch costs (ZMQ_IN_BATCH_SIZE, runtime/inbatch.py).

Needs a pyzmq with libzmq's drafts (scripts/install_zmq_drafts.sh); says so and exits 2
without. Over real CURVE sockets on tcp://127.0.0.1 in this process, a DEALER against a ROUTER
with the mesh's options (RCVHWM 512, MAXMSGSIZE of the envelope, a member's CURVE keys), the
ROUTER's batch libzmq's default (8192) or :data:`IN_BATCH` (6), alternated round by round
(the order swapped each round), it prints:

- the round trip of one message of each size (DEALER to ROUTER and back, the ROUTER's read
  the one batched), median and p90 of each round's median, in microseconds;
- a flood: the DEALER sends ``--flood`` messages as fast as it can and the ROUTER takes them;
  messages per second, and the CPU time of this process (both ends and zmq's I/O threads)
  per message, in microseconds.

The reference is the default batch in the same run. Print ``uptime``'s load beside it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import zmq

from p2p_nertz.protocol.identity import Identity
from p2p_nertz.runtime.gate import Gate, client_keys, server_keys
from p2p_nertz.runtime.inbatch import IN_BATCH, small_batch_available
from p2p_nertz.runtime.mesh import ROUTER_HWM, routing_id


def _pair(
    batch: int | None,
) -> tuple[zmq.Context[zmq.Socket[bytes]], Gate, zmq.Socket[bytes], zmq.Socket[bytes]]:
    me, other = Identity.generate(bytes(32)), Identity.generate(bytes([1]) * 32)
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    gate = Gate(ctx, [other.peer_id])
    gate.start()
    router = ctx.socket(zmq.ROUTER)
    router.set(zmq.LINGER, 0)
    router.set(zmq.RCVHWM, ROUTER_HWM)
    router.set(zmq.MAXMSGSIZE, 1 << 16)
    server_keys(me).apply(router)
    if batch is not None:
        router.set(zmq.IN_BATCH_SIZE, batch)
    router.bind("tcp://127.0.0.1:0")
    dealer = ctx.socket(zmq.DEALER)
    dealer.set(zmq.LINGER, 0)
    dealer.set(zmq.ROUTING_ID, routing_id(other.peer_id))
    client_keys(server_keys(other), me.peer_id).apply(dealer)
    dealer.connect(router.get(zmq.LAST_ENDPOINT).decode())
    dealer.send(b"hello")
    router.recv_multipart()
    return ctx, gate, router, dealer


def _close(
    pair: tuple[zmq.Context[zmq.Socket[bytes]], Gate, zmq.Socket[bytes], zmq.Socket[bytes]],
) -> None:
    ctx, gate, router, dealer = pair
    dealer.close(linger=0)
    router.close(linger=0)
    gate.close()
    ctx.term()


def _round_trip(router: zmq.Socket[bytes], dealer: zmq.Socket[bytes], size: int, n: int) -> float:
    body = b"c" * size
    times = []
    for _ in range(n):
        start = time.perf_counter()
        dealer.send(body)
        who, got = router.recv_multipart()
        router.send_multipart([who, got])
        dealer.recv()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def _flood(
    router: zmq.Socket[bytes], dealer: zmq.Socket[bytes], size: int, n: int
) -> tuple[float, float]:
    body = b"f" * size
    cpu, start = time.process_time(), time.perf_counter()
    taken = 0
    for _ in range(n):
        while True:  # (the ROUTER takes as it goes when the DEALER's mark stops the sender)
            try:
                dealer.send(body, zmq.NOBLOCK)
                break
            except zmq.Again:
                router.recv_multipart()
                taken += 1
    for _ in range(n - taken):
        router.recv_multipart()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return n / wall, cpu / n * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--trips", type=int, default=500, help="round trips per size a round")
    parser.add_argument("--flood", type=int, default=20_000, help="messages a flood")
    parser.add_argument("--sizes", default="300,2000", help="message sizes in bytes")
    args = parser.parse_args()
    if not small_batch_available():
        print(
            f"this libzmq ({zmq.zmq_version()}) has no drafts: nothing to compare", file=sys.stderr
        )
        return 2
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"libzmq {zmq.zmq_version()}, load {os.getloadavg()[0]:.1f} at the start")
    kinds = {"default": None, f"batch {IN_BATCH}": IN_BATCH}
    trips: dict[tuple[str, int], list[float]] = {(k, s): [] for k in kinds for s in sizes}
    floods: dict[tuple[str, int], list[tuple[float, float]]] = {
        (k, s): [] for k in kinds for s in sizes
    }
    for r in range(args.rounds):
        order = list(kinds) if r % 2 == 0 else list(reversed(kinds))
        for kind in order:
            pair = _pair(kinds[kind])
            try:
                for size in sizes:
                    trips[kind, size].append(_round_trip(pair[2], pair[3], size, args.trips))
                    floods[kind, size].append(_flood(pair[2], pair[3], size, args.flood))
            finally:
                _close(pair)
    print(f"load {os.getloadavg()[0]:.1f} at the end; {args.rounds} rounds alternated")
    for size in sizes:
        for kind in kinds:
            t = trips[kind, size]
            rates = [f[0] for f in floods[kind, size]]
            cpus = [f[1] for f in floods[kind, size]]
            print(
                f"{size:5d} B  {kind:8s}  round trip median {statistics.median(t):7.1f} µs "
                f"(rounds {min(t):.1f}-{max(t):.1f})  flood {statistics.median(rates):8.0f} msg/s "
                f"(rounds {min(rates):.0f}-{max(rates):.0f})  "
                f"CPU {statistics.median(cpus):.1f} µs a message"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
