"""Which members dropped still hold the time back, and what an event delivered brings to
finality: one rule each, for the peer, the spectator and the audit.

A member dropped holds the stable time back until every event of it up to its cut is held
(those count, however late they come), unless it was readmitted: then it is a member again for
everything after its readmission (docs/protocol.md §8, §9.2). The rule's home is
``finality.released`` and ``finality.rejoined``; the peer asks it through ``settle`` (its
feeds are lists of messages), the audit through ``Fold._bound`` (its feeds keep 24 bytes an
event, ``audit.delivery.Feed``), which knows from the last pass that a member is readmitted
from its cut but not when, and passes 0. Each case is run against both feed stores.

What finality takes from an event delivered (its author's early beat now covered, then the
event itself as an ack unless it is our own, §7.1) is ``Finality.take_event``, the one step of
the peer's delivery and the spectator's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Sized
from types import SimpleNamespace
from typing import Any

import pytest

from p2p_nertz.audit.collect import Collector
from p2p_nertz.audit.delivery import Feed
from p2p_nertz.audit.fold import Fold
from p2p_nertz.protocol.bodies import ID_PREFIX, Beat, held_ids
from p2p_nertz.protocol.finality import Finality, rejoined, released
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rules import Rules


def _peer_feed(lamports: Sequence[int]) -> Sized:
    """A peer's feed: its messages (the rule reads how many, and their times)."""
    return [SimpleNamespace(lamport=t) for t in lamports]


def _audit_feed(lamports: Sequence[int]) -> Feed:
    """The audit's feed: 24 bytes an event (only the head and the last clock read here)."""
    feed = Feed()
    for t in lamports:
        feed.lamports.append(t)
    feed.head = len(lamports)
    feed.last_lamport = lamports[-1] if lamports else 0
    return feed


STORES = pytest.mark.parametrize("make", [_peer_feed, _audit_feed], ids=["peer", "audit"])
Make = Callable[[Sequence[int]], Sized]


@STORES
def test_released_a_dropped_member_holds_back_until_its_events_up_to_the_cut_are_held(
    make: Make,
) -> None:
    feeds = [make([1, 2, 3]), make([4, 5]), make([6, 7, 8, 9]), make([])]
    # Seat 1 cut at 3 (one event of it still to come), seat 2 at 3 (held, and one past it),
    # seat 3 at 0 (nothing of it counts).
    assert released({1: 3, 2: 3, 3: 0}, feeds) == {2: 3, 3: 0}
    feeds[1] = make([4, 5, 10])  # its third event came, however late: out now
    assert released({1: 3, 2: 3, 3: 0}, feeds) == {1: 3, 2: 3, 3: 0}
    assert released({}, feeds) == {}


def _least(clocks: Sequence[int]) -> Callable[..., int]:
    """A bound as the audit's: the least clock of the seats not excluded."""

    def bound(excluded: dict[int, int], floor: int | None = None) -> int:
        return min((c for s, c in enumerate(clocks) if s not in excluded), default=1 << 40)

    return bound


def test_rejoined_a_readmitted_member_holds_back_from_its_readmission_on() -> None:
    bound = _least([50, 20, 40])  # seat 1 (out) is behind the others
    out = {1: 7}
    assert bound(out) == 40
    # Readmitted at 30: a member again after it, and behind, so the time stops at 30 ...
    assert rejoined(40, out, {1: 30}, bound) == 30
    # ... at 10, its own clock (20) holds it back, as any member's does ...
    assert rejoined(40, out, {1: 10}, bound) == 20
    # ... and at 0 (the audit, which does not know when) it holds it back as a member.
    assert rejoined(40, out, {1: 0}, bound) == bound({})
    # Readmitted later than the time: nothing changes; nor for a seat not out.
    assert rejoined(40, out, {1: 45}, bound) == 40
    assert rejoined(40, out, {2: 0}, bound) == 40


def _fold(cuts: dict[int, int], gaps: dict[int, tuple[tuple[int, int], ...]]) -> Fold:
    ids = [Identity.generate(bytes([i + 1]) * 32).peer_id for i in range(3)]
    spec = GameSpec.create([(pid, f"p{i}") for i, pid in enumerate(ids)], Rules(), b"released")
    roster = {pid: seat for seat, pid in enumerate(spec.peer_ids)}
    found = Collector(spec, roster, strict=False)
    return Fold(spec, found, cuts=cuts, gaps=gaps, caps={}, deep=False, on_fold=None)


def _feeds(*lamports: Sequence[int]) -> list[Feed]:
    return [_audit_feed(t) for t in lamports]


