"""The ack before the fold (docs/protocol.md §7.2): with ``PeerConfig.ack_first``, an input
that delivers another member's claim returns its effects up to the claim's ack, ending in a
:class:`Settle`, and the rest of the input (finality, the final fold) comes with the next call.

Real peers of one game (``peer_helpers.PeerNetwork``, bots paused), each receiver cloned into
twins, one acking first and one not, fed the same bytes at the same time: the ack is the same
message, and once settled the twins are in the same state.
"""

from __future__ import annotations

import dataclasses

from peer_helpers import Paused, PeerNetwork, snapshot

from p2p_nertz.bots.base import Strategy
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.peer import Effect, Peer, PeerConfig, Send, Settle
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import Rng, derive_seed
from p2p_nertz.rules import Move, Rules

ONE_ROUND = Rules(target=None, rounds=1)
ACKS_NOW = PeerConfig(ack_delay=0.0)  # the runtime's window, the ack after the fold
ACK_FIRST = dataclasses.replace(ACKS_NOW, ack_first=True)


def _quiet(n: int, seed: int) -> PeerNetwork:
    """``n`` peers in play, their bots paused, every event held and final everywhere."""
    bots: dict[int, Strategy] = {
        s: Paused(Rng(derive_seed("ack-first", seed, s))) for s in range(n)
    }
    net = PeerNetwork(n, seed=seed, rules=ONE_ROUND, strategies=bots, jitter=0.0, config=ACKS_NOW)
    net.run(lambda w: all(p.final.phase is Phase.PLAY for p in w.peers))
    _settle(net)
    return net


def _settle(net: PeerNetwork) -> None:
    def settled(w: PeerNetwork) -> bool:
        heads = [w.peers[s].events(s) for s in range(w.n)]
        return all(
            p.held(s) == len(heads[s]) and (not heads[s] or p.stable >= heads[s][-1].lamport)
            for p in w.peers
            for s in range(w.n)
        )

    net.run(settled)


def _claim(net: PeerNetwork, seat: int) -> bytes:
    """``seat`` plays a card to the lake (turning its stock until it has one): the claim's
    wire, not yet delivered to anyone."""
    for _ in range(60):
        table = net.peers[seat].tentative.table
        assert table is not None
        move = next((m for m in table.legal_moves(seat) if m.is_lake), None)
        if move is not None:
            effects = net.peers[seat].play(move, net.now)
            (wire,) = [e.data for e in effects if isinstance(e, Send)]
            assert decode_message(wire).kind is Kind.CLAIM
            return wire
        net.play(seat, Move.turn())
        _settle(net)
    raise AssertionError("no lake move in 60 stock turns")


def _twins(net: PeerNetwork, seat: int) -> tuple[Peer, Peer]:
    """Two independent copies of ``seat``'s peer: the first acks a claim first."""
    first, after = net.clone(seat), net.clone(seat)
    first.config = ACK_FIRST
    return first, after


def _acks(effects: list[Effect]) -> list[bytes]:
    sent = [e.data for e in effects if isinstance(e, Send)]
    return [w for w in sent if decode_message(w).kind is Kind.ACK]


def _no_settle(effects: list[Effect]) -> list[str]:
    return sorted(repr(e) for e in effects if not isinstance(e, Settle))


def test_a_claims_ack_goes_before_its_final_fold_and_is_the_ack_sent_after_it() -> None:
    # At 2 peers a claim is final at its receiver as it arrives: main folds it, then acks.
    net = _quiet(2, seed=0)
    wire = _claim(net, 1)
    lamport = decode_message(wire).lamport
    first, after = _twins(net, 0)
    now = net.now + 0.001

    early = first.feed(wire, now)
    assert isinstance(early[-1], Settle)
    assert [e for e in early if isinstance(e, Settle)] == [early[-1]]
    (ack,) = _acks(early)
    assert first.stable < lamport  # not final yet: the ack went before finality
    assert first.next_deadline() == now  # the rest is due at once
    rest = first.tick(now)
    assert first.stable >= lamport
    assert not _acks(rest) and not any(isinstance(e, Settle) for e in rest)

    both = after.feed(wire, now)
    assert first.stable == after.stable
    assert _acks(both) == [ack]  # the same message, bytes and clock, as after the fold
    assert _no_settle(early + rest) == _no_settle(both)  # the same effects, but the order
    assert snapshot(first) == snapshot(after)

    # The claim's author takes that ack as it would the other: final there too.
    author = net.peers[1]
    author.feed(ack, now + 0.001)
    assert author.stable >= lamport


def test_an_event_not_a_claim_is_acked_after_its_fold_as_before() -> None:
    # A pass (``stuck``) is acked at once too, but its fold may call for an event of ours
    # that stands for the ack (§7.2): it is acked as before, in one call, the same effects.
    net = _quiet(3, seed=1)
    effects = net.peers[2].play(Move.pass_(), net.now)
    (wire,) = [e.data for e in effects if isinstance(e, Send)]
    assert decode_message(wire).kind is Kind.STUCK
    first, after = _twins(net, 0)
    now = net.now + 0.001
    one = first.feed(wire, now)
    assert not any(isinstance(e, Settle) for e in one)
    assert len(_acks(one)) == 1
    assert one == after.feed(wire, now)


def test_at_3_peers_the_ack_goes_first_and_the_claim_waits_for_the_others() -> None:
    # At 3 peers the claim is not final at a receiver on arrival (the third member's word is
    # missing): the ack still goes first, and the settled twins agree.
    net = _quiet(3, seed=1)
    wire = _claim(net, 2)
    first, after = _twins(net, 0)
    now = net.now + 0.001
    early = first.feed(wire, now)
    assert isinstance(early[-1], Settle) and len(_acks(early)) == 1
    rest = first.tick(now)
    both = after.feed(wire, now)
    assert _acks(both) == _acks(early)
    assert _no_settle(early + rest) == _no_settle(both)
    assert snapshot(first) == snapshot(after)
