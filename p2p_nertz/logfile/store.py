"""Log files on disk: a crash-safe writer, recovery on restart, and a streaming reader.

This is the runtime side of :mod:`p2p_nertz.logfile.format` (the pure framing): it is the only
part of the log that touches the file system.

Guarantees of :class:`LogWriter` (DESIGN.md §6):

- **Durable before send.** :meth:`LogWriter.append` writes the record's frame and syncs it to
  stable storage (``fdatasync``, or ``fsync``; ``F_FULLFSYNC`` on macOS) before it returns. A
  caller sends an event only after ``append`` returned, so anything a peer ever sent is in its
  log, whenever the process is killed.
- **A batch, one sync.** :meth:`LogWriter.append_many` writes several frames with one write and
  one sync, for events received together. It is durable as a whole when it returns; after a
  crash *during* it, any prefix of the batch may have survived (complete frames are kept on
  restart, the torn one is cut). Use it for received events, which peers can send again; use
  ``append`` for each event this peer sends.
- **Written, not yet synced.** ``append_many(..., sync=False)`` only hands the frames to the
  operating system: they survive the process being killed, not the machine crashing, until the
  next synced append (which syncs the whole file). The runtime uses it for batches of
  *received* events only: another member holds each of them, signed, so one lost with the
  machine is fetched again; what this peer signs is always synced before it is sent.
- **Atomic creation.** :func:`create_log` writes the header (and any first records) to a
  temporary file, syncs it and links it into place, so a log file either does not exist or
  has a whole header and every record it was created with. The file is
  created with mode 0600: notes may hold the round's secret, which must stay private until the
  round ends.
- **Recovery.** :func:`open_for_append` reads the whole file, cuts a torn tail (the frame a crash
  interrupted, which a conforming writer never acknowledged and so never sent) and returns the
  good records so the caller can rebuild its state. A disk can also lose frames it had synced,
  which the log cannot tell apart, so a caller that cut anything learns its own events from
  the other peers before signing (docs/protocol.md §9.6); ``cut_note`` leaves a durable note
  in the tail's place, so that a crash during that recovery is not forgotten. It refuses, with
  :class:`~p2p_nertz.errors.LogFormatError`, to cut damage that is not a torn tail unless
  asked (see its docstring): that is more likely an event that was sent.
- **One writer.** The writer holds an exclusive ``flock`` on POSIX systems, so a restarted peer
  cannot append to a file its previous process is still writing.
- **Its name.** :meth:`LogWriter.named` says whether the path still names the file written
  (removed or replaced under the writer, it does not); :meth:`LogWriter.name_again` writes a
  removed log again under its name, from the open file (docs/log-format.md §6, 7).
- **Failure is sticky.** If a write or sync fails, the writer cuts the file back to its last
  durable size and refuses further appends (after a failed ``fsync`` the kernel's view of the
  file cannot be trusted); reopen the file with :func:`open_for_append`.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

from p2p_nertz.errors import LogFormatError
from p2p_nertz.logfile.format import (
    LogDecoder,
    LogHeader,
    LogProblem,
    LogStream,
    LogSummary,
    Record,
    TailState,
    encode_header,
    encode_record,
)

if sys.platform != "win32":
    import fcntl

__all__ = [
    "CHUNK_SIZE",
    "LogReader",
    "LogWriter",
    "Recovery",
    "check_not_in_use",
    "create_log",
    "open_for_append",
    "open_regular",
    "read_log",
]

CHUNK_SIZE = 64 * 1024
"""How many bytes readers read at a time."""

_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows would otherwise translate newlines


def _sync_data(fd: int) -> None:
    """Make the file's data (and its size) durable before returning."""
    if sys.platform == "darwin":
        # On macOS fsync only reaches the drive's cache; F_FULLFSYNC reaches the platter.
        try:
            fcntl.fcntl(fd, fcntl.F_FULLFSYNC)
        except OSError:
            pass
        else:
            return
    # Looked up at call time (not bound at import) so that tests can observe the calls.
    fdatasync = getattr(os, "fdatasync", None)
    if fdatasync is not None:
        fdatasync(fd)
    else:
        os.fsync(fd)


