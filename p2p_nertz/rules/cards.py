"""Cards, suits and decks, with their text notation.

A card is written rank then suit: ``AS``, ``10H``, ``QD``, ``2C`` (ranks ``A 2..10 J Q K``, suits
``C D H S``; the symbols ``♣ ♦ ♥ ♠`` and ``T`` for ten are accepted on input). A joker is ``JK1`` or
``JK2`` while undeclared and ``JK1=5H`` once declared as the five of hearts (RULES.md: jokers).

Card values are interned: ``Card.parse("5H") is Card(5, Suit.HEARTS)`` is not promised, but
equality and hashing are by value and the 52 standard cards plus the jokers are pre-built, so the
engine never allocates a card while playing.

>>> Card.parse("10H")
Card.parse('10H')
>>> Card.parse("QS").rank, Card.parse("QS").suit
(12, Suit.SPADES)
>>> Card.parse("JK1=5H").joker, Card.parse("JK1=5H").declared
(1, True)
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from p2p_nertz.errors import NotationError

__all__ = [
    "HIDDEN",
    "RANK_NAMES",
    "SUITS",
    "Card",
    "Suit",
    "card",
    "format_cards",
    "is_unknown",
    "new_deck",
    "opened_pile",
    "parse_cards",
    "sealed",
    "sealed_position",
    "shuffled_deck",
]


class Suit(enum.Enum):
    """The four suits; the value is the one-letter notation."""

    CLUBS = "C"
    DIAMONDS = "D"
    HEARTS = "H"
    SPADES = "S"

    @property
    def is_red(self) -> bool:
        """Whether the suit is red (diamonds, hearts)."""
        return self is Suit.DIAMONDS or self is Suit.HEARTS

    @property
    def symbol(self) -> str:
        """The suit symbol, for display: ``♣ ♦ ♥ ♠``."""
        return _SYMBOLS[self]

    def __repr__(self) -> str:
        return f"Suit.{self.name}"


_SYMBOLS = {Suit.CLUBS: "♣", Suit.DIAMONDS: "♦", Suit.HEARTS: "♥", Suit.SPADES: "♠"}
_SUIT_INPUT = {s.value: s for s in Suit} | {sym: s for s, sym in _SYMBOLS.items()}
_SUIT_INPUT |= {k.lower(): v for k, v in _SUIT_INPUT.items()}
#: Suits in their canonical order (used wherever the engine must order by suit).
SUITS: tuple[Suit, ...] = (Suit.CLUBS, Suit.DIAMONDS, Suit.HEARTS, Suit.SPADES)
_SUIT_INDEX = {s: i for i, s in enumerate(SUITS)}
_SUIT_CODES = {s.value: i for i, s in enumerate(SUITS)}


def card_code(suit: Suit, rank: int) -> int:
    """The :attr:`Card.code` of ``rank`` of ``suit``."""
    return _SUIT_CODES[suit.value] * 16 + rank


#: Rank notation, index = rank (0 unused: an undeclared joker has no rank).
RANK_NAMES: tuple[str, ...] = ("", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
_RANK_INPUT = {name: r for r, name in enumerate(RANK_NAMES) if name} | {"T": 10, "1": 1}
_RANK_INPUT |= {k.lower(): v for k, v in _RANK_INPUT.items()}

MAX_JOKERS = 2
#: The most cards a deck holds (52 and two jokers).
MAX_DECK_SIZE = 54


@dataclass(frozen=True, slots=True, repr=False)
class Card:
    """One physical card of one player's deck.

    Attributes:
        rank: 1 (Ace) to 13 (King); 0 for an undeclared joker.
        suit: the suit; ``None`` for an undeclared joker.
        joker: 0 for a standard card, else the joker's number (1 or 2) in its deck. A joker
            with a rank and suit is a *declared* joker: it plays as that card from then on.
    """

    rank: int
    suit: Suit | None
    joker: int = 0
    #: Precomputed for the engine's hot paths: colour, and ``suit_index * 16 + rank`` (0 for
    #: an undeclared joker) as a cheap dictionary key.
    red: bool = field(init=False, repr=False, compare=False)
    code: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        suit = self.suit
        object.__setattr__(self, "red", suit is Suit.HEARTS or suit is Suit.DIAMONDS)
        object.__setattr__(
            self, "code", 0 if suit is None else _SUIT_CODES[suit.value] * 16 + self.rank
        )
        if self.joker:
            if not 1 <= self.joker <= MAX_JOKERS:
                raise ValueError(f"joker number must be 1..{MAX_JOKERS}, got {self.joker}")
            if (self.rank == 0) != (self.suit is None) or not 0 <= self.rank <= 13:
                raise ValueError(
                    "a joker is either undeclared (no rank, no suit) or fully declared"
                )
        elif self.suit is None or not 1 <= self.rank <= 13:
            raise ValueError(f"not a card: rank={self.rank!r} suit={self.suit!r}")

    # -- identity -------------------------------------------------------------------------
    @property
    def is_joker(self) -> bool:
        """Whether this physical card is a joker (declared or not)."""
        return self.joker != 0

    @property
    def declared(self) -> bool:
        """Whether the card has a rank and suit (always true for standard cards)."""
        return self.suit is not None

    @property
    def physical(self) -> Card:
        """The physical card: a declared joker's undeclared self; a standard card itself.

        Conservation (each deck's cards are somewhere exactly once) counts physical cards.
        """
        if self.joker and self.suit is not None:
            return _JOKERS[self.joker]
        return self

    @property
    def is_red(self) -> bool:
        """Whether the card is red; ``False`` for an undeclared joker (check ``declared``)."""
        return self.red

    def declare(self, rank: int, suit: Suit) -> Card:
        """Return this joker declared as ``rank`` of ``suit``.

        Raises:
            ValueError: if this card is not an undeclared joker.
        """
        if not self.joker or self.suit is not None:
            raise ValueError(f"only an undeclared joker can be declared, not {self}")
        return Card(rank, suit, self.joker)

    def __hash__(self) -> int:
        # What equality compares (rank, suit, joker), as one small int: ``code`` is the suit
        # and rank. The dataclass's hash of the three fields called the suit's Enum.__hash__
        # (Python code) each time; the fold hashes a card for every card a move shows, and
        # the audit folds every move (issue 18). Equal cards have equal codes and jokers.
        return self.code << 2 | self.joker

    def sort_key(self) -> tuple[int, int, int]:
        """A total order on cards: jokers last, then suit order C D H S, then rank."""
        suit_index = -1 if self.suit is None else _SUIT_INDEX[self.suit]
        return (self.joker, suit_index, self.rank)

    # -- notation -------------------------------------------------------------------------
    def __str__(self) -> str:
        if self.rank == 0 and not self.joker:
            return "??"
        if self.joker:
            if self.suit is None:
                return f"JK{self.joker}"
            return f"JK{self.joker}={RANK_NAMES[self.rank]}{self.suit.value}"
        assert self.suit is not None
        return RANK_NAMES[self.rank] + self.suit.value

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    def pretty(self, *, symbols: bool = True) -> str:
        """The card for display: ``10♥`` (or ``10H`` with ``symbols=False``)."""
        if not symbols or self.suit is None:
            return str(self)
        text = RANK_NAMES[self.rank] + self.suit.symbol
        return f"JK{self.joker}={text}" if self.joker else text

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse a card from its notation (``10H``, ``QS``, ``JK1``, ``JK2=AS``).

        Raises:
            NotationError: if ``text`` is not a card.
        """
        card = _PARSE_CACHE.get(text)
        if card is not None:
            return card
        raw = text.strip()
        if raw.upper().startswith("JK"):
            head, sep, decl = raw.partition("=")
            number = head[2:]
            if number not in ("1", "2"):
                hint = "jokers are JK1 and JK2"
                raise NotationError(f"not a card: {text!r} ({hint})", hint=hint)
            joker = _JOKERS[int(number)]
            if not sep:
                return joker
            base = _parse_standard(decl, text)
            return Card(base.rank, base.suit, joker.joker)
        return _parse_standard(raw, text)


def _parse_standard(raw: str, original: str) -> Card:
    if len(raw) < 2 or raw[-1] not in _SUIT_INPUT or raw[:-1] not in _RANK_INPUT:
        hint = "expected rank A 2-10 J Q K then suit C D H S, e.g. 10H"
        raise NotationError(f"not a card: {original!r} ({hint})", hint=hint)
    return _STANDARD[(_RANK_INPUT[raw[:-1]], _SUIT_INPUT[raw[-1]])]


_STANDARD: dict[tuple[int, Suit], Card] = {
    (rank, suit): Card(rank, suit) for suit in SUITS for rank in range(1, 14)
}
_JOKERS: dict[int, Card] = {n: Card(0, None, n) for n in range(1, MAX_JOKERS + 1)}
_PARSE_CACHE: dict[str, Card] = {str(c): c for c in _STANDARD.values()} | {
    str(j): j for j in _JOKERS.values()
}


def hidden_card() -> Card:
    """A new card that is no card: no rank, no suit, no joker (what :data:`HIDDEN` is; a
    face-down place of a :class:`~p2p_nertz.rules.covered.CoveredPile` is another).

    The constructor refuses such a card, so it is made as an undeclared joker (rank 0, no
    suit, ``red`` and ``code`` already those of no card) and its joker number then taken off.
    Through the constructor, not ``object.__new__(Card)``: compiled (mypyc), a card is made
    only through it (session 42).

    >>> hidden_card() == HIDDEN, hidden_card() is HIDDEN, str(hidden_card())
    (True, False, '??')
    """
    hidden = Card(0, None, 1)
    object.__setattr__(hidden, "joker", 0)
    return hidden


#: A face-down card whose identity this peer does not know: an opponent's stock or Nerts pile
#: as everyone else sees it (DESIGN.md §5.3: moves reveal the cards they turn face up). It is
#: written ``??`` and never moves to a place where its identity would matter.
HIDDEN: Card = hidden_card()
_PARSE_CACHE["??"] = HIDDEN


class _Sealed(Card):
    """A face-down card of a shuffled deck nobody can read (docs/shuffle.md §10.2): no card
    yet, but it knows its place in its owner's deck, ``position``, so that the table can open
    it where it lies once the members' shares give its card. Written ``??`` like
    :data:`HIDDEN`; two sealed cards are equal only at the same position. Built by
    :func:`sealed` only."""

    __slots__ = ("position",)
    position: int

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, _Sealed) and other.position == self.position)

    def __hash__(self) -> int:
        return hash(("sealed", self.position))

    def __repr__(self) -> str:
        return f"sealed({self.position})"


