"""A member's withdrawal that reaches the others only after they announced what they hold up
to the withdrawal a drop rests on: session 19's open stall, built on purpose
(docs/protocol.md §7.4, §13 *a late lift*; :class:`~p2p_nertz.sim.schedules.LateLift`).

``scripts/soak.py --late-withdrawals --seed 85`` (three players) is the game: the held votes
drop seat 0 at 19 (Lamport 86) where seat 0's withdrawal on seat 2 (its event 47, Lamport
115) is not held, resting on withdrawals at 124 and 125 that lift the caps it needs, and drop
seat 1 at 18 (87) where it is. Played as the seed plays it, every peer holds that withdrawal
before it decides, and every peer drops seat 1. The schedule delays that one event at each
receiver until a peer has made seat 0's drop final (at most 3 s), and then that peer's
announcements to each other peer until that peer holds it: an asynchronous network may do
both, and nothing is lost for good.

With session 19's rule alone (a drop that rests on a later withdrawal is final once the
stable time without the member reaches it) a peer excluded seat 0 once seats 1 and 2 had
announced what they hold up to 125, all but the withdrawal at 115; a peer that got the
withdrawal before it made the same drop final folded the other drop, and either ended the
game on it (a split: peer 1 with seats 0 and 2 out, peers 0 and 2 with seat 1 out) or, with
peer 2 first, waited for good for a cover of seat 0's feed that no peer with the drop final
gives (§9.2, *a drop made final bounds every announcement of the member*): seat 0, in play,
its stable time at 66 to the end of the run. Such a drop is now final only once the member's
own feed is held up to that withdrawal too (``finality.lifted``): no peer excludes seat 0
while its withdrawal is held back, and every peer drops seat 1.

The audit of every log then reads another game than the peers (seat 0 out at 19): that is
the case of a schedule that holds seat 2's withdrawals instead, with or without this rule,
and is left open (the last test, strict ``xfail``).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from p2p_nertz.protocol.finality import lifted, settle
from p2p_nertz.protocol.state import Phase
from p2p_nertz.sim import run
from p2p_nertz.sim.mixes import late_withdrawals
from p2p_nertz.sim.network import SimResult
from p2p_nertz.sim.schedules import LateLift

_AUDIT = ("validity:", "agreement: an audit")  # (the audit's lines of the checks)


def _play(seed: int, member: int, first: int | None, held: set[tuple[int, int]]) -> SimResult:
    schedule = LateLift(member, first=first)
    result = run(late_withdrawals(seed, players=(3, 3)), schedule)
    if result.spec.seats != 3 or schedule.held != held:
        pytest.fail(f"the race is no longer built: held {schedule.held}")
    # The rule: no peer makes the member's drop final while its withdrawal is held back.
    assert schedule.final_by is None
    return result


def _peers_agree(result: SimResult) -> None:
    """Every peer finished, on one final state, and no check but the audit's fails."""
    assert result.finished
    assert [v for v in result.violations if not v.startswith(_AUDIT)] == []
    assert {peer.final.phase for peer in result.peers if peer} == {Phase.OVER}
    assert len({peer.final.digest() for peer in result.peers if peer}) == 1


@pytest.mark.parametrize("first", [None, 2])
def test_late_lift_seed_85_the_peers_end_alike(first: int | None) -> None:
    """Seat 0's withdrawal at 115 held back, whichever peer would make seat 0's drop final
    first (any: peer 1 did, and the peers parted; peer 2: seat 0 waited for good)."""
    result = _play(85, 0, first, {(0, 47)})
    _peers_agree(result)
    assert {tuple(peer.final.dropped) for peer in result.peers if peer} == {(1,)}


@pytest.mark.parametrize(
    ("seed", "member", "held"),
    [(4, 0, {(0, 49), (0, 50)}), (34, 2, {(2, 42), (2, 43)}), (78, 2, {(2, 39)})],
)
def test_late_lift_other_seeds_the_peers_end_alike(
    seed: int, member: int, held: set[tuple[int, int]]
) -> None:
    """Three more games of the mix that failed under the schedule with session 19's rule
    alone (found over seeds 0-119, three players): seeds 4 and 34 stalled every peer, or
    the member left out; in seed 78 peer 1 parted from peers 0 and 2. Each now ends alike at
    every peer. (The audit agrees in 4 and 78; seed 34's is the open case below.)"""
    result = _play(seed, member, None, held)
    _peers_agree(result)
    if seed != 34:
        assert result.violations == []


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="open: §13, the audit's fold")
@pytest.mark.parametrize(("seed", "held"), [(85, {(2, 25), (2, 26)}), (34, {(2, 42), (2, 43)})])
def test_late_lift_the_audit_reads_the_peers_game(seed: int, held: set[tuple[int, int]]) -> None:
    """Seat 2's withdrawals held back: every peer ends alike (a peer restored from its log
    too), and the audit of every log reads another game (seed 85, on session 19's rule as
    on this one: the peers drop seat 1 at 18, the audit seat 0 at 19; seed 34: the peers
    drop no one for good, the audit seat 1 at 25)."""
    schedule = LateLift(2)
    result = run(late_withdrawals(seed, players=(3, 3)), schedule)
    if schedule.held != held:
        pytest.fail(f"the race is no longer built: held {schedule.held}")
    _peers_agree(result)
    assert result.violations == []


def _state(drop_at: int, lift_at: int) -> Any:
    """The parts of a fold ``settle`` reads: seat 0 dropped at 19, at ``drop_at``, and a
    withdrawal of seat 2's capping vote on seat 1 at ``lift_at``."""
    return SimpleNamespace(
        dropped={0: 19},
        drop_at={0: drop_at},
        gaps={},
        readmitted_at={},
        roster=SimpleNamespace(lifts={2: ((18, lift_at, 1, 9, 9),)}),
    )


def test_settle_a_drop_resting_on_a_later_withdrawal_waits_for_the_members_feed() -> None:
    """Peer 2's view of seed 85 by hand: seat 0 dropped at 19 (86), resting on a withdrawal
    at 125; the stable time without seat 0 is 126. Seat 0's feed is known here up to 114
    (its withdrawal at 115 held back): seat 0 stays in. Known up to 125, it is out. A drop
    that rests on no later withdrawal does not wait for the member (one gone for good)."""
    feeds: list[Any] = [
        [SimpleNamespace(lamport=t) for t in range(50, 100)],
        [SimpleNamespace(lamport=t) for t in range(40, 70)],
        [SimpleNamespace(lamport=t) for t in range(70, 130)],
    ]
    final: Any = SimpleNamespace(dropped={}, drop_at={})

    def bound(excluded: dict[int, int], floor: int | None = None) -> int:
        return 126 if 0 in excluded else 64

    tentative = _state(86, 125)
    assert lifted(tentative, 0) == 125
    assert settle(final, tentative, feeds, bound, 0, known=[114, 130, 130]) == ({}, 64)
    assert settle(final, tentative, feeds, bound, 0, known=[125, 130, 130]) == ({0: 19}, 126)
    # Session 19's rule alone (no ``known``): out on the others' cover.
    assert settle(final, tentative, feeds, bound, 0)[0] == {0: 19}
    # The withdrawal before the drop: nothing to wait for, however little of seat 0 is known.
    early = _state(86, 80)
    assert lifted(early, 0) == 0
    assert settle(final, early, feeds, bound, 0, known=[0, 130, 130])[0] == {0: 19}