def _sync_directory(directory: Path) -> None:
    """Make a new or renamed directory entry durable (POSIX; a no-op elsewhere)."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _lock(fd: int, path: Path) -> None:
    """Take an exclusive lock on the open file, or raise BlockingIOError if another has it
    (its words name the process that has it, where the system says: :func:`_lock_holder`)."""
    if sys.platform == "win32":
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _lock_holder(fd)
        who = f" (pid {holder})" if holder is not None else ""
        raise BlockingIOError(
            errno.EWOULDBLOCK, f"in use: another process{who} is writing this log", str(path)
        ) from None


def _lock_holder(fd: int) -> int | None:
    """The process holding the ``flock`` of the open file ``fd``, as ``/proc/locks`` says
    (Linux), or ``None`` where it does not say."""
    st = os.fstat(fd)
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as locks:
            for line in locks:  # ("1: FLOCK  ADVISORY  WRITE 21236 fe:00:2162849 0 EOF")
                fields = line.split()
                if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == where:
                    return int(fields[4]) if fields[4].isdigit() else None
    except OSError:
        pass  # (no /proc: the lock says no more than "another process")
    return None


def check_not_in_use(path: str | os.PathLike[str]) -> None:
    """Refuse a log another process is writing now, as :func:`open_for_append` would, but
    before anything else is done for it: a command resuming a game asks this first, before
    its node binds the game's address (which the writer holds too, and its refusal, "Address
    already in use", said nothing of the log). A log that cannot be opened passes: the open
    that follows says why.

    Raises:
        BlockingIOError: another process holds the log's lock; ``strerror`` names it.
    """
    try:
        fd = open_regular(path)
    except OSError:
        return
    try:
        _lock(fd, Path(path))
    finally:
        os.close(fd)  # (the lock, if taken, goes with it)


def _naming(exc: OSError, path: Path) -> OSError:
    """``exc`` with ``path`` as its file name, so the message says which file failed (an
    ``os.write`` error names none: "No space left on device" alone does not say where)."""
    if exc.filename is not None or not exc.errno:
        return exc
    return type(exc)(exc.errno, exc.strerror, str(path))


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` (os.write may write less than asked)."""
    with memoryview(data) as view:
        done = 0
        while done < len(view):
            done += os.write(fd, view[done:])


@dataclass(frozen=True, slots=True, kw_only=True)
class Recovery:
    """What :func:`open_for_append` found in an existing log.

    Attributes:
        header: The log's header.
        records: Every good record, in file order, for the caller to rebuild its state from.
        tail: How the file ended before recovery: clean, torn (cut) or corrupt (cut only if
            asked).
        cut_bytes: How many bytes were cut from the end of the file.
        problems: The problems in what was cut (only when a corrupt tail was cut on request).
        good_end: Where the file now ends: the offset just after the last good frame, where
            the cut (if any) was made.
    """

    header: LogHeader
    records: tuple[Record, ...]
    tail: TailState
    cut_bytes: int
    problems: tuple[LogProblem, ...] = ()
    good_end: int = 0

    @property
    def cut(self) -> bool:
        """Whether anything was cut: the log may have lost an event this peer had sent (a
        torn frame that had been synced and sent before the disk lost it, or a damaged one),
        so the peer must learn its own feed from the others before it signs again
        (docs/protocol.md §9.6)."""
        return self.cut_bytes > 0


