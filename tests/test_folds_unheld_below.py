"""A cut :class:`~p2p_nertz.protocol.folds.Unheld` offers stands where the fold with it
imposed drops the member at a lower count: the votes without the member's events past the cut
drop it, and those events count nowhere either way (``folds.cut_stands``; docs/protocol.md
§9.2, *events nobody else holds*, session 41).

The lie fuzzer's ``--two-liars --back readmit`` seed 326 (three players; liar seat 0
``seq_skip``, liar seat 2 ``move_card``, honest seat 1): seat 0 skipped a seq on the wire, so
the peers held its feed to 18 and dropped it at 16; its events from 19 on (a withdrawal of its
vote on seat 1, a vote *withheld* on seat 1, a second withdrawal) are in its own log alone.
Every fold of a set of logs holding that log took the other fixed point, seat 2 out at 10: the
cut at 18 (the count of the last votes on seat 0, what the others announced holding) was
offered, and refused because the fold with it drops seat 0 at 16, not at 18.
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.folds import Folds, Unheld, cut_stands
from p2p_nertz.protocol.state import Event, GameState
from tests.test_folds_dropped_past_cut import _spec
from tests.test_folds_self_kept import _events

_S, _W, _H = DropReason.SILENT, DropReason.WITHDRAW, DropReason.WITHHELD

#: Seed 326's membership events as signed (seat, seq, Lamport, frontier, target, count,
#: reason), read from the logs of the played game; the moves between them left out (the fold
#: reads seqs, counts and frontiers). Every peer held all but seat 0's events from 19 on.
_SEED_326 = (
    (2, 19, 61, (11, 11, 18), 0, 11, _S),  # seat 2, cut off, votes seats 0 and 1 out
    (2, 20, 62, (11, 11, 19), 1, 11, _S),
    (0, 17, 71, (16, 16, 10), 2, 10, _S),  # seats 0 and 1 vote seat 2 out, counting 10
    (1, 17, 71, (16, 16, 10), 2, 10, _S),
    (0, 18, 79, (17, 16, 10), 1, 16, _S),  # seats 0 and 1 vote each other out (16)
    (1, 19, 79, (16, 18, 10), 0, 16, _S),
    (2, 21, 87, (11, 11, 20), 1, 0, _W),
    (0, 19, 89, (18, 16, 10), 1, 0, _W),  # in seat 0's log alone from here
    (1, 20, 89, (16, 19, 10), 0, 0, _W),
    (1, 21, 111, (18, 20, 10), 2, 0, _W),
    (2, 22, 113, (11, 11, 21), 0, 0, _W),
    (0, 20, 172, (19, 21, 10), 1, 21, _H),
    (2, 23, 196, (18, 21, 22), 0, 18, _H),  # seats 1 and 2 vote seat 0 out, holding 18
    (1, 22, 200, (18, 21, 23), 0, 18, _H),
    (0, 21, 209, (20, 22, 10), 1, 0, _W),
)
#: The last of seat 0's events the peers held (it skipped 19 on the wire).
_HELD = 18


def _folds(events: list[Event]) -> Folds:
    folds = Folds(GameState(_spec(3)))
    for event in events:
        folds.add(event, 0)
    return folds


def _peers(
    rows: tuple[tuple[int, int, int, tuple[int, ...], int, int, DropReason], ...],
) -> list[Event]:
    """What every peer held: all but seat 0's events past :data:`_HELD`."""
    return _events(tuple(r for r in rows if r[0] != 0 or r[1] <= _HELD))


def test_folds_the_liars_log_alone_moves_no_drop() -> None:
    """The peers' events and every event (the union of the logs, or seat 0's log with any
    other) drop seat 0 at 16, as the peers did."""
    assert _folds(_peers(_SEED_326)).tentative.dropped == {0: 16}
    assert _folds(_events(_SEED_326)).tentative.dropped == {0: 16}


def test_folds_an_unheld_cut_stands_on_a_drop_below_it() -> None:
    """The cut at 18 (no member but seat 0 announced its events past 18) is kept over the
    fold with it imposed, which drops seat 0 at 16; not at 17 (seats 1 and 2 announced 18),
    and not where the fold with it drops seat 0 at no count or a higher one."""
    events = _events(_SEED_326)
    folds = _folds(events)
    unheld = Unheld(3)
    for event in events:
        unheld.note(event)
    imposed = folds._fold({0: 18}, {}, {}, imposed={0: 18})  # (the rounds alone: no trial)
    assert imposed.dropped.get(0) == 16
    assert cut_stands(imposed, imposed, unheld, 0, 18)
    assert not cut_stands(imposed, imposed, unheld, 0, 17)  # (held past by seats 1 and 2)
    kept_in = folds._fold({}, {}, {}, imposed={})
    assert 0 not in kept_in.dropped
    assert not cut_stands(kept_in, kept_in, unheld, 0, 18)


@pytest.mark.parametrize("ends", [_HELD + 1, _HELD + 2])
def test_folds_a_liars_log_ending_sooner_moves_no_drop(ends: int) -> None:
    """Seat 0's log ending at its withdrawal (its seq 19, Lamport 89) or at its vote after it
    (20, at 172), as a liar that stopped there leaves it: the fold with the cut at 18 drops
    seat 0 at 16 and keeps the cut. Seat 2's drop at 10, decided earlier (89), rests on that
    withdrawal, which seats 1 and 2, voting seat 0 out counting 18 at 196 and 200, never
    held: ``decided_first`` no longer takes it (session 42; it did, and every audit with
    seat 0's log named honest seat 1)."""
    rows = tuple(r for r in _SEED_326 if r[0] != 0 or r[1] <= ends)
    assert _folds(_events(rows)).tentative.dropped == {0: 16}
