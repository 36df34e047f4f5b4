"""The browser table in a real browser (issue 17): ``nertz play --web --bots 2 --no-open``, its
page opened in a headless chromium, cards dragged with the mouse (Selenium's pointer actions).

The page decides nothing: these tests read what it draws, and the reasons it shows come from the
peer. The deal is fixed by ``--seed`` (the same seed, the same deal) and the stock turns one card
at a time (``--draw 1``), so every card of the stock reaches the waste's top in one pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from p2p_nertz.rules import Card, FoundationId, fits_on
from tests.web_helpers import (
    WebGame,
    browser_missing,
    click,
    double_click,
    drag_to,
    open_browser,
    point,
    wait_for,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
]

GAME = ("--bots", "2", "--seed", "11", "--rounds", "1", "--draw", "1", "--speed", "1")


@pytest.fixture
def browser() -> Iterator[Any]:
    with open_browser() as driver:
        yield driver


@pytest.fixture
def game(tmp_path: Path, browser: Any) -> Iterator[WebGame]:
    # (After the browser: its start-up, 8 s at a load of 25, is not taken from the round, which
    # the bots play whether a page is open or not.)
    started = WebGame(tmp_path, *GAME)
    try:
        yield started
    finally:
        status, out, err = started.stop()  # SIGTERM: the player leaves, cleanly
        assert "Traceback" not in err, err
        assert status == 128 + 15, (out, err)
        assert "left the game on signal 15" in err, err


@pytest.fixture
def page(browser: Any, game: WebGame) -> Any:
    browser.get(game.url)
    wait_for(browser, lambda d: d.find_elements("css selector", "#mine .nerts .card"), "a deal")
    return browser


def tops(driver: Any) -> dict[str, Card]:
    """The top card of each of the player's piles the page draws (by pile key)."""
    codes = driver.execute_script(
        "const out = {};"
        "for (const p of document.querySelectorAll('#mine .pile')) {"
        "  const cards = p.querySelectorAll('.card[data-code]');"
        "  if (cards.length) out[p.dataset.pile] = cards[cards.length - 1].dataset.code;"
        "} return out;"
    )
    return {pile: Card.parse(code) for pile, code in codes.items()}


def card_in(pile: str, code: str) -> str:
    """The selector of our card ``code`` in our pile ``pile``."""
    return f'#mine .pile[data-pile="{pile}"] [data-code="{code}"]'


def pile_of(key: str) -> str:
    """The selector of our pile ``key``."""
    return f'#mine .pile[data-pile="{key}"]'


def drag(driver: Any, card: str, target: str, *, by_edge: bool = False) -> None:
    """Drag the ``card`` a selector names (held in its middle, or ``by_edge``: by its top
    edge, the part of a card under others that shows) and let it go over ``target``'s."""
    drag_to(driver, point(driver, card, edge=by_edge), point(driver, target))


def stats(driver: Any) -> dict[str, Any]:
    data: dict[str, Any] = driver.execute_script(
        "const s = window.nertzStats; return {fps: s.fps(), longest: s.longest, drops: s.drops,"
        " handled: s.handled, views: s.views, render: s.renderMs};"
    )
    return data


def waste(driver: Any) -> str:
    """The waste as the page draws it: its count, and its top card."""
    text: str = driver.execute_script(
        "const w = document.querySelector('#mine .waste');"
        "return w.querySelector('.count').textContent + ' ' +"
        " (w.querySelector('.card')?.dataset.code ?? '-');"
    )
    return text


def turn_until_ace(driver: Any) -> tuple[str, Card]:
    """Turn the stock (clicking it) until an ace is on top of a pile of ours."""
    for _ in range(60):
        aces = [(pile, card) for pile, card in tops(driver).items() if card.rank == 1]
        if aces:
            return aces[0]
        before = waste(driver)
        click(driver, pile_of("s"))
        wait_for(driver, lambda d, was=before: waste(d) != was, "the stock turned")
    raise AssertionError("no ace reached a top in 60 turns")


def our_foundation(driver: Any, ace: Card) -> str:
    """The selector of the top card of the foundation our ``ace`` starts in the lake. The page
    draws each foundation's top card only, and a bot may play its two on our ace before the
    test looks (under load it did, in CI): so the foundation is looked for, not the card."""
    seat = driver.execute_script("return document.querySelector('#mine .player').dataset.seat")
    assert ace.suit is not None
    return f'#foundations .card[data-foundation="{FoundationId(owner=int(seat), suit=ace.suit)}"]'