class LogWriter:
    """Appends records to one log file; each append is durable before it returns.

    Get one from :func:`create_log` or :func:`open_for_append`, not from the constructor. Use it
    as a context manager, or call :meth:`close`. Not safe to share between threads.
    """

    def __init__(self, fd: int, path: Path, header: LogHeader, size: int) -> None:
        self._fd = fd
        self._path = path
        self._header = header
        self._size = size
        self._closed = False
        self._failed: BaseException | None = None

    @property
    def path(self) -> Path:
        """The log file's path."""
        return self._path

    @property
    def header(self) -> LogHeader:
        """The log file's header."""
        return self._header

    @property
    def size(self) -> int:
        """The file's size in bytes: everything up to here is written (and durable, unless
        the last appends were made with ``sync=False``)."""
        return self._size

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def named(self) -> bool:
        """Whether the log's path still names the file this writer appends to: ``False`` once
        the file was removed (its directory entry: the writer goes on writing to a file no
        name reaches) or replaced by another under its name."""
        try:
            there = os.stat(self._path)
        except FileNotFoundError:
            return False
        here = os.fstat(self._fd)
        return (there.st_dev, there.st_ino) == (here.st_dev, here.st_ino)

    def name_again(self) -> None:
        """Put the log back under its path after it was removed (:meth:`named` false): its
        bytes, read from the open file, are written to a new file, durably, linked into place
        (atomically, as :func:`create_log` does) and appended to from now on.

        Raises:
            FileExistsError: another file has the log's name (it was replaced, not removed);
                nothing is changed (the writer still appends to its unnamed file).
            OSError: the new file cannot be written (its directory was removed too, say).
        """
        if self._closed:
            raise ValueError(f"log writer for {self._path} is closed")
        path = self._path
        if path.exists():
            raise FileExistsError(
                errno.EEXIST,
                "another file took the log's name while it was written (the log was replaced)",
                str(path),
            )
        data = bytearray()
        while len(data) < self._size:
            chunk = os.pread(self._fd, min(CHUNK_SIZE, self._size - len(data)), len(data))
            if not chunk:
                break
            data += chunk
        _create_whole(path, bytes(data))
        fd = _open_existing(path)
        os.close(self._fd)
        self._fd = fd
        self._size = len(data)

    def append(self, record: Record) -> None:
        """Append one record and make it durable; only then return.

        Raises:
            OSError: If writing or syncing failed (the error names the log file); the file is
                cut back to its previous size and the writer refuses further appends.
            ValueError: If the writer is closed.
        """
        self.append_many((record,))

    def append_many(self, records: Iterable[Record], *, sync: bool = True) -> None:
        """Append several records with one write and one sync; durable when it returns.

        Meant for received events. After a crash during the call any prefix of the batch may
        be in the file; see the module docstring.

        Args:
            records: the records, in order.
            sync: make them durable before returning; with ``False`` they are only written
                (they survive the process being killed, not the machine crashing, until a
                later synced append).

        Raises:
            OSError: As for :meth:`append`.
            ValueError: If the writer is closed.
        """
        if self._closed:
            raise ValueError(f"log writer for {self._path} is closed")
        if self._failed is not None:
            raise OSError(
                errno.EIO, f"log writer for {self._path} failed earlier; reopen the log"
            ) from self._failed
        data = b"".join(encode_record(r) for r in records)
        if not data:
            return
        try:
            _write_all(self._fd, data)
            if sync:
                _sync_data(self._fd)
        except BaseException as exc:
            # Nothing of this batch was acknowledged: cut it off, so that a later append (after
            # a transient ENOSPC, say) cannot follow a partial frame.
            self._failed = exc
            try:
                os.ftruncate(self._fd, self._size)
                os.fsync(self._fd)
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise _naming(exc, self._path) from None
            raise
        self._size += len(data)

    def close(self) -> None:
        """Close the file and release its lock (idempotent)."""
        if not self._closed:
            self._closed = True
            os.close(self._fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self._size} bytes"
        return f"<LogWriter {str(self._path)!r} {state}>"


def open_regular(path: str | os.PathLike[str], flags: int = os.O_RDONLY) -> int:
    """Open ``path`` with ``flags``, as a regular file only; return the descriptor.

    A FIFO, a device or a directory given where a file is wanted would block the open or the
    reads forever (a FIFO with no writer, ``/dev/zero``), or fail later with an error that
    names no file: the open does not wait (``O_NONBLOCK``, cleared once the file is known to
    be regular) and anything but a regular file is refused here.

    Raises:
        OSError: the file cannot be opened, or is not a regular file (``EISDIR`` for a
            directory, ``EINVAL`` otherwise); ``strerror`` says so in words.
    """
    fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0) | _O_BINARY)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, socket or device)", str(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_existing(path: Path) -> int:
    fd = open_regular(path, os.O_RDWR | os.O_APPEND)
    try:
        _lock(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def create_log(
    path: str | os.PathLike[str], header: LogHeader, records: Iterable[Record] = ()
) -> LogWriter:
    """Create a new log file holding ``header`` and then ``records``, durably (one sync of
    the file, one of its directory: a file that appears holds them all); return its writer.

    Raises:
        FileExistsError: If ``path`` exists already.
        OSError: If it cannot be written (the disk is full, say); the error names ``path``.
    """
    path = Path(path)
    if path.exists():
        raise FileExistsError(errno.EEXIST, "log file exists already", str(path))
    data = encode_header(header) + b"".join(encode_record(r) for r in records)
    _create_whole(path, data)
    return LogWriter(_open_existing(path), path, header, len(data))


def _create_whole(path: Path, data: bytes) -> None:
    """Create ``path`` holding ``data``, durably and atomically: written to a temporary file,
    synced, linked into place, the directory synced (mode 0600).

    Raises:
        FileExistsError: ``path`` exists (it is not overwritten).
        OSError: it cannot be written; the error names ``path``.
    """
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o600)
        try:
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            # link() fails if the path exists, unlike rename(): two creators cannot overwrite.
            os.link(temp, path)
        finally:
            temp.unlink(missing_ok=True)
        _sync_directory(path.parent)
    except OSError as exc:
        if not exc.errno:
            raise
        # The log's name, not the temporary file's: that is the file the reader knows.
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None


