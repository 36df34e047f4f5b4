"""A member the held votes drop is excluded from finality only once every event of it that a
member still in announced holding is held here (docs/protocol.md §7.4, §13 *two groups that
make their drops final at once*).

Found by ``scripts/soak.py --late-withdrawals`` seed 110 (three players, quick timers). Seat 1
voted seats 0 and 2 out (Lamport 154, 155, counting 31 and 32); seats 0 and 2 voted seat 1
out (159, counting 30; seat 2's vote is its event 36) and each other (164, counting 35), and
all withdrew (162-175). Peer 2, holding seat 1's feed up to 31, folded seat 1 out at 30 (at
159) and made it final at 181: seat 1's events past its cut are not waited for once it is
out. But seat 0 held seat 1's events up to 40 and said so (its beats): among them seat 1's
vote on seat 2 (its event 38, at 155), which, in every fold that holds it, makes seat 2's
drop at 35 (at 164) with seat 0's, cutting seat 2's vote on seat 1 (its event 36). Peers 0
and 1, holding it, made seat 2's drop final: two games. Now peer 2 fetches what seat 0
announced before it excludes seat 1, folds seat 1's vote, and drops seat 2 as the others do.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from p2p_nertz.protocol.finality import settle, unannounced
from p2p_nertz.sim import run
from p2p_nertz.sim.mixes import late_withdrawals


def _feed(lamports: Sequence[int]) -> list[Any]:
    return [SimpleNamespace(lamport=t) for t in lamports]


def _state(
    dropped: dict[int, int],
    drop_at: dict[int, int] | None = None,
    lifts: dict[int, tuple[tuple[int, int, int, int, int], ...]] | None = None,
) -> Any:
    """The parts of a fold ``settle`` reads (``lifts``: the roster's withdrawals of votes
    that capped, target -> (count, Lamport time, voter, ...))."""
    return SimpleNamespace(
        dropped=dropped,
        drop_at=drop_at or {},
        gaps={},
        readmitted_at={},
        roster=SimpleNamespace(lifts=lifts or {}),
    )


def test_unannounced_keeps_a_member_in_until_what_a_member_still_in_announced_is_held() -> None:
    feeds = [_feed(range(1, 40)), _feed(range(1, 32)), _feed(range(1, 40))]
    said = [(39, 40, 35), (0, 31, 0), (35, 31, 39)]  # (seat 0 holds seat 1 up to 40)
    assert unannounced({1: 30}, feeds, said, out={1}) == {}
    feeds[1] = _feed(range(1, 41))
    assert unannounced({1: 30}, feeds, said, out={1}) == {1: 30}
    # What a member out too announced is not waited for (it may be gone for good), nor what
    # the member said of its own feed.
    feeds[1] = _feed(range(1, 32))
    assert unannounced({1: 30}, feeds, said, out={0, 1}) == {1: 30}
    assert unannounced({1: 30}, feeds, [(0, 0, 0), (0, 90, 0), (0, 31, 0)], out={1}) == {1: 30}


def test_unannounced_waits_for_no_event_past_a_fork_proven_here() -> None:
    """Past a proven fork, a count does not say which version the announcer holds: a peer
    holding the other version at the fork could never take what follows the announcer's
    (tests/test_sim_forks.py, four players, the claim on a cut foundation: seat 3 forked at
    31, dropped at 30; the sleeper held the fake at 31, seats 0 and 2 announced 36 and 35).
    What comes before the fork is one chain: it is still waited for."""
    feeds = [_feed(range(1, 40)), _feed(range(1, 40)), _feed(range(1, 40)), _feed(range(1, 32))]
    said = [(39, 39, 39, 36), (39, 0, 39, 31), (39, 39, 39, 35), (0, 0, 0, 0)]
    assert unannounced({3: 30}, feeds, said, out={3}) == {}  # (no fork known: waits)
    assert unannounced({3: 30}, feeds, said, out={3}, forked={3: 31}) == {3: 30}
    # A fork further on: the events up to the one before it are waited for, no more.
    assert unannounced({3: 30}, feeds, said, out={3}, forked={3: 34}) == {}
    feeds[3] = _feed(range(1, 34))
    assert unannounced({3: 30}, feeds, said, out={3}, forked={3: 34}) == {3: 30}
    # Another member's fork changes nothing for this one.
    assert unannounced({3: 30}, feeds, said, out={3}, forked={1: 5}) == {}


def test_settle_excludes_a_dropped_member_only_with_its_announced_events_held() -> None:
    """Seed 110's shape by hand: seat 1 dropped at 30 at Lamport 159 by the held votes, its
    feed held up to 31, seat 0 announcing 40 of it; the stable time without seat 1 is 181."""
    feeds = [_feed(range(101, 140)), _feed(range(120, 151)), _feed(range(101, 140))]
    final = _state({})
    tentative = _state({1: 30}, {1: 159})
    said = [(39, 40, 39), (0, 31, 0), (39, 30, 39)]

    def bound(excluded: dict[int, int], floor: int | None = None) -> int:
        return 181 if 1 in excluded else 158

    excluded, stable = settle(final, tentative, feeds, bound, 0, announced=said)
    assert excluded == {}
    assert stable == feeds[1][30].lamport - 1  # (its events past the cut wait for the drop)
    feeds[1] = _feed(range(120, 160))  # (fetched: seat 1's events up to 40)
    excluded, stable = settle(final, tentative, feeds, bound, 0, announced=said)
    assert excluded == {1: 30}
    assert stable == 181
    # Without the announcements, as before: out once its events up to the cut are held.
    feeds[1] = _feed(range(120, 151))
    assert settle(final, tentative, feeds, bound, 0)[0] == {1: 30}


def test_settle_two_members_dropped_at_once_only_the_one_whose_announced_events_are_held() -> None:
    """Four members, a partition: the held votes drop seats 1 and 3 (cuts 20 and 25, at 90
    and 95); seat 0 announced seat 3's feed up to 28, seat 2 nothing past the cuts. Seat 1 is
    out; seat 3 stays in until its three events past the cut are held. What seat 1, out too,
    announced of seat 3 (40) is not waited for."""
    feeds = [_feed(range(1, 60)), _feed(range(1, 21)), _feed(range(1, 60)), _feed(range(50, 75))]
    final = _state({})
    tentative = _state({1: 20, 3: 25}, {1: 90, 3: 95})
    said = [(59, 20, 59, 28), (50, 0, 50, 40), (59, 20, 59, 25), (0, 0, 0, 0)]

    def bound(excluded: dict[int, int], floor: int | None = None) -> int:
        return 120 if excluded.keys() >= {1, 3} else 100 if 1 in excluded else 70

    excluded, stable = settle(final, tentative, feeds, bound, 0, announced=said)
    assert excluded == {1: 20}
    assert stable == 100  # (seat 3 in: nothing of it past its cut is held yet)
    feeds[3] = _feed(range(50, 78))  # (its events up to 28, fetched from seat 0)
    excluded, stable = settle(final, tentative, feeds, bound, 0, announced=said)
    assert excluded == {1: 20, 3: 25}
    assert stable == 120


@pytest.mark.parametrize("seed", [110])
def test_late_withdrawals_seed_110_every_peer_drops_the_same_member(seed: int) -> None:
    """The seeded game (three players, about 1 s of CPU): every peer and the audit drop seat
    2 at 35; peer 2 made seat 1's drop at 30 final before."""
    result = run(late_withdrawals(seed, players=(3, 3)))
    assert result.spec.seats == 3
    assert result.violations == []
    for peer in result.peers:
        assert peer is not None
        assert dict(peer.final.dropped) == {2: 35}
