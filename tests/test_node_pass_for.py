"""A pass on the behalf of a player who plays nothing, on real sockets (docs/protocol.md §8.7,
*a pass on a seat's behalf*): two nodes of a one-round game over tcp://127.0.0.1 in one trio
process, no bot at either, and nobody at seat 1 (a player who never moves, nor passes). The
test passes for seat 0 once play starts; seat 0's node, on its own clock, passes for seat 1
``phase_timeout`` later (shortened here), and both folds count it. Before, the round waited
for seat 1 for good. The test synchronises on the peers' final folds (looked at between the
nodes' steps), bounded by ``trio.fail_after``, and stops the game there."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import trio

from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Move
from p2p_nertz.runtime.node import NODE_CONFIG, PeerNode
from p2p_nertz.testing.games import bot_game

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(150)]

TIMEOUT = 120.0


async def _pass_then_wait(nodes: list[PeerNode]) -> None:
    """Pass for seat 0 once both members are dealt in, then wait until both final folds count
    a pass made for seat 1 (looked at between the nodes' steps, not waited on)."""
    passed = False
    while True:
        await trio.sleep(0.05)
        try:
            finals = [node.peer.final for node in nodes]
        except RuntimeError:
            continue  # (not started yet)
        if not passed and all(f.phase is Phase.PLAY and len(f.round.ready) == 2 for f in finals):
            await nodes[0].play(Move.pass_())
            passed = True
        if all(f.round.table is not None and f.round.table.passed_for == (1,) for f in finals):
            return


async def test_a_node_passes_for_a_player_who_never_moves(tmp_path: Path) -> None:
    identities, spec = bot_game(b"node pass for", 2, 0)
    config = dataclasses.replace(NODE_CONFIG, phase_timeout=2.0)
    nodes = [
        PeerNode(identity, spec, tmp_path / f"p{seat}.log", bind="tcp://127.0.0.1:0", config=config)
        for seat, identity in enumerate(identities)
    ]
    endpoints = {i.peer_id: node.bind() for i, node in zip(identities, nodes, strict=True)}
    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            for node in nodes:
                nursery.start_soon(node.run, endpoints)
            await _pass_then_wait(nodes)
            nursery.cancel_scope.cancel()
    # Signed by seat 0 (seat 1 signed no move), counted by both folds, refusing nothing.
    peers = [node.peer for node in nodes]
    (signed,) = [m for m in peers[0].events(0) if m.kind is Kind.STUCK and len(m.body) == 3]
    assert signed.body[2] == 1
    assert [m.kind for m in peers[1].events(1)] == [Kind.JOIN, Kind.COMMIT, Kind.REVEAL, Kind.READY]
    for peer in peers:
        assert peer.final.violations == () and peer.rejected == 0
