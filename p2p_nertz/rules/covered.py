"""A pile as a person at the table sees it (:class:`CoveredPile`): left interpreted.

This module is not compiled with the core (mypyc refuses a subclass of ``tuple``: "Inheriting
from most builtin types is unimplemented"), so that ``rules/cards.py`` and every other module
of ``rules/`` can be (docs/latency.md, session 42).

>>> str(CoveredPile("stock", 2) + (Card.parse("5H"),))
'?? ?? 5H'
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from p2p_nertz.errors import FaceDownError
from p2p_nertz.rules.cards import Card, format_cards, hidden_card

__all__ = ["CoveredPile"]


#: A place in a :class:`CoveredPile` that a person at the table cannot see (a card face down,
#: or squared under the waste top). It never leaves the pile: reading it raises.
_FACE_DOWN: Card = hidden_card()


class CoveredPile(tuple[Card, ...]):
    """A pile as a person at the table sees it: how many cards it holds, and the cards that
    lie face up on it (its top card, if any); no other card is in it, and none can be read.

    The pile holds no card it does not show, so nothing can be read from it by accident;
    reading a face-down card (an index, iterating, ``in``) raises
    :class:`~p2p_nertz.errors.FaceDownError` naming the pile, where a plain tuple of
    :data:`HIDDEN` would hand it back and let a bot mistake it for a joker. ``len``, the
    face-up cards, and moving cards about without reading them (slices, ``+``: a move tried on
    a view) work as on a tuple and keep the pile covered. A face-up card this machine does not
    know (an opponent's deal not shown yet) reads as :data:`HIDDEN`, as in the table it came
    from.

    >>> stock = CoveredPile("stock", 3)
    >>> len(stock), str(stock), str(stock[-2:][::-1] + (Card.parse("5H"),))
    (3, '?? ?? ??', '?? ?? 5H')
    >>> stock[-1]
    Traceback (most recent call last):
      ...
    p2p_nertz.errors.FaceDownError: card 3 of 3 of the stock (bottom up) is face down
    >>> CoveredPile("waste", 2, Card.parse("5H"))[-1]
    Card.parse('5H')
    """

    name: str

    def __new__(cls, name: str, size: int, top: Card | None = None) -> CoveredPile:
        # Piles are values: each made once (a bot's every look at the table covers every
        # seat's piles), kept by the top card's identity (hashing a card by value is slow),
        # with the card, so no other object can take its id while it is kept.
        key = (name, size, id(top) if size else 0)
        kept = _COVERED.get(key)
        if kept is not None and (kept[0] is top or not size):
            return kept[1]
        if top is None or size == 0:
            pile = cls._of(name, (_FACE_DOWN,) * size)
        else:
            pile = cls._of(name, (_FACE_DOWN,) * (size - 1) + (top,))
        if len(_COVERED) >= _COVERED_SIZE:
            _COVERED.clear()
        _COVERED[key] = (top, pile)
        return pile

    @classmethod
    def _of(cls, name: str, cards: tuple[Card, ...]) -> CoveredPile:
        pile = tuple.__new__(cls, cards)
        pile.name = name
        return pile

    def _refuse(self, index: int) -> FaceDownError:
        return FaceDownError(
            f"card {index + 1} of {len(self)} of the {self.name} (bottom up) is face down"
        )

    def _read(self) -> tuple[Card, ...]:
        cards = tuple(tuple.__iter__(self))
        for i, card in enumerate(cards):
            if card is _FACE_DOWN:
                raise self._refuse(i)
        return cards

    def __getitem__(self, index: Any) -> Any:  # an index or a slice, as tuple's
        if type(index) is slice:
            return self._of(self.name, tuple.__getitem__(self, index))
        card = tuple.__getitem__(self, index)
        if card is _FACE_DOWN:
            raise self._refuse(index + len(self) if index < 0 else index)
        return card

    def __add__(self, other: Any) -> Any:
        return self._of(self.name, tuple.__add__(self, other))

    def __radd__(self, other: Any) -> Any:
        return self._of(self.name, tuple(other) + tuple(tuple.__iter__(self)))

    def __iter__(self) -> Iterator[Card]:
        return iter(self._read())

    def __reversed__(self) -> Iterator[Card]:
        return iter(self._read()[::-1])

    def __contains__(self, card: object) -> bool:
        return card in self._read()

    def __str__(self) -> str:
        return format_cards(self)

    def __repr__(self) -> str:
        return f"CoveredPile({self.name!r}, {str(self)!r})"


_COVERED: dict[tuple[str, int, int], tuple[Card | None, CoveredPile]] = {}
_COVERED_SIZE = 8192  # (3 names x 55 sizes x 56 tops at most in play; declared jokers aside)
