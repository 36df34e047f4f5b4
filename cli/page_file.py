"""The browser is opened on a private file, never on the page's URL: no token on a command line.

Why: the page's URL holds its token, and a browser started with a URL has it on its command
line (``firefox URL``, ``xdg-open URL``, ``open URL``), which every user of the machine reads
(``ps``, ``/proc/PID/cmdline``; on macOS and Windows too). With the token another user's
program could play for the player (session 30; on Linux the page also refuses a connection
from another user's socket: ``p2p_nertz/web/owner.py``, a second wall). So, as Jupyter's
server does, ``nertz`` writes a small HTML file that sends the browser on to the URL, readable
by the player alone (mode 0600, in a directory of mode 0700 made for it), and starts the
browser on that file: its command line shows ``file:///…/page.html``, no token.

Where it lives, so that it is not left behind: in the user's runtime directory
(``$XDG_RUNTIME_DIR``, memory the system empties when the user logs out) where there is one,
else in the system's temporary directory (per user on macOS and Windows), in a directory named
after the process. It is removed when the command ends (a normal end, Ctrl-C, SIGTERM: at
exit); one left by a process that was killed outright (SIGKILL, a crash) is removed by the next
``nertz`` that opens a page, once its process is gone (it was unreadable to others meanwhile).
"""

from __future__ import annotations

import atexit
import contextlib
import html
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path
from typing import Final

__all__ = ["PREFIX", "open_dir", "remove_left", "write_page_file"]

PREFIX: Final = "nertz-page-"
"""How the directories of the files start (then the process's id, then a random part)."""

_NAME: Final = "page.html"

_HTML: Final = """<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url={url}">
<title>Nertz</title></head>
<body><p>Opening the <a href="{url}">Nertz table</a>…</p></body></html>
"""


def open_dir() -> Path:
    """Where the files' directories are made: the user's runtime directory when it is one
    (the user's own, closed to others), else the system's temporary directory."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and hasattr(os, "getuid"):
        with contextlib.suppress(OSError):
            info = os.stat(runtime)
            mine = stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
            if mine and not info.st_mode & 0o077:
                return Path(runtime)
    return Path(tempfile.gettempdir())


def write_page_file(url: str, where: Path | None = None) -> Path:
    """Write the file that opens ``url`` (mode 0600, in a new directory of mode 0700 under
    ``where``, by default :func:`open_dir`), removed when this process exits; its path.

    Raises:
        OSError: it cannot be written there.
    """
    where = open_dir() if where is None else where
    remove_left(where)
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=where))  # (0700)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / _NAME
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(path, flags, 0o600), "w", encoding="utf-8") as out:
        out.write(_HTML.format(url=html.escape(url, quote=True)))
    return path


def remove_left(where: Path) -> None:
    """Remove the files' directories under ``where`` that processes now gone left (killed
    before they could): the user's own only, and only where a process can be looked for."""
    if sys.platform == "win32" or not hasattr(os, "getuid"):
        return  # (Windows: os.kill(pid, 0) would stop the process; its %TEMP% is the user's)
    try:
        found = list(where.glob(f"{PREFIX}*"))
    except OSError:
        return
    for folder in found:
        pid = folder.name[len(PREFIX) :].partition("-")[0]
        with contextlib.suppress(OSError, ValueError):
            if folder.lstat().st_uid != os.getuid() or _alive(int(pid)):
                continue
            shutil.rmtree(folder)


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` is running (POSIX: signal 0 tells without sending)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # (another user's now: the id was reused, yet leave it be)
    return True
