"""Two groups that made their drops final at once (docs/protocol.md §13).

``scripts/soak.py --late-withdrawals --games 1 --seed N --players 3`` split honest peers for
N = 110 and 85. Each test below folds, by hand, the views the peers held when they made their
drops final: each view has one reading, and the two readings differ. No rule of the fold
alone reconciles them (session 18 tried several, §13); finality does: seed 110 by waiting for
what a member still in announced (tests/test_finality_announced_past_cut.py), seed 85 by
making a drop final only once the withdrawal it rests on is (tests/test_finality_lifted_drop.py).
"""

from __future__ import annotations

from test_folds_unheld_still_in import _S, _W, _drops, _events, _Row, _spec

#: Seed 110's drop events. Seat 1 votes seats 0 and 2 out (counting 31 and 32), seats 0 and
#: 2 vote seat 1 out (159, counting 30, each past seat 1's count of its author) and each
#: other (164, counting 35, each its event 37), and all withdraw (162-175).
_SEED_110: list[_Row] = [
    (154, 1, 37, _S, 0, 31, (31, 36, 32)),
    (155, 1, 38, _S, 2, 32, (31, 37, 32)),
    (159, 0, 36, _S, 1, 30, (35, 30, 35)),
    (159, 2, 36, _S, 1, 30, (35, 30, 35)),
    (162, 1, 39, _W, 0, 0, (31, 38, 32)),
    (164, 0, 37, _S, 2, 35, (36, 30, 35)),
    (164, 2, 37, _S, 0, 35, (35, 30, 36)),
    (167, 0, 38, _W, 1, 0, (37, 30, 35)),
    (167, 2, 38, _W, 0, 0, (35, 30, 37)),
    (169, 0, 39, _W, 2, 0, (38, 30, 35)),
    (169, 1, 40, _W, 2, 0, (31, 39, 32)),
    (175, 2, 39, _W, 1, 0, (35, 30, 38)),
]


def test_seed_110_each_group_folds_its_own_drop() -> None:
    """Peer 2 made seat 1's drop at 30 final holding seat 1's feed up to 31 only (none of
    its votes); peers 0 and 1 made seat 2's drop at 35 final holding every event (seat 2's
    cut at 35 offered by ``lifted_cuts``: seat 0's withdrawal on seat 2, at 169, came after
    a drop the events before it decide). A view without seat 2's events past 35 drops seat
    2 as well: each member's late votes, left out, give the other fixed point."""
    spec = _spec(3)
    peer_2 = [r for r in _SEED_110 if not (r[1] == 1 and r[2] > 31)]
    without_2 = [r for r in _SEED_110 if not (r[1] == 2 and r[2] > 35)]
    assert _drops(spec, _events(3, peer_2)) == {1: 30}
    assert _drops(spec, _events(3, _SEED_110)) == {2: 35}
    assert _drops(spec, _events(3, without_2)) == {2: 35}


#: Seed 85's drop events. Seat 1 votes seats 0 and 2 out (79, 80), seat 2 votes seats 1 and 0
#: out (83, 86), seat 0 votes seats 1 and 2 out (87, 91); each vote is past its author's
#: count in a vote against it. All withdraw (98-125).
_SEED_85: list[_Row] = [
    (79, 1, 21, _S, 0, 17, (17, 20, 18)),
    (80, 1, 22, _S, 2, 18, (17, 21, 18)),
    (83, 2, 22, _S, 1, 18, (19, 18, 21)),
    (86, 2, 23, _S, 0, 19, (19, 18, 22)),
    (87, 0, 30, _S, 1, 18, (29, 18, 20)),
    (91, 0, 33, _S, 2, 20, (32, 18, 20)),
    (98, 1, 24, _W, 0, 0, (17, 23, 18)),
    (102, 2, 25, _W, 0, 0, (19, 18, 24)),
    (115, 0, 47, _W, 2, 0, (46, 18, 20)),
    (124, 2, 26, _W, 1, 0, (38, 18, 25)),
    (125, 1, 25, _W, 2, 0, (17, 24, 18)),
]


def test_seed_85_each_group_folds_its_own_drop() -> None:
    """Peers 0 and 1 made seat 1's drop at 18 final, as the fold of every event has it (seat
    0's withdrawal on seat 2, at 115, lifted the cap of its vote on seat 2's vote on seat 1);
    peer 2, holding every event but that withdrawal, made seat 0's drop at 19 final (seat 0's
    vote on seat 2 caps seat 2's vote on seat 1; seat 2's own withdrawal on seat 1, at 124,
    lifts the cap of its vote on seat 1's vote on seat 0). Without its own withdrawal, each
    view drops no one."""
    spec = _spec(3)
    # (peer 0 at 101: seat 1's feed up to 18, seat 2's up to 25)
    held = {0: 47, 1: 18, 2: 25}
    peer_0 = [r for r in _SEED_85 if r[2] <= held[r[1]]]
    assert _drops(spec, _events(3, peer_0)) == {1: 18}
    assert _drops(spec, _events(3, [r for r in peer_0 if r[0] != 115])) == {}
    peer_2 = [r for r in _SEED_85 if r[0] != 115]
    assert _drops(spec, _events(3, _SEED_85)) == {1: 18}
    assert _drops(spec, _events(3, peer_2)) == {0: 19}
    assert _drops(spec, _events(3, [r for r in peer_2 if r[0] != 124])) == {}
