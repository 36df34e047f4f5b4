"""A member the events readmit from a cut that the fold never made is tried at that cut
(``folds.readmitted_cuts``, docs/protocol.md §9.2, §9.8, §13).

Soak seed 16034 (``--players 2-6``, four players, quick timers): seat 0 dropped at 12 and
readmitted from its request (16) at round 2's start; in round 1 seat 1 voted seat 3 out (at
72, withdrawn, then at 74) and seat 3 voted seat 1 out at its seq 75: two votes that cap each
other (each signed past the count of the other's), so the fixed point without a cut kept
both members in. The peers, while nobody still in announced seat 3's events past 74, were
offered that cut by ``Unheld``, imposed it, and readmitted seat 3 at its request (76): every
peer ends with gaps ``{0: (12, 16), 3: (74, 76)}``. The members then announced seat 3's feed
up to its request and on, after the readmission, and a fold of every event at once (the audit
of every log, and of each log alone) was offered no cut: it kept both caps, never dropped
seat 3, refused its request as a second ``join``, never ended round 1, and reported honest
members' moves as ``deck_mismatch`` and ``illegal_move``.

Seat 3 was asleep, and its vote at 75 was the one it signed on waking, before it had read
what waited for it; since session 22 a waker votes nobody out before it has listened
(docs/protocol.md §9.2), the seed readmits seat 3 at its request (75) without the caps, and
the tests on folds built by hand below keep the shape.
"""

from __future__ import annotations

from collections.abc import Callable

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.envelope import KIND_DROP
from p2p_nertz.protocol.folds import Trial, Unheld, came_back, impose_cuts, readmitted_cuts
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Event, GameState
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, SimConfig, run
from p2p_nertz.sim.invariants import audit_alone
from p2p_nertz.sim.logfiles import log_files
from tests.peer_helpers import restored as restored_peer


def _spec(players: int) -> GameSpec:
    ids = [Identity.generate(bytes([i + 1]) * 32).peer_id for i in range(players)]
    return GameSpec.create([(pid, f"p{i}") for i, pid in enumerate(ids)], Rules(), b"readmit")


def _drop(players: int, voter: int, seq: int, target: int, *vote: int | DropReason) -> Event:
    last, why = vote
    assert isinstance(last, int) and isinstance(why, DropReason)
    body = Drop(frontier=(0,) * players, seat=target, last_seq=last, reason=why)
    return Event(voter, seq, 10 * seq + voter, KIND_DROP, body)


def _unheld(players: int, events: list[Event]) -> Unheld:
    unheld = Unheld(players)
    for event in events:
        unheld.note(event)
    return unheld


def _votes(players: int) -> list[Event]:
    """The last seat voted out at 72 and at 74 by two members, and readmitted at its
    request 76 by the same two."""
    last = players - 1
    return [
        _drop(players, 0, 5, last, 72, DropReason.SILENT),
        _drop(players, 1, 6, last, 74, DropReason.SILENT),
        _drop(players, 0, 7, last, 74, DropReason.SILENT),
        _drop(players, 0, 8, last, 76, DropReason.REJOIN),
        _drop(players, 1, 9, last, 76, DropReason.REJOIN),
    ]


def test_folds_readmitted_cuts_offers_each_count_below_an_unmet_request() -> None:
    for players in (3, 4):
        last = players - 1
        unheld = _unheld(players, _votes(players))
        state = GameState(_spec(players))
        # The last seat still in, with no gap: each vote's count below its request, the
        # highest first (a drop for silence cuts at the highest count).
        assert readmitted_cuts(state, state, unheld, {}) == [(last, 74), (last, 72)]
        assert readmitted_cuts(state, state, unheld, {last: 74}) == []  # (imposed already)
        # Dropped in the fold (the readmission pending: the fold's own cut), nothing.
        dropped = GameState(_spec(players))
        dropped.roster.dropped[last] = 74
        assert readmitted_cuts(dropped, dropped, unheld, {}) == []
        assert readmitted_cuts(state, dropped, unheld, {}) == []  # (in the final fold)
        # Readmitted at that request already (a gap ending there), in the fold or the final
        # one: nothing.
        back = GameState(_spec(players))
        back.roster.gaps[last] = ((74, 76),)
        assert readmitted_cuts(back, state, unheld, {}) == []
        assert readmitted_cuts(state, back, unheld, {}) == []
        # No readmission read: nothing, whatever the votes.
        assert readmitted_cuts(state, state, _unheld(players, _votes(players)[:3]), {}) == []


