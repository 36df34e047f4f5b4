"""What a shuffle round's members owe, kept between changes (:mod:`.shuffle_owed`): always
the walk's answer (the slow twins ``walk_owed`` and ``walk_partials_owed`` of
``tests/deck_helpers.py`` walk every position turned, as the round did before it kept them),
on seeded rounds through their events, on copies changed apart, after a member dropped, and on
a refold (the final fold's copy with the same events applied again, as a peer's held view is
made)."""

from __future__ import annotations

import pytest

from p2p_nertz.deck.vss import share_for
from p2p_nertz.deck.wire import DeckAnswer
from p2p_nertz.protocol.share_store import ShareStore
from p2p_nertz.protocol.share_waits import ShareWaits
from p2p_nertz.protocol.state import Event, GameState
from p2p_nertz.rng import Rng
from tests.deck_helpers import walk_owed, walk_partials_owed
from tests.test_fold_shuffle import ShuffleTable, _drop, dropped_unanswered


def _check(fold: GameState) -> int:
    """Every member's ``owed`` and every position's ``partials_owed`` of ``fold``'s round, asked
    twice (the second answer kept), equal the walk's; how many items are owed."""
    deck = fold.round.deck
    assert deck is not None
    items = 0
    for _ in range(2):
        for seat in deck.members:
            assert deck.owed(seat) == walk_owed(deck, seat)
            items += len(deck.owed(seat))
        for where in deck.turned:
            kept = [(m, list(owing)) for m, owing in deck.partials_owed(where)]
            assert kept == walk_partials_owed(deck, where)
    return items


class _Recorded(ShuffleTable):
    """A :class:`ShuffleTable` that keeps every event it folds, in order."""

    def __init__(self, n: int, seed: int) -> None:
        super().__init__(n, seed=seed)
        self.log: list[Event] = []

    def event(self, seat: int, body: object, held: dict[int, int] | None = None) -> Event:
        made = super().event(seat, body, held)
        self.log.append(made)
        return made


def _some(t: ShuffleTable, rng: Rng, members: range, skip: int | None) -> None:
    """Each member but ``skip`` sends, or not, a part of what it owes (the rest stays owed)."""
    deck = t.fold.round.deck
    assert deck is not None
    for i in members:
        owed = deck.owed(deck.members[i])
        if i == skip or not owed or rng.below(3) == 0:
            continue
        t.deck_event(i, t.partials(i, owed[: 1 + rng.below(len(owed))]))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_shuffle_owed_kept_equals_the_walk_through_a_round_with_a_member_dropped(
    seed: int,
) -> None:
    """Five members (a threshold of 3), stock turns by every member, shares and partials sent
    in random parts, member 4 silent then dropped: after every event the kept answers equal the
    walk's; a copy taken before the drop and changed apart keeps its own; and the final fold's
    copy with the later events applied again (a refold, the drop among them) answers as the
    fold does, and as the walk."""
    rng = Rng(f"owed {seed}")
    t = _Recorded(5, seed)
    t.join_all()
    t.deal_all()
    t.share_all()
    _check(t.fold)
    before: GameState | None = None
    since = 0
    for step in range(12):
        if step == 6:
            before, since = t.fold.copy(), len(t.log)
            _drop(t, 4, [0, 1, 2])
            assert t.fold.round.deck is not None and t.fold.round.deck.gone == {4}
            _check(t.fold)
        mover = rng.below(4 if step >= 6 else 5)
        t.move(mover, "S")
        _check(t.fold)
        _some(t, rng, range(5), skip=4)
        _check(t.fold)
    assert t.refusals() == []
    deck = t.fold.round.deck
    assert deck is not None and any(w not in deck.opened for w in deck.turned)
    assert _check(t.fold) > 0  # (something is still owed: the walk's answer is not trivial)
    # A copy changed apart: the fold before the drop, one more event of its own.
    assert before is not None
    apart = before.copy()
    _check(apart)
    refold = before.copy()
    for event in t.log[since:]:
        refold.apply(event)
    _check(refold)
    assert refold.round.deck is not None
    for seat in deck.members:
        assert refold.round.deck.owed(seat) == deck.owed(seat)
    for where in deck.turned:
        assert refold.round.deck.partials_owed(where) == deck.partials_owed(where)
    # The copies did not change the fold's answers, nor the fold theirs.
    _check(t.fold)
    _check(apart)


def test_shuffle_owed_kept_follows_a_complaint_answered_after_the_drop() -> None:
    """Three members, member 2's box to member 0 spoiled and complained of, member 2 dropped:
    member 0 holds no share of its secret and owes it no partial; once the answer is taken
    (straight into the round: the kept answers are forgotten) it does, as the walk says."""
    t = dropped_unanswered()
    deck = t.fold.round.deck
    assert deck is not None and deck.gone == {2}
    assert _check(t.fold) > 0
    assert [of for of, _, _ in deck.owed(0)] == []
    before = deck.copy()
    deck.take_answer(2, DeckAnswer(1, 0, share_for(t.keys[2], 0, 3)))
    _check(t.fold)
    assert [of for of, _, _ in deck.owed(0)] == [2, 2, 2]
    assert [of for of, _, _ in before.owed(0)] == []  # (the copy before it is its own)


def test_shuffle_owed_waits_with_a_store_list_what_the_store_does_not_relieve() -> None:
    """:class:`ShareWaits` with a share store lists a member's own share only where the store
    lacks it too: every item it lists is one the store-less walk lists that the store does not
    hold (:meth:`Owed.held_in`), in the same order, a member dropped among them (five members,
    member 4 dropped, half the own shares of the positions in flight in the store)."""
    rng = Rng("owed store")
    t = ShuffleTable(5)
    t.join_all()
    t.deal_all()
    t.share_all()
    for mover in (0, 1, 2, 3, 4, 1):
        t.move(mover, "S")
    _drop(t, 4, [0, 1, 2])
    _some(t, rng, range(4), skip=None)
    deck = t.fold.round.deck
    assert deck is not None and deck.gone == {4}
    store = ShareStore()
    flight = [w for w in deck.turned if w not in deck.opened]
    for i in range(5):
        mine = [(d, p) for d, p in flight if rng.below(2)]
        store.offer(deck, t.shares(i, mine).shares)
    with_store, alone = ShareWaits(), ShareWaits()
    for waits, kept in ((with_store, store), (alone, None)):
        waits.late(0.0, t.fold, t.fold, 1.0, 0.0, store=kept)
    late = with_store.late(2.0, t.fold, t.fold, 1.0, 0.0, store=store)
    alone.late(2.0, t.fold, t.fold, 1.0, 0.0)
    expected = {
        seat: [item for item in items if not item.held_in(t.fold, store)]
        for seat, items in alone.items.items()
    }
    assert with_store.items == {seat: items for seat, items in expected.items() if items}
    assert late == sorted(with_store.items) and any(item.of == 4 for item in alone.items[0])
    assert sum(map(len, with_store.items.values())) < sum(map(len, alone.items.values()))
