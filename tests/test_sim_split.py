"""Two sides of a split never finish with different results (issue 13, docs/protocol.md §9.3).

With two members left nobody can be voted out, so a member cut off from the other ends the game
with an abandon. Both sides of a partition may do so at once, each on what it holds. The fold
voids the round in progress and counts the rounds *every* abandon saw scored, so the union of
both sides' events gives one result; a side that cannot know what the other saw marks its
result provisional until it hears from it. Faults are tried at every length around the
liveness timers (shorter than ``suspect_after``, between the timers, longer than
``drop_after``, never healed), at two players and at three shrinking to two, as partitions,
freezes (a peer asleep: ``SIGSTOP``) and crashes.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from concurrent.futures import ProcessPoolExecutor

import pytest

from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import PeerConfig, Send
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import GameEnded, GameState, Notice, Phase
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Game, GameResult, Rules, Termination
from p2p_nertz.sim import (
    Crash,
    Faults,
    Freeze,
    Partition,
    SimConfig,
    SimResult,
    Simulation,
    audit_logs,
    run,
)
from p2p_nertz.sim.invariants import audit_result, outcomes, settled

QUICK = PeerConfig(suspect_after=1.0, drop_after=3.0, phase_timeout=6.0)
TWO_ROUNDS = Rules(target=None, rounds=2)
THREE_ROUNDS = Rules(target=None, rounds=3)


def _split(a: set[int], b: set[int]) -> tuple[frozenset[int], ...]:
    return (frozenset(a), frozenset(b))


def _results(result: SimResult) -> list[tuple[tuple[int, ...], bool]]:
    """Each live peer's (totals, provisional)."""
    return [(p.final.game.totals, p.provisional) for p in result.peers if p is not None]


def test_split_reproduction_both_sides_abandon_and_agree() -> None:
    """Issue 13's reproduction: seat 0 ended with (0, −26) and seat 1 with (−26, 0)."""
    faults = Faults(partitions=(Partition(10.0, 50.0, _split({0}, {1})),))
    result = run(SimConfig(players=2, rules=TWO_ROUNDS, seed=1, faults=faults))
    assert result.violations == []
    finals = [p.final for p in result.peers if p is not None]
    assert len(finals) == 2
    # Both abandoned (each on its side), and both count the same rounds: the one in progress
    # is void, nobody forfeits it.
    assert {f.abandoned for f in finals} == {(0, 1), (1, 0)}
    assert finals[0].game == finals[1].game
    assert finals[0].game.result is not None
    assert finals[0].game.result.termination is Termination.ABANDONED
    assert all(not f.round.forfeit for f in finals)
    assert result.audit is not None  # (the audit of every log run() made)
    assert finals[0].digest() == finals[1].digest() == result.audit.digest


@pytest.mark.parametrize("players", [2, 3])
@pytest.mark.parametrize("length", [0.5, 2.0, 5.0, 40.0])
def test_split_partitions_of_every_length_end_on_one_result(players: int, length: float) -> None:
    """Shorter than suspect_after (1 s), between the timers, past drop_after (3 s), long."""
    groups = _split({0}, set(range(1, players)))
    faults = Faults(partitions=(Partition(6.0, 6.0 + length, groups),))
    config = SimConfig(players=players, rules=TWO_ROUNDS, seed=7, faults=faults, peer=QUICK)
    result = run(config)
    assert result.violations == []
    seen = outcomes(result)
    if length < QUICK.drop_after:
        assert not seen & {"drop", "abandon"}  # nothing happened but suspicion
    elif players == 2:
        assert "abandon" in seen
    else:
        assert "drop" in seen  # the majority side dropped the lone seat


