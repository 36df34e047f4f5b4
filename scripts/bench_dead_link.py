#!/usr/bin/env python3
"""Does a member's ROUTER close the connection of a node cut off without a TCP close (session 35)?

A node whose machine loses power or its cable sends no FIN: at every other member's ROUTER its
connection stays, idle, for as long as TCP keeps it (the ROUTER only receives, and has no
heartbeat of its own: ``mesh.py``, libzmq #4841), one descriptor and its buffers for the rest
of the game, and the node restarted elsewhere on its key connects beside it. Three ways, in
alternated runs:

* **none**: what the mesh did up to session 34 (each DEALER's heartbeat without a TTL);
* **ttl**: each DEALER's PINGs carry a TTL (``ZMQ_HEARTBEAT_TTL``) of its own link timeout, so
  that the ROUTER closes a connection that brought nothing for that long after a PING;
* **keepalive**: TCP keepalive on the ROUTER's accepted sockets (idle 10 s, then a probe every
  5 s, four unanswered: ~30 s);
* **maxrt**: the same and ``ZMQ_TCP_MAXRT`` of 30 s (``TCP_USER_TIMEOUT``: a connection whose
  data stays unacknowledged that long ends too, and keepalive's end is decided by it);
* **mesh**: the mesh as it is (since session 35, ``maxrt``: ``mesh.ROUTER_KEEPALIVE``);
* **watch**: a spectator's port as it is (``nertz watch``'s ROUTER, runtime/watchport.py), member 1
  pushing to it; since session 35 with ``mesh.ROUTER_KEEPALIVE`` too. ``watch-none``: the port
  as up to session 35, without it; ``watch-5s``: as ``watch``, the member's DEALER to the
  spectator giving up 5 s after a PING, as up to session 35 (since, the member's drop timer);
* **web**: the web table's server's listening socket (``web/server.py``, ``keep_alive``: the same
  keepalive, giving up after its ``STALLED_AFTER``), member 1 a client connected and silent, as a
  page is while the table does not change; ``web-none``: as up to session 35 (``TCP_USER_TIMEOUT``
  only).

Each run: two members' meshes in a network-namespace lab (:class:`~p2p_nertz.testing.netns.Lab`)
sending each other a message every ``--every`` s, member 0's ROUTER watched by a socket monitor.
*Idle*: the TCP segments host 0 sent and received, and member 0's CPU, over ``--idle`` s.
*Cut*: host 1 cut off at its switch port (no close), member 1 started again on host 2 on the
same key; printed, how long after the cut member 0's ROUTER closed the old connection (or that
it had not within ``--bound`` s). *Slow*: host 1's packets held ``--late`` s each way (the
slow-link tests' 3 s) for ``--slow`` s: how many connections member 0's ROUTER closed (a live
link must keep its connection). Timers: the drop timer ``--drop-after`` (the link timeout).

    python scripts/bench_dead_link.py [--runs 2] [--ways none,ttl,keepalive,maxrt]
        [--drop-after 12] [--in-flight]

``--in-flight`` makes host 1 0.5 s late each way for 3 s before the cut, so that an answer of
host 0's (a PONG) is most likely unacknowledged when it comes: TCP then retransmits it, and
keepalive, which waits for nothing to be in flight, never starts.

Needs root, iproute2 and nftables (the lab and its delay).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trio
import zmq

import p2p_nertz.runtime.mesh as mesh_module
import p2p_nertz.runtime.watchport as watchport_module
import p2p_nertz.web.server as web_server
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.mesh import LINK_TIMEOUT_MAX_MS, Mesh
from p2p_nertz.runtime.watchport import WatcherAddress, WatchPort, parse_watcher_key
from p2p_nertz.runtime.zmqtrio import monitor_event
from p2p_nertz.testing.netns import Lab, impairments_unavailable, unavailable
from p2p_nertz.testing.said import first_line

MEMBERS = [Identity.generate(derive_seed(b"bench-dead-link", i)) for i in range(2)]
WAYS = (
    "none",
    "ttl",
    "keepalive",
    "maxrt",
    "mesh",
    "watch",
    "watch-none",
    "watch-5s",
    "web",
    "web-none",
)
SPECTATOR = Identity.generate(derive_seed(b"bench-dead-link", 2))
SPEC = GameSpec.create([(m.peer_id, f"m{i}") for i, m in enumerate(MEMBERS)], Rules(), b"b" * 16)
_NAMES = {
    int(zmq.EVENT_ACCEPTED): "accepted",
    int(zmq.EVENT_HANDSHAKE_SUCCEEDED): "handshake",
    int(zmq.EVENT_DISCONNECTED): "disconnected",
}


def _with_way(way: str, link_timeout_ms: int) -> None:
    """Make the mesh's sockets of this process the way's (``mesh``: as the mesh makes them)."""
    if way == "mesh":
        return
    made = mesh_module.create_socket  # type: ignore[attr-defined]

    def create(ctx: Any, kind: int, **kw: Any) -> Any:
        sock = made(ctx, kind, **kw)
        raw = sock._sock  # (the bench's own options on the mesh's socket)
        if kind == zmq.DEALER:
            raw.set(zmq.HEARTBEAT_TTL, link_timeout_ms if way == "ttl" else 0)
            return sock
        keepalive = way in ("keepalive", "maxrt")
        raw.set(zmq.TCP_KEEPALIVE, 1 if keepalive else 0)
        if keepalive:
            raw.set(zmq.TCP_KEEPALIVE_IDLE, 10)
            raw.set(zmq.TCP_KEEPALIVE_INTVL, 5)
            raw.set(zmq.TCP_KEEPALIVE_CNT, 4)
        raw.set(zmq.TCP_MAXRT, LINK_TIMEOUT_MAX_MS if way == "maxrt" else 0)
        return sock

    mesh_module.create_socket = create  # type: ignore[attr-defined,assignment]


async def spectate(address: str, way: str) -> None:
    """A spectator's port (a child process in its host): bind, print its address (the
    ``--watcher`` form), take what the members push, and print the connections it accepted
    and ended, as the port itself counts them (``watch-none``: without the keepalive)."""
    if way == "watch-none":
        made = watchport_module.create_socket  # type: ignore[attr-defined]

        def create(ctx: Any, kind: int, **kw: Any) -> Any:
            return made(ctx, kind, **{**kw, "options": {}})

        watchport_module.create_socket = create  # type: ignore[attr-defined,assignment]
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    port = WatchPort(ctx, SPECTATOR, SPEC, f"tcp://{address}:0")
    print(port.bind(), flush=True)
    router = port.router
    assert router is not None

    async def watch() -> None:
        known: set[int] = set()
        while True:
            port.refusals()
            for fd in sorted(port.connections - known):
                print(f"ev accepted {fd} {time.monotonic():.4f}", flush=True)
                print(f"ev handshake 0 {time.monotonic():.4f}", flush=True)  # (no stranger)
            for fd in sorted(known - port.connections):
                print(f"ev disconnected {fd} {time.monotonic():.4f}", flush=True)
            known = set(port.connections)
            await trio.sleep(0.05)

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            while True:
                await router.recv_multipart()
    finally:
        port.close()
        ctx.term()


async def serve_web(address: str, way: str) -> None:
    """The web table's listening socket (a child process in its host): print its endpoint, and
    the connections it accepted and that ended (a read that found the end or an error)."""
    if way == "web-none":  # (up to session 35: the give-up time only)

        def give_up_only(sock: socket.socket, silence_ms: int) -> None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, silence_ms)

        web_server.keep_alive = give_up_only  # type: ignore[attr-defined]
    listening = web_server._listening(address, 0, web_server.STALLED_AFTER)
    print(f"tcp://{address}:{listening.getsockname()[1]}", flush=True)
    sock = trio.socket.from_stdlib_socket(listening)

    async def hold(conn: trio.socket.SocketType) -> None:
        fd = conn.fileno()
        with conn:
            try:
                while await conn.recv(4096):
                    pass
            except OSError:
                pass
        print(f"ev disconnected {fd} {time.monotonic():.4f}", flush=True)

    async with trio.open_nursery() as nursery:
        while True:
            conn, _ = await sock.accept()
            print(f"ev accepted {conn.fileno()} {time.monotonic():.4f}", flush=True)
            print(f"ev handshake 0 {time.monotonic():.4f}", flush=True)
            nursery.start_soon(hold, conn)


async def connect_silent() -> None:
    """A client of the web way: connect to the endpoint read from stdin, then say nothing."""
    text = await trio.to_thread.run_sync(sys.stdin.readline)
    host, port = text.strip().removeprefix("tcp://").rsplit(":", 1)
    stream = await trio.open_tcp_stream(host, int(port))
    print("connected", flush=True)
    async with stream:
        await trio.sleep_forever()


async def push(me: int, drop_after: float, every: float, way: str) -> None:
    """A member pushing to the spectator whose address it reads from stdin, a message every
    ``every`` s (its one other member is not there: no matter)."""
    if way == "watch-5s":  # (the DEALER's give-up time to a spectator up to session 35)
        made = Mesh._dealer

        def impatient(mesh: Mesh, server: Any, timeout_ms: int) -> Any:
            return made(mesh, server, min(timeout_ms, 5000))

        Mesh._dealer = impatient  # type: ignore[method-assign,assignment]
    text = await trio.to_thread.run_sync(sys.stdin.readline)
    endpoint, key = text.strip().split("#")
    mesh = Mesh(
        MEMBERS[me],
        [m.peer_id for m in MEMBERS],
        drop_after=drop_after,
        watchers=[WatcherAddress(endpoint, parse_watcher_key(key))],
    )
    print("pushing", flush=True)
    try:
        mesh.connect({MEMBERS[1 - me].peer_id: "tcp://127.0.0.1:9"})
        async with trio.open_nursery() as nursery:
            mesh.serve_outlets(nursery, SPEC.to_wire())
            n = 0
            while True:
                mesh.watch([b"beat %d" % n])
                n += 1
                await trio.sleep(every)
    finally:
        mesh.close()


async def probe(me: int, address: str, drop_after: float, every: float, way: str) -> None:
    """One member (a child process in its host): bind, print the endpoint, read the other's
    from stdin, send it a message every ``every`` s, print its ROUTER's monitor events
    (``watch``: member 0 a spectator's port, member 1 a member pushing to it)."""
    if way.startswith("watch"):
        await (spectate(address, way) if me == 0 else push(me, drop_after, every, way))
        return
    if way.startswith("web"):
        await (serve_web(address, way) if me == 0 else connect_silent())
        return
    _with_way(way, mesh_module.link_timeout_ms(drop_after))
    mesh = Mesh(
        MEMBERS[me], [m.peer_id for m in MEMBERS], bind=f"tcp://{address}:0", drop_after=drop_after
    )
    print(mesh.bind(), flush=True)
    router = mesh.router
    assert router is not None
    monitor = router.monitor(zmq.EVENT_ALL)
    other = MEMBERS[1 - me].peer_id
    endpoint = await trio.to_thread.run_sync(sys.stdin.readline)
    mesh.connect({other: endpoint.strip()})

    async def send() -> None:
        n = 0
        while True:
            mesh.send(b"beat %d" % n, other)
            n += 1
            await trio.sleep(every)

    async def watch() -> None:
        while True:
            while monitor.poll(0):
                event, value = monitor_event(monitor.recv_multipart())
                if event in _NAMES:
                    print(f"ev {_NAMES[event]} {value} {time.monotonic():.4f}", flush=True)
            await trio.sleep(0.05)

    try:
        async with trio.open_nursery() as nursery:
            mesh.serve_outlets(nursery, b"")
            nursery.start_soon(send)
            nursery.start_soon(watch)
            while True:
                await router.recv_multipart()
    finally:
        monitor.close(linger=0)
        mesh.close()


class Member:
    """A probe process in a lab host, its output in a file."""

    def __init__(
        self, lab: Lab, host: int, me: int, out: Path, *, timers: tuple[float, float], way: str
    ) -> None:
        self.out = out
        drop_after, every = timers
        with out.open("w") as sink:
            self.proc = lab.popen(
                host,
                [sys.executable, __file__, "--probe", str(me), lab.address(host),
                 str(drop_after), str(every), way],
                stdin=subprocess.PIPE, stdout=sink, text=True,
            )  # fmt: skip

    def close(self) -> None:
        """Close our end of its input (the lab kills the process)."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()

    def endpoint(self) -> str:
        """The endpoint it says first (its start: bounded, a hang's bound).

        Raises:
            NeverSaid: not within ``said.READY_BOUND`` s, or it ended first.
        """
        return first_line(self.proc, f"the probe of {self.out.name}", path=self.out)

    def tell(self, endpoint: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(endpoint + "\n")
        self.proc.stdin.flush()

    def events(self, name: str) -> list[tuple[int, float]]:
        return [
            (int(w[2]), float(w[3]))
            for w in (line.split() for line in self.out.read_text().splitlines())
            if len(w) == 4 and w[0] == "ev" and w[1] == name
        ]

    def cpu(self) -> float:
        """CPU seconds of the probe (the ``ip netns exec`` child is the probe itself)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _until(what: str, done: Any, bound: float) -> bool:
    end = time.monotonic() + bound
    while time.monotonic() < end:
        if done():
            return True
        time.sleep(0.05)
    print(f"  ({what}: not within {bound:g} s)", flush=True)
    return False


def _segments(lab: Lab, host: int) -> int:
    """TCP segments host ``host`` received and sent so far."""
    text = lab.run(host, ["cat", "/proc/net/snmp"], capture_output=True, text=True).stdout
    head, values = [line.split() for line in text.splitlines() if line.startswith("Tcp:")][:2]
    row = dict(zip(head, values, strict=True))
    return int(row["InSegs"]) + int(row["OutSegs"])


def one_run(tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {}
    with Lab(3) as lab:
        timers = (args.drop_after, args.every)
        a = Member(lab, 0, 0, tmp / "a.txt", timers=timers, way=args.way_now)
        b = Member(lab, 1, 1, tmp / "b.txt", timers=timers, way=args.way_now)
        if args.way_now in WAYS[:5]:  # (a spectator or a web server is told nothing)
            a.tell(b.endpoint())
        b.tell(a.endpoint())
        _until("handshake", lambda: a.events("handshake"), 60)
        time.sleep(2.0)  # (a steady pace first)
        segs, cpu, t0 = _segments(lab, 0), a.cpu(), time.monotonic()
        time.sleep(args.idle)
        span = time.monotonic() - t0
        result["segs/s"] = (_segments(lab, 0) - segs) / span
        result["cpu ms/s"] = (a.cpu() - cpu) / span * 1000
        if args.slow > 0:
            closed = len(a.events("disconnected"))
            lab.delay(1, args.late)
            time.sleep(args.slow)
            lab.delay(1, 0)
            result["slow closes"] = len(a.events("disconnected")) - closed
        (old_fd, _), *_ = a.events("accepted")
        if args.in_flight:  # (every answer of host 0's in flight for a round trip of 1 s)
            lab.delay(1, 0.5)
            time.sleep(3.0)
        lab.cut(1)
        cut = time.monotonic()
        again = Member(lab, 2, 1, tmp / "b2.txt", timers=timers, way=args.way_now)
        again.tell(a.endpoint())
        _until("the restart's handshake", lambda: len(a.events("handshake")) >= 2, 60)

        def old_closed() -> float | None:
            return next((t for fd, t in a.events("disconnected") if fd == old_fd), None)

        _until("the old connection's close", lambda: old_closed() is not None, args.bound)
        at = old_closed()
        result["closed after s"] = None if at is None else round(at - cut, 1)
        for member in (a, b, again):
            member.close()
    return result


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--probe", nargs=5, help=argparse.SUPPRESS)
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--ways", default=",".join(WAYS[:4]))
    p.add_argument("--drop-after", type=float, default=12.0)
    p.add_argument("--every", type=float, default=0.5)
    p.add_argument("--idle", type=float, default=10.0)
    p.add_argument("--slow", type=float, default=40.0)
    p.add_argument("--late", type=float, default=3.0)
    p.add_argument("--bound", type=float, default=90.0)
    p.add_argument("--in-flight", action="store_true", help="host 1 0.5 s late each way at the cut")
    args = p.parse_args(argv)
    if args.probe:
        me, address, drop, every, way = args.probe
        trio.run(probe, int(me), address, float(drop), float(every), way)
        return 0
    why = unavailable() or (impairments_unavailable() if args.slow > 0 else None)
    if why is not None:
        print(f"cannot run: {why}", file=sys.stderr)
        return 2
    import tempfile

    ways = args.ways.split(",")
    for run in range(args.runs):
        for way in ways if run % 2 == 0 else reversed(ways):
            args.way_now = way
            with tempfile.TemporaryDirectory() as tmp:
                result = one_run(Path(tmp), args)
            load = os.getloadavg()[0]
            print(f"run {run} {way:9} load {load:5.1f} " + "  ".join(
                f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in result.items()
            ), flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
