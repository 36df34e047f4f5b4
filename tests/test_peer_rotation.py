"""Moves made before their author saw an everyone-stuck rotation (docs/protocol.md §8.7).

When every active seat is stuck, every tableau rotates: the one change to a player's tableau
that other players' events make. A move signed before its author saw that rotation meant the
table without it, so it does not count (as a move after a Nerts call's ``T*`` does not). The
author "saw" the rotation when it held every pass that made it, its own last pass included:
that pass may be the one that completes it while another seat's pass, earlier in the order,
is still on its way.

The scenario is a bot-played network of real peers (``peer_helpers.PeerNetwork``) whose bots
are then paused while the test plays the passes.
"""

from __future__ import annotations

import pytest
from peer_helpers import Paused, PeerNetwork

from p2p_nertz.bots.base import Strategy
from p2p_nertz.errors import LocalProtocolError
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.peer import Send
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import Rng, derive_seed
from p2p_nertz.rules import Move, Pile, Rules

ONE_ROUND = Rules(target=None, rounds=1)
SEED = 5


def _dealt() -> PeerNetwork:
    bots: dict[int, Strategy] = {s: Paused(Rng(derive_seed("rotation", SEED, s))) for s in range(3)}
    net = PeerNetwork(3, seed=SEED, rules=ONE_ROUND, strategies=bots)

    def ready(n: PeerNetwork) -> bool:
        return all(p.final.phase is Phase.PLAY and len(p.final.round.ready) == 3 for p in n.peers)

    net.run(ready)
    return net


def _everyone_holds_everything(net: PeerNetwork) -> bool:
    heads = [len(net.peers[s].events(s)) for s in range(3)]
    return all(p.held(s) == heads[s] for p in net.peers for s in range(3))


def _until_final(net: PeerNetwork, seat: int) -> None:
    """Run until ``seat``'s latest event is final at every peer."""
    lamport = net.peers[seat].events(seat)[-1].lamport
    net.run(lambda n: all(p.stable >= lamport for p in n.peers))


def test_a_move_after_the_own_pass_that_completed_a_rotation_it_did_not_see_does_not_count() -> (
    None
):
    net = _dealt()
    a, b, c = 0, 1, 2
    net.play(c, Move.pass_())
    net.run(_everyone_holds_everything)
    # At one instant: b passes; a, not holding that pass yet, turns its stock until its clock
    # is ahead of b's pass, passes (completing everyone stuck in the total order), and turns
    # its stock again, on the table it sees: unrotated.
    net.play(b, Move.pass_())
    passed_at = net.peers[b].clock
    while net.peers[a].clock <= passed_at:
        net.play(a, Move.turn())
    net.play(a, Move.pass_())
    assert net.peers[a].held(b) < len(net.peers[b].events(b))  # b's pass is on its way
    net.play(a, Move.turn())
    _until_final(net, a)

    for peer in net.peers:
        state = peer.final
        assert state.violations == ()
        log = state.round.log
        rotation = log.index(None)
        assert log[rotation - 1] is not None and log[rotation - 1][:2] == (a, Move.pass_())
        assert log[rotation + 1 :] == []  # a's last turn meant the unrotated table
    assert len({p.final.digest() for p in net.peers}) == 1


