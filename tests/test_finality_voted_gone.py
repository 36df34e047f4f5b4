"""A drop whose member's own feed it waits for (``finality.lifted``) is final only once the
stable time without the member reaches the votes a majority standing against it rests on, in
both ends of that wait (docs/protocol.md §7.4, §13 seed 264's entry; session 43).

Seed 326's shape with seat 1's vote *withheld* at 200 signed before seat 2's at 196 reached
it, and withdrawn at 220 once seat 0's event 19 came (``tests/test_folds_decided_first_unheld.py``):
seat 2's view (both votes held) drops seat 0 at 16, decided at 111; seat 1's view with its
withdrawal drops seat 2, and so does the union. Until session 43 seat 2's view gave seat 0 up
on those two votes while the stable time without seat 0 was still below them (seat 1's cover
of seat 2's feed, to 22 at 113, holds it at 195): voted gone, its event 19 not held
(``roster.voted_gone`` read every held vote), or, 19 held and seat 0 beating, on seat 0's
feed with the drop decided first refused by that majority (``folds.decided_first``), dated
111. Seat 1, not holding seat 2's vote, then withdrew its own and made seat 2's drop final: a
split. Now voted gone reads the votes the stable time reaches, and a drop kept by that refusal
is dated by the latest vote of the majority it read (``Folds.dated_drops``): seat 2's view
waits until seat 1 announced seat 2's vote, which it does only after its withdrawal (a beat
counts once its author's feed is held up to its head), so seat 2 then holds the withdrawal
too and folds what seat 1 folds.
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.finality import _given_up, decided, lifted
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.state import GameState
from tests.test_folds_decided_first_unheld import _seed_326_withdrawn
from tests.test_folds_dropped_past_cut import _spec
from tests.test_folds_self_kept import _events


def _seat_2_view(holds_19: bool) -> Folds:
    """Seat 2's view from 200 on: both votes *withheld* held, seat 0's feed to 19 or 18."""
    ends = 19 if holds_19 else 18
    rows = _seed_326_withdrawn()
    folds = Folds(GameState(_spec(3)))
    for event in _events(tuple(r for r in rows if r[2] <= 200 and (r[0] != 0 or r[1] <= ends))):
        folds.add(event, 0)
    return folds


@pytest.mark.parametrize("holds_19", [False, True])
@pytest.mark.parametrize(
    ("limit", "out"),
    [
        (195, {}),  # (seat 1's cover of seat 2's feed stops below seat 2's vote at 196)
        (199, {}),  # (seat 2's vote reached, seat 1's at 200 not)
        (200, {0: 16}),  # (both: every member still in announced them)
    ],
)
def test_finality_a_drop_waits_for_the_stable_time_to_reach_the_majority_it_rests_on(
    holds_19: bool, limit: int, out: dict[int, int]
) -> None:
    folds = _seat_2_view(holds_19)
    tentative = folds.tentative
    assert dict(tentative.dropped) == {0: 16} and decided(tentative, 0) == 111
    assert lifted(tentative, 0) == 111  # (the drop rests on seat 1's withdrawal at 111)
    # Held to 19, seat 2's drop at 10 was the drop decided first, refused by the majority.
    assert folds.dated_drops == ({0: 200} if holds_19 else {})
    known = [250 if holds_19 else 79, 250, 250]  # (seat 0's event 18 is timed 79)
    trial = lambda excluded, floor=None: limit  # noqa: E731 (the stable time without seat 0)
    assert _given_up({}, {0: 16}, tentative, trial, known, dated=folds.dated_drops) == out
