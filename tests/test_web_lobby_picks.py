"""The lobby page's choices, with no browser: each choice the page sends
(:class:`~p2p_nertz.web.model.LobbyPick`) becomes the lobby's own keys
(:func:`~p2p_nertz.web.terminal.pick_keys`), and those keys, fed to the terminal lobby's
:func:`~p2p_nertz.ui.lobby.press_lobby`, do what the button says (or say why not)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules
from p2p_nertz.ui.lobby import (
    AddBot,
    AtTable,
    CreateTable,
    JoinTable,
    Listing,
    LobbyAction,
    LobbyKeys,
    LobbyView,
    RemoveSeat,
    SeatLine,
    SetReady,
    StartGame,
    press_lobby,
)
from p2p_nertz.web.model import BadAction, LobbyPick, parse_action
from p2p_nertz.web.terminal import lobby_json, pick_keys

STRATEGIES = ("cautious", "greedy", "random")
LISTED = tuple(Listing(f"10.0.0.{i}:7000", f"p{i}", f"fp{i}", 1, 4) for i in range(12))
HOST = AtTable(
    "10.0.0.99:7000",
    (SeatLine("ann", "aaaa", True, host=True, you=True), SeatLine("bo", "bbbb", False)),
    Rules(),
    4,
    hosting=True,
    blocker="waiting for bo to be ready",
)
GUEST = AtTable(
    "10.0.0.99:7000",
    (SeatLine("ann", "aaaa", True, host=True), SeatLine("bo", "bbbb", False, you=True)),
    Rules(),
    4,
    blocker="waiting for bo to be ready",
)


def run(view: LobbyView, pick: LobbyPick) -> tuple[LobbyKeys, list[LobbyAction]]:
    """The pick's keys through the terminal lobby's keys, as ``cli/lobby_app.py`` feeds them."""
    keys, done = view.keys, []
    for key in pick_keys(view, pick):
        keys, actions = press_lobby(keys, key, replace(view, keys=keys).context())
        done += actions
    return keys, done


def view(table: AtTable | None = None, **keys: Any) -> LobbyView:
    return LobbyView(
        "ann",
        "aaaa",
        LISTED,
        table,
        LobbyKeys(**keys),
        STRATEGIES,
    )


@pytest.mark.parametrize("index", [0, 4, 8, 9, 11])
def test_join_joins_the_table_at_that_address_from_any_cursor(index: int) -> None:
    for cursor in (0, 5, 11):
        pick = LobbyPick("join", where=LISTED[index].where)
        assert run(view(cursor=cursor), pick)[1] == [JoinTable(index)]


def test_join_of_a_table_no_longer_listed_is_refused_with_the_reason() -> None:
    with pytest.raises(BadAction, match=r"no table at '10\.9\.9\.9:1'"):
        pick_keys(view(), LobbyPick("join", where="10.9.9.9:1"))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("speed", [1, 7, 10])
def test_a_bot_has_the_strategy_and_speed_chosen_even_with_the_picker_open(
    strategy: str, speed: int
) -> None:
    for start in (0, 2):
        for picking in (False, True):
            at = view(HOST, strategy=start, picking=picking)
            keys, actions = run(at, LobbyPick("bot", strategy=strategy, speed=speed))
            assert actions == [AddBot(strategy, speed)]
            assert not keys.picking


def test_a_bot_of_an_unknown_strategy_is_refused() -> None:
    with pytest.raises(BadAction, match="no bot strategy 'psychic'"):
        pick_keys(view(HOST), LobbyPick("bot", strategy="psychic", speed=3))


def test_choices_that_mean_nothing_now_say_why_and_do_nothing() -> None:
    keys, actions = run(view(), LobbyPick("bot", strategy="greedy", speed=3))
    assert (actions, keys.status) == (
        [],
        "not at a table: ENTER joins the selected one, c creates one",
    )
    keys, actions = run(view(), LobbyPick("remove", seat=1))
    assert actions == [] and keys.cursor == 0
    keys, actions = run(view(GUEST), LobbyPick("remove", seat=1))
    assert (actions, keys.status) == ([], "only the host removes a guest: l leaves the table")
    keys, actions = run(view(HOST), LobbyPick("start"))
    assert (actions, keys.status) == ([], "cannot start: waiting for bo to be ready")


def test_ready_sets_the_mark_asked_for_and_does_not_toggle_it_back() -> None:
    assert run(view(GUEST), LobbyPick("ready", ready=True))[1] == [SetReady(True)]
    assert run(view(GUEST), LobbyPick("ready", ready=False))[1] == []


def test_create_start_and_remove() -> None:
    assert run(view(), LobbyPick("create"))[1] == [CreateTable()]
    ready = replace(HOST, blocker=None)
    assert run(view(ready), LobbyPick("start"))[1] == [StartGame()]
    assert run(view(HOST), LobbyPick("remove", seat=1))[1] == [RemoveSeat(1)]


def test_the_page_is_sent_fingerprints_ready_marks_and_the_rules() -> None:
    page = lobby_json(view(GUEST))
    assert [(s["name"], s["fingerprint"], s["ready"]) for s in page["table"]["seats"]] == [
        ("ann", "aaaa", True),
        ("bo", "bbbb", False),
    ]
    assert page["table"]["rules"][0].startswith("draw 3 · 4 work piles")
    assert page["table"]["can_start"] is False
    assert page["listings"][3]["fingerprint"] == "fp3"


def test_the_page_is_sent_a_tables_deal_where_it_is_not_the_default() -> None:
    """As the terminal's list names it (``Ann's table · shuffle``)."""
    tables = (
        Listing("10.0.0.5:5670", "ann", "fp0", 1, 4, "LAN", Deal.SHUFFLE),
        Listing("10.0.0.6:5670", "bo", "fp1", 1, 4, "LAN"),
        Listing("127.0.0.1:6000", found="--peer"),
    )
    page = lobby_json(replace(view(), listings=tables))
    assert [t["deal"] for t in page["listings"]] == ["shuffle", None, None]


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "lobby", "do": "fly"}',
        '{"type": "lobby", "do": "bot", "strategy": "greedy", "speed": 11}',
        '{"type": "lobby", "do": "bot", "strategy": "greedy", "speed": true}',
        '{"type": "lobby", "do": "ready", "ready": "yes"}',
        '{"type": "lobby", "do": "join", "where": 7}',
        '{"type": "lobby", "do": "remove", "seat": 0}',
    ],
)
def test_a_malformed_choice_is_refused(text: str) -> None:
    with pytest.raises(BadAction):
        parse_action(text)
