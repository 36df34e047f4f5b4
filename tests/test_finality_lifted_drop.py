"""A drop that rests on a withdrawal timed after it is final only once that withdrawal is
(docs/protocol.md §7.4, §13 *two groups that each make a drop final without the other's
evidence*).

Found by ``scripts/soak.py --late-withdrawals`` seed 85 (three players, quick timers). Seat 1
voted seats 0 and 2 out (Lamport 79, 80), seat 2 seats 1 and 0 (83, 86), seat 0 seats 1 and 2
(87, 91), each vote past its author's count in a vote against it; all withdrew (98-125) but
seat 0's vote on seat 1. Peer 0 folded seat 1 out at 18 (at 87: seat 2's vote on seat 1
counts once seat 0's own withdrawal on seat 2, at 115, lifted its cap) and made it final at
101; peer 2, without seat 0's withdrawal at 115, folded seat 0 out at 19 (at 86: seat 1's
vote on seat 0 counts once seat 2's own withdrawal on seat 1, at 124, lifted its cap) and
made it final at 123. Each drop rested on a withdrawal after the time made final, and each
group excluded the member that held the other's evidence. Now a peer excludes such a member
only once the stable time without it reaches the withdrawal: by then every member still in
has announced what it holds up to there, and peer 2 fetches seat 0's withdrawal (seat 1
announced seat 0's feed up to 49) and folds the game the others fold.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.finality import decided, decided_at, lifted, settle
from p2p_nertz.protocol.roster import Roster
from p2p_nertz.sim import run
from p2p_nertz.sim.mixes import late_withdrawals

_Lifts = dict[int, tuple[tuple[int, int, int, int, int], ...]]


def _feed(lamports: Sequence[int]) -> list[Any]:
    return [SimpleNamespace(lamport=t) for t in lamports]


def _state(dropped: dict[int, int], drop_at: dict[int, int], lifts: _Lifts) -> Any:
    """The parts of a fold ``settle`` reads. The roster holds the ``lifts`` and no vote: the
    membership events before each withdrawal drop no one, so each drop rests on the
    withdrawals after it (``finality.decided`` is ``decided_at``)."""
    roster = Roster(4)
    roster.lifts = lifts
    return SimpleNamespace(
        dropped=dropped,
        drop_at=drop_at,
        gaps={},
        readmitted_at={},
        roster=roster,
    )


def test_decided_at_is_the_latest_later_withdrawal_of_a_capping_vote_on_another_member() -> None:
    lifts: _Lifts = {2: ((20, 115, 0, 7, 7),), 0: ((19, 102, 2, 5, 5), (17, 80, 1, 3, 3))}
    assert decided_at(_state({1: 18}, {1: 87}, lifts), 1) == 115
    # Withdrawals before the drop decide nothing after it; none held: the drop's own time.
    assert decided_at(_state({1: 18}, {1: 87}, {0: ((17, 80, 1, 3, 3),)}), 1) == 87
    assert decided_at(_state({1: 18}, {1: 87}, {}), 1) == 87
    # A withdrawal of a vote on the member itself lifts no cap its drop rests on.
    assert decided_at(_state({1: 18}, {1: 87}, {1: ((18, 130, 2, 9, 9),)}), 1) == 87


def test_settle_excludes_a_member_only_once_the_withdrawal_its_drop_rests_on_is_stable() -> None:
    """Peer 0's view of seed 85 by hand: the held votes drop seat 1 at 18 (at 87), its feed
    held up to 18, nobody announcing more; seat 0's withdrawal on seat 2 (115) lifted the cap
    that kept seat 2's vote on seat 1 from counting. The stable time without seat 1 is 101:
    seat 1 stays in, and none of its events past the cut is final; at 115 it is out."""
    feeds = [_feed(range(60, 108)), _feed(range(40, 58)), _feed(range(70, 95))]
    final: Any = SimpleNamespace(dropped={}, drop_at={})
    tentative = _state({1: 18}, {1: 87}, {2: ((20, 115, 0, 7, 7),)})
    said = [(47, 18, 25), (17, 17, 17), (19, 18, 24)]
    without = [101]

    def bound(excluded: dict[int, int], floor: int | None = None) -> int:
        return without[0] if 1 in excluded else 64

    excluded, stable = settle(final, tentative, feeds, bound, 0, announced=said)
    assert excluded == {}
    assert stable == 64
    without[0] = 115
    excluded, stable = settle(final, tentative, feeds, bound, 0, announced=said)
    assert excluded == {1: 18}
    assert stable == 115
    # The rule before: out once the stable time without it reached the drop's own time.
    lifted_before = _state({1: 18}, {1: 87}, {2: ((20, 85, 0, 7, 7),)})
    without[0] = 101
    assert settle(final, lifted_before, feeds, bound, 0, announced=said)[0] == {1: 18}


def test_settle_the_announcement_that_reaches_the_withdrawal_brings_the_other_evidence() -> None:
    """Peer 2's view of seed 85 by hand: the held votes drop seat 0 at 19 (at 86), resting on
    seat 2's own withdrawal on seat 1 (124); seat 0's feed held up to 38. Seat 1's beat that
    lets the stable time without seat 0 reach 124 also says it holds seat 0's feed up to 49
    (seat 0's withdrawal at 115 among them): seat 0 stays in until those are fetched, and the
    fold that holds them drops seat 1 instead, as peers 0 and 1 do."""
    feeds = [_feed(range(60, 98)), _feed(range(40, 65)), _feed(range(70, 96))]
    final: Any = SimpleNamespace(dropped={}, drop_at={})
    tentative = _state({0: 19}, {0: 86}, {1: ((18, 124, 2, 9, 9),), 0: ((19, 102, 2, 6, 6),)})
    before = [(0, 0, 0), (25, 25, 25), (38, 18, 26)]  # (seat 1's old beat: 25 of seat 0)
    after = [(0, 0, 0), (49, 25, 26), (38, 18, 26)]
    without = [123]

    def bound(excluded: dict[int, int], floor: int | None = None) -> int:
        return without[0] if 0 in excluded else 66

    # Main's rule made seat 0's drop final here, at 123, without seat 0's withdrawal at 115.
    assert settle(final, tentative, feeds, bound, 0, announced=before)[0] == {}
    without[0] = 124
    assert settle(final, tentative, feeds, bound, 0, announced=after)[0] == {}
    feeds[0] = _feed(range(60, 109))  # (fetched: seat 0's events up to 49)
    assert settle(final, tentative, feeds, bound, 0, announced=after)[0] == {0: 19}


def test_settle_four_members_each_drop_waits_for_the_withdrawals_after_it() -> None:
    """Four members, a partition: the held votes drop seats 1 and 3 (cuts 20 and 25, at 90
    and 120); a withdrawal on seat 2 at 110 lifted a cap, and one on seat 3 at 130. Seat 3's
    drop waits for neither (the first comes before it; the second lifts a cap on seat 3's own
    votes, which its drop takes away): it is out once the stable time without it passes 120.
    Seat 1's waits for both: each uncaps a vote that may have counted before its drop.
    Neither waits for its own feed: nothing more of it is held."""
    feeds = [_feed(range(1, 60)), _feed(range(1, 21)), _feed(range(1, 60)), _feed(range(50, 76))]
    final: Any = SimpleNamespace(dropped={}, drop_at={})
    lifts: _Lifts = {2: ((30, 110, 0, 8, 8),), 3: ((25, 130, 2, 9, 9),)}
    tentative = _state({1: 20, 3: 25}, {1: 90, 3: 120}, lifts)
    without = [0]

    def bound(excluded: dict[int, int], floor: int | None = None) -> int:
        return without[0] if excluded else 70

    assert (decided_at(tentative, 1), decided_at(tentative, 3)) == (130, 120)
    without[0] = 112
    assert settle(final, tentative, feeds, bound, 0)[0] == {}
    without[0] = 121
    assert settle(final, tentative, feeds, bound, 0)[0] == {3: 25}
    without[0] = 131
    assert settle(final, tentative, feeds, bound, 0) == ({1: 20, 3: 25}, 131)


@pytest.mark.parametrize("seed", [85])
def test_late_withdrawals_seed_85_every_peer_drops_the_same_member(seed: int) -> None:
    """The seeded game (three players, about 1 s of CPU): every peer drops seat 1 at 18, as
    the audit of every log does; peer 2 made seat 0's drop at 19 final before."""
    result = run(late_withdrawals(seed, players=(3, 3)))
    assert result.spec.seats == 3
    assert result.violations == []
    drops = {tuple(sorted(peer.final.dropped.items())) for peer in result.peers if peer}
    assert len(drops) == 1
    assert dict(next(iter(drops)))[1] == 18


def _vote(target: int, last_seq: int, reason: DropReason = DropReason.SILENT) -> Drop:
    return Drop(frontier=(0,) * 5, seat=target, last_seq=last_seq, reason=reason)


def _held(ops: list[tuple[int, int, Drop]]) -> Any:
    """The parts of a fold ``finality.decided`` reads: five seats, ``ops`` (voter, its seq,
    vote) read in order, each at the next Lamport time (the caps of the game fold left out:
    every held vote counts, as where the withdrawals held lifted them)."""
    roster = Roster(5)
    for lamport, (voter, seq, body) in enumerate(ops, start=1):
        if roster.vote(voter, seq, body, lamport):
            roster.settle(lamport)
    return SimpleNamespace(dropped=roster.dropped, drop_at=roster.drop_at, roster=roster)


def test_decided_a_drop_the_votes_before_a_later_withdrawal_make_is_decided_at_its_time() -> None:
    """Five players seed 14 under ``LateLift(0)`` by hand: seats 0, 1 and 2 vote seat 4 out
    (at 4), and seat 0 later withdraws its vote on seat 3 (at 5), which capped seat 3's votes.
    The withdrawal lifts a cap in the past (``decided_at``: 5), but the votes before it
    already drop seat 4 there: the drop is decided at 4, as a peer without the withdrawal
    decides it (``finality.decided``), and no wait on the member's feed is asked."""
    ops = [
        (0, 10, _vote(3, 9)),
        (1, 10, _vote(4, 9)),
        (2, 10, _vote(4, 9)),
        (0, 11, _vote(4, 9)),  # seat 4 out, at 4
        (0, 12, _vote(3, 0, DropReason.WITHDRAW)),
    ]
    held = _held(ops)
    assert held.dropped == {4: 9} and held.drop_at == {4: 4}
    assert decided_at(held, 4) == 5
    assert decided(held, 4) == 4
    assert lifted(held, 4) == 0


def test_decided_a_drop_resting_on_the_later_withdrawal_is_decided_at_the_withdrawal() -> None:
    """The same votes but seat 3's in place of seat 0's: seat 3's vote (its seq 10) is past
    the count of seat 0's standing vote on it (9), so the votes before the withdrawal, their
    caps standing, do not drop seat 4; the drop rests on the withdrawal (at 5), and is decided
    there, its member's feed waited for up to it (``lifted``)."""
    ops = [
        (0, 10, _vote(3, 9)),
        (1, 10, _vote(4, 9)),
        (2, 10, _vote(4, 9)),
        (3, 10, _vote(4, 9)),  # (out here only with seat 3's vote uncapped)
        (0, 12, _vote(3, 0, DropReason.WITHDRAW)),
    ]
    held = _held(ops)
    assert held.dropped == {4: 9} and held.drop_at == {4: 4}
    assert decided(held, 4) == decided_at(held, 4) == 5
    assert lifted(held, 4) == 5
