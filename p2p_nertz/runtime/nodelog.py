"""A node's log: the notes it writes besides events, and how it writes the peer's effects.

Theory of operation
-------------------
The log (:mod:`p2p_nertz.logfile.store`) is opened with
:func:`~p2p_nertz.logfile.store.open_for_append`. A new log gets the game's spec and the
members' endpoints first (:func:`session_notes`: enough to resume from the log alone). If the
log already holds events, the peer is rebuilt from them and from the highest durable clock
note (:func:`resume_point`), so a killed process continues the game with no seq reused. If
the log's tail had to be cut (it may have lost an event we sent), or a recovery noted in it
did not finish, or the caller says so, the peer is restored in recovery: it learns its own
feed from the others before it signs (docs/protocol.md §9.6), between a
:data:`RECOVERING_NOTE` and a :data:`RECOVERED_NOTE`.

Of the peer's effects, :func:`durable_record` says which are written and as what: a
:class:`~p2p_nertz.protocol.peer.Record` as a sent or received event, a ``Reserve`` as the
note ``clock`` (8 bytes, big-endian), a ``Note`` as the note it names (``proof``: the two
signed messages that prove a member cheated, durable before the vote they justify is sent), a
``Recovered`` as :data:`RECOVERED_NOTE`. :meth:`NodeLog.write` makes a batch durable
(synced) unless it holds received events only: those are held, signed, by their authors, and
waiting for the disk there would delay every ack.

A new log is created by its first write, not when it is opened: its header, the session notes
(:meth:`NodeLog.hold`) and the peer's first batch (its join) in one file, synced once, with
its directory, before the join is sent. Each sync was one more wait before the node's first
message: on a disk whose every sync took 3 s the others dropped the node, unheard, after four
(session 28, docs/log-format.md §6). The notes need not be durable before the join: a log
without the join (the crash came first) restarts nothing, and the notes travel with it.

Syncs on a slow disk (session 29). A synced write blocks trio's thread, and with it the node:
no beat, no ack, nothing received, for as long as the sync takes (~1 ms here; seconds on a USB
stick, an NFS home, a laptop disk saving power). A write that took longer than ``slow_after``
(:class:`SyncPace`) moves the next ones to a worker thread; ``meanwhile`` then runs beside
the sync (the node keeps itself heard, :meth:`~p2p_nertz.protocol.peer.Peer.keep_heard`),
and the write still returns only once the records are durable. A run of quick syncs moves
them back: on a normal disk nothing changes (no hand-off, docs/latency.md). In that mode a
batch's clock note reserves :data:`RESERVE_AHEAD` more than the peer asked, so that the
reservation durable before a write still covers the clock of what ``meanwhile`` signs.
"""

from __future__ import annotations

import errno
import logging
import math
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter
from time import time as wall_time
from typing import Final

import msgpack  # type: ignore[import-untyped]
import outcome
import trio

from p2p_nertz.logfile.format import LogHeader, RecordKind, TailState, encode_header
from p2p_nertz.logfile.format import Record as LogRecord
from p2p_nertz.logfile.store import LogWriter, Recovery, create_log, open_for_append
from p2p_nertz.protocol.debts import DEBT_NOTE
from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.protocol.peer import Effect, Note, Record, Recovered, Reserve
from p2p_nertz.protocol.recovery import RECOVERED_NOTE, RECOVERING_NOTE
from p2p_nertz.protocol.spec import SPEC_NOTE, GameSpec

__all__ = [
    "CLOCK_NOTE",
    "ENDPOINTS_NOTE",
    "QUICK_SYNCS",
    "RECOVERED_NOTE",
    "RECOVERING_NOTE",
    "RESERVE_AHEAD",
    "SPEC_NOTE",
    "NodeLog",
    "ResumePoint",
    "SyncPace",
    "decode_clock_note",
    "durable_record",
    "encode_clock_note",
    "read_session",
    "recovery_unfinished",
    "reserved_by",
    "resume_point",
    "session_notes",
]

