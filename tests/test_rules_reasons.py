"""Why a move is illegal comes from the rules engine as a value, and the ui words every one.

The engine sets :attr:`IllegalMoveError.reason` where it refuses a move
(:mod:`p2p_nertz.rules.reasons`); the keys only word it (:func:`~p2p_nertz.ui.keys.illegal_words`).
"""

from __future__ import annotations

import pytest

from p2p_nertz.errors import IllegalMoveError
from p2p_nertz.rules import (
    Card,
    Illegality,
    Move,
    Pile,
    Rules,
    Table,
    Tableau,
    Why,
    shuffled_deck,
    why_illegal,
)
from p2p_nertz.ui.keys import Context, explain, illegal_words

PILES = (Pile.NERTS, Pile.WASTE, Pile(1), Pile(2), Pile(3), Pile(4))


@pytest.mark.parametrize("why", list(Why))
def test_every_reason_has_words(why: Why) -> None:
    nine, eight = Card.parse("9H"), Card.parse("8S")
    reason = Illegality(
        why, nine, needs=Card.parse("8H"), onto=eight, pile=Pile(2), run=(nine, eight),
        count=3, held=2, seat=1, behalf=2, status="blocked",
    )  # fmt: skip
    words = illegal_words(reason, 0, symbols=False)
    assert words.startswith("illegal: ") and len(words) > len("illegal: ")


def test_a_card_s_need_on_a_foundation_is_the_engine_s() -> None:
    # Nine hearts to the lake, ace up, leave 10H on top of the Nerts pile; 9H waits on pile 1.
    nerts = "10H 8H 7H 6H 5H 4H 3H 2H AH"
    t = Tableau.parse(f"N: {nerts} | 1: 9H | 2: KS | 3: QS | 4: JS | S: 2C | W: -")
    table = Table.from_tableaux(Rules(), [t, t])
    for _ in range(8):
        table, _play = table.play(0, Move.to_lake(Pile.NERTS))
    reason = why_illegal(table, 0, Move.to_lake(Pile.NERTS))
    assert reason is not None and reason.why is Why.NO_FOUNDATION
    assert reason.card == Card.parse("10H") and reason.needs == Card.parse("9H")
    # The card it needs is the one the engine takes it on: play that, and 10H goes.
    with pytest.raises(IllegalMoveError) as refused:
        table.play(0, Move.to_lake(Pile.NERTS))
    assert refused.value.reason == reason
    table, _play = table.play(0, Move.to_lake(Pile(1)))
    assert why_illegal(table, 0, Move.to_lake(Pile.NERTS)) is None
    assert Move.to_lake(Pile.NERTS) in table.legal_moves(0)


def test_the_keys_say_the_engine_s_reason_not_their_own() -> None:
    t = Tableau.parse("N: 4C 5D | 1: QH | 2: JS 10D | 3: - | 4: 8C | S: 2C | W: -")
    table = Table.from_tableaux(Rules(), [t, t])
    ctx = Context(table, 0, symbols=False)
    assert why_illegal(table, 0, Move.parse("2:3>4")) == Illegality(
        Why.TOO_FEW, pile=Pile(2), held=2, count=3
    )
    assert explain(ctx, Move.parse("2:3>4")) == "illegal: the work pile 2 holds 2 cards, not 3"
    empty = why_illegal(table, 0, Move.parse("3>1"))
    assert empty is not None and (empty.why, empty.pile) == (Why.EMPTY, Pile(3))
    assert explain(ctx, Move.parse("3>1")) == "illegal: the work pile 3 is empty"
    assert explain(ctx, Move.parse("W>L")) == "illegal: the waste is empty"


@pytest.mark.parametrize("seed", [b"reasons-1", b"reasons-2", b"reasons-3"])
def test_a_move_has_a_reason_exactly_when_the_engine_does_not_list_it(seed: bytes) -> None:
    table = Table.deal(Rules(), [shuffled_deck(seed + b"a"), shuffled_deck(seed + b"b")])
    candidates = [Move.turn(), Move.rotate()]
    candidates += [Move.to_lake(p) for p in PILES]
    candidates += [Move.to_pile(a, b) for a in PILES for b in PILES[2:]]
    seen: set[Why] = set()
    for _step in range(40):  # a few positions of one deal: card moves first, else the stock
        legal = table.legal_moves(0)
        for move in candidates:
            reason = why_illegal(table, 0, move)
            assert (reason is None) == (move in legal), move
            if reason is not None:
                seen.add(reason.why)
                assert illegal_words(reason, 0).startswith("illegal: ")
        move = next(table.card_moves(0), Move.turn())
        table, _play = table.play(0, move)
    assert {Why.NO_FIT, Why.ONTO_ITSELF, Why.ROTATE_NOT_ALL} <= seen
