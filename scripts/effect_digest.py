#!/usr/bin/env python3
"""Hash every effect of seeded, fault-injected simulated games: the check of a redesign.

A change that should not change behaviour (issue "One feed engine": the peer split by the
state it owns) must leave every effect every peer asks for exactly as it was: the same bytes
sent to the same members at the same simulated times, the same records, notes, refusals and
suspicions. This script plays ``--games`` soak games (``SimConfig.soak``: 2 to 8 players,
cheaters on, faults of every length) with every effect recorded, and prints one digest per
game and one for all of them. Run it on main and on the branch; the totals must be equal, and
``--out`` files diffed name the first game that differs.

    python scripts/effect_digest.py [--games 200] [--seed 0] [--players 2-8] [--out FILE]
                                    [--audit] [--deal commit|shuffle [--deck-cheats]]

``--audit`` hashes the audit's reports too, for a change of the audit that should not change
what it reports: the report of every log of the game (as the simulator's invariants read it,
deep) and of each log alone (a peer's own view), every field but the fold's state object
(findings with their words, rounds, totals, drops, and how many passes the logs took).

``--deal shuffle`` plays the same games with the dealerless shuffle (docs/shuffle.md), for a
change of the shuffle's path; ``--deck-cheats`` adds each game the member that cheats in the
deal that ``scripts/soak.py --deck-cheats`` adds to it.

The digest of an effect is its type's name and its fields' values (``dataclasses.fields``), so
a field added to an effect type changes it: that is a change of behaviour a front end sees.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import sys
from concurrent.futures import ProcessPoolExecutor

from soak import deck_cheat

from p2p_nertz import build
from p2p_nertz.audit import LogSource, audit
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.sim import SimConfig, audit_logs, run
from p2p_nertz.sim.logfiles import log_files


def _fields(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            tuple((f.name, _fields(getattr(value, f.name))) for f in dataclasses.fields(value)),
        )
    if isinstance(value, tuple | list):
        return tuple(_fields(item) for item in value)
    return value


def digest(
    seed: int,
    *,
    low: int,
    high: int,
    audits: bool = False,
    deal: str = "commit",
    deck: bool = False,
) -> tuple[int, str, int]:
    """Play soak game ``seed`` with ``low``..``high`` players; its digest and effect count
    (``audits``: the audit's reports hashed too; ``deal``, ``deck``: the module docstring)."""
    config = SimConfig.soak(seed, players=(low, high))
    config = dataclasses.replace(config, record_effects=True, deal=Deal(deal))
    if deck:
        faults = dataclasses.replace(config.faults, deck_cheats=(deck_cheat(seed, config.players),))
        config = dataclasses.replace(config, faults=faults)
    result = run(config)
    h = hashlib.sha256()
    for at, seat, effect in result.effects:
        h.update(repr((round(at, 9), seat, _fields(effect))).encode())
    for log in result.logs:
        for wire in log:
            h.update(wire)
    if audits:
        # (``state`` is left out of a report's repr: the digest stands for it.)
        h.update(repr((result.violations, audit_logs(result))).encode())
        for seat, data in enumerate(log_files(result)):
            alone = audit([LogSource.from_bytes(f"p{seat + 1}.log", data)])
            h.update(repr(alone).encode())
    return seed, h.hexdigest(), len(result.effects)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", default="2-8", help="LOW-HIGH players per game")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", help="write one line per game (seed digest effects) here")
    parser.add_argument("--audit", action="store_true", help="hash the audit's reports too")
    parser.add_argument("--deal", choices=[d.value for d in Deal], default=Deal.COMMIT.value)
    parser.add_argument("--deck-cheats", action="store_true", help="a deal cheat in each game")
    args = parser.parse_args(argv)
    if args.deck_cheats and args.deal != Deal.SHUFFLE.value:
        parser.error("--deck-cheats needs --deal shuffle")
    low, _, high = args.players.partition("-")
    seeds = range(args.seed, args.seed + args.games)
    total = hashlib.sha256()
    lines = []
    effects = 0
    with ProcessPoolExecutor(args.workers) as pool:
        play = functools.partial(
            digest,
            low=int(low),
            high=int(high or low),
            audits=args.audit,
            deal=args.deal,
            deck=args.deck_cheats,
        )
        for seed, game, count in pool.map(play, seeds):
            total.update(game.encode())
            lines.append(f"{seed} {game} {count}\n")
            effects += count
    if args.out:
        with open(args.out, "w") as out:
            out.writelines(lines)
    print(f"{args.games} games, {effects:,} effects, digest {total.hexdigest()}")
    print(f"(the core {build.describe()}: p2p_nertz/build.py)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
