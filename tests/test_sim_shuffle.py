"""Whole simulated games of a shuffle game (docs/shuffle.md §10): real peer cores signing
their keys, stages, shares and secrets, bots playing, the invariants and the audit over every
log."""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules
from p2p_nertz.sim.network import SimConfig, run


@pytest.mark.parametrize(("players", "rounds"), [(2, 1), (3, 1), (4, 1), (2, 3)])
def test_sim_shuffle_a_fault_free_game_ends_with_every_card_opened_by_the_table(
    players: int, rounds: int
) -> None:
    result = run(
        SimConfig(
            players=players,
            seed=players * 10 + rounds,
            deal=Deal.SHUFFLE,
            rules=Rules(target=None, rounds=rounds),
        )
    )
    assert result.finished and result.violations == []
    finals = [p._final for p in result.peers if p is not None]
    assert len({f.digest() for f in finals}) == 1
    final = finals[0]
    assert final.violations == () and len(final.history) >= rounds
    for rs in (*final.past_rounds, final.round):
        deck = rs.deck
        assert deck is not None and deck.final is not None
        # Every position turned up was opened, to a card, by every member's share.
        assert set(deck.opened) == set(deck.turned) and None not in deck.opened.values()
        assert len(deck.secrets) == players
