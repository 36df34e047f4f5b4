"""Scripted network schedules (:class:`~p2p_nertz.sim.network.Schedule`): a race built on
purpose, the rest of the game as its seed plays it.

A random fault mix meets some orders of messages once in many thousand games, or never; a
rule that is right only if that order cannot happen needs it built. A schedule here delays
chosen messages at their receivers, each for a bounded time, as an asynchronous network may:
nothing is lost for good, so a game that then stops, or whose peers part, shows a fault of
the protocol, not of the network.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.protocol.envelope import InvalidMessageError, Kind, Message, decode_unverified

if TYPE_CHECKING:
    from p2p_nertz.sim.network import Simulation

__all__ = ["LateLift"]


@dataclass(slots=True)
class LateLift:
    """A member's withdrawals reach the others only after one of them made its drop final
    (docs/protocol.md §7.4, §13 *a member that comes to hold the deciding event only after
    announcing that cover*).

    Every withdrawal signed by ``member`` waits at each receiver until a peer's final fold
    drops ``member`` (``first``'s, if given, else any peer's), for at most ``bound`` seconds
    after it was first offered. Then that peer's messages other than wants, to each peer but
    ``member``, wait until the receiver holds every withdrawal held back, for at most
    ``bound`` seconds after the drop was made final: the withdrawal arrives before the
    announcements with which that receiver would make the drop final too.

    ``also``: other members whose withdrawals are held the same way, at once (the drop of any
    of them made final releases them all).

    ``held``: the withdrawals held back, ``(seat, seq)``; ``final_by``: the peer that made the
    drop final first, and when (``None`` until one did).
    """

    member: int
    bound: float = 3.0
    first: int | None = None
    also: tuple[int, ...] = ()
    held: set[tuple[int, int]] = field(default_factory=set)
    final_by: tuple[int, float] | None = None
    _offered: dict[bytes, float] = field(default_factory=dict)

    def holds(self, sim: Simulation, seat: int, data: bytes, now: float) -> bool:
        """Whether ``data``, arriving at ``seat``, waits (:class:`Schedule`)."""
        self._note_final(sim, now)
        spec = sim.spec
        try:
            message = decode_unverified(
                data, game_id=spec.game_id, roster=spec.peer_ids, cache=sim.envelopes
            )
        except InvalidMessageError:
            return False  # (the receiver refuses it, as it would anyway)
        author = spec.seat_of(message.author)
        members = (self.member, *self.also)
        if author in members and self._withdrawal(message, spec.seats):
            first = self._offered.setdefault(message.id, now)
            if self.final_by is None and now - first < self.bound:
                self.held.add((author, message.seq))
                return True
            return False
        if self.final_by is None or message.kind is Kind.WANT:
            return False
        by, at = self.final_by
        if author != by or seat in members or now - at >= self.bound:
            return False
        receiver = sim.peers[seat]
        return receiver is not None and any(receiver.held(q) < seq for q, seq in sorted(self.held))

    def _note_final(self, sim: Simulation, now: float) -> None:
        if self.final_by is not None or not self.held:
            return
        seats = [self.first] if self.first is not None else range(len(sim.peers))
        for seat in seats:
            peer = sim.peers[seat]
            if peer is not None and any(q in peer.final.dropped for q in (self.member, *self.also)):
                self.final_by = (seat, now)
                return

    @staticmethod
    def _withdrawal(message: Message, seats: int) -> bool:
        if message.kind is not Kind.DROP or not message.seq:
            return False
        try:
            body = parse_body(message.kind, message.body, seats)
        except Exception:  # (any failure: a body the receiver refuses, not ours to hold)
            return False
        return isinstance(body, Drop) and body.reason is DropReason.WITHDRAW
