"""The tests' forking launcher (tests/forkserver.py): a command run as a child of the server
answers as ``python -m cli`` run as a process of its own does: the same status, stdout and
stderr, in the test's directory and environment; a child killed by a signal says which; one
past its timeout is killed with what it started; an environment Python would start otherwise
in is not served."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import forkserver
import pytest
from cli_helpers import (
    FORKSERVER_ENV,
    background,
    cli_popen,
    cli_run,
    descendants,
    foreground,
    make_key,
    nertz,
    nertz_process,
)

from cli.main import build_parser
from cli.play import bots_game
from p2p_nertz.testing.said import first_line, reap
from tests.test_replay import GOLDEN

pytestmark = pytest.mark.timeout(120)


def _both(monkeypatch: pytest.MonkeyPatch, *argv: str, **kw: object) -> tuple[object, object]:
    """``nertz ARGV`` through the server, then as a process of its own: (status, stdout,
    stderr) of each."""
    forked = nertz(*argv, **kw)  # type: ignore[arg-type]
    with monkeypatch.context() as m:
        m.setenv(FORKSERVER_ENV, "0")
        alone = nertz(*argv, **kw)  # type: ignore[arg-type]
    return (
        (forked.returncode, forked.stdout, forked.stderr),
        (alone.returncode, alone.stdout, alone.stderr),
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["rules"],
        ["rules", "no-such-topic"],
        ["no-such-command"],
        ["node", "--key", "missing.key", "--spec", "missing.spec", "--log", "x.log"],
        ["audit", "missing.log"],
    ],
)
def test_forkserver_child_answers_as_its_own_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    forked, alone = _both(monkeypatch, *argv, cwd=tmp_path)
    assert forked == alone
    assert forked[0] in (0, 1, 2), forked  # (each of them ran: none of them is a launch failure)


def test_forkserver_child_takes_the_directory_and_environment_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key made at a path relative to the directory given, shown from ``$NERTZ_HOME``."""
    (tmp_path / "a").mkdir()
    done = nertz("keygen", "--key", "made.key", cwd=tmp_path / "a")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a" / "made.key").is_file()
    home = tmp_path / "home"
    make_key(home / "key")
    forked, alone = _both(monkeypatch, "keygen", "--show", home=home)
    assert forked == alone
    assert forked[0] == 0, forked


def _waiting_watch(tmp_path: Path) -> list[str]:
    """A ``nertz watch --web --no-open``: it serves its page until stopped."""
    spec = bots_game(build_parser("play").parse_args(["play", "--bots", "1", "--seed", "1"]))[1]
    (tmp_path / "game.spec").write_bytes(spec.to_wire())
    make_key(tmp_path / "spy.key")
    return [
        "watch", "--spec", str(tmp_path / "game.spec"), "--bind", "127.0.0.1:0",
        "--key", str(tmp_path / "spy.key"), "--web", "--no-open",
    ]  # fmt: skip


def test_forkserver_child_killed_by_a_signal_says_which(tmp_path: Path) -> None:
    argv = _waiting_watch(tmp_path)
    server = forkserver.launcher().server
    before = descendants(server.pid)
    done: list[subprocess.CompletedProcess[str]] = []
    runner = threading.Thread(target=lambda: done.append(nertz(*argv, timeout=100)))
    runner.start()
    try:
        started: set[int] = set()
        while not started and runner.is_alive():  # (the child forked: a condition, polled)
            started = {pid for pid in descendants(server.pid) - before if _is_child(pid, server)}
            runner.join(0.05)
        assert started, done
        for pid in started:
            os.kill(pid, signal.SIGKILL)
    finally:
        runner.join(100)
    assert done[0].returncode == -signal.SIGKILL, done[0]


def _is_child(pid: int, server: subprocess.Popen[bytes]) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1]) == server.pid
    except OSError:
        return False


def test_forkserver_child_past_its_timeout_is_killed_with_what_it_started(
    tmp_path: Path,
) -> None:
    server = forkserver.launcher().server
    before = descendants(server.pid)
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        nertz(*_waiting_watch(tmp_path), timeout=3)
    assert raised.value.cmd[:3] == [sys.executable, "-m", "cli"]
    left = descendants(server.pid) - before
    for pid in left:  # (killed, maybe not reaped yet: a zombie at most, or reaped since)
        try:
            with open(f"/proc/{pid}/stat") as f:
                assert f.read().rsplit(")", 1)[1].split()[0] == "Z", pid
        except FileNotFoundError:
            continue  # (reaped between the listing and the read: gone, as it should be)


