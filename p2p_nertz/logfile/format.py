"""Pure framing of p2p-nertz game-log files: bytes in, records and problems out.

Theory of operation
-------------------
``docs/log-format.md`` is the specification; this module is its reference implementation. A log
file is a fixed prefix, one header frame, then one frame per record::

    "NERTZLOG" | version u16 | frame(header map) | frame(record) | frame(record) | ...
    frame  = length u32 | CRC-32(length) u32 | payload (length bytes) | CRC-32(payload) u32
    record = kind u8 | [name length u8 | name]  (notes only) | data

All integers are big-endian. The length carries its own checksum so that a reader can trust it
*before* it has the payload. That buys three things:

- a frame whose payload is damaged is skipped by its (trusted) length, and reading goes on at
  the very next frame;
- a file that ends inside a frame whose length checks out is a **torn tail** (the writer died
  in the middle of an append), told apart from a damaged length in the middle of the file;
- after a damaged length the decoder **resynchronises**: it scans forward for the next offset
  holding a length and a matching length checksum. A valid length is below 2**24, so its first
  byte is zero and the scan only tests offsets holding a zero byte.

A region of zero bytes after the last good frame is also a torn tail: file systems that persist
a file's new size before its data leave exactly that after a power cut. Zeros never form a valid
frame (the checksum of a zero length is not zero).

The checksums detect accidents (a torn write, a flipped bit), not attacks: anyone can recompute
a CRC. Authenticity comes from the Ed25519 signature inside every message envelope, which the
audit verifies; the data of a record is opaque here.

:class:`LogDecoder` works like h11: it does no I/O, ``feed(chunk)`` returns the records that
chunk completed, and ``close()`` returns a :class:`LogSummary` saying how the input ended. In the
default lenient mode it never raises on bad input: every damaged region becomes a
:class:`LogProblem` with its byte offset and reading goes on (an audit wants every problem). In
strict mode the first problem raises :class:`~p2p_nertz.errors.LogFormatError`, after the records
that preceded it have been returned. :class:`LogStream` wraps the decoder around any iterable of
chunks, so memory stays bounded by the chunk size plus one frame.

>>> header = LogHeader(game_id=b"game-1", peer_id=bytes(32), created_at_ms=0)
>>> blob = encode_log(header, [Record.sent_event(b"envelope"), Record.note("secret", b"s")])
>>> stream = LogStream([blob])
>>> list(stream)
[Record.sent_event(b'envelope'), Record.note('secret', b's')]
>>> stream.summary().tail
<TailState.CLEAN: 'clean'>
"""

from __future__ import annotations

import enum
import re
import struct
import zlib
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass

import msgpack  # type: ignore[import-untyped]

from p2p_nertz.errors import LogFormatError

__all__ = [
    "FORMAT_VERSION",
    "FRAME_OVERHEAD",
    "MAGIC",
    "MAX_PAYLOAD_SIZE",
    "NOT_A_LOG",
    "NOT_ITS_START",
    "PREFIX_SIZE",
    "LogDecoder",
    "LogHeader",
    "LogProblem",
    "LogStream",
    "LogSummary",
    "ProblemKind",
    "Record",
    "RecordKind",
    "TailState",
    "checksum",
    "decode_record",
    "encode_frame",
    "encode_header",
    "encode_log",
    "encode_record",
]

MAGIC = b"NERTZLOG"
"""The first eight bytes of every log file."""

FORMAT_VERSION = 1
"""The version of the file format this module reads and writes (a u16 after :data:`MAGIC`)."""

PREFIX_SIZE = len(MAGIC) + 2
"""Bytes before the header frame: the magic and the format version."""

FRAME_OVERHEAD = 12
"""Bytes a frame adds around its payload: length, length checksum and payload checksum."""

MAX_PAYLOAD_SIZE = 1 << 20
"""The largest payload a frame may carry (1 MiB); larger lengths are damage, never data.

Messages are a few KiB; the bound keeps a reader's memory bounded and must stay below 2**24,
because resynchronisation only tests offsets whose first byte is zero.
"""

NOTE_NAME_MAX = 64
"""The longest note name, in bytes."""

GAME_ID_MAX = 64
"""The longest game id the header accepts, in bytes."""

PEER_ID_SIZE = 32
"""The size of a peer id: a raw Ed25519 public key."""

