"""A peer's share store (docs/shuffle.md §10.14, protocol/share_store.py): the shares it holds
outside the feed, kept only when right; the held view it gives; the opening a move carries and
the fold taking it; what is missing. Real keys, stages, shares and proofs (``OpeningTable``)."""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.deck.elgamal import Deck
from p2p_nertz.deck.keys import MemberKey
from p2p_nertz.deck.shares import make_share
from p2p_nertz.deck.wire import DeckStage
from p2p_nertz.protocol.bodies import Play
from p2p_nertz.protocol.rounds import sealed_needed
from p2p_nertz.protocol.share_store import ShareStore
from p2p_nertz.rules import Move, Tableau, is_unknown, sealed_position
from tests.test_fold_shuffle import _drop
from tests.test_fold_shuffle_opening import OpeningTable, _dealt, _turned


def test_share_store_keeps_the_right_shares_and_hands_back_the_wrong() -> None:
    t = _dealt(3)
    top = _turned(t, 0)[-1]
    deck = t.fold.round.deck
    assert deck is not None
    store = ShareStore()
    right = t.opening([top])
    forged = dataclasses.replace(right[1], proof=t.share(1, 0, 0).proof)  # another position's
    partial = dataclasses.replace(right[2], of_seat=1)  # for a member not dropped
    stranger = make_share(MemberKey.from_seed(b"stranger", t.context), 2, *top, t.final(0)[top[1]])
    outside = dataclasses.replace(right[0], seat=5)  # a maker not in the round
    wrong = [forged, partial, stranger, outside]
    assert store.offer(deck, [*wrong, right[0]]) == wrong
    assert store.has(deck, (0, 0, *top)) and not store.has(deck, (1, 1, *top))
    assert store.offer(deck, right) == [] and store.offer(deck, right) == []
    assert all(store.has(deck, (i, i, *top)) for i in range(3))


def test_share_store_held_view_opens_a_card_only_with_every_share_and_leaves_the_fold() -> None:
    t = _dealt(3)
    turned = _turned(t, 1)
    top = turned[-1]
    rs = t.fold.round
    assert rs.deck is not None
    store = ShareStore()
    store.offer(rs.deck, t.opening([top], makers=[0, 1]))
    held = store.held_table(rs)
    assert held is not None and is_unknown(held.tableaux[1].waste[-1])
    waiting = [w for w in rs.deck.turned if w not in rs.deck.opened]
    assert store.missing(rs) == [
        (i, *w) for w in waiting for i in range(3) if not (w == top and i < 2)
    ]
    store.offer(rs.deck, t.opening([top], makers=[2]))
    held = store.held_table(rs)
    assert held is not None
    assert held.tableaux[1].waste[-1] == t.card_at(*top)
    assert all(is_unknown(c) for c in held.tableaux[1].waste[:-1])  # (no share of them)
    # The fold is not the view: its card stays sealed, its shares unchanged.
    table = t.fold.table
    assert table is not None and is_unknown(table.tableaux[1].waste[-1])
    assert top not in rs.deck.opened and top not in rs.deck.shares
    assert [m for m, d, p in store.missing(rs) if (d, p) == top] == []


def test_share_store_opening_carried_into_the_fold_opens_the_card_there() -> None:
    t = _dealt(2, seed=7)
    store = ShareStore()
    for _ in range(60):
        rs = t.fold.round
        assert rs.deck is not None and rs.table is not None
        held = store.held_table(rs)
        assert held is not None
        moves = [
            m
            for m in held.legal_moves(0)
            if not m.is_lake and sealed_needed(rs.table.tableaux[0], m)
        ]
        if moves:
            break
        assert store.opening(rs, 0, Move.parse("S")) == ()
        where = _turned(t, 0)
        rs = t.fold.round
        assert rs.deck is not None
        store.offer(rs.deck, t.opening(where))
    else:
        raise AssertionError("no move on a sealed card in 60 stock turns")
    move = moves[0]
    needed = [(0, p) for p in sealed_needed(rs.table.tableaux[0], move)]
    opening = store.opening(rs, 0, move)
    assert opening is not None and sorted(opening, key=str) == sorted(t.opening(needed), key=str)
    # Without one member's share the store has no opening to give.
    lacking = ShareStore()
    lacking.offer(rs.deck, t.opening(needed, makers=[0]))
    assert lacking.opening(rs, 0, move) is None
    t.play(0, Play((), 1, move, opens=opening))
    deck = t.fold.round.deck
    assert deck is not None and t.refusals() == []
    assert all(deck.opened[w] == t.card_at(*w) for w in needed)


