"""``nertz replay --web``: a finished game stepped through in the browser table, forward and
back, the same table drawn at each event (p2p_nertz/web/replay.py). The stepper on its own on
a played game, then the real command on the golden logs in headless chromium."""

from __future__ import annotations

import contextlib
import itertools
import signal
import subprocess
from collections.abc import Iterable
from typing import Any

import pytest

from p2p_nertz.testing.said import first_line, reap
from p2p_nertz.web.model import card_json
from p2p_nertz.web.replay import ReplayStepper
from tests.cli_helpers import background, cli_popen, foreground, interrupted_by_sigterm
from tests.test_replay import GOLDEN, _replay
from tests.web_helpers import ROOT, browser_missing, open_browser, wait_for


def test_the_stepper_moves_by_keys_and_draws_the_fold_at_each_step() -> None:
    replay = _replay()
    stepper = ReplayStepper(replay)
    assert stepper.view()["replay"]["at"] == 0
    for key, at in [("n", 1), (" ", 2), ("ENTER", 3), ("b", 2), ("N", 12), ("B", 2), ("B", 0)]:
        stepper.key(key)
        assert stepper.at == at, key
    stepper.key("e")
    assert stepper.at == len(replay)
    stepper.key("n")
    assert stepper.at == len(replay)  # (the end stays the end)
    first, second = replay.round_start(1), replay.round_start(2)
    assert first is not None and second is not None and 0 < first < second
    stepper.key("0")
    stepper.key("]")
    assert stepper.at == first
    stepper.key("]")
    assert stepper.at == second
    stepper.key("N")
    stepper.key("[")
    assert stepper.at == second  # this round's start
    stepper.key("[")
    assert stepper.at == first  # then the one before
    stepper.key("x")  # not a replay key: nothing
    assert stepper.at == first and not stepper.done
    # The view is the fold after that step, every tableau as every peer saw it.
    stepper.key("e")
    stepper.key("B")
    view = stepper.view()
    state = replay.state_at(stepper.at)
    assert state.table is not None
    assert view["seat"] is None and view["status"].startswith(f"step {stepper.at}/")
    for seat, player in enumerate(view["players"]):
        work = state.table.tableaux[seat].work
        assert player["tableau"]["work"] == [[card_json(c) for c in pile] for pile in work]
    stepper.key("q")
    assert stepper.done


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing()))
def test_web_replay_steps_the_golden_game_forward_and_back_in_the_browser() -> None:
    proc = _web_replay()
    try:
        assert proc.stdout is not None
        url = first_line(proc, "the replay's page")
        assert url.startswith("http://127.0.0.1:"), url
        with open_browser() as driver:
            driver.get(url)

            def at(d: object) -> str:
                return str(driver.find_element("css selector", "#replay-at").text)

            wait_for(driver, lambda d: at(d).startswith("step 0 of "), "the replay's start")
            total = int(at(driver).split()[3])
            # What the lines' marks are (L13, T*): under "how to read the lines", a click away;
            # and what the lake's borders and numbers are, in its heading.
            driver.find_element("css selector", "#replay-legend summary").click()
            legend = "#replay-legend p"
            wait_for(
                driver,
                lambda d: "Lamport time" in d.find_element("css selector", legend).text,
                "legend",
            )
            lake = driver.find_element("css selector", "#lake h2").text
            assert "the colour of the player who laid it" in lake, lake
            # Its help speaks to someone who watches: it said "Drag a card…", the keys of a
            # player, on a page where nothing plays (a spectator's page has the same help).
            driver.find_element("css selector", "#help-button").click()
            helped = wait_for(
                driver,
                lambda d: d.find_element("css selector", "#help").text or None,
                "the help",
            )
            assert "none is yours" in helped and "Drag a card" not in helped, helped
            # How to play too: what the players do, not "drag a card there", "the stuck
            # button passes", "your Nerts pile" (the page's how-to-play spoke to a player).
            assert "Each player races to empty their Nerts pile" in helped, helped
            for words in ("drag a card", "stuck button", "your Nerts pile", "your cards"):
                assert words not in helped, (words, helped)
            driver.find_element("css selector", "#help-close").click()
            shut = "#help[hidden]"
            wait_for(driver, lambda d: d.find_elements("css selector", shut), "the help closed")
            button = {
                b.get_attribute("data-key"): b
                for b in driver.find_elements("css selector", "#replay button")
            }
            button["]"].click()  # the first round's deal…
            button["N"].click()
            wait_for(driver, lambda d: d.find_elements("css selector", "#others .card"), "cards")
            _assert_laid_out(driver, button.values())
            step = int(at(driver).split()[1])
            tables = driver.find_element("css selector", "#others").get_attribute("innerHTML")
            button["n"].click()
            wait_for(driver, lambda d: at(d).startswith(f"step {step + 1} of"), "one on")
            button["b"].click()
            wait_for(driver, lambda d: at(d).startswith(f"step {step} of"), "one back")
            # Back at the same step, the same table.
            assert (
                driver.find_element("css selector", "#others").get_attribute("innerHTML") == tables
            )
            button["e"].click()
            wait_for(driver, lambda d: at(d).startswith(f"step {total} of"), "the end")
            assert "audit: valid" in at(driver)
            driver.find_element("css selector", "#quit").click()  # stop
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    finally:
        _interrupt(proc)


