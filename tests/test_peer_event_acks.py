"""Protocol version 2: every event counts as an ack (docs/protocol.md §5.1, §7.1, §7.2, §9.4).

An event's frontier names, per seat, the seq its author holds and the first 8 bytes of the id
of the event there. A receiver credits what the author holds from a delivered event as from
a beat (``finality.event_beat`` through ``Finality.take_beat``): only where the ids match its
own copies. So a claim needs no ack of its author's, and an id that disagrees is a fork seen,
never credited.

Real peers of one game (``peer_helpers.PeerNetwork``, bots paused), wired by hand: the test
delivers exactly the messages it names, so that no beat or ack can stand in for the event.
"""

from __future__ import annotations

import msgpack  # type: ignore[import-untyped]
from peer_helpers import Paused, PeerNetwork, beat_of, forge, sign, snapshot

from p2p_nertz.bots.base import Strategy
from p2p_nertz.protocol.bodies import Beat, Play, Want, encode_body, held_ids, parse_body
from p2p_nertz.protocol.envelope import SIGNATURE_DOMAIN, Kind, Message, decode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Effect, Equivocation, Peer, PeerConfig, Rejected, Send
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import Rng, derive_seed
from p2p_nertz.rules import Move, Rules

ONE_ROUND = Rules(target=None, rounds=1)
SEED = 3


def _quiet(seed: int = SEED) -> PeerNetwork:
    """Three peers in play, their bots paused, every event held and final everywhere."""
    bots: dict[int, Strategy] = {
        s: Paused(Rng(derive_seed("event-acks", seed, s))) for s in range(3)
    }
    # (Acks at once, as the runtime sends them: no coalescing window to wait out.)
    config = PeerConfig(ack_delay=0.0)
    net = PeerNetwork(3, seed=seed, rules=ONE_ROUND, strategies=bots, jitter=0.0, config=config)
    net.run(lambda n: all(p.final.phase is Phase.PLAY for p in n.peers))
    _settle(net)
    return net


def _settle(net: PeerNetwork) -> None:
    """Run until every peer holds every event and all of it is final everywhere."""

    def settled(n: PeerNetwork) -> bool:
        heads = [n.peers[s].events(s) for s in range(n.n)]
        return all(
            p.held(s) == len(heads[s]) and (not heads[s] or p.stable >= heads[s][-1].lamport)
            for p in n.peers
            for s in range(n.n)
        )

    net.run(settled)


def _lake_move(peer: Peer) -> Move | None:
    table = peer.tentative.table
    assert table is not None
    return next((m for m in table.legal_moves(peer.seat) if m.is_lake), None)


def _with_a_claim(seat: int) -> tuple[PeerNetwork, Move]:
    """A quiet network where ``seat`` has a card to play to the lake (it turns its stock until
    it has one)."""
    net = _quiet()
    for _ in range(60):
        claim = _lake_move(net.peers[seat])
        if claim is not None:
            return net, claim
        net.play(seat, Move.turn())
        _settle(net)
    raise AssertionError("no lake move in 60 stock turns")


def _sent(effects: list[Effect]) -> list[tuple[Message, bytes | None]]:
    return [(decode_message(e.data), e.to) for e in effects if isinstance(e, Send)]