log = logging.getLogger("p2p_nertz.node")

CLOCK_NOTE: Final = "clock"
"""The name of the log note that makes a :class:`Reserve` durable."""

ENDPOINTS_NOTE: Final = "endpoints"
"""The name of the log note holding the members' endpoints this node used (msgpack map of peer
id to endpoint string, ours included): with the spec note, enough to resume from the log."""


QUICK_SYNCS: Final = 16
"""Syncs in a row, each under a quarter of ``slow_after``, that move a log's syncs back to
trio's thread (:class:`SyncPace`): a disk that was slow once (a spun-down disk waking) is
not paid for with a thread hand-off on every event after."""

RESERVE_AHEAD: Final = 1000
"""Lamport ticks a clock note reserves beyond the peer's ask while syncs go to a worker thread
(:class:`NodeLog`): the peer asks for a reservation when its clock passes the last one, so
without them the clock of what the node signs during that write (``meanwhile``) would be
past every durable reservation for that write's length (docs/log-format.md §6)."""


def encode_clock_note(clock: int) -> LogRecord:
    """The durable log note for a :class:`Reserve` of ``clock``.

    >>> decode_clock_note(encode_clock_note(1000))
    1000
    """
    return LogRecord.note(CLOCK_NOTE, clock.to_bytes(8, "big"))


def decode_clock_note(record: LogRecord) -> int | None:
    """The clock a log record reserves, or ``None`` if it is not a clock note."""
    if record.kind is not RecordKind.NOTE or record.name != CLOCK_NOTE or len(record.data) != 8:
        return None
    return int.from_bytes(record.data, "big")


def reserved_by(records: Iterable[LogRecord]) -> int:
    """The highest clock the clock notes among ``records`` reserve (0: none)."""
    return max((c for c in map(decode_clock_note, records) if c is not None), default=0)


def session_notes(spec: GameSpec, endpoints: Mapping[PeerId, str]) -> list[LogRecord]:
    """The notes a new log starts with: the game's spec and every member's endpoint (ours
    included), read back by :func:`read_session`."""
    book = {bytes(pid): endpoints[pid] for pid in spec.peer_ids}
    return [
        LogRecord.note(SPEC_NOTE, spec.to_wire()),
        LogRecord.note(ENDPOINTS_NOTE, msgpack.packb(book, use_bin_type=True)),
    ]


def read_session(records: Iterable[LogRecord]) -> tuple[GameSpec, dict[PeerId, str]] | None:
    """The game spec and endpoints a node noted in its log, or ``None`` if it noted none.

    Raises:
        InvalidRulesError: the spec note is not a valid spec.
    """
    spec: GameSpec | None = None
    endpoints: dict[PeerId, str] = {}
    for record in records:
        if record.kind is not RecordKind.NOTE:
            continue
        if record.name == SPEC_NOTE and spec is None:
            spec = GameSpec.from_wire(record.data)
        elif record.name == ENDPOINTS_NOTE and not endpoints:
            try:
                raw = msgpack.unpackb(record.data, raw=False)
                endpoints = {PeerId(bytes(k)): str(v) for k, v in dict(raw).items()}
            except Exception:
                endpoints = {}
    return None if spec is None else (spec, endpoints)


def recovery_unfinished(records: Iterable[LogRecord]) -> bool:
    """Whether the log's latest recovery note is :data:`RECOVERING_NOTE`: a recovery began and
    the process stopped before it ended (so the log may still lack events we sent)."""
    state = False
    for record in records:
        if record.kind is RecordKind.NOTE and record.name in (RECOVERING_NOTE, RECOVERED_NOTE):
            state = record.name == RECOVERING_NOTE
    return state


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """What a peer is restored from (:meth:`~p2p_nertz.protocol.peer.Peer.restore`)."""

    wires: list[bytes]
    """Every event in the log, in order."""
    reserved: int
    """The highest clock a durable note reserved."""
    recover: bool
    """Whether the peer learns its own feed from the others before it signs."""
    debts: list[bytes]
    """The signed beats of the log's ``debt`` notes (why its votes on a claim were cast)."""


