"""The table of a newcomer's first game (issue 15), through the render layer and the keys.

One numbering: the screen's seats and lake owners count from 0, as the notation, so a move
typed at the table (``:W>L@2H``) lands on the foundation that the screen shows under the seat
numbered 2. 80×24: nothing is cut (the lake of 8 players, the help, the board's lake lists).
"""

from __future__ import annotations

from dataclasses import replace

from helpers_rules import table_from

from p2p_nertz.rules import SUITS, FoundationId, Game, Move, Rules
from p2p_nertz.rules.cards import RANK_NAMES
from p2p_nertz.ui import (
    Board,
    Context,
    KeyState,
    PlayMove,
    Tracker,
    card_text,
    press,
    render,
)
from p2p_nertz.ui.keys import ENTER
from p2p_nertz.ui.render import KEY_HELP
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


IDLE = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: -"
EIGHT = tuple(f"player{n}" for n in range(8))


def test_the_lake_of_eight_players_shows_every_foundation_at_80x24() -> None:
    lake = "; ".join(f"{seat}{s.value}: A{s.value}/{seat}" for seat in range(8) for s in SUITS)
    table = table_from(*([IDLE] * 8), lake=lake)
    screen = render(TableView(table=table, seat=0, names=EIGHT, rules=table.rules), 80, 24)
    text = screen.text()
    assert "more" not in text, text
    for suit in SUITS:
        heading = screen.line(screen.find(suit.symbol + " ") or 0)
        column = heading.index(suit.symbol)
        shown = [
            line[column : column + 20]
            for line in text.splitlines()[2:]
            if f"A{suit.symbol}" in line[column : column + 20]
        ]
        owners = sorted(int(m) for part in shown for m in part.split() if m.isdigit())
        assert owners == list(range(8)), (suit, text)
    for seat in range(8):  # and every player still has its row
        assert any(line.startswith(f"{seat} player{seat}") for line in text.splitlines()), text


def test_the_help_is_not_cut_at_80x24() -> None:
    table = table_from(IDLE, IDLE)
    view = TableView(table=table, seat=0, names=("a", "b"), rules=table.rules, help=True)
    screen = render(view, 80, 24)
    assert all(len(screen.line(i)) <= 80 for i in range(screen.height))
    words = " ".join(screen.line(i)[18:].strip() for i in range(screen.height))
    for key, what in KEY_HELP:
        assert what in words, (key, screen.text())


def _ranks(words: list[str]) -> list[int]:
    """Expand the board's rank words (``A-4``, ``7``) to ranks."""
    index = {name: rank for rank, name in enumerate(RANK_NAMES) if rank}
    out: list[int] = []
    for word in words:
        low, _, high = word.partition("-")
        if low in index:
            out += range(index[low], index[high or low] + 1)
    return out


def test_the_board_lists_every_lake_card_of_eight_players_at_80x24() -> None:
    # Each player played A to 9 of every suit on its own foundations: 36 cards each.
    run = " ".join(f"{RANK_NAMES[r]}{{suit}}/{{seat}}" for r in range(1, 10))
    lake = "; ".join(
        f"{seat}{s.value}: " + run.format(seat=seat, suit=s.value)
        for seat in range(8)
        for s in SUITS
    )
    rules = Rules()
    table = table_from(*([IDLE] * 8), lake=lake, rules=rules)
    score = table.score()
    board = Board(1, score, Game(rules, 8).record(score).totals, table.lake)
    view = TableView(table=table, seat=0, names=EIGHT, rules=rules, board=board)
    screen = render(view, 80, 24)
    lines = screen.text().splitlines()
    assert all(len(line) <= 80 for line in lines)
    for seat in range(8):
        start = next(i for i, line in enumerate(lines) if line.startswith(f"{seat} player{seat}"))
        listing = []
        for line in lines[start + 1 :]:
            if not line.startswith("   "):
                break
            listing.append(line)
        words = " ".join(listing).replace("lake:", "").split()
        assert len(_ranks(words)) == 36, (seat, screen.text())
    assert "Enter: back to the table" in screen.text()


def test_a_card_with_no_foundation_names_the_card_it_needs_in_english() -> None:
    for top, needed in (("2D", "an A♦"), ("9C", "an 8♣"), ("3H", "a 2♥"), ("QS", "a J♠")):
        me = f"N: {top} | 1: QH | 2: - | 3: 5D | 4: 8C | S: 9S 3D | W: -"
        table = table_from(me, OTHER)
        state, actions = press(KeyState(), "n", Context(table, 0))
        state, actions = press(state, "l", Context(table, 0))
        assert actions == [] and f"(it needs {needed} on top)" in state.status, state.status


def test_the_board_shows_the_countdown_to_the_next_round_in_one_row() -> None:
    rules = Rules()
    table = table_from(IDLE, IDLE, lake="0S: AS/0", rules=rules)
    score = table.score()
    board = Board(1, score, Game(rules, 2).record(score).totals, table.lake)
    view = TableView(table=table, seat=0, names=("a", "b"), rules=rules, board=board)
    line = "next round in 12 s · Enter: ready now (it starts when everyone is)"
    assert line in render(replace(view, countdown=12), 80, 24).text()
    assert "next round in" not in render(view, 80, 24).text()  # no countdown: none shown
