"""The in-game help: the keys, and a "how to play" page that fits 80×24 (issue 15)."""

from __future__ import annotations

import pytest
from helpers_rules import IDLE, script, table_from

from p2p_nertz.rules import Rules
from p2p_nertz.ui import TableView, render
from p2p_nertz.ui.keys import STUCK_WAITING, Context, KeyState, press
from p2p_nertz.ui.render import ABANDON_HELP, KEY_HELP, SPECTATOR_HELP, how_to_play
from p2p_nertz.ui.tracker import NOTHING_TO_PLAY, PASS_GONE, status_line
from p2p_nertz.ui.view import Gone

NAMES = ("Ann", "Bob", "Cy")


def _view(rules: Rules, **changes: object) -> TableView:
    table = table_from(IDLE, IDLE, IDLE, rules=rules)
    fields: dict[str, object] = {"table": table, "seat": 0, "names": NAMES, "rules": rules}
    fields.update(changes)
    return TableView(**fields)  # type: ignore[arg-type]


def test_help_turns_from_the_keys_to_how_to_play_and_any_other_key_closes_it() -> None:
    ctx = Context(table_from(IDLE, IDLE), 0)
    state, _ = press(KeyState(), "?", ctx)
    assert state.help and state.help_page == 0
    state, _ = press(state, "?", ctx)
    assert state.help and state.help_page == 1
    state, _ = press(state, "h", ctx)
    assert state.help and state.help_page == 0
    state, _ = press(state, "?", ctx)
    state, actions = press(state, "s", ctx)  # closes, plays nothing
    assert not state.help and state.help_page == 0 and actions == []


@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules(draw=1, target=None, rounds=3, nerts_card_penalty=1),
        Rules(turn_based=True, rotate_alone=True, jokers=2),
    ],
    ids=["default", "racing-demon", "variants"],
)
def test_how_to_play_fits_80x24_whole(rules: Rules) -> None:
    lines = how_to_play(rules)
    screen = render(_view(rules, help=True, help_page=1), 80, 24)
    text = screen.text()
    assert "how to play" in screen.line(1)
    for line in lines:
        assert len(line) + 2 <= 80, line
        assert line in text, f"cut: {line!r}"
    assert len(lines) + 1 <= 24 - 3  # the header, the status and the keys line stay
    assert f"−{rules.nerts_card_penalty} for each" in text
    goal = f"{rules.target} points" if rules.rounds is None else f"play {rules.rounds} rounds"
    assert goal in text
    assert ("turn-based" in text) == rules.turn_based


@pytest.mark.parametrize(
    "rules",
    [Rules(), Rules(draw=1, target=None, rounds=3), Rules(turn_based=True, rotate_alone=True)],
    ids=["default", "racing-demon", "variants"],
)
def test_a_spectators_how_to_play_speaks_to_a_watcher_and_fits_80x24(rules: Rules) -> None:
    # A spectator's "? again: how to play" told them "Empty your Nerts pile [n] first", "p
    # passes", "your cards": keys that play nothing for someone who only watches.
    lines = how_to_play(rules, watcher=True)
    screen = render(_view(rules, seat=None, help=True, help_page=1), 80, 24)
    text = screen.text()
    for line in lines:
        assert len(line) + 2 <= 80 and line in text, f"cut: {line!r}"
    assert len(lines) + 1 <= 24 - 3
    assert "Each player races to empty their Nerts pile" in text, text
    assert f"−{rules.nerts_card_penalty} for" in text and "their Nerts pile" in text, text
    for player_words in ("your ", "you ", "[n]", "p passes", "x calls", "Pick a card"):
        assert player_words not in text.split("how to play", 1)[1], (player_words, text)
    assert ("turn-based" in text) == rules.turn_based
    # The page's alike (the page is a watcher's when it has no seat of ours).
    page = how_to_play(rules, pointer=True, watcher=True)
    assert not any(w in " ".join(page) for w in ("your ", "drag", "button passes")), page


def test_the_keys_page_still_lists_every_key_and_points_to_how_to_play() -> None:
    text = render(_view(Rules(), help=True), 80, 24).text()
    assert "? again: how to play" in text
    for key, _ in KEY_HELP:
        assert key.replace("1-6", "1-4") in text  # (this game's four work piles)
    # A player's words, not the program's: "the engine picks the foundation" (session 35).
    assert "engine" not in text and "…to the lake (onto the pile it fits there)" in text


