"""One player's layout (RULES.md: deal, work piles, Nerts pile, stock and waste)."""

from __future__ import annotations

import pytest
from helpers_rules import pile_is_valid, table_from

from p2p_nertz.errors import IllegalMoveError
from p2p_nertz.rules import (
    HIDDEN,
    NERTS_PILE_SIZE,
    Card,
    Move,
    Pile,
    Rules,
    Table,
    Tableau,
    fits_on,
    format_cards,
    new_deck,
    shuffled_deck,
)


def apply(text: str, move: str, rules: Rules | None = None) -> str:
    """The tableau ``text`` after ``move``, in notation."""
    return str(Tableau.parse(text).apply(Move.parse(move), rules))


def assert_refused(text: str, move: str, fragment: str, rules: Rules | None = None) -> None:
    """The move raises IllegalMoveError naming the move, and the tableau is unchanged."""
    t = Tableau.parse(text)
    before = str(t)
    with pytest.raises(IllegalMoveError) as info:
        t.apply(Move.parse(move), rules)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert str(Move.parse(move)) in message, message
    assert fragment in message, message
    assert str(t) == before
    assert t == Tableau.parse(before)


# -- the deal -----------------------------------------------------------------------------


@pytest.mark.parametrize(("piles", "stock"), [(4, 35), (5, 34), (6, 33)])
def test_deal_gives_13_nerts_one_card_per_work_pile_and_the_rest_to_stock(
    piles: int, stock: int
) -> None:
    rules = Rules(work_piles=piles)
    t = Tableau.deal(shuffled_deck(b"deal"), rules)
    assert len(t.nerts) == NERTS_PILE_SIZE == 13
    assert [len(p) for p in t.work] == [1] * piles
    assert len(t.stock) == stock == rules.stock_size
    assert t.waste == ()
    assert sorted(t.cards(), key=Card.sort_key) == list(new_deck())


def test_deal_with_jokers_puts_the_extra_cards_in_the_stock() -> None:
    rules = Rules(jokers=2)
    t = Tableau.deal(shuffled_deck(b"deal", 2), rules)
    assert (len(t.nerts), len(t.work), len(t.stock)) == (13, 4, 37)
    assert sorted(t.cards(), key=Card.sort_key) == list(new_deck(2))


def test_deal_takes_cards_from_the_top_of_the_deck_in_order() -> None:
    # The last card of the deck tuple is the top of the face-down deck, dealt first.
    deck = new_deck()
    t = Tableau.deal(deck)
    assert t.nerts == tuple(reversed(deck[-13:]))
    assert t.work == tuple((c,) for c in reversed(deck[-17:-13]))
    assert t.stock == deck[:35]
    # Only the 13th card dealt to the Nerts pile is face up: the one in play.
    assert t.top(Pile.NERTS) == deck[-13] == t.nerts[-1]


def test_deal_nerts_next_card_is_turned_up_when_the_top_leaves() -> None:
    t = Tableau.parse("N: 2C 9S 6H | 1: 7S | 2: 5D | 3: QD | 4: KC")
    t2 = t.apply(Move.parse("N>1"))
    assert t2.top(Pile.NERTS) == Card.parse("9S")
    assert t2.nerts == (Card.parse("2C"), Card.parse("9S"))
    assert t2.work[0] == (Card.parse("7S"), Card.parse("6H"))


@pytest.mark.parametrize("piles", [4, 5, 6])
def test_deal_shows_the_nerts_top_then_each_work_pile(piles: int) -> None:
    rules = Rules(work_piles=piles)
    t = Tableau.deal(shuffled_deck(b"shown"), rules)
    assert t.shown == (t.top(Pile.NERTS), *(t.top(p) for p in t.work_piles))
    # The others follow that deal with every other card face down, in the same places.
    followed = Tableau.followed(t.shown, rules)
    assert followed.shown == t.shown
    assert [len(p) for p in (followed.nerts, *followed.work, followed.stock)] == [
        len(p) for p in (t.nerts, *t.work, t.stock)
    ]
    assert sum(c is not HIDDEN for c in followed.cards()) == 1 + piles


