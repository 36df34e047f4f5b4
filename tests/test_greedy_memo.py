"""The greedy bot's memo of free_a_pile (issue 18) changes no move: same answers, same games."""

from __future__ import annotations

import pytest

from p2p_nertz.bots import greedy
from p2p_nertz.match import Player, play_round
from p2p_nertz.rules import Move, Rules, Tableau


def test_memo_answers_as_free_a_pile_and_follows_a_changed_tableau() -> None:
    t = Tableau.parse("N: 4C 9D | 1: 8H 7S | 2: 9C | 3: 5D | 4: KD | S: 2C 7H 9S 3D | W: -")
    assert greedy._free_a_pile_memo(t) == greedy.free_a_pile(t) == Move.parse("1:2>2")
    turned = t.apply(Move.turn())
    assert turned.work is t.work  # what the memo counts on
    assert greedy._free_a_pile_memo(turned) == Move.parse("1:2>2")
    moved = t.apply(Move.parse("1:2>2"))  # new work piles: asked afresh
    assert greedy._free_a_pile_memo(moved) == greedy.free_a_pile(moved) is None


def _rounds() -> list[str]:
    return [repr(play_round(Rules(), [Player("greedy")] * 4, seed)) for seed in range(6)]


def test_rounds_are_the_same_with_and_without_the_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    with_memo = _rounds()
    monkeypatch.setattr(greedy, "_free", greedy.free_a_pile)
    assert _rounds() == with_memo
