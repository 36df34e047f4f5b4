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

Of our own feed, a beat says what its member holds only if no vote of its may have frozen it
(a voter announces no more of its target's feed than its vote counted, §9.2:
:meth:`Recovery.frozen`; soak seed 8215). Every member answers a recovery want with its
**word**: a want of its own for the rest of our feed, from past what it holds of it, which no
vote caps (``Delivery.answer_want``). That word, timed above our first want, is what a member
whose beats may be frozen is taken at.

:class:`Recovery` owns what those announcements said, decides whom we still wait for, what
to ask whom (:meth:`Recovery.asks`) and when the recovery is over (:meth:`Recovery.finished`,
a :class:`Recovered` value); the peer signs the wants and, once over, signs again.
:func:`fork_vote_of` reads back, before anything else of our log, our votes on proof of a
fork (the events we delivered past that fork are delivered again the same way).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from p2p_nertz.protocol.bodies import Beat, Drop, DropReason, Want, parse_body
from p2p_nertz.protocol.envelope import Kind, Message
from p2p_nertz.protocol.identity import PeerId

__all__ = [
    "RECOVERED_NOTE",
    "RECOVERING_NOTE",
    "Doubt",
    "Elsewhere",
    "Recovered",
    "Recovery",
    "WordsOnUs",
    "fork_vote_of",
]

RECOVERING_NOTE: Final = "recovering"
"""The log note that says the peer is learning its own feed from the others (its log may lack
events it sent, docs/protocol.md §9.6): written in place of a cut tail, or when asked to
recover; until a :data:`RECOVERED_NOTE` follows it, every restart recovers again. (Here, not
with the other notes in ``runtime.nodelog``: the audit reads it too.)"""

RECOVERED_NOTE: Final = "recovered"
"""The log note that ends a recovery (data: our head before and after, 8 bytes each), written
before anything the recovered peer signs."""


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


@dataclass(frozen=True, slots=True)
class Elsewhere:
    """Our key signed this game's event ``seq``, past our head, in another process (a second
    machine playing as us, or this process started again after its log was lost whole): the
    peer stopped and signs nothing more in this game (:class:`Doubt`, docs/protocol.md §9.6,
    *two processes of one player*). The runtime stops, saying so."""

    seq: int


class Doubt:
    """A member's word that it holds more of our own feed than we signed, not yet decided.

    That word is a lie (a member announcing events of ours that do not exist: voted out in
    the end, as before) or the truth: our key signed them elsewhere, a second process of our
    player or this one started again without its log. Signing on it would fork our feed
    (proof of cheating against an honest player), and so would a beat naming our head timed
    above those events (a lie about time). So, not recovering, we sign nothing and send no
    beat while a member in the game claims more of our feed than we hold, for at most
    ``wait`` from its first such claim, once per member (a liar holds us back once, and
    only for that long: nothing a member can forge stops us for good); meanwhile we ask for
    our own events past our head. Only one of them arriving, signed by our key, decides it
    the other way (:class:`Elsewhere`, ``Delivery``); otherwise the doubt ends and we go on,
    the liar's claim treated as before (docs/protocol.md §9.6).
    """

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.since: dict[int, float] = {}  # member -> when its first claim past our head came

    def holds(
        self,
        claimed: Sequence[tuple[int, ...]],
        said: Sequence[int],
        own_held: int,
        members: Iterable[int],
        *,
        now: float,
        wait: float,
    ) -> float | None:
        """When the doubt ends (``None``: no doubt now): some member in ``members`` claims
        more of our feed than ``own_held`` (``claimed``: what each said it holds) and its
        first such claim is younger than ``wait`` (``said``: the most of our feed each named in
        an event's frontier, its word too)."""
        seat = self.seat
        until: float | None = None
        for r in members:
            if r == seat or max(claimed[r][seat], said[r]) <= own_held:
                continue
            end = self.since.setdefault(r, now) + wait
            if now < end and (until is None or end < until):
                until = end
        return until


