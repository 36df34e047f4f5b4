#!/usr/bin/env python3
"""Can a newcomer win a first ``nertz play --bots 2``? A model, not a timed panel of people.

The person is a ``greedy`` bot in one seat (it never misses a card, so the figures flatter a
person) moving at a person's pace, against bots at ``--speed`` (default 1, ``nertz play``'s
default) in the match simulator's simulated time (``p2p_nertz.match.play_round``); every seed
is played with the person in each seat. Paces (docs/pace.md): a newcomer's 19 moves a minute
(a lake card seen 1.5 s late), the bots' own 24, a practised player's 35. Deterministic in
its arguments.

The simulator takes a seat's pace as a speed level 1-10 (24 moves a minute per level), and a
newcomer is slower than level 1: the script stands the person's pacing in for one level the
bots do not use, for the length of the run.

    python scripts/first_game_odds.py [--seeds 100] [--bots 2] [--speed 1]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2p_nertz import match
from p2p_nertz.bots import Pacing
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Rules

PACES = (("a newcomer", 19, 1500), ("the bots' own pace", 24, 750), ("a practised player", 35, 750))
"""(who, moves a minute, how late a lake card is seen in ms)."""


@dataclass(frozen=True)
class PersonPacing:
    """A person's pace where the simulator wants a :class:`Pacing`."""

    mean_delay_ms: int
    reaction_ms: int

    def delay_ms(self, rng: Rng) -> int:
        mean = self.mean_delay_ms
        return max(1, mean + rng.between(-mean // 4, mean // 4))


@contextlib.contextmanager
def person_at(level: int, pacing: PersonPacing) -> Iterator[None]:
    """Speed ``level`` plays at ``pacing`` in the simulator until the block ends."""

    def pacing_of(speed: int) -> Pacing | PersonPacing:
        return pacing if speed == level else Pacing(speed)

    saved = match.Pacing
    match.Pacing = pacing_of  # type: ignore[assignment]
    try:
        yield
    finally:
        match.Pacing = saved  # type: ignore[misc]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--bots", type=int, default=2)
    parser.add_argument("--speed", type=int, default=1, help="the bots' speed, 1-9")
    args = parser.parse_args()
    level = 10 if args.speed != 10 else 9  # (the level the person stands in for)
    seats = args.bots + 1
    rules = Rules(rounds=1, target=None)
    print(f"a person (greedy) against {args.bots} greedy bots at speed {args.speed}, "
          f"{args.seeds} seeds x {seats} seats, one round each")  # fmt: skip
    for who, per_minute, reaction in PACES:
        pacing = PersonPacing(60_000 // per_minute, reaction)
        wins = rounds = 0
        margin = 0.0
        with person_at(level, pacing):
            for seed in range(args.seeds):
                for seat in range(seats):
                    players = [match.Player("greedy", args.speed) for _ in range(seats)]
                    players[seat] = match.Player("greedy", level, "you")
                    result = match.play_round(rules, players, seed, 1)
                    points = {p.seat: p.total for p in result.score.players}
                    rounds += 1
                    wins += points[seat] == max(points.values())
                    others = [v for s, v in points.items() if s != seat]
                    margin += points[seat] - sum(others) / len(others)
        print(f"  {who}, {per_minute} moves/min: won {wins}/{rounds} rounds "
              f"({wins / rounds:.0%}; a fair share {1 / seats:.0%}), "
              f"{margin / rounds:+.1f} points a round against a bot")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
