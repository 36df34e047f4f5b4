"""The simulator: real peer cores, bots, a seeded faulty network, and DESIGN.md §8 checked.

The seeded games are a sample that holds every fault of the short mix;
``scripts/scan_sim_seeds.py seeded`` plays them on any range of seeds.
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.envelope import decode_message
from p2p_nertz.protocol.peer import PeerConfig
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import Rng
from p2p_nertz.rules import NERTS_PILE_SIZE, Rules, Termination
from p2p_nertz.sim import (
    Crash,
    Equivocation,
    Faults,
    Partition,
    SimConfig,
    SimResult,
    Simulation,
    check,
    run,
)

ONE_ROUND = Rules(target=None, rounds=1)
QUICK_DROP = PeerConfig(suspect_after=1.0, drop_after=3.0)


#: The seeded games the suite plays, a sample of seeds 0-59 (``scripts/scan_sim_seeds.py
#: seeded`` plays any range: 0-199 by default). No seed of the range was added for a fix: the
#: range was a sweep. The sample holds every fault ``Faults.random``'s short mix draws, at both
#: table sizes it draws, each fault happening before the game's end (the test checks it): two
#: players 6 (a crash cutting 1 effect, a partition), 10 (a crash), 39 (a crash cutting 2),
#: 53 (a crash cutting 0, a partition); three players 12 (a crash cutting 3), 17 (an
#: equivocating member, a partition), 44 (a crash). Both sizes lose and duplicate messages.
SEEDED_SAMPLE = (6, 10, 12, 17, 39, 44, 53)


def _seeded_config(seed: int) -> SimConfig:
    """The seeded game of ``seed``: 2-3 players with random short faults. Larger tables are
    soaked by scripts/soak.py and by the tests below."""
    rng = Rng(seed)
    players = 2 + rng.below(2)
    faults = Faults.random(rng, players, horizon=15.0)
    return SimConfig(players=players, seed=seed, faults=faults, max_time=400.0)


def _seeded(seed: int) -> tuple[int, int, int, list[str]]:
    """One seeded game (:func:`_seeded_config`): (seed, players, faults injected,
    violations)."""
    config = _seeded_config(seed)
    result = run(config)
    injected = config.faults.count + result.lost + result.duplicated
    return seed, config.players, injected, result.violations


def _short_faults_seen(result: SimResult) -> set[tuple[int, str]]:
    """(table size, fault) of each scheduled fault of a seeded game: ``partition``,
    ``crash`` (restarted; ``cut N``: mid-step, ``N`` effects unsent) and ``equivocation``.
    Asserts that each happened: its start before the game's end, every crash counted."""
    faults, players = result.config.faults, result.config.players
    starts = [p.start for p in faults.partitions] + [c.at for c in faults.crashes]
    starts += [e.at for e in faults.equivocations]
    assert all(at < result.time for at in starts), (result.config.seed, result.time)
    assert result.crashes == len(faults.crashes), result.config.seed
    seen = {(players, "partition")} if faults.partitions else set()
    if faults.equivocations:
        seen.add((players, "equivocation"))
    for crash in faults.crashes:
        cut = crash.cut_effects
        seen.add((players, "crash" if cut is None else f"cut {cut}"))
    return seen


def test_sim_fault_free_games_agree_for_every_table_size() -> None:
    for players in (1, 2, 3, 4, 5):
        result = run(SimConfig(players=players, seed=players))
        assert result.finished
        assert result.violations == []
        totals = {p.final.game.totals for p in result.peers if p is not None}
        assert len(totals) == 1


@pytest.mark.slow  # (seven games: some 4 s of CPU)
def test_sim_seeded_games_with_every_short_fault_hold_every_invariant() -> None:
    """A sample of the seeded games (:data:`SEEDED_SAMPLE`): every short fault at two and at
    three players, each happening, every crash's cut of 0 to 3 effects, loss and duplicates
    at both sizes; no violation of DESIGN.md §8."""
    seen: set[tuple[int, str]] = set()
    for seed in SEEDED_SAMPLE:
        result = run(_seeded_config(seed))
        assert result.violations == [], f"replay with SimConfig(seed={seed}): {result.violations}"
        seen |= _short_faults_seen(result)
        if result.lost:
            seen.add((result.config.players, "loss"))
        if result.duplicated:
            seen.add((result.config.players, "duplicate"))
    every = {"partition", "crash", "loss", "duplicate"}
    assert {(2, f) for f in every} | {(3, f) for f in every | {"equivocation"}} <= seen
    assert {f"cut {n}" for n in range(4)} <= {f for _, f in seen}


