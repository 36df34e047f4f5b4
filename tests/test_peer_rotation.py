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

from peer_helpers import PeerNetwork

from p2p_nertz.bots.base import Strategy
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import Rng, derive_seed
from p2p_nertz.rules import Move, Rules, Table

ONE_ROUND = Rules(target=None, rounds=1)
SEED = 5


class Paused(Strategy):
    """A bot that does nothing: the test plays every move."""

    def choose(self, table: Table, seat: int) -> Move | None:
        return None


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
    unseen = net.peers[a].events(a)[-1]
    net.run(lambda n: all(p.stable >= unseen.lamport for p in n.peers))

    for peer in net.peers:
        state = peer.final
        assert state.violations == ()
        log = state.round.log
        rotation = log.index(None)
        assert log[rotation - 1] is not None and log[rotation - 1][:2] == (a, Move.pass_())
        assert log[rotation + 1 :] == []  # a's last turn meant the unrotated table
    assert len({p.final.digest() for p in net.peers}) == 1
