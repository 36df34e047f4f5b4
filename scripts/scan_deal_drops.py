#!/usr/bin/env python3
"""Scan the class of a member lost while a shuffle game deals (docs/shuffle.md §8.4).

Runs the suite's own test of the class (``tests/test_sim_deal_drops.py``: the last seat
crashes before its key, mid-deal or just after the deal, for less than ``suspect_after``, less
than ``drop_after``, longer, or for ever; the game finishes, every invariant holds, the audit
of every log is clean, and a member gone for good restarts the deal without it) on every game
of a grid: seeds, table sizes, ``PHASES`` and ``LENGTHS``. Prints each failing game and how it
failed, and the count. Slow (tens of seconds a game under load): not part of the suite.

    python scripts/scan_deal_drops.py [--seeds 1] [--players 2-4] [--workers 1]
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_sim_deal_drops as drops
from scanning import first_failure, span


def one(case: drops.DealDrop) -> tuple[drops.DealDrop, str | None]:
    return case, first_failure(drops.check_deal_drop, case, "result.finished")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1", help="N or N-M")
    parser.add_argument("--players", default="2-4", help="N or N-M")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    grid = [
        drops.DealDrop(n, phase, length, seed)
        for seed in span(args.seeds)
        for n in span(args.players)
        for phase in drops.PHASES
        for length in drops.LENGTHS
    ]
    failed = 0
    with ProcessPoolExecutor(args.workers) as pool:
        for case, failure in pool.map(one, grid):
            if failure is None:
                print(f"ok     {case}", flush=True)
            else:
                failed += 1
                print(f"FAILED {case}: {failure or 'did not finish'}", flush=True)
    print(f"{len(grid)} games, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
