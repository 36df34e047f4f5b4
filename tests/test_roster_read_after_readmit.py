"""A membership event timed before the last readmission, read after it, is not read
(``roster._read``; docs/protocol.md §9.8, §13 *a vote in a readmitted member's gap*).

``scripts/soak.py --late-withdrawals --players 3-5`` seed 223 (five players): seats 0 and 3
dropped (cuts 39 and 35) and readmitted at round 2's start (Lamport 425), their gaps
``{0: (39, 48), 3: (35, 46)}``. Seat 1 took seat 0's events in its gap late, after the
readmission, among them a vote on seat 3 (at 295, counting 35) that never counts: read at its
place in the game's order, it stood in ``freezes`` for good (no withdrawal of it ever came),
froze seat 0's cover of seat 3 at 35, and held seat 1's stable time without itself below its
own drop (539) for ever: it stayed in ``commit`` while the others ended the game.
"""

from __future__ import annotations

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.roster import freezes, voted_gone
from p2p_nertz.protocol.state import Roster


def _vote(target: int, count: int, reason: DropReason = DropReason.SILENT) -> Drop:
    return Drop(frontier=(40, 34, 41, 35, 37), seat=target, last_seq=count, reason=reason)


def _readmitted(at: int = 425) -> Roster:
    """Five seats; the roster as a readmission at ``at`` leaves it (its read reset)."""
    roster = Roster(5)
    roster.readmitted_at = {0: at, 3: at}
    return roster


def test_a_vote_timed_before_the_readmission_and_read_after_it_freezes_nothing() -> None:
    roster = _readmitted()
    roster.read_uncounted(0, 41, _vote(3, 35), lamport=295)  # (in seat 0's gap)
    assert roster.read == ()
    assert freezes(roster, 3) == {}
    assert not voted_gone(roster, 3)


def test_events_since_the_readmission_are_read_as_before() -> None:
    roster = _readmitted()
    roster.read_uncounted(1, 50, _vote(0, 39), lamport=430)
    assert [op[:2] for op in roster.read] == [(1, 50)]
    assert roster.read_keys == ((430, 1, 50),)
    assert freezes(roster, 0) == {1: 39}
    # Read late but after the readmission: at its place in the order, as before.
    roster.read_uncounted(2, 59, _vote(0, 39), lamport=428)
    assert roster.read_keys == ((428, 2, 59), (430, 1, 50))
    assert freezes(roster, 0) == {1: 39, 2: 39}


def test_no_readmission_reads_every_event_late_or_not() -> None:
    roster = Roster(5)
    roster.read_uncounted(1, 50, _vote(0, 39), lamport=430)
    roster.read_uncounted(0, 41, _vote(3, 35), lamport=295)
    assert roster.read_keys == ((295, 0, 41), (430, 1, 50))
    assert freezes(roster, 3) == {0: 35}


def test_a_majority_voted_before_the_readmission_read_late_is_no_majority() -> None:
    """``voted_gone`` reads the same list: votes read late from before the readmission
    never make a majority standing against a member."""
    roster = _readmitted()
    for voter, seq in ((0, 41), (2, 40), (4, 39)):
        roster.read_uncounted(voter, seq, _vote(3, 35), lamport=300 + voter)
    assert not voted_gone(roster, 3)
    for voter, seq in ((0, 50), (2, 60), (4, 57)):
        roster.read_uncounted(voter, seq, _vote(3, 35), lamport=440 + voter)
    assert voted_gone(roster, 3)
