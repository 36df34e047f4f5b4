"""What a process that has not said it started is doing: the evidence a failure message carries.

A test or benchmark that starts a process (in a network-namespace lab, :mod:`.netns`, or not)
waits for it to say it is ready, with a bound against a hang. When the bound runs out, "it
never said" alone tells nothing (session 36: a lab's process alive and silent for 90 s, once in
a CI run). :func:`describe` says, for a process still running, what it is and where it waits:
its command line (still ``ip netns exec …``, or the program ``ip`` became), each thread's
scheduler state and kernel wait channel, its kernel stack where the kernel shows it (root), and
its Python stack where ``py-spy`` is installed (the test extra installs it), its children too.

Reading ``/proc`` changes nothing in the process; ``py-spy dump`` stops it for the moment of a
sample (``--nonblocking`` does not: its stack may then be torn, which says so).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

__all__ = ["describe", "py_spy"]

#: How long one ``py-spy dump`` may take (it ends by itself; a stuck one is killed).
_PY_SPY_BOUND: Final = 30.0
#: How many threads, and kernel stack lines of each, are shown (a Python with zmq has a few).
_THREADS: Final = 8
_STACK_LINES: Final = 16


def py_spy() -> str | None:
    """The ``py-spy`` command: beside this Python (a venv's ``bin``) or on ``PATH``, or ``None``."""
    beside = Path(sys.executable).parent / "py-spy"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("py-spy")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def _status(task: Path) -> str:
    """``State`` from a task's ``status``, its ``wchan`` and its kernel stack (where readable)."""
    status = _read(task / "status") or ""
    states = [x.split(":", 1)[1].strip() for x in status.splitlines() if x.startswith("State:")]
    state = states[0] if states else "?"
    wchan = (_read(task / "wchan") or "?").strip() or "0"
    stack = _read(task / "stack")
    frames = [line.split("] ", 1)[-1] for line in (stack or "").splitlines()][:_STACK_LINES]
    shown = " < ".join(frames) if frames else "(unreadable)" if stack is None else "(empty)"
    return f"state {state}, wchan {wchan}, kernel stack: {shown}"


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in sorted(Path(f"/proc/{pid}/task").glob("*")):
        found += [int(c) for c in (_read(task / "children") or "").split()]
    return found


def _describe_one(pid: int, *, spy: bool) -> list[str]:
    proc = Path(f"/proc/{pid}")
    cmdline = _read(proc / "cmdline")
    if cmdline is None:
        return [f"process {pid}: gone"]
    argv = " ".join(cmdline.split("\0")).strip()
    lines = [f"process {pid}: {argv[:300]}"]
    tasks = sorted(proc.glob("task/*"), key=lambda t: int(t.name))
    for task in tasks[:_THREADS]:
        name = (_read(task / "comm") or "?").strip()
        lines.append(f"  thread {task.name} ({name}): {_status(task)}")
    if len(tasks) > _THREADS:
        lines.append(f"  … and {len(tasks) - _THREADS} threads more")
    command = py_spy() if spy else None
    if command is not None and "python" in (_read(proc / "comm") or "") + argv[:200]:
        lines += ["  " + x for x in _spy(command, pid).splitlines()]
    return lines


def _spy(command: str, pid: int) -> str:
    try:
        done = subprocess.run(
            [command, "dump", "--pid", str(pid)], capture_output=True, text=True,
            timeout=_PY_SPY_BOUND, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"py-spy dump: no answer within {_PY_SPY_BOUND:.0f} s"
    except OSError as exc:
        return f"py-spy dump: {exc}"
    said = (done.stdout + done.stderr).strip()
    if not said:
        return f"py-spy dump: said nothing (exit {done.returncode})"
    return f"py-spy dump:\n{said}"


def describe(pid: int, *, spy: bool = True) -> str:
    """What process ``pid`` and its children are doing, as lines for a failure message.

    For each: the command line, each thread's state, wait channel and kernel stack, and (where
    ``spy`` and ``py-spy`` is installed, for a Python) its Python stack. A process that is
    gone says so; nothing here raises for a process that ends meanwhile.
    """
    lines: list[str] = []
    todo, seen = [pid], set[int]()
    while todo and len(seen) < 8:
        current = todo.pop(0)
        if current in seen:
            continue
        seen.add(current)
        lines += _describe_one(current, spy=spy)
        todo += _children(current)
    if py_spy() is None and spy:
        lines.append("(py-spy is not installed: no Python stack)")
    return "\n".join(lines)
