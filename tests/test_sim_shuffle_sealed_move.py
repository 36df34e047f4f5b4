"""A voter that moves a card nobody opened (docs/shuffle.md §9, §11; the simulator's
``sealed_move``, :mod:`p2p_nertz.sim.cheats`).

Seat 0 is cut off long enough for the others to vote it out; the last seat, cut off too before
its vote reaches the others, holds back the vote that decides the drop (the shape of
``tests/test_sim_shuffle_cut.py``). Meanwhile seat 1, a voter, turns its stock and plays the
card it turned before any share of it can reach it: the card is sealed in every fold. Its
frontier announces no more of seat 0 than its vote counts (§9.2 of protocol.md), nothing past
the cut: the fold refuses the move with blame, and the audit names seat 1. Before session 18
the fold read a voter as holding seat 0's events past the cut once any was read
(``Roster.saw_cut``): the move was a race lost to the cut, and nobody was named.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest

from p2p_nertz.audit import FindingKind
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import RefusalCode
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS
from p2p_nertz.sim.cheats import DeckCheat, DeckCheatKind
from p2p_nertz.sim.network import Faults, Partition, SimConfig, SimResult, run

pytestmark = pytest.mark.slow  # (about 8 s of CPU a game)

CUT_OFF, CHEATER, SEED = 1.5, 1, 2


@functools.cache
def _game(players: int, seed: int) -> SimResult:
    everyone = frozenset(range(players))
    last = players - 1
    away = (
        Partition(CUT_OFF, CUT_OFF + 3.1, (frozenset({0}), everyone - {0})),
        Partition(CUT_OFF + 2.9, CUT_OFF + 4.1, (frozenset({last}), everyone - {last})),
    )
    return run(
        SimConfig(
            players=players,
            seed=seed,
            rules=Rules(target=None, rounds=1),
            faults=Faults(
                delay=0.01,
                jitter=0.002,
                partitions=away,
                deck_cheats=(DeckCheat(CHEATER, DeckCheatKind.SEALED_MOVE),),
            ),
            # (No deck_want: the shape is built on the timers, and the asks for seat 0's
            # shares and their answers, 540 shares asked at 4 players with want_after 0.5 s,
            # move it: the voters then hear seat 0 again and withdraw before the drop is
            # decided. That is the rule for a member heard again, not this test's subject.)
            peer=dataclasses.replace(QUICK_TIMERS, want_after=1e9),
            deal=Deal.SHUFFLE,
            max_time=400.0,
        )
    )


@pytest.mark.parametrize("players", [3, 4])
def test_sim_shuffle_sealed_move_a_voters_move_on_a_sealed_card_is_named(players: int) -> None:
    result = _game(players, SEED)
    assert result.finished and result.violations == []
    for peer in result.peers:
        assert peer is not None and 0 in peer.final.dropped
        codes = {(v.seat, v.code) for v in peer.final.violations}
        assert codes == {(CHEATER, RefusalCode.ILLEGAL_MOVE)}
    report = result.audit
    assert report is not None
    assert [(f.kind, f.seat, f.event) for f in report.errors] == [
        (FindingKind.ILLEGAL_MOVE, CHEATER, "move")
    ]
    assert 0 in {seat for seat, _ in report.dropped}
