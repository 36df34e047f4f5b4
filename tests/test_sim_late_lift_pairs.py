"""The late lift with two members' withdrawals held at once: open (docs/protocol.md §13, *a
late lift*, session 23).

``scripts/scan_late_lift.py --pairs`` (three players, seeds 0-29) holds the withdrawals of two
members together (:class:`~p2p_nertz.sim.schedules.LateLift` with ``also``), each at every
receiver until a peer made one of their drops final, at most 3 s: an asynchronous network may
do it, and nothing is lost for good. Three games broke; seed 1 is kept here as it breaks, a
strict ``xfail``, until a rule mends it.

Seed 1, seats 1 and 2 held: peers 0 and 2 made seat 1's event 44 (Lamport 181) final while
their held votes dropped seat 0 at 43 (at 218) and left seat 1 in, holding seat 1's feed up
to 181 and neither of its withdrawals (197, 211). Those came, and seat 1's withdrawal at 211
lifted a cap in the past: every view now drops seat 1 at 43 (at 204), below the event they
had made final. Their final states keep it; seat 1's own, and the audit of every log (or of
peer 0's log alone), do not: seat 1's stock and waste differ by one turn. No rule holds a
member's events past a cut back while the drop that cuts them is decided by none of the held
events: ``Folds.capped_drops`` folds again with the held votes' own cuts, so seat 0's cut
there keeps seat 1's drop undecided (the two fixed points of session 17's seeds 18 and 78).

Seeds 4 (seats 1 and 2 held) and 14 (seats 0 and 2): a member saw itself voted out by the
other two (seed 4: seat 0, at its event 41), their withdrawals held. Its own tentative fold,
folding again with that cut tried (the member's votes on them capping theirs), skipped its
events past the cut without dropping it, and showed its table as it was at the cut: the bot
played from it, and turned up again cards its feed had shown (seed 4: ``N>4`` turning up QH,
as its event 42 had, ten times). Every fold that counted its events refused those moves as
deck mismatches. *Mended (session 23):* the local player plays nothing while its tentative
fold leaves events of its own uncounted (:func:`~p2p_nertz.protocol.local.own_held_back`).
"""

from __future__ import annotations

import pytest

from p2p_nertz.sim import run
from p2p_nertz.sim.mixes import late_withdrawals
from p2p_nertz.sim.schedules import LateLift

pytestmark = pytest.mark.slow  # (simulated games of ~40 s)


_HELD = [(1, (1, 2)), (4, (1, 2)), (14, (0, 2))]
_OPEN = {1: "open: docs/protocol.md §13, a late lift (session 23)"}


@pytest.mark.parametrize(
    ("seed", "held"),
    [
        pytest.param(
            seed,
            held,
            marks=[pytest.mark.xfail(strict=True, raises=AssertionError, reason=_OPEN[seed])]
            if seed in _OPEN
            else [],
        )
        for seed, held in _HELD
    ],
)
def test_two_members_withdrawals_held(seed: int, held: tuple[int, int]) -> None:
    """Every check of DESIGN.md §8 holds: no split, the audit of every log reads the peers'
    game, no fold refuses an honest member's event."""
    schedule = LateLift(held[0], also=held[1:])
    result = run(late_withdrawals(seed, players=(3, 3)), schedule)
    if {q for q, _ in schedule.held} != set(held) or schedule.final_by is None:
        pytest.fail("the race is no longer built: both members' withdrawals held, one final")
    assert result.violations == []
