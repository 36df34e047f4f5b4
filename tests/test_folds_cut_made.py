"""A cut ``Unheld`` offers is made by a fold that drops the member there, even if the same
events readmit it later (``folds.cut_made``, docs/protocol.md §9.2, §9.8).

Soak seed 8227 (``--players 2-4``, three players, quick timers): seat 1, cut off and
restarted, was voted out at 93 by the others while its own votes past 93 (one of them on
seat 0, asleep) reached nobody; the peers imposed that cut (``Folds._cut_unheld``) while
seat 1 was out, then readmitted it from its rejoin request (seq 99). A fold of every event at
once (the audit of every log, each peer restored from its log) met the readmission in the
trial too, read "seat 1 is not dropped" as "the cut was not made", kept seat 1's votes past
93, dropped seat 0 with them, and refused seat 1's rejoin request as a second ``join``. The
peers' live folds were right: the member was cut there, and back in the game since.
"""

from __future__ import annotations

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.folds import cut_made
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import GameState
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, SimConfig, run
from tests.peer_helpers import restored as restored_peer


def _spec(players: int) -> GameSpec:
    ids = [Identity.generate(bytes([i + 1]) * 32).peer_id for i in range(players)]
    return GameSpec.create([(pid, f"p{i}") for i, pid in enumerate(ids)], Rules(), b"cutmade")


def _vote(players: int, target: int, last_seq: int, reason: DropReason) -> Drop:
    return Drop(frontier=(0,) * players, seat=target, last_seq=last_seq, reason=reason)


def _dropped_at_9(players: int) -> GameState:
    """Seat 2 voted out at 9 by every other member."""
    state = GameState(_spec(players))
    roster = state.roster
    for voter in range(2):
        roster.vote(voter, 10 + voter, _vote(players, 2, 9, DropReason.SILENT))
    for voter in range(3, players):
        roster.vote(voter, 10 + voter, _vote(players, 2, 9, DropReason.SILENT))
    assert roster.settle(100) == [(2, 9)]
    return state


def test_folds_cut_made_by_a_drop_there_and_no_other() -> None:
    for players in (3, 4):
        state = _dropped_at_9(players)
        assert cut_made(state, 2, 9)
        assert not cut_made(state, 2, 8) and not cut_made(state, 2, 10)
        assert not cut_made(state, 1, 9)  # (another member, not dropped)
        assert not cut_made(GameState(_spec(players)), 2, 9)  # (no drop at all)


def test_folds_cut_made_by_a_drop_there_that_the_same_events_readmit() -> None:
    """Readmitted from its rejoin request (14), the member was still cut at 9; its request
    is no cut; and dropped again later (at 20), both cuts were made."""
    for players in (3, 4):
        state = _dropped_at_9(players)
        roster = state.roster
        roster.rejoin(_vote(players, 2, 14, DropReason.REJOIN), over=False)
        assert roster.readmit(200) == [2]
        assert 2 not in state.dropped and state.gaps == {2: ((9, 14),)}
        assert cut_made(state, 2, 9)
        assert not cut_made(state, 2, 14) and not cut_made(state, 2, 8)
        voters = [q for q in range(players) if q != 2]
        for i, voter in enumerate(voters):
            roster.vote(voter, 30 + i, _vote(players, 2, 20, DropReason.SILENT))
        assert roster.settle(300) == [(2, 20)]
        assert cut_made(state, 2, 9) and cut_made(state, 2, 20)


def test_soak_seed_8227_every_fold_at_once_keeps_the_cut_of_a_member_readmitted() -> None:
    """The seed itself: no violation; the audit of every log and every peer restored from its
    log reach the live peers' drops and readmissions (seat 1 cut at 93, back from 99; the
    cheater, seat 2, dropped at its fork at 112), not seat 0 dropped at 84. (Seat 2 was dropped
    at 109 until session 22: the member asleep here, seat 0, no longer votes on waking,
    docs/protocol.md §9.2, and the game's timing moved; at 108, below its fork at 110, until
    session 30: seat 1, restarted from its log, now waits for a member's word before it signs,
    §9.6, and the timing moved again.)"""
    result = run(SimConfig.soak(8227, players=(2, 4), peer=QUICK_TIMERS))
    assert result.spec.seats == 3
    assert result.violations == []  # (sim.run checks the invariants, the audit's among them)
    assert result.audit is not None  # (the audit of every log the invariants made: audit_logs)
    audited = result.audit.state
    assert (audited.dropped, audited.gaps) == ({2: 112}, {1: ((93, 99),)})
    for seat, peer in enumerate(result.peers):
        assert peer is not None
        assert (peer.final.dropped, peer.final.gaps) == ({2: 112}, {1: ((93, 99),)}), seat
        restored = restored_peer(result, seat)
        assert restored.tentative.digest() == peer.tentative.digest(), seat
        assert restored.final.dropped == peer.final.dropped, seat
        assert restored.final.gaps == peer.final.gaps, seat
