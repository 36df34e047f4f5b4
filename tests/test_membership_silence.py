"""Whether a member still in is silent now (:meth:`Membership.track_silence`), asked after
every input, answers as the walk over every member does.

It reads the longest-unheard other member first, and walks the members only when that one is
silent: a float sum does not decrease when a term grows, so nobody is silent while that one is
not. Whatever the members' standing (heard when, dropped, ourselves heard or not), the record
it keeps (:attr:`Membership.all_heard_since`) is the walk's, the same float.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as hs

from p2p_nertz.protocol.deadlines import deadlines
from p2p_nertz.protocol.membership import Membership, SilenceTimers
from p2p_nertz.protocol.state import GameState
from tests.test_folds_dropped_past_cut import _spec

_TIME = hs.floats(min_value=0.0, max_value=1e6, allow_nan=False) | hs.sampled_from(
    [0.1, 0.2, 0.3, 0.7, 1e6 + 0.1]  # (sums that round)
)


def _walk(membership: Membership, now: float, dropped: dict[int, int]) -> float | None:
    """The record the rule keeps: None while a member still in is silent, else since when
    none is (the slow twin of track_silence)."""
    limit = membership.timers.suspect_after
    silent = any(
        now >= membership.heard[q] + limit
        for q in range(membership.n)
        if q != membership.seat and q not in dropped
    )
    if silent:
        return None
    return now if membership.all_heard_since is None else membership.all_heard_since


@hs.composite
def _standing(draw: hs.DrawFn) -> tuple[Membership, float, dict[int, int]]:
    n = draw(hs.integers(1, 5))
    seat = draw(hs.integers(0, n - 1))
    suspect_after = draw(hs.sampled_from([0.1, 1.0, 5.0, 30.0]))
    membership = Membership(seat, n, 0.0, SilenceTimers(suspect_after, 30.0, 60.0, 64))
    membership.heard = draw(hs.lists(_TIME, min_size=n, max_size=n))
    membership.all_heard_since = draw(hs.none() | _TIME)
    dropped = {q: 0 for q in draw(hs.sets(hs.integers(0, n - 1)))}
    return membership, draw(_TIME), dropped


@given(_standing())
def test_track_silence_keeps_the_walks_record(
    standing: tuple[Membership, float, dict[int, int]],
) -> None:
    membership, now, dropped = standing
    expected = _walk(membership, now, dropped)
    membership.track_silence(now, dropped)
    assert membership.all_heard_since == expected


def test_track_silence_sees_a_silent_member_behind_the_quick_bound() -> None:
    membership = Membership(0, 4, 0.0, SilenceTimers(1.0, 3.0, 6.0, 64))
    membership.heard = [0.0, 9.5, 9.8, 8.2]  # (our own time is never read)
    membership.track_silence(9.0, {})
    assert membership.all_heard_since == 0.0  # nobody silent: the record stands
    membership.track_silence(9.2, {})
    assert membership.all_heard_since is None  # seat 3, heard at 8.2, silent since 9.2
    membership.track_silence(9.3, {3: 0})
    assert membership.all_heard_since == 9.3  # seat 3 is out: all heard again from now


def test_a_waker_votes_for_silence_only_once_it_has_listened_for_suspect_after() -> None:
    """docs/protocol.md §9.2, *a member woken from a sleep*: whatever it reads meanwhile (a
    flood it cannot get through), a waker votes out at ``suspect_after`` after waking the
    members it has not heard, and only those; the next deadline says when."""
    membership = Membership(0, 4, 0.0, SilenceTimers(1.0, 3.0, 6.0, 64))
    ears = membership.listening
    for tick in range(9):  # inputs every 0.25 s until 2 s: no break
        ears.saw(tick * 0.25)
    membership.heard = [0.0, 2.0, 2.0, 2.0]
    ears.saw(10.0)  # asleep until 10 s: every timer has run out, nothing read yet
    assert membership.silence_due(10.0, {}) == [(1, False), (2, False), (3, False)]
    membership.heard_from(1, 10.0)  # seat 1's messages read; seats 2 and 3 still queued
    final = GameState(_spec(4))
    assert min(deadlines(membership, final, 0.0)) == 11.0
    for at in (10.25, 10.5, 10.75):
        ears.saw(at)
        membership.heard_from(1, at)  # (seat 1 keeps talking; the others' messages wait)
        assert membership.silence_due(at, {}) == []
    ears.saw(11.0)
    assert membership.silence_due(11.0, {}) == [(2, True), (3, True)]


@given(
    hs.integers(2, 5).flatmap(
        lambda n: hs.tuples(
            hs.just(n),
            hs.integers(0, n - 1),
            hs.lists(hs.tuples(hs.integers(0, n - 1), _TIME), max_size=30),
        )
    )
)
def test_least_heard_is_the_least_other_time_after_any_hearing(
    case: tuple[int, int, list[tuple[int, float]]],
) -> None:
    # The silence timers read the least time another member was last heard from a value kept
    # by heard_from (latency.md, session 26), not the list: after any hearings, in any order
    # and at any times (earlier ones too), it is the list's least but our own.
    n, seat, hearings = case
    membership = Membership(seat, n, 0.0, SilenceTimers(1.0, 30.0, 60.0, 64))
    for q, now in hearings:
        membership.heard_from(q, now)
        assert membership.least_heard == min(t for r, t in enumerate(membership.heard) if r != seat)


@given(_standing(), hs.sets(hs.integers(0, 4)))
def test_track_silence_counts_a_member_the_held_votes_drop_as_out(
    standing: tuple[Membership, float, dict[int, int]], held: set[int]
) -> None:
    """A member the held votes drop (decided, not yet final) is out for the blame rule, as
    for finality once decided (session 37): the record is the walk's over the members neither
    fold drops, and the held fold is read only when a member the final fold counts is silent."""
    membership, now, dropped = standing
    out = {q: 0 for q in held if q < membership.n}
    expected = _walk(membership, now, dropped | out)
    silent_in_final = _walk(membership, now, dropped) is None
    reads: list[None] = []

    def held_dropped() -> dict[int, int]:
        reads.append(None)
        return out

    membership.track_silence(now, dropped, held_dropped)
    assert membership.all_heard_since == expected
    assert len(reads) <= 1 and (not reads or silent_in_final)


def test_track_silence_blames_again_once_the_held_votes_drop_a_crashed_member() -> None:
    membership = Membership(1, 5, 0.0, SilenceTimers(1.0, 3.0, 6.0, 64))
    membership.heard = [2.0, 0.0, 9.8, 9.9, 9.7]  # seat 0 crashed at 2
    membership.track_silence(10.0, {}, dict)
    assert membership.all_heard_since is None  # not dropped anywhere: nobody is blamed
    membership.track_silence(10.1, {}, lambda: {0: 11})
    assert membership.all_heard_since == 10.1  # the held votes drop it: blame counts from now
    membership.heard[3] = 8.0  # another member falls silent: nobody is blamed again
    membership.track_silence(10.2, {}, lambda: {0: 11})
    assert membership.all_heard_since is None
