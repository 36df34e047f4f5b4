"""One player's key run twice: does the second connection cut the first's at a member's ROUTER?

A member's ROUTER (Ann's: the mesh's options, the gate's CURVE admission) and two DEALERs
under Bob's key, each in a zmq context of its own (two machines): the first sends
``--rate`` messages a second throughout, the second connects for the middle of the run and
sends one a second (what a second copy of Bob's node, hearing nobody, sends). Two ways of
naming the DEALERs' connections, in alternated rounds:

* **shared**: both under Bob's one routing id, ``b"N" + peer id`` (sessions up to 33): the
  ROUTER's ``ROUTER_HANDOVER`` gives the id to the newest connection and closes the other;
* **apart**: each DEALER under an id of its own (the id, then a nonce of the socket's):
  both connections stay, and the handover is left to one DEALER's own reconnects.

Printed per way, medians over the rounds: the share of the first's messages sent while the
second was connected that the ROUTER gave within the run, the longest the ROUTER went
without one of them, and how often the first's DEALER lost its connection. The load average
is printed beside them. Usage::

    python scripts/bench_twin_key.py [--rounds 3] [--seconds 12] [--rate 20]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time
from dataclasses import dataclass

import zmq
import zmq.utils.monitor

from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed
from p2p_nertz.runtime.gate import Gate, client_keys, server_keys
from p2p_nertz.runtime.mesh import MAX_FRAME, ROUTER_HWM, routing_id
from p2p_nertz.runtime.zmqtrio import AsyncSocket, create_socket

ANN, BOB = (Identity.generate(derive_seed(b"bench-twin-key", i)) for i in range(2))
WAYS = ("shared", "apart")


@dataclass(frozen=True, slots=True)
class Round:
    """What the ROUTER heard of the first DEALER while the second was connected."""

    share: float
    longest_gap: float
    disconnects: int


def _dealer(ctx: zmq.Context[zmq.Socket[bytes]], identity: bytes) -> AsyncSocket:
    return create_socket(
        ctx,
        zmq.DEALER,
        identity=identity,
        max_message_size=MAX_FRAME,
        heartbeat=True,
        curve=client_keys(server_keys(BOB), ANN.peer_id),
    )


def one_round(way: str, seconds: float, rate: float) -> Round:
    """Run the two DEALERs against one ROUTER for ``seconds``; the second from a sixth of the
    run to five sixths."""
    contexts: list[zmq.Context[zmq.Socket[bytes]]] = [zmq.Context() for _ in range(3)]
    gate = Gate(contexts[0], [BOB.peer_id])
    gate.start()
    router = create_socket(
        contexts[0],
        zmq.ROUTER,
        recv_hwm=ROUTER_HWM,
        max_message_size=MAX_FRAME,
        curve=server_keys(ANN),
    )
    endpoint = router.bind("tcp://127.0.0.1:0")
    ids = [routing_id(BOB.peer_id)] * 2
    if way == "apart":
        ids = [routing_id(BOB.peer_id) + os.urandom(8) for _ in range(2)]
    first = _dealer(contexts[1], ids[0])
    second = _dealer(contexts[2], ids[1])
    monitor = first.monitor(zmq.EVENT_DISCONNECTED)
    first.connect(endpoint)
    start = time.monotonic()
    twin_from, twin_until = start + seconds / 6, start + seconds * 5 / 6
    sent: dict[int, float] = {}
    got: list[float] = []
    n = twin_n = 0
    twin_on = False
    try:
        while (now := time.monotonic()) < start + seconds:
            if now >= start + n / rate:
                first._sock.send(b"1:%d" % n, zmq.NOBLOCK)
                sent[n] = now
                n += 1
            if not twin_on and twin_from <= now < twin_until:
                second.connect(endpoint)
                twin_on = True
            if twin_on and now >= twin_from + twin_n:
                second._sock.send(b"2:%d" % twin_n, zmq.NOBLOCK)
                twin_n += 1
            if twin_on and now >= twin_until:
                second.close()
                twin_on = False
            while (frames := router.try_recv_multipart()) is not None:
                if frames[1].startswith(b"1:"):
                    got.append(time.monotonic())
                    sent.pop(int(frames[1][2:]), None)
            time.sleep(0.001)
        window = [t for t in got if twin_from <= t < twin_until]
        marks = [twin_from, *window, twin_until]
        in_twin = round((twin_until - twin_from) * rate)
        lost = sum(1 for t in sent.values() if twin_from <= t < twin_until)
        disconnects = 0
        while monitor.poll(0):
            zmq.utils.monitor.recv_monitor_message(monitor)
            disconnects += 1
        return Round(
            share=1 - lost / in_twin,
            longest_gap=max(b - a for a, b in itertools.pairwise(marks)),
            disconnects=disconnects,
        )
    finally:
        for sock in (first, second, router):
            sock.close()
        monitor.close(linger=0)
        gate.close()
        for ctx in contexts:
            ctx.term()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--rate", type=float, default=20.0)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    results: dict[str, list[Round]] = {way: [] for way in WAYS}
    for _ in range(args.rounds):
        for way in WAYS:  # (alternated: both see the same machine)
            results[way].append(one_round(way, args.seconds, args.rate))
    for way in WAYS:
        rounds = results[way]
        print(
            f"{way:>6}: the first's messages heard while the second was on "
            f"{statistics.median(r.share for r in rounds):.0%} (each: "
            f"{', '.join(f'{r.share:.0%}' for r in rounds)}); longest silence "
            f"{statistics.median(r.longest_gap for r in rounds):.2f} s (most "
            f"{max(r.longest_gap for r in rounds):.2f}); its connection lost "
            f"{statistics.median(r.disconnects for r in rounds):.0f} times"
        )
    print(f"load average at start {load:.2f}, at end {os.getloadavg()[0]:.2f}; 2 CPUs shared")


if __name__ == "__main__":
    main()
