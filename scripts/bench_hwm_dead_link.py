#!/usr/bin/env python3
"""A ROUTER's connection whose input stopped at the high-water mark, then its sender's machine
gone: does keepalive end it, or does the mark hold it for ever (session 36)?

docs/protocol.md §4.7 says a member's ROUTER ends a dead member's connection by its kernel
(TCP keepalive and ``TCP_MAXRT``, ``mesh.ROUTER_KEEPALIVE``) after 30 s of silence. A
connection whose input stopped at the ROUTER's mark (the node's loop busy while a member
floods it) is the corner: libzmq reads nothing more from it, the kernel's receive buffer
fills and its window closes, and then the member's machine goes (power, cable, no FIN).

Each run, in a network-namespace lab (:class:`~p2p_nertz.testing.netns.Lab`): host 0 a ROUTER
with the mesh's options (``RCVHWM`` ``ROUTER_HWM``, ``MAXMSGSIZE``, ``ROUTER_KEEPALIVE``; NULL
rather than CURVE: the TCP path is the same), whose process reads nothing until told, and its
socket monitor read apart; host 1 a DEALER that sends messages of ``--size`` bytes until it
can send no more (the mark and both kernels' buffers full), with ZMTP PINGs every second
(``--pings``, as a member's DEALER does) or none. Then host 1 is cut at its switch port, and
the run prints how long until host 0's kernel no longer holds the connection (``ss``), whether
the process still holds its descriptor, and, once told to read, what libzmq does: it reads
the backlog and ends the connection (a ``DISCONNECTED`` event, the descriptor closed), or
aborts ("Assertion failed: !_io_error": a PING among the bytes it kept, docs/protocol.md §13).

Its processes say each line with :func:`~p2p_nertz.testing.said.say` and the run waits for
their lines with :class:`~p2p_nertz.testing.said.Said` (session 37). The ROUTER's process had
two threads printing, its monitor's ``event LISTENING`` at the moment of ``bound``; under
``PYTHONUNBUFFERED`` (set in this machine's shells) ``print`` writes a line's text and its
newline in two calls, the GIL let go between them, and the two lines ran into one, ``event
LISTENING 0.0bound`` and an empty line: the run waited 90 s for a ``bound`` that had come,
the process alive and silent, reading its input, its stderr empty (a CI run of session 36,
and a rehearsal's 400 s hang before it). Beside the suite's netns tests at ``-n 8`` (load
4-8), 4 of 49 starts; the script before alone (load 23-31), 3 of 45 with
``PYTHONUNBUFFERED``, 0 of 80 without; with ``say``, none of 333 (load 10-38, with it and
without, the slowest 12 s). A start that still says nothing fails with what it said, its
``step`` lines, and what it is doing (:mod:`p2p_nertz.testing.stalls`: each thread's state,
wait channel and kernel stack, its Python stack where ``py-spy`` is installed).

    python scripts/bench_hwm_dead_link.py [--runs 2] [--pings both] [--size 1000]

Needs root and iproute2 (the lab).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2p_nertz.testing.netns import Lab, unavailable
from p2p_nertz.testing.said import NeverSaid, Said, say

PORT = 5600


def _sockets() -> int:
    """The process's open sockets (zmq's own among them: compared before and after)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            continue  # (the listing's own descriptor, closed by now)
    return count


def router(address: str) -> None:
    """Host 0: bind, say so, read nothing until a line ``read`` on stdin, then read all.

    Says each step of its start (``step …``) before ``bound``: a start that stalls says where.
    """
    say("step python")  # (before zmq and the project are imported)
    import zmq
    import zmq.utils.monitor

    from p2p_nertz.runtime.mesh import MAX_FRAME, ROUTER_HWM, ROUTER_KEEPALIVE

    say("step imported")
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    for option, value in {
        zmq.RCVHWM: ROUTER_HWM, zmq.MAXMSGSIZE: MAX_FRAME, zmq.LINGER: 0,
        zmq.ROUTER_HANDOVER: 1, zmq.ROUTER_MANDATORY: 1, **ROUTER_KEEPALIVE,
    }.items():  # fmt: skip
        sock.setsockopt(option, value)
    say("step socket")
    monitor = sock.get_monitor_socket()
    say("step monitor")
    sock.bind(f"tcp://{address}:{PORT}")
    start = time.monotonic()

    def watch() -> None:
        while True:
            try:
                event = zmq.utils.monitor.recv_monitor_message(monitor)
            except zmq.ZMQError:
                return
            name = zmq.Event(event["event"]).name
            say(f"event {name} {time.monotonic() - start:.1f}")

    threading.Thread(target=watch, daemon=True).start()
    say("bound")
    for line in sys.stdin:
        if line.strip() == "read":
            got = 0
            while sock.poll(3000):
                sock.recv_multipart()
                got += 1
            say(f"read {got}")
        elif line.strip() == "fds":
            say(f"sockets {_sockets()}")


