"""An older copy of a player's log resumed as it is, in the simulator (``Crash.backup``;
docs/protocol.md §9.6, *why the note*).

A backup looks whole (no torn tail), so without ``--recover`` the process restored from it does
not know that its key signed past what the copy holds. What it may do is the core's: it signs
nothing past its head before a member's word on its feed (a copy holding our join alone, on
main; every copy, once a restored process waits for that word, twins31), and then either
learns from a member still there that its feed goes on (``Elsewhere``) or, with everyone gone,
hears nobody and stops unheard. Either way the log it leaves ends short of the feed, and says
so: a ``recovering`` note, the core's (``Outbox.take_to_stop``, ``TableGone.notes``), which the
simulator now writes as the node does. The audit of that log, alone and with the others', is
VALID, the events it lacks a ``log_ends_early`` notice naming them (checked in the others'
copies). Until session 31 the simulator wrote no note for an unheard stop, and that log
audited as a ``gap`` ("lacks events its own peer signed"), as a node's did before session 29.

What a note cannot excuse stays an error: a hole inside what the log holds of its own feed
(:mod:`tests.test_audit_tamper`), and the same log with the note taken out.
"""

from __future__ import annotations

import pytest

from p2p_nertz.audit import FindingKind, LogSource, audit
from p2p_nertz.logfile.format import RecordKind
from p2p_nertz.protocol.envelope import decode_unverified
from p2p_nertz.protocol.recovery import RECOVERING_NOTE
from p2p_nertz.sim import Faults, SimConfig
from p2p_nertz.sim.logfiles import log_file, log_records
from p2p_nertz.sim.network import QUICK_TIMERS, Crash, SimResult, Simulation

SEAT = 1  # the seat whose log is put back from a copy
CRASH_AT = 10.0  # (mid round at every seed below: the copy's seat signed 20-40 events by then)
GONE_AT = 60.0  # the others have finished (or dropped the seat) and gone home by then


def _resumed(players: int, seed: int, copy_at: float, *, everyone_gone: bool) -> SimResult:
    """Seat 1 killed at :data:`CRASH_AT` and resumed on a copy of its log taken at
    ``copy_at``: a second later (the others still playing), or with everyone gone."""
    back = 2 * GONE_AT if everyone_gone else 1.0
    crashes = [Crash(SEAT, CRASH_AT, back, backup=copy_at)]
    if everyone_gone:
        crashes += [Crash(q, GONE_AT, None) for q in range(players) if q != SEAT]
    config = SimConfig(
        players=players, seed=seed, faults=Faults(crashes=tuple(crashes)), peer=QUICK_TIMERS,
        max_time=4 * GONE_AT,
    )  # fmt: skip
    sim = Simulation(config)

    def stopped(s: Simulation) -> bool:  # (the resumed process met its end: stopped or gone)
        return bool(s.result.elsewhere) or s.gone_noted[SEAT]

    result = sim.run(until=stopped)
    assert result.lost_own and result.lost_own[0][0] == SEAT  # (the case is built: it lost)
    return result


def _files(result: SimResult, *, without_note: bool = False) -> list[LogSource]:
    spec, sources = result.spec, []
    for seat, wires in enumerate(result.logs):
        notes = result.notes[seat]
        if without_note and seat == SEAT:
            notes = [(at, n) for at, n in notes if n.name != RECOVERING_NOTE]
        records = log_records(spec, seat, wires, notes, result.envelopes)
        sources.append(LogSource.from_bytes(f"p{seat + 1}.log", log_file(spec, seat, records)))
    return sources


def _check_honest(result: SimResult) -> None:
    """The copy's log ends with a ``recovering`` note; the audit of it alone and of every log
    is VALID, the seat's events it lacks one notice naming them; without the note, a gap."""
    spec = result.spec
    records = log_records(spec, SEAT, result.logs[SEAT], result.notes[SEAT], result.envelopes)
    assert records[-1].kind is RecordKind.NOTE and records[-1].name == RECOVERING_NOTE
    sources = _files(result)
    alone = audit([sources[SEAT]], deep=True)
    assert alone.valid and alone.errors == (), alone.errors
    every = audit(sources, deep=True)
    assert every.valid and every.errors == (), every.errors
    lacks = [f for f in every.violations if f.log == f"p{SEAT + 1}.log" and f.seat == SEAT]
    own = spec.peer_ids[SEAT]
    held = sum(
        decode_unverified(w, game_id=spec.game_id, roster=spec.peer_ids).author == own
        for w in result.logs[SEAT]
    )  # (its own events in the log, the copy's: 1..held)
    (((_, lost)),) = result.lost_own  # (the first process's events past the copy)
    ((notice),) = lacks
    assert notice.kind is FindingKind.LOG_ENDS_EARLY and "begun again" in notice.detail
    assert (notice.seq, notice.last_seq) == (held + 1, held + len(lost))
    # The same log without its note: the honest end reads as events signed and not logged.
    bare = audit(_files(result, without_note=True))
    assert not bare.valid
    assert [f.kind for f in bare.errors if f.seat == SEAT] == [FindingKind.GAP]


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 2), (4, 1)])
def test_sim_a_copy_of_the_log_from_the_start_resumed_with_everyone_gone_stops_noted(
    players: int, seed: int
) -> None:
    """The copy holds our join alone (taken as the game began); resumed after the others went
    home, it hears nobody and stops unheard, having signed nothing (on main already), and
    its log now says so: a ``recovering`` note (before session 31 the simulator wrote none,
    and the audit of every log said *gap*)."""
    result = _resumed(players, seed, 0.0, everyone_gone=True)
    (((_, seat, gone)),) = result.gone
    assert seat == SEAT and gone.reason.value == "unheard"
    assert result.elsewhere == []
    _check_honest(result)


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 2), (4, 1)])
def test_sim_a_copy_of_the_log_from_the_start_resumed_among_the_others_stops_noted(
    players: int, seed: int
) -> None:
    """The same copy resumed a second after the kill, the others still playing: their word on
    its feed says it goes on past the copy, it asks, an event of its own arrives, and it stops
    (``Elsewhere``) with the note (session 30); the audit of every log VALID."""
    result = _resumed(players, seed, 0.0, everyone_gone=False)
    (((_, seat, seq)),) = result.elsewhere
    assert seat == SEAT and seq > 1
    _check_honest(result)


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 2), (4, 1)])
def test_sim_a_copy_of_the_log_from_mid_round_resumed_with_everyone_gone_stops_noted(
    players: int, seed: int
) -> None:
    """A copy taken mid round (5 s in), resumed after everyone went home: before session 31
    the process signed past its head at once (a vote for silence, a move: seqs the first
    process used, a fork in the audit of every log); waiting for a member's word (§9.6) it
    stops unheard instead."""
    result = _resumed(players, seed, 5.0, everyone_gone=True)
    _check_honest(result)


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 2), (4, 1)])
def test_sim_a_copy_of_the_log_from_mid_round_resumed_among_the_others_stops_noted(
    players: int, seed: int
) -> None:
    """The mid-round copy resumed among the others: before session 31 its restart beat, timed
    at its reservation, named a head below events the first process signed earlier (a lie
    about time in the others' proof notes); waiting for a word it learns its feed goes on and
    stops."""
    result = _resumed(players, seed, 5.0, everyone_gone=False)
    _check_honest(result)
