"""The lobby page (``nertz play --web`` with neither ``--bots`` nor ``--spec``): the lobby's own
screen drawn by the page, its keys as buttons; when the game starts the same page becomes the
table. Two real players, each a ``nertz play --web`` process with its own page in headless
chromium: alice creates a table and adds a bot, bob joins it by address, says ready, and
alice starts the game."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web_helpers import ROOT, browser_missing, open_browser, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
]


class Lobby:
    """``nertz play --web --no-open --key K --name NAME`` (a lobby) as a process."""

    def __init__(self, tmp_path: Path, name: str, *more: str) -> None:
        key = tmp_path / f"{name}.key"
        subprocess.run(
            [sys.executable, "-m", "cli", "keygen", "--key", str(key)],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        self.proc = subprocess.Popen(
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
        self.url = self.proc.stdout.readline().strip()
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


def screen(driver: Any) -> str:
    return str(driver.find_element("id", "screen-text").text)


def press(driver: Any, key: str) -> None:
    driver.find_element("css selector", f'#lobby-keys [data-key="{key}"]').click()


def test_web_lobby_create_add_a_bot_join_ready_and_start(
    tmp_path: Path, lobbies: list[Lobby]
) -> None:
    alice = Lobby(tmp_path, "alice")
    lobbies.append(alice)
    with open_browser() as a, open_browser() as b:
        a.get(alice.url)
        wait_for(a, lambda d: "p2p-nertz lobby" in screen(d), "alice's lobby")
        press(a, "c")  # create a table
        wait_for(a, lambda d: "you host" in screen(d), "a table")
        text = screen(a)
        address = re.search(r"your table at (\S+) ", text)
        assert address, text
        press(a, "b")  # add a bot: the picker, then Enter adds it
        wait_for(a, lambda d: "add a bot:" in screen(d), "the bot picker")
        press(a, "ENTER")
        wait_for(a, lambda d: "sat down" in screen(d), "the bot seated")

        bob = Lobby(tmp_path, "bob", "--peer", address[1])
        lobbies.append(bob)
        b.get(bob.url)
        wait_for(b, lambda d: address[1] in screen(d), "alice's table listed")
        press(b, "ENTER")  # join the selected (the only) table
        wait_for(b, lambda d: "alice" in screen(d) and "bob" in screen(d), "bob at the table")
        press(b, "r")  # ready
        wait_for(a, lambda d: "everybody is ready" in screen(d), "everybody ready")
        press(a, "s")  # start
        # Both pages become the table, three players dealt.
        for driver in (a, b):
            wait_for(
                driver, lambda d: d.find_elements("css selector", "#mine .nerts .card"), "a deal"
            )
            assert len(driver.find_elements("css selector", "#others .player")) == 2
            assert not driver.find_element("id", "screen").is_displayed()