@pytest.mark.parametrize("draw", [1, 3])
def test_reveals_are_the_cards_a_move_turns_face_up(draw: int) -> None:
    rules = Rules(draw=draw)
    t = Tableau.deal(shuffled_deck(b"reveals"), rules)
    for _ in range(40):  # through the stock and over again, with some building in between
        turn = Move.parse("S")
        shown = t.reveals(turn, rules)
        after = t.apply(turn, rules)
        if t.stock:
            # What lands on the waste, the top of the stock first: the newly face-up cards.
            assert shown == after.waste[len(t.waste) :][: len(shown)]
            assert len(shown) == min(draw, len(t.stock))
        else:
            assert shown == ()  # turning the waste over shows nothing new
        t = after
    take = Move.parse("N>L")
    assert t.reveals(take, rules) == (t.nerts[-2],)
    assert t.take(Pile.NERTS)[1].top(Pile.NERTS) == t.reveals(take, rules)[0]
    for move in ("1>2", "W>L", "R", "P", "X"):
        assert t.reveals(Move.parse(move), rules) == ()
    last = Tableau.parse("N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: - | W: -")
    assert last.reveals(take, rules) == ()  # the last Nerts card uncovers nothing


@pytest.mark.parametrize("size", [51, 53])
def test_deal_refuses_a_deck_of_the_wrong_size(size: int) -> None:
    deck = (new_deck(1) * 2)[:size]
    with pytest.raises(ValueError, match="52 cards"):
        Tableau.deal(deck)


def test_table_deal_gives_every_seat_its_own_deck() -> None:
    decks = [shuffled_deck(bytes([i])) for i in range(3)]
    table = Table.deal(Rules(work_piles=6), decks)
    assert [len(t.stock) for t in table.tableaux] == [33, 33, 33]
    for seat, deck in enumerate(decks):
        assert table.tableaux[seat] == Tableau.deal(deck, Rules(work_piles=6))


# -- building on work piles ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("card", "base"),
    [("6H", "7S"), ("6D", "7C"), ("10S", "JH"), ("QC", "KD"), ("AH", "2S"), ("9C", "10D")],
)
def test_build_down_alternating_colours(card: str, base: str) -> None:
    assert fits_on(Card.parse(card), Card.parse(base))
    text = f"N: {card} | 1: {base} | 2: 3C | 3: 3S | 4: 3H"
    assert apply(text, "N>1") == f"N: - | 1: {base} {card} | 2: 3C | 3: 3S | 4: 3H | S: - | W: -"


@pytest.mark.parametrize(
    ("card", "base"),
    [("6D", "7H"), ("6S", "7C"), ("5H", "7S"), ("8H", "7S"), ("7H", "7S"), ("KD", "AS")],
)
def test_build_refuses_same_colour_or_wrong_rank(card: str, base: str) -> None:
    assert not fits_on(Card.parse(card), Card.parse(base))
    assert_refused(f"N: {card} | 1: {base} | 2: 3C | 3: 3S | 4: 3H", "N>1", "does not fit")


def test_build_from_waste_and_from_another_pile() -> None:
    text = "N: KS | 1: 9C | 2: 8D | 3: 5C | 4: 3H | S: 2C | W: AS 7S"
    assert apply(text, "W>2") == "N: KS | 1: 9C | 2: 8D 7S | 3: 5C | 4: 3H | S: 2C | W: AS"
    assert apply(text, "2>1") == "N: KS | 1: 9C 8D | 2: - | 3: 5C | 4: 3H | S: 2C | W: AS 7S"


def test_move_run_takes_the_cards_on_top_of_it() -> None:
    text = "N: KS | 1: 9C 8H 7S 6D | 2: 9S | 3: - | 4: QD"
    after = apply(text, "1:3>2")
    assert after == "N: KS | 1: 9C | 2: 9S 8H 7S 6D | 3: - | 4: QD | S: - | W: -"
    # The whole pile can move too, and any run may go into an empty pile.
    assert apply(text, "1:4>3") == "N: KS | 1: - | 2: 9S | 3: 9C 8H 7S 6D | 4: QD | S: - | W: -"
    assert apply(text, "1:2>3") == "N: KS | 1: 9C 8H | 2: 9S | 3: 7S 6D | 4: QD | S: - | W: -"


