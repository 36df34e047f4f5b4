"""Helpers for the browser table's tests: the real ``nertz play --web`` and a real chromium.

The browser is Debian's ``chromium`` driven through ``chromedriver`` (``.ci/run`` installs
both), headless; Selenium is pointed at the driver so that it never tries to download one.
Where either is missing the tests skip, saying so.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from p2p_nertz.testing.said import lines, reap
from tests.cli_helpers import cli_popen

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
# Seconds a page may take to show what a test waits for: a guard against a hang, not a timing
# (a game's first deal takes its processes' start-up, which a load of 40 stretches past 30 s).
WAIT = 60.0
T = TypeVar("T")


def browser_missing() -> str | None:
    """Why the browser tests cannot run here (``None``: they can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for path in (CHROMIUM, CHROMEDRIVER):
        if not path.exists():
            return f"{path} is missing (apt-get install chromium chromium-driver; .ci/run does)"
    return None


@contextlib.contextmanager
def open_browser(
    width: int = 1280, height: int = 720, *, phone: bool | None = None
) -> Iterator[Any]:
    """A headless chromium with its window at ``width``×``height``; ``phone``: as a phone's
    (a mobile viewport, a touch screen; by default when narrower than 600 pixels, so a phone
    held sideways, 844×390, needs ``phone=True``)."""
    phone = width < 600 if phone is None else phone
    reason = browser_missing()
    if reason is not None:
        pytest.skip(reason)
    with tempfile.TemporaryDirectory(prefix="nertz-chromium-") as home:
        yield from _browse(Path(home), width, height, phone)


def _browse(home: Path, width: int, height: int, phone: bool) -> Iterator[Any]:
    """:func:`open_browser` with everything chromium writes inside ``home``: its profile
    (``--user-data-dir``) and its temporary files (``TMPDIR``: its singleton socket's
    ``org.chromium.Chromium.*``, which a killed chromium left in /tmp, one a test)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    (home / "profile").mkdir()
    (home / "tmp").mkdir()
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        f"--window-size={width},{height}",
        f"--user-data-dir={home / 'profile'}",
    ):
        options.add_argument(arg)
    service = Service(
        executable_path=str(CHROMEDRIVER), env={**os.environ, "TMPDIR": str(home / "tmp")}
    )
    driver = webdriver.Chrome(service=service, options=options)
    _emulate(driver, width, height, phone)
    try:
        yield driver
    finally:
        driver.quit()


def fit(driver: Any, width: int, height: int, *, phone: bool | None = None) -> None:
    """Make the browser of :func:`open_browser` one of ``width``×``height`` (``phone``: as
    there). A page loaded after it is drawn as in a browser opened at that size (the page
    keeps nothing from one load to the next): a test of several sizes opens one browser, not
    one a size (a chromium's start is about 0.9 CPU-s and seconds of a loaded machine)."""
    driver.set_window_size(width, height)
    _emulate(driver, width, height, width < 600 if phone is None else phone)


def _emulate(driver: Any, width: int, height: int, phone: bool) -> None:
    """The page itself (not the window around it) at that size, as a screen of it would be;
    a phone's a touch screen."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": phone},
    )
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": phone})


def wait_for(driver: Any, what: Callable[[Any], T | None], why: str, timeout: float = WAIT) -> T:
    """Wait (polling the page, as Selenium's waits do) until ``what`` is truthy; its value."""
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        value: T = WebDriverWait(
            driver,
            timeout,
            poll_frequency=0.05,
            ignored_exceptions=[StaleElementReferenceException],
        ).until(what, why)
    except TimeoutException:
        status = driver.execute_script("return document.querySelector('#status')?.textContent")
        raise AssertionError(f"{why}: not seen in {timeout} s (status: {status!r})") from None
    return value


# A live table redraws a player's tableau at any change of it (a move, a link's state, the
# turn): an element found first and acted on after may be gone by then (selenium's stale
# element: session 34's last rehearsal, a tap on a card the page had just drawn again). So a
# test names what it touches by a selector, found again at the moment it acts.
_POINT = """
const e = document.querySelector(arguments[0]);
if (!e) return null;
const r = e.getBoundingClientRect();
const y = arguments[1] ? r.top + 6 : r.top + r.height / 2;
return [Math.round(r.left + r.width / 2), Math.round(y)];
"""


def point(driver: Any, selector: str, *, edge: bool = False) -> tuple[int, int]:
    """Where the element ``selector`` names is on the page: its middle, or (``edge``) 6 pixels
    under its top edge, the part of a card under others that shows. Found and measured in one
    script, so no redraw comes between the two."""
    at = driver.execute_script(_POINT, selector, edge)
    assert at is not None, f"nothing on the page is {selector!r}"
    return at[0], at[1]


def click(driver: Any, selector: str) -> None:
    """A mouse's click on the element ``selector`` names, at its middle: measured and clicked
    where it is, so the click lands on whatever the page draws there by then (the same card
    drawn anew), as a person's would."""
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    actions = ActionBuilder(driver, duration=50)
    actions.pointer_action.move_to_location(*point(driver, selector)).click()
    actions.perform()


def texts(driver: Any, selector: str) -> list[str]:
    """The text a person sees in each element ``selector`` names (none of a hidden one), read
    in one script."""
    found: list[str] = driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])]"
        "  .map((e) => e.checkVisibility() ? e.innerText : '');",
        selector,
    )
    return found