def test_sim_same_seed_gives_the_same_logs_byte_for_byte() -> None:
    faults = Faults(loss=0.05, duplicate=0.05, reorder=0.1, crashes=(Crash(1, 4.0, 0.5),))
    first = run(SimConfig(players=3, seed=7, faults=faults))
    second = run(SimConfig(players=3, seed=7, faults=faults))
    other = Simulation(SimConfig(players=3, seed=8, faults=faults)).run()  # (only its logs read)
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
        # Dropped during play: it forfeits the round, as a seat caught cheating would.
        (score,) = peer.final.scores
        assert score.players[2].total == -NERTS_PILE_SIZE * ONE_ROUND.nerts_card_penalty
        assert 2 in peer.final.round.forfeit


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


# Forks at different seqs, each seen by different peers: the cheater goes on with its real
# chain for everyone, and signs another event under its next seq for some peers only. A short
# partition (healed before anyone is voted out for silence) keeps a first fake's holders from
# hearing of the real version until a later fork has been found by others.
FORKS = [
    pytest.param(3, 0, ((4.0, {1}),), (), 41, id="3p-one-peer-holds-the-fake"),
    pytest.param(
        4, 3, ((3.0, {0}), (3.5, {1})), ((2.98, 5.2, {0}),), 41, id="4p-two-forks-two-peers"
    ),
    pytest.param(
        5, 2, ((2.0, {0, 1}), (2.5, {4})), ((1.98, 4.2, {0, 1}),), 41, id="5p-forks-both-sides"
    ),
]


@pytest.mark.parametrize(("players", "cheater", "forks", "splits", "seed"), FORKS)
def test_sim_forks_at_different_seqs_are_cut_alike_and_the_game_ends(
    players: int,
    cheater: int,
    forks: tuple[tuple[float, set[int]], ...],
    splits: tuple[tuple[float, float, set[int]], ...],
    seed: int,
) -> None:
    cheats = tuple(Equivocation(cheater, at, frozenset(to)) for at, to in forks)
    everyone = frozenset(range(players))
    partitions = tuple(
        Partition(start, end, (frozenset(side), everyone - frozenset(side)))
        for start, end, side in splits
    )
    faults = Faults(loss=0.02, reorder=0.1, equivocations=cheats, partitions=partitions)
    result = run(SimConfig(players=players, seed=seed, faults=faults, peer=QUICK_DROP))
    assert result.finished
    assert result.violations == []  # every invariant, the audit of every log included
    # Each fake really forked the feed, each at its own seq, held by some peers, not others.
    versions: dict[int, set[bytes]] = {}
    for log in result.logs:
        for wire in log:
            message = decode_message(wire)
            if message.is_event and result.spec.seat_of(message.author) == cheater:
                versions.setdefault(message.seq, set()).add(message.id)
    forked = sorted(seq for seq, ids in versions.items() if len(ids) > 1)
    assert len(forked) == len(forks)
    honest = [p for p in result.peers if p is not None and p.seat != cheater]
    cuts = {p.final.dropped.get(cheater) for p in honest}
    assert len(cuts) == 1
    (cut,) = cuts
    assert cut is not None
    # One chain counts, the same everywhere, and every honest peer holds it up to the cut.
    assert len({tuple(m.id for m in p.events(cheater)[:cut]) for p in honest}) == 1
    assert all(p.held(cheater) >= cut for p in honest)
    assert all(not p.final.dropped.keys() - {cheater} for p in honest)
    assert all(v.seat == cheater for p in honest for v in p.final.violations)


