"""A newcomer's first game in the browser (session 25): what someone who has never played Nertz
sees in the page of ``nertz play --web --bots 2 --practice``, in a real chromium.

Before: the page's help told how to move cards but not what the game is (the goal, where aces
go, how the work piles build, the score); it had no way to close it but the key that opened it;
a card picked by a click said only its keys ("l to the lake, 1-4 onto a work pile"); and once
the work piles grew, the line that says why a move was refused was below the fold.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers_rules import IDLE, table_from

from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Move, Pile, Rules
from p2p_nertz.rules.book import rule_book
from p2p_nertz.ui import TableView
from p2p_nertz.ui.view import Link
from p2p_nertz.web.model import KeyPress, view_json
from tests.peer_helpers import Paused, PeerNetwork
from tests.test_web_race import Seat, _open
from tests.test_web_table import card_in, tops, turn_until_ace
from tests.web_helpers import (
    ServedPage,
    WebGame,
    browser_missing,
    click,
    drag_to,
    fit,
    open_browser,
    texts,
    wait_for,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
]

GAME = ("--bots", "2", "--practice", "--seed", "11", "--rounds", "1", "--draw", "1")


@pytest.fixture
def game(tmp_path: Path) -> Iterator[WebGame]:
    started = WebGame(tmp_path, *GAME)
    try:
        yield started
    finally:
        err = started.stop()[2]
        assert "Traceback" not in err, err


def _dealt(driver: Any, url: str) -> None:
    driver.get(url)
    wait_for(driver, lambda d: d.find_elements("css selector", "#mine .nerts .card"), "the deal")


def _contrast(driver: Any, text: str, ground: str) -> float:
    """The contrast ratio (WCAG 2) of element ``text``'s colour on element ``ground``'s
    background, as the page computes them."""
    colours = driver.execute_script(
        "return [getComputedStyle(document.getElementById(arguments[0])).color,"
        " getComputedStyle(document.getElementById(arguments[1])).backgroundColor]",
        text,
        ground,
    )

    def luminance(css: str) -> float:
        red, green, blue = (int(c) / 255 for c in css[css.index("(") + 1 : -1].split(",")[:3])
        lin = [
            c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (red, green, blue)
        ]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    bright, dark = sorted((luminance(c) for c in colours), reverse=True)
    return (bright + 0.05) / (dark + 0.05)


def _help(driver: Any) -> Any:
    return driver.find_element("id", "help")


def test_web_a_newcomer_finds_the_rules_closes_them_and_is_told_how_to_place_a_picked_card(
    game: WebGame,
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    with open_browser(1280, 720) as driver:
        _dealt(driver, game.url)
        learn = driver.find_element("id", "learn")
        assert learn.is_displayed() and learn.text == "how to play"
        assert not _help(driver).is_displayed()
        learn.click()
        help_text = wait_for(driver, lambda d: _help(d).is_displayed() and _help(d).text, "help")
        # The rules in brief with this game's numbers (the terminal's "how to play" page).
        for words in (
            "Empty your Nerts pile",
            "Aces go to the lake",
            "alternating colours",
            "−2 for each card left in your Nerts pile",
            "play 1 round; the highest total wins",
            "A click on the stock turns 1 card at a time",
            "Drag a card",
        ):
            assert words in " ".join(help_text.split()), (words, help_text)
        assert "peer" not in help_text, help_text  # (a program's word: session 35)
        # Esc closes it (and says nothing to the peer); ? opens it; its button closes it.
        ActionChains(driver).send_keys(Keys.ESCAPE).perform()
        wait_for(driver, lambda d: not _help(d).is_displayed(), "Esc closes the help")
        ActionChains(driver).send_keys("?").perform()
        wait_for(driver, lambda d: _help(d).is_displayed(), "? opens the help")
        driver.find_element("id", "help-close").click()
        wait_for(driver, lambda d: not _help(d).is_displayed(), "close closes the help")

        # A click picks the Nerts card: the status names the pointer's way beside the keys.
        nerts = tops(driver)["n"]
        click(driver, card_in("n", str(nerts)))
        status = driver.find_element("id", "status")
        wait_for(driver, lambda d: " picked: " in status.text, "the pick, said")
        assert status.text.endswith("· or click where it goes"), status.text
        ActionChains(driver).send_keys(Keys.ESCAPE).perform()
        wait_for(driver, lambda d: " picked: " not in status.text, "Esc cancels the pick")
        assert "click where it goes" not in status.text

        # Nerts! with cards left is asked about first: the button says what a second click does.
        call = driver.find_element("id", "call")
        call.click()
        # (The page's question names its button, not the terminal's key.)
        asked = "click “yes, call Nerts” to call anyway"
        wait_for(driver, lambda d: asked in status.text, "the question")
        assert "x again" not in status.text, status.text
        wait_for(driver, lambda d: call.text == "yes, call Nerts", "the button's question")
        ActionChains(driver).send_keys(Keys.ESCAPE).perform()
        wait_for(driver, lambda d: call.text == "Nerts!", "Esc: the call is not made")
        assert "to call anyway" not in status.text

        # With the keyboard alone, the focused button is plain to see.
        ActionChains(driver).send_keys(Keys.TAB).perform()
        outline = driver.execute_script(
            "const s = getComputedStyle(document.activeElement);"
            "return [document.activeElement.tagName, s.outlineStyle, s.outlineWidth];"
        )
        assert outline == ["BUTTON", "solid", "3px"], outline
        # Space on a focused button is the button's own (high contrast here), not the stock's
        # turn as well.
        driver.execute_script("document.getElementById('contrast').focus()")
        waste = driver.find_element("css selector", "#mine .waste .count").text
        ActionChains(driver).send_keys(Keys.SPACE).perform()
        wait_for(driver, lambda d: "contrast" in d.find_element("tag name", "body").get_attribute(
            "class"), "the focused button, pressed")  # fmt: skip
        ActionChains(driver).send_keys("c").perform()  # (a key the page keeps: a round trip)
        wait_for(driver, lambda d: "contrast" not in d.find_element("tag name", "body")
                 .get_attribute("class"), "c")  # fmt: skip
        assert driver.find_element("css selector", "#mine .waste .count").text == waste


def test_web_a_first_look_says_each_thing_once_in_words_and_a_pass_names_the_open_move(
    game: WebGame,
) -> None:
    # Session 26: the deal said twice (status and news), a practice hint naming a terminal
    # command, a header of "round 1 · play", how to play in keys, a pass taken with an ace
    # on top and nothing said.
    with open_browser(1280, 720) as driver:
        _dealt(driver, game.url)
        status = driver.find_element("id", "status")
        news = driver.find_element("id", "messages")
        wait_for(driver, lambda d: status.text == "round 1 is dealt — go!", "the deal's words")
        assert "round 1 is dealt" not in news.text, news.text
        assert news.text.startswith("practice: the bots wait for you"), news.text
        assert "nertz " not in news.text and "--" not in news.text, news.text
        assert driver.find_element("id", "round").text == "round 1 of 1 · playing"
        heads = wait_for(  # (read in one pass, again if the page redrew the others meanwhile)
            driver,
            lambda d: [h.text for h in d.find_elements("css selector", "#others .player h3")],
            "the other players' rows",
        )
        for text in heads:
            assert " · 0 pts" in text, text  # a total, named
        driver.find_element("id", "learn").click()
        rules = wait_for(driver, lambda d: d.find_element("id", "how-to-play").text, "rules")
        rules = " ".join(rules.split())
        assert "drag a card there (or click it, then the lake)" in rules, rules
        assert "Slide-under: with a work pile empty" in rules, rules
        assert "x calls" not in rules and "p passes" not in rules, rules
        piles = [k.text for k in driver.find_elements("css selector", "#help kbd.piles")]
        assert piles == ["4", "4"], piles  # the keys' list: this game's work piles
        # The whole rule book: a link to the rules the program serves, not a command.
        assert "nertz rules" not in rules and "rule book link below" in rules, rules
        book = driver.find_element("id", "rule-book").get_attribute("href")
        # Session 30: the link was the browser's blue on the dark felt (1.1 to 1), unreadable.
        ratio = _contrast(driver, "rule-book", "help")
        assert ratio >= 4.5, ratio  # (WCAG's AA for text)
        driver.find_element("id", "help-close").click()
        # The header says in words what its link and contrast button are.
        link = driver.find_element("id", "link").text
        assert link == "connected to your nertz program", link
        assert driver.find_element("id", "contrast").text == "◐ high contrast"
        # An ace on top: the pass is taken (the rules allow it) and a move to the lake is
        # named (the lake's moves come first; the ace's, or the Nerts card's if it fits).
        pile, _ace = turn_until_ace(driver)
        driver.find_element("css selector", '#actions button[data-key="p"]').click()
        wait_for(driver, lambda d: status.text.startswith("stuck"), "the pass")
        assert "you could still play" in status.text and "to the lake" in status.text, (
            pile,
            status.text,
        )
        # The rule book the help links: the package's, served by the player's own program.
        driver.get(book)
        text = wait_for(driver, lambda d: d.find_element("tag name", "body").text, "the book")
        lines = [line.strip() for line in rule_book().splitlines() if line.strip()]
        assert lines[0] in text and lines[-1] in text, text[:200]


def test_web_the_reason_for_a_refused_move_stays_in_sight_on_a_short_window(
    game: WebGame,
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    # A laptop's page under its browser's bars (the status line sits below the tableau).
    with open_browser(1280, 420) as driver:
        _dealt(driver, game.url)
        inner = driver.execute_script("return window.innerHeight")
        assert driver.execute_script("return document.body.scrollHeight") > inner
        # With the keys alone: the Nerts top to the lake is refused (no ace is that card's
        # foundation yet, unless it is an ace: then onto work pile 1, which a court card or
        # an ace does not fit either way round, or another reason is given).
        nerts = tops(driver)["n"]
        second = "l" if nerts.rank != 1 else "1"
        ActionChains(driver).send_keys("n").perform()
        status = driver.find_element("id", "status")
        wait_for(driver, lambda d: " picked: " in status.text, "the pick")
        ActionChains(driver).send_keys(second).perform()
        wait_for(driver, lambda d: " picked: " not in status.text, "the answer")
        box = driver.execute_script(
            "const r = arguments[0].getBoundingClientRect(); return [r.top, r.bottom];", status
        )
        assert box[0] >= 0 and box[1] <= inner, (box, inner, status.text)
        assert status.text  # what the peer said about it is what the person reads


def test_web_a_phone_sized_page_offers_how_to_play_and_fits_the_rules_on_screen(
    game: WebGame,
) -> None:
    with open_browser(390, 844) as driver:
        _dealt(driver, game.url)
        learn = driver.find_element("id", "learn")
        assert learn.is_displayed()
        learn.click()
        wait_for(driver, lambda d: "Aces go to the lake" in _help(d).text, "the rules")
        # On screen from its first line (the focused close button at the end does not scroll
        # the rules away), no wider than the phone.
        first = driver.find_element("css selector", "#how-to-play p")
        assert "Empty your Nerts pile" in first.text
        box = driver.execute_script(
            "const r = arguments[0].getBoundingClientRect(), h = arguments[1]"
            ".getBoundingClientRect(); return [r.top, r.bottom, h.right, window.innerHeight];",
            first,
            _help(driver),
        )
        assert box[0] >= 0 and box[1] <= box[3], box
        assert box[2] <= 390, box
        assert driver.find_element("id", "help-close").is_displayed()


def _paused_pair(page: ServedPage) -> Seat:
    """Seat 0 of two players whose bots never move (seed 4, one round, one card a turn), in
    play, on ``page``."""
    paused = {s: Paused() for s in range(2)}
    net = PeerNetwork(2, seed=4, rules=Rules(rounds=1, target=None, draw=1), strategies=paused)
    net.run(lambda n: all(p.phase is Phase.PLAY for p in n.peers))
    return Seat(net, 0, page)


def test_web_an_empty_lake_says_what_it_is_for_until_its_first_ace(page: ServedPage) -> None:
    # Nobody else plays (paused): the lake is empty until our own ace goes there.
    seat = _paused_pair(page)
    net = seat.net
    with open_browser(390, 844) as driver:
        _open(driver, seat)
        hint = driver.find_element("css selector", "#foundations .hint")
        assert hint.is_displayed()
        assert hint.text.startswith("Aces go here: each starts a pile"), hint.text
        table = seat.peer.tentative.table
        assert table is not None
        for _ in range(40):  # turn the stock (our seat's, one card a turn) until an ace shows
            aces = [p for p in ("n", "w", "1", "2", "3", "4") if _top_is_ace(table, p)]
            if aces:
                break
            net.play(0, Move.parse("S"))
            table = seat.peer.tentative.table
            assert table is not None
        else:
            raise AssertionError("no ace on top in 40 turns")
        net.play(0, Move.parse(f"{aces[0].upper()}>L"))
        seat.draw()
        wait_for(driver, lambda d: d.find_elements("css selector", "#foundations .card"), "ace")
        assert not driver.find_elements("css selector", "#foundations .hint")


def _top_is_ace(table: Any, pile: str) -> bool:
    where = Pile.NERTS if pile == "n" else Pile.WASTE if pile == "w" else Pile(int(pile))
    top = table.tableaux[0].top(where)
    return top is not None and top.rank == 1


def _nerts_counts_clear(driver: Any) -> list[tuple[float, float, str]]:
    """For each other player: its Nerts count's right edge (of the text itself, which may be
    wider than its box), its first work pile's left edge, and the count's text."""
    found: list[tuple[float, float, str]] = driver.execute_script(
        "return [...document.querySelectorAll('#others .player')].map((p) => {"
        "  const count = p.querySelector('.pile.nerts .count');"
        "  const work = p.querySelector('.pile.work');"
        "  const text = document.createRange(); text.selectNodeContents(count);"
        "  return [text.getBoundingClientRect().right, work.getBoundingClientRect().left,"
        "          count.textContent];"
        "});"
    )
    return found


def test_web_the_other_players_nerts_counts_stay_clear_of_their_work_piles(
    game: WebGame,
) -> None:
    # A run grown down a bot's first work pile hid its "Nerts 7" (the pile drawn after it).
    with open_browser(1280, 720) as driver:
        for width, height in ((1280, 720), (390, 844)):
            fit(driver, width, height)
            _dealt(driver, game.url)
            counts = _nerts_counts_clear(driver)
            assert len(counts) == 2, counts
            for right, left, text in counts:
                assert text.startswith("Nerts "), text
                assert right <= left, (width, right, left, text)


def test_web_an_emptied_nerts_pile_asks_for_the_call(page: ServedPage) -> None:
    # A newcomer emptied their Nerts pile in the page and never called: nothing there said to
    # (the terminal's row says "empty: call Nerts with x!").
    mine = "N: - | 1: QH | 2: 5S | 3: 5D | 4: 8C | S: 2C 7H 9S | W: 6H AS"
    other = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: -"
    with open_browser(390, 844) as driver:
        for own, due in ((mine, True), (other, False)):
            table = table_from(own, other)
            view = TableView(table=table, seat=0, names=("Ann", "Bob"), rules=Rules())
            page.publish(json.dumps(view_json(view), ensure_ascii=False))
            driver.get(page.url)
            count = wait_for(
                driver,
                lambda d: d.find_elements("css selector", "#mine .nerts .count"),
                "our Nerts pile",
            )[0]
            call = driver.find_element("id", "call")
            if due:
                assert count.text == "empty: call Nerts!", count.text
                assert "due" in call.get_attribute("class")
                colour = driver.execute_script(
                    "return getComputedStyle(arguments[0]).backgroundColor", call
                )
                assert colour == "rgb(255, 213, 74)", colour  # the focus yellow: plain to see
            else:
                assert count.text == "Nerts 1", count.text
                assert "due" not in (call.get_attribute("class") or "")


def test_web_the_newest_announcement_stays_in_sight_under_long_ones(page: ServedPage) -> None:
    # Long lines (a tie, a stale pass) pushed the newest below the list's fold, unseen.
    long = "p1's 6♦ tied with another card for one place: both stay, and more words to wrap"
    messages = (*(f"{n}: {long}" for n in range(7)), "8♣ lost to p2 — back to waste")
    table = table_from(IDLE, IDLE)
    view = TableView(table=table, seat=0, names=("Ann", "Bob"), rules=Rules(), messages=messages)
    page.publish(json.dumps(view_json(view), ensure_ascii=False))
    with open_browser(1280, 720) as driver:
        driver.get(page.url)
        newest = wait_for(
            driver,
            lambda d: d.find_elements("css selector", "#messages li:last-child"),
            "the announcements",
        )[0]
        box = driver.execute_script(
            "const r = arguments[0].getBoundingClientRect(), l = document.getElementById("
            "'messages').getBoundingClientRect(); return [r.top, r.bottom, l.top, l.bottom];",
            newest,
        )
        assert box[2] <= box[0] and box[1] <= box[3] + 0.5, box
        assert newest.text == messages[-1]


#: A point of the table (a pile, a button: ``arguments[0]``) the open help does not cover,
#: near one of its corners, found and measured in one script; null: none is.
_OFF_HELP = """
const h = document.getElementById('help').getBoundingClientRect();
for (const e of document.querySelectorAll(arguments[0])) {
  const r = e.getBoundingClientRect();
  for (const [x, y] of [[r.left + 3, r.top + 6], [r.right - 3, r.top + 6],
                        [r.left + 3, r.bottom - 3], [r.right - 3, r.bottom - 3]]) {
    const off = x < h.left || x > h.right || y < h.top || y > h.bottom;
    const hit = document.elementFromPoint(x, y);
    if (off && hit && hit.closest(arguments[0])) return [Math.round(x), Math.round(y)];
  }
}
return null;
"""


def _click_at(driver: Any, at: tuple[int, int]) -> None:
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    actions = ActionBuilder(driver, duration=50)
    actions.pointer_action.move_to_location(*at).click()
    actions.perform()


def _drag_from(driver: Any, at: tuple[int, int]) -> None:
    drag_to(driver, at, (640, 360))


def test_web_a_key_pressed_with_the_help_open_is_the_help_s_and_q_closes_it(
    page: ServedPage,
) -> None:
    """Before: ``q`` with the help open asked "leave the game?" of a person closing the help,
    and every other key went to a table the help covered (``s`` turned the stock unseen)."""
    from selenium.webdriver.common.action_chains import ActionChains

    seat = _paused_pair(page)
    with open_browser(1280, 720) as driver:
        _open(driver, seat)
        ActionChains(driver).send_keys("?").perform()
        wait_for(driver, lambda d: _help(d).is_displayed(), "? opens the help")
        # Game keys, a picked card's, a command's: none leaves the page while the help is open.
        ActionChains(driver).send_keys("snwx1l:p").perform()
        ActionChains(driver).send_keys("q").perform()
        wait_for(driver, lambda d: not _help(d).is_displayed(), "q closes the help")
        # Nor does the pointer (session 35: a click at a card's edge beside the help played
        # the card unseen): a press off the help, a click or a drag's, only closes it.
        for act in (_click_at, _drag_from):
            ActionChains(driver).send_keys("?").perform()
            wait_for(driver, lambda d: _help(d).is_displayed(), "? opens the help")
            at = driver.execute_script(_OFF_HELP, "#mine .pile, #lake, #actions button")
            assert at is not None, "the help covers the whole table"
            act(driver, (at[0], at[1]))
            wait_for(driver, lambda d: not _help(d).is_displayed(), "a press off it closes it")
        # The table's keys are the table's again: the first the peer hears is this one.
        ActionChains(driver).send_keys("4").perform()
        action = page.actions.get(timeout=60)
        assert action == KeyPress("4"), action


def test_web_the_header_says_whose_turn_it_is_and_that_the_person_left(
    page: ServedPage,
) -> None:
    """Before, turn-based play: the terminal's header said whose turn it was, the page's did
    not (a person waited, unawares, on their own turn: "round 1 of 1 · playing", the bot
    waiting for them). And once the person left: "round 1 of 1 · playing · the game has
    ended", the others still playing."""
    table = table_from(IDLE, IDLE, rules=Rules(turn_based=True, rounds=1, target=None))
    view = TableView(table=table, seat=0, names=("Ann", "Bob"), rules=table.rules, phase="play")
    page.publish(json.dumps(view_json(view), ensure_ascii=False))
    with open_browser(1280, 720) as driver:
        driver.get(page.url)
        header = driver.find_element("id", "round")
        wait_for(driver, lambda d: "round 1 of 1" in header.text, "the header")
        assert [b for b in texts(driver, "#actions button") if b] == [
            "stuck", "Nerts!", "how to play"
        ]  # fmt: skip
        assert header.text == "round 1 of 1 · playing · your turn", header.text
        for shown, ends in (
            (dataclasses.replace(view, seat=1), "playing · turn: Ann (seat 0)"),
            (
                dataclasses.replace(
                    view, table=table_from(IDLE, IDLE), rules=Rules(rounds=1, target=None),
                    final=True, links=(Link.LEFT, Link.OK),
                ),
                "round 1 of 1 · playing · you left the game",
            ),
            # The game over: said once (it read "game over · the game has ended").
            (
                dataclasses.replace(
                    view, table=table_from(IDLE, IDLE), rules=Rules(rounds=1, target=None),
                    phase="over", final=True,
                ),
                "round 1 of 1 · game over",
            ),
        ):  # fmt: skip
            page.publish(json.dumps(view_json(shown), ensure_ascii=False))
            wait_for(driver, lambda d, ends=ends: header.text.endswith(ends), ends)
            # Nothing is left to pass or call once the game is done for us: only the help.
            buttons = ["how to play"] if shown.final else ["stuck", "Nerts!", "how to play"]
            assert [b for b in texts(driver, "#actions button") if b] == buttons
