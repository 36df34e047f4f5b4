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

from p2p_nertz.audit import FindingKind
from p2p_nertz.logfile.format import RecordKind
from p2p_nertz.protocol.envelope import decode_unverified
from p2p_nertz.protocol.recovery import RECOVERING_NOTE
from p2p_nertz.protocol.state import Phase
from p2p_nertz.sim import Faults, SimConfig
from p2p_nertz.sim.invariants import audit_alone, audit_result
from p2p_nertz.sim.logfiles import log_file, log_records
from p2p_nertz.sim.network import QUICK_TIMERS, Crash, SimResult, Simulation

SEAT = 1  # the seat whose log is put back from a copy
CRASH_AT = 10.0  # (mid round at every seed below: the copy's seat signed 20-40 events by then)
GONE_AT = 60.0  # the others have finished (or dropped the seat) and gone home by then


def _simulation(
    players: int,
    seed: int,
    copy_at: float,
    *,
    kill_at: float,
    back: float,
    gone_at: float,
    everyone_gone: bool,
) -> Simulation:
    """Seat 1 killed at ``kill_at``, its log put back from a copy taken at ``copy_at`` and
    resumed ``back`` later; with ``everyone_gone``, the others killed for good at ``gone_at``."""
    crashes = [Crash(SEAT, kill_at, back, backup=copy_at)]
    if everyone_gone:
        crashes += [Crash(q, gone_at, None) for q in range(players) if q != SEAT]
    config = SimConfig(
        players=players, seed=seed, faults=Faults(crashes=tuple(crashes)), peer=QUICK_TIMERS,
        max_time=4 * gone_at,
    )  # fmt: skip
    return Simulation(config)


def _resumed(players: int, seed: int, copy_at: float, *, everyone_gone: bool) -> SimResult:
    """Seat 1 killed at :data:`CRASH_AT` and resumed on a copy of its log taken at
    ``copy_at``: a second later (the others still playing), or with everyone gone."""
    back = 2 * GONE_AT if everyone_gone else 1.0
    sim = _simulation(
        players, seed, copy_at, kill_at=CRASH_AT, back=back, gone_at=GONE_AT,
        everyone_gone=everyone_gone,
    )  # fmt: skip

    def stopped(s: Simulation) -> bool:  # (the resumed process met its end: stopped or gone)
        return bool(s.result.elsewhere) or s.gone_noted[SEAT]

    result = sim.run(until=stopped)
    assert result.lost_own and result.lost_own[0][0] == SEAT  # (the case is built: it lost)
    return result


def _files(result: SimResult, *, without_note: bool = False) -> list[bytes]:
    spec, files = result.spec, []
    for seat, wires in enumerate(result.logs):
        notes = result.notes[seat]
        if without_note and seat == SEAT:
            notes = [(at, n) for at, n in notes if n.name != RECOVERING_NOTE]
        records = log_records(spec, seat, wires, notes, result.envelopes)
        files.append(log_file(spec, seat, records))
    return files


def _check_honest(result: SimResult) -> None:
    """The copy's log ends with a ``recovering`` note; the audit of it alone and of every log
    is VALID, the seat's events it lacks one notice naming them; without the note, a gap."""
    spec = result.spec
    records = log_records(spec, SEAT, result.logs[SEAT], result.notes[SEAT], result.envelopes)
    assert records[-1].kind is RecordKind.NOTE and records[-1].name == RECOVERING_NOTE
    files = _files(result)
    alone = audit_alone(result, SEAT, files, deep=True)
    assert alone.valid and alone.errors == (), alone.errors
    every = audit_result(result, files, deep=True)
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
    bare = audit_result(result, _files(result, without_note=True))
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


# -- after the game is over (backup32) ---------------------------------------------------------
# The simulator ends a run at the game's end, so until session 32 no case resumed a copy once
# the game was over: ``Simulation.run(past_over=True)`` goes on past it. The first process
# plays the game to its end; it is gone (killed, or its node exited) at OVER_KILL, and the seat
# is resumed from a copy of its log taken mid round (COPY_MID) or after the end (COPY_OVER).
# Every game below is over by 25 s.
COPY_MID, COPY_OVER, OVER_KILL, OVER_GONE = 5.0, 35.0, 40.0, 50.0


