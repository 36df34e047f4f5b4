"""The browser table's wire and the controller's drops, with no browser: what the page is sent
(:func:`~p2p_nertz.web.model.view_json`), what it may send (:func:`parse_action`), and what a
drop means (:meth:`TableController.drop`: the terminal's keys, the nearest fitting pile wins).

A real peer core mid-round, from a simulated network whose bots do nothing (the test plays)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.rules import Move, MoveKind, Pile, Rules, Table
from p2p_nertz.ui import PlayMove, TableController, TableView
from p2p_nertz.ui.keys import ENTER
from p2p_nertz.ui.tracker import PASSED_TURNS_FOR_YOU
from p2p_nertz.ui.view import card_text, passed_for_words
from p2p_nertz.web.model import (
    BadAction,
    Drop,
    KeyPress,
    _tableau,
    card_json,
    parse_action,
    view_json,
)
from p2p_nertz.web.picture import picture_of
from tests.peer_helpers import Paused, PeerNetwork

KEY = {Pile.NERTS: "n", Pile.WASTE: "w", Pile.LAKE: "l"} | {Pile(i): str(i) for i in range(1, 7)}


class Shown:
    def __init__(self) -> None:
        self.views: list[TableView] = []

    def show(self, view: TableView) -> None:
        self.views.append(view)


def _dealt() -> Peer:
    """Seat 0's peer of a three-player game, dealt; its stock turned until a card can move."""
    net = PeerNetwork(3, seed=4, rules=Rules(rounds=1, target=None), strategies={
        s: Paused() for s in range(3)
    })  # fmt: skip
    net.run(lambda n: all(p.phase is st.Phase.PLAY for p in n.peers))
    peer = net.peers[0]
    while not _card_moves(peer):
        net.play(0, Move.turn())
    return peer


def _controller(peer: Peer) -> TableController:
    return TableController(tuple(m.name for m in peer.spec.members), 0, Shown())


def _table(peer: Peer) -> Table:
    table = peer.tentative.table
    assert table is not None
    return table


def test_view_json_draws_every_pile_of_every_player_from_the_peer() -> None:
    peer = _dealt()
    controller = _controller(peer)
    data = view_json(controller.view(peer, 0.0), ack=3)
    json.dumps(data)  # (it goes on the wire as JSON)
    table = _table(peer)
    assert data["seat"] == 0 and data["ack"] == 3 and data["phase"] == "play"
    assert len(data["players"]) == 3
    for seat, player in enumerate(data["players"]):
        tableau = table.tableaux[seat]
        drawn = player["tableau"]
        assert drawn["nerts"]["count"] == len(tableau.nerts)
        assert drawn["nerts"]["top"] == card_json(tableau.nerts[-1])
        assert drawn["work"] == [[card_json(c) for c in pile] for pile in tableau.work]
        assert drawn["stock"] == len(tableau.stock)
    # Ours is known card by card; the others' cards the peer has not seen are drawn face down.
    ours = data["players"][0]["tableau"]
    assert ours["nerts"]["top"]["code"] == str(table.tableaux[0].nerts[-1])
    assert data["players"][1]["tableau"]["nerts"]["top"] is None
    assert data["lake"] == []


def test_view_json_says_whether_the_rules_let_a_stuck_player_rotate_alone() -> None:
    # (The page shows its rotate button only then, as the key is refused otherwise.)
    peer = _dealt()
    view = _controller(peer).view(peer, 0.0)
    assert view_json(view)["rotate_alone"] is False
    rotating = dataclasses.replace(view, rules=dataclasses.replace(view.rules, rotate_alone=True))
    assert view_json(rotating)["rotate_alone"] is True


def test_card_json_gives_rank_suit_colour_and_words() -> None:
    from p2p_nertz.rules import Card

    assert card_json(Card.parse("QS")) == {
        "code": "QS", "rank": "Q", "suit": "S", "red": False, "text": "Q♠",
    }  # fmt: skip
    assert card_json(Card.parse("AD"), symbols=False)["text"] == "AD"


