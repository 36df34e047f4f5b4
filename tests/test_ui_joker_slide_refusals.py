"""The engine's joker, slide-under and face-down refusals, as a person reads them (session 35).

Typed at the command line (``:`` at the terminal, the same keys on the page), each of these
said only ``illegal: N>_2``: the engine refused them with no reason a front end could word.
Each now carries its :class:`~p2p_nertz.rules.Why`, worded in ``ui/keys.py``'s one table, and
the status line says it on both tables: as the terminal draws it and as the page is sent it.
"""

from __future__ import annotations

import pytest
from helpers_rules import table_from
from test_ui_keys import keys

from p2p_nertz.rules import (
    HIDDEN,
    Card,
    Illegality,
    Move,
    Pile,
    Rules,
    Table,
    Tableau,
    Why,
    why_illegal,
)
from p2p_nertz.ui import TableView, render
from p2p_nertz.ui.keys import ENTER, illegal_words
from p2p_nertz.web.model import view_json

#: Seat 1's tableau: nothing of it matters here.
OTHER = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: -"

CASES = [
    # (seat 0's tableau, the move typed, the engine's why, words the person reads)
    (
        "N: 4D | 1: 9C | 2: - | 3: 5D | 4: 8C | S: 2C | W: 7H",
        "N>2=5H",
        Why.NO_JOKER,
        "fixes no joker: type it without the =",
    ),
    (
        "N: 4D | 1: 9C | 2: 8S | 3: 5D | 4: 8C | S: 2C | W: 7H",
        "W>L=5H",
        Why.NO_JOKER,
        "fixes no joker: type it without the =",
    ),
    (
        "N: 4D | 1: 9C | 2: JK1 | 3: 5D | 4: 8C | S: 2C | W: 7H",
        "N>2",
        Why.JOKER_UNSAID,
        "say what the joker becomes: type the move with =5C or =5S at its end",
    ),
    (
        "N: 4D | 1: 9C | 2: 6C JK1 | 3: 5D | 4: 8C | S: 2C | W: 7H",
        "N>2",
        Why.JOKER_NO_FIT,
        "4♦ does not go on the joker of work pile 2, whatever it becomes",
    ),
    (
        "N: JK2 | 1: 9C | 2: JK1 | 3: - | 4: 8C | S: 2C | W: 7H",
        "N>_2",
        Why.JOKER_UNDER_JOKER,
        "a joker cannot be slid under a joker",
    ),
    (
        "N: 4D | 1: 9C | 2: - | 3: 5D | 4: 8C | S: 2C | W: 7H",
        "N>_2",
        Why.SLIDE_EMPTY,
        "work pile 2 is empty: move the cards into it, not under it",
    ),
    (
        "N: 9D | 1: 9C | 2: 8S | 3: 5D | 4: 8C | S: 2C | W: 7H",
        "N>_2",
        Why.SLIDE_NO_SPACE,
        "a slide-under needs an empty work pile",
    ),
    (
        "N: 9H | 1: 9C | 2: 5C | 3: - | 4: 8C | S: 2C | W: 7H",
        "N>_2",
        Why.SLIDE_NO_FIT,
        "9♥ cannot be slid under 5♣ (one rank higher, the other colour)",
    ),
    (
        "N: AD | 1: 9C | 2: KS | 3: - | 4: 8C | S: 2C | W: 7H",
        "N>_2",
        Why.SLIDE_NO_FIT,
        "nothing goes on an ace: A♦ cannot be slid under K♠",
    ),
    (
        "N: JK1 | 1: 9C | 2: KS | 3: - | 4: 8C | S: 2C | W: 7H",
        "N>_2",
        Why.SLIDE_NO_FIT,
        "the joker cannot be slid under K♠",
    ),
]


def _shown(status: str, table: Table) -> None:
    """The status line as either table shows it: drawn at the terminal, sent to the page."""
    view = TableView(table=table, seat=0, names=("you", "bot1"), rules=table.rules, status=status)
    assert status in render(view, 100, 30).text()
    assert view_json(view)["status"] == status


@pytest.mark.parametrize(
    ("mine", "typed", "why", "words"), CASES, ids=[f"{c[2].value}:{c[1]}" for c in CASES]
)
def test_a_typed_joker_or_slide_under_move_says_why_it_is_refused(
    mine: str, typed: str, why: Why, words: str
) -> None:
    table = table_from(mine, OTHER)
    reason = why_illegal(table, 0, Move.parse(typed))
    assert reason is not None and reason.why is why
    state, actions = keys(table, [":", *typed, ENTER])
    assert actions == [] and state.status.startswith("illegal: "), state.status
    assert words in state.status and typed not in state.status, state.status
    assert len(state.status.replace("9♥", "10♥").replace("4♦", "10♦")) <= 80, state.status
    _shown(state.status, table)


def test_a_card_not_turned_up_yet_says_so_on_either_pile() -> None:
    # A card the machine does not know yet (a sealed shuffle's, not opened): neither played
    # nor built on, and the person reads which pile shows none.
    mine = Tableau.parse("N: 4D | 1: 9C | 2: 5C | 3: 5D | 4: 8C | S: 2C | W: 7H")
    work = (mine.work[0], (HIDDEN,), mine.work[2], (*mine.work[3], HIDDEN))
    hidden = Tableau(mine.nerts, work, mine.stock, mine.waste)
    table = Table.from_tableaux(Rules(), [hidden, Tableau.parse(OTHER)])
    for typed, pile in (("2>L", "work pile 2"), ("N>2", "work pile 2"), ("W>4", "work pile 4")):
        reason = why_illegal(table, 0, Move.parse(typed))
        assert reason is not None and reason.why is Why.FACE_DOWN, typed
        state, actions = keys(table, [":", *typed, ENTER])
        assert actions == [] and state.status == f"illegal: the {pile} shows no card turned up yet"
        _shown(state.status, table)


def test_every_reason_the_engine_gives_has_its_own_words() -> None:
    # A Why added to the engine without words in ui/keys.py's table would raise a KeyError at
    # the table, or (worded "the rules do not allow it now") tell the person nothing.
    nine, eight = Card.parse("9H"), Card.parse("8S")
    said = {}
    for why in Why:
        reason = Illegality(
            why, nine, needs=eight, onto=eight, pile=Pile(2), run=(nine, eight), count=2,
            held=1, seat=1, behalf=2, status="nerts", options=(eight,),
        )  # fmt: skip
        said[why] = illegal_words(reason, 0)
        assert said[why].startswith("illegal: ") and len(said[why]) <= 80, said[why]
    others = [w for w, words in said.items() if words == said[Why.OTHER]]
    assert others == [Why.OTHER], others
