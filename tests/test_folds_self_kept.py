"""A member kept in by its own votes alone: its votes signed past the count of a standing vote
against it never count, but they cap the votes that would drop it; the cut at that count is
tried whoever announced holding its events past it (docs/protocol.md §9.2, *a member kept in
by its own votes*, session 40; ``folds.self_kept_cuts``, ``folds.frozen_cut``).

The lie fuzzer's ``--two-liars --back readmit`` seed 13 (three players; honest seat 2, liars
``vote_self`` at seat 1 and ``seq_reuse`` at seat 0): seat 2, live, dropped seat 0 at 13 and
made it final; seat 1 then voted seat 0 out again, announcing seat 0's event 14. Folded at
once (the audit of seat 2's own log, a restore from it), seat 0's votes on seats 1 and 2, past
13, capped the votes against it and nobody was dropped, and the cut at 13 was refused because
seat 1, still in, had announced holding seat 0's event 14: the audit of the honest member's own
log named it for the moves of a round its fold never reached.
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason, Join, Leave
from p2p_nertz.protocol.envelope import KIND_DROP, KIND_JOIN, Kind
from p2p_nertz.protocol.folds import Folds, frozen_cut, self_kept_cuts
from p2p_nertz.protocol.state import Event, GameState
from p2p_nertz.sim.liar_games import game, simulate
from tests.test_folds_dropped_past_cut import _spec
from tests.test_sim_liars_back import _folded_whole

_S, _W = DropReason.SILENT, DropReason.WITHDRAW
KIND_LEAVE = Kind.LEAVE

#: Seed 13's membership events that matter, as signed (seat, seq, Lamport, frontier, target,
#: count, reason); the other events (moves, beats, the liars' votes on themselves) left out:
#: the fold reads seqs, counts and frontiers, not the events between them.
_SEED_13 = (
    (1, 8, 49, (7, 7, 7), 0, 7, _S),  # seat 1 votes seat 0 out, counting 7
    (1, 9, 50, (7, 8, 7), 2, 7, _S),  # and seat 2
    (2, 15, 57, (13, 6, 14), 1, 6, _S),  # seat 2 votes seat 1 out, counting 6
    (0, 16, 60, (15, 6, 13), 1, 6, _S),  # seat 0 too (past the count 7 on it)
    (2, 16, 64, (13, 6, 15), 0, 13, _S),  # seat 2 votes seat 0 out, counting 13
    (0, 17, 67, (16, 6, 13), 2, 13, _S),  # seat 0 votes seat 2 out (past 13)
    (1, 11, 76, (7, 10, 7), 2, 0, _W),  # seat 1 withdraws its vote on seat 2
    (2, 18, 83, (13, 6, 17), 1, 0, _W),  # seat 2 withdraws its vote on seat 1
    (1, 14, 105, (14, 13, 18), 0, 14, _S),  # seat 1 votes seat 0 out again, holding its 14
)


#: A membership event as signed: (seat, seq, Lamport, frontier, target, count, reason); a
#: ``leave`` has target, count and reason ``None``.
Row = tuple[int, int, int, tuple[int, ...], int | None, int | None, DropReason | None]


def _events(rows: tuple[Row, ...], seats: int = 3) -> list[Event]:
    """Every seat's ``join`` (seq 1) and the ``rows``, in the game's order."""
    joins = [Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=(0,) * seats)) for s in range(seats)]
    drops = [
        Event(seat, seq, lamport, KIND_LEAVE, Leave(frontier))
        if reason is None or target is None or count is None
        else Event(seat, seq, lamport, KIND_DROP, Drop(frontier, target, count, reason))
        for seat, seq, lamport, frontier, target, count, reason in rows
    ]
    return sorted(joins + drops, key=lambda e: e.key)


def _tentative(events: list[Event]) -> GameState:
    folds = Folds(GameState(_spec(3)))
    for event in events:
        folds.add(event, 0)
    return folds.tentative


def test_folds_a_member_kept_in_by_its_own_votes_is_cut_as_the_prefix_cut_it() -> None:
    """Every view that holds seat 2's vote on seat 0 and the withdrawals after it drops seat
    0 at 13, and the view that holds every event (the last vote, whose voter announced seat
    0's event 14, among them) drops it there too: no later event takes back the drop."""
    events = _events(_SEED_13)
    views = [dict(_tentative(events[:held]).dropped) for held in range(3, len(events) + 1)]
    first = next(i for i, view in enumerate(views) if 0 in view)
    assert views[first] == {0: 13}
    assert all(view == {0: 13} for view in views[first:])


def test_folds_the_cut_is_offered_at_each_standing_count_and_kept_where_the_fold_makes_it() -> None:
    """Of the fold that keeps seat 0 in (its votes capping the others'), seat 0's cuts are
    offered at the counts of the standing votes against it below its last vote on a member
    the fold caps (7, seat 1's first vote, and 13, seat 2's); the fold with 13 imposed drops
    it there, a vote still frozen at 13 (seat 2's): kept. The fold with 7 does not drop it
    at 7: not kept."""
    events = _events(_SEED_13)
    kept_in = _uncut(events)
    assert kept_in.dropped == {}
    offers = self_kept_cuts(kept_in, kept_in, {})
    assert (0, 7) in offers and (0, 13) in offers
    assert frozen_cut(_uncut(events, {0: 13}), 0, 13)
    assert not frozen_cut(_uncut(events, {0: 7}), 0, 7)
    assert self_kept_cuts(kept_in, kept_in, {0: 13}) == [c for c in offers if c[0] != 0]


def _uncut(events: list[Event], cuts: dict[int, int] | None = None) -> GameState:
    """The fold of ``events`` to its fixed point with ``cuts`` imposed (none: the fixed
    point the offers are read from), no other cut tried."""
    folds = Folds(GameState(_spec(3)))
    for event in events:
        folds.add(event, 0)
    imposed = cuts or {}
    return folds._fold(imposed, {}, {}, imposed=imposed)  # (the rounds alone: no trial)


@pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)
def test_liars_an_honest_members_own_log_folds_as_it_played() -> None:
    """Seed 13 played (~5 s of CPU): no invariant broken, the audit of honest seat 2's own
    log names nobody honest, and seat 2's events folded whole drop whom it dropped live."""
    config, liars = game(13, two=True, back="readmit", players=(3, 3))
    run = simulate(config, liars)
    assert run.result.violations == []
    honest = run.result.peers[2]
    assert honest is not None and 0 in honest.final.dropped
    assert _folded_whole(honest).dropped == honest.final.dropped