def test_sim_two_players_one_gone_for_good_the_other_abandons() -> None:
    crash = Crash(seat=1, at=6.0, restart_after=None)
    config = SimConfig(
        players=2, seed=12, rules=Rules(target=60), faults=Faults(crashes=(crash,)), peer=QUICK_DROP
    )
    result = run(config)
    assert result.finished
    assert result.violations == []
    peer = result.peers[0]
    assert peer is not None and result.peers[1] is None
    state = peer.final
    assert state.phase is Phase.OVER and 1 in state.dropped
    assert state.game.result is not None
    assert state.game.result.termination is Termination.ABANDONED
    # The round in progress is void (§9.3): nobody scores it, nobody forfeits; the game ends
    # on the rounds scored before it, and the result is settled (no round to disagree on).
    assert state.round.number == len(state.game.history) + 1
    assert state.round.forfeit == frozenset()
    assert state.game.totals == tuple(map(sum, zip(*state.game.history, strict=True))) or (
        state.game.totals == (0, 0) and not state.game.history
    )
    assert not peer.provisional
    best = max(state.game.totals)
    assert state.game.result.winners == tuple(
        t for t, total in enumerate(state.game.totals) if total == best
    )


@pytest.mark.parametrize(
    "faults",
    [
        pytest.param(Faults(crashes=(Crash(2, 5.0, 8.0),)), id="restarts-from-its-log"),
        pytest.param(
            Faults(partitions=(Partition(5.0, 12.0, (frozenset({0, 1}), frozenset({2}))),)),
            id="partition-heals",
        ),
    ],
)
def test_sim_dropped_member_rejoins_at_the_next_round(faults: Faults) -> None:
    config = SimConfig(
        players=3, seed=6, rules=Rules(target=None, rounds=2), faults=faults, peer=QUICK_DROP
    )
    result = run(config)
    assert result.finished
    assert result.violations == []
    for peer in result.peers:
        assert peer is not None
        state = peer.final
        assert state.phase is Phase.OVER
        assert not state.dropped  # back in the game
        ((cut, request),) = state.gaps[2]  # its events in between never counted
        assert request > cut
        first, second = state.scores
        assert first.players[2].total == -NERTS_PILE_SIZE * config.rules.nerts_card_penalty
        assert second.players[2].played  # it played the next round


@pytest.mark.parametrize(
    ("seed", "low", "high"),
    [
        pytest.param(1716, 3, 5, id="cheater-dropped-while-everyone-left-is-stuck"),
        pytest.param(132, 3, 5, id="restart-with-both-versions-in-its-log"),
        pytest.param(635, 3, 5, id="fake-timed-below-what-a-peer-made-final"),
        pytest.param(462, 2, 5, id="move-made-before-seeing-a-rotation"),
    ],
)
def test_sim_soak_seeds_hold_every_invariant(seed: int, low: int, high: int) -> None:
    # Seeds a soak once failed on (scripts/soak.py draws the table size from a range; cheats
    # on), replayed as it draws them.
    rng = Rng(seed)
    players = low + rng.below(high - low + 1)
    faults = Faults.random(rng, players, horizon=15.0, cheats=True)
    result = run(SimConfig(players=players, seed=seed, faults=faults, max_time=400.0))
    assert result.finished
    assert result.violations == []


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


def test_sim_invariant_check_audits_every_log() -> None:
    # The check reads the logs as `nertz audit` does: a record no honest peer could have
    # logged (a bit flipped in a signed event, or a log that lost an event) is named.
    result = Simulation(SimConfig(players=3, seed=1)).run()
    assert check(result) == []
    log = result.logs[1]
    wire = bytearray(log[len(log) // 2])
    wire[-1] ^= 1
    log[len(log) // 2] = bytes(wire)
    problems = check(result)
    assert problems and all(p.startswith("validity: ") for p in problems), problems
    assert any("bad_signature" in p or "malformed" in p for p in problems), problems


def test_sim_lookahead_bots_play_over_the_network() -> None:
    result = run(
        SimConfig(players=3, seed=5, strategy="lookahead", faults=Faults(loss=0.05, reorder=0.1))
    )
    assert result.finished
    assert result.violations == []
