"""The table controller on its own (p2p_nertz/ui/controller.py): keys, pointer actions, signals
and time in, requests for the node out, views to any front end. No terminal, no event loop:
a front end that keeps what it is shown, and a real peer core from a simulated game."""

from __future__ import annotations

import signal

from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.rules import Move, Rules
from p2p_nertz.sim import SimConfig, Simulation
from p2p_nertz.ui import Abandon, Leave, PlayMove, TableController, TableView
from p2p_nertz.ui.controller import CTRL_C, Quit, ReleaseReady
from p2p_nertz.ui.keys import Context, KeyState, press


class Shown:
    """A front end that keeps every view it is shown (a browser would send them)."""

    def __init__(self) -> None:
        self.views: list[TableView] = []

    def show(self, view: TableView) -> None:
        self.views.append(view)


def _peer() -> Peer:
    result = Simulation(SimConfig(players=2, seed=6, rules=Rules(target=None, rounds=1))).run()
    peer = result.peers[0]
    assert peer is not None
    return peer


def _table(front: Shown, peer: Peer) -> TableController:
    return TableController(tuple(m.name for m in peer.spec.members), 0, front, symbols=False)


def test_q_asks_first_then_leaves_and_a_finished_node_quits() -> None:
    peer, front = _peer(), Shown()
    table = _table(front, peer)
    assert table.press("q", peer, 0.0) == []
    assert table.keys.status.startswith("leave the game?")
    assert table.press("y", peer, 0.0) == [Leave()]
    assert table.left and any("leaving the game" in m for m in table.tracker.messages)
    assert table.node_stopped() == [Quit()]  # the leave is done: so is the table


def test_a_finished_game_stays_up_until_q() -> None:
    peer, front = _peer(), Shown()
    table = _table(front, peer)
    assert table.node_stopped() == []
    table.draw(peer, 0.0)
    assert front.views[-1].final
    assert table.press("q", peer, 0.0) == [Quit()]


def test_a_signal_leaves_and_a_second_one_stops() -> None:
    peer = _peer()
    table = _table(Shown(), peer)
    assert table.signal_received(signal.SIGINT) == [Leave()]
    assert table.signal == signal.SIGINT
    assert table.signal_received(signal.SIGINT) == [Quit()]
    assert _table(Shown(), peer).press(CTRL_C, peer, 0.0) == [Leave()]


def test_keys_before_the_node_started_do_nothing_but_ctrl_c() -> None:
    table = _table(Shown(), _peer())
    assert table.press("s", None, 0.0) == []
    assert table.press(CTRL_C, None, 0.0) == [Leave()]


def test_a_pointer_action_is_a_request_like_a_key() -> None:
    peer = _peer()
    table = _table(Shown(), peer)
    assert table.act(PlayMove(Move.turn()), peer) == [PlayMove(Move.turn())]
    assert table.act(Abandon(), peer) == [Abandon()]
    table.refused("W>L: no foundation takes it in N: KS | 1: 2D")
    assert table.keys.status == "illegal: W>L: no foundation takes it"
    table.abandon_refused("bob is still answering")
    assert table.keys.status == "cannot abandon: bob is still answering"


def test_the_board_holds_the_next_ready_until_closed_or_its_countdown_ends() -> None:
    peer, front = _peer(), Shown()
    table = _table(front, peer)
    final = peer.final
    number = final.history[0][0]
    table.notice(st.RoundScored(number, final.scores[0], final.game.totals), final, 100.0)
    assert table.tick(100.0) == []  # the countdown starts
    table.draw(peer, 110.0)
    assert front.views[-1].countdown == 20
    assert table.tick(129.0) == []
    assert table.tick(130.0) == [ReleaseReady(number + 1)]
    assert table.tracker.board is None  # closed by itself
    # Closed by the person (Enter) before its end: released at the next tick.
    table = _table(Shown(), peer)
    table.notice(st.RoundScored(number, final.scores[0], final.game.totals), final, 100.0)
    assert table.tick(100.0) == []
    assert table.press("ENTER", peer, 101.0) == []
    assert table.tick(101.5) == [ReleaseReady(number + 1)]


def test_a_key_pressed_before_the_deal_says_so_until_the_deal_only() -> None:
    peer, front = _peer(), Shown()
    table = _table(front, peer)
    for key, said in (("n", "not dealt yet"), ("s", "illegal: the round is not dealt yet")):
        table.keys, _ = press(KeyState(), key, Context(None, 0))  # (a key before the deal)
        assert table.keys.status == said
        table.draw(peer, 0.0)  # the round is dealt now
        assert front.views[-1].status == "" and table.keys.status == ""
    table.keys, _ = press(KeyState(), "l", Context(peer.view, 0))
    table.draw(peer, 0.0)
    assert front.views[-1].status.startswith("pick a card first")  # (other words stay)


def test_the_players_last_actions_are_in_words() -> None:
    peer, front = _peer(), Shown()
    _table(front, peer).draw(peer, 0.0)
    last = [text for text in front.views[-1].last if text]
    assert last, "a played game's players have last actions"
    for text in last:  # (once "N>L 5♠", "S": notation)
        assert ">" not in text and text not in ("S", "P", "X", "R"), last
        assert text in ("stuck", "Nerts!", "turned the stock", "rotated the stock") or (
            " onto " in text or " to the lake" in text or " under " in text
        ), last
