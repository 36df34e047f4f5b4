"""The browser table on a phone: held upright (390×844, 412×915) and sideways (844×390).

A person must see their own piles, the lake and the buttons without scrolling, sideways or
down (the page sideways put them below its screen, and a finger could not scroll it there),
and the end-of-round board must not scroll sideways (its game total was cut off at 390). The
table is a crowded one drawn on cue (four players, long runs, a full lake) by the real page
server; the board is a real one, from a network of real peer cores; the fingers are real touch
events (chromium's, through the DevTools protocol) on ``nertz play --web --bots 2``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers_rules import table_from

from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Card, Rules
from p2p_nertz.ui import TableView
from p2p_nertz.ui.view import pace_words
from p2p_nertz.web.model import view_json
from tests.peer_helpers import PeerNetwork
from tests.test_web_race import Seat
from tests.test_web_table import GAME, card_in, our_foundation, pile_of, tops, waste
from tests.web_helpers import (
    ServedPage,
    WebGame,
    browser_missing,
    fit,
    open_browser,
    point,
    wait_for,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
]

PHONES = ((390, 844), (412, 915), (844, 390))

# Four players, each with a long run down a work pile, and twelve foundations in the lake.
MINE = "N: KH 4C | 1: KS QH JS 10H 9C 8D 7S | 2: 2D | 3: 5D | 4: 8C | S: 2C 7H 9S | W: 6H AS"
OTHER = "N: KS QD | 1: QC JD 10C 9D 8S | 2: 2H | 3: 4D 3S | 4: 4H | S: 7D 9H | W: 5C"
LAKE = "; ".join(
    f"{seat}{suit}: " + " ".join(f"{rank}{suit}/{seat}" for rank in ("A", "2", "3")[: 1 + seat])
    for seat in range(4)
    for suit in "CDH"
)

_OUT_OF_SIGHT = """
const w = innerWidth, h = innerHeight, out = [];
const parts = [...document.querySelectorAll('#mine .pile, #mine .card, #lake, #status')]
  .concat([...document.querySelectorAll('#actions button')].filter((b) => !b.hidden));
