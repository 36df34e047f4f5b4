"""A member that votes a member out and withdraws, over and over (the simulator's
``VoteFlapper``, :mod:`p2p_nertz.sim.cheats`; docs/protocol.md §9.2, *a member that flaps*).

Each vote and withdrawal is an event the cheater signs; one vote short of a majority, none
drops anyone; within the flap limit (protocol/flaps.py, 16 withdrawals against one member
a round) the honest peers must finish the game with every member in, and their folds
must answer what the membership events before each withdrawal decide
(``Roster.before_lift``, ``roster.lifted_trials``) as a fold from nothing would: the answers
are kept per lift and by the events they read, and each fold goes on from a kept fold of the
events before it (the roster's ``_Memo``, shared by its copies only), which must not change
them. At four players a partition (seats 0 and 1 apart from 2 and 3, 1 s to 6 s) makes
every member vote and withdraw once, seat 0 too, so that path is taken at every input; at
three the flapper's target is cut off from it alone (the two still hear each other through the
third). The figure for many flaps is ``scripts/bench_flap.py``'s, not a test's.
"""

from __future__ import annotations

import functools

import pytest

from p2p_nertz.protocol import roster as roster_module
from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.roster import Roster, lifted_trials
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, Partition, SimConfig, SimResult, run
from p2p_nertz.sim.cheats import VoteFlapper

# (Within the flap limit, protocol/flaps.py: the cheat's vote is withdrawn by the honest
# code too when the target is heard, so each flap may sign two withdrawals, and the partition
# adds one: 6 stays below 16 a round. Past it, the flapper is voted out: tests/test_flaps.py.)
FLAPS, TARGET = 6, 0

_PARTITIONS = {
    3: (frozenset({0, 1}), frozenset({1, 2})),  # (0 and 2 apart; 1 hears both)
    4: (frozenset({0, 1}), frozenset({2, 3})),
}


@functools.cache
def _game(players: int) -> SimResult:
    cheater = players - 1
    return run(
        SimConfig(
            players=players,
            seed=1,
            rules=Rules(target=None, rounds=1),
            faults=Faults(
                delay=0.005,
                jitter=0.002,
                partitions=(Partition(1.0, 6.0, _PARTITIONS[players]),),
                deck_cheats=(VoteFlapper(cheater, TARGET, FLAPS, 0.005, 0.5),),
            ),
            peer=QUICK_TIMERS,
            max_time=120.0,
        )
    )


@pytest.mark.parametrize("players", [3, 4])
def test_sim_vote_flapper_the_honest_peers_finish_with_everyone_in(players: int) -> None:
    result = _game(players)
    cheater = players - 1
    assert result.finished and result.violations == []
    for seat, peer in enumerate(result.peers):
        assert peer is not None
        if seat == cheater:
            continue
        assert peer.final.dropped == {}
        flaps = [
            body.reason
            for author, _, body in peer.final.roster.read
            if author == cheater and body is not None and body.seat == TARGET
        ]
        # Every flap was read: its votes and withdrawals on the target, one after the other.
        assert flaps.count(DropReason.SILENT) >= FLAPS
        assert flaps.count(DropReason.WITHDRAW) >= FLAPS


def _fresh(roster: Roster, seat: int) -> tuple[int | None, list[tuple[int, int]]]:
    """``before_lift`` and ``lifted_trials`` of ``roster`` with nothing kept from before."""
    fresh = roster.copy()
    fresh.memo = roster_module._Memo()
    return fresh.before_lift(seat), lifted_trials(fresh, seat)


def test_sim_vote_flapper_kept_answers_are_those_of_a_fold_from_nothing() -> None:
    result = _game(4)
    peer = result.peers[1]
    assert peer is not None
    roster = peer.final.roster
    assert len(roster.lifts.get(TARGET, ())) >= FLAPS  # (the path the memo serves is taken)
    kept = roster.before_lift(TARGET), lifted_trials(roster, TARGET)
    assert kept == _fresh(roster, TARGET)
    # And asked again once the answers are kept (the second ask reads them).
    assert (roster.before_lift(TARGET), lifted_trials(roster, TARGET)) == kept


def test_sim_vote_flapper_a_replay_goes_on_from_the_fold_of_the_ops_before() -> None:
    result = _game(4)
    peer = result.peers[1]
    assert peer is not None
    roster = peer.final.roster
    ops = roster.ops
    assert len(ops) > 2 * FLAPS
    # A copy that has folded only the first half, then all: the second fold goes on from
    # the first (kept in the replays its copies share) and must be the fold from nothing.
    half = roster.copy()
    half.ops = ops[: len(ops) // 2]
    half.memo = roster_module._Memo()
    half._without(TARGET, 0)
    whole = half.copy()
    whole.ops = ops
    went_on = whole._without(TARGET, 0)
    assert whole.memo is half.memo and len(half.memo.folds) == 1
    scratch = roster._replay(ops, {**roster.dropped, TARGET: 0}, {}, plain=True)
    assert (went_on.dropped, went_on.votes, went_on.frozen, went_on.ops) == (
        scratch.dropped,
        scratch.votes,
        scratch.frozen,
        scratch.ops,
    )


def _same(a: Roster, b: Roster) -> bool:
    return (a.dropped, a.votes, a.frozen, a.lifts, a.ops) == (
        b.dropped,
        b.votes,
        b.frozen,
        b.lifts,
        b.ops,
    )


def test_sim_vote_flapper_folds_asked_out_of_order_are_those_of_a_fold_from_nothing() -> None:
    result = _game(4)
    peer = result.peers[1]
    assert peer is not None
    roster = peer.final.roster
    ops = roster.ops
    third = len(ops) // 3
    # The same events in another order past the first third (a tentative fold's held events
    # before the final order is known), then the final order again, then a shorter prefix.
    other = (*ops[:third], ops[third + 1], ops[third], *ops[third + 2 :])
    assert other != ops
    memo = roster_module._Memo()
    for asked in (ops[: 2 * third], other, ops, ops[:third], other):
        went_on = roster_module._fold_on(memo, roster.origin, 4, asked, cuts={}, caps={})
        scratch = roster_module._fold_on(
            roster_module._Memo(), roster.origin, 4, asked, cuts={}, caps={}
        )
        assert _same(went_on, scratch)
    # One spine (the same cuts and caps), which kept folds of the prefixes asked and went on
    # from them: of the first third and of the order asked last.
    (spine,) = memo.folds.values()
    assert spine.ops == other
    assert [n for n, _ in spine.kept] == [third, len(ops)]


def test_sim_vote_flapper_a_fold_made_again_reads_the_answers_of_the_same_events() -> None:
    result = _game(4)
    peer = result.peers[1]
    assert peer is not None
    roster = peer.final.roster.copy()
    roster.memo = roster_module._Memo()
    kept = roster.before_lift(TARGET), lifted_trials(roster, TARGET)
    # A fold made again makes its withdrawals again: equal lifts, new objects, whose answers
    # by lift are not kept; those by the events before them are, and no fold is made again.
    again = roster.copy()
    again.lifts = {
        seat: tuple(tuple([*lift]) for lift in lifts) for seat, lifts in roster.lifts.items()
    }
    assert all(a is not b for a, b in zip(again.lifts[TARGET], roster.lifts[TARGET], strict=True))

    roster.memo.folds.clear()  # (any fold of membership events made again would be kept here)
    assert (again.before_lift(TARGET), lifted_trials(again, TARGET)) == kept
    assert roster.memo.folds == {}  # no fold made again
    # Held by the roster and its copies, not by the process: another roster reads none of it.
    assert again.memo is roster.memo and Roster(4).memo is not roster.memo
