#!/usr/bin/env python3
"""Soak the protocol: thousands of seeded simulated games with random faults.

Prints how many games ran, how many faults were injected (partitions, crashes, equivocating
members, lost and duplicated messages), and how many invariant violations were found (must be
zero). A failing seed is printed with its configuration; ``--seed N --games 1 -v`` replays it
exactly. Equivocating members (a cheater signing two events under one seq) are on by default;
``--no-cheats`` leaves them out.

    python scripts/soak.py [--games 1000] [--seed 0] [--players 2-5] [--workers 2] [--no-cheats]
                           [--variants]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from p2p_nertz.rng import Rng
from p2p_nertz.rules import Rules
from p2p_nertz.sim import Faults, SimConfig, run


def variant_rules(rng: Rng, players: int, rounds: int) -> Rules:
    """Rules with every variant of RULES.md drawn at random (pairs only where they fit)."""
    return Rules(
        draw=(1, 3)[rng.below(2)],
        work_piles=4 + rng.below(3),
        nerts_bonus=(0, 5, 10, 25)[rng.below(4)],
        nerts_card_penalty=1 + rng.below(2),
        target=None,
        rounds=rounds,
        rotate_alone=rng.below(2) == 1,
        pairs=players % 2 == 0 and players >= 4 and rng.below(2) == 1,
        jokers=rng.below(3),
    )


def one(
    args: tuple[int, int, int, int, bool, bool],
) -> tuple[int, int, dict[str, int], list[str], str]:
    seed, low, high, rounds, cheats, variants = args
    rng = Rng(seed)
    players = low + rng.below(high - low + 1)
    faults = Faults.random(rng, players, horizon=15.0 * rounds, cheats=cheats)
    rules = (
        variant_rules(Rng(seed + 1_000_003), players, rounds)
        if variants
        else Rules(target=None, rounds=rounds)
    )
    config = SimConfig(
        players=players,
        seed=seed,
        faults=faults,
        rules=rules,
        max_time=400.0 * rounds,
    )
    result = run(config)
    counts = {
        "partitions": len(faults.partitions),
        "crashes": result.crashes,
        "cheaters": len(faults.equivocations),
        "lost": result.lost,
        "duplicated": result.duplicated,
        "messages": result.sent,
    }
    return seed, players, counts, result.violations, f"{rules!r} {faults!r}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--players", default="2-5", help="range of table sizes, e.g. 2-5")
    parser.add_argument("--rounds", type=int, default=1, help="rounds per game")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--no-cheats", action="store_true", help="no equivocating members in the fault mix"
    )
    parser.add_argument(
        "--variants",
        action="store_true",
        help="draw the rules' variants per game (draw, work piles, scoring, rotate alone, "
        "pairs, jokers) instead of the standard game",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    low, _, high = args.players.partition("-")
    lo, hi = int(low), int(high or low)
    cheats = not args.no_cheats
    jobs = [
        (seed, lo, hi, args.rounds, cheats, args.variants)
        for seed in range(args.seed, args.seed + args.games)
    ]
    start = time.perf_counter()
    totals: dict[str, int] = {}
    bad = 0
    with ProcessPoolExecutor(args.workers) as pool:
        for seed, players, counts, violations, faults in pool.map(one, jobs, chunksize=4):
            for key, value in counts.items():
                totals[key] = totals.get(key, 0) + value
            if violations:
                bad += 1
                print(f"seed {seed} ({players} players) FAILED: {faults}", flush=True)
                for v in violations:
                    print(f"    {v}", flush=True)
            elif args.verbose:
                print(f"seed {seed} ({players} players) ok: {counts}", flush=True)
    elapsed = time.perf_counter() - start
    injected = totals.get("partitions", 0) + totals.get("crashes", 0) + totals.get("cheaters", 0)
    injected += totals.get("lost", 0) + totals.get("duplicated", 0)
    print(
        f"games {args.games}, faults injected {injected} "
        f"(partitions {totals.get('partitions', 0)}, crashes {totals.get('crashes', 0)}, "
        f"equivocating members {totals.get('cheaters', 0)}, "
        f"lost {totals.get('lost', 0)}, duplicated {totals.get('duplicated', 0)} "
        f"of {totals.get('messages', 0)} messages), invariant violations {bad}, "
        f"{elapsed:.0f} s ({args.games / elapsed:.1f} games/s)"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
