"""A fork sent to a member asleep: the other version reached only that member.

A cheater signs a second version of its next event (a Nerts call) and sends it to one member
only, who is asleep (a laptop lid closed: ``Freeze``) long enough to be dropped. The members
still in never see that version: for them there is no fork, and the game goes on and ends on
the real event. The sleeper wakes with both versions in its log. Found by a scan of freeze and
fork times around the liveness timers (session 9): the audit of every log read the fake first
(it is timed below the real event) and scored another game than every peer; and the
simulator's check asked the members still in to drop a cheater none of them could prove;
and, when the sleeper woke after it was voted out (by votes, some on the cheater's real
chain), it held the fake, could never take the chain that goes on nor the votes on it, and
waited in the round for ever; and the drop that cut the cheater below its fork took a
foundation it had started, so an honest member's claim on it read, at every peer, as a
claim on a foundation that never was (a cheat) instead of a race lost to the cut. Session
11's scan of the class over a grid (``scripts/scan_sleeper_forks.py``) found more: a log
alone folded to its end without the forker's events it lacked, which its peer had waited
for; an audit pass that kept a cut decided before it knew of the fork; a sleeper that gave
its version up for one it could never take. Each log, audited alone, names the cheater and
nobody else.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Equivocation, Faults, Freeze, SimConfig, run
from p2p_nertz.sim.invariants import audit_alone, audit_result, forks
from p2p_nertz.sim.logfiles import log_files
from tests.peer_helpers import restored as restored_peer


@dataclass(frozen=True)
class Table:
    """A game the scan found broken: its seed, size and rounds, when the sleeper's lid
    closes (``at``) and for how long, and when the cheater forks."""

    seed: int
    players: int
    rounds: int
    at: float
    lasting: float
    fork: float

    @property
    def cheat(self) -> int:
        """The cheater: the last seat (seat 0 at two players, where seat 1 sleeps)."""
        return self.players - 1 if self.players > 2 else 0

    def config(self) -> SimConfig:
        sleeper, cheat = 1, self.cheat
        faults = Faults(
            freezes=(Freeze(sleeper, self.at, self.lasting),),
            equivocations=(Equivocation(cheat, self.fork, frozenset({sleeper})),),
        )
        return SimConfig(
            players=self.players,
            seed=self.seed,
            rules=Rules(target=None, rounds=self.rounds),
            faults=faults,
            peer=QUICK_TIMERS,
        )


# At three table sizes, the freeze shorter and longer than the game.
CASES = [
    pytest.param(Table(5, 3, 1, 6.0, 8.0, 8.8), id="3-players-union-scored-the-fake"),
    pytest.param(
        Table(4, 4, 1, 5.0, 12.0, 8.8), id="4-players-check-asked-a-drop-nobody-could-prove"
    ),
    pytest.param(Table(1, 4, 1, 5.0, 12.0, 8.8), id="4-players-sleeper-seed-1"),
    pytest.param(Table(2, 5, 1, 5.0, 12.0, 8.8), id="5-players-union-result-mismatch"),
    # The sleeper wakes after the game: it waited in the round for ever.
    pytest.param(Table(6, 3, 1, 8.0, 30.0, 8.5), id="3-players-sleeper-waited-for-ever"),
    pytest.param(Table(6, 4, 2, 8.0, 30.0, 10.8), id="4-players-2-rounds-sleeper-waited"),
    pytest.param(Table(6, 5, 2, 8.0, 30.0, 8.5), id="5-players-2-rounds-sleeper-waited"),
    # Read in the order, the fake (timed first) let the sleeper's vote cut the cheater below
    # its fork, which kept the cheater's vote against the sleeper from counting: the audit of
    # every log settled on a fold that agreed with itself and with no peer.
    pytest.param(Table(0, 3, 2, 8.0, 30.0, 10.8), id="3-players-audit-settled-on-the-fake"),
    # The drop cut the cheater below its fork, and with it a foundation it had started that
    # an honest member had built on: that claim read as one on a foundation that never was,
    # a cheat, at every peer (a sleep shorter than the liveness timers; 2 players: the claim
    # of the member that voted the cheater out, whose frontier stops at its vote's cut).
    pytest.param(Table(0, 4, 2, 6.0, 2.0, 6.5), id="4-players-claim-on-a-cut-foundation"),
    pytest.param(Table(0, 2, 2, 6.0, 8.0, 8.8), id="2-players-claim-on-a-cut-foundation"),
    pytest.param(Table(1, 2, 2, 6.0, 8.0, 8.8), id="2-players-sleeper-seed-1"),
    # Session 11's scan (scripts/scan_sleeper_forks.py). A log alone that lacks events that
    # count (the forker's, named by the others' events the log holds; or, of a member
    # dropped, up to its cut) was folded to its end without them: the honest members' claims
    # on the foundations they started read as cheats, where the log's peer had never made
    # them final. The sleeper's log, the sleeper dropped, after a sleep shorter than the
    # liveness timers, and the cheater's own (it holds the other version as a proof note).
    pytest.param(Table(0, 4, 1, 5.0, 12.0, 8.8), id="4-players-sleeper-log-folded-past-the-cut"),
    pytest.param(Table(2, 3, 1, 6.0, 8.0, 8.8), id="3-players-sleeper-log-folded-past-the-fork"),
    pytest.param(Table(0, 2, 1, 5.0, 2.0, 5.5), id="2-players-short-sleep-cheater-log-alone"),
    pytest.param(Table(13, 2, 1, 6.0, 8.0, 8.8), id="2-players-sleeper-log-folded-past-the-fork"),
    # The audit's first pass read the real event (an abandon) before the fake, and cut the
    # sleeper with it; the pass that then saw the fork kept that cut, which left out the
    # sleeper's vote that dropped the cheater: every log read as a game no peer played.
    pytest.param(Table(4, 2, 2, 6.0, 8.0, 8.8), id="2-players-abandon-cut-kept-past-the-fork"),
    # The sleeper gave its fake up for the chain that goes on, whose version was timed below
    # what it had made final: refused, it held neither, and restored from its log (the fake,
    # not the event that made it give it up) it held the fake.
    pytest.param(Table(0, 3, 1, 8.0, 30.0, 11.8), id="3-players-gave-up-for-a-late-version"),
    pytest.param(Table(11, 4, 1, 8.0, 30.0, 11.8), id="4-players-gave-up-for-a-late-version"),
    # Protocol version 2 (soak --sleeper-forks seed 44): the sleeper, holding the fake and the
    # proof, made final the time of the honest version (timed below the fake), then refused
    # that version for ever as timed below what is final, and waited in the round.
    pytest.param(
        Table(44, 3, 2, 6.7, 10.799999999999999, 10.696), id="3-players-final-past-the-honest-one"
    ),
    # Session 18: the sleeper, holding the fake, waited to hold the forker's events that the
    # members still in announced past the fork (finality.unannounced, first version): events
    # of the other chain it could never take. Its drop was never final; the game never ended.
    pytest.param(Table(0, 3, 1, 5.0, 2.0, 5.5), id="3-players-waited-past-the-fork"),
    pytest.param(Table(2, 5, 2, 5.0, 2.0, 5.5), id="5-players-waited-past-the-fork"),
]


@pytest.mark.parametrize("table", CASES)
def test_a_fork_sent_to_a_sleeper_blames_the_cheater_alone(table: Table) -> None:
    result = run(table.config())
    cheat = table.cheat
    assert forks(result) == {cheat}  # the sleeper's log holds both versions
    assert result.finished
    honest = [p for seat, p in enumerate(result.peers) if p is not None and seat != cheat]
    totals = {p.final.game.result.totals for p in honest if p.final.game.result is not None}
    assert len(totals) == 1
    # Every invariant, the real audit of every log included.
    assert result.violations == []  # (run() checked every invariant)
    files = log_files(result)
    # In seat order, the audit run() made (``audit_logs``: these sources, deep); and reversed.
    assert result.audit is not None
    for report in (
        result.audit,
        audit_result(result, files, seats=range(len(files))[::-1], deep=True),
    ):
        assert report.totals == next(iter(totals))
        # The fork is still proven, and named, against the cheater alone (its fake may also
        # be timed below what it had announced: a lie about time, also the cheater's).
        errors = [f for f in report.violations if f.severity.value == "error"]
        assert {f.seat for f in errors} == {cheat}
        assert FindingKind.EQUIVOCATION in {f.kind for f in errors}
    # The sleeper restored from its own log reaches what it held live: a peer that switched
    # to the chain that goes on reads the switch back from its log (the proof's other version
    # is kept from the log too).
    sleeper = result.peers[1]
    assert sleeper is not None
    restored = restored_peer(result, 1)
    assert restored.tentative.digest() == sleeper.tentative.digest()
    # Each log alone (what a player hands in) blames the cheater alone: the sleeper's too.
    for seat in range(len(files)):
        alone = audit_alone(result, seat, files)
        errors = [f for f in alone.violations if f.severity.value == "error"]
        assert {f.seat for f in errors} <= {cheat}, seat
