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

import zmq
import zmq.utils.monitor

from p2p_nertz.runtime.mesh import MAX_FRAME, ROUTER_HWM, ROUTER_KEEPALIVE
from p2p_nertz.testing.netns import Lab, unavailable

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
    """Host 0: bind, say so, read nothing until a line ``read`` on stdin, then read all."""
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    for option, value in {
        zmq.RCVHWM: ROUTER_HWM, zmq.MAXMSGSIZE: MAX_FRAME, zmq.LINGER: 0,
        zmq.ROUTER_HANDOVER: 1, zmq.ROUTER_MANDATORY: 1, **ROUTER_KEEPALIVE,
    }.items():  # fmt: skip
        sock.setsockopt(option, value)
    monitor = sock.get_monitor_socket()
    sock.bind(f"tcp://{address}:{PORT}")
    start = time.monotonic()

    def watch() -> None:
        while True:
            try:
                event = zmq.utils.monitor.recv_monitor_message(monitor)
            except zmq.ZMQError:
                return
            name = zmq.Event(event["event"]).name
            print(f"event {name} {time.monotonic() - start:.1f}", flush=True)

    threading.Thread(target=watch, daemon=True).start()
    print("bound", flush=True)
    for line in sys.stdin:
        if line.strip() == "read":
            got = 0
            while sock.poll(3000):
                sock.recv_multipart()
                got += 1
            print(f"read {got}", flush=True)
        elif line.strip() == "fds":
            print(f"sockets {_sockets()}", flush=True)


def flood(endpoint: str, size: int, pings: bool) -> None:
    """Host 1: send until nothing more can be sent for 3 s, say how many, then wait."""
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
    print(f"full {sent}", flush=True)
    sys.stdin.read()


class _Proc:
    def __init__(self, lab: Lab, host: int, argv: list[str]) -> None:
        self.proc = lab.popen(
            host, [sys.executable, __file__, *argv], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def close(self) -> None:
        """End it (if it still runs) and close its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._reader.join(10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    def say(self, line: str) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:  # (it ended: its exit and its last words are the result)
            pass

    def wait_for(self, prefix: str, bound: float) -> str | None:
        end = time.monotonic() + bound
        while time.monotonic() < end:
            found = [line for line in self.lines if line.startswith(prefix)]
            if found:
                return found[-1]
            if self.proc.poll() is not None:
                return None
            time.sleep(0.1)
        return None


def _established(lab: Lab) -> int:
    """Connections to the ROUTER's port host 0's kernel holds established."""
    done = lab.run(0, ["ss", "-Htn", "state", "established", f"( sport = :{PORT} )"],
                   capture_output=True, text=True)  # fmt: skip
    return len(done.stdout.splitlines())


def one_run(size: int, pings: bool, bound: float) -> dict[str, Any]:
    result: dict[str, Any] = {"pings": pings}
    procs: list[_Proc] = []
    with Lab(2) as lab:
        try:
            _run(lab, size, pings, bound, result=result, procs=procs)
        finally:
            for proc in procs:
                proc.close()
    return result


def _run(
    lab: Lab, size: int, pings: bool, bound: float, *, result: dict[str, Any], procs: list[_Proc]
) -> None:
    host0 = _Proc(lab, 0, ["--router", lab.address(0)])
    procs.append(host0)
    if not host0.wait_for("bound", 90):
        host0.proc.kill()  # (ended first: a live process's stderr would be waited on for good)
        _, said = host0.proc.communicate(timeout=30)
        raise AssertionError(f"the ROUTER's process never bound: {said!r}")
    host1 = _Proc(lab, 1, ["--flood", f"tcp://{lab.address(0)}:{PORT}", "--size", str(size)]
                  + (["--pings"] if pings else []))  # fmt: skip
    procs.append(host1)
    full = host1.wait_for("full", 120)
    result["sent before full"] = full and int(full.split()[1])
    host0.say("fds")
    result["sockets before"] = host0.wait_for("sockets", 10)
    lab.cut(1)
    cut = time.monotonic()
    while _established(lab) and time.monotonic() - cut < bound:
        time.sleep(0.5)
    gone = _established(lab) == 0
    result["kernel ended it after s"] = round(time.monotonic() - cut, 1) if gone else None
    host0.lines.clear()
    host0.say("fds")
    result["sockets after kernel"] = host0.wait_for("sockets", 10)
    result["events before read"] = [x for x in host0.lines if x.startswith("event")]
    host0.lines.clear()
    host0.say("read")
    result["read"] = host0.wait_for("read", 120)
    host0.say("fds")
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