def test_event_acks_a_claim_is_final_with_no_ack_of_its_author() -> None:
    a, b, c = 0, 1, 2
    net, claim = _with_a_claim(b)
    pa, pb, pc = net.peers
    # a turns its stock; b and c take the move. No claim waits for it: nobody acks it.
    net.play(a, Move.turn())
    move = pa.events(a)[-1]
    assert not [m for m, _ in _sent(net.deliver(b, move.wire)) if m.kind is Kind.ACK]
    net.deliver(c, move.wire)
    # b claims: the claim goes alone, no ack with it (version 1 sent one: b held a move it
    # had not announced, and its claim is final only once every member announces that).
    sent = _sent(net.play(b, claim))
    assert [m.kind for m, _ in sent] == [Kind.CLAIM]
    event = pb.events(b)[-1]
    body = parse_body(event.kind, event.body, 3)
    assert isinstance(body, Play) and body.frontier[a] == move.seq
    assert body.frontier_ids[a] == move.id[:8]
    # a takes the claim, and c's ack of it; nothing else of b's reaches a after the claim.
    assert pa._finality.held_by[b][a] < move.seq
    net.deliver(a, event.wire)
    assert pa._finality.held_by[b][a] == move.seq  # credited from the claim's frontier
    acks = [m for m, _ in _sent(net.deliver(c, event.wire)) if m.kind is Kind.ACK]
    assert len(acks) == 1
    net.deliver(a, acks[0].wire)
    assert pa.stable >= event.lamport  # the claim is final at a
    assert event.lamport > pc.stable  # (c lacks a's ack: not final there yet)


def test_event_acks_a_frontier_id_that_disagrees_is_a_fork_never_credited() -> None:
    # The liar L signs two events under one seq: its claim for the victim V, a pass for H.
    # H's next event names L's seq with the id of the pass. Counted by seq alone, V would
    # credit H with holding L's claim and make it final at V, while H holds the pass: a split.
    liar, victim, honest = 0, 1, 2
    net, claim = _with_a_claim(liar)
    pl, pv, ph = net.peers
    net.play(liar, claim)
    real = pl.events(liar)[-1]
    state = ph.tentative
    other = forge(
        ph,
        net.identities[liar],
        Play((), state.round.number, Move.pass_()),
        lamport=real.lamport,
    )
    net.deliver(honest, other)
    net.deliver(victim, real.wire)
    net.play(honest, Move.turn())
    event = ph.events(honest)[-1]
    body = parse_body(event.kind, event.body, 3)
    assert isinstance(body, Play) and body.frontier[liar] == real.seq
    assert body.frontier_ids[liar] != real.id[:8]
    sent = _sent(net.deliver(victim, event.wire))
    assert pv.held(honest) == event.seq  # the event is taken...
    assert pv._finality.held_by[honest][liar] == real.seq - 1  # ...its cover of L's feed not
    assert real.lamport > pv.stable  # L's claim is not final at V
    # The fork seen: V asks H for its version of L's event, as after a beat's (§9.4).
    wants = [
        (parse_body(m.kind, m.body, 3), to)
        for m, to in sent
        if m.kind is Kind.WANT and to == net.spec.peer_ids[honest]
    ]
    assert any(w == Want(liar, real.seq, real.seq) for w, _ in wants)
    # H answers with its version: two signed events under one seq, a proof at V.
    want = next(m for m, _ in sent if m.kind is Kind.WANT)
    answers = [m for m, to in _sent(net.deliver(honest, want.wire)) if to is not None]
    proofs: list[Equivocation] = []
    for answer in answers:
        proofs += [e for e in net.deliver(victim, answer.wire) if isinstance(e, Equivocation)]
    assert [(p.seat, p.seq) for p in proofs] == [(liar, real.seq)]
    assert real.lamport > pv.stable


def test_event_acks_a_version_1_message_is_refused_and_changes_nothing() -> None:
    net = _quiet()
    peer = net.peers[0]
    pass_ = Play((), peer.tentative.round.number, Move.pass_())
    for beat_or_event in (
        forge(peer, net.identities[1], pass_),
        beat_of(peer, net.identities[1], 10**6),
    ):
        v1 = _signed_as_version(beat_or_event, 1, net)
        before = snapshot(peer)
        effects = peer.feed(v1, net.now)
        assert [e.reason for e in effects if isinstance(e, Rejected)] == ["bad_version"]
        assert not [e for e in effects if isinstance(e, Send)]
        assert snapshot(peer) == before