def resume_point(recovery: Recovery, *, recover: bool = False) -> ResumePoint | None:
    """What to restore the peer from, or ``None`` for a fresh start: the log holds no event
    and no recovery is due (``recover``: asked for one; a cut tail, which may have held our
    join, or a recovery noted and not finished, always asks)."""
    records = recovery.records
    kinds = (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT)
    wires = [r.data for r in records if r.kind in kinds]
    recover = recover or recovery.cut or recovery_unfinished(records)
    if not wires and not recover:
        return None
    debts = [r.data for r in records if r.kind is RecordKind.NOTE and r.name == DEBT_NOTE]
    return ResumePoint(wires, reserved_by(records), recover, debts)


def durable_record(effect: Effect) -> LogRecord | None:
    """The log record that makes a peer's effect durable, or ``None`` if it is not written
    (see the module docstring)."""
    if isinstance(effect, Record):
        wire = effect.data
        return LogRecord.sent_event(wire) if effect.own else LogRecord.received_event(wire)
    if isinstance(effect, Reserve):
        return encode_clock_note(effect.clock)
    if isinstance(effect, Note):
        return LogRecord.note(effect.name, effect.data)  # a proof, say
    if isinstance(effect, Recovered):
        # Durable before anything we sign after it (a restart no longer recovers).
        note = Note.recovered(effect)
        return LogRecord.note(note.name, note.data)
    return None


def _ahead(record: LogRecord) -> LogRecord:
    """``record``, or the clock note that reserves :data:`RESERVE_AHEAD` more if it is one."""
    clock = decode_clock_note(record)
    return record if clock is None else encode_clock_note(clock + RESERVE_AHEAD)


class SyncPace:
    """Whether a log's syncs go to a worker thread: from the first that took longer than
    ``slow_after`` seconds, until :data:`QUICK_SYNCS` in a row took under a quarter of it; and
    the first after ``idle_after`` seconds without one (:meth:`beside`).

    >>> pace = SyncPace(0.1)
    >>> pace.took(0.001), pace.threaded
    (False, False)
    >>> pace.took(2.5), pace.threaded
    (True, True)
    """

    def __init__(self, slow_after: float, idle_after: float = math.inf) -> None:
        self.slow_after = slow_after
        self.idle_after = idle_after
        self.threaded = False
        """Whether the next sync goes to a worker thread."""
        self.synced_at = 0.0
        """When the last sync ended (``perf_counter``; the log's opening before the first)."""
        self._quick = 0  # quick syncs in a row, while threaded

    def beside(self, now: float) -> bool:
        """Whether a sync starting at ``now`` goes to a worker thread: while :attr:`threaded`,
        and the first after ``idle_after`` seconds without a sync, alone (a disk idle that
        long may have gone to sleep, and the sync that wakes it takes seconds, which nothing
        tells from a quick sync before it ends; session 30, docs/latency.md)."""
        return self.threaded or now - self.synced_at > self.idle_after

    def took(self, seconds: float) -> bool:
        """A sync took ``seconds``; whether that moved the next ones (either way)."""
        if seconds > self.slow_after:
            self._quick = 0
            moved, self.threaded = not self.threaded, True
            return moved
        if not self.threaded:
            return False
        self._quick = self._quick + 1 if seconds < self.slow_after / 4 else 0
        if self._quick < QUICK_SYNCS:
            return False
        self.threaded, self._quick = False, 0
        return True