def test_move_run_refused_when_its_bottom_card_does_not_fit() -> None:
    text = "N: KS | 1: 9C 8H 7S 6D | 2: 9S | 3: 5H | 4: QD"
    assert_refused(text, "1:2>2", "7S does not fit on 9S")
    assert_refused(text, "1:5>3", "has 4 card(s), not 5")
    assert_refused(text, "1:2>1", "cannot move onto itself")


def test_move_to_a_missing_work_pile_is_refused() -> None:
    assert_refused("N: KS | 1: 9C | 2: 9S | 3: 5H | 4: QD", "N>5", "there is no work pile 5")
    assert_refused("N: KS | 1: 9C | 2: 9S | 3: 5H | 4: QD", "6>1", "there is no work pile 6")


@pytest.mark.parametrize(
    ("move", "after"),
    [
        ("N>2", "N: 3C | 1: 9C | 2: KS | 3: 5H 4S | 4: QD | S: - | W: 7D"),
        ("W>2", "N: 3C KS | 1: 9C | 2: 7D | 3: 5H 4S | 4: QD | S: - | W: -"),
        ("1>2", "N: 3C KS | 1: - | 2: 9C | 3: 5H 4S | 4: QD | S: - | W: 7D"),
        ("3:2>2", "N: 3C KS | 1: 9C | 2: 5H 4S | 3: - | 4: QD | S: - | W: 7D"),
        ("3>2", "N: 3C KS | 1: 9C | 2: 4S | 3: 5H | 4: QD | S: - | W: 7D"),
    ],
)
def test_empty_pile_takes_any_card_from_nerts_waste_or_a_pile(move: str, after: str) -> None:
    assert apply("N: 3C KS | 1: 9C | 2: - | 3: 5H 4S | 4: QD | W: 7D", move) == after


def test_empty_pile_fill_refuses_a_declaration() -> None:
    assert_refused("N: KS | 1: 9C | 2: - | 3: 5H | 4: QD", "N>2=5H", "no joker is fixed")
    assert_refused("N: 8D | 1: 9C | 2: - | 3: 5H | 4: QD", "N>1=8D", "no joker is fixed")


def test_nerts_and_waste_move_one_card_at_a_time() -> None:
    # The notation already refuses "N:2>1"; a Move built directly is refused by the tableau.
    t = Tableau.parse("N: 7H 8D | 1: 9C | 2: - | 3: 5H | 4: QD")
    with pytest.raises(IllegalMoveError, match="one card at a time"):
        t.apply(Move.to_pile(Pile.NERTS, Pile.W2, 2))


@pytest.mark.parametrize(
    ("text", "move", "fragment"),
    [
        ("N: - | 1: 9C | 2: - | 3: 5H | 4: QD", "N>2", "Nerts pile is empty"),
        ("N: KS | 1: 9C | 2: - | 3: 5H | 4: QD | W: -", "W>2", "waste is empty"),
        ("N: KS | 1: 9C | 2: - | 3: 5H | 4: QD", "2>3", "has 0 card(s)"),
    ],
)
def test_moving_from_an_empty_pile_is_refused(text: str, move: str, fragment: str) -> None:
    assert_refused(text, move, fragment)


def test_apply_refuses_lake_moves() -> None:
    assert_refused("N: AS | 1: 9C | 2: - | 3: 5H | 4: QD", "N>L", "Table.play")


# -- slide-under --------------------------------------------------------------------------


def test_slide_under_puts_the_card_below_the_base() -> None:
    text = "N: 2C 8H | 1: 7S 6H | 2: - | 3: 5H | 4: QD"
    after = apply(text, "N>_1")
    assert after == "N: 2C | 1: 8H 7S 6H | 2: - | 3: 5H | 4: QD | S: - | W: -"
    # Same as placing the card in the space and moving the pile onto it, without using it.
    long_way = Tableau.parse(text).apply(Move.parse("N>2")).apply(Move.parse("1:2>2"))
    assert long_way.work[1] == Tableau.parse(after).work[0]


