"""The logs of one pass: what each holds of every feed, as it is read.

A :class:`Log` is one log being read: its header and owner, the records and events read, and
per author the next seq it holds and the holes it left (a log holds each feed in order; one
that skips seqs and holds them later is *reordered*). :class:`Logs` is every log of a pass: it
checks a log's header when its first record comes and its summary when it ends; at the end of
the pass it names each log's gaps and each event only one log holds (from what each log holds
of each feed: nothing is counted per copy of an event).

What is in the events is not read here: that is :mod:`p2p_nertz.audit.delivery`'s.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Protocol

from p2p_nertz.audit.collect import Collector
from p2p_nertz.audit.findings import Finding, FindingKind
from p2p_nertz.audit.report import LogInfo
from p2p_nertz.errors import NertzError
from p2p_nertz.logfile.format import LogHeader, LogSummary, Record, TailState
from p2p_nertz.protocol.identity import fingerprint
from p2p_nertz.protocol.spec import GameSpec

__all__ = ["Log", "Logs", "RecordStream", "Source", "close"]


class RecordStream(Protocol):
    """What the audit reads: a :class:`~p2p_nertz.logfile.LogStream` or a ``read_log`` reader."""

    @property
    def header(self) -> LogHeader | None:
        """The log's header, once read."""

    def __iter__(self) -> Iterator[Record]:
        """The records, once."""

    def summary(self) -> LogSummary:
        """How reading went (after the records)."""


class Source(Protocol):
    """What a pass needs of a log to read (:class:`~p2p_nertz.audit.auditor.LogSource`)."""

    @property
    def name(self) -> str:
        """How reports name the log."""

    @property
    def open(self) -> Callable[[], RecordStream]:
        """Returns a fresh stream of its records; may raise ``OSError``."""


def close(stream: RecordStream) -> None:
    """Close a stream that can be closed (a file's reader)."""
    done = getattr(stream, "close", None)
    if done is not None:
        done()


class Log:
    """One log being read."""

    def __init__(self, index: int, source: Source, seats: int) -> None:
        self.index = index
        self.source = source
        self.name = source.name
        self.stream: RecordStream | None = None
        self.records: Iterator[Record] | None = None
        self.header: LogHeader | None = None
        self.owner: int | None = None
        self.readable = False
        self.count = 0  # records read
        self.events = 0
        self.next = [1] * seats  # per seat: the highest seq read + 1
        self.holes: list[list[list[int]]] = [[] for _ in range(seats)]
        self.ended = False
        self.reached = 0  # the Lamport time of the last event read
        # Its latest recovery note is `recovering`: its peer lost its log's end and had not
        # taken its own events back when the log ends (docs/protocol.md §9.6).
        self.recovering = False


