"""What the members of a shuffle round owe of the positions turned up, kept between changes.

Theory of operation
-------------------
:meth:`DeckRound.owed <p2p_nertz.protocol.shuffle.DeckRound.owed>` (what one member owes: its
own share of each position turned up and not opened, and its partial share of such a position
for each member dropped) and :meth:`DeckRound.partials_owed
<p2p_nertz.protocol.shuffle.DeckRound.partials_owed>` (of one position, who owes a partial
for whom) are asked at every input of a peer: ``owed`` by its duties (of the final fold and
of the held one), ``partials_owed`` by its waits and votes (of each position in flight). With
a member dropped every position turned up and not opened is walked, and since a move's own
shares travel outside the feed (docs/shuffle.md §10.14) a fold opens few of them: at 8
players a third of a game's CPU went to walking them again (soak seed 49013).

Both answers are functions of the round's fields alone, and those change only through the
round's own methods; a peer asks far more often than its round changes, and it refolds its
held view from copies of its final fold (a copy holds what its original held). So
:class:`Owing` keeps the answers: ``owed`` per member until any field it reads changes,
``partials_owed`` per position until a share or a partial of that position is taken, or the
whole round changes (a key, a member dropped, a complaint or its answer). The round forgets
them in the methods that write those fields (the one place that does), and
:meth:`DeckRound.copy <p2p_nertz.protocol.shuffle.DeckRound.copy>` copies them with the rest.
The answers are the same as the walk's: ``tests/test_shuffle_owed.py`` checks them against
it, step by step, on seeded rounds with a member dropped and refolded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from p2p_nertz.protocol.shuffle import DeckRound

__all__ = ["Owing", "owed", "owed_kept", "partials_owed"]

#: ``(of member, deck, position)``: an item a member owes (:func:`owed`)
Item = tuple[int, int, int]
#: ``(member dropped, members that owe a partial for it)`` of one position
#: (:func:`partials_owed`)
Partials = tuple[int, tuple[int, ...]]


class Owing:
    """The answers of :func:`owed` (per member index) and :func:`partials_owed` (per
    position) that still hold for one :class:`~p2p_nertz.protocol.shuffle.DeckRound`."""

    __slots__ = ("by_member", "by_place", "flight")

    def __init__(
        self,
        by_member: dict[int, tuple[Item, ...]] | None = None,
        by_place: dict[tuple[int, int], tuple[Partials, ...]] | None = None,
        flight: int = 0,
    ) -> None:
        self.by_member = by_member if by_member is not None else {}
        self.by_place = by_place if by_place is not None else {}
        #: how many positions, first in turn-up order, the round holds opened: a round only
        #: turns up and opens more, so they stay opened, and a walk of what is owed by a
        #: member still in starts past them (it walked every opened one at every move)
        self.flight = flight

    def __reduce__(self) -> tuple[type[Owing], tuple[()]]:
        # Pickled empty: the answers are no part of the round's value (as they are left out
        # of its ``==`` and ``repr``), and a round that holds them is byte for byte the one
        # that does not yet (tests/test_folds_shared.py pickles folds to compare them).
        return (Owing, ())

    def copy(self) -> Owing:
        """An independent copy (the answers are tuples: shared)."""
        return Owing(dict(self.by_member), dict(self.by_place), self.flight)

    def forget(self) -> None:
        """Everything changed: a key, a member dropped, a complaint or its answer."""
        self.by_member.clear()
        self.by_place.clear()

    def moved(self, places: tuple[tuple[int, int], ...] = ()) -> None:
        """Positions were turned up, or shares of ``places`` taken (and what they opened)."""
        self.by_member.clear()
        for where in places:
            self.by_place.pop(where, None)


def owed(deck: DeckRound, seat: int) -> list[Item]:
    """:meth:`DeckRound.owed <p2p_nertz.protocol.shuffle.DeckRound.owed>`, kept."""
    return list(owed_kept(deck, seat))


def owed_kept(deck: DeckRound, seat: int) -> tuple[Item, ...]:
    """:func:`owed` as kept: the same tuple until the round changes (a caller that keeps
    what it made of it tells a change by the tuple's identity, not by comparing it)."""
    i = deck.member(seat)
    kept = deck.owing.by_member.get(i)
    if kept is None:
        kept = deck.owing.by_member[i] = tuple(_owed(deck, i))
    return kept


def _owed(deck: DeckRound, i: int) -> list[Item]:
    out: list[Item] = []
    turned, opened = deck.turned, deck.opened
    if i in deck.gone:
        # (A member dropped still asks, its own shares of every position turned up alone
        # being of use: rare, and walked as it always was.)
        for w in turned:
            held = deck.shares.get(w, {})
            if i not in held:
                out.append((i, *w))
            if w in opened:
                continue
            for m in sorted(deck.gone.difference(held)):
                if m != i and i not in deck.partials.get((*w, m), {}) and deck.holds(i, m):
                    out.append((m, *w))
        return out
    # For a member still in, a position opened holds its share already (every member's, or
    # a partial stand-in only for a member gone), so only the positions in flight are walked.
    if len(opened) == len(turned):
        return out
    shares = deck.shares
    gone = bool(deck.gone)
    k, n = deck.owing.flight, len(turned)
    while k < n and turned[k] in opened:
        k += 1
    deck.owing.flight = k
    for w in turned[k:]:
        if w in opened:
            continue
        if i not in shares.get(w, ()):
            out.append((i, *w))
        if gone:
            out += [(m, *w) for m, owing in partials_owed(deck, w) if i in owing]
    return out


def partials_owed(deck: DeckRound, where: tuple[int, int]) -> list[Partials]:
    """:meth:`DeckRound.partials_owed <p2p_nertz.protocol.shuffle.DeckRound.partials_owed>`,
    kept."""
    if where in deck.opened or not deck.gone:
        return []
    kept = deck.owing.by_place.get(where)
    if kept is None:
        kept = deck.owing.by_place[where] = _partials_owed(deck, where)
    return list(kept)


def _partials_owed(deck: DeckRound, where: tuple[int, int]) -> tuple[Partials, ...]:
    held = deck.shares.get(where, {})
    out = []
    for m in sorted(deck.gone.difference(held)):
        sent = deck.partials.get((*where, m), {})
        owing = tuple(
            j
            for j in range(len(deck.members))
            if j not in deck.gone and j not in sent and deck.holds(j, m)
        )
        if owing:
            out.append((m, owing))
    return tuple(out)
