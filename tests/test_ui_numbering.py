"""One numbering (issue 15): the screen's seats and lake owners count from 0, as the notation.

A move typed in the notation at the table (``:W>L@2H``) lands on the foundation that the screen
shows under the seat numbered 2, and the lake names that seat as the foundation's owner.
"""

from __future__ import annotations

from helpers_rules import table_from

from p2p_nertz.rules import FoundationId, Move
from p2p_nertz.ui import Context, KeyState, PlayMove, Tracker, card_text, press, render
from p2p_nertz.ui.keys import ENTER
from p2p_nertz.ui.view import TableView

ME = "N: 4C 9D | 1: QH | 2: - | 3: 5D | 4: 8C | S: 9S 3D | W: 6C 2H"
OTHER = "N: KH | 1: QC | 2: 3S | 3: 6H | 4: 9H | S: - | W: -"
LAKE = "1H: AH/1; 2H: AH/2"
NAMES = ("Alice", "Bob", "Carol")


def type_keys(keys: list[str], context: Context) -> list[PlayMove]:
    state, played = KeyState(), []
    for key in keys:
        state, actions = press(state, key, context)
        played += [a for a in actions if isinstance(a, PlayMove)]
    return played


def test_a_typed_foundation_number_is_the_seat_number_on_the_screen() -> None:
    table = table_from(ME, OTHER, OTHER, lake=LAKE)
    played = type_keys([":", *"W>L@2H", ENTER], Context(table, 0))
    assert [p.move for p in played] == [Move.parse("W>L@2H")]
    table, _ = table.play(0, played[0].move)
    assert table.lake.height(FoundationId.parse("2H")) == 2
    screen = render(TableView(table=table, seat=0, names=NAMES, rules=table.rules), 80, 24)
    # The seat the screen numbers 2 is the one whose foundation took the card...
    carol = [screen.line(i) for i in range(screen.height) if screen.line(i).startswith("2 ")]
    assert len(carol) == 1 and carol[0].startswith("2 Carol"), screen.text()
    # ... and the lake shows 2♥ over the owners 2 (Carol's ace) and 0 (my two).
    assert f"{card_text(table.lake[FoundationId.parse('2H')][-1].card)} 20" in screen.text()
    # No seat is numbered past the last one.
    assert not any(screen.line(i).startswith("3 ") for i in range(screen.height))


def test_the_tracker_names_an_unknown_seat_by_the_same_number() -> None:
    assert Tracker(NAMES, 0, True).name(5) == "seat 5"
