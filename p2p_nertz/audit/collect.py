"""The findings of one pass over the logs, in the order found, and the fields that name what
each is about (a member, an event, a message, or the bytes of one that failed its checks).

Every part of a pass (:mod:`~p2p_nertz.audit.logs`, :mod:`~p2p_nertz.audit.delivery`,
:mod:`~p2p_nertz.audit.fold`, :mod:`~p2p_nertz.audit.evidence`,
:mod:`~p2p_nertz.audit.views`) adds what it finds to the pass's one :class:`Collector`, so
that the report lists the findings in the order they were found, whatever part found them;
``--strict`` stops the pass at the first error (:class:`Stop`).
"""

from __future__ import annotations

import contextlib
from typing import Any

import msgpack  # type: ignore[import-untyped]

from p2p_nertz.audit.findings import Finding, Severity
from p2p_nertz.protocol.bodies import Play
from p2p_nertz.protocol.envelope import Kind, Message
from p2p_nertz.protocol.identity import PeerId, fingerprint
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Event
from p2p_nertz.rules import MoveKind

__all__ = ["Collector", "Stop", "peek"]


class Stop(Exception):
    """Internal: strict mode met its first error."""


class Collector:
    """The findings of one pass, in the order found.

    Attributes:
        violations: every finding of the pass.
        step: the findings since the last event folded began (for :class:`FoldStep
            <p2p_nertz.audit.report.FoldStep>`).
    """

    __slots__ = ("deferred", "reported", "roster", "spec", "step", "strict", "unsure", "violations")

    def __init__(self, spec: GameSpec, roster: dict[PeerId, int], *, strict: bool) -> None:
        self.spec = spec
        self.roster = roster
        self.strict = strict
        self.violations: list[Finding] = []
        self.step: list[Finding] = []
        self.reported: set[tuple[Any, ...]] = set()
        #: seat -> its first event that names a version of another's event no log read holds
        #: (``Delivery.unjudged`` decides at the end whether what accuses it from there on
        #: stands, so strict mode does not stop on it)
        self.unsure: dict[int, int] = {}
        self.deferred: list[Finding] = []  # (strict mode: the errors it is unsure of, kept here)

    def add(self, violation: Finding) -> None:
        """Add a finding; in strict mode an error stops the pass (raises :class:`Stop`)."""
        if self.strict and violation.severity is Severity.ERROR:
            if self._unsure(violation):
                self.deferred.append(violation)  # (a stop before the end leaves it out)
                return
            self.violations.append(violation)
            self.step.append(violation)
            raise Stop
        self.violations.append(violation)
        self.step.append(violation)

    def _unsure(self, violation: Finding) -> bool:
        seat, seq = violation.seat, violation.seq
        first = self.unsure.get(seat) if self.unsure and seat is not None else None
        return first is not None and seq is not None and seq >= first and violation.kind.accuses

    def once(self, key: tuple[Any, ...], violation: Finding) -> None:
        """Add a finding unless one was added under ``key`` already."""
        if key not in self.reported:
            self.reported.add(key)
            self.add(violation)

    def who(self, seat: int) -> dict[str, Any]:
        """The fields of a finding that name a member."""
        member = self.spec.members[seat]
        return {"seat": seat, "author": member.name, "fingerprint": member.fingerprint}

    def about(self, event: Event) -> dict[str, Any]:
        """The fields of a finding that name an event."""
        body = event.body
        where = self.who(event.seat)
        where.update(
            seq=event.seq,
            lamport=event.lamport,
            event=event.kind.name.lower(),
            event_id=event.id.hex(),
        )
        number = getattr(body, "round", None)
        if isinstance(number, int):
            where["round"] = number
        if isinstance(body, Play) and body.move.kind not in (MoveKind.PASS, MoveKind.CALL):
            where["move"] = str(body.move)
        return where

    def about_message(self, message: Message) -> dict[str, Any]:
        """The fields of a finding that name a signed message (its body unread)."""
        seat = self.roster.get(message.author)
        where: dict[str, Any] = (
            self.who(seat) if seat is not None else {"fingerprint": fingerprint(message.author)}
        )
        where.update(
            seq=message.seq,
            lamport=message.lamport,
            event=message.kind.name.lower(),
            event_id=message.id.hex(),
        )
        return where


def peek(data: bytes) -> dict[str, Any]:
    """Best effort: the author, seq and Lamport time of an envelope that failed its checks."""
    try:
        payload, _ = msgpack.unpackb(data, raw=False)
        fields = msgpack.unpackb(payload, raw=False)
        _, _, author, seq, _, lamport, code, _ = fields
        where: dict[str, Any] = {}
        if isinstance(author, bytes) and len(author) == 32:
            where["fingerprint"] = fingerprint(author)
        if isinstance(seq, int):
            where["seq"] = seq
        if isinstance(lamport, int):
            where["lamport"] = lamport
        if isinstance(code, int):
            with contextlib.suppress(ValueError):
                where["event"] = Kind(code).name.lower()
        return where
    except Exception:  # anything at all: this only decorates a report
        return {}