def test_the_waste_waits_while_a_rotation_is_not_final_and_it_may_not_happen() -> None:
    net = _dealt()
    a, b, c = 0, 1, 2
    net.play(c, Move.pass_())
    net.run(_everyone_holds_everything)
    # b passes and at once turns its stock (no longer stuck); a gets the pass first, alone.
    net.play(b, Move.pass_())
    net.play(b, Move.turn())
    turned_at = net.peers[b].clock
    pass_wire = net.peers[b].events(b)[-2].wire
    net.deliver(a, pass_wire)
    while net.peers[a].clock <= turned_at:
        net.play(a, Move.turn())
    net.play(a, Move.pass_())
    peer = net.peers[a]
    # a's table shows everyone stuck and rotated; b's turn, not held yet, comes first in the
    # order, so nothing rotates. A waste or stock move now would mean the rotated table.
    assert peer.player.rotation_pending() and Pile.WASTE in peer.frozen_piles()
    held = peer.held(a)
    with pytest.raises(LocalProtocolError, match="rotate"):
        net.play(a, Move.turn())
    assert peer.held(a) == held  # nothing signed
    net.play(a, Move.pass_())  # moves away from the waste and the stock are not held back
    net.run(lambda n: not n.peers[a].player.rotation_pending())
    for p in net.peers:
        assert None not in p.final.round.log[-6:]  # no rotation in the order
    net.play(a, Move.turn())  # decided: the stock is a's again
    _until_final(net, a)
    for p in net.peers:
        assert p.final.violations == ()
    assert len({p.final.digest() for p in net.peers}) == 1


def test_the_waste_is_free_again_once_the_rotation_is_final() -> None:
    net = _dealt()
    a, b, c = 0, 1, 2
    for seat in (c, b):
        net.play(seat, Move.pass_())
    net.run(_everyone_holds_everything)
    net.play(a, Move.pass_())
    peer = net.peers[a]
    assert peer.player.rotation_pending()
    with pytest.raises(LocalProtocolError, match="rotate"):
        net.play(a, Move.turn())
    net.run(lambda n: not n.peers[a].player.rotation_pending())
    assert peer.final.round.log[-1] is None  # the rotation is final
    net.play(a, Move.turn())
    _until_final(net, a)
    for p in net.peers:
        assert p.final.violations == ()
        assert p.final.round.log[-1] is not None and p.final.round.log[-1][:2] == (a, Move.turn())


def test_passing_again_while_stuck_is_not_a_pass_the_others_must_have_seen() -> None:
    net = _dealt()
    a, b, c = 0, 1, 2
    for seat in (c, a):
        net.play(seat, Move.pass_())
    net.run(_everyone_holds_everything)
    # b turns its stock until its clock is ahead of a's; then, at one instant, a passes again
    # (it was stuck already), b passes and completes everyone stuck, and b, whose table shows
    # the rotation, passes once more without having received a's repeat.
    while net.peers[b].clock <= net.peers[a].clock + 1:
        net.play(b, Move.turn())
    net.play(a, Move.pass_())
    net.play(b, Move.pass_())
    assert net.peers[b].player.rotation_pending()
    net.play(b, Move.pass_())
    assert net.peers[b].held(a) < len(net.peers[a].events(a))  # a's repeat is on its way
    _until_final(net, b)
    for peer in net.peers:
        state = peer.final
        table = state.table
        assert table is not None
        assert state.round.log[-2] is None  # the rotation, then b's pass after it counted
        assert state.round.log[-1] is not None and state.round.log[-1][:2] == (b, Move.pass_())
        assert table.stuck[b] and not table.stuck[a]
        assert state.violations == ()


def test_a_pass_announces_the_moves_its_author_held_unacked() -> None:
    net = _dealt()
    a, b = 0, 1
    net.run(_everyone_holds_everything)
    net.play(b, Move.turn())
    move = net.peers[b].events(b)[-1]
    net.deliver(a, move.wire)  # a move, with no claim waiting: no ack
    effects = net.play(a, Move.pass_())
    kinds = [decode_message(e.data).kind for e in effects if isinstance(e, Send)]
    # The pass may complete a rotation that holds everyone's waste until it is final, which
    # needs a's word on the moves below it: the pass gives it itself (its frontier names b's
    # move with its id: every event counts as an ack, protocol version 2), no ack with it.
    assert kinds == [Kind.STUCK]
    passed = net.peers[a].events(a)[-1]
    net.deliver(b, passed.wire)
    assert net.peers[b]._finality.held_by[a][b] == move.seq
