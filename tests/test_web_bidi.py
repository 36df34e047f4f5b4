"""Right-to-left names in the page (session 31): each is drawn isolated, so the text around it
stays where it was, in a real chromium.

A Hebrew or Arabic name is a good name (docs/protocol.md §3.2); a bidirectional control is not
(the name rule refuses it at every door: tests/test_names.py), yet the page isolates a name
holding one all the same, here sent to it as a hostile peer's view would be. What is checked is
what a person sees: where the browser lays out each character (its box on the screen), the
text after every name left to right in its own order, to the right of the name.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers_rules import IDLE, table_from

from p2p_nertz.rules import Rules
from p2p_nertz.ui import TableView
from p2p_nertz.ui.lobby import AtTable, Listing, LobbyKeys, LobbyView, SeatLine
from p2p_nertz.web.model import view_json
from p2p_nertz.web.terminal import lobby_json
from tests.web_helpers import ServedPage, browser_missing, open_browser, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
]

HEBREW = "\u05e9\u05e8\u05d4"  # Sarah
ARABIC = "\u0633\u0627\u0631\u0629 2"  # Sara, then a digit: the digit is the name's
OVERRIDE = "\u202eEve"  # a right-to-left override that is never closed

#: Each character of an element's text with its box's left and right edges on the screen.
_BOXES = """
const out = [], walker = document.createTreeWalker(arguments[0], NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  for (let i = 0; i < node.data.length; i++) {
    const range = document.createRange();
    range.setStart(node, i);
    range.setEnd(node, i + 1);
    const r = range.getBoundingClientRect();
    out.push([node.data[i], r.left, r.right, r.top]);
  }
}
return out;
"""


def _after_the_name_in_order(driver: Any, element: Any, name: str, after: str) -> None:
    """``element``'s text holds ``name`` then ``after``; ``after`` is drawn left to right in
    its own order, on the name's line, every character right of every one of the name's."""
    boxes = driver.execute_script(_BOXES, element)
    text = "".join(b[0] for b in boxes)
    start = text.index(name + after)
    mine = [b for b in boxes[start : start + len(name)] if b[2] > b[1]]
    rest = [b for b in boxes[start + len(name) : start + len(name) + len(after)] if b[2] > b[1]]
    assert mine and rest, (text, boxes)
    lefts = [b[1] for b in rest]
    assert lefts == sorted(lefts), (text, rest)  # (in their order, left to right)
    assert min(lefts) >= max(b[2] for b in mine) - 0.5, (text, mine, rest)
    assert {b[3] for b in mine + rest} == {mine[0][3]}  # (one line: the check is not a wrap's)


def test_web_a_right_to_left_or_overriding_name_leaves_the_text_around_it_in_place(
    page: ServedPage,
) -> None:
    names = ("Ann", HEBREW, OVERRIDE, ARABIC)
    messages = (
        f"{HEBREW} played 5\u2665 to the lake, {OVERRIDE} 2\u2663 · 3 left",
        f"8\u2663 lost to {ARABIC}: back to waste",
    )
    table = table_from(IDLE, IDLE, IDLE, IDLE)
    view = TableView(
        table=table,
        seat=0,
        names=names,
        rules=Rules(),
        messages=messages,
        status=f"{OVERRIDE}: 7 cards left",
    )
    page.publish(json.dumps(view_json(view), ensure_ascii=False))
    with open_browser(1280, 720) as driver:
        driver.get(page.url)
        heads = wait_for(
            driver, lambda d: d.find_elements("css selector", "#others .player h3"), "the others"
        )
        for seat, head in enumerate(heads, start=1):
            # (A person's text, as it was: nothing added, nothing lost.)
            assert head.get_attribute("textContent") == f"{names[seat]} (seat {seat}) · 0 pts"
            _after_the_name_in_order(driver, head, names[seat], f" (seat {seat}) · 0 pts")
        lines = driver.find_elements("css selector", "#messages li")
        assert [li.get_attribute("textContent") for li in lines] == list(messages)
        _after_the_name_in_order(driver, lines[0], HEBREW, " played 5\u2665 to the lake, ")
        _after_the_name_in_order(driver, lines[0], OVERRIDE, " 2\u2663 · 3 left")
        _after_the_name_in_order(driver, lines[1], ARABIC, ": back to waste")
        status = driver.find_element("id", "status")
        assert status.get_attribute("textContent") == f"{OVERRIDE}: 7 cards left"
        _after_the_name_in_order(driver, status, OVERRIDE, ": 7 cards left")


def test_web_the_lobby_s_roster_keeps_the_text_after_a_right_to_left_name_in_place(
    page: ServedPage,
) -> None:
    # (On main the title read "host: 2 · שרה/4 seated": the count took the name's direction.)
    table = AtTable(
        "10.0.0.99:7000",
        (
            SeatLine(HEBREW, "aaaa", True, host=True),
            SeatLine(OVERRIDE, "bbbb", False, you=True),
        ),
        Rules(),
        4,
        blocker=f"waiting for {OVERRIDE} to be ready",
    )
    listing = Listing("10.0.0.99:7000", HEBREW, "aaaa", 2, 4)
    lobby = LobbyView(OVERRIDE, "bbbb", (listing,), table, LobbyKeys(), ("greedy",))
    page.publish(json.dumps(lobby_json(lobby), ensure_ascii=False))
    with open_browser(1280, 720) as driver:
        driver.get(page.url)
        title = wait_for(
            driver, lambda d: d.find_element("id", "lobby-title").text and d, "the lobby"
        ).find_element("id", "lobby-title")
        after = " · 2/4 seated"
        assert title.get_attribute("textContent").endswith(f"host: {HEBREW}{after}")
        _after_the_name_in_order(driver, title, HEBREW, after)
        you = driver.find_element("css selector", '#lobby-seats tr[data-seat="1"] td:nth-child(2)')
        assert you.get_attribute("textContent") == f"{OVERRIDE} (you)"
        _after_the_name_in_order(driver, you, OVERRIDE, " (you)")
        listed = driver.find_element("css selector", "#lobby-tables tbody td:nth-child(2)")
        assert listed.get_attribute("textContent") == f"{HEBREW}'s table"
        _after_the_name_in_order(driver, listed, HEBREW, "'s table")
        me = driver.find_element("id", "lobby-me")
        _after_the_name_in_order(driver, me, OVERRIDE, " (bbbb)")
