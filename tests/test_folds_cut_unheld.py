"""The imposed cut of the tentative fold (``Folds._cut_unheld``, docs/protocol.md §9.2), on
folds built by hand.

A member's events that no other member ever announced holding can never be final; once the
votes without them drop the member, they count nowhere, and no drop may rest on them. Variants
soak seed 5066 found it (``tests/test_sim_variants.py``); here is the rule alone, in the shape
of that game: three members; seat 1, cut off, votes seat 0 out on proof of a fork (its seq 2)
and seat 2 out (its seq 3), which alone drops seat 0 (every other member left is one its voter
voted out, soak seed 224's rule); seats 0 and 2 vote seat 1 out counting its join alone.
Whether seat 1's votes may count decides who is out.
"""

from __future__ import annotations

from p2p_nertz.protocol.bodies import Drop, DropReason, Join
from p2p_nertz.protocol.envelope import KIND_DROP, KIND_JOIN
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Event, GameState
from p2p_nertz.rules import Rules
from tests.proof_helpers import proven

SEATS = 3


def _vote(
    seat: int,
    seq: int,
    lamport: int,
    *,
    out: int,
    count: int,
    held: tuple[int, ...],
    fork: int = 0,
) -> Event:
    reason = DropReason.EQUIVOCATION if fork else DropReason.SILENT
    body = Drop(frontier=held, seat=out, last_seq=count, reason=reason, fork_seq=fork)
    return Event(seat, seq, lamport, KIND_DROP, body)


def _tentative(seat_2_holds: int) -> dict[int, int]:
    """The members the tentative fold drops, and their cuts, where seat 2's vote against seat
    1 announces holding ``seat_2_holds`` of seat 1's feed, and counts as much."""
    ids = [Identity.generate(bytes([i + 1]) * 32).peer_id for i in range(SEATS)]
    spec = GameSpec.create([(pid, f"p{i}") for i, pid in enumerate(ids)], Rules(), b"cut")
    folds = Folds(GameState(spec))
    events = [Event(s, 1, 1 + s, KIND_JOIN, Join((0,) * SEATS)) for s in range(SEATS)]
    events += [
        _vote(1, 2, 5, out=0, count=1, held=(1, 1, 1), fork=2),
        _vote(1, 3, 6, out=2, count=1, held=(1, 2, 1)),
        _vote(0, 2, 7, out=1, count=1, held=(1, 1, 1)),
        _vote(2, 2, 8, out=1, count=seat_2_holds, held=(1, seat_2_holds, 1)),
    ]
    for event in proven(spec, events):
        assert folds.add(event, 0) == []  # (none final: all held, folded tentatively)
    return folds.tentative.dropped


def test_cut_unheld_imposes_the_cut_past_which_no_other_member_holds_the_member() -> None:
    """Nobody announced holding seat 1's votes: they can never be final anywhere. The votes
    without them (seats 0 and 2, counting 1) drop seat 1 at 1, so that cut is imposed, and
    seat 1's votes count nowhere: seat 0 stays. (Without the rule, seat 1's votes drop seat 0,
    whose vote then no longer counts, and seat 1 stays in.)"""
    assert _tentative(seat_2_holds=1) == {1: 1}


def test_cut_unheld_imposes_no_cut_below_what_another_member_announced_holding() -> None:
    """Seat 2 announced holding seat 1's votes (its feed up to seq 3), and counts them: they
    may be final at seat 2, so no cut below them is imposed. Seat 1's vote drops seat 0, whose
    vote then no longer counts, and seat 2's alone keeps nobody out."""
    assert _tentative(seat_2_holds=3) == {0: 1}
