#!/usr/bin/env python3
"""Benchmark the rules engine: four-player greedy rounds per second, legal-move generations per
second, and moves applied per second, on one core.

Machines here are noisy, so every figure is the median of several repeats, timed in the
process's CPU time (another process sharing the core would otherwise count), and the run also
measures a fixed pure-Python baseline (shuffling decks with the project's own RNG) so that runs
on different days can be compared as ratios. Target (issue 2): at least 50 four-player rounds
per second.

    python scripts/bench_engine.py [--rounds 40] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

from p2p_nertz.bots import greedy as greedy_module
from p2p_nertz.bots.greedy import Greedy
from p2p_nertz.match import Player, play_round, round_decks
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Rules, Table

TARGET_ROUNDS_PER_SECOND = 50.0


def _median_rate(work: Callable[[], int], repeats: int) -> float:
    """Median over ``repeats`` runs of (units of work done) / seconds."""
    rates = []
    for _ in range(repeats):
        start = time.process_time()
        units = work()
        rates.append(units / (time.process_time() - start))
    return statistics.median(rates)


def rounds_ab(count: int, repeats: int) -> tuple[float, float, float]:
    """Rounds/s with the free_a_pile memo and without it, alternated: medians, and the median
    of the paired ratios (with / without)."""
    memo, plain = greedy_module._free_a_pile_memo, greedy_module.free_a_pile
    with_memo: list[float] = []
    without: list[float] = []
    try:
        for _ in range(repeats):
            for choice, rates in ((memo, with_memo), (plain, without)):
                greedy_module._free = choice
                start = time.process_time()
                rounds(count)
                rates.append(count / (time.process_time() - start))
    finally:
        greedy_module._free = memo
    ratio = statistics.median(a / b for a, b in zip(with_memo, without, strict=True))
    return statistics.median(with_memo), statistics.median(without), ratio


def baseline(n: int = 2000) -> int:
    """A fixed pure-Python workload: shuffle a 52-card list ``n`` times."""
    rng = Rng(1)
    cards = list(range(52))
    for _ in range(n):
        rng.shuffle(cards)
    return n


def rounds(count: int, players: int = 4) -> int:
    """Play ``count`` full rounds of greedy bots (different deals)."""
    seats = [Player("greedy")] * players
    for seed in range(count):
        play_round(Rules(), seats, seed)
    return count


def sample_positions(count: int) -> list[tuple[Table, int]]:
    """Real positions: every decision point of greedy bots playing fresh deals."""
    rules = Rules()
    positions: list[tuple[Table, int]] = []
    seed = 10_000
    while len(positions) < count:
        table = Table.deal(rules, round_decks(rules, seed, 1, 4))
        bots = [Greedy(Rng(seat)) for seat in range(4)]
        seat = 0
        while not table.over and len(positions) < count:
            positions.append((table, seat))
            move = bots[seat].choose(table, seat)
            if move is not None:
                table, _ = table.play(seat, move)
            seat = (seat + 1) % 4
        seed += 1
    return positions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="rounds per repeat")
    parser.add_argument("--repeats", type=int, default=5, help="repeats (median reported)")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core

    base = _median_rate(baseline, args.repeats)
    rps, rps_plain, gain = rounds_ab(args.rounds, args.repeats)
    positions = sample_positions(5000)

    def generate() -> int:
        for table, seat in positions:
            for _ in table.legal_moves(seat):
                pass
        return len(positions)

    gens = _median_rate(generate, args.repeats)
    avg_moves = sum(len(table.legal_moves(seat)) for table, seat in positions) / len(positions)
    print(f"python {sys.version.split()[0]}, one core, median of {args.repeats} repeats")
    print(f"baseline (52-card shuffles/s):         {base:12,.0f}")
    target = TARGET_ROUNDS_PER_SECOND
    print(f"4-player greedy rounds/s:              {rps:12,.1f}   (target >= {target:.0f})")
    print(
        f"  without the free_a_pile memo:         {rps_plain:12,.1f}   "
        f"(same run, alternated; paired ratio {gain:.3f})"
    )
    print(f"legal-move generations/s:              {gens:12,.0f}   ({avg_moves:.1f} moves each)")
    print(f"rounds/s per 1000 baseline shuffles/s: {1000 * rps / base:12.3f}")
    ok = rps >= TARGET_ROUNDS_PER_SECOND
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
