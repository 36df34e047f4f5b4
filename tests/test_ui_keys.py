"""The keyboard state machine: keys become legal moves, or a status line saying why not."""

from __future__ import annotations

from collections.abc import Iterable

from helpers_rules import table_from
from hypothesis import given, settings
from hypothesis import strategies as hs

from p2p_nertz.rules import Move, MoveKind, Pile, Table
from p2p_nertz.ui import CloseBoard, Context, KeyState, Leave, PlayMove, press
from p2p_nertz.ui.keys import BACKSPACE, ENTER, ESC, Action, Confirm
from p2p_nertz.ui.refusals import HELD_BACK

OTHER = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: -"
#: Nerts 4C on top (fits the red 5D on pile 3), waste top AS, a red-black run on pile 1,
#: an empty pile 2 (slide-under possible), a stock to turn.
MINE = "N: KH 4C | 1: QH JS 10H | 2: - | 3: 5D | 4: 8C | S: 2C 7H 9S | W: 6H AS"


def table_of(mine: str = MINE) -> Table:
    return table_from(mine, OTHER, lake="1C: AC/1 2C/1 3C/1")


def keys(
    table: Table, sequence: Iterable[str], state: KeyState | None = None, **ctx: object
) -> tuple[KeyState, list[Action]]:
    state = state or KeyState()
    context = Context(table, 0, **ctx)  # type: ignore[arg-type]
    actions: list[Action] = []
    for key in sequence:
        state, more = press(state, key, context)
        actions += more
    return state, actions


def moves(actions: list[Action]) -> list[str]:
    return [str(a.move) for a in actions if isinstance(a, PlayMove)]


def test_keys_source_then_lake_plays_to_the_lake() -> None:
    table = table_of()
    state, actions = keys(table, "n")
    assert state.selected is Pile.NERTS and actions == []
    state, actions = keys(table, "l", state)
    assert moves(actions) == ["N>L"] and state.selected is None
    assert Move.parse("N>L") in table.legal_moves(0)


def test_keys_the_same_source_twice_goes_to_the_lake() -> None:
    _, actions = keys(table_of(), "ww")
    assert moves(actions) == ["W>L"]


def test_keys_source_then_pile_plays_onto_the_pile() -> None:
    _, actions = keys(table_of(), "n3")
    assert moves(actions) == ["N>3"]


def test_keys_a_run_moves_whole_and_leaves_the_base_on_an_empty_pile() -> None:
    table = table_of()
    _, actions = keys(table, "12")
    run = len(table.tableaux[0].work[0])
    assert moves(actions) == [f"1:{run - 1}>2"]
    (action,) = actions
    assert isinstance(action, PlayMove) and action.move in table.legal_moves(0)


def test_keys_slide_under_when_it_is_the_only_way() -> None:
    # 9S cannot go on 8C, but 9H slides under 8C's pile while pile 2 is empty.
    table = table_of("N: KH 9H | 1: QH JS 10H | 2: - | 3: 5D | 4: 8C | S: 2C | W: 6H AS")
    _, actions = keys(table, "n4")
    assert moves(actions) == ["N>_4"]


def test_keys_an_illegal_move_says_why_and_changes_nothing() -> None:
    table = table_of()
    state, actions = keys(table, "w4")  # AS onto 8C
    assert actions == []
    assert state.status.startswith("illegal: ") and "A♠" in state.status and "8♣" in state.status
    assert state.selected is None
    state, actions = keys(table, "3l")  # 5D fits on no foundation
    assert actions == [] and "5♦ fits on no foundation" in state.status


def test_keys_an_empty_source_is_refused_at_once() -> None:
    state, actions = keys(table_of(), "2")
    assert actions == [] and state.selected is None and "work pile 2 is empty" in state.status


def test_keys_a_frozen_pile_cannot_be_picked_or_played() -> None:
    table = table_of()
    state, actions = keys(table, "w", frozen=frozenset({Pile.WASTE}))
    assert actions == [] and "in the air" in state.status
    state, actions = keys(table, "n3", frozen=frozenset({Pile.W3}))
    assert actions == [] and "in the air" in state.status


def test_keys_stock_pass_and_rotate() -> None:
    table = table_of()
    assert moves(keys(table, "s")[1]) == ["S"]
    assert moves(keys(table, " ")[1]) == ["S"]
    state, actions = keys(table, "p")
    assert moves(actions) == ["P"] and "stuck" in state.status
    state, actions = keys(table, "r")  # not the rotate-alone rules
    assert actions == [] and state.status.startswith("illegal: ")


def test_keys_a_false_call_needs_a_second_x() -> None:
    table = table_of()
    state, actions = keys(table, "x")
    assert actions == [] and "x again" in state.status
    _, actions = keys(table, "x", state)
    assert moves(actions) == ["X"]
    _, actions = keys(table, "xn")  # any other key: no call
    assert actions == []


def test_keys_a_typed_false_call_asks_first_like_the_key() -> None:
    # `:X` with cards left made a false call at once, and said only "called Nerts!".
    table = table_of()
    state, actions = keys(table, [":", "X", ENTER])
    assert actions == [] and "x again" in state.status
    state, actions = keys(table, "x", state)
    assert moves(actions) == ["X"] and "false call" in state.status
    _, actions = keys(table, [":", *"x", ENTER, "n"])  # any other key: no call
    assert actions == []
    done = table_of("N: - | 1: QH JS 10H | 2: KH | 3: 5D | 4: 8C | S: 2C 7H 9S | W: 6H AS")
    assert moves(keys(done, [":", "X", ENTER])[1]) == ["X"]


