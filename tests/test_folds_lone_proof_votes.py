"""Votes on proof that except each other's members (docs/protocol.md §9.2, *a member proven
to cheat*; session 38).

A member proven to cheat is dropped on the votes of every member left, except members its
voters all voted out. The fold cannot check a proof (a vote names a fork; the two signed
events are not in it), so a member voted out on proof is no member gone: one voter's votes
on proof against every other member excepted each from the other's drop and dropped them
all on its word alone (``quote_proof``, three players, seed 1). A majority's votes on proof
still except a member (two cheaters, each proven by the honest members, vote on neither),
and a vote for silence does as before (soak seed 224's rule).
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason, Join
from p2p_nertz.protocol.envelope import KIND_DROP, KIND_JOIN
from p2p_nertz.protocol.state import Event
from tests.test_folds_dropped_past_cut import _drops, _spec

_E = DropReason.EQUIVOCATION


def _events(players: int, votes: list[tuple[int, int, DropReason]]) -> list[Event]:
    """Every seat joins and signs three no-op events; then each ``(voter, target, reason)``
    in turn, counting the target's four events (on proof: of a fork at its fifth)."""
    zeros = (0,) * players
    events = [Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=zeros)) for s in range(players)]
    seqs = [2] * players
    lamport = 10
    held = (1,) * players

    def add(seat: int, body: Drop) -> None:
        nonlocal lamport
        lamport += 1
        events.append(Event(seat, seqs[seat], lamport, KIND_DROP, body))
        seqs[seat] += 1

    for _ in range(3):
        for s in range(players):
            add(s, Drop(held, (s + 1) % players, 0, DropReason.WITHDRAW))
    four = (4,) * players
    for voter, target, reason in votes:
        add(voter, Drop(four, target, 4, reason, 5 if reason is _E else 0))
    return events


@pytest.mark.parametrize("players", [3, 4, 5])
def test_folds_one_voters_votes_on_proof_against_every_other_member_drop_none(
    players: int,
) -> None:
    # Seat 0 votes every other member out on proof: before session 38 each was excepted
    # from the others' drops, and seat 0 alone dropped them all.
    votes = [(0, q, _E) for q in range(1, players)]
    assert _drops(_spec(players), _events(players, votes)) == {}


def test_folds_a_lone_proof_vote_beside_a_member_voted_out_for_silence_still_drops() -> None:
    """Soak seed 224's rule, kept: three players, the cheater's one voter voted the third
    member out for silence; that member is not needed, and the cheater is dropped."""
    votes = [(1, 0, DropReason.SILENT), (1, 2, _E)]
    assert _drops(_spec(3), _events(3, votes)) == {2: 4}


def test_folds_a_majoritys_votes_on_proof_against_two_cheaters_drop_both() -> None:
    """Five players, seats 3 and 4 each proven by seats 0 to 2, voting on neither: the
    honest majority's votes on proof except each cheater from the other's drop."""
    votes = [(v, q, _E) for q in (3, 4) for v in (0, 1, 2)]
    assert _drops(_spec(5), _events(5, votes)) == {3: 4, 4: 4}


def test_folds_half_the_tables_votes_on_proof_against_the_other_half_drop_neither() -> None:
    """Four players, seats 0 and 1 voting seats 2 and 3 out on proof: two of four, no strict
    majority; each of 2 and 3 is needed for the other's drop, and neither voted (before
    session 38 each was excepted and both dropped: two liars could so drop two honest
    members on their word alone; two honest members and two proven cheaters that never vote
    now wait, with no honest majority to promise an end, DESIGN.md §6)."""
    votes = [(v, q, _E) for q in (2, 3) for v in (0, 1)]
    assert _drops(_spec(4), _events(4, votes)) == {}
