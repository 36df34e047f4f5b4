"""``nertz play``'s lobby driven in a pseudo-terminal as a person would, read through pyte.

Real processes on 127.0.0.1: a ``nertz host --bot`` table with a ``nertz bot`` at it, joined
from the lobby screen; and a table created on the lobby screen, with two bots added from it,
started, and played at. One LAN test finds a table by discovery inside network namespaces.
Every wait is for screen content (or a process's output), bounded by a deadline.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from cli_helpers import cli_popen, lobby_table_with_a_bot

from p2p_nertz.testing.netns import BROADCAST, Lab
from p2p_nertz.testing.said import first_line
from tests.cli_helpers import make_key
from tests.test_cli_play import (
    HEIGHT,
    ROOT,
    WIDTH,
    Tty,
    XtermScreen,
    XtermStream,
    refused_in_one_line,
    stock,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def keygen(path: Path) -> str:
    """A new key at ``path`` (made in this process); its fingerprint."""
    return make_key(path).fingerprint


def lobby(tmp_path: Path, *args: str, name: str = "Dee") -> Tty:
    key = tmp_path / "dee.key"
    keygen(key)
    argv = ["play", "--key", str(key), "--name", name, "--log-dir", str(tmp_path / "logs")]
    return Tty([*argv, "--rounds", "1", *args])


def spawn(tmp_path: Path, label: str, argv: list[str]) -> subprocess.Popen[str]:
    with (tmp_path / f"{label}.err").open("w") as err:
        return cli_popen(
            [sys.executable, "-m", "cli", *argv],
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=str(ROOT),
        )


def stop(*procs: subprocess.Popen[str]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()  # the test is over: no need to leave cleanly
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        if p.stdout is not None:
            p.stdout.close()


def play_a_move(tty: Tty) -> None:
    """At the table: the stock key turns three cards (the stock count shrinks)."""
    # Play opens once every deal is public, which the table announces; our own cards show
    # once the others' shares open them, which on a busy machine can come after the
    # announcement (the stock then shows 0 cards: CI's load made "fewer than 0" the test).
    text = tty.wait(lambda t: "[n] Nerts" in t and "is dealt — go!" in t and stock(t) > 0)
    before = stock(text)
    tty.send("s")
    tty.wait(lambda t: "[s] stock" in t and stock(t) < before)


def test_play_joins_a_hosted_table_by_peer_toggles_ready_and_plays(tmp_path: Path) -> None:
    ann_fp = keygen(tmp_path / "ann.key")
    logs = str(tmp_path / "logs")
    host = spawn(
        tmp_path,
        "host",
        ["host", "--key", str(tmp_path / "ann.key"), "--name", "Ann", "--bot", "greedy",
         "--speed", "3", "--players", "3", "--rounds", "1", "--log-dir", logs, "--json"],
    )  # fmt: skip
    bot = None
    tty = None
    try:
        assert host.stdout is not None
        said = json.loads(first_line(host, "the host"))
        assert said["event"] == "lobby", said
        where = said["endpoint"].removeprefix("tcp://")  # (the port it bound)
        bot = spawn(tmp_path, "bot", ["bot", "--peer", where, "--name", "Cy",
                                      "--speed", "3", "--log-dir", logs, "--json"])  # fmt: skip
        tty = lobby(tmp_path, "--peer", where)
        text = tty.wait(where)
        assert "--peer" in text and "not asked yet" in text
        tty.send("\r")  # join the selected (only) table
        # The bot process may sit down before or after us: wait for both seats.
        cy = r"^  \d  Cy +\w{4}-\w{4}-\w{4}-\w{4} +ready"
        text = tty.wait(
            lambda t: (
                re.search(r"Dee .* not ready +← you", t) is not None
                and re.search(cy, t, re.M) is not None
            )
        )
        # Every seat with its fingerprint; the host first; the rules.
        assert re.search(rf"^  0  Ann +{ann_fp} +host +ready", text, re.M), text
        assert "exactly 1 round" in text and "draw 3" in text
        # The listing now knows whose table it is.
        assert re.search(rf"1  Ann's table +{ann_fp} +3/8", text), text
        tty.send("s")  # only the host starts
        tty.wait("only the host starts the game")
        tty.send("r")  # ready: the host's --players 3 starts the game
        play_a_move(tty)
    finally:
        if tty is not None:
            tty.child.kill(9)
        stop(*(p for p in (host, bot) if p is not None))
    assert b"Traceback" not in tty.raw


def test_play_creates_a_table_adds_two_bots_starts_and_plays(tmp_path: Path) -> None:
    tty = lobby(tmp_path)
    tty.wait("c creates a table here")
    tty.send("c")
    text = tty.wait("your table at 127.0.0.1:")
    assert re.search(r"^  0  Dee .* host +ready +← you", text, re.M), text
    # On the loopback, the address said is this machine's alone: the way to the LAN is said.
    tty.wait("» (127.0.0.1: this machine only; for the LAN: nertz play --address YOUR-LAN-IP)")
    tty.send("s")  # alone: cannot start yet
    tty.wait("cannot start: waiting for 1 more seat (b adds a bot)")
    # A lookahead bot at speed 9, then (the picker remembers) a greedy one at speed 9.
    tty.send("b")
    tty.wait("add a bot:")
    tty.send("t9")
    tty.wait(lambda t: "[lookahead]" in t and "speed 9/10" in t)
    tty.send("\r")
    tty.wait(lambda t: re.search(r"^  1  lookahead1 .* ready", t, re.M) is not None)
    tty.send("bt\r")
    tty.wait(lambda t: re.search(r"^  2  greedy1 .* ready", t, re.M) is not None)
    tty.wait("everybody is ready: s starts")
    tty.send("s")
    play_a_move(tty)
    tty.child.sendintr()  # leave the game cleanly; the bots finish by themselves
    assert tty.finish(60) == 128 + 2
    assert b"Traceback" not in tty.raw
    assert len(list((tmp_path / "logs").glob("*.log"))) == 3  # mine and the two bots'


def test_play_lobby_says_when_a_bot_it_started_stops_and_why(tmp_path: Path) -> None:
    """A bot the lobby started that stops before the game (here the host removes it, and it
    is refused) is said on the screen with its last error line, not left as a seat that never
    fills: CI's lobby showed "started a greedy bot" and then nothing, the bot's reason only in
    its .err file."""
    tty = lobby(tmp_path)
    lobby_table_with_a_bot(tty)
    tty.send("x1")
    text = tty.wait("greedy1 stopped: ")
    (said,) = [line for line in text.splitlines() if "greedy1 stopped: " in line]  # (once)
    # (On the status line: the news leaves out the status line's words, said once.)
    assert said.startswith("greedy1 stopped: the host refused us: the host removed you"), text
    tty.send("q")
    assert tty.finish() == 0
    assert b"Traceback" not in tty.raw


def test_host_says_when_a_bot_it_started_stops_and_why(tmp_path: Path) -> None:
    """``nertz host --bots``: a bot of its own that stops before the game (here removed at
    the host's prompt, and so refused) is said in a line with its last error line (its stderr
    is in the log directory, NAME.err), not left as a seat that never fills."""
    keygen(tmp_path / "ann.key")
    tty = Tty(["host", "--key", str(tmp_path / "ann.key"), "--name", "Ann", "--bot", "greedy",
               "--bots", "1", "--players", "3", "--rounds", "1",
               "--log-dir", str(tmp_path / "logs")])  # fmt: skip
    tty.wait(lambda t: re.search(r"bot1 \(\S+\) sat down", t) is not None)
    tty.send("remove 1\r")
    text = tty.wait("bot1 stopped: ")
    assert "bot1 stopped: the host refused us: the host removed you" in text, text
    assert "Traceback" not in text


def test_host_and_join_without_bot_seat_two_people_at_the_terminal_table(tmp_path: Path) -> None:
    """``nertz host`` and ``nertz join`` with no --bot: the text lobby, then the table."""
    keygen(tmp_path / "ann.key")
    keygen(tmp_path / "bob.key")
    logs = str(tmp_path / "logs")
    host = Tty(["host", "--key", str(tmp_path / "ann.key"), "--name", "Ann",
                "--players", "2", "--rounds", "1", "--log-dir", logs])  # fmt: skip
    guest = None
    try:
        host.wait("others join with: nertz join --peer")
        # The port it bound, from the line as printed.
        while (told := re.search(rb"nertz join --peer (\S+:\d+)\r?\n", host.raw)) is None:
            assert host.pump(0.1), host.raw
        where = told[1].decode()
        # On the loopback, the address said is this machine's alone: the way to the LAN is said.
        host.wait("(127.0.0.1: this machine only; for the LAN: nertz host --address YOUR-LAN-IP)")
        guest = Tty(["join", "--key", str(tmp_path / "bob.key"), "--name", "Bob",
                     "--peer", where, "--log-dir", logs])  # fmt: skip
        for tty, name in ((guest, "Bob"), (host, "Ann")):
            play_a_move(tty)
            assert f"you: {name} (seat " in tty.line(0), tty.line(0)
        for tty in (host, guest):
            tty.child.sendintr()
        for tty in (guest, host):
            assert tty.finish(60) == 128 + 2
            assert b"left the game on signal 2" in tty.raw and b"Traceback" not in tty.raw
    finally:
        for tty in (host, guest):
            if tty is not None and tty.child.isalive():
                tty.child.kill(9)


def test_play_lobby_with_a_missing_key_says_so_in_one_line(tmp_path: Path) -> None:
    assert "nertz keygen" in refused_in_one_line(f"play --key {tmp_path / 'none.key'}")


def test_play_finds_a_lan_table_by_discovery_and_joins(tmp_path: Path) -> None:
    keygen(tmp_path / "ann.key")
    keygen(tmp_path / "dee.key")
    with Lab(2) as lab:
        logs = tmp_path / "logs"
        host = lab.popen(
            0,
            [sys.executable, "-m", "cli", "host", "--key", str(tmp_path / "ann.key"),
             "--name", "Ann", "--bot", "greedy", "--speed", "3", "--discover", BROADCAST,
             "--players", "2", "--rounds", "1", "--log-dir", str(logs / "h0"), "--json"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            cwd=str(ROOT),
        )  # fmt: skip
        env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8")
        child = pexpect.spawn(
            "ip",
            lab.command(1, [sys.executable, "-m", "cli", "play", "--discover", BROADCAST,
                            "--key", str(tmp_path / "dee.key"), "--name", "Dee",
                            "--log-dir", str(logs / "h1")])[1:],
            dimensions=(HEIGHT, WIDTH), env=env, cwd=str(ROOT),
        )  # fmt: skip
        tty = Tty.__new__(Tty)
        tty.child, tty.screen, tty.raw = child, XtermScreen(WIDTH, HEIGHT), b""
        tty.stream = XtermStream(tty.screen)
        tty.dirs = []  # (a wait that fails says what the screen showed, not an AttributeError)
        try:
            text = tty.wait("Ann's table")  # (two programs' start-up: Tty.wait's own guard)
            assert re.search(r"10\.77\.0\.1:\d+ +LAN", text), text
            assert "listening on " + BROADCAST in text
            tty.send("1\r")
            tty.wait(lambda t: re.search(r"Dee .* not ready +← you", t) is not None)
            tty.send("r")
            play_a_move(tty)
        finally:
            child.kill(9)
            host.terminate()
