"""``Peer.restore(recover=True)`` on its own: what a recovering peer refuses, sends and takes.

A game of :class:`~tests.peer_helpers.PeerNetwork` runs a while; one seat's log (its Record
effects) loses its last own events; the peer restored from it in recovery is then fed by hand
(docs/protocol.md §9.6).
"""

from __future__ import annotations

import pytest

from p2p_nertz.errors import LocalProtocolError
from p2p_nertz.protocol.bodies import ID_PREFIX, Beat, encode_body
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.protocol.peer import Effect, Peer, Record, Recovered, Rejected, Reserve, Send
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Move
from tests.peer_helpers import PeerNetwork, beat_of, sign

SEAT = 1


def _lost(net: PeerNetwork) -> bool:
    return net.peers[SEAT].held(SEAT) >= 12 and net.peers[0].final.phase is Phase.PLAY


@pytest.fixture(scope="module")
def net() -> PeerNetwork:
    network = PeerNetwork(3, seed=5)
    network.run(_lost)
    # Quiet: every peer holds every feed as far as its author (nothing is in flight).
    network.run(lambda n: all(p.held(q) == n.peers[q].held(q) for p in n.peers for q in range(3)))
    return network


def _restore(net: PeerNetwork, lose: int) -> tuple[Peer, list[Effect], list[bytes]]:
    """Seat SEAT restored in recovery from its log cut before its ``lose``-th last own event;
    returns the peer, its effects and the lost own events."""
    log = [e.data for e in net.effects[SEAT] if isinstance(e, Record)]
    own = net.identities[SEAT].peer_id
    mine = [i for i, wire in enumerate(log) if decode_message(wire).author == own]
    cut = mine[-lose]
    lost = [log[i] for i in mine[-lose:]]
    reserved = max(e.clock for e in net.effects[SEAT] if isinstance(e, Reserve))
    peer, effects = Peer.restore(
        net.identities[SEAT], net.spec, log[:cut], net.now, reserved=reserved, recover=True
    )
    return peer, effects, lost


def _sent(effects: list[Effect], peer: Peer) -> list[tuple[Kind, int, PeerId | None]]:
    out = []
    for effect in effects:
        if isinstance(effect, Send):
            message = decode_message(effect.data)
            if message.author == peer.identity.peer_id:
                out.append((message.kind, message.seq, effect.to))
    return out


def test_a_recovering_peer_beats_not_and_asks_everyone_for_its_own_events(
    net: PeerNetwork,
) -> None:
    peer, effects, lost = _restore(net, 2)
    head = peer.held(SEAT)
    assert peer.recovering and peer.awaiting() == (0, 2)
    sent = _sent(effects, peer)
    assert (Kind.WANT, 0, None) in sent  # to every member
    assert all(kind in (Kind.WANT,) or seq == head for kind, seq, _ in sent)  # no beat
    assert not any(isinstance(e, Record) for e in effects)
    # Time passes: more wants, never a beat, never a vote or a phase event.
    later = peer.tick(net.now + 40.0)
    assert {kind for kind, _, _ in _sent(later, peer)} == {Kind.WANT}
    assert not any(isinstance(e, Record) for e in later)
    assert decode_message(lost[0]).seq == head + 1


def test_a_recovering_peer_refuses_to_play_or_abandon_and_leaves_unsigned(
    net: PeerNetwork,
) -> None:
    peer, _, _ = _restore(net, 1)
    head = peer.held(SEAT)
    with pytest.raises(LocalProtocolError, match="recovering"):
        peer.play(Move.parse("S"), net.now)
    with pytest.raises(LocalProtocolError, match="recovering"):
        peer.abandon(net.now + 100.0)
    effects = peer.leave(net.now)
    assert not any(isinstance(e, Record) for e in effects)
    assert all(kind is Kind.WANT for kind, _, _ in _sent(effects, peer))
    assert peer.held(SEAT) == head


