#!/usr/bin/env python3
"""The size of the cheat issue 19 closes: what the lookahead bot gains by seeing its own cards.

Today each player's deck order is computed by the player's own machine, so a modified client
could show its player every face-down card of their Nerts pile and stock. This script measures
what that is worth to the project's strongest bot, over paired deals.

The *peeker* is the lookahead bot given the full table instead of the face-up view every
strategy gets (:meth:`~p2p_nertz.rules.Table.face_up`): it knows every card of its stock and
waste where it lies (its memory is the whole cycle, not the cards it saw), and when it weighs a
move off its Nerts pile it knows the card that move turns up. It is built here, not in the
library, as a modified client would be. It only *uses* what the lookahead already weighs (the
card under the waste top, the next pass's cards while stuck, the next Nerts card), so the gain
is a lower bound on what peeking is worth to a bot designed around it.

For each seed and round a game is played with honest lookahead bots in every seat, and once
more for each seat with the peeker in that seat and the same honest bots elsewhere. Round
``k`` of a seed deals the same decks every time, and the match's timing does not depend on the
strategies (``scripts/bot_strength.py``), so the peeker and the honest bot play the same cards
against the same opponents at the same speed. The figure per deal is the peeker's round score
minus the honest bot's in the same seat, averaged over the seats; deals are independent, so
the script prints the mean gain per round with its 95 % confidence intervals (normal and
bootstrap, with the machinery of ``bot_strength.py``) and the number of rounds.

Everything printed is deterministic in the arguments.

``--sees stock`` or ``--sees nerts`` gives the peeker only one of the two (which part of the
cheat the figure comes from).

    python scripts/peek_gain.py [--seeds 60] [--rounds 5] [--players 2 4] [--speed 5]
                                [--sees both|stock|nerts]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot_strength import bootstrap_ci, mean_ci, parse_rules

from p2p_nertz.bots import STRATEGIES, make_strategy
from p2p_nertz.bots.lookahead import Lookahead, _Cycle, _Pos
from p2p_nertz.errors import InvalidRulesError
from p2p_nertz.match import Player, play_match
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Move, Rules, Table, Tableau

HONEST = "lookahead"
PEEKER = "peek:lookahead"


class _Everything(_Cycle):
    """The peeker's memory: every card of its stock and waste, read off the full tableau."""

    def look(self, t: Tableau, rotations: int) -> None:
        self.cards = [*t.waste, *t.stock[::-1]]
        self.waste, self.rotations = len(t.waste), rotations


#: What the peeker may read (``--sees``): its stock and waste, its next Nerts card, or both.
SEES = ("both", "stock", "nerts")


class Peeking(Lookahead):
    """The lookahead bot on a modified client: it reads its own face-down cards (which of
    them: :attr:`sees`, one of :data:`SEES`)."""

    sees = "both"

    def __init__(self, rng: Rng | None = None) -> None:
        super().__init__(rng)
        self._cycle = self._memory()
        self._full: Table | None = None
        self._nerts: Tableau | None = None

    def _memory(self) -> _Cycle:
        return _Everything() if self.sees != "nerts" else _Cycle()

    def new_round(self) -> None:
        super().new_round()
        self._cycle = self._memory()

    def decide(self, table: Table, seat: int) -> Move | None:
        self._full = table  # the table the client holds, before decide covers it
        return super().decide(table, seat)

    def choose(self, table: Table, seat: int) -> Move | None:
        full = self._full if self._full is not None else table
        self._nerts = full.tableaux[seat]
        return super().choose(full, seat)

    def _evaluate(self, pos: _Pos) -> float:
        t = self._nerts
        if (
            self.sees != "stock"
            and t is not None
            and pos.top is None
            and pos.nn
            and pos.nn == len(t.nerts) - 1
        ):
            pos.top = t.nerts[-2]  # the card a move off the Nerts pile turns up: known
        return super()._evaluate(pos)


STRATEGIES[PEEKER] = Peeking


