"""A player's key on a second machine that reaches the table but hears nobody, in the simulator
(docs/protocol.md §9.6, *a second machine that hears nobody*; :mod:`p2p_nertz.sim.twins`).

The second process starts with an empty log while the first plays on; its messages reach the
others, theirs go to the first process only (for a while, or for good). Before session 29 it
had no member's word to doubt (``recovery.Doubt``): its beats, timed above events the first
process had signed, were proof of a lie about time against the player, and past ``drop_after``
it abandoned the other (two players) or voted the silent members out, under seqs the first
process had used: a fork, the honest player dropped for equivocation. Now a process that holds
nothing of ours past its join signs nothing more, and sends no beat but its first (the same
bytes wherever the key starts), until a member has told it what it holds of our feed; hearing
nobody for ``drop_after`` it stops in words (``GoneReason.UNHEARD``), its log its join alone.
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.gone import GoneReason
from p2p_nertz.protocol.recovery import RECOVERING_NOTE
from p2p_nertz.sim import Faults, SimConfig
from p2p_nertz.sim.invariants import audit_result, check
from p2p_nertz.sim.logfiles import log_file, log_files, log_records
from p2p_nertz.sim.network import QUICK_TIMERS, Simulation
from p2p_nertz.sim.twins import Twin

SEAT = 1  # the seat whose key runs twice
DROP_AFTER = QUICK_TIMERS.drop_after


def _run(players: int, seed: int, twin: Twin) -> Simulation:
    config = SimConfig(
        players=players,
        seed=seed,
        faults=Faults(twins=(twin,)),
        peer=QUICK_TIMERS,
        max_time=300.0,
    )
    sim = Simulation(config)
    sim.run()
    return sim


def _check_no_fork(sim: Simulation) -> None:
    """The first process played on: no problem anywhere, nobody dropped, the twin's log its
    join alone (the first process's bytes), and the audit of every log, the twin's among them,
    VALID."""
    result = sim.result
    assert result.finished
    assert check(result) == []  # (before: clock_below_ack, equivocation: seat 1 dropped)
    assert result.audit is not None and result.audit.drops == ()
    first = sim.peers[0]
    assert first is not None
    (twin_log,) = sim.twins.logs
    assert twin_log == [first.events(SEAT)[0].wire]  # its join: the same bytes
    assert len(first.events(SEAT)) > 1  # (the first process signed past it)
    # Its log ends as a node's does that stops so (unheard, or its feed going on elsewhere): a
    # ``recovering`` note, the core's (none in the simulator's twin logs until session 31).
    spec = result.spec
    (twin_notes,) = sim.twins.notes
    assert [n.name for _, n in twin_notes] == [RECOVERING_NOTE]
    records = log_records(spec, SEAT, twin_log, twin_notes, result.envelopes)
    assert records[-1].name == RECOVERING_NOTE
    twin_file = log_file(spec, SEAT, records)
    files = [*log_files(result), twin_file]
    report = audit_result(result, files)
    assert report.valid and report.errors == ()


@pytest.mark.parametrize(
    ("players", "seed", "deaf_for"),
    [(2, 1, None), (3, 1, None), (4, 1, None), (2, 1, 1.5 * DROP_AFTER), (4, 3, 1.5 * DROP_AFTER)],
)
def test_sim_a_second_process_hearing_nobody_stops_unheard_without_forking(
    players: int, seed: int, deaf_for: float | None
) -> None:
    at = 5.0
    sim = _run(players, seed, Twin(SEAT, at, deaf_for))
    _check_no_fork(sim)
    # It heard nobody for drop_after (the wait after which it abandoned or voted before) and
    # stopped waiting, having signed nothing new.
    ((end),) = sim.twins.ends
    assert (end.how, end.detail) == ("gone", GoneReason.UNHEARD.value)
    assert end.at >= at + DROP_AFTER
    assert sim.result.elsewhere == []


@pytest.mark.parametrize(
    ("players", "seed", "twin"),
    [
        (2, 1, Twin(SEAT, 5.0, deaf_for=0.5 * DROP_AFTER)),  # heals before drop_after
        (3, 2, Twin(SEAT, 8.0, deaf_for=0.5 * DROP_AFTER)),
        (3, 1, Twin(SEAT, 5.0, hears=frozenset({2}))),  # hears one member, not the other
    ],
)
def test_sim_a_second_process_that_hears_a_member_learns_its_key_plays_elsewhere(
    players: int, seed: int, twin: Twin
) -> None:
    sim = _run(players, seed, twin)
    _check_no_fork(sim)
    # A member's word said it holds more of our feed than the twin signed (recovery.Doubt):
    # it asked for its own events past its join and stopped on the first (Elsewhere).
    ((end),) = sim.twins.ends
    assert end.how == "elsewhere" and int(end.detail) > 1
