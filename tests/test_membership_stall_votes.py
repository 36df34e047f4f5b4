"""A vote *withheld* from the stall scan, withdrawn once the member gives what it owed
(docs/protocol.md §9.2; forced lost-tail scan seed 8067).

The stall scan (:meth:`Membership.stalls`) votes out a member that keeps talking while what
finality needs of it alone (its feed up to the head it announced, its cover of what we hold)
sees no progress for ``phase_timeout``. A member recovering its own feed (§9.6) is heard and
announces nothing: the scan blamed it, and its vote stood for good, freezing our announcements
of its feed (none of its later events final anywhere) and capping its later votes (its proof
vote on a cheater, whose drop needs every member left). :meth:`Membership.relieved` withdraws
such a vote once the member has given what it owed when we voted. And what a member owes of a
feed it voted out withheld or on proof is nothing past its vote, whether that vote counts or
is capped; a vote for silence on a member still in excuses nothing (session 26, §9.2, *a vote
for silence that never ends*).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import cast

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.envelope import Message
from p2p_nertz.protocol.finality import Finality
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.membership import Membership, SilenceTimers, recovered_withdrawals
from p2p_nertz.protocol.state import GameState
from tests.test_folds_dropped_past_cut import _spec

_TIMERS = SilenceTimers(suspect_after=1.0, drop_after=5.0, phase_timeout=2.0, max_watch=64)


class _View:
    """Seat 0's view of a three-player game: every feed 5 events long, seat 1 covering
    ``cover`` of them, the held events dropping ``dropped``."""

    def __init__(self, cover: tuple[int, int, int]) -> None:
        spec = _spec(3)
        self.final = GameState(spec)
        self.tentative = GameState(spec)
        self.membership = Membership(0, 3, 0.0, _TIMERS)
        self.feeds = cast(Sequence[Sequence[Message]], [[None] * 5 for _ in range(3)])
        self.finality = cast(
            Finality,
            SimpleNamespace(
                announced=[(0, 0)] * 3,
                claimed=[(5, 5, 5)] * 3,
                held_by=[(5, 5, 5), cover, (5, 5, 5)],
            ),
        )
        self.folds = cast(Folds, SimpleNamespace(final=self.final, tentative=self.tentative))

    def cover(self, cover: tuple[int, int, int]) -> None:
        self.finality.held_by[1] = cover

    def scan(self, now: float) -> list[int]:
        """One stall scan at ``now`` (every member heard then); the votes it casts."""
        membership = self.membership
        for q in range(3):
            membership.heard_from(q, now)
        voted = []
        for q in membership.stalls(
            now, self.final, lambda: self.tentative, self.feeds, self.finality
        ):
            assert membership.vote(q, len(self.feeds[q]), out=False) == 5
            membership.proven_seats.add(q)  # (as Author.liveness does)
            voted.append(q)
        return voted

    def relieved(self) -> list[int]:
        return self.membership.relieved(self.final, self.folds, self.feeds, self.finality)


def _stalled() -> _View:
    """Seat 1 covers 3 of our 5 events, and nothing more for ``phase_timeout``: voted out."""
    view = _View((3, 5, 5))
    assert view.scan(0.0) == []
    assert view.scan(1.0) == []  # (waiting)
    assert view.scan(2.5) == [1]
    assert view.membership.voted == {1: 5}
    return view


def test_stall_vote_stands_while_the_member_still_owes_what_it_owed() -> None:
    view = _stalled()
    assert view.relieved() == []
    view.cover((4, 5, 5))  # progress, but not all it owed
    assert view.relieved() == []
    assert view.scan(3.0) == []  # (one vote per member)
    assert view.membership.voted == {1: 5}


def test_stall_vote_is_withdrawn_once_the_member_gives_what_it_owed() -> None:
    view = _stalled()
    view.cover((5, 5, 5))
    assert view.relieved() == [1]
    membership = view.membership
    assert 1 not in membership.voted and 1 not in membership.proven_seats
    assert view.relieved() == []  # (withdrawn once)
    assert view.scan(3.0) == []  # it owes nothing now: no new wait, no new vote


@pytest.mark.parametrize("where", ["final", "tentative"])
def test_stall_vote_stands_once_the_votes_drop_the_member(where: str) -> None:
    view = _stalled()
    fold = view.final if where == "final" else view.tentative
    fold.dropped = {1: 5}
    view.cover((5, 5, 5))
    assert view.relieved() == []
    assert view.membership.voted == {1: 5}


def test_stall_vote_stands_on_a_member_proven_to_fork() -> None:
    view = _stalled()
    view.membership.proof.forked_at[1] = 4
    view.cover((5, 5, 5))
    assert view.relieved() == []
    assert view.membership.voted == {1: 5}


def test_vote_for_silence_is_not_withdrawn_as_a_stall_vote() -> None:
    view = _View((5, 5, 5))
    assert view.membership.vote(1, 5, out=False) == 5  # (silence: withdrawn when heard)
    assert view.relieved() == []
    assert view.membership.voted == {1: 5}


def _voted(view: _View, reason: DropReason, *, capped: bool) -> None:
    """Seat 1 stands voting seat 2 out, for ``reason``, counting 3 of its 5 events held here
    (its vote ``capped`` or counted: either way it froze its announcements there)."""
    vote = Drop((5, 0, 3), 2, 3, reason, 4 if reason is DropReason.EQUIVOCATION else 0)
    roster = view.tentative.roster
    if capped:
        roster.frozen[2] = ((1, vote),)
    else:
        roster.votes[2] = ((1, vote),)


@pytest.mark.parametrize("capped", [False, True])
@pytest.mark.parametrize("reason", [DropReason.WITHHELD, DropReason.EQUIVOCATION])
def test_stall_scan_asks_no_cover_of_a_feed_the_member_voted_out(
    capped: bool, reason: DropReason
) -> None:
    """Seat 1 voted seat 2 out, withheld or on proof, counting 3 of its 5 events: it announces
    no more of them, so it owes no cover of them, whether its vote counts or is capped (it
    froze its announcements all the same: seed 8067, where a cheater's vote, never withdrawn on
    the chain held here, capped the proof vote of the member we then voted out for not
    covering more)."""
    view = _View((5, 5, 3))
    _voted(view, reason, capped=capped)
    assert view.scan(0.0) == []
    assert 1 not in view.membership.stall
    assert view.scan(2.5) == []


@pytest.mark.parametrize("capped", [False, True])
@pytest.mark.parametrize("word", [3, 5], ids=["keeps-its-freeze", "breaks-its-freeze"])
def test_a_vote_for_silence_on_a_member_heard_excuses_no_cover(capped: bool, word: int) -> None:
    """Seat 1 stands voting seat 2 out for silence counting 3 of its events, and we hold 5:
    seat 2 spoke after the count, an honest voter hears it by those events and withdraws, and
    a voter that lets its vote stand holds them back from finality everywhere (§9.2, *a vote
    for silence that never ends*). It owes their cover, its ``word`` past its count covering
    nothing, and is voted out *withheld* after ``phase_timeout``."""
    view = _View((5, 5, word))
    _voted(view, DropReason.SILENT, capped=capped)
    assert view.scan(0.0) == []
    assert view.membership.stall[1] == (0.0, 0, (0, 0, 5), (0, 0, 0))
    assert view.scan(2.5) == [1]


def test_a_vote_for_silence_withdrawn_relieves_the_voter() -> None:
    """The voter voted out for its cover of a member it had voted out for silence withdraws
    that vote (it heard the member) and announces the member's events: our vote is withdrawn."""
    view = _View((5, 5, 3))
    _voted(view, DropReason.SILENT, capped=False)
    assert view.scan(0.0) == []
    assert view.scan(2.5) == [1]
    assert view.relieved() == []  # (its vote still stands: its word is taken up to 3)
    view.tentative.roster.votes[2] = ()  # its withdrawal held
    view.cover((5, 5, 5))
    assert view.relieved() == [1]