_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_FRAME_HEAD = struct.Struct(">II")
_HEAD_SIZE = _FRAME_HEAD.size
_FRAME_HEAD_KIND = struct.Struct(">IIB")  # the head and a payload's first byte (its kind)
_HEAD_AND_KIND = _FRAME_HEAD_KIND.size
_HEAD_AND_TAIL = _HEAD_SIZE + 4  # a frame's bytes besides its payload
_NOTE_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")
_U63 = 1 << 63
_NONZERO = re.compile(rb"[^\x00]")


def checksum(data: bytes | bytearray | memoryview) -> int:
    """Return the CRC-32 of ``data`` as used by the format (zlib's CRC-32, ISO-HDLC).

    >>> hex(checksum(b"123456789"))
    '0xcbf43926'
    """
    return zlib.crc32(data) & 0xFFFFFFFF


class RecordKind(enum.IntEnum):
    """What a record holds; the value is the record's first byte on disk."""

    SENT_EVENT = 1
    """An event this peer signed and sent (data: the signed envelope, opaque here)."""
    RECEIVED_EVENT = 2
    """An event received from another peer (data: the envelope exactly as received)."""
    SENT_BEAT = 3
    """A beat this peer sent, if the runtime chooses to log it."""
    RECEIVED_BEAT = 4
    """A beat received from another peer, if the runtime chooses to log it."""
    NOTE = 5
    """A local note, never sent: a named blob such as ``secret`` or ``checkpoint``."""


# Plain constants of the members read on hot paths (why: p2p_nertz/rules/moves.py).
RECORD_SENT_EVENT = RecordKind.SENT_EVENT
RECORD_RECEIVED_EVENT = RecordKind.RECEIVED_EVENT
RECORD_NOTE = RecordKind.NOTE


@dataclass(frozen=True, slots=True, kw_only=True)
class LogHeader:
    """The header of a log file: which game, whose log, and when it was created.

    Attributes:
        game_id: The game's id, 1 to 64 bytes.
        peer_id: The writing peer's id, its 32-byte Ed25519 public key.
        created_at_ms: Creation time in milliseconds since the Unix epoch, given by the caller
            (the format never reads a clock, so a simulated run writes identical bytes).
    """

    game_id: bytes
    peer_id: bytes
    created_at_ms: int

    def __post_init__(self) -> None:
        if not isinstance(self.game_id, bytes) or not 1 <= len(self.game_id) <= GAME_ID_MAX:
            raise LogFormatError(f"game_id must be 1 to {GAME_ID_MAX} bytes, not {self.game_id!r}")
        if not isinstance(self.peer_id, bytes) or len(self.peer_id) != PEER_ID_SIZE:
            raise LogFormatError(f"peer_id must be {PEER_ID_SIZE} bytes, not {self.peer_id!r:.80}")
        ms = self.created_at_ms
        if isinstance(ms, bool) or not isinstance(ms, int) or not 0 <= ms < _U63:
            raise LogFormatError(f"created_at_ms must be an int in [0, 2**63), not {ms!r}")


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Record:
    """One record of a log: its kind, its opaque data and, for a note, the note's name.

    Build records with the named constructors (``Record.sent_event(envelope)``,
    ``Record.note("secret", blob)``, ...); the keyword constructor validates the same way.

    Attributes:
        kind: What the record holds.
        data: The message bytes exactly as signed or received (never empty), or a note's blob.
        name: The note's name (1 to 64 of ``a-z 0-9 _ . -``) for a note, else ``""``.
    """

    kind: RecordKind
    data: bytes
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.kind, RecordKind):
            raise LogFormatError(f"kind must be a RecordKind, not {self.kind!r}")
        if not isinstance(self.data, bytes):
            raise LogFormatError(f"data must be bytes, not {type(self.data).__name__}")
        if self.kind is RecordKind.NOTE:
            if not 1 <= len(self.name) <= NOTE_NAME_MAX or not set(self.name) <= _NOTE_NAME_CHARS:
                raise LogFormatError(
                    f"a note name is 1 to {NOTE_NAME_MAX} of a-z 0-9 _ . -, not {self.name!r}"
                )
        else:
            if self.name:
                raise LogFormatError(f"only a note has a name; {self.kind.name} got {self.name!r}")
            if not self.data:
                raise LogFormatError(f"a {self.kind.name} record needs the message bytes")
        if self.payload_size > MAX_PAYLOAD_SIZE:
            raise LogFormatError(
                f"record payload of {self.payload_size} bytes exceeds {MAX_PAYLOAD_SIZE}"
            )

    @property
    def payload_size(self) -> int:
        """The size of the record's frame payload in bytes."""
        extra = 1 + len(self.name) if self.kind is RecordKind.NOTE else 0
        return 1 + extra + len(self.data)

    @classmethod
    def sent_event(cls, envelope: bytes) -> Record:
        """Return a record of an event this peer signed and is about to send."""
        return cls(kind=RecordKind.SENT_EVENT, data=envelope)

    @classmethod
    def received_event(cls, envelope: bytes) -> Record:
        """Return a record of an event received from another peer."""
        return cls(kind=RecordKind.RECEIVED_EVENT, data=envelope)

    @classmethod
    def sent_beat(cls, envelope: bytes) -> Record:
        """Return a record of a beat this peer sent."""
        return cls(kind=RecordKind.SENT_BEAT, data=envelope)

    @classmethod
    def received_beat(cls, envelope: bytes) -> Record:
        """Return a record of a beat received from another peer."""
        return cls(kind=RecordKind.RECEIVED_BEAT, data=envelope)

    @classmethod
    def note(cls, name: str, data: bytes = b"") -> Record:
        """Return a local note (never sent) called ``name`` holding ``data``."""
        return cls(kind=RecordKind.NOTE, data=data, name=name)

    def __repr__(self) -> str:
        # Pasteable into a test, like python-chess values.
        if self.kind is RecordKind.NOTE:
            return f"Record.note({self.name!r}, {self.data!r})"
        return f"Record.{self.kind.name.lower()}({self.data!r})"