def test_folds_readmitted_cuts_not_below_an_earlier_readmission() -> None:
    """A member readmitted before (gap 9 to 14) and voted out again: only the counts since
    its last request are offered for the next one."""
    for players in (3, 4):
        last = players - 1
        events = [
            _drop(players, 0, 2, last, 9, DropReason.SILENT),
            _drop(players, 0, 3, last, 14, DropReason.REJOIN),
            *_votes(players),
        ]
        state = GameState(_spec(players))
        state.roster.gaps[last] = ((9, 14),)
        assert readmitted_cuts(state, state, _unheld(players, events), {}) == [
            (last, 74),
            (last, 72),
        ]


def _readmitting(
    players: int, last: int, tried: list[dict[int, int]]
) -> Callable[[dict[int, int]], Trial]:
    """A stand-in for the fold with cuts imposed: it readmits ``last`` from 74 (at 76) where
    that cut is imposed, and drops no one otherwise; notes each trial in ``tried``."""

    def fold_with(cuts: dict[int, int]) -> Trial:
        tried.append(dict(cuts))
        fold = GameState(_spec(players))
        if cuts.get(last) == 74:
            fold.roster.gaps[last] = ((74, 76),)
        return Trial(f"with {cuts}", fold, Unheld(players))

    return fold_with


def test_impose_cuts_keeps_a_readmitted_cut_only_where_the_fold_readmits_from_it() -> None:
    """``impose_cuts`` tries the readmitted cuts after ``Unheld``'s and the lifted ones, and
    keeps one only where the fold with it imposed readmits the member from there
    (``came_back``): at 72 the votes drop it at 74, not 72; at 74 it is back from 74."""
    for players in (3, 4):
        last = players - 1
        unheld = _unheld(players, _votes(players))
        start_fold = GameState(_spec(players))
        tried: list[dict[int, int]] = []
        fold_with = _readmitting(players, last, tried)
        kept = impose_cuts(fold_with, Trial("start", start_fold, unheld), ())
        assert kept.result == f"with { {last: 74} }"
        assert came_back(kept.fold, last, 74) and not came_back(kept.fold, last, 72)
        assert tried == [{last: 74}]  # (the highest count first; none after it is kept)


def test_soak_seed_16034_every_audit_reaches_the_peers_readmissions() -> None:
    """The seed itself: no violation; every peer, the audit of every log and the audit of
    each log alone end with seat 0 back from 12 at 17 and seat 3, asleep past the drop timer,
    out at 81, and no finding. (Until session 30 seat 0 was back at 16 and seat 3 back from 74
    at 75, no one out: seat 3, restarted from its log before it sleeps, now waits for a
    member's word before it signs, docs/protocol.md §9.6, and the game's timing moved; at 76
    until session 22: seat 3 signed a vote for silence and its withdrawal on waking, which a
    waker no longer does, §9.2.)"""
    result = run(SimConfig.soak(16034, players=(2, 6), peer=QUICK_TIMERS))
    assert result.spec.seats == 4
    assert result.violations == []  # (sim.run checks the invariants, the audit's among them)
    want = ({3: 81}, {0: ((12, 17),)})
    for seat, peer in enumerate(result.peers):
        assert peer is not None
        assert (peer.final.dropped, peer.final.gaps) == want, seat
    every = result.audit  # (the audit of every log the invariants made: audit_logs)
    assert every is not None
    assert every.violations == ()
    assert (every.state.dropped, every.state.gaps) == want
    files = log_files(result)
    for seat in range(len(files)):
        alone = audit_alone(result, seat, files, deep=True)
        assert alone.violations == (), seat
        assert (alone.state.dropped, alone.state.gaps) == want, seat
        restored = restored_peer(result, seat)
        assert (restored.final.dropped, restored.final.gaps) == want, seat
