"""The greedy bot: the strategy tips of RULES.md, in order, one move at a time.

1. Call Nerts as soon as the call is valid.
2. The Nerts top card to the lake, even over an easy lake play; any ace straight to the lake.
3. The Nerts top card onto a work pile, under one (slide-under), or into an empty one.
4. No empty pile for it? Free one: move a whole work pile onto another.
5. Exposed work-pile cards and the waste top to the lake.
6. The waste top onto a work pile.
7. Turn the stock quickly; after a whole pass through it with nothing played, pass (stuck).

A joker goes straight to the lake, declared as the next card of the highest open foundation
(or as an ace).
"""

from __future__ import annotations

from p2p_nertz.bots.base import Strategy, register
from p2p_nertz.rng import Rng
from p2p_nertz.rules import SUITS, Card, FoundationId, Move, Pile, Table, Tableau, fits_on
from p2p_nertz.rules.cards import is_unknown

__all__ = ["Greedy", "lake_move"]

_CALL = Move.call()
_TURN = Move.turn()
_PASS = Move.pass_()


def lake_move(table: Table, seat: int, source: Pile, card: Card) -> Move | None:
    """A move of ``card`` (the top of ``source``) to the lake, or ``None`` if it fits nowhere."""
    if card.suit is None:  # a joker: the next card of the highest open foundation, or an ace
        best: tuple[int, FoundationId] | None = None
        for fid, height in table.lake.open_foundations():
            if best is None or height > best[0]:
                best = (height, fid)
        if best is not None:
            return Move.to_lake(source, best[1], Card(best[0] + 1, best[1].suit))
        suit = SUITS[0]
        return Move.to_lake(source, FoundationId(seat, suit, card.joker), Card(1, suit))
    if card.rank == 1:
        return Move.to_lake(source, FoundationId(seat, card.suit, card.joker))
    targets = table.lake.targets(card)
    return Move.to_lake(source, targets[0]) if targets else None


def placement(t: Tableau, source: Pile, card: Card) -> Move | None:
    """A move of ``card`` (alone, from ``source``) onto, under or into a work pile."""
    work = t.work
    empty = None
    for pile in t.work_piles:
        dest = work[pile - 1]
        if pile == source:
            continue
        if not dest:
            empty = empty or pile
        elif dest[-1].suit is not None and fits_on(card, dest[-1]):
            return Move.to_pile(source, pile)
    if empty is not None:
        for pile in t.work_piles:
            dest = work[pile - 1]
            if (
                pile != source
                and dest
                and card.suit is not None
                and dest[0].suit is not None
                and fits_on(dest[0], card)
            ):
                return Move.slide(source, pile)
        return Move.to_pile(source, empty)
    return None


def free_a_pile(t: Tableau) -> Move | None:
    """Move a whole work pile onto another, leaving an empty pile."""
    work = t.work
    for i in t.work_piles:
        pile = work[i - 1]
        if not pile or pile[0].suit is None:
            continue
        for j in t.work_piles:
            dest = work[j - 1]
            if j != i and dest and dest[-1].suit is not None and fits_on(pile[0], dest[-1]):
                return Move.to_pile(i, j, len(pile))
    return None


# free_a_pile on the work piles it was last asked about, by the identity of their tuple: a
# tableau is immutable and keeps the same work tuple through every move that leaves the work
# piles alone (stock turns, Nerts and waste cards to the lake), so three calls in four in a
# greedy round ask again about work piles already seen. Each entry holds its tuple, so no other
# object can take its id while it is kept; oldest dropped first.
_FREE_MEMO: dict[int, tuple[tuple[tuple[Card, ...], ...], Move | None]] = {}
_FREE_MEMO_SIZE = 64


def _free_a_pile_memo(t: Tableau) -> Move | None:
    work = t.work
    kept = _FREE_MEMO.get(id(work))
    if kept is not None and kept[0] is work:
        return kept[1]
    move = free_a_pile(t)
    if len(_FREE_MEMO) >= _FREE_MEMO_SIZE:
        del _FREE_MEMO[next(iter(_FREE_MEMO))]
    _FREE_MEMO[id(work)] = (work, move)
    return move


_free = _free_a_pile_memo  # what Greedy calls (bench_engine swaps in free_a_pile for its A/B)


@register("greedy")
class Greedy(Strategy):
    """Plays the first useful move in the order of RULES.md's strategy tips."""

    def __init__(self, rng: Rng | None = None) -> None:
        super().__init__(rng)
        self._turns = 0  # stock turns since this bot last played a card
        self._passed = False

    def new_round(self) -> None:
        self._turns = 0
        self._passed = False

    def choose(self, table: Table, seat: int) -> Move | None:
        if table.can_call(seat):
            return _CALL
        if self._passed and not table.stuck[seat]:
            # Everyone rotated (or we moved): a fresh pass through the stock.
            self._passed = False
            self._turns = 0
        move = self.card_move(table, seat)
        if move is not None:
            self._turns = 0
            return move
        if self._passed:
            return None  # stuck: wait for the others
        t = table.tableaux[seat]
        cycle = -(-(len(t.stock) + len(t.waste)) // table.rules.draw) + 1
        if (t.stock or t.waste) and self._turns < cycle:
            self._turns += 1
            return _TURN
        self._passed = True
        return _PASS

    def card_move(self, table: Table, seat: int) -> Move | None:
        """The best card move by the tips, or ``None``."""
        t = table.tableaux[seat]
        # A card still face down where it lies face up (a shuffle game's card whose shares are
        # not in, or that opened to no card) is no source: RULES.md: a card not turned up yet
        # cannot be played (tried, it is refused; a bot that tried only that would wait for
        # ever on a card that never opens).
        nerts = t.nerts[-1] if t.nerts and not is_unknown(t.nerts[-1]) else None
        if nerts is not None:
            move = lake_move(table, seat, Pile.NERTS, nerts)
            if move is not None:
                return move
        tops = [(p, w[-1]) for p in t.work_piles if (w := t.work[p - 1]) and not is_unknown(w[-1])]
        waste = t.waste[-1] if t.waste and not is_unknown(t.waste[-1]) else None
        if waste is not None:
            tops.append((Pile.WASTE, waste))
        for pile, card in tops:
            if card.rank == 1 or card.suit is None:
                move = lake_move(table, seat, pile, card)
                if move is not None:
                    return move
        if nerts is not None:
            move = placement(t, Pile.NERTS, nerts)
            if move is not None:
                return move
            move = _free(t)
            if move is not None:
                return move
        for pile, card in tops:
            move = lake_move(table, seat, pile, card)
            if move is not None:
                return move
        if waste is not None:
            for pile in t.work_piles:
                dest = t.work[pile - 1]
                if dest and dest[-1].suit is not None and fits_on(waste, dest[-1]):
                    return Move.to_pile(Pile.WASTE, pile)
        return None