def drag_to(
    driver: Any, start: tuple[int, int], end: tuple[int, int], *, finger: bool = False
) -> None:
    """A mouse (or a ``finger``) pressed at ``start``, moved a little (past the page's drag
    threshold) and on to ``end``, and let go there."""
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.actions.interaction import POINTER_TOUCH
    from selenium.webdriver.common.actions.pointer_input import PointerInput

    pointer = PointerInput(POINTER_TOUCH, "finger") if finger else None
    actions = ActionBuilder(driver, mouse=pointer, duration=50)
    (x, y), (ex, ey) = start, end
    actions.pointer_action.move_to_location(x, y).pointer_down()
    actions.pointer_action.move_to_location(x + 12, y + 12)
    actions.pointer_action.move_to_location(ex, ey).pointer_up()
    actions.perform()


def double_click(driver: Any, at: tuple[int, int]) -> None:
    """A mouse's double click at ``at``."""
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    actions = ActionBuilder(driver, duration=50)
    actions.pointer_action.move_to_location(*at).double_click()
    actions.perform()


class WebGame:
    """``nertz play --web --no-open`` as a process: its URL, and a clean stop. ``env``: more
    of the environment (with ``opens``: no ``--no-open``, the browser ``BROWSER`` names)."""

    def __init__(
        self, tmp_path: Path, *more: str, env: dict[str, str] | None = None, opens: bool = False
    ) -> None:
        args = [sys.executable, "-m", "cli", "play", "--web", *([] if opens else ["--no-open"])]
        self.dir = tmp_path / "game"
        self.proc = cli_popen(
            [*args, "--dir", str(self.dir), *more],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        self.lines: list[str] = []
        for line in lines(self.proc, "the game"):  # (silent for READY_BOUND s: ended)
            self.lines.append(line)
            if line.startswith("http://"):
                self.url = line.strip()
                return
        err = self.proc.communicate(timeout=30)[1]  # (no URL: it has ended; its pipes closed)
        raise AssertionError(f"no URL line: {self.lines}; stderr: {err}")

    def stop(self) -> tuple[int, str, str]:
        """SIGTERM (the player leaves cleanly), then the exit status and the output."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            out, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            out, err = reap(self.proc, "the web game")
        return self.proc.returncode, "".join(self.lines) + out, err


class ServedPage:
    """The page server (the real one) on a thread of its own, over a table this test drives.

    For scenarios a live game cannot be made to play on cue (a lost race, a round's end): the
    test plays a network of real peer cores (``peer_helpers.PeerNetwork``) and shows one
    peer's :class:`~p2p_nertz.ui.controller.TableController` in the page; what the page sends
    comes back in :attr:`actions`.
    """

    def __init__(self, token: str | None = None, port: int = 0) -> None:
        import queue
        import threading

        import trio

        from p2p_nertz.web.model import PageAction
        from p2p_nertz.web.server import Page, ViewFeed, WebApp, serve_page

        self.actions: queue.Queue[PageAction] = queue.Queue()
        self.feed = ViewFeed()
        self.app = app = WebApp(
            Page() if token is None else Page(token=token), self.feed, self.actions.put
        )
        started: queue.Queue[tuple[str, trio.lowlevel.TrioToken, trio.CancelScope]] = queue.Queue()

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                url = await nursery.start(serve_page, app, "127.0.0.1", port)
                started.put((url, trio.lowlevel.current_trio_token(), nursery.cancel_scope))

        self.thread = threading.Thread(target=trio.run, args=(main,), daemon=True)
        self.thread.start()
        self.url, self.token, self.scope = started.get(timeout=WAIT)

    def publish(self, text: str) -> None:
        """Send a view to the page (from the test's thread)."""
        import trio

        trio.from_thread.run_sync(self.feed.publish, text, trio_token=self.token)

    def close_pages(self, words: str) -> None:
        """The server's last word to its pages (:meth:`WebApp.close_pages`), from the test's
        thread."""
        import trio

        trio.from_thread.run(self.app.close_pages, words, trio_token=self.token)

    def close(self) -> None:
        """Stop serving (again: nothing)."""
        import trio

        if not self.thread.is_alive():
            return
        trio.from_thread.run_sync(self.scope.cancel, trio_token=self.token)
        self.thread.join(timeout=WAIT)
