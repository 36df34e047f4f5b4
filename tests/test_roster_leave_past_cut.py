"""A leave past the cut of the votes that drop its author never counts, even before them in
the order (docs/protocol.md §9.2, §9.3; session 37).

A member cut off from the others leaves, its clock behind theirs: its ``leave`` comes before,
in the total order, the votes that drop it for silence, and those count none of its events
from the leave on (no voter held it). A peer that holds the member's feed only up to the cut
makes the drop final without the leave, which never counts there once read; a fold that read
the leave first (the audit's first pass, a tentative fold) must decide alike: the votes drop
the member at their count and the leave is undone (``roster._undo_leaves``). Where the votes
do not drop it without the leave, the leave stands where it falls. Each case is read both
ways: the leave first, as the audit reads the logs, and without it, as the peers cut off
from the member read the votes (their folds never take an event past the cut).

The lie fuzzer's readmit seeds 56 (two liars) and 297 (one liar), ``claim_after_leave``:
``tests/test_sim_liars_back.py``.
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.state import Roster


def _vote(seats: int, target: int, last_seq: int, reason: DropReason = DropReason.SILENT) -> Drop:
    return Drop(frontier=(0,) * seats, seat=target, last_seq=last_seq, reason=reason)


#: (voter, its seq, its vote, or ``None`` for the voter's own leave at that seq)
Op = tuple[int, int, Drop | None]


def _fold(seats: int, ops: list[Op], *, leave: bool = True) -> tuple[Roster, list[int]]:
    """The roster after ``ops`` in order (each at the next Lamport time), as the game fold
    reads them (``GameState._drop`` and ``_leave``: a vote on a member out is kept, and the
    roster settled); ``leave=False``: the leaves not read (past the cut, a peer cut off from
    their authors never folds them). And the seats each settle dropped, in order."""
    roster = Roster(seats)
    dropped = []
    for lamport, (author, seq, body) in enumerate(ops, start=1):
        if body is None:
            if leave:
                roster.leave(author, seq, lamport)
                dropped += [seat for seat, _ in roster.settle(lamport)]
            continue
        roster.vote(author, seq, body, lamport)
        dropped += [seat for seat, _ in roster.settle(lamport)]
    return roster, dropped


@pytest.mark.parametrize("seats", [3, 4, 5])
def test_roster_a_leave_before_the_votes_past_their_count_is_undone(seats: int) -> None:
    """The last seat leaves at its seq 12, then every other member votes it out for silence
    counting 7: dropped at 7, not left (it may be readmitted and forfeits only the round), as
    by the peers that never held the leave."""
    out = seats - 1
    ops: list[Op] = [(out, 12, None)]
    ops += [(q, 30, _vote(seats, out, 7)) for q in range(out)]
    held, dropped = _fold(seats, ops)
    assert held.dropped == {out: 7} and out not in held.left
    assert dropped == [out]  # (the undone leave is a drop the fold acts on: MemberDropped)
    cut_off, _ = _fold(seats, ops, leave=False)
    assert cut_off.dropped == held.dropped and cut_off.left == held.left
    # (Undone when the votes decide it, the majority's last vote, not before.)
    early, _ = _fold(seats, ops[: 1 + out // 2])
    assert early.dropped == {out: 12} and out in early.left


@pytest.mark.parametrize("seats", [4, 5])
def test_roster_a_leave_the_votes_do_not_drop_without_stands(seats: int) -> None:
    """Too few votes for a majority of the members with the leaver in (a voter that held the
    leave votes nothing): the leave stands, as it does for a peer that waits for the member's
    feed and reads it."""
    out = seats - 1
    needed = seats // 2 + 1
    ops: list[Op] = [(out, 12, None)]
    ops += [(q, 30, _vote(seats, out, 7)) for q in range(needed - 1)]
    held, _ = _fold(seats, ops)
    assert held.dropped == {out: 12} and out in held.left
    cut_off, _ = _fold(seats, ops, leave=False)
    assert cut_off.dropped == {}


def test_roster_a_vote_withdrawn_before_the_majority_undoes_no_leave() -> None:
    """Four players: seats 0 and 1 vote seat 3 out counting 7, seat 1 withdraws, seat 2
    votes: two of the three needed. The leave stands."""
    ops: list[Op] = [
        (3, 12, None),
        (0, 30, _vote(4, 3, 7)),
        (1, 30, _vote(4, 3, 7)),
        (1, 31, _vote(4, 3, 0, DropReason.WITHDRAW)),
        (2, 30, _vote(4, 3, 7)),
    ]
    held, _ = _fold(4, ops)
    assert held.dropped == {3: 12} and 3 in held.left
    cut_off, _ = _fold(4, ops, leave=False)
    assert cut_off.dropped == {}


def test_roster_votes_that_count_the_leave_leave_it_standing() -> None:
    """Votes counting the leave itself (their voters held it: no honest member votes so)
    undo nothing: the member is out at its leave, which they count."""
    ops: list[Op] = [(3, 12, None), *[(q, 30, _vote(4, 3, 12)) for q in range(3)]]
    held, _ = _fold(4, ops)
    assert held.dropped == {3: 12} and 3 in held.left


def test_roster_a_leave_after_the_votes_in_the_order_never_counts() -> None:
    """The other order: the votes drop the member at 7 first, and its leave at 12, read
    after, is past the cut (the game fold never hands it to the roster: ``GameState.apply``
    observes it). Both orders end with the member dropped at 7, not left."""
    ops: list[Op] = [*[(q, 30, _vote(4, 3, 7)) for q in range(3)]]
    roster, dropped = _fold(4, ops)
    assert roster.dropped == {3: 7} and not roster.left and dropped == [3]
    assert not roster.counts(3, 12)
