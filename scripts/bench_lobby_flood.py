#!/usr/bin/env python3
"""Benchmark a stranger's floods against a lobby host: its CPU and memory, and a guest's wait.

docs/lobby.md §3, §6. For each attack in turn a fresh host (a real :class:`LobbyHost` in a
process of its own, on 127.0.0.1) serves an open table; this process floods it for
``--seconds`` as a stranger (raw TCP in the lobby's stream, no key) and meanwhile, every
second, a real guest (:class:`LobbyGuest`, a fresh key each time) sits down and leaves. The
attacks:

* ``none``: no flood (the same run's reference);
* ``tiny``: frames of 1 byte, as fast as the host takes them, on one connection;
* ``hellos``: hellos signed by throwaway keys, each valid, on one connection (one key binds it:
  the rest are refused as signed by another key, before their signature);
* ``big``: frames of the largest size (32 KiB) of junk, on one connection;
* ``conns``: ``--conns`` connections (more than the host holds), each left with half a frame.

Printed per attack: the host's CPU share over the flood (of one core), its peak RSS
(``VmHWM``), the stranger's bytes a second, and the guests' median time from connecting to
being shown the table (with how many of them were shown it), each next to ``none``'s.

    python scripts/bench_lobby_flood.py [--seconds 5] [--attacks a,b] [--conns 400]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time

import trio

from p2p_nertz.lobby.framing import HEADER, PREAMBLE, frame
from p2p_nertz.lobby.messages import CHALLENGE_SIZE, MAX_MESSAGE
from p2p_nertz.lobby.state import GuestLobby, LobbyError
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.runtime.lobby import LobbyGuest
from p2p_nertz.runtime.lobbylink import split_endpoint
from p2p_nertz.testing.said import first_line

HOST = """
import sys, trio
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.lobby import LobbyHost

async def main():
    host = LobbyHost(Identity.generate(bytes(32)), "Ann", Rules(), address="127.0.0.1",
                     game_port=9)
    async with trio.open_nursery() as nursery:
        print(await nursery.start(host.serve), flush=True)
        await trio.to_thread.run_sync(sys.stdin.read)
        nursery.cancel_scope.cancel()

trio.run(main)
"""

ATTACKS = ("none", "tiny", "hellos", "big", "conns")


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def _challenge(stream: trio.SocketStream) -> bytes:
    """The host's challenge on ``stream``, read from its greeting (docs/lobby.md §3)."""
    greeting = len(PREAMBLE) + HEADER.size + CHALLENGE_SIZE
    got = b""
    while len(got) < greeting:
        got += await stream.receive_some(greeting - len(got))
    return got[-CHALLENGE_SIZE:]


def _hello(n: int, challenge: bytes) -> bytes:
    """A signed hello of a throwaway key, answering ``challenge``."""
    seat = GuestLobby(Identity.generate(os.urandom(32)), "Mal", f"tcp://127.0.0.1:{8000 + n}")
    seat.challenge = challenge
    return frame(seat.hello())


async def _flood(attack: str, endpoint: str, conns: int, sent: list[int]) -> None:
    address, port = split_endpoint(endpoint)
    if attack == "none":
        await trio.sleep_forever()
    if attack == "conns":
        streams = []
        try:
            for _ in range(conns):
                stream = await trio.open_tcp_stream(address, port)
                streams.append(stream)
                await stream.send_all(PREAMBLE + HEADER.pack(1000) + b"x" * 500)
                sent[0] += len(PREAMBLE) + HEADER.size + 500
            await trio.sleep_forever()
        finally:
            for stream in streams:
                stream.socket.close()
    stream = await trio.open_tcp_stream(address, port)
    if attack == "tiny":
        chunk = frame(b"x") * 10_000
    elif attack == "big":
        chunk = frame(b"x" * MAX_MESSAGE) * 4
    else:
        challenge = await _challenge(stream)  # (hellos that answer it: not mere replays)
        chunk = b"".join(_hello(n, challenge) for n in range(200))
    try:
        await stream.send_all(PREAMBLE)
        while True:
            await stream.send_all(chunk)
            sent[0] += len(chunk)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        await trio.sleep_forever()  # the host closed it
    finally:
        stream.socket.close()


async def _guests(endpoint: str, waits: list[float], tries: list[int]) -> None:
    while True:
        tries[0] += 1
        shown = trio.Event()
        guest = LobbyGuest(
            Identity.generate(os.urandom(32)),
            "Bob",
            "tcp://127.0.0.1:7001",
            endpoint,
            ready=False,
            timeout=5.0,
            on_table=lambda _view, shown=shown: shown.set(),
        )
        began = trio.current_time()
        async with trio.open_nursery() as nursery:

            async def sit(guest: LobbyGuest = guest) -> None:
                with contextlib.suppress(LobbyError):
                    await guest.run()

            nursery.start_soon(sit)
            with trio.move_on_after(5.0):
                await shown.wait()
                waits.append(trio.current_time() - began)
            guest.leave()
        await trio.sleep(1.0)


def run(attack: str, seconds: float, conns: int) -> dict[str, float]:
    host = subprocess.Popen(
        [sys.executable, "-c", HOST], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert host.stdout is not None
        endpoint = first_line(host, "the lobby's host")
        sent = [0]
        waits: list[float] = []
        tries = [0]
        cpu0, wall0 = _cpu_seconds(host.pid), time.monotonic()

        async def main() -> None:
            with trio.move_on_after(seconds):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_flood, attack, endpoint, conns, sent)
                    nursery.start_soon(_guests, endpoint, waits, tries)

        trio.run(main)
        wall = time.monotonic() - wall0
        cpu = _cpu_seconds(host.pid) - cpu0
        rss = _peak_rss_mb(host.pid)
        alive = host.poll() is None
    finally:
        host.communicate("", timeout=30)
    return {
        "cpu": cpu / wall,
        "rss": rss,
        "mb_s": sent[0] / wall / 2**20,
        "wait_ms": statistics.median(waits) * 1000 if waits else float("nan"),
        "shown": len(waits),
        "tries": tries[0],
        "alive": float(alive),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--attacks", default=",".join(ATTACKS))
    parser.add_argument("--conns", type=int, default=400)
    args = parser.parse_args()
    with open("/proc/loadavg") as f:
        print(f"load average {f.read().split()[0]}; {args.seconds:g} s per attack")
    attacks = [a for a in args.attacks.split(",") if a]
    if "none" not in attacks:
        attacks.insert(0, "none")
    results = {a: run(a, args.seconds, args.conns) for a in attacks}
    ref = results["none"]
    print(f"{'attack':8} {'host CPU':>9} {'peak RSS':>9} {'sent':>10} {'guest shown':>12}  alive")
    for attack, r in results.items():
        print(
            f"{attack:8} {r['cpu']:8.0%} {r['rss']:7.0f} MB {r['mb_s']:6.1f} MB/s "
            f"{r['wait_ms']:7.1f} ms {int(r['shown'])}/{int(r['tries'])}  "
            f"{'yes' if r['alive'] else 'NO'}"
            + (
                f"   (x{r['cpu'] / max(ref['cpu'], 1e-9):.1f} CPU, "
                f"x{r['rss'] / ref['rss']:.2f} RSS, x{r['wait_ms'] / ref['wait_ms']:.1f} wait)"
                if attack != "none"
                else "   (the reference)"
            )
        )


if __name__ == "__main__":
    main()