def test_forkserver_serves_only_an_environment_python_starts_alike() -> None:
    launcher = forkserver.launcher()
    env = dict(os.environ)
    assert launcher.serves(env)
    assert not launcher.serves({**env, "PYTHONIOENCODING": "ascii"})
    assert not launcher.serves({**env, "LC_ALL": "C" if env.get("LC_ALL") != "C" else "C.UTF-8"})
    assert launcher.serves({**env, "NERTZ_HOME": "/elsewhere", "COLUMNS": "20"})
    # (the child makes its streams as PYTHONUNBUFFERED says: served either way)
    unbuffered = {k: v for k, v in env.items() if k != "PYTHONUNBUFFERED"}
    assert launcher.serves(unbuffered)
    assert launcher.serves({**unbuffered, "PYTHONUNBUFFERED": "1"})


_PROBE = (
    "import sys; print(type(sys.stdout.buffer).__name__, sys.stdout.write_through,"
    " sys.stdout.line_buffering, type(sys.stderr.buffer).__name__, sys.stderr.write_through,"
    " sys.stderr.line_buffering)"
)


@pytest.mark.parametrize("unbuffered", [False, True])
@pytest.mark.parametrize("server_unbuffered", [False, True])
def test_forkserver_child_makes_its_streams_as_pythonunbuffered_says(
    unbuffered: bool, server_unbuffered: bool
) -> None:
    """A child's stdout and stderr are as a process's started with or without
    ``PYTHONUNBUFFERED`` (served either way), whatever the server's own were."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    started = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env={**env, "PYTHONUNBUFFERED": "1"} if unbuffered else env,
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    remade = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import forkserver; forkserver._streams(unbuffered={unbuffered}); {_PROBE}",
        ],
        env={**env, "PYTHONUNBUFFERED": "1"} if server_unbuffered else env,
        cwd=Path(forkserver.__file__).parent,
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert remade.stdout == started.stdout
    assert started.stdout.split()[0] == ("FileIO" if unbuffered else "BufferedWriter")


@pytest.mark.parametrize("argv", [["rules"], ["no-such-command"]])
def test_forkserver_process_reads_and_writes_as_its_own(
    monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    forked = nertz_process(*argv, **pipes, text=True)
    assert isinstance(forked, forkserver.ForkedPopen)
    with monkeypatch.context() as m:
        m.setenv(FORKSERVER_ENV, "0")
        alone = nertz_process(*argv, **pipes, text=True)
    assert not isinstance(alone, forkserver.ForkedPopen)
    said = [(*proc.communicate("\n", timeout=60), proc.returncode) for proc in (forked, alone)]
    assert said[0] == said[1]


def test_forkserver_process_is_signalled_polled_and_waited_for_itself(tmp_path: Path) -> None:
    proc = nertz_process(
        *_waiting_watch(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert isinstance(proc, forkserver.ForkedPopen)
        assert proc.stdout is not None
        assert first_line(proc, "the watch").startswith("http://127.0.0.1:")  # (serving its page)
        assert proc.poll() is None
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(0.2)
        assert _is_child(proc.pid, forkserver.launcher().server)
        assert os.getsid(proc.pid) == proc.pid  # (start_new_session)
        proc.kill()
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        assert proc.poll() == -signal.SIGKILL
    finally:
        reap(proc)


def test_forkserver_cli_run_answers_as_subprocess_run() -> None:
    command = [sys.executable, "-m", "cli", "no-such-command"]
    forked = cli_run(command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    alone = subprocess.run(
        command, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False
    )
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        alone.returncode, alone.stdout, alone.stderr,
    )  # fmt: skip
    assert forked.returncode == 2, forked
    with pytest.raises(subprocess.CalledProcessError) as raised:
        cli_run(command, capture_output=True, check=True, stdin=subprocess.DEVNULL)
    assert raised.value.returncode == 2


#: What a process says of its SIGINT at its start: Python's handler, ignored or at its
#: default, and the kernel's masks of the signals it ignores and blocks.
_SIGINT_PROBE = """
import signal
handler = signal.getsignal(signal.SIGINT)
with open("/proc/self/status") as f:
    masks = [line for line in f.read().splitlines() if line.startswith(("SigIgn", "SigBlk"))]
print(handler is signal.default_int_handler, handler == signal.SIG_IGN, *masks)
"""


def _runner_ignoring_sigint() -> None:
    """(In a child before it starts Python:) SIGINT ignored, as a shell without job control
    leaves it for a command it starts in the background."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("ignored", [False, True], ids=["runner-at-default", "runner-ignoring"])
