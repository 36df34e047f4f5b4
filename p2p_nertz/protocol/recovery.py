"""Recovery: a peer restored from a log that lost its end learns its own feed from the others.

Theory of operation
-------------------
A log cut short may lack events we signed and sent. Until every member still in the game has
announced what it holds of our feed, we sign nothing and send no beat (a beat naming a head
below an event others hold, timed below the beat, is a lie about time); wants ask for our own
events instead, the first one timed far above anything we sent before the crash. A member's
beat (or, for a member recovering at once, its wants) timed above that first want was sent
after it took the want in, so after everything we sent it before the crash: what it announces
then is what we wait for (docs/protocol.md §9.6).

:class:`Recovery` owns what those announcements said, decides whom we still wait for, what
to ask whom (:meth:`Recovery.asks`) and when the recovery is over (:meth:`Recovery.finished`,
a :class:`Recovered` value); the peer signs the wants and, once over, signs again.
:func:`fork_vote_of` reads back, before anything else of our log, our votes on proof of a
fork (the events we delivered past that fork are delivered again the same way).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from p2p_nertz.protocol.bodies import Beat, Drop, DropReason, Want, parse_body
from p2p_nertz.protocol.envelope import Kind, Message
from p2p_nertz.protocol.identity import PeerId

__all__ = ["Recovered", "Recovery", "fork_vote_of"]


@dataclass(frozen=True, slots=True)
class Recovered:
    """A peer restored in recovery (``Peer.restore`` with ``recover``) may sign again.

    Every member still in the game announced what it holds of our feed, and we hold at least
    that much: events ``first + 1 .. head`` were taken back from the others (none if
    ``head == first``), announced by the seats in ``holders`` (docs/protocol.md §9.6).
    """

    first: int
    head: int
    holders: tuple[int, ...]


def fork_vote_of(message: Message, own: PeerId, seats: int) -> tuple[int, int] | None:
    """(seat, fork seq) if ``message`` is our own vote on proof of a fork."""
    if message.author != own or message.kind is not Kind.DROP:
        return None
    body = parse_body(message.kind, message.body, seats)
    if isinstance(body, Drop) and body.reason is DropReason.EQUIVOCATION:
        return body.seat, body.fork_seq
    return None


class Recovery:
    """One recovery in progress.

    Args:
        seat: our own seat.
        seats: how many seats the game has.
        first: how many of our own events our log holds (our head when the recovery began).
        now: when it began.
    """

    def __init__(self, seat: int, seats: int, first: int, now: float) -> None:
        self.seat = seat
        self.n = seats
        self.first = first
        self.since = now
        self.clock = 0  # our first recovery want's Lamport time (0: not sent yet)
        # seat -> what its latest beat timed after that want says it holds, per feed
        self.heard: dict[int, tuple[int, ...]] = {}
        # seat -> its head in its first such beat: every event that existed when it took our
        # want in (those our lost events can name) is at or below the heads
        self.heads: dict[int, int] = {}
        # seat -> feed -> what a member recovering too announced holding of it, in its wants
        # timed after our first want (it sends no beat either: its wants start past what it
        # holds, one per feed)
        self.wants: dict[int, dict[int, int]] = {}

    def beat(self, seat: int, lamport: int, beat: Beat) -> bool:
        """Take a member's beat; whether it was timed after our first want (it counts)."""
        if lamport <= self.clock:
            return False
        self.heard[seat] = beat.held
        self.heads.setdefault(seat, beat.head_seq)
        return True

    def want(self, seat: int, lamport: int, want: Want) -> None:
        """Take a member's want: one timed after our first want, of a member recovering too,
        announces what it holds of the feed it asks for."""
        if lamport <= self.clock:
            return
        self.wants.setdefault(seat, {})[want.seat] = want.first - 1
        if want.seat == seat:  # (it recovers too: its own head, as it knows it)
            self.heads.setdefault(seat, want.first - 1)

    def recovering_too(self) -> list[int]:
        """The members that asked for their own feed: recovering at once, they cannot wait for
        a beat of ours, and take our wants as our announcement."""
        return [r for r, wants in self.wants.items() if r in wants]

    def awaiting(
        self,
        members: Sequence[int],
        cheaters: Iterable[int],
        own_held: int,
        claimed: Sequence[tuple[int, ...]],
        votes: Mapping[int, tuple[tuple[int, Drop], ...]],
    ) -> tuple[int, ...]:
        """The members still in the game (``members``) that have not announced, since the
        recovery began, holding at least the events of our feed we hold (``own_held``) and
        every event that existed when the others took our first want in, or that announced
        more of our feed than we hold (``claimed``: what each said it holds, as said).

        A member we hold proof against (``cheaters``) is not waited for: its word is worth
        nothing (it could announce less of our feed than it holds), and its drop may need our
        vote. ``votes``: the held votes against each member (a voter announces no more of its
        target than its vote counted).
        """
        seat = self.seat
        skip = set(cheaters)
        # What each member must hold of each feed: all of ours we hold, and every event that
        # existed when the feed's author took our want in; for a member that voted the
        # author out, no more than its vote counted (it announces no more).
        announced = self.heard.copy()
        for r, wants in self.wants.items():
            if r not in announced and len(wants) == self.n and r in wants:
                # Recovering too (it asks for its own feed): its wants announce what it holds.
                announced[r] = tuple(wants[q] for q in range(self.n))
        need = {q: self.heads.get(q, 0) for q in members}
        need[seat] = own_held
        frozen = {(voter, q): vote.last_seq for q in members for voter, vote in votes.get(q, ())}
        waiting = []
        for r in members:
            if r == seat or r in skip:
                continue
            held = announced.get(r)
            if (
                held is None  # not heard since our first want
                or max(held[seat], claimed[r][seat]) > need[seat]  # holds ours we lack
                # Holding less, it may hold a later event of ours waiting for the events it
                # lacks, which its beats do not announce (§9.6).
                or any(held[q] < min(need[q], frozen.get((r, q), need[q])) for q in members)
            ):
                waiting.append(r)
        return tuple(waiting)

    def asks(
        self, own_held: int, frontier: Sequence[int], max_want: int
    ) -> list[tuple[int | None, int, int, int]]:
        """What to ask for now, in order, as ``(to, seat, first, last)`` (``to`` ``None``:
        everyone): our own events past the ``own_held`` we hold; and to each member
        recovering at once (it asked for its own feed), one want per other feed from past
        what we announce (``frontier``: our votes cap it), since it cannot wait for a beat of
        ours and takes them as our announcement (§9.6)."""
        first = own_held + 1
        asks: list[tuple[int | None, int, int, int]] = [
            (None, self.seat, first, first + max_want - 1)
        ]
        for r in self.recovering_too():
            for q, held in enumerate(frontier):
                if q != self.seat:
                    asks.append((r, q, held + 1, held + max_want))
        return asks

    def finished(
        self,
        own_held: int,
        claimed: Sequence[tuple[int, ...]],
        votes: Iterable[tuple[int, Drop]],
    ) -> Recovered | None:
        """Whether nothing the others hold of our feed is missing here (we hold
        ``own_held``; ``claimed``: what each member said it holds of each feed; ``votes``:
        the held votes against us, each saying how much of our feed its voter held, for it
        announces no more): the recovery is over, and what it took back. The caller checks
        first that nobody is awaited and none of ours waits for its turn."""
        seat = self.seat
        most = max((claimed[q][seat] for q in range(self.n)), default=0)
        most = max([most, *(vote.last_seq for _, vote in votes)])
        if most > own_held:
            return None
        holders = tuple(q for q in range(self.n) if q != seat and claimed[q][seat] > self.first)
        return Recovered(self.first, own_held, holders)

    def hopeless(
        self, waiting: Sequence[int], heard: Sequence[float], now: float, drop_after: float
    ) -> bool:
        """Whether every member we still wait for (``waiting``) has been silent for
        ``drop_after`` since the recovery began (``heard``: when each was last heard)."""
        return bool(waiting) and all(now >= max(heard[q], self.since) + drop_after for q in waiting)
