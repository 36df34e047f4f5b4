"""A forking launcher of ``python -m cli`` for the tests: a process that has imported the
``nertz`` command's modules once and forks a child for each command asked of it (session 36).

Each ``nertz`` process a test starts spent about 0.3-0.5 s of CPU importing the same modules
(trio, ZeroMQ, the protocol, the command's own module) before doing its few milliseconds of
work: the refusals, usage errors and quick commands that :func:`cli_helpers.nertz` runs to
their end were mostly import. Here one server per pytest worker imports them and each child,
forked from it, runs ``cli`` as ``python -m cli ARGV`` would, with the test's arguments,
environment, working directory and standard streams, and exits as it would: the same status
(a negative one for a signal), the same output. The product knows nothing of it.

Theory of operation:

- The server (``python tests/forkserver.py``) imports :data:`PRELOADED` and no more: no
  ZeroMQ context, no trio run, no thread exists when it forks (a fork copies only the thread
  that forks, and a context's I/O threads would be missing in the child). It writes nothing
  to its standard streams, so the child inherits empty buffers.
- It listens on a Unix socket. A request is one JSON message (argv, environment, directory)
  with the child's stdin, stdout and stderr passed as file descriptors (``SCM_RIGHTS``). The
  server forks, answers the child's pid, and answers its wait status once it ended (a pidfd
  per child, in the server's one selector loop).
- The child closes the server's sockets, puts the passed descriptors on 0, 1 and 2, takes the
  directory, the environment and ``sys.path[0]`` that ``python -m`` gives (the working
  directory), then returns out of the server's loop to the top of this script, which runs
  ``cli`` as ``__main__`` (``runpy``): its ``sys.exit`` ends the interpreter as a fresh
  process's would (threads joined, atexit handlers run, streams flushed; Ctrl-C's
  KeyboardInterrupt kills it by SIGINT).
- A child runs with the interpreter the server started with: the server is used only for an
  environment whose variables that Python reads at its start (``PYTHON*``, the locale's) are
  the server's own (:func:`Launcher.serves`); another is run as a real process.
- :class:`ForkedPopen` is a :class:`subprocess.Popen` whose ``_execute_child`` asks the
  server instead of forking and whose waits read the status the server sends: the test
  holds the child's real pid (signals go to the child itself, ``start_new_session`` makes it
  a session leader, ``cli_helpers.kill_tree`` finds what it started), its pipes and status.
- A command line that sets SIGINT before it execs ``python -m cli``
  (:func:`cli_helpers.foreground`, :func:`cli_helpers.background`: :func:`command_line`) is
  served too: the child sets SIGINT as that line leaves it for Python's start
  (:func:`_signals`; session 37). So is a program in a pseudo-terminal (tests/forked_tty.py:
  the child a session leader whose controlling terminal is the pty, ``tty``; the signals a
  ``preexec_fn`` set to their default, ``sig_dfl``), by a server of its own for its locale
  variables (:func:`launcher_for`).
- The signals a child sets are blocked from before the fork until it has set them, then it
  starts as a process of its own starts: SIGINT at its default while Python starts (a Ctrl-C
  then kills it silently), then Python's handler (:func:`_signals`; session 39: a signal
  sent as soon as the pid was known could reach the child before Python's after-fork code,
  which forgot it, and the program ran on).
- The server ends when its stdin (a pipe from the pytest worker) closes.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import gc
import io
import json
import locale
import os
import select
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

#: The modules the server imports before it forks: every command's (cli/commands.py) and what
#: they import. Imported once here, each child starts with them.
PRELOADED = (
    "cli.main",
    "cli.parsers",
    "cli.audit_cmd",
    "cli.demo",
    "cli.keygen_cmd",
    "cli.lobby_cmd",
    "cli.match_cmd",
    "cli.node_cmd",
    "cli.play",
    "cli.replay_cmd",
    "cli.watch",
    "cli.web_cmd",
)


def startup_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``env`` that Python reads as it starts (its own ``PYTHON*`` ones,
    and the locale's, which choose the standard streams' encoding)."""
    return {
        k: v
        for k, v in env.items()
        if (k.startswith(("PYTHON", "LC_")) or k in ("LANG", "LANGUAGE")) and k not in _APPLIED
    }