def test_web_replay_ctrl_c_stops_it_with_one_line() -> None:
    """Ctrl-C while the page is served (cli/web_cmd.py): ``nertz`` says "interrupted" and ends
    with 130, the server's tasks cancelled without a traceback. No browser needed."""
    proc = _web_replay()
    try:
        assert proc.stdout is not None
        assert first_line(proc, "the replay's page").startswith("http://127.0.0.1:")
        proc.send_signal(signal.SIGINT)  # what Ctrl-C at the terminal sends
        _, err = proc.communicate(timeout=30)
    finally:
        _interrupt(proc)
    assert proc.returncode == 130, err
    assert err.splitlines() == ["nertz replay: interrupted"], err


def test_web_replay_in_the_background_stops_on_sigterm_with_one_line() -> None:
    """A SIGTERM (``kill``) to a replay started in the background, SIGINT ignored as a shell
    without job control leaves it: ``nertz``'s handler raised KeyboardInterrupt in the middle
    of trio, and a page of trio's and hypercorn's tracebacks followed "interrupted" (session
    30). Now the replay takes the signal itself: one line, as for a Ctrl-C."""
    proc = _web_replay(in_background=True)
    try:
        assert proc.stdout is not None
        assert first_line(proc, "the replay's page").startswith("http://127.0.0.1:")
    finally:
        interrupted_by_sigterm(proc, "replay")


def _assert_laid_out(driver: Any, buttons: Iterable[Any]) -> None:
    """The replay page's parts side by side, none under another, every event line whole
    (the list was cut under the lake panel), and buttons a person can read: each says what
    it does in words to a screen reader, and draws no glyph of the technical block
    (U+2300–U+23FF: ⏮ ⏭ drew as empty boxes, the fonts lacked them)."""
    rect = (
        "const r = arguments[0].getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom];"
    )
    parts = {
        name: driver.execute_script(rect, driver.find_element("css selector", name))
        for name in ("#replay", "#others", "#lake", "#messages", "#status")
    }
    for (a, ra), (b, rb) in itertools.combinations(parts.items(), 2):
        apart = ra[2] <= rb[0] or rb[2] <= ra[0] or ra[3] <= rb[1] or rb[3] <= ra[1]
        assert apart, (a, ra, b, rb)
    lines = driver.find_elements("css selector", "#messages li")
    assert lines
    box = parts["#messages"]
    for line in lines:
        left, top, right, bottom = driver.execute_script(rect, line)
        assert box[0] <= left and box[1] <= top and right <= box[2] and bottom <= box[3], line.text
    for b in buttons:
        label, text = b.get_attribute("aria-label") or "", b.text
        assert label.replace("'", "").replace(" ", "").isalpha(), (label, text)
        assert text and not any(0x2300 <= ord(c) <= 0x23FF for c in text), (label, text)


def _web_replay(*, in_background: bool = False) -> subprocess.Popen[str]:
    """``nertz replay --web --no-open`` on the golden logs, started as a terminal starts it
    (SIGINT at its default, whatever the test runner has: cli_helpers.foreground), or
    ``in_background``: as a shell starts ``nertz … &``, SIGINT ignored."""
    logs = [str(p) for p in sorted(GOLDEN.glob("p*.log"))]
    argv = ["replay", "--web", "--no-open", *logs]
    return cli_popen(
        background(*argv) if in_background else foreground(*argv),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _interrupt(proc: subprocess.Popen[str]) -> None:
    """Stop ``proc`` if it still runs, as Ctrl-C would; killed if that does not stop it (a
    cleanup after a failure must not hide the failure behind a second one)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):  # (then killed, below)
            proc.communicate(timeout=30)
    reap(proc, "nertz replay --web")
