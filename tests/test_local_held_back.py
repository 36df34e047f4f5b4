"""The local player plays nothing while its tentative fold leaves its own events uncounted
(:func:`~p2p_nertz.protocol.local.own_held_back`; docs/protocol.md §7.3, §13 *two members'
withdrawals held at once*).

A majority's votes on us, their withdrawals not held yet, cut our feed in the tentative fold:
its table is ours as it was at the cut. A move made on it would turn up again cards our feed
has shown after the cut, and once the withdrawals come and our events count, every fold
refuses it as a deck mismatch. The votes here are real signed events of the other members,
fed to a clone of seat 0 in mid play.
"""

from __future__ import annotations

import pytest
from peer_helpers import PeerNetwork, forge

from p2p_nertz.errors import LocalProtocolError
from p2p_nertz.protocol.bodies import ID_PREFIX, Drop, DropReason
from p2p_nertz.protocol.local import own_held_back
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Move

SEAT = 0
BACK = 3  # our events past the cut the votes name


def _mid_play(net: PeerNetwork) -> bool:
    peer = net.peers[SEAT]
    return peer.final.phase is Phase.PLAY and peer.held(SEAT) >= 12


@pytest.fixture(scope="module")
def net() -> PeerNetwork:
    net = PeerNetwork(3, seed=5)
    net.run(_mid_play)
    return net


def _vote(peer: Peer, net: PeerNetwork, voter: int, cut: int, lamport: int | None = None) -> bytes:
    ours = peer.events(SEAT)
    ids = tuple(m.id[:ID_PREFIX] for m in ours[max(0, cut - 64) : cut])
    body = Drop((), SEAT, cut, DropReason.SILENT, 0, ids)
    return forge(peer, net.identities[voter], body, frontier=_held(peer, cut), lamport=lamport)


def _withdraw(peer: Peer, net: PeerNetwork, voter: int, cut: int, lamport: int) -> bytes:
    body = Drop((), SEAT, 0, DropReason.WITHDRAW, 0, ())
    return forge(peer, net.identities[voter], body, frontier=_held(peer, cut), lamport=lamport)


def _held(peer: Peer, cut: int) -> tuple[int, ...]:
    """What a voter holding our feed up to ``cut`` announces (a voter announces no more of
    us than its vote counts, §9.2)."""
    return tuple(cut if q == SEAT else peer.held(q) for q in range(peer.spec.seats))


def _move(peer: Peer) -> Move:
    """The stock turned: a move the table allows here whichever way the cut goes."""
    return Move.parse("S")


def test_no_move_while_our_events_are_cut_then_again_once_withdrawn(net: PeerNetwork) -> None:
    """Seats 1 and 2 vote us out three events back; seat 1's withdrawal, signed before seat
    2's vote, reaches us after it (held, as ``LateLift`` holds it in the simulator)."""
    peer = net.clone(SEAT)
    now = net.last_input_time[SEAT]
    assert own_held_back(peer.tentative, peer.final, SEAT) is None
    cut = peer.held(SEAT) - BACK
    peer.feed(_vote(peer, net, 1, cut), now)
    at = peer.events(1)[-1].lamport
    late = _withdraw(peer, net, 1, cut, at + 1)  # (not fed yet)
    peer.feed(_vote(peer, net, 2, cut, at + 3), now)
    assert peer.tentative.dropped.get(SEAT) == cut
    held = peer.held(SEAT)
    back = own_held_back(peer.tentative, peer.final, SEAT)
    assert back is not None
    assert cut < back <= held  # (the first not final yet: the final fold counts those below)
    with pytest.raises(LocalProtocolError, match="uncounted"):
        peer.play(_move(peer), now)
    assert peer.held(SEAT) == held  # nothing signed
    peer.feed(late, now)
    assert SEAT not in peer.tentative.dropped
    assert own_held_back(peer.tentative, peer.final, SEAT) is None
    peer.play(_move(peer), now)
    assert peer.held(SEAT) == held + 1