class WordsOnUs:
    """What the members have said of our own feed since this process started, beyond their
    beats (``Finality.claimed``): the most of it each named in an event's frontier or a want
    (a want asks from past what its member holds), which :class:`Doubt` reads; and whether any
    member has told us what it holds of it at all (``told``: a beat, an event of its received,
    a want of ours). A process that started knowing nothing of ours past its join signs nothing
    more until one has (``Author.unheard``; docs/protocol.md §9.6, *a second machine that hears
    nobody*)."""

    def __init__(self, seat: int, seats: int) -> None:
        self.seat = seat
        self.said = [0] * seats  # per member: the most of our feed its events and wants named
        self.told = False

    def event(self, seat: int, frontier: Sequence[int], *, live: bool) -> None:
        """An event of ``seat`` with ``frontier`` is taken (``live``: from the network, not
        read back from our log)."""
        if seat != self.seat:
            self.told = self.told or live
            if len(frontier) > self.seat:
                self.said[seat] = max(self.said[seat], frontier[self.seat])

    def want(self, seat: int, want: Want) -> None:
        """A want of ``seat`` is taken: one for our feed says it holds up to where it asks."""
        if want.seat == self.seat:
            self.told = True
            self.said[seat] = max(self.said[seat], want.first - 1)


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
        # seat -> feed -> what a member said it holds of it, in its wants timed after our
        # first want: of our feed, every member's word (its answer to our want); of every
        # feed, a member recovering too (it sends no beat either: its wants start past what
        # it holds, one per feed)
        self.wants: dict[int, dict[int, int]] = {}
        # seat -> the head of its own feed its latest counted announcement named (a beat's
        # head_seq, or a member recovering too: its want for its own feed)
        self.latest: dict[int, int] = {}
        # seat -> (how much of its feed was read, the id of the last event read, its drop
        # events naming us as (seq, body)): whether its announcements of our feed are frozen
        self._marks: dict[int, tuple[int, bytes | None, tuple[tuple[int, Drop], ...]]] = {}

    def beat(self, seat: int, lamport: int, beat: Beat) -> bool:
        """Take a member's beat; whether it was timed after our first want (it counts)."""
        if lamport <= self.clock:
            return False
        self.heard[seat] = beat.held
        self.heads.setdefault(seat, beat.head_seq)
        self.latest[seat] = beat.head_seq
        return True

    def want(self, seat: int, lamport: int, want: Want) -> None:
        """Take a member's want: one timed after our first want says what it holds of the
        feed it asks for (of ours: its word, whatever its votes; a member recovering too
        announces every feed so)."""
        if lamport <= self.clock:
            return
        self.wants.setdefault(seat, {})[want.seat] = want.first - 1
        if want.seat == seat:  # (it recovers too: its own head, as it knows it)
            self.heads.setdefault(seat, want.first - 1)
            self.latest[seat] = want.first - 1

    def recovering_too(self) -> list[int]:
        """The members that asked for their own feed: recovering at once, they cannot wait for
        a beat of ours, and take our wants as our announcement."""
        return [r for r, wants in self.wants.items() if r in wants]

    def frozen(
        self,
        seat: int,
        feed: Sequence[Message],
        standing: bool,
        cut: int,
        own_held: int,
    ) -> bool:
        """Whether member ``seat``'s latest announcement may say less of our feed than it holds:
        then it cannot vouch for holding no more of it than it announced (§9.6).

        A voter freezes its announcements of a feed at its vote's count (§9.2): whatever it
        holds of ours past that, it announces no more, until it withdraws the vote, or a
        readmission of ours is final for it (then it may still announce no more than its
        vote or our ``cut`` for a while). So it cannot vouch while its vote against us stands
        (``standing``, by the held votes), nor from an announcement naming a head of its feed
        we do not hold (a vote there is unknown to us), or a head below its last drop event
        naming us (its withdrawal came after), nor, its vote cleared by a readmission, as long
        as it announces no more than that vote or our cut (``own_held``: it announces exactly
        what we hold of our feed, or is awaited anyway)."""
        head = self.latest.get(seat)
        if head is None or standing or len(feed) < head:
            return True
        changes = [
            (seq, d)
            for seq, d in self._drops_on_us(seat, feed)
            if d.reason is not DropReason.REJOIN
        ]
        if not changes:
            return False
        seq, last = changes[-1]
        if seq > head:
            return True  # announced before it changed its vote on us
        if last.reason is DropReason.WITHDRAW:
            return False
        return own_held <= max(last.last_seq, cut)

    def _drops_on_us(self, seat: int, feed: Sequence[Message]) -> tuple[tuple[int, Drop], ...]:
        """The drop events of ``seat`` naming us, in its feed as held (read once: only what
        came since the last call is read, unless the feed was given up below it)."""
        read, last_id, marks = self._marks.get(seat, (0, None, ()))
        if read > len(feed) or (read and feed[read - 1].id != last_id):
            read, marks = 0, ()
        found = list(marks)
        for index in range(read, len(feed)):
            message = feed[index]
            if message.kind is Kind.DROP:
                body = parse_body(message.kind, message.body, self.n)
                if isinstance(body, Drop) and body.seat == self.seat:
                    found.append((message.seq, body))
        marks = tuple(found)
        self._marks[seat] = (len(feed), feed[-1].id if feed else None, marks)
        return marks

    def awaiting(
        self,
        members: Sequence[int],
        cheaters: Iterable[int],
        own_held: int,
        claimed: Sequence[tuple[int, ...]],
        votes: Mapping[int, tuple[tuple[int, Drop], ...]],
        *,
        frozen: Iterable[int] = (),
    ) -> tuple[int, ...]:
        """The members still in the game (``members``) that have not announced, since the
        recovery began, holding at least the events of our feed we hold (``own_held``) and
        every event that existed when the others took our first want in, or that announced
        more of our feed than we hold (``claimed``: what each said it holds, as said). Of our
        feed, a member's word (its want for the rest of it) counts, and its beat only if not
        in ``frozen`` (:meth:`frozen`: a vote of its may have frozen it).

        A member we hold proof against (``cheaters``) is not waited for: its word is worth
        nothing (it could announce less of our feed than it holds), and its drop may need our
        vote. ``votes``: the held votes against each member (a voter announces no more of its
        target than its vote counted).
        """
        seat = self.seat
        skip = set(cheaters)
        unvouched = set(frozen)
        # What each member must hold of each feed: all of ours we hold, and every event that
        # existed when the feed's author took our want in; for a member that voted the
        # author out, no more than its vote counted (it announces no more). Of ours, no
        # vote caps it: a member frozen on our feed cannot vouch at all (§9.6).
        announced = self.heard.copy()
        for r, wants in self.wants.items():
            if r not in announced and len(wants) == self.n and r in wants:
                # Recovering too (it asks for its own feed): its wants announce what it holds.
                announced[r] = tuple(wants[q] for q in range(self.n))
        need = {q: self.heads.get(q, 0) for q in members}
        need[seat] = own_held
        frozen_at = {
            (voter, q): vote.last_seq
            for q in members
            if q != seat
            for voter, vote in votes.get(q, ())
        }
        waiting = []
        for r in members:
            if r == seat or r in skip:
                continue
            held = announced.get(r)
            # What it holds of our feed: its want for the rest of it, timed after our first
            # want, says it past any vote of its (every member answers a recovery want so);
            # its beat only if no vote of its may freeze it (``frozen``).
            ours = self.wants.get(r, {}).get(seat)
            if held is not None and r not in unvouched:
                ours = held[seat] if ours is None else max(ours, held[seat])
            if (
                held is None  # not heard since our first want
                or ours is None  # its beats may say less of ours than it holds, its want
                or ours < own_held
                or max(ours, claimed[r][seat]) > own_held  # holds ours we lack
                # Holding less, it may hold a later event of ours waiting for the events it
                # lacks, which its beats do not announce (§9.6).
                or any(
                    held[q] < min(need[q], frozen_at.get((r, q), need[q]))
                    for q in members
                    if q != seat
                )
            ):
                waiting.append(r)
        return tuple(waiting)

    def awaiting_outside(
        self,
        outside: Iterable[int],
        own_held: int,
        heard: Sequence[float],
        now: float,
        drop_after: float,
    ) -> tuple[int, ...]:
        """The members out of the game (``outside``: dropped, left, or proven to cheat) we
        still wait for: one heard since the recovery began may hold our lost events (it
        still takes and relays events), so until ``drop_after`` has passed since then we
        wait for its word (its want for the rest of our feed) to say it holds exactly the
        ``own_held`` we hold (soak seed 8154 of session 14's scan: a cheater dropped on
        proof held the two events a recovering peer lost, and the peer signed their seqs
        anew on the word of the one member left). Its word is all we take from it; a member
        silent since we began, or one that has not said so in ``drop_after``, is not waited
        for (§9.6, *what recovery cannot see*)."""
        if now >= self.since + drop_after:
            return ()
        seat = self.seat
        waiting = []
        for r in outside:
            if r == seat or heard[r] < self.since:
                continue
            word = self.wants.get(r, {}).get(seat)
            if word != own_held:
                waiting.append(r)
        return tuple(waiting)

    def asks(
        self, own_held: int, frontier: Sequence[int], held: Sequence[int], max_want: int
    ) -> list[tuple[int | None, int, int, int]]:
        """What to ask for now, in order, as ``(to, seat, first, last)`` (``to`` ``None``:
        everyone): our own events past the ``own_held`` we hold; and to each member
        recovering at once (it asked for its own feed), one want per other feed from past
        what we announce (``frontier``: our votes cap it), since it cannot wait for a beat of
        ours and takes them as our announcement (§9.6); of its own feed, from past what we
        hold of it (``held``), whatever our votes say: that is what it must learn."""
        first = own_held + 1
        asks: list[tuple[int | None, int, int, int]] = [
            (None, self.seat, first, first + max_want - 1)
        ]
        for r in self.recovering_too():
            for q, announced in enumerate(frontier):
                if q != self.seat:
                    count = held[q] if q == r else announced
                    asks.append((r, q, count + 1, count + max_want))
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
        stated = {r: wants[seat] for r, wants in self.wants.items() if seat in wants}
        holders = tuple(
            q
            for q in range(self.n)
            if q != seat and max(claimed[q][seat], stated.get(q, 0)) > self.first
        )
        return Recovered(self.first, own_held, holders)

    def hopeless(
        self, waiting: Sequence[int], heard: Sequence[float], now: float, drop_after: float
    ) -> bool:
        """Whether every member we still wait for (``waiting``) has been silent for
        ``drop_after`` since the recovery began (``heard``: when each was last heard)."""
        return bool(waiting) and all(now >= max(heard[q], self.since) + drop_after for q in waiting)
