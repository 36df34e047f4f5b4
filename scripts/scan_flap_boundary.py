#!/usr/bin/env python3
"""Play ``tests/test_flaps_boundary.py``'s flapper at a round's end on more seeds than the
suite does (docs/protocol.md §9.4, *at a round's end*).

For each seed and table size, the flapper signs 16 withdrawals in round 1's play and its 17th
at each point of the test (after a Nerts call, just before or after its own result when that
result ends the round, just after its own result with one other member deaf for a while or
the table split in two, in round 2), and the test's own check runs (one home:
``test_flaps_boundary._alike``): every peer's final fold, the audit of every log and of each
log alone find the fault at the same withdrawal as a count worked out from the signed
events, or none; the invariants hold. Prints each failing game and the counts. Not part of
the suite.

    python scripts/scan_flap_boundary.py [--seeds N-M] [--players 2-4] [--workers 2]
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scanning import first_failure, span

from tests.flap_boundary_helpers import BoundaryFlapper, LateFlaps, When
from tests.test_flaps_boundary import _alike

Case = tuple[int, int, BoundaryFlapper, LateFlaps | None]


def _cases(seed: int, players: int) -> list[tuple[str, Case]]:
    """The points of the test, at ``players``: a name and the case."""
    last = players - 1
    cases: list[tuple[str, Case]] = []
    for when in (When.NERTS, When.BEFORE_OWN_END, When.AFTER_OWN_END, When.ROUND_TWO):
        cases.append((when.value, (seed, players, BoundaryFlapper(last, 0, 16, 1, when), None)))
    after = BoundaryFlapper(0, 1, 16, 1, When.AFTER_OWN_RESULT)
    for deaf in range(1, players):
        cases.append((f"deaf {deaf}", (seed, players, after, LateFlaps(deaf=deaf))))
    if players > 2:
        half = frozenset(range(players // 2)), frozenset(range(players // 2, players))
        cases.append(("split", (seed, players, after, LateFlaps(split=half))))
    return cases


def _run(job: tuple[str, Case]) -> tuple[str, Case, str | None]:
    name, case = job
    # (The check has no precondition: any failing line is a failure.)
    return name, case, first_failure(_alike, case, "pytest.fail")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1-20", help="N or N-M")
    parser.add_argument("--players", default="2-4", help="N or N-M")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    jobs = [
        job
        for seed in span(args.seeds)
        for players in span(args.players)
        for job in _cases(seed, players)
    ]
    failed = 0
    with ProcessPoolExecutor(args.workers) as pool:
        for name, (seed, players, _, _), failure in pool.map(_run, jobs):
            if failure is not None:
                failed += 1
                print(f"FAILED seed {seed}, {players} players, {name}: {failure}", flush=True)
    print(f"{len(jobs)} games, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