def test_card_json_draws_every_card_not_known_here_face_down() -> None:
    """A shuffle game's sealed cards (docs/shuffle.md §10.2) are face down to everyone until
    the table opens them: never drawn as a card (an unknown card has no rank nor suit: it
    once came out as a joker)."""
    from p2p_nertz.rules import HIDDEN, Tableau, sealed

    assert card_json(HIDDEN) is None
    assert all(card_json(sealed(p)) is None for p in range(54))
    # A sealed deal, as a shuffle game's table has it before its face-up cards open.
    drawn = _tableau(Tableau.sealed(Rules()), True)
    assert drawn["nerts"] == {"count": 13, "top": None}
    assert drawn["work"] == [[None]] * 4


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("nonsense", "not JSON"),
        ("[1]", "not an object"),
        ('{"type": "move"}', "no action 'move'"),
        ('{"type": "key", "key": "ab"}', "not a key"),
        ('{"type": "key", "key": "\\n"}', "not a key"),
        ('{"type": "drop", "from": "l", "to": ["1"]}', "source"),
        ('{"type": "drop", "from": "n", "to": ["x"]}', "targets"),
        ('{"type": "drop", "from": "n", "to": "l"}', "targets"),
        ('{"type": "drop", "from": "n", "to": ["l"], "id": "7"}', "id"),
        ("{" + " " * 5000 + "}", "too long"),
    ],
)
def test_parse_action_refuses_what_the_page_does_not_send(text: str, why: str) -> None:
    with pytest.raises(BadAction, match=why):
        parse_action(text)


def test_parse_action_takes_keys_and_drops() -> None:
    assert parse_action('{"type": "key", "key": "s"}') == KeyPress("s")
    assert parse_action(b'{"type": "key", "key": "ESC"}') == KeyPress("ESC")
    assert parse_action('{"type": "drop", "from": "3", "to": ["l", "1"], "id": 2}') == Drop(
        "3", ("l", "1"), 2
    )


def _card_moves(peer: Peer) -> list[Move]:
    return [
        m
        for m in _table(peer).legal_moves(0)
        if m.kind is MoveKind.CARD and m.source is not None and m.target is not None
    ]


def test_a_drop_is_the_two_keys_and_the_nearest_fitting_pile_wins() -> None:
    peer = _dealt()
    controller = _controller(peer)
    move = _card_moves(peer)[0]
    source, target = KEY[move.source], KEY[move.target]  # type: ignore[index]
    # A pile it does not fit is nearer: it is passed over for the one that fits (aim assist).
    misfits = [
        k for k in ("1", "2", "3", "4") if k not in (source, target)
        and not controller.drop(source, [k], peer, 0.0)
    ]  # fmt: skip
    assert misfits, "some work pile does not take the card"
    requests = controller.drop(source, [misfits[0], target], peer, 0.0)
    assert len(requests) == 1 and isinstance(requests[0], PlayMove)
    assert requests[0].move.source is move.source and requests[0].move.target is move.target


def test_an_illegal_drop_says_why_the_nearest_pile_refused_and_asks_nothing() -> None:
    peer = _dealt()
    controller = _controller(peer)
    fits = {(KEY[m.source], KEY[m.target]) for m in _card_moves(peer)}  # type: ignore[index]
    source, target = next(
        (s, t) for s in ("n", "1", "2") for t in ("1", "2", "3") if s != t and (s, t) not in fits
    )
    assert controller.drop(source, [target], peer, 0.0) == []
    assert controller.keys.status.startswith("illegal: "), controller.keys.status
    assert view_json(controller.view(peer, 0.0))["refused"]  # (the page draws it as bad news)
    assert controller.keys.selected is None  # nothing stays picked after a refused drop


def test_a_drop_back_on_its_own_pile_or_nowhere_does_nothing() -> None:
    peer = _dealt()
    controller = _controller(peer)
    assert controller.drop("n", ["n"], peer, 0.0) == []
    assert controller.drop("n", [], peer, 0.0) == []
    assert controller.drop("n", ["l"], None, 0.0) == []  # before the node started
    assert controller.keys.status == ""


def test_the_round_picture_agrees_with_the_round_s_score() -> None:
    # A whole round of bots: each player's last point is its cards in the lake at scoring,
    # every race lost is won by someone, and a Nerts pile emptied only by whoever called.
    net = PeerNetwork(4, seed=7, rules=Rules(rounds=1, target=None))
    net.run_until_over()
    final = net.peers[0].final
    picture = picture_of(final, 1)
    assert picture is not None and picture.plays > 0
    score = final.past_rounds[0].expected or final.round.expected
    assert score is not None
    for player in score.players:
        points = picture.lake[player.seat]
        assert (points[-1][1] if points else 0) == player.lake
        if picture.emptied[player.seat] is not None:
            assert player.nerts_left == 0
    assert sum(map(len, picture.won)) == sum(map(len, picture.lost))
    assert picture_of(final, 9) is None


