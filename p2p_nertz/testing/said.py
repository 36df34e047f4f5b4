"""Lines a process started by a test says, and the wait for one of them: whole, and bounded.

A test or benchmark starts a process (often in a network-namespace lab, :mod:`.netns`) and waits
for it to say a line (``bound``, ``up``, ``ready``) before it goes on. Two ways that wait went
wrong (session 37):

- **Two threads of the process printing at once.** Under ``PYTHONUNBUFFERED`` (no buffer
  under the text layer) ``print`` writes its text and its newline in two calls, the GIL let go
  between them, and another thread's ``print`` can come between: ``event LISTENING 0.0bound``
  then an empty line, and the awaited ``bound`` never starts a line (the process alive,
  silent, its stderr empty: ``scripts/bench_hwm_dead_link.py``, 4 of 49 starts beside the
  suite's netns tests). A process whose threads speak says each line with :func:`say`: one
  write of the whole line, under a lock, flushed.
- **An unbounded read.** ``proc.stdout.readline()`` waits for good on a process that says
  nothing. :class:`Said` reads a process's output on a thread of its own; :meth:`Said.wait_for`
  ends at its bound (a hang's, never a timing assertion) or when the process ends, and then
  raises :class:`NeverSaid` with what it did say and what it is doing (:mod:`.stalls`).
  :func:`first_line` waits for a first line with the same bound, leaving the pipe to the
  caller, and :func:`lines` reads a process's lines as they come, each wait bounded.
- **A killed process's pipes read to their end.** ``proc.kill(); proc.communicate()`` waits
  for good while a process it started lives on with its pipes (session 38's sweep of the
  tests' waits): :func:`reap` kills it and its process group, and reads what is left within
  a bound.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Final

from p2p_nertz.testing.stalls import describe

__all__ = ["READY_BOUND", "NeverSaid", "Said", "first_line", "lines", "reap", "say"]

#: How long a process may take to say it is ready (its first line, ``bound``, ``up``): a hang's
#: bound, never a timing assertion (session 37: a Python's start in a lab took up to 12 s at
#: load 36, its imports most of it).
READY_BOUND: Final = 90.0

_speaking = threading.Lock()


def say(line: str, *, to: IO[str] | None = None) -> None:
    """Write ``line`` and its newline to ``to`` (stdout) in one write, flushed, under a lock
    every thread of the process shares: no other line comes into it."""
    stream = sys.stdout if to is None else to
    with _speaking:
        stream.write(line + "\n")
        stream.flush()


class NeverSaid(AssertionError):
    """A process did not say the line waited for within the wait's bound, or ended first.

    Attributes:
        proc: the process (``None`` where the raiser had none to give).
    """

    def __init__(self, message: str, proc: subprocess.Popen[Any] | None = None) -> None:
        super().__init__(message)
        self.proc = proc


class Said:
    """The lines ``proc`` writes to its stdout (a text pipe), read on a daemon thread.

    Args:
        proc: started with ``stdout=subprocess.PIPE`` and ``text=True``.
        name: what the process is, for messages ("the ROUTER's process").
    """

    def __init__(self, proc: subprocess.Popen[Any], name: str) -> None:
        if proc.stdout is None:
            raise ValueError(f"{name}: its output is not a pipe (stdout=subprocess.PIPE)")
        self.proc = proc
        self.name = name
        self._lines: list[str] = []
        self._changed = threading.Condition()
        self._ended = False
        self._reader = threading.Thread(target=self._read, args=(proc.stdout,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[str]) -> None:
        try:
            for line in stream:
                with self._changed:
                    self._lines.append(line.rstrip("\n"))
                    self._changed.notify_all()
        except (OSError, ValueError):  # (closed under it by :meth:`close`)
            pass
        finally:
            with self._changed:
                self._ended = True
                self._changed.notify_all()

    @property
    def lines(self) -> list[str]:
        """Every line said so far (a copy)."""
        with self._changed:
            return list(self._lines)

    def clear(self) -> None:
        """Forget the lines said so far (what comes next is waited for)."""
        with self._changed:
            self._lines.clear()

    def wait_for(self, prefix: str, bound: float) -> str:
        """The latest line said that starts with ``prefix``, waiting for one up to ``bound`` s.

        Raises:
            NeverSaid: none within ``bound`` s, or the process's output ended first; the message
                says what it did say and, if it still runs, what it is doing.
        """
        end = time.monotonic() + bound
        with self._changed:
            while True:
                found = [line for line in self._lines if line.startswith(prefix)]
                if found:
                    return found[-1]
                left = end - time.monotonic()
                if self._ended or left <= 0:
                    break
                self._changed.wait(left)
        raise NeverSaid(self._never(prefix, bound), self.proc)

    def _never(self, prefix: str, bound: float) -> str:
        if self._ended:  # (its output ended: its exit follows)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)
        code = self.proc.poll()
        how = f"ended (exit {code})" if code is not None else f"not within {bound:g} s"
        said = self.lines
        shown = "\n".join(f"  {line!r}" for line in said[-20:]) or "  (nothing)"
        text = f"{self.name} never said {prefix!r}: {how}; it said:\n{shown}"
        if code is None:
            text += "\n" + describe(self.proc.pid)
        return text

    def close(self) -> None:
        """Wait for the reader to have read everything (the process ended or killed first)."""
        self._reader.join(10)


def first_line(
    proc: subprocess.Popen[Any],
    name: str,
    bound: float = READY_BOUND,
    *,
    path: Path | None = None,
    stderr: bool = False,
) -> str:
    """The first line ``proc`` says, waiting for it up to ``bound`` s (a hang's bound): read
    from its stdout pipe (its stderr pipe with ``stderr``), nothing read from it yet (what
    comes after is the caller's), or from the file ``path`` its output goes to (its text so
    far if the line is not yet ended).

    Raises:
        NeverSaid: it said nothing within ``bound`` s (then what it is doing), or its output
            or the process ended first (then, where its stderr is a pipe not read, its end).
        ValueError: no ``path`` and its output is not a pipe.
    """
    if path is None:
        stream = proc.stderr if stderr else proc.stdout
        if stream is None:
            what = "stderr" if stderr else "stdout"
            raise ValueError(f"{name}: its {what} is not a pipe ({what}=subprocess.PIPE)")
        if not select.select([stream], [], [], bound)[0]:
            doing = describe(proc.pid)
            raise NeverSaid(f"{name} said nothing: not within {bound:g} s\n{doing}", proc)
        line = stream.readline()
        if isinstance(line, bytes):
            line = line.decode(errors="replace")
        if not line:
            with contextlib.suppress(subprocess.TimeoutExpired):  # (its output ended: it ends)
                proc.wait(10)
            text = f"{name} said nothing: its output ended (exit {proc.poll()})"
            raise NeverSaid(text + ("" if stderr else _stderr_end(proc)), proc)
        return str(line).rstrip("\n")
    end = time.monotonic() + bound
    while not (text := path.read_text(errors="replace")).strip():
        code = proc.poll()
        if code is not None:
            raise NeverSaid(f"{name} said nothing: ended (exit {code})", proc)
        if time.monotonic() > end:
            doing = describe(proc.pid)
            raise NeverSaid(f"{name} said nothing: not within {bound:g} s\n{doing}", proc)
        time.sleep(0.05)  # (a poll of its output file, not a wait standing in for it)
    return text.splitlines()[0]


def lines(
    proc: subprocess.Popen[Any], name: str, bound: float = READY_BOUND, *, stderr: bool = False
) -> Iterator[str]:
    """Each line ``proc`` says on its stdout pipe (its stderr with ``stderr``), as it comes,
    its newline kept, until its output ends: ``for line in proc.stdout`` with the wait for each
    line bounded by ``bound`` s (a hang's bound, never a timing assertion). The pipe is read
    where the caller reads it (what the caller does not take stays in it).

    Raises:
        NeverSaid: nothing more said for ``bound`` s: the process is described, then killed
            (its process group with it where it leads one: ``start_new_session``).
        ValueError: its output is not a pipe.
    """
    stream = proc.stderr if stderr else proc.stdout
    if stream is None:
        what = "stderr" if stderr else "stdout"
        raise ValueError(f"{name}: its {what} is not a pipe ({what}=subprocess.PIPE)")
    doing: list[str] = []

    def silent() -> None:  # (its description first: a killed process says nothing)
        doing.append(describe(proc.pid))
        # Its group too where it leads one: its children hold the pipe open while they live.
        with contextlib.suppress(OSError):
            if proc.poll() is None and os.getpgid(proc.pid) == proc.pid:
                os.killpg(proc.pid, signal.SIGKILL)
        proc.kill()

    while True:
        timer = threading.Timer(bound, silent)
        timer.daemon = True
        timer.start()
        try:
            line = stream.readline()
        finally:
            timer.cancel()
            timer.join()
        if doing:
            raise NeverSaid(f"{name} said nothing more: not within {bound:g} s\n{doing[0]}", proc)
        if not line:
            return
        yield line.decode(errors="replace") if isinstance(line, bytes) else str(line)


def reap(
    proc: subprocess.Popen[Any], name: str = "the process", bound: float = READY_BOUND
) -> tuple[Any, Any]:
    """Kill ``proc`` if it still runs (its process group with it where it leads one:
    ``start_new_session``), read its pipes to their end and reap it, within ``bound`` s (a
    hang's bound): what it said on stdout and stderr (``None`` for one not piped).

    Raises:
        NeverSaid: its pipes were still open ``bound`` s on (a process it started, outside its
            group, holds them): they are closed, and it is reaped.
    """
    with contextlib.suppress(OSError):
        if proc.poll() is None and os.getpgid(proc.pid) == proc.pid:
            os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.kill()
    try:
        return proc.communicate(timeout=bound)
    except subprocess.TimeoutExpired:
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError, ValueError):
                    pipe.close()
        proc.wait()  # (killed: it ends; its pipes were what stayed open)
        text = f"{name}: its output did not end within {bound:g} s of its kill (a process it"
        raise NeverSaid(text + " started holds its pipes)", proc) from None


def _stderr_end(proc: subprocess.Popen[Any], bound: float = 10.0) -> str:
    """The end of what ``proc``, ended, wrote to its stderr pipe (where it has one), read with
    a bound (a child of its may hold the pipe open): why a process that said nothing ended."""
    if proc.stderr is None or proc.poll() is None:
        return ""
    chunks: list[bytes] = []
    end = time.monotonic() + bound
    with contextlib.suppress(OSError, ValueError):
        fd = proc.stderr.fileno()
        while (left := end - time.monotonic()) > 0 and select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    text = b"".join(chunks).decode(errors="replace").strip()
    return f"; its stderr: {text[-2000:]!r}" if text else ""
