#!/usr/bin/env python3
"""Measure how much stronger one bot strategy is than another, over paired deals.

Every seed is a short Racing Demon game (``--rounds`` rounds) played once per seating: with two
players A sits in seat 0 then seat 1; with more, A and B alternate round the table and then swap
(every seating that gives each seat to A and to B equally often). Round ``k`` of a seed deals the
same decks in every seating, and the match's move timing does not depend on the strategies, so
each deal is played by both strategies from the same cards at the same speed: luck of the deal
cancels out and what is left is the difference in play.

For each deal the figure is the mean round score of the A seats minus that of the B seats,
averaged over the seatings. Deals are independent (every round is dealt afresh and bots do not
look at the scoreboard), so the script reports the mean, its standard error and a 95 %
confidence interval (normal approximation, and a percentile bootstrap with a seeded Rng), the
share of games won by an A seat, and how long each strategy takes to decide a move.

Everything but the timing lines is deterministic in the arguments.

    python scripts/bot_strength.py [--seeds 200] [--rounds 5] [--players 2] [--speed 5]
        [--a lookahead] [--b greedy] [--rule draw=1 ...]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from p2p_nertz.bots import STRATEGIES, Strategy, make_strategy
from p2p_nertz.errors import InvalidRulesError
from p2p_nertz.match import Player, play_match
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Move, RoundStatus, Rules, Table

Z95 = 1.959964  # two-sided 95 % quantile of the normal distribution


@dataclass
class Clock:
    """Time spent deciding moves, per strategy name."""

    decisions: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, name: str, seconds: float) -> None:
        """Count one decision of ``name`` that took ``seconds``."""
        self.decisions[name] = self.decisions.get(name, 0) + 1
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds


class Timed(Strategy):
    """A strategy that times its inner strategy's decisions (and otherwise is it)."""

    def __init__(self, inner: Strategy, clock: Clock) -> None:
        super().__init__(inner.rng)
        self.inner = inner
        self.clock = clock
        self.name = inner.name

    def choose(self, table: Table, seat: int) -> Move | None:
        start = time.perf_counter()
        move = self.inner.choose(table, seat)
        self.clock.add(self.name, time.perf_counter() - start)
        return move

    def new_round(self) -> None:
        self.inner.new_round()


def timed(name: str, clock: Clock) -> str:
    """Register a timed copy of strategy ``name`` and return its registry name."""
    key = f"timed:{name}"

    def factory(rng: Rng) -> Strategy:
        return Timed(make_strategy(name, rng), clock)

    STRATEGIES[key] = factory
    return key