#: The start-up variables a child applies itself (:func:`_streams`), so that a test asking
#: for them is served by the server all the same (the browser tests' ``PYTHONUNBUFFERED``).
_APPLIED = frozenset({"PYTHONUNBUFFERED"})


_MAX_REQUEST = 1 << 20


# --- the server ------------------------------------------------------------------------------


def _preload() -> None:
    import importlib

    for name in PRELOADED:
        importlib.import_module(name)


def serve(path: str) -> dict[str, Any] | None:
    """Serve requests on the Unix socket ``path`` until stdin closes (``None``); in a forked
    child, the child's request, its descriptors and directory already in place."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "stdin")
    children: dict[int, tuple[int, socket.socket]] = {}  # pidfd: (pid, connection)
    while True:
        for key, _ in selector.select():
            if key.data == "stdin":
                if not os.read(sys.stdin.fileno(), 4096):
                    return None
            elif key.data == "accept":
                conn, _ = listener.accept()
                request = _receive(conn)
                if request is None:
                    conn.close()
                    continue
                fds = request.pop("fds")
                sys.stdout.flush()
                sys.stderr.flush()
                # The signals the child sets blocked across the fork, until it has set them
                # (:func:`_signals`): one sent as the pid is known can reach the child before
                # Python's after-fork code, which forgets a signal its handler took then
                # (session 39: a Ctrl-C "at once" lost, the program played on, 5 runs in 9).
                mask = signal.pthread_sigmask(signal.SIG_BLOCK, _held(request))
                pid = os.fork()
                if pid == 0:  # the child: leave the server behind, become the command
                    gc.enable()
                    selector.close()
                    listener.close()
                    for pidfd, (_, other) in children.items():
                        os.close(pidfd)
                        other.close()
                    conn.close()
                    _take(request, fds, mask)
                    return request
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                for fd in fds:
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                children[pidfd] = (pid, conn)
                selector.register(pidfd, selectors.EVENT_READ, "child")
                with contextlib.suppress(OSError):
                    conn.sendall(struct.pack("!q", pid))
            else:  # a child ended: its wait status to whoever asked for it
                pidfd = key.fd
                selector.unregister(pidfd)
                pid, conn = children.pop(pidfd)
                os.close(pidfd)
                _, status = os.waitpid(pid, 0)
                with contextlib.suppress(OSError):
                    conn.sendall(struct.pack("!q", status))
                conn.close()


def _receive(conn: socket.socket) -> dict[str, Any] | None:
    """The request on ``conn``: its JSON, with its descriptors under ``fds``."""
    msg, fds, _, _ = socket.recv_fds(conn, _MAX_REQUEST, 3)
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    request: dict[str, Any] = json.loads(msg)
    request["fds"] = fds
    return request


def _held(request: Mapping[str, Any]) -> set[int]:
    """The signals a child of ``request`` sets (:func:`_signals`): SIGINT, and ``sig_dfl``'s."""
    return {signal.SIGINT, *map(signal.Signals, request.get("sig_dfl", ()))}