def test_slide_under_from_waste_and_from_a_pile() -> None:
    text = "N: KC | 1: 7S 6H | 2: - | 3: 9S 8D | 4: QD | W: 8H"
    assert apply(text, "W>_1") == "N: KC | 1: 8H 7S 6H | 2: - | 3: 9S 8D | 4: QD | S: - | W: -"
    assert apply(text, "3>_1") == "N: KC | 1: 8D 7S 6H | 2: - | 3: 9S | 4: QD | S: - | W: 8H"
    assert apply(text, "3:2>_1") == "N: KC | 1: 9S 8D 7S 6H | 2: - | 3: - | 4: QD | S: - | W: 8H"


def test_slide_under_refused_when_no_work_pile_is_empty() -> None:
    assert_refused("N: 8H | 1: 7S 6H | 2: 3C | 3: 5H | 4: QD", "N>_1", "needs an empty work pile")


@pytest.mark.parametrize("card", ["8S", "8C", "9H", "7H", "6H"])
def test_slide_under_refused_when_it_does_not_fit_the_base(card: str) -> None:
    assert_refused(
        f"N: {card} | 1: 7S 6D | 2: - | 3: 5C | 4: QD", "N>_1", "cannot be slid under 7S"
    )


def test_slide_under_an_empty_pile_is_refused() -> None:
    assert_refused("N: 8H | 1: 7S | 2: - | 3: 5H | 4: QD", "N>_2", "play into it instead")


def test_slide_under_is_listed_only_with_an_empty_pile() -> None:
    with_space = table_from("N: 8H | 1: 7S 6D | 2: - | 3: 5C | 4: QD")
    without = table_from("N: 8H | 1: 7S 6D | 2: 2C | 3: 5C | 4: QD")
    assert Move.parse("N>_1") in with_space.legal_moves(0)
    assert Move.parse("N>_1") not in without.legal_moves(0)


# -- stock and waste ----------------------------------------------------------------------


def test_turn_three_keeps_their_order() -> None:
    # The stock's top card is its last; three are turned over as one group, so the third card
    # down becomes the waste's top card (RULES.md: stock and waste).
    text = "N: KS | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: AD 2D 3D 4D 5D 6D | W: -"
    once = apply(text, "S")
    assert once.endswith("S: AD 2D 3D | W: 6D 5D 4D")
    assert Tableau.parse(once).top(Pile.WASTE) == Card.parse("4D")
    twice = apply(once, "S")
    assert twice.endswith("S: - | W: 6D 5D 4D 3D 2D AD")


@pytest.mark.parametrize(
    ("stock", "waste_after_short_turn"),
    [("AD 2D 3D 4D", "4D 3D 2D AD"), ("AD 2D 3D 4D 5D", "5D 4D 3D 2D AD")],
)
def test_turn_with_one_or_two_left_puts_them_on_the_waste_as_they_are(
    stock: str, waste_after_short_turn: str
) -> None:
    t = Tableau.parse(f"N: KS | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: {stock} | W: -")
    t = t.apply(Move.turn()).apply(Move.turn())  # three, then the one or two left
    assert t.stock == ()
    assert format_cards(t.waste) == waste_after_short_turn
    # The next turn turns the waste over: a new stock in the original order, nothing turned.
    t = t.apply(Move.turn())
    assert format_cards(t.stock) == stock
    assert t.waste == ()


def test_turn_never_tops_up_from_the_waste() -> None:
    # Two cards left and a waste: the two go on the waste; the waste is not put under the
    # stock to make up three (RULES.md, seed 000).
    t = Tableau.parse("N: KS | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: AD 2D | W: 5H 6H 7H")
    after = t.apply(Move.turn())
    assert after.stock == ()
    assert format_cards(after.waste) == "5H 6H 7H 2D AD"


def test_turn_the_waste_over_forms_the_stock() -> None:
    t = Tableau.parse("N: KS | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: - | W: AH 2H 3H 4H")
    after = t.apply(Move.turn())
    assert format_cards(after.stock) == "4H 3H 2H AH"
    assert after.waste == ()
    # The old waste's bottom card is the new stock's top: AH 2H 3H turn, the 3H shows.
    assert after.apply(Move.turn()).top(Pile.WASTE) == Card.parse("3H")


