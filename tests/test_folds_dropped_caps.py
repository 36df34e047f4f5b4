"""A member dropped keeps the caps of the votes standing against it, and no withdrawal lifts
them (docs/protocol.md §9.2, *Caps*; ``roster._standing``, ``roster.lasting_caps``).

Shuffle soak seed 41001 (four players, ``--deal shuffle --deck-cheats --players 3-4``): seats 1
and 3 vote seat 2 (the ``bad_share`` cheater) out *withheld* counting its feed to 31; seat 2,
past that count, votes seat 0 (crashed) out for silence, as seats 1 and 3 do, and all three
withdraw when seat 0 is heard again; seat 0's vote counting 38 completes seat 2's drop. The
peers' folds, seat 2's vote capped, kept seat 0 and dropped seat 2. But a member dropped had
no cap: the fold with the caps of the end counted seat 2's capped vote, dropped seat 0 at 31
before the withdrawals, and so never dropped seat 2 (the audit's passes went round that
cycle to their limit and ended there), and ``Folds.capped_drops`` named seat 0's drop at 31,
which held every peer's stable time below seat 0's next event for good: the game never ended.

The votes that drop a member are never withdrawn after the drop (``Roster.vote``), so their
caps stand as long as it is out: its votes signed past them never count, in the peers' folds
and the audit's alike, and those caps are lasting, taking no drop into ``capped_drops``.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest

from p2p_nertz.audit import AuditReport
from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.roster import lasting_caps
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import Phase, Roster, capped
from p2p_nertz.sim import QUICK_TIMERS, SimConfig, SimResult, run
from p2p_nertz.sim.cheats import DeckCheat, DeckCheatKind

_NEVER = 1 << 63
SEED, CHEATER, CRASHED = 41001, 2, 0


def _vote(target: int, last_seq: int, reason: DropReason = DropReason.SILENT) -> Drop:
    return Drop(frontier=(0,) * 4, seat=target, last_seq=last_seq, reason=reason)


def test_folds_dropped_caps_a_member_dropped_keeps_the_caps_of_its_drop() -> None:
    """The seed's shape by hand: seats 1 and 3 vote seat 2 out *withheld* counting 31, seat 0
    at 38 (the cut)."""
    roster = Roster(4)
    roster.vote(1, 10, _vote(2, 31, DropReason.WITHHELD))
    roster.vote(3, 10, _vote(2, 31, DropReason.WITHHELD))
    assert roster.settle(1) == []
    roster.vote(0, 20, _vote(2, 38, DropReason.WITHHELD))
    assert roster.settle(2) == [(2, 38)]
    caps = roster.standing_caps()
    assert caps == {2: (31, _NEVER, (), ())}
    # Its vote on seat 0 signed at 32, past the count and before the cut: never counts.
    assert capped(caps, 2, 32, _vote(0, 31))
    assert not capped(caps, 2, 31, _vote(0, 31))
    # A withdrawal after the drop changes nothing, so the cap is one no withdrawal lifts.
    roster.vote(1, 30, _vote(2, 0, DropReason.WITHDRAW))
    assert roster.standing_caps() == caps
    assert lasting_caps(roster) == {2: 31}


def test_folds_dropped_caps_a_member_in_has_caps_a_withdrawal_lifts() -> None:
    """The same votes short of the drop: the cap stands, but a withdrawal may lift it (not
    lasting), and it does."""
    roster = Roster(4)
    roster.vote(1, 10, _vote(2, 31, DropReason.WITHHELD))
    roster.vote(3, 10, _vote(2, 31, DropReason.WITHHELD))
    assert roster.settle(1) == []
    assert roster.standing_caps() == {2: (31, _NEVER, (), ())}
    assert lasting_caps(roster) == {}
    roster.vote(1, 30, _vote(2, 0, DropReason.WITHDRAW))
    roster.vote(3, 30, _vote(2, 0, DropReason.WITHDRAW))
    assert roster.standing_caps() == {}


@functools.cache
def _game() -> tuple[SimResult, AuditReport]:
    config = SimConfig.soak(SEED, players=(3, 4), peer=QUICK_TIMERS)
    faults = dataclasses.replace(
        config.faults, deck_cheats=(DeckCheat(CHEATER, DeckCheatKind.BAD_SHARE),)
    )
    result = run(dataclasses.replace(config, deal=Deal.SHUFFLE, faults=faults))
    assert result.audit is not None  # (the invariants' audit of every log)
    return result, result.audit


@pytest.mark.slow  # (a four-player shuffle game: about 12 s of CPU)
def test_folds_dropped_caps_the_soak_seed_has_its_shape() -> None:
    """Seat 0 crashed and came back; seat 2 voted it out past the count of the votes against
    itself, and withdrew, as the other two did."""
    result, _ = _game()
    assert result.spec.seats == 4
    assert [c.seat for c in result.config.faults.crashes] == [CRASHED]
    peers = [p for p in result.peers if p is not None]
    roster = peers[1].final.roster
    against = [v.last_seq for voter, v in roster.votes[CHEATER] if voter != CRASHED]
    late = [
        seq
        for seat, seq, body in roster.read
        if seat == CHEATER and isinstance(body, Drop) and body.seat == CRASHED
        if body.reason is DropReason.SILENT
    ]
    assert late and min(late) > min(against)
    assert {lift[2] for lift in roster.lifts[CRASHED]} == {1, 2, 3}


@pytest.mark.slow
def test_folds_dropped_caps_the_game_ends_and_the_audit_agrees() -> None:
    """Every peer still in ends the game, and every peer and the audit drop the cheater alone.
    (Its own peer, dropped, is owed no end: nobody waits for a dropped member, which watches,
    docs/protocol.md §9.5, §9.8; the simulator stops once the peers still in are over and hold
    the same events, and the dropped peer may not have the last coverage of the results yet.)"""
    result, report = _game()
    assert result.finished and result.violations == []
    peers = [p for p in result.peers if p is not None]
    still_in = [p for p in peers if p.seat not in p.final.dropped]
    assert sorted(p.seat for p in still_in) == [s for s in range(4) if s != CHEATER]
    assert all(p.final.phase is Phase.OVER for p in still_in)
    cuts = {tuple(sorted(p.final.dropped.items())) for p in peers}
    assert len(cuts) == 1, cuts
    (dropped,) = cuts
    assert [seat for seat, _ in dropped] == [CHEATER]  # (seat 0, honest, stays in)
    assert tuple(report.dropped) == dropped
    assert report.digest == peers[0].final.digest()
    assert {f.seat for f in report.errors} <= {CHEATER}
