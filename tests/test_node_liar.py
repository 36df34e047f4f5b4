"""A member that lies about time late, on real nodes: the honest nodes finish (issue 13 §2).

Three :class:`~p2p_nertz.runtime.node.PeerNode` on tcp://127.0.0.1 in one trio run; the third
runs a :class:`~liar_helpers.Liar` core. Mid-round it beats at clock ``L`` (head ``h``), signs
its event ``h + 1`` timed ``L`` and keeps it back until the honest nodes have made ``L`` final,
then takes it into its feed and lets it be fetched by a ``want``. Before, every honest node
refused it as a broken chain and froze; now each proves the lie, logs the proof, votes, and the
two finish the round without the liar. The waits are on the game's state (looked at every few
milliseconds), bounded by ``trio.fail_after`` and pytest-timeout.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import pytest
import trio
from liar_helpers import Liar

from p2p_nertz.logfile import RecordKind, Recovery, read_log
from p2p_nertz.protocol.envelope import decode_message
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.peer import PROOF_NOTE, Effect, Peer
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.node import PeerNode

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(150)]

PLAYERS = 3
LIAR = PLAYERS - 1
GAME_TIMEOUT = 120.0


class LiarNode(PeerNode):
    """A node whose core is a :class:`Liar` (the node itself is the real runtime)."""

    def _make_peer(self, recovery: Recovery) -> list[Effect]:
        now = self._clock()
        self._peer = Liar(self.identity, self.spec, now, self._config)
        return self._peer.start(now)


async def _until(condition: Callable[[], bool]) -> None:
    """Wait until ``condition`` holds (the caller bounds the wait)."""
    while not condition():
        await trio.sleep(0.005)


def _mid_round(peer: Peer) -> bool:
    table = peer.final.table
    return peer.final.phase is Phase.PLAY and table is not None and any(table.lake.cards())


async def test_honest_nodes_finish_when_a_member_lies_about_time_late(tmp_path: Path) -> None:
    identities = [Identity.generate(derive_seed(b"test-node-liar", s)) for s in range(PLAYERS)]
    spec = GameSpec.create(
        [(i.peer_id, f"bot{n + 1}") for n, i in enumerate(identities)],
        Rules(target=None, rounds=1),
        b"test-node-liar",
    )
    by_id = {i.peer_id: i for i in identities}
    logs = [tmp_path / f"peer{seat}.log" for seat in range(PLAYERS)]
    nodes = [
        (LiarNode if seat == LIAR else PeerNode)(
            by_id[pid], spec, logs[seat], strategy="greedy", speed=10
        )
        for seat, pid in enumerate(spec.peer_ids)
    ]
    endpoints: dict[PeerId, str] = {
        pid: node.bind() for pid, node in zip(spec.peer_ids, nodes, strict=True)
    }
    peers: list[Peer | None] = [None] * PLAYERS

    async def play(seat: int) -> None:
        peers[seat] = await nodes[seat].run(endpoints)

    with trio.fail_after(GAME_TIMEOUT):
        async with trio.open_nursery() as nursery:
            liar_scope = trio.CancelScope()

            async def play_liar() -> None:
                with liar_scope:
                    await play(LIAR)

            for seat in range(PLAYERS - 1):
                nursery.start_soon(play, seat)
            nursery.start_soon(play_liar)
            await _until(lambda: all(n._peer is not None for n in nodes))
            honest = [n.peer for n in nodes[:LIAR]]
            liar = nodes[LIAR].peer
            assert isinstance(liar, Liar)
            await _until(lambda: all(_mid_round(p) for p in (*honest, liar)))
            liar.paused = True
            liar.lie_at_next_beat = True
            await _until(lambda: liar.lie is not None)
            lie = liar.lie
            assert lie is not None
            # Its beats at head h let the honest nodes make the lie's time final...
            await _until(lambda: all(p.stable >= lie.lamport for p in honest))
            # ...then it takes the event and lets it be fetched (it never sends it itself).
            liar.withheld.add(lie.wire)
            liar.adopt = lie.wire
            await _until(lambda: liar.held(liar.seat) >= lie.seq)
            liar.withheld.clear()
            liar.paused = False
            await _until(lambda: all(p is not None for p in peers[:LIAR]))
            liar_scope.cancel()  # dropped: it watches a game it may never see the end of
    finished = [p for p in peers[:LIAR] if p is not None]
    assert len(finished) == PLAYERS - 1
    assert len({p.final.digest() for p in finished}) == 1
    for peer, path in zip(finished, logs, strict=False):
        assert peer.final.phase is Phase.OVER
        assert LIAR in peer.final.dropped
        with read_log(path, strict=True) as reader:
            notes = [r for r in reader if r.kind is RecordKind.NOTE and r.name == PROOF_NOTE]
        assert notes, peer.seat
        wires = msgpack.unpackb(notes[0].data)
        assert [decode_message(w).author for w in wires] == [spec.peer_ids[LIAR]] * 2
        assert wires[1] == lie.wire