def test_web_page_draws_the_table_and_a_dragged_ace_lands_in_the_lake(page: Any) -> None:
    driver = page
    driver.execute_script("window.nertzStats.measure()")  # (the frames it prints, from here)
    # The table as the peer dealt it: three players, ours full size, the others smaller.
    assert len(driver.find_elements("css selector", "#others .player")) == 2
    nerts = driver.find_element("css selector", "#mine .nerts").get_attribute("data-count")
    assert nerts == "13"
    works = driver.find_elements("css selector", "#mine .pile.work")
    assert [len(w.find_elements("css selector", ".card")) for w in works] == [1] * len(works)
    # (The others' cards show once their deal is public, their `ready`: maybe a moment later.)
    # Both widths read in the page at once: the others' piles are drawn again as the bots
    # play, so an element found a moment before may be gone (selenium: a stale element).
    other, mine = wait_for(
        driver,
        lambda d: d.execute_script(
            "const o = document.querySelector('#others .player .card');"
            "const m = document.querySelector('#mine .nerts .card');"
            "return o && m ? [o.getBoundingClientRect().width,"
            " m.getBoundingClientRect().width] : null;"
        ),
        "the others' cards drawn",
    )
    assert other < mine

    pile, ace = turn_until_ace(driver)
    drag(driver, card_in(pile, str(ace)), "#lake")
    lake_top = our_foundation(driver, ace)
    wait_for(driver, lambda d: d.find_elements("css selector", lake_top), f"{ace} in the lake")
    # Its claim becomes final (the others hold it): the foundation's top no longer marked in
    # the air (a card on top of the ace is claimed later, so once it is final the ace is too).
    wait_for(
        driver,
        lambda d: "air" not in d.find_element("css selector", lake_top).get_attribute("class"),
        f"{ace}'s claim final",
    )
    assert str(ace) not in [str(c) for c in tops(driver).values()]
    figures = stats(driver)
    print(
        f"\nbrowser table: drop to the peer's answer drawn {max(figures['drops']):.1f} ms, "
        f"handled by the peer {max(figures['handled']):.2f} ms; {figures['fps']:.0f} fps, "
        f"longest frame {figures['longest']:.0f} ms, slowest draw {figures['render']:.1f} ms, "
        f"{figures['views']} views"
    )
    assert figures["drops"], "the drop was answered"


def test_web_an_illegal_drop_snaps_back_with_the_reason(page: Any) -> None:
    driver = page
    mine = tops(driver)
    # A card onto a work pile where it does not fit (the peer says why; the page draws it back).
    pair = next(
        (source, target)
        for source, card in mine.items()
        for target, top in mine.items()
        if target.isdigit() and target != source and not fits_on(card, top)
    )
    source, target = pair
    card = mine[source]
    drag(driver, card_in(source, str(card)), pile_of(target))
    reason = wait_for(
        driver,
        lambda d: (t := d.find_element("css selector", "#status").text).startswith("illegal") and t,
        "the reason",
    )
    assert "does not go on" in reason, reason
    # Back where it was, and nothing left floating.
    wait_for(
        driver, lambda d: not d.find_elements("css selector", ".dragging, .ghost"), "snap back"
    )
    assert tops(driver)[source] == card
    assert driver.find_element("css selector", card_in(source, str(card))).is_displayed()


def fitting_pair(driver: Any) -> tuple[str, str, Card] | None:
    """A card of ours (a pile top) that fits on one of our work piles: (source, target, card)."""
    mine = tops(driver)
    return next(
        (
            (source, target, card)
            for source, card in mine.items()
            for target, top in mine.items()
            if target.isdigit() and target != source and fits_on(card, top)
        ),
        None,
    )


