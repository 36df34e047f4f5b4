"""Leaving a table with bots (issue 15): ``q`` returns at once and the bots go with it.

Real processes in a pseudo-terminal (tests/test_cli_play.py's ``Tty``): ``nertz host --bots``
with the person at the terminal table, and ``nertz play --bots``. Every wait is for screen
content or the process's end, bounded by a deadline; none is a sleep.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_cli_play import Tty
from tests.test_cli_play_lobby import keygen

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

# Generous for a loaded machine, yet well under the 30 s a bot was given to finish by itself
# (per bot) after the person had left, which is the hang this guards against.
_EXIT = 20.0


def _bot_children(pid: int) -> list[int]:
    """The ``nertz bot`` / ``nertz node`` processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # gone meanwhile
        parent = int(stat.rpartition(")")[2].split()[1])
        if parent == pid and command[1:3] == [b"-m", b"cli"] and command[3] in (b"bot", b"node"):
            found.append(int(entry.name))
    return found


def _quit(tty: Tty) -> int:
    """Press ``q`` (and ``y`` when asked); the exit status, within :data:`_EXIT` seconds."""
    tty.send("q")
    tty.wait("leave the game?")
    tty.send("y")
    return tty.finish(_EXIT)


def test_q_at_a_hosted_table_with_bots_returns_at_once_and_stops_the_bots(
    tmp_path: Path,
) -> None:
    keygen(tmp_path / "ann.key")
    tty = Tty(["host", "--key", str(tmp_path / "ann.key"), "--name", "Ann", "--players", "2",
               "--bots", "1", "--bot-speed", "1", "--rounds", "3",
               "--log-dir", str(tmp_path / "logs")])  # fmt: skip
    try:
        tty.wait("is dealt — go!", timeout=60)
        pid = tty.child.pid
        assert len(_bot_children(pid)) == 1  # the bot plays on
        assert _quit(tty) == 0
        assert b"you left the game" in tty.raw and b"Traceback" not in tty.raw
        assert _bot_children(pid) == []
    finally:
        if tty.child.isalive():
            tty.child.kill(9)


def test_q_at_a_table_of_bots_returns_at_once_and_stops_the_bots(tmp_path: Path) -> None:
    tty = Tty(["play", "--bots", "2", "--speed", "1", "--seed", "3", "--rounds", "3",
               "--dir", str(tmp_path / "game")])  # fmt: skip
    try:
        tty.wait("is dealt — go!", timeout=60)
        pid = tty.child.pid
        assert len(_bot_children(pid)) == 2
        assert _quit(tty) == 0
        assert b"you left the game" in tty.raw and b"Traceback" not in tty.raw
        assert _bot_children(pid) == []
    finally:
        if tty.child.isalive():
            tty.child.kill(9)
