"""A vote never caps a vote against its own voter that answers it (counts it), and a drop
revives no capped vote its voter withdrew before it (docs/protocol.md §9.2, *a vote never
caps a vote against its voter*, session 39; ``roster.capped``, ``roster._unrevived``).

The lie fuzzer's seed 14 beside a crash (``tests/test_sim_liars_crash.py``) in its smallest
shape, built by hand on :class:`Folds`: liar R votes Q out for silence while Q is heard,
counting ``c``; X crashes, and Q, R (and the others) vote X out, Q's vote capped by R's
(signed past ``c``); X comes back and they withdraw; then the honest members vote R out
*withheld*, Q's vote among them, also past ``c``. Before session 39 the held fold's only fixed
point dropped nobody: R's vote capped Q's vote on R, and in the fold where R was dropped its
caps were lifted in the past, Q's vote on X (withdrawn since) counted and dropped X before X's
vote on R, which then counted for nothing. The table waited for good (R's vote froze Q's
events past ``c``).
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason, Join
from p2p_nertz.protocol.envelope import KIND_DROP, KIND_JOIN
from p2p_nertz.protocol.state import Event, capped
from tests.test_folds_dropped_past_cut import _drops, _folds, _spec

_S, _W, _H = DropReason.SILENT, DropReason.WITHDRAW, DropReason.WITHHELD


class _Votes:
    """Drop events in order: each member's next seq, a Lamport time that only grows, and a
    frontier holding every event signed so far (a voter's count of a member is what its
    frontier holds of it: ``roster.contradicts``)."""

    def __init__(self, players: int) -> None:
        self.players = players
        self.seqs = [1] * players
        self.lamport = 10
        self.events = [
            Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=(0,) * players)) for s in range(players)
        ]

    def drop(self, voter: int, target: int, reason: DropReason, count: int | None = None) -> int:
        """``voter``'s drop event on ``target`` (its count: all it holds unless ``count``);
        the seq it signs."""
        held = [seq if q != voter else seq - 1 for q, seq in enumerate(self.seqs)]
        last = held[target] if count is None else count
        if reason is _W:
            last = 0
        else:
            held[target] = last
        self.seqs[voter] += 1
        self.lamport += 2
        body = Drop(tuple(held), target, last, reason)
        self.events.append(Event(voter, self.seqs[voter], self.lamport, KIND_DROP, body))
        return self.seqs[voter]


def _seed_14(players: int, *, withdrawn: bool = True) -> tuple[list[Event], int, int]:
    """The shape at ``players``: R (the last seat) votes Q (seat 1) out counting its join;
    X (seat 0) is voted out for silence by Q, R and, at five, seat 2 (a majority only with
    Q's vote), who withdraw (``withdrawn``); then X, Q and, from four, seat 2 vote R out
    *withheld* (a majority only with Q's vote). The events, R's seat and its count."""
    liar = players - 1
    votes = _Votes(players)
    votes.drop(liar, 1, _S, count=1)
    others = [2] if players >= 4 else []
    for voter in (1, liar, *others):
        votes.drop(voter, 0, _S)
    if withdrawn:
        for voter in (1, liar, *others):
            votes.drop(voter, 0, _W)
    count = votes.seqs[liar]
    for voter in (0, 1, *others):
        votes.drop(voter, liar, _H, count=count)
    return votes.events, liar, count


@pytest.mark.parametrize("players", [3, 4, 5])
def test_folds_a_liars_vote_does_not_keep_it_in_when_the_others_vote_it_out(
    players: int,
) -> None:
    """R is dropped at the honest members' count, X is not: every view holding a prefix of
    the events in their order drops nobody else (no view makes X's drop final), and the
    tentative fold holding all of them is a fixed point (the caps it folded with are those
    it decides), its final fold dropping alike."""
    events, liar, count = _seed_14(players)
    spec = _spec(players)
    assert _drops(spec, events) == {liar: count}
    tentative = _folds(spec, events).tentative
    assert tentative.standing_caps() == tentative.vote_caps
    for held in range(len(events)):
        assert _drops(spec, events[:held]) in ({}, {liar: count})


@pytest.mark.parametrize("players", [3, 4, 5])
def test_folds_a_vote_on_a_member_that_is_silent_still_counts_and_caps(players: int) -> None:
    """The liar's vote on a member that really is silent (Q signs nothing past the count):
    it counts toward Q's drop with the others' votes, and, short of a majority, it stands
    and caps Q's votes past its count, as before, but a vote against the liar itself."""
    liar = players - 1
    votes = _Votes(players)
    votes.drop(liar, 1, _S)
    spec = _spec(players)
    assert _drops(spec, votes.events) == {}
    caps = _folds(spec, votes.events).tentative.standing_caps()
    frontier = (*(1,) * liar, 2)  # (Q holds the liar's vote, its event 2)
    assert capped(caps, 1, 2, Drop(frontier, 0, 1, _S))
    assert not capped(caps, 1, 2, Drop(frontier, liar, 2, _H))
    assert not capped(caps, 1, 1, Drop(frontier, 0, 1, _S))
    # A vote on the liar signed without its vote (cut off from each other) is capped: two
    # votes each past the other's count both cap, as before (tests/test_folds_mutual_caps.py).
    assert capped(caps, 1, 2, Drop((1,) * players, liar, 1, _H))
    for voter in range(2, players - 1):
        votes.drop(voter, 1, _S)
    votes.drop(0, 1, _S)
    assert _drops(spec, votes.events) == {1: 1}


def test_folds_two_members_voting_each_other_out_drop_nobody() -> None:
    """At two members the liar's vote caps nothing of the other's vote against it, and
    neither vote is a majority (DESIGN.md §6: with two players nobody can be dropped); the
    liar's vote stands (it caps the other's votes past its count), and no abandon is
    touched by the exemption (an abandon is capped past a fork alone, ``roster.with_forks``)."""
    votes = _Votes(2)
    votes.drop(1, 0, _S, count=1)
    votes.drop(0, 1, _H)
    spec = _spec(2)
    assert _drops(spec, votes.events) == {}
    caps = _folds(spec, votes.events).tentative.standing_caps()
    assert not capped(caps, 0, 2, Drop((1, 2), 1, 2, _H))
    assert caps[0][0] == 1
    assert not capped(caps, 0, 2, Drop((1, 2), 1, 2, DropReason.ABANDON))
