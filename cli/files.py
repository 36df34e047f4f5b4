"""Reading the small files a person names on the command line: a key, a game spec, an invite
list.

One rule for all of them: only a regular file is read (a FIFO or a device named by mistake
would block the command forever, ``/dev/zero`` would never end), and no more than a bound (a
huge file named by mistake is not read into memory). The error is an :class:`OSError` whose
``strerror`` says what is wrong in words; each command puts it in its one line.
"""

from __future__ import annotations

import os
from pathlib import Path

from p2p_nertz.logfile.store import open_regular

__all__ = ["read_small_file"]


def read_small_file(path: Path, limit: int) -> tuple[bytes, int]:
    """At most ``limit + 1`` bytes of the regular file ``path`` (one more than ``limit``
    tells the caller the file is too big), and the file's mode (from the file read, not from
    what the path names a moment later).

    Raises:
        OSError: the file cannot be opened or read, or is not a regular file.
    """
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        return f.read(limit + 1), mode
