#!/usr/bin/env python3
"""Scan the class of a drop decided without the member's events past its cut (soak seed 2086).

Runs the suite's own test of the class (``tests/test_sim_drop_cuts.py``: the game finishes,
every member agrees on the drops and the game, every invariant holds, the audit of every log
reaches the members' state) on every game of a grid: seeds, table sizes (each with its shape,
``SHAPES``: seat 0 asleep, a partition cutting seat 1 off, the sleeper on its side or on the
others'), and partitions lasting from just under to just over ``drop_after`` (``LENGTHS``;
``QUICK_TIMERS``: suspect after 1 s, drop after 3 s).

Prints how many games failed, by table size and by the check that failed first, and each
failing game as the ``Split(...)`` to paste into ``CASES``. Slow (a few seconds a game): it is
not part of the suite. To see which games failed before a change, run that tree's copy
with that tree's installed environment (an editable install's finder wins over
``PYTHONPATH``).

    python scripts/scan_drop_cuts.py [--seeds 0-3] [--players 3-5] [--workers 2] [-v]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_sim_drop_cuts as cuts
from scanning import first_failure, span

#: The first check of the test: a member was dropped somewhere. A game where none was is not
#: one of the class.
_PRECONDITION = "p.tentative.drop_at"

#: Per table size: whether the sleeper is on seat 1's side of the partition, when its lid
#: closes, for how long, and how long after that the partition starts. With five players the
#: others (three) drop both alone (soak seed 2086's shape); with three or four they need the
#: sleeper's vote on seat 1, so it wakes as their silence timers on seat 1 fire.
SHAPES = {
    3: (False, 5.0, 4.0, 1.0),
    4: (False, 5.0, 4.0, 1.0),
    5: (True, 5.0, 7.4, 2.2),
}
#: How long the partition lasts: around ``drop_after``, shorter and longer. The class needs
#: the others' votes on seat 1 withdrawn once it is heard, after they dropped it (a vote that
#: stands caps seat 1's later votes, and the fold then agrees, §9.2 "Caps"): the partition
#: ends as their silence timers fire.
LENGTHS = (2.8, 2.9, 3.0, 3.1, 3.2)


def grid(seeds: range, players: range) -> list[cuts.Split]:
    return [
        cuts.Split(seed, n, 1, at, lasting, offset, length, together, noisy=True)
        for n in players
        for together, at, lasting, offset in (SHAPES[n],)
        for length in LENGTHS
        for seed in seeds
    ]


def one(split: cuts.Split) -> tuple[cuts.Split, str | None]:
    """The game's first failing check (the assertion's line), or ``None`` if it passed."""
    return split, first_failure(
        cuts.test_a_drop_stands_as_its_votes_decide_it_without_the_members_events_past_the_cut,
        split,
        _PRECONDITION,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-3")
    parser.add_argument("--players", default="3-5")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    games = grid(span(args.seeds), span(args.players))
    failed: list[tuple[cuts.Split, str]] = []
    with ProcessPoolExecutor(args.workers) as pool:
        for split, why in pool.map(one, games, chunksize=1):
            if why:
                failed.append((split, why))
            if args.verbose:
                print(f"{split}: {why or 'ok'}", flush=True)
    print(f"games {len(games)}, failed {len(failed)}")
    by_size = Counter(split.players for split, _ in failed)
    for n in sorted(by_size):
        print(f"  {n} players: {by_size[n]}")
    for why, count in Counter(why for _, why in failed).most_common():
        print(f"  {count:4d}  {why}")
    for split, _ in failed:
        print(f"    pytest.param({split!r}),")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
