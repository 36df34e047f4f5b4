"""The soak's count of hand-ons in play (``sim.probes.count_hand_ons``; docs/protocol.md §9.2,
*Handed on in play*): it counts what ``protocol/relays.py`` did, and puts every class back."""

from __future__ import annotations

import dataclasses

from p2p_nertz.protocol.last_words import LastWords
from p2p_nertz.protocol.relays import Relays
from p2p_nertz.rules import Rules
from p2p_nertz.sim import SimResult
from p2p_nertz.sim.collusion import Withholder, game, simulate
from p2p_nertz.sim.network import QUICK_TIMERS, Faults, SimConfig
from p2p_nertz.sim.probes import HandOns, count_hand_ons


def _started(result: SimResult) -> int:
    """The (member, voter) pairs every peer hands on at the game's end."""
    return sum(
        len(voters)
        for peer in result.peers
        if peer is not None
        for voters in peer._delivery.words.to.values()
    )


def test_a_link_failing_one_way_is_counted_handed_on() -> None:
    """``two_withhold`` seed 416 at three players as a link failing one way (seat 2 to seat 0,
    the case of ``test_sim_withhold_in_play``): seat 0 votes seat 2 out for silence, seat 1
    hands seat 2's beats on; the probe counts that one hand-on and the beats it sent."""
    config, cheats = game("two_withhold", 416, 3, 3)
    config = dataclasses.replace(config, faults=dataclasses.replace(config.faults, deck_cheats=()))
    w = cheats[0]
    assert isinstance(w, Withholder)
    with count_hand_ons() as counts:
        result = simulate(config, [Withholder(w.seat, w.victim, w.at, None)], links=True)
    assert result.finished, result.violations
    assert _started(result) == 1
    assert counts.started == 1
    assert counts.at_once >= 1 and counts.in_play >= 1
    assert counts.messages == counts.at_once + counts.in_play


def test_a_game_without_faults_counts_nothing_and_the_classes_are_put_back() -> None:
    """No vote for silence, nothing handed on; after the block ``Relays`` and ``LastWords``
    have their own methods again."""
    before = (Relays.__dict__["vote"], Relays.__dict__["note"], LastWords.__dict__["note"])
    config = SimConfig(
        players=3,
        seed=7,
        rules=Rules(target=None, rounds=1),
        faults=Faults(),
        peer=QUICK_TIMERS,
        max_time=120.0,
    )
    with count_hand_ons() as counts:
        result = simulate(config, ())
    assert result.finished, result.violations
    assert counts == HandOns()
    assert _started(result) == 0
    after = (Relays.__dict__["vote"], Relays.__dict__["note"], LastWords.__dict__["note"])
    assert after == before
