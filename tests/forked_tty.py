"""``nertz`` in a pseudo-terminal, forked from the fork server (tests/forkserver.py) rather than
started afresh: the terminal tests' program (tests/test_cli_play.py ``Tty``), session 37.

:class:`ForkedSpawn` is a :class:`pexpect.spawn` whose ``_spawnpty`` makes the pty as
``ptyprocess`` does (a pair of the system's, the window size set on it) and asks the server for
the child: in a session of its own whose controlling terminal is the pty, on it as 0, 1 and 2,
SIGHUP at its default as the tests' ``preexec_fn`` leaves it. Everything else is pexpect's:
reads, writes, ``sendintr`` (the terminal's interrupt character: the kernel sends SIGINT to the
child's foreground group), ``kill`` and ``close`` (signals to the child's real pid). Only the
waits differ: the child is the server's, which says its wait status
(:class:`ForkedPtyProcess`)."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import socket
import struct
import sys
import termios
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import forkserver
import pexpect
import ptyprocess


class ForkedPtyProcess(ptyprocess.PtyProcess):  # type: ignore[misc]
    """A :class:`ptyprocess.PtyProcess` whose process is a child of the fork server: its
    ``isalive`` and ``wait`` read the wait status the server sends on ``status``."""

    def __init__(self, pid: int, fd: int, status: socket.socket) -> None:
        super().__init__(pid, fd)
        self._status: socket.socket | None = status

    def _waited(self, block: bool) -> int | None:
        """The child's wait status from the server (``None``: it runs, and not ``block``)."""
        conn = self._status
        if conn is None:
            raise ptyprocess.PtyProcessError("the child's status was read already")
        if not block and not select.select([conn], [], [], 0)[0]:
            return None
        try:
            return forkserver.read_number(conn)
        finally:
            self._status = None
            conn.close()

    def _took(self, status: int) -> None:
        """``status`` noted as ``ptyprocess`` notes the status ``waitpid`` gave."""
        self.status = status
        if os.WIFEXITED(status):
            self.exitstatus, self.signalstatus = os.WEXITSTATUS(status), None
        else:
            self.exitstatus, self.signalstatus = None, os.WTERMSIG(status)
        self.terminated = True

    def isalive(self) -> bool:
        if self.terminated:
            return False
        status = self._waited(block=self.flag_eof)
        if status is None:
            return True
        self._took(status)
        return False

    def wait(self) -> int | None:
        if not self.terminated:
            status = self._waited(block=True)
            assert status is not None
            self._took(status)
        return self.exitstatus  # type: ignore[no-any-return]

    def __del__(self) -> None:
        super().__del__()
        if self._status is not None:  # (a child left running: its status is nobody's)
            self._status.close()


class ForkedSpawn(pexpect.spawn):  # type: ignore[misc]
    """:class:`pexpect.spawn` of ``python -m cli ARGV``, its child forked by ``launcher``'s
    server, the signals ``sig_dfl`` set to their default in it (what a ``preexec_fn`` setting
    them so leaves for the program it execs)."""

    def __init__(
        self,
        launcher: forkserver.Launcher,
        argv: Sequence[str],
        *,
        sig_dfl: Sequence[int],
        env: Mapping[str, str],
        **kw: Any,
    ) -> None:
        self._launcher = launcher
        self._argv = list(argv)
        self._sig_dfl = tuple(sig_dfl)
        super().__init__(sys.executable, ["-m", "cli", *argv], env=dict(env), **kw)

    def _spawnpty(
        self,
        args: list[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        echo: bool = True,
        preexec_fn: Callable[[], None] | None = None,
        dimensions: tuple[int, int] = (24, 80),
    ) -> ForkedPtyProcess:
        assert echo and preexec_fn is None, "a forked child runs no preexec_fn"
        master, slave = pty.openpty()
        try:
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", *dimensions, 0, 0))
            status, pid = self._launcher.start(
                self._argv, env=env, cwd=cwd, streams=(slave, slave, slave),
                session=True, tty=True, sig_dfl=self._sig_dfl,
            )  # fmt: skip
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        child = ForkedPtyProcess(pid, master, status)
        child.argv, child.env, child.launch_dir = args, env, cwd
        return child
