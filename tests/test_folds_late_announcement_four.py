"""The class of *two drops each resting on the other's late vote* at four players
(docs/protocol.md §13): ``scripts/soak.py --late-withdrawals --players 4-5`` seeds 26 and 46,
found in session 16 and mended by the same session's trial of every membership event read
before a withdrawal (``roster.lifted_trials``, §9.2 *a withdrawal after the drop*): every view
below now drops seat 3 at 33, as peer 2 did.

Seed 46 (``sim.mixes.late_withdrawals(46, players=(4, 5))``, four players, quick timers): seat
3 cut off from everyone, seat 0 from seats 1 and 2. Seats 0 and 3 vote each other out, each
past the other's count (seat 3 at Lamport 189, its event 35, counting 30 of seat 0; seat 0 at
192, its event 33, counting 33 of seat 3), so each vote caps the other; seats 1 and 2 vote
both out (seat 0 at 203 and 205, seat 3 at 207) and withdraw (212 to 231). The fold of
these events with no cut drops seat 0 at 30, at 205 (seat 3's vote counting: a member
dropped caps nothing, and seat 0 is out). Peer 2 held every one of them (up to Lamport 233;
not seat 0's withdrawal on seat 3 at 248) when it made Lamport 230 final, and no member
still in had announced seat 3's events past 33 (seats 1 and 2 froze at 33 with their votes):
``Unheld`` offered seat 3's cut at 33, and the fold with it imposed (seat 3's vote on seat 0
past it) keeps seat 0 in and drops seat 3 at 33, at 207. Then peer 2 signed its event 45 (a
claim, Lamport 243), announcing seat 3's feed up to 41: it had withdrawn its vote on seat 3,
so it announces what it holds, past the cut its own final fold made. Peers 0, 1 and 3 held
that event when they made the drops final: no cut offered, seat 0 out at 30.
Two games, before the rule; peer 2 waited in round 1's play for ever, and the others voted it
out as *withheld* in round 2.

Seed 26 is the same with seats 2 and 3 as the pair (seat 3 at 216 on seat 2, its event 36
past the count 35 of the votes on it; seat 2 at 217 on seat 3, its event 37 past 34), seats
0 and 1 voting both out and withdrawing (226 to 239): peers 0 and 1 made seat 3 out at 35
(at 217) final holding the drop events up to 239 (peer 1 without seat 3's withdrawal at 234);
peers 2 and 3, holding the same and seat 0's result of round 1 (Lamport 249, announcing seats
2 and 3 up to 41, signed by peer 0 after it made that drop final), made seat 2 out at 34 (at
216) final. The split brain in round 1's scores is the forfeit of seat 2 or of seat 3.

In both, as in three-player seed 11 (``test_folds_late_announcement.py``), the announcement
that takes the cut back comes from a member whose own final fold had made the drop at that
cut before it signed it.
"""

from __future__ import annotations

import pytest
from test_folds_unheld_still_in import _S, _W, _drops, _events, _Row, _spec

from p2p_nertz.sim import run
from p2p_nertz.sim.mixes import late_withdrawals

#: Seed 46's drop events up to Lamport 233 (what peer 2 held when it made Lamport 230 final).
_SEED_46: list[_Row] = [
    (189, 3, 35, _S, 0, 30, (30, 32, 30, 34)),
    (190, 0, 31, _S, 1, 31, (30, 31, 29, 33)),
    (190, 3, 36, _S, 1, 32, (30, 32, 30, 35)),
    (191, 0, 32, _S, 2, 29, (31, 31, 29, 33)),
    (192, 0, 33, _S, 3, 33, (32, 31, 29, 33)),
    (192, 3, 38, _S, 2, 30, (30, 32, 30, 37)),
    (196, 0, 34, _W, 2, 0, (33, 31, 29, 33)),
    (196, 3, 39, _W, 2, 0, (30, 32, 30, 38)),
    (203, 2, 41, _S, 0, 30, (30, 34, 40, 33)),
    (205, 1, 35, _S, 0, 30, (30, 34, 41, 33)),
    (207, 1, 36, _S, 3, 33, (30, 35, 41, 33)),
    (207, 2, 42, _S, 3, 33, (30, 35, 41, 33)),
    (212, 2, 43, _W, 0, 0, (30, 36, 42, 33)),
    (214, 2, 44, _W, 3, 0, (30, 36, 43, 33)),
    (217, 1, 37, _W, 0, 0, (30, 36, 44, 33)),
    (223, 0, 35, _W, 1, 0, (34, 31, 30, 33)),
    (225, 3, 40, _W, 0, 0, (30, 32, 31, 39)),
    (231, 1, 38, _W, 3, 0, (31, 37, 44, 33)),
    (233, 3, 41, _W, 1, 0, (34, 32, 31, 40)),
]

#: Seat 2's event 45 (Lamport 243, a claim; here a withdrawal of no vote), signed after peer
#: 2 made seat 3's drop at 33 final, announcing seat 3's feed up to 41.
_SEAT_2_AFTER: _Row = (243, 2, 45, _W, 1, 0, (35, 38, 44, 41))

#: Seat 0's withdrawal of its vote on seat 3 (Lamport 248), the last drop event of the seed.
_SEAT_0_LAST: _Row = (248, 0, 37, _W, 3, 0, (36, 38, 45, 40))


@pytest.mark.parametrize(
    "late", [[], [_SEAT_2_AFTER], [_SEAT_2_AFTER, _SEAT_0_LAST]], ids=["peer 2", "+243", "+248"]
)
def test_seed_46_a_late_announcement_changes_no_drop(late: list[_Row]) -> None:
    """Every view of seed 46's drop events, with or without the announcement seat 2 signed
    after making its drop final, drops what peer 2 made final: seat 3 at 33 (before the rule,
    the views with seat 2's announcement dropped seat 0 at 30)."""
    assert _drops(_spec(4), _events(4, [*_SEED_46, *late])) == {3: 33}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [26, 46])
def test_late_withdrawals_four_player_seeds_that_split_hold_every_invariant(seed: int) -> None:
    """The seeded games (about 7 s of CPU each)."""
    result = run(late_withdrawals(seed, players=(4, 5)))
    assert result.spec.seats == 4
    assert result.violations == []
