"""A refusal that says to wait, on a player's table, once its wait is over: the status line
says so, and what to do now (:mod:`p2p_nertz.ui.waits`), where the refusal's words stayed until
the next key, no longer true (session 32's CI read "still getting your own moves back" for
60 s after they were: tests/test_ui_caught_up.py). The same for each wait that ends by itself:
a card in the air until its claim is decided, the stocks turning over until that is final, the
others' votes until they are withdrawn, a vote on a drop, the silence an abandon waits for.
Real peer cores on a seeded network (``PeerNetwork``: no sockets, no clock), the controller as
the terminal and the browser run it, the refusal the core's or the keys' (said before the core
is asked).
"""

from __future__ import annotations

from typing import Any

import pytest
from peer_helpers import Paused, PeerNetwork
from test_local_held_back import _vote, _withdraw
from test_ui_controller import Shown

from p2p_nertz.protocol.local import AbandonRefused, MoveAnswer, MoveRefusal, MoveRefused
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.player import LocalPlayer
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Move, Pile, Rules
from p2p_nertz.ui import TableController
from p2p_nertz.ui.keys import Confirm
from p2p_nertz.ui.refusals import (
    ABANDON_NOW,
    BACK_IN,
    HELD_BACK,
    STOCKS_FREE,
    TURNING_OVER,
    decided_words,
    in_the_air_words,
    landed_words,
)

SEAT = 1
_KEYS = {Pile.NERTS: "n", Pile.WASTE: "w"}


def _dealt() -> PeerNetwork:
    """Two players dealt, their bots paused: the test plays every move."""

    def dealt(net: PeerNetwork) -> bool:
        return all(
            (table := peer.view) is not None and Move.turn() in table.legal_moves(seat)
            for seat, peer in enumerate(net.peers)
        )

    net = PeerNetwork(
        2, seed=3, rules=Rules(target=None, rounds=1), strategies={0: Paused(), 1: Paused()}
    )
    net.run(dealt)
    return net


def _table(peer: Peer, seat: int = SEAT) -> TableController:
    table = TableController(tuple(m.name for m in peer.spec.members), seat, Shown(), symbols=False)
    table.view(peer, 0.0)  # (the table is up: the deal said)
    return table


def _status(table: TableController, peer: Peer, now: float) -> str:
    return table.view(peer, now).status


def _in_the_air(net: PeerNetwork, peer: Peer) -> Pile:
    """Turn the stock until a card of the Nerts pile or the waste plays to the lake, and play
    it: its claim goes out, the other has not answered. The pile it came from."""
    for _ in range(60):
        lake = [m for m in peer.view.legal_moves(SEAT) if m.is_lake and m.source in _KEYS]
        if lake:
            break
        net.play(SEAT, Move.turn())
    pile = lake[0].source
    assert pile is not None
    net.play(SEAT, lake[0])
    return pile


def test_a_pile_whose_card_is_in_the_air_is_said_free_once_the_claim_is_decided() -> None:
    net = _dealt()
    peer = net.peers[SEAT]
    table = _table(peer)
    pile = _in_the_air(net, peer)
    assert pile in peer.player.claimed_piles()
    table.press(_KEYS[pile], peer, net.now)  # (the keys refuse before the core is asked)
    assert _status(table, peer, net.now) == f"illegal: {in_the_air_words(pile)}"
    net.run(lambda n: pile not in peer.player.claimed_piles())
    assert _status(table, peer, net.now) == landed_words(pile)
    table.press(_KEYS[pile], peer, net.now)  # (the pile is picked now, where it was refused)
    assert table.keys.selected is pile or not peer.view.tableaux[SEAT].pile(pile)


@pytest.mark.parametrize("by", ["key", "core"])
def test_a_move_refused_while_the_stocks_turn_over_is_said_free_once_that_is_final(
    by: str,
) -> None:
    net = _dealt()
    peer = net.peers[SEAT]
    table = _table(peer)
    net.play(0, Move.pass_())
    net.run(lambda n: peer.view is not None and peer.view.stuck[0])
    net.play(SEAT, Move.pass_())  # (everyone stuck: the stocks turn over here, not final yet)
    assert peer.player.rotation_pending()
    if by == "key":  # (the keys' words are the core's: not a card in the air)
        table.press("s", peer, net.now)
        assert _status(table, peer, net.now) == f"illegal: {TURNING_OVER}"
    else:
        with pytest.raises(MoveRefused) as refused:
            peer.play(Move.turn(), net.now)
        assert refused.value.answer.refusal is MoveRefusal.ROTATING
        table.refused(refused.value.answer)
        assert _status(table, peer, net.now) == TURNING_OVER
    net.run(lambda n: not peer.player.rotation_pending())
    assert _status(table, peer, net.now) == STOCKS_FREE
    peer.play(Move.turn(), net.now)  # (the move, made again, is taken)


def test_a_move_refused_while_the_others_vote_us_out_is_said_over_once_withdrawn() -> None:
    """Seats 1 and 2 vote seat 0 out three events back, seat 1's withdrawal held late
    (tests/test_local_held_back.py): the keys refuse a move as the core would."""
    net = PeerNetwork(3, seed=5)
    net.run(lambda n: n.peers[0].final.phase is Phase.PLAY and n.peers[0].held(0) >= 12)
    peer, now = net.clone(0), net.last_input_time[0]
    table = _table(peer, 0)
    cut = peer.held(0) - 3
    peer.feed(_vote(peer, net, 1, cut), now)
    at = peer.events(1)[-1].lamport
    late = _withdraw(peer, net, 1, cut, at + 1)
    peer.feed(_vote(peer, net, 2, cut, at + 3), now)
    table.press("s", peer, now)
    assert _status(table, peer, now) == HELD_BACK
    peer.feed(late, now)
    assert _status(table, peer, now) == BACK_IN