def test_turn_draw_one_variant_turns_a_single_card() -> None:
    rules = Rules(draw=1)
    t = Tableau.parse("N: KS | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: AD 2D 3D | W: -")
    seen = []
    for _ in range(3):
        t = t.apply(Move.turn(), rules)
        seen.append(str(t.top(Pile.WASTE)))
    assert seen == ["3D", "2D", "AD"]
    t = t.apply(Move.turn(), rules)
    assert format_cards(t.stock) == "AD 2D 3D"


def test_turn_draw_one_variant_through_the_table() -> None:
    table = table_from("N: KS | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: AD 2D 3D", rules=Rules(draw=1))
    table, _ = table.play(0, Move.turn())
    assert format_cards(table.tableaux[0].waste) == "3D"


def test_turn_with_stock_and_waste_empty_is_refused_and_not_listed() -> None:
    text = "N: KS | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: - | W: -"
    assert_refused(text, "S", "stock and the waste are both empty")
    assert Move.turn() not in table_from(text).legal_moves(0)


def test_only_the_waste_top_card_plays() -> None:
    table = table_from("N: KS | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: - | W: AS 5H")
    moves = set(map(str, table.legal_moves(0)))
    assert not any(m.startswith("W>L") for m in moves)  # the ace under the 5H is out of reach
    assert "W>3" not in moves  # 5H on 7C does not fit either
    table = table_from("N: KS | 1: 9C | 2: 8C | 3: 7C | 4: 6H | S: - | W: 5H 6S")
    assert "W>3" not in set(map(str, table.legal_moves(0)))


# -- illegal moves change nothing ---------------------------------------------------------

ILLEGAL = [
    ("N: 6D | 1: 7H | 2: 2C | 3: 3C | 4: 4C", "N>1", "does not fit"),
    ("N: 6D | 1: 7S | 2: 2C | 3: 3C | 4: 4C", "N>_1", "needs an empty work pile"),
    ("N: 6D | 1: 7S 6H | 2: - | 3: 3C | 4: 4C", "1:3>2", "has 2 card(s), not 3"),
    ("N: 6D | 1: 7S 6H | 2: 8C | 3: 3C | 4: 4C", "1:2>2", "7S does not fit on 8C"),
    ("N: 6D | 1: 7S | 2: 2C | 3: 3C | 4: 4C | W: -", "W>1", "waste is empty"),
    ("N: 6D | 1: 7S | 2: 2C | 3: 3C | 4: 4C", "N>5", "no work pile 5"),
    ("N: 6D | 1: 7S | 2: 2C | 3: 3C | 4: 4C", "1>1", "onto itself"),
    ("N: 6D | 1: 7S | 2: 2C | 3: 3C | 4: 4C", "S", "both empty"),
]


@pytest.mark.parametrize(("text", "move", "fragment"), ILLEGAL)
def test_illegal_move_raises_naming_the_move_and_changes_nothing(
    text: str, move: str, fragment: str
) -> None:
    assert_refused(text, move, fragment)


@pytest.mark.parametrize(("text", "move", "fragment"), ILLEGAL)
def test_illegal_move_is_not_listed(text: str, move: str, fragment: str) -> None:
    assert Move.parse(move) not in table_from(text).legal_moves(0)


def test_illegal_move_error_shows_the_tableau() -> None:
    with pytest.raises(IllegalMoveError) as info:
        Tableau.parse("N: 8D | 1: 7S | 2: 2C | 3: 3C | 4: 4C").apply(Move.parse("N>_1"))
    assert "N: 8D | 1: 7S | 2: 2C" in str(info.value)


def test_tableau_moves_keep_every_work_pile_built_down() -> None:
    text = "N: 2C 8H | 1: 7S 6H | 2: - | 3: 9S 8D | 4: 10H | S: 3H 4S 5C | W: 9C"
    t = Tableau.parse(text)
    table = table_from(text)
    for move in table.legal_moves(0):
        if move.is_lake or not move.plays_card:
            continue
        after = t.apply(move)
        assert all(pile_is_valid(p) for p in after.work), f"{move}: {after}"
        assert sorted(after.cards(), key=Card.sort_key) == sorted(t.cards(), key=Card.sort_key)
