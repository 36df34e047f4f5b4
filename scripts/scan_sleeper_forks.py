#!/usr/bin/env python3
"""Scan the class of a fork sent to a member asleep, over a grid of games.

Runs the suite's own test of the class (``tests/test_sim_forks.py``,
``test_a_fork_sent_to_a_sleeper_blames_the_cheater_alone``: the game finishes, every honest
peer agrees, the audit of every log and of each log alone blames the cheater alone, the
sleeper restored from its log reaches what it held live) on every game of a grid: seeds,
table sizes, rounds, freezes shorter and longer than the liveness timers (``QUICK_TIMERS``:
suspect after 1 s, drop after 3 s) and fork times around each freeze (just after it falls
asleep, past ``drop_after``, past the drop).

With ``--cheater-asleep``, the other side of the class: the cheater is the one asleep and
dropped, and forks to seat 0 alone just before it wakes (``tests/test_sim_given_up_forks.py``:
seat 0 gives the fake up for the chain that counts, then proves the fork from the version it
gave up); ``--loss`` loses that share of the messages (a real event lost on its way to seat 0
is fetched later).

Prints how many games failed, by table size and by the check that failed first, and each
failing game as the ``Table(...)`` to paste into ``CASES``. Slow (a second or two a game):
it is not part of the suite.

    python scripts/scan_sleeper_forks.py [--seeds 0-15] [--players 2-5] [--rounds 1-2]
                                         [--cheater-asleep [--loss 0.1]] [--workers 2] [-v]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import test_sim_forks as forks
import test_sim_given_up_forks as given_up
from scanning import first_failure, span

#: When the lid closes, for how long, and when the cheater forks: a sleep shorter than
#: ``drop_after`` (the sleeper stays in), a few times longer (it is dropped while asleep; the
#: fork past ``drop_after``), longer than a round (the fork past the drop).
FREEZES = ((5.0, 2.0, 5.5), (6.0, 8.0, 8.8), (8.0, 30.0, 11.8))

#: The first check of the test: the sleeper's log holds both versions. A game where it does
#: not (the fork came after the game, or reached nobody) is not one of the class.
_PRECONDITION = "forks(result) == {cheat}"


#: ``--cheater-asleep``: when the cheater's lid closes and for how long (past ``drop_after``:
#: it is dropped, then readmitted at the next round), and when it forks, before it wakes.
ASLEEP = ((0.7, 10.0), (1.0, 4.0), (2.0, 6.0))
FORK_BEFORE_WAKING = (0.3, 0.1)

#: The first check of that test: seat 0's log holds both versions.
_GIVEN_UP_PRECONDITION = "assert forked "

Table = forks.Table | given_up.Table


def grid(seeds: range, players: range, rounds: range) -> list[forks.Table]:
    return [
        forks.Table(seed, n, r, at, lasting, fork)
        for n in players
        for r in rounds
        for at, lasting, fork in FREEZES
        for seed in seeds
    ]


def asleep_grid(seeds: range, players: range, rounds: range, loss: float) -> list[Table]:
    return [
        given_up.Table(seed, n, r, at, lasting, round(at + lasting - early, 3), loss)
        for n in players
        if n >= 3  # (two members can drop nobody: no readmission, nothing given up)
        for r in rounds
        for at, lasting in ASLEEP
        for early in FORK_BEFORE_WAKING
        for seed in seeds
    ]


def one(table: Table) -> tuple[Table, str | None]:
    """The game's first failing check (the assertion's line), ``""`` for a game not of the
    class, or ``None`` if it passed."""
    if isinstance(table, given_up.Table):
        return table, first_failure(
            given_up.test_a_fork_given_up_is_proven_when_the_other_version_comes,
            table,
            _GIVEN_UP_PRECONDITION,
        )
    return table, first_failure(
        forks.test_a_fork_sent_to_a_sleeper_blames_the_cheater_alone, table, _PRECONDITION
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-15")
    parser.add_argument("--players", default="2-5")
    parser.add_argument("--rounds", default="1-2")
    parser.add_argument("--cheater-asleep", action="store_true", help="the cheater sleeps")
    parser.add_argument("--loss", type=float, default=0.0, help="with --cheater-asleep")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if not 0.0 <= args.loss < 1.0:
        parser.error("--loss wants a share from 0 to below 1")
    try:
        seeds, players, rounds = span(args.seeds), span(args.players), span(args.rounds)
    except ValueError:
        parser.error("--seeds, --players and --rounds want N or N-M")
    tables: list[Table] = (
        asleep_grid(seeds, players, rounds, args.loss)
        if args.cheater_asleep
        else list(grid(seeds, players, rounds))
    )
    failed: list[tuple[Table, str]] = []
    outside = 0
    with ProcessPoolExecutor(args.workers) as pool:
        for table, why in pool.map(one, tables, chunksize=4):
            if why == "":
                outside += 1
            elif why is not None:
                failed.append((table, why))
                if args.verbose:
                    print(f"FAIL {table}  {why}", flush=True)
    who = "seat 0" if args.cheater_asleep else "the sleeper"
    print(
        f"{len(tables)} games, {outside} not of the class ({who} never held both "
        f"versions), {len(failed)} failed"
    )
    by_size = Counter(t.players for t, _ in failed)
    print("failed by table size: " + ", ".join(f"{n}: {by_size[n]}" for n in span(args.players)))
    for why, count in Counter(why for _, why in failed).most_common():
        print(f"{count:5}  {why}")
    for table, why in failed:
        print(f"  {table}  # {why.split(':')[0]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