def _sealed_card(position: int) -> _Sealed:
    card = _Sealed(0, None, 1)  # (made as hidden_card() makes no card: its docstring)
    object.__setattr__(card, "joker", 0)
    object.__setattr__(card, "position", position)
    return card


_SEALED: tuple[_Sealed, ...] = tuple(_sealed_card(p) for p in range(MAX_DECK_SIZE))


def sealed(position: int) -> Card:
    """The sealed card at ``position`` of a deck (0 is the bottom, the last the top): a
    face-down card of a shuffle game, known to nobody until its shares open it.

    >>> sealed(51), str(sealed(51)), sealed(51) == sealed(3), is_unknown(sealed(3))
    (sealed(51), '??', False, True)
    """
    if not 0 <= position < MAX_DECK_SIZE:
        raise ValueError(f"a deck position is 0..{MAX_DECK_SIZE - 1}, not {position}")
    return _SEALED[position]


def sealed_position(card: Card) -> int | None:
    """The deck position of a sealed card, ``None`` for any other card.

    >>> sealed_position(sealed(7)), sealed_position(Card.parse("7H")), sealed_position(HIDDEN)
    (7, None, None)
    """
    return card.position if isinstance(card, _Sealed) else None


def opened_pile(pile: tuple[Card, ...], cards: Mapping[int, Card]) -> tuple[Card, ...]:
    """``pile`` with each sealed card whose position ``cards`` maps put in its place;
    ``pile`` itself where none is (a peer's held view opens its tableaux at every look: one
    loop, no call a card).

    >>> opened_pile((Card.parse("AS"), sealed(3), sealed(4)), {3: Card.parse("5H")})
    (Card.parse('AS'), Card.parse('5H'), sealed(4))
    """
    new: list[Card] | None = None
    for k, card in enumerate(pile):
        if isinstance(card, _Sealed) and (got := cards.get(card.position)) is not None:
            if new is None:
                new = list(pile)
            new[k] = got
    return pile if new is None else tuple(new)