def test_split_three_players_shrink_to_two_then_partition() -> None:
    """A member crashes for good and is dropped; the two left are then cut off from each
    other for longer than drop_after: both abandon, one result."""
    faults = Faults(
        crashes=(Crash(2, 3.0, None),),
        partitions=(Partition(15.0, 60.0, _split({0}, {1})),),
    )
    config = SimConfig(players=3, rules=THREE_ROUNDS, seed=4, faults=faults, peer=QUICK)
    result = run(config)
    assert result.violations == []
    live = [p for p in result.peers if p is not None]
    assert all(2 in p.final.dropped for p in live)
    assert all(p.final.abandoned is not None for p in live)
    assert len({p.final.digest() for p in live}) == 1
    assert not any(p.provisional for p in live)


@pytest.mark.parametrize("duration", [0.5, 2.0, 4.0, 40.0])
def test_split_a_peer_asleep_wakes_to_the_same_result(duration: float) -> None:
    """SIGSTOP for shorter and longer than the timers, then SIGCONT: the one awake abandons
    past drop_after; the sleeper wakes, learns it, answers, and both agree."""
    faults = Faults(freezes=(Freeze(1, 5.0, duration),))
    config = SimConfig(players=2, rules=TWO_ROUNDS, seed=3, faults=faults, peer=QUICK)
    result = run(config)
    assert result.violations == []
    assert result.freezes == 1
    (a, b) = _results(result)
    assert a == b and not a[1]
    assert ("abandon" in outcomes(result)) == (duration > QUICK.drop_after)


def _result_sends(seed: int, rules: Rules) -> list[float]:
    """When each result event is sent in a fault-free run of this seed."""
    base = Simulation(SimConfig(players=2, rules=rules, seed=seed, record_effects=True)).run()
    times = []
    for at, _, effect in base.effects:
        if (
            isinstance(effect, Send)
            and effect.to is None
            and decode_message(effect.data, game_id=base.spec.game_id).kind is Kind.RESULT
        ):
            times.append(at)
    return times


#: How long the search of :func:`_generals` plays each try: every partition lasts longer.
_TRIAL = QUICK.drop_after * 3


def _generals(seed: int, length: float = 40.0) -> tuple[SimConfig, float]:
    """A partition of this seed's two-player game, lasting ``length``, that starts while the
    first round's results are in the air, such that one side holds the round scored and the
    other does not (:func:`_generals_start`)."""
    assert length > _TRIAL
    start = _generals_start(seed)
    return _generals_config(seed, start, start + length), start + length


def _generals_config(seed: int, start: float, heal: float) -> SimConfig:
    faults = Faults(partitions=(Partition(start, heal, _split({0}, {1})),))
    return SimConfig(players=2, rules=THREE_ROUNDS, seed=seed, faults=faults, peer=QUICK)


@functools.cache
def _generals_start(seed: int) -> float:
    """The first start found, on a grid of offsets around the result sends of a fault-free
    run, for :func:`_generals` (searched once a process, for every length: each try stops
    before the partition heals)."""
    for sent in _result_sends(seed, THREE_ROUNDS)[:2]:
        for offset in range(-8, 9):
            start = sent + offset * 0.001
            config = _generals_config(seed, start, start + 2 * _TRIAL)  # (healed after)
            early = Simulation(dataclasses.replace(config, max_time=start + _TRIAL)).run()
            if len({len(p.final.game.history) for p in early.peers if p is not None}) == 2:
                return start
    raise AssertionError(f"seed {seed}: no partition splits the first round's results")


