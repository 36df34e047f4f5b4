"""A drop is what the votes decide without the member's events past its cut (§9.2).

None of a member's events past its cut counts once it is dropped there, and a peer that holds
its feed only up to the cut makes the drop final without them (``finality.settle``). So the
roster decides a drop as the votes decide it without those events (``Roster._decided``), and
a fold that holds them and one that does not reach the same drop. Each case below is built by
hand on the roster and checked both ways: the votes as every event is read, and the votes
without the member's events past the cut (what a peer cut off from it holds, and what the
fold, folding again with the cut, reads next).
"""

from __future__ import annotations

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.state import Roster


def _vote(target: int, last_seq: int, reason: DropReason = DropReason.SILENT) -> Drop:
    return Drop(frontier=(0,) * 5, seat=target, last_seq=last_seq, reason=reason)


def _withdraw(target: int) -> Drop:
    return _vote(target, 0, DropReason.WITHDRAW)


Op = tuple[int, int, Drop]  # (voter, its seq, vote)


def _fold(seats: int, ops: list[Op], *, without: tuple[int, int] | None = None) -> Roster:
    """The roster after ``ops`` in order (each at the next Lamport time), as the game fold
    reads them; ``without``: (seat, cut) whose events past the cut are not read."""
    roster = Roster(seats)
    for lamport, (voter, seq, body) in enumerate(ops, start=1):
        if without is not None and voter == without[0] and seq > without[1]:
            continue
        if roster.vote(voter, seq, body):
            roster.settle(lamport)
    return roster


def test_roster_a_vote_past_the_cut_that_hastened_a_drop_keeps_no_one_in() -> None:
    """Soak seed 2086 (5 players): seat 1, cut off, votes seat 0 out with its seq 118; seats
    2, 3 and 4 vote seat 0 out too (seat 1's vote completes the drop, seat 4's would have a
    moment later), then seat 1 out counting 117 of its feed. Seat 1 is dropped at 117: the
    others, holding none of its events past 117, drop it there and make that final.
    (``vote_floor`` kept it in: its vote past the cut had decided a drop.)"""
    ops = [
        (1, 118, _vote(0, 123)),
        (2, 50, _vote(0, 123)),
        (3, 50, _vote(0, 123)),  # seat 0 out, with seat 1's vote
        (4, 50, _vote(0, 123)),  # (seat 0 out by these three alone)
        (2, 51, _vote(1, 117)),
        (3, 51, _vote(1, 117)),
        (4, 51, _vote(1, 117)),
    ]
    held = _fold(5, ops)
    assert held.dropped == {0: 123, 1: 117}
    cut_off = _fold(5, ops, without=(1, 117))
    assert cut_off.dropped == held.dropped
    # (The fold, folding again with seat 1 cut at 117, takes seat 0's drop at seat 4's vote.)
    assert cut_off.drop_at[0] == 4 and held.drop_at[0] == 3


def test_roster_a_drop_that_needs_the_members_own_vote_past_the_cut_is_no_drop() -> None:
    """The class of soak seed 53 (4 players): seat 1's vote, past the cut the others give it,
    completes seat 0's drop, and only the roster of three that drop leaves lets seats 2 and 3
    drop seat 1. Cut there, its vote would not count, seat 0 would stay, and seat 1 would not
    be dropped either: each drop would undo the other. Not a drop, then, either way."""
    ops = [
        (1, 20, _vote(0, 30)),
        (2, 40, _vote(0, 30)),
        (3, 40, _vote(0, 30)),  # seat 0 out (three of four), with seat 1's vote
        (2, 41, _vote(1, 15)),
        (3, 41, _vote(1, 15)),  # two of the three left, at a cut below seat 1's vote
    ]
    held = _fold(4, ops)
    assert held.dropped == {0: 30}
    cut_off = _fold(4, ops, without=(1, 15))
    assert 1 not in cut_off.dropped and cut_off.dropped == {}
    # Votes that count further than the vote drop it (a cut the drop above stands with).
    held.vote(2, 42, _withdraw(1))
    assert held.vote(2, 43, _vote(1, 25))
    assert held.settle(6) == [(1, 25)]


