"""A ``nertz`` command whose output nobody reads still answers its signals: with standard
output and error one full pipe (its reader never reads), the command blocked writing to it,
SIGTERM, SIGINT and SIGHUP each end it with the signal's status (README, *Exit statuses*:
143, 130, and 143 for a terminal that went away) and a reader that goes (EPIPE) ends it
quietly, 0; what it must keep is kept (a game's logs audit clean).

Session 43: every command so blocked hung for ever after a signal, writing its
"interrupted" to the pipe (p2p_nertz/signals.py, ``let_go_of_unread_streams``); a node,
blocked inside trio, never even ran the reader of its signals.

Real processes and real pipes. Each test waits (a poll of /proc, bounded against a hang)
until the command is blocked writing to the pipe, then acts: the signal lands on the write.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import at_end_of_test, foreground, kill_tree, node_spec

from cli.keyfile import write_key
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rules import Rules
from p2p_nertz.signals import signal_status

pytestmark = pytest.mark.timeout(300)

#: Bounds against a hang, never timings: a command at a load of 40.
BLOCKS_WITHIN = 120.0
ENDS_WITHIN = 60.0

GOLDEN = sorted(
    str(p) for p in (Path(__file__).parent / "data" / "golden" / "two-players").glob("p*.log")
)

#: The signal each one is answered as: SIGHUP, the terminal gone, as SIGTERM (cli/main.py).
SIGNALS = {"SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT, "SIGHUP": signal.SIGHUP}
ANSWERED_AS = {
    signal.SIGTERM: signal.SIGTERM,
    signal.SIGINT: signal.SIGINT,
    signal.SIGHUP: signal.SIGTERM,
}


def _full_pipe() -> tuple[int, int]:
    """A pipe whose buffer is full: its read end (the test's, never read) and its write end
    (the command's stdout and stderr). Filled through a description of its own, so that the
    write end the command gets blocks as a pipe does."""
    read_end, write_end = os.pipe()
    filler = os.open(f"/proc/self/fd/{write_end}", os.O_WRONLY | os.O_NONBLOCK)
    with contextlib.suppress(BlockingIOError):
        while True:
            os.write(filler, b"x" * 4096)
    os.close(filler)
    return read_end, write_end


def _fill(write_end: int) -> None:
    """Fill the pipe of ``write_end`` (another process writes to it too) to its brim."""
    filler = os.open(f"/proc/self/fd/{write_end}", os.O_WRONLY | os.O_NONBLOCK)
    with contextlib.suppress(BlockingIOError):
        while True:
            os.write(filler, b"x" * 512)
    os.close(filler)


def _blocked_writing(proc: subprocess.Popen[str]) -> None:
    """Wait until ``proc`` is blocked writing to a pipe (its wait channel says so)."""
    deadline = time.monotonic() + BLOCKS_WITHIN
    while True:
        assert proc.poll() is None, f"it ended ({proc.returncode}) before it blocked"
        with contextlib.suppress(OSError):
            if "pipe_write" in Path(f"/proc/{proc.pid}/wchan").read_text():
                return
        assert time.monotonic() < deadline, "never blocked writing"
        time.sleep(0.05)


def _reap(proc: subprocess.Popen[str]) -> None:
    """Kill what is left of ``proc``; close the pipes the test holds to it."""
    if proc.poll() is None:
        kill_tree(proc.pid)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


@contextlib.contextmanager
def _unread(
    argv: list[str], cwd: Path, **kw: object
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``nertz argv…`` (started as a terminal starts a foreground command: SIGINT not
    ignored) with stdout and stderr one full pipe nobody reads, stdin a pipe nothing is
    written to; the process and the pipe's read end."""
    read_end, write_end = _full_pipe()
    stdin_read, stdin_write = os.pipe()
    env = dict(os.environ, NERTZ_HOME=str(cwd / "home"))
    options = {"stdin": stdin_read, "stdout": write_end, "stderr": write_end, "cwd": cwd,
               "env": env, "start_new_session": True, **kw}  # fmt: skip
    proc = subprocess.Popen(foreground(*argv), **options)  # type: ignore[call-overload]
    at_end_of_test(lambda: _reap(proc))
    os.close(write_end)
    os.close(stdin_read)
    try:
        yield proc, read_end
    finally:
        _reap(proc)
        for fd in (read_end, stdin_write):
            with contextlib.suppress(OSError):
                os.close(fd)


def _ends(proc: subprocess.Popen[str], status: int) -> None:
    try:
        proc.wait(timeout=ENDS_WITHIN)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"still running {ENDS_WITHIN:g} s on: blocked on its output") from None
    assert proc.returncode == status, proc.returncode


COMMANDS = {
    "rules": ["rules"],
    "replay": ["replay", *GOLDEN],  # (interactive: its stdin stays open)
    "replay --text": ["replay", "--text", *GOLDEN],
    "audit": ["audit", *GOLDEN],
    "match": ["match", "--players", "3", "--target", "500", "--seed", "4"],
    "keygen --show": ["keygen", "--show", "--key", "{tmp}/key"],
    "play --bots": ["play", "--bots", "1", "--dir", "{tmp}/game"],  # (its refusal, blocked)
}


def _argv(name: str, tmp_path: Path) -> list[str]:
    if name == "keygen --show":
        write_key(tmp_path / "key", Identity.generate())
    return [a.replace("{tmp}", str(tmp_path)) for a in COMMANDS[name]]


@pytest.mark.parametrize("signame", SIGNALS)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_blocked_on_a_full_pipe_answers_a_signal(
    tmp_path: Path, command: str, signame: str
) -> None:
    signum = SIGNALS[signame]
    with _unread(_argv(command, tmp_path), tmp_path) as (proc, _):
        _blocked_writing(proc)
        os.kill(proc.pid, signum)
        _ends(proc, signal_status(ANSWERED_AS[signum]))
    if command == "play --bots":  # (refused before anything was made)
        assert not (tmp_path / "game").exists()


@pytest.mark.parametrize("command", ["rules", "replay", "audit"])
def test_a_command_blocked_on_a_full_pipe_ends_quietly_when_its_reader_goes(
    tmp_path: Path, command: str
) -> None:
    with _unread(_argv(command, tmp_path), tmp_path) as (proc, read_end):
        _blocked_writing(proc)
        os.close(read_end)  # (EPIPE: `nertz … | head`, head gone)
        _ends(proc, 0)


def _audit(*logs: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli", "audit", *map(str, logs)],
        capture_output=True, text=True, timeout=ENDS_WITHIN * 2, check=False,
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_a_demo_blocked_on_a_full_pipe_in_play_answers_a_signal_and_keeps_its_logs(
    tmp_path: Path, signame: str
) -> None:
    """Its output read until its game goes on, then its pipe filled and never read: blocked
    on its progress lines, it has a game going, whose logs it must keep whole."""
    where = tmp_path / "demo"
    argv = ["demo", "--players", "2", "--speed", "2", "--rounds", "1", "--dir", str(where)]
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        foreground(*argv), stdout=write_end, stderr=write_end, stdin=subprocess.DEVNULL,
        cwd=tmp_path, env=dict(os.environ, NERTZ_HOME=str(tmp_path / "home")),
        start_new_session=True,
    )  # fmt: skip
    at_end_of_test(lambda: _reap(proc))
    with os.fdopen(read_end, errors="replace") as reader:
        for line in reader:  # (its end: the demo over, or stopped: a hang's bound is the test's)
            if "to the lake so far" in line:
                break
        else:
            raise AssertionError("its game never went on")
        _fill(write_end)
        os.close(write_end)
        _blocked_writing(proc)
        os.kill(proc.pid, SIGNALS[signame])
        _ends(proc, signal_status(signal.SIGTERM))
    logs = sorted(where.glob("p*.log"))
    assert len(logs) == 2
    done = _audit(*logs)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_node_blocked_on_a_full_pipe_in_play_leaves_cleanly(tmp_path: Path, signame: str) -> None:
    """A node's ``--json`` lines written inside trio: blocked on them, the reader of its
    signals never ran (it hung). Its pipe is filled once it plays (its first line, where it
    is bound, read), so the block comes in the game; it leaves, its log audits clean."""
    ids, spec = node_spec(["ann", "bob"], Rules(target=None, rounds=2), keys=b"qa44", salt=b"qa44")
    (tmp_path / "game.spec").write_bytes(spec.to_wire())
    read_end, write_end = os.pipe()
    procs: list[subprocess.Popen[str]] = []
    for n, identity in enumerate(ids):
        write_key(tmp_path / f"{n}.key", identity)
        argv = ["node", "--key", str(tmp_path / f"{n}.key"),
                "--spec", str(tmp_path / "game.spec"), "--bind", "tcp://127.0.0.1:0",
                "--peers-on-stdin", "--log", str(tmp_path / f"{n}.log"),
                "--json", "--progress", "--speed", "10"]  # fmt: skip
        out = write_end if n == 0 else subprocess.PIPE
        proc = subprocess.Popen(
            foreground(*argv), stdout=out, stderr=out if n == 0 else subprocess.DEVNULL,
            stdin=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        at_end_of_test(lambda proc=proc: _reap(proc))
        procs.append(proc)
    ann, bob = procs
    with os.fdopen(read_end) as reader:
        bound = {spec.seat_of(ids[0].peer_id): json.loads(reader.readline())["endpoint"]}
        assert bob.stdout is not None
        bound[spec.seat_of(ids[1].peer_id)] = json.loads(bob.stdout.readline())["endpoint"]
        for identity, proc in zip(ids, procs, strict=True):
            seat = spec.seat_of(identity.peer_id)
            assert proc.stdin is not None
            proc.stdin.write("".join(f"{s}={e}\n" for s, e in bound.items() if s != seat) + "\n")
            proc.stdin.flush()
        _fill(write_end)  # (from now on nobody reads ann's lines)
        os.close(write_end)
        _blocked_writing(ann)
        os.kill(ann.pid, SIGNALS[signame])
        _ends(ann, signal_status(SIGNALS[signame]))
    bob.wait(timeout=BLOCKS_WITHIN)  # (the game over for it: ann left)
    done = _audit(tmp_path / "0.log", tmp_path / "1.log")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
