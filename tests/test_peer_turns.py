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
from p2p_nertz.rules import MoveKind, Rules, Table
from p2p_nertz.rules.cards import shuffled_deck
from p2p_nertz.rules.moves import Move
from p2p_nertz.rules.table import first_turn
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
    for number, seats in enumerate(rounds, 1):
        assert seats[0] == first_turn((True,) * 3, number)
        assert all(b == (a + 1) % 3 for a, b in itertools.pairwise(seats)), seats


def test_the_starting_seat_moves_one_seat_round_the_table_each_round() -> None:
    # rules.md, turn-based play: round 1 starts at seat 0, round 2 at seat 1, and so on; on
    # main the first seat started every round.
    result = run(SimConfig(players=3, seed=4, rules=Rules(turn_based=True, target=None, rounds=3)))
    assert result.finished and result.violations == []
    peers = [p for p in result.peers if p is not None]
    starts = [seats[0] for seats in _seats_in_turn(peers[0].final)]
    assert starts == [0, 1, 2]


def test_a_seat_out_of_the_round_passes_the_start_to_the_next_seat() -> None:
    t = Table.deal(TURNS, [shuffled_deck(bytes([n])) for n in range(3)], number=2)
    assert t.turn == 1
    skipped = Table.deal(
        TURNS, [shuffled_deck(bytes([n])) for n in range(3)], active=(True, False, True), number=2
    )
    assert skipped.turn == 2
    assert Table.parse(str(skipped), TURNS).turn == 2


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
