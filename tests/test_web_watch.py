"""``nertz watch --web``: a spectator follows a live game in the browser table. The real
programs: ``nertz play --web --watcher ENDPOINT#KEY`` makes the game and pushes it, ``nertz
watch --web --spec`` binds there admitting the game's members, and headless chromium reads the
spectator's page."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli.args import free_ports
from cli.keyfile import write_key
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed
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
    (port,) = free_ports(1)
    endpoint = f"tcp://127.0.0.1:{port}"
    spy = Identity.generate(derive_seed(b"test-web-watch-spy"))
    key = tmp_path / "spy.key"
    write_key(key, spy)
    args = ("--bots", "2", "--speed", "10", "--seed", "12", "--rounds", "1", "--deal", deal)
    # The player first: its game's spec is what the spectator admits the members by; its node
    # queues what it pushes until the spectator binds.
    player = WebGame(tmp_path, *args, "--watcher", f"{endpoint}#{spy.peer_id.hex()}")
    watch = None
    try:
        spec = str(player.dir / "game.spec")
        watch = subprocess.Popen(
            [sys.executable, "-m", "cli", "watch", "--web", "--no-open", "--spec", spec,
             "--key", str(key), "--bind", endpoint],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert watch.stdout is not None
        url = watch.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        with open_browser() as driver:
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
        out, err = watch.communicate(timeout=30)
        assert watch.returncode == 0, err
        assert "watched " in out and "Traceback" not in err
        assert f"--watcher {endpoint}#{spy.peer_id.hex()}" in err  # where members push
    finally:
        if player.proc.poll() is None:
            player.stop()
        if watch is not None and watch.poll() is None:
            watch.terminate()
            watch.communicate(timeout=30)
