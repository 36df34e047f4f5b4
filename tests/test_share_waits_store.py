"""What a member owes of a move's turn-up reads the share store as held (docs/shuffle.md §10.14):
its share is owed only while its voter's held fold and store both lack it, and the vote's item is
held once the store has it (:class:`~p2p_nertz.protocol.share_waits.ShareWaits`,
:meth:`Owed.held_in <p2p_nertz.protocol.share_waits.Owed.held_in>`). Real shares of a real
three-member round (the fold's test table), no simulator."""

from __future__ import annotations

from p2p_nertz.protocol.share_store import ShareStore
from p2p_nertz.protocol.share_waits import ShareWaits
from tests.test_fold_shuffle_opening import _dealt, _turned

TIMEOUT = 1.0


def test_share_waits_a_share_in_the_store_is_not_owed_and_relieves_its_item() -> None:
    t = _dealt(3)
    turned = _turned(t, 1)  # (a stock turn: positions turned up, no share of them in a feed)
    fold = t.fold
    deck = fold.round.deck
    assert deck is not None and all(w not in deck.opened for w in turned)
    waits, store = ShareWaits(), ShareStore()
    assert waits.late(0.0, fold, fold, TIMEOUT, 0.0, store=store) == []  # (noted: young yet)
    # Past their time, every member owes its share of each: neither the fold nor the store
    # holds one.
    assert waits.late(2.0, fold, fold, TIMEOUT, 0.0, store=store) == [0, 1, 2]
    assert {item.at for item in waits.items[2]} == set(turned)
    # Members 0 and 1's shares come in their beats: only member 2 owes, what it lacks.
    store.offer(deck, t.opening(turned, makers=[0, 1]))
    assert waits.late(2.0, fold, fold, TIMEOUT, 0.0, store=store) == [2]
    (item, *_) = waits.items[2]
    assert not item.held_in(fold, store) and not item.held_in(fold)
    # Its beat comes: the item a vote named is held (the vote is withdrawn), nothing is owed;
    # without the store, the fold alone would still say it owes them all (§10.14: a position a
    # move turned up and nobody played is opened in no fold).
    store.offer(deck, t.opening(turned, makers=[2]))
    assert item.held_in(fold, store) and not item.held_in(fold)
    assert waits.late(3.0, fold, fold, TIMEOUT, 0.0, store=store) == []
    assert ShareWaits().late(3.0, fold, fold, 0.0, 0.0) == [0, 1, 2]
