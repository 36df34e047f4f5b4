"""A turn-up's share lost on one link, asked for and relayed on real sockets (docs/shuffle.md
§10.14, ``deck_want``): three bot nodes of a shuffle game over tcp://127.0.0.1 in one trio
process, seat 1's node never sending its ``deck_reveal`` beats to seat 0, seat 0's node asking
for a missing share 2 ms after its turn-up (before the feed's ``deck_shares`` come). Seat 0
comes to hold seat 1's shares in its store, which only a ``deck_reveal`` fills: seat 2 relayed
them, answering seat 0's ``deck_want``. The test synchronises on the peers' state (looked at
between the nodes' steps), bounded by ``trio.fail_after``, and stops the game there."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import trio

from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.peer import Peer, Send
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.node import NODE_CONFIG, PeerNode

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(150)]

TIMEOUT = 120.0


class CutNode(PeerNode):
    """A node whose ``deck_reveal`` beats of its own never go to ``cut`` (one link)."""

    cut: PeerId

    def _send(self, effect: Send) -> None:
        data = effect.data
        if effect.to is None and decode_message(data).kind is Kind.DECK_REVEAL:
            for pid in self.spec.peer_ids:
                if pid not in (self.cut, self.identity.peer_id):
                    super()._send(Send(data, pid))
            return
        super()._send(effect)


def _relayed(peer: Peer, maker: int) -> int:
    """How many shares of ``maker``'s own ``peer``'s store holds."""
    store = peer._chains.shares.store
    return sum(1 for slots in store._rounds.values() for (m, of, _, _) in slots if m == of == maker)


async def test_a_share_beat_lost_on_a_link_is_asked_for_and_relayed_on_real_sockets(
    tmp_path: Path,
) -> None:
    identities = [Identity.generate(derive_seed(b"node share wants", s)) for s in range(3)]
    spec = GameSpec.create(
        [(i.peer_id, f"bot{n + 1}") for n, i in enumerate(identities)],
        Rules(target=None, rounds=1),
        derive_seed(b"node share wants game", 0)[:16],
        deal=Deal.SHUFFLE,
    )
    identities = spec.in_seat_order(identities)
    asking = dataclasses.replace(NODE_CONFIG, want_after=0.002)
    nodes: list[PeerNode] = []
    for seat, identity in enumerate(identities):
        kind = CutNode if seat == 1 else PeerNode
        node = kind(
            identity,
            spec,
            tmp_path / f"p{seat}.log",
            bind="tcp://127.0.0.1:0",
            strategy="greedy",
            speed=10,
            config=asking if seat == 0 else None,
        )
        if isinstance(node, CutNode):
            node.cut = identities[0].peer_id
        nodes.append(node)
    endpoints = {i.peer_id: node.bind() for i, node in zip(identities, nodes, strict=True)}
    seen: dict[str, int] = {}

    async def watch(cancel: trio.CancelScope) -> None:
        while True:
            await trio.sleep(0.01)  # (looked at between the nodes' steps, not waited on)
            try:
                peers = [node.peer for node in nodes]
            except RuntimeError:
                continue  # (not started yet)
            asked, answered = peers[0]._chains.wants.asked, peers[2]._chains.wants.answered
            relayed = _relayed(peers[0], 1)
            if asked and answered and relayed:
                seen.update(asked=asked, answered=answered, relayed=relayed)
                seen.update(rejected=sum(p.rejected for p in peers))
                cancel.cancel()
                return

    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            for node in nodes:
                nursery.start_soon(node.run, endpoints)
            nursery.start_soon(watch, nursery.cancel_scope)
    # Seat 0 asked; seat 2 answered it; seat 1's own shares reached seat 0's store, where
    # only a deck_reveal puts a share: seat 2's, relaying them. Nothing was refused.
    assert seen and seen["rejected"] == 0, seen
