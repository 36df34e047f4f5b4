#!/usr/bin/env python3
"""Benchmark floods against a node: peak RSS and CPU of a flooded node next to an honest one.

Issue 14 §2. For each attack in turn a fresh honest game starts: greedy bots at full speed,
one process per peer on 127.0.0.1 (real sockets, real logs, real signatures). Once play has
begun, an attacker (this process, a raw pyzmq DEALER) floods the first node for ``--seconds``,
``--rate`` messages a second (10,000 by default: the rate that kept a node on a full core
before issue 14; 0 for as fast as zmq takes them):

* ``none``: no flood (the control: both nodes are honest, the ratios should be ~1);
* ``oversize``: frames of ``--big-mib`` MiB, as fast as they go (above every node socket's
  ``MAXMSGSIZE``: zmq cuts the connection on reading the length; before, each frame was held);
* ``garbage``: random frames of 1 to 4096 bytes, that are no message at all;
* ``forged``: beats in a member's name with a broken signature, each one different;
* ``forged-as-member``: the same, sent under that member's routing id (which a stranger could
  claim before transport version 2: zmq routing ids were not authenticated);
* ``outsider``: beats validly signed by a key outside the roster;
* ``many``: frames of the largest size allowed (4096 bytes), as fast as they go, over
  ``MANY`` connections at once (each connection has its own receive queue in zmq).

The attacker's routing id is its own (a stranger's) except for ``forged-as-member``. It has
no key: since transport version 2 (docs/protocol.md §4.7) a node's ROUTER is a CURVE server
that admits only the members' keys, so every attack's connection is cut off at its greeting
(reconnecting every 10 ms) and no frame of it reaches the node: the figures are then what
refused connections cost. Printed per
attack: messages the attacker got into zmq per second, the flooded node's and an unflooded
member's CPU share over the flood (of one core) and peak RSS (``VmHWM``), their ratios, and the
events each logged during the flood (play went on when both grew). With ``--runs N`` the
figures are medians of N games per attack.

    python scripts/bench_flood.py [--players 3] [--seconds 5] [--runs 1] [--attacks a,b]
                                  [--rate 10000] [--big-mib 64] [--code PATH]

``--code PATH`` runs the nodes from another checkout (e.g. ``/work/main``) for a before/after
comparison. The default run takes under a minute.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ATTACKS = ("none", "oversize", "garbage", "forged", "forged-as-member", "outsider", "many")
MANY = 50  # connections of the ``many`` attack
START_TIMEOUT = 20.0  # seconds for a game to start playing
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# -- the game, in child processes --------------------------------------------------------------
def make_game(players: int, seed: int) -> tuple[list[Any], Any]:
    """Identities in seat order and the spec of a long game of ``players`` bots (written out,
    as ``p2p_nertz.testing.games.bot_game`` makes it: with ``--code`` the nodes import another
    checkout's package, which may predate that)."""
    from p2p_nertz.protocol.identity import Identity
    from p2p_nertz.protocol.spec import GameSpec
    from p2p_nertz.rng import derive_seed
    from p2p_nertz.rules import Rules

    identities = [Identity.generate(derive_seed(b"bench-flood", seed, i)) for i in range(players)]
    spec = GameSpec.create(
        [(ident.peer_id, f"bot{i + 1}") for i, ident in enumerate(identities)],
        Rules(target=None, rounds=50),  # longer than any flood: play goes on throughout
        derive_seed(b"bench-flood-game", seed)[:16],
    )
    return spec.in_seat_order(identities), spec


def child_node(config_path: str, seat: str) -> int:
    """Run one bot node of the game in ``config_path`` until killed."""
    import trio
    from ports import read_peers, say_bound

    from p2p_nertz.runtime.node import PeerNode

    cfg = json.loads(Path(config_path).read_text())
    identities, spec = make_game(cfg["players"], cfg["seed"])
    s = int(seat)
    node = PeerNode(
        identities[s],
        spec,
        Path(cfg["logdir"]) / f"peer{s}.log",
        bind=cfg["bind"],
        strategy="greedy",
        speed=10,
    )
    # Bound on port 0, said, then the others' heard (scripts/ports.py, :func:`run_one`).
    say_bound(node.bind())
    endpoints = {spec.peer_ids[i]: e for i, e in read_peers(cfg["players"]).items()}
    trio.run(node.run, endpoints)
    return 0


# -- what the attacker sends ---------------------------------------------------------------------
def attack_messages(kind: str, players: int, seed: int, big_mib: int) -> Callable[[], bytes]:
    """A maker of the next message of an attack (each call: a new one, where that matters)."""
    from p2p_nertz.protocol.envelope import Kind, encode_message
    from p2p_nertz.protocol.identity import Identity
    from p2p_nertz.rng import derive_seed

    identities, spec = make_game(players, seed)
    rnd = random.Random(seed)
    if kind == "oversize":
        big = bytes(big_mib << 20)
        return lambda: big
    if kind == "garbage":
        return lambda: rnd.randbytes(rnd.randint(1, 4096))
    if kind == "many":
        full = rnd.randbytes(4096)
        return lambda: full
    if kind in ("forged", "forged-as-member"):
        member = identities[1]
        template = encode_message(
            member, game_id=spec.game_id, seq=0, prev=None, lamport=7, kind=Kind.BEAT, body=[]
        )
        counter = iter(range(1 << 62))
        # A different signature each time: nothing cached can answer for it.
        return lambda: template[:-8] + next(counter).to_bytes(8, "big")
    if kind == "outsider":
        stranger = Identity.generate(derive_seed(b"bench-flood-stranger", seed))
        wires = [
            encode_message(
                stranger,
                game_id=spec.game_id,
                seq=0,
                prev=None,
                lamport=lamport,
                kind=Kind.BEAT,
                body=[],
            )
            for lamport in range(1, 1001)
        ]
        it = iter(range(1 << 62))
        return lambda: wires[next(it) % len(wires)]
    raise ValueError(f"unknown attack {kind!r}")


def flood(
    kind: str,
    endpoint: str,
    identity: bytes,
    make: Callable[[], bytes],
    *,
    seconds: float,
    rate: float,
) -> int:
    """Send ``make()`` to ``endpoint`` for ``seconds``, ``rate`` a second (0: as fast as zmq
    takes them); return how many zmq took."""
    import zmq

    ctx = zmq.Context()
    dealers = []
    for i in range(MANY if kind == "many" else 1):
        dealer = ctx.socket(zmq.DEALER)
        dealer.set(zmq.LINGER, 0)
        dealer.set(zmq.ROUTING_ID, identity + (b"-%d" % i if i else b""))
        dealer.set(zmq.SNDHWM, 1000)
        dealer.set(zmq.RECONNECT_IVL, 10)  # come back at once when cut off
        dealer.connect(endpoint)
        dealers.append(dealer)
    sent = 0
    start = time.monotonic()
    end = start + seconds
    try:
        while (now := time.monotonic()) < end:
            due = math.inf if rate <= 0 else rate * (now - start) - sent
            for dealer in dealers:
                try:
                    for _ in range(1000):  # (then the next connection)
                        if due < 1:
                            break
                        dealer.send(make(), flags=zmq.NOBLOCK, copy=kind != "oversize")
                        sent += 1
                        due -= 1
                except zmq.Again:
                    pass  # the pipe is full: the node is not reading that fast
            time.sleep(0.001)
    finally:
        for dealer in dealers:
            dealer.close()
        ctx.term()
    return sent


# -- measuring ------------------------------------------------------------------------------------
def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Figures:
    attack: str
    sent_per_s: float
    cpu_flooded: float
    cpu_honest: float
    rss_flooded: float
    rss_honest: float
    logged_flooded: int
    logged_honest: int


def run_one(attack: str, args: argparse.Namespace, seed: int, workdir: Path) -> Figures | None:
    """One game, one attack; ``None`` (with a note) if the game did not start."""
    players = args.players
    logdir = workdir / f"{attack}-{seed}"
    logdir.mkdir()
    from ports import introduce

    from cli.bots import FREE_PORT
    from p2p_nertz.errors import NertzError

    # (the port to bind given: with --code the nodes import another checkout's cli)
    cfg = {"players": players, "seed": seed, "logdir": str(logdir), "bind": FREE_PORT}
    cfg_path = logdir / "config.json"
    cfg_path.write_text(json.dumps(cfg))
    env = dict(os.environ)
    if args.code:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [args.code, env.get("PYTHONPATH")]))
    procs: list[subprocess.Popen[bytes]] = []
    said = [logdir / f"peer{s}.out" for s in range(players)]
    for s in range(players):
        with said[s].open("wb") as stdout:
            procs.append(
                subprocess.Popen(
                    [sys.executable, __file__, "_node", str(cfg_path), str(s)],
                    env=env,
                    stdin=subprocess.PIPE,
                    stdout=stdout,
                    stderr=subprocess.DEVNULL,
                )
            )
    logs = [logdir / f"peer{s}.log" for s in range(players)]
    try:
        # Each node binds port 0 and says which; each is told the others' (scripts/ports.py).
        try:
            endpoints = introduce(make_game(players, seed)[1], procs, said)
        except NertzError as exc:
            print(f"  {attack}: the game did not start: {exc}", file=sys.stderr)
            return None
        make = attack_messages(attack, players, seed, args.big_mib) if attack != "none" else None
        deadline = time.monotonic() + START_TIMEOUT
        while not all(p.exists() and p.stat().st_size > 4096 for p in logs[:2]):
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                print(f"  {attack}: the game did not start", file=sys.stderr)
                return None
            time.sleep(0.05)
        pids = (procs[0].pid, procs[1].pid)
        cpu0 = [cpu_seconds(pid) for pid in pids]
        size0 = [p.stat().st_size for p in logs[:2]]
        t0 = time.monotonic()
        if make is None:
            time.sleep(args.seconds)
            sent = 0
        else:
            from p2p_nertz.runtime.node import routing_id

            identities, _ = make_game(players, seed)
            who = (
                routing_id(identities[1].peer_id)
                if attack == "forged-as-member"
                else (b"stranger-" + attack.encode())
            )
            rate = 0.0 if attack in ("oversize", "many") else args.rate
            sent = flood(attack, endpoints[0], who, make, seconds=args.seconds, rate=rate)
        wall = time.monotonic() - t0
        cpu = [(cpu_seconds(pid) - c) / wall for pid, c in zip(pids, cpu0, strict=True)]
        rss = [peak_rss_mb(pid) for pid in pids]
        grown = [p.stat().st_size - s for p, s in zip(logs[:2], size0, strict=True)]
        return Figures(attack, sent / wall, cpu[0], cpu[1], rss[0], rss[1], grown[0], grown[1])
    finally:
        for p in procs:
            p.send_signal(signal.SIGKILL)
        for p in procs:
            p.wait()


