"""A withdrawal signed after the drop it would have prevented (docs/protocol.md §9.2, §13:
*A withdrawal signed after the drop*).

A member of split15's class, closed in session 15: what decided a drop at Lamport ``L`` was
read from every event held, whenever signed. The caps (``GameState.standing_caps``) stand
only while a vote against the member stands. A voter that hears the member again before it
holds the votes that completed the drop withdraws, after ``L`` in the order: in every fold
that held that withdrawal, the caps that decided the drop were gone. A peer that made the
drop final before the withdrawal reached it never takes it back; a peer that held the
withdrawals in time made another game.

Built by hand on :class:`Folds`, as tests/test_folds_unheld_still_in.py does: seat 0
(``X``), cut off, votes the last seat (``Z``) out past the count the others' votes on it will
quote (3); with its vote, ``Z`` is dropped at Lamport 12, and ``X``'s drop (at 20 to 23, by the
table's size) does not stand without it (§9.2, *a drop is what the votes decide without the
member's events past its cut*). The votes on ``X`` cap that vote, so the fold of the events up
to the drop drops ``X`` and never ``Z``; ``Z`` (alive, and one of ``X``'s voters) makes that
final. Then every other voter withdraws, at 30 and later. The rule now (§9.2, *a withdrawal
after the drop lifts no cap that decided it*): the membership events before a withdrawal of
a vote that capped ``X`` (``Roster.before_lift``) drop ``X`` at 3, so a peer could make that
final without the withdrawal; that cut is offered (``folds.lifted_cuts``) and kept, and every
fold drops ``X`` at 3.
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
from p2p_nertz.protocol.state import Event

_S, _W = DropReason.SILENT, DropReason.WITHDRAW
_CUT = 3  # X's events the others hold (and its cut)


def _case(players: int) -> tuple[list[_Row], list[_Row]]:
    """The drop events up to the drop of X (and Z's vote), and the withdrawals after it."""
    x, z = 0, players - 1
    voters = list(range(1, players - 1))  # (and Z)
    on_z = voters[: (players + 1) // 2 - 1]  # with X's vote, a strict majority of every seat
    seqs = [1] * players
    rows: list[_Row] = []

    def row(lamport: int, seat: int, reason: DropReason, target: int, count: int) -> None:
        seqs[seat] += 1
        frontier = tuple(_CUT if q == x else seqs[q] for q in range(players))
        rows.append((lamport, seat, seqs[seat], reason, target, count, frontier))

    row(2, x, _W, z, 0)  # (X's events up to its cut: moves in the game)
    row(3, x, _W, z, 0)
    row(5, z, _S, x, _CUT)  # (Z's, within the count the votes on Z quote)
    for i, v in enumerate(on_z):
        row(10 + i, v, _S, z, 2)
    row(12, x, _S, z, 2)  # past X's cut: completes Z's drop
    for i, v in enumerate(voters):
        row(20 + i, v, _S, x, _CUT)
    late: list[_Row] = []
    for i, v in enumerate(voters):
        seqs[v] += 1
        frontier = tuple(_CUT + 1 if q == x else seqs[q] for q in range(players))
        late.append((30 + i, v, seqs[v], _W, x, 0, frontier))
    return sorted(rows), late


def _settle(folds: Folds, spec_seats: int, events: Sequence[Event], bound: int) -> int:
    """Make final what ``bound`` allows, as ``Chains.advance`` does; the stable time."""
    tentative = folds.tentative
    final = folds.final
    final.vote_caps = dict(tentative.vote_caps)
    feeds: list[list[SimpleNamespace]] = [[] for _ in range(spec_seats)]
    for event in sorted(events, key=lambda e: (e.seat, e.seq)):
        feed = feeds[event.seat]
        while len(feed) < event.seq:
            feed.append(SimpleNamespace(lamport=event.lamport))
    held = cast(Sequence[Sequence[Message]], feeds)
    excluded, stable = settle(final, tentative, held, lambda _ex, _floor=None: bound, 0)
    folds.advance(stable, excluded, tentative.gaps)
    return stable


@pytest.mark.parametrize("players", [3, 5, 7])
def test_folds_a_withdrawal_after_the_drop_parts_no_two_peers(players: int) -> None:
    """Z's peer makes final everything up to 25 (X dropped at 22, at its cut), then holds the
    withdrawals; another peer holds them all before anything is final. Both end with the same
    drops."""
    spec = _spec(players)
    rows, late = _case(players)
    early = _events(players, rows)
    every = _events(players, [*rows, *late])
    # Z's peer: the drop of X is final before any withdrawal arrives.
    seen = _folds(spec, early)
    assert seen.tentative.dropped == {0: _CUT}
    assert _settle(seen, players, early, 25) == 25
    assert seen.final.dropped == {0: _CUT}
    for event in every[len(early) :]:
        assert event.lamport > 25
        assert seen.add(event, 25) == []
    _settle(seen, players, every, _EVER)
    # A peer that held the withdrawals before anything was final.
    late_peer = _folds(spec, every)
    _settle(late_peer, players, every, _EVER)
    assert late_peer.final.dropped == seen.final.dropped


@pytest.mark.parametrize("players", [3, 5, 7])
def test_folds_a_withdrawal_after_the_drop_lifts_no_cap_before_it(players: int) -> None:
    """The diagnosis, turned round: the fold of the events up to the drop and the fold that
    also holds the withdrawals, all signed after the drop, both drop X at its cut at the same
    time and never Z (before session 15's rule the second dropped Z at 12 with X's vote, the
    caps lifted by the withdrawals, and kept X in): the events before the first withdrawal
    drop X at 3 (``Roster.before_lift``), and that cut is kept."""
    spec = _spec(players)
    rows, late = _case(players)
    early = _folds(spec, _events(players, rows)).tentative
    assert early.dropped == {0: _CUT}
    every = _folds(spec, _events(players, [*rows, *late])).tentative
    assert every.dropped == {0: _CUT}
    assert every.drop_at == early.drop_at
    assert min(row[0] for row in late) > early.drop_at[0]
    assert every.roster.before_lift(0) is None  # (X is out: no lift noted on it)


@pytest.mark.parametrize("players", [3, 5, 7])
def test_folds_a_withdrawal_before_any_drop_still_lifts_the_cap(players: int) -> None:
    """The other side of the rule: seat 1 votes X out at 14 (counting 3) and withdraws at 16,
    and no other vote on X is cast. The events before the withdrawal drop nobody (one vote),
    so no peer made anything final on that cap: the withdrawal lifts it as before, X's vote
    at 12 counts there and drops Z at 12, and X stays in (the seed 14017 class: a cap lifted
    by a withdrawal that came before any drop it decided)."""
    spec = _spec(players)
    rows, _ = _case(players)
    kept = [row for row in rows if not (row[4] == 0 and row[3] is _S)]  # (no vote on X)
    seq = max(row[2] for row in kept if row[1] == 1)
    frontier = tuple(_CUT + 1 if q == 0 else 9 for q in range(players))
    vote: _Row = (14, 1, seq + 1, _S, 0, _CUT, frontier)
    withdrawal: _Row = (16, 1, seq + 2, _W, 0, 0, frontier)
    events = _events(players, [*kept, vote, withdrawal])
    tentative = _folds(spec, events).tentative
    z = players - 1
    assert tentative.dropped == {z: 2}
    assert tentative.drop_at[z] == 12
    assert tentative.roster.before_lift(0) is None
    _settle(_folds(spec, events), players, events, _EVER)


@pytest.mark.parametrize("players", [5, 7])
def test_folds_a_drop_completed_after_the_first_withdrawal_is_kept(players: int) -> None:
    """The first voter withdraws (at 19) before the others' votes on X (20 and later) drop
    it: their votes still cap X's vote, so X's drop at its cut is what the events before the
    next withdrawal decide, and every fold keeps it."""
    spec = _spec(players)
    rows, late = _case(players)
    voter = late[0][1]
    vote = next(row for row in rows if row[1] == voter and row[4] == 0 and row[3] is _S)
    rows = [row for row in rows if row != vote]
    moved = [(18, *vote[1:]), (19, *late[0][1:])]
    early = _folds(spec, _events(players, [*rows, *moved])).tentative
    assert early.dropped == {0: _CUT}
    every = _folds(spec, _events(players, [*rows, *moved, *late[1:]])).tentative
    assert every.dropped == {0: _CUT}
    assert every.drop_at == early.drop_at