def is_unknown(card: Card) -> bool:
    """Whether ``card`` is face down to this machine (:data:`HIDDEN` or sealed): no card to
    play, claim or build on (RULES.md: a card not turned up yet cannot be played).

    >>> is_unknown(HIDDEN), is_unknown(Card.parse("JK1")), is_unknown(Card.parse("AS"))
    (True, False, False)
    """
    return not (card.rank or card.joker)


def card(rank: int, suit: Suit) -> Card:
    """The interned standard card of ``rank`` and ``suit``."""
    return _STANDARD[(rank, suit)]


def new_deck(jokers: int = 0) -> tuple[Card, ...]:
    """One player's deck in a fixed, canonical order: C, D, H, S from Ace to King, then jokers.

    >>> len(new_deck()), len(new_deck(jokers=2))
    (52, 54)
    """
    if not 0 <= jokers <= MAX_JOKERS:
        raise ValueError(f"a deck holds 0..{MAX_JOKERS} jokers, not {jokers}")
    return _DECKS[jokers]


#: The deck with each number of jokers, made once: new_deck is asked for one per shuffle
#: (each seat's deck of each round, in the fold and the audit), and a deck is immutable.
_DECKS: tuple[tuple[Card, ...], ...] = tuple(
    tuple(_STANDARD[(r, s)] for s in SUITS for r in range(1, 14))
    + tuple(_JOKERS[n] for n in range(1, jokers + 1))
    for jokers in range(MAX_JOKERS + 1)
)


