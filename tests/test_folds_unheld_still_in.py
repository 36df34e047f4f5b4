"""A cut ``Unheld`` offers stands only where no member still in *with the cut imposed*
announced holding the member's events past it (``folds.cut_stands``, docs/protocol.md §9.2,
§13).

Soak seed 14017 (six players, quick timers; ``scripts/soak.py --games 1 --seed 14017
--players 2-6``): seat 2 crashed, a partition {0,2,3,5} | {1,4}. Everyone voted seat 2 out at
12, seats 1 and 4 (cut off) voted the others out, and seats 0, 3 and 5 voted seat 4 out at 16
and seat 1 at 15, then withdrew once they heard them again. The fold with no cut drops seats 2
and 4: seat 1's drop at 15 does not stand without its events past 15 (its vote on seat 2 among
them, §9.2). Seat 4 held seat 1's events past 15 and said so, but seat 4 is out in that fold,
and seats 0, 3 and 5 had frozen what they announce of seat 1 at 15: so ``Unheld`` offered seat
1's cut at 15, and the fold with it imposed dropped seat 1 and kept seat 4 in. Peers 0, 3, 4
and 5 imposed it and made final, up to Lamport 265, seat 1 out at 231; peer 1 held seat 0's
next event (Lamport 299, after its withdrawal), which announces seat 1's events past 15, was
offered no cut, and made final seat 4 out at 228. Two groups of peers ended in different
rounds, the audit of every log with the second.

Each case is folded as peers held it, by hand on :class:`Folds`, and every view must reach
the same drops, in its tentative fold and in its final fold once everything is final; the
seed itself is played once, at the end (a few seconds).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason, Join
from p2p_nertz.protocol.envelope import KIND_DROP, KIND_JOIN
from p2p_nertz.protocol.folds import Unheld, cut_stands
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Event, GameState
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, SimConfig, run
from tests.proof_helpers import proven
from tests.test_folds_dropped_past_cut import _final_drops, _folds

_S, _W = DropReason.SILENT, DropReason.WITHDRAW

#: (Lamport, seat, seq, reason, target, count, frontier): seed 14017's drop events up to
#: Lamport 273, as every peer's log holds them.
_Row = tuple[int, int, int, DropReason, int, int, tuple[int, ...]]
_SEED_14017: list[_Row] = [
    (191, 1, 17, _S, 2, 12, (15, 16, 12, 16, 17, 14)),
    (192, 4, 18, _S, 2, 12, (15, 16, 12, 16, 17, 14)),
    (202, 1, 18, _S, 5, 14, (15, 17, 12, 16, 18, 14)),
    (204, 1, 19, _S, 3, 16, (15, 18, 12, 16, 18, 14)),
    (206, 4, 19, _S, 3, 16, (15, 19, 12, 16, 18, 14)),
    (206, 5, 15, _S, 2, 12, (23, 15, 12, 22, 16, 14)),
    (207, 0, 24, _S, 2, 12, (23, 15, 12, 23, 16, 14)),
    (207, 1, 20, _S, 0, 15, (15, 19, 12, 16, 19, 14)),
    (207, 3, 24, _S, 2, 12, (23, 15, 12, 23, 16, 14)),
    (207, 4, 20, _S, 5, 14, (15, 19, 12, 16, 19, 14)),
    (208, 4, 21, _S, 0, 15, (15, 19, 12, 16, 20, 14)),
    (226, 1, 22, _W, 3, 0, (15, 21, 12, 16, 21, 14)),
    (226, 3, 29, _S, 4, 16, (24, 15, 12, 28, 16, 16)),
    (226, 4, 22, _W, 3, 0, (15, 21, 12, 16, 21, 14)),
    (227, 0, 25, _S, 4, 16, (24, 15, 12, 29, 16, 16)),
    (228, 3, 30, _S, 1, 15, (24, 15, 12, 29, 16, 16)),
    (228, 5, 17, _S, 4, 16, (24, 15, 12, 29, 16, 16)),
    (229, 0, 26, _S, 1, 15, (25, 15, 12, 29, 16, 17)),
    (231, 5, 18, _S, 1, 15, (26, 15, 12, 30, 16, 17)),
    (263, 0, 27, _W, 4, 0, (26, 15, 12, 30, 16, 18)),
    (263, 3, 31, _W, 1, 0, (26, 15, 12, 30, 16, 18)),
    (263, 5, 19, _W, 1, 0, (26, 15, 12, 30, 16, 18)),
    (264, 0, 28, _W, 1, 0, (27, 15, 12, 30, 16, 18)),
    (265, 1, 23, _W, 5, 0, (15, 22, 12, 16, 21, 14)),
    (266, 1, 24, _W, 0, 0, (15, 23, 12, 16, 21, 14)),
    (266, 3, 32, _W, 4, 0, (26, 15, 12, 31, 16, 19)),
    (266, 4, 23, _W, 5, 0, (15, 23, 12, 16, 22, 14)),
    (266, 5, 20, _W, 4, 0, (26, 15, 12, 30, 16, 19)),
    (273, 4, 24, _W, 0, 0, (15, 24, 12, 16, 23, 14)),
]

#: Seat 0's event 29 (Lamport 299, a move in the game; here a withdrawal of no vote), the
#: first of its events to announce seat 1's past 15, after its withdrawal: peer 1 held it when
#: it made Lamport 265 final, peers 0, 3, 4 and 5 did not.
_SEAT_0_AFTER: _Row = (299, 0, 29, _W, 2, 0, (28, 24, 12, 32, 25, 21))


def _spec(players: int) -> GameSpec:
    ids = [Identity.generate(bytes([i + 1]) * 32).peer_id for i in range(players)]
    return GameSpec.create([(pid, f"p{i}") for i, pid in enumerate(ids)], Rules(), b"stillin")


def _events(players: int, rows: Sequence[_Row]) -> list[Event]:
    events = [Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=(0,) * players)) for s in range(players)]
    for lamport, seat, seq, reason, target, count, frontier in rows:
        body = Drop(frontier, target, count, reason)
        events.append(Event(seat, seq, lamport, KIND_DROP, body, bytes([seat, seq]) * 8))
    return events


def _drops(spec: GameSpec, events: Sequence[Event]) -> dict[int, int]:
    """The drops of the tentative fold holding ``events``, checked against the final fold once
    every event is final (as ``Chains.advance`` makes it: the caps of the tentative fold, the
    members ``settle`` excludes). The feeds' events between those given are filler (a move in
    the game), timed as the next event given, and so are those past them up to what anyone
    announced."""
    feeds: list[list[SimpleNamespace]] = [[] for _ in range(spec.seats)]
    for event in sorted(events, key=lambda e: (e.seat, e.seq)):
        feed = feeds[event.seat]
        while len(feed) < event.seq:
            feed.append(SimpleNamespace(lamport=event.lamport))
    for q, feed in enumerate(feeds):  # (and up to what anyone announced of it)
        most = max(getattr(e.body, "frontier", (0,) * spec.seats)[q] for e in events)
        while len(feed) < most:
            feed.append(SimpleNamespace(lamport=feed[-1].lamport))
    return _final_drops(spec, events, feeds)


def test_seed_14017_every_view_drops_seats_2_and_4() -> None:
    """Peers 0, 3, 4 and 5 (the drop events alone, seat 0's event 29 not yet held) and peer 1
    (with it) reach the same drops: seat 2 at 12 and seat 4 at 16, as the audit of every log
    does. Seat 1's cut at 15 is offered to the first view and does not stand: seat 4, in the
    game once seat 1 is cut, announced holding seat 1's events past 15 (its event 22, at
    Lamport 226, announces 21 of them)."""
    spec = _spec(6)
    before = _events(6, _SEED_14017)
    after = _events(6, [*_SEED_14017, _SEAT_0_AFTER])
    assert _drops(spec, after) == {2: 12, 4: 16}
    assert _drops(spec, before) == {2: 12, 4: 16}


def test_seed_14017_the_cut_offered_keeps_in_a_member_that_announced_past_it() -> None:
    """The offer and the trial themselves: seat 1's cut at 15 is offered (the fold without a
    cut drops seat 4, whose announcement is then not asked), the fold with it drops seat 1 there
    (``cut_made``), and it does not stand: that fold keeps seat 4 in."""
    spec = _spec(6)
    folds = _folds(spec, _events(6, _SEED_14017))
    tentative = folds.tentative
    assert folds.unheld.cuts(tentative, folds.final, {}, tentative.dropped.keys()) == [(1, 15)]
    trial = folds._fold({1: 15}, {}, {}, imposed={1: 15})
    assert trial.dropped == {2: 12, 1: 15}
    assert folds.unheld.held_past(trial, folds.final, 1, 15)
    assert not cut_stands(trial, folds.final, folds.unheld, 1, 15)


def _unheld(players: int, events: Sequence[Event]) -> Unheld:
    unheld = Unheld(players)
    for event in events:
        unheld.note(event)
    return unheld


@pytest.mark.parametrize("players", [3, 4, 5])
def test_folds_a_cut_stands_unless_a_member_still_in_announced_past_it(players: int) -> None:
    """Seat 0 voted out at 2 by every other member, seat 0's event 3 held by seat 1 alone:
    the cut stands while seat 1's announcement of it is in no event read, or seat 1 is out
    too; announced by seat 1, still in, it does not (whoever of the others froze at 2)."""
    spec = _spec(players)
    zeros = (0,) * players
    votes = [
        Event(v, 2, 10 + v, KIND_DROP, Drop((2, *zeros[1:]), 0, 2, _S), bytes([v, 2]) * 8)
        for v in range(1, players)
    ]
    fold = GameState(spec)
    joins = [Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=zeros)) for s in range(players)]
    for event in proven(fold.spec, sorted([*joins, *votes], key=lambda e: e.key)):
        fold.apply(event)
    assert fold.dropped == {0: 2}
    silent = _unheld(players, votes)
    assert cut_stands(fold, GameState(spec), silent, 0, 2)
    frontier = (3, *zeros[1:])
    announced = Event(1, 3, 20, KIND_DROP, Drop(frontier, 0, 0, _W), bytes([1, 3]) * 8)
    loud = _unheld(players, [*votes, announced])
    assert not cut_stands(fold, GameState(spec), loud, 0, 2)
    # Seat 1 out as well (in the fold, or already in the final fold): its word asks nothing.
    final = GameState(spec)
    final.roster.remove(1, 2, left=False)
    assert cut_stands(fold, final, loud, 0, 2)
    assert not loud.held_past(fold, GameState(spec), 0, 3)  # (announced up to 3: not past it)


@pytest.mark.parametrize("players", [3, 4])
def test_folds_a_cut_readmitted_from_stands_whoever_holds_the_feed_again(players: int) -> None:
    """Seat 0 cut at 2 and readmitted from its rejoin request (5): the others hold and
    announce its feed again past the request, which says nothing of its gap, and the cut
    stands (soak seed 8227). A gap from another cut is no such readmission."""
    spec = _spec(players)
    zeros = (0,) * players
    announced = Event(1, 3, 20, KIND_DROP, Drop((6, *zeros[1:]), 0, 0, _W), bytes([1, 3]) * 8)
    loud = _unheld(players, [announced])
    for cut, expected in ((2, True), (1, False)):
        fold = GameState(spec)
        fold.roster.remove(0, cut, left=False)
        fold.roster.rejoin(Drop(zeros, 0, 5, DropReason.REJOIN), over=False)
        assert fold.roster.readmit(30) == [0]
        assert fold.gaps == {0: ((cut, 5),)}
        assert cut_stands(fold, GameState(spec), loud, 0, 2) is expected


def test_soak_seed_14017_ends_alike_for_every_peer() -> None:
    """The seed itself (six players, quick timers, about 6 s of CPU): every invariant holds,
    the split check among them, and every peer ends the game with the same drops."""
    result = run(SimConfig.soak(14017, players=(2, 6), cheats=True, long=True, peer=QUICK_TIMERS))
    assert result.spec.seats == 6
    assert result.violations == []
    assert result.finished
    drops = {str(p.final.dropped) for p in result.peers if p is not None}
    assert len(drops) == 1
