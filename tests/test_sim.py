"""The simulator: real peer cores, bots, a seeded faulty network, and DESIGN.md §8 checked.

The many-seed test runs in a process pool over both cores; everything else is single runs.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

import pytest

from p2p_nertz.protocol.peer import PeerConfig
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Rules
from p2p_nertz.sim import (
    Crash,
    Equivocation,
    Faults,
    Partition,
    SimConfig,
    Simulation,
    check,
    run,
)

ONE_ROUND = Rules(target=None, rounds=1)
QUICK_DROP = PeerConfig(suspect_after=1.0, drop_after=3.0)


def _seeded(seed: int) -> tuple[int, int, int, list[str]]:
    """One seeded game of 2-3 players with random faults: (seed, players, faults injected,
    violations). Larger tables are soaked by scripts/soak.py and by the tests below."""
    rng = Rng(seed)
    players = 2 + rng.below(2)
    faults = Faults.random(rng, players, horizon=15.0)
    result = run(SimConfig(players=players, seed=seed, faults=faults, max_time=400.0))
    injected = faults.count + result.lost + result.duplicated
    return seed, players, injected, result.violations


def test_sim_fault_free_games_agree_for_every_table_size() -> None:
    for players in (1, 2, 3, 4, 5):
        result = run(SimConfig(players=players, seed=players))
        assert result.finished
        assert result.violations == []
        totals = {p.final.game.totals for p in result.peers if p is not None}
        assert len(totals) == 1


@pytest.mark.timeout(900)
def test_sim_hundreds_of_seeded_games_with_faults_hold_every_invariant() -> None:
    seeds = range(200)
    workers = min(2, os.cpu_count() or 1)
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(_seeded, seeds, chunksize=10))
    failures = [(seed, v) for seed, _, _, v in results if v]
    assert failures == [], f"replay with SimConfig(seed=...) — first: {failures[:3]}"
    assert sum(injected for _, _, injected, _ in results) > 1000  # faults really happened


def test_sim_same_seed_gives_the_same_logs_byte_for_byte() -> None:
    faults = Faults(loss=0.05, duplicate=0.05, reorder=0.1, crashes=(Crash(1, 4.0, 0.5),))
    first = run(SimConfig(players=3, seed=7, faults=faults))
    second = run(SimConfig(players=3, seed=7, faults=faults))
    other = run(SimConfig(players=3, seed=8, faults=faults))
    assert first.log_digest() == second.log_digest()
    assert first.log_digest() != other.log_digest()
    assert first.violations == second.violations == []


@pytest.mark.parametrize("cut", [0, 1, 2, 3])
def test_sim_peer_killed_mid_step_restarts_from_its_log_and_finishes(cut: int) -> None:
    # cut=1: the event is in the log but was never sent; restore must send it.
    crash = Crash(seat=0, at=3.0 + cut, restart_after=0.5, cut_effects=cut)
    result = run(SimConfig(players=3, seed=20 + cut, faults=Faults(crashes=(crash,))))
    assert result.crashes == 1
    assert result.finished
    assert result.violations == []


def test_sim_peer_killed_at_many_instants_always_finishes() -> None:
    for at in (0.0, 0.01, 0.5, 2.0, 7.5, 12.0):
        crash = Crash(seat=1, at=at, restart_after=1.0)
        result = run(SimConfig(players=3, seed=31, faults=Faults(crashes=(crash,))))
        assert result.finished, at
        assert result.violations == [], (at, result.violations)


def test_sim_silent_member_is_dropped_and_the_rest_finish() -> None:
    crash = Crash(seat=2, at=5.0, restart_after=None)
    result = run(SimConfig(players=3, seed=3, faults=Faults(crashes=(crash,)), peer=QUICK_DROP))
    assert result.finished
    assert result.violations == []
    survivors = [p for p in result.peers if p is not None]
    assert len(survivors) == 2
    for peer in survivors:
        assert 2 in peer.final.dropped
        assert peer.final.phase is Phase.OVER


def test_sim_partition_that_heals_before_the_drop_changes_nothing() -> None:
    split = Partition(4.0, 6.0, (frozenset({0, 1}), frozenset({2})))
    result = run(SimConfig(players=3, seed=5, faults=Faults(partitions=(split,)), peer=QUICK_DROP))
    assert result.finished
    assert result.violations == []
    assert all(not p.final.dropped for p in result.peers if p is not None)


def test_sim_minority_side_of_a_long_partition_is_dropped_without_split_brain() -> None:
    split = Partition(4.0, 30.0, (frozenset({0, 1, 2}), frozenset({3, 4})))
    result = run(SimConfig(players=5, seed=9, faults=Faults(partitions=(split,)), peer=QUICK_DROP))
    assert result.violations == []
    majority = [p for p in result.peers if p is not None and p.seat in (0, 1, 2)]
    for peer in majority:
        assert set(peer.final.dropped) == {3, 4}
        assert peer.final.phase is Phase.OVER


def test_sim_a_whole_game_to_the_target_under_faults() -> None:
    faults = Faults(loss=0.03, duplicate=0.03, reorder=0.1, crashes=(Crash(0, 20.0, 1.0),))
    result = run(SimConfig(players=3, seed=11, rules=Rules(target=40), faults=faults))
    assert result.finished
    assert result.violations == []
    peer = result.peers[1]
    assert peer is not None and peer.final.game.result is not None
    assert max(peer.final.game.totals) >= 40


def test_sim_equivocating_member_is_proven_and_dropped_by_every_honest_peer() -> None:
    cheat = Equivocation(seat=2, at=5.0, to=frozenset({0}))
    result = run(
        SimConfig(players=4, seed=3, faults=Faults(equivocations=(cheat,)), peer=QUICK_DROP)
    )
    assert result.finished
    assert result.violations == []
    honest = [p for p in result.peers if p is not None and p.seat != 2]
    cuts = {p.final.dropped.get(2) for p in honest}
    assert len(cuts) == 1 and None not in cuts


def test_sim_invariant_check_catches_disagreement() -> None:
    # The checker must be able to fail: forge a different round result into one peer.
    simulation = Simulation(SimConfig(players=2, seed=1))
    result = simulation.run()
    assert check(result) == []
    peer = result.peers[0]
    assert peer is not None
    number, digest, scores = peer.final.history[0]
    peer.final.history = ((number, digest, (scores[0] + 1, *scores[1:])),)
    assert any("split brain" in v for v in check(result))


def test_sim_lookahead_bots_play_over_the_network() -> None:
    result = run(
        SimConfig(players=3, seed=5, strategy="lookahead", faults=Faults(loss=0.05, reorder=0.1))
    )
    assert result.finished
    assert result.violations == []