class NodeLog:
    """The log file of one node: opened once, written in batches, closed.

    Args:
        path: the log file; created by the first write if missing, continued (restart) if it
            holds events.
        slow_after: a sync that took longer (seconds) moves the next ones to a worker thread
            (:class:`SyncPace`; by default never).
        idle_after: the first sync after this long without one (seconds) goes to a worker
            thread (:meth:`SyncPace.beside`; by default never).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        slow_after: float = math.inf,
        idle_after: float = math.inf,
    ) -> None:
        self.path = Path(path)
        self.pace = SyncPace(slow_after, idle_after)
        """Where the syncs go, and when they move."""
        self.reserved = 0
        """The highest clock a durable note of the log reserves."""
        self.writer: LogWriter | None = None
        """The open log (once :meth:`open` has opened it)."""
        self.recovery: Recovery | None = None
        """What reopening the log found (once :meth:`open` has opened it)."""
        self._header: LogHeader | None = None  # a new log's, until its first write creates it
        self._held: list[LogRecord] = []

    def open(self, spec: GameSpec, own: PeerId, *, cut_damaged_tail: bool = False) -> Recovery:
        """Open the log of ``own`` in game ``spec``; return what it holds (a cut tail is
        replaced, durably, by a :data:`RECOVERING_NOTE`). A missing log is created by the
        first :meth:`write` (see the module docstring): until then it holds nothing.

        Raises:
            LogFormatError: the log belongs to another game or peer, or is damaged.
        """
        header = LogHeader(
            game_id=spec.game_id, peer_id=bytes(own), created_at_ms=int(wall_time() * 1000)
        )
        self.pace.synced_at = perf_counter()  # (not idle before the first: see SyncPace)
        try:
            self.writer, self.recovery = open_for_append(
                self.path,
                create_with=header,
                create=False,
                cut_damaged_tail=cut_damaged_tail,
                cut_note=RECOVERING_NOTE,  # (durable before the cut: a crash keeps it)
            )
            self.reserved = reserved_by(self.recovery.records)
        except FileNotFoundError:
            self._header = header
            end = len(encode_header(header))
            self.recovery = Recovery(
                header=header, records=(), tail=TailState.CLEAN, cut_bytes=0, good_end=end
            )
        return self.recovery

    def hold(self, records: list[LogRecord]) -> None:
        """Write ``records`` with the next :meth:`write`, before its own records and synced
        with them (the session notes of a new log: created with the peer's join)."""
        self._held.extend(records)

    async def write(
        self,
        records: list[LogRecord],
        meanwhile: Callable[[int], Awaitable[None]] | None = None,
    ) -> None:
        """Append ``records``: synced before this returns, unless they are all received
        events (see the module docstring). On trio's thread (the normal case) it never waits
        for the scheduler: no cancellation is seen, and no other task runs, between a write
        and what the caller does next. While syncs go to a worker thread (:attr:`pace`), it
        waits for the sync, with ``meanwhile(reserved)`` running beside it (``reserved``: the
        clock reserved durably before this write), cancelled once the sync is done.

        Raises:
            OSError: the log cannot be written (the disk is full, the log was replaced).
        """
        if self._held:
            records, self._held = [*self._held, *records], []
        if self._header is not None:
            # A new log: created now, whole (header, held notes, these records), with one
            # sync of the file and one of its directory, the fewest that make it durable.
            start = perf_counter()
            self.writer, self._header = create_log(self.path, self._header, records), None
            self.pace.synced_at = perf_counter()
            self._took(self.pace.synced_at - start)
            self._reserved_by(records)
            return
        writer = self.writer
        assert writer is not None
        if all(r.kind is RecordKind.RECEIVED_EVENT for r in records):
            # Only others' events, each held signed by its author (who synced it before
            # sending): written at once, without waiting for the disk or a thread, so the
            # receive path (and the acks that make claims final) never stalls on a sync.
            # They survive our process being killed; a machine crash may lose them, and
            # gap repair fetches them again (docs/protocol.md, restart from the log).
            writer.append_many(records, sync=False)
            return
        start = perf_counter()  # (timed, two clock reads, ~0.1 µs: to tell a slow or idle disk)
        if self.pace.beside(start):
            await self._write_beside(writer, records, meanwhile)
            return
        # Our own events and clock notes: durable before anything after them is sent. Synced
        # on the trio thread, blocking it for the sync (~0.9 ms here): the caller holds the
        # node's lock, so every other task that has work to do waits for it anyway, and a
        # worker thread's two hand-offs cost a claim ~0.5 ms more between being signed and
        # being sent (scripts/bench_lan.py, 2 peers), more on a busy machine. No schedule
        # point after it either: the caller's next step is to send what it just made durable,
        # and a trip through the scheduler first is a task step and a look at the sockets
        # (~0.1 ms of CPU on a woken process) for every event we sign.
        # The rest of SyncPace's bookkeeping only once a sync is slow.
        if not writer.named():
            self._name_again(writer)  # (a stat and an fstat: some µs, beside a ~1 ms sync)
        writer.append_many(records)
        self.pace.synced_at = end = perf_counter()
        if end - start > self.pace.slow_after:
            self._took(end - start)
        self._reserved_by(records)

    async def _write_beside(
        self,
        writer: LogWriter,
        records: list[LogRecord],
        meanwhile: Callable[[int], Awaitable[None]] | None,
    ) -> None:
        """Append and sync ``records`` in a worker thread, ``meanwhile`` running beside it
        (:meth:`write`). The caller holds the node's lock: nothing else writes the log."""
        reserved = self.reserved
        records = [_ahead(r) for r in records]
        async with trio.open_nursery() as nursery:
            if meanwhile is not None:
                nursery.start_soon(meanwhile, reserved)
            # (Captured: an OSError of the disk leaves this nursery as itself, not in a group.)
            done = await trio.to_thread.run_sync(outcome.capture, self._append, writer, records)
            nursery.cancel_scope.cancel()
        self.pace.synced_at = perf_counter()
        self._took(done.unwrap())
        self._reserved_by(records)

    def _reserved_by(self, records: list[LogRecord]) -> None:
        """``records`` are durable: :attr:`reserved` passes the clock notes among them."""
        for record in records:
            if record.kind is RecordKind.NOTE:  # (a loop of a few compares: events are not)
                clock = decode_clock_note(record)
                if clock is not None and clock > self.reserved:
                    self.reserved = clock

    def _append(self, writer: LogWriter, records: list[LogRecord]) -> float:
        """Append and sync ``records`` in a worker thread; the seconds it took."""
        start = perf_counter()
        if not writer.named():
            self._name_again(writer)  # (a stat and an fstat: some µs, beside a ~1 ms sync)
        writer.append_many(records)
        return perf_counter() - start

    def _took(self, seconds: float) -> None:
        """A synced write took ``seconds``: where the next ones go (:class:`SyncPace`)."""
        if self.pace.took(seconds):
            if self.pace.threaded:
                log.info(
                    "a sync of %s took %.1f s: syncs go to a worker thread", self.path, seconds
                )
            else:
                log.info("%s syncs quickly again: syncs on the node's thread", self.path)

    def _name_again(self, writer: LogWriter) -> None:
        """The log's file was removed, or replaced, while the node ran: what we sign next
        would be durable in a file no resume can find, and a person who starts the node again
        without it would sign again under used seqs (an equivocation, docs/protocol.md §9.6).
        A removed log is written again under its name; a replaced one stops the node before
        it signs anything more.

        Raises:
            OSError: the log cannot be named again (the message says why, in words).
        """
        try:
            writer.name_again()
        except FileExistsError:
            raise OSError(
                errno.EEXIST,
                "another file replaced the log while the game ran; stopped before signing "
                "anything more (this node's events were in the file replaced)",
                str(self.path),
            ) from None
        except OSError as exc:
            raise OSError(
                exc.errno,
                f"the log was removed while the game ran and cannot be written again "
                f"({exc.strerror}); stopped before signing anything more",
                str(self.path),
            ) from None
        log.warning("%s was removed while the game ran: written again there", self.path)

    def close(self) -> None:
        """Close the log (if it was opened)."""
        if self.writer is not None:
            self.writer.close()