def test_a_recovering_peer_takes_back_its_own_events_and_logs_them_as_its_own(
    net: PeerNetwork,
) -> None:
    peer, _, lost = _restore(net, 3)
    head = peer.held(SEAT)
    # What the others hold (the log lost others' events too), then our lost events.
    for q in range(3):
        peer.feed_many([m.wire for m in net.peers[0].events(q) if q != SEAT], net.now)
    effects = peer.feed_many(lost, net.now)
    assert not any(isinstance(e, Rejected) for e in effects)
    assert peer.held(SEAT) == head + 3
    assert [e.data for e in effects if isinstance(e, Record) and e.own] == lost
    assert peer.recovering  # nobody has said yet what it holds of ours


def test_a_recovering_peer_recovers_once_every_member_has_announced(net: PeerNetwork) -> None:
    peer, effects, lost = _restore(net, 2)
    clock = max(decode_message(e.data).lamport for e in effects if isinstance(e, Send))
    for q in range(3):
        if q != SEAT:
            peer.feed_many([m.wire for m in net.peers[q].events(q)], net.now)
    # A beat timed below our first want does not count: it may be older than the want.
    stale = peer.feed(beat_of(net.peers[0], net.identities[0], clock - 1), net.now)
    assert peer.recovering and 0 in peer.awaiting()
    assert not any(isinstance(e, Recovered) for e in stale)
    peer.feed(beat_of(net.peers[0], net.identities[0], clock + 5), net.now)
    assert peer.awaiting() == (0, 2)  # seat 0 announced more of ours than we hold
    peer.feed_many(lost, net.now)
    assert peer.awaiting() == (2,)
    done = peer.feed(beat_of(net.peers[2], net.identities[2], clock + 6), net.now)
    notices = [e for e in done if isinstance(e, Recovered)]
    head = decode_message(lost[-1]).seq
    assert notices == [Recovered(head - 2, head, (0, 2))]
    assert not peer.recovering
    kinds = [kind for kind, _, _ in _sent(done, peer)]
    assert Kind.BEAT in kinds  # announces its head at last, and signs what is due
    assert all(seq == 0 or seq > head for kind, seq, _ in _sent(done, peer) if kind.is_event)


def test_recovery_is_hopeless_only_once_every_awaited_member_is_silent(net: PeerNetwork) -> None:
    peer, _, _ = _restore(net, 1)
    drop_after = peer.config.drop_after
    assert not peer.recovery_hopeless(net.now + drop_after - 0.1)
    assert peer.recovery_hopeless(net.now + drop_after)


def _beat(net: PeerNetwork, author: int, held: list[int], lamport: int) -> bytes:
    """A beat of ``author`` announcing ``held`` (ids as every peer holds them: quiet)."""
    feeds = [net.peers[q].events(q) for q in range(3)]
    body = Beat(
        head_seq=held[author],
        head_id=feeds[author][held[author] - 1].id,
        held=tuple(held),
        held_ids=tuple(feeds[q][h - 1].id[:ID_PREFIX] for q, h in enumerate(held)),
    )
    return sign(
        net.identities[author], net.spec, kind=Kind.BEAT, body=encode_body(body), lamport=lamport
    )


def test_a_member_lacking_a_third_members_events_is_waited_for(net: PeerNetwork) -> None:
    # Seat 0 holds all of ours we hold, but not yet seat 2's latest event: it may hold a later
    # event of ours, named after that one, waiting for it (its beats do not announce it).
    peer, effects, _ = _restore(net, 1)
    clock = max(decode_message(e.data).lamport for e in effects if isinstance(e, Send))
    for q in range(3):  # (our lost event too, relayed)
        peer.feed_many([m.wire for m in net.peers[q].events(q)], net.now)
    heads = [net.peers[q].held(q) for q in range(3)]
    peer.feed(_beat(net, 2, heads, clock + 1), net.now)
    behind = [heads[0], heads[1], heads[2] - 1]
    peer.feed(_beat(net, 0, behind, clock + 2), net.now)
    assert peer.recovering and peer.awaiting() == (0,)
    done = peer.feed(_beat(net, 0, heads, clock + 3), net.now)
    assert [e for e in done if isinstance(e, Recovered)] == [
        Recovered(heads[1] - 1, heads[1], (0, 2))
    ]
