"""The late lift held on a member the wait was not asked of (``scripts/scan_late_lift.py
--every-member --audit``; docs/protocol.md §7.4, §13 *a late lift*): one game of each size
the scan found telling, and the one class it found broken.

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

And one the scan found broken at five players (seed 14, seat 0's withdrawal held): a drop
dated by a withdrawal it does not need, which the bound never reached (``finality.decided``).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from p2p_nertz.protocol import finality
from p2p_nertz.protocol.state import GameState
from p2p_nertz.sim import SimConfig, Simulation, run
from p2p_nertz.sim.invariants import check
from p2p_nertz.sim.mixes import late_withdrawals
from p2p_nertz.sim.network import SimResult
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


def _noting(config: SimConfig, schedule: LateLift, note: Callable[[GameState], None]) -> SimResult:
    """:func:`~p2p_nertz.sim.run` of ``config`` and ``schedule``, ``note`` shown every live
    peer's tentative fold after each step (asked from outside, alike on both builds: a
    compiled core calls ``finality``'s functions directly)."""

    def noted(sim: Simulation) -> bool:
        for peer in sim.peers:
            if peer is not None:
                note(peer.tentative)
        return False

    result = Simulation(config, schedule).run(noted)
    result.violations = check(result)
    return result


def _alike(result: SimResult) -> None:
    """Every check of DESIGN.md §8 holds (termination, agreement, no split between any two
    peers, the audit's validity), every peer ends on one final state, and the audit of every
    log reads that game: the same drops and the same state."""
    assert result.violations == []
    finals = [p.final for p in result.peers if p is not None]
    assert len({f.digest() for f in finals}) == 1
    report = result.audit
    assert report is not None and report.state is not None
    assert report.state.dropped == finals[0].dropped
    assert report.digest == finals[0].digest()


def test_every_member_three_players_the_wait_holds_a_drop_resting_on_a_held_withdrawal() -> None:
    """Three players, seed 2, seat 0's withdrawals held (the seed's own game asks the wait
    of no member): a view's held votes drop seat 0 resting on a withdrawal timed after the
    drop (``finality.lifted`` asked of seat 0), and no peer makes that drop final while seat
    0's withdrawals are held (the schedule's ``final_by`` stays ``None``); once they come,
    every peer and the audit end alike."""
    asked: list[int] = []

    def noting(tentative: GameState) -> None:
        at = finality.lifted(tentative, 0) if 0 in tentative.drop_at else 0
        if at:
            asked.append(at)

    schedule = LateLift(0)
    result = _noting(late_withdrawals(2, players=(3, 3)), schedule, noting)
    if not schedule.held or not asked:
        pytest.fail("the race is no longer built: nothing held, or the wait never asked")
    assert schedule.final_by is None, "a peer made the drop final while the withdrawal was held"
    _alike(result)


@pytest.mark.parametrize(("seed", "players", "member"), [(8, 4, 1), (6, 5, 0)])
def test_every_member_a_drop_made_final_while_a_withdrawal_is_held_stands(
    seed: int, players: int, member: int
) -> None:
    """Four players seed 8 (seat 1's withdrawal held) and five players seed 6 (seat 0's): a
    peer makes the member's drop final while the member's withdrawal is held (the events
    before it decide the drop: no wait asked), and the withdrawal, once it comes, moves no
    view: no two peers part, and every peer and the audit end alike."""
    schedule = LateLift(member)
    result = run(late_withdrawals(seed, players=(players, players)), schedule)
    if result.spec.seats != players or schedule.final_by is None:
        pytest.fail("the race is no longer built: no peer made the drop final while held")
    _alike(result)


def test_every_member_five_players_seed_14_a_drop_dated_without_a_lift_it_does_not_need() -> None:
    """Five players seed 14, seat 0's withdrawal on seat 3 (its event 42, Lamport 372) held,
    released after 3 s with no drop final: peers 1, 2 and 4 made seat 4's drop at 37 (at
    304) final without it. Peers 0 and 3, holding it, once read the drop as decided at 372
    (``finality.decided_at``: it lifts a cap), which the stable time without seat 4 never
    reached: peer 1, waiting in the reveal for seat 0, voted it out counting 41 and announces
    its feed no further. The membership events before the withdrawals after the drop already
    make it (``finality.decided``: a peer holding the withdrawal dates it earlier than
    ``decided_at``), so peers 0 and 3 make it final as the others did, and every peer and the
    audit end alike."""
    earlier: list[tuple[int, int]] = []

    def noting(tentative: GameState) -> None:
        if 4 in tentative.dropped:
            at, dated = finality.decided(tentative, 4), finality.decided_at(tentative, 4)
            if at < dated:
                earlier.append((at, dated))

    schedule = LateLift(0)
    result = _noting(late_withdrawals(14, players=(4, 5)), schedule, noting)
    if result.spec.seats != 5 or schedule.held != {(0, 42)} or not earlier:
        pytest.fail(f"the race is no longer built: held {schedule.held}, dated {earlier[:1]}")
    assert schedule.final_by is None
    _alike(result)
