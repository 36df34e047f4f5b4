"""The README's pictures of the browser table, from a real run (issue 17).

Runs ``nertz play --web --bots 3 --no-open`` (two rounds, so the first round's board has its
countdown), opens the page in headless chromium (Debian's, as the browser tests do), plays a
little (turns the stock until an ace shows and drags it to the lake), and saves:

* ``docs/images/web-lobby.png``: the lobby page (``nertz play --web`` alone): a table created,
  a bot added (and ready), 1280×720;
* ``docs/images/web-table.png``: the table mid-round, 1280×720;
* ``docs/images/web-phone.png``: the same on a phone-sized screen, 390×844;
* ``docs/images/web-phone-sideways.png``: the same on a phone held sideways, 844×390;
* ``docs/images/web-contrast.png``: the high-contrast mode, 1280×720;
* ``docs/images/web-board.png``: the end of the first round (a bot calls Nerts), 1280×720.

Usage: ``.venv/bin/python scripts/web_screenshots.py [--seed N] [--out DIR] [--lobby-only]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # (the helpers import their neighbours by name)

from p2p_nertz.testing.said import first_line  # noqa: E402
from tests.test_web_table import card_in, drag, turn_until_ace  # noqa: E402
from tests.web_helpers import WebGame, open_browser, wait_for  # noqa: E402


def _deal(driver: Any) -> None:
    wait_for(driver, lambda d: d.find_elements("css selector", "#mine .nerts .card"), "the deal")


def lobby(out: Path, tmp: Path) -> None:
    """The lobby page: create a table, add a bot, and the picture."""
    import subprocess

    key = tmp / "key"
    subprocess.run(
        [sys.executable, "-m", "cli", "keygen", "--key", str(key)], check=True, capture_output=True
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cli",
            "play",
            "--web",
            "--no-open",
            "--key",
            str(key),
            "--name",
            "alice",
            "--log-dir",
            str(tmp / "logs"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = first_line(proc, "the lobby's page")
        with open_browser(1280, 720) as driver:
            driver.get(url)
            seats = "#lobby-seats tbody tr"
            wait_for(driver, lambda d: d.find_element("id", "lobby-me").text, "the lobby")
            driver.find_element("id", "lobby-create").click()
            wait_for(driver, lambda d: d.find_elements("css selector", seats), "a table")
            driver.find_element("css selector", "#lobby-bot button[type=submit]").click()
            wait_for(
                driver,
                lambda d: "everybody is ready" in d.find_element("id", "lobby-blocker").text,
                "a bot seated, ready",
            )
            driver.save_screenshot(str(out / "web-lobby.png"))
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--lobby-only", action="store_true", help="only the lobby's picture")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    # The bots' keys and any file a game keeps go to a directory of this run, not to the
    # person's own key store (cli/keyfile.py: $NERTZ_HOME holds every kind).
    home = tempfile.TemporaryDirectory()
    os.environ["NERTZ_HOME"] = home.name
    game_args = ("--bots", "3", "--speed", "5", "--seed", str(args.seed), "--rounds", "2")
    with tempfile.TemporaryDirectory() as tmp:
        lobby(args.out, Path(tmp))
    if args.lobby_only:
        print(args.out / "web-lobby.png")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        game = WebGame(Path(tmp), *game_args, "--draw", "1")
        try:
            with open_browser(1280, 720) as driver:
                driver.get(game.url)
                _deal(driver)
                pile, ace = turn_until_ace(driver)
                drag(driver, card_in(pile, str(ace)), "#lake")
                wait_for(
                    driver,
                    lambda d: len(d.find_elements("css selector", "#foundations .card")) >= 8,
                    "a lake of eight cards",
                    timeout=300,
                )
                driver.save_screenshot(str(args.out / "web-table.png"))
                with open_browser(390, 844) as phone:
                    phone.get(game.url)
                    _deal(phone)
                    phone.save_screenshot(str(args.out / "web-phone.png"))
                with open_browser(844, 390, phone=True) as sideways:
                    sideways.get(game.url)
                    _deal(sideways)
                    sideways.save_screenshot(str(args.out / "web-phone-sideways.png"))
                driver.find_element("id", "contrast").click()
                driver.save_screenshot(str(args.out / "web-contrast.png"))
                driver.find_element("id", "contrast").click()
                wait_for(
                    driver,
                    lambda d: d.find_element("id", "board").is_displayed(),
                    "the end of the round",
                    timeout=600,
                )
                # (The announcement of the call fades by itself; the picture shows the board.)
                driver.execute_script("document.getElementById('toast').hidden = true")
                driver.save_screenshot(str(args.out / "web-board.png"))
        finally:
            game.stop()
    names = ("web-lobby", "web-table", "web-phone", "web-phone-sideways", "web-contrast")
    for name in (*names, "web-board"):
        print(args.out / f"{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
