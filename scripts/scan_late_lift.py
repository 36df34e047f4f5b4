#!/usr/bin/env python3
"""Scan the class of a late lift (docs/protocol.md §7.4, §13): a member's withdrawal that
reaches the others only after one of them made its drop final.

For each seed of the ``--late-withdrawals`` mix, the game is played once as the seed plays
it, noting each member whose drop some peer's held votes decided on a later withdrawal (where
``finality.decided_at`` is later than ``drop_at``: the wait of session 19 was asked). Then,
for each such member, the game is played again under the scripted schedule
:class:`~p2p_nertz.sim.schedules.LateLift` (the member's withdrawals held back at every
receiver until a peer has made its drop final, at most 3 s), once with any peer first and
once with each other peer first. Prints each run that breaks an invariant (its first line),
and how many games were asked and broken. Slow (a few seconds a run, a stalled one up to
the simulator's time limit): it is not part of the suite. To compare with another tree, run
that tree's copy with its own environment (an editable install's finder wins over
``PYTHONPATH``).

    python scripts/scan_late_lift.py [--seeds 0-119] [--players 3-3] [--workers 1]
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scanning import span

from p2p_nertz.protocol import finality
from p2p_nertz.protocol.state import GameState
from p2p_nertz.sim import Simulation, run
from p2p_nertz.sim.mixes import late_withdrawals
from p2p_nertz.sim.schedules import LateLift


def _asked(seed: int, players: tuple[int, int]) -> tuple[int, list[int]]:
    """The table size of the seed's game, and the members whose drop some peer decided on a
    later withdrawal (``settle`` reads ``finality.decided_at`` by its module name; this
    process only, for this one run)."""
    members: set[int] = set()
    plain = finality.decided_at

    def noting(tentative: GameState, seat: int) -> int:
        at = plain(tentative, seat)
        if at > tentative.drop_at.get(seat, 0):
            members.add(seat)
        return at

    finality.decided_at = noting
    try:
        config = late_withdrawals(seed, players=players)
        Simulation(config).run()
    finally:
        finality.decided_at = plain
    return config.players, sorted(members)


def scan_seed(seed: int, players: tuple[int, int]) -> tuple[int, bool, list[str]]:
    """One seed: its table size, whether the wait was asked, and a line per run broken."""
    n, members = _asked(seed, players)
    config = late_withdrawals(seed, players=players)
    broken = []
    for member in members:
        for first in [None, *(q for q in range(n) if q != member)]:
            schedule = LateLift(member, first=first)
            result = run(config, schedule)
            if first is not None and schedule.final_by is None:
                continue  # (that peer never made the drop final first: the same as no wait)
            if result.violations:
                by = schedule.final_by[0] if schedule.final_by else None
                broken.append(
                    f"seed {seed} ({n} players) member {member} first {first} "
                    f"held {sorted(schedule.held)} final first at peer {by}: "
                    f"{result.violations[0]}"
                )
    return n, bool(members), broken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-119", help="seeds, N or N-M (default 0-119)")
    parser.add_argument("--players", default="3-3", help="table sizes, N-M (default 3-3)")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    sizes = span(args.players)
    players = (sizes.start, sizes.stop - 1)
    seeds = list(span(args.seeds))
    asked = broken_games = 0
    with ProcessPoolExecutor(args.workers) as pool:
        for _, was_asked, broken in pool.map(scan_seed, seeds, [players] * len(seeds)):
            asked += was_asked
            broken_games += bool(broken)
            for line in broken:
                print(line, flush=True)
    print(
        f"{len(seeds)} games ({args.players} players): the wait asked in {asked}, "
        f"broken under the schedule {broken_games}"
    )


if __name__ == "__main__":
    main()