def test_share_store_opening_for_a_member_dropped_uses_partials_or_its_own_share() -> None:
    t = OpeningTable(4)
    t.join_all()
    t.deal_all()
    t.share_all()
    top = _turned(t, 0)[-1]
    _drop(t, 3, [0, 1, 2])
    rs = t.fold.round
    assert rs.deck is not None and rs.deck.gone == frozenset({3})
    store = ShareStore()
    store.offer(rs.deck, t.opening([top], makers=[0, 1, 2]))
    assert store.shares_of(rs.deck, top) is None  # (member 3's share: neither own nor partials)
    partials = t.partials(1, [(3, *top)]).shares + t.partials(2, [(3, *top)]).shares
    store.offer(rs.deck, partials[:1])
    assert store.shares_of(rs.deck, top) is None  # (one partial: the threshold is 3)
    store.offer(rs.deck, t.partials(0, [(3, *top)]).shares + partials[1:])
    carried = store.shares_of(rs.deck, top)
    assert carried is not None and sorted((s.seat, s.of_seat) for s in carried) == [
        (0, 0),
        (0, 3),
        (1, 1),
        (1, 3),
        (2, 2),
        (2, 3),
    ]
    t.play(0, Play((), 1, Move.parse("S"), opens=carried))
    deck = t.fold.round.deck
    assert deck is not None and t.refusals() == [] and deck.opened[top] == t.card_at(*top)
    # Its own share, made before the drop, stands in for the partials.
    t2 = OpeningTable(4)
    t2.join_all()
    t2.deal_all()
    t2.share_all()
    top2 = _turned(t2, 0)[-1]
    _drop(t2, 3, [0, 1, 2])
    rs2 = t2.fold.round
    assert rs2.deck is not None
    store2 = ShareStore()
    store2.offer(rs2.deck, t2.opening([top2]))
    own = store2.shares_of(rs2.deck, top2)
    assert own is not None and sorted((s.seat, s.of_seat) for s in own) == [
        (i, i) for i in range(4)
    ]


def _substituted() -> tuple[OpeningTable, list[tuple[int, int]], tuple[int, int]]:
    """A game of two whose stage substituted a ciphertext of deck 0 (two positions hold the
    same card), its dealt stock turned once; the positions on the waste (both among them, the
    top last) and the two positions."""
    t = OpeningTable(2)
    t.join_all()
    for i in range(2):
        t.deck_event(i, t.key_message(i))
    waste = Tableau.sealed(t.spec.rules).reveals(Move.parse("S"), t.spec.rules)
    first, top = (sealed_position(c) for c in (waste[0], waste[-1]))
    assert first is not None and top is not None
    for stage in range(2):
        for i in range(2):
            message = t.stage_message(i, stage)
            if (message.deck, stage) == (0, 1):
                ciphers = list(message.ciphers.ciphers)
                ciphers[first] = ciphers[top]
                message = DeckStage(1, 0, 1, Deck(tuple(ciphers)))
                t.stages[(0, 1)] = message.ciphers
            t.deck_event(i, message)
    t.share_all()
    where = _turned(t, 0)
    assert {first, top} <= {p for _, p in where}
    assert t.refusals() == []
    return t, where, (first, top)


@pytest.mark.parametrize("looked", ["none", "first", "top"])
def test_share_store_held_view_leaves_a_card_its_deck_already_showed_sealed_as_the_fold(
    looked: str,
) -> None:
    """A stage substituted a ciphertext (two positions of deck 0 hold the same card): the held
    view opens the first of them turned up and leaves the other sealed, as the fold does
    (docs/shuffle.md §5: the checks after the round name the stage); also where an earlier
    look opened one of the two alone (the card it opened kept: the next look opens only the
    positions new to it, and still leaves the second of the two sealed)."""
    t, where, pair = _substituted()
    rs = t.fold.round
    assert rs.deck is not None
    store = ShareStore()
    if looked != "none":
        alone = (0, pair[looked == "top"])
        store.offer(rs.deck, t.opening([alone]))
        earlier = store.held_table(rs)
        assert earlier is not None
        assert sum(1 for c in earlier.tableaux[0].waste if not is_unknown(c)) == 1
    store.offer(rs.deck, t.opening(where))
    held = store.held_table(rs)
    assert held is not None
    shown = held.tableaux[0].waste
    assert sum(1 for c in shown if is_unknown(c)) == 1
    # The fold, taking the same shares in the same order, leaves the same card sealed.
    t.play(0, Play((), 1, Move.parse("S"), opens=t.opening(where)))
    deck = t.fold.round.deck
    assert deck is not None and t.refusals() == []
    assert [deck.opened[(0, p)] for p in pair].count(None) == 1
    assert [deck.opened[w] for w in where] == [None if is_unknown(c) else c for c in shown]
