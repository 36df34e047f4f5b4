"""Each log's own view of the game, and where two views that finished differently part.

The union of the logs is one game, but each log is its own peer's view. When the logs differ
(:func:`may_split`), each is also folded alone (the same passes over that log only): a
:class:`View`. Two views that scored a round, or ended the game, differently are a split
(:func:`compare`; what weighs how much is decided by :func:`split_kind` alone), reported with
where the two logs part (:func:`parting`).
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from p2p_nertz.audit.collect import Collector
from p2p_nertz.audit.delivery import PREFIX
from p2p_nertz.audit.findings import Finding, FindingKind
from p2p_nertz.audit.notation import event_text
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.state import Event
from p2p_nertz.rules import GameResult

__all__ = ["View", "compare", "may_split", "parting", "split_kind"]

# The findings that say two logs hold different events (else every log folds to the union's).
_DIFFERENT_COPIES = frozenset(
    {
        FindingKind.GAP,
        FindingKind.LOG_ENDS_EARLY,
        FindingKind.SINGLE_COPY,
        FindingKind.EQUIVOCATION,
    }
)
_KEY = operator.attrgetter("key")


def may_split(readable: int, violations: Sequence[Finding]) -> bool:
    """Whether two logs may hold different games: some log lacks events others hold, or
    holds another version of one (otherwise every log folds to the union's game)."""
    if readable < 2:
        return False
    return any(v.kind in _DIFFERENT_COPIES for v in violations)


@dataclass(frozen=True, slots=True)
class View:
    """What one log alone folds to: its peer's own view of the game.

    Attributes:
        name: the log.
        seat: its peer's seat.
        peer: its peer's name.
        history: every round it scored: (number, lake digest, scores).
        result: the game's result, if it reached the end.
        provisional: that result may still change (an abandoned game whose absent member may
            not have seen every round it counts: the union of the logs decides, §9.3).
        decisive: its decisive events (drops, leaves, calls, results) in total order.
        feeds: per seat, the id prefixes of the events it holds, in seq order (16 bytes each).
        lamports: per seat, their Lamport times.
        kinds: per seat, their kinds (wire codes).
    """

    name: str
    seat: int
    peer: str
    history: tuple[tuple[int, bytes, tuple[int, ...]], ...]
    result: GameResult | None
    provisional: bool
    decisive: tuple[Event, ...]
    feeds: tuple[bytes, ...]
    lamports: tuple[array[int], ...]
    kinds: tuple[bytes, ...]


def _difference(
    a: View, b: View, winner: Callable[[int], str]
) -> tuple[int | None, str, str] | None:
    """How two views differ where both got: the first round both scored differently (or
    ``None``) and each one's result in words (the game's, if both reached its end and it
    differs; else that round's); ``None`` if they agree wherever both got."""
    rounds_b = {number: (digest, scores) for number, digest, scores in b.history}
    first: tuple[int, str, str] | None = None
    for number, digest, scores in a.history:
        other = rounds_b.get(number)
        if other is not None and other != (digest, scores):
            first = (
                number,
                f"round {number} lake {digest.hex()[:16]} scores {list(scores)}",
                f"round {number} lake {other[0].hex()[:16]} scores {list(other[1])}",
            )
            break
    ra, rb = a.result, b.result
    if ra is not None and rb is not None and (ra.totals, ra.winners) != (rb.totals, rb.winners):
        return (first[0] if first else None, _result_text(ra, winner), _result_text(rb, winner))
    return first


def _result_text(result: GameResult, winner: Callable[[int], str]) -> str:
    winners = ", ".join(winner(w) for w in result.winners)
    return f"game totals {list(result.totals)}, won by {winners} ({result.termination.value})"


def split_kind(a: View, b: View, *, round_differs: bool) -> FindingKind | None:
    """How two logs that finished with different results are reported: the classification of a
    split, in one place.

    Two sides must never finish with different results (DESIGN.md §6): an error, unless the
    difference is only in the game's end and one of the two said its result was
    ``provisional`` (an abandoned two-member game whose sides could not hear each other,
    docs/protocol.md §9.3): that result was marked as not yet known, and the union of the logs
    decides it (a notice). A round both scored differently is always an error.
    """
    if not round_differs and (a.provisional or b.provisional):
        return FindingKind.PROVISIONAL_SPLIT
    return FindingKind.SPLIT_RESULT


@dataclass(frozen=True, slots=True)
class _Part:
    """An event one view holds and another does not: where two logs part."""

    seat: int
    seq: int
    lamport: int
    id: bytes
    kind: str | None = None  # the event kind, when known
    text: str = "event"  # the event in the notation, when known

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.lamport, self.seat, self.seq)


