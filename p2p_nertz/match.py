"""The in-process match: bots play whole games on one lake, no network, fully deterministic.

Theory of operation
-------------------
Time is simulated in milliseconds. Each seat's bot acts at times drawn from its
:class:`~p2p_nertz.bots.Pacing`; actions are taken in time order, equal times in seat order, and
each move's Lamport time is the millisecond it was made: this is the order the rules engine
folds them in (DESIGN.md §3). A bot sees its own tableau as it is but the lake as it was
``reaction_ms`` earlier, so two bots can go for the same foundation and one loses the race (its
card stays where it was), and two moves in the same millisecond on one height are a true tie.

Everything comes from the seed: each deck is ``shuffled_deck(derive_seed(seed, "deck", round,
seat))`` and every delay from a seeded :class:`~p2p_nertz.rng.Rng`. The same seed and players give
the same game, move for move.

>>> result = play_match(Rules(target=30), [Player(), Player()], seed=1)
>>> result.game.over, len(result.rounds) > 0
(True, True)
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from p2p_nertz.bots import Pacing, make_strategy
from p2p_nertz.errors import IllegalMoveError
from p2p_nertz.rng import Rng, derive_seed
from p2p_nertz.rules import (
    Game,
    Lake,
    Outcome,
    RoundScore,
    RoundStatus,
    Rules,
    Table,
    shuffled_deck,
)

__all__ = ["MatchResult", "Player", "RoundResult", "play_match", "play_round", "round_decks"]

#: A round that takes more actions than this is a bug in a strategy, not a long round.
MAX_ACTIONS_PER_ROUND = 200_000
#: A game that takes more rounds than this never ends (every round blocked and negative).
MAX_ROUNDS = 500


@dataclass(frozen=True, slots=True)
class Player:
    """A seat in the match: a strategy by name, a speed level 1–10 and a display name."""

    strategy: str = "greedy"
    speed: int = 5
    name: str = ""

    def __post_init__(self) -> None:
        Pacing(self.speed)  # validates the speed


@dataclass(frozen=True, slots=True)
class RoundResult:
    """One round of a match.

    Attributes:
        number: the round number, from 1.
        score: the round's scores.
        table: the final table.
        actions: moves played (including stock turns and passes).
        lost_races: lake claims that lost a race.
        ties: lake claims kept as a true tie.
        fumbles: moves a bot chose from a stale view that were illegal when played.
        duration_ms: simulated length of the round.
        transcript: one line per move (``lamport seat move outcome``), if recorded.
    """

    number: int
    score: RoundScore
    table: Table
    actions: int
    lost_races: int
    ties: int
    fumbles: int
    duration_ms: int
    transcript: tuple[str, ...] = ()

    def digest(self) -> str:
        """SHA-256 of the transcript and the final lake (for determinism checks)."""
        h = hashlib.sha256()
        for line in self.transcript:
            h.update(line.encode() + b"\n")
        h.update(self.table.lake.digest())
        return h.hexdigest()


@dataclass(frozen=True, slots=True)
class MatchResult:
    """A whole match: the game (totals, winner) and every round."""

    game: Game
    rounds: tuple[RoundResult, ...] = field(default=())


def round_decks(rules: Rules, seed: int | bytes, number: int, seats: int) -> list[tuple]:  # type: ignore[type-arg]
    """Each seat's shuffled deck for round ``number`` of the match with this seed."""
    return [
        shuffled_deck(derive_seed(b"match-deck", seed, number, seat), rules.jokers)
        for seat in range(seats)
    ]


def play_round(
    rules: Rules,
    players: Sequence[Player],
    seed: int | bytes,
    number: int = 1,
    *,
    active: Sequence[bool] | None = None,
    record: bool = False,
) -> RoundResult:
    """Play one round with bots and return its result (deterministic in ``seed``)."""
    n = len(players)
    table = Table.deal(rules, round_decks(rules, seed, number, n), active=active, number=number)
    rng = Rng(derive_seed(b"match-round", seed, number))
    strategies = [make_strategy(p.strategy, rng.fork(seat)) for seat, p in enumerate(players)]
    pacings = [Pacing(p.speed) for p in players]
    for s in strategies:
        s.new_round()
    queue = [(pacings[s].delay_ms(rng), s) for s in range(n) if table.active[s]]
    heapq.heapify(queue)
    lake_times: list[int] = [0]
    lakes: list[Lake] = [table.lake]
    fresh_after = [0] * n  # a bot that lost a race looks at the lake again
    actions = lost = ties = fumbles = 0
    transcript: list[str] = []
    now = 0
    while queue:
        now, seat = queue[0]
        if table.over and not (
            table.status is RoundStatus.NERTS and table.cut is not None and now <= table.cut
        ):
            break
        heapq.heappop(queue)
        seen = max(now - pacings[seat].reaction_ms, fresh_after[seat])
        lake = lakes[bisect.bisect_right(lake_times, seen) - 1]
        view = table if lake is table.lake else table.with_lake(lake)
        move = strategies[seat].decide(view, seat)
        if move is not None:
            actions += 1
            if actions > MAX_ACTIONS_PER_ROUND:
                raise RuntimeError(f"round {number} did not end after {actions} actions")
            try:
                table, play = table.play(seat, move, lamport=now)
            except IllegalMoveError:
                fumbles += 1
            else:
                res = play.resolution
                if res is not None:
                    if res.outcome is Outcome.LOST:
                        lost += 1
                        fresh_after[seat] = now
                    elif res.outcome is Outcome.TIED:
                        ties += 1
                    if res.kept:
                        lake_times.append(now)
                        lakes.append(table.lake)
                if record:
                    outcome = res.outcome.value if res is not None else ""
                    extra = " false-call" if play.false_call else ""
                    extra += " rotated" if play.rotated else ""
                    extra += f" {play.ended.value}" if play.ended else ""
                    transcript.append(f"{now} {seat} {move} {outcome}{extra}".rstrip())
        heapq.heappush(queue, (now + pacings[seat].delay_ms(rng), seat))
    return RoundResult(
        number,
        table.score(),
        table,
        actions,
        lost,
        ties,
        fumbles,
        now,
        tuple(transcript),
    )


def play_match(
    rules: Rules,
    players: Sequence[Player],
    seed: int | bytes,
    *,
    record: bool = False,
    on_round: Callable[[RoundResult, Game], None] | None = None,
) -> MatchResult:
    """Play a whole game with bots to the target (or the fixed rounds) and return it.

    ``on_round`` is called after every round with its result and the game so far (the CLI
    prints the scoreboard from it).

    Raises:
        InvalidRulesError: if the number of players does not suit the rules.
    """
    rules.validate_players(len(players))
    game = Game(rules, len(players))
    rounds: list[RoundResult] = []
    while not game.over:
        if len(rounds) >= MAX_ROUNDS:
            raise RuntimeError(f"the game did not end after {MAX_ROUNDS} rounds")
        seats = set(game.seats_next_round())
        active = [s in seats for s in range(len(players))]
        result = play_round(rules, players, seed, len(rounds) + 1, active=active, record=record)
        game = game.record(result.score)
        rounds.append(result)
        if on_round is not None:
            on_round(result, game)
    return MatchResult(game, tuple(rounds))
