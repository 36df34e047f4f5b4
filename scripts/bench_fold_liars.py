"""Benchmark of the tentative fold under liars that make the table refold (session 40).

A liar can make every honest peer make its tentative fold again at every event; each making
tries the same cuts (``folds.impose_cuts``) over every held event, and before session 40 each
trial folded them all again (two liars, readmit seed 171 at four players: 2,820 makings, 18,000
trials, ~6 M ``State.apply``). The rounds' passes are now kept from one making to the next
(``folds.Passes``), and a pass with what an earlier one was folded with folds only the events
held since. This script plays each game (``scripts/soak.py --liars --two-liars --back
readmit``, the seed's table size drawn from ``--players``) twice in the same process,
alternated over ``--reps``:

* **kept**: as the peers play it (passes kept);
* **reference**: the same game with no pass ever taken up again (``Passes.resume`` answers
  ``None``: every round folds every held event, the fold of session 39);

and prints, per game, the median CPU time (``time.process_time``) spent making tentative folds
(``Folds.tentative``'s ``_cut_unheld``, what the trials cost) and in the whole game, each
side's, and the reference's over the kept's as a ratio; then the median of those ratios. The
two sides must end alike (the same violations and outcome digests per peer): said once per game.

    .venv/bin/python scripts/bench_fold_liars.py [--seeds 28@3-4,171@4] [--players 3-4] [--reps 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p2p_nertz.protocol import folds  # noqa: E402
from p2p_nertz.protocol.state import GameState  # noqa: E402
from p2p_nertz.sim.liar_games import game, simulate  # noqa: E402

#: The costliest games of ``--two-liars --back readmit`` at 3-4 players, seeds 0-99, on the
#: tree before session 40 (28: 34 CPU-s; 19, 70, 6, 14: 5 each, not refold-bound), and seed
#: 171 at four players (``--players 4``): ``SEED@LOW-HIGH``, the table sizes drawn from.
SEEDS = "28@3-4,19@3-4,171@4"


@contextmanager
def _timed_folds(spent: list[float]) -> Iterator[None]:
    """Add the CPU time of every tentative fold made to ``spent[0]`` meanwhile."""
    plain = folds.Folds._cut_unheld

    def timed(self: folds.Folds) -> GameState:
        start = time.process_time()
        try:
            return plain(self)
        finally:
            spent[0] += time.process_time() - start

    folds.Folds._cut_unheld = timed  # type: ignore[method-assign]
    try:
        yield
    finally:
        folds.Folds._cut_unheld = plain  # type: ignore[method-assign]


@contextmanager
def _forgetting() -> Iterator[None]:
    """No pass kept is ever taken up again (the reference: the fold before session 40)."""
    plain = folds.Passes.resume
    folds.Passes.resume = lambda self, key, final, held: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        folds.Passes.resume = plain  # type: ignore[method-assign]


def _play(
    seed: int, players: tuple[int, int], kept: bool
) -> tuple[float, float, tuple[int, object]]:
    """One game: the CPU of its tentative folds, of the whole game, and how it ended."""
    spent = [0.0]
    config, liars = game(seed, players=players, two=True, back="readmit")
    start = time.process_time()
    with _timed_folds(spent):
        if kept:
            run = simulate(config, liars)
        else:
            with _forgetting():
                run = simulate(config, liars)
    total = time.process_time() - start
    result = run.result
    digests = tuple(None if p is None else p.final.digest() for p in result.peers)
    ending = (config.players, (tuple(result.violations), digests))
    return spent[0], total, ending


def _range(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    return int(low), int(high or low)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default=SEEDS, help="comma-separated SEED[@LOW-HIGH]")
    parser.add_argument("--players", default="3-4", help="the table sizes drawn from, e.g. 3-4")
    parser.add_argument("--reps", type=int, default=1)
    args = parser.parse_args()
    try:
        games = [
            (int(seed), _range(size or args.players))
            for seed, _, size in (t.partition("@") for t in args.seeds.split(","))
        ]
    except ValueError:
        parser.error(f"--seeds and --players take integers: {args.seeds!r}, {args.players!r}")
    ratios: list[float] = []
    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    header = "seed players  folds kept  reference  ratio | game kept  reference  ratio  same"
    print(header)
    for seed, players in games:
        sides: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        endings: dict[bool, tuple[int, object]] = {}
        for _ in range(args.reps):
            for kept in (True, False):  # (alternated: a load change weighs on both)
                spent, total, ending = _play(seed, players, kept)
                sides[kept].append((spent, total))
                endings[kept] = ending
        kept_ = [statistics.median(x[i] for x in sides[True]) for i in (0, 1)]
        ref = [statistics.median(x[i] for x in sides[False]) for i in (0, 1)]
        ratio = [r / max(k, 1e-9) for r, k in zip(ref, kept_, strict=True)]
        ratios.append(ratio[0])
        same = "yes" if endings[True] == endings[False] else "NO"
        print(
            f"{seed:4} {endings[True][0]:7} {kept_[0]:10.1f}s {ref[0]:9.1f}s {ratio[0]:6.1f}"
            f" | {kept_[1]:8.1f}s {ref[1]:9.1f}s {ratio[1]:6.1f}  {same}",
            flush=True,
        )
    print(f"median ratio of the folds' CPU (reference / kept): {statistics.median(ratios):.1f}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