class ProblemKind(enum.Enum):
    """What is wrong at some offset of a log; the first three make the whole file unreadable."""

    NOT_A_LOG = "not a log"
    """The file does not start with the magic (garbage, empty, or another format)."""
    UNSUPPORTED_VERSION = "unsupported version"
    """The magic is right but the format version is one this reader does not implement."""
    BAD_HEADER = "bad header"
    """The header frame is truncated, fails its checksums, or is not a valid header map."""
    BAD_FRAME = "bad frame"
    """A frame's length or length checksum is damaged; bytes were skipped to the next frame."""
    BAD_CHECKSUM = "bad checksum"
    """A frame's payload fails its checksum; the frame was skipped by its length."""
    BAD_RECORD = "bad record"
    """A frame is intact but its payload is not a valid record (unknown kind, bad name)."""


_FATAL = frozenset({ProblemKind.NOT_A_LOG, ProblemKind.UNSUPPORTED_VERSION, ProblemKind.BAD_HEADER})


@dataclass(frozen=True, slots=True, kw_only=True)
class LogProblem:
    """A damaged or invalid region of a log.

    Attributes:
        kind: What is wrong.
        offset: Byte offset in the file where the region starts.
        length: Length of the region in bytes; 0 when unknown (a fatal problem, or strict mode,
            which stops before measuring the damage).
        detail: A sentence for humans naming what was expected and what was found.
    """

    kind: ProblemKind
    offset: int
    length: int
    detail: str

    @property
    def fatal(self) -> bool:
        """Whether the problem makes the whole file unreadable (nothing after it is read)."""
        return self.kind in _FATAL

    def error(self) -> LogFormatError:
        """Return the exception that strict mode raises for this problem."""
        return LogFormatError(str(self), offset=self.offset)

    def __str__(self) -> str:
        return f"{self.kind.value} at offset {self.offset}: {self.detail}"

    @property
    def words(self) -> str:
        """What a file with this fatal problem is not, in a person's words (every command
        that reads a log says it so: ``nertz audit``, ``replay``, ``resume``).

        >>> empty = ProblemKind.NOT_A_LOG
        >>> LogProblem(kind=empty, offset=0, length=0, detail="the file is empty").words
        'not a p2p-nertz game log: the file is empty'
        >>> cut = ProblemKind.BAD_HEADER
        >>> LogProblem(kind=cut, offset=8, length=0, detail="the header frame is cut short").words
        'not a readable game log: its header is damaged (the header frame is cut short)'
        """
        if self.kind is ProblemKind.NOT_A_LOG:
            return f"{NOT_A_LOG}: {self.detail}"
        what = _FATAL_WORDS.get(self.kind, self.kind.value)
        return f"not a readable game log: {what} ({self.detail})"


NOT_A_LOG = "not a p2p-nertz game log"
"""What a file that does not start as a log is (:attr:`LogProblem.words`)."""
NOT_ITS_START = f"it does not begin as one ({MAGIC.decode()})"
"""Why, for a file of other bytes (Python's ``b'NERTZLOG'`` said nothing to a person)."""