def test_roster_a_withdrawal_past_the_cut_does_not_save_the_member() -> None:
    """The same class the other way (4 players): seat 1 votes seat 0 out within what the
    others hold of it, then withdraws past it. Without the withdrawal, seat 0's drop leaves
    three members, and seats 2 and 3 drop seat 1 at 15: the others, cut off from it, make
    both drops final. So seat 1 is dropped at 15 where the withdrawal is held too, and with
    it gone the roster of three drops seat 0 on the votes of 2 and 3."""
    ops = [
        (1, 10, _vote(0, 30)),
        (1, 19, _withdraw(0)),
        (2, 40, _vote(0, 30)),
        (3, 40, _vote(0, 30)),
        (2, 41, _vote(1, 15)),
        (3, 41, _vote(1, 15)),
    ]
    cut_off = _fold(4, ops, without=(1, 15))
    assert cut_off.dropped == {0: 30, 1: 15}
    held = _fold(4, ops)
    assert held.dropped == cut_off.dropped


def test_roster_a_member_with_no_events_past_the_cut_is_dropped_by_the_votes_alone() -> None:
    """The usual drop is unchanged: a majority of the roster's votes, the highest count."""
    roster = Roster(4)
    assert roster.vote(0, 5, _vote(3, 7))
    assert roster.vote(1, 5, _vote(3, 9))
    assert roster.settle(10) == []
    assert roster.vote(2, 5, _vote(3, 8))
    assert roster.settle(11) == [(3, 9)]
    # Votes and withdrawals on a member dropped change nothing there, and are kept.
    assert not roster.vote(0, 6, _withdraw(3))
    assert roster.dropped == {3: 9} and len(roster.ops) == 4


def test_roster_three_players_the_drop_at_the_count_of_a_voter_the_member_voted_out() -> None:
    """3 players: seat 1's vote, past the cuts the others give it, completes seat 0's drop,
    and that drop keeps seat 0's vote on seat 1 (counting 18) from counting: seat 2's vote
    alone is no majority. Without seat 1's events past 18, seat 0 stays and the two drop
    seat 1 at 18 (the highest count): that is the drop, where its vote is held too.

    The one fold cannot take seat 0's drop back (its events since were left out of it): the
    fold made again does, with seat 1's cut imposed (``Folds._cut_unheld``, where no other
    member holds seat 1's event 20). Of the votes' counts, 15 is no such cut (without seat
    1's events past 15 it is dropped at 18), 18 is."""
    ops = [
        (1, 20, _vote(0, 30)),
        (2, 40, _vote(0, 30)),  # seat 0 out (two of three), with seat 1's vote
        (0, 25, _vote(1, 18)),  # (signed before its drop reached it: counts for nothing)
        (2, 41, _vote(1, 15)),
    ]
    # Seat 1's cut imposed, as the fold made again does: the drops of the cut off peers.
    cut_off = _fold(3, ops, without=(1, 18))
    assert cut_off.dropped == {1: 18}
    held = _fold(3, ops)
    assert held.dropped == {0: 30}  # (the one fold: seat 1's drop needs seat 0's vote)
    assert _fold(3, ops, without=(1, 15)).dropped == {1: 18}


def test_roster_a_dropped_members_vote_past_its_cut_decides_no_later_drop() -> None:
    """The class of variants soak seed 5468 (4 players): seat 3, cut off at 2, votes seat 1
    out (its seq 3); seats 0, 1 and 2 vote seat 3 out at 2, seat 1's vote past the count the
    others then give it (3); seats 0 and 2 vote seat 1 out there. Folded again without seat
    1's events past 3, seat 3's vote, past its own cut, dropped seat 1, and with it seat 3:
    both drops stood, where the fold made again with both cuts drops neither. A member
    dropped already counts for nothing past its cut in that fold either: seat 1 stays, in
    the fold that holds seat 3's vote and in the one that does not."""
    ops = [
        (3, 3, _vote(1, 2)),  # (past seat 3's cut)
        (0, 3, _vote(3, 2)),
        (1, 4, _vote(3, 2)),
        (2, 3, _vote(3, 2)),  # seat 3 out at 2, with seat 1's vote
        (0, 4, _vote(1, 3)),
        (2, 4, _vote(1, 3)),  # two of three, at a cut below seat 1's vote
    ]
    held = _fold(4, ops)
    assert held.dropped == {3: 2}
    assert _fold(4, ops, without=(3, 2)).dropped == held.dropped
