#!/usr/bin/env python3
"""Scan the class of a late lift (docs/protocol.md §7.4, §13): a member's withdrawal that
reaches the others only after one of them made its drop final.

For each seed of the ``--late-withdrawals`` mix, the game is played once as the seed plays
it, noting each member whose drop some peer's held votes decided on a later withdrawal (where
``finality.decided`` is later than ``drop_at``: the wait of session 19 was asked). Then,
for each such member, the game is played again under the scripted schedule
:class:`~p2p_nertz.sim.schedules.LateLift` (the member's withdrawals held back at every
receiver until a peer has made its drop final, at most 3 s), once with any peer first and
once with each other peer first. Prints each run that breaks an invariant (its first line),
and how many games were asked and broken. With ``--audit``, also compares the audit of every
log with the peers wherever the peers still in end alike (each finished, on one final
state): prints each such run whose audit reads other drops than the peers' final ones, or
another final state, and counts them. ``--every-member`` holds each member's withdrawals in
turn, not only those of the members the wait was asked of (a run that held nothing is not
counted: it is the seed's own game). ``--pairs`` holds the withdrawals of each two members at
once, any peer first. Slow (a few seconds a run, a stalled one up to
the simulator's time limit): it is not part of the suite. To compare with another tree, run
that tree's copy with its own environment (an editable install's finder wins over
``PYTHONPATH``).

    python scripts/scan_late_lift.py [--seeds 0-119] [--players 3-3] [--workers 1] [--audit]
        [--every-member | --pairs]
"""

from __future__ import annotations

import argparse
import itertools
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scanning import span

from p2p_nertz.protocol import finality
from p2p_nertz.protocol.state import GameState, Phase
from p2p_nertz.sim import Simulation, run
from p2p_nertz.sim.mixes import late_withdrawals
from p2p_nertz.sim.network import SimResult
from p2p_nertz.sim.schedules import LateLift


def _asked(seed: int, players: tuple[int, int]) -> tuple[int, list[int]]:
    """The table size of the seed's game, and the members whose drop some peer decided on a
    later withdrawal: where the date finality reads (``finality.decided``, which ``settle``'s
    trial and ``lifted`` call by its module name) is later than the drop's ``drop_at``. Not
    ``decided_at``: that date counts every later withdrawal, also those the drop does not
    rest on (``roster.decided_before_lifts``), which finality no longer waits for. Patched in
    this process only, for this one run."""
    members: set[int] = set()
    plain = finality.decided

    def noting(tentative: GameState, seat: int) -> int:
        at = plain(tentative, seat)
        if at > tentative.drop_at.get(seat, 0):
            members.add(seat)
        return at

    finality.decided = noting
    try:
        config = late_withdrawals(seed, players=players)
        Simulation(config).run()
    finally:
        finality.decided = plain
    return config.players, sorted(members)


def audit_parts(result: SimResult) -> str | None:
    """How the audit of every log parts from the peers, where the peers still in (honest,
    not dropped in their own final fold) end alike: each finished the game, on one final
    state. ``None``: they do not end alike (not a case of the comparison); ``""``: the
    audit reads their game."""
    cheaters = result.config.faults.cheaters
    still_in = [
        p
        for seat, p in enumerate(result.peers)
        if p is not None and seat not in cheaters and seat not in p.final.dropped
    ]
    if not still_in or any(p.final.phase is not Phase.OVER or p.provisional for p in still_in):
        return None
    if len({p.final.digest() for p in still_in}) != 1:
        return None
    report = result.audit
    if report is None or report.state is None:
        return "no audit"
    peers = still_in[0].final
    if report.state.dropped != peers.dropped:
        return f"the audit drops {report.state.dropped}, the peers {peers.dropped}"
    if report.digest != peers.digest():
        return "the audit reads the peers' drops and another final state"
    return ""