def test_web_keys_click_then_click_and_a_double_click_move_cards(page: Any) -> None:
    from selenium.webdriver.common.keys import Keys

    driver = page
    body = driver.find_element("css selector", "body")
    # The terminal's keys: s turns the stock.
    before = waste(driver)
    body.send_keys("s")
    wait_for(driver, lambda d: waste(d) != before, "s turned the stock")
    # Click-then-click: a card, then the work pile it fits on (the stock turned until one does).
    for _ in range(60):
        pair = fitting_pair(driver)
        if pair is not None:
            break
        before = waste(driver)
        body.send_keys(" ")  # (space turns the stock too)
        wait_for(driver, lambda d, was=before: waste(d) != was, "the stock turned")
    assert pair is not None, "no card of ours fitted a work pile in 60 turns"
    source, target, card = pair
    click(driver, card_in(source, str(card)))
    wait_for(driver, lambda d: "picked" in d.find_element("css selector", "#status").text, "picked")
    click(driver, pile_of(target))
    wait_for(driver, lambda d: tops(d).get(target) == card, f"{card} on work pile {target}")
    # Esc cancels a pick; then a double-click sends an ace to the lake.
    body.send_keys(Keys.ESCAPE)
    pile, ace = turn_until_ace(driver)
    double_click(driver, point(driver, card_in(pile, str(ace))))
    wait_for(
        driver,
        lambda d: d.find_elements("css selector", our_foundation(d, ace)),
        f"{ace} in the lake",
    )


def views_past(driver: Any, was: int) -> tuple[int, bool] | None:
    """The views the page has drawn since the test reset its counters, and whether the round
    is over (its board shown), once there are more than ``was`` or the round is over."""
    count: int = driver.execute_script("return window.nertzStats.views - window.nertzStats.views0")
    over: bool = driver.find_element("css selector", "#board").is_displayed()
    return (count, over) if count > was or over else None


# The page's counters reset once it draws a round in play (its deal drawn, no board up), in
# one script: a view that comes after is counted. A round's board up (not the game's end) is
# closed once, as a person does with its next-round button: the next round waits for each
# person's ready (or the board's countdown).
RESET_IN_PLAY = (
    "const board = document.querySelector('#board');"
    "if (!board.hidden) {"
    "  const go = board.querySelector('.next button');"
    "  if (go && !board.querySelector('.result') && !window.pressedNext) {"
    "    window.pressedNext = true; go.click();"
    "  } return false;"
    "}"
    "if (!document.querySelector('#mine .nerts .card')) return false;"
    "const s = window.nertzStats; s.measure(); s.renderMs = 0; s.views0 = s.views;"
    "return true;"
)


def test_web_eight_players_at_full_speed_frame_rate(tmp_path: Path) -> None:
    # Measured and printed, not asserted (the machine is shared): the page's frames a second
    # and its slowest draw while seven bots play at speed 10. The bots play whether the page
    # is open or not, and end a round in 10-15 s: at a load of 25 a chromium opened after the
    # game took 8 s to start and its page's first view was the game's end (so the browser is
    # opened first). Two rounds: a page that comes after the first round's end, or as it
    # ends, is there for the second's deal (which waits for the person's ready: the page's
    # next-round button, here). Only a page that draws no view of a whole round fails.
    with open_browser() as driver:
        started = WebGame(tmp_path, "--bots", "7", "--speed", "10", "--seed", "3", "--rounds", "2")
        try:
            driver.get(started.url)
            for _ in range(2):
                wait_for(driver, lambda d: d.execute_script(RESET_IN_PLAY), "a round in play")
                assert len(driver.find_elements("css selector", "#others .player")) == 7
                # Forty views of the others' moves (each drawn as it comes), or as many as the
                # round gives: on a loaded machine eight processes and a browser share two
                # cores, and a page that waits sees only the latest view (web/server.py).
                # Waited for as long as views keep coming: only a stall (no new view in a
                # minute, the round not over) fails.
                seen, over = 0, False
                while seen < 40 and not over:
                    seen, over = wait_for(
                        driver,
                        lambda d, was=seen: views_past(d, was),
                        f"a view past {seen} of 40 (the others' moves stopped coming)",
                        timeout=60,
                    )
                if seen > 0 or driver.find_elements("css selector", "#board .result"):
                    break  # (else the round ended as the page caught up: the next, from its deal)
            assert seen > 0, "the page drew none of the others' moves in a round it was open for"
            figures = stats(driver)
            print(
                f"\nbrowser table, 8 players, bots at speed 10, {seen} views: "
                f"{figures['fps']:.0f} fps, longest frame {figures['longest']:.0f} ms, "
                f"slowest draw {figures['render']:.1f} ms"
            )
        finally:
            started.stop()


