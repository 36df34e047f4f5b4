"""One player's layout: Nerts pile, work piles, stock and waste, and the moves on them.

Every pile is a tuple from bottom to top; the top (last) card is the one in play: the Nerts top
card, the waste top card, and the *exposed* card of each work pile (RULES.md: work piles). A
tableau is an immutable value: every move returns a new one, and an illegal move raises
:class:`~p2p_nertz.errors.IllegalMoveError` and changes nothing.

Notation: the parts separated by ``|`` (or newlines), each ``<name>: <cards bottom..top>``, with
``-`` for an empty pile::

    N: 4C 9D KS | 1: QH JS | 2: - | 3: 5D | 4: 8C | S: 2C 7H | W: -

>>> t = Tableau.parse("N: 4C KS | 1: QH JS | 2: - | 3: 5D | 4: 8C | S: 2C 7H 9S 3D | W: -")
>>> t.top(Pile.NERTS)
Card.parse('KS')
>>> print(t.apply(Move.parse("S")))
N: 4C KS | 1: QH JS | 2: - | 3: 5D | 4: 8C | S: 2C | W: 3D 9S 7H
>>> print(t.apply(Move.parse("N>_1")))
N: 4C | 1: KS QH JS | 2: - | 3: 5D | 4: 8C | S: 2C 7H 9S 3D | W: -
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from p2p_nertz.errors import IllegalMoveError, NotationError
from p2p_nertz.rules.cards import (
    HIDDEN,
    SUITS,
    Card,
    format_cards,
    is_unknown,
    opened_pile,
    parse_cards,
    sealed,
    sealed_position,
)
from p2p_nertz.rules.config import NERTS_PILE_SIZE, Rules
from p2p_nertz.rules.covered import CoveredPile
from p2p_nertz.rules.moves import (
    MOVE_CALL,
    MOVE_PASS,
    MOVE_ROTATE,
    MOVE_SLIDE,
    MOVE_TURN,
    PILE_LAKE,
    PILE_NERTS,
    PILE_WASTE,
    Move,
    Pile,
)
from p2p_nertz.rules.reasons import Illegality, Why
from p2p_nertz.slots import quick_init

__all__ = ["Tableau", "fits_on", "joker_options_on", "joker_options_under"]


def fits_on(card: Card, base: Card) -> bool:
    """Whether ``card`` may be built on ``base`` in a work pile: one rank lower, other colour.

    An undeclared joker fits on any card it could stand below (``base`` not an ace); nothing
    fits on an undeclared joker without declaring it (see :func:`joker_options_on`).

    >>> fits_on(Card.parse("6H"), Card.parse("7S")), fits_on(Card.parse("6H"), Card.parse("7D"))
    (True, False)
    """
    if base.suit is None:
        return False
    if card.suit is None:
        return base.rank >= 2
    return card.rank == base.rank - 1 and card.red != base.red


def joker_options_on(card: Card, below: Card | None) -> tuple[Card, ...]:
    """The identities an undeclared joker may take when ``card`` is placed on it.

    The joker becomes one rank above ``card`` in the other colour, and must still fit on the
    card ``below`` it, if any (RULES.md: jokers — fixed once a card is played on them).
    """
    if card.suit is None or card.rank >= 13:
        return ()
    options = []
    for suit in SUITS:
        if suit.is_red == card.suit.is_red:
            continue
        candidate = Card(card.rank + 1, suit)
        if below is None or fits_on(candidate, below):
            options.append(candidate)
    return tuple(options)


def joker_options_under(base: Card) -> tuple[Card, ...]:
    """The identities an undeclared joker may take when slid under ``base``."""
    if base.suit is None or base.rank >= 13:
        return ()
    return tuple(Card(base.rank + 1, suit) for suit in SUITS if suit.is_red != base.suit.is_red)


@quick_init
@dataclass(frozen=True, slots=True, repr=False)
class Tableau:
    """One player's layout (RULES.md: deal).

    Attributes:
        nerts: the Nerts pile, bottom to top; only the top card is face up.
        work: the work piles, each bottom to top; the last card is exposed.
        stock: the face-down stock, bottom to top (the last card is turned first).
        waste: the face-up waste, bottom to top (the last card is playable).
    """

    nerts: tuple[Card, ...]
    work: tuple[tuple[Card, ...], ...]
    stock: tuple[Card, ...]
    waste: tuple[Card, ...]

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def deal(cls, deck: Sequence[Card], rules: Rules | None = None) -> Tableau:
        """Deal a shuffled deck (last card on top): 13 to the Nerts pile, one to each work
        pile, the rest to the stock (RULES.md: deal).

        Raises:
            ValueError: if the deck does not have ``rules.deck_size`` cards.
        """
        rules = rules or Rules()
        if len(deck) != rules.deck_size:
            raise ValueError(
                f"a deck under these rules has {rules.deck_size} cards, not {len(deck)}"
            )
        order = tuple(reversed(deck))  # order[0] is the top of the deck, dealt first
        n = NERTS_PILE_SIZE
        nerts = order[:n]
        work = tuple((c,) for c in order[n : n + rules.work_piles])
        stock = tuple(reversed(order[n + rules.work_piles :]))
        return cls(nerts, work, stock, ())

    @classmethod
    def followed(cls, shown: Sequence[Card], rules: Rules) -> Tableau:
        """A seat's dealt tableau as the other seats follow it: the cards its deal shows
        (:attr:`shown`) face up, every other card :data:`~p2p_nertz.rules.cards.HIDDEN`.

        >>> t = Tableau.followed(parse_cards("KS 2D 2H 4D 4H"), Rules())
        >>> " ".join(map(str, t.shown)), len(t.nerts), len(t.stock)
        ('KS 2D 2H 4D 4H', 13, 35)
        """
        top, *work = shown
        return cls(
            (HIDDEN,) * (NERTS_PILE_SIZE - 1) + (top,),
            tuple((c,) for c in work),
            (HIDDEN,) * rules.stock_size,
            (),
        )

    @classmethod
    def sealed(cls, rules: Rules) -> Tableau:
        """A shuffled deck nobody can read, dealt (docs/shuffle.md §4.4): every card the
        :func:`~p2p_nertz.rules.cards.sealed` card of its deck position, dealt as
        :meth:`deal` deals a deck (the last position on top).

        >>> t = Tableau.sealed(Rules())
        >>> t.shown[0], t.nerts[0], t.stock[-1], t.stock[0]
        (sealed(39), sealed(51), sealed(34), sealed(0))
        """
        return cls.deal([sealed(p) for p in range(rules.deck_size)], rules)

    def opened(self, face_down: Card, card: Card) -> Tableau:
        """This tableau with ``card`` in place of the sealed card ``face_down``, wherever it
        lies now (the members' shares opened it: docs/shuffle.md §10.2); unchanged if it is
        not here.

        >>> t = Tableau.sealed(Rules()).opened(sealed(39), Card.parse("5H"))
        >>> t.nerts[-1], t.nerts[-2]
        (Card.parse('5H'), sealed(40))
        """
        position = sealed_position(face_down)
        return self if position is None else self.opened_at({position: card})

    def opened_at(self, cards: Mapping[int, Card]) -> Tableau:
        """:meth:`opened` for many cards at once, by deck position, in one pass over the piles
        (a peer's held view opens every card its share store holds at each look).

        >>> t = Tableau.sealed(Rules()).opened_at({39: Card.parse("5H"), 0: Card.parse("AS")})
        >>> t.nerts[-1], t.stock[0], t.opened_at({}) is t
        (Card.parse('5H'), Card.parse('AS'), True)
        """
        if not cards:
            return self
        nerts, stock, waste = (opened_pile(p, cards) for p in (self.nerts, self.stock, self.waste))
        work = tuple(opened_pile(p, cards) for p in self.work)
        if (nerts, work, stock, waste) == (self.nerts, self.work, self.stock, self.waste):
            return self
        return Tableau(nerts, work, stock, waste)

    def face_up(self) -> Tableau:
        """The tableau as a person at the table sees it, its owner included: the work piles
        (face up, fanned), the Nerts top card and the waste top card; the rest of the Nerts
        pile and of the waste, and the whole stock, are face down or squared under the top
        (RULES.md: deal; stock and waste: "only the waste top card is playable" and nothing
        lets a player look under it). Those piles are :class:`~p2p_nertz.rules.covered.CoveredPile`
        values: their counts read as usual, their hidden cards raise
        :class:`~p2p_nertz.errors.FaceDownError`. What a player remembers of the cards it saw
        is its own memory (a bot's), not the view's.

        >>> t = Tableau.parse("N: 4C KS | 1: QH JS | 2: - | 3: 5D | 4: 8C | S: 2C 7H | W: 9S 3D")
        >>> print(t.face_up())
        N: ?? KS | 1: QH JS | 2: - | 3: 5D | 4: 8C | S: ?? ?? | W: ?? 3D
        >>> t.face_up().stock[-1]
        Traceback (most recent call last):
          ...
        p2p_nertz.errors.FaceDownError: card 2 of 2 of the stock (bottom up) is face down
        """
        kept = _VIEWS.get(id(self))
        if kept is not None and kept[0] is self:
            return kept[1]
        nerts, stock, waste = self.nerts, self.stock, self.waste
        view = Tableau(
            CoveredPile("Nerts pile", len(nerts), nerts[-1] if nerts else None),
            self.work,  # the same tuple: memos keyed by its identity stay warm
            CoveredPile("stock", len(stock)),
            CoveredPile("waste", len(waste), waste[-1] if waste else None),
        )
        if len(_VIEWS) >= _VIEWS_SIZE:
            del _VIEWS[next(iter(_VIEWS))]
        _VIEWS[id(self)] = (self, view)
        return view

    # -- queries --------------------------------------------------------------------------
    @property
    def shown(self) -> tuple[Card, ...]:
        """The cards a deal shows face up: the Nerts top card, then each work pile's card, in
        pile order (what a seat publishes in its ``ready``; RULES.md: deal). Only meaningful on
        a tableau as dealt.

        >>> deal = Tableau.parse("N: 4C KS | 1: QH | 2: 2D | 3: 5D | 4: 8C | S: 2C 7H | W: -")
        >>> " ".join(map(str, deal.shown))
        'KS QH 2D 5D 8C'
        """
        return (self.nerts[-1], *(p[-1] for p in self.work))

    def reveals(self, move: Move, rules: Rules | None = None) -> tuple[Card, ...]:
        """The cards that ``move`` turns face up here, in the order they land: a stock turn
        shows the cards it turns (the top of the stock first, as they land on the waste); a
        move that takes the Nerts top card shows the card under it; no other move shows one.

        A signed move carries these cards (its ``reveals``): the one rule of what they are, for
        the player who signs, the fold that checks, and the replay against the deck.

        >>> t = Tableau.parse("N: 4C KS | 1: QH JS | 2: - | 3: 5D | 4: 8C | S: 2C 7H 9S 3D | W: -")
        >>> t.reveals(Move.parse("S")), t.reveals(Move.parse("N>_1")), t.reveals(Move.parse("3>1"))
        ((Card.parse('3D'), Card.parse('9S'), Card.parse('7H')), (Card.parse('4C'),), ())
        """
        if move.kind is MOVE_TURN:
            stock = self.stock
            if stock:
                k = 3 if rules is None else rules.draw
                if k > len(stock):  # noqa: PLR1730  (no min() call, as in _turn)
                    k = len(stock)
                return stock[: -k - 1 : -1]  # landing order: the top k, reversed
            return ()
        if move.source is PILE_NERTS and move.plays_card and len(self.nerts) >= 2:
            return self.nerts[-2:-1]
        return ()

    def top(self, pile: Pile) -> Card | None:
        """The card in play on ``pile``: Nerts top, waste top or exposed card (or ``None``)."""
        if pile is PILE_NERTS:
            cards = self.nerts
        elif pile is PILE_WASTE:
            cards = self.waste
        else:
            cards = self._work_pile(pile)
        return cards[-1] if cards else None

    def pile(self, pile: Pile) -> tuple[Card, ...]:
        """The cards of a pile, bottom to top (Nerts, waste or a work pile)."""
        if pile is PILE_NERTS:
            return self.nerts
        if pile is PILE_WASTE:
            return self.waste
        return self._work_pile(pile)

    def _work_pile(self, pile: Pile) -> tuple[Card, ...]:
        index = pile - 1
        if not 0 <= index < len(self.work):
            raise _illegal(
                f"there is no work pile {pile} (this tableau has {len(self.work)})",
                Why.NO_WORK_PILE,
                pile=pile,
            )
        return self.work[index]

    @property
    def work_piles(self) -> tuple[Pile, ...]:
        """The work piles of this tableau, as :class:`Pile` values."""
        n = len(self.work)
        return _WORK_PILES_OF[n] if n <= 6 else _WORK_PILES  # (made once, not sliced anew)

    def has_empty_work_pile(self) -> bool:
        """Whether some work pile is empty (slide-under is possible)."""
        return any(not p for p in self.work)

    def cards(self) -> Iterator[Card]:
        """Every card in the tableau: Nerts, work piles, stock, waste."""
        yield from self.nerts
        for p in self.work:
            yield from p
        yield from self.stock
        yield from self.waste

    def __len__(self) -> int:
        return len(self.nerts) + sum(map(len, self.work)) + len(self.stock) + len(self.waste)

    # -- taking and returning cards (for the lake) ----------------------------------------
    def take(self, source: Pile) -> tuple[Card, Tableau]:
        """Take the top card of ``source`` (it goes to the lake): the card and the new tableau.

        Raises:
            IllegalMoveError: if ``source`` is empty or not a pile cards leave from.
        """
        if source is PILE_NERTS:
            if not self.nerts:
                raise _illegal(f"the Nerts pile is empty in {self}", Why.EMPTY, pile=source)
            return self.nerts[-1], Tableau(self.nerts[:-1], self.work, self.stock, self.waste)
        if source is PILE_WASTE:
            if not self.waste:
                raise _illegal(f"the waste is empty in {self}", Why.EMPTY, pile=source)
            return self.waste[-1], Tableau(self.nerts, self.work, self.stock, self.waste[:-1])
        if not source.is_work:
            raise IllegalMoveError(f"cards cannot be taken from {source!r}")
        cards = self._work_pile(source)
        if not cards:
            raise _illegal(f"work pile {source} is empty in {self}", Why.EMPTY, pile=source)
        work = list(self.work)
        work[source - 1] = cards[:-1]
        return cards[-1], Tableau(self.nerts, tuple(work), self.stock, self.waste)

    def restore(self, source: Pile, card: Card) -> Tableau:
        """Put a card back on top of ``source``: a lost race returns the card where it was."""
        if source is Pile.NERTS:
            return Tableau(self.nerts + (card,), self.work, self.stock, self.waste)  # noqa: RUF005 - + keeps a view covered
        if source is Pile.WASTE:
            return Tableau(self.nerts, self.work, self.stock, self.waste + (card,))  # noqa: RUF005
        work = list(self.work)
        work[source - 1] = (*self._work_pile(source), card)
        return Tableau(self.nerts, tuple(work), self.stock, self.waste)

    # -- moves on the tableau -------------------------------------------------------------
    def apply(self, move: Move, rules: Rules | None = None) -> Tableau:
        """The tableau after a move that stays on it (stock, rotation, work-pile moves).

        Lake moves go through :meth:`take` (the lake decides whether the card stays); passing
        and calling do not change the tableau.

        Raises:
            IllegalMoveError: if the move is illegal here; nothing changes.
        """
        kind = move.kind
        if kind is MOVE_TURN:
            return self._turn(3 if rules is None else rules.draw, move)
        if kind is MOVE_ROTATE:
            # A player's own R is the rotate-alone variant; everyone-stuck rotations are no
            # player's move (Table rotates every tableau with rotated()).
            return self.rotated_alone()
        if kind is MOVE_PASS or kind is MOVE_CALL:
            return self
        if move.target is PILE_LAKE:
            raise IllegalMoveError(f"{move} plays to the lake: use Table.play (in {self})")
        return self._move_cards(move)

    def _turn(self, draw: int, move: Move) -> Tableau:
        if self.stock:
            # RULES.md: three at a time keeping their order; one or two left go as they are.
            n = len(self.stock)
            # (No min() call: Python 3.11's parses its keywords, ~2,000 instructions a call.)
            if draw < n:  # noqa: PLR1730
                n = draw
            stock = self.stock
            # The top n land on the waste one by one: reversed (one slice, not two).
            return Tableau(self.nerts, self.work, stock[:-n], self.waste + stock[: -n - 1 : -1])
        if self.waste:
            # RULES.md: turn the waste over to form a new stock (never under the stock).
            return Tableau(self.nerts, self.work, self.waste[::-1], self.waste[:0])
        raise _illegal(f"{move}: the stock and the waste are both empty in {self}", Why.STOCK_EMPTY)

    def rotated(self) -> Tableau:
        """Everyone stuck: the stock re-formed, then its top card to the bottom (RULES.md:
        everyone stuck).

        The cards left in the stock go onto the waste in order, as if turned; the waste is
        turned over as the new stock; then its top card goes to the bottom. The stock's cycle
        order is kept, but for that one card.

        >>> print(Tableau.parse("N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H 6D | W: 6H 8D")
        ...       .rotated())
        N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 6H 9D 9H 6D 8D | W: -
        """
        # Turned onto the waste the stock lands reversed on top of it; turning the whole waste
        # over reverses it all again: the old stock ends up under the waste, in its order.
        stock = self.stock + self.waste[::-1]
        if stock:
            stock = stock[-1:] + stock[:-1]
        return Tableau(self.nerts, self.work, stock, self.waste[:0])

    def rotated_alone(self) -> Tableau:
        """Rotate alone (a variant): only the top card of the stock goes to the bottom; the
        waste stays where it is (RULES.md: everyone stuck, variant).

        Raises:
            IllegalMoveError: with fewer than two cards in the stock (nothing would change:
                turn the stock instead).

        >>> print(Tableau.parse("N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H 6D | W: 6H 8D")
        ...       .rotated_alone())
        N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 6D 9D 9H | W: 6H 8D
        """
        if len(self.stock) < 2:
            raise _rotate_short(self)
        return Tableau(self.nerts, self.work, self.stock[-1:] + self.stock[:-1], self.waste)

    def _source_run(self, move: Move) -> tuple[Card, ...]:
        source = move.source
        assert source is not None
        if source is PILE_NERTS or source is PILE_WASTE:
            if move.count != 1:
                raise IllegalMoveError(f"{move}: one card at a time leaves the {_NAMES[source]}")
            cards = self.nerts if source is PILE_NERTS else self.waste
            if not cards:
                raise _illegal(
                    f"{move}: the {_NAMES[source]} is empty in {self}", Why.EMPTY, pile=source
                )
            run = cards[-1:]
        elif not source.is_work:
            raise IllegalMoveError(f"{move}: cards cannot come from {source!r}")
        else:
            cards = self._work_pile(source)
            if len(cards) < move.count:
                raise _too_few(move, cards, self)
            run = cards[-move.count :]
        if any(is_unknown(c) for c in run):
            raise _illegal(
                f"{move}: a card not turned up yet cannot be played, in {self}",
                Why.FACE_DOWN,
                pile=source,
            )
        return run

    def _move_cards(self, move: Move) -> Tableau:
        source, target = move.source, move.target
        assert source is not None and target is not None
        if not target.is_work:
            raise IllegalMoveError(f"{move}: cards go to a work pile or the lake, not {target!r}")
        if source == target:
            raise _illegal(f"{move}: a pile cannot move onto itself", Why.ONTO_ITSELF)
        for pile in (source, target):
            if pile.is_work and pile > len(self.work):
                raise _illegal(
                    f"{move}: there is no work pile {pile} in {self}", Why.NO_WORK_PILE, pile=pile
                )
        run = self._source_run(move)
        dest = self._work_pile(target)
        if dest and (is_unknown(dest[-1]) or (move.kind is MOVE_SLIDE and is_unknown(dest[0]))):
            raise _illegal(
                f"{move}: work pile {target} shows no card yet, in {self}",
                Why.FACE_DOWN,
                pile=target,
            )
        if move.kind is MOVE_SLIDE:
            new_dest = _slide(self, move, run, dest)
        else:
            new_dest = self._build(move, run, dest)
        # Remove the run from its source, then set the destination.
        work = list(self.work)
        nerts, waste = self.nerts, self.waste
        if source is PILE_NERTS:
            nerts = nerts[:-1]
        elif source is PILE_WASTE:
            waste = waste[:-1]
        else:
            work[source - 1] = work[source - 1][: -move.count]
        work[target - 1] = new_dest
        return Tableau(nerts, tuple(work), self.stock, waste)

    def _build(self, move: Move, run: tuple[Card, ...], dest: tuple[Card, ...]) -> tuple[Card, ...]:
        bottom = run[0]
        if not dest:
            if move.declare is not None:
                raise _no_joker(move)
            return run  # RULES.md: an empty work pile takes any card
        exposed = dest[-1]
        if exposed.suit is None:
            # An undeclared joker is fixed by the card placed on it (RULES.md: jokers).
            options = joker_options_on(bottom, dest[-2] if len(dest) > 1 else None)
            if not options:
                raise _illegal(
                    f"{move}: {bottom} cannot go on the joker in {self}",
                    Why.JOKER_NO_FIT,
                    card=bottom,
                    onto=exposed,
                    pile=move.target,
                )
            if move.declare is None or move.declare not in options:
                raise _illegal(
                    f"{move}: say what the joker on pile {move.target} becomes: "
                    + " or ".join(f"={c}" for c in options),
                    Why.JOKER_UNSAID,
                    card=exposed,
                    pile=move.target,
                    options=options,
                )
            return (*dest[:-1], exposed.declare(move.declare.rank, move.declare.suit), *run)  # type: ignore[arg-type]
        if move.declare is not None:
            raise _no_joker(move)
        if not fits_on(bottom, exposed):
            raise _no_fit(move, bottom, exposed, self)
        return dest + run

    # -- notation -------------------------------------------------------------------------
    def __str__(self) -> str:
        parts = [f"N: {format_cards(self.nerts)}"]
        parts += [f"{i}: {format_cards(p)}" for i, p in enumerate(self.work, 1)]
        parts += [f"S: {format_cards(self.stock)}", f"W: {format_cards(self.waste)}"]
        return " | ".join(parts)

    def __repr__(self) -> str:
        return f"Tableau.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Tableau:
        """Parse a tableau (see the module docstring); ``S`` and ``W`` may be omitted.

        Raises:
            NotationError: if ``text`` is not a tableau.
        """
        parts: dict[str, tuple[Card, ...]] = {}
        for raw in re.split(r"[|\n]", text):
            if not raw.strip():
                continue
            name, sep, body = raw.partition(":")
            name = name.strip().upper()
            if not sep or name not in ("N", "S", "W", "1", "2", "3", "4", "5", "6"):
                raise NotationError(
                    f"not a tableau part: {raw.strip()!r} (expected N:, 1: to 6:, S: or W:)"
                )
            if name in parts:
                raise NotationError(f"tableau part {name}: appears twice in {text!r}")
            parts[name] = parse_cards(body)
        numbers = sorted(int(k) for k in parts if k.isdigit())
        if numbers != list(range(1, len(numbers) + 1)) or not 4 <= len(numbers) <= 6:
            raise NotationError(f"a tableau has work piles 1 to 4, 5 or 6, not {numbers}: {text!r}")
        if "N" not in parts:
            raise NotationError(f"a tableau needs its Nerts pile (N:): {text!r}")
        seen: set[Card] = set()
        for c in (c for cards in parts.values() for c in cards):
            if c is HIDDEN:
                continue  # face-down cards of unknown identity may repeat
            if c.physical in seen:
                raise NotationError(f"{c.physical} appears twice in {text!r}")
            seen.add(c.physical)
        work = tuple(parts[str(i)] for i in numbers)
        for i, p in enumerate(work, 1):
            if any(c.suit is None for c in p[:-1]):
                raise NotationError(f"an undeclared joker can only be on top of work pile {i}")
        return cls(parts["N"], work, parts.get("S", ()), parts.get("W", ()))


_WORK_PILES = (Pile.W1, Pile.W2, Pile.W3, Pile.W4, Pile.W5, Pile.W6)
_WORK_PILES_OF = tuple(_WORK_PILES[:n] for n in range(7))  # Tableau.work_piles, by count

# Tableau.face_up of the tableaux it was last asked about, by identity: a tableau is immutable,
# and every bot's look at the table asks for the view of every seat, most of them unchanged
# since the last look (a bot's decision would otherwise cost twice as much in a match). Each
# entry holds its tableau, so no other object can take its id while it is kept; oldest first.
_VIEWS: dict[int, tuple[Tableau, Tableau]] = {}
_VIEWS_SIZE = 64
_NAMES = {Pile.NERTS: "Nerts pile", Pile.WASTE: "waste"}


def _illegal(message: str, why: Why, **values: Any) -> IllegalMoveError:
    """The refusal of a move: the engine's ``message``, and why as a :class:`Illegality`."""
    return IllegalMoveError(message, reason=Illegality(why, **values))


def _rotate_short(tableau: Tableau) -> IllegalMoveError:
    """Rotating alone with fewer than two cards in the stock (:meth:`Tableau.rotated_alone`)."""
    n = len(tableau.stock)
    return _illegal(
        f"R: rotating alone moves the stock's top card to its bottom, and the stock "
        f"has {n} card(s): turn it (S) instead, in {tableau}",
        Why.ROTATE_SHORT,
        count=n,
    )


def _too_few(move: Move, cards: tuple[Card, ...], tableau: Tableau) -> IllegalMoveError:
    """A move of more cards than its work pile (``cards``) holds."""
    return _illegal(
        f"{move}: work pile {move.source} has {len(cards)} card(s), not {move.count}, in {tableau}",
        Why.TOO_FEW if cards else Why.EMPTY,
        pile=move.source,
        held=len(cards),
        count=move.count,
    )


def _slide(
    tableau: Tableau, move: Move, run: tuple[Card, ...], dest: tuple[Card, ...]
) -> tuple[Card, ...]:
    """Work pile ``dest`` with ``run`` slid under it (RULES.md: slide-under): see
    :meth:`Tableau.apply`."""
    if not dest:
        raise _illegal(
            f"{move}: work pile {move.target} is empty: play into it instead",
            Why.SLIDE_EMPTY,
            pile=move.target,
        )
    if not tableau.has_empty_work_pile():
        raise _illegal(
            f"{move}: slide-under needs an empty work pile, in {tableau}", Why.SLIDE_NO_SPACE
        )
    top_of_run, base = run[-1], dest[0]
    if base.suit is None and top_of_run.suit is not None:
        # Slid under a lone undeclared joker: the joker ends on top of the run, as if the
        # card had been placed in the space and the joker moved onto it — which does not
        # fix it either (RULES.md: jokers; slide-under is that two-move play as one).
        if move.declare is not None:
            raise _no_joker(move, " (a card slid under a lone joker leaves it undeclared)")
        if not fits_on(base, top_of_run):
            raise _slide_misfit(move, f"{move}: nothing goes below an ace, in {tableau}", run, dest)
        return run + dest
    if top_of_run.suit is None:
        if base.suit is None:
            raise _illegal(
                f"{move}: a joker cannot be slid under a joker",
                Why.JOKER_UNDER_JOKER,
                pile=move.target,
            )
        # The pile's base is played onto the joker, which fixes it (RULES.md: jokers).
        options = joker_options_under(base)
        if len(run) > 1:
            # The joker must also fit on the card below it in the run.
            options = tuple(c for c in options if fits_on(c, run[-2]))
        if not options:
            raise _slide_misfit(
                move, f"{move}: {top_of_run} cannot be slid under {base}", run, dest
            )
        if move.declare is None or move.declare not in options:
            raise _illegal(
                f"{move}: say what the joker becomes: " + " or ".join(f"={c}" for c in options),
                Why.JOKER_UNSAID,
                card=top_of_run,
                pile=move.source,
                options=options,
            )
        decl = move.declare
        assert decl.suit is not None
        return (*run[:-1], top_of_run.declare(decl.rank, decl.suit), *dest)
    if move.declare is not None:
        raise _no_joker(move)
    if not fits_on(base, top_of_run):
        raise _slide_misfit(
            move,
            f"{move}: {top_of_run} cannot be slid under {base} "
            "(it must be one rank higher, other colour)",
            run,
            dest,
        )
    return run + dest


def _no_joker(move: Move, more: str = "") -> IllegalMoveError:
    """A move that declares a joker (``=5H``) and fixes none (RULES.md: jokers)."""
    return _illegal(
        f"{move}: no joker is fixed by this move{more}", Why.NO_JOKER, card=move.declare
    )


def _slide_misfit(
    move: Move, message: str, run: tuple[Card, ...], dest: tuple[Card, ...]
) -> IllegalMoveError:
    """The run ``move`` takes slid under the work pile ``dest``, whose base does not go on the
    run's top card (RULES.md: slide-under)."""
    return _illegal(message, Why.SLIDE_NO_FIT, card=run[-1], onto=dest[0], pile=move.target)


def _no_fit(move: Move, card: Card, onto: Card, tableau: Tableau) -> IllegalMoveError:
    """``card`` (the bottom of the run ``move`` takes) built on ``onto``, where it does not fit."""
    assert move.source is not None
    return _illegal(
        f"{move}: {card} does not fit on {onto} (build down, alternating colours)",
        Why.NO_FIT,
        card=card,
        onto=onto,
        pile=move.source,
        run=tableau.pile(move.source),
        count=move.count,
    )