def open_for_append(
    path: str | os.PathLike[str],
    *,
    create_with: LogHeader | None = None,
    create: bool = True,
    cut_damaged_tail: bool = False,
    cut_note: str | None = None,
) -> tuple[LogWriter, Recovery]:
    """Open a log to go on appending after a restart; return the writer and what was found.

    Reads the whole file, checks it, and cuts a torn tail (a frame that a crash interrupted, or
    zero bytes after the last frame), syncing the cut, so the next append follows the last good
    frame. The good records are returned for the caller to rebuild its state.

    Damage that is not a torn tail is not cut, because the log cannot tell an unfinished write
    from an acknowledged frame that later rotted: cutting the latter would lose an event that
    was sent. Damage before the last good frame always raises (no repair can be automatic);
    damage after it raises unless ``cut_damaged_tail`` is true. A caller that cut anything
    (:attr:`Recovery.cut`) must learn its own feed's head from the peers before it signs
    again (DESIGN.md §2: any peer may relay any author's events), in case the lost frame had
    been sent: :meth:`~p2p_nertz.protocol.peer.Peer.restore` with ``recover``.

    Args:
        path: The log file.
        create_with: If given and the file does not exist, create it with this header; if the
            file exists, its game id and peer id must match this header's.
        create: with ``False``, a missing file is not created (``FileNotFoundError``: the
            caller creates it later, with its first records, :func:`create_log`).
        cut_damaged_tail: Also cut a damaged (not merely torn) tail after the last good frame.
        cut_note: If given and anything is cut, a note of this name (its data: the offset of
            the cut, 8 bytes big-endian) takes the place of the cut tail, durably: it is
            written over the tail, synced, and only then is the file cut after it, so that
            no crash leaves a clean log without the note. A caller that must finish something
            because of the cut (learn its own feed, docs/protocol.md §9.6) knows from it,
            after a crash in the middle, that it has not finished yet.

    Raises:
        FileNotFoundError: If the file does not exist and ``create_with`` is not given (or
            ``create`` is false).
        LogFormatError: If the file is not a readable log, belongs to another game or peer,
            or is damaged in a way that is not cut.
        BlockingIOError: If another process has the log open for writing.
    """
    path = Path(path)
    try:
        fd = _open_existing(path)
    except FileNotFoundError:
        if create_with is None or not create:
            raise
        writer = create_log(path, create_with)
        return writer, Recovery(
            header=create_with, records=(), tail=TailState.CLEAN, cut_bytes=0, good_end=writer.size
        )
    try:
        decoder = LogDecoder()
        records: list[Record] = []
        while chunk := os.read(fd, CHUNK_SIZE):
            records.extend(decoder.feed(chunk))
        summary = decoder.close()
        header = _check_recoverable(path, summary, create_with, cut_damaged_tail)
        cut = summary.tail_bytes
        end = summary.good_end
        if cut and cut_note is not None:
            note = Record.note(cut_note, end.to_bytes(8, "big"))
            end = _overwrite_tail(path, end, summary.size, note)
        if cut:
            os.ftruncate(fd, end)
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        raise
    recovery = Recovery(
        header=header,
        records=tuple(records),
        tail=summary.tail,
        cut_bytes=cut,
        problems=summary.problems,
        good_end=summary.good_end,
    )
    return LogWriter(fd, path, header, end), recovery


def _overwrite_tail(path: Path, offset: int, size: int, record: Record) -> int:
    """Write ``record``'s frame at ``offset``, over a tail about to be cut, zeros over the rest
    of that tail (up to ``size``), and sync; return where the frame ends. A crash before the
    cut that follows leaves the note and a torn tail (zeros), which the next recovery cuts.
    (A second descriptor: ``pwrite`` on an ``O_APPEND`` one appends, on Linux.)"""
    frame = encode_record(record)
    end = offset + len(frame)
    frame += bytes(max(0, size - end))
    fd = os.open(path, os.O_WRONLY | _O_BINARY)
    try:
        with memoryview(frame) as view:
            done = 0
            while done < len(view):
                done += os.pwrite(fd, view[done:], offset + done)
        os.fsync(fd)
    finally:
        os.close(fd)
    return end


