"""The coverage term capped by every standing vote's freeze (docs/protocol.md §9.2, *the freeze
on the coverage term*; ``finality.standing_freezes``, ``Finality._pair_terms``,
``Finality._holder_term``).

A watcher's view of three members, each feed five events held, every member known to hold all
of them (``held_by``), every feed known up to a time past its last event. Seat 0 votes seat 1
out counting 3 and, breaking its freeze, announces all five of seat 1's events: its word past
3 covers nothing while its vote stands, so the stable time stays below seat 1's event 4.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.finality import Finality, standing_freezes
from p2p_nertz.protocol.roster import Roster

VOTER, TARGET, OTHER = 0, 1, 2
COUNT = 3
EVENTS = 5
PAST = 1000  # (a time past every event: each member's own term holds nothing back)


def _lamport(q: int, seq: int) -> int:
    return 10 * seq + q


def _finality() -> Finality:
    feeds: list[list[Any]] = [
        [SimpleNamespace(lamport=_lamport(q, s), id=b"") for s in range(1, EVENTS + 1)]
        for q in range(3)
    ]
    finality = Finality(-1, feeds)
    finality.known = [PAST] * 3
    finality.held_by = [(EVENTS,) * 3 for _ in range(3)]
    return finality


def _vote(voter: int, reason: DropReason = DropReason.SILENT) -> tuple[int, Drop]:
    return voter, Drop((0, 0, 0), TARGET, COUNT if reason is not DropReason.WITHDRAW else 0, reason)


def _roster(*votes: tuple[int, Drop]) -> Roster:
    roster = Roster(3)
    for seq, (voter, body) in enumerate(votes, start=11):
        roster.vote(voter, seq, body, seq)
    return roster


def test_a_voters_cover_past_its_standing_vote_covers_nothing() -> None:
    finality = _finality()
    assert finality.bounds({}, {}, 0, PAST) == PAST  # (no vote: all five events covered)
    finality.freezes = standing_freezes(_roster(_vote(VOTER)))
    assert finality.freezes == {TARGET: {VOTER: COUNT}}
    # Seat 1's event 4 is the first the voter's cover does not reach.
    assert finality.bounds({}, {}, 0, PAST) == _lamport(TARGET, COUNT + 1) - 1
    # The term held it back, and the quick path (the holder tried first) reads it capped too.
    assert finality.bounds({}, {}, 0, PAST, floor=PAST) == _lamport(TARGET, COUNT + 1) - 1
    assert finality.holder == (VOTER, TARGET)
    assert finality._holder_term({}, {}, 0) == _lamport(TARGET, COUNT + 1) - 1
    # Seat 1 out (its drop final here), nothing of its feed is waited for.
    assert finality.bounds({TARGET: COUNT}, {}, 0, PAST) == PAST


def test_a_withdrawn_vote_or_one_on_another_member_caps_nothing() -> None:
    finality = _finality()
    withdrawn = _roster(_vote(VOTER), _vote(VOTER, DropReason.WITHDRAW))
    finality.freezes = standing_freezes(withdrawn)
    assert finality.freezes == {}
    assert finality.bounds({}, {}, 0, PAST) == PAST
    # A vote caps only its own voter's word: the other member's cover is its own.
    finality.freezes = standing_freezes(_roster(_vote(VOTER)))
    finality.held_by[OTHER] = (EVENTS, 2, EVENTS)
    assert finality.bounds({}, {}, 0, PAST) == _lamport(TARGET, 3) - 1


def test_a_vote_on_proof_freezes_the_cover_as_one_for_silence_does() -> None:
    finality = _finality()
    finality.freezes = standing_freezes(_roster(_vote(OTHER, DropReason.EQUIVOCATION)))
    assert finality.freezes == {TARGET: {OTHER: COUNT}}
    assert finality.bounds({}, {}, 0, PAST) == _lamport(TARGET, COUNT + 1) - 1


def test_a_second_vote_while_one_stands_does_not_raise_the_freeze() -> None:
    """A liar votes seat 1 out for silence counting 3, then, its vote standing, on proof
    counting all 5: the roster counts its first vote only (one vote a voter), so a drop on
    proof cuts at 3, and the freeze stays there; raised to 5, the voter's cover made seat 1's
    events 4 and 5 final, which the cut then left out, and the audit, which knows the cut from
    the start, folded another game and named honest members (soak ``--two-liars`` seed 14).
    A withdrawal then a new vote freezes at the new vote's count."""
    finality = _finality()
    again = Drop((0, 0, 0), TARGET, EVENTS, DropReason.EQUIVOCATION, fork_seq=EVENTS + 1)
    roster = _roster(_vote(VOTER), (VOTER, again))
    assert [body.last_seq for _, body in roster.votes[TARGET]] == [COUNT]
    finality.freezes = standing_freezes(roster)
    assert finality.freezes == {TARGET: {VOTER: COUNT}}
    assert finality.bounds({}, {}, 0, PAST) == _lamport(TARGET, COUNT + 1) - 1
    renewed = _roster(_vote(VOTER), _vote(VOTER, DropReason.WITHDRAW), (VOTER, again))
    assert standing_freezes(renewed) == {TARGET: {VOTER: EVENTS}}