@dataclass
class Tally:
    """The paired rounds of one table size."""

    gains: list[float] = field(default_factory=list)  # per deal: mean over seats of the gain
    peek_scores: list[int] = field(default_factory=list)
    honest_scores: list[int] = field(default_factory=list)
    games: int = 0


def round_scores(
    rules: Rules, players: Sequence[Player], seed: int, rounds: int
) -> list[list[int]]:
    """Each of the first ``rounds`` rounds' score per seat, for one game."""
    result = play_match(rules, players, seed)
    out = []
    for rnd in result.rounds[:rounds]:  # extra tiebreak rounds are not paired
        by_seat = {p.seat: p.total for p in rnd.score.players}
        out.append([by_seat.get(s, 0) for s in range(len(players))])
    return out


def play(rules: Rules, players: int, seeds: range, rounds: int, speed: int) -> Tally:
    """Play every seed honestly, then with the peeker in each seat, and tally the gains."""
    tally = Tally()
    honest = [Player(HONEST, speed)] * players
    for seed in seeds:
        base = round_scores(rules, honest, seed, rounds)
        gains = [0.0] * len(base)
        for seat in range(players):
            seating = [Player(PEEKER if s == seat else HONEST, speed) for s in range(players)]
            peeked = round_scores(rules, seating, seed, rounds)
            for k in range(min(len(base), len(peeked))):
                gains[k] += (peeked[k][seat] - base[k][seat]) / players
                tally.peek_scores.append(peeked[k][seat])
                tally.honest_scores.append(base[k][seat])
            tally.games += 1
        tally.games += 1
        tally.gains += gains
    return tally


def report(players: int, tally: Tally, bootstrap: int, seed: int) -> None:
    """Print one table size's figures."""
    n = len(tally.gains)
    mean, sd, se, half = mean_ci(tally.gains)
    lo, hi = bootstrap_ci(tally.gains, bootstrap, seed)
    print(
        f"{players} players: peeking gains {mean:+.3f} points a round over {n} rounds "
        f"({tally.games} games)"
    )
    print(
        f"  95% CI, normal:    [{mean - half:+.3f}, {mean + half:+.3f}]  (sd {sd:.3f}, se {se:.3f})"
    )
    print(f"  95% CI, bootstrap: [{lo:+.3f}, {hi:+.3f}]  ({bootstrap} resamples)")
    print(
        f"  mean round score in the same seat: peeking {statistics.fmean(tally.peek_scores):.2f}, "
        f"honest {statistics.fmean(tally.honest_scores):.2f}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=60, help="games per table size (default 60)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per game (default 5)")
    parser.add_argument(
        "--players", type=int, nargs="+", default=[2, 4], help="table sizes (default 2 4)"
    )
    parser.add_argument("--speed", type=int, default=5, help="every bot's speed, 1-10 (default 5)")
    parser.add_argument("--first-seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples")
    parser.add_argument("--rule", action="append", default=[], help="a rules variant, e.g. draw=1")
    parser.add_argument(
        "--sees",
        choices=SEES,
        default="both",
        help="what the peeker reads: its stock and waste, its next Nerts card, or both",
    )
    args = parser.parse_args(argv)
    Peeking.sees = args.sees
    try:
        rules = parse_rules(args.rule, args.rounds)
        for players in args.players:
            if not 2 <= players <= 8:
                raise ValueError(f"--players must be 2 to 8, not {players}")
            rules.validate_players(players)
        Player(speed=args.speed)
        make_strategy(PEEKER, Rng(0))
        if args.seeds < 1 or args.rounds < 1 or args.bootstrap < 1:
            raise ValueError("--seeds, --rounds and --bootstrap must be positive")
    except (ValueError, InvalidRulesError) as exc:
        parser.error(str(exc))
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    print(
        f"the lookahead bot seeing its own face-down cards ({args.sees}) against honest "
        f"lookahead bots: {args.seeds} seeds x {args.rounds} rounds, speed {args.speed}"
    )
    for players in args.players:
        tally = play(rules, players, seeds, args.rounds, args.speed)
        report(players, tally, args.bootstrap, args.first_seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
