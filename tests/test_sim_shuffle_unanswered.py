"""A dealer that withholds its answer to a complaint and signs no stage or secret after it
(docs/shuffle.md §6.3, §7.3; the simulator's ``unanswered`` and ``play_complaint``).

The last seat complains of seat 0's box once play has begun, after seat 0's last stage (a
complaint only a modified client makes so late: an honest member complains of a bad box as
the deal begins, before its own first stage, which every last stage of another dealer holds in
its past). Seat 0 never answers and never reveals its secret: it signs no event of the kinds
the audit read before session 18 (a stage whose input came after the complaint, its
``deck_open``), and was named by no finding, only voted out *withheld*. It goes on sharing the
cards turned up, and a dealer answers before any share it signs holding the complaint
(``Duties``: its shares wait while its held fold owes the answer): its shares prove the answer
withheld. An honest dealer answers, and is named by nothing.
"""

from __future__ import annotations

import functools

import pytest

from p2p_nertz.audit import AuditReport, FindingKind
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, SimConfig, SimResult, run
from p2p_nertz.sim.cheats import DeckCheat, DeckCheatKind

pytestmark = pytest.mark.slow  # (1 to 3 s of CPU a game)

#: a seed per table size whose games are short (as tests/test_sim_shuffle_cheats.py)
_SEEDS = {3: 3, 4: 5}
DEALER = 0


@functools.cache
def _game(players: int, silent: bool, delay: float = 0.005) -> tuple[SimResult, AuditReport]:
    cheats = [DeckCheat(players - 1, DeckCheatKind.PLAY_COMPLAINT)]
    if silent:
        cheats.append(DeckCheat(DEALER, DeckCheatKind.UNANSWERED))
    result = run(
        SimConfig(
            players=players,
            seed=_SEEDS[players],
            deal=Deal.SHUFFLE,
            rules=Rules(target=None, rounds=1),
            peer=QUICK_TIMERS,
            faults=Faults(deck_cheats=tuple(cheats), delay=delay),
            max_time=200.0,
        )
    )
    assert result.audit is not None
    return result, result.audit


@pytest.mark.parametrize("players", [3, 4])
def test_sim_shuffle_unanswered_a_dealer_silent_after_a_complaint_is_named(players: int) -> None:
    result, report = _game(players, silent=True)
    assert result.finished and result.violations == []
    complainer = players - 1
    for peer in result.peers:
        assert peer is not None
        final = peer.final
        assert DEALER in final.dropped and not final.violations
        rs = final.past_rounds[-1] if final.past_rounds else final.round
        deck = rs.deck
        assert deck is not None and deck.unanswered() == [(DEALER, complainer)]
        # (its own feed: no answer, no secret)
        kinds = {m.kind.name for m in peer.events(DEALER)}
        assert not kinds & {"DECK_ANSWER", "DECK_OPEN"}
    assert DEALER in {seat for seat, _ in report.dropped}
    (withheld,) = report.errors
    assert withheld.kind is FindingKind.WITHHELD_ANSWER and withheld.seat == DEALER
    assert withheld.event == "deck_shares" and withheld.round == 1


@pytest.mark.parametrize("players", [3, 4])
def test_sim_shuffle_unanswered_an_honest_dealer_answers_and_is_not_named(players: int) -> None:
    """Slow links (0.3 s one way): the complaint takes long to be final at the dealer while
    cards are turned up. Its shares wait for its answer; without the wait it signed shares
    holding the complaint unanswered, and was named (both table sizes)."""
    result, report = _game(players, silent=False, delay=0.3)
    assert result.finished and result.violations == []
    for peer in result.peers:
        assert peer is not None
        final = peer.final
        assert not final.dropped and not final.violations
        rs = final.past_rounds[-1] if final.past_rounds else final.round
        deck = rs.deck
        assert deck is not None and list(deck.complaints) == [(DEALER, players - 1)]
        assert deck.unanswered() == []
    assert not report.errors and not report.dropped