for (const e of parts) {
  const r = e.getBoundingClientRect();
  if (r.left < 0 || r.top < 0 || r.right > w || r.bottom > h)
    out.push([e.id || e.className || e.textContent, Math.round(r.left), Math.round(r.top),
              Math.round(r.right), Math.round(r.bottom)]);
}
const doc = document.documentElement;
return {out, wide: doc.scrollWidth - w, scrolled: [scrollX, scrollY]};
"""


def test_web_a_crowded_table_fits_a_phone_upright_and_sideways(page: ServedPage) -> None:
    table = table_from(MINE, OTHER, OTHER, OTHER, lake=LAKE)
    messages = ("round 1 is dealt — go!", "bot2 was dropped (silent too long): the game goes on")
    names = ("you", "bot1", "bot2", "bot3")
    last = ("", "turned the stock", "card from pile 3 onto pile 4", "Nerts card onto work pile 2")
    view = TableView(
        table=table, seat=0, names=names, rules=table.rules, messages=messages, last=last
    )
    page.publish(json.dumps(view_json(view), ensure_ascii=False))
    with open_browser(*PHONES[0], phone=True) as driver:
        for width, height in PHONES:
            fit(driver, width, height, phone=True)
            driver.get(page.url)
            wait_for(driver, lambda d: len(d.find_elements("css selector", ".player")) == 4, "4")
            assert len(driver.find_elements("css selector", "#foundations .card")) == 12
            assert len(driver.find_elements("css selector", '#mine [data-pile="1"] .card')) == 7
            seen = driver.execute_script(_OUT_OF_SIGHT)
            assert seen == {"out": [], "wide": 0, "scrolled": [0, 0]}, (width, height, seen)
            buttons = [b.text for b in driver.find_elements("css selector", "#actions button")]
            assert buttons[:2] == ["stuck", "Nerts!"], buttons


def test_web_the_round_board_does_not_scroll_sideways_on_a_phone(page: ServedPage) -> None:
    net = PeerNetwork(4, seed=5, rules=Rules(rounds=2, target=None))
    net.run(lambda n: n.peers[0].phase is Phase.PLAY)
    seat = Seat(net, 0, page)
    net.run(lambda n: len(n.peers[0].final.game.history) >= 1, within=600.0)
    seat.draw()
    seat.table.tick(net.now)
    with open_browser(*PHONES[0], phone=True) as driver:
        for width, height in PHONES:
            fit(driver, width, height, phone=True)
            seat.draw()
            driver.get(page.url)
            board = wait_for(
                driver,
                lambda d: (b := d.find_element("css selector", "#board")).is_displayed() and b,
                "the board",
            )
            sizes = driver.execute_script(
                "const b = arguments[0], r = b.getBoundingClientRect();"
                "return [b.scrollWidth, b.clientWidth, r.left, r.right, innerWidth,"
                " document.documentElement.scrollWidth];",
                board,
            )
            scroll, client, left, right, inner, page_width = sizes
            assert scroll <= client and left >= 0 and right <= inner, (width, sizes)
            assert page_width <= inner, (width, sizes)
            # Every column in sight, the game total last, each player's total in its row.
            total = board.find_elements("css selector", "th")[-1]
            assert total.text == "game total" and total.rect["x"] + total.rect["width"] <= right
            shown = seat.table.tracker.board
            assert shown is not None
            for row in board.find_elements("css selector", "tr[data-seat]"):
                s = int(row.get_attribute("data-seat"))
                assert row.text.endswith(f" {shown.totals[s]}"), row.text
            # The person's pace, and the bots to play next, under the scores.
            assert shown.pace is not None
            pace = board.find_element("css selector", ".pace")
            assert pace.text == pace_words(shown.pace, page=True), pace.text


def _touch(driver: Any, x: float, y: float, *, to: tuple[float, float] | None = None) -> None:
    """A finger down at (x, y), moved to ``to`` in steps if given, and up: touch events, as a
    phone's screen sends them."""
    point = {"x": int(x), "y": int(y)}
    driver.execute_cdp_cmd(
        "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [point]}
    )
    if to is not None:
        for step in range(1, 9):
            at = {"x": int(x + (to[0] - x) * step / 8), "y": int(y + (to[1] - y) * step / 8)}
            driver.execute_cdp_cmd(
                "Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [at]}
            )
    driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def test_web_a_finger_taps_and_drags_on_a_phone_held_sideways(tmp_path: Path) -> None:
    started = WebGame(tmp_path, *GAME)
    try:
        with open_browser(844, 390, phone=True) as driver:
            driver.get(started.url)
            wait_for(
                driver, lambda d: d.find_elements("css selector", "#mine .nerts .card"), "deal"
            )
            driver.execute_script(
                "window.kinds = new Set();"
                "addEventListener('pointerdown', (e) => kinds.add(e.pointerType), true);"
            )
            seen = driver.execute_script(_OUT_OF_SIGHT)
            assert seen["out"] == [] and seen["wide"] == 0, seen
            # The first ace goes by a tap on it, then a tap on the lake; the second is dragged.
            for way in ("tap", "drag"):
                pile, ace = _tap_until_ace(driver)
                card = card_in(pile, str(ace))
                if way == "tap":
                    _touch(driver, *point(driver, card))
                    wait_for(
                        driver,
                        lambda d: "· or tap where it goes" in d.find_element("id", "status").text,
                        "the tapped card picked, and the page saying so",
                    )
                    _touch(driver, *point(driver, "#lake"))
                else:
                    _touch(driver, *point(driver, card), to=point(driver, "#lake"))
                wait_for(
                    driver,
                    lambda d, a=ace: d.find_elements("css selector", our_foundation(d, a)),
                    f"{ace} in the lake, by a {way}",
                )
            assert driver.execute_script("return [...kinds]") == ["touch"]
    finally:
        started.stop()


def _tap_until_ace(driver: Any) -> tuple[str, Card]:
    """Tap the stock (it turns) until an ace is on top of a pile of ours."""
    for _ in range(60):
        aces = [(pile, card) for pile, card in tops(driver).items() if card.rank == 1]
        if aces:
            return aces[0]
        before = waste(driver)
        _touch(driver, *point(driver, pile_of("s")))
        wait_for(driver, lambda d, was=before: waste(d) != was, "a tap turned the stock")
    raise AssertionError("no ace on top in 60 taps")
