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

__all__ = ["LateLift", "LoneWithdrawals"]


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
        body = _drop(message, seats)
        return body is not None and body.reason is DropReason.WITHDRAW


@dataclass(slots=True)
class LoneWithdrawals:
    """Each withdrawal against ``member`` is signed alone: a vote of one of ``voters`` against
    ``member`` reaches another of them only once that receiver has withdrawn its own vote
    against ``member``, for at most ``bound`` seconds after it was first offered there.

    Each voter, hearing ``member`` again after voting it out for silence, withdraws before it
    holds the others' votes, though those votes come before every withdrawal in the order and
    drop ``member`` there (soak seed 2086's game, docs/protocol.md §9.2: the drop stands as
    the votes decide it without the member's events past its cut). A clean network seldom
    plays it: the voters, as close as their timers, hold each other's votes first.

    ``withdrawn``: the voters seen to have signed that withdrawal.
    """

    member: int
    voters: frozenset[int]
    bound: float = 3.0
    withdrawn: set[int] = field(default_factory=set)
    _offered: dict[bytes, float] = field(default_factory=dict)

    def holds(self, sim: Simulation, seat: int, data: bytes, now: float) -> bool:
        """Whether ``data``, arriving at ``seat``, waits (:class:`Schedule`)."""
        if seat not in self.voters or seat in self.withdrawn:
            return False
        spec = sim.spec
        try:
            message = decode_unverified(
                data, game_id=spec.game_id, roster=spec.peer_ids, cache=sim.envelopes
            )
        except InvalidMessageError:
            return False  # (the receiver refuses it, as it would anyway)
        author = spec.seat_of(message.author)
        body = _drop(message, spec.seats)
        if author == seat or author not in self.voters or body is None:
            return False
        if body.seat != self.member or body.reason is DropReason.WITHDRAW:
            return False
        if self._withdrew(sim, seat):
            return False
        first = self._offered.setdefault(message.id, now)
        return now - first < self.bound

    def _withdrew(self, sim: Simulation, seat: int) -> bool:
        """Whether ``seat``'s last event on :attr:`member` is a withdrawal (noted once seen)."""
        peer = sim.peers[seat]
        if peer is None:
            return False
        for event in reversed(peer.events(seat)):
            body = _drop(event, sim.spec.seats)
            if body is not None and body.seat == self.member:
                if body.reason is not DropReason.WITHDRAW:
                    return False
                self.withdrawn.add(seat)
                return True
        return False


def _drop(message: Message, seats: int) -> Drop | None:
    """The body of ``message`` if it is an event of the drop kind, else ``None``."""
    if message.kind is not Kind.DROP or not message.seq:
        return None
    try:
        body = parse_body(message.kind, message.body, seats)
    except Exception:  # (any failure: a body the receiver refuses, not ours to hold)
        return None
    return body if isinstance(body, Drop) else None
