"""A whole game: rounds to the target (or a fixed number of rounds), the winner, the tiebreak.

RULES.md: the game. Rounds are played until one or more teams reach the target; the highest
total wins. If the best totals are equal, the better score in the last round wins; if that is
equal too, the tied teams play an extra round between them, and so on. Racing Demon plays a
fixed number of rounds with the same tiebreak. A tied team none of whose players played an
extra round (voted out before it, or forfeiting it) loses it to every tied team that played
it (rules.md: the game, a house rule); so once only one tied team can still play the extra
round out, it has won the tie there, the round not played on (:meth:`Game.unopposed`). A
player who leaves the game forfeits it: its team is never among the winners (rules.md: leaving
the game).

>>> game = Game(Rules(target=10), players=2)
>>> game.seats_next_round()
(0, 1)
>>> game = game.record((12, 7))
>>> game.result
GameResult(winners=(0,), totals=(12, 7), termination=<Termination.TARGET: 'target'>)
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from p2p_nertz.rules.config import Rules
from p2p_nertz.rules.table import RoundScore

__all__ = ["Game", "GameResult", "Termination"]

#: Extra tiebreak rounds before a tie is declared shared (keeps every game finite).
MAX_EXTRA_ROUNDS = 5


class Termination(enum.Enum):
    """How a game was decided."""

    TARGET = "target"  #: the highest total once someone reached the target
    ROUNDS = "rounds"  #: the highest total after the fixed rounds (Racing Demon)
    LAST_ROUND = "last round"  #: tied totals, decided by the last round's score
    EXTRA_ROUND = "extra round"  #: tied totals and last round, decided by extra round(s)
    #: tied totals and last round; the only tied team that played an extra round (or that
    #: could still play it out: :meth:`Game.unopposed`) won it
    ABSENCE = "absence"
    SHARED = "shared"  #: still tied after the extra rounds allowed: the win is shared
    ABANDONED = "abandoned"  #: ended early by the last member left (the highest total wins)


@dataclass(frozen=True, slots=True)
class GameResult:
    """The end of a game: the winning team(s), the final totals, and how it was decided."""

    winners: tuple[int, ...]
    totals: tuple[int, ...]
    termination: Termination

    @property
    def winning_total(self) -> int:
        """The winners' total (one, shared by every winner). Not always the highest total: a
        team that left the game, or that missed an extra round it was tied for, may stand
        higher (rules.md: the game).

        >>> GameResult((1,), (30, 12), Termination.ABSENCE).winning_total
        12
        """
        return max(self.totals[w] for w in self.winners)


@dataclass(frozen=True, slots=True)
class Game:
    """The running totals of a game, one immutable value per round recorded.

    Attributes:
        rules: the rules.
        players: the number of seats.
        history: each round's team scores (a team sitting out an extra round scores 0).
        playing: for each round, the teams that played it: due to play it (every team, or
            the tied teams of an extra round) and with a player dealt in that did not forfeit
            it (:meth:`record`).
        result: the result once the game is over, else ``None``.
        out: the teams out of contention, in order: a player of theirs left the game
            (:meth:`leave`), so they are never among the winners.
    """

    rules: Rules
    players: int
    history: tuple[tuple[int, ...], ...] = ()
    playing: tuple[tuple[int, ...], ...] = ()
    result: GameResult | None = None
    out: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        self.rules.validate_players(self.players)

    @property
    def teams(self) -> int:
        """Number of teams (scoring units)."""
        return self.players // 2 if self.rules.pairs else self.players

    @property
    def totals(self) -> tuple[int, ...]:
        """Each team's running total."""
        totals = [0] * self.teams
        for scores in self.history:
            for team, points in enumerate(scores):
                totals[team] += points
        return tuple(totals)

    @property
    def over(self) -> bool:
        """Whether the game has a result."""
        return self.result is not None

    @property
    def contenders(self) -> tuple[int, ...]:
        """The teams that may still win: every team none of whose players left."""
        return tuple(t for t in range(self.teams) if t not in self.out)

    def leave(self, team: int) -> Game:
        """The game after a player of ``team`` left it: the team forfeits the game (rules.md:
        leaving the game), never among the winners, its total standing as it is; the others
        play on. A game already over is not changed (a leave after the end changes nothing).

        If an extra round was due between tied teams and the leave leaves one of them in
        contention, that one has won (the game has its result).

        >>> game = Game(Rules(target=None, rounds=1), players=3).record((5, 5, 1))
        >>> game.result is None, game.teams_next_round()
        (True, (0, 1))
        >>> game.leave(0).result
        GameResult(winners=(1,), totals=(5, 5, 1), termination=<Termination.ROUNDS: 'rounds'>)
        """
        if self.over or team in self.out:
            return self
        left = replace(self, out=tuple(sorted((*self.out, team))))
        return replace(left, result=left._decide())

    def ended_early(self, counted: int | None = None) -> Game:
        """The game ended before its end on its first ``counted`` rounds recorded (by default
        all of them), the round in progress void: nobody scores it and nobody forfeits it
        (an abandon, or a leave that leaves nobody to play against; docs/protocol.md §9.3).
        The highest total wins [000], among the teams in contention (a player who left
        forfeits the game), a tie shared since no extra round can be played.

        >>> game = Game(Rules(target=100), players=2).record((30, 12))
        >>> game.ended_early().result.winners, game.leave(0).ended_early().result.winners
        ((0,), (1,))
        """
        if counted is None:
            counted = len(self.history)
        history = self.history[:counted]
        totals = replace(self, history=history).totals
        teams = self.contenders or tuple(range(self.teams))
        best = max(totals[t] for t in teams)
        winners = tuple(t for t in teams if totals[t] == best)
        result = GameResult(winners, totals, Termination.ABANDONED)
        return replace(self, history=history, playing=self.playing[:counted], result=result)

    @property
    def tied(self) -> tuple[int, ...]:
        """The tied teams the next extra round is due between (empty if none is due)."""
        return () if self.over else self._tied_after_regulation()

    def teams_next_round(self) -> tuple[int, ...]:
        """The teams that play the next round: all, or the tied teams of an extra round."""
        if self.over:
            return ()
        tied = self._tied_after_regulation()
        return tied if tied else tuple(range(self.teams))

    def share_tie(self) -> Game:
        """The game ended on its tie: the teams that would play an extra round share the win.

        For when no player of those teams can play it (each has left the game): the tie is
        kept rather than waiting for a round nobody can play.

        Raises:
            ValueError: if no extra round is due.
        """
        tied = self._tied_after_regulation()
        if not tied or self.over:
            raise ValueError("no extra round is due")
        return replace(self, result=GameResult(tied, self.totals, Termination.SHARED))

    def unopposed(self, seats: Iterable[int]) -> Game:
        """The game once only the players ``seats`` can still play out the extra round due (or
        being played): if the tied teams among theirs are one, that team has won the tie
        there (termination ``absence``) and the round is void, not recorded; otherwise the
        game as it is (rules.md: the game, a house rule, session 42).

        Why at once: a tied team none of whose players plays the round out loses the tie to
        every tied team that does (:meth:`record`), so once one tied team is left able to, the
        tie is decided; a person would wait out a whole round (about 40 s) for a known result.
        The caller (the fold) passes the seats dealt in or to be dealt in that are neither
        voted out nor forfeiting the round, whenever that set shrinks; a team of those seats
        that is not tied (it sits the round out) changes nothing. None left: the game as it
        is (a round nobody can play: :meth:`share_tie`; dealt in, all forfeiting: the scores
        decide, :meth:`record`).

        >>> tied = Game(Rules(target=None, rounds=1), players=3).record((5, 5, 1))
        >>> tied.unopposed((0, 1, 2)).result is None
        True
        >>> tied.unopposed((1, 2)).result
        GameResult(winners=(1,), totals=(5, 5, 1), termination=<Termination.ABSENCE: 'absence'>)
        """
        tied = self.tied
        if not tied:
            return self
        team_of = self.rules.team_of
        able = {team_of(s) for s in seats} & set(tied)
        if len(able) != 1:
            return self
        return replace(self, result=GameResult(tuple(able), self.totals, Termination.ABSENCE))

    def seats_next_round(self) -> tuple[int, ...]:
        """The seats that play the next round."""
        teams = set(self.teams_next_round())
        return tuple(s for s in range(self.players) if self.rules.team_of(s) in teams)

    def record(self, scores: RoundScore | Sequence[int], *, forfeit: Iterable[int] = ()) -> Game:
        """The game after one more round, given its team scores.

        A team played the round if it was due to (:meth:`teams_next_round`) and one of its
        players did: dealt in (a :class:`RoundScore`'s ``played``; plain scores: every seat)
        and not among the seats that ``forfeit`` it (gone after the deal, or caught). Only an
        extra round asks who played it (rules.md: the game).

        >>> game = Game(Rules(target=None, rounds=1), players=2).record((3, 3))
        >>> game.record((-4, 0), forfeit=(1,)).result.winners
        (0,)

        Raises:
            ValueError: if the game is already over or the scores do not fit the teams.
        """
        if self.over:
            raise ValueError("the game is over: no more rounds")
        team_scores = scores.team_totals if isinstance(scores, RoundScore) else tuple(scores)
        if len(team_scores) != self.teams:
            raise ValueError(f"{len(team_scores)} scores for {self.teams} teams")
        due = self.teams_next_round()
        team_scores = tuple(p if t in due else 0 for t, p in enumerate(team_scores))
        if isinstance(scores, RoundScore):
            dealt = {p.seat for p in scores.players if p.played}
        else:
            dealt = set(range(self.players))
        team_of = self.rules.team_of
        played = {team_of(s) for s in dealt - set(forfeit)}
        playing = tuple(t for t in due if t in played)
        game = replace(self, history=(*self.history, team_scores), playing=(*self.playing, playing))
        return replace(game, result=game._decide())

    # -- deciding ---------------------------------------------------------------------
    def _regulation_over(self) -> bool:
        rules = self.rules
        if rules.rounds is not None:
            return len(self.history) >= rules.rounds
        assert rules.target is not None
        totals = [0] * self.teams
        for scores in self.history:
            for team, points in enumerate(scores):
                totals[team] += points
            if max(totals) >= rules.target:
                return True
        return False

    def _regulation_rounds(self) -> int:
        """How many rounds the regular game took (before any extra round)."""
        rules = self.rules
        if rules.rounds is not None:
            return min(rules.rounds, len(self.history))
        assert rules.target is not None
        totals = [0] * self.teams
        for i, scores in enumerate(self.history, 1):
            for team, points in enumerate(scores):
                totals[team] += points
            if max(totals) >= rules.target:
                return i
        return len(self.history)

    def _standing(self) -> tuple[tuple[int, ...], Termination] | None:
        """The teams still in contention and the stage that last narrowed them down.

        ``None`` while regulation play goes on.
        """
        if not self._regulation_over():
            return None
        regular = self._regulation_rounds()
        totals = [0] * self.teams
        for scores in self.history[:regular]:
            for team, points in enumerate(scores):
                totals[team] += points
        # A team whose player left is out of contention (rules.md: leaving the game); the
        # game's end (the target, the rounds) is the table's as ever.
        teams = self.contenders or tuple(range(self.teams))
        best = max(totals[t] for t in teams)
        leaders = tuple(t for t in teams if totals[t] == best)
        stage = Termination.ROUNDS if self.rules.racing_demon else Termination.TARGET
        if len(leaders) > 1:
            last = self.history[regular - 1]
            top = max(last[t] for t in leaders)
            leaders = tuple(t for t in leaders if last[t] == top)
            stage = Termination.LAST_ROUND
        # Extra rounds are played between the teams still tied; the better score wins. A team
        # that did not play one loses it to every team that did (rules.md: the game, a house
        # rule: a player voted out before it scores 0 there, which beat a player alone at a
        # blocked table); if none of them played it, the scores decide as ever.
        extra = zip(self.history[regular:], self.playing[regular:], strict=True)
        for scores, playing in extra:
            if len(leaders) == 1:
                break
            present = tuple(t for t in leaders if t in playing)
            if len(present) == 1:
                return present, Termination.ABSENCE
            leaders = present or leaders
            top = max(scores[t] for t in leaders)
            leaders = tuple(t for t in leaders if scores[t] == top)
            stage = Termination.EXTRA_ROUND
        return leaders, stage

    def _tied_after_regulation(self) -> tuple[int, ...]:
        """The teams that must play an extra round (empty if none)."""
        standing = self._standing()
        if standing is None or len(standing[0]) == 1:
            return ()
        return standing[0]

    def _decide(self) -> GameResult | None:
        standing = self._standing()
        if standing is None:
            return None
        leaders, stage = standing
        if len(leaders) == 1:
            return GameResult(leaders, self.totals, stage)
        if len(self.history) - self._regulation_rounds() >= MAX_EXTRA_ROUNDS:
            return GameResult(leaders, self.totals, Termination.SHARED)
        return None