def parting(a: View, b: View) -> tuple[_Part | None, _Part | None]:
    """Where two views part: for each, the first event in total order that it holds and the
    other does not, among its decisive ones (the two abandons of a split, say), else among all
    its events (known by their feed position only)."""
    return (
        _part(next((e for e in a.decisive if not _holds(b, e)), None)) or _first_only(a, b),
        _part(next((e for e in b.decisive if not _holds(a, e)), None)) or _first_only(b, a),
    )


def _holds(view: View, event: Event) -> bool:
    at = (event.seq - 1) * PREFIX
    return view.feeds[event.seat][at : at + PREFIX] == event.id[:PREFIX]


def _part(event: Event | None) -> _Part | None:
    if event is None:
        return None
    return _Part(
        event.seat,
        event.seq,
        event.lamport,
        event.id,
        event.kind.name.lower(),
        event_text(event),
    )


def _first_only(a: View, b: View) -> _Part | None:
    """The first event in total order that ``a`` holds and ``b`` does not."""
    best: _Part | None = None
    for seat, (ids, times) in enumerate(zip(a.feeds, a.lamports, strict=True)):
        other = b.feeds[seat]
        for seq in range(1, len(times) + 1):
            at = (seq - 1) * PREFIX
            if other[at : at + PREFIX] != ids[at : at + PREFIX]:
                kind = Kind(a.kinds[seat][seq - 1]).name.lower()
                part = _Part(seat, seq, times[seq - 1], ids[at : at + PREFIX], kind, kind)
                if best is None or part.key < best.key:
                    best = part
                break
    return best


def compare(views: Sequence[View | None], proven: dict[int, Any], found: Collector) -> None:
    """Name every two logs that each reached a result, and reached different ones.

    A log whose own peer the logs prove a cheater (``proven``) is no side: its fold follows its
    own fork, and the cheat is named already."""
    sides = [v for v in views if v is not None and v.seat not in proven]
    for i, first in enumerate(sides):
        for second in sides[i + 1 :]:
            _compare(first, second, found)


def _compare(a: View, b: View, found: Collector) -> None:
    spec = found.spec
    difference = _difference(
        a,
        b,
        (lambda w: f"team {w + 1}") if spec.rules.pairs else (lambda w: spec.members[w].name),
    )
    if difference is None:
        return
    kind = split_kind(a, b, round_differs=difference[0] is not None)
    if kind is None:
        return
    what, found_a, found_b = difference
    names = [m.name for m in spec.members]
    part_a, part_b = parting(a, b)
    parts = []
    for view, part, other in ((a, part_a, b), (b, part_b, a)):
        if part is not None:
            parts.append(
                f"{view.name} holds {names[part.seat]}'s {part.text} (seq {part.seq}, "
                f"lamport {part.lamport}) that {other.name} lacks"
            )
    where: dict[str, Any] = {}
    first = min((p for p in (part_a, part_b) if p is not None), key=_KEY, default=None)
    if first is not None:
        where = found.who(first.seat)
        where.update(seq=first.seq, lamport=first.lamport, event_id=first.id.hex())
        if first.kind is not None:
            where["event"] = first.kind
    if what is not None:
        where["round"] = what
    found.add(
        Finding(
            kind,
            f"{a.name} ({a.peer}) and {b.name} ({b.peer}) finished with different "
            "results"
            + (f" (the first round they score differently: {what})" if what else "")
            + ("; they part where " + "; ".join(parts) if parts else ""),
            log=a.name,
            expected=f"{a.name}: {found_a}",
            found=f"{b.name}: {found_b}",
            **where,
        )
    )
