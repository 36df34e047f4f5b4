"""What CURVE costs the mesh: a handshake, and CPU per message, against the NULL mechanism.

Two ways of linking a DEALER to a ROUTER over tcp://127.0.0.1 in this process, measured in
alternated rounds so that both see the same machine:

* **null**: the mesh's socket options with the NULL mechanism (transport version 1);
* **curve**: the mesh's own (transport version 2): the ROUTER a CURVE server with the gate's
  ZAP handler (:mod:`p2p_nertz.runtime.gate`), the DEALER a member's CURVE client, and each
  message read with its User-Id, as the node's receive loop reads it.

Printed: the median time from ``connect`` to the DEALER's handshake done (µs); the
process's CPU (every thread: zmq's I/O threads box and unbox) per message sent and received
back to back in bursts; and the round trip of one message there and back over two links (the
mesh's shape), one every 2 ms; claim-sized messages (214 bytes), medians of the rounds. Figures
depend on the load; the load average is printed beside them. Usage::

    python scripts/bench_curve.py [--rounds 7] [--handshakes 40] [--messages 20000] [--trips 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import zmq
import zmq.utils.monitor

from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed
from p2p_nertz.runtime.gate import Gate, client_keys, server_keys
from p2p_nertz.runtime.mesh import MAX_FRAME, routing_id
from p2p_nertz.runtime.zmqtrio import AsyncSocket, CurveKeys, create_socket

SERVER, CLIENT = (Identity.generate(derive_seed(b"bench-curve", i)) for i in range(2))
MESSAGE = b"\x92" + bytes(213)  # a claim's size (scripts/bench_lan.py: 214 bytes)


class Link:
    """A ROUTER (with the gate when ``curve``) in its own context, and a way to make DEALERs."""

    def __init__(self, curve: bool) -> None:
        self.ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        self.gate: Gate | None = None
        self.server: CurveKeys | None = None
        self.client: CurveKeys | None = None
        if curve:
            self.gate = Gate(self.ctx, [CLIENT.peer_id])
            self.gate.start()
            self.server = server_keys(SERVER)
            self.client = client_keys(server_keys(CLIENT), SERVER.peer_id)
        self.router = create_socket(
            self.ctx, zmq.ROUTER, recv_hwm=100_000, max_message_size=MAX_FRAME, curve=self.server
        )
        self.endpoint = self.router.bind("tcp://127.0.0.1:0")

    def dealer(self) -> AsyncSocket:
        return create_socket(
            self.ctx,
            zmq.DEALER,
            hwm=100_000,
            identity=routing_id(CLIENT.peer_id),
            max_message_size=MAX_FRAME,
            curve=self.client,
        )

    def close(self) -> None:
        self.router.close()
        if self.gate is not None:
            self.gate.close()
        self.ctx.term()


def handshake_us(link: Link) -> float:
    """Microseconds from ``connect`` to the DEALER's handshake done."""
    dealer = link.dealer()
    monitor = dealer._sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
    try:
        start = time.perf_counter()
        dealer.connect(link.endpoint)
        if not monitor.poll(10_000):
            raise SystemExit("no handshake in 10 s")
        done = time.perf_counter()
        zmq.utils.monitor.recv_monitor_message(monitor)
        return (done - start) * 1e6
    finally:
        dealer._sock.disable_monitor()
        monitor.close(linger=0)
        dealer.close()


def cpu_per_message_us(link: Link, count: int) -> float:
    """The process's CPU per message, sent and read in bursts of 100 (µs)."""
    dealer = link.dealer()
    try:
        dealer.connect(link.endpoint)
        dealer._sock.send(MESSAGE)  # the handshake and the first message, outside the clock
        _read(link, 1)
        start = time.process_time()
        for _ in range(count // 100):
            for _ in range(100):
                dealer._sock.send(MESSAGE)
            _read(link, 100)
        return (time.process_time() - start) / count * 1e6
    finally:
        dealer.close()


def round_trip_us(link: Link, count: int) -> float:
    """Median microseconds for a message to go DEALER -> ROUTER and back over a second link
    (the mesh's shape: each side receives on its ROUTER only), one every 2 ms."""
    back = Link(curve=link.server is not None)
    there, home = link.dealer(), back.dealer()
    try:
        there.connect(link.endpoint)
        home.connect(back.endpoint)
        times = []
        for i in range(count + 1):
            start = time.perf_counter()
            there._sock.send(MESSAGE)
            _read(link, 1)
            home._sock.send(MESSAGE)
            _read(back, 1)
            if i:  # (the first pays for the handshakes)
                times.append((time.perf_counter() - start) * 1e6)
            time.sleep(0.002)
        return statistics.median(times)
    finally:
        there.close()
        home.close()
        back.close()


def _read(link: Link, count: int) -> None:
    read = 0
    while read < count:
        if link.router.try_recv_multipart() is not None:
            read += 1
        else:
            link.router._sock.poll(1000)


def alternate(rounds: int, measure: Callable[[Link], float]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"null": [], "curve": []}
    for _ in range(rounds):
        for name in ("null", "curve"):
            link = Link(curve=name == "curve")
            try:
                out[name].append(measure(link))
            finally:
                link.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="alternated rounds (default 7)")
    parser.add_argument("--handshakes", type=int, default=40, help="handshakes a round")
    parser.add_argument("--messages", type=int, default=20_000, help="messages a round")
    parser.add_argument("--trips", type=int, default=200, help="round trips a round")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    shakes = alternate(
        args.rounds,
        lambda link: statistics.median(handshake_us(link) for _ in range(args.handshakes)),
    )
    cpu = alternate(args.rounds, lambda link: cpu_per_message_us(link, args.messages))
    trips = alternate(args.rounds, lambda link: round_trip_us(link, args.trips))
    print(f"load average at start {load:.2f}, at end {os.getloadavg()[0]:.2f}; 2 CPUs shared")
    print(f"{'':36}{'null':>10}{'curve':>10}{'curve - null':>14}")
    for what, figures in (
        ("handshake, connect -> done (µs)", shakes),
        ("CPU per message, both ends (µs)", cpu),
        ("round trip, one every 2 ms (µs)", trips),
    ):
        null, curve = statistics.median(figures["null"]), statistics.median(figures["curve"])
        print(f"{what:36}{null:10.1f}{curve:10.1f}{curve - null:+14.1f}")
    print(f"(medians of {args.rounds} alternated rounds; a {len(MESSAGE)}-byte message)")


if __name__ == "__main__":
    main()
