"""Events in the notation, as ``nertz replay --text`` prints them and the audit quotes them."""

from __future__ import annotations

from p2p_nertz.protocol.bodies import Commit, Play, Ready, Result, Reveal
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.state import Event
from p2p_nertz.rules import MoveKind

__all__ = ["event_text"]


def event_text(event: Event) -> str:
    """An event in the notation, as ``nertz replay --text`` prints it (without the outcome).

    >>> from p2p_nertz.protocol.bodies import Join
    >>> event_text(Event(0, 1, 1, Kind.JOIN, Join((0, 0))))
    'join'
    """
    body = event.body
    if isinstance(body, Play):
        kind = body.move.kind
        if kind is MoveKind.PASS:
            return f"stuck {body.move}"
        if kind is MoveKind.CALL:
            return "nerts X"
        shown = f" +{' '.join(map(str, body.reveals))}" if body.reveals else ""
        if event.kind is Kind.CLAIM:
            return f"claim {body.move} {body.card}{shown}"
        return f"move {body.move}{shown}"
    if isinstance(body, Commit):
        return "commit"
    if isinstance(body, Reveal):
        return f"reveal {body.what.name.lower()}"
    if isinstance(body, Ready):
        return "ready " + " ".join(map(str, body.visible))
    if isinstance(body, Result):
        return f"result {list(body.scores)} digest {body.digest.hex()[:12]}"
    name = event.kind.name.lower()
    seat = getattr(body, "seat", None)
    if seat is not None:
        reason = getattr(body, "reason", None)
        why = f" {reason.name.lower()}" if reason is not None else ""
        return f"{name} seat {seat} upto {getattr(body, 'last_seq', '?')}{why}"
    return name
