"""A peer's share store: the decryption shares it holds outside the feed (docs/shuffle.md
§10.14).

Theory of operation
-------------------
A turn-up's shares need no feed: a share ``D_j = x_j·C1`` with its proof is its own
authentication, whoever carries it, and it is one value (the derived nonce makes the same bytes
every time). So a member sends its share of a position turned up in a beat, not an event, and
each peer keeps the right ones it receives (its own included) in a :class:`ShareStore`, per
round: not a fold, not logged, rebuilt after a restart by asking.

The store answers three questions, each against a round as a fold holds it (a
:class:`~p2p_nertz.protocol.rounds.RoundState` of a shuffle game, its ``deck`` dealt):

* :meth:`ShareStore.held_table`: the round's table with the store's openings put in place of its
  sealed cards, what the peer's screen and bot see (a copy; never a fold's);
* :meth:`ShareStore.opening`: the shares a move must carry, those of the sealed cards it takes
  or builds on, or ``None`` while one is missing (the move's author cannot see the card);
* :meth:`ShareStore.missing`: the shares of positions turned up and not opened that neither
  the round nor the store holds, what a peer asks for.

A share is kept only once the round's own check says it is right (:meth:`DeckRound.right
<p2p_nertz.protocol.shuffle.DeckRound.right>`, the check a carried share meets, answered from
the memo the folds share), so a share the store holds is one a fold takes. A partial share for a
member the offered round does not hold dropped is not right there, and not kept: it is offered
again once the round holds the drop.

Pure: no I/O, no clock; one store per peer, its rounds told apart by their context (the round
and the deal's attempt, :func:`p2p_nertz.deck.keys.round_context`).
"""

from __future__ import annotations

from collections.abc import Iterable

from p2p_nertz.deck.shares import Share
from p2p_nertz.deck.vss import threshold
from p2p_nertz.protocol.fold_values import Refuse
from p2p_nertz.protocol.rounds import RoundState, put_opened, sealed_needed, take_opening
from p2p_nertz.protocol.shuffle import DeckRound, Opened
from p2p_nertz.rules import Card, Move, Table

__all__ = ["ShareStore"]

#: A share's place in a store: (maker, of whom, deck, position), member indices.
_Slot = tuple[int, int, int, int]