def test_split_a_result_only_one_side_holds_is_provisional_until_they_meet() -> None:
    """The two generals: a partition starts while the round's last results are in the air, so
    one side holds the round scored and the other does not. Each abandons; the side that may
    count one round more says its result is provisional. Once they hear each other, both count
    the rounds both saw scored: the same result, settled, which is the union's."""
    config, heal = _generals(0)
    # Before the heal (the same run, stopped early): both abandoned, on different rounds, and
    # the side counting more says so.
    early = Simulation(dataclasses.replace(config, max_time=heal - 1.0)).run()
    views = {p.seat: (len(p.final.game.history), p.provisional) for p in early.peers if p}
    assert {rounds for rounds, _ in views.values()} == {0, 1}
    for rounds, provisional in views.values():
        assert provisional == (rounds == 1)
    assert all(p.final.abandoned is not None for p in early.peers if p)
    # The union of both sides' logs already decides: the fewest rounds.
    union = audit_logs(early).state
    assert union is not None and len(union.game.history) == 0
    # After the heal: both settled, on the union's result.
    result = run(config)
    assert result.violations == []
    finals = [p.final for p in result.peers if p is not None]
    assert all(not f.provisional for f in finals)
    assert len({f.digest() for f in finals}) == 1
    assert result.audit is not None  # (the audit of every log run() made)
    assert finals[0].digest() == result.audit.digest
    assert len(finals[0].game.history) == 0


@functools.cache
def _never_healed() -> SimResult:
    """The two generals' game of seed 0, the partition never healed, played once a process
    for the tests that read it (they only read it)."""
    config, _ = _generals(0, length=10_000.0)
    return run(dataclasses.replace(config, max_time=90.0))


def test_split_a_partition_that_never_heals_leaves_both_results_marked() -> None:
    """Never healed: each side ends, and every result that differs from the union's is
    marked provisional (the invariants hold every settled one to the union)."""
    result = _never_healed()
    assert result.violations == []  # (run() checked every invariant)
    assert result.audit is not None  # (the audit of every log run() made)
    union = result.audit.digest
    assert any(p is not None and p.provisional for p in result.peers)
    for p in result.peers:
        assert p is not None and p.final.abandoned is not None
        if p.final.digest() != union:
            assert p.provisional


#: The seeded games with long faults the suite plays (2 and 3 players), a sample of seeds
#: 0-39 (``scripts/scan_sim_seeds.py long`` plays any range: 0-59 by default). No seed of the
#: range was added for a fix: the range was a sweep. The sample holds every fault
#: ``Faults.random`` draws with ``long``, at both table sizes, each happening before the
#: game's end (the test checks it): two players 8 (a freeze, a crash never restarted; three
#: rounds), 26 (a partition, a crash, a long partition, a long crash restarted); three players
#: 3 (an equivocating member, a freeze, a long crash restarted that lost the end of its log),
#: 7 (a partition, a crash, a long crash restarted), 12 (a crash cutting 3, a long partition,
#: a long crash restarted), 15 (a long partition, a crash never restarted; two rounds).
#: Between them they drop, abandon and rejoin.
LONG_FAULT_SAMPLE = (3, 7, 8, 12, 15, 26)


def _long_faults_config(seed: int) -> SimConfig:
    return SimConfig.soak(seed, players=(2, 3))


def _long_faults_game(seed: int) -> tuple[int, list[str], set[str]]:
    result = run(_long_faults_config(seed))
    return seed, result.violations, outcomes(result)


def _long_faults_seen(result: SimResult) -> set[tuple[int, str]]:
    """(table size, fault) of each scheduled fault of a game with long faults: the short
    ones first (``Faults.random`` draws them first: a seed's short faults are those it draws
    without ``long``), then ``long partition``, ``freeze``, ``long crash`` (restarted),
    ``crash never restarted`` and ``lost own`` (a restart that lost the end of its log).
    Asserts that each happened: its start before the game's end, every crash and freeze
    counted."""
    config = result.config
    faults, players = config.faults, config.players
    rng = Rng(config.seed)
    rng.below(2)  # (the table size, ``SimConfig.soak``'s first draw)
    short = Faults.random(rng, players, horizon=15.0 * config.rules.rounds)
    assert short.partitions == faults.partitions[: len(short.partitions)]
    starts = [p.start for p in faults.partitions] + [c.at for c in faults.crashes]
    starts += [e.at for e in faults.equivocations] + [f.at for f in faults.freezes]
    assert all(at < result.time for at in starts), (config.seed, result.time)
    assert result.crashes == len(faults.crashes), config.seed
    assert result.freezes == len(faults.freezes), config.seed
    seen = {"partition"} if short.partitions else set()
    seen |= {"long partition"} if faults.partitions[len(short.partitions) :] else set()
    seen |= {"equivocation"} if faults.equivocations else set()
    seen |= {"freeze"} if faults.freezes else set()
    for index, crash in enumerate(faults.crashes):
        if index < len(short.crashes):
            seen.add("crash" if crash.cut_effects is None else f"cut {crash.cut_effects}")
        else:
            seen.add("long crash" if crash.restart_after is not None else "crash never restarted")
        if crash.lose_own:
            seen.add("lost own")
    return {(players, fault) for fault in seen}


