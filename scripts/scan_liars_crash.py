#!/usr/bin/env python3
"""Scan every lie beside an honest member that crashes (session 38).

frozen37's rule (docs/protocol.md §9.2, *nobody is blamed while a member is silent*: a member
the held votes drop is out for the blame rule) was built on one lie, ``frontier_ahead``,
beside a member crashed for good (``tests/test_sim_frozen_crash.py``); the lie fuzzer's own
mixes (``scripts/soak.py --liars``) crash nobody but a liar. This plays the fuzzer's one-liar
game of each seed (``liar_games.game``), seed ``i`` telling ``Lie``'s ``i % len(Lie)``-th
kind (every kind, ``MORE_LIES`` and ``quote_ahead`` among them), with the first honest seat
crashed a second after the liar starts (at 2 s at the earliest), back after
``LENGTHS[i % 5]``: for good, 0.5, 2, 5 or 10 s (under ``suspect_after``, under
``drop_after``, past it, past the phase timeout; the quick timers).

A game fails on any check of :func:`~p2p_nertz.sim.liar_games.simulate` but two the crash
excuses: the crashed member dropped where it was away past ``drop_after``, and no end where
no honest majority is left (crashed for good: ``n - 2`` honest of ``n``; dropped after its
return: ``n - 2`` of the ``n - 1`` left).

    python scripts/scan_liars_crash.py [--seed 0] [--games 100] [--players 3-5] [--workers 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from soak import table_sizes  # (a script beside this one)

from p2p_nertz.sim.liar_games import game, simulate
from p2p_nertz.sim.liars import Lie
from p2p_nertz.sim.network import Crash

#: How long the crashed member is down: for good, then under and past each timer.
LENGTHS: tuple[float | None, ...] = (None, 0.5, 2.0, 5.0, 10.0)


def one(args: tuple[int, int, int]) -> tuple[int, int, str, float | None, int, list[str]]:
    """Seed, players, lie, crash length, lies told and the failed checks of one game."""
    seed, low, high = args
    kinds = tuple(Lie)
    lie = kinds[seed % len(kinds)]
    back = LENGTHS[seed % len(LENGTHS)]
    config, liars = game(seed, players=(low, high), lies=(lie,))
    (liar,) = liars
    n = config.players
    victim = next(s for s in range(n) if s != liar.seat)
    crash = Crash(victim, max(liar.at, 1.0) + 1.0, restart_after=back)
    faults = dataclasses.replace(config.faults, crashes=(crash,))
    run = simulate(dataclasses.replace(config, faults=faults), liars)
    away = back is None or back > config.peer.drop_after
    dropped = any(
        p is not None and victim in p.final.dropped
        for s, p in enumerate(run.result.peers)
        if s not in (liar.seat, victim)
    )
    # (Honest members left running: n - 2 of n without the crashed one, of n - 1 once
    # it is dropped; all of them once it is back in.)
    left = n if back is None else n - 1 if dropped else 0
    promised = left == 0 or 2 * (n - 2) > left
    failed = [
        v
        for v in run.result.violations
        if not (away and v.endswith(f"dropped seat {victim}"))
        and not (not promised and v.startswith(("freeze:", "termination:", "gone:")))
    ]
    return seed, n, lie.value, back, run.told.get(liar.seat, 0), failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--players", default="3-5", help="range of table sizes (default 3-5)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    lo, hi = table_sizes(parser, args.players)
    jobs = [(seed, lo, hi) for seed in range(args.seed, args.seed + args.games)]
    start, bad = time.perf_counter(), 0
    with ProcessPoolExecutor(args.workers) as pool:
        for seed, n, lie, back, told, failed in pool.map(one, jobs, chunksize=2):
            if failed:
                bad += 1
                print(f"seed {seed} ({n} players, {lie}, back after {back}, told {told}) FAILED")
                for v in failed:
                    print(f"    {v}", flush=True)
    elapsed = time.perf_counter() - start
    print(f"games {args.games}, failed {bad}, {elapsed:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