def test_web_a_finger_drags_an_ace_to_the_lake_on_a_phone_sized_page(tmp_path: Path) -> None:
    with open_browser(390, 844) as driver:  # (first: see the game fixture)
        started = WebGame(tmp_path, *GAME)
        try:
            driver.get(started.url)
            wait_for(
                driver, lambda d: d.find_elements("css selector", "#mine .nerts .card"), "deal"
            )
            # Everything of ours fits the width: no pile is cut off or scrolled away.
            width = driver.execute_script("return document.documentElement.clientWidth")
            right = driver.execute_script(
                "return Math.max(...[...document.querySelectorAll('#mine .pile')]"
                ".map(p => p.getBoundingClientRect().right))"
            )
            assert right <= width, (right, width)
            pile, ace = turn_until_ace(driver)
            drag_to(
                driver, point(driver, card_in(pile, str(ace))), point(driver, "#lake"), finger=True
            )
            wait_for(
                driver,
                lambda d: d.find_elements("css selector", our_foundation(d, ace)),
                f"{ace} in the lake",
            )
        finally:
            started.stop()


def work_piles(driver: Any) -> dict[str, list[str]]:
    """Each of our work piles as the page draws it, bottom card first (by pile key)."""
    piles: dict[str, list[str]] = driver.execute_script(
        "const out = {};"
        "for (const p of document.querySelectorAll('#mine .pile.work'))"
        "  out[p.dataset.pile] = [...p.querySelectorAll('.card[data-code]')]"
        "    .map((c) => c.dataset.code);"
        "return out;"
    )
    return piles


def split_run(driver: Any) -> tuple[str, str, int] | None:
    """A work pile of two cards or more, part of which (from its ``i``-th card up) fits on
    another work pile's top: (that pile, the other, i)."""
    piles = work_piles(driver)
    return next(
        (
            (source, target, i)
            for source, run in piles.items()
            for target, other in piles.items()
            if len(run) >= 2 and other and target != source
            for i in range(len(run))
            if fits_on(Card.parse(run[i]), Card.parse(other[-1]))
        ),
        None,
    )


def test_web_a_card_dragged_from_the_middle_of_a_work_pile_moves_with_what_is_above_it(
    page: Any,
) -> None:
    driver = page
    # Build on the work piles (cards from the Nerts pile and the waste dragged onto them, the
    # stock turned) until one holds a run whose top card alone would go on another pile.
    for _ in range(150):
        found = split_run(driver)
        if found is not None:
            break
        mine = tops(driver)
        pair = next(
            (
                (source, target, card)
                for source, card in mine.items()
                for target, top in mine.items()
                if source in ("n", "w") and target.isdigit() and fits_on(card, top)
            ),
            None,
        )
        if pair is not None:
            source, target, card = pair
            drag(driver, card_in(source, str(card)), pile_of(target))
            wait_for(driver, lambda d, t=target, c=card: work_piles(d)[t][-1] == str(c), "built")
            continue
        before = waste(driver)
        click(driver, pile_of("s"))
        wait_for(driver, lambda d, was=before: waste(d) != was, "the stock turned")
    else:
        raise AssertionError(f"no run to split in 150 steps: {work_piles(driver)}")
    source, target, i = found
    run, onto = work_piles(driver)[source], work_piles(driver)[target]
    # A card of that pile other than the one that fits (the one below it, or above it when
    # it is the bottom card) grabbed, and let go on that pile: the run grabbed does not go
    # there, so nothing moves (the terminal's two keys would have moved the part that fits,
    # from another card than the one picked up).
    grabbed = i - 1 if i > 0 else i + 1
    drag(driver, card_in(source, run[grabbed]), pile_of(target), by_edge=True)
    reason = wait_for(
        driver,
        lambda d: (t := d.find_element("css selector", "#status").text).startswith("illegal") and t,
        "the reason",
    )
    wait_for(
        driver, lambda d: not d.find_elements("css selector", ".dragging, .ghost"), "snap back"
    )
    assert work_piles(driver)[source] == run and work_piles(driver)[target] == onto, reason
    # The card that fits grabbed: it goes, with the cards above it, and nothing under it.
    drag(driver, card_in(source, run[i]), pile_of(target), by_edge=True)
    wait_for(driver, lambda d: work_piles(d)[target] == [*onto, *run[i:]], "the run moved")
    assert work_piles(driver)[source] == run[:i]
