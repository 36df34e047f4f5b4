"""A dealer that withholds its answer to a complaint and signs no stage or secret after it
(docs/shuffle.md §6.3, §7.3; the simulator's ``unanswered``, ``silent_dealer`` and
``play_complaint``).

The last seat complains of seat 0's box once play has begun, after seat 0's last stage (a
complaint only a modified client makes so late: an honest member complains of a bad box as
the deal begins, before its own first stage, which every last stage of another dealer holds in
its past). Seat 0 never answers and never reveals its secret: it signs no event of the kinds
the audit read before session 18 (a stage whose input came after the complaint, its
``deck_open``), and was named by no finding, only voted out *withheld*. ``unanswered`` goes on
sharing the cards turned up: a dealer answers before any share it signs holding the
complaint (``Duties``: its shares wait while its held fold owes the answer), so its shares
prove the answer withheld, or its moves do, whichever comes first. ``silent_dealer`` lets its
shares wait, as an honest dealer's do, and only plays (session 19): an honest dealer answers
every complaint its final fold holds in the act that made it final, before anything else it
signs (``Author.act``), so a move whose causal past proves the dealer's final fold held the
complaint proves the answer withheld. An honest dealer answers, and is named by nothing.

In these games both cheats are named on a move (a claim at four players): the shares of a
turn-up travel in ``deck_reveal`` beats, which no finding reads, and with nobody dropped the
dealer owes no share in its feed once play has begun. So no test here guards the wait of the
dealer's shares (session 30: with ``_answer_held`` answering no, every test of this file
passes, at three and four players, at both delays); the games where a dealer owes feed shares
after a complaint, the partials of a member dropped, do
(``test_sim_shuffle_dealer_votes.py``'s silent dealers after a drop, then named on
``deck_shares`` instead of a move, a mute dealer's refused shares;
``test_sim_freeze_beats.py``'s honest dealer held back by a noted debt).
"""

from __future__ import annotations

import functools

import pytest
from sim_games import shuffled_game

from p2p_nertz.audit import AuditReport, FindingKind
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, SimConfig, SimResult, run
from p2p_nertz.sim.cheats import DeckCheat, DeckCheatKind

pytestmark = pytest.mark.slow  # (1 to 3 s of CPU a game)

DEALER = 0


@functools.cache
def _game(
    players: int, silent: DeckCheatKind | None, delay: float = 0.005
) -> tuple[SimResult, AuditReport]:
    cheats = [DeckCheat(players - 1, DeckCheatKind.PLAY_COMPLAINT)]
    if silent is not None:
        cheats.append(DeckCheat(DEALER, silent))
    return shuffled_game(players, Faults(deck_cheats=tuple(cheats), delay=delay))


#: the events of the dealer's that prove it: its shares, or a move (whichever comes first)
_PROOFS = {
    DeckCheatKind.UNANSWERED: {"deck_shares", "move", "claim", "stuck"},
    DeckCheatKind.SILENT_DEALER: {"move", "claim", "stuck"},
}


@pytest.mark.parametrize("cheat", [DeckCheatKind.UNANSWERED, DeckCheatKind.SILENT_DEALER])
@pytest.mark.parametrize("players", [3, 4])
def test_sim_shuffle_unanswered_a_dealer_silent_after_a_complaint_is_named(
    players: int, cheat: DeckCheatKind
) -> None:
    result, report = _game(players, cheat)
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
    assert withheld.event in _PROOFS[cheat] and withheld.round == 1


@pytest.mark.parametrize("delay", [0.005, 0.3])
@pytest.mark.parametrize("players", [3, 4])
def test_sim_shuffle_unanswered_an_honest_dealer_answers_and_is_not_named(
    players: int, delay: float
) -> None:
    """On slow links (0.3 s one way) the complaint takes long to be final at the dealer while
    cards are turned up and it plays: its moves are never signed past the act that made the
    complaint final, which answers it. (Without the wait of its shares for the answer it was
    named here, at three and four players, while its turn-up shares were in its feed; since
    they travel in beats it is not: see the module's docstring. On slow links, the game of
    test_sim_shuffle_dealer_votes.py's honest sample at this seed.)"""
    result, report = _game(players, None, delay=delay)
    assert result.finished and result.violations == []
    for peer in result.peers:
        assert peer is not None
        final = peer.final
        assert not final.dropped and not final.violations
        rs = final.past_rounds[-1] if final.past_rounds else final.round
        deck = rs.deck
        assert deck is not None and list(deck.complaints) == [(DEALER, players - 1)]
        assert deck.unanswered() == []
    assert not [f for f in report.violations if f.kind is FindingKind.WITHHELD_ANSWER]
    assert not report.errors and not report.dropped


def test_sim_shuffle_unanswered_an_honest_dealer_answers_every_complaint_in_one_act() -> None:
    """Every other member complains of seat 0's box once play has begun (links of 0.3 s one
    way, seed 3 at four players: two complaints final at the dealer at once). Until session 19
    the dealer signed one answer a finality, and played between them: its claim, its final
    fold holding the third complaint unanswered, was named ``withheld_answer``. It now signs
    every answer owed in the act that made them final, one after the other."""
    players = 4
    cheats = tuple(DeckCheat(s, DeckCheatKind.PLAY_COMPLAINT) for s in range(1, players))
    result = run(
        SimConfig(
            players=players,
            seed=3,
            deal=Deal.SHUFFLE,
            rules=Rules(target=None, rounds=1),
            peer=QUICK_TIMERS,
            faults=Faults(deck_cheats=cheats, delay=0.3),
            max_time=200.0,
        )
    )
    assert result.finished and result.violations == []
    dealer = result.peers[DEALER]
    assert dealer is not None
    kinds = [m.kind.name for m in dealer.events(DEALER)]
    answers = [i for i, kind in enumerate(kinds) if kind == "DECK_ANSWER"]
    assert len(answers) == players - 1
    assert answers == list(range(answers[0], answers[0] + players - 1))  # (nothing between)
    report = result.audit
    assert report is not None and not report.errors and not report.dropped