def test_audit_bound_a_dropped_member_holds_back_until_its_events_up_to_the_cut_are_read() -> None:
    fold = _fold({}, {})
    # Seat 1 dropped at 3, two of its events read so far (the others' logs come later).
    feeds = _feeds([10, 60], [5, 9], [30, 70])
    assert fold._bound(feeds, {1: 3}, 0) == 9
    feeds = _feeds([10, 60], [5, 9, 12], [30, 70])
    assert fold._bound(feeds, {1: 3}, 0) == 60  # (its third read: the others' clocks)
    feeds = _feeds([10, 60], [5, 9, 12, 13, 14], [30, 70])
    assert fold._bound(feeds, {1: 3}, 0) == 60  # (past the cut: nothing more counts)


def test_audit_bound_a_member_readmitted_from_its_cut_holds_back_again() -> None:
    feeds = _feeds([10, 60], [5, 9, 12, 40], [30, 70])
    # The last pass found seat 1 readmitted from its cut at 3 (its rejoin request at 4): its
    # events from there on count again, and the whole feed holds the time back.
    assert _fold({1: 3}, {1: ((3, 4),)})._bound(feeds, {1: 3}, 0) == 40
    # Readmitted from another cut than the one the fold dropped it at: out, as before.
    assert _fold({1: 3}, {1: ((2, 4),)})._bound(feeds, {1: 3}, 0) == 60


def test_audit_bound_at_the_end_only_a_feed_missing_events_that_count_holds_back() -> None:
    fold = _fold({2: 2}, {})  # the last pass cut seat 2 at 2, this pass has not folded it
    feeds = _feeds([10, 60], [5, 9], [30])
    # Seat 1's first event named seat 0's third, past its fork: never read.
    feeds[0].named = [(3, 1, 1)]
    # Seat 0 lacks an event that counts, seat 2 one up to its cut: the least of theirs.
    assert fold._bound(feeds, {}, 1 << 63, ended=True) == 30
    feeds[2] = _feeds([30, 35])[0]
    assert fold._bound(feeds, {}, 1 << 63, ended=True) == 60
    # Named by seat 2's third event, past its cut at 2 (it counts for nobody): nothing waits
    # for it (two-liar seed 2464).
    feeds[0].named = [(3, 2, 3)]
    assert fold._bound(feeds, {}, 1 << 63, ended=True) == 1 << 63
    feeds[0].named = [(2, 1, 1)]
    assert fold._bound(feeds, {}, 1 << 63, ended=True) == 1 << 63  # (nothing left to wait for)


# -- what finality takes from an event delivered (peer and spectator alike) ------------------------
def _event(seat: int, seq: int, lamport: int, frontier: tuple[int, ...]) -> Any:
    """An event as ``Finality.take_event`` reads it: the message and its body (a frontier and
    its ids, taken from the feeds as they stand, ``held_ids``)."""
    message = SimpleNamespace(seq=seq, lamport=lamport, id=bytes([seat + 1, seq]) * 16)
    return message, SimpleNamespace(frontier=frontier)


def test_take_event_an_event_is_an_ack_but_our_own_and_brings_its_authors_early_beat() -> None:
    feeds: list[list[Any]] = [[], [], []]
    finality = Finality(0, feeds)
    mine, body = _event(0, 1, 3, (1, 0, 0))
    feeds[0].append(mine)
    body.frontier_ids = held_ids(feeds, body.frontier)
    assert finality.take_event(0, mine, body) == (None, None)  # (nothing to ask of ours)
    assert finality.held_by[0] == (1, 0, 0)
    first, body = _event(1, 1, 5, (1, 1, 0))
    feeds[1].append(first)
    body.frontier_ids = held_ids(feeds, body.frontier)
    assert finality.take_event(1, first, body) == (None, None)  # (it holds nothing we lack)
    assert finality.held_by[1] == (1, 1, 0)  # (an ack: it holds our event, the ids match)
    # An event whose author holds an event of seat 2 not here: shown, to be asked for.
    elsewhere = bytes([3, 1]) * 16  # (seat 2's first event, not here)
    second, body = _event(1, 2, 9, (1, 2, 1))
    feeds[1].append(second)
    ids = (mine.id[:ID_PREFIX], second.id[:ID_PREFIX], elsewhere[:ID_PREFIX])
    body.frontier_ids = ids
    early, ack = finality.take_event(1, second, body)
    assert early is None
    assert ack == (Beat(2, second.id, (1, 2, 1), ids), [2], [])
    # A beat of seat 1 that announces its head at 3, not held here yet: its cover waits ...
    third, body = _event(1, 3, 12, (1, 3, 1))
    ids = (mine.id[:ID_PREFIX], third.id[:ID_PREFIX], elsewhere[:ID_PREFIX])
    beat = Beat(3, third.id, (1, 3, 1), ids)
    finality.take_beat(1, 13, beat)
    assert finality.early[1] == (13, beat)
    # ... and comes with the event it announced, before the event's own ack.
    feeds[1].append(third)
    body.frontier_ids = ids
    early, ack = finality.take_event(1, third, body)
    assert early == (beat, [2], []) and finality.early[1] is None
    assert ack is not None and ack[0].head_seq == 3
    assert finality.held_by[1] == (1, 3, 0)