class _HashStream:
    """A deterministic stream of integers from SHAKE-256 of a seed (no global randomness)."""

    __slots__ = ("_buffer", "_pos")

    def __init__(self, seed: bytes, length: int) -> None:
        self._buffer = hashlib.shake_256(b"p2p-nertz/shuffle\0" + seed).digest(length)
        self._pos = 0

    def below(self, bound: int) -> int:
        """A uniform integer in ``[0, bound)`` for ``bound <= 2**16`` (rejection sampling)."""
        limit = 65536 - 65536 % bound
        while True:
            if self._pos + 2 > len(self._buffer):
                # Extremely unlikely (rejections are rare); extend deterministically.
                self._buffer += hashlib.shake_256(self._buffer).digest(256)
            value = int.from_bytes(self._buffer[self._pos : self._pos + 2], "big")
            self._pos += 2
            if value < limit:
                return value % bound


def shuffled_deck(seed: bytes, jokers: int = 0) -> tuple[Card, ...]:
    """One player's deck shuffled from ``seed``: the same seed gives the same order everywhere.

    Fisher–Yates driven by SHAKE-256 of the seed, so the order depends on nothing but the seed
    bytes (no Python version or platform dependence). The deck is dealt from the *end* of the
    tuple (the last card is the top of the face-down deck).

    >>> shuffled_deck(b"seed") == shuffled_deck(b"seed")
    True
    >>> sorted(shuffled_deck(b"seed"), key=Card.sort_key) == list(new_deck())
    True
    """
    cards = list(new_deck(jokers))
    stream = _HashStream(seed, 4 * len(cards))
    for i in range(len(cards) - 1, 0, -1):
        j = stream.below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return tuple(cards)


def parse_cards(text: str) -> tuple[Card, ...]:
    """Parse a space- or comma-separated list of cards; ``-`` or empty text is no card.

    >>> parse_cards("AS 2H, 10C")
    (Card.parse('AS'), Card.parse('2H'), Card.parse('10C'))
    """
    words = text.replace(",", " ").split()
    if words == ["-"]:
        return ()
    return tuple(Card.parse(w) for w in words)


def format_cards(cards: Iterable[Card]) -> str:
    """The notation of a list of cards, space separated; ``-`` for none (``??`` face down)."""
    # A tuple's places through tuple's own iterator: a covered pile's face-down places are
    # then written ``??`` without being read (rules/covered.py, whose str() this is).
    places = tuple.__iter__(cards) if isinstance(cards, tuple) else cards
    return " ".join(str(c) for c in places) or "-"
