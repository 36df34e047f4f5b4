"""A drop that only a withdrawable cap keeps undecided holds finality back (docs/protocol.md
§9.2, *a drop not final yet holds finality back*; chaos seed 603, §13).

Built by hand on :class:`Folds` and :func:`settle`, as tests/test_folds_late_withdrawal.py
does. ``A`` (seat 0) and ``B`` (seat 1) vote ``C`` (seat 2) out counting 3 at Lamport 10 (with
more voters where the table needs them), ``B``'s vote completing the drop; each withdraws its
vote on ``C`` at 11, before holding the other's. ``A`` then votes ``B`` out counting 1 (12), so
``B``'s vote on ``C`` (its seq 2) is past that count: capped, it counts for nothing while
``A``'s vote stands, and no drop is decided. ``C``'s event 4, past the cut and timed at 5,
reaches ``B``'s peer after the votes. ``A`` withdraws its vote on ``B`` last (20): the cap goes,
in the past too, and the drop of ``C`` at 3 is decided at 10, below what ``B``'s peer could
have made final meanwhile. A fold of the same events from scratch never counts ``C``'s
event 4; ``B``'s final fold, never rolled back, must not have counted it either.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import cast

import pytest
from test_folds_dropped_past_cut import _EVER
from test_folds_unheld_still_in import _events, _folds, _Row, _spec

from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.envelope import Message
from p2p_nertz.protocol.finality import settle
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.state import Event, GameState
from p2p_nertz.sim import run
from p2p_nertz.sim.mixes import late_withdrawals
from tests.proof_helpers import proven

_S, _W, _H, _P = (
    DropReason.SILENT,
    DropReason.WITHDRAW,
    DropReason.WITHHELD,
    DropReason.EQUIVOCATION,
)
_A, _B, _C = 0, 1, 2
_CUT = 3  # C's events every voter holds (and its cut)
_LATE = 5  # the Lamport time of C's event past the cut


def _case(players: int, reason: DropReason) -> tuple[list[_Row], list[_Row]]:
    """The events in the order B's peer delivers them, up to A's vote on B (``reason``), and
    A's withdrawal of that vote."""
    n = players
    others = list(range(3, n))
    voters = [_A, _B, *others[: n // 2 + 1 - 2]]  # (a strict majority of every seat)
    seqs = [1] * n

    def row(lamport: int, seat: int, reason: DropReason, target: int, count: int) -> _Row:
        seqs[seat] += 1
        frontier = list(seqs)
        if seat != _C:  # (a voter announces no more than it counts; B gets C's 4 late)
            frontier[_C] = _CUT if lamport <= 10 or seat == _B else _CUT + 1
        if lamport < 20 and seat in (_A, _B):  # (neither holds the other's vote on C)
            frontier[_B - seat] = 1
        return (lamport, seat, seqs[seat], reason, target, count, tuple(frontier))

    rows = [row(2, _C, _W, _A, 0), row(3, _C, _W, _A, 0)]  # (C's events up to the cut)
    late = row(_LATE, _C, _W, _A, 0)  # (past the cut: a claim in the game)
    rows += [row(10, v, _S, _C, _CUT) for v in voters]
    rows += [row(11, v, _W, _C, 0) for v in voters]
    rows += [row(12, q, _W, _C, 0) for q in others if q not in voters]  # (heard: moves)
    rows.append(row(12, _A, reason, _B, 1))  # (B's vote on C is its seq 2: capped)
    rows.append(late)  # (delivered late, as in the seed)
    rows.append(row(13, _C, _W, _A, 0))  # (C back: its feed known past the votes)
    withdrawal = row(20, _A, _W, _B, 0)
    return rows, [withdrawal]


def _settle(folds: Folds, players: int, events: Sequence[Event], bound: int | None) -> int:
    """Make final what the held events allow, as ``Finality.advance`` does for B's peer; the
    stable time. ``bound``: the others' terms, or ``None`` for those the events give (what
    is held of each member's feed, what each member other than B announced holding)."""
    tentative = folds.tentative
    final = folds.final
    final.vote_caps = dict(tentative.vote_caps)
    feeds: list[list[SimpleNamespace]] = [[] for _ in range(players)]
    said = [[0] * players for _ in range(players)]
    for event in sorted(events, key=lambda e: (e.seat, e.seq)):
        feeds[event.seat].append(SimpleNamespace(lamport=event.lamport))
        frontier = getattr(event.body, "frontier", ())
        said[event.seat] = [max(a, b) for a, b in zip(said[event.seat], frontier, strict=False)]

    def terms(excluded: dict[int, int], floor: int | None = None) -> int:
        if bound is not None:
            return bound
        members = [q for q in range(players) if q not in excluded]
        out = [feeds[q][-1].lamport if feeds[q] else 0 for q in members]
        for r in members:
            if r != _B:
                out += [
                    feeds[q][h].lamport - 1 for q in members if (h := said[r][q]) < len(feeds[q])
                ]
        return min(out)

    held = cast(Sequence[Sequence[Message]], feeds)
    excluded, stable = settle(final, tentative, held, terms, 0, capped=folds.capped_drops)
    folds.advance(stable, excluded, tentative.gaps)
    return stable


def _counted(folds: Folds) -> set[tuple[int, int]]:
    """The membership events the final fold counted, ``(seat, seq)``."""
    return {(seat, seq) for seat, seq, _ in folds.final.roster.ops}


@pytest.mark.parametrize(("players", "reason"), [(3, _S), (3, _H), (4, _S), (5, _H)])
def test_folds_a_drop_only_a_cap_keeps_undecided_holds_finality_back(
    players: int, reason: DropReason
) -> None:
    """B's peer, fed the events one at a time, keeps the stable time below C's event 4 while
    A's vote caps B's (a vote for silence, or withheld: both withdrawn, §9.2), and ends with
    the final fold a fold from scratch of the same events makes (C out at 3, its event 4
    never counted). Before session 19 the stable time reached 9 before A's withdrawal, C's
    event 4 was final, and the drop decided later left it counted."""
    spec = _spec(players)
    rows, after = _case(players, reason)
    events = proven(_spec(players), _events(players, [*rows, *after]))
    fed = Folds(GameState(spec))
    held: list[Event] = []
    for event in events[:-1]:  # (all but A's withdrawal)
        stable = _settle(fed, players, held, None) if held else 0
        assert fed.add(event, stable) == []
        held.append(event)
    assert not fed.tentative.dropped
    assert fed.capped_drops == {_C: _CUT}
    assert _settle(fed, players, held, None) == _LATE - 1  # (the others' terms: 9)
    assert (_C, _CUT + 1) not in _counted(fed)
    # A's withdrawal: the drop is decided at 10, and made final.
    assert fed.add(events[-1], _LATE - 1) == []
    held.append(events[-1])
    assert fed.tentative.dropped == {_C: _CUT}
    assert fed.capped_drops == {}
    _settle(fed, players, held, _EVER)
    fresh = _folds(spec, events)
    _settle(fresh, players, events, _EVER)
    assert fed.final.dropped == fresh.final.dropped == {_C: _CUT}
    assert _counted(fed) == _counted(fresh)
    assert (_C, _CUT + 1) not in _counted(fresh)


def test_folds_a_proof_vote_cap_holds_nothing_back() -> None:
    """The other side of the rule: A's vote on B on proof of a fork is never withdrawn, and
    B's drop, when it comes, cuts B at or below A's count (every member left votes, the
    lowest count, §9.2), so B's vote past it never counts: that cap lasts, no drop waits on
    it, and C's events past 3 are not held back for it."""
    players = 3
    spec = _spec(players)
    rows, _ = _case(players, _P)
    events = proven(_spec(players), _events(players, rows))
    folds = _folds(spec, events)
    assert not folds.tentative.dropped
    assert folds.tentative.vote_caps[_B][0] == 1
    assert folds.capped_drops == {}
    assert _settle(folds, players, events, None) == 9


def test_late_withdrawals_seed_233_no_event_final_below_the_cut() -> None:
    """The same class in the simulator (``scripts/soak.py --late-withdrawals --seed 233``,
    three players, about 1 s): peer 1 made seat 0's events 32-37 (Lamport 130-135) final
    before the votes it held dropped seat 0 at 31, and its final fold kept 6 moves the others'
    did not. With the rule every peer's final fold is the same."""
    result = run(late_withdrawals(233, players=(3, 3)))
    assert result.violations == []
    finals = {peer.final.digest() for peer in result.peers if peer}
    assert len(finals) == 1
