"""The lobby screen from values: its rendering and its keys, with no terminal or network."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules
from p2p_nertz.ui.keys import Status
from p2p_nertz.ui.lobby import (
    AddBot,
    AtTable,
    CreateTable,
    JoinTable,
    LeaveTable,
    Listing,
    LobbyContext,
    LobbyKeys,
    LobbyView,
    Quit,
    RemoveSeat,
    SeatLine,
    SetReady,
    StartGame,
    press_lobby,
    render_lobby,
    rules_text,
)
from p2p_nertz.ui.screen import Style

ANN = "aaaa-bbbb-cccc-dddd"
BOB = "bbbb-cccc-dddd-eeee"
ME = "mmmm-nnnn-oooo-pppp"
STRATEGIES = ("greedy", "lookahead")


def listings() -> tuple[Listing, ...]:
    return (
        Listing("10.0.0.5:5670", "Ann", ANN, 2, 4, "LAN"),
        Listing("127.0.0.1:6000", found="--peer"),
    )


def guest_table(*, ready: bool = False, rules: Rules | None = None) -> AtTable:
    return AtTable(
        "10.0.0.5:5670",
        (
            SeatLine("Ann", ANN, True, host=True),
            SeatLine("Bob", BOB, False),
            SeatLine("Me", ME, ready, you=True),
        ),
        rules if rules is not None else Rules(),
        4,
    )


def host_table(blocker: str | None = None) -> AtTable:
    seats = (SeatLine("Me", ME, True, host=True, you=True), SeatLine("Bob", BOB, True))
    return AtTable("127.0.0.1:7000", seats, Rules(), 8, hosting=True, blocker=blocker)


def view(**kw: object) -> LobbyView:
    base: dict[str, object] = {
        "name": "Me",
        "fingerprint": ME,
        "listings": listings(),
        "strategies": STRATEGIES,
    }
    base.update(kw)
    return LobbyView(**base)  # type: ignore[arg-type]


# -- rendering ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("width", "height"), [(80, 24), (120, 40)])
def test_the_table_list_shows_each_table_host_fingerprint_seats_and_how_found(
    width: int, height: int
) -> None:
    screen = render_lobby(view(discovering="10.0.0.255"), width, height)
    assert (screen.width, screen.height, len(screen.rows)) == (width, height, height)
    assert all(len(screen.line(i)) <= width for i in range(height))
    first = screen.line(screen.find("Ann's table") or 0)
    for part in ("1", "Ann's table", ANN, "2/4", "10.0.0.5:5670", "LAN"):
        assert part in first
    assert first.startswith(" > ")  # the selected table
    second = screen.line(screen.find("127.0.0.1:6000") or 0)
    assert "not asked yet" in second and "--peer" in second and not second.startswith(" > ")
    assert "listening on 10.0.0.255" in screen.line(0) and ME in screen.line(0)
    assert "Enter join" in screen.line(height - 1) and "c create" in screen.line(height - 1)


@pytest.mark.parametrize("width", [80, 120])
def test_the_table_list_names_a_deal_that_is_not_the_default(width: int) -> None:
    """As ``nertz games`` does (docs/lobby.md §2): a shuffle table says so after its host's
    name, which gives way to it where both do not fit; a commit table says nothing."""
    long = "Bartholomew-Ignatius"
    tables = (
        Listing("10.0.0.5:5670", "Ann", ANN, 2, 4, "LAN", Deal.SHUFFLE),
        Listing("10.0.0.6:5670", "Bob", BOB, 1, 4, "LAN"),
        Listing("127.0.0.1:6000", long, ME, 1, 2, "--peer", Deal.SHUFFLE),
    )
    screen = render_lobby(view(listings=tables), width, 24)
    ann = screen.line(screen.find("Ann's table") or 0)
    assert "Ann's table · shuffle" in ann and ANN in ann and "2/4" in ann, ann
    bob = screen.line(screen.find("Bob's table") or 0)
    assert "shuffle" not in bob and "deal" not in bob and "commit" not in bob, bob
    mine = screen.line(screen.find("127.0.0.1:6000") or 0)
    assert f"{long[:10]}" in mine and "· shuffle" in mine and ME in mine, mine
    assert mine.index("· shuffle") < mine.index(ME)  # (the name cut, not the fingerprint)
    assert screen.styles_of(" · shuffle") == {Style.WARN}
    assert all(len(screen.line(i)) <= width for i in range(24))


def test_with_no_table_the_list_says_how_to_get_one() -> None:
    quiet = render_lobby(view(listings=()))
    assert quiet.find("no table known") is not None and quiet.find("c creates one") is not None
    heard = render_lobby(view(listings=(), discovering="10.0.0.255"))
    assert heard.find("no table heard on 10.0.0.255 yet") is not None


def test_at_a_table_every_seat_shows_name_fingerprint_ready_and_the_host() -> None:
    screen = render_lobby(view(table=guest_table()))
    ann = screen.line(screen.find("  0  Ann ") or 0)  # seats from 0, as at the game table
    bob = screen.line(screen.find(BOB) or 0)
    me = screen.line(screen.find(ME + " ") or 0)
    assert ANN in ann
    assert "Ann" in ann and "host" in ann and ann.rstrip().endswith("ready")
    assert "Bob" in bob and "host" not in bob and "not ready" in bob
    assert "Me" in me and "not ready" in me and "← you" in me
    assert screen.find("host: Ann") is not None and screen.find("3/4 seated") is not None
    assert "r ready" in screen.line(23) and "s start" not in screen.line(23)
    assert screen.styles_of("not ready") == {Style.WARN}


def test_the_rules_are_shown_in_words() -> None:
    rules = Rules(draw=1, work_piles=5, nerts_bonus=10, rounds=3, target=None, pairs=True)
    screen = render_lobby(view(table=guest_table(rules=rules)))
    text = screen.text()
    for line in rules_text(rules):
        assert line in text
    assert "draw 1" in text and "5 work piles" in text and "exactly 3 rounds" in text
    assert "Nerts bonus 10" in text and "variants: pairs" in text


def test_rules_text_names_every_variant_and_penalty() -> None:
    text = " ".join(
        rules_text(Rules(jokers=2, rotate_alone=True, nerts_card_penalty=1, false_call_penalty=7))
    )
    assert "rotate alone" in text and "2 jokers" in text
    assert "Nerts card −1" in text and "false call −7" in text and "to 100 points" in text


def test_the_host_sees_why_the_game_cannot_start_or_that_it_can() -> None:
    blocked = render_lobby(view(table=host_table("waiting for Bob to be ready")))
    assert blocked.find("waiting for Bob to be ready") is not None
    assert blocked.find("you host") is not None and "s start" in blocked.line(23)
    ready = render_lobby(view(table=host_table()))
    assert ready.find("everybody is ready: s starts") is not None


def test_a_table_that_has_not_answered_yet() -> None:
    screen = render_lobby(view(table=AtTable("127.0.0.1:6000")))
    assert screen.find("waiting for the host to answer") is not None
    assert screen.find("not shown yet") is not None


def test_the_bot_picker_shows_the_strategy_and_speed() -> None:
    keys = LobbyKeys(picking=True, strategy=1, speed=7)
    screen = render_lobby(view(table=host_table(), keys=keys))
    row = screen.line(screen.find("add a bot") or 0)
    assert "[lookahead]" in row and "greedy" in row and "speed 7/10" in row
    assert "Esc cancel" in screen.line(23)


def test_status_help_and_messages() -> None:
    blocked = LobbyContext(at_table=True, hosting=True, blocker="waiting for Bob")
    keys = press_lobby(LobbyKeys(), "s", blocked)[0]  # (a refusal, as the keys made it)
    screen = render_lobby(view(keys=keys, messages=("Bob sat down", "Cy left")))
    assert screen.line(22) == "cannot start: waiting for Bob"
    assert screen.styles_of("cannot start") == {Style.BAD}
    assert screen.find("» Cy left") == screen.find("» Bob sat down") + 1  # type: ignore[operator]
    help_screen = render_lobby(view(keys=LobbyKeys(help=True)))
    assert help_screen.find("lobby keys") is not None and help_screen.find("add a bot") is not None


def test_many_tables_keep_the_selected_one_on_screen() -> None:
    many = tuple(Listing(f"10.0.0.{i}:5670", f"H{i}", ANN, 1, 8) for i in range(1, 31))
    screen = render_lobby(view(listings=many, keys=LobbyKeys(cursor=27)), 80, 24)
    assert screen.find("H28's table") is not None
    row = screen.line(screen.find("H28's table") or 0)
    assert row.startswith(" > 28")


@given(
    width=st.integers(80, 160),
    height=st.integers(24, 60),
    n=st.integers(0, 12),
    at=st.sampled_from(["none", "guest", "host"]),
    picking=st.booleans(),
)
def test_any_lobby_fits_its_screen(width: int, height: int, n: int, at: str, picking: bool) -> None:
    deals = list(Deal)
    tables = tuple(
        Listing(f"10.0.0.{i}:1", f"H{i}" * i, ANN, i % 9, 8, deal=deals[i % len(deals)])
        for i in range(n)
    )
    table = {"none": None, "guest": guest_table(), "host": host_table()}[at]
    screen = render_lobby(
        view(listings=tables, table=table, keys=LobbyKeys(picking=picking)), width, height
    )
    assert len(screen.rows) == height
    assert all(sum(len(s.text) for s in row) <= width for row in screen.rows)
    if table is not None:
        assert screen.find("← you") is not None


# -- keys --------------------------------------------------------------------------------------
BROWSE = LobbyContext(listings=2, strategies=STRATEGIES)
GUEST = LobbyContext(listings=2, at_table=True, strategies=STRATEGIES)
HOST = LobbyContext(listings=0, at_table=True, hosting=True, ready=True, strategies=STRATEGIES)


def test_browsing_selects_with_digits_and_arrows_and_joins_with_enter() -> None:
    keys, actions = press_lobby(LobbyKeys(), "DOWN", BROWSE)
    assert keys.cursor == 1 and not actions
    keys, _ = press_lobby(keys, "DOWN", BROWSE)
    assert keys.cursor == 0  # wraps
    keys, _ = press_lobby(keys, "UP", BROWSE)
    assert keys.cursor == 1
    keys, _ = press_lobby(keys, "1", BROWSE)
    assert keys.cursor == 0
    keys, actions = press_lobby(keys, "ENTER", BROWSE)
    assert actions == [JoinTable(0)]


def test_browsing_refuses_what_makes_no_sense_and_says_why() -> None:
    keys, actions = press_lobby(LobbyKeys(), "5", BROWSE)
    assert not actions and keys.status == "no table 5 in the list" and keys.cursor == 0
    keys, actions = press_lobby(LobbyKeys(), "ENTER", LobbyContext())
    assert not actions and "c creates one" in keys.status
    for key in "rbsl":
        keys, actions = press_lobby(LobbyKeys(), key, BROWSE)
        assert not actions and keys.status.startswith("not at a table")
    keys, actions = press_lobby(LobbyKeys(), "z", BROWSE)
    assert not actions and "? for help" in keys.status


def test_create_quit_and_help() -> None:
    assert press_lobby(LobbyKeys(), "c", BROWSE)[1] == [CreateTable()]
    assert press_lobby(LobbyKeys(), "q", BROWSE)[1] == [Quit()]
    assert press_lobby(LobbyKeys(), "q", GUEST)[1] == [Quit()]
    keys, _ = press_lobby(LobbyKeys(), "?", BROWSE)
    assert keys.help
    keys, actions = press_lobby(keys, "c", BROWSE)  # any key closes help, and does nothing else
    assert not keys.help and not actions


def test_a_guest_toggles_ready_and_cannot_start() -> None:
    keys, actions = press_lobby(LobbyKeys(), "r", GUEST)
    assert actions == [SetReady(True)] and keys.status == "ready"
    ready = LobbyContext(listings=2, at_table=True, ready=True, strategies=STRATEGIES)
    assert press_lobby(keys, "r", ready)[1] == [SetReady(False)]
    keys, actions = press_lobby(LobbyKeys(), "s", GUEST)
    assert not actions and keys.status.startswith("only the host")
    keys, actions = press_lobby(LobbyKeys(), "c", GUEST)
    assert not actions and "l leaves it first" in keys.status
    assert press_lobby(LobbyKeys(), "l", GUEST)[1] == [LeaveTable()]


def test_the_host_starts_only_when_nothing_blocks() -> None:
    keys, actions = press_lobby(LobbyKeys(), "s", HOST)
    assert actions == [StartGame()]
    blocked = LobbyContext(at_table=True, hosting=True, blocker="waiting for Bob to be ready")
    keys, actions = press_lobby(LobbyKeys(), "s", blocked)
    assert not actions and keys.status == "cannot start: waiting for Bob to be ready"
    keys, actions = press_lobby(LobbyKeys(), "r", HOST)
    assert not actions and "always ready" in keys.status


def test_a_lobby_refusal_is_said_so_by_the_key_that_refused_not_read_from_its_words() -> None:
    """Drawn as bad news (at the terminal, and on the page: the same flag) is what a key was
    refused: "not ready" and "no bot added" answer a key (their first word drew them as
    refusals), "the host is always ready" and "you are at a table…" refuse one (theirs did
    not)."""
    ready = LobbyContext(listings=2, at_table=True, ready=True, strategies=STRATEGIES)
    for keys, said, refused in (
        (press_lobby(LobbyKeys(), "r", ready)[0], "not ready", False),
        (press_lobby(LobbyKeys(picking=True), "ESC", HOST)[0], "no bot added", False),
        (press_lobby(LobbyKeys(), "r", HOST)[0], "the host is always ready", True),
        (press_lobby(LobbyKeys(), "c", GUEST)[0], "you are at a table", True),
    ):
        assert keys.status.startswith(said) and keys.line.refused is refused, keys
        styles = render_lobby(view(keys=keys)).styles_of(said)
        assert styles == {Style.BAD if refused else Style.WARN}, (said, styles)


def test_the_host_removes_a_guest_by_seat_number() -> None:
    three = LobbyContext(at_table=True, hosting=True, seats=3)
    keys, actions = press_lobby(LobbyKeys(), "x", three)
    assert not actions and keys.removing and keys.status == "remove which guest? 1-2"
    done, actions = press_lobby(keys, "2", three)  # seats from 0: the host is 0
    assert actions == [RemoveSeat(2)] and not done.removing
    for key, said in (
        ("0", "seat 0 is you, the host: the guests are in seats 1-2"),
        ("3", "no guest in seat 3: the guests are in seats 1-2"),
        ("9", "no guest in seat 9"),
        ("ESC", "no guest"),
    ):
        done, actions = press_lobby(keys, key, three)
        assert not actions and not done.removing and done.status.startswith(said)
    keys, actions = press_lobby(
        LobbyKeys(), "x", LobbyContext(at_table=True, hosting=True, seats=1)
    )
    assert not actions and not keys.removing and keys.status == "no guest to remove"
    keys, actions = press_lobby(LobbyKeys(), "x", GUEST)
    assert not actions and keys.status.startswith("only the host")


def test_the_bot_picker_chooses_strategy_and_speed() -> None:
    keys, actions = press_lobby(LobbyKeys(), "b", HOST)
    assert keys.picking and not actions
    keys, _ = press_lobby(keys, "t", HOST)
    assert keys.strategy == 1
    keys, _ = press_lobby(keys, "RIGHT", HOST)
    assert keys.strategy == 0  # wraps
    keys, _ = press_lobby(keys, "LEFT", HOST)
    assert keys.strategy == 1
    keys, _ = press_lobby(keys, "+", HOST)
    assert keys.speed == 6
    for _ in range(10):
        keys, _ = press_lobby(keys, "+", HOST)
    assert keys.speed == 10
    keys, _ = press_lobby(keys, "3", HOST)
    assert keys.speed == 3
    keys, _ = press_lobby(keys, "0", HOST)
    assert keys.speed == 10
    for _ in range(12):
        keys, _ = press_lobby(keys, "-", HOST)
    assert keys.speed == 1
    keys, actions = press_lobby(keys, "ENTER", HOST)
    assert actions == [AddBot("lookahead", 1)] and not keys.picking
    # The picker remembers the last choice; Esc closes it without a bot.
    keys, _ = press_lobby(keys, "b", HOST)
    assert keys.strategy == 1 and keys.speed == 1
    keys, actions = press_lobby(keys, "ESC", HOST)
    assert not keys.picking and not actions and keys.status == "no bot added"


def test_a_guest_may_add_a_bot_too() -> None:
    keys, _ = press_lobby(LobbyKeys(), "b", GUEST)
    assert press_lobby(keys, "ENTER", GUEST)[1] == [AddBot("greedy", 5)]


@given(st.lists(st.sampled_from(
    ["1", "2", "9", "UP", "DOWN", "LEFT", "RIGHT", "ENTER", "ESC", "c", "r", "b", "s", "x", "l",
     "q", "?", "t", "+", "-", "0", "z", "\t", " "]
), max_size=30), st.sampled_from([BROWSE, GUEST, HOST, LobbyContext()]))  # fmt: skip
def test_no_key_sequence_raises_or_leaves_the_state_invalid(
    keys_: list[str], ctx: LobbyContext
) -> None:
    keys = LobbyKeys()
    for key in keys_:
        keys, actions = press_lobby(keys, key, ctx)
        assert 1 <= keys.speed <= 10
        assert 0 <= keys.cursor < max(ctx.listings, 1)
        for action in actions:
            if isinstance(action, JoinTable):
                assert 0 <= action.index < ctx.listings
            if isinstance(action, StartGame):
                assert ctx.hosting and ctx.blocker is None
            if isinstance(action, SetReady):
                assert ctx.at_table and not ctx.hosting
            if isinstance(action, RemoveSeat):
                assert ctx.hosting and 1 <= action.seat < ctx.seats


@pytest.mark.parametrize("between", [(), ("Cy (cccc-dddd-eeee-ffff) sat down",)])
def test_the_status_lines_words_are_not_shown_again_in_the_news(between: tuple[str, ...]) -> None:
    """What a key did is said on the status line and kept in the news: the screen showed the
    line twice (README's capture: "at Ann's table …: r when ready" in the news and on the
    status line, a seat's news between them). Each line of text shows once; the news keeps
    it once the status line has moved on."""
    said = f"at Ann's table ({ANN}): r when ready"
    news = ("joining the table at 10.0.0.5:5670…", said, *between)
    shown = view(table=guest_table(), messages=news, keys=LobbyKeys(line=Status(said)))
    text = render_lobby(shown).text()
    assert text.count(said) == 1, text
    assert all(f"» {m}" in text for m in news if m != said), text
    moved_on = view(table=guest_table(), messages=news, keys=LobbyKeys(line=Status("ready")))
    assert f"» {said}" in render_lobby(moved_on).text()