def _with_a_run() -> tuple[Peer, Move]:
    """Seat 0's peer with a work pile of two cards or more whose top part (not the whole
    pile) moves onto another work pile; and that move. (Built by playing: cards from the Nerts
    pile and the waste onto the work piles, the stock turned, until there is one.)"""
    net = PeerNetwork(3, seed=2, rules=Rules(rounds=1, target=None), strategies={
        s: Paused() for s in range(3)
    })  # fmt: skip
    net.run(lambda n: all(p.phase is st.Phase.PLAY for p in n.peers))
    peer = net.peers[0]
    for _ in range(300):
        tableau = _table(peer).tableaux[0]
        for m in _card_moves(peer):
            assert m.source is not None and m.target is not None
            if m.source.is_work and m.target.is_work and m.count < len(tableau.pile(m.source)):
                return peer, m
        builds = [
            m
            for m in _card_moves(peer)
            if m.target is not None and m.target.is_work and m.source in (Pile.NERTS, Pile.WASTE)
        ]
        net.play(0, builds[0] if builds else Move.turn())
    raise AssertionError("no run to split in 300 moves")


def test_a_drop_moves_exactly_the_run_grabbed_from_a_work_pile() -> None:
    peer, move = _with_a_run()
    assert move.source is not None and move.target is not None
    source, target = KEY[move.source], KEY[move.target]
    pile = _table(peer).tableaux[0].pile(move.source)
    # The top part that fits, grabbed by its first card: that run moves, as the keys' would.
    controller = _controller(peer)
    requests = controller.drop(source, [target], peer, 0.0, count=move.count)
    assert requests == [PlayMove(move)]
    # A card under it grabbed (the whole pile here): that run does not fit, so nothing moves
    # (the keys alone would have moved the top part: not the card the person picked up).
    assert _controller(peer).drop(source, [target], peer, 0.0)[0] == PlayMove(move)
    controller = _controller(peer)
    assert controller.drop(source, [target], peer, 0.0, count=len(pile)) == []
    assert controller.keys.status.startswith("illegal: "), controller.keys.status
    # Said as the same move typed is (the engine's reason, worded in one place), of that run.
    typed = _controller(peer)
    for key in (":", *f"{source}:{len(pile)}>{target}", ENTER):
        typed.press(key, peer, 0.0)
    assert controller.keys.status == typed.keys.status, typed.keys.status
    assert f"…{card_text(pile[-1])} does not go on" in typed.keys.status, typed.keys.status
    # Only a top card goes to the lake, whatever is under the one grabbed.
    controller = _controller(peer)
    assert controller.drop(source, ["l"], peer, 0.0, count=len(pile)) == []
    assert controller.keys.status == "illegal: only a pile's top card goes to the lake"


def test_a_drop_s_count_is_checked() -> None:
    assert parse_action('{"type": "drop", "from": "2", "to": ["1"], "count": 3}') == Drop(
        "2", ("1",), 0, 3
    )
    for count in ("-1", "53", '"2"', "true"):
        with pytest.raises(BadAction, match="count"):
            parse_action(f'{{"type": "drop", "from": "2", "to": ["1"], "count": {count}}}')


def test_view_json_names_the_stuck_button_as_the_way_back_of_skipped_turns() -> None:
    """Turn-based play, a player's turns passed for (RULES.md): the table's words said "p to
    take them back", a key a phone does not have; the page names its "stuck" button (the key
    still works there)."""
    peer = _dealt()
    view = _controller(peer).view(peer, 0.0)
    told = passed_for_words("you", "Ann", turns=True)
    skipped = dataclasses.replace(view, status=PASSED_TURNS_FOR_YOU, messages=(told,))
    data = view_json(skipped)
    way_back = "click “stuck” (or p) to take them back"
    assert data["status"].endswith(way_back), data["status"]
    assert data["messages"] == [told.replace("p to take them back", way_back)]
    # (The terminal's words are the table's own, unchanged.)
    assert PASSED_TURNS_FOR_YOU.endswith(": p to take them back")


def test_view_json_says_whose_turn_it_is_in_turn_based_play_only() -> None:
    peer = _dealt()
    view = _controller(peer).view(peer, 0.0)
    assert view_json(view)["turn"] is None  # (all at once: nobody's turn)
    turns = dataclasses.replace(view.rules, turn_based=True)
    table = dataclasses.replace(_table(peer), rules=turns, turn=1)
    data = view_json(dataclasses.replace(view, table=table, rules=turns))
    assert data["turn"] == f"turn: {peer.spec.members[1].name} (seat 1)"
    mine = dataclasses.replace(table, turn=0)
    assert view_json(dataclasses.replace(view, table=mine, rules=turns))["turn"] == "your turn"
