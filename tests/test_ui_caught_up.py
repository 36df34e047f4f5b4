"""A resumed player's table while the others have not yet said what they hold of its own moves
(docs/protocol.md §9.6: a round trip after the resume): a move is refused as still getting
them back, and once they are back the status line says so, where the refusal's words stayed
until the next key (session 32's CI: a page clicked a second too soon, then read "still
getting your own moves back" for 60 s). Real peer cores; the controller as the table runs it."""

from __future__ import annotations

import pytest
from test_ui_controller import Shown

from p2p_nertz.protocol.abandonment import Refusal
from p2p_nertz.protocol.local import AbandonRefused, MoveRefusal, MoveRefused
from p2p_nertz.protocol.peer import Peer, Record, Reserve, Send
from p2p_nertz.rules import Move, Rules
from p2p_nertz.ui import TableController
from p2p_nertz.ui.refusals import CATCHING_UP, CAUGHT_UP
from tests.peer_helpers import PeerNetwork

SEAT = 1


@pytest.fixture(scope="module")
def net() -> PeerNetwork:
    def dealt(n: PeerNetwork) -> bool:
        table = n.peers[SEAT].view
        return table is not None and Move.turn() in table.legal_moves(SEAT)

    network = PeerNetwork(2, seed=3, rules=Rules(target=None, rounds=1))
    network.run(dealt)
    return network


def _resumed(net: PeerNetwork) -> tuple[Peer, list[bytes]]:
    """Seat SEAT restored from its whole log, as ``nertz resume`` does; what it sends."""
    log = [e.data for e in net.effects[SEAT] if isinstance(e, Record)]
    reserved = max(e.clock for e in net.effects[SEAT] if isinstance(e, Reserve))
    peer, effects = Peer.restore(net.identities[SEAT], net.spec, log, net.now, reserved=reserved)
    return peer, [e.data for e in effects if isinstance(e, Send)]


def _answer(net: PeerNetwork, peer: Peer, sent: list[bytes]) -> None:
    """The other member (a copy: the game is shared) takes what the resumed peer sent; the
    peer takes its answer."""
    other = net.clone(1 - SEAT)
    answers = [e for data in sent for e in other.feed(data, net.now) if isinstance(e, Send)]
    mine = [e.data for e in answers if e.to in (None, peer.identity.peer_id)]
    peer.feed_many(mine, net.now)


def _table(peer: Peer) -> TableController:
    names = tuple(m.name for m in peer.spec.members)
    return TableController(names, SEAT, Shown(), symbols=False)


def test_a_move_refused_while_catching_up_is_said_over_once_the_moves_are_back(
    net: PeerNetwork,
) -> None:
    peer, sent = _resumed(net)
    table = _table(peer)
    table.view(peer, net.now)  # (the table is up: the deal said)
    assert peer.player.catching_up()
    with pytest.raises(MoveRefused) as refused:
        peer.play(Move.turn(), net.now)
    assert refused.value.answer.refusal is MoveRefusal.RECOVERING
    table.refused(refused.value.answer)
    assert table.view(peer, net.now).status == CATCHING_UP
    peer.tick(net.now + 0.1)
    assert table.view(peer, net.now).status == CATCHING_UP  # (still: nobody answered)
    _answer(net, peer, sent)
    assert not peer.player.catching_up()
    assert table.view(peer, net.now).status == CAUGHT_UP
    peer.play(Move.turn(), net.now)  # (the move, made again, is taken)


def test_an_abandon_refused_while_catching_up_is_said_over_too(net: PeerNetwork) -> None:
    peer, sent = _resumed(net)
    table = _table(peer)
    table.view(peer, net.now)
    with pytest.raises(AbandonRefused) as refused:
        peer.abandon(net.now)
    assert refused.value.answer.refusal is Refusal.UNHEARD  # (its words: nobody answered)
    table.abandon_refused(refused.value.answer)
    said = table.view(peer, net.now).status
    assert said == "cannot abandon: nobody at the table has answered you yet", said
    _answer(net, peer, sent)
    assert table.view(peer, net.now).status == CAUGHT_UP
