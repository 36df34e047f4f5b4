"""A proof vote capped by a standing vote against its voter (docs/protocol.md §9.2, *Caps*;
forced lost-tail scan seed 8067).

A cheater is dropped on the votes of every member left, except members its voters all voted
out. Member M's proof vote, signed past the count of a standing vote against M (withheld or
silent alike), never counts: its voter froze its announcements of M's feed, so the vote cannot
be final anywhere while that vote stands, and must not decide the drop either (proof votes are
not exempt: nothing exempts them from the finality they wait for). Where M is needed, the
cheater is dropped once that vote is withdrawn (which lifts the cap, wherever the withdrawal
falls in the order), and not before; where every voter of the cheater voted M out, M is not
needed, and the cap holds nothing back. Each case is checked in the tentative and the final
fold (``_drops``).
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason, Join
from p2p_nertz.protocol.envelope import KIND_DROP, KIND_JOIN
from p2p_nertz.protocol.state import Event
from tests.test_folds_dropped_past_cut import _drops, _spec

_E = DropReason.EQUIVOCATION


def _events(players: int, reason: DropReason, withdrawn: int | None) -> list[Event]:
    """Seat ``players − 1`` forks at its seq 6. Seat 1 votes seat 0 out for ``reason``
    counting its join alone, then every seat from 1 votes the cheater out on proof (seat q
    counting 3 + q of its events), then seat 0 does, counting 2, as its second event (past
    seat 1's count). ``withdrawn``: the Lamport time of seat 1's withdrawal of its vote on seat
    0 (before or after seat 0's proof vote), or none."""
    cheater = players - 1
    zeros = (0,) * players
    events = [Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=zeros)) for s in range(players)]
    ones = (1,) * players
    seqs = [2] * players

    def add(lamport: int, seat: int, body: Drop) -> None:
        events.append(Event(seat, seqs[seat], lamport, KIND_DROP, body))
        seqs[seat] += 1

    for lamport in range(6, 13):  # (the cheater's feed, held up to every count: no-op events)
        add(lamport, cheater, Drop(ones, 0, 0, DropReason.WITHDRAW))
    add(20, 1, Drop(ones, 0, 1, reason))
    for q in range(1, cheater):
        add(20 + q, q, Drop(ones, cheater, 3 + q, _E, 6))
    add(30, 0, Drop(ones, cheater, 2, _E, 6))
    if withdrawn is not None:
        add(withdrawn, 1, Drop(ones, 0, 0, DropReason.WITHDRAW))
    return events


@pytest.mark.parametrize("reason", [DropReason.WITHHELD, DropReason.SILENT])
@pytest.mark.parametrize("players", [4, 5])
def test_folds_a_capped_proof_vote_holds_the_cheaters_drop_until_the_vote_on_it_goes(
    players: int, reason: DropReason
) -> None:
    spec = _spec(players)
    cheater = players - 1
    # The vote on seat 0 stands: seat 0's proof vote is capped, and seat 0 is needed.
    assert _drops(spec, _events(players, reason, None)) == {}
    # Withdrawn, before or after seat 0's proof vote in the order: the cap is lifted, and
    # every member left has voted (seat 0 counting least: the cut).
    for withdrawn in (25, 35):
        assert _drops(spec, _events(players, reason, withdrawn)) == {cheater: 2}


@pytest.mark.parametrize("reason", [DropReason.WITHHELD, DropReason.SILENT])
@pytest.mark.parametrize("withdrawn", [None, 25, 35])
def test_folds_a_capped_proof_vote_of_a_member_the_voters_all_voted_out_is_not_needed(
    reason: DropReason, withdrawn: int | None
) -> None:
    """Three players: seat 1, the cheater's one voter, voted seat 0 out, so seat 0 is not
    needed (soak seed 224's rule) and the cheater is dropped on seat 1's vote, at its count,
    as soon as it is cast; a withdrawal later changes nothing."""
    assert _drops(_spec(3), _events(3, reason, withdrawn)) == {2: 4}
