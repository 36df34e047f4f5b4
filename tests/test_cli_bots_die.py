"""The bots a command starts die with it, however it ends, and a quick game's resume brings
them back (session 31: ``nertz play --bots`` killed with SIGKILL left its bots playing alone).

Real processes: a ``nertz play --bots 1`` at a pseudo-terminal, killed with SIGKILL once the
round is dealt; its bot stops by itself (cli/bots.py: a pipe it watches, whose other end only
the table held), its log whole; ``nertz resume`` of the person's log is refused while a
process still writes the bot's log (one left running by an earlier version), and otherwise
starts the bot again from its log, and the game goes on.
"""

from __future__ import annotations

import fcntl
import os
import signal
import time
from pathlib import Path

import pytest
from cli_helpers import descendants

from cli.bots import last_line
from tests.test_cli_play import Tty

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

_GONE = 60.0  # seconds the bots get to see their table gone (generous for a loaded machine)
_PLAYS = 90.0  # seconds a resumed bot gets to sign its next event


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, not reaped by whoever adopted it, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pids: set[int], timeout: float) -> set[int]:
    """Poll until none of ``pids`` runs (at most ``timeout``); those still running."""
    deadline = time.monotonic() + timeout
    while (left := {p for p in pids if _alive(p)}) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def _kill_left(pids: set[int]) -> None:
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_play_bots_stop_with_a_killed_table_and_its_resume_starts_them_again(
    tmp_path: Path,
) -> None:
    game = tmp_path / "game"
    table = Tty(["play", "--bots", "1", "--speed", "10", "--seed", "31", "--rounds", "1",
                 "--dir", str(game)])  # fmt: skip
    table.wait("is dealt — go!", timeout=90)
    bots = descendants(table.child.pid)
    assert bots, "the quick game started no bot process"
    try:
        os.kill(table.child.pid, signal.SIGKILL)
        assert table.finish(30) == 128 + signal.SIGKILL
        left = _wait_gone(bots, _GONE)
        assert not left, f"bots {sorted(left)} play on alone after their table was killed"
    finally:
        _kill_left(bots)
    said = last_line(game / "bot1.err") or ""
    assert "the command that started it has ended" in said, said
    assert "Traceback" not in (game / "bot1.err").read_text()
    you, bot_log = game / "you.log", game / "bot1.log"
    size = bot_log.stat().st_size

    # A process still writing the bot's log (a bot an earlier version left running): the
    # resume says so in one line and starts nothing.
    with bot_log.open("rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        refused = Tty(["resume", str(you)])
        status = refused.finish(60)
    text = refused.raw.decode(errors="replace")
    assert status != 0 and "bot1 of this game still plays alone" in text, text[-600:]
    assert f"(pid {os.getpid()})" in text and "Traceback" not in text
    assert bot_log.stat().st_size == size

    # Without it: the resume starts the bot again from its log, and it plays on.
    resumed = Tty(["resume", str(you)])
    resumed.wait("go!", timeout=90)
    deadline = time.monotonic() + _PLAYS
    while bot_log.stat().st_size == size and time.monotonic() < deadline:
        resumed.pump(0.2)
    assert bot_log.stat().st_size > size, f"the resumed bot signed nothing:\n{resumed.text()}"
    again = descendants(resumed.child.pid)
    assert again and not again & bots
    resumed.send("q")
    resumed.wait("leave the game?")
    resumed.send("y")
    assert resumed.finish(60) == 0
    left = _wait_gone(again, 30)  # (stopped by the table as it left)
    _kill_left(left)
    assert not left
