"""The simulator's logs hold the recovery notes a node's log holds (docs/protocol.md §9.6).

A node writes a ``recovering`` note in place of a cut tail (``logfile.store``'s ``cut_note``),
a ``recovered`` note when its core says the recovery is done (``Recovered``, durable before
anything it signs next), and a ``recovering`` note as it stops unheard. Until session 31 the
simulator wrote none of them: its logs of a restart that lost the end of its log read, to the
audit, as a log that never lost anything, and a recovery never finished as an honest player's
own events unlogged (a *gap*), which the node's log does not. The notes are the core's
(``Note.recovering``, ``Note.recovered``, ``TableGone.notes``) and both write them.
"""

from __future__ import annotations

import pytest

from p2p_nertz.audit import FindingKind
from p2p_nertz.logfile.format import RecordKind
from p2p_nertz.protocol.envelope import decode_unverified
from p2p_nertz.protocol.peer import Note, Recovered
from p2p_nertz.protocol.recovery import RECOVERED_NOTE, RECOVERING_NOTE
from p2p_nertz.sim import Faults, SimConfig
from p2p_nertz.sim.invariants import check
from p2p_nertz.sim.logfiles import log_records
from p2p_nertz.sim.network import QUICK_TIMERS, Crash, SimResult, Simulation

SEAT = 1  # the seat whose log loses its end
LOSE = 2  # own events lost with it


def _run(players: int, seed: int, *, everyone_gone: bool = False) -> SimResult:
    crashes = [Crash(SEAT, 8.0, 1.0, lose_own=LOSE)]
    if everyone_gone:  # (the others gone for good as it comes back: it cannot recover)
        crashes += [Crash(q, 8.5, None) for q in range(players) if q != SEAT]
    config = SimConfig(
        players=players, seed=seed, faults=Faults(crashes=tuple(crashes)), peer=QUICK_TIMERS,
        max_time=60.0, record_effects=True,
    )  # fmt: skip
    result = Simulation(config).run()
    assert [(s, len(lost)) for s, lost in result.lost_own] == [(SEAT, LOSE)]  # (built)
    return result


def _own(result: SimResult, wire: bytes) -> bool:
    spec = result.spec
    message = decode_unverified(wire, game_id=spec.game_id, roster=spec.peer_ids)
    return message.author == spec.peer_ids[SEAT]


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 2), (4, 1)])
def test_sim_a_restart_that_lost_its_logs_end_notes_its_recovery_as_a_node_does(
    players: int, seed: int
) -> None:
    """``recovering`` where the log was cut, ``recovered`` once the core says so, with the
    core's heads in it, before any event the restarted process signed (none in the
    simulator's log until session 31)."""
    result = _run(players, seed)
    records = log_records(
        result.spec, SEAT, result.logs[SEAT], result.notes[SEAT], result.envelopes
    )
    names = [r.name for r in records if r.kind is RecordKind.NOTE]
    assert [n for n in names if n in (RECOVERING_NOTE, RECOVERED_NOTE)] == [
        RECOVERING_NOTE,
        RECOVERED_NOTE,
    ]
    events = [r for r in records if r.kind is not RecordKind.NOTE]
    cut = next(i for i, r in enumerate(records) if r.name == RECOVERING_NOTE)
    done = next(i for i, r in enumerate(records) if r.name == RECOVERED_NOTE)
    # The note stands where the lost end began: the events before it are the log as the cut
    # left it, its own events among them up to the first lost one, exclusive.
    ((_, lost),) = result.lost_own
    kept = [r.data for r in records[:cut] if r.kind is not RecordKind.NOTE]
    assert lost[0] not in kept and kept == [r.data for r in events[: len(kept)]]
    # The recovered note holds what the core's Recovered said, and comes before every event
    # the process signed after it (the runtime makes it durable first).
    ((recovered),) = [
        e for _, seat, e in result.effects if seat == SEAT and isinstance(e, Recovered)
    ]
    assert records[done].data == Note.recovered(recovered).data
    assert recovered.head - recovered.first >= LOSE - 1  # (it took its events back)
    signed_after = [
        r.data
        for r in records[cut:done]
        if r.kind is RecordKind.SENT_EVENT and _own(result, r.data)
    ]
    held_at_restart = sum(1 for w in kept if _own(result, w))
    taken_back = recovered.head - recovered.first
    assert len(signed_after) == taken_back and held_at_restart == recovered.first
    assert check(result) == []


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 2)])
def test_sim_a_recovery_that_cannot_finish_leaves_a_log_the_audit_reads_as_lost_not_unlogged(
    players: int, seed: int
) -> None:
    """The others gone for good as it comes back, the recovery never ends: the log's latest
    recovery note is ``recovering``, and the audit of every log reads the own events it lost
    (which the others' logs hold) as a notice, ``log_ends_early``, as a node's log reads; until
    session 31 the simulator's log had no note and the audit said *gap*, "lacks events its own
    peer signed", an error against an honest player."""
    result = _run(players, seed, everyone_gone=True)
    peer = result.peers[SEAT]
    assert peer is not None and peer.recovering  # (the case is built: never recovered)
    names = [n.name for _, n in result.notes[SEAT]]
    assert names[-1] == RECOVERING_NOTE and RECOVERED_NOTE not in names
    check(result)
    report = result.audit
    assert report is not None
    assert report.valid and report.errors == (), report.errors
    ours = [f for f in report.violations if f.log == f"p{SEAT + 1}.log" and f.seat == SEAT]
    assert [f.kind for f in ours] == [FindingKind.LOG_ENDS_EARLY]
    ((_, lost),) = result.lost_own
    assert ours[0].last_seq is not None and ours[0].seq is not None
    assert ours[0].last_seq - ours[0].seq + 1 == len(lost)
