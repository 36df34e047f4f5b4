"""The stall scan reads who is out from the final fold while nothing held can put anyone out.

The stall scan (:meth:`Membership.stalls`) asks the held view who is dropped and whose drop
votes stand, for every pair of members, four times a second. Only a drop vote or a leave puts
a member out or casts a ballot: while none is held beyond the final fold, the final fold
answers both as the tentative one would, and the tentative fold (dropped by every event
delivered) is not made again for it (:meth:`Chains.held_drops`; issue 18, the core's Python
per message).
"""

from __future__ import annotations

from peer_helpers import PeerNetwork

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.peer import Peer, Send
from p2p_nertz.protocol.state import Phase


def _in_play(seed: int) -> PeerNetwork:
    net = PeerNetwork(3, seed=seed)
    net.run(lambda n: n.now > 2.0 and all(p.final.phase is Phase.PLAY for p in n.peers))
    return net


def _scan_now(peer: Peer) -> float:
    """A time at which the peer's next input runs a stall scan, every member heard just before."""
    return max(peer._membership.stall_scan_at, *peer._membership.heard)


def _agree(peer: Peer) -> None:
    """The view held_drops gives answers the stall scan's questions as the tentative fold does."""
    view = peer._chains.held_drops()
    tentative = peer._chains.folds.tentative
    assert view.dropped == tentative.dropped
    for q in range(3):
        for r in range(3):
            assert view.roster.stands(q, r) == tentative.roster.stands(q, r)


def test_a_stall_scan_on_a_table_without_votes_or_leaves_does_not_refold() -> None:
    for seed in (1, 2, 3):
        net = _in_play(seed)
        peer = net.peers[0]
        folds = peer._chains.folds
        net.run(lambda n, f=folds: f._tentative is None and bool(f.nonfinal))  # an event came
        scan_at = _scan_now(peer)
        peer.tick(scan_at)
        assert peer._membership.stall_scan_at > scan_at  # the scan ran, every member asked
        assert folds._tentative is None  # and nothing was folded again for it
        _agree(peer)


def test_held_drops_is_the_tentative_fold_once_a_leave_is_held_not_final() -> None:
    net = _in_play(4)
    peer = net.peers[0]
    leave = [e.data for e in net.peers[2].leave(net.now) if isinstance(e, Send)]
    for data in leave:
        peer.feed(data, net.now)  # only seat 0 holds it: not final anywhere
    assert 2 not in peer.final.dropped
    assert peer._chains.held_drops() is peer._chains.folds.tentative
    assert 2 in peer._chains.held_drops().dropped
    _agree(peer)


def test_held_drops_is_the_tentative_fold_once_a_drop_vote_is_held() -> None:
    net = _in_play(5)
    peer = net.peers[0]
    assert peer._chains.held_drops() is peer._chains.folds.final
    peer._emit(Drop(peer._frontier(), 2, len(peer._feeds[2]), DropReason.SILENT), net.now)
    assert peer._chains.votes_held
    assert peer._chains.held_drops() is peer._chains.folds.tentative
    _agree(peer)