def median_figures(runs: Sequence[Figures]) -> Figures:
    def med(name: str) -> Any:
        return statistics.median(getattr(r, name) for r in runs)

    return Figures(
        runs[0].attack,
        *(
            med(n)
            for n in (
                "sent_per_s",
                "cpu_flooded",
                "cpu_honest",
                "rss_flooded",
                "rss_honest",
                "logged_flooded",
                "logged_honest",
            )
        ),
    )


def main(argv: Sequence[str] | None = None) -> int:
    from ports import own_player_locks

    own_player_locks()  # (two runs at once must not lock each other's nodes out)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each flood")
    parser.add_argument("--runs", type=int, default=1, help="games per attack (medians)")
    parser.add_argument("--attacks", default=",".join(ATTACKS))
    parser.add_argument("--big-mib", type=int, default=64, help="size of an oversized frame")
    parser.add_argument(
        "--rate",
        type=float,
        default=10_000.0,
        help="messages a second of each flood but oversize (0: as fast as zmq takes them)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--code", help="run the nodes from this checkout instead")
    args = parser.parse_args(argv)
    attacks = [a for a in args.attacks.split(",") if a]
    unknown = sorted(set(attacks) - set(ATTACKS))
    if unknown or args.players < 2 or args.runs < 1 or args.seconds <= 0:
        parser.error(f"bad arguments (unknown attacks: {unknown}; players >= 2, runs >= 1)")
    print(
        f"{args.players} greedy bots, one process each on 127.0.0.1; each flood {args.seconds:g} s"
        f" at node 1, {args.rate:,.0f} messages/s (oversize, many: as fast as they go);"
        f" {args.runs} game(s) per attack; load average"
        f" {os.getloadavg()[0]:.1f} at the start; code: {args.code or 'this checkout'}"
    )
    print(
        f"{'attack':<17} {'sent/s':>8}  {'CPU flooded':>11} {'honest':>7} {'ratio':>6}"
        f"  {'RSS MB flooded':>14} {'honest':>7} {'ratio':>6}  {'log KB flooded':>14} {'honest':>7}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-flood-") as tmp:
        for attack in attacks:
            runs = [
                f
                for r in range(args.runs)
                if (f := run_one(attack, args, args.seed + r, Path(tmp))) is not None
            ]
            if not runs:
                continue
            f = median_figures(runs)
            print(
                f"{f.attack:<17} {f.sent_per_s:>8,.0f}  {f.cpu_flooded:>10.0%} {f.cpu_honest:>7.0%}"
                f" {f.cpu_flooded / max(f.cpu_honest, 1e-9):>6.1f}"
                f"  {f.rss_flooded:>14.1f} {f.rss_honest:>7.1f}"
                f" {f.rss_flooded / f.rss_honest:>6.2f}"
                f"  {f.logged_flooded / 1024:>14.1f} {f.logged_honest / 1024:>7.1f}"
            )
    print("CPU: share of one core over the flood; RSS: peak (VmHWM); log KB: what each node's")
    print("log grew by during the flood (play went on where both grew).")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_node":
        sys.exit(child_node(*sys.argv[2:4]))
    sys.exit(main())