def _not_ours(path: Path, header: LogHeader, expected: LogHeader) -> str:
    """Why the log at ``path`` is not the one to append to (a copy of another player's log,
    or of another game's), in a person's words."""
    if header.game_id == expected.game_id:
        return (
            f"{path} is another player's log of this game (peer {header.peer_id.hex()[:16]}), "
            f"not this key's (peer {expected.peer_id.hex()[:16]}): each player resumes their own"
        )
    whose = "" if header.peer_id == expected.peer_id else f" by peer {header.peer_id.hex()[:16]}"
    return (
        f"{path} is the log of another game ({header.game_id.hex()[:16]}{whose}), not of game "
        f"{expected.game_id.hex()[:16]}"
    )


def _check_recoverable(
    path: Path, summary: LogSummary, expected: LogHeader | None, cut_damaged_tail: bool
) -> LogHeader:
    """Return the header if the log may be appended to after cutting its tail, else raise."""
    fatal = summary.fatal
    if fatal is not None:
        raise LogFormatError(f"{path}: {fatal.words}", offset=fatal.offset)
    header = summary.header
    assert header is not None  # only a fatal problem leaves a log without a header
    if expected is not None and (
        (header.game_id, header.peer_id) != (expected.game_id, expected.peer_id)
    ):
        raise LogFormatError(_not_ours(path, header, expected))
    inside = [p for p in summary.problems if p.offset < summary.good_end]
    if inside:
        raise LogFormatError(
            f"{path}: {len(inside)} damaged region(s) before the last good record, the first "
            f"{inside[0]}; refusing to append to a damaged log",
            offset=inside[0].offset,
        )
    if summary.problems and not cut_damaged_tail:
        first = summary.problems[0]
        raise LogFormatError(
            f"{path}: the tail after offset {summary.good_end} is damaged, not torn: {first}; "
            "it may hold an event that was sent, so it is cut only with recovery: "
            f"nertz resume --cut-damaged-tail {path} (cut_damaged_tail=True here)",
            offset=first.offset,
        )
    return header


class LogReader:
    """Streams the records of a log file in bounded memory; iterate once, then summarise.

    Returned by :func:`read_log`. The file is read in chunks of ``chunk_size`` bytes and closed
    when iteration ends, on :meth:`close`, or on leaving a ``with`` block.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, strict: bool = False, chunk_size: int = CHUNK_SIZE
    ) -> None:
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be positive, not {chunk_size}")
        self._path = Path(path)
        self._chunk_size = chunk_size
        self._bytes_read = 0
        # (Not a FIFO or a device: their reads would never end.)
        self._file = open(open_regular(self._path), "rb", buffering=0)  # noqa: SIM115
        self._stream = LogStream(self._chunks(), strict=strict)

    def _chunks(self) -> Generator[bytes, None, None]:
        try:
            while chunk := self._file.read(self._chunk_size):
                self._bytes_read += len(chunk)
                yield chunk
        finally:
            self._file.close()

    @property
    def path(self) -> Path:
        """The log file's path."""
        return self._path

    @property
    def bytes_read(self) -> int:
        """How many bytes of the file have been read so far (for progress reports)."""
        return self._bytes_read

    @property
    def header(self) -> LogHeader | None:
        """The log's header, once iteration has read it."""
        return self._stream.header

    @property
    def problems(self) -> tuple[LogProblem, ...]:
        """The problems found so far."""
        return self._stream.problems

    def __iter__(self) -> Iterator[Record]:
        return iter(self._stream)

    def summary(self) -> LogSummary:
        """Return how reading went, first reading (and dropping) records not yet read.

        Raises:
            LogFormatError: In strict mode, at the first problem in what is left to read.
        """
        return self._stream.summary()

    def close(self) -> None:
        """Close the file (idempotent); the records not yet read are not read."""
        self._file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def read_log(
    path: str | os.PathLike[str], *, strict: bool = False, chunk_size: int = CHUNK_SIZE
) -> LogReader:
    """Open a log file for streaming its records; see :class:`LogReader`.

    Lenient by default: every problem is collected (``reader.problems``, ``reader.summary()``)
    and reading goes on after damage. With ``strict=True`` the first problem raises
    :class:`~p2p_nertz.errors.LogFormatError` from the iteration, after the records before it.

    Raises:
        OSError: If the file cannot be opened.
    """
    return LogReader(path, strict=strict, chunk_size=chunk_size)
