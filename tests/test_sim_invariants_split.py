"""The invariants name two groups of peers that made final different drops
(``sim.invariants._split``, docs/protocol.md §13, soak seed 14017), and only that: a peer that
stopped early, dropped and never told, or in a game that cannot end, made final less, not
otherwise.

The peers are stand-ins holding a real final fold (:class:`GameState`) and a stable time:
what the check reads of a peer.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import GameState
from p2p_nertz.rules import Rules
from p2p_nertz.sim.invariants import _split

if TYPE_CHECKING:
    from p2p_nertz.protocol.peer import Peer


def _spec(players: int) -> GameSpec:
    ids = [Identity.generate(bytes([i + 1]) * 32).peer_id for i in range(players)]
    return GameSpec.create([(pid, f"p{i}") for i, pid in enumerate(ids)], Rules(), b"split")


def _final(players: int, drops: dict[int, tuple[int, int]]) -> GameState:
    """A final fold with ``drops`` (member -> (cut, decided at)) made."""
    state = GameState(_spec(players))
    for member, (cut, at) in drops.items():
        state.roster.remove(member, cut, left=False)
        state.roster.drop_at[member] = at
    return state


def _peer(final: GameState, stable: int) -> Peer:
    return cast("Peer", SimpleNamespace(final=final, stable=stable))


def test_split_names_two_groups_that_made_final_different_drops() -> None:
    """Seed 14017's shape: peers 0, 3 and 4 made final seat 1 out at 15 (at 231), peer 5 seat
    4 out at 16 (at 228); both past 231. Named once per pair that parts; the two alike not."""
    players = 6
    first = {2: (12, 207), 1: (15, 231)}
    second = {2: (12, 207), 4: (16, 228)}
    peers = [
        (0, _peer(_final(players, first), 25_586)),
        (3, _peer(_final(players, first), 25_586)),
        (5, _peer(_final(players, second), 1_591)),
    ]
    problems = _split(peers)
    assert len(problems) == 2
    assert all(p.startswith("split: seats ") for p in problems)
    assert "seats 0 " in problems[0] and " 5 (stable 1591" in problems[0]
    assert "seats 3 " in problems[1]


def test_split_names_the_same_member_dropped_at_another_cut() -> None:
    players = 4
    peers = [
        (0, _peer(_final(players, {3: (12, 200)}), 500)),
        (1, _peer(_final(players, {3: (15, 200)}), 500)),
    ]
    assert len(_split(peers)) == 1


def test_split_leaves_a_peer_that_made_final_less() -> None:
    """A peer that stopped before a drop (crashed, cut off, waiting in a game that cannot
    end), and the member dropped that never learned it (its stable time below its drop):
    compared up to its stable time, they agree."""
    players = 4
    done = _final(players, {2: (12, 207), 3: (30, 900)})
    peers = [
        (0, _peer(done, 5_000)),
        (1, _peer(_final(players, {2: (12, 207)}), 899)),  # (stopped before 3's drop)
        (3, _peer(_final(players, {2: (12, 207)}), 850)),  # (dropped at 900, never told)
        (2, _peer(_final(players, {}), 206)),  # (dropped at 207, never told)
    ]
    assert _split(peers) == []
    # Past the drop, the peer that does not hold it parts from the others.
    late = [(0, peers[0][1]), (1, _peer(_final(players, {2: (12, 207)}), 900))]
    assert len(_split(late)) == 1


def test_split_leaves_a_member_readmitted_since_from_the_cut() -> None:
    """Seat 2 dropped at 12 (at 207), readmitted from its rejoin request (15), dropped again
    at 15 (at 1449): a peer that made final only the first drop agrees up to its stable time,
    and so does one that made final the readmission and not the second drop."""
    players = 4
    later = _final(players, {2: (12, 207)})
    later.roster.rejoin(Drop((0,) * players, 2, 15, DropReason.REJOIN), over=False)
    assert later.roster.readmit(1328) == [2]
    readmitted = later.copy()
    later.roster.remove(2, 15, left=False)
    later.roster.drop_at[2] = 1449
    peers = [
        (0, _peer(later, 3_000)),
        (1, _peer(_final(players, {2: (12, 207)}), 1_000)),
        (3, _peer(readmitted, 1_400)),
    ]
    assert _split(peers) == []
    # Readmitted from another cut: not the same drop.
    other = _final(players, {2: (11, 207)})
    assert len(_split([(0, peers[0][1]), (1, _peer(other, 1_000))])) == 1


def test_split_leaves_the_member_an_abandon_left_out() -> None:
    """Two members left, a partition that never healed: each abandons the other (§9.3), on a
    provisional result; the union of the logs decides (the audit's check), not this one."""
    players = 3
    first = _final(players, {2: (12, 207), 1: (40, 600)})
    second = _final(players, {2: (12, 207), 0: (38, 610)})
    first.abandonment.abandoned = (0, 1)
    second.abandonment.abandoned = (1, 0)
    assert _split([(0, _peer(first, 2_000)), (1, _peer(second, 2_000))]) == []
