"""Moves a player makes on their own tableau and the lake, and their notation.

Notation (one move, no spaces needed; case-insensitive):

==============  ===========================================================================
``S``           turn the stock: three cards (or one) onto the waste; with the stock empty,
                turn the waste over to form a new stock (RULES.md: stock and waste)
``R``           rotate alone (a variant, once stuck): the stock's top card to its bottom
``P``           pass: declare yourself stuck (any later move withdraws it)
``P@2``         pass on seat 2's behalf: it has played no card for a long while with
                everyone else stuck (RULES.md: a player who plays nothing)
``X``           call Nerts
``N>L``         the Nerts top card to the lake (the engine picks a foundation)
``W>L@0S``      the waste top card to the lake, on the spade foundation started by seat 0
``3>L``         the exposed card of work pile 3 to the lake
``N>2``         the Nerts top card onto work pile 2 (or into it, if it is empty)
``1:3>4``       the top 3 cards of work pile 1 (a run) onto work pile 4
``N>_2``        slide the Nerts top card under work pile 2 (while some work pile is empty)
``W>L=5H``      a joker from the waste to the lake, declared as the five of hearts
``N>3=7S``      a card onto work pile 3 whose exposed joker becomes the seven of spades
==============  ===========================================================================

>>> Move.parse("1:3>4")
Move.parse('1:3>4')
>>> Move.parse("n>l").source, Move.parse("n>l").target
(Pile.NERTS, Pile.LAKE)
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from p2p_nertz.errors import NotationError
from p2p_nertz.rules.cards import Card, Suit

__all__ = ["FoundationId", "Move", "MoveKind", "Pile"]


class Pile(enum.IntEnum):
    """A place in a tableau: the Nerts pile, work piles 1–6, the waste, and the lake."""

    NERTS = 0
    W1 = 1
    W2 = 2
    W3 = 3
    W4 = 4
    W5 = 5
    W6 = 6
    WASTE = 7
    LAKE = 8

    @property
    def is_work(self) -> bool:
        """Whether this is a work pile."""
        return 1 <= self <= 6

    def __str__(self) -> str:
        return _PILE_TEXT[self]

    def __repr__(self) -> str:
        return f"Pile.{self.name}"

    @classmethod
    def work(cls, number: int) -> Pile:
        """Work pile ``number`` (1-based)."""
        if not 1 <= number <= 6:
            raise ValueError(f"work piles are numbered 1 to 6, not {number}")
        return cls(number)


_PILE_TEXT = {p: (str(p.value) if p.is_work else p.name[0]) for p in Pile}
_PILE_INPUT = {v: k for k, v in _PILE_TEXT.items()}


@dataclass(frozen=True, slots=True, repr=False)
class FoundationId:
    """A foundation in the lake, named by the ace that started it (DESIGN.md §4).

    Attributes:
        owner: the seat of the player whose ace started it.
        suit: its suit.
        joker: 0, or the joker number if a declared joker started it (so a joker ace never
            collides with the owner's real ace of that suit).

    >>> FoundationId.parse("2H")
    FoundationId.parse('2H')
    >>> str(FoundationId(owner=0, suit=Suit.SPADES, joker=1))
    '0S*1'
    """

    owner: int
    suit: Suit
    joker: int = 0

    # The lake's dicts are keyed by foundation: the dataclass's hash and equality, made
    # without a call to the suit's Enum.__hash__ (Python code) nor two tuples per
    # comparison. The same values: an Enum hashes as its name, and a suit is one object.
    def __hash__(self) -> int:
        return hash((self.owner, self.suit._name_, self.joker))

    def __eq__(self, other: object) -> bool:
        if type(other) is FoundationId:
            return (
                self.owner == other.owner and self.suit is other.suit and self.joker == other.joker
            )
        return NotImplemented

    def __str__(self) -> str:
        return f"{self.owner}{self.suit.value}" + (f"*{self.joker}" if self.joker else "")

    def __repr__(self) -> str:
        return f"FoundationId.parse({str(self)!r})"

    def sort_key(self) -> tuple[int, str, int]:
        """The total order of foundations: by owner, suit letter, joker."""
        return (self.owner, self.suit.value, self.joker)

    @classmethod
    def parse(cls, text: str) -> FoundationId:
        """Parse ``<seat><suit>[*<joker>]``, e.g. ``0S`` or ``3H*1``.

        Raises:
            NotationError: if ``text`` is not a foundation.
        """
        m = _FOUNDATION_RE.fullmatch(text.strip())
        if not m:
            hint = "expected seat then suit, e.g. 0S"
            raise NotationError(f"not a foundation: {text!r} ({hint})", hint=hint)
        return cls(int(m[1]), Suit(m[2].upper()), int(m[3] or 0))


_FOUNDATION_RE = re.compile(r"(\d)([CDHScdhs])(?:\*([12]))?")


class MoveKind(enum.Enum):
    """What kind of move a :class:`Move` is."""

    TURN = "S"
    ROTATE = "R"
    PASS = "P"
    CALL = "X"
    CARD = ">"  # a card (or a run from a work pile) to the lake or a work pile
    SLIDE = "_"  # a card slid under a work pile


# Enum members read on hot paths (every move, event or record), as plain module constants:
# Python 3.11 reads ``MoveKind.CARD`` through ``EnumType.__getattr__``, about ten times the cost
# of reading a global. Each module that defines such an enum exports its members' constants
# once, next to it (``KIND_MOVE`` in protocol.envelope, ``OUTCOME_KEPT`` in rules.lake, ...),
# and the hot paths import them; elsewhere ``MoveKind.CARD`` reads better. This is the one home
# of that explanation.
PILE_NERTS = Pile.NERTS
PILE_WASTE = Pile.WASTE
PILE_LAKE = Pile.LAKE
MOVE_TURN = MoveKind.TURN
MOVE_ROTATE = MoveKind.ROTATE
MOVE_PASS = MoveKind.PASS
MOVE_CALL = MoveKind.CALL
MOVE_CARD = MoveKind.CARD
MOVE_SLIDE = MoveKind.SLIDE


@dataclass(frozen=True, slots=True, repr=False)
class Move:
    """One move of one player. Build with the class methods or :meth:`parse`.

    Attributes:
        kind: the kind of move.
        source: for card moves, where the card comes from (Nerts, waste or a work pile).
        target: for card moves, the work pile or :attr:`Pile.LAKE`.
        count: for a run moved between work piles, how many cards from the top (default 1).
        foundation: for a lake move, the foundation; ``None`` when any fitting one will do (an
            ace always starts its own foundation).
        declare: the identity a joker takes in this move: a joker going to the lake, or an
            undeclared joker that a card is placed on (or slid under).
        behalf: for a pass, the seat it is made for, when not the mover's own (a pass on the
            behalf of a player who plays nothing: :meth:`pass_for`); ``None`` otherwise.
    """

    kind: MoveKind
    source: Pile | None = None
    target: Pile | None = None
    count: int = 1
    foundation: FoundationId | None = None
    declare: Card | None = None
    behalf: int | None = None

    # -- constructors ---------------------------------------------------------------------
    @classmethod
    def turn(cls) -> Move:
        """Turn the stock (or turn the waste over when the stock is empty)."""
        return _TURN

    @classmethod
    def rotate(cls) -> Move:
        """Rotate alone: the stock's top card to its bottom (the rotate-alone variant)."""
        return _ROTATE

    @classmethod
    def pass_(cls) -> Move:
        """Declare yourself stuck."""
        return _PASS

    @classmethod
    def pass_for(cls, seat: int) -> Move:
        """Declare ``seat`` stuck on its behalf: it has played no card for a long while with
        everyone else stuck (RULES.md: a player who plays nothing; the table says when it
        counts, :meth:`~p2p_nertz.rules.Table.play`).

        >>> Move.pass_for(2)
        Move.parse('P@2')
        """
        if not 0 <= seat <= 9:
            raise ValueError(f"a seat is 0 to 9, not {seat}")
        return cls(MoveKind.PASS, behalf=seat)

    @classmethod
    def call(cls) -> Move:
        """Call Nerts."""
        return _CALL

    @classmethod
    def to_lake(
        cls, source: Pile, foundation: FoundationId | None = None, declare: Card | None = None
    ) -> Move:
        """A card from ``source`` to the lake."""
        return cls(MoveKind.CARD, source, Pile.LAKE, 1, foundation, declare)

    @classmethod
    def to_pile(
        cls, source: Pile, target: Pile, count: int = 1, declare: Card | None = None
    ) -> Move:
        """A card (or the top ``count`` cards of a work pile) onto work pile ``target``."""
        return cls(MoveKind.CARD, source, target, count, None, declare)

    @classmethod
    def slide(cls, source: Pile, target: Pile, count: int = 1, declare: Card | None = None) -> Move:
        """Slide a card (or a run) under work pile ``target`` (RULES.md: slide-under)."""
        return cls(MoveKind.SLIDE, source, target, count, None, declare)

    # -- properties -----------------------------------------------------------------------
    @property
    def plays_card(self) -> bool:
        """Whether the move moves a card (as opposed to stock handling, passing, calling)."""
        kind = self.kind
        return kind is MOVE_CARD or kind is MOVE_SLIDE

    @property
    def is_lake(self) -> bool:
        """Whether the move plays a card to the lake."""
        return self.target is PILE_LAKE

    # -- notation -------------------------------------------------------------------------
    def __str__(self) -> str:
        kind = self.kind
        if not self.plays_card:
            return kind.value if self.behalf is None else f"{kind.value}@{self.behalf}"
        assert self.source is not None and self.target is not None
        text = str(self.source)
        if self.count != 1:
            text += f":{self.count}"
        text += ">_" if kind is MoveKind.SLIDE else ">"
        text += str(self.target)
        if self.foundation is not None:
            text += f"@{self.foundation}"
        if self.declare is not None:
            text += f"={_declared_text(self.declare)}"
        return text

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Move:
        """Parse a move from its notation (see the module docstring).

        Raises:
            NotationError: if ``text`` is not a move.
        """
        raw = text.strip().upper()
        simple = _SIMPLE.get(raw)
        if simple is not None:
            return simple
        behalf = _BEHALF_RE.fullmatch(raw)
        if behalf:
            return cls.pass_for(int(behalf[1]))
        m = _MOVE_RE.fullmatch(raw)
        if not m:
            raise _not_a_move(text, "e.g. S, R, P, P@1, X, N>L, W>3, 1:2>4, N>_2, W>L@0S, W>L=5H")
        source = _PILE_INPUT[m["src"]]
        target = _PILE_INPUT[m["dst"]]
        count = int(m["count"] or 1)
        slide = bool(m["slide"])
        if source is Pile.LAKE:
            raise _not_a_move(text, "cards never leave the lake")
        if count < 1 or (count > 1 and not source.is_work):
            raise _not_a_move(text, "only a work pile moves several cards")
        if target is Pile.LAKE and (count != 1 or slide):
            raise _not_a_move(text, "one card at a time goes to the lake")
        if target in (Pile.NERTS, Pile.WASTE):
            raise _not_a_move(text, "cards never go to the Nerts pile or waste")
        if m["found"] and target is not Pile.LAKE:
            raise _not_a_move(text, "only a lake move names a foundation")
        foundation = FoundationId.parse(m["found"]) if m["found"] else None
        declare = None
        if m["decl"]:
            base = Card.parse(m["decl"])
            if base.is_joker:
                raise _not_a_move(text, "declare a joker as a standard card")
            declare = base
        kind = MoveKind.SLIDE if slide else MoveKind.CARD
        return cls(kind, source, target, count, foundation, declare)


def _declared_text(card: Card) -> str:
    # A declaration is written as the standard card it stands for.
    text = str(card)
    return text.partition("=")[2] if card.is_joker else text


_TURN = Move(MoveKind.TURN)
_ROTATE = Move(MoveKind.ROTATE)
_PASS = Move(MoveKind.PASS)
_CALL = Move(MoveKind.CALL)
_SIMPLE = {"S": _TURN, "R": _ROTATE, "P": _PASS, "X": _CALL}
_BEHALF_RE = re.compile(r"P@(\d)")
_MOVE_RE = re.compile(
    r"(?P<src>[NW1-6])(?::(?P<count>\d{1,2}))?>(?P<slide>_)?(?P<dst>[L1-6NW])"
    r"(?:@(?P<found>\d[CDHS](?:\*[12])?))?(?:=(?P<decl>(?:10|[2-9AJQKT])[CDHS]))?"
)


def _not_a_move(text: str, hint: str) -> NotationError:
    """``text`` is not a move: ``hint`` says what it should be."""
    return NotationError(f"not a move: {text!r} ({hint})", hint=hint)