class _Pending:
    """A peer as the table reads it, its player's :meth:`LocalPlayer.drop_pending` stood in
    for by ``pending[0]`` (the table's layer above the core: a compiled core's methods are
    read-only, so the stand-in is the peer the table is shown)."""

    def __init__(self, peer: Peer, pending: list[bool]) -> None:
        self._peer, self.player = peer, _PendingPlayer(peer.player, pending)

    def __getattr__(self, name: str) -> object:
        return getattr(self._peer, name)


class _PendingPlayer:
    def __init__(self, player: LocalPlayer, pending: list[bool]) -> None:
        self._player, self._pending = player, pending

    def __getattr__(self, name: str) -> object:
        return getattr(self._player, name)

    def drop_pending(self) -> bool:
        return self._pending[0]


def test_a_move_refused_while_the_table_decides_a_drop_is_said_over_once_it_has() -> None:
    """The core's own refusal (tests/test_local_drop_pending.py), its end as the player's
    core says it (:meth:`LocalPlayer.drop_pending`) stood in for: a real undecided drop takes
    a withdrawal held at once (scan_late_lift.py --pairs, seed 32)."""
    net = _dealt()
    peer = net.peers[SEAT]
    table = _table(peer)
    assert not peer.player.drop_pending()  # (the real core: nobody's drop undecided)
    pending = [True]
    shown: Any = _Pending(peer, pending)
    table.refused(MoveAnswer(MoveRefusal.DROP_PENDING, seats=(0,)))
    assert _status(table, shown, net.now) == "wait: the table is deciding whether p0 has gone"
    pending[0] = False
    assert _status(table, shown, net.now) == decided_words((0,), ["p0", "p1"].__getitem__)


@pytest.mark.parametrize("by", ["key", "core"])
def test_an_abandon_refused_while_the_other_was_heard_is_said_possible_once_it_is(by: str) -> None:
    net = _dealt()
    peer = net.peers[SEAT]
    table = _table(peer)
    if by == "key":
        table.press("a", peer, net.now)
        assert _status(table, peer, net.now) == (
            "cannot abandon: p0 is still answering (an abandon needs them gone)"
        )
    else:
        with pytest.raises(AbandonRefused) as refused:
            peer.abandon(net.now)
        table.abandon_refused(refused.value.answer)
        assert _status(table, peer, net.now).startswith("cannot abandon: p0 was heard lately")
    said = _status(table, peer, net.now)
    net.silence(0)  # (its network down: silent from now on)
    net.run(lambda n: n.now > 20.0 or peer.abandon_answer(n.now).why is None)
    assert _status(table, peer, net.now) == said  # (heard a while ago: the wait goes on)
    net.run(lambda n: peer.abandon_answer(n.now).why is None)
    assert _status(table, peer, net.now) == ABANDON_NOW
    table.press("a", peer, net.now)
    assert table.keys.confirm is Confirm.ABANDON  # (the key asks now, where it refused)


def _replaced(how: str, table: TableController, peer: Peer, now: float) -> str:
    """Replace a refusal on ``table``'s status line by other words, as ``how`` does; what the
    line says then."""
    if how == "abandoned":  # (the controller's own words: the node took an abandon)
        table.abandoned()
    else:  # (a key: "?" then any key closes the help; Enter clears the line)
        for key in {"help": ["?", "z"], "enter": ["ENTER"]}.get(how, [how]):
            table.press(key, peer, now)
    return table.keys.status


def test_a_status_replaced_by_an_unrelated_one_never_keeps_the_old_refusals_wait() -> None:
    """A card in the air refused by the keys, the line then replaced by other words (another
    key's, the controller's): once the claim is decided the line still says those words,
    never the refused pile's "no longer in the air" (the refusal went with its words). One
    network, a table per way of replacing the line."""
    net = _dealt()
    peer = net.peers[SEAT]
    pile = _in_the_air(net, peer)
    ways = ["z", "l", "enter", "help", "abandoned"]
    tables = {how: _table(peer) for how in [*ways, "kept"]}
    said: dict[str, str] = {}
    for how, table in tables.items():
        table.press(_KEYS[pile], peer, net.now)  # (the keys refuse before the core is asked)
        assert table.keys.refusal == MoveAnswer(MoveRefusal.IN_THE_AIR, pile=pile)
        said[how] = table.keys.status if how == "kept" else _replaced(how, table, peer, net.now)
        assert table.keys.refusal is None or how == "kept"
    assert said["kept"] == f"illegal: {in_the_air_words(pile)}"
    assert tables["kept"].view(peer, net.now).refused  # (a refusal: drawn as bad news)
    assert all(said[how] != said["kept"] for how in ways)
    net.run(lambda n: pile not in peer.player.claimed_piles())
    for how, table in tables.items():
        view = table.view(peer, net.now)
        assert table.keys.status == (landed_words(pile) if how == "kept" else said[how]), how
        assert not view.refused or how in ("z", "l")  # (their words: refusals of their own)
