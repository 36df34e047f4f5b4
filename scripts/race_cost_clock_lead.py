#!/usr/bin/env python3
"""What the clock's lead costs a member pumped by another's beats (docs/protocol.md §5.3,
§13 *the push costs races*), measured in the simulator.

A member that beats one other member alone, each beat far ahead of the events, moves that
member's clock to ``top + lead`` (``Outbox.take_beat``): the pumped member's next event is
timed up to ``lead`` above the others' concurrent events, and loses every race for the lake
it would have tied or won by a few ticks. For each seed and table size three games of the same
seed are played (one round, greedy bots, ``QUICK_TIMERS``, the simulator's default network):

* ``reference``: no attack;
* ``liar``: the last seat follows every input in which it sends anything with a beat to seat
  0 alone, ``2 * lead`` above the clocks it knows (as ``tests/test_sim_clock_split.py`` does,
  ``lead`` apart instead of 2^32); its own clock is not moved, so its next event is timed
  below its beat: a lie about time (§9.4), proven, and it is voted out;
* ``sound``: the same beats, but the attacker moves its own clock to each beat's time, so it
  never lies: its own events are timed far ahead (it loses its own races) and, delivered,
  move every clock past them; it stays in the whole round.

From the audit of every log (its fold's claim notices) it counts, per seat, the claims
decided and those lost, and prints the pumped seat's share of claims lost and its cards kept
in the lake against the other honest seats' (the attacker left out) in the same games, for
each kind of game: the pumped seat's extra loss is its share minus theirs, against the same
difference in the reference games. Figures depend on the seeds, not on the machine's load.

    python scripts/race_cost_clock_lead.py [--seeds 0-29] [--players 3-4] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scanning import span

from p2p_nertz.audit import FoldStep, LogSource, audit
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import ClaimDecided
from p2p_nertz.rules import Outcome, Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, SimConfig
from p2p_nertz.sim.cheats import beat_alone
from p2p_nertz.sim.logfiles import log_files
from p2p_nertz.sim.network import Simulation

VICTIM = 0
KINDS = ("reference", "liar", "sound")


def pump(attacker: Peer, victim: Peer, *, sound: bool) -> list[int]:
    """Make ``attacker``, while a member, follow every input that sends anything with a beat to
    ``victim`` alone, ``2 * lead`` above the clocks it knows; ``sound``: and move its own clock
    there. Returns the list the beats' times are appended to."""
    outbox = attacker._outbox

    def time(sent: list[int]) -> int | None:
        if attacker.seat in attacker.final.dropped:
            return None
        lamport = max(outbox.clock, victim.clock) + 2 * outbox.lead
        if sound:
            outbox.clock = lamport
        return lamport

    return beat_alone(attacker, victim, time)


def one(
    job: tuple[str, int, int, float],
) -> tuple[str, int, int, list[tuple[int, int, int]], int, int]:
    """One game: (kind, seed, players, per seat (claims, lost, kept cards), beats, audit
    errors naming an honest seat)."""
    kind, seed, players, delay = job
    config = SimConfig(
        players=players,
        seed=seed,
        faults=Faults(delay=delay, jitter=delay / 2),
        rules=Rules(target=None, rounds=1),
        peer=QUICK_TIMERS,
        max_time=300.0,
    )
    sim = Simulation(config)
    attacker_seat = players - 1
    sent: list[int] = []
    if kind != "reference":
        attacker, victim = sim.peers[attacker_seat], sim.peers[VICTIM]
        assert attacker is not None and victim is not None
        sent = pump(attacker, victim, sound=kind == "sound")
    result = sim.run()
    counts = [[0, 0, 0] for _ in range(players)]

    def on_fold(step: FoldStep) -> None:
        for notice in step.notices:
            if isinstance(notice, ClaimDecided):
                seat = notice.resolution.claim.seat
                counts[seat][0] += 1
                if notice.resolution.outcome is Outcome.LOST:
                    counts[seat][1] += 1
                else:
                    counts[seat][2] += 1

    files = log_files(result)
    sources = [LogSource.from_bytes(f"p{s + 1}.log", data) for s, data in enumerate(files)]
    report = audit(sources, on_fold=on_fold)
    honest_named = sum(
        1 for f in (*report.errors,) if f.seat is not None and f.seat != attacker_seat
    )
    per_seat = [(c[0], c[1], c[2]) for c in counts]
    return kind, seed, players, per_seat, len(sent), honest_named


def _share(rows: Sequence[tuple[int, int, int]]) -> tuple[float, float, float]:
    """Claims a game, share of them lost, cards kept a game."""
    claims = sum(r[0] for r in rows)
    lost = sum(r[1] for r in rows)
    kept = sum(r[2] for r in rows)
    games = max(len(rows), 1)
    return claims / games, (lost / claims if claims else float("nan")), kept / games


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-29")
    parser.add_argument("--players", default="3-4")
    parser.add_argument("--delay", type=float, default=0.005, help="one-way delay, seconds")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    seeds, sizes = span(args.seeds), span(args.players)
    if sizes.start < 3:
        parser.error("players 3 or more (the attacker and two others)")
    jobs = [(k, s, n, args.delay) for n in sizes for s in seeds for k in KINDS]
    victim: dict[tuple[str, int], list[tuple[int, int, int]]] = {}
    others: dict[tuple[str, int], list[tuple[int, int, int]]] = {}
    beats: dict[tuple[str, int], list[int]] = {}
    named = 0
    with ProcessPoolExecutor(args.workers) as pool:
        for kind, _seed, n, per_seat, sent, honest_named in pool.map(one, jobs):
            victim.setdefault((kind, n), []).append(per_seat[VICTIM])
            others.setdefault((kind, n), []).extend(per_seat[1 : n - 1])
            beats.setdefault((kind, n), []).append(sent)
            named += honest_named
    print(
        f"load {os.getloadavg()[0]:.1f}; seeds {args.seeds}, one round each, greedy bots,"
        f" delay {args.delay * 1000:g} ms (jitter half of it)"
    )
    print(
        "players kind       beats/game | pumped seat: claims lost% kept | others: claims lost% kept"
    )
    for n in sizes:
        for kind in KINDS:
            v, o = _share(victim[kind, n]), _share(others[kind, n])
            print(
                f"{n:7} {kind:10} {statistics.fmean(beats[kind, n]):10.0f} |"
                f" {v[0]:19.1f} {100 * v[1]:5.1f} {v[2]:4.1f} |"
                f" {o[0]:13.1f} {100 * o[1]:5.1f} {o[2]:4.1f}"
            )
    print(f"audit findings (errors) naming an honest seat: {named}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
