#!/usr/bin/env python3
"""What a node stopped past its link window finds on waking, and whether it catches up (session 33).

A member's DEALER gives its connection to a stopped node up ``HEARTBEAT_IVL_MS`` + its link
timeout after the node last answered (:func:`p2p_nertz.runtime.mesh.link_timeout_ms`); what
it is handed meanwhile waits in its pipe and its outlet (:class:`~p2p_nertz.runtime.mesh.Outlet`)
for the reconnect, and the node's ROUTER reads at most ``ROUTER_HWM`` (992) frames of one
connection before zmq stops reading it (flow control). On waking, the node asks for what it
missed (``want``s, answered with up to ``max_want`` events each, ``ANSWER_BURST`` at once).

This plays games of greedy bots at full speed, one ``PeerNode`` process each on
tcp://127.0.0.1 (real sockets, CURVE, real logs), the node of seat 1 stopped by ``SIGSTOP``
once its log holds ``--after`` events of its own, for each length of ``--stops``; ``2x`` in a
length stops it twice, the second time a quarter second after it woke (in the middle of its
catch-up, its wants being answered). Printed per game: what each other member handed the
stopped node's outlet while it slept (the most of any member) and the most its outlet held
unsent; what the woken node read from one member in its first second and in any 100 ms
after waking; the messages any outlet dropped; every node's exit and whether every final
digest is the same.

    python scripts/bench_catchup.py [--players 2,3,4,6] [--stops 4,12,30,12x2]
        [--suspect-after 2] [--drop-after 8] [--after 20]
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trio

from cli.node_cmd import final_summary
from p2p_nertz.logfile import RecordKind, read_log
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.mesh import Outlet
from p2p_nertz.runtime.node import PeerNode, node_config
from p2p_nertz.runtime.zmqtrio import AsyncSocket
from p2p_nertz.testing.games import bot_game
from p2p_nertz.testing.said import first_line

LABEL = b"bench-catchup"
VICTIM = 1


class _Counted(Outlet):
    """An outlet that stamps every message handed to it and keeps its largest backlog."""

    def __init__(self, socket: AsyncSocket, stamps: list[float]) -> None:
        super().__init__(socket)
        self.stamps = stamps
        self.most = 0

    def post(self, data: bytes) -> bool:
        self.stamps.append(time.monotonic())
        sent = super().post(data)
        self.most = max(self.most, self.backlog)
        return sent


class _CountingNode(PeerNode):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.outs: list[_Counted] = []
        self.heard: dict[str, list[float]] = {}
        super().__init__(*args, **kwargs)

    def _outlet(self, dealer: AsyncSocket) -> Outlet:
        outlet = _Counted(dealer, [])
        self.outs.append(outlet)
        return outlet

    def _admit(self, batch: Sequence[list[bytes]]) -> list[bytes]:
        now = time.monotonic()
        for frames in batch:
            self.heard.setdefault(frames[0][1:].hex(), []).append(now)
        return super()._admit(batch)


def node_main(argv: Sequence[str]) -> None:
    """One node (a child process): print its endpoint, read everyone's, play, print figures.

    ``argv``: its seat, the players, the seed, the log directory and its two timers."""
    seat, players, seed = (int(a) for a in argv[:3])
    logdir, suspect, drop = argv[3], float(argv[4]), float(argv[5])
    identities, spec = bot_game(LABEL, players, seed, rules=Rules(target=None, rounds=1))
    config = node_config(suspect_after=suspect, drop_after=drop)
    node = _CountingNode(
        identities[seat], spec, Path(logdir) / f"{seat}.log",
        strategy="greedy", speed=10, config=config,
    )  # fmt: skip
    print(node.bind(), flush=True)
    endpoints = {i.peer_id: e for i, e in zip(identities, json.loads(input()), strict=True)}
    peer = trio.run(node.run, endpoints)
    dealers = list(node._mesh._dealers)  # (in the order the outlets were made)
    figures = {
        "seat": seat,
        "digest": peer.final.digest(),
        "final": {k: v for k, v in final_summary(peer, node.gone).items() if k != "fingerprint"},
        "dropped": node.dropped,
        "refused": dict(node.guard.counts),
        "out": {
            str(spec.seat_of(pid)): {"stamps": o.stamps, "most": o.most}
            for pid, o in zip(dealers, node.outs, strict=False)
        },
        "heard": {  # (a frame under another routing id is the guard's: not counted)
            str(spec.seat_of(pid)): v
            for k, v in node.heard.items()
            if (pid := bytes.fromhex(k)) in spec.peer_ids
        },
    }
    print(json.dumps(figures), flush=True)


def own_events(log: Path) -> int:
    if not log.exists():
        return 0
    with read_log(log) as reader:
        return sum(1 for r in reader if r.kind is RecordKind.SENT_EVENT)


def most_in(stamps: Sequence[float], start: float, end: float, window: float) -> int:
    """The most stamps in any span ``window`` long within ``[start, end)``."""
    lo, hi = bisect.bisect_left(stamps, start), bisect.bisect_left(stamps, end)
    part = stamps[lo:hi]
    return max((bisect.bisect_left(part, t + window) - i for i, t in enumerate(part)), default=0)


def play(players: int, stops: Sequence[float], args: argparse.Namespace, seed: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        timers = [str(args.suspect_after), str(args.drop_after)]
        procs = [
            subprocess.Popen(
                [sys.executable, __file__, "--node", str(seat), str(players), str(seed), tmp,
                 *timers],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            )
            for seat in range(players)
        ]  # fmt: skip
        endpoints = [first_line(p, f"the node of seat {s}") for s, p in enumerate(procs)]
        for p in procs:
            p.stdin.write(json.dumps(endpoints) + "\n")  # type: ignore[union-attr]
            p.stdin.flush()  # type: ignore[union-attr]
        victim = procs[VICTIM]
        deadline = time.monotonic() + 120
        while own_events(Path(tmp) / f"{VICTIM}.log") < args.after:
            if time.monotonic() > deadline or victim.poll() is not None:
                return "never got under way"
            time.sleep(0.05)
        spans = []
        for k, stop in enumerate(stops):
            if k:
                time.sleep(0.25)  # (its catch-up under way: the second stop's whole point)
            start = time.monotonic()
            victim.send_signal(signal.SIGSTOP)
            time.sleep(stop)
            victim.send_signal(signal.SIGCONT)
            spans.append((start, time.monotonic()))
        outs = []
        for p in procs:
            try:
                out, _ = p.communicate(timeout=args.drop_after * 3 + 120)
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
            outs.append(out)
    exits = [p.returncode for p in procs]
    if not all(o.strip() for o in outs):
        return f"exits {exits}: a node printed nothing"
    figures = [json.loads(o.splitlines()[-1]) for o in outs]
    slept = max(
        sum(1 for t in f["out"][str(VICTIM)]["stamps"] if a <= t < b)
        for a, b in spans
        for f in figures
        if f["seat"] != VICTIM
    )
    held = max(f["out"][str(VICTIM)]["most"] for f in figures if f["seat"] != VICTIM)
    woke = spans[-1][1]
    heard = figures[VICTIM]["heard"]
    first = max((sum(1 for t in s if woke <= t < woke + 1) for s in heard.values()), default=0)
    burst = max((most_in(s, woke, woke + 60, 0.1) for s in heard.values()), default=0)
    dropped = sum(f["dropped"] for f in figures)
    refused = sum(sum(f["refused"].values()) for f in figures)
    over = [f for f in figures if f["final"]["over"]]
    same = len({f["digest"] for f in over}) == 1
    gone = [f"seat {f['seat']} {f['final']['gone']}" for f in figures if not f["final"]["over"]]
    if not same:
        for f in figures:
            print(f"  seat {f['seat']}: {f['final']}", flush=True)
    return (
        f"handed one member's outlet while asleep {slept}, held unsent {held}; read from one"
        f" member in the first second {first}, in any 100 ms {burst}; outlets dropped"
        f" {dropped}; refused {refused}; exits {exits}; over at {len(over)}, one final digest:"
        f" {same}; the game not over at {', '.join(gone) or 'none'}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--node", nargs=6, help=argparse.SUPPRESS)
    p.add_argument("--players", default="2,3,4,6")
    p.add_argument("--stops", default="4,12,30,12x2")
    p.add_argument("--suspect-after", type=float, default=2.0)
    p.add_argument("--drop-after", type=float, default=8.0)
    p.add_argument("--after", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.node:
        node_main(args.node)
        return 0
    print(
        f"load {os.getloadavg()[0]:.1f}; timers {args.suspect_after:g}/{args.drop_after:g} s,"
        f" seat {VICTIM} stopped after {args.after} events of its own",
        flush=True,
    )
    for n in (int(x) for x in args.players.split(",")):
        for spec in args.stops.split(","):
            length, _, times = spec.partition("x")
            stops = [float(length)] * int(times or 1)
            print(f"{n}p, stopped {spec} s: {play(n, stops, args, args.seed)}", flush=True)
    print(f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
