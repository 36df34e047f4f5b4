"""Reading the small files a person names on the command line (a key, a game spec:
:func:`load_spec`, an invite list), and making the directories a person names for a game's
files (:func:`make_directory`).

One rule for all of them: only a regular file is read (a FIFO or a device named by mistake
would block the command forever, ``/dev/zero`` would never end), and no more than a bound (a
huge file named by mistake is not read into memory). The error is an :class:`OSError` whose
``strerror`` says what is wrong in words; each command puts it in its one line.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from p2p_nertz.errors import NertzError
from p2p_nertz.logfile.format import MAGIC, RecordKind
from p2p_nertz.logfile.store import open_regular, read_log
from p2p_nertz.protocol.spec import MAX_SPEC_SIZE, SPEC_NOTE, GameSpec

__all__ = [
    "load_game_spec",
    "load_spec",
    "make_directory",
    "read_invite_file",
    "read_small_file",
    "refuse_an_unusable_directory",
    "refuse_a_spec",
]


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


def make_directory(path: Path, what: str, option: str) -> None:
    """Make the directory ``path`` (and its parents), ``what`` ``option`` named (``"log
    directory"``, ``"--log-dir"``), if it is not there.

    Raises:
        NertzError: ``path`` names a file or a device (``mkdir`` says only "File exists"), or
            a directory this user may not write in, or it cannot be made; the line names
            ``option``.
    """
    refuse_an_unusable_directory(path, what, option)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NertzError(f"cannot create {what} {str(path)!r}: {exc.strerror}") from None


def refuse_an_unusable_directory(path: Path, what: str, option: str) -> None:
    """Refuse ``path`` for the directory ``what`` that ``option`` names if it names a file or
    a device, or a directory this user may not make files in (another user's, a read-only
    mount): what :func:`make_directory` checks first; the commands' argument checks ask it
    before anything is made or imported, cli/parsers.py. Without the second check a lobby
    opened on such a ``--log-dir``, others sat down, and the game's start failed on its log
    (session 43).

    Raises:
        NertzError: ``path`` exists and is not a directory, or not one to write in; or it
            is not there and the nearest directory on its way is a file, or not one to write
            in.
    """
    if path.exists() and not path.is_dir():
        raise NertzError(
            f"cannot create {what} {str(path)!r}: it names a file, not a directory (give "
            f"{option} a directory, or a new name)"
        )
    if path.is_dir() and not _may_write_in(path):
        raise NertzError(
            f"cannot write in {what} {str(path)!r}: permission denied or a read-only file "
            f"system (give {option} a directory of yours)"
        )
    if not path.exists():  # (to be made: in the nearest directory there, one to write in)
        there = next(p for p in path.absolute().parents if p.exists() or p == p.parent)
        if not there.is_dir():
            raise NertzError(f"cannot create {what} {str(path)!r}: {str(there)!r} is a file")
        if not _may_write_in(there):
            raise NertzError(
                f"cannot create {what} {str(path)!r}: {str(there)!r} may not be written in "
                f"(give {option} a directory of yours)"
            )


def _may_write_in(directory: Path) -> bool:
    """Whether this process may make files in ``directory`` (its effective ids, where the
    system can ask by them: a set-uid run, root without the right to override)."""
    effective = os.access in os.supports_effective_ids
    return os.access(directory, os.W_OK | os.X_OK, effective_ids=effective)


INVITE_FILE_LIMIT = 64 * 1024
"""The largest invite file read (``nertz host --invite-file``): a line per key (about 20
bytes, or 64 in hex) and comments, far more than any table's keys; a bigger file is surely
not an invite list."""


def read_invite_file(path: Path) -> list[tuple[str, str]]:
    """The entries of an invite file (``nertz host --invite-file``): one word a line, ``#``
    comments; each with where it stands (``FILE:LINE``), for the fingerprints' check.

    Raises:
        NertzError: the file cannot be read, is too large, not UTF-8 text, or names no key.
    """
    try:
        data, _ = read_small_file(path, INVITE_FILE_LIMIT)
        if len(data) > INVITE_FILE_LIMIT:
            raise ValueError(f"larger than {INVITE_FILE_LIMIT // 1024} KiB")
        text = data.decode("utf-8")
    except (OSError, ValueError) as exc:
        why = (
            exc.strerror
            if isinstance(exc, OSError)
            else "not UTF-8 text"
            if isinstance(exc, UnicodeDecodeError)
            else str(exc)
        )
        raise NertzError(f"cannot read the invite file {str(path)!r}: {why}") from None
    entries = []
    for n, line in enumerate(text.splitlines(), 1):
        word = line.split("#", 1)[0].strip()
        if word:
            entries.append((f"{path}:{n}", word.split()[0]))
    if not entries:  # (an empty file named by mistake would seat nobody)
        raise NertzError(f"the invite file {str(path)!r} names no key (one per line)")
    return entries


def load_spec(path: Path) -> GameSpec:
    """Read a game spec file.

    Raises:
        NertzError: the file is missing, unreadable or not a game spec.
    """
    try:
        data, _ = read_small_file(path, MAX_SPEC_SIZE)  # (more: from_wire says it is too big)
    except OSError as exc:
        raise NertzError(f"cannot read spec file {str(path)!r}: {exc.strerror}") from None
    try:
        return GameSpec.from_wire(data)
    except NertzError as exc:
        raise NertzError(f"{str(path)!r} is not a game spec: {exc}") from None


def load_game_spec(path: Path) -> GameSpec:
    """The game: a game spec file, or a member's log of the game (its first record is the
    spec, docs/log-format.md §5), for a game of ``nertz host``/``join``, which write no spec
    file (``nertz watch --spec``, ``nertz node --spec``: a bot resumed from its log).

    Raises:
        NertzError: the file is missing, unreadable, or neither.
    """
    try:
        return load_spec(path)
    except NertzError as exc:
        if not path.is_file():
            raise
        error = exc
    try:
        with read_log(path) as reader:
            first = next(iter(reader), None)
        if first is not None and first.kind is RecordKind.NOTE and first.name == SPEC_NOTE:
            return GameSpec.from_wire(first.data)
    except (OSError, NertzError):
        pass
    raise NertzError(f"{error} (nor a member's log of a game)") from None


def refuse_a_spec(path: Path, reads: str) -> None:
    """Refuse a game spec named where a log is wanted (``nertz replay game.spec``), in one
    line that says what the command ``reads`` instead, and where (the spec's directory).

    Raises:
        NertzError: ``path`` is a game spec. (A file that cannot be read, or is neither,
            is left for the reader of logs to say what it is not.)
    """
    try:
        head, _ = read_small_file(path, len(MAGIC))
    except OSError:
        return
    if head.startswith(MAGIC):
        return  # (a log, whole or not: its reader says)
    try:
        load_spec(path)
    except NertzError:
        return
    beside = shlex.quote(str(path.parent)) + "/*.log"
    raise NertzError(f"{str(path)!r} is the game's spec, not a log: {reads} ({beside})")
