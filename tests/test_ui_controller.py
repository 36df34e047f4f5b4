"""The table controller on its own (p2p_nertz/ui/controller.py): keys, pointer actions, signals
and time in, requests for the node out, views to any front end. No terminal, no event loop:
a front end that keeps what it is shown, and a real peer core from a simulated game."""

from __future__ import annotations

import signal

from p2p_nertz.errors import IllegalMoveError
from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.rules import Card, Illegality, Move, Rules, Why
from p2p_nertz.sim import SimConfig, Simulation
from p2p_nertz.ui import Abandon, Leave, PlayMove, TableController, TableView
from p2p_nertz.ui.controller import BETWEEN_ROUNDS, CTRL_C, Quit, ReleaseReady
from p2p_nertz.ui.keys import Context, KeyState, press
from p2p_nertz.ui.render import render
from p2p_nertz.ui.tracker import GAME_OVER, status_line
from p2p_nertz.web.model import view_json


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


def _at_deal(number: int) -> Peer:
    """Seat 0's peer in a game of two rounds, stopped once round ``number``'s table is open
    to it (its stock can turn) and not over (the same game for each number: a simulation is
    its seed's)."""

    def dealt(sim: Simulation) -> bool:
        peer = sim.peers[0]
        assert peer is not None
        table = peer.view
        if peer.tentative.round.number != number or table is None or table.over:
            return False
        return Move.turn() in table.legal_moves(0)

    config = SimConfig(players=2, seed=6, rules=Rules(target=None, rounds=2))
    peer = Simulation(config).run(until=dealt).peers[0]
    assert peer is not None and peer.tentative.round.number == number
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
    # The engine's refusal says its reason as a value: the table words that, never the
    # message (which ends with a tableau dump).
    nine, eight = Card.parse("9H"), Card.parse("8H")
    reason = Illegality(Why.NO_FOUNDATION, nine, needs=eight)
    table.refused(IllegalMoveError("W>L: 9H fits on no foundation in N: KS | 1: 2D", reason=reason))
    assert table.keys.status == "illegal: 9H fits on no foundation (it needs an 8H on top)"
    table.refused("W>L: a card it needs is not seen here yet")
    assert table.keys.status == "illegal: W>L: a card it needs is not seen here yet"
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
    peer, front = _at_deal(1), Shown()
    table = _table(front, peer)
    for key, said in (("n", "not dealt yet"), ("s", "illegal: the round is not dealt yet")):
        table.keys, _ = press(KeyState(), key, Context(None, 0))  # (a key before the deal)
        assert table.keys.status == said
        table.draw(peer, 0.0)  # the round is dealt now: the deal's words, or none
        assert front.views[-1].status in ("", table.tracker.dealt(1))
        assert table.keys.status in ("", table.tracker.dealt(1))
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


def test_a_new_rounds_deal_replaces_the_last_rounds_status_line() -> None:
    # Seen: "played A♥ to the lake" under round 2's fresh table, the board of round 1 having
    # closed by its countdown (no key cleared it). Both tables (the terminal and the page)
    # show what the controller's view says.
    first, second = _at_deal(1), _at_deal(2)
    front = Shown()
    table = _table(front, first)
    table.draw(first, 0.0)
    assert front.views[-1].status == table.tracker.dealt(1)
    assert table.press("s", first, 1.0) == [PlayMove(Move.turn())]
    said = table.keys.status
    assert said and said != table.tracker.dealt(1)
    # Round 1 is over: its board is up, and closes by itself at the end of its countdown.
    final = second.final
    number = final.history[0][0]
    table.notice(st.RoundScored(number, final.scores[0], final.game.totals), final, 2.0)
    assert table.tick(2.0) == []
    table.draw(second, 3.0)
    assert front.views[-1].board is not None and front.views[-1].status == said
    assert table.tick(2.0 + BETWEEN_ROUNDS) == [ReleaseReady(2)]
    table.notice(st.PhaseChanged(st.Phase.PLAY, 2), final, 2.0 + BETWEEN_ROUNDS)
    table.draw(second, 3.0 + BETWEEN_ROUNDS)
    view = front.views[-1]
    assert view.board is None and view.round == 2
    assert view.status == table.tracker.messages[-1] == "round 2 is dealt — go!", view.status
    assert view_json(view)["status"] == view.status  # the page
    assert view.status in render(view).text()  # the terminal
    # A key of the new round keeps its words: the deal is said once.
    assert table.press("s", second, 40.0) == [PlayMove(Move.turn())]
    table.draw(second, 41.0)
    assert front.views[-1].status == table.keys.status != view.status


