"""The durable game log: a versioned file format, a crash-safe writer and a streaming reader.

Every peer keeps one log file per game (DESIGN.md §6): the events it signed and sent, each made
durable *before* it is sent, the events and beats it received, and local notes such as its
round secret. After a crash the peer rebuilds itself from the log; after the game anyone can
audit the logs. ``docs/log-format.md`` specifies the bytes so another program can read them.

- :mod:`p2p_nertz.logfile.format` — pure framing (no I/O): :class:`Record`, :class:`LogHeader`,
  the incremental :class:`LogDecoder` and :class:`LogStream`, problems and summaries. The audit
  and other pure code use this.
- :mod:`p2p_nertz.logfile.store` — the file system side: :func:`create_log`,
  :func:`open_for_append` (recovery after a restart), :class:`LogWriter` (durable appends) and
  :func:`read_log` (streaming reader).

Each record's data, the signed message envelope, is opaque here; the protocol docs specify it.
"""

from __future__ import annotations

from p2p_nertz.logfile.format import (
    FORMAT_VERSION,
    MAGIC,
    MAX_PAYLOAD_SIZE,
    LogDecoder,
    LogHeader,
    LogProblem,
    LogStream,
    LogSummary,
    ProblemKind,
    Record,
    RecordKind,
    TailState,
    decode_record,
    encode_header,
    encode_log,
    encode_record,
)
from p2p_nertz.logfile.store import (
    LogReader,
    LogWriter,
    Recovery,
    create_log,
    open_for_append,
    read_log,
)

__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "MAX_PAYLOAD_SIZE",
    "LogDecoder",
    "LogHeader",
    "LogProblem",
    "LogReader",
    "LogStream",
    "LogSummary",
    "LogWriter",
    "ProblemKind",
    "Record",
    "RecordKind",
    "Recovery",
    "TailState",
    "create_log",
    "decode_record",
    "encode_header",
    "encode_log",
    "encode_record",
    "open_for_append",
    "read_log",
]
