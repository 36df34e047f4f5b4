#!/usr/bin/env python3
"""What a member's DEALER writes to one connection in a heartbeat's window (session 32).

A member's DEALER gives a connection up ``HEARTBEAT_IVL_MS`` + its heartbeat timeout after
the node at the other end last answered; the node's ROUTER must hold everything written in
that window without stopping the connection's input (docs/protocol.md §9.7, *Sizing the
ROUTER's high-water mark*: libzmq 4.3.5 aborts a node that wakes to a stopped, broken
connection with a PING still held). This plays games of greedy bots at full speed (level 10),
every node in this process on tcp://127.0.0.1 (real sockets, CURVE, real logs, the default
timers), counts each message a node hands each member's DEALER, and prints, per table size and
deal, the most messages one connection carried in any window of each length (``--windows``)
and in any second, over every connection of every game.

    python scripts/bench_link_window.py [--players 2,3,4] [--deals commit,shuffle]
        [--rounds 2] [--games 2] [--windows 1,6,11,31,61]
"""

from __future__ import annotations

import argparse
import bisect
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trio

from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.mesh import Outlet
from p2p_nertz.runtime.node import PeerNode
from p2p_nertz.runtime.zmqtrio import AsyncSocket
from p2p_nertz.testing.games import bot_game


class _Counted(Outlet):
    """An outlet that stamps every message handed to it (sent, queued or dropped)."""

    def __init__(self, socket: AsyncSocket, stamps: list[float]) -> None:
        super().__init__(socket)
        self._stamps = stamps

    def post(self, data: bytes) -> bool:
        self._stamps.append(trio.current_time())
        return super().post(data)


class _CountingNode(PeerNode):
    def __init__(self, *args: object, **kwargs: object) -> None:
        self.stamps: list[list[float]] = []
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def _outlet(self, dealer: AsyncSocket) -> Outlet:
        stamps: list[float] = []
        # (a member's DEALER, not a spectator's)
        if any(d is dealer for d in self._mesh._dealers.values()):
            self.stamps.append(stamps)
        return _Counted(dealer, stamps)


def most_in_window(stamps: Sequence[float], window: float) -> int:
    """The most stamps in any half-open span ``window`` long."""
    return max(
        (bisect.bisect_left(stamps, t + window) - i for i, t in enumerate(stamps)), default=0
    )


async def play(players: int, deal: Deal, rounds: int, seed: int, logdir: Path) -> list[list[float]]:
    identities, spec = bot_game(
        b"bench-link-window", players, seed, rules=Rules(target=None, rounds=rounds), deal=deal
    )
    nodes = [
        _CountingNode(
            ident,
            spec,
            logdir / f"{deal.value}{players}-{seed}-{i}.log",
            strategy="greedy",
            speed=10,
        )
        for i, ident in enumerate(identities)
    ]
    endpoints = {ident.peer_id: node.bind() for ident, node in zip(identities, nodes, strict=True)}
    async with trio.open_nursery() as nursery:
        for node in nodes:
            nursery.start_soon(node.run, endpoints)
    return [s for node in nodes for s in node.stamps]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--players", default="2,3,4")
    p.add_argument("--deals", default="commit,shuffle")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--games", type=int, default=2)
    p.add_argument("--windows", default="1,6,11,31,61")
    args = p.parse_args(argv)
    windows = [float(w) for w in args.windows.split(",")]
    print(f"load {os.getloadavg()[0]:.1f}; windows (s): {windows}")
    with tempfile.TemporaryDirectory() as tmp:
        for deal in (Deal(d) for d in args.deals.split(",")):
            for n in (int(x) for x in args.players.split(",")):
                worst = [0] * len(windows)
                total, seconds = 0, 0.0
                for seed in range(args.games):
                    for stamps in trio.run(play, n, deal, args.rounds, seed, Path(tmp)):
                        for k, w in enumerate(windows):
                            worst[k] = max(worst[k], most_in_window(stamps, w))
                        total += len(stamps)
                        if stamps:
                            seconds += stamps[-1] - stamps[0]
                shown = ", ".join(f"{w:g} s: {m}" for w, m in zip(windows, worst, strict=True))
                mean = total / seconds if seconds else 0.0
                print(f"{deal.value} {n}p: most messages to one member in {shown}"
                      f" (mean {mean:.1f}/s)", flush=True)  # fmt: skip
    print(f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
