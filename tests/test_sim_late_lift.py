"""A member's withdrawal that reaches the others only after one of them made its drop final:
session 19's open stall, built on purpose (docs/protocol.md §7.4, §13 *a lift the others
announced too late*; :class:`~p2p_nertz.sim.schedules.LateLift`).

``scripts/soak.py --late-withdrawals --seed 85`` (three players) is the game: the held votes
drop seat 0 at 19 (Lamport 86) where seat 0's withdrawal on seat 2 (its event 47, Lamport
115) is not held, resting on withdrawals at 124 and 125 that lift the caps it needs, and drop
seat 1 at 18 (87) where it is. Played as the seed plays it, every peer holds that withdrawal
before it decides, and every peer drops seat 1. The schedule delays that one event at each
receiver until a peer has made seat 0's drop final (at most 3 s), and then that peer's
announcements to each other peer until that peer holds it (a few milliseconds): an
asynchronous network may do both, and nothing is lost for good. Session 19's rule (a drop
that rests on a later withdrawal is final once the stable time without the member reaches
it, ``finality.decided_at``) lets that peer exclude seat 0 once seats 1 and 2 announced what
they hold up to 125, which is all but the withdrawal at 115; a peer that gets the withdrawal
before it made the same drop final folds the other fixed point, and waits for good for a
cover of seat 0's feed that the first peer, its drop final, never gives (§9.2, *a drop made
final bounds every announcement of the member*), or ends the game on the other drop.

The tests below fail on the rules of session 20 (strict ``xfail``: a pass fails them, so
that the mend is seen); what they build is checked first, as a plain failure.
"""

from __future__ import annotations

import pytest

from p2p_nertz.sim import run
from p2p_nertz.sim.mixes import late_withdrawals
from p2p_nertz.sim.network import SimResult
from p2p_nertz.sim.schedules import LateLift

_SEED = 85
_X = 0  # seat 0: the member whose withdrawal is late
_LIFT = (0, 47)  # its withdrawal of its vote on seat 2, Lamport 115


def _play(first: int | None) -> tuple[LateLift, SimResult]:
    schedule = LateLift(_X, first=first)
    result = run(late_withdrawals(_SEED, players=(3, 3)), schedule)
    if result.spec.seats != 3 or schedule.held != {_LIFT} or schedule.final_by is None:
        pytest.fail(f"the race is no longer built: held {schedule.held}, {schedule.final_by}")
    return schedule, result


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="open: §13, a late lift")
def test_late_lift_seed_85_the_peers_do_not_part() -> None:
    """Peer 1 makes seat 0's drop final first (at 10.97 s); peers 0 and 2 then get seat 0's
    withdrawal and drop seat 1 at 18. Both groups finish: peer 1 with seats 0 and 2 out,
    peers 0 and 2 with seat 1 out (a split, which the agreement and split checks report)."""
    schedule, result = _play(None)
    assert schedule.final_by is not None and schedule.final_by[0] == 1
    assert result.violations == []
    finals = {peer.final.digest() for peer in result.peers if peer}
    assert len(finals) == 1


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="open: §13, a late lift")
def test_late_lift_seed_85_the_member_left_out_finishes() -> None:
    """Peer 2 makes seat 0's drop final first; peer 1 makes it final too (it held the
    withdrawal's cover before), and both end the game without seat 0. Seat 0 holds its own
    withdrawal, folds seat 1 out, and waits for the others' cover of it for good: its stable
    time stays at 66, in play, to the end of the run (the termination check)."""
    schedule, result = _play(2)
    assert schedule.final_by is not None and schedule.final_by[0] == 2
    assert result.finished
    assert result.violations == []
