"""The pace of a shuffle deal: a member makes its stage once its input is delivered, one hop
after the input was sent, not once the input is final (docs/shuffle.md §4.3)."""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.bodies import DeckEvent, parse_body
from p2p_nertz.protocol.effects import Send
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules
from p2p_nertz.sim.network import Faults, SimConfig, Simulation

DELAY = 0.01


def _stages_sent(players: int, seed: int) -> dict[tuple[int, int], float]:
    """When each ``(deck, stage)`` was first sent, in a fault-free game of a fixed delay (the
    simulation stops soon after the deal: play is not looked at)."""
    result = Simulation(
        SimConfig(
            players=players,
            seed=seed,
            faults=Faults(delay=DELAY, jitter=0.0),
            rules=Rules(target=None, rounds=1),
            deal=Deal.SHUFFLE,
            record_effects=True,
            max_time=1.0,
        )
    ).run()
    sent: dict[tuple[int, int], float] = {}
    for now, _, effect in result.effects:
        if isinstance(effect, Send) and effect.to is None:
            message = decode_message(effect.data)
            if message.kind is Kind.DECK_STAGE:
                body = parse_body(message.kind, message.body, result.spec.seats)
                assert isinstance(body, DeckEvent)
                stage = body.message
                sent.setdefault((stage.deck, stage.stage), now)  # type: ignore[union-attr]
    return sent


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 2), (4, 3)])
def test_sim_deal_each_stage_follows_its_input_by_one_hop(players: int, seed: int) -> None:
    sent = _stages_sent(players, seed)
    assert len(sent) == players * players  # every deck through every member
    for (deck, stage), at in sent.items():
        if stage:
            assert at - sent[(deck, stage - 1)] == pytest.approx(DELAY, abs=1e-9), (deck, stage)
