"""A shuffle game's card opened by shares that a drop's cut disregards (docs/shuffle.md §9,
session 17), met first by soak seed 1711 with stages made from a delivered input and built
here on the tree as it is.

Seat 0 is cut off long enough for the others to vote it out at its last event they saw; seat 3,
cut off too before it votes, holds back the vote that decides the drop. Seat 0, heard again
first, sends its shares of the positions turned up while it was away: the tentative fold of a
player that holds no drop yet opens them, and its bot plays one (seed 2: seat 1's ``N>4``, onto
a work pile; seed 4: a claim of a Nerts card on the lake). In the order those shares are past
the cut, so the card is sealed where the move stands: every fold refused the move and the
audit named an honest player. The move's author held events of the member past its cut: the fold
reads it as a race lost to the cut (``RoundState._lost_to_cut``), without blame.

Since session 21 (protocol version 4, docs/shuffle.md §10.14) a move's turn-up shares travel as
``deck_reveal`` beats, never as events: seat 0's shares sent on its return are past no cut, and a
move on a card they open carries its opening. The game keeps its shape (seat 0 dropped at one
cut) and no honest player is named.
"""

from __future__ import annotations

import functools

import pytest

from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS
from p2p_nertz.sim.network import Faults, Partition, SimConfig, SimResult, run

pytestmark = pytest.mark.slow  # (a four-player game a seed: about 8 s of CPU each)

PLAYERS, CUT_OFF = 4, 1.5
SEEDS = (2, 4)  # (seeds 1 and 3: seat 1 plays no card opened so, and the game is clean)


@functools.cache
def _game(seed: int) -> SimResult:
    everyone = frozenset(range(PLAYERS))
    away = (
        Partition(CUT_OFF, CUT_OFF + 3.1, (frozenset({0}), everyone - {0})),
        # Seat 3 is cut off before it votes, until a second after seat 0 is heard again.
        Partition(CUT_OFF + 2.9, CUT_OFF + 4.1, (frozenset({3}), everyone - {3})),
    )
    return run(
        SimConfig(
            players=PLAYERS,
            seed=seed,
            rules=Rules(target=None, rounds=1),
            faults=Faults(delay=0.01, jitter=0.002, partitions=away),
            peer=QUICK_TIMERS,
            deal=Deal.SHUFFLE,
            max_time=400.0,
        )
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_sim_shuffle_cut_the_game_has_the_shape_of_the_fault(seed: int) -> None:
    """Seat 0 is dropped at one cut; it signed no share past it (its turn-up shares are beats,
    and the deal's face-up ones went long before)."""
    result = _game(seed)
    assert result.finished
    peers = [p for p in result.peers if p is not None]
    assert all(0 in p.final.dropped for p in peers)
    cuts = {p.final.dropped[0] for p in peers}
    assert len(cuts) == 1, cuts
    (cut,) = cuts
    for seat in (1, 2):
        held = peers[seat].events(0)
        assert len(held) > cut  # (it was heard again, past its cut)
        past = [m for m in held if m.seq > cut and m.kind is Kind.DECK_SHARES]
        assert not past, f"seat 0 signed shares past its cut, held by seat {seat}"


@pytest.mark.parametrize("seed", SEEDS)
def test_sim_shuffle_cut_a_card_opened_past_a_cut_is_no_honest_players_fault(seed: int) -> None:
    assert _game(seed).violations == []