class Logs:
    """Every log of one pass, and what each holds of every feed."""

    def __init__(
        self, spec: GameSpec, game_id: bytes, sources: Sequence[Source], found: Collector
    ) -> None:
        self.spec = spec
        self.game_id = game_id  # (spec.game_id hashes the whole spec: computed once a pass)
        self.seats = spec.seats
        self.found = found
        self.logs = [Log(i, s, self.seats) for i, s in enumerate(sources)]

    def start(self, log: Log) -> bool:
        """Check the header of a log when its first record is read; False to set it aside."""
        assert log.stream is not None
        header = log.stream.header
        assert header is not None  # a record was decoded, so the header was
        log.header = header
        if header.game_id != self.game_id:
            self.found.add(
                Finding(
                    FindingKind.WRONG_LOG,
                    "the log belongs to another game",
                    log=log.name,
                    expected=self.game_id.hex()[:16],
                    found=header.game_id.hex()[:16],
                )
            )
            self.set_aside(log)
            return False
        seat = self.found.roster.get(header.peer_id)  # type: ignore[call-overload]
        if seat is None:
            self.found.add(
                Finding(
                    FindingKind.WRONG_LOG,
                    "the log was written by a peer outside the roster",
                    log=log.name,
                    fingerprint=fingerprint(header.peer_id),
                )
            )
            self.set_aside(log)
            return False
        log.owner = seat
        log.readable = True
        return True

    def set_aside(self, log: Log) -> None:
        """Read no more of a log (of another game, or of a stranger)."""
        log.ended = True
        if log.stream is not None:
            close(log.stream)
        log.records = iter(())

    def end(self, log: Log) -> None:
        """A log read to its end (or to an error): what its reader found wrong with it."""
        if log.stream is not None and log.header is None and not log.ended:
            log.header = log.stream.header
            if log.header is not None and not self.start(log):
                return
        ended_before = log.ended
        log.ended = True
        if log.stream is None or ended_before:
            return
        try:
            summary = log.stream.summary()
        except (OSError, NertzError) as exc:
            self.found.add(
                Finding(FindingKind.UNREADABLE, f"cannot read the file: {exc}", log=log.name)
            )
            return
        fatal = summary.fatal
        if fatal is not None:
            log.readable = False
            self.found.add(
                Finding(
                    FindingKind.UNREADABLE,
                    fatal.words,
                    log=log.name,
                    offset=fatal.offset,
                )
            )
            return
        for problem in summary.problems:
            if not problem.fatal:
                self.found.add(
                    Finding(
                        FindingKind.LOG_DAMAGE,
                        f"{problem.kind.value}: {problem.detail}",
                        log=log.name,
                        offset=problem.offset,
                    )
                )
        if summary.tail is TailState.TORN:
            self.found.add(
                Finding(
                    FindingKind.TRUNCATED,
                    summary.torn_words(),
                    log=log.name,
                    offset=summary.good_end,
                )
            )

    def count(self, log: Log, seat: int, seq: int) -> None:
        """Follow what ``log`` holds of ``seat``'s feed: holes and reordering (and so which
        events it holds: :meth:`singles`)."""
        nxt = log.next[seat]
        if seq >= nxt:
            if seq > nxt:
                log.holes[seat].append([nxt, seq - 1])
            log.next[seat] = seq + 1
        else:
            for hole in log.holes[seat]:
                if hole[0] <= seq <= hole[1]:
                    self.found.once(
                        ("reordered", log.index, seat, seq),
                        Finding(
                            FindingKind.REORDERED,
                            f"the log holds this event after the author's event {nxt - 1}: "
                            "a peer logs each feed in order",
                            log=log.name,
                            record=log.count,
                            seq=seq,
                            **self.found.who(seat),
                        ),
                    )
                    holes = log.holes[seat]
                    holes.remove(hole)
                    if hole[0] < seq:
                        holes.append([hole[0], seq - 1])
                    if seq < hole[1]:
                        holes.append([seq + 1, hole[1]])
                    break
            else:
                return  # a second copy in the same log (received twice): counted already

    def singles(self) -> dict[tuple[int, int], list[list[int]]]:
        """(seat, log index) -> the seq ranges of the events of ``seat`` that only that log
        holds, of several readable logs (at the end of the pass). What a log holds of a feed
        is what :meth:`count` followed: every seq below its next but its holes."""
        singles: dict[tuple[int, int], list[list[int]]] = {}
        if self.readable() <= 1:
            return singles  # (an event "only one log holds" is a finding about several logs)
        for seat in range(self.seats):
            # Where each log's ranges begin and end, swept in seq order: a stretch between
            # two such points that one log alone holds is that log's single copy.
            points: dict[int, list[tuple[int, int]]] = {}
            for log in self.logs:
                for lo, hi in _held(log, seat):
                    points.setdefault(lo, []).append((log.index, 1))
                    points.setdefault(hi + 1, []).append((log.index, -1))
            holding: set[int] = set()
            at = sorted(points)
            for here, after in itertools.pairwise(at):
                for index, change in points[here]:
                    if change > 0:
                        holding.add(index)
                    else:
                        holding.discard(index)
                if len(holding) != 1:
                    continue
                (index,) = holding
                ranges = singles.setdefault((seat, index), [])
                if ranges and ranges[-1][1] == here - 1:
                    ranges[-1][1] = after - 1
                else:
                    ranges.append([here, after - 1])
        return singles

    def taken(
        self,
        dropped: Mapping[int, int],
        told: Sequence[int],
        heads: Sequence[int],
        timed: Callable[[int, int], int],
    ) -> dict[int, int]:
        """Per member, the last seq of its feed the table took, where the logs hold more of
        it (at the end of a pass; docs/audit.md, *What no member still in took*): of a member
        whose own log is given (read on past the time of its next event, no recovery under
        way), the most of its feed that log holds, the log of any member still in (not in
        ``dropped``) holds, or a member still in announced holding (``told``), and no less
        than its cut if it is dropped. Its events past that, which only dropped members'
        logs hold, reached no member still in: its own peer never logged them (a peer logs
        each event before it sends it), and no member still in holds them or said it did.

        ``heads``: per seat, the last seq delivered; ``timed(seat, seq)``: the Lamport time of
        a delivered event."""
        taken: dict[int, int] = {}
        for seat, head in enumerate(heads):
            own = [log for log in self.logs if log.owner == seat and log.readable]
            if not own or any(log.recovering for log in own):
                continue  # (its own word is not here: a member still in may hold the rest)
            most = max(told[seat], dropped.get(seat, 0))
            for log in self.logs:
                if log.readable and (log.owner == seat or log.owner not in dropped):
                    most = max(most, log.next[seat] - 1)
            if most < head and all(log.reached > timed(seat, most + 1) for log in own):
                taken[seat] = most
        return taken

    def readable(self) -> int:
        """How many of the logs are readable logs of this game's members."""
        return sum(1 for log in self.logs if log.readable)

    def gaps(self, heads: Sequence[int]) -> None:
        """At the end of the pass: what each log lacks of the events the others hold
        (``heads``: per seat, the last seq delivered), and the events only one log holds."""
        found = self.found
        for log in self.logs:
            if not log.readable:
                continue
            for seat in range(self.seats):
                head = heads[seat]
                who = found.who(seat)
                for lo, last in sorted(log.holes[seat]):
                    hi = min(last, head)
                    if lo <= hi:
                        found.add(
                            Finding(
                                FindingKind.GAP,
                                f"the log lacks {hi - lo + 1} event(s) of this feed that other "
                                "logs hold",
                                log=log.name,
                                seq=lo,
                                last_seq=hi,
                                **who,
                            )
                        )
                held = log.next[seat] - 1
                if held < head:
                    # Its own peer's events past its log's end are a gap (it logs each before
                    # sending it), unless the log says it was begun again short of its feed
                    # and never took them back (a `recovering` note last: its recovery given
                    # up, the others gone; or it stopped, its key having signed them in
                    # another process, §9.6). A notice then: the events are checked where the
                    # other logs hold them, and what this log holds is checked as ever.
                    own = seat == log.owner and not log.recovering
                    found.add(
                        Finding(
                            FindingKind.GAP if own else FindingKind.LOG_ENDS_EARLY,
                            (
                                "the log lacks events its own peer signed (a peer logs each "
                                "event before sending it)"
                                if own
                                else "the log was begun again without these events of its "
                                "own peer, which the other logs hold (its log lost, cut or "
                                "restored from a backup, or a second process of the player)"
                                if seat == log.owner
                                else "the log stops before events of this feed that other logs hold"
                            ),
                            log=log.name,
                            seq=held + 1,
                            last_seq=head,
                            **who,
                        )
                    )
        for (seat, index), ranges in sorted(self.singles().items()):
            for lo, hi in ranges:
                found.add(
                    Finding(
                        FindingKind.SINGLE_COPY,
                        f"{hi - lo + 1} event(s) only this log holds",
                        log=self.logs[index].name,
                        seq=lo,
                        last_seq=hi,
                        **found.who(seat),
                    )
                )

    def infos(self) -> tuple[LogInfo, ...]:
        """What each log holds, for the report."""
        members = self.spec.members
        return tuple(
            LogInfo(
                log.name,
                members[log.owner].name if log.owner is not None else None,
                log.owner,
                log.count,
                log.events,
                log.readable,
            )
            for log in self.logs
        )


def _held(log: Log, seat: int) -> Iterator[tuple[int, int]]:
    """The ranges of seqs of ``seat``'s feed that ``log`` holds, in order."""
    start = 1
    for lo, hi in sorted(log.holes[seat]):
        if lo > start:
            yield start, lo - 1
        start = hi + 1
    if start < log.next[seat]:
        yield start, log.next[seat] - 1