def _soak_seed(seed: int) -> tuple[int, list[str]]:
    return seed, run(SimConfig.soak(seed)).violations


#: The soak seeds (scripts/soak.py, long faults) that found each fault fixed for issue 13; see
#: CHANGELOG. Each failed before its fix (under the rules before issue 15 changed how a
#: round plays: they now play other games, and stay as seeded games with long faults):
#: tables frozen for good, folds disagreeing with the union of the logs, an honest
#: member's violation. ``scripts/scan_sim_seeds.py soak`` replays them all; the suite, as they
#: no longer play the faults they found, a sample: every third (1216 in the test of its votes).
SOAK_SEEDS = (
    17,
    23,
    53,
    63,
    67,
    145,
    185,
    224,
    236,
    285,
    442,
    472,
    544,
    685,
    893,
    1216,
    1315,
    1520,
    1826,
    2370,
    2449,
)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_split_the_soak_seeds_that_found_a_fault_hold_every_invariant() -> None:
    workers = min(2, os.cpu_count() or 1)
    sample = [seed for seed in SOAK_SEEDS[::3] if seed != 1216]
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(_soak_seed, sample))
    assert [(seed, v) for seed, v in results if v] == []


@pytest.mark.slow  # (six games: some 4 s of CPU)
def test_split_seeded_games_with_long_faults_drop_abandon_rejoin_and_agree() -> None:
    """A soak in small (:data:`LONG_FAULT_SAMPLE`): every game has a fault around or past the
    timers; together they hold every fault of the mix at two and at three players, each
    happening, and drop, abandon and rejoin, with no violation. (scripts/soak.py runs
    thousands; ``scripts/scan_sim_seeds.py long`` these games on any range of seeds.)"""
    seen: set[tuple[int, str]] = set()
    met: set[str] = set()
    for seed in LONG_FAULT_SAMPLE:
        result = run(_long_faults_config(seed))
        assert result.violations == [], f"replay _long_faults_game({seed}): {result.violations}"
        seen |= _long_faults_seen(result)
        met |= outcomes(result)
    both = {"partition", "crash", "long partition", "freeze", "long crash", "crash never restarted"}
    assert {(2, f) for f in both} | {(3, f) for f in both | {"equivocation", "lost own"}} <= seen
    assert {"drop", "abandon", "rejoin"} <= met
    assert {1, 2, 3} == {_long_faults_config(seed).rules.rounds for seed in LONG_FAULT_SAMPLE}


def test_faults_random_long_keeps_the_short_draws_of_a_seed() -> None:
    """``long`` adds faults after the short ones: a seed's short faults do not change."""
    for seed in range(50):
        short = Faults.random(Rng(seed), 3, horizon=15.0)
        both = Faults.random(Rng(seed), 3, horizon=15.0, long=3.0)
        assert both.partitions[: len(short.partitions)] == short.partitions
        assert both.crashes[: len(short.crashes)] == short.crashes
        assert (both.delay, both.loss, both.equivocations) == (
            short.delay,
            short.loss,
            short.equivocations,
        )
        assert short.freezes == ()
        extra = both.count - short.count
        assert extra >= 1  # every game gets at least one fault around the timers