def test_a_key_on_a_new_rounds_table_before_it_is_drawn_keeps_its_words() -> None:
    # A key pressed on round 2's table before any view of it was drawn: its status is the
    # key's, not overwritten by the deal's at the next draw; a question waiting stays too.
    first, second = _at_deal(1), _at_deal(2)
    front = Shown()
    table = _table(front, first)
    table.draw(first, 0.0)
    table.press("s", first, 1.0)
    assert table.press("s", second, 2.0) == [PlayMove(Move.turn())]
    said = table.keys.status
    table.draw(second, 3.0)
    assert front.views[-1].status == said != table.tracker.dealt(2)
    table = _table(front, first)
    table.draw(first, 0.0)
    table.press("q", first, 1.0)
    asked = table.keys.status
    table.draw(second, 2.0)
    assert front.views[-1].status == asked and asked.startswith("leave the game?")


def test_the_status_line_says_the_game_is_over_not_the_deal_s_go() -> None:
    # A newcomer's `nertz play --bots 7 --speed 10` ended with "round 1 is dealt — go!" under
    # the board's "game over". The table is drawn at every step of a game, as a front end is.
    config = SimConfig(players=2, seed=6, rules=Rules(target=None, rounds=1))
    front, tables = Shown(), []

    def draw(sim: Simulation) -> bool:
        peer = sim.peers[0]
        assert peer is not None
        if not tables:
            tables.append(_table(front, peer))
        tables[0].draw(peer, 0.0)
        return False

    peer = Simulation(config).run(until=draw).peers[0]
    assert peer is not None and peer.tentative.phase is st.Phase.OVER
    dealt = tables[0].tracker.dealt(1)
    assert any(v.status == dealt for v in front.views)  # (said while the round was on)
    for stopped in (False, True):  # the fold says it is over; then the node stopped too
        if stopped:
            tables[0].node_stopped()
        tables[0].draw(peer, 1.0)
        view = front.views[-1]
        assert view.status == GAME_OVER and view.final is stopped
        screen = render(view)
        assert screen.line(screen.height - 2) == GAME_OVER  # (the status row, above the keys)
        assert view_json(view)["status"] == GAME_OVER  # (the page's status line too)
    # A question asked then is not hidden (the node still running: q asks first).
    asked = "leave the game? y leaves"
    assert status_line(None, 0, asked, asking=True, over=True) == asked


def test_a_card_picked_as_the_round_ends_is_let_go_under_its_board() -> None:
    # Seen at the terminal: "7♦ picked: l to the lake, 1-4 onto a work pile, Esc cancels"
    # under the board of a round that was over, naming keys that play nothing there.
    first, second = _at_deal(1), _at_deal(2)
    front = Shown()
    table = _table(front, first)
    table.draw(first, 0.0)
    assert table.press("n", first, 1.0) == [] and table.keys.selected is not None
    final = second.final
    number = final.history[0][0]
    table.notice(st.RoundScored(number, final.scores[0], final.game.totals), final, 2.0)
    table.draw(second, 3.0)
    view = front.views[-1]
    assert view.board is not None and view.selected is None
    assert "picked" not in view.status and "picked" not in view_json(view)["status"]
    assert "picked" not in render(view).text()  # (the terminal's board)
    assert table.press("l", second, 4.0) == []  # (nothing picked: the lake key plays nothing)


def test_a_card_picked_as_the_game_ends_does_not_hide_that_it_is_over() -> None:
    # The game's last round ended with a card picked: its words stayed where the status line
    # says "the game is over" (a pick counted as a question asked).
    config = SimConfig(players=2, seed=6, rules=Rules(target=None, rounds=1))
    front, tables = Shown(), []

    def pick_then_draw(sim: Simulation) -> bool:
        peer = sim.peers[0]
        assert peer is not None
        if not tables:
            tables.append(_table(front, peer))
        table = tables[0]
        if table.keys.selected is None and peer.view is not None and not peer.view.over:
            table.press("n", peer, 0.0)  # (picked again after each move the sim plays)
        table.draw(peer, 0.0)
        return False

    peer = Simulation(config).run(until=pick_then_draw).peers[0]
    assert peer is not None and peer.tentative.phase is st.Phase.OVER
    assert any("picked" in v.status for v in front.views)  # (said while the round was on)
    final = peer.final
    number = final.history[0][0]
    tables[0].notice(st.RoundScored(number, final.scores[0], final.game.totals), final, 1.0)
    tables[0].draw(peer, 1.0)  # (the board the round's score put up)
    view = front.views[-1]
    assert view.board is not None and view.status == GAME_OVER and view.selected is None
