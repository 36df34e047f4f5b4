"""Bot processes started by a command for its person: spawning them and stopping them.

One home for both: ``nertz host --bots``, the lobby screen's ``b`` and ``nertz play --bots``
start bots here and stop them here. A bot that is stopped gets SIGTERM, which makes its node
sign a ``leave`` and go (``nertz bot``/``nertz node`` handle it); one that does not go within
:data:`TERM_PATIENCE` is killed.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from p2p_nertz.errors import NertzError

TERM_PATIENCE = 5.0  # seconds a bot has to leave after SIGTERM before it is killed
LEAVE_PATIENCE = 15.0  # seconds the bots get to finish by themselves after a game is over
_POLL = 0.05  # seconds between looks at the processes while letting them finish


def stop_processes(procs: Sequence[subprocess.Popen[bytes]], patience: float = 0.0) -> None:
    """Let ``procs`` finish by themselves for ``patience`` seconds, then terminate them
    (SIGTERM: a bot leaves cleanly), and kill any still running after
    :data:`TERM_PATIENCE`.

    A person who left a game passes no patience: the bots go at once, and the command that
    started them returns at once too (issue 15: ``q`` at a hosted table with bots).
    """
    end = time.monotonic() + patience
    while time.monotonic() < end and any(p.poll() is None for p in procs):
        time.sleep(_POLL)
    running = [p for p in procs if p.poll() is None]
    for proc in running:
        proc.send_signal(signal.SIGTERM)
    end = time.monotonic() + TERM_PATIENCE
    for proc in running:
        try:
            proc.wait(max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def spawn_lobby_bot(
    where: str,
    name: str,
    *,
    strategy: str,
    speed: int,
    log_dir: Path,
    options: Sequence[str] = (),
    err: Path | None = None,
    own_session: bool = False,
) -> subprocess.Popen[bytes]:
    """Start a ``nertz bot`` process that joins the lobby at ``where`` (``HOST:PORT``).

    Args:
        where: the lobby's address.
        name: the bot's name at the table.
        strategy: its strategy.
        speed: its speed, 1-10.
        log_dir: where its log goes.
        options: more ``nertz bot`` options (a key, liveness timers).
        err: a file its stderr is appended to (default: nowhere).
        own_session: start it in its own session, so that a Ctrl-C at our terminal is for the
            player, not the bots (they are then stopped by :func:`stop_processes`).

    Raises:
        NertzError: the log directory cannot be made.
    """
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NertzError(f"cannot create {str(log_dir)!r}: {exc.strerror}") from None
    command = [
        sys.executable, "-m", "cli", "bot", "--peer", where, "--name", name,
        "--strategy", strategy, "--speed", str(speed), "--log-dir", str(log_dir),
        "--json", *options,
    ]  # fmt: skip
    if err is None:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=own_session,
        )
    with err.open("ab") as errors:
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=own_session,
        )
