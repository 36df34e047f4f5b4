"""The spectator decides finality and which events count exactly as the players do.

A watcher gets what the members push it: every event they log and every beat and ack they send
to all. Fed that from seeded simulated games with faults, the spectator's final fold must end
where the players' own do: the same result, the same drops and readmissions. The games below
have members dropped for silence, readmitted, and cheaters dropped on proof; seed 26 is the one
where the spectator's old rule (final once every member's feed is held up to a time, whoever
holds it) took a dropped member's moves past its cut as final before the votes that cut them,
and never finished the round.
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.peer import Record, Send
from p2p_nertz.protocol.spectator import Spectator
from p2p_nertz.sim import SimConfig, SimResult, run

# Soak seeds: 0 a drop at 5 players; 1 a member readmitted; 3 a cheater and two drops; 11 a
# drop and a readmission; 23 a cheater readmitted then dropped; 26 (see the module docstring).
SEEDS = [0, 1, 3, 11, 23, 26]


def watched(result: SimResult) -> list[bytes]:
    """What a watcher of every member receives, in the order sent: events logged, and beats,
    acks and events sent to all (as ``runtime.node`` pushes them)."""
    return [
        effect.data
        for _, _, effect in result.effects
        if isinstance(effect, Record) or (isinstance(effect, Send) and effect.to is None)
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_watcher_ends_on_the_players_final_fold(seed: int) -> None:
    result = run(dataclasses.replace(SimConfig.soak(seed), record_effects=True))
    finals = [p.final for p in result.peers if p is not None and p.final.game.result is not None]
    assert finals, f"seed {seed} was chosen for a game that finishes"
    spectator = Spectator(result.spec)
    for wire in watched(result):
        spectator.feed(wire)
    ours = spectator.final
    assert ours.game.result == finals[0].game.result
    assert any(ours.dropped == f.dropped and ours.gaps == f.gaps for f in finals)
    assert len(ours.game.history) == len(finals[0].game.history)


def test_a_spectator_fed_only_events_shows_them_and_makes_nothing_final() -> None:
    """Without the members' beats nobody is known to hold anything: the log's events are the
    tentative view, and nothing is final (the old rule made a dropped member's moves final)."""
    result = run(SimConfig.soak(26))
    spectator = Spectator(result.spec)
    for log in result.logs:
        for wire in log:
            spectator.feed(wire)
    finished = next(p.final for p in result.peers if p is not None and p.final.game.result)
    assert spectator.tentative.game.result == finished.game.result
    assert spectator.final.game.result is None


def test_a_spectator_refuses_what_is_not_a_members_event() -> None:
    result = run(SimConfig.soak(0))
    spectator = Spectator(result.spec)
    wire = next(w for w in result.logs[0] if decode_message(w).kind is Kind.JOIN)
    spectator.feed(wire[:-1] + bytes([wire[-1] ^ 1]))  # a bit of the signature flipped
    spectator.feed(b"\x93not a message")
    assert spectator.rejected == 2
    assert spectator.held() == 0
