"""The earliest of membership's deadlines, read only where one may come first, is the least
of them all (:mod:`p2p_nertz.protocol.deadlines`).

``Author.next_deadline`` asks after every input; :func:`earliest` reads a member's silence
timers only when the longest-unheard member's nearest one is before the deadline the author
already has, and a stall only while one of ours may vote. Whatever the standing of each member
(heard when, suspected, voted out, dropped, stalled, ourselves out), its answer is the rule's
least, the same float. (The phase's wait, which needs a final fold in a waiting phase, is
checked in simulated games: tests/test_peer_fast_paths.py.)
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as hs

from p2p_nertz.protocol.deadlines import deadlines, earliest
from p2p_nertz.protocol.membership import Membership, SilenceTimers
from p2p_nertz.protocol.state import GameState
from tests.test_folds_dropped_past_cut import _spec

_SPECS = {n: _spec(n) for n in (2, 3, 4, 5)}
_TIME = hs.floats(min_value=0.0, max_value=1e6, allow_nan=False) | hs.sampled_from(
    [0.1, 0.2, 0.3, 0.7, 1e6 + 0.1]  # (sums that round)
)


@hs.composite
def _standing(draw: hs.DrawFn) -> tuple[Membership, GameState, float, float]:
    n = draw(hs.integers(2, 5))
    seat = draw(hs.integers(0, n - 1))
    seats = hs.sets(hs.integers(0, n - 1))
    timers = SilenceTimers(
        suspect_after=draw(hs.sampled_from([0.1, 1.0, 5.0, 30.0])),
        drop_after=draw(hs.sampled_from([0.3, 3.0, 30.0])),
        phase_timeout=draw(hs.sampled_from([0.2, 6.0, 60.0])),
        max_watch=64,
    )
    membership = Membership(seat, n, 0.0, timers)
    membership.heard = draw(hs.lists(_TIME, min_size=n, max_size=n))
    membership.suspected = draw(seats)
    membership.voted = {q: draw(hs.integers(0, 9)) for q in draw(seats)}
    membership.stall = {q: (draw(_TIME), 1, (0,) * n, (0,) * n) for q in draw(seats)}
    membership.stall_scan_at = draw(_TIME)
    membership.all_heard_since = draw(hs.none() | _TIME)
    membership.listening.since = draw(_TIME)  # (woken then: a vote for silence waits)
    final = GameState(_SPECS[n])
    final.dropped = {q: draw(hs.integers(0, 9)) for q in draw(seats)}
    return membership, final, draw(_TIME), draw(_TIME)


@given(_standing())
def test_earliest_is_the_least_of_every_deadline_and_the_one_known(
    standing: tuple[Membership, GameState, float, float],
) -> None:
    membership, final, since, before = standing
    expected = min([before, *deadlines(membership, final, since)])
    assert earliest(membership, final, since, before) == expected


def test_earliest_reads_a_silence_due_before_the_deadline_known() -> None:
    membership = Membership(0, 3, 0.0, SilenceTimers(1.0, 3.0, 6.0, 64))
    membership.heard = [9.0, 9.5, 8.2]
    final = GameState(_SPECS[3])
    assert earliest(membership, final, 0.0, 9.4) == 9.2  # seat 2 suspected at 8.2 + 1
    membership.suspected = {2}
    assert earliest(membership, final, 0.0, 9.4) == 9.4  # then voted out at 11.2
    assert earliest(membership, final, 0.0, 12.0) == 10.5  # seat 1 suspected first
    final.dropped = {1: 0}
    assert earliest(membership, final, 0.0, 12.0) == 11.2  # (seat 1 is out: no timer)


def test_earliest_reads_a_stall_due_before_the_silence_timers() -> None:
    membership = Membership(0, 3, 0.0, SilenceTimers(1.0, 3.0, 6.0, 64))
    membership.heard = [10.0, 10.0, 10.0]  # suspected at 11.0
    membership.stall = {1: (4.5, 1, (0, 0, 0), (0, 0, 0))}
    membership.stall_scan_at = 10.2
    final = GameState(_SPECS[3])
    assert earliest(membership, final, 0.0, 12.0) == 10.5  # the stall's timer, 4.5 + 6
    membership.stall_scan_at = 10.7
    assert earliest(membership, final, 0.0, 12.0) == 10.7  # (not before the next scan)
    membership.voted = {1: 3}
    assert earliest(membership, final, 0.0, 12.0) == 11.0  # our vote is cast: no stall
    membership.voted = {}
    final.dropped = {0: 0}
    assert earliest(membership, final, 0.0, 12.0) == 11.0  # we are out: we vote no more
