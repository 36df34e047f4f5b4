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
from p2p_nertz.logfile.format import LogHeader, Record, RecordKind, TailState
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
class _Read:
    """One log's records, read for the comparison (``None``: it could not be read through)."""

    records: tuple[Record, ...] | None
    clean: bool  # read to its end with no damage (a torn tail is no damage: a cut copy)


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
    both = f"are both {member.name}'s log (seat {seat})"
    read = {index: _read(source) for index, source in group}
    names = dict(group)
    for (i, _), (j, _) in itertools.combinations(group, 2):
        ra, rb = read[i].records, read[j].records
        if ra is None or rb is None:
            continue  # (a log that cannot be read through: the pass says why)
        # The shorter (of two as long: the one given later) is the candidate copy.
        short, long = (j, i) if len(rb) <= len(ra) else (i, j)
        rs, rl = read[short].records or (), read[long].records or ()
        differ = next((n for n, (x, y) in enumerate(zip(rs, rl, strict=False), 1) if x != y), None)
        same = f"{names[i].name} and {names[j].name} {both}"
        if differ is None and read[short].clean:
            if short in found.copies:
                continue  # (named already, as a copy of another)
            copy = names[short].name
            how = (
                f"{copy} is the same file given twice"
                if copy == names[long].name
                else f"{copy} is a copy of it (the same records)"
                if len(rs) == len(rl)
                else f"{copy} is a shorter copy of it"
            )
            detail = f"{same}: {how}, read as one log; give one of them"
            found.notices.append(
                Finding(
                    FindingKind.SAME_MEMBER, detail, log=copy, other_log=names[long].name, **who
                )
            )
            found.copies[short] = LogInfo(
                copy,
                member.name,
                seat,
                len(rs),
                sum(1 for r in rs if r.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT)),
                True,
                copy_of=names[long].name,
            )
        else:
            at = differ if differ is not None else len(rs) + 1
            why = (
                f"they differ at record {at}"
                if differ is not None
                else f"{names[short].name} holds the first records of the other but is damaged"
            )
            found.notices.append(
                Finding(
                    FindingKind.SAME_MEMBER,
                    f"{same}, and {why}: both are read (what differs is in the findings of each)",
                    log=names[short].name,
                    other_log=names[long].name,
                    record=at,
                    **who,
                )
            )


def _read(source: Source) -> _Read:
    try:
        stream = source.open()
    except OSError:
        return _Read(None, False)
    try:
        records = tuple(stream)
        summary = stream.summary()
    except (OSError, NertzError):
        return _Read(None, False)
    finally:
        close(stream)
    clean = summary.fatal is None and not summary.problems
    return _Read(records, clean and summary.tail in (TailState.CLEAN, TailState.TORN))
