"""One round at one table: every player's tableau, the shared lake, stuck players, Nerts.

Theory of operation
-------------------
A :class:`Table` is an immutable value. :meth:`Table.play` takes one player's move with its
Lamport time and returns the next table and a :class:`Play` describing what happened. Moves
must come in their total order ``(lamport, seat, ...)``: that is how the in-process match feeds
them (the order of play) and how the network protocol will fold final events. Two tables fed the
same moves in the same order are equal, whatever machine computes them.

* A card to the lake is a :class:`~p2p_nertz.rules.lake.Claim` resolved by the lake: kept,
  tied (same Lamport time on the same height: both stay) or lost (the card stays where it was).
* ``P`` (pass) marks a player stuck; any other move of theirs withdraws it, and so does a card
  another player keeps in the lake (only a lake card can unblock them: the pass is stale and
  must be made again). When every active player is stuck, everyone rotates (the stock onto
  the waste, the waste turned over, its top card to the bottom). After a
  whole cycle of such rotations with no card played from a Nerts pile or a waste, or to the
  lake, the round ends *blocked* (RULES.md: everyone stuck).
* ``P@<seat>`` passes on the behalf of a player who plays nothing (RULES.md: a player who
  plays nothing): it counts only while every other active player is stuck (the one who
  makes it by their own pass), and makes that seat stuck until it plays a card (one leaving
  its Nerts pile or waste, or kept in the lake); neither a rotation nor another's lake card
  withdraws it, so the others rotate at their own pace with that seat (:func:`_pass_for`).
* ``X`` calls Nerts. With an empty Nerts pile (or, in pairs, a partner's) the round ends at
  ``T*``, the call's Lamport time; moves at a time ``<= T*`` still count (cards in the air, and
  a simultaneous call, which also gets the bonus). With cards left it is a false call: it is
  penalised and play goes on (RULES.md: calling Nerts).

>>> from p2p_nertz.rules.cards import shuffled_deck
>>> table = Table.deal(Rules(), [shuffled_deck(b"a"), shuffled_deck(b"b")])
>>> table, play = table.play(0, Move.parse("S"))
>>> len(table.tableaux[0].waste), play.lamport
(3, 1)
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from p2p_nertz.errors import IllegalMoveError, InvalidRulesError, NotationError, chained
from p2p_nertz.rules.cards import SUITS, Card, is_unknown
from p2p_nertz.rules.config import NERTS_PILE_SIZE, Rules
from p2p_nertz.rules.lake import Claim, Lake, Resolution, needs
from p2p_nertz.rules.moves import (
    MOVE_CALL,
    MOVE_PASS,
    MOVE_ROTATE,
    PILE_LAKE,
    PILE_NERTS,
    PILE_WASTE,
    FoundationId,
    Move,
    Pile,
)
from p2p_nertz.rules.reasons import Illegality, Why
from p2p_nertz.rules.tableau import (
    Tableau,
    fits_on,
    joker_options_on,
    joker_options_under,
)
from p2p_nertz.slots import quick_init

__all__ = ["LegalMoves", "Play", "PlayerScore", "RoundScore", "RoundStatus", "Table"]


class RoundStatus(enum.Enum):
    """Where a round stands."""

    PLAYING = "playing"
    NERTS = "nerts"  #: someone called Nerts: the round is over
    BLOCKED = "blocked"  #: a whole cycle of rotations played nothing: the round is over


# Plain constants of the members read on hot paths (why: p2p_nertz/rules/moves.py).
STATUS_PLAYING = RoundStatus.PLAYING
STATUS_NERTS = RoundStatus.NERTS


@quick_init
@dataclass(frozen=True, slots=True)
class Play:
    """What one move did.

    Attributes:
        seat: who moved.
        move: the move.
        lamport: its Lamport time.
        card: the card that moved (the bottom card of a run), if a card moved.
        resolution: for a lake move, how the claim was resolved.
        false_call: the move was a call with cards left (penalised).
        rotated: every player rotated after this move (everyone was stuck).
        ended: the round ended with this move (``NERTS`` or ``BLOCKED``), else ``None``.
        unstuck: the other seats whose pass this move made stale: a card kept in the lake
            may unblock them, so they are no longer stuck and must pass again (RULES.md:
            everyone stuck).
    """

    seat: int
    move: Move
    lamport: int
    card: Card | None = None
    resolution: Resolution | None = None
    false_call: bool = False
    rotated: bool = False
    ended: RoundStatus | None = None
    unstuck: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class PlayerScore:
    """One player's score for a round (RULES.md: scoring a round).

    Attributes:
        seat: the player.
        lake: their cards in the lake (+1 each).
        nerts_left: cards left in their Nerts pile (``-rules.nerts_card_penalty`` each).
        bonus: the Nerts bonus, if they made a valid call.
        penalty: points lost to false calls.
        played: ``False`` for a seat that sat this round out (an extra tiebreak round).
    """

    seat: int
    lake: int
    nerts_left: int
    nerts_card_penalty: int
    bonus: int = 0
    penalty: int = 0
    played: bool = True

    @property
    def total(self) -> int:
        """The round score."""
        return self.lake - self.nerts_card_penalty * self.nerts_left + self.bonus - self.penalty


@dataclass(frozen=True, slots=True)
class RoundScore:
    """The scores of one round, per player and per team (a team is one player unless pairs)."""

    players: tuple[PlayerScore, ...]
    teams: tuple[int, ...]
    status: RoundStatus
    callers: tuple[int, ...] = ()

    @property
    def team_totals(self) -> tuple[int, ...]:
        """Round score of each team, in team order."""
        totals = [0] * (max(self.teams) + 1 if self.teams else 0)
        for p, team in zip(self.players, self.teams, strict=True):
            totals[team] += p.total
        return tuple(totals)

    def __str__(self) -> str:
        parts = [f"{p.seat}:{p.total:+d}" for p in self.players if p.played]
        return f"{self.status.value} " + " ".join(parts)


@quick_init
@dataclass(frozen=True, slots=True)
class Table:
    """The state of one round (see the module docstring).

    Attributes:
        rules: the rules.
        tableaux: each seat's tableau.
        lake: the shared lake.
        active: seats playing this round (a dropped player, or a seat out of a tiebreak round,
            is inactive: it cannot move and is not waited for when everyone is stuck).
        stuck: seats that passed and have not moved since.
        rotations: everyone-stuck rotations in a row with no card played.
        status: playing, or how the round ended.
        cut: ``T*``, the Lamport time of the first valid Nerts call.
        callers: seats that made a valid call at ``T*``.
        false_calls: false calls per seat.
        clock: the highest Lamport time played so far.
        turn: with ``rules.turn_based``, the seat whose turn it is (every move but a Nerts
            call must be that seat's, and passes the turn on to the next active seat not
            passed for); unused (0) in simultaneous play.
        passed_for: the seats stuck by a pass on their behalf (``P@<seat>``), in seat order:
            stuck until they play a card (rotations and others' lake cards leave them so);
            in turn-based play, their turns skipped until they pass themselves.
    """

    rules: Rules
    tableaux: tuple[Tableau, ...]
    lake: Lake
    active: tuple[bool, ...]
    stuck: tuple[bool, ...]
    rotations: int = 0
    status: RoundStatus = RoundStatus.PLAYING
    cut: int | None = None
    callers: tuple[int, ...] = ()
    false_calls: tuple[int, ...] = ()
    clock: int = 0
    turn: int = 0
    passed_for: tuple[int, ...] = ()

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def deal(
        cls,
        rules: Rules,
        decks: Sequence[Sequence[Card]],
        *,
        active: Sequence[bool] | None = None,
        number: int = 1,
    ) -> Table:
        """A new round: one shuffled deck per seat, dealt (RULES.md: deal).

        Args:
            rules: the rules.
            decks: one shuffled deck per seat.
            active: the seats that play this round (default: all).
            number: the round's number, from 1: with ``rules.turn_based`` it says who starts
                (:func:`first_turn`).

        Raises:
            InvalidRulesError: if the number of seats does not suit the rules.
        """
        rules.validate_players(len(decks))
        tableaux = [Tableau.deal(d, rules) for d in decks]
        return cls.from_tableaux(rules, tableaux, active=active, number=number)

    @classmethod
    def from_tableaux(
        cls,
        rules: Rules,
        tableaux: Sequence[Tableau],
        lake: Lake | None = None,
        *,
        active: Sequence[bool] | None = None,
        number: int = 1,
    ) -> Table:
        """A table in a given position (for tests and analysis, written in the notation).

        ``number`` is the round's, from 1: with ``rules.turn_based`` it says who starts
        (:func:`first_turn`).
        """
        n = len(tableaux)
        rules.validate_players(n)
        for t in tableaux:
            if len(t.work) != rules.work_piles:
                raise IllegalMoveError(
                    f"the rules say {rules.work_piles} work piles, a tableau has {len(t.work)}"
                )
        act = tuple(active) if active is not None else (True,) * n
        if len(act) != n:
            raise ValueError(f"active has {len(act)} entries for {n} seats")
        turn = first_turn(act, number) if rules.turn_based else 0
        return cls(
            rules,
            tuple(tableaux),
            lake or Lake(),
            act,
            (False,) * n,
            false_calls=(0,) * n,
            turn=turn,
        )

    # -- queries --------------------------------------------------------------------------
    @property
    def seats(self) -> int:
        """Number of seats at the table."""
        return len(self.tableaux)

    @property
    def over(self) -> bool:
        """Whether the round has ended."""
        return self.status is not STATUS_PLAYING

    def with_lake(self, lake: Lake) -> Table:
        """This table with another lake (a bot's view of a lake it sees late)."""
        return self._with_parts(self.tableaux, lake)

    def face_up(self) -> Table:
        """The table as any person at it sees it, a bot included: every tableau
        :meth:`~p2p_nertz.rules.Tableau.face_up` (the Nerts pile below its top, the stock
        and the waste below its top cannot be read, an owner's own included), everything
        else as it is. What strategies are given (:meth:`~p2p_nertz.bots.Strategy.decide`).

        >>> from p2p_nertz.rules import shuffled_deck
        >>> table = Table.deal(Rules(), [shuffled_deck(b"a"), shuffled_deck(b"b")])
        >>> view = table.face_up()
        >>> len(view.tableaux[0].stock), view.tableaux[0].nerts[-1] == table.tableaux[0].nerts[-1]
        (35, True)
        """
        return self._with_parts(tuple(map(_face_up, self.tableaux)), self.lake)

    def with_tableau(self, seat: int, tableau: Tableau) -> Table:
        """This table with ``seat``'s tableau replaced (the protocol fills in revealed cards)."""
        return self._with_parts(_replace(self.tableaux, seat, tableau), self.lake)

    def _with_parts(self, tableaux: tuple[Tableau, ...], lake: Lake) -> Table:
        # Built directly, not by _evolve: the fold calls this for most moves it follows.
        return Table(
            self.rules,
            tableaux,
            lake,
            self.active,
            self.stuck,
            self.rotations,
            self.status,
            self.cut,
            self.callers,
            self.false_calls,
            self.clock,
            self.turn,
            self.passed_for,
        )

    def with_active(self, seat: int, active: bool) -> Table:
        """This table with ``seat`` made active or inactive (a dropped player); in turn-based
        play a seat made inactive on its turn hands the turn on."""
        actives = _replace(self.active, seat, active)
        turn = self.turn
        passed_for = tuple(s for s in self.passed_for if s != seat)
        if self.rules.turn_based and not actives[turn]:
            turn = _next_seat(actives, turn, passed_for)
        stuck = _replace(self.stuck, seat, False)
        return self._with(active=actives, stuck=stuck, turn=turn, passed_for=passed_for)

    def _with(self, **changes: object) -> Table:
        return _evolve(self, **changes)

    def partner(self, seat: int) -> int | None:
        """The partner's seat in pairs, else ``None``."""
        return seat ^ 1 if self.rules.pairs else None

    def can_call(self, seat: int) -> bool:
        """Whether a Nerts call by ``seat`` would be valid: an empty Nerts pile, or in pairs
        the partner's (RULES.md: pairs)."""
        if not self.tableaux[seat].nerts:
            return True
        partner = self.partner(seat)
        return partner is not None and not self.tableaux[partner].nerts

    def legal_moves(self, seat: int) -> LegalMoves:
        """The moves ``seat`` may make now, as a lazy view (``in``, ``len``, iteration).

        After a valid Nerts call, the moves that may still be played at a Lamport time up to
        ``T*`` (cards in the air, a simultaneous call): card moves, the stock, and a call by
        a seat that may make one too; no pass, no rotation. In turn-based play a seat out of
        turn may only call.
        """
        return LegalMoves(self, seat)

    def lake_target(self, seat: int, source: Pile, declare: Card | None = None) -> FoundationId:
        """The foundation a card from ``source`` goes on when the move names none.

        An ace starts its owner's own foundation; any other card goes on the first foundation
        (in order) where it fits.

        Raises:
            IllegalMoveError: if the card fits nowhere.
        """
        card = self.tableaux[seat].top(source)
        if card is None:
            raise IllegalMoveError(f"{source!r} is empty for seat {seat}")
        return self._target(seat, _as_played(card, declare))

    def _target(self, seat: int, card: Card) -> FoundationId:
        """:meth:`lake_target` of ``seat``'s ``card`` as it plays (a joker declared)."""
        assert card.suit is not None
        if card.rank == 1:
            return FoundationId(seat, card.suit, card.joker)
        targets = self.lake.targets(card)
        if not targets:
            raise IllegalMoveError(
                f"{card} fits on no foundation in the lake",
                reason=Illegality(Why.NO_FOUNDATION, card, needs=needs(card)),
            )
        return targets[0]

    # -- the one transition ---------------------------------------------------------------
    def play(
        self, seat: int, move: Move, lamport: int | None = None, *, shown: Tableau | None = None
    ) -> tuple[Table, Play]:
        """Play one move of ``seat`` at Lamport time ``lamport`` (default: the clock + 1; after
        a Nerts call, ``T*``, the last time a move in the air still counts).

        ``shown``: the seat's tableau with the cards this move turns face up filled in, where
        this table has them face down (the protocol's fold learns them from the move's event):
        the move is played as on ``self.with_tableau(seat, shown)``, without making that table.

        Returns:
            The next table and what the move did.

        Raises:
            IllegalMoveError: if the move is illegal now; the table is unchanged.
        """
        lamport = self._time_of(seat, move, lamport)
        kind = move.kind
        if shown is not None and (kind is MOVE_CALL or kind is MOVE_PASS):
            # (Neither turns a card up; they read every tableau of the table, as it is.)
            return self.with_tableau(seat, shown).play(seat, move, lamport)
        if kind is MOVE_CALL:
            # Not a turn's move even in turn-based play: a shout may come at any time.
            return self._call(seat, move, lamport)
        if self.rules.turn_based and seat != self.turn:
            _out_of_turn(self, seat, move)
        if kind is MOVE_PASS:
            return self._pass(seat, move, lamport)
        if kind is MOVE_ROTATE and not (self.rules.rotate_alone and self.stuck[seat]):
            alone = self.rules.rotate_alone
            raise IllegalMoveError(
                f"{move}: rotate only when everyone is stuck" + (" (pass first)" if alone else ""),
                reason=Illegality(Why.ROTATE_NOT_STUCK if alone else Why.ROTATE_NOT_ALL),
            )
        tableau = self.tableaux[seat] if shown is None else shown
        card: Card | None
        resolution = None
        lake = self.lake
        # RULES.md: a round is blocked after a whole cycle of rotations "with no card played":
        # a card leaving the Nerts pile or the waste, or staying in the lake, is played.
        if move.target is PILE_LAKE:
            tableau, card, lake, resolution = self._claim(seat, move, lamport, tableau)
            progress = resolution.kept
        else:
            before = tableau
            tableau = tableau.apply(move, self.rules)
            card = before.pile(move.source)[-move.count] if move.source is not None else None
            progress = move.source is PILE_NERTS or move.source is PILE_WASTE
        tableaux = _replace(self.tableaux, seat, tableau)
        stuck, passed_for = self.stuck, self.passed_for
        if stuck[seat]:
            stuck, passed_for = _withdrawn(self, seat, progress)
        unstuck: tuple[int, ...] = ()
        if resolution is not None and resolution.kept and any(stuck):
            # RULES.md: everyone stuck — a pass counts only with no card played to the lake by
            # anyone else after it: only a lake card can unblock another player. (A pass on a
            # player's behalf is no declaration of theirs: it stands, _pass_for.)
            unstuck = tuple(s for s, f in enumerate(stuck) if f and s not in passed_for)
            stuck = tuple(s in passed_for for s in range(len(stuck)))
        table = Table(
            self.rules,
            tableaux,
            lake,
            self.active,
            stuck,
            0 if progress else self.rotations,
            self.status,
            self.cut,
            self.callers,
            self.false_calls,
            lamport,
            _next_seat(self.active, seat, passed_for) if self.rules.turn_based else self.turn,
            passed_for,
        )
        # (Every field by position: a keyword argument costs the call a dict, ~0.1 µs.)
        return table, Play(seat, move, lamport, card, resolution, False, False, None, unstuck)

    def _time_of(self, seat: int, move: Move, lamport: int | None) -> int:
        """The Lamport time ``seat``'s ``move`` is played at (:meth:`play`), once it is known
        that the seat may move at all then."""
        if not 0 <= seat < len(self.tableaux):
            raise IllegalMoveError(f"{move}: there is no seat {seat} at this table")
        if lamport is None:
            # After a Nerts call the latest time a move still counts is T* itself.
            cut = self.cut
            lamport = cut if cut is not None and self.clock <= cut else self.clock + 1
        elif lamport < self.clock:
            raise IllegalMoveError(
                f"{move}: Lamport time {lamport} is before the table's clock {self.clock}"
            )
        if not self.active[seat]:
            raise IllegalMoveError(
                f"{move}: seat {seat} is not playing this round",
                reason=Illegality(Why.NOT_PLAYING, seat=seat),
            )
        if self.status is not STATUS_PLAYING and not (
            self.status is STATUS_NERTS and self.cut is not None and lamport <= self.cut
        ):
            raise IllegalMoveError(
                f"{move}: the round is over ({self.status.value})",
                reason=Illegality(Why.ROUND_OVER, status=self.status.value),
            )
        return lamport

    def _claim(
        self, seat: int, move: Move, lamport: int, tableau: Tableau
    ) -> tuple[Tableau, Card, Lake, Resolution]:
        """A card of ``seat``'s ``tableau`` to the lake, as the lake resolves its claim: the
        tableau after it (the card gone if kept, else where it was: RULES.md: return it), the
        card, the lake."""
        assert move.source is not None
        try:
            card, taken = tableau.take(move.source)
            if is_unknown(card):
                raise IllegalMoveError(
                    "a card not turned up yet cannot be played",
                    reason=Illegality(Why.FACE_DOWN, pile=move.source),
                )
            played = _as_played(card, move.declare)
            foundation = move.foundation or self._target(seat, played)
            claim = Claim(seat, played, move.source, foundation, lamport)
        except ValueError as exc:  # IllegalMoveError is a ValueError: name the move
            raise chained(
                IllegalMoveError(f"{move}: {exc}", reason=getattr(exc, "reason", None)), None
            )
        if played.rank > 1 and foundation not in self.lake:
            # Never a race: the foundation was never started.
            raise IllegalMoveError(
                f"{move}: {played} does not fit on foundation {foundation} (not started)"
            )
        # Any other claim the lake resolves, the one answer for it: on a started
        # foundation below rank - 1 (the card it was built on lost its race) the card
        # loses and returns, as Lake.apply says (docs/protocol.md §8).
        lake, resolution = self.lake.apply(claim)
        return (taken if resolution.kept else tableau), card, lake, resolution

    def _call(self, seat: int, move: Move, lamport: int) -> tuple[Table, Play]:
        # (A call plays no card: a pass on the caller's behalf stands.)
        stuck = self.stuck if seat in self.passed_for else _replace(self.stuck, seat, False)
        if not self.can_call(seat):
            false_calls = _replace(self.false_calls, seat, self.false_calls[seat] + 1)
            table = _evolve(self, stuck=stuck, false_calls=false_calls, clock=lamport)
            return table, Play(seat, move, lamport, false_call=True)
        if self.status is RoundStatus.NERTS:  # a simultaneous call at T*: a tie
            if seat in self.callers:
                raise IllegalMoveError(f"{move}: seat {seat} has already called Nerts")
            table = _evolve(self, callers=(*self.callers, seat), clock=lamport)
            return table, Play(seat, move, lamport)
        table = _evolve(
            self, stuck=stuck, status=RoundStatus.NERTS, cut=lamport, callers=(seat,), clock=lamport
        )
        return table, Play(seat, move, lamport, ended=RoundStatus.NERTS)

    def _pass(self, seat: int, move: Move, lamport: int) -> tuple[Table, Play]:
        if move.behalf is not None:
            return _pass_for(self, seat, move, lamport)
        if self.rules.turn_based and seat in self.passed_for:
            return _back(self, seat, move, lamport)
        return _stuck(self, seat, move, lamport)

    def blocked(self, lamport: int) -> Table:
        """This table with its round ended blocked at Lamport time ``lamport``: the protocol
        ends a round that cannot go on (in a shuffle game, cards too few members are left to
        open: docs/shuffle.md §6.4), scored as a blocked round is."""
        if self.status is not RoundStatus.PLAYING:
            return self
        return _evolve(self, status=RoundStatus.BLOCKED, clock=max(self.clock, lamport))

    # -- scoring --------------------------------------------------------------------------
    def score(self) -> RoundScore:
        """Score the round as it stands (RULES.md: scoring a round)."""
        rules = self.rules
        in_lake = self.lake.count_by_owner()
        teams = tuple(rules.team_of(s) for s in range(self.seats))
        bonus_teams: set[int] = set()
        players = []
        for seat, tableau in enumerate(self.tableaux):
            if not self.active[seat]:
                players.append(PlayerScore(seat, 0, 0, rules.nerts_card_penalty, played=False))
                continue
            bonus = 0
            if seat in self.callers and teams[seat] not in bonus_teams:
                bonus_teams.add(teams[seat])
                bonus = rules.nerts_bonus
            players.append(
                PlayerScore(
                    seat,
                    in_lake.get(seat, 0),
                    len(tableau.nerts),
                    rules.nerts_card_penalty,
                    bonus,
                    rules.false_call_penalty * self.false_calls[seat],
                )
            )
        return RoundScore(tuple(players), teams, self.status, self.callers)

    def forfeit_score(self, seat: int) -> PlayerScore:
        """What ``seat`` scores if it forfeits the round (a deal that cannot be verified, or
        gone after its deal; DESIGN.md §5.2): as if its whole Nerts pile were left and it had no
        card in the lake, and no bonus; its false calls still cost it.
        """
        rules = self.rules
        return PlayerScore(
            seat,
            0,
            NERTS_PILE_SIZE,
            rules.nerts_card_penalty,
            0,
            rules.false_call_penalty * self.false_calls[seat],
        )

    def owned_cards(self, seat: int) -> list[Card]:
        """Every physical card of ``seat``: in its tableau and in the lake (conservation)."""
        cards = [c.physical for c in self.tableaux[seat].cards()]
        cards += [lc.card.physical for lc in self.lake.cards() if lc.owner == seat]
        return cards

    def has_card_move(self, seat: int) -> bool:
        """Whether ``seat`` has a card move that changes something (:meth:`card_moves`).

        With none, only the stock is left to the player, and then the pass (a table may
        offer it).
        """
        return next(self.card_moves(seat), None) is not None

    def card_moves(self, seat: int) -> Iterator[Move]:
        """The legal card moves of ``seat`` that change something: any but a whole work pile
        moved into an empty one (an empty pile traded for another); the lake's first, then
        the Nerts card's, then the waste's, then the work piles' (the order of
        :meth:`legal_moves`)."""
        t = self.tableaux[seat]
        for m in _generate(self, seat):
            if not m.plays_card:
                continue
            source = m.source
            assert source is not None and m.target is not None
            if (
                source.is_work
                and m.target.is_work
                and m.count == len(t.work[source - 1])
                and not t.work[m.target - 1]
            ):
                continue
            yield m

    # -- notation -------------------------------------------------------------------------
    def __str__(self) -> str:
        """The whole table in notation; :meth:`parse` reads it back.

        The first line is the round's status, clock and counters (and the rules when they
        are not the defaults); then one line per seat, ``<seat>> [out] [stuck|passed]
        [false=<n>] <tableau>`` (``passed``: stuck by a pass on its behalf); then one line
        per foundation, ``L> <foundation line>`` with each card's Lamport time when not 0.
        """
        return _table_text(self)

    @classmethod
    def parse(cls, text: str, rules: Rules | None = None) -> Table:
        """Read a table back from :meth:`__str__`'s notation.

        Args:
            text: the notation.
            rules: the rules, when the notation does not give them (it gives those that
                differ from the defaults).

        Raises:
            NotationError: if ``text`` is not a table.
        """
        return _parse_table(cls, text, rules)


class LegalMoves:
    """A lazy view of one seat's legal moves (like python-chess's ``board.legal_moves``).

    Iteration lists lake moves with their foundation named; ``in`` also accepts a lake move
    with no foundation when some foundation fits. A Nerts call is always listed while the round
    is on: with cards left it is a (penalised) false call. After a valid call, up to ``T*``,
    only a valid simultaneous call is (see :meth:`Table.legal_moves`).
    """

    __slots__ = ("_seat", "_table")

    def __init__(self, table: Table, seat: int) -> None:
        self._table = table
        self._seat = seat

    def __iter__(self) -> Iterator[Move]:
        return _generate(self._table, self._seat)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def count(self) -> int:
        """How many legal moves there are."""
        return len(self)

    def __bool__(self) -> bool:
        return any(True for _ in self)

    def __contains__(self, move: object) -> bool:
        if not isinstance(move, Move):
            return False
        move = _unrestated(self._table, self._seat, move)
        if move.is_lake and move.foundation is None:
            return any(
                m.is_lake and m.source == move.source and m.declare == move.declare for m in self
            )
        return any(m == move for m in self)

    def __repr__(self) -> str:
        return f"<LegalMoves seat {self._seat}: {', '.join(map(str, self))}>"


def _unrestated(table: Table, seat: int, move: Move) -> Move:
    r"""``move`` without a declaration that restates the one its joker carries already
    (``1>L=2C`` for a ``JK1=2C`` on top of pile 1): it plays as the move without it
    (:func:`_as_played`), which is the one listed (a property test found it: session 38).

    >>> t = Table.parse("playing clock=3 | rules: jokers=1\n"
    ...     "0> N: 5H | 1: JK1=2C | 2: - | 3: - | 4: - | S: 2H | W: -\n"
    ...     "1> N: 5D | 1: - | 2: - | 3: - | 4: - | S: 3H | W: -\nL> 1C: AC/1@1")
    >>> [Move.parse(m) in t.legal_moves(0) for m in ("1>L=2C", "1>L@1C=2C", "1>L=3C")]
    [True, True, False]
    """
    if move.declare is None or not move.is_lake or move.source is None:
        return move
    card = table.tableaux[seat].top(move.source)
    if card is None or not card.is_joker or card.suit is None:
        return move
    return replace(move, declare=None) if move.declare == Card(card.rank, card.suit) else move


def _generate(table: Table, seat: int) -> Iterator[Move]:
    if not table.active[seat]:
        return
    after_call = table.status is STATUS_NERTS and table.cut is not None
    if table.status is not STATUS_PLAYING and not after_call:
        return
    if table.rules.turn_based and seat != table.turn:
        # Out of turn only a call: valid, or (while the round is on) a false one.
        if not after_call or (seat not in table.callers and table.can_call(seat)):
            yield _CALL
        return
    t = table.tableaux[seat]
    lake = table.lake
    work = t.work
    piles = t.work_piles
    sources: list[tuple[Pile, Card]] = []
    # A card not turned up yet (sealed in a shuffle game) is no source (RULES.md: a card not
    # turned up yet cannot be played): ``rank or joker`` is ``not is_unknown``, inlined.
    if t.nerts and ((c := t.nerts[-1]).rank or c.joker):
        sources.append((Pile.NERTS, c))
    if t.waste and ((c := t.waste[-1]).rank or c.joker):
        sources.append((Pile.WASTE, c))
    sources += [(p, c) for p in piles if (w := work[p - 1]) and ((c := w[-1]).rank or c.joker)]
    # To the lake.
    for src, c in sources:
        if c.suit is None:  # an undeclared joker: declare it as an ace or a next card
            for suit in SUITS:
                yield Move.to_lake(src, FoundationId(seat, suit, c.joker), Card(1, suit))
            for fid, h in lake.open_foundations():
                yield Move.to_lake(src, fid, Card(h + 1, fid.suit))
        elif c.rank == 1:
            yield Move.to_lake(src, FoundationId(seat, c.suit, c.joker))
        else:
            for fid in lake.targets(c):
                yield Move.to_lake(src, fid)
    # Onto (or under) work piles.
    yield from _pile_moves(work, piles, sources)
    if t.stock or t.waste:
        yield _TURN
    if after_call:
        # Up to T* only a move in the air or a simultaneous call still counts: nobody waits
        # for a rotation any more (RULES.md: calling Nerts).
        if seat not in table.callers and table.can_call(seat):
            yield _CALL
        return
    if table.rules.rotate_alone and table.stuck[seat] and len(t.stock) >= 2:
        yield _ROTATE
    yield _PASS
    yield _CALL


def _pile_moves(
    work: tuple[tuple[Card, ...], ...], piles: Sequence[Pile], sources: list[tuple[Pile, Card]]
) -> Iterator[Move]:
    """The moves of cards from ``sources`` onto (or under) the ``work`` piles."""
    has_empty = any(not w for w in work)
    for src, c in sources:
        if src.is_work:
            cards = work[src - 1]
            runs = [(n, cards[-n:]) for n in range(1, len(cards) + 1)]
        else:
            runs = [(1, (c,))]
        for count, run in runs:
            bottom, top = run[0], run[-1]
            for dst in piles:
                if dst == src:
                    continue
                dest = work[dst - 1]
                if not dest:
                    yield Move.to_pile(src, dst, count)
                    continue
                exposed = dest[-1]
                if not (exposed.rank or exposed.joker) or not (dest[0].rank or dest[0].joker):
                    continue  # a work pile whose dealt card is not turned up yet
                if exposed.suit is None:
                    below = dest[-2] if len(dest) > 1 else None
                    for decl in joker_options_on(bottom, below):
                        yield Move.to_pile(src, dst, count, decl)
                elif fits_on(bottom, exposed):
                    yield Move.to_pile(src, dst, count)
                if has_empty:
                    base = dest[0]
                    if top.suit is None and base.suit is not None:
                        for decl in joker_options_under(base):
                            # The joker must also fit on the card below it in the run.
                            if count == 1 or fits_on(decl, run[-2]):
                                yield Move.slide(src, dst, count, decl)
                    elif base.suit is None and top.suit is not None:
                        # Under a lone joker: it stays undeclared (see Tableau._slide).
                        if len(dest) == 1 and fits_on(base, top):
                            yield Move.slide(src, dst, count)
                    elif fits_on(base, top):
                        yield Move.slide(src, dst, count)


_TURN = Move.turn()
_ROTATE = Move.rotate()
_PASS = Move.pass_()
_CALL = Move.call()


def _as_played(card: Card, declare: Card | None) -> Card:
    """The card as it goes to the lake: a joker takes its declaration (RULES.md: jokers)."""
    if card.suit is None:
        if declare is None:
            raise IllegalMoveError(
                f"declare the joker {card} before it goes to the lake (=5H)",
                reason=Illegality(Why.UNDECLARED, card),
            )
        assert declare.suit is not None
        return card.declare(declare.rank, declare.suit)
    if declare is not None and (not card.is_joker or declare != Card(card.rank, card.suit)):
        raise IllegalMoveError(
            f"{card} is not an undeclared joker: nothing to declare",
            reason=Illegality(Why.NO_JOKER, card=declare),
        )
    return card


# -- the table's notation (Table.__str__, Table.parse) --------------------------------------
def _table_text(table: Table) -> str:
    """:meth:`Table.__str__`: the head line, one line per seat, one per foundation."""
    head = [table.status.value, f"clock={table.clock}"]
    if table.rotations:
        head.append(f"rotations={table.rotations}")
    if table.cut is not None:
        head.append(f"cut={table.cut}")
    if table.callers:
        head.append("callers=" + ",".join(map(str, table.callers)))
    if table.rules.turn_based:
        head.append(f"turn={table.turn}")
    rules = table.rules.to_dict()
    if rules:
        head.append("| rules: " + " ".join(f"{k}={v}" for k, v in rules.items()))
    lines = [" ".join(head)]
    for seat, t in enumerate(table.tableaux):
        flags = []
        if not table.active[seat]:
            flags.append("out")
        if seat in table.passed_for:
            flags.append("passed")
        elif table.stuck[seat]:
            flags.append("stuck")
        false_calls = table.false_calls[seat] if seat < len(table.false_calls) else 0
        if false_calls:
            flags.append(f"false={false_calls}")
        lines.append(f"{seat}> " + "".join(f + " " for f in flags) + str(t))
    for fid in table.lake:
        cards = " ".join(
            f"{lc.card}/{lc.owner}" + (f"@{lc.lamport}" if lc.lamport else "")
            for lc in table.lake[fid]
        )
        lines.append(f"L> {fid}: {cards}")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class _Head:
    """The first line of a table's notation: its status and counters."""

    status: RoundStatus
    clock: int
    rotations: int
    cut: int | None
    callers: tuple[int, ...]
    turn: int | None


@dataclass(slots=True)
class _Seats:
    """The seat lines of a table's notation, read, and the lake lines after them."""

    tableaux: list[Tableau] = field(default_factory=list)
    active: list[bool] = field(default_factory=list)
    stuck: list[bool] = field(default_factory=list)
    false_calls: list[int] = field(default_factory=list)
    passed_for: list[int] = field(default_factory=list)
    lake_lines: list[str] = field(default_factory=list)


def _parse_table(cls: type[Table], text: str, rules: Rules | None) -> Table:
    """:meth:`Table.parse`: the head line, the seats, the lake, then what they must agree on."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        raise NotationError("not a table: no text")
    head_text, _, rules_text = lines[0].partition("| rules:")
    head = _parse_head(head_text, lines[0])
    if rules is None:
        rules = _parse_rules(rules_text)
    seats = _parse_seats(lines[1:])
    n = len(seats.tableaux)
    try:
        lake = Lake.parse(";".join(seats.lake_lines))
        table = cls.from_tableaux(rules, seats.tableaux, lake, active=seats.active)
    except (ValueError, InvalidRulesError) as exc:  # IllegalMoveError is a ValueError
        raise chained(NotationError(f"not a table: {exc}"), None)
    if any(c >= n for c in head.callers) or (head.status is STATUS_NERTS) != (head.cut is not None):
        raise NotationError(
            f"not a table: callers and cut= go with a nerts status, in {lines[0]!r}"
        )
    if head.turn is not None and not (rules.turn_based and 0 <= head.turn < n):
        raise NotationError(f"not a table: turn= is a seat, in turn-based play: {lines[0]!r}")
    return _evolve(
        table,
        stuck=tuple(seats.stuck),
        rotations=head.rotations,
        status=head.status,
        cut=head.cut,
        callers=head.callers,
        false_calls=tuple(seats.false_calls),
        clock=head.clock,
        turn=table.turn if head.turn is None else head.turn,
        passed_for=tuple(seats.passed_for),
    )


def _parse_head(head: str, line: str) -> _Head:
    """The status and counters of a table's first ``line`` (``head``: before its rules)."""
    words = head.split()
    try:
        status = RoundStatus(words[0]) if words else None
    except ValueError:
        status = None
    if status is None:
        raise NotationError(
            f"not a table: {line!r} (the first line starts with playing, nerts or blocked)"
        )
    counters: dict[str, str] = {}
    for word in words[1:]:
        key, sep, value = word.partition("=")
        if not sep or key not in _COUNTERS or key in counters:
            raise NotationError(f"not a table counter: {word!r} in {line!r}")
        counters[key] = value
    try:
        return _Head(
            status,
            clock=int(counters.get("clock", "0")),
            rotations=int(counters.get("rotations", "0")),
            cut=int(counters["cut"]) if "cut" in counters else None,
            callers=(
                tuple(int(c) for c in counters["callers"].split(","))
                if ("callers" in counters)
                else ()
            ),
            turn=int(counters["turn"]) if "turn" in counters else None,
        )
    except ValueError:
        raise chained(NotationError(f"not a table: a counter is not a number in {line!r}"), None)


def _parse_seats(lines: list[str]) -> _Seats:
    """The seat lines (``<seat>> [out] [stuck|passed] [false=<n>] <tableau>``), then the
    lake's."""
    seats = _Seats()
    for line in lines:
        label, sep, body = line.partition(">")
        label = label.strip()
        if sep and label == "L":
            seats.lake_lines.append(body)
            continue
        if not sep or not label.isdigit() or int(label) != len(seats.tableaux) or seats.lake_lines:
            raise NotationError(
                f"not a table line: {line!r} (expected {len(seats.tableaux)}> <tableau>, or L> "
                "<foundation> after the seats)"
            )
        flags, rest = body.split(), body
        out = is_stuck = False
        calls = 0
        for flag in flags:
            if flag == "out":
                out = True
            elif flag == "stuck":
                is_stuck = True
            elif flag == "passed":
                is_stuck = True
                seats.passed_for.append(len(seats.tableaux))
            elif flag.startswith("false=") and flag[6:].isdigit():
                calls = int(flag[6:])
            else:
                break
            rest = rest.split(flag, 1)[1]
        seats.tableaux.append(Tableau.parse(rest))
        seats.active.append(not out)
        seats.stuck.append(is_stuck)
        seats.false_calls.append(calls)
    if not seats.tableaux:
        raise NotationError("not a table: no seat (0> <tableau>)")
    return seats


def _parse_rules(text: str) -> Rules:
    """The rules from ``key=value`` words (the values :meth:`Rules.to_dict` gives)."""
    values: dict[str, object] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep:
            raise NotationError(f"not a rules field: {word!r} (expected name=value)")
        values[key] = _RULE_VALUES.get(value, value)
        if isinstance(values[key], str):
            try:
                values[key] = int(value)
            except ValueError:
                raise chained(NotationError(f"not a rules value: {word!r}"), None)
    try:
        return Rules.from_dict(values)
    except InvalidRulesError as exc:
        raise chained(NotationError(f"not a table's rules: {exc}"), None)


_RULE_VALUES: dict[str, object] = {"True": True, "False": False, "None": None}
_COUNTERS = ("clock", "rotations", "cut", "callers", "turn")

_T = TypeVar("_T")


_face_up = Tableau.face_up


def _withdrawn(table: Table, seat: int, progress: bool) -> tuple[tuple[bool, ...], tuple[int, ...]]:
    """The stuck seats and the passes on seats' behalf after a move of stuck ``seat``: any
    move withdraws its own pass; a pass made on its behalf stands until it plays a card
    (``progress``: one leaving its Nerts pile or waste, or kept in the lake)."""
    if seat not in table.passed_for:
        return _replace(table.stuck, seat, False), table.passed_for
    if not progress and not table.rules.turn_based:
        # (In turn-based play any move of its own on its turn brings the seat back.)
        return table.stuck, table.passed_for
    return _replace(table.stuck, seat, False), tuple(s for s in table.passed_for if s != seat)


def _pass_for(table: Table, seat: int, move: Move, lamport: int) -> tuple[Table, Play]:
    """``seat`` passes on the behalf of ``move.behalf`` (RULES.md: a player who plays nothing):
    it counts only if every other active seat is stuck, and ``seat`` by its own pass (not
    by one on its behalf); ``move.behalf`` is then stuck, everyone is, and every tableau
    rotates. It stands (through rotations, and another's card kept in the lake) until that
    seat plays a card. Made again while the first one stands it changes nothing, as a
    repeated pass does.

    Raises:
        IllegalMoveError: the pass cannot count here (the reason says why).
    """
    behalf = move.behalf
    assert behalf is not None
    if behalf == seat:
        raise IllegalMoveError(
            f"{move}: a seat passes for itself with P", reason=Illegality(Why.PASS_SELF)
        )
    if not 0 <= behalf < table.seats or not table.active[behalf]:
        raise IllegalMoveError(
            f"{move}: seat {behalf} is not playing this round",
            reason=Illegality(Why.NOT_PLAYING, seat=behalf),
        )
    if behalf in table.passed_for:  # a repeat: it stands already
        return _evolve(table, clock=lamport), Play(seat, move, lamport)
    if seat in table.passed_for:
        raise IllegalMoveError(
            f"{move}: seat {seat} is stuck by a pass on its behalf: it must pass itself first",
            reason=Illegality(Why.STUCK_BY_PASS, seat=seat),
        )
    if table.rules.turn_based:
        return _pass_turn_for(table, seat, move, lamport)
    waiting = [s for s, a in enumerate(table.active) if a and s != behalf and not table.stuck[s]]
    if waiting:
        late = seat if seat in waiting else waiting[0]
        who = f"seat {late} has not passed" + (" itself" if late == seat else "")
        raise IllegalMoveError(
            f"{move}: {who}: a pass for seat {behalf} counts only while every other player "
            "is stuck",
            reason=Illegality(Why.NOT_ALL_STUCK, seat=late, behalf=behalf),
        )
    marked = _evolve(table, passed_for=tuple(sorted((*table.passed_for, behalf))))
    new, play = _stuck(marked, behalf, Move.pass_(), lamport)
    return new, Play(seat, move, lamport, rotated=play.rotated, ended=play.ended)


def _stuck(table: Table, seat: int, move: Move, lamport: int) -> tuple[Table, Play]:
    """``seat`` passes at ``table``: it is stuck, and if everyone is, every tableau rotates."""
    stuck = _replace(table.stuck, seat, True)
    turn = table.turn
    if table.rules.turn_based and seat == turn:
        turn = _next_seat(table.active, seat, table.passed_for)
    if table.status is not RoundStatus.PLAYING or not all(
        s or not a for s, a in zip(stuck, table.active, strict=True)
    ):
        table = _evolve(table, stuck=stuck, clock=lamport, turn=turn)
        return table, Play(seat, move, lamport)
    # Everyone is stuck: everyone rotates (RULES.md: everyone stuck).
    tableaux = tuple(
        t.rotated() if a else t for t, a in zip(table.tableaux, table.active, strict=True)
    )
    rotations = table.rotations + 1
    cycle = max(
        (len(t.stock) + len(t.waste) for t, a in zip(tableaux, table.active, strict=True) if a),
        default=0,
    )
    ended = RoundStatus.BLOCKED if rotations >= max(1, cycle) else None
    table = _evolve(
        table,
        tableaux=tableaux,
        # (A pass on a seat's behalf stands through the rotation: RULES.md.)
        stuck=tuple(s in table.passed_for for s in range(len(stuck))),
        rotations=rotations,
        status=ended or RoundStatus.PLAYING,
        clock=lamport,
        turn=turn,
    )
    return table, Play(seat, move, lamport, rotated=True, ended=ended)


def _out_of_turn(table: Table, seat: int, move: Move) -> None:
    """Refuse ``seat``'s ``move`` made out of turn in turn-based play, but for the two passes
    made so: one for the seat whose turn it is (:func:`_pass_turn_for`), and a seat's own
    whose turns were passed for (:func:`_back`).

    Raises:
        IllegalMoveError: any other move out of turn.
    """
    if move.kind is MOVE_PASS and (move.behalf is not None or seat in table.passed_for):
        return
    raise IllegalMoveError(
        f"{move}: it is seat {table.turn}'s turn, not seat {seat}'s (turn-based play)",
        reason=Illegality(Why.TURNS_PASSED if seat in table.passed_for else Why.NOT_YOUR_TURN),
    )


def _back(table: Table, seat: int, move: Move, lamport: int) -> tuple[Table, Play]:
    """A seat whose turns were passed for takes them back with its own pass, on its turn or
    not (RULES.md: turn-based play): it passes (stuck), and the turn stays where it is."""
    back = _evolve(table, passed_for=tuple(s for s in table.passed_for if s != seat))
    return _stuck(back, seat, move, lamport)


def _pass_turn_for(table: Table, seat: int, move: Move, lamport: int) -> tuple[Table, Play]:
    """In turn-based play, ``seat`` passes the turn of ``move.behalf``, which has not moved on
    it (RULES.md: turn-based play): it counts only on that seat's turn, by a seat whose own
    turns are not passed for. The seat passes as if it had (stuck, the turn goes on, and if
    everyone is stuck every tableau rotates), and its turns are skipped until it takes them
    back with a pass of its own (:meth:`Table._pass`); the round goes on without waiting."""
    behalf = move.behalf
    assert behalf is not None
    if table.turn != behalf:
        raise IllegalMoveError(
            f"{move}: it is seat {table.turn}'s turn: a pass for seat {behalf} counts only on "
            "its turn (turn-based play)",
            reason=Illegality(Why.NOT_THEIR_TURN, seat=table.turn, behalf=behalf),
        )
    marked = _evolve(table, passed_for=tuple(sorted((*table.passed_for, behalf))))
    new, play = _stuck(marked, behalf, Move.pass_(), lamport)
    return new, Play(seat, move, lamport, rotated=play.rotated, ended=play.ended)


def first_turn(active: Sequence[bool], number: int) -> int:
    """Who starts round ``number`` (from 1) of a turn-based game: the start moves one seat
    round the table each round, so that no seat always moves first (rules.md: turn-based
    play); a seat out of the round passes the start on to the next one that plays.

    >>> [first_turn((True, True, True), n) for n in (1, 2, 3, 4)]
    [0, 1, 2, 0]
    >>> first_turn((True, False, True), 2)
    2
    """
    n = len(active)
    start = (number - 1) % n if n else 0
    for step in range(n):
        seat = (start + step) % n
        if active[seat]:
            return seat
    return 0


def _next_seat(active: tuple[bool, ...], seat: int, skipped: tuple[int, ...] = ()) -> int:
    """The next active seat after ``seat``, in seat order, round the table, passing over the
    ``skipped`` seats (turn-based play: those whose turns are passed for) unless every other
    active seat is one (``seat`` itself when no other is active)."""
    n = len(active)
    first = None
    for step in range(1, n + 1):
        other = (seat + step) % n
        if active[other]:
            if other not in skipped:
                return other
            if first is None:
                first = other
    return seat if first is None else first


def _replace(values: tuple[_T, ...], index: int, value: _T) -> tuple[_T, ...]:
    return (*values[:index], value, *values[index + 1 :])


def _evolve(table: Table, **changes: object) -> Table:
    fields = {
        "rules": table.rules,
        "tableaux": table.tableaux,
        "lake": table.lake,
        "active": table.active,
        "stuck": table.stuck,
        "rotations": table.rotations,
        "status": table.status,
        "cut": table.cut,
        "callers": table.callers,
        "false_calls": table.false_calls,
        "clock": table.clock,
        "turn": table.turn,
        "passed_for": table.passed_for,
    }
    fields.update(changes)
    return Table(**fields)  # type: ignore[arg-type]