def test_keys_a_typed_run_longer_than_its_pile_says_so() -> None:
    # `1:9>2` said "Q♥ does not go on …", of a move nobody asked for.
    state, actions = keys(table_of(), [":", *"3:2>4", ENTER])
    assert actions == [] and state.status == "illegal: the work pile 3 holds 1 card, not 2"
    state, _ = keys(table_of(), [":", *"1:9>2", ENTER])
    assert state.status == "illegal: the work pile 1 holds 3 cards, not 9"


def test_keys_a_valid_call_goes_at_once() -> None:
    table = table_of("N: - | 1: QH JS 10H | 2: KH | 3: 5D | 4: 8C | S: 2C 7H 9S | W: 6H AS")
    assert moves(keys(table, "x")[1]) == ["X"]


def test_keys_the_command_line_takes_the_notation() -> None:
    table = table_of()
    state, actions = keys(table, [":", "1", ":", "2", ">", "4"])
    assert state.command == "1:2>4" and actions == []
    state, actions = keys(table, [BACKSPACE, "3"], state)
    assert state.command == "1:2>3"
    state, actions = keys(table, [ENTER], state)
    assert actions == [] and state.status.startswith("illegal: ") and state.command is None
    state, actions = keys(table, ["/", *"n>3", ENTER])
    assert moves(actions) == ["N>3"]


def test_keys_bad_notation_is_one_status_line() -> None:
    state, actions = keys(table_of(), [":", *"zz", ENTER])
    assert actions == [] and state.status.startswith("not a move: 'zz'")
    state, _ = keys(table_of(), [":", *"n>l", ESC])
    assert state == KeyState()


def test_keys_escape_cancels_a_pick() -> None:
    state, actions = keys(table_of(), ["n", ESC])
    assert state == KeyState() and actions == []
    # Backspace too (session 35: a newcomer undoing a pick read "no key 'BACKSPACE' here").
    for sequence in (["n", BACKSPACE], [BACKSPACE]):
        state, actions = keys(table_of(), sequence)
        assert state == KeyState() and actions == [], state


def test_keys_quit_asks_first() -> None:
    state, actions = keys(table_of(), "qn")
    assert actions == [] and state.status == "staying"
    _, actions = keys(table_of(), "qy")
    assert actions == [Leave()]


def test_keys_help_opens_and_any_key_closes_it() -> None:
    state, _ = keys(table_of(), "?")
    assert state.help
    state, actions = keys(table_of(), "n", state)
    assert not state.help and actions == []


def test_keys_the_board_closes_with_enter_and_blocks_play() -> None:
    table = table_of()
    state, actions = keys(table, "s", board=True)
    assert actions == [] and "Enter" in state.status
    _, actions = keys(table, [ENTER], board=True)
    assert actions == [CloseBoard()]


def test_keys_a_spectator_plays_nothing() -> None:
    state, actions = press(KeyState(), "s", Context(table_of(), None))
    assert actions == [] and "spectator" in state.status


def test_keys_before_the_deal_nothing_plays() -> None:
    state, actions = press(KeyState(), "s", Context(None, 0))
    assert actions == [] and "not dealt" in state.status


@settings(max_examples=200, deadline=None)
@given(hs.lists(hs.sampled_from([*"nw123456lfspxrq?:>y/ NLSW", ENTER, ESC, BACKSPACE, "é"])))
def test_keys_any_sequence_never_raises_and_plays_only_legal_moves(sequence: list[str]) -> None:
    table = table_of()
    state = KeyState()
    for key in sequence:
        state, actions = press(state, key, Context(table, 0))
        for action in actions:
            if isinstance(action, PlayMove):
                assert action.move in table.legal_moves(0)
                if action.move.kind is not MoveKind.CALL:
                    table, _ = table.play(0, action.move)


def test_keys_the_lake_key_before_a_pick_names_this_games_work_piles() -> None:
    state, actions = keys(table_of(), "l")
    assert actions == [] and state.status == "pick a card first: n, w or 1-4"


def test_keys_the_status_says_what_was_played_in_words_not_notation() -> None:
    # (Each once "played S", "played W>L": the notation is for the command line.)
    assert keys(table_of(), "s")[0].status == "turned the stock"
    assert keys(table_of(), "wl")[0].status == "played A♠ to the lake"
    assert keys(table_of(), "n3")[0].status == "played 4♣ onto work pile 3"
    state, actions = keys(table_of(), [*":1:2>2", ENTER])
    assert moves(actions) == ["1:2>2"] and state.status == "played 2 cards from J♠ onto work pile 2"
    assert keys(table_of(), "s", symbols=False)[0].status == "turned the stock"
    assert keys(table_of(), "wl", symbols=False)[0].status == "played AS to the lake"


def test_a_refusal_is_said_so_by_the_key_that_refused_not_read_back_from_its_words() -> None:
    """Whether the status line refuses (drawn as bad news, kept over "the round waits for
    you") is the keys' to say: the others' votes refuse in words that name no refusal ("you
    are out for now: ..."), and the answer to a false call's question, "no call", starts as
    refusals did but refuses nothing (each was told by its words' first word, and wrongly)."""
    out, _ = keys(table_of(), "s", held_back=True)
    assert out.status == HELD_BACK and out.line.refused
    asked, _ = keys(table_of(), "x")  # (a call with cards left asks first)
    assert asked.confirm is Confirm.CALL and not asked.line.refused
    answered, _ = keys(table_of(), "z", asked)
    assert answered.status == "no call" and not answered.line.refused
    empty, _ = keys(table_of(), "2")  # (an empty work pile picked)
    assert empty.status.startswith("illegal: ") and empty.line.refused
    assert not keys(table_of(), "n")[0].line.refused  # (a pick: a question of where to)
