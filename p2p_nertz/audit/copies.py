"""Two logs given of one member: an old copy beside the current log, or the same file twice.

A peer writes one log, and only appends to it; a copy taken earlier (a backup, a file sent
before the game ended) holds the first records of it and nothing else, its last one perhaps
torn where the copy cut it. Read beside the current log, such a copy would lack the events
its own peer signed after it was taken: a ``gap`` of that log, an error about the logs that
no one caused. So before any pass, the logs whose headers name the same game and member are
compared record by record (docs/audit.md, *Two logs of one member*):

- one whose records are the first records of another's (all of them, or the same records:
  the same file given twice), read cleanly but for a torn tail, is *a copy* of it: it is
  not read, and a ``same_member`` notice names both (the report lists it as a copy);
- two that differ where both hold a record (or the shorter one is damaged) are both read, as
  any two logs are: what differs is in the findings of each (an event signed twice, damaged
  bytes, a gap), and a ``same_member`` notice names both.

Only logs of a member of the roster, of the game audited, are compared; nothing here raises.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from p2p_nertz.audit.findings import Finding, FindingKind
from p2p_nertz.audit.logs import Source, close
from p2p_nertz.audit.report import LogInfo
from p2p_nertz.errors import NertzError
from p2p_nertz.logfile.format import LogHeader, RecordKind
from p2p_nertz.protocol.spec import GameSpec

__all__ = ["Copies", "same_member"]


@dataclass(slots=True)
class Copies:
    """What the comparison found.

    Attributes:
        kept: the indices of the logs to read, in the order given.
        copies: index of a log not read -> how the report lists it (a copy of another).
        notices: the ``same_member`` findings, in the order of the logs.
    """

    kept: list[int]
    copies: dict[int, LogInfo] = field(default_factory=dict)
    notices: list[Finding] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Pair:
    """Two logs read side by side, record by record.

    Attributes:
        differ: the first record (from 1) where both hold one and they differ, else ``None``.
        counts: how many records each holds.
        events: how many of those are events.
        clean: whether each read to its end with no damage (a torn tail is no damage: the
            copy was cut there).
    """

    differ: int | None
    counts: tuple[int, int]
    events: tuple[int, int]
    clean: tuple[bool, bool]

    def short(self, i: int, j: int) -> tuple[int, int]:
        """Of the logs ``i`` (given first) and ``j``: the shorter (of two as long, the one
        given later), and the other."""
        return (j, i) if self.counts[1] <= self.counts[0] else (i, j)

    def covered(self, i: int, j: int) -> bool:
        """Whether the shorter of ``i`` and ``j`` is a copy of the other."""
        short, _ = self.short(i, j)
        return self.differ is None and self.clean[0 if short == i else 1]


def same_member(
    spec: GameSpec, sources: Sequence[Source], headers: Mapping[int, LogHeader]
) -> Copies:
    """Compare the logs of each member given more than once (``headers``: index -> header,
    of the logs whose header was read)."""
    game_id = spec.game_id
    seats: dict[bytes, int] = {pid: seat for seat, pid in enumerate(spec.peer_ids)}
    groups: dict[int, list[int]] = {}
    for index, header in sorted(headers.items()):
        seat = seats.get(header.peer_id)
        if header.game_id == game_id and seat is not None:
            groups.setdefault(seat, []).append(index)
    found = Copies(kept=list(range(len(sources))))
    for seat, group in sorted(groups.items()):
        if len(group) > 1:
            _compare(spec, seat, [(i, sources[i]) for i in group], found)
    found.kept = [i for i in found.kept if i not in found.copies]
    order = {source.name: index for index, source in reversed(list(enumerate(sources)))}
    found.notices.sort(key=lambda f: order.get(f.log or "", 0))
    return found


def _compare(spec: GameSpec, seat: int, group: list[tuple[int, Source]], found: Copies) -> None:
    member = spec.members[seat]
    who: dict[str, Any] = {"seat": seat, "author": member.name, "fingerprint": member.fingerprint}
    names = {index: source.name for index, source in group}
    pairs: dict[tuple[int, int], _Pair] = {}
    for (i, a), (j, b) in itertools.combinations(group, 2):
        pair = _pair(a, b)
        if pair is not None:  # (a log that cannot be read through: the pass says why)
            pairs[i, j] = pair
    counts = {i: p.counts[0] for (i, _), p in pairs.items()}
    counts.update({j: p.counts[1] for (_, j), p in pairs.items()})
    # Each copy names the longest log it is a copy of (of several as long, the first given).
    longs: dict[int, list[int]] = {}
    for (i, j), pair in pairs.items():
        if pair.covered(i, j):
            short, long = pair.short(i, j)
            longs.setdefault(short, []).append(long)
    both = f"are both {member.name}'s log (seat {seat})"
    for short, of in sorted(longs.items()):
        long = min(of, key=lambda x: (-counts[x], x))
        copy, pair = names[short], pairs[min(short, long), max(short, long)]
        how = (
            f"{copy} is the same file given twice"
            if copy == names[long]
            else f"{copy} is a copy of it (the same records)"
            if counts[short] == counts[long]
            else f"{copy} is a shorter copy of it"
        )
        first, second = names[min(short, long)], names[max(short, long)]
        detail = f"{first} and {second} {both}: {how}, read as one log; give one of them"
        found.notices.append(
            Finding(FindingKind.SAME_MEMBER, detail, log=copy, other_log=names[long], **who)
        )
        events = pair.events[0 if short < long else 1]
        info = LogInfo(copy, member.name, seat, counts[short], events, True, copy_of=names[long])
        found.copies[short] = info
    for (i, j), pair in pairs.items():
        if i in longs or j in longs or pair.covered(i, j):
            continue
        short, long = pair.short(i, j)
        at = pair.differ if pair.differ is not None else counts[short] + 1
        why = (
            f"they differ at record {at}"
            if pair.differ is not None
            else f"{names[short]} holds the first records of the other but is damaged"
        )
        found.notices.append(
            Finding(
                FindingKind.SAME_MEMBER,
                f"{names[i]} and {names[j]} {both}, and {why}: both are read (what differs "
                "is in the findings of each)",
                log=names[short],
                other_log=names[long],
                record=at,
                **who,
            )
        )


def _pair(a: Source, b: Source) -> _Pair | None:
    """Read two logs side by side (``None``: one cannot be opened or read through)."""
    streams = []
    try:
        streams.append(a.open())
        streams.append(b.open())
        differ: int | None = None
        counts, events = [0, 0], [0, 0]
        for n, (x, y) in enumerate(itertools.zip_longest(*streams), 1):
            for side, record in enumerate((x, y)):
                if record is not None:
                    counts[side] += 1
                    events[side] += record.kind in (
                        RecordKind.SENT_EVENT,
                        RecordKind.RECEIVED_EVENT,
                    )
            if differ is None and x is not None and y is not None and x != y:
                differ = n
        summaries = [stream.summary() for stream in streams]
    except (OSError, NertzError):
        return None
    finally:
        for stream in streams:
            close(stream)
    clean = [s.fatal is None and not s.problems for s in summaries]
    return _Pair(differ, (counts[0], counts[1]), (events[0], events[1]), (clean[0], clean[1]))