def test_a_spectators_keys_page_lists_its_keys_not_the_players() -> None:
    text = render(_view(Rules(), seat=None, help=True), 80, 24).text()
    for key, what in SPECTATOR_HELP:
        assert key in text and what in text, text
    assert "pick a card" not in text and "leave the game (asks first)" not in text, text


def test_turn_based_header_says_whose_turn_it_is() -> None:
    rules = Rules(turn_based=True)
    view = _view(rules)
    assert "your turn" in render(view).line(0)
    table, _ = script(view.table, "0 S")  # type: ignore[arg-type]
    header = render(_view(rules, table=table)).line(0)
    assert "turn: Bob (seat 1)" in header and "your turn" not in header
    assert "turn" not in render(_view(Rules())).line(0)


def test_no_key_help_line_is_cut_at_80_columns() -> None:
    text = render(_view(Rules(), help=True), 80, 24).text()
    for _, what in (*KEY_HELP, ABANDON_HELP):
        assert len(what) + 18 <= 80, what
    for _, what in KEY_HELP:
        assert what in text, f"cut: {what!r}"


def test_keys_say_when_it_is_not_your_turn_and_a_call_still_goes() -> None:
    table = table_from(IDLE, IDLE, rules=Rules(turn_based=True))
    table, _ = script(table, "0 S")
    ctx = Context(table, 0)
    state, actions = press(KeyState(), "s", ctx)
    assert actions == [] and "not your turn" in state.status
    state, actions = press(KeyState(), "x", ctx)  # a call is no turn's move: asks first
    state, actions = press(state, "x", ctx)
    assert [str(a.move) for a in actions] == ["X"]  # type: ignore[attr-defined]


def test_keys_after_a_nerts_call_play_nothing() -> None:
    caller = "N: - | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: 2D 3D | W: -"
    table, _ = script(table_from(caller, IDLE), "0 X")
    state, actions = press(KeyState(), "s", Context(table, 1))
    # In the header's words, not the engine's value (session 35: "the round is over (nerts)").
    assert actions == [] and state.status == "illegal: the round is over: Nerts! was called"


def test_the_status_line_offers_the_pass_when_nothing_is_left_to_play() -> None:
    empty = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: - | W: -"
    table = table_from(empty, IDLE)
    assert status_line(table, 0, "") == NOTHING_TO_PLAY
    assert status_line(table, 0, "turned the stock") == "turned the stock"  # a key's first
    assert status_line(table, 1, "") == ""  # a stock to turn
    stuck, _ = script(table, "0 P")
    assert status_line(stuck, 0, "") == ""  # passed already
    assert status_line(stuck, 0, STUCK_WAITING) == STUCK_WAITING  # the pass stands
    played = table_from(empty, TWO_SPADES, lake="0S: AS/0")
    played, _ = script(played, "0 P", "1 W>L")
    assert status_line(played, 0, STUCK_WAITING) == PASS_GONE  # a lake card made it stale
    assert status_line(table, None, "") == ""  # a spectator


TWO_SPADES = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: 2S"


def test_the_keys_page_says_what_the_notation_means() -> None:
    # The keys page listed `1:2>4` and `N>_2` and the players' rows show moves so (`N>_4`,
    # `3>1`): nothing a player reads at the table said what they were. It fits with the
    # abandon key listed too.
    view = _view(Rules(), help=True, abandon=Gone(1, "Bob"))
    text = render(view, 80, 24).text()
    assert "N Nerts pile, W waste," in text
    assert "1-4 work piles, L lake" in text and "1:2>4 two cards of pile 1 onto 4" in text
    assert "N>_2 under pile 2 (slide-under), W>L@0S onto seat 0's spades" in text


def test_how_to_play_names_this_games_work_piles() -> None:
    assert "Pick a card (n, w, 1-4), then l." in "\n".join(how_to_play(Rules()))
    assert "Pick a card (n, w, 1-6), then l." in "\n".join(how_to_play(Rules(work_piles=6)))
