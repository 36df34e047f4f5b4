"""An event far ahead is taken whole once every member still in announced it, a member the
held votes drop not waited for (``finality.uncovering``, ``Outbox.catch_up``;
docs/protocol.md §5.3, §7.4, §13 *a leap waited on a dropped member's cover*).

``scripts/soak.py --liars --two-liars --back readmit --players 3-4`` seed 256 (four players,
quick timers): seat 1 (``lamport_leap``), cut off, voted seats 0, 3 and 2 out (Lamport
100-102); seats 0 and 2 voted seat 1 out (123) and seat 3 (the other liar, cut off too; 131,
counting 17), then withdrew their votes on seat 1 (135, 137). Seat 1 withdrew its votes at
leaping times (1,859,833,241 on seat 2; 5,512,939,656 on seat 0): seat 3's drop rests on
those withdrawals (they lift the caps on seats 0's and 2's votes), decided at 5,512,939,656.
Seat 0 had taken seat 1's leaps as beats (far ahead, ``Outbox.ahead``), to be taken whole
once every member still in announced them; seat 3 never would (its events past its cut are
never taken here, its cover of seat 1 stays at 13), so seat 0's clock stayed ``lead`` above
137, every member's stable time without seat 3 below the drop's date, and the round in play
for ever at seats 0 and 2.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from p2p_nertz.protocol.finality import covered, uncovering


def _state(dropped: dict[int, int]) -> Any:
    return SimpleNamespace(dropped=dropped)


def _finality() -> Any:
    """Seat 0's: what each member is known to hold of every feed (seat 3's word on seat 1
    stops at 13, from its events up to its cut)."""
    held_by = [(22, 0, 0, 0), (22, 30, 23, 17), (22, 30, 23, 17), (19, 13, 18, 17)]
    return SimpleNamespace(seat=0, held_by=held_by)


def test_a_member_the_held_votes_drop_is_not_waited_for_once_held_to_its_cut() -> None:
    feeds = [[0] * 22, [0] * 30, [0] * 23, [0] * 17]
    final, tentative = _state({}), _state({3: 17})
    out = uncovering(final, tentative, feeds)
    assert out == {3: 17}
    finality = _finality()
    assert covered(finality, out, {}, 1, 27)  # (seat 1's leap at 5,512,939,656)
    assert not covered(finality, final.dropped, {}, 1, 27)  # (as before: for ever)
    # Seat 1's own word, and seat 2's, still count: one short of it is no cover.
    finality.held_by[2] = (22, 26, 23, 17)
    assert not covered(finality, out, {}, 1, 27)


def test_a_dropped_member_whose_feed_is_not_held_to_its_cut_is_still_waited_for() -> None:
    """Its events up to the cut (its votes among them) may say what cuts another feed:
    until they are held, its word is waited for as before (:func:`released`)."""
    feeds = [[0] * 22, [0] * 30, [0] * 23, [0] * 15]
    assert uncovering(_state({}), _state({3: 17}), feeds) == {}
    assert not covered(_finality(), {}, {}, 1, 27)


def test_the_final_folds_drops_stay_out() -> None:
    feeds = [[0] * 22, [0] * 30, [0] * 23, [0] * 10]
    assert uncovering(_state({3: 8}), _state({3: 8}), feeds) == {3: 8}
    assert uncovering(_state({3: 8}), _state({3: 8, 2: 20}), feeds) == {3: 8, 2: 20}
