"""The browser table's connection (p2p_nertz/web/static/table.js, p2p_nertz/web/server.py): a
page whose peer went away without a last word tries again and takes the table up when the
peer is back at the same URL, and once it has tried for a while (30 s; less here, by the
page's address) says what the person can do; a peer that is done says why, and the page
stops trying.

The real page server (on a thread, ``web_helpers.ServedPage``) stops and a new one starts on
the same port with the same token, as ``nertz resume --web`` does; a headless chromium shows
the page. Every wait is for what the page shows, bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli_popen
from helpers_rules import table_from

from p2p_nertz.rules import Rules
from p2p_nertz.testing.said import lines, reap
from p2p_nertz.ui import TableView
from p2p_nertz.ui.refusals import CATCHING_UP, CAUGHT_UP
from p2p_nertz.web.model import view_json
from tests.web_helpers import (
    ROOT,
    ServedPage,
    WebGame,
    browser_missing,
    click,
    open_browser,
    wait_for,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(240),
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
]

CONNECTED = "connected to your nertz program"  # (the header's words, not a tooltip's)

MINE = "N: KH 4C | 1: QH | 2: 5S | 3: 5D | 4: 8C | S: 2C 7H 9S | W: 6H AS"
OTHER = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: -"


def view_text(status: str) -> str:
    """A view of a two-player table as the peer sends it, with ``status`` on its status line."""
    table = table_from(MINE, OTHER)
    view = TableView(table=table, seat=0, names=("Ann", "Bob"), rules=Rules(), status=status)
    return json.dumps(view_json(view), ensure_ascii=False)


@pytest.fixture
def served() -> Iterator[list[ServedPage]]:
    pages: list[ServedPage] = []
    try:
        yield pages
    finally:
        for page in pages:
            page.close()


def shown(driver: Any) -> dict[str, Any]:
    data: dict[str, Any] = driver.execute_script(
        "return {link: document.querySelector('#link').textContent,"
        " status: document.querySelector('#status').textContent,"
        " down: document.body.classList.contains('down'),"
        " reconnects: window.nertzStats.reconnects, retrying: window.nertzStats.retrying,"
        " unanswered: window.nertzStats.unanswered, tries: window.nertzStats.tries};"
    )
    return data


def test_web_the_page_reconnects_by_itself_when_its_peer_is_back(
    served: list[ServedPage],
) -> None:
    first = ServedPage()
    served.append(first)
    first.publish(view_text("before"))
    with open_browser() as driver:
        driver.get(first.url + "?lost_after=2")
        wait_for(driver, lambda d: shown(d)["status"] == "before", "the first view")
        assert shown(driver)["link"] == CONNECTED
        # The peer goes away without a word (killed, or restarting): the page says so,
        # greys the table, and keeps trying.
        first.close()
        lost = wait_for(driver, lambda d: (s := shown(d))["down"] and s, "the connection lost")
        assert lost["status"] == "the connection to the nertz program was lost: reconnecting…", lost
        assert lost["link"].startswith("reconnecting… (next try in "), lost
        # Tries go on (0.5 s, 1 s, 2 s...): the link says when the next one is.
        wait_for(driver, lambda d: "next try in 2.0 s" in shown(d)["link"], "a later try")
        # Unanswered past the page's cap (2 s here): it says so; a view that names no log (a
        # spectator's, a replay's) leaves the terminal to say how the peer stopped.
        said = wait_for(driver, lambda d: (s := shown(d))["unanswered"] and s, "not answering")
        assert said["status"] == (
            "the nertz program is not answering — if it stopped, its terminal says why"
        )
        # The peer is back at the same URL (port and token): the page takes the table up.
        token = first.url.rstrip("/").rsplit("/", 1)[1]
        port = int(first.url.split(":")[2].split("/")[0])
        again = ServedPage(token=token, port=port)
        served.append(again)
        assert again.url == first.url
        again.publish(view_text("after"))
        back = wait_for(driver, lambda d: (s := shown(d))["status"] == "after" and s, "back")
        assert back["link"] == CONNECTED and not back["down"] and back["reconnects"] == 1
        assert not back["unanswered"], back
        # A drag works again: the table takes the pointer.
        nerts = driver.find_element("css selector", "#mine .nerts .card")
        events = driver.execute_script("return getComputedStyle(arguments[0]).pointerEvents", nerts)
        assert events != "none"
        # The peer is done (the game over, say): it says why, and the page stops trying.
        again.close_pages("the game is over: your nertz program has stopped")
        done = wait_for(driver, lambda d: (s := shown(d))["down"] and s, "the last word")
        assert done["status"] == "the game is over: your nertz program has stopped", done
        assert done["link"] == "stopped" and not done["retrying"], done  # (no fault: not red)
        assert driver.execute_script(
            "return [document.getElementById('link').className,"
            " document.getElementById('status').className]"
        ) == ["link", ""]
        # (The last view stays to be read.)
        assert driver.find_elements("css selector", "#mine .nerts .card")


def test_web_a_killed_peer_resumed_with_web_takes_its_open_page_back(tmp_path: Path) -> None:
    # `nertz play --web` against one bot; the player's process is killed (the bot plays on),
    # so the page gets no last word: after its retry cap (1 s here, by the page's address;
    # 30 s by default) it says how to take the game up again, naming the log, and keeps
    # trying. `nertz resume LOG --web`, as the page words it, serves the page at the same URL,
    # and the open page comes back live by itself; when the player then leaves, the page says
    # so and stops trying.
    game = WebGame(tmp_path, "--bots", "1", "--seed", "11", "--rounds", "1", "--speed", "1")
    resumed: subprocess.Popen[str] | None = None
    bot: int | None = None
    try:
        with open_browser() as driver:
            driver.get(game.url + "?lost_after=1")
            wait_for(
                driver, lambda d: d.find_elements("css selector", "#mine .nerts .card"), "deal"
            )
            os.kill(game.proc.pid, signal.SIGKILL)  # (the player only: not the bot)
            game.proc.wait(timeout=30)
            wait_for(driver, lambda d: "reconnecting" in shown(d)["link"], "the page trying")
            said = wait_for(
                driver, lambda d: (s := shown(d))["unanswered"] and s, "the page saying what to do"
            )
            (kept,) = game.dir.glob("*.log.page")  # (the page's address, beside the log)
            log = kept.with_suffix("")
            head, _, command = said["status"].partition(", ")
            assert head == "the nertz program is not answering — if it stopped", said
            command, _, tail = command.partition(" takes ")
            assert shlex.split(command) == ["nertz", "resume", str(log), "--web"], said
            assert tail == "the game up again here", said
            # The tries go on under those words.
            tries = said["tries"]
            again = wait_for(driver, lambda d: (s := shown(d))["tries"] > tries and s, "a try")
            assert again["status"] == said["status"] and again["down"], again
            resumed = cli_popen(
                [sys.executable, "-m", "cli", *shlex.split(command)[1:], "--no-open"],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            assert resumed.stdout is not None
            url = next(x.strip() for x in lines(resumed, "the resume") if x.startswith("http://"))
            bot = _freeze_child(resumed.pid, game.dir / "bot0.log")  # (seed 11: seat 0)
            assert url == game.url
            back = wait_for(driver, lambda d: (s := shown(d))["link"] == CONNECTED and s, "back")
            assert back["reconnects"] == 1 and not back["down"] and not back["unanswered"], back
            assert not back["status"].startswith("the nertz program is not answering"), back
            # Live: the stock key turns the stock, through the resumed peer. Until the bot has
            # said what it holds of the player's own moves (a round trip once both are up,
            # docs/protocol.md §9.6) a move is refused as still getting them back; once they
            # are back the status line says so, and the move made again is taken (session 32's
            # CI: the page was back first, and its click's refusal stood for 60 s). The bot the
            # resume started again is frozen meanwhile (unless it has answered already, the
            # click is refused then), and let go once the page has said so.
            stock = '#mine .pile[data-pile="s"]'
            before = waste_text(driver)
            try:
                click(driver, stock)
                wait_for(
                    driver,
                    lambda d: waste_text(d) != before or shown(d)["status"] == CATCHING_UP,
                    "the stock turned, or the click refused",
                )
            finally:
                if bot is not None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(bot, signal.SIGCONT)
            wait_for(
                driver,
                lambda d: waste_text(d) != before or shown(d)["status"] == CAUGHT_UP,
                "the stock turned, or the player's moves back",
            )
            if waste_text(driver) == before:  # (refused: the moves were not back)
                click(driver, stock)
                wait_for(driver, lambda d: waste_text(d) != before, "the stock turned")
            # The table's socket answers a lobby choice (once dropped without a word).
            answer = driver.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "const ws = new WebSocket(`ws://${location.host}${location.pathname}ws`);"
                "ws.onopen = () => ws.send(JSON.stringify({type: 'lobby', do: 'ready'}));"
                "ws.onmessage = (ev) => { const m = JSON.parse(ev.data);"
                "  if (m.type === 'error') { ws.close(); done(m.error); } };"
            )
            assert answer.startswith("a lobby choice means nothing on this page now"), answer
            resumed.send_signal(signal.SIGTERM)  # the player leaves
            said = "you left the game: your nertz program has stopped"
            done = wait_for(driver, lambda d: (s := shown(d))["status"] == said and s, "left")
            assert not done["retrying"], done
            _, err = resumed.communicate(timeout=60)
            assert resumed.returncode == 128 + 15 and "Traceback" not in err, err
    finally:
        if bot is not None:  # (in a session of its own: it stops with the resume, unless frozen)
            with contextlib.suppress(ProcessLookupError):
                os.kill(bot, signal.SIGKILL)
        for proc in (resumed, game.proc):  # (the first bot is in the game's process group)
            if proc is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                reap(proc)


def _freeze_child(parent: int, log: Path) -> int | None:
    """SIGSTOP the child of ``parent`` that plays on ``log`` (a bot ``nertz resume`` started
    again); its pid, or ``None`` if there is none (it has ended, or no /proc says)."""
    if not Path("/proc").is_dir():
        return None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            ppid = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # (gone meanwhile)
        if ppid == parent and str(log).encode() in args:
            os.kill(int(entry.name), signal.SIGSTOP)
            return int(entry.name)
    return None


def waste_text(driver: Any) -> str:
    text: str = driver.execute_script(
        "const w = document.querySelector('#mine .waste');"
        "return w.querySelector('.count').textContent + ' ' +"
        " (w.querySelector('.card')?.dataset.code ?? '-');"
    )
    return text
