"""A stale pass through the protocol (RULES.md: everyone stuck; docs/protocol.md §8.7).

Everyone is stuck only when every active seat has passed with no card kept in the lake by
another seat after its pass. The rule is the table's (``Table.play``); the fold of every peer
replays it, and the passer's table says that it must pass again. Real peer cores, real
signatures, the deterministic network of ``peer_helpers``; the bots are paused and the test
plays every move.
"""

from __future__ import annotations

from peer_helpers import Paused, PeerNetwork

from p2p_nertz.bots.base import Strategy
from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import Rng, derive_seed
from p2p_nertz.rules import Move, Rules
from p2p_nertz.ui.keys import STUCK_WAITING, KeyState, Status
from p2p_nertz.ui.tracker import PASS_GONE, Tracker

ONE_ROUND = Rules(target=None, rounds=1)
SEED = 5


def _dealt() -> PeerNetwork:
    bots: dict[int, Strategy] = {s: Paused(Rng(derive_seed("stale", SEED, s))) for s in range(2)}
    net = PeerNetwork(2, seed=SEED, rules=ONE_ROUND, strategies=bots)
    net.run(
        lambda n: all(
            p.final.phase is Phase.PLAY and len(p.final.round.ready) == 2 for p in n.peers
        )
    )
    return net


def _until_final(net: PeerNetwork, seat: int) -> None:
    """Run until ``seat``'s latest event is final at every peer."""
    lamport = net.peers[seat].events(seat)[-1].lamport
    net.run(lambda n: all(p.stable >= lamport for p in n.peers))


def _play_a_lake_card(net: PeerNetwork, seat: int) -> None:
    """Turn ``seat``'s stock until a card of it goes to the lake, and play that card."""
    for _ in range(60):
        table = net.peers[seat].view
        assert table is not None
        lake = [m for m in table.legal_moves(seat) if m.is_lake]
        if lake:
            net.play(seat, lake[0])
            return
        net.play(seat, Move.turn())
    raise AssertionError(f"seat {seat} never had a card for the lake")


def test_a_pass_before_another_seats_lake_card_is_stale_at_every_peer() -> None:
    net = _dealt()
    tracker = Tracker(tuple(m.name for m in net.spec.members), 0)
    net.play(0, Move.pass_())
    _until_final(net, 0)
    assert all(p.final.round.table is not None and p.final.round.table.stuck[0] for p in net.peers)
    _play_a_lake_card(net, 1)
    net.play(1, Move.pass_())
    _until_final(net, 1)
    for peer in net.peers:
        state = peer.final
        table = state.round.table
        assert table is not None
        assert state.violations == ()
        assert table.stuck == (False, True)  # seat 0's pass no longer counts
        assert None not in state.round.log  # so nobody rotated
    tracker.take(net.effects[0], net.peers[0].final)
    assert any("after your pass: it no longer counts" in m for m in tracker.messages)
    view = tracker.view(net.peers[0], KeyState(line=Status(STUCK_WAITING)))
    assert view.status == PASS_GONE  # the status line no longer says it waits
    # Passing again makes everyone stuck: every peer rotates.
    net.play(0, Move.pass_())
    _until_final(net, 0)
    for peer in net.peers:
        assert None in peer.final.round.log
        assert peer.final.violations == ()
    assert len({p.final.digest() for p in net.peers}) == 1
    assert any(isinstance(e, st.PassesStale) for e in net.effects[0])
    after = tracker.view(net.peers[0], KeyState(line=Status(STUCK_WAITING)))
    assert after.status == PASS_GONE  # withdrawn by the rotation this time