def test_a_vote_for_silence_excuses_cover_where_the_held_votes_drop_the_member() -> None:
    """Where the held votes drop the member, an honest voter does not withdraw
    (``Membership.withdraws``) and announces past its count only once its final fold drops it
    (§9.2, *the freeze on the coverage term*): it owes nothing past its count meanwhile."""
    view = _View((5, 5, 3))
    _voted(view, DropReason.SILENT, capped=False)
    view.tentative.dropped = {2: 5}
    assert view.scan(0.0) == []
    assert 1 not in view.membership.stall
    assert view.scan(2.5) == []


def test_a_vote_for_silence_on_a_member_heard_while_recovering_is_withdrawn_once_recovered() -> (
    None
):
    """A member heard while we recover (§9.6) is not withdrawn from then, but once we have
    recovered: its relayed events, the only word of it where a link from it fails, were all
    fetched meanwhile, and no new one may come before our vote holds the table back. A vote
    on proof or *withheld* stands; a member not heard is not withdrawn."""
    view = _View((5, 5, 5))
    membership = view.membership
    membership.voted = {1: 5, 2: 5}
    membership.proven_seats.add(1)  # (on proof, or withheld: stands when heard)
    assert not membership.withdraws(1, view.folds, recovering=True)
    assert not membership.withdraws(2, view.folds, recovering=True)
    assert membership.voted == {1: 5, 2: 5}
    assert recovered_withdrawals(membership, view.folds) == [2]
    assert membership.voted == {1: 5}
    assert recovered_withdrawals(membership, view.folds) == []  # (once)


def test_stall_scan_counts_our_vote_cast_earlier_in_the_same_scan() -> None:
    """What each member owes is worked out once a scan, and again after each vote of ours:
    seat 1 is voted out counting 3 of its events, so seat 2, which holds those 3 and no more,
    owes no more cover of seat 1's feed, and is not voted out in the same scan."""
    view = _View((3, 5, 5))
    view.finality.held_by[2] = (5, 3, 5)  # (both owe cover of a feed: seat 1's, ours)
    membership = view.membership

    def scan(now: float) -> list[int]:
        for q in range(3):
            membership.heard_from(q, now)
        voted = []
        for q in membership.stalls(
            now, view.final, lambda: view.tentative, view.feeds, view.finality
        ):
            membership.vote(q, 3, out=False)  # (we hold 3 of seat 1's feed, not 5)
            membership.proven_seats.add(q)
            voted.append(q)
        return voted

    assert scan(0.0) == []
    assert sorted(membership.stall) == [1, 2]
    assert scan(2.5) == [1]
    assert membership.voted == {1: 3}
    assert 2 not in membership.stall  # it owes nothing now


def test_stall_votes_withdrawn_in_one_call_count_each_withdrawal() -> None:
    """A withdrawal counts at once for the next vote looked at: our vote against seat 1 is
    withdrawn (it gave all it owed), so we count all of its feed again, and seat 2, which
    covers 3 of it where it owed 5, still owes: its vote stands."""
    view = _View((5, 5, 5))
    view.finality.held_by[2] = (5, 3, 5)
    membership = view.membership
    membership.voted = {1: 3, 2: 5}
    membership.stall_votes = {1: (0.0, 0, (0, 0, 0), (0, 0, 0)), 2: (0.0, 0, (0, 5, 0), (0, 0, 0))}
    assert view.relieved() == [1]
    assert membership.voted == {2: 5}