def _signed_as_version(wire: bytes, version: int, net: PeerNetwork) -> bytes:
    """``wire`` signed again by its author, with ``version`` at position 0 of its payload."""
    payload, _ = msgpack.unpackb(wire, raw=False)
    fields = msgpack.unpackb(payload, raw=False)
    fields[0] = version
    new_payload = msgpack.packb(fields, use_bin_type=True)
    author = next(i for i in net.identities if i.peer_id == fields[2])
    signature = author.sign(SIGNATURE_DOMAIN + new_payload)
    return bytes(msgpack.packb([new_payload, signature], use_bin_type=True))


# -- verify only what is relied on (§7.2) ------------------------------------------------------
def _beat(peer: Peer, identity: Identity, lamport: int, *, head: int | None = None) -> bytes:
    """A beat of ``identity``'s member holding what ``peer`` holds, its own feed up to
    ``head`` (default: as ``peer`` holds it)."""
    spec = peer.spec
    seat = spec.seat_of(identity.peer_id)
    feeds = [peer.events(q) for q in range(spec.seats)]
    held = [len(f) for f in feeds]
    if head is not None:
        held[seat] = head
    beat = Beat(
        head_seq=held[seat],
        head_id=feeds[seat][held[seat] - 1].id if held[seat] else None,
        held=tuple(held),
        held_ids=held_ids(feeds, held),
    )
    return sign(identity, spec, kind=Kind.BEAT, body=encode_body(beat), lamport=lamport)


def _forged(wire: bytes) -> bytes:
    """``wire`` with one bit of its signature flipped."""
    flipped = bytearray(wire)
    flipped[-1] ^= 1
    return bytes(flipped)


def _state(peer: Peer) -> tuple[object, ...]:
    finality = peer._finality
    return (
        snapshot(peer),
        tuple(finality.held_by),
        tuple(finality.known),
        peer._inbox.beat_clock[1],
        tuple(peer._membership.proof.watch[1]),
    )


def test_event_acks_a_superseded_beat_is_not_verified_and_changes_nothing() -> None:
    net = _quiet()
    peer = net.peers[0]
    member = net.identities[1]
    clock = peer._inbox.beat_clock[1]
    earlier, later = _beat(peer, member, clock + 5), _beat(peer, member, clock + 6)
    for first in (earlier, _forged(earlier)):
        peer, twin = net.clone(0), net.clone(0)
        effects = peer.feed_many([first, later], net.now)
        assert not [e for e in effects if isinstance(e, Rejected)]  # (the forgery unread)
        assert peer._inbox.unverified == 1
        twin.feed_many([later], net.now)
        assert _state(peer) == _state(twin)
    # Alone, or after a later one from an earlier burst, the forgery is read and refused.
    peer = net.clone(0)
    refused = peer.feed_many([_forged(earlier)], net.now)
    assert [e.reason for e in refused if isinstance(e, Rejected)] == ["bad_signature"]


def test_event_acks_a_superseded_beat_that_proves_a_lie_is_verified() -> None:
    net = _quiet()
    member = net.identities[1]
    peer = net.peers[0]
    feed = peer.events(1)
    # A beat announcing head h - 1 at the time of event h, which it holds: a lie about time.
    lie = _beat(peer, member, feed[-1].lamport, head=len(feed) - 1)
    later = _beat(peer, member, max(peer._inbox.beat_clock[1], feed[-1].lamport) + 5)
    peer = net.clone(0)
    proofs = [e for e in peer.feed_many([lie, later], net.now) if isinstance(e, Equivocation)]
    assert [(p.seat, p.seq) for p in proofs] == [(1, len(feed))]
    assert peer._inbox.unverified == 0
    # Forged, it proves nothing: verified, refused, and nothing else.
    peer = net.clone(0)
    effects = peer.feed_many([_forged(lie), later], net.now)
    assert not [e for e in effects if isinstance(e, Equivocation)]
    assert [e.reason for e in effects if isinstance(e, Rejected)] == ["bad_signature"]