def seatings(players: int, pairs: bool = False) -> list[tuple[bool, ...]]:
    """Every seating used for one seed: ``True`` marks an A seat.

    A and B alternate round the table (team by team in pairs, so partners play alike), in
    every rotation and with A and B swapped, so each seat holds A and B equally often: two
    seatings for an even table, ``2 * players`` for an odd one.

    >>> seatings(2)
    [(True, False), (False, True)]
    >>> len(seatings(3)), len(seatings(4))
    (6, 2)
    >>> seatings(4, pairs=True)
    [(True, True, False, False), (False, False, True, True)]
    """
    unit = 2 if pairs else 1
    base = tuple((i // unit) % 2 == 0 for i in range(players))
    out: list[tuple[bool, ...]] = []
    for pattern in (base, tuple(not a for a in base)):
        for shift in range(0, players, unit):
            seating = pattern[shift:] + pattern[:shift]
            if seating not in out:
                out.append(seating)
    return out


def mean_ci(values: Sequence[float]) -> tuple[float, float, float, float]:
    """Mean, standard deviation, standard error and the 95 % normal half-width."""
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    se = sd / math.sqrt(len(values))
    return mean, sd, se, Z95 * se


def bootstrap_ci(values: Sequence[float], resamples: int, seed: int) -> tuple[float, float]:
    """A 95 % percentile-bootstrap interval for the mean, from a seeded Rng."""
    rng = Rng(seed)
    n = len(values)
    means = sorted(math.fsum(values[rng.below(n)] for _ in range(n)) / n for _ in range(resamples))
    lo = means[int(0.025 * (resamples - 1))]
    hi = means[math.ceil(0.975 * (resamples - 1))]
    return lo, hi


@dataclass
class Tally:
    """What the paired games add up to."""

    diffs: list[float] = field(default_factory=list)  # per deal: mean A - mean B
    a_scores: list[float] = field(default_factory=list)
    b_scores: list[float] = field(default_factory=list)
    a_calls: int = 0
    b_calls: int = 0
    blocked: int = 0
    rounds: int = 0
    games: int = 0
    a_wins: float = 0.0  # a shared win counts by the A share of the winners


def play(args: argparse.Namespace, rules: Rules, clock: Clock) -> Tally:
    """Play every seed in every seating and tally the paired differences."""
    names = {True: timed(args.a, clock), False: timed(args.b, clock)}
    tally = Tally()
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        per_deal = [0.0] * args.rounds
        for seating in seatings(args.players, rules.pairs):
            players = [Player(names[a], args.speed) for a in seating]
            result = play_match(rules, players, seed)
            for rnd in result.rounds[: args.rounds]:  # extra tiebreak rounds are not paired
                totals = rnd.score.team_totals if rules.pairs else None
                a_pts: list[float] = []
                b_pts: list[float] = []
                for p in rnd.score.players:
                    points = totals[rules.team_of(p.seat)] if totals else p.total
                    (a_pts if seating[p.seat] else b_pts).append(points)
                    if p.seat in rnd.score.callers[:1]:
                        if seating[p.seat]:
                            tally.a_calls += 1
                        else:
                            tally.b_calls += 1
                per_deal[rnd.number - 1] += statistics.fmean(a_pts) - statistics.fmean(b_pts)
                tally.a_scores += a_pts
                tally.b_scores += b_pts
                tally.blocked += rnd.score.status is RoundStatus.BLOCKED
                tally.rounds += 1
            game = result.game.result
            assert game is not None
            a_teams = {rules.team_of(s) for s in range(args.players) if seating[s]}
            tally.a_wins += sum(w in a_teams for w in game.winners) / len(game.winners)
            tally.games += 1
        tally.diffs += [d / len(seatings(args.players, rules.pairs)) for d in per_deal]
    return tally


def report(
    args: argparse.Namespace, rules: Rules, tally: Tally, clock: Clock, elapsed: float
) -> None:
    """Print the figures."""
    a, b = args.a, args.b
    n = len(tally.diffs)
    mean, sd, se, half = mean_ci(tally.diffs)
    lo, hi = bootstrap_ci(tally.diffs, args.bootstrap, args.first_seed)
    ahead = sum(d > 0 for d in tally.diffs)
    behind = sum(d < 0 for d in tally.diffs)
    print(
        f"{a} (A) vs {b} (B): {args.players} players, speed {args.speed}, "
        f"{args.seeds} seeds x {args.rounds} rounds = {n} paired deals, "
        f"{len(seatings(args.players, rules.pairs))} seatings each"
    )
    print(f"per-deal round score difference A - B: mean {mean:+.3f}  sd {sd:.3f}  se {se:.3f}")
    z = f"z = {mean / se:.1f}" if se else "no spread"
    print(f"  95% CI, normal:    [{mean - half:+.3f}, {mean + half:+.3f}]  ({z})")
    print(f"  95% CI, bootstrap: [{lo:+.3f}, {hi:+.3f}]  ({args.bootstrap} resamples)")
    print(
        f"  deals A ahead: {ahead} ({ahead / n:.1%}), behind: {behind}, level: {n - ahead - behind}"
    )
    print(
        f"rounds: {tally.rounds}; mean score A {statistics.fmean(tally.a_scores):.2f}, "
        f"B {statistics.fmean(tally.b_scores):.2f}; Nerts called first by A "
        f"{tally.a_calls / tally.rounds:.1%}, by B {tally.b_calls / tally.rounds:.1%}; "
        f"blocked {tally.blocked / tally.rounds:.1%}"
    )
    every = seatings(args.players, rules.pairs)
    share = sum(map(sum, every)) / (len(every) * args.players)  # A's share of the seats
    rate = tally.a_wins / tally.games
    half_rate = Z95 * math.sqrt(rate * (1 - rate) / tally.games)
    print(
        f"games ({args.rounds} rounds each): A won {tally.a_wins:g} of {tally.games} "
        f"({rate:.1%}, 95% CI {rate - half_rate:.1%} to {rate + half_rate:.1%}; "
        f"even strength would win {share:.0%})"
    )
    print("timing (wall clock, not deterministic):")
    for name in (a, b):
        count, seconds = clock.decisions.get(name, 0), clock.seconds.get(name, 0.0)
        if count:
            print(
                f"  {name:>10}: {count} decisions, {1e6 * seconds / count:.1f} us/decision, "
                f"{count / seconds:,.0f} decisions/s"
            )
    ta = clock.seconds.get(a, 0.0) / max(1, clock.decisions.get(a, 0))
    tb = clock.seconds.get(b, 0.0) / max(1, clock.decisions.get(b, 0))
    if tb:
        print(f"  {a} takes {ta / tb:.1f}x the time of {b} per decision; total {elapsed:.1f} s")


def parse_rules(items: Sequence[str], rounds: int) -> Rules:
    """Rules from ``key=value`` items (``Rules`` field names), as a Racing Demon game."""
    data: dict[str, object] = {"rounds": rounds, "target": None}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--rule wants key=value, not {item!r}")
        lowered = value.strip().lower()
        data[key.strip().replace("-", "_")] = (
            lowered == "true" if lowered in ("true", "false") else int(value)
        )
    return Rules.from_dict(data)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200, help="games per seating (default 200)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per game (default 5)")
    parser.add_argument("--players", type=int, default=2, help="players, 2-8 (default 2)")
    parser.add_argument("--speed", type=int, default=5, help="every bot's speed, 1-10 (default 5)")
    parser.add_argument("--a", default="lookahead", help="strategy A (default lookahead)")
    parser.add_argument("--b", default="greedy", help="strategy B (default greedy)")
    parser.add_argument("--first-seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples")
    parser.add_argument(
        "--rule", action="append", default=[], help="a rules variant, e.g. draw=1 or pairs=true"
    )
    args = parser.parse_args(argv)
    try:
        rules = parse_rules(args.rule, args.rounds)
        if not 2 <= args.players <= 8:
            raise ValueError(f"--players must be 2 to 8, not {args.players}")
        rules.validate_players(args.players)
        Player(speed=args.speed)
        for name in (args.a, args.b):
            make_strategy(name, Rng(0))
        if args.seeds < 1 or args.rounds < 1 or args.bootstrap < 1:
            raise ValueError("--seeds, --rounds and --bootstrap must be positive")
    except (ValueError, InvalidRulesError) as exc:
        parser.error(str(exc))
    clock = Clock()
    start = time.perf_counter()
    tally = play(args, rules, clock)
    report(args, rules, tally, clock, time.perf_counter() - start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
