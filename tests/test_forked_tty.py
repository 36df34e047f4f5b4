"""``nertz`` in a pseudo-terminal forked from the fork server (tests/forked_tty.py) starts as
the one pexpect starts afresh: a session leader whose controlling terminal is the pty, in its
foreground group, SIGHUP at its default whatever the runner left it at; a Ctrl-C typed on the
terminal ends both alike; an environment the first server does not serve gets a server of its
own."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import forkserver
import pexpect
import pytest
from cli_helpers import make_key
from forked_tty import ForkedPtyProcess, ForkedSpawn

from cli.main import build_parser
from cli.play import bots_game

pytestmark = pytest.mark.timeout(120)

WAIT = 60.0  # (a hang guard, not a timing)


@contextlib.contextmanager
def _ignoring_sighup(ignored: bool) -> Iterator[None]:
    """SIGHUP ignored in this process for the block if ``ignored`` (a runner under ``nohup``),
    put back after."""
    handler = signal.getsignal(signal.SIGHUP)
    if ignored:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        yield
    finally:
        if handler is not None:
            signal.signal(signal.SIGHUP, handler)


def _from_a_shell() -> None:
    """(As tests/test_cli_play.py's ``Tty`` starts its program.)"""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _watch_argv(tmp_path: Path) -> list[str]:
    """A ``nertz watch`` on its terminal: it shows that it waits for the game, until stopped."""
    spec = bots_game(build_parser("play").parse_args(["play", "--bots", "1", "--seed", "1"]))[1]
    (tmp_path / "game.spec").write_bytes(spec.to_wire())
    make_key(tmp_path / "spy.key")
    return [
        "watch", "--spec", str(tmp_path / "game.spec"), "--bind", "127.0.0.1:0",
        "--key", str(tmp_path / "spy.key"),
    ]  # fmt: skip


def _shows(child: pexpect.spawn, text: bytes) -> None:
    """Read ``child``'s terminal until it has shown ``text``."""
    said = b""
    deadline = time.monotonic() + WAIT
    while text not in said.replace(b"\r\n", b" ").replace(b"\n", b" "):
        assert time.monotonic() < deadline, said
        try:
            said += child.read_nonblocking(65536, timeout=0.1)
        except pexpect.TIMEOUT:
            continue


def _stat(pid: int) -> tuple[int, int, int]:
    """``pid``'s session, controlling terminal and that terminal's foreground group."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[3]), int(fields[4]), int(fields[5])


def _ignored(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        line = next(x for x in f.read().splitlines() if x.startswith("SigIgn:"))
    return int(line.split()[1], 16)


@pytest.mark.parametrize("ignored", [False, True], ids=["runner-at-default", "runner-nohup"])
def test_forked_tty_starts_and_stops_as_the_one_pexpect_starts(
    tmp_path: Path, ignored: bool
) -> None:
    env = dict(os.environ, TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    argv = _watch_argv(tmp_path)
    children: list[pexpect.spawn] = []
    launcher = None
    try:
        with _ignoring_sighup(ignored):  # (the runner, its server and the fresh one's parent)
            launcher = forkserver.Launcher(env)
            children.append(
                ForkedSpawn(launcher, argv, sig_dfl=[signal.SIGHUP], dimensions=(24, 80), env=env)
            )
            children.append(
                pexpect.spawn(
                    sys.executable,
                    ["-m", "cli", *argv],
                    dimensions=(24, 80),
                    env=env,
                    preexec_fn=_from_a_shell,
                )
            )
        forked = children[0]
        assert isinstance(forked.ptyproc, ForkedPtyProcess)
        with open(f"/proc/{forked.pid}/stat") as f:
            assert int(f.read().rsplit(")", 1)[1].split()[1]) == launcher.server.pid
        for child in children:
            _shows(child, b"waiting for game")
            session, terminal, foreground = _stat(child.pid)
            assert session == child.pid and foreground == child.pid and terminal != 0
            assert not _ignored(child.pid) & (1 << (signal.SIGHUP - 1))
            assert child.isalive()
        # Ctrl-C typed on each terminal: the kernel signals its foreground group, and the
        # program stops. (Its status, 0 or 130, is the watch's own race, small37's: either.)
        for child in children:
            child.sendintr()
        for child in children:
            child.expect(pexpect.EOF, timeout=WAIT)
            assert b"Traceback" not in child.before, child.before
            child.close()
            assert child.exitstatus in (0, 130) and child.signalstatus is None
        assert not forked.isalive() and forked.ptyproc._status is None
    finally:
        for child in children:
            if child.isalive():
                child.kill(signal.SIGKILL)
            child.close(force=True)
        if launcher is not None:
            launcher.close()


def test_forked_tty_environment_unserved_by_the_first_server_gets_its_own() -> None:
    env = dict(os.environ)
    assert forkserver.launcher_for(env) is forkserver.launcher()
    other = {**env, "LC_ALL": "C" if env.get("LC_ALL") != "C" else "C.UTF-8"}
    own = forkserver.launcher_for(other)
    assert own is not forkserver.launcher() and own.serves(other)
    assert forkserver.launcher_for(dict(other, TERM="dumb")) is own