class ShareStore:
    """The shares a peer holds outside the feed (module docstring), by round context."""

    def __init__(self) -> None:
        self._rounds: dict[bytes, dict[_Slot, Share]] = {}
        #: round context -> (what the cards read, the card each position a look opened opens)
        self._cards: dict[bytes, tuple[object, dict[tuple[int, int], Card]]] = {}
        #: round context -> the positions whose every member's own share the store holds
        self._whole: dict[bytes, set[tuple[int, int]]] = {}

    def _of(self, deck: DeckRound) -> dict[_Slot, Share]:
        return self._rounds.get(deck.context, {})

    def offer(self, deck: DeckRound, shares: Iterable[Share]) -> list[Share]:
        """Keep each of ``shares`` that is right in ``deck`` (each ``seat`` its maker's member
        index); return those that are not, in order (the caller may name their sender)."""
        wrong = []
        kept = self._rounds.setdefault(deck.context, {})
        for share in shares:
            slot = (share.seat, share.of_seat, share.deck, share.position)
            if slot in kept:
                continue  # (one value: the same share again, or one right where it is)
            if deck.right(share):
                kept[slot] = share
                where = (share.deck, share.position)
                if all((m, m, *where) in kept for m in range(len(deck.members))):
                    self._whole.setdefault(deck.context, set()).add(where)
            else:
                wrong.append(share)
        return wrong

    def whole(self, deck: DeckRound, where: tuple[int, int]) -> bool:
        """Whether the store holds every member's own share of position ``where`` of
        ``deck``'s round (the position opens from the store alone, whatever the round holds)."""
        return where in self._whole.get(deck.context, ())

    def has(self, deck: DeckRound, slot: _Slot) -> bool:
        """Whether the store holds the share at ``slot`` of ``deck``'s round."""
        return slot in self._of(deck)

    def forget(self, keep: Iterable[bytes]) -> None:
        """Drop every round but those whose contexts are in ``keep`` (rounds over)."""
        wanted = set(keep)
        self._rounds = {c: v for c, v in self._rounds.items() if c in wanted}
        self._cards = {c: v for c, v in self._cards.items() if c in wanted}
        self._whole = {c: v for c, v in self._whole.items() if c in wanted}

    def shares_of(self, deck: DeckRound, where: tuple[int, int]) -> tuple[Share, ...] | None:
        """The shares of position ``where`` to carry, from the store: each member's own that it
        holds, else (where ``deck`` lacks it too) for a member ``deck`` holds dropped the
        partials (lowest makers first) that make ``t`` with those ``deck`` holds; ``None``
        while the two together lack one."""
        held = self._of(deck)
        folded = deck.shares.get(where, {})
        t = threshold(len(deck.members))
        out: list[Share] = []
        for m in range(len(deck.members)):
            own = held.get((m, m, *where))
            if own is not None:  # (carried even where ``deck`` holds it: a cut may lose that)
                out.append(own)
                continue
            if m in folded:
                continue
            if m not in deck.gone or t is None:
                return None
            have = deck.partials.get((*where, m), {})
            extra = [
                held[(j, m, *where)]
                for j in range(len(deck.members))
                if j != m and j not in have and (j, m, *where) in held
            ]
            if len(have) + len(extra) < t:
                return None
            out += extra[: max(t - len(have), 0)]
        return tuple(out)

    def opening(self, rs: RoundState, seat: int, move: Move) -> tuple[Share, ...] | None:
        """The opening ``seat``'s ``move`` carries, made on the round ``rs`` its author holds:
        every member's share the store holds of each sealed card the move takes or builds on
        that ``rs`` has not opened, and the partials ``rs`` lacks for a member dropped (``()``
        when no card is needed; what ``rs`` holds of the feed came before the move, in its
        author's causal past); ``None`` while the two together lack one (the author cannot
        see the card, and the fold would refuse the move)."""
        deck, table = rs.deck, rs.table
        if deck is None or table is None or deck.final is None:
            return ()
        d = deck.member(seat)
        out: list[Share] = []
        for p in sealed_needed(table.tableaux[seat], move):
            if (d, p) in deck.opened:
                continue  # (a position opened that opened no card: nobody can play it)
            found = self.shares_of(deck, (d, p))
            if found is None:
                return None
            out += found
        return tuple(out)

    def held_table(self, rs: RoundState) -> Table | None:
        """The table of ``rs`` with the store's openings put in place of its sealed cards:
        every position turned up and not opened whose shares ``rs`` and the store hold
        together (the others stay sealed), as the fold would open them, in turn-up order, were
        it carried those shares (a card its deck already showed stays sealed). ``rs`` itself is
        unchanged; ``rs.table`` where the store opens nothing.

        The card a position's right shares open is one value: the store keeps it, by round,
        from the first look that opened it, so a look opens again only the positions it has
        not seen (each look opened every position in flight, each share checked again: a
        quarter of a shuffle game's CPU)."""
        deck, table = rs.deck, rs.table
        if deck is None or deck.final is None or table is None:
            return table
        stored = self._whole.get(deck.context, ())
        found = [
            where
            for where in deck.turned
            if where not in deck.opened and (where in stored or self.shares_of(deck, where))
        ]  # (a position with no shares stays sealed)
        if not found:
            return table
        cards = self._cards_of(deck)
        new = [where for where in found if where not in cards]
        if new:
            first = _taken(rs, self._carried(deck, new))
            opens = first.deck.opened if first is not None and first.deck is not None else {}
            got = {w: card for w in new if (card := opens.get(w)) is not None}
            if len(got) < len(new):
                # (a position that opens no card, or a card its deck showed, as a substituted
                # ciphertext does: the look taken whole, as the fold would take it)
                look = _taken(rs, self._carried(deck, found))
                return table if look is None else look.table
            cards.update(got)
        shown = dict(deck.shown)
        opened = []
        for where, card in ((w, cards[w]) for w in found):
            # (a card its deck already showed stays sealed, as :meth:`DeckRound._open` leaves it)
            if (where[0], card) not in shown:
                shown[(where[0], card)] = None
                opened.append(Opened(*where, card))
        view = rs.copy()
        return put_opened(view, opened)

    def _carried(self, deck: DeckRound, found: list[tuple[int, int]]) -> list[Share]:
        """The shares of the positions ``found`` to carry (:meth:`shares_of`), in order."""
        return [share for where in found for share in self.shares_of(deck, where) or ()]

    def _cards_of(self, deck: DeckRound) -> dict[tuple[int, int], Card]:
        """The cards of ``deck``'s round that a look opened, by position: kept while the round's
        final decks and keys (all a share's check and a card's opening read) are the same."""
        kept = self._cards.get(deck.context)
        reads = (deck.final, tuple(deck.keys.items()))
        if kept is None or kept[0] != reads:
            kept = self._cards[deck.context] = (reads, {})
        return kept[1]

    def share(self, deck: DeckRound, slot: _Slot) -> Share | None:
        """The share at ``slot`` of ``deck``'s round, if the store holds it (what it relays)."""
        return self._of(deck).get(slot)

    def lacking(self, deck: DeckRound, where: tuple[int, int]) -> list[int]:
        """The members whose own share of position ``where`` neither ``deck`` nor the store
        holds (none once ``deck`` opened it; a member dropped is opened for by partials: its
        own share is not asked for)."""
        if where in deck.opened or self.whole(deck, where):
            return []
        held = self._of(deck)
        folded = deck.shares.get(where, {})
        return [
            m
            for m in range(len(deck.members))
            if m not in deck.gone and m not in folded and (m, m, *where) not in held
        ]

    def missing(self, rs: RoundState) -> list[tuple[int, int, int]]:
        """``(member, deck, position)`` of each share of a position turned up and not opened in
        ``rs`` that neither ``rs`` nor the store holds, in turn-up order: what a peer asks for
        (:meth:`lacking`)."""
        deck = rs.deck
        if deck is None:
            return []
        return [(m, *where) for where in deck.turned for m in self.lacking(deck, where)]


def _taken(rs: RoundState, shares: list[Share]) -> RoundState | None:
    """A copy of ``rs`` with ``shares`` taken as a move's opening (``None`` where the round
    refuses them: the store keeps only right shares)."""
    view = rs.copy()
    try:
        take_opening(view, tuple(shares))
    except Refuse:  # pragma: no cover
        return None
    return view
