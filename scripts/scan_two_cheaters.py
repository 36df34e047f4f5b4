#!/usr/bin/env python3
"""Scan games with two cheaters at once (session 25): does any honest member split, stall
for good, or get named by the audit?

docs/protocol.md §9.2 left the coverage term (``held_by``, §7.1) uncapped by a voter's
freeze: "it needs the voter to break its freeze and Q to fork, two cheaters; not seen in any
sample". Every soak so far had one cheater a game. (This scan found it; session 25 capped the
term, §9.2, *the freeze on the coverage term*.) Mixes (4 to 6 players unless
``--players`` says otherwise, one round, the peers on ``QUICK_TIMERS``, a light random
network: delay, jitter, reordering, loss and duplication drawn from the seed):

* ``fork_breaker``: a member votes another out for silence while it is heard, never
  withdraws, and announces its feed past the vote (:class:`p2p_nertz.sim.collusion.
  FreezeBreaker`); later the member voted on forks (an ``Equivocation``: a second version of
  its next event to some members only, the breaker among them or not).
* ``vouch``: as ``fork_breaker``, but the fork's second version goes to the breaker alone
  (the breaker holds the fork and vouches for the chain it holds).
* ``two_forks``: two members fork, each at its own time to its own members.
* ``mutual``: two breakers, each voting the other out and announcing its feed past the vote;
  one of them forks later.
* ``two_withhold``: two members each send one member (a different one) nothing of their own
  (:class:`p2p_nertz.sim.collusion.Withholder`; the others relay their events to it).
* ``withhold_fork``: a member withholds from a third; another forks, its second version to
  that third member alone.

Each game's invariants (DESIGN.md §8, :func:`p2p_nertz.sim.invariants.check`: agreement, no
split brain, termination where a majority is live and honest, the audit naming no honest
member) are checked for the honest members. Prints, per mix and table size, how many games
ran, how many broke an invariant, and each failing seed with its first violation; ``--seed
N --games 1 -v`` replays one.

    python scripts/scan_two_cheaters.py [--mix fork_breaker,vouch,two_forks,mutual,...]
                                        [--games 40] [--seed 0] [--players 4-6] [--workers 2] [-v]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scanning import span

from p2p_nertz.sim.collusion import MIXES, game, simulate
from p2p_nertz.sim.probes import HandOns, count_hand_ons


def one(
    job: tuple[str, int, int, int],
) -> tuple[str, int, int, bool, list[str], float, HandOns]:
    """Play one game; (mix, seed, players, finished, violations, CPU seconds, the hand-ons in
    play of docs/protocol.md §9.2)."""
    mix, seed, low, high = job
    config, breakers = game(mix, seed, low, high)
    start = time.process_time()
    try:
        with count_hand_ons() as hand_ons:
            result = simulate(config, breakers)
        violations, finished = result.violations, result.finished
    except Exception as exc:  # a crash is a finding of its own kind
        violations, finished = [f"crash: {type(exc).__name__}: {exc}"], False
    return mix, seed, config.players, finished, violations, time.process_time() - start, hand_ons


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mix", default=",".join(MIXES))
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", default="4-6")
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    mixes = [m for m in args.mix.split(",") if m]
    sizes = span(args.players)
    if not mixes or set(mixes) - set(MIXES) or sizes.start < 3:
        parser.error(f"mixes among {', '.join(MIXES)}; players 3 or more")
    jobs = [
        (mix, seed, sizes.start, sizes.stop - 1)
        for mix in mixes
        for seed in range(args.seed, args.seed + args.games)
    ]
    games: Counter[tuple[str, int]] = Counter()
    broken: Counter[tuple[str, int]] = Counter()
    kinds: Counter[str] = Counter()
    started: Counter[str] = Counter()  # (per mix: hand-ons started, beats handed on)
    handed: Counter[str] = Counter()
    cpu = 0.0
    with ProcessPoolExecutor(args.workers) as pool:
        for mix, seed, players, finished, violations, seconds, hand_ons in pool.map(one, jobs):
            games[mix, players] += 1
            started[mix] += hand_ons.started
            handed[mix] += hand_ons.messages
            cpu += seconds
            if violations:
                broken[mix, players] += 1
                kinds.update({v.split(":")[0] for v in violations})
                print(f"{mix} seed {seed} ({players} players): {violations[0]}", flush=True)
                if args.verbose:
                    for v in violations[1:]:
                        print(f"    {v}")
            elif args.verbose:
                print(f"{mix} seed {seed} ({players} players): clean, finished={finished}")
    print(f"load {os.getloadavg()[0]:.1f}; {len(jobs)} games, {cpu:.0f} s of CPU")
    for mix, players in sorted(games):
        print(
            f"  {mix:13} {players} players: {games[mix, players]:4} games, "
            f"{broken[mix, players]} broken"
        )
    for mix in mixes:
        print(
            f"  {mix:13} hand-ons in play (§9.2): {started[mix]} started, "
            f"{handed[mix]} beats handed on"
        )
    for kind, count in kinds.most_common():
        print(f"  violations of kind {kind!r}: {count} games")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