def flood(endpoint: str, size: int, pings: bool) -> None:
    """Host 1: send until nothing more can be sent for 3 s, say how many, then wait."""
    import zmq

    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.SNDHWM, 1000)
    sock.setsockopt(zmq.LINGER, 0)
    if pings:
        sock.setsockopt(zmq.HEARTBEAT_IVL, 1000)
        sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, 600_000)  # (its own link: never given up here)
    sock.connect(endpoint)
    sent, stuck = 0, None
    body = b"x" * size
    while True:
        try:
            sock.send(body, zmq.NOBLOCK)
            sent, stuck = sent + 1, None
        except zmq.Again:
            stuck = stuck or time.monotonic()
            if time.monotonic() - stuck > 3.0:
                break
            time.sleep(0.01)
    say(f"full {sent}")
    sys.stdin.read()


class Probe:
    """A probe process in a lab host: its lines read as they come (:class:`Said`)."""

    def __init__(self, lab: Lab, host: int, argv: list[str], name: str) -> None:
        self.proc = lab.popen(
            host, [sys.executable, __file__, *argv], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.said = Said(self.proc, name)

    @property
    def lines(self) -> list[str]:
        return self.said.lines

    def close(self) -> None:
        """End it (if it still runs) and close its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.said.close()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def tell(self, line: str) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:  # (it ended: its exit and its last words are the result)
            pass

    def started(self, prefix: str, bound: float) -> str:
        """The line ``prefix`` it says once started.

        Raises:
            NeverSaid: not within ``bound`` s (a hang's bound: its starts take a second or two
                under the suite's load): what it said, what it is doing, then (ended first,
                else a live process's stderr is waited on for good) what it wrote to stderr.
        """
        try:
            return self.said.wait_for(prefix, bound)
        except NeverSaid as exc:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait(30)
            err = self.proc.stderr.read() if self.proc.stderr is not None else ""
            raise NeverSaid(f"{exc}\nits stderr: {err.strip()[-2000:]!r}", self.proc) from None

    def wait_for(self, prefix: str, bound: float) -> str | None:
        """The latest line starting with ``prefix`` within ``bound`` s, or ``None`` (a result)."""
        try:
            return self.said.wait_for(prefix, bound)
        except NeverSaid:
            return None


def _established(lab: Lab) -> int:
    """Connections to the ROUTER's port host 0's kernel holds established."""
    done = lab.run(0, ["ss", "-Htn", "state", "established", f"( sport = :{PORT} )"],
                   capture_output=True, text=True)  # fmt: skip
    return len(done.stdout.splitlines())


def one_run(size: int, pings: bool, bound: float) -> dict[str, Any]:
    result: dict[str, Any] = {"pings": pings}
    procs: list[Probe] = []
    with Lab(2) as lab:
        try:
            _run(lab, size, pings, bound, result=result, procs=procs)
        finally:
            for proc in procs:
                proc.close()
    return result


def _run(
    lab: Lab, size: int, pings: bool, bound: float, *, result: dict[str, Any], procs: list[Probe]
) -> None:
    host0 = Probe(lab, 0, ["--router", lab.address(0)], "the ROUTER's process")
    procs.append(host0)
    host0.started("bound", 90)
    flood = ["--flood", f"tcp://{lab.address(0)}:{PORT}", "--size", str(size)]
    host1 = Probe(lab, 1, flood + (["--pings"] if pings else []), "the DEALER's process")
    procs.append(host1)
    result["sent before full"] = int(host1.started("full", 120).split()[1])
    host0.tell("fds")
    result["sockets before"] = host0.wait_for("sockets", 10)
    lab.cut(1)
    cut = time.monotonic()
    while _established(lab) and time.monotonic() - cut < bound:
        time.sleep(0.5)
    gone = _established(lab) == 0
    result["kernel ended it after s"] = round(time.monotonic() - cut, 1) if gone else None
    host0.said.clear()
    host0.tell("fds")
    result["sockets after kernel"] = host0.wait_for("sockets", 10)
    result["events before read"] = [x for x in host0.lines if x.startswith("event")]
    host0.said.clear()
    host0.tell("read")
    result["read"] = host0.wait_for("read", 120)
    host0.tell("fds")
    result["sockets after read"] = host0.wait_for("sockets", 10)
    result["events after read"] = [x for x in host0.lines if x.startswith("event")]
    code = host0.proc.poll()
    result["router exit"] = code
    if code is not None and host0.proc.stderr is not None:
        result["router said"] = host0.proc.stderr.read().strip()[-200:]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--router", metavar="ADDRESS")
    p.add_argument("--flood", metavar="ENDPOINT")
    p.add_argument("--size", type=int, default=1000)
    p.add_argument("--pings", action="store_true")
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--ways", default="none,pings", help="none, pings (comma-separated)")
    p.add_argument("--bound", type=float, default=90.0)
    args = p.parse_args(argv)
    if args.router:
        router(args.router)
        return 0
    if args.flood:
        flood(args.flood, args.size, args.pings)
        return 0
    if (why := unavailable()) is not None:
        print(f"needs a netns lab: {why}")
        return 1
    for run in range(args.runs):
        for way in args.ways.split(","):
            result = one_run(args.size, way == "pings", args.bound)
            load = os.getloadavg()[0]
            print(f"run {run} {way} (load {load:.0f}): {result}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
