"""Bots play from what a person at the table sees (issue 19): the face-up view, and memory.

The table a strategy is given (:meth:`Strategy.decide` hands it :meth:`Table.face_up`) holds no
face-down card, its owner's own included, and reading one raises :class:`FaceDownError`; the
lookahead bot's memory of the cards it saw follows them through its stock and waste.
"""

from __future__ import annotations

import pytest
from helpers_rules import IDLE, table_from

from p2p_nertz.bots import Strategy, make_strategy
from p2p_nertz.bots.lookahead import Lookahead
from p2p_nertz.errors import FaceDownError
from p2p_nertz.match import round_decks
from p2p_nertz.rng import Rng
from p2p_nertz.rules import HIDDEN, Card, Move, Rules, Table, Tableau

LAYOUT = "N: 4C 7D KS | 1: QH JS | 2: - | 3: 5D | 4: 8C | S: 2C 7H 9S | W: 3H 6C 3D"


# -- the view -------------------------------------------------------------------------------


def test_face_up_shows_the_tops_and_counts_and_nothing_below() -> None:
    t = Tableau.parse(LAYOUT)
    view = t.face_up()
    assert (len(view.nerts), len(view.stock), len(view.waste)) == (3, 3, 3)
    assert view.nerts[-1] == Card.parse("KS") and view.waste[-1] == Card.parse("3D")
    assert view.work == t.work
    assert str(view) == "N: ?? ?? KS | 1: QH JS | 2: - | 3: 5D | 4: 8C | S: ?? ?? ?? | W: ?? ?? 3D"
    # The face-down cards are not in the view at all, whatever way it is read.
    held = [tuple.__getitem__(p, i) for p in (view.nerts, view.stock) for i in range(3)]
    assert Card.parse("7D") not in held and Card.parse("9S") not in held


@pytest.mark.parametrize(
    ("pile", "read"),
    [
        ("Nerts pile", lambda t: t.nerts[-2]),
        ("stock", lambda t: t.stock[-1]),
        ("stock", lambda t: list(t.stock)),
        ("waste", lambda t: t.waste[0]),
        ("waste", lambda t: Card.parse("6C") in t.waste),
    ],
)
def test_face_up_reading_a_face_down_card_is_a_clear_error(pile: str, read: object) -> None:
    view = Tableau.parse(LAYOUT).face_up()
    with pytest.raises(FaceDownError, match=f"of the {pile} .* is face down"):
        read(view)  # type: ignore[operator]


def test_face_up_moves_tried_on_the_view_keep_it_covered() -> None:
    rules = Rules()
    view = Tableau.parse(LAYOUT).face_up()
    turned = view.apply(Move.turn(), rules)  # the turned cards are not known from the view
    assert (len(turned.stock), len(turned.waste)) == (0, 6)
    with pytest.raises(FaceDownError):
        turned.waste[-1]
    played = view.apply(Move.parse("N>2"), rules)
    assert played.work[1] == (Card.parse("KS"),)
    with pytest.raises(FaceDownError):
        played.nerts[-1]  # the card under the Nerts top is not turned up in a view


def test_face_up_table_covers_every_seat() -> None:
    table = Table.deal(Rules(), round_decks(Rules(), 3, 1, 3))
    view = table.face_up()
    assert view.lake is table.lake and view.stuck == table.stuck
    for seat, t in enumerate(view.tableaux):
        assert t.nerts[-1] == table.tableaux[seat].nerts[-1]
        with pytest.raises(FaceDownError):
            t.stock[0]


# -- the bots are given the view ------------------------------------------------------------


class Peeker(Strategy):
    """A strategy that reads the next card of its own stock, as a modified client would."""

    def choose(self, table: Table, seat: int) -> Move | None:
        stock = table.tableaux[seat].stock
        return Move.turn() if stock and stock[-1].rank == 1 else None


def test_decide_a_bot_that_reads_its_own_stock_gets_a_clear_error() -> None:
    table = table_from(IDLE, IDLE)
    assert table.tableaux[0].stock  # the full table the scheduler holds has a stock to read
    with pytest.raises(FaceDownError, match="of the stock"):
        Peeker().decide(table, 0)


@pytest.mark.parametrize("name", ["greedy", "lookahead"])
@pytest.mark.parametrize("rules", [Rules(), Rules(draw=1), Rules(jokers=2, rotate_alone=True)])
def test_decide_the_bots_play_whole_rounds_from_the_view(name: str, rules: Rules) -> None:
    # Every decision goes through decide (the view): a read of a face-down card would raise.
    for seed in range(3):
        table = Table.deal(rules, round_decks(rules, seed, 1, 3))
        bots = [make_strategy(name, Rng(seat)) for seat in range(3)]
        for step in range(4000):
            seat = step % 3
            move = bots[seat].decide(table, seat)
            if move is not None:
                table, _ = table.play(seat, move)
            if table.over:
                break
        assert table.over


# -- the lookahead's memory -----------------------------------------------------------------


@pytest.mark.parametrize("rules", [Rules(), Rules(draw=1), Rules(rotate_alone=True)])
def test_lookahead_remembers_each_card_it_saw_where_it_lies(rules: Rules) -> None:
    # The bot follows its stock and waste from the view alone; at every look, each place it
    # remembers holds the card it says, and it remembers exactly the cards it has seen on top
    # of its waste that are still in its stock or waste.
    checked = 0
    for seed in range(4):
        table = Table.deal(rules, round_decks(rules, seed, 1, 2))
        bots = [Lookahead(Rng(0)), Lookahead(Rng(1))]
        seen: set[Card] = set()
        for step in range(3000):
            seat = step % 2
            move = bots[seat].decide(table, seat)
            if seat == 0:
                t = table.tableaux[0]
                if t.waste:
                    seen.add(t.waste[-1])
                cycle = bots[0]._cycle  # private: the bot's memory
                truth = (*t.waste, *t.stock[::-1])
                assert cycle.cards is not None and len(cycle.cards) == len(truth)
                for remembered, card in zip(cycle.cards, truth, strict=True):
                    assert remembered in (None, card)
                    assert (remembered is not None) == (card in seen)
                checked += 1
            if move is not None:
                table, _ = table.play(seat, move)
            if table.over:
                break
    assert checked > 200
    assert HIDDEN not in seen


def test_decide_an_opponent_s_deal_not_shown_yet_reads_as_hidden() -> None:
    # The simulator's bots play from their own deal on, before the others' deals are shown:
    # their face-up cards are unknown to this machine (HIDDEN), which a bot may read and skip.
    rules = Rules()
    unknown = Tableau(
        (HIDDEN,) * 13, tuple((HIDDEN,) for _ in range(4)), (HIDDEN,) * rules.stock_size, ()
    )
    table = Table.from_tableaux(rules, [Tableau.parse(LAYOUT.replace("3: 5D", "3: AD")), unknown])
    assert table.face_up().tableaux[1].nerts[-1] is HIDDEN
    for name in ("greedy", "lookahead"):
        assert make_strategy(name, Rng(0)).decide(table, 0) is not None
