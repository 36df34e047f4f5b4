"""The browser is opened with no token on its command line (session 31; cli/page_file.py).

Session 30's red team read the page's URL, token and all, off the browser's command line
(``ps``): every user of the machine can. ``nertz`` now starts the browser on a private file
(mode 0600, in a directory of mode 0700) that sends it on to the URL. Here ``nertz play
--web`` opens "the browser" as a person's would (``BROWSER``, which Python's ``webbrowser``
obeys), a program that records the command line it was given; the test then follows what it
was given in a real headless chromium, and plays.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from cli.page_file import PREFIX, write_page_file
from p2p_nertz.testing.said import lines
from tests.web_helpers import WebGame, browser_missing, click, open_browser, wait_for

#: The browser: it prints the command line it was started with on the output it shares with
#: ``nertz`` (Python's ``webbrowser`` starts it so), on a line of its own.
_RECORDER = """#!{python}
import json, sys
print("browser:", json.dumps(sys.argv), flush=True)
"""


def _recorded(game: WebGame) -> list[str]:
    """The recorder's command line, read from the game's output (it ends: it fails)."""
    assert game.proc.stdout is not None
    for line in lines(game.proc, "the game"):
        game.lines.append(line)
        if line.startswith("browser: "):
            argv: list[str] = json.loads(line.removeprefix("browser: "))
            return argv
    raise AssertionError(f"the browser was not started: {game.lines}")


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing()))
def test_web_the_browser_s_command_line_holds_no_token_and_its_file_opens_the_page(
    tmp_path: Path,
) -> None:
    recorder = tmp_path / "browser"
    recorder.write_text(_RECORDER.format(python=sys.executable))
    recorder.chmod(0o700)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {
        "BROWSER": str(recorder),
        "DISPLAY": os.environ.get("DISPLAY", ":31"),  # (a screen, or no browser is opened)
        "XDG_RUNTIME_DIR": str(runtime),
    }
    game = WebGame(
        tmp_path,
        "--bots",
        "1",
        "--seed",
        "11",
        "--rounds",
        "1",
        "--speed",
        "1",
        env=env,
        opens=True,
    )
    try:
        token = urlsplit(game.url).path.strip("/")
        argv = _recorded(game)
        assert len(argv) == 2, argv
        assert not any(token in arg for arg in argv), argv  # (what `ps` shows everyone)
        page = Path(unquote(urlsplit(argv[1]).path))
        assert argv[1].startswith("file:///") and page.is_file(), argv
        # The file is the player's alone, in a directory of its own in the runtime directory.
        assert page.parent.parent == runtime and page.parent.name.startswith(PREFIX)
        assert stat.S_IMODE(page.stat().st_mode) == 0o600
        assert stat.S_IMODE(page.parent.stat().st_mode) == 0o700
        with open_browser() as driver:
            driver.get(argv[1])
            wait_for(driver, lambda d: d.current_url == game.url, "the file sent on to the page")
            wait_for(
                driver, lambda d: d.find_elements("css selector", "#mine .nerts .card"), "a deal"
            )
            waste = "return document.querySelector('#mine .waste .count').textContent"
            before = driver.execute_script(waste)
            click(driver, '#mine .pile[data-pile="s"]')
            wait_for(driver, lambda d: d.execute_script(waste) != before, "the stock turned")
    finally:
        status, out, err = game.stop()
    assert "Traceback" not in err, err
    assert status == 128 + 15, (out, err)
    assert list(runtime.iterdir()) == []  # (removed when the command ended)


def test_a_page_file_left_by_a_killed_process_is_removed_by_the_next(tmp_path: Path) -> None:
    """A process killed outright leaves its file (unreadable to others): the next ``nertz``
    that opens a page removes it, and leaves those of processes still running."""
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    left = tmp_path / f"{PREFIX}{int(gone.stdout)}-abc"
    left.mkdir(mode=0o700)
    (left / "page.html").write_text("a token")
    running = tmp_path / f"{PREFIX}{os.getppid()}-def"
    running.mkdir(mode=0o700)
    page = write_page_file("http://127.0.0.1:1/to&ken/", tmp_path)
    assert not left.exists()
    assert running.exists()
    assert page.parent.parent == tmp_path
    assert 'url=http://127.0.0.1:1/to&amp;ken/"' in page.read_text()  # (escaped for HTML)
