"""The local player moves neither its waste nor its stock while a member in play may yet be
out in the past (:func:`~p2p_nertz.protocol.local.drop_pending`; docs/protocol.md §7.3, §13
*two members' withdrawals held at once*, seed 32).

A drop that only caps or the tentative fold's own cuts keep undecided may be decided by a
withdrawal not held yet, at its old place in the order; the others, stuck by then, rotated
there, where the table shown waits for the member's pass. A stock turned on that table turns
up what the stock showed before the rotation. The table here is a real game's in mid play
(a clone of seat 0); the members named undecided are as ``Folds.capped_drops`` and
``Folds.uncut_drops`` would name them.
"""

from __future__ import annotations

import pytest
from peer_helpers import PeerNetwork

from p2p_nertz.errors import LocalProtocolError
from p2p_nertz.protocol.local import local_move
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Move

SEAT = 0


@pytest.fixture(scope="module")
def peer() -> Peer:
    net = PeerNetwork(3, seed=5)
    net.run(lambda n: n.peers[SEAT].final.phase is Phase.PLAY and n.peers[SEAT].held(SEAT) >= 12)
    return net.clone(SEAT)


def _play(peer: Peer, move: str, undecided: set[int]) -> Move:
    signed, _, _ = local_move(
        peer.tentative,
        peer.final,
        SEAT,
        Move.parse(move),
        frozen=set(),
        clock=peer.events(SEAT)[-1].lamport,
        rules=peer.spec.rules,
        undecided=undecided,
    )
    return signed


def test_no_stock_turn_while_a_member_in_play_may_be_out_in_the_past(peer: Peer) -> None:
    """Seat 1 in play, its drop undecided: the stock turn is refused; with nothing undecided
    it is the move to sign."""
    assert peer.tentative.table is not None and peer.tentative.table.active[1]
    with pytest.raises(LocalProtocolError, match="drop is undecided"):
        _play(peer, "S", {1})
    assert _play(peer, "S", set()) == Move.parse("S")


def test_a_member_out_of_play_already_freezes_nothing(peer: Peer) -> None:
    """Only a member the table still has in play holds a rotation back: one already out of
    the table's play (its drop final) is no reason to wait."""
    table = peer.tentative.table
    assert table is not None
    out = peer.tentative.copy()
    out.round.table = table.with_active(1, False)
    signed, _, _ = local_move(
        out,
        peer.final,
        SEAT,
        Move.parse("S"),
        frozen=set(),
        clock=peer.events(SEAT)[-1].lamport,
        rules=peer.spec.rules,
        undecided={1},
    )
    assert signed == Move.parse("S")
