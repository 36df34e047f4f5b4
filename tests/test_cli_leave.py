"""Leaving a table with bots (issue 15): ``q`` returns at once and the bots go with it.

Real processes in a pseudo-terminal (tests/test_cli_play.py's ``Tty``): ``nertz host --bots``
with the person at the terminal table, and ``nertz play --bots``. Every wait is for screen
content or the process's end, bounded by a deadline; none is a sleep.
"""

from __future__ import annotations

import contextlib
import signal
import time
from pathlib import Path

import pytest

from p2p_nertz.logfile import RecordKind, read_log
from p2p_nertz.protocol.envelope import Kind, decode_message
from tests.test_cli_play import Tty, assert_said_on_lines_of_its_own, bot_processes
from tests.test_cli_play_lobby import keygen

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

# Generous for a loaded machine, yet well under the 30 s a bot was given to finish by itself
# (per bot) after the person had left, which is the hang this guards against.
_EXIT = 20.0


def _bot_children(pid: int) -> list[int]:
    """The ``nertz bot`` / ``nertz node`` processes whose parent is ``pid``."""
    return bot_processes(pid, (b"bot", b"node"))


def _ended(tty: Tty) -> int:
    """The exit status of ``tty``'s program, whose terminal the test closed (nothing to read
    from it any more), within :data:`_EXIT` seconds; where it was if it did not end.

    (Not ``ptyproc.wait()``: a program that did not end left that waiting for ever, and the
    test ended only at its timeout, saying nothing of why: session 30's merge.)"""
    proc = tty.child.ptyproc
    deadline = time.monotonic() + _EXIT
    while proc.isalive():
        if time.monotonic() > deadline:
            where = Path(f"/proc/{proc.pid}/wchan").read_text(errors="replace")
            tty.close()
            raise AssertionError(f"it did not end (in {where or 'user space'}){tty.bots_said()}")
        time.sleep(0.05)  # (a poll of its end, bounded above: no event to wait on)
    return proc.exitstatus if proc.exitstatus is not None else 128 + (proc.signalstatus or 0)


def _quit(tty: Tty) -> int:
    """Press ``q`` (and ``y`` when asked); the exit status, within :data:`_EXIT` seconds."""
    tty.send("q")
    tty.wait("leave the game?")
    tty.send("y")
    return tty.finish(_EXIT)


@pytest.mark.parametrize(
    ("argv", "bots"),
    [
        (["host", "--name", "Ann", "--players", "2", "--bots", "1", "--bot-speed", "1",
          "--rounds", "3"], 1),
        (["play", "--bots", "2", "--speed", "1", "--seed", "3", "--rounds", "3"], 2),
    ],
    ids=["host", "play"],
)  # fmt: skip
def test_q_at_a_table_with_bots_returns_at_once_and_stops_the_bots(
    tmp_path: Path, argv: list[str], bots: int
) -> None:
    if argv[0] == "host":  # (a hosted table: the person at the terminal, with a key)
        keygen(tmp_path / "ann.key")
        argv = [*argv, "--key", str(tmp_path / "ann.key"), "--log-dir", str(tmp_path / "logs")]
    else:
        argv = [*argv, "--dir", str(tmp_path / "game")]
    tty = Tty(argv)
    try:
        tty.wait("is dealt — go!", timeout=60)
        pid = tty.child.pid
        assert len(_bot_children(pid)) == bots  # the bots play on
        assert _quit(tty) == 0
        assert b"you left the game" in tty.raw and b"Traceback" not in tty.raw
        assert _bot_children(pid) == []
        # The score and the signed log are said once the table is gone (host said neither:
        # the log was named only before the table came up).
        assert_said_on_lines_of_its_own(tty)
        assert b"\r\nyour signed log:\r\n  " in tty.raw, tty.raw[-300:]
    finally:
        if tty.child.isalive():
            tty.child.kill(9)


def test_closing_the_terminal_leaves_the_game_as_sigterm_does(tmp_path: Path) -> None:
    # A newcomer closed the terminal of `nertz play`: the process died on SIGHUP without a
    # leave, and the others waited the drop timer for it. Practice bots wait for the person:
    # the round is still on whenever the terminal closes.
    game = tmp_path / "game"
    argv = ["play", "--bots", "1", "--practice", "--speed", "10", "--rounds", "1"]
    tty = Tty([*argv, "--seed", "3", "--dir", str(game)])
    tty.wait("is dealt — go!", timeout=60)
    pid = tty.child.pid
    assert len(_bot_children(pid)) == 1
    tty.child.ptyproc.fileobj.close()  # the terminal goes away (its session leader: SIGHUP)
    assert _ended(tty) == 128 + signal.SIGTERM  # (not killed by the signal)
    sent = [
        decode_message(r.data).kind
        for r in read_log(game / "you.log")
        if r.kind is RecordKind.SENT_EVENT
    ]
    assert sent[-1] is Kind.LEAVE  # signed, for the bot (and the audit) to see
    assert _bot_children(pid) == []  # and the bot was stopped as after a SIGTERM


def _sent_kinds(log: Path) -> list[Kind]:
    """The kinds of the events ``log`` says its node signed (it may be mid-write: read
    leniently)."""
    with contextlib.suppress(OSError, ValueError):
        return [
            decode_message(r.data).kind for r in read_log(log) if r.kind is RecordKind.SENT_EVENT
        ]
    return []


def test_closing_the_terminal_of_a_demo_stops_its_bots_each_with_a_leave(tmp_path: Path) -> None:
    # nertz demo's bots are in its session but not its terminal's: the hang-up reaches the
    # demo alone, which stops them as after a SIGTERM (each signs its leave), and nothing of
    # the game is left running.
    game = tmp_path / "demo"
    tty = Tty(["demo", "--players", "2", "--speed", "1", "--rounds", "1", "--dir", str(game)])
    tty.wait(lambda text: text.count(" on tcp://127.0.0.1:") == 2, timeout=60)
    pid = tty.child.pid
    nodes = _bot_children(pid)
    assert len(nodes) == 2
    # Both have dealt (each signed past its join): a leave is theirs to sign from here on.
    deadline = time.monotonic() + 60
    while min(len(_sent_kinds(game / f"p{n}.log")) for n in (0, 1)) < 2:
        assert time.monotonic() < deadline, "the demo's bots never dealt"
        assert tty.pump(0.1), f"the demo ended before its bots dealt:\n{tty.text()}"
    tty.child.ptyproc.fileobj.close()
    # (stopped as by the SIGTERM the hang-up is raised as: README's "the terminal closed")
    assert _ended(tty) == 128 + signal.SIGTERM
    for n in (0, 1):
        assert _sent_kinds(game / f"p{n}.log")[-1] is Kind.LEAVE
    assert not [p for p in nodes if Path(f"/proc/{p}").exists() and not _zombie(p)]


def _zombie(pid: int) -> bool:
    """``pid`` ended and awaits its parent's look (a process of a test's program, reaped by
    init once the program is gone)."""
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    return True