def _take(request: dict[str, Any], fds: Sequence[int], mask: set[signal.Signals]) -> None:
    """In the child: the request's streams on 0, 1 and 2, its directory, environment and
    arguments, ``sys.path[0]`` as ``python -m`` sets it; then its signals, and ``mask`` (the
    server's blocked signals before the fork) as the child's (:func:`_signals`)."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)  # (inheritable, as a new process's standard streams are)
    for fd in set(fds):
        if fd > 2:
            os.close(fd)
    if request.get("session"):
        os.setsid()
        if request.get("tty"):  # (the terminal on 0, 1 and 2 its controlling terminal)
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _streams(unbuffered=bool(os.environ.get("PYTHONUNBUFFERED")))
    sys.path[0] = os.getcwd()
    sys.argv[:] = ["-m", *request["argv"]]
    if request.get("hold"):  # (a test's gate: the child waits here for a byte, signals held)
        with open(request["hold"], "rb") as gate:
            gate.read(1)
    _signals(request.get("sigint"), request.get("sig_dfl", ()), mask)


#: How :func:`command_line` starts a command whose SIGINT is set (``sigint``): as a terminal
#: starts a foreground command (``"default"``: SIGINT at its default and unblocked, then
#: ``python -m cli`` exec'd in the same process), or as a shell without job control starts
#: ``nertz … &`` (``"ignore"``: SIGINT ignored, then exec'd).
SIGINT_SCRIPTS = {
    "default": (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
        "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
        "os.execv(sys.executable, [sys.executable, '-m', 'cli', *sys.argv[1:]])"
    ),
    "ignore": (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
        "os.execv(sys.executable, [sys.executable, '-m', 'cli', *sys.argv[1:]])"
    ),
}


def command_line(argv: Sequence[str], sigint: str | None = None) -> list[str]:
    """The command line of a process of its own running ``nertz ARGV``: ``python -m cli
    ARGV``, or with ``sigint`` its script of :data:`SIGINT_SCRIPTS` (``python -c SCRIPT
    ARGV``)."""
    if sigint is None:
        return [sys.executable, "-m", "cli", *argv]
    return [sys.executable, "-c", SIGINT_SCRIPTS[sigint], *argv]


def _signals(how: str | None, sig_dfl: Sequence[int], mask: set[signal.Signals]) -> None:
    """In the child, its signals still blocked since the fork: the signals ``sig_dfl`` at
    their default (as a ``preexec_fn`` leaves them), SIGINT as :data:`SIGINT_SCRIPTS` leaves
    it for ``python -m cli`` (``how``; ``None``: as the server's start left it), then the
    blocked signals ``mask`` as the child's, and SIGINT as Python's start sets it.

    A process of its own starts with SIGINT at its default (unless ignored) until Python
    installs its handler: a Ctrl-C sent that early kills it by the signal, silently. So here:
    where Python's handler is to be, SIGINT is at its default when the signals are unblocked
    (one sent since the fork ends the child so), then Python's handler (KeyboardInterrupt);
    ignored, it stays ignored (the kernel drops one pending). Linux keeps a blocked signal
    pending even while it is ignored, so ``sig_dfl``'s sent since the fork are not lost."""
    for signum in sig_dfl:
        signal.signal(signum, signal.SIG_DFL)
    if how == "default":  # (SIG_DFL and unblocked, then exec'd: Python installs its handler)
        mask = mask - {signal.SIGINT}
    elif how == "ignore":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    handled = signal.getsignal(signal.SIGINT) is signal.default_int_handler or how == "default"
    if handled:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if handled:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _streams(*, unbuffered: bool) -> None:
    """In the child: stdout and stderr as Python makes them at its start on the descriptors
    now in place, with ``PYTHONUNBUFFERED``'s unbuffered binary layer where it is set (the
    server's own were made by its environment, which may differ)."""
    for name, fd in (("stdout", 1), ("stderr", 2)):
        old = getattr(sys, name)
        raw = io.FileIO(fd, "w", closefd=False)
        binary: Any = raw if unbuffered else io.BufferedWriter(raw)
        new = io.TextIOWrapper(
            binary,
            encoding=old.encoding,
            errors=old.errors,
            line_buffering=os.isatty(fd) or (name == "stderr" and not unbuffered),
            write_through=unbuffered,
        )
        setattr(sys, name, new)
        setattr(sys, f"__{name}__", new)


# --- the client ------------------------------------------------------------------------------


class Launcher:
    """A pytest worker's handle on its server, started at its first use (:func:`launcher`)."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._dir = tempfile.mkdtemp(prefix="nertz-forkserver-")
        self.path = os.path.join(self._dir, "socket")
        self.environment = startup_environment(os.environ if env is None else env)
        self.server = subprocess.Popen(
            [sys.executable, __file__, self.path],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=self._dir,
            env=None if env is None else dict(env),
        )

    def serves(self, env: Mapping[str, str]) -> bool:
        """Whether a child of the server starts as a process given ``env`` would: Python's
        start-up variables as the server's."""
        return startup_environment(env) == self.environment

    def _connect(self) -> socket.socket:
        from p2p_nertz.testing.said import READY_BOUND
        from p2p_nertz.testing.stalls import describe

        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline = time.monotonic() + READY_BOUND  # (a hang's bound: its start at a load of 40)
        while True:
            try:
                conn.connect(self.path)
                return conn
            except (FileNotFoundError, ConnectionRefusedError):
                if self.server.poll() is not None:
                    conn.close()
                    raise RuntimeError(f"the fork server ended: {self.server.returncode}") from None
                if time.monotonic() > deadline:
                    conn.close()
                    doing = describe(self.server.pid)
                    raise RuntimeError(f"the fork server never listened: {doing}") from None
                # (the server still importing: its socket appears once it listens)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.server.wait(0.02)

    def run(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | os.PathLike[str] | None,
        stdin: int,
        timeout: float | None,
        args: Sequence[str],
    ) -> subprocess.CompletedProcess[str]:
        """``python -m cli ARGV`` run to its end in a child of the server, as
        ``subprocess.run(args, stdin=stdin, capture_output=True, text=True, env=env,
        cwd=cwd, timeout=timeout)`` runs it: ``args`` is the command line it reports."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            try:
                conn, pid = self.start(argv, env=env, cwd=cwd, streams=(stdin, out_w, err_w))
            finally:
                os.close(out_w)
                os.close(err_w)
            with conn:
                return _collect(conn, pid, (out_r, err_r), timeout, list(args))
        finally:
            os.close(out_r)
            os.close(err_r)

    def start(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | os.PathLike[str] | None,
        streams: tuple[int, int, int],
        session: bool = False,
        sigint: str | None = None,
        tty: bool = False,
        sig_dfl: Sequence[int] = (),
        hold: str | None = None,
    ) -> tuple[socket.socket, int]:
        """Fork a child running ``python -m cli ARGV`` on the descriptors ``streams`` (its
        stdin, stdout and stderr), in a session of its own if ``session`` (with ``tty``, the
        terminal ``streams`` are on its controlling terminal, as a terminal's shell starts a
        command), its SIGINT as :func:`command_line`'s with ``sigint`` leaves it, the signals
        ``sig_dfl`` at their default (what a ``preexec_fn`` setting them so leaves for the
        program it execs), held (``hold``: a FIFO's path) until a byte is written to
        ``hold``, just before it sets its signals: the connection that will say its wait
        status, and its pid."""
        request = {
            "argv": list(argv),
            "env": dict(env),
            "cwd": os.path.abspath(cwd if cwd is not None else os.getcwd()),
            "session": session,
            "sigint": sigint,
            "tty": tty,
            "sig_dfl": [int(signum) for signum in sig_dfl],
            "hold": hold,
        }
        conn = self._connect()
        try:
            socket.send_fds(conn, [json.dumps(request).encode()], list(streams))
            return conn, read_number(conn)
        except BaseException:
            conn.close()
            raise

    def close(self) -> None:
        """End the server (its children run on to their own end) and remove its socket."""
        assert self.server.stdin is not None
        self.server.stdin.close()
        try:
            self.server.wait(10)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        with contextlib.suppress(OSError):
            os.rmdir(self._dir)


class ForkedPopen(subprocess.Popen[Any]):
    """A :class:`subprocess.Popen` of ``python -m cli ARGV`` whose process is a child of the
    server: its pipes, ``pid``, signals (``send_signal``, ``kill``, ``terminate``: sent to
    the child itself), ``poll``, ``wait`` and ``communicate`` as a process's of its own; its
    status read from the server, its parent (:func:`popen` says when it is used)."""

    def __init__(
        self, launcher: Launcher, argv: Sequence[str], *, sigint: str | None = None, **kw: Any
    ) -> None:
        self._launcher = launcher
        self._argv = list(argv)
        self._sigint = sigint
        self._status: socket.socket | None = None
        super().__init__(command_line(argv, sigint), **kw)

    def _execute_child(  # type: ignore[override]  # noqa: PLR0917 (subprocess's own)
        self, args: Any, executable: Any, preexec_fn: Any, close_fds: Any, pass_fds: Any,
        cwd: Any, env: Any, startupinfo: Any, creationflags: Any, shell: Any,
        p2cread: int, p2cwrite: int, c2pread: int, c2pwrite: int, errread: int, errwrite: int,
        restore_signals: Any, gid: Any, gids: Any, uid: Any, umask: Any,
        start_new_session: bool, process_group: Any,
    ) -> None:  # fmt: skip
        try:
            streams = (
                p2cread if p2cread != -1 else 0,
                c2pwrite if c2pwrite != -1 else 1,
                errwrite if errwrite != -1 else 2,
            )
            self._status, self.pid = self._launcher.start(
                self._argv, env=os.environ if env is None else env, cwd=cwd,
                streams=streams, session=start_new_session, sigint=self._sigint,
            )  # fmt: skip
            self._child_created = True
        finally:
            self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)

    def _try_wait(self, wait_flags: int) -> tuple[int, int]:
        """The child's (pid, wait status) from the server; (0, 0) if it still runs and
        ``wait_flags`` says not to wait. (Its callers hold ``_waitpid_lock``.)"""
        conn = self._status
        if conn is None:  # (read before: the status is said once)
            return self.pid, 0
        if wait_flags & os.WNOHANG:
            ready, _, _ = select.select([conn], [], [], 0)
            if not ready:
                return 0, 0
        try:
            status = read_number(conn)
        finally:
            self._status = None
            conn.close()
        return self.pid, status

    def _internal_poll(self, _deadstate: int | None = None, **_: Any) -> int | None:
        if self.returncode is None and self._waitpid_lock.acquire(False):
            try:
                if self.returncode is None:
                    pid, status = self._try_wait(os.WNOHANG)
                    if pid == self.pid:
                        self._handle_exitstatus(status)
            except (OSError, RuntimeError):
                if _deadstate is not None:
                    self.returncode = _deadstate
            finally:
                self._waitpid_lock.release()
        return self.returncode

    def __del__(self) -> None:
        status = getattr(self, "_status", None)
        if status is not None and self.returncode is not None:
            status.close()
        super().__del__()


def popen(
    launcher: Launcher | None, argv: Sequence[str], *, sigint: str | None = None, **kw: Any
) -> subprocess.Popen[Any]:
    """``subprocess.Popen(command_line(argv, sigint), **kw)``, its process forked by
    ``launcher``'s server where that starts as such a process would (no ``preexec_fn``,
    ``pass_fds``, user, group, umask, process group, executable or shell asked for, and
    :meth:`Launcher.serves` the environment), else a process of its own."""
    plain = {"stdin", "stdout", "stderr", "text", "cwd", "env", "start_new_session",
             "bufsize", "encoding", "errors", "universal_newlines"}  # fmt: skip
    env = kw.get("env")
    if (
        launcher is None
        or set(kw) - plain
        or not launcher.serves(os.environ if env is None else env)
    ):
        return subprocess.Popen(command_line(argv, sigint), **kw)
    return ForkedPopen(launcher, argv, sigint=sigint, **kw)


def read_number(conn: socket.socket) -> int:
    """The next number the server sends on ``conn`` (a pid, then a status)."""
    data = b""
    while len(data) < 8:
        chunk = conn.recv(8 - len(data))
        if not chunk:
            raise RuntimeError("the fork server closed the connection")
        data += chunk
    (number,) = struct.unpack("!q", data)
    return int(number)


def _collect(
    conn: socket.socket,
    pid: int,
    pipes: tuple[int, int],
    timeout: float | None,
    args: list[str],
) -> subprocess.CompletedProcess[str]:
    """Read the child's stdout and stderr (``pipes``) to their ends and its status, as
    ``subprocess.run`` does (past ``timeout``: the child and everything under it killed,
    then ``TimeoutExpired`` with what it wrote)."""
    from cli_helpers import kill_tree

    chunks: dict[int, list[bytes]] = {fd: [] for fd in pipes}
    status: list[int] = []
    deadline = None if timeout is None else time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        for fd in pipes:
            selector.register(fd, selectors.EVENT_READ)
        selector.register(conn, selectors.EVENT_READ)
        while selector.get_map():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                kill_tree(pid)
                out, err = (_text(b"".join(chunks[fd])) for fd in pipes)
                raise subprocess.TimeoutExpired(args, timeout or 0, out, err)
            for key, _ in selector.select(left):
                if key.fileobj is conn:
                    selector.unregister(conn)
                    status.append(os.waitstatus_to_exitcode(read_number(conn)))
                elif data := os.read(key.fd, 65536):
                    chunks[key.fd].append(data)
                else:
                    selector.unregister(key.fd)
    out, err = (_text(b"".join(chunks[fd])) for fd in pipes)
    return subprocess.CompletedProcess(args, status[0], out, err)


def _text(data: bytes) -> str:
    """Bytes as ``subprocess`` gives them with ``text=True``: the locale's encoding, universal
    newlines."""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


_LAUNCHER: list[Launcher] = []
_OTHERS: dict[tuple[tuple[str, str], ...], Launcher] = {}
_LOCK = threading.Lock()


def launcher() -> Launcher:
    """This process's launcher, its server started at the first call and ended when this
    process exits."""
    with _LOCK:
        if not _LAUNCHER:
            _LAUNCHER.append(Launcher())
            atexit.register(_LAUNCHER[0].close)
        return _LAUNCHER[0]


def launcher_for(env: Mapping[str, str]) -> Launcher:
    """A launcher whose server serves ``env`` (:meth:`Launcher.serves`): :func:`launcher`'s
    if it does, else one started with ``env``, kept for the next test asking for the same
    start-up variables (the terminal tests' locale: tests/test_cli_play.py ``Tty``) and ended
    when this process exits."""
    first = launcher()
    if first.serves(env):
        return first
    key = tuple(sorted(startup_environment(env).items()))
    with _LOCK:
        if key not in _OTHERS:
            _OTHERS[key] = Launcher(env)
            atexit.register(_OTHERS[key].close)
        return _OTHERS[key]


if __name__ == "__main__":
    sys.path.pop(0)  # (this script's directory: a child sees the path ``python -m`` gives)
    sys.path.insert(0, "")
    # The modules imported with the collector off, then frozen (moved out of its reach): a
    # child's collections, and its exit's, would read every object of them and, through their
    # headers, write to it, copying the server's pages one by one (session 36: 7,900 pages
    # copied and 0.15 CPU-s for a child printing ``nertz --version``; frozen, 0.04 CPU-s).
    gc.disable()
    _preload()
    gc.freeze()
    if serve(sys.argv[1]) is None:
        sys.exit(0)
    import runpy

    runpy.run_module("cli", run_name="__main__", alter_sys=True)
