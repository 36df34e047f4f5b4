"""A peer kept from sending by its disk keeps itself heard (``Peer.keep_heard``, docs/protocol.md
§9.1 *heard while its disk is slow*): a signed want for its own events past its head, naming no
head, timed within the clock durably reserved, and an ack due at once after it."""

from __future__ import annotations

from peer_helpers import PeerNetwork

from p2p_nertz.protocol.bodies import Want, parse_body
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.peer import Rejected, Send
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS


def test_a_want_naming_no_head_keeps_a_peer_heard_within_its_durable_reservation() -> None:
    net = PeerNetwork(2, 3, rules=Rules(target=None, rounds=1), config=QUICK_TIMERS)
    net.run(lambda net: all(p.final.phase is Phase.PLAY for p in net.peers))
    peer, other = net.peers
    now = net.now
    reserved = peer._outbox.reserved  # (all of it durable, say)
    assert peer.keep_heard(now, peer._outbox.clock) is None  # its time past what is durable
    clock = peer._outbox.clock
    wire = peer.keep_heard(now, reserved)
    assert wire is not None
    message = decode_message(wire, game_id=net.spec.game_id)
    assert message.kind is Kind.WANT and message.seq == 0 and message.lamport == clock + 1
    want = parse_body(Kind.WANT, message.body, 2)
    head = len(peer.events(peer.seat))
    assert want == Want(peer.seat, head + 1, head + QUICK_TIMERS.max_want)  # (no head named)
    assert peer.next_deadline() == now  # an ack due at once, for what waited behind it
    assert [type(e) for e in peer.tick(now) if isinstance(e, Send)] == [Send]
    # Heard where it arrives, refused by nobody; answered by a want for our feed's rest.
    later = now + QUICK_TIMERS.suspect_after
    effects = other.feed(wire, later)
    assert not [e for e in effects if isinstance(e, Rejected)]
    assert other._membership.heard[peer.seat] == later
    assert peer.identity.peer_id in [e.to for e in effects if isinstance(e, Send)]
