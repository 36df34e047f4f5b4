"""Turn-based play through the protocol (RULES.md: variants [001]; docs/protocol.md §8.7).

The turn is the table's (``Table.play`` refuses a move out of turn): every peer's fold, the
audit's replay and the simulator get it through the same code. Real peer cores and signatures.
"""

from __future__ import annotations

import itertools

from peer_helpers import PeerNetwork, PuppetPeer

from p2p_nertz.protocol.bodies import Play
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.state import GameState, Phase
from p2p_nertz.rules import MoveKind, Rules
from p2p_nertz.rules.moves import Move
from p2p_nertz.sim import SimConfig, run

TURNS = Rules(turn_based=True, target=None, rounds=2)


def _seats_in_turn(state: GameState) -> list[list[int]]:
    """Per round, the seats of the moves the fold played (calls are no turn's move)."""
    rounds = []
    for rs in (*state.past_rounds, state.round):
        seats = [e[0] for e in rs.log if e is not None and e[1].kind is not MoveKind.CALL]
        if seats:
            rounds.append(seats)
    return rounds


def test_a_turn_based_game_of_bots_moves_in_seat_order_and_agrees() -> None:
    result = run(SimConfig(players=3, seed=4, rules=TURNS))
    assert result.finished
    assert result.violations == []
    peers = [p for p in result.peers if p is not None]
    assert len({p.final.digest() for p in peers}) == 1
    rounds = _seats_in_turn(peers[0].final)
    assert len(rounds) == 2
    for seats in rounds:
        assert seats[0] == 0  # the first seat starts
        assert all(b == (a + 1) % 3 for a, b in itertools.pairwise(seats)), seats


def test_a_move_out_of_turn_is_refused_alike_on_every_peer() -> None:
    one = Rules(turn_based=True, target=None, rounds=1)
    net = PeerNetwork(3, seed=3, rules=one, factories={2: PuppetPeer})
    net.run(
        lambda n: all(
            p.final.phase is Phase.PLAY and len(p.final.round.ready) == 3 for p in n.peers
        )
    )
    table = net.peers[0].final.round.table
    assert table is not None and table.turn == 0
    # Seat 2 turns its stock while it is seat 0's turn.
    puppet = net.peers[2]
    view = puppet.view
    assert view is not None
    frontier = tuple(puppet.held(s) for s in range(3))
    reveals = view.tableaux[2].stock[-3:][::-1]
    net.emit(2, Play(frontier, puppet.final.round.number, Move.turn(), None, reveals))
    net.run_until_over()
    violations = net.peers[0].final.violations
    refused = [v for v in violations if v.seat == 2 and v.kind is Kind.MOVE]
    assert refused and "turn" in refused[0].reason, violations
    assert {p.final.violations for p in net.peers} == {violations}
    assert len({p.final.digest() for p in net.peers}) == 1
