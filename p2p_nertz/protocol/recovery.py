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

:class:`Recovery` owns what those announcements said and decides whom we still wait for; the
peer signs the wants and ends the recovery.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from p2p_nertz.protocol.bodies import Beat, Drop, Want

__all__ = ["Recovery"]


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
