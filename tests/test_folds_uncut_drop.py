"""A drop that only the tentative fold's own cuts not final yet and a withdrawable cap keep
undecided holds finality back until those cuts' drops are final (docs/protocol.md §9.2, *a
drop not final yet holds finality back*; §13, *two members' withdrawals held at once*).

Built by hand on :class:`Folds` and :func:`settle`, as tests/test_folds_capped_drop.py does,
in the shape of ``scripts/scan_late_lift.py --pairs`` three players seed 1 (seats 1 and 2's
withdrawals held). ``X`` (seat 0) and ``Q`` (seat 1) each vote the other out past the other's
count, so the votes have two fixed points: ``X`` out at 3, or ``Q`` out at 3. ``Q`` votes
``X`` out counting 2 (10); ``C`` (seat 2) and ``X`` vote ``Q`` out counting 3 (13, 14), ``X``'s
vote its seq 4, past ``Q``'s count: capped; ``C`` withdraws (15); ``C`` votes ``X`` out
counting 3 (18), which drops ``X`` at 3, and ``X`` withdraws its vote on ``Q`` (22). Held back:
``Q``'s withdrawal of its vote on ``X`` (16), before that drop, and ``C``'s (20). Without them
the held events drop ``X``; with them every vote on ``X`` is withdrawn, ``X``'s vote on ``Q``
counts, and ``Q`` is out at 3 (at 14), which cuts ``Q``'s event 4, timed at 5, whatever its
time. A peer that made that event final before the withdrawals came kept it for good while
every fold from scratch cut it (the seed: peers 0 and 2 made seat 1's event 44 final).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import cast

from test_folds_dropped_past_cut import _EVER
from test_folds_unheld_still_in import _events, _folds, _Row, _spec

from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.envelope import Message
from p2p_nertz.protocol.finality import settle
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.state import Event

_S, _W = DropReason.SILENT, DropReason.WITHDRAW
_X, _Q, _C = 0, 1, 2
_CUT = 3  # both cuts: every member's events up to 3 are everywhere
_LATE = 5  # the Lamport time of Q's event 4, past its cut


def _rows() -> tuple[list[_Row], list[_Row]]:
    """The events a peer holds, and the two withdrawals held back from it."""
    seqs = [1, 1, 1]

    def row(lamport: int, seat: int, reason: DropReason, target: int, count: int) -> _Row:
        seqs[seat] += 1
        return (lamport, seat, seqs[seat], reason, target, count, (_CUT,) * 3)

    filler = [row(t, s, _W, (s + 1) % 3, 0) for t in (2, 3) for s in range(3)]  # (to the cuts)
    late = row(_LATE, _Q, _W, _X, 0)  # (Q's event 4: a move in the game)
    held = [
        row(10, _Q, _S, _X, 2),
        row(13, _C, _S, _Q, _CUT),
        row(14, _X, _S, _Q, _CUT),  # (X's seq 4: past Q's count, capped while Q's vote stands)
        row(15, _C, _W, _Q, 0),
    ]
    q_withdraws = row(16, _Q, _W, _X, 0)  # (held back)
    held.append(row(18, _C, _S, _X, _CUT))  # (drops X at 3 while Q's vote stands)
    c_withdraws = row(20, _C, _W, _X, 0)  # (held back)
    held.append(row(22, _X, _W, _Q, 0))
    return [*filler, late, *held], [q_withdraws, c_withdraws]


def _settle(folds: Folds, events: Sequence[Event], bound: int) -> tuple[dict[int, int], int]:
    """Make final what the held events allow, the others' terms at ``bound`` (as
    ``Finality.advance`` does, with the rule's ``uncut``); the members out and the stable
    time."""
    tentative = folds.tentative
    final = folds.final
    final.vote_caps = dict(tentative.vote_caps)
    feeds: list[list[SimpleNamespace]] = [[], [], []]
    for event in sorted(events, key=lambda e: (e.seat, e.seq)):
        feeds[event.seat].append(SimpleNamespace(lamport=event.lamport))
    held = cast(Sequence[Sequence[Message]], feeds)
    excluded, stable = settle(
        final,
        tentative,
        held,
        lambda _excluded, _floor=None: bound,
        0,
        capped=folds.capped_drops,
        uncut=folds.uncut_drops,
    )
    folds.advance(stable, excluded, tentative.gaps)
    return excluded, stable


def _counted(folds: Folds) -> set[tuple[int, int]]:
    """The membership events the final fold counted, ``(seat, seq)``."""
    return {(seat, seq) for seat, seq, _ in folds.final.roster.ops}


def test_folds_the_other_fixed_point_holds_its_members_events_until_the_drop_is_final() -> None:
    """Without the two withdrawals the held events drop X at 3, at 18; the fold without that
    cut and without the withdrawable caps drops Q at 3, so Q's event 4 (at 5) stays below
    the stable time while X's drop is not final, though the others' terms allow 9. The
    withdrawals come: every view drops Q at 3, and the final fold is the one a fold from
    scratch makes (Q's event 4 never counted). Before session 24 the stable time reached 9
    and Q's event 4 stayed in that final fold for good."""
    spec = _spec(3)
    rows, withdrawals = _rows()
    events = _events(3, rows)
    fed = _folds(spec, events)
    assert fed.tentative.dropped == {_X: _CUT}
    assert fed.capped_drops == {}
    assert fed.uncut_drops == {_Q: (_CUT, frozenset({_X}))}
    assert _settle(fed, events, 9) == ({}, _LATE - 1)
    assert (_Q, _CUT + 1) not in _counted(fed)
    late = _events(3, [*rows, *withdrawals])[len(events) :]
    for event in late:
        assert fed.add(event, _LATE - 1) == []
    assert fed.tentative.dropped == {_Q: _CUT}
    assert fed.uncut_drops == {}
    everything = [*events, *late]
    _settle(fed, everything, _EVER)
    fresh = _folds(spec, everything)
    _settle(fresh, everything, _EVER)
    assert fed.final.dropped == fresh.final.dropped == {_Q: _CUT}
    assert _counted(fed) == _counted(fresh)
    assert (_Q, _CUT + 1) not in _counted(fed)


def test_folds_the_hold_goes_once_the_drop_it_waits_for_is_final() -> None:
    """The other side: the withdrawals never come (Q's vote on X stands), and once the
    others' terms reach X's drop (18) that drop is final, with Q's event 4 in the same step:
    the hold never holds back the drop whose cut it waits on, so it adds no wait that drop
    does not end."""
    spec = _spec(3)
    rows, _ = _rows()
    events = _events(3, rows)
    folds = _folds(spec, events)
    assert _settle(folds, events, 17) == ({}, _LATE - 1)  # (X's drop not final: held)
    excluded, stable = _settle(folds, events, 30)
    assert excluded == {_X: _CUT}
    assert stable == 30
    assert folds.final.dropped == {_X: _CUT}
    assert (_Q, _CUT + 1) in _counted(folds)