_FATAL_WORDS = {
    ProblemKind.UNSUPPORTED_VERSION: "a log format this nertz does not read",
    ProblemKind.BAD_HEADER: "its header is damaged",
}


class TailState(enum.Enum):
    """How a log ends after its last good frame."""

    CLEAN = "clean"
    """The input ends exactly after the last good frame."""
    TORN = "torn"
    """The input ends inside a frame whose length checks out, or in zero bytes: a crash
    mid-append. A writer reopening the file cuts it; nothing that was acknowledged is lost."""
    CORRUPT = "corrupt"
    """There is damage after the last good frame (see the problems for offsets)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LogSummary:
    """How decoding a log went, returned by :meth:`LogDecoder.close`.

    Attributes:
        header: The file's header, or ``None`` if it could not be read.
        tail: How the input ends after the last good frame.
        records: The number of records decoded.
        problems: Every problem found, in file order.
        good_end: The offset just after the last good frame (the header frame counts): where a
            writer may cut a torn tail and append.
        size: The number of bytes fed.
        zero_tail: A torn tail that is zero bytes where a frame should start (padding: the
            file's new size was kept, not its data), not a frame the writer did not finish.
    """

    header: LogHeader | None
    tail: TailState
    records: int
    problems: tuple[LogProblem, ...]
    good_end: int
    size: int
    zero_tail: bool = False

    @property
    def ok(self) -> bool:
        """Whether the log is entirely sound: no problem and a clean tail."""
        return not self.problems and self.tail is TailState.CLEAN

    @property
    def fatal(self) -> LogProblem | None:
        """The problem that made the file unreadable, if any."""
        return next((p for p in self.problems if p.fatal), None)

    @property
    def tail_bytes(self) -> int:
        """The number of bytes after the last good frame (what a writer would cut)."""
        return self.size - self.good_end

    def torn_words(self) -> str:
        """What a torn tail is, in a person's words (the audit's ``truncated`` notice, ``nertz
        resume``'s cut): a frame cut short, or zero bytes where a frame should start.

        >>> LogSummary(header=None, tail=TailState.TORN, records=0, problems=(), good_end=90,
        ...            size=4186, zero_tail=True).torn_words()[:60]
        'the log ends in 4096 zero bytes after the last whole record '
        """
        if self.zero_tail:
            return (
                f"the log ends in {self.tail_bytes} zero bytes after the last whole record "
                "(padding: a crash kept the file's new size, not its data)"
            )
        return (
            f"the log ends inside a frame: {self.tail_bytes} bytes after the last whole record "
            "(the file was cut, or its writer died mid-append)"
        )


def encode_frame(payload: bytes | bytearray | memoryview) -> bytes:
    """Return ``payload`` framed: length, length checksum, payload, payload checksum.

    Raises:
        LogFormatError: If the payload is larger than :data:`MAX_PAYLOAD_SIZE`.
    """
    if len(payload) > MAX_PAYLOAD_SIZE:
        raise LogFormatError(f"frame payload of {len(payload)} bytes exceeds {MAX_PAYLOAD_SIZE}")
    length = _U32.pack(len(payload))
    return b"".join((length, _U32.pack(checksum(length)), payload, _U32.pack(checksum(payload))))


def encode_header(header: LogHeader) -> bytes:
    """Return the bytes that start a log file: magic, format version and header frame."""
    # Fixed key order, so the same header always gives the same bytes (DESIGN.md §8 Determinism).
    fields = {
        "game_id": header.game_id,
        "peer_id": header.peer_id,
        "created_at_ms": header.created_at_ms,
    }
    packed: bytes = msgpack.packb(fields, use_bin_type=True)
    return MAGIC + _U16.pack(FORMAT_VERSION) + encode_frame(packed)


def encode_record(record: Record) -> bytes:
    """Return the frame of one record, ready to append to a log file."""
    if record.kind is RecordKind.NOTE:
        name = record.name.encode("ascii")
        return encode_frame(bytes((record.kind, len(name))) + name + record.data)
    return encode_frame(bytes((record.kind,)) + record.data)


def encode_log(header: LogHeader, records: Iterable[Record]) -> bytes:
    """Return a whole log file holding ``records`` (for tools and tests; writers append)."""
    return encode_header(header) + b"".join(encode_record(r) for r in records)


def decode_record(payload: bytes | bytearray | memoryview) -> Record:
    """Return the record held by a frame payload.

    Raises:
        LogFormatError: If the payload is not a valid record.
    """
    if not payload:
        raise LogFormatError("empty record payload")
    kind = _RECORD_KINDS.get(payload[0])
    if kind is None:
        raise LogFormatError(f"unknown record kind {payload[0]}")
    if kind is not RECORD_NOTE:
        if len(payload) > 1:
            return _message_record(kind, bytes(payload[1:]))
        return Record(kind=kind, data=b"")  # refused by the record's own checks
    if len(payload) < 2 or len(payload) < 2 + payload[1]:
        raise LogFormatError("note payload shorter than its name")
    end = 2 + payload[1]
    try:
        name = bytes(payload[2:end]).decode("ascii")
    except UnicodeDecodeError:
        raise LogFormatError("note name is not ASCII") from None
    return Record(kind=kind, data=bytes(payload[end:]), name=name)


_RECORD_KINDS = {int(kind): kind for kind in RecordKind}
# The kinds whose data is a message (every kind but a note), and the CRC-32 of each kind's
# byte, from which a frame's checksum continues over the message (LogDecoder._good_frames).
_MESSAGE_KINDS = {
    int(kind): (kind, zlib.crc32(bytes([kind])))
    for kind in RecordKind
    if kind is not RecordKind.NOTE
}
# The CRC-32 of a frame's length field, by the length (a function of it alone: the field is the
# length's four bytes): remembered for the lengths of messages, a few hundred distinct ones, so
# that a frame's length is checked by a lookup (LogDecoder._good_frames).
_LENGTH_SUMS: dict[int, int] = {}
_LENGTH_SUMS_KEPT = 1 << 13  # lengths below this are remembered (at most that many entries)


def _message_record(kind: RecordKind, data: bytes) -> Record:
    """A record of a message (not a note) with data, made without the constructor's checks.

    Every check :class:`Record` makes holds here by construction (a kind, bytes, no name,
    some data, a payload within a frame's bound), and the reader makes one record per frame:
    the fields are set through their slots directly (what the frozen constructor does, at
    about half the cost).
    """
    record = _new_record(Record)
    _set_kind(record, kind)
    _set_data(record, data)
    _set_name(record, "")
    return record


_new_record = object.__new__
_set_kind = Record.__dict__["kind"].__set__
_set_data = Record.__dict__["data"].__set__
_set_name = Record.__dict__["name"].__set__


def _decode_header(payload: bytes) -> LogHeader:
    """Return the header held by the header frame's payload, or raise LogFormatError."""
    try:
        fields = msgpack.unpackb(payload, raw=False, strict_map_key=True, use_list=True)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise LogFormatError(f"header is not msgpack: {exc}") from None
    if not isinstance(fields, dict):
        raise LogFormatError(f"header is a msgpack {type(fields).__name__}, not a map")
    # Unknown keys are ignored: adding an optional header field is not a format change.
    missing = [k for k in ("game_id", "peer_id", "created_at_ms") if k not in fields]
    if missing:
        raise LogFormatError(f"header lacks {', '.join(missing)}")
    return LogHeader(
        game_id=fields["game_id"],
        peer_id=fields["peer_id"],
        created_at_ms=fields["created_at_ms"],
    )


def _frame_head(view: memoryview, at: int) -> tuple[int, int]:
    """Return the length and the length checksum of the frame starting at ``at``."""
    length, length_sum = _FRAME_HEAD.unpack_from(view, at)
    return int(length), int(length_sum)


class _State(enum.Enum):
    PREFIX = enum.auto()
    HEADER = enum.auto()
    FRAMES = enum.auto()
    DAMAGED = enum.auto()
    STOPPED = enum.auto()


# Plain constants of the members read on hot paths (why: p2p_nertz/rules/moves.py).
_FRAMES = _State.FRAMES
_STOPPED = _State.STOPPED


class LogDecoder:
    """Incremental, I/O-free decoder of a log file: feed chunks, get records.

    Memory stays bounded by the largest chunk fed plus one frame (at most
    :data:`MAX_PAYLOAD_SIZE` plus overhead), twice that while a chunk is decoded, whatever
    the size of the log.

    Args:
        strict: If true, the first problem raises :class:`~p2p_nertz.errors.LogFormatError`
            (after the records before it are returned) and decoding stops. If false (the
            default), problems are collected in :attr:`problems` and decoding resynchronises;
            nothing raises on bad input.
    """

    def __init__(self, *, strict: bool = False) -> None:
        self._strict = strict
        self._buf = bytearray()
        self._base = 0  # file offset of self._buf[0]
        self._state = _State.PREFIX
        self._header: LogHeader | None = None
        self._problems: list[LogProblem] = []
        self._records = 0
        self._good_end = 0
        self._damage_start = 0
        self._damage_zero = True
        self._pending: LogFormatError | None = None
        self._summary: LogSummary | None = None

    @property
    def header(self) -> LogHeader | None:
        """The file's header, once the bytes holding it have been fed."""
        return self._header

    @property
    def problems(self) -> tuple[LogProblem, ...]:
        """The problems found so far, in file order."""
        return tuple(self._problems)

    @property
    def good_end(self) -> int:
        """The offset just after the last good frame decoded so far."""
        return self._good_end

    def feed(self, data: bytes | bytearray | memoryview) -> list[Record]:
        """Feed the next chunk of the file; return the records it completed, in order.

        Raises:
            LogFormatError: In strict mode, at the first problem.
            ValueError: If called after :meth:`close`.
        """
        if self._summary is not None:
            raise ValueError("LogDecoder.feed() called after close()")
        self._raise_pending()
        if self._state is _State.STOPPED:
            self._base += len(data)  # keep counting, so the summary's size is the file's
            return []
        self._buf += data
        out: list[Record] = []
        with memoryview(self._buf) as view:
            used = self._parse(view, out)
        del self._buf[:used]
        self._base += used
        if self._pending is not None and not out:
            self._raise_pending()
        return out

    def close(self) -> LogSummary:
        """Signal the end of the input; return how decoding went (idempotent).

        Raises:
            LogFormatError: In strict mode, if the end of the input reveals a problem (a file
                that ends inside its header, or damaged bytes up to the end).
        """
        if self._summary is not None:
            return self._summary
        self._raise_pending()
        size = self._base + len(self._buf)
        torn = zeros = False
        rest = len(self._buf)
        if self._state is _State.PREFIX:
            found = "is empty" if size == 0 else f"is only {size} bytes"
            self._stop(ProblemKind.NOT_A_LOG, 0, size, f"the file {found}")
        elif self._state is _State.HEADER:
            self._stop(ProblemKind.BAD_HEADER, PREFIX_SIZE, rest, "the file ends in its header")
        elif self._state is _State.FRAMES:
            # A complete frame would have been decoded, and a bad length would have moved the
            # decoder to DAMAGED: what is left is a frame the writer did not finish.
            torn = rest > 0
        elif self._state is _State.DAMAGED:
            if self._damage_zero and not any(self._buf):
                # The file's size was persisted but not its data. (A frame cut in its first
                # bytes is zeros too, but shorter than a head: it ends in FRAMES, above.)
                torn = zeros = True
            else:
                self._add(
                    ProblemKind.BAD_FRAME,
                    self._damage_start,
                    size - self._damage_start,
                    "damaged bytes up to the end of the file",
                )
        self._raise_pending()
        if any(p.offset >= self._good_end for p in self._problems):
            tail = TailState.CORRUPT
        elif torn:
            tail = TailState.TORN
        else:
            tail = TailState.CLEAN
        self._buf.clear()
        self._summary = LogSummary(
            header=self._header,
            tail=tail,
            records=self._records,
            problems=tuple(self._problems),
            good_end=self._good_end,
            size=size,
            zero_tail=zeros and tail is TailState.TORN,
        )
        return self._summary

    def _raise_pending(self) -> None:
        if self._pending is not None:
            error, self._pending = self._pending, None
            raise error

    def _add(self, kind: ProblemKind, offset: int, length: int, detail: str) -> None:
        problem = LogProblem(kind=kind, offset=offset, length=length, detail=detail)
        self._problems.append(problem)
        if self._strict:
            self._pending = problem.error()
            self._state = _State.STOPPED

    def _stop(self, kind: ProblemKind, offset: int, length: int, detail: str) -> None:
        self._add(kind, offset, length, detail)
        self._state = _State.STOPPED

    def _good_frames(self, raw: bytes, i: int, out: list[Record]) -> int:
        """Decode the whole, intact frames of messages from ``i`` on; return where they stop.

        The usual case, in a tight loop over ``raw`` (a copy of the buffer: slicing bytes
        makes each record's data in one step): a frame whose length and checksums hold and
        whose payload is an event or a beat (a known kind byte, then the message). It stops at
        the first frame that is anything else (incomplete, damaged, a note, a record to
        refuse), which :meth:`_parse` then decides by its general steps, so it decides nothing
        itself: every frame it takes is one those steps take the same way (``decode_record``
        makes the same record of it, and there is no problem to add).
        """
        head = _FRAME_HEAD_KIND.unpack_from  # (the length, its checksum and the kind byte)
        tail = _U32.unpack_from
        crc32 = zlib.crc32
        kinds = _MESSAGE_KINDS
        length_sums = _LENGTH_SUMS
        new, set_kind, set_data, set_name = _new_record, _set_kind, _set_data, _set_name
        add = out.append
        n = len(raw)
        start = i
        held = len(out)
        while n - i > _HEAD_SIZE:  # (a frame's payload is at least 2 bytes: its kind byte too)
            length, length_sum, code = head(raw, i)
            end = i + length + _HEAD_AND_TAIL
            if n < end or length < 2 or length > MAX_PAYLOAD_SIZE:
                break
            known = kinds.get(code)
            if known is None:
                break
            if length_sums.get(length) != length_sum:
                if crc32(raw[i : i + 4]) != length_sum:
                    break
                if length < _LENGTH_SUMS_KEPT:
                    length_sums[length] = length_sum
            kind, kind_sum = known
            data = raw[i + _HEAD_AND_KIND : end - 4]
            # The payload's checksum: the kind byte's, continued over the message.
            if crc32(data, kind_sum) != tail(raw, end - 4)[0]:
                break
            record = new(Record)  # what _message_record does, without a call per record
            set_kind(record, kind)
            set_data(record, data)
            set_name(record, "")
            add(record)
            i = end
        if i > start:
            self._records += len(out) - held
            self._good_end = self._base + i
        return i

    def _parse(self, view: memoryview, out: list[Record]) -> int:
        """Decode what ``view`` (the buffer) holds; return how many bytes were used up.

        One step of the decoder's state at a time, each returning where it got to and
        whether to go on (``False``: it needs more bytes, or the decoder stopped).
        """
        i = 0
        raw = b""  # a copy of the buffer for _good_frames, made once it is wanted
        while True:
            state = self._state
            if state is _FRAMES:
                if not raw:
                    raw = bytes(view)
                i, more = self._read_frames(view, raw, i, out)
            elif state is _State.DAMAGED:
                i, more = self._skip_damage(view, i)
            elif state is _State.PREFIX:
                i, more = self._read_prefix(view, i)
            elif state is _State.HEADER:
                i, more = self._read_header(view, i)
            else:
                return len(view)
            if not more:
                return i

    def _read_frames(
        self, view: memoryview, raw: bytes, i: int, out: list[Record]
    ) -> tuple[int, bool]:
        """The good frames from ``i`` on, then the one frame they stop at: a record, a bad
        checksum or record (a problem, and on), or a damaged length (to DAMAGED)."""
        n = len(view)
        base = self._base
        i = self._good_frames(raw, i, out)
        # What is left is a frame the loop above left to the general steps below.
        if n - i < _HEAD_SIZE:
            return i, False
        length, length_sum = _FRAME_HEAD.unpack_from(view, i)
        crc32 = zlib.crc32  # what checksum() computes (CRC-32 is unsigned in Python 3)
        if length > MAX_PAYLOAD_SIZE or crc32(view[i : i + 4]) != length_sum:
            self._state = _State.DAMAGED
            self._damage_start = base + i
            self._damage_zero = view[i] == 0
            i += 1
            if self._strict and not self._damage_zero:
                self._add(ProblemKind.BAD_FRAME, base + i - 1, 0, "damaged frame length")
                return i, False
            return i, True
        end: int = i + _HEAD_SIZE + length + 4
        if n < end:
            return i, False
        payload = view[i + _HEAD_SIZE : end - 4]
        (payload_sum,) = _U32.unpack_from(view, end - 4)
        if crc32(payload) != payload_sum:
            self._add(
                ProblemKind.BAD_CHECKSUM,
                base + i,
                end - i,
                f"payload of {length} bytes does not match its checksum",
            )
        else:
            try:
                record = decode_record(payload)
            except LogFormatError as exc:
                self._add(ProblemKind.BAD_RECORD, base + i, end - i, str(exc))
            else:
                out.append(record)
                self._records += 1
                self._good_end = base + end
        return end, self._state is not _STOPPED

    def _skip_damage(self, view: memoryview, i: int) -> tuple[int, bool]:
        """Look for the next intact frame head from ``i`` on (back to FRAMES once found)."""
        n = len(view)
        base = self._base
        # A valid length is < 2**24, so a frame can only start at a zero byte: jump to the
        # next one. Everything jumped over is damage and is not zero.
        j = self._buf.find(0, i, n)
        j = n if j < 0 else j
        if j > i:
            self._damage_zero = False
            if self._strict:
                self._add(ProblemKind.BAD_FRAME, self._damage_start, 0, "damaged frame length")
                return j, False
        # A frame head is never eight zero bytes, so in a run of zeros (a pre-allocated or
        # unwritten region) only the last seven offsets can start one.
        nonzero = _NONZERO.search(self._buf, j, n)
        i = max(j, (nonzero.start() if nonzero else n) - (_HEAD_SIZE - 1))
        if n - i < _HEAD_SIZE:
            return i, False
        length, length_sum = _frame_head(view, i)
        if length <= MAX_PAYLOAD_SIZE and checksum(view[i : i + 4]) == length_sum:
            start = self._damage_start
            self._state = _FRAMES
            self._add(
                ProblemKind.BAD_FRAME,
                start,
                base + i - start,
                f"{base + i - start} damaged bytes skipped up to the next frame",
            )
            return i, not self._strict
        return i + 1, True  # a zero byte, so the damage is still all zeros if it was

    def _read_prefix(self, view: memoryview, i: int) -> tuple[int, bool]:
        """The magic and the format version (then HEADER)."""
        n = len(view)
        have = min(n - i, len(MAGIC))
        # Compare as soon as bytes arrive, so a garbage file fails on its first chunk.
        if view[i : i + have] != MAGIC[:have]:
            self._stop(ProblemKind.NOT_A_LOG, 0, 0, NOT_ITS_START)
            return n, False
        if n - i < PREFIX_SIZE:
            return i, False
        (version,) = _U16.unpack_from(view, i + len(MAGIC))
        if version != FORMAT_VERSION:
            self._stop(
                ProblemKind.UNSUPPORTED_VERSION,
                len(MAGIC),
                0,
                f"format version {version}; this reader implements {FORMAT_VERSION}",
            )
            return n, False
        self._state = _State.HEADER
        return i + PREFIX_SIZE, True

    def _read_header(self, view: memoryview, i: int) -> tuple[int, bool]:
        """The header frame (then FRAMES)."""
        n = len(view)
        base = self._base
        if n - i < _HEAD_SIZE:
            return i, False
        length, length_sum = _frame_head(view, i)
        if length > MAX_PAYLOAD_SIZE or checksum(view[i : i + 4]) != length_sum:
            self._stop(ProblemKind.BAD_HEADER, base + i, 0, "damaged header length")
            return n, False
        end = i + _HEAD_SIZE + length + 4
        if n < end:
            return i, False
        header_bytes = bytes(view[i + _HEAD_SIZE : end - 4])
        if checksum(header_bytes) != _U32.unpack_from(view, end - 4)[0]:
            self._stop(ProblemKind.BAD_HEADER, base + i, 0, "header checksum mismatch")
            return n, False
        try:
            self._header = _decode_header(header_bytes)
        except LogFormatError as exc:
            self._stop(ProblemKind.BAD_HEADER, base + i, 0, str(exc))
            return n, False
        self._good_end = base + end
        self._state = _FRAMES
        return end, True


class LogStream:
    """Iterate over the records of a log given as an iterable of byte chunks.

    Reads one chunk at a time, so memory is bounded by the chunk size plus one frame. Single
    pass: iterate once, then call :meth:`summary`.

    Args:
        chunks: The file's bytes, in order, in chunks of any size.
        strict: As for :class:`LogDecoder`: raise at the first problem instead of collecting.
    """

    def __init__(
        self, chunks: Iterable[bytes | bytearray | memoryview], *, strict: bool = False
    ) -> None:
        self._chunks = chunks
        self._decoder = LogDecoder(strict=strict)
        self._records: Generator[Record, None, None] | None = None

    @property
    def header(self) -> LogHeader | None:
        """The log's header, once iteration has read it."""
        return self._decoder.header

    @property
    def problems(self) -> tuple[LogProblem, ...]:
        """The problems found so far."""
        return self._decoder.problems

    def __iter__(self) -> Iterator[Record]:
        if self._records is None:
            self._records = self._generate()
        return self._records

    def _generate(self) -> Generator[Record, None, None]:
        for chunk in self._chunks:
            yield from self._decoder.feed(chunk)
        self._decoder.close()

    def summary(self) -> LogSummary:
        """Return how decoding went, first reading (and dropping) any records not yet read.

        Raises:
            LogFormatError: In strict mode, if a problem is found in what is left to read.
        """
        for _ in self:
            pass
        return self._decoder.close()
