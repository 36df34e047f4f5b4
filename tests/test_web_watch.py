"""``nertz watch --web``: a spectator follows a live game in the browser table. The real
programs: ``nertz watch --web --spec`` binds a free port admitting the game's members and says
where (``--watcher ENDPOINT#KEY``), ``nertz play --web --watcher ENDPOINT#KEY`` makes the game
and pushes it there, and headless chromium reads the spectator's page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli.keyfile import write_key
from cli.main import build_parser
from cli.play import bots_game
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed
from p2p_nertz.testing.said import first_line
from tests.cli_helpers import cli_popen
from tests.web_helpers import ROOT, WebGame, browser_missing, open_browser, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
]


@pytest.mark.parametrize("deal", ["commit", "shuffle"])
def test_web_watch_follows_a_live_game_as_a_spectator(tmp_path: Path, deal: str) -> None:
    """The same in both deals: in a shuffle game the cards the spectator draws face up are
    the ones the table's shares opened (tests/test_shuffle_views.py checks each step)."""
    spy = Identity.generate(derive_seed(b"test-web-watch-spy"))
    key = tmp_path / "spy.key"
    write_key(key, spy)
    args = ("--bots", "2", "--speed", "10", "--seed", "12", "--rounds", "1", "--deal", deal)
    # The spectator first, on a port it binds itself (a port picked for it beforehand was
    # once taken in between: it printed no URL and exited). The game's spec is the one
    # `nertz play` makes from these arguments (its --seed), which the spectator admits by.
    spec = bots_game(build_parser("play").parse_args(["play", *args]))[1]
    spec_path = tmp_path / "watched.spec"
    spec_path.write_bytes(spec.to_wire())
    command = [sys.executable, "-m", "cli", "watch", "--web", "--no-open", "--spec",
               str(spec_path), "--key", str(key), "--bind", "127.0.0.1:0"]  # fmt: skip
    with cli_popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as watch:
        player = None
        try:
            watcher, url = _started(watch)
            assert watcher.endswith(f"#{spy.peer_id.hex()}"), watcher  # its own key, said
            player = WebGame(tmp_path, *args, "--watcher", watcher)
            assert (player.dir / "game.spec").read_bytes() == spec.to_wire()  # the same game
            _follow(url, player)
            out, err = watch.communicate(timeout=30)
            assert watch.returncode == 0, err
            assert "watched " in out and "Traceback" not in err, (out, err)
        finally:
            if player is not None and player.proc.poll() is None:
                player.stop()
            if watch.poll() is None:
                watch.terminate()
                watch.communicate(timeout=30)


def _started(watch: subprocess.Popen[str]) -> tuple[str, str]:
    """Where members push to ``watch`` (its first line on stderr) and its page's URL (its
    first on stdout); if it says neither, what it said on stderr, once it is stopped."""
    assert watch.stdout is not None and watch.stderr is not None
    said = first_line(watch, "the watch", stderr=True) + "\n"
    url = first_line(watch, "the watch's page") if said.startswith("members push here") else ""
    if not url.startswith("http://127.0.0.1:"):
        if watch.poll() is None:
            watch.terminate()
        raise AssertionError(f"no URL ({url!r}); stderr: {said}{watch.communicate(timeout=30)[1]}")
    watcher = said.split("--watcher ", 1)[1].split()[0]
    assert watcher.startswith("tcp://127.0.0.1:") and not watcher.startswith("tcp://127.0.0.1:0#")
    return watcher, url


def _follow(url: str, player: WebGame) -> None:
    """The spectator's page follows the game until the player leaves, then quits."""
    with open_browser() as driver:
        # The player's own page first, in a tab of its own: `nertz play --web` deals its
        # first round once that page is there (or after 30 s: web/table.py's first_deal).
        driver.get(player.url)
        driver.switch_to.new_window("tab")
        driver.get(url)
        # Every tableau, none of them ours; the bots play on and the lake fills in.
        wait_for(
            driver, lambda d: len(d.find_elements("css selector", "#others .player")) == 3,
            "three tableaux",
        )  # fmt: skip
        assert not driver.find_elements("css selector", "#mine .player")
        wait_for(
            driver, lambda d: len(d.find_elements("css selector", "#foundations .card")) >= 3,
            "the lake filling in",
        )  # fmt: skip
        # The player leaves: the spectator sees the signed leave.
        status_code, _, err = player.stop()
        assert status_code == 128 + 15, err
        wait_for(
            driver,
            lambda d: "you left the game" in d.find_element("css selector", "#messages").text,
            "the leave",
        )
        driver.find_element("css selector", "#quit").click()  # q: the spectator stops
