"""Why a move is illegal, as a value: the reason the rules engine gives when it refuses one.

Every :class:`~p2p_nertz.errors.IllegalMoveError` the engine raises for a seat's move carries
a :class:`Illegality` (:attr:`~p2p_nertz.errors.IllegalMoveError.reason`): which way the move is
illegal (:class:`Why`) and the values that say it (the card, the card it needs, the pile, the
count...). The check that refuses a move sets it where it refuses: a front end words the
reason (one table, in ``ui/``) and never restates a rule or reads an engine message back.
:func:`why_illegal` asks the engine itself why a move is illegal now.

>>> from p2p_nertz.rules import Move, Rules, Table, Tableau
>>> t = Tableau.parse("N: 4C AS | 1: QH | 2: JS | 3: 5D | 4: 8C | S: 2C 7H 9S | W: -")
>>> table = Table.from_tableaux(Rules(), [t, t])
>>> reason = why_illegal(table, 0, Move.parse("1>L"))
>>> reason.why, str(reason.card), str(reason.needs)
(<Why.NO_FOUNDATION: 'no foundation'>, 'QH', 'JH')
>>> why_illegal(table, 0, Move.parse("N>L")) is None
True
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

from p2p_nertz.errors import IllegalMoveError

if TYPE_CHECKING:
    from p2p_nertz.rules.cards import Card
    from p2p_nertz.rules.moves import Move, Pile
    from p2p_nertz.rules.table import Table

__all__ = ["Illegality", "Why", "why_illegal"]


class Why(enum.Enum):
    """One way a move is illegal (the values a :class:`Illegality` fills in for each)."""

    ROUND_OVER = "round over"  #: the round has ended (``status``: how)
    NOT_PLAYING = "not playing"  #: the seat (``seat``) plays no part in this round
    NOT_YOUR_TURN = "not your turn"  #: turn-based play: another seat's turn
    TURNS_PASSED = "turns passed"  #: turn-based play: the seat's turns are passed for it
    STOCK_EMPTY = "stock empty"  #: turning: the stock and the waste are both empty
    ROTATE_SHORT = "rotate short"  #: rotating alone: the stock holds ``count`` cards, < 2
    ROTATE_NOT_STUCK = "rotate not stuck"  #: rotating alone: the seat has not passed
    ROTATE_NOT_ALL = "rotate not all"  #: stocks rotate only when everyone is stuck
    NO_WORK_PILE = "no work pile"  #: the rules have no work pile ``pile``
    EMPTY = "empty"  #: the pile ``pile`` holds no card
    NO_FOUNDATION = "no foundation"  #: ``card`` fits on no foundation (it ``needs`` one)
    UNDECLARED = "undeclared"  #: a joker (``card``) goes to the lake only declared
    ONTO_ITSELF = "onto itself"  #: a pile onto itself
    TOO_FEW = "too few"  #: ``pile`` holds ``held`` cards, not ``count``
    #: ``card``, the bottom of the ``count`` cards moved from ``pile`` (which holds ``run``),
    #: does not go on ``onto``
    NO_FIT = "no fit"
    PASS_SELF = "pass self"  #: a seat passes for itself with P, not P@
    STUCK_BY_PASS = "stuck by pass"  #: ``seat`` is stuck by a pass on its behalf
    NOT_ALL_STUCK = "not all stuck"  #: a pass for ``behalf`` while ``seat`` has not passed
    NOT_THEIR_TURN = "not their turn"  #: turn-based: a pass for ``behalf`` off its turn
    NO_JOKER = "no joker"  #: the move declares a joker as ``card`` (``=5H``) and fixes none
    #: the joker ``card`` (on or from ``pile``) must be declared, as one of ``options``
    JOKER_UNSAID = "joker unsaid"
    #: ``card`` goes on the joker ``onto`` (on ``pile``) as none of the cards it could be
    JOKER_NO_FIT = "joker no fit"
    JOKER_UNDER_JOKER = "joker under joker"  #: a joker slid under the joker of ``pile``
    SLIDE_EMPTY = "slide empty"  #: a slide-under into the empty work pile ``pile``
    SLIDE_NO_SPACE = "slide no space"  #: a slide-under while no work pile is empty
    #: ``card`` (the run's top) slid under ``onto``, the base of ``pile``, which does not go on it
    SLIDE_NO_FIT = "slide no fit"
    FACE_DOWN = "face down"  #: a card of ``pile`` the move needs is not turned up yet
    OTHER = "other"  #: any other way (not listed: a move no key makes)


@dataclass(frozen=True, slots=True)
class Illegality:
    """Why a move is illegal: the way (:attr:`why`) and the values that say it.

    Attributes:
        why: the way the move is illegal.
        card: the card it concerns (the one played, or the base of the pile moved).
        needs: the card a foundation must show for :attr:`card` to go on it.
        onto: the card it does not go on.
        pile: the pile it concerns.
        run: the cards of :attr:`pile` (a work pile none of whose cards fits).
        count: the cards the move takes (or the stock holds, :attr:`Why.ROTATE_SHORT`).
        held: the cards :attr:`pile` holds.
        seat: the seat it concerns (the one not playing, stuck, or not passed).
        behalf: the seat a pass is made for.
        status: how the round ended (:class:`~p2p_nertz.rules.RoundStatus`'s value).
        options: what a joker may be declared as (:attr:`Why.JOKER_UNSAID`).
    """

    why: Why
    card: Card | None = None
    needs: Card | None = None
    onto: Card | None = None
    pile: Pile | None = None
    run: tuple[Card, ...] = ()
    count: int = 0
    held: int = 0
    seat: int | None = None
    behalf: int | None = None
    status: str = ""
    options: tuple[Card, ...] = ()


def why_illegal(table: Table, seat: int, move: Move) -> Illegality | None:
    """Why ``seat``'s ``move`` is illegal on ``table`` now, by the engine's own checks
    (:meth:`~p2p_nertz.rules.Table.play`, after the clock: a move in the air after a call
    does not count as played now); ``None``: the engine takes it.

    A move the engine would take but does not list (:meth:`~p2p_nertz.rules.Table.legal_moves`)
    is illegal by :attr:`Why.OTHER`.
    """
    try:
        table.play(seat, move, table.clock + 1)
    except IllegalMoveError as exc:
        return exc.reason if isinstance(exc.reason, Illegality) else Illegality(Why.OTHER)
    return None if move in table.legal_moves(seat) else Illegality(Why.OTHER)
