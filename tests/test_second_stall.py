"""The second stall over a vote for silence bars the readmission (docs/protocol.md §9.2, *a
second stall*; ``protocol/second_stall.py``), on a real ``Roster``: which drops are such a
stall, the first readmission after one taken, the second refused, and the other kinds of drop
barring nothing."""

from __future__ import annotations

import pytest

from p2p_nertz.protocol import second_stall
from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.fold_values import RefusalCode, Refuse
from p2p_nertz.protocol.roster import Roster

LIAR, TARGET = 1, 0
_SILENT, _WITHHELD, _REJOIN = DropReason.SILENT, DropReason.WITHHELD, DropReason.REJOIN


def _drop(target: int, last_seq: int, reason: DropReason) -> Drop:
    return Drop(frontier=(0, 0, 0, 0), seat=target, last_seq=last_seq, reason=reason)


def _voted_out(roster: Roster, seq: int, *, own_vote: bool, reason: DropReason) -> None:
    """The liar (its event ``seq``) votes the target out for silence if ``own_vote``; the
    three others vote the liar out for ``reason`` at its count ``seq``: it is dropped."""
    if own_vote:
        roster.vote(LIAR, seq, _drop(TARGET, 5, _SILENT), lamport=seq)
    for voter in (0, 2, 3):
        roster.vote(voter, seq + 1, _drop(LIAR, seq, reason), lamport=seq + 1)
    assert roster.settle(seq + 2) == [(LIAR, seq)]


def _rejoined(roster: Roster, once: frozenset[int], request: int) -> frozenset[int]:
    once = second_stall.rejoin(roster, once, _drop(LIAR, request, _REJOIN), over=False)
    assert roster.readmit(request + 1) == [LIAR]
    return once


def test_second_stall_the_first_readmission_is_taken_and_the_second_refused() -> None:
    roster = Roster(4)
    _voted_out(roster, 10, own_vote=True, reason=_WITHHELD)
    assert second_stall.stalled(roster, LIAR)
    assert not second_stall.barred(roster, frozenset(), LIAR)
    once = _rejoined(roster, frozenset(), 20)
    assert once == {LIAR} and LIAR not in roster.dropped
    assert not second_stall.stalled(roster, LIAR)  # (in again, its vote cleared)
    _voted_out(roster, 30, own_vote=True, reason=_WITHHELD)
    assert second_stall.barred(roster, once, LIAR)
    with pytest.raises(Refuse) as refused:
        second_stall.rejoin(roster, once, _drop(LIAR, 40, _REJOIN), over=False)
    assert refused.value.reason.code is RefusalCode.BAD_REJOIN
    assert roster.rejoining == {} and LIAR in roster.dropped


@pytest.mark.parametrize(
    ("own_vote", "reason"),
    [(True, _SILENT), (False, _WITHHELD)],
    ids=["dropped-for-silence", "withheld-with-no-vote-of-its-own"],
)
def test_second_stall_other_kinds_of_drop_bar_nothing(own_vote: bool, reason: DropReason) -> None:
    """A member dropped for silence with its vote for silence standing (a partition's minority
    votes everyone out), or *withheld* with no such vote, rejoins every time."""
    roster = Roster(4)
    once: frozenset[int] = frozenset()
    for seq in (10, 30, 50):
        _voted_out(roster, seq, own_vote=own_vote, reason=reason)
        assert not second_stall.stalled(roster, LIAR)
        once = _rejoined(roster, once, seq + 10)
    assert once == frozenset()


def test_second_stall_a_stall_then_a_crash_bars_nothing() -> None:
    """Readmitted after a stall, then dropped for silence alone (a crash): not the same kind."""
    roster = Roster(4)
    _voted_out(roster, 10, own_vote=True, reason=_WITHHELD)
    once = _rejoined(roster, frozenset(), 20)
    _voted_out(roster, 30, own_vote=False, reason=_SILENT)
    assert not second_stall.barred(roster, once, LIAR)
    assert _rejoined(roster, once, 40) == {LIAR}


def test_second_stall_a_vote_on_a_member_dropped_since_bars_nothing() -> None:
    """The liar's vote for silence stands on a member the others dropped too: no stall over
    a member the others hear."""
    roster = Roster(4)
    _voted_out(roster, 10, own_vote=True, reason=_WITHHELD)
    once = _rejoined(roster, frozenset(), 20)
    _voted_out(roster, 30, own_vote=True, reason=_WITHHELD)
    for voter in (2, 3):
        roster.vote(voter, 40, _drop(TARGET, 6, _SILENT), lamport=40)
    assert roster.settle(41) == [(TARGET, 6)]
    assert not second_stall.barred(roster, once, LIAR)
