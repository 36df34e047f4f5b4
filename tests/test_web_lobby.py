"""The lobby page (``nertz play --web`` with neither ``--bots`` nor ``--spec``): the lobby's view
drawn as a page (the tables, your table's seats with fingerprints and ready marks, the rules, a
form for bots), driven with the mouse; when the game starts the same page becomes the table. Two
real players, each a ``nertz play --web`` process with its own page in headless chromium: alice
creates a table and adds a bot, bob joins it by address, says ready, and alice starts the game.
And the page on a phone-sized screen."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from p2p_nertz.testing.said import first_line
from tests.cli_helpers import cli_popen, make_key
from tests.web_helpers import ROOT, browser_missing, click, open_browser, texts, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
]


class Lobby:
    """``nertz play --web --no-open --key K --name NAME`` (a lobby) as a process."""

    def __init__(self, tmp_path: Path, name: str, *more: str) -> None:
        key = tmp_path / f"{name}.key"
        self.fingerprint = make_key(key).fingerprint
        self.proc = cli_popen(
            [
                *(sys.executable, "-m", "cli", "play", "--web", "--no-open", "--key", str(key)),
                *("--name", name, "--log-dir", str(tmp_path / f"{name}-logs"), *more),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self.proc.stdout is not None
        self.url = first_line(self.proc, f"{name}'s page")
        assert self.url.startswith("http://127.0.0.1:"), self.url

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
        _, err = self.proc.communicate(timeout=60)
        return err


@pytest.fixture
def lobbies(tmp_path: Path) -> Iterator[list[Lobby]]:
    started: list[Lobby] = []
    try:
        yield started
    finally:
        for lobby in started:
            err = lobby.stop()
            assert "Traceback" not in err, err


def text(driver: Any, css: str) -> str:
    return " ".join(texts(driver, css))


def seat_row(driver: Any, name: str) -> str:
    """The row of ``name``'s seat at the table this page is at ("" if not seated)."""
    rows = texts(driver, "#lobby-seats tbody tr")
    return next((row for row in rows if name in row.split()), "")


def test_web_lobby_create_add_a_bot_join_ready_and_start(
    tmp_path: Path, lobbies: list[Lobby]
) -> None:
    alice = Lobby(tmp_path, "alice")
    lobbies.append(alice)
    with open_browser() as a, open_browser() as b:
        a.get(alice.url)
        wait_for(a, lambda d: alice.fingerprint in text(d, "#lobby-me"), "alice's lobby")
        click(a, "#lobby-create")
        wait_for(a, lambda d: "you host it" in text(d, "#lobby-title"), "a table")
        address = a.find_element("id", "lobby-table").get_attribute("data-where")
        assert address and re.fullmatch(r"[\d.]+:\d+", address), address
        # The rules the game will have, in words; alice's own seat, hers, the host's, ready.
        wait_for(a, lambda d: "work piles" in text(d, "#lobby-rules"), "the rules")
        assert "draw 3" in text(a, "#lobby-rules")
        mine = seat_row(a, "alice")
        assert alice.fingerprint in mine and "host" in mine and "✓ ready" in mine, mine
        from selenium.webdriver.support.select import Select

        # A bot from the form: a strategy and a speed chosen with the pointer.
        Select(a.find_element("id", "bot-strategy")).select_by_visible_text("greedy")
        click(a, "#lobby-bot button[type=submit]")
        wait_for(
            a,
            lambda d: len(d.find_elements("css selector", "#lobby-seats tbody tr")) == 2,
            "the bot seated",
        )

        bob = Lobby(tmp_path, "bob", "--peer", address)
        lobbies.append(bob)
        b.get(bob.url)
        listed = f'#lobby-tables tr[data-where="{address}"]'
        # Alice's table, given by address: listed, not asked yet (a --peer table is asked when
        # joined); once joined, her name and fingerprint, as her own page shows them.
        wait_for(b, lambda d: d.find_elements("css selector", listed), "alice's table listed")
        assert "--peer" in text(b, listed)
        click(b, f"{listed} button.join")
        wait_for(b, lambda d: seat_row(d, "bob"), "bob at the table")
        wait_for(b, lambda d: alice.fingerprint in text(d, listed), "alice's fingerprint listed")
        assert "alice's table" in text(b, listed)
        assert alice.fingerprint in seat_row(b, "alice")
        assert "not ready" in seat_row(b, "bob") and bob.fingerprint in seat_row(b, "bob")
        wait_for(a, lambda d: "not ready" in seat_row(d, "bob"), "bob not ready, at alice's")
        assert not a.find_element("id", "lobby-start").is_enabled(), "start, bob not ready"
        click(b, "#lobby-ready")
        wait_for(a, lambda d: "✓ ready" in seat_row(d, "bob"), "bob ready, at alice's")
        wait_for(a, lambda d: "everybody is ready" in text(d, "#lobby-blocker"), "all ready")
        wait_for(a, lambda d: d.find_element("id", "lobby-start").is_enabled(), "start allowed")
        click(a, "#lobby-start")
        # Both pages become the table, three players dealt.
        for driver in (a, b):
            wait_for(
                driver, lambda d: d.find_elements("css selector", "#mine .nerts .card"), "a deal"
            )
            assert len(driver.find_elements("css selector", "#others .player")) == 2
            assert not driver.find_element("id", "lobby").is_displayed()


def test_web_lobby_fits_a_phone_sized_screen(tmp_path: Path, lobbies: list[Lobby]) -> None:
    alice = Lobby(tmp_path, "alice", "--peer", "127.0.0.1:9")
    lobbies.append(alice)
    with open_browser(390, 844) as a:
        a.get(alice.url)
        wait_for(a, lambda d: d.find_elements("css selector", "#lobby-tables tbody tr"), "a table")
        click(a, "#lobby-create")
        wait_for(a, lambda d: seat_row(d, "alice"), "alice's seat")
        # Nothing wider than the screen: the page does not scroll sideways, and the buttons
        # and the fingerprints are on it.
        assert a.execute_script("return document.documentElement.scrollWidth") <= 390
        for css in ("#lobby-start", "#lobby-leave", "#lobby-bot button[type=submit]"):
            box = a.find_element("css selector", css).rect
            assert box["x"] >= 0 and box["x"] + box["width"] <= 390, (css, box)
        assert alice.fingerprint in seat_row(a, "alice")
