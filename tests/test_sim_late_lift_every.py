"""The late lift held on a member the wait was not asked of (``scripts/scan_late_lift.py
--every-member --audit``; docs/protocol.md §7.4, §13 *a late lift*).

``--late-withdrawals`` three players, seed 93, with seat 2's withdrawals held back
(:class:`~p2p_nertz.sim.schedules.LateLift` on seat 2; no peer makes a drop final while they
are held, so the schedule only delays them up to 3 s). Seats 1 and 2 vote seat 0 out at its
event 43; seat 0 votes seat 2 out counting 46, which caps seat 2's vote, and withdraws it
later, lifting that cap in the past: seat 0's drop at 43 then rests on seat 0's own
withdrawal. Before that withdrawal reached seat 2, seat 2's fold kept seat 0 in, and seat 2
claimed a card on a foundation that seat 0 had started past 43 (on another member's card
built on it). Seat 2 announced seat 0's feed only up to its own vote's count, 43 (a voter
announces no more than its vote, ``Membership.frontier``), so its signed frontier did not show
that it held the cut cards: once the lift dropped seat 0 there, every fold and the audit
refused the claim as an illegal move of an honest member ("not started"), where a claim on
cards a drop cut is a race lost to the cut.
"""

from __future__ import annotations

import pytest

from p2p_nertz.sim import run
from p2p_nertz.sim.mixes import late_withdrawals
from p2p_nertz.sim.schedules import LateLift

pytestmark = pytest.mark.slow  # (a simulated game of ~40 s)


def test_a_claim_on_cards_the_lift_cut_is_a_lost_race() -> None:
    """No fold refuses an honest member's event, the peers and the audit end alike, and every
    other check of DESIGN.md §8 holds."""
    schedule = LateLift(2)
    result = run(late_withdrawals(93, players=(3, 3)), schedule)
    finals = [p.final for p in result.peers if p is not None]
    if not schedule.held or not any(0 in f.gaps for f in finals):
        pytest.fail("the race is no longer built: seat 2's withdrawals not held, or seat 0 kept")
    assert [v for f in finals for v in f.violations] == []
    assert result.audit is not None and result.audit.errors == ()
    assert result.violations == []
    assert len({f.digest() for f in finals}) == 1
