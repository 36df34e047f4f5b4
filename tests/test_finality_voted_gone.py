"""A member voted gone is excluded without its own feed, on every held vote: also on votes the
stable time has not reached, which a member still in may not hold (``roster.voted_gone``, read
by ``finality._given_up``; docs/protocol.md §7.4; §13, seed 264's entry, session 43: open,
pinned).

A drop resting on a later withdrawal (``finality.lifted``) waits for its member's own feed up
to there, unless a strict majority of the others stand voting the member out: a member gone
for good is voted out again and nobody hears it to withdraw. That majority may stand on a vote
some member still in has not announced holding, and that member, hearing the member
meanwhile, may withdraw its own vote without it: seed 326's shape with seat 1's vote
*withheld* at 200 signed before seat 2's at 196 reached it, withdrawn at 220 once seat 0's
event 19 came (``tests/test_folds_decided_first_unheld.py``). Seat 2's view gives seat 0 up
on both votes at once, while the stable time without seat 0 (seat 1's cover of seat 2's feed,
to 22 at 113, holds it at 195) is below them; seat 1's view, with its withdrawal, drops seat
2. Read up to that stable time (tried in session 43: the effect digest unchanged), seat 2's
view would wait for seat 0's feed, or for seat 1 to announce seat 2's vote, which it does only
after its withdrawal (a beat counts once its author's feed is held up to its head). Not made:
alone it leaves the other wait's end (seat 0's feed held) open, and the mend is the kept
drop's date (§13).
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.finality import _given_up, decided, lifted
from p2p_nertz.protocol.state import GameState
from tests.test_folds_decided_first_unheld import _seed_326_withdrawn, _tentative
from tests.test_folds_self_kept import _events


def _seat_2_view() -> GameState:
    """Seat 2's view from 200 on: both votes *withheld* held, seat 0's feed to 18."""
    rows = tuple(r for r in _seed_326_withdrawn() if r[2] <= 200 and (r[0] != 0 or r[1] <= 18))
    return _tentative(_events(rows, 3), 3)


_OPEN = pytest.mark.xfail(
    strict=True, raises=AssertionError, reason="docs/protocol.md §13, seed 264's entry (open)"
)


@pytest.mark.parametrize(
    ("limit", "out"),
    [
        # (Seat 1's cover of seat 2's feed stops below seat 2's vote at 196.)
        pytest.param(195, {}, marks=_OPEN),
        # (Seat 2's vote reached, seat 1's at 200 not: one vote standing.)
        pytest.param(199, {}, marks=_OPEN),
        (200, {0: 16}),  # (both: voted gone, no wait on seat 0's feed)
    ],
)
def test_finality_a_member_is_voted_gone_on_votes_the_stable_time_reaches(
    limit: int, out: dict[int, int]
) -> None:
    tentative = _seat_2_view()
    assert dict(tentative.dropped) == {0: 16} and decided(tentative, 0) == 111
    assert lifted(tentative, 0) == 111  # (the drop rests on seat 1's withdrawal at 111)
    known = [79, 200, 200]  # (seat 0's feed held to its event 18, at 79)
    assert _given_up({}, {0: 16}, tentative, lambda trial, floor=None: limit, known) == out
