"""Sealed cards: the face-down cards of a shuffle game, which know their deck position
(docs/shuffle.md §10.2; RULES.md: a card is played only once its face shows)."""

from __future__ import annotations

import pytest

from p2p_nertz.errors import IllegalMoveError
from p2p_nertz.rules import (
    Card,
    Move,
    Rules,
    Table,
    Tableau,
    is_unknown,
    new_deck,
    sealed,
    sealed_position,
)


@pytest.mark.parametrize("jokers", [0, 2])
def test_sealed_deal_puts_each_position_where_the_deal_puts_that_deck_index(jokers: int) -> None:
    rules = Rules(jokers=jokers)
    deck = new_deck(jokers)
    real = Tableau.deal(deck, rules)
    sealed_tableau = Tableau.sealed(rules)
    for place_real, place_sealed in zip(real.cards(), sealed_tableau.cards(), strict=True):
        position = sealed_position(place_sealed)
        assert position is not None
        assert deck[position] == place_real


def test_sealed_cards_are_equal_only_at_one_position_and_never_to_a_card() -> None:
    assert sealed(4) == sealed(4)
    assert sealed(4) != sealed(5)
    assert all(sealed(4) != c for c in new_deck(2))
    assert len({sealed(p) for p in range(54)}) == 54
    with pytest.raises(ValueError, match="position"):
        sealed(54)


def test_opened_replaces_the_sealed_card_wherever_it_lies() -> None:
    rules = Rules()
    t = Tableau.sealed(rules).apply(Move.parse("S"), rules)  # three from the stock to the waste
    top = t.waste[-1]
    assert is_unknown(top)
    opened = t.opened(top, Card.parse("9H"))
    assert opened.waste[-1] == Card.parse("9H")
    assert opened.waste[:-1] == t.waste[:-1] and opened.stock == t.stock
    assert opened.opened(sealed(0), Card.parse("AS")).stock[0] == Card.parse("AS")
    assert t.opened(Card.parse("9H"), Card.parse("AS")) is t  # nothing sealed there: unchanged


def test_a_sealed_card_cannot_be_played_claimed_or_built_on() -> None:
    rules = Rules()
    t = Tableau.sealed(rules)
    table = Table.from_tableaux(rules, [t, t])
    legal = list(table.legal_moves(0))
    assert legal == [Move.parse("S"), Move.parse("P"), Move.parse("X")]
    for move in ("N>1", "1>2", "N>L@0S"):
        with pytest.raises(IllegalMoveError, match="not turned up"):
            table.play(0, Move.parse(move))
    # The Nerts top opened, work pile 1 not yet: the Nerts card cannot go on it.
    shown = t.opened(t.nerts[-1], Card.parse("5H")).opened(t.work[1][0], Card.parse("6S"))
    table = Table.from_tableaux(rules, [shown, t])
    assert Move.parse("N>2") in table.legal_moves(0)
    with pytest.raises(IllegalMoveError, match="shows no card"):
        table.play(0, Move.parse("N>1"))
    table.play(0, Move.parse("N>2"))