def _resumed_after_over(
    players: int, seed: int, copy_at: float, *, everyone_gone: bool
) -> tuple[SimResult, int]:
    """Seat 1 resumed on a copy taken at ``copy_at`` once the game is over: a second after its
    first process went (the others' still there) or with everyone gone; and how many of its
    own events the first process signed (its log's, before the copy was put back)."""
    back = 2 * OVER_GONE - OVER_KILL if everyone_gone else 1.0
    sim = _simulation(
        players, seed, copy_at, kill_at=OVER_KILL, back=back, gone_at=OVER_GONE,
        everyone_gone=everyone_gone,
    )  # fmt: skip
    signed: list[int] = []

    def ended(s: Simulation) -> bool:
        peer = s.peers[SEAT]
        if not signed and s.down_until[SEAT] is not None:  # (the first process is gone)
            assert all(p is None or p.tentative.phase is Phase.OVER for p in s.peers)
            signed.append(_own(s.result, s.logs[SEAT]))
        if s.result.elsewhere or s.gone_noted[SEAT]:
            return True  # (the resumed process met its end: stopped or gone)
        # (among the others, a copy that holds the end goes on to an end final with them)
        return peer is not None and bool(signed) and peer.final.phase is Phase.OVER

    result = sim.run(until=ended, past_over=True)
    assert signed, "the first process never went"
    return result, signed[0]


def _own(result: SimResult, wires: list[bytes]) -> int:
    """How many of seat :data:`SEAT`'s own events ``wires`` hold."""
    spec = result.spec
    own = spec.peer_ids[SEAT]
    return sum(
        decode_unverified(w, game_id=spec.game_id, roster=spec.peer_ids).author == own
        for w in wires
    )


GAMES = [(2, 1), (3, 2), (4, 1)]


@pytest.mark.parametrize(("players", "seed"), GAMES)
def test_sim_a_copy_taken_after_the_game_resumed_with_everyone_gone_says_the_game_is_over(
    players: int, seed: int
) -> None:
    """A copy holding the whole game, resumed after everyone went home: it hears nobody and
    stops unheard having signed nothing, saying the game is over as its log has it, with the
    score (before session 32: "another nertz may be playing as you, or the others never came",
    words for a game that never began); the audit of every log VALID, nothing of its feed
    lacking."""
    result, signed = _resumed_after_over(players, seed, COPY_OVER, everyone_gone=True)
    assert result.lost_own == [] and result.elsewhere == []
    (((_, seat, gone)),) = result.gone
    assert seat == SEAT and gone.reason.value == "unheard" and gone.ended
    names = [m.name for m in result.spec.members]
    peer = result.peers[SEAT]
    assert peer is not None
    totals = "  ".join(f"{names[s]} {t}" for s, t in enumerate(peer.tentative.game.totals))
    assert f"the game is over as this log has it (the score: {totals})" in gone.why
    assert "another nertz" not in gone.why
    assert _own(result, result.logs[SEAT]) == signed  # (nothing signed anew)
    report = audit_result(result, _files(result), deep=True)
    assert report.valid and report.errors == (), report.errors
    assert not [f for f in report.violations if f.seat == SEAT]


@pytest.mark.parametrize(("players", "seed"), GAMES)
def test_sim_a_copy_taken_after_the_game_resumed_among_the_others_signs_nothing(
    players: int, seed: int
) -> None:
    """The same copy resumed while the others' processes still run: their word says they hold
    what it holds of its feed, so it is released, signs nothing new, and its end is final with
    them; no proof against it, the audit VALID."""
    result, signed = _resumed_after_over(players, seed, COPY_OVER, everyone_gone=False)
    assert result.lost_own == [] and result.elsewhere == [] and result.gone == []
    assert all(p is not None and p.final.phase is Phase.OVER for p in result.peers)
    assert _own(result, result.logs[SEAT]) == signed
    report = audit_result(result, _files(result), deep=True)
    assert report.valid and report.errors == () and report.violations == (), report.findings


@pytest.mark.parametrize(("players", "seed"), GAMES)
@pytest.mark.parametrize("everyone_gone", [False, True], ids=["among", "gone"])
def test_sim_a_copy_from_mid_round_resumed_after_the_game_stops_noted(
    players: int, seed: int, everyone_gone: bool
) -> None:
    """A copy taken mid round, resumed once the first process had played the game to its end:
    among the others their word shows its feed goes on past the copy, it asks, and stops
    (``Elsewhere``); with everyone gone it stops unheard, not knowing the game is over; either
    way it signed nothing, its log ends noted and the audit of every log is VALID, what the
    copy lacks a notice."""
    result, signed = _resumed_after_over(players, seed, COPY_MID, everyone_gone=everyone_gone)
    (((_, lost)),) = result.lost_own
    assert _own(result, result.logs[SEAT]) + len(lost) == signed  # (nothing signed anew)
    if everyone_gone:
        (((_, seat, gone)),) = result.gone
        assert seat == SEAT and gone.reason.value == "unheard" and not gone.ended
    else:
        (((_, seat, seq)),) = result.elsewhere
        assert seat == SEAT and seq > signed - len(lost)
    _check_honest(result)
