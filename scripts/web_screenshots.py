"""The README's pictures of the browser table, from a real run (issue 17).

Runs ``nertz play --web --bots 3 --no-open`` (two rounds, so the first round's board has its
countdown), opens the page in headless chromium (Debian's, as the browser tests do), plays a
little (turns the stock until an ace shows and drags it to the lake), and saves:

* ``docs/images/web-table.png``: the table mid-round, 1280×720;
* ``docs/images/web-phone.png``: the same on a phone-sized screen, 390×844;
* ``docs/images/web-contrast.png``: the high-contrast mode, 1280×720;
* ``docs/images/web-board.png``: the end of the first round (a bot calls Nerts), 1280×720.

Usage: ``.venv/bin/python scripts/web_screenshots.py [--seed N] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.test_web_table import card_in, drag, turn_until_ace  # noqa: E402
from tests.web_helpers import WebGame, open_browser, wait_for  # noqa: E402


def _deal(driver: Any) -> None:
    wait_for(driver, lambda d: d.find_elements("css selector", "#mine .nerts .card"), "the deal")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    game_args = ("--bots", "3", "--speed", "5", "--seed", str(args.seed), "--rounds", "2")
    with tempfile.TemporaryDirectory() as tmp:
        game = WebGame(Path(tmp), *game_args, "--draw", "1")
        try:
            with open_browser(1280, 720) as driver:
                driver.get(game.url)
                _deal(driver)
                pile, ace = turn_until_ace(driver)
                drag(driver, card_in(driver, pile, str(ace)), driver.find_element("id", "lake"))
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
                driver.find_element("id", "contrast").click()
                driver.save_screenshot(str(args.out / "web-contrast.png"))
                driver.find_element("id", "contrast").click()
                wait_for(
                    driver,
                    lambda d: d.find_element("id", "board").is_displayed(),
                    "the end of the round",
                    timeout=600,
                )
                driver.save_screenshot(str(args.out / "web-board.png"))
        finally:
            game.stop()
    for name in ("web-table", "web-phone", "web-contrast", "web-board"):
        print(args.out / f"{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
