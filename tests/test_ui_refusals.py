"""A move the core refuses now, though the rules allow it, said in the player's words
(session 27): the core gives the reason as a code (:class:`~p2p_nertz.protocol.local.MoveAnswer`
on :class:`~p2p_nertz.protocol.local.MoveRefused` or ``ClaimLost``), the table says it
(:func:`~p2p_nertz.ui.refusals.move_words`) where a person read "illegal: the others' votes put
us out for now (our moves from event 41 on are uncounted here)". The real core last."""

from __future__ import annotations

from dataclasses import replace

import pytest
from peer_helpers import PeerNetwork
from test_local_held_back import SEAT, _vote, _withdraw
from test_ui_words import CORE_WORDS, NAMES, _name

from p2p_nertz.errors import IllegalMoveError, LocalProtocolError
from p2p_nertz.protocol.local import ClaimLost, MoveAnswer, MoveRefusal, MoveRefused
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Card, Move, Pile
from p2p_nertz.ui import PlayMove, TableController, TableView
from p2p_nertz.ui.keys import Status
from p2p_nertz.ui.refusals import move_words
from p2p_nertz.ui.view import card_text

KING = Card.parse("KS")


def _card(card: Card) -> str:
    return card_text(card)


@pytest.mark.parametrize("refusal", list(MoveRefusal))
@pytest.mark.parametrize("full", [True, False], ids=["named", "bare"])
def test_ui_refusals_every_move_refusal_is_said_without_the_protocols_words(
    refusal: MoveRefusal, full: bool
) -> None:
    """Each code, with what it is about and without (a core that knew no more), in a
    player's words that fit the terminal's status row whole."""
    answer = (
        MoveAnswer(refusal, seats=(1, 2), pile=Pile.WASTE, card=KING)
        if full
        else MoveAnswer(refusal)
    )
    words = move_words(answer, _name, _card)
    assert words
    assert not CORE_WORDS.search(words), words
    assert "illegal" not in words  # (the rules allow the move: not now is not illegal)
    assert len(words) <= 80, words


def test_ui_refusals_name_the_players_the_pile_and_the_card() -> None:
    def said(refusal: MoveRefusal, **fields: object) -> str:
        return move_words(MoveAnswer(refusal, **fields), _name, _card)  # type: ignore[arg-type]

    assert said(MoveRefusal.DROP_PENDING, seats=(2,)) == (
        f"wait: the table is deciding whether {NAMES[2]} has gone"
    )
    assert said(MoveRefusal.DROP_PENDING, seats=(1, 3)) == (
        f"wait: the table is deciding whether {NAMES[1]} and {NAMES[3]} have gone"
    )
    assert (
        said(MoveRefusal.LOST, seats=(3,), card=KING)
        == f"K♠ no longer fits: {NAMES[3]} got there first"
    )
    assert said(MoveRefusal.LOST, card=KING) == "K♠ no longer fits: another player got there first"
    assert "work pile 4" in said(MoveRefusal.IN_THE_AIR, pile=Pile(4))
    assert "Nerts pile" in said(MoveRefusal.IN_THE_AIR, pile=Pile.NERTS)
    assert "work pile 2" in said(MoveRefusal.SLIDE, pile=Pile(2))
    # (The codes of different reasons say different things.)
    bare = {move_words(MoveAnswer(r), _name, _card) for r in MoveRefusal}
    assert len(bare) == len(MoveRefusal)


def test_ui_refusals_the_core_keeps_its_words_and_its_kinds() -> None:
    """The code rides on the exception the callers already catch: a refusal now is a
    ``LocalProtocolError``, a lost claim an ``IllegalMoveError``; the message, for the log,
    is the core's."""
    answer = MoveAnswer(MoveRefusal.LEFT)
    assert isinstance(MoveRefused("S: we left the game", answer), LocalProtocolError)
    lost = ClaimLost("W>L: K♠ no longer fits (seat 1 got there first)", answer)
    assert isinstance(lost, IllegalMoveError) and not isinstance(lost, LocalProtocolError)
    assert str(lost).endswith("(seat 1 got there first)")


def test_ui_refusals_a_real_core_voted_out_refuses_and_the_status_line_says_why() -> None:
    """Seats 1 and 2 vote seat 0 out (real signed votes fed to a real peer core). The
    person presses ``s`` (the terminal: the keys ask the core's rule first, and say why) or
    clicks the stock (the browser: the controller asks the core, which refuses the move with
    its code): the status line, as the front end shows it, says so in a player's words either
    way, where the keys said "you are not playing this round". Once a withdrawal comes, the
    key plays."""
    net = PeerNetwork(3, seed=5)
    net.run(lambda n: n.peers[SEAT].final.phase is Phase.PLAY and n.peers[SEAT].held(SEAT) >= 12)
    peer = net.clone(SEAT)
    now = net.last_input_time[SEAT]
    shown: list[TableView] = []

    class Front:
        def show(self, view: TableView) -> None:
            shown.append(view)

    table = TableController(tuple(m.name for m in peer.spec.members), SEAT, Front())
    table.draw(peer, now)  # (the round's table met: the screen's first drawing)
    cut = peer.held(SEAT) - 3
    peer.feed(_vote(peer, net, 1, cut), now)
    at = peer.events(1)[-1].lamport
    late = _withdraw(peer, net, 1, cut, at + 1)
    peer.feed(_vote(peer, net, 2, cut, at + 3), now)
    held = peer.held(SEAT)

    said = "you are out for now: the others voted you out; you can come back next round"
    turn = PlayMove(Move.turn())
    assert table.press("s", peer, now) == []  # (the terminal's key: the core's rule, before)
    assert table.keys.status == said
    assert table.act(turn, peer) == [turn]  # (a click on the stock: the core decides)
    with pytest.raises(MoveRefused) as refused:
        peer.play(turn.move, now)
    assert refused.value.answer.refusal is MoveRefusal.HELD_BACK
    assert "uncounted" in str(refused.value)  # (the core's words, for its log)
    table.keys = replace(table.keys, line=Status())
    table.refused(refused.value.answer)
    assert table.keys.status == said
    table.draw(peer, now)
    assert shown[-1].status == said
    assert peer.held(SEAT) == held  # nothing signed

    peer.feed(late, now)
    assert table.press("s", peer, now) == [turn]
    peer.play(turn.move, now)
    assert peer.held(SEAT) == held + 1