def test_split_audit_names_a_provisional_difference_as_a_notice_and_the_union_decides() -> None:
    """The logs of a partition that never healed, one side provisional: the audit folds each
    log alone, names where they part as a notice (the side said its result was not known), and
    the union's result is the game's."""
    result = _never_healed()
    report = audit_result(result)
    kinds = [v.kind for v in report.violations]
    assert FindingKind.PROVISIONAL_SPLIT in kinds
    assert FindingKind.SPLIT_RESULT not in kinds
    assert report.valid
    finals = settled(result)
    assert finals  # (the side that was not provisional)
    assert {f.game.totals for f in finals} == {report.totals}
    assert {f.digest() for f in finals} == {report.digest}


def test_split_a_member_that_is_out_casts_no_votes() -> None:
    """Soak seed 1216: a member dropped in its own fold voted another out for withholding at
    every step (its rejoin request cleared the vote each time): ten thousand votes."""
    result = run(SimConfig.soak(1216))
    assert result.violations == []  # (one of SOAK_SEEDS)
    seats = {pid: seat for seat, pid in enumerate(result.spec.peer_ids)}
    votes = [0] * result.config.players
    seen: set[bytes] = set()
    for log in result.logs:
        for wire in log:
            message = decode_message(wire, game_id=result.spec.game_id, roster=seats)
            if message.kind is Kind.DROP and message.id not in seen:
                seen.add(message.id)
                votes[seats[message.author]] += 1
    assert max(votes) < 20, votes


def test_split_an_extra_round_nobody_left_can_play_keeps_the_tie() -> None:
    """Soak seed 1777 (before the rules of issue 15 changed its game): two members tied on top
    after the last round, both dropped by the other side of a long partition; the extra round
    between them started with no seat and waited for good. The fold keeps the tie: the win is
    shared. (Driven on the fold itself: a soak seed that reaches this moves with every change
    of play.)"""
    ids = [Identity.generate(bytes([i]) * 32).peer_id for i in range(3)]
    spec = GameSpec.create([(pid, f"p{i}") for i, pid in enumerate(ids)], TWO_ROUNDS, b"tie")
    state = GameState(spec)
    state.game = Game(TWO_ROUNDS, 3).record((4, 4, -2)).record((1, 1, 3))
    assert state.game.teams_next_round() == (0, 1)
    state.dropped = {0: 30, 1: 28}  # both tied players gone
    notices: list[Notice] = []
    state._new_round(notices)  # (what the fold does once the last round is recorded)
    assert state.phase is Phase.OVER
    outcome = state.game.result
    assert outcome is not None and outcome.termination is Termination.SHARED
    assert outcome.winners == (0, 1)
    assert [n for n in notices if isinstance(n, GameEnded)] == [GameEnded(outcome)]
    # One tied player still in: it has won the tie, no round played (session 42, §8.9:
    # before, it played the extra round alone for a result known at its start).
    state = GameState(spec)
    state.game = Game(TWO_ROUNDS, 3).record((4, 4, -2)).record((1, 1, 3))
    state.dropped = {0: 30}
    notices = []  # (a new list: mypy keeps the first one's type)
    state._new_round(notices)
    assert state.phase is Phase.OVER and state.unopposed and state.round.number == 0
    outcome = state.game.result
    assert outcome == GameResult((1,), (5, 5, 1), Termination.ABSENCE)
    assert [n for n in notices if isinstance(n, GameEnded)] == [GameEnded(outcome)]
    # Alone in the game too (two players, the other voted out on proof, §9.3): the one left
    # is tied, so it wins the tie (before, the tie was shared there, `ended_early`).
    spec = GameSpec.create([(pid, f"p{i}") for i, pid in enumerate(ids[:2])], TWO_ROUNDS, b"tie")
    state = GameState(spec)
    state.game = Game(TWO_ROUNDS, 2).record((4, 4)).record((1, 1))
    state.dropped = {0: 30}
    state._new_round([])
    assert state.phase is Phase.OVER and state.unopposed
    assert state.game.result == GameResult((1,), (5, 5), Termination.ABSENCE)