@pytest.mark.parametrize("sigint", ["default", "ignore"])
def test_forkserver_child_starts_with_sigint_as_its_command_line_leaves_it(
    tmp_path: Path, sigint: str, ignored: bool
) -> None:
    """A child asked for ``sigint`` (:func:`cli_helpers.foreground`'s ``"default"``,
    :func:`cli_helpers.background`'s ``"ignore"``) starts with the SIGINT a process of that
    command line starts with: Python's handler or ignored, the kernel's ignored and blocked
    masks alike, whether the runner that started the server ignores SIGINT or not. (The
    process of its own runs a probe as ``cli``: its directory's, before the real one.)"""
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "__main__.py").write_text(_SIGINT_PROBE)
    runner = {"preexec_fn": _runner_ignoring_sigint} if ignored else {}
    alone = subprocess.run(
        forkserver.command_line([], sigint), cwd=tmp_path, capture_output=True, text=True,
        check=True, **runner,  # type: ignore[arg-type]
    )  # fmt: skip
    # A child of a server started as the runner is: Python's start, then what the child does.
    start = (  # (its signals blocked before the fork, as the server blocks them)
        "import forkserver, signal\n"
        "mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n"
        f"forkserver._signals({sigint!r}, (), mask)\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", start + _SIGINT_PROBE],
        cwd=Path(forkserver.__file__).parent, capture_output=True, text=True, check=True,
        **runner,  # type: ignore[arg-type]
    )  # fmt: skip
    assert child.stdout == alone.stdout
    assert alone.stdout.split()[:2] == (
        ["True", "False"] if sigint == "default" else ["False", "True"]
    )


@pytest.mark.parametrize("sigint", [None, "default", "ignore"])
def test_forkserver_child_sent_sigint_before_python_would_have_started_ends_as_such(
    tmp_path: Path, sigint: str | None
) -> None:
    """A Ctrl-C that reaches a child before it runs ``cli`` (sent as soon as its pid is
    known: it may still be in the server's code, even before Python's after-fork code) ends
    it as it ends a process of its own still starting: killed by SIGINT, silently, where
    SIGINT is to get Python's handler; ignored where the command line ignores it (the command
    then runs). Session 39: such a signal was taken by the server's handler in the child
    (a KeyboardInterrupt's traceback of the server's code) or, before Python's after-fork code,
    forgotten (the program played on: the terminal tests' Ctrl-C "at once", 5 runs in 9).
    The child is held at a gate while the signal is sent."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        conn, pid = forkserver.launcher().start(
            ["--version"], env=os.environ, cwd=tmp_path, streams=(0, out_w, err_w),
            sigint=sigint, hold=str(gate),
        )  # fmt: skip
        os.close(out_w)
        os.close(err_w)
        with conn, open(gate, "wb") as held:  # (opened: the child is at its gate)
            os.kill(pid, signal.SIGINT)
            held.write(b"go")
            held.close()
            status = os.waitstatus_to_exitcode(forkserver.read_number(conn))
        out, err = (os.read(fd, 65536).decode() for fd in (out_r, err_r))
    finally:
        os.close(out_r)
        os.close(err_r)
    if sigint == "ignore":
        assert (status, out.startswith("nertz "), err) == (0, True, ""), (out, err)
    else:
        assert (status, out, err) == (-signal.SIGINT, "", "")


@pytest.mark.parametrize("form", [foreground, background])
def test_forkserver_foreground_and_background_forms_stop_as_their_own_processes(
    tmp_path: Path, form: Callable[..., list[str]]
) -> None:
    """``cli_popen(foreground(…))`` and ``background(…)`` are forked from the server, with
    their command line; a Ctrl-C's SIGINT stops a foreground one, and SIGTERM a background
    one, as they stop the command line's process of its own (``nertz replay --web``, serving
    its page until stopped)."""
    command = form("replay", "--web", "--no-open", *map(str, sorted(GOLDEN.glob("p*.log"))))
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "stdin": subprocess.DEVNULL}
    forked = cli_popen(command, **pipes, text=True)
    alone = subprocess.Popen(command, **pipes, text=True)  # type: ignore[call-overload]
    try:
        assert isinstance(forked, forkserver.ForkedPopen) and forked.args == command
        assert not isinstance(alone, forkserver.ForkedPopen)
        for proc in (forked, alone):
            assert proc.stdout is not None
            assert proc.stdout.readline().startswith("http://127.0.0.1:")  # (serving)
            proc.send_signal(signal.SIGINT if form is foreground else signal.SIGTERM)
        ended = [(*proc.communicate(timeout=60), proc.returncode) for proc in (forked, alone)]
        assert ended[0] == ended[1]
        assert ended[0][2] != 0 and ended[0][1].splitlines() == ["nertz replay: interrupted"]
    finally:
        for proc in (forked, alone):
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