def scan_seed(
    seed: int,
    players: tuple[int, int],
    compare: bool = False,
    every: bool = False,
    pairs: bool = False,
) -> tuple[int, bool, list[str], tuple[int, int], tuple[int, int]]:
    """One seed: its table size, whether the wait was asked, a line per run broken (and,
    with ``compare``, per run whose audit parts from peers that end alike), of the runs
    whose peers end alike, how many and how many of their audits part, and how many runs
    were counted and in how many of them a peer made the drop final while a withdrawal was
    held. ``every``: hold each member's withdrawals in turn, not only those of the members
    the wait was asked of; ``pairs``: hold the withdrawals of each two members at once (any
    peer first)."""
    n, members = _asked(seed, players)
    config = late_withdrawals(seed, players=players)
    broken = []
    alike = parted = runs = final_first = 0
    held: list[tuple[int, tuple[int, ...]]] = (
        [(a, (b,)) for a, b in itertools.combinations(range(n), 2)]
        if pairs
        else [(member, ()) for member in (range(n) if every else members)]
    )
    for member, also in held:
        for first in [None] if pairs else [None, *(q for q in range(n) if q != member)]:
            schedule = LateLift(member, first=first, also=also)
            result = run(config, schedule)
            if (pairs or member not in members) and not schedule.held:
                break  # (nothing of the member's held: the seed's own game, whoever is first)
            if first is not None and schedule.final_by is None:
                continue  # (that peer never made the drop final first: the same as no wait)
            by = schedule.final_by[0] if schedule.final_by else None
            runs += 1
            final_first += by is not None
            name = (
                f"seed {seed} ({n} players) member {member}{''.join(f'+{q}' for q in also)} "
                f"first {first} "
                f"held {sorted(schedule.held)} final first at peer {by}"
            )
            if result.violations:
                broken.append(f"{name}: {result.violations[0]}")
            parts = audit_parts(result) if compare else None
            if parts is not None:
                alike += 1
                if parts:
                    parted += 1
                    broken.append(f"{name}: peers alike, {parts}")
    return n, bool(members), broken, (alike, parted), (runs, final_first)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-119", help="seeds, N or N-M (default 0-119)")
    parser.add_argument("--players", default="3-3", help="table sizes, N-M (default 3-3)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--audit",
        action="store_true",
        help="compare the audit of every log with the peers where the peers still in end alike",
    )
    parser.add_argument(
        "--every-member",
        action="store_true",
        help="hold each member's withdrawals in turn, not only those the wait was asked of",
    )
    parser.add_argument(
        "--pairs",
        action="store_true",
        help="hold the withdrawals of each two members at once (any peer first)",
    )
    args = parser.parse_args()
    sizes = span(args.players)
    if sizes.start < 3:
        # (late_withdrawals needs a member cut off from a majority with another: three.)
        parser.error(
            "--players: 3 or more; with two members nobody can be dropped (docs/protocol.md "
            "§9.3), so no drop rests on a withdrawal"
        )
    players = (sizes.start, sizes.stop - 1)
    seeds = list(span(args.seeds))
    asked = broken_games = alike = parted = parted_games = runs = final_first = 0
    compare = [args.audit] * len(seeds)
    every = [args.every_member] * len(seeds)
    pairs = [args.pairs] * len(seeds)
    with ProcessPoolExecutor(args.workers) as pool:
        for _, was_asked, broken, (same, audits), (counted, first) in pool.map(
            scan_seed, seeds, [players] * len(seeds), compare, every, pairs
        ):
            asked += was_asked
            broken_games += any(": peers alike, " not in line for line in broken)
            alike += same
            runs += counted
            final_first += first
            parted += audits
            parted_games += bool(audits)
            for line in broken:
                print(line, flush=True)
    print(
        f"{len(seeds)} games ({args.players} players): the wait asked in {asked}, "
        f"broken under the schedule {broken_games}; {runs} runs, in {final_first} of them a "
        f"peer made the drop final while a withdrawal was held"
    )
    if args.audit:
        print(
            f"runs whose peers still in end alike: {alike}; the audit of every log parts "
            f"from them in {parted} ({parted_games} games)"
        )


if __name__ == "__main__":
    main()
