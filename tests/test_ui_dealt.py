""" "go!" only once the player's cards are up: in a shuffle deal each card dealt face up is
opened by the whole table's shares (docs/shuffle.md §10.14), in a commit deal by the player's
own ``ready`` once the deal is final (docs/protocol.md §8.3), which a busy machine may take
seconds over after the table opens. The table said "round 1 is dealt — go!" over ``??`` and stock
0, and a key then drew a refusal of the core. The real tracker and controller, fed a
simulated game's own notices, at the moment play opens with seat 0's cards still face down,
then once its view shows them."""

from __future__ import annotations

from dataclasses import dataclass, field

from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Move, Rules
from p2p_nertz.sim.network import SimConfig, Simulation
from p2p_nertz.ui import render
from p2p_nertz.ui.controller import TableController
from p2p_nertz.ui.keys import ESC, PlayMove
from p2p_nertz.ui.view import NOT_UP, TableView, cards_up
from p2p_nertz.web.model import view_json

TURNING = "round 1 is dealt: turning your cards up (waiting for the others)"
GO = "round 1 is dealt — go!"


class Shown:
    """A front end that keeps every view it is shown."""

    def __init__(self) -> None:
        self.views: list[TableView] = []

    def show(self, view: TableView) -> None:
        self.views.append(view)


@dataclass
class Moment:
    """What the table said and did at one moment of the game."""

    view: TableView
    keys: dict[str, list[object]] = field(default_factory=dict)
    statuses: dict[str, str] = field(default_factory=dict)


def _table(peer: Peer) -> TableController:
    return TableController(tuple(m.name for m in peer.spec.members), 0, Shown(), symbols=False)


def _sealed_then_up(
    seed: int, *, final: bool, deal: Deal = Deal.SHUFFLE, players: int = 2
) -> tuple[Moment, Moment]:
    """Seat 0's table of a game: first when play has opened to it (in its final fold, the
    deal's notice taken, if ``final``; else in its tentative fold, the notice still to come)
    with its own cards still face down, then once its view shows them; at each moment, after
    the view, the stock key and a work pile's key pressed (and at the first, Esc, and the
    status line then)."""
    config = SimConfig(
        players=players, seed=seed, deal=deal, rules=Rules(target=None, rounds=1),
        record_effects=True,
    )  # fmt: skip
    sim = Simulation(config)
    moments: list[Moment] = []
    fed = 0
    table: TableController | None = None

    def feed(peer: Peer, now: float) -> TableController:
        nonlocal fed, table
        table = table or _table(peer)
        for _, seat, effect in sim.result.effects[fed:]:
            if seat == 0:
                table.notice(effect, peer.final, now)
        fed = len(sim.result.effects)
        return table

    def at(s: Simulation) -> bool:
        peer = s.peers[0]
        if peer is None:
            return False
        fold = peer.final if final or moments else peer.tentative
        if fold.phase is not st.Phase.PLAY or peer.view is None:
            return False
        up = cards_up(peer.view, 0)
        if up != bool(moments):  # (the first moment sealed, the second up)
            return False
        now = 10.0 * (len(moments) + 1)
        controller = feed(peer, now)
        moment = Moment(controller.view(peer, now))
        for key in ("s", "1"):
            moment.keys[key] = list(controller.press(key, peer, now))
            moment.statuses[key] = controller.keys.status
        if not up:  # (a card dragged in the browser: the same refusal)
            moment.keys["drop"] = list(controller.drop("1", ["2", "l"], peer, now))
            moment.statuses["drop"] = controller.keys.status
            controller.press(ESC, peer, now)
            moment.statuses[ESC] = controller.view(peer, now).status
        moments.append(moment)
        return up

    sim.run(until=at)
    assert len(moments) == 2, "the game never showed seat 0's cards sealed, then up"
    return moments[0], moments[1]


def _keys_wait(sealed: Moment, up: Moment) -> None:
    """Keys pressed while the cards are sealed get a clear refusal and send nothing to the
    core; once they are up, the refusal gives way to "go!" and the keys play."""
    assert sealed.keys == {"s": [], "1": [], "drop": []}
    assert sealed.statuses == {
        "s": NOT_UP,
        "1": NOT_UP,
        "drop": NOT_UP,
        ESC: "",
    }  # (ESC: no "p passes")
    assert up.view.status == GO
    assert view_json(up.view)["status"] == GO
    assert up.keys["s"] == [PlayMove(Move.turn())]
    assert up.statuses["1"] != NOT_UP and "picked" in up.statuses["1"]


def test_the_deal_says_the_cards_are_turning_up_then_go_once_they_are() -> None:
    """Seed 0: play opens in seat 0's final fold (the deal's notice) before its cards show."""
    sealed, up = _sealed_then_up(0, final=True)
    # Sealed: the words say what is happening; no "go!" yet, anywhere.
    assert sealed.view.status == TURNING
    assert sealed.view.messages[-1] == TURNING
    assert not any("go!" in m for m in sealed.view.messages)
    assert "??" in render(sealed.view).text()
    assert view_json(sealed.view)["status"] == TURNING  # (the browser: the same words)
    # Up: "go!" said once, after the turning words.
    assert up.view.messages.count(TURNING) == 1 and up.view.messages.count(GO) == 1
    assert up.view.messages.index(TURNING) < up.view.messages.index(GO)
    _keys_wait(sealed, up)


def test_a_table_open_before_the_deals_notice_says_turning_up_not_go() -> None:
    """Seed 12: the tentative fold opens play (the table is drawn, the status line says the
    round is dealt) before the final fold's notice, with seat 0's cards sealed."""
    sealed, up = _sealed_then_up(12, final=False)
    assert sealed.view.status == TURNING
    assert not any("go!" in m for m in sealed.view.messages)
    _keys_wait(sealed, up)


def test_a_commit_deal_opened_before_its_ready_is_folded_says_turning_up_not_go() -> None:
    """A commit deal: the tentative fold opens play before the deal is final and our
    ``ready`` folded (docs/protocol.md §8.3): our tableau is 13 face-down cards, stock 0."""
    sealed, up = _sealed_then_up(0, final=False, deal=Deal.COMMIT, players=3)
    assert sealed.view.status == TURNING
    assert not any("go!" in m for m in sealed.view.messages)
    _keys_wait(sealed, up)
