#!/usr/bin/env python3
"""Play the suite's seeded simulated games on more seeds than the suite does.

Three kinds, each the suite's own game for a seed (one home: the tests' functions):

* ``seeded``: ``tests/test_sim.py``'s games of 2-3 players with random short faults (the suite
  plays the sample ``SEEDED_SAMPLE``, every fault of the mix; it once played 0-199, this
  script's default);
* ``long``: ``tests/test_sim_split.py``'s soak games of 2-3 players with faults around and past
  the liveness timers (the suite plays the sample ``LONG_FAULT_SAMPLE``; default 0-59);
* ``soak``: the soak seeds that found the faults fixed for issue 13 (``SOAK_SEEDS``, the
  default; the suite plays a sample).

Prints each failing seed with its violations, and the count. Not part of the suite.

    python scripts/scan_sim_seeds.py seeded|long|soak [--seeds N-M] [--workers 2]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scanning import span

from tests import test_sim, test_sim_split


def _seeded(seed: int) -> tuple[int, list[str]]:
    _, _, _, violations = test_sim._seeded(seed)
    return seed, violations


def _long(seed: int) -> tuple[int, list[str]]:
    _, violations, _ = test_sim_split._long_faults_game(seed)
    return seed, violations


KINDS: dict[str, tuple[Callable[[int], tuple[int, list[str]]], str]] = {
    "seeded": (_seeded, "0-199"),
    "long": (_long, "0-59"),
    "soak": (test_sim_split._soak_seed, ""),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=sorted(KINDS))
    parser.add_argument("--seeds", default=None, help="N or N-M (soak: the SOAK_SEEDS)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    play, default = KINDS[args.kind]
    text = args.seeds if args.seeds is not None else default
    seeds = list(span(text)) if text else list(test_sim_split.SOAK_SEEDS)
    failed = 0
    with ProcessPoolExecutor(args.workers) as pool:
        for seed, violations in pool.map(play, seeds):
            if violations:
                failed += 1
                print(f"FAILED seed {seed}: {violations[:3]}", flush=True)
    print(f"{len(seeds)} {args.kind} games, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
