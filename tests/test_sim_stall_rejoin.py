"""A liar voted out *withheld* over a vote for silence that never ends, rejoining every round
(docs/protocol.md §9.2, §9.8, *a second stall*; ``protocol/second_stall.py``), in the simulator
at three and four players, three rounds, the quick timers.

The liar of ``tests/test_sim_vote_never_ends.py`` (:class:`FreezeBreaker`: it votes a member
the others hear out for silence and never withdraws) is voted out *withheld* by the others
``phase_timeout`` after its vote. A vote *withheld* is no proof of cheating, so it rejoined at
the next round, voted the same member out again at once, and cost that round another
``phase_timeout`` of the member's finality: every round of the game (on main, three drops
*withheld* in three rounds, two readmissions). Now it is readmitted once: a member readmitted
after such a stall and dropped so again is not readmitted (its readmission refused,
``bad_rejoin``), so nobody sponsors one, and it watches the rest of the game.
"""

from __future__ import annotations

import dataclasses

import pytest
from peer_helpers import signed_drops

from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.rules import Rules
from p2p_nertz.sim.collusion import FreezeBreaker, breaker_marks, simulate
from p2p_nertz.sim.network import QUICK_TIMERS, Faults, SimConfig

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)

LIAR, TARGET = 1, 0
VOTE_AT = 2.5
ROUNDS = 3


def _config(players: int, cheat: FreezeBreaker) -> SimConfig:
    faults = Faults(deck_cheats=breaker_marks([cheat]))
    return SimConfig(
        players=players,
        seed=0,
        rules=Rules(target=None, rounds=ROUNDS),
        faults=dataclasses.replace(
            faults, delay=0.005, jitter=0.003, reorder=0.05, loss=0.02, duplicate=0.02
        ),
        peer=QUICK_TIMERS,
        max_time=300.0,
        record_effects=True,
    )


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("breaks", [False, True], ids=["keeps-its-freeze", "breaks-its-freeze"])
def test_a_liar_voted_out_twice_over_its_vote_for_silence_does_not_rejoin(
    players: int, breaks: bool
) -> None:
    cheat = FreezeBreaker(LIAR, TARGET, VOTE_AT, breaks=breaks)
    result = simulate(_config(players, cheat), [cheat])
    assert result.finished
    assert result.violations == []
    drops = signed_drops(result)
    # Its votes for silence on the member the others hear: one per round it played.
    silent = [t for t, seat, v in drops if seat == LIAR and v.reason is DropReason.SILENT]
    # The others' votes withheld on it: a majority of them, in two waves (two drops), each
    # ``phase_timeout`` after a vote of its at the soonest.
    withheld = [(t, v.last_seq) for t, seat, v in drops if v.reason is DropReason.WITHHELD]
    assert all(v.seat == LIAR for _, _, v in drops if v.reason is DropReason.WITHHELD)
    waves = sorted({count for _, count in withheld})
    assert len(waves) == 2, waves
    assert len(silent) == 2
    for t, count in withheld:
        vote = max(v for v in silent if v <= t)
        assert t >= vote + QUICK_TIMERS.phase_timeout, (t, count)
    # Readmitted once: every readmission names one rejoin request, the one after its first
    # drop; nobody sponsored a second (no violation either: refused, it would be one).
    requests = {v.last_seq for _, _, v in drops if v.reason is DropReason.REJOIN}
    assert len(requests) == 1 and min(requests) > waves[0]
    assert not any(v.seat == TARGET for _, seat, v in drops if seat != LIAR)
    for seat, peer in enumerate(result.peers):
        if seat == LIAR:
            continue  # (the simulator stops once the honest members are over)
        assert peer is not None
        assert set(peer.final.dropped) == {LIAR}
        assert peer.final.stalled == frozenset({LIAR})
        assert peer.final.round.number == ROUNDS  # (the game played out, the liar watching)
        assert peer.final.game.result is not None
    # The audit folds the logs with the same rule: the liar out at the same cut, not readmitted.
    cuts = {p.final.dropped[LIAR] for s, p in enumerate(result.peers) if s != LIAR and p}
    report = result.audit
    assert report is not None and len(cuts) == 1
    assert dict(report.dropped) == {LIAR: cuts.pop()}
    assert {d.seat for d in report.drops} == {LIAR}
    findings = (*report.errors, *report.violations)
    assert {f.seat for f in findings if f.seat is not None and f.kind.accuses} <= {LIAR}
