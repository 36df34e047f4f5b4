"""Finality: which events no member can still precede, from what each member sent and holds.

Theory of operation
-------------------
``known[Q]``: every event of Q with Lamport time up to it is held here (Q announced a head
with that clock, in an event or a beat, and the feed is held up to that head). ``held_by[R]``:
what R has announced holding of every feed, in a beat or in an event's frontier
(:func:`event_beat`), credited only where R's chain is known to be ours (the ids it quotes
match). The **stable** time is the least of the terms: one per member (what
is known of its feed), one per drop vote of ours (we count no more of its target), and one per
pair of members (the first event of Q's feed that R is not known to hold, less one). Events up
to it are final: nobody can still send an earlier one, and every member holds them
(docs/protocol.md §8).

:class:`Finality` owns that bookkeeping; it reads the feeds (the peer's storage, shared, never
written here) and returns values. The peer decides which members are excluded (dropped), feeds
it beats and deliveries, and folds what became final.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Mapping, Sequence, Sized
from typing import TYPE_CHECKING, Protocol

from p2p_nertz.protocol.bodies import ID_PREFIX, Beat, EventBody
from p2p_nertz.protocol.envelope import Message
from p2p_nertz.protocol.state import (
    GameState,
    Roster,
    decided_before_lifts,
    drop_lifts,
    freezes,
    voted_gone,
)

if TYPE_CHECKING:
    from p2p_nertz.protocol.folds import Folds
    from p2p_nertz.protocol.state import Notice

__all__ = [
    "Bound",
    "Finality",
    "KNOWN",
    "NO_SEAT",
    "VOTED",
    "Taken",
    "decided",
    "decided_at",
    "drops_waiting",
    "event_beat",
    "frozen_claims",
    "held_below",
    "leaves_unheld",
    "rejoined",
    "released",
    "settle",
    "standing_freezes",
    "uncovering",
]

#: Terms of :meth:`Finality.bounds` other than a pair of members (whose seats are >= 0).
KNOWN = -1
VOTED = -2

#: The seat of a view that is no member's (a spectator): no term is its own.
NO_SEAT = -1

_EVER = 1 << 62  # (a time past every event)


def event_beat(message: Message, body: EventBody) -> Beat:
    """What a delivered event announces, as a beat would (protocol version 2, §7.1): its author
    holds its feed up to this event, and every feed up to its frontier, the ids naming which
    chain. Taken by :meth:`Finality.take_beat` like any beat, so an event credits ``held_by``
    only where the ids match what is held here, and a mismatch is a fork seen (§9.4): one
    rule for both, and a claim needs no ack of its own author's."""
    return Beat(message.seq, message.id, body.frontier, body.frontier_ids)


Taken = tuple[Beat, list[int], list[tuple[int, int, int]]]
"""A beat taken (:meth:`Finality.take_beat`): the beat, the feeds it holds more of than we do,
and the forks it shows, ``(feed, first, count)``."""


def _never() -> bool:
    return False


class Finality:
    """The stability bound and what it is computed from (one member's view).

    Args:
        seat: our own seat (:data:`NO_SEAT` for a spectator).
        feeds: the delivered events of every seat, in seq order (read, never written here).
    """

    def __init__(self, seat: int, feeds: list[list[Message]]) -> None:
        n = len(feeds)
        self.n = n
        self.seat = seat
        self._feeds = feeds
        self.known = [0] * n  # every event of seat Q with lamport <= known[Q] is held
        self.announced: list[tuple[int, int]] = [(0, 0)] * n  # Q's latest (lamport, head)
        self.held_by: list[tuple[int, ...]] = [(0,) * n for _ in range(n)]  # R's held, verified
        # What R's beats said it holds beyond what we held then: feed -> (count, id prefix),
        # credited to R once we hold that far and the ids match (see take_beat).
        self.uncredited: list[dict[int, tuple[int, bytes]]] = [{} for _ in range(n)]
        # A member's latest beat that announced a head of its own feed not held here yet:
        # its cover is credited once that feed is (take_beat).
        self.early: list[tuple[int, Beat] | None] = [None] * n
        self.claimed: list[tuple[int, ...]] = [(0,) * n for _ in range(n)]  # R's held, as said
        # The most of Q's feed any member but us and Q said it holds (Q's word on its own
        # feed is in known: :meth:`bounds`).
        self.claimed_most = [0] * n
        # The term that held finality back at the last call of bounds: (seat, Q) for what
        # seat is known to hold of Q's feed, or (KNOWN, Q), or (VOTED, Q).
        self.holder: tuple[int, int] | None = None
        self.stable = 0
        self.dirty = True  # something finality depends on changed since the last advance
        # Whether our tentative fold is over now (raises; the peer's Chains sets it).
        self.over: Callable[[], bool] = _never
        # q -> voter -> count: every vote against q standing in the held events (set at each
        # advance, :func:`standing_freezes`); a voter's cover of q's feed counts no further.
        self.freezes: dict[int, dict[int, int]] = {}

    # -- what changes it --------------------------------------------------------------------
    def delivered(self, seat: int, message: Message) -> tuple[int, Beat] | None:
        """Take an event just appended to ``seat``'s feed; the early beat of its author whose
        head is now held, if any (its cover is to be taken now: :meth:`take_beat`)."""
        known = self.known
        known[seat] = max(known[seat], message.lamport)
        lamport, head = self.announced[seat]
        if head <= len(self._feeds[seat]):
            known[seat] = max(known[seat], lamport)
        # The author holds its own event (what else it holds, its beats say, with ids).
        if message.seq > self.held_by[seat][seat]:
            held = self.held_by[seat]
            self.held_by[seat] = (*held[:seat], message.seq, *held[seat + 1 :])
            self.dirty = True
        if any(self.uncredited):
            for r, uncredited in enumerate(self.uncredited):
                if uncredited:
                    self.credit(r, seat)
        early = self.early[seat]
        if early is not None and early[1].head_seq <= message.seq:
            self.early[seat] = None
            return early
        return None

    def take_event(
        self, seat: int, message: Message, body: EventBody
    ) -> tuple[Taken | None, Taken | None]:
        """Take an event just appended to ``seat``'s feed: what its author is known to hold
        (:meth:`delivered`), then by :meth:`take_beat` the cover of its author's early beat
        whose head is now held, and the event itself as an ack, unless it is our own (§7.1,
        :func:`event_beat`). The one step of the peer's delivery (``Delivery.deliver``) and
        the spectator's.

        What each of those two beats showed we lack, for a member to ask for it
        (``Delivery.ask``; a watcher asks for nothing): ``(beat, ahead, forks)`` as
        :meth:`take_beat` returns them; ``None`` where there was no such beat, or it showed
        no feed held further than here and no fork (the head it announces is held: the event
        just delivered is, and an early beat waited for it). Usually ``(None, None)``."""
        early = self.delivered(seat, message)
        first: Taken | None = None
        if early is not None:
            lamport, beat = early
            ahead, forks = self.take_beat(seat, lamport, beat)
            if ahead or forks:
                first = (beat, ahead, forks)
        if seat == self.seat:
            return first, None
        beat = event_beat(message, body)
        ahead, forks = self.take_beat(seat, message.lamport, beat)
        return first, ((beat, ahead, forks) if ahead or forks else None)

    def credit(self, r: int, q: int) -> None:
        """Credit member ``r`` with the part of ``q``'s feed it announced before we held it,
        once we do and the ids match (a mismatch is left to ``r``'s next beat, which then
        shows the fork)."""
        entry = self.uncredited[r].get(q)
        if entry is None or entry[0] > len(self._feeds[q]):
            return
        del self.uncredited[r][q]
        h, prefix = entry
        if self._feeds[q][h - 1].id[:ID_PREFIX] == prefix:
            held = self.held_by[r]
            self.note_held(r, (*held[:q], max(held[q], h), *held[q + 1 :]))

    def note_held(self, seat: int, held: tuple[int, ...]) -> None:
        """Raise what ``seat`` is known to hold (never lowered)."""
        old = self.held_by[seat]
        if held != old and any(h > o for h, o in zip(held, old, strict=True)):
            self.held_by[seat] = tuple(max(h, o) for h, o in zip(held, old, strict=True))
            self.dirty = True

    def note_head(self, seat: int, head: int) -> None:
        """Take ``seat``'s signed word that it holds its own feed up to ``head``, from a beat
        of any age (one relayed with a vote *withheld* on it, ``debts``): it owes that feed
        here (``Membership.stalls``). It holds no finality back: what we know of its feed is
        what its beats of a head held here said (:attr:`known`, :meth:`bounds`). A beat taken
        anew says it too (:meth:`take_beat`: its ``held`` has the author's own count)."""
        claimed = self.claimed[seat]
        if head > claimed[seat]:
            self.claimed[seat] = (*claimed[:seat], head, *claimed[seat + 1 :])
            self.dirty = True

    def note_claims(self, seat: int, claims: Sequence[tuple[int, int]]) -> None:
        """Take ``seat``'s signed word that it holds each feed ``q`` up to ``count`` (``claims``:
        ``(q, count)``), from a beat of any age (one relayed with a vote *withheld* on it,
        ``debts``): it owes those events here (``Membership.stalls``), and its word caps each
        ``q``'s term as a new beat's does (:meth:`bounds`: it may hold an event ``q`` timed
        low)."""
        claimed = list(self.claimed[seat])
        most = self.claimed_most
        for q, count in claims:
            if count > claimed[q]:
                claimed[q] = count
                if q != seat and count > most[q]:
                    most[q] = count
                self.dirty = True
        self.claimed[seat] = tuple(claimed)

    def raises(self, seat: int, lamport: int, beat: Beat) -> bool:
        """Whether a beat of ``seat`` older than one of its taken (replayed, overtaken, or
        relayed by another member as its game ended: ``last_words``) says more of its author's
        feed or cover than is known here: its head is held, and it is timed above what we know
        of that feed or announces holding, of a feed held here, more than we credit it with.
        Taken (:meth:`take_beat`), it is as sound as when new: each item only raises a bound
        the author's own signed word sets. A later beat of its that we took whose head is not
        held here says nothing of either (docs/protocol.md §7.1, §9.2).

        Taken only at the game's end: :attr:`over` says whether our tentative fold is over now
        (every event of the game is here, only the others' words are missing), and is asked
        last, only of a beat that says more (it may refold what is held). Before the end the
        word of an old beat comes again with its author's next beat or event, and taking it
        sooner would move when things are final in every game, not only where a liar holds
        one back. Asked of the tentative fold as it is when the beat comes, not as the last
        move of the final fold left it: where no drop vote is held that was the final fold,
        over only once nothing is missing, and a relay that came before it was lost for good
        (real nodes: the relayers had stopped; docs/protocol.md §9.2, *the relay lost before
        the end*)."""
        feeds = self._feeds
        if beat.head_seq > len(feeds[seat]):
            return False  # (its cover waits for its head, as a new one's: take_beat)
        held = self.held_by[seat]
        says_more = lamport > self.known[seat] or any(
            held[q] < h <= len(feeds[q]) for q, h in enumerate(beat.held)
        )
        return says_more and self.over()

    def take_beat(
        self, seat: int, lamport: int, beat: Beat
    ) -> tuple[list[int], list[tuple[int, int, int]]]:
        """Take what a sound beat of ``seat`` (timed ``lamport``) announces.

        Returns the feeds it holds more of than we do, and the forks it shows: ``(feed,
        first, count)`` where it holds another event than ours under a seq (its versions from
        ``first`` up to ``count`` are the proof, to be fetched).

        Cover is credited only where the other peer's chain is known to be ours: the id of an
        event names its whole chain (each event hashes the previous id), so a matching id at
        the seq it announces proves the same chain up to there. A count beyond what we hold
        cannot be checked yet: it is credited once we hold that far and it matches.

        Nor is cover credited before we hold the author's own feed up to the head the beat
        announces: its votes and withdrawals there decide what its cover may make final (a
        withdrawal lifts caps, §9.2; soak seed 1826: the cover of the votes' target came
        before the withdrawal that let an earlier vote count, and the final fold took that
        vote as capped). It is credited once that feed is here (:meth:`delivered`).
        """
        feeds = self._feeds
        feed = feeds[seat]
        if lamport > self.announced[seat][0]:
            self.announced[seat] = (lamport, beat.head_seq)
        if beat.head_seq <= len(feed) and lamport > self.known[seat]:
            self.known[seat] = lamport
            self.dirty = True
        early = beat.head_seq > len(feed)
        if early:
            stashed = self.early[seat]
            if stashed is None or stashed[1].head_seq <= beat.head_seq:
                self.early[seat] = (lamport, beat)
        claimed = self.claimed[seat]
        claims_more = False
        most = self.claimed_most
        uncredited = self.uncredited[seat]
        old = self.held_by[seat]
        held = list(old)
        ahead = []  # the feeds it holds more of than we do
        forks = []
        # (Run for every beat and every event taken: each step here is per message. A max
        # of two ints is written as a test, which costs no call.)
        for q, (h, prefix) in enumerate(zip(beat.held, beat.held_ids, strict=True)):
            if h > claimed[q]:
                claims_more = True
                if q != seat and h > most[q]:  # (its own word is known's: caps nothing)
                    most[q] = h
            ours = feeds[q]
            if h > len(ours):
                ahead.append(q)
                if early:
                    continue
                # Not here yet (a beat relayed by a third peer can overtake the events, on
                # their way from their author): credited when they are (credit). Without
                # that, a claim waited here for the beat's author to beat again.
                if h > uncredited.get(q, (0, b""))[0]:
                    uncredited[q] = (h, prefix)
                continue
            if h and ours[h - 1].id[:ID_PREFIX] != prefix:
                # It holds another event under that seq: the author forked. Do not count its
                # cover (the caller fetches its versions since the last agreed seq).
                forks.append((q, min(max(old[q], 0) + 1, h), h))
                continue
            if early:
                continue  # (the fork above is checked all the same: it is how we learn one)
            if h > held[q]:  # noqa: PLR1730  (a test costs no call: see above)
                held[q] = h
        if claims_more:
            self.claimed[seat] = tuple(map(max, beat.held, claimed))
            self.dirty = True
        raised = tuple(held)  # (each item only raised above: as note_held would do)
        if raised != old:
            self.held_by[seat] = raised
            self.dirty = True
        return ahead, forks

    # -- the final fold moved on -------------------------------------------------------------
    def advance(
        self,
        folds: Folds,
        tentative: GameState,
        bound: Bound,
        forked: Mapping[int, int] | None = None,
    ) -> tuple[int, list[Notice]]:
        """Move the final fold (``folds.final``) as far as the stable time now lets it: the one
        rule for the peer (``Chains.advance``) and the spectator. The final fold takes the
        caps of the held votes (a vote the held events show can never count does not count
        there either), the members a held drop leaves out and the stable time are
        :func:`settle`'s (``bound``: the caller's own terms), and the events up to it are
        taken as :meth:`Folds.advance` takes them, with the gaps the held events decide
        (``forked``: seat -> the first seq proven here in two versions, :func:`unannounced`).
        How many events were taken, and the final fold's notices; ``0, []`` if the stable
        time did not grow."""
        final = folds.final
        final.vote_caps = dict(tentative.vote_caps)
        capped = folds.capped_drops if tentative is not final else {}
        uncut = folds.uncut_drops if tentative is not final else {}
        dated = folds.dated_drops if tentative is not final else {}
        roster = tentative.roster
        self.freezes = (
            standing_freezes(roster) if roster.read or roster.votes or roster.frozen else {}
        )
        # (settle reads what was said and what is known only of members the held events drop
        # or readmit: made for none on the usual input, which has neither.)
        waits = tentative.dropped or tentative.readmitted_at
        excluded, stable = settle(
            final,
            tentative,
            self._feeds,
            bound,
            self.stable,
            announced=self._said(tentative, final.dropped) if waits else (),
            forked=forked,
            capped=capped,
            known=self._known_others() if waits else None,
            uncut=uncut,
            dated=dated,
        )
        if tentative.roster.left:
            stable = min(stable, leaves_unheld(tentative, excluded, final.dropped, self))
        if stable <= self.stable:
            return 0, []
        self.stable = stable
        return folds.advance(stable, excluded, tentative.gaps)

    def _said(
        self, tentative: GameState, dropped: Mapping[int, int] | None = None
    ) -> Sequence[Sequence[int]]:
        """What each member said it holds (:attr:`claimed`) as :func:`settle` waits for it:
        of a member the held votes drop (not the final fold, ``dropped``: its drops no longer
        wait), a voter's word taken no further than its vote
        (:func:`frozen_claims`), where we hold the voter's feed up to the last head it
        announced, so that its membership events up to its announcements are all here (one
        it has not withdrawn there stood when it said them). A voter whose feed we hold less
        of may have withdrawn since, and then announce more as an honest member: its word is
        taken as said until we hold that far (docs/protocol.md §9.2, *the freeze, enforced*)."""
        waiting = [q for q in tentative.dropped if not dropped or q not in dropped]
        if not waiting:
            return self.claimed
        roster, feeds, heads = tentative.roster, self._feeds, self.announced
        frozen = {
            q: {r: n for r, n in freezes(roster, q).items() if heads[r][1] <= len(feeds[r])}
            for q in waiting
        }
        return frozen_claims(self.claimed, frozen)

    def _known_others(self) -> list[int]:
        """:attr:`known`, our own seat's entry past every time (we hold all our events)."""
        known = list(self.known)
        if 0 <= self.seat < self.n:
            known[self.seat] = _EVER
        return known

    # -- the bound --------------------------------------------------------------------------
    def bounds(
        self,
        excluded: dict[int, int],
        voted: dict[int, int],
        own_known: int,
        clock: int,
        *,
        floor: int | None = None,
        forks: dict[int, int] | None = None,
    ) -> int:
        """The stable time if the seats in ``excluded`` (seat -> cut) no longer play.

        That time is the least of many terms: one per member (what we know of its feed;
        ``own_known`` for ours), one per vote of ours (``voted``: seat -> the seq we froze it
        at), and one per pair of members (what one is known to hold of the other's feed).
        With a ``floor``, the caller only asks whether the time is above it: the term that was
        the least at the last such call (:attr:`holder`) is tried first, and returned if it is
        still at or below ``floor``. Most inputs make nothing final, and what held finality
        back then usually still does; the full walk is n² steps.

        ``forks``: seat -> the Lamport time of a version of its first forked event that its
        feed here does not hold (the other half of a proof, §9.4). Every other term reads the
        feed held here, whose event at that seq is not the other version: a pair term would
        make final what comes before our version's time, the other version's too, unheld
        (soak --sleeper-forks seed 44: the sleeper made final the time of the honest chain's
        event, then refused that event for ever as timed below what is final).
        """
        if floor is not None:
            term = self._holder_term(excluded, voted, own_known)
            if term is not None and term <= floor:
                return term  # (some term is at or below floor, so the least one is)
        members = [q for q in range(self.n) if q not in excluded]
        bound, holder = self._member_terms(members, excluded, own_known, clock, forks)
        if self.seat not in excluded:
            bound, holder = self._vote_terms(voted, excluded, bound, holder)
        bound, holder = self._pair_terms(members, bound, holder)
        if floor is not None and holder is not None and bound <= floor:
            self.holder = holder
        return bound

    def _member_terms(
        self,
        members: list[int],
        excluded: dict[int, int],
        own_known: int,
        clock: int,
        forks: dict[int, int] | None,
    ) -> tuple[int, tuple[int, int] | None]:
        """The least of the members' own terms of :meth:`bounds` (what we know of each feed,
        held back by a fork's other version), and the term that gave it."""
        seat = self.seat
        feeds = self._feeds
        # The most of each feed any other member says it holds; kept up to date for all
        # members (take_beat), computed for a subset.
        most = self.claimed_most if not excluded else None
        holder: tuple[int, int] | None = None
        bound = clock  # (nobody left to wait for: everyone else left or was dropped)
        for q in members:
            if q == seat:
                known = own_known
            else:
                known = self.known[q]
                feed = feeds[q]
                if (
                    most[q] > len(feed)
                    if most is not None
                    else any(self.claimed[r][q] > len(feed) for r in members if r not in (seat, q))
                ):
                    # Another member holds an event of q that we do not: whatever q's beats
                    # said, we cannot know every event of q up to them until we have it (a beat
                    # can lie about time). Q's own word on a head past ours holds nothing back:
                    # known[q] counts only its beats of a head held here, each saying nothing
                    # of q past it comes at or below its time, and an event that does is a lie
                    # about time, refused and proven (docs/protocol.md §9.4). (Capped at our
                    # last event of q, a peer was held for good by a head never given: §9.2,
                    # the own-head variant at the game's end.)
                    known = min(known, feed[-1].lamport if feed else 0)
            if holder is None or known < bound:
                bound, holder = known, (KNOWN, q)
            other = forks.get(q) if forks else None
            if other is not None and other - 1 < bound:
                # (Held back as q's own term: the holder's term is then at least this one.)
                bound, holder = other - 1, (KNOWN, q)
        return bound, holder

    def _vote_terms(
        self,
        voted: dict[int, int],
        excluded: dict[int, int],
        bound: int,
        holder: tuple[int, int] | None,
    ) -> tuple[int, tuple[int, int] | None]:
        """``bound`` and ``holder`` lowered by the terms of our votes in :meth:`bounds`."""
        feeds = self._feeds
        for q, seq in voted.items():
            # Having voted a member out at ``seq``, we count no more of it than our vote does,
            # as we announce no more (the drop's cut may be our count, §9.2). Unless we are
            # out ourselves (the caller asks only while we are in): the votes of a member
            # dropped no longer count (§9.2), and waiting on ours would never let the drop
            # that put us out be final here (a member asleep past drop_after that wakes and
            # votes against the one that abandoned it).
            feed = feeds[q]
            if q in excluded or len(feed) <= seq:
                continue
            term = feed[seq].lamport - 1
            if term < bound:
                bound, holder = term, (VOTED, q)
        return bound, holder

    def _pair_terms(
        self, members: list[int], bound: int, holder: tuple[int, int] | None
    ) -> tuple[int, tuple[int, int] | None]:
        """``bound`` and ``holder`` lowered by the pair terms of :meth:`bounds` (what one
        member is known to hold of another's feed)."""
        seat = self.seat
        feeds = self._feeds
        freezes = self.freezes
        for r in members:
            if r == seat:
                continue
            held = self.held_by[r]
            if freezes:
                held = _frozen_cover(held, r, freezes)
            for q in members:
                feed = feeds[q]
                h = held[q]
                if h < len(feed):
                    term = feed[h].lamport - 1
                    if term < bound:
                        bound, holder = term, (r, q)
        return bound, holder

    def _holder_term(
        self, excluded: dict[int, int], voted: dict[int, int], own_known: int
    ) -> int | None:
        """The value of the term of :meth:`bounds` that :attr:`holder` names, or ``None`` if it
        is no term now. For a member's own term, a value at least as large."""
        if self.holder is None:
            return None
        r, q = self.holder
        if q in excluded:
            return None
        feed = self._feeds[q]
        if r == KNOWN:
            if q == self.seat:
                return own_known
            known = self.known[q]
            if not excluded and self.claimed_most[q] > len(feed):
                known = min(known, feed[-1].lamport if feed else 0)
            return known  # (with seats excluded, the term may be lower than this)
        if r == VOTED:
            seq = voted.get(q)
            if seq is None or len(feed) <= seq or self.seat in excluded:
                return None  # (no term: see bounds)
            return feed[seq].lamport - 1
        if r in excluded:
            return None
        h = self.held_by[r][q]
        freezes = self.freezes
        if freezes and q in freezes:
            h = min(h, freezes[q].get(r, h))
        return feed[h].lamport - 1 if h < len(feed) else None

    def final_count(self, seat: int) -> int:
        """How many events of ``seat``'s feed are final here (its times increase along it)."""
        feed = self._feeds[seat]
        return bisect.bisect_right([m.lamport for m in feed], self.stable)


class Bound(Protocol):
    """The stable time if the seats in ``excluded`` (seat -> cut) no longer play; with a
    ``floor``, any value at or below it may stand for one at or below it."""

    def __call__(self, excluded: dict[int, int], floor: int | None = None) -> int: ...


def settle(
    final: GameState,
    tentative: GameState,
    feeds: Sequence[Sequence[Message]],
    bound: Bound,
    floor: int,
    *,
    announced: Sequence[Sequence[int]] = (),
    forked: Mapping[int, int] | None = None,
    capped: Mapping[int, int] | None = None,
    known: Sequence[int] | None = None,
    uncut: Mapping[int, tuple[int, frozenset[int]]] | None = None,
    dated: Mapping[int, int] | None = None,
) -> tuple[dict[int, int], int]:
    """Which members no longer hold finality back, and the stable time then (one rule for the
    peer and the spectator; ``bound`` is each one's own, ``floor`` the stable time so far).

    Members the final fold dropped are out. Seats the held votes drop (``tentative``, at a
    point the others' feeds make final) no longer hold finality back either, once their events
    up to the cut are here, and every event of theirs a member still in announced holding
    (``announced``: what each member said it holds, short of a fork proven here, ``forked``,
    :func:`unannounced`): they are tried all
    together (a partition drops several at once), then those whose drop is not yet final are
    given up: final once the stable time without them reaches the time up to which the held
    events decide it (:func:`decided_at`: the drop's, or a later withdrawal it rests on), and,
    where that is a later withdrawal, once the member's own feed is held up to it too
    (``known``: seat -> every event of it timed up to there is held here, as
    :attr:`Finality.known`; ``None``: no such wait). A
    drop the held votes decide and that is not final yet keeps its member's events past the
    cut from being final before it is, and so does a drop that only the caps of withdrawable
    votes keep undecided (``capped``, seat -> cut:
    :attr:`Folds.capped_drops <p2p_nertz.protocol.folds.Folds.capped_drops>`). A member
    readmitted since, not final yet, is a member again from its readmission on. The stable
    time returned is at most ``floor`` when nothing more is final. ``dated``: drops decided
    no earlier than the votes a refusal of the drop decided first read
    (:attr:`Folds.dated_drops <p2p_nertz.protocol.folds.Folds.dated_drops>`).
    """
    if not (final.dropped or tentative.dropped or tentative.readmitted_at or capped or uncut):
        # Nobody out, nobody coming out or back (the usual input): every step below is then
        # empty, and the answer is the bound with everyone in (asked after most inputs).
        return {}, min(bound({}, floor), _EVER)
    excluded = dict(final.dropped)
    candidates = (
        released({q: cut for q, cut in tentative.dropped.items() if q not in excluded}, feeds)
        if tentative.dropped
        else {}
    )
    if candidates and announced:
        out = excluded.keys() | tentative.dropped
        candidates = unannounced(candidates, feeds, announced, out, forked)
    # Dropped and readmitted since, both held and neither final (a restart reads a whole game
    # at once): out from its drop to its readmission, as below. Left in, our own vote against
    # it (read back from the log) would hold finality below its drop for good (soak seed 145).
    back = {
        q: tentative.gaps[q][-1][0]
        for q, at in tentative.readmitted_at.items()
        if not (q in excluded or q in tentative.dropped or final.readmitted_at.get(q) == at)
    }
    if back:
        candidates.update(released(back, feeds))
    excluded = _given_up(excluded, candidates, tentative, bound, known, dated=dated)
    stable = bound(excluded, floor)
    for q, cut in (*tentative.dropped.items(), *(capped or {}).items()):
        # A drop the held votes decide, not final yet: the member's events past its cut
        # must not be final before it is, or the drop, once final, would cut events
        # already taken (soak seed 1216: both voters had withdrawn after the votes that
        # decided it, each before holding the other's vote). So for a drop that only caps
        # keep undecided (``capped``, never a member ``tentative`` drops): a withdrawal
        # lifts them in the past, and the drop is decided where the votes were (seed 603).
        feed = feeds[q]
        if q not in excluded and cut < len(feed):
            stable = min(stable, feed[cut].lamport - 1)
    stable = min(stable, held_below(uncut or {}, excluded, feeds))
    if stable <= floor:
        return excluded, stable  # (the readmissions below could only lower it)
    # Readmitted (held here, not final yet): a member again for everything after it.
    readmitted = {q: at for q, at in tentative.readmitted_at.items() if q not in tentative.dropped}
    return excluded, rejoined(stable, excluded, readmitted, bound)


def leaves_unheld(
    tentative: GameState,
    excluded: Mapping[int, int],
    final: Mapping[int, int],
    finality: Finality,
) -> int:
    """The bound that the leaves the held events take, not final yet, put on the stable
    time: below the first event of a leaver's feed, up to its ``leave``, that a member
    still in (not ``excluded``) is not known to hold (a leave not final yet: not in the
    final fold's drops, ``final``), as a pair term of :meth:`bounds`
    would put it had the leaver not been excluded (``finality``: what each member is
    known to hold, its :attr:`Finality.held_by`, and the feeds); a time past every event
    where none.

    A leave is its author's cut only while no vote later in the order drops the author
    below it (``roster._undo_leaves``: a member cut off, its clock behind, leaves before
    the votes, or the abandon, that count none of its events from the leave on; then the
    leave and every event of it past their count never count, §9.2, §9.3 *A leave past
    the cut*). Such a vote can come only from a member that does not hold the leave; so
    the leaver's events up to its leave are final only once every member still in is
    known to hold them, and a vote signed before that is here (a cover is credited only
    once the announcer's feed is held up to the head it announced). Without this bound,
    excluded once its leave's time was stable, the leaver's own fold made its leave and
    its events before it final without the others' votes: at two players the leave's
    end, where the one left had abandoned it below the leave (another winner); at four,
    its own claims, refusing the others' moves for good (session 38). An honest voter
    announces the leaver's feed up to the leave once its final fold has it out there
    (``membership._announced``), so a standing vote holds nothing back for good; taken
    as announced, not capped by the voter's vote (:func:`standing_freezes`), for that."""
    stable = _EVER
    for q in tentative.roster.left:
        cut = tentative.dropped.get(q)
        if q not in excluded or q in final or cut is None:
            continue  # (in: its pair terms hold its events back already; or final)
        feed = finality._feeds[q]
        for r, held in enumerate(finality.held_by):
            if r in (q, finality.seat) or r in excluded:
                continue  # (we hold every event we fold)
            h = held[q]
            if h < cut and h < len(feed):
                stable = min(stable, feed[h].lamport - 1)
    return stable


def held_below(
    uncut: Mapping[int, tuple[int, frozenset[int]]],
    excluded: Mapping[int, int],
    feeds: Sequence[Sequence[Message]],
) -> int:
    """The bound that the drops only the caps and the tentative fold's cuts not final yet
    keep undecided put on the stable time (``uncut``: seat -> its cut and the members whose
    drops those cuts are, :attr:`Folds.uncut_drops
    <p2p_nertz.protocol.folds.Folds.uncut_drops>`): below the member's first event past its
    cut, held here, while it is not out (``excluded``) and those other drops are not all
    final; a time past every event where none holds.

    The other drops are the tentative fold's fixed point, and the held withdrawals may still
    undo them (one before the drop in the order, not held yet) and make this one instead,
    which cuts the member's events past its cut whatever their time: made final meanwhile,
    they stayed in that final fold for good while every fold from scratch cut them
    (``scan_late_lift.py --pairs``, three players seed 1, docs/protocol.md §13). Once those
    drops are final they can be undone no more, the round without their cuts no longer
    names this one, and the bound goes: it never holds back their own finality, which
    :func:`_given_up` decides without it, so it adds no wait that their drops do not end.

    >>> from types import SimpleNamespace as NS
    >>> feeds = [[NS(lamport=t) for t in (10, 20, 30)], [NS(lamport=t) for t in (15, 25)]]
    >>> uncut = {0: (1, frozenset({1}))}
    >>> held_below(uncut, {}, feeds), held_below(uncut, {1: 1}, feeds) == _EVER
    (19, True)
    """
    stable = _EVER
    for q, (cut, unless) in uncut.items():
        feed = feeds[q]
        if q not in excluded and not unless <= excluded.keys() and cut < len(feed):
            stable = min(stable, feed[cut].lamport - 1)
    return stable


def _given_up(
    excluded: dict[int, int],
    candidates: dict[int, int],
    tentative: GameState,
    bound: Bound,
    known: Sequence[int] | None,
    *,
    dated: Mapping[int, int] | None = None,
) -> dict[int, int]:
    """:func:`settle`'s trial: ``excluded`` with the ``candidates`` (seat -> cut) whose drop
    is final, tried all together, then without those not final yet, until none is left out:
    final once the stable time without them reaches :func:`decided`, and, for a drop
    resting on a later withdrawal (:func:`lifted`), once the member's own feed is held up to
    it too (``known``) or a strict majority of the others stand voting it out
    (``roster.voted_gone``: a member gone for good never sends it), of the votes the stable
    time reaches (every member still in announced them). A drop ``dated`` is decided no
    earlier than that date, and waits so too (session 43: seed 326's shape withdrawn,
    docs/protocol.md §13)."""
    candidates = dict(candidates)
    dated = dated or {}
    dates = {q: max(decided(tentative, q), dated.get(q, 0)) for q in candidates}
    while candidates:
        trial = excluded | candidates
        limit = bound(trial)
        late = [q for q in candidates if dates[q] > limit]
        if known is not None:  # (and a drop resting on a later withdrawal: its member's feed)
            late += [
                q
                for q in candidates
                if q not in late
                and max(lifted(tentative, q), dated.get(q, 0)) > known[q]
                and not voted_gone(tentative.roster, q, limit)
            ]
        if not late:
            return trial
        for q in late:
            del candidates[q]
    return excluded


def decided_at(tentative: GameState, seat: int) -> int:
    """The Lamport time up to which the held events decide ``seat``'s drop (``tentative``: the
    fold of the held events, which drops it): its ``drop_at``, or the latest withdrawal held
    after it of a vote against another member that capped (``Roster.lifts``), if later.

    A withdrawal lifts its vote's cap in the past too (docs/protocol.md §9.2, *Caps*), so a
    vote it uncaps may count before the drop and decide it: the drop then rests on an event
    timed after ``drop_at``, and a peer that made it final at a stable time below that
    withdrawal made final what the events up to that time do not decide. The member the drop
    excludes may hold, in its events past the cut, what decides the other way (a withdrawal
    of its own that uncaps a vote dropping another member first): waiting until the stable
    time without it reaches the withdrawal waits for every member still in to announce what
    it holds up to there, the member's events among them (:func:`unannounced`), and never for
    the member itself (``--late-withdrawals`` seed 85: peers 0 and 1 made seat 1's drop at 87
    final at 101 on seat 0's withdrawal at 115, peer 2 seat 0's at 86 at 123 on its own
    withdrawal at 124, without seat 0's at 115; §7.4).

    >>> from types import SimpleNamespace as NS
    >>> lifts = {2: ((20, 115, 0, 9, 9),), 1: ((9, 120, 2, 9, 9),)}
    >>> roster = NS(lifts=lifts, ops=(), drop_at={1: 87}, dropped={1: 9})
    >>> decided_at(NS(drop_at={1: 87}, roster=roster), 1)
    115
    """
    at = tentative.drop_at.get(seat, 0)
    lifts = tentative.roster.lifts
    return max(
        [
            at,
            *(lift[1] for t, made in lifts.items() if t != seat for lift in made if lift[1] > at),
            *drop_lifts(tentative.roster, seat),
        ]
    )


def decided(tentative: GameState, seat: int) -> int:
    """The Lamport time up to which the held events decide ``seat``'s drop (``tentative``
    drops it): :func:`decided_at`, or earlier where the membership events before the
    withdrawals after the drop that :func:`decided_at` counts already drop ``seat`` at its
    cut (``roster.decided_before_lifts``): the drop rests on none of those withdrawals, and
    a peer that does not hold them decides it there. The one date of a drop for finality
    (:func:`settle`, :func:`lifted`) and for the drop decided first
    (``folds.decided_first``).

    ``--late-withdrawals`` five players seed 14 under ``LateLift(0)`` (docs/protocol.md
    §7.4, §13): peers 1, 2 and 4 made seat 4's drop at 304 final without seat 0's
    withdrawal at 372, which lifts a cap the drop does not need; peers 0 and 3, holding it,
    waited for the stable time without seat 4 to reach 372, which the vote of peer 1 on seat
    0, counting 41 (seat 0's event 42 is that withdrawal), bounds at 371 for good.
    """
    cut = tentative.dropped.get(seat)
    if cut is not None:
        at = decided_before_lifts(tentative.roster, seat, cut, tentative.drop_at.get(seat, 0))
        if at is not None:
            return at
    return decided_at(tentative, seat)


def drops_waiting(
    folds: Folds, bound: Bound, finality: Finality
) -> dict[int, tuple[int, int] | None]:
    """The drops the held votes decide that are not final in ``folds`` (seat -> what holds
    each back), for the table's rows (docs/protocol.md §9.5, session 39): the term of
    :meth:`Finality.bounds` (``(KNOWN, q)``: what is known of q's feed; ``(VOTED, q)``: our
    vote on q; ``(r, q)``: r's word on q's feed) that keeps the stable time without them
    (``bound``, tried together, as :func:`settle` first tries them) below the time the held
    events decide the drop (:func:`decided`); ``None`` where that time is reached (it waits on
    events not held here: its member's up to the cut, or announced). The one rule of a peer
    (``Chains.drops_waiting``) and a spectator (``Spectator.drops_waiting``: its bound has
    no vote of its own, since session 40). Reads only (the bound's cached holder,
    :attr:`Finality.holder`, is a hint its next walk checks)."""
    tentative, final = folds.tentative, folds.final
    pending = {q: cut for q, cut in tentative.dropped.items() if q not in final.dropped}
    out: dict[int, tuple[int, int] | None] = {}
    trial = dict(final.dropped) | pending
    dated = folds.dated_drops if pending else {}
    for q in sorted(pending):
        at = max(decided(tentative, q), dated.get(q, 0))
        late = bound(trial, floor=at - 1) < at
        out[q] = finality.holder if late else None
    return out


def lifted(tentative: GameState, seat: int) -> int:
    """The time of the latest withdrawal held after ``seat``'s drop that the drop rests on
    (:func:`decided`, where later than ``drop_at``), or 0: such a drop is final only once
    the member's own feed is held up to there too (:func:`settle`).

    Every member still in announcing what it holds up to that withdrawal does not say that
    none of them lacks an event of the member timed before it: one that comes to hold such an
    event only after announcing that cover cannot take its announcement back. Where the event
    is the member's own withdrawal of a vote that capped another member's vote, it lifts that
    cap in the past too, the held votes drop another member first, and a peer that holds it
    before it made the drop final folds that drop (docs/protocol.md §7.4; the simulator's
    :class:`~p2p_nertz.sim.schedules.LateLift`, ``--late-withdrawals`` seed 85 with seat 0's
    withdrawal at 115 held back: peer 1 made seat 0's drop final on the others' cover of 125,
    peers 0 and 2 then took the withdrawal and ended the game with seat 1 out; or, with peer 2
    first, seat 0 waited for good for a cover that no peer with the drop final gives, §9.2).
    What the member signed up to there reaches every member in the end (it is alive: the
    withdrawals the drop rests on came after the votes, once members heard each other again),
    so the wait ends; the others' cover alone still excludes a member whose drop rests on its
    own time.

    >>> from types import SimpleNamespace as NS
    >>> r = NS(lifts={2: ((20, 115, 0, 9, 9),)}, ops=(), drop_at={}, dropped={})
    >>> held = NS(drop_at={1: 87}, dropped={}, roster=r)
    >>> lifted(held, 1), lifted(NS(drop_at={1: 120}, dropped={}, roster=r), 1)
    (115, 0)
    """
    at = decided(tentative, seat)
    return at if at > tentative.drop_at.get(seat, 0) else 0


def released(dropped: Mapping[int, int], feeds: Sequence[Sized]) -> dict[int, int]:
    """Of the members ``dropped`` (seat -> cut), those that hold the stable time back no
    more: every event of theirs up to the cut is held here (``feeds``: how many events of
    each feed are, from seq 1). Until then one of them may still come, and it counts however
    late (the cut keeps it), so it may precede any event not final yet; past the cut nothing
    of theirs counts (§9.2).

    The one rule for the drops a peer's held votes decide (:func:`settle`) and for those the
    audit's fold has made, reading the logs one after another (``audit.fold.Fold._bound``,
    over its own feed store, 24 bytes an event).

    >>> released({1: 3, 2: 5}, [[], [0, 0, 0, 0], [0, 0]])
    {1: 3}
    """
    return {q: cut for q, cut in dropped.items() if len(feeds[q]) >= cut}


def unannounced(
    candidates: Mapping[int, int],
    feeds: Sequence[Sized],
    announced: Sequence[Sequence[int]],
    out: Collection[int],
    forked: Mapping[int, int] | None = None,
) -> dict[int, int]:
    """Of the members ``candidates`` (seat -> cut) the held votes drop, those whose every
    event that a member still in (not in ``out``) announced holding is held here
    (``announced[r][q]``: the most of ``q``'s feed ``r`` said it holds), up to the event
    before ``q``'s fork where one is proven here (``forked``: seat -> the first seq seen in
    two versions).

    A member's events past its cut do not count once it is out, but one timed before the
    drop can decide, in the fold that holds it, another drop first (a vote of the member's
    that completes a drop of one of its voters, earlier in the order): the fold without it
    and the fold with it then make different drops final. What a member still in announced
    holding can be fetched; a member that announced nothing past the cut is waited for no
    more than before (docs/protocol.md §7.4; ``--late-withdrawals`` seed 110: peer 2 made
    seat 1's drop at 30 final without seat 1's vote on seat 2, its event 38 at Lamport 155,
    before the drop at 159, which seat 0 announced holding; every fold that holds it drops
    seat 2 first, as peers 0 and 1 did).

    Past a proven fork a feed is not one chain: a count says how many events the announcer
    holds, not which version, and a peer that holds the other version at the fork can never
    take the events that follow the announcer's (they chain onto a version it does not hold;
    it takes the other one only where a drop's kept chain requires it). Waiting for them would
    hold finality back for good (tests/test_sim_forks.py, four players, the claim on a cut
    foundation: seat 3 forked at 31 and was dropped at 30; the sleeper held the fake at 31,
    seats 0 and 2 announced 36 and 35 of the real chain, and the sleeper never made the drop
    final: the game never ended). What comes before the fork is one chain, fetched as any.

    >>> unannounced({1: 3}, [[0] * 5, [0] * 3, [0] * 5], [(5, 4, 5), (5, 3, 5), (5, 3, 5)], ())
    {}
    """
    forked = forked or {}
    return {
        q: cut
        for q, cut in candidates.items()
        if all(
            len(feeds[q]) >= min(said[q], forked.get(q, said[q] + 1) - 1)
            for r, said in enumerate(announced)
            if r != q and r not in out
        )
    }


def frozen_claims(
    announced: Sequence[Sequence[int]], frozen: Mapping[int, Mapping[int, int]]
) -> list[Sequence[int]]:
    """``announced`` (``announced[r][q]``: the most of ``q``'s feed ``r`` said it holds, in a
    beat or an event) as this peer takes it: a member whose vote against ``q`` stands
    (``frozen``: ``q`` -> voter -> the count its vote quotes, ``roster.freezes``) is taken to
    hold no more of ``q``'s feed than its vote counts, whatever it said.

    The freeze (docs/protocol.md §9.2) made a rule the receiver enforces: an honest voter
    announces no more than its count (its vote counts all it announced before, and from the
    vote on its frontiers and beats stop there, or at the cut once its final fold drops the
    member, which every peer holds before it excludes the member: :func:`released`), so this
    changes nothing of what an honest member's word does. A voter that announces more, in a
    beat no log holds, would otherwise hold back for good, by :func:`unannounced`, the drop
    of the member at a peer it told alone, and the finality of everything after it (the honest
    dealer of ``tests/test_sim_freeze_beats.py``: stuck, voted out, and named by the audit,
    which reads what the logs prove, ``audit.answers._drops_read``).

    >>> frozen_claims([(5, 9, 5), (5, 3, 5)], {1: {0: 4}})
    [(5, 4, 5), (5, 3, 5)]
    """
    if not frozen:
        return list(announced)
    said = [list(row) for row in announced]
    for q, counts in frozen.items():
        for r, count in counts.items():
            if r < len(said) and said[r][q] > count:
                said[r][q] = count
    return [tuple(row) for row in said]


def standing_freezes(roster: Roster) -> dict[int, dict[int, int]]:
    """Every vote standing in ``roster`` against a member (for silence, withholding or proof,
    not withdrawn, its voter still in): target -> voter -> the count it quotes
    (:func:`~p2p_nertz.protocol.roster.freezes`, for every target).

    What caps the coverage term of :meth:`Finality.bounds`: a voter's word that it holds a
    member's feed past its own standing vote's count does not cover the member's events past
    that count (docs/protocol.md §9.2, *the freeze on the coverage term*). An honest voter
    never announces more while its vote stands, except once its final fold drops the member
    (it then announces up to the cut), and a dropped member's events up to the cut are final
    here once its drop is, cover or none (:func:`released`). A voter that breaks its freeze
    beside a member that forks made final, at the honest members, events past the count that
    the drop on proof, cut at the lowest count, then left out: they stalled for good
    (``tests/test_sim_two_cheaters.py``, ``scripts/scan_two_cheaters.py``).

    >>> from p2p_nertz.protocol.state import Roster
    >>> standing_freezes(Roster(3))
    {}
    """
    targets = {t for t, ballots in roster.votes.items() if ballots}
    targets.update(t for t, ballots in roster.frozen.items() if ballots)
    targets.update(body.seat for _, _, body in roster.read if body is not None)
    out = {}
    for q in sorted(targets):
        counts = freezes(roster, q)
        if counts:
            out[q] = counts
    return out


def covered(
    finality: Finality,
    dropped: Mapping[int, int],
    freezes: Mapping[int, Mapping[int, int]],
    seat: int,
    seq: int,
) -> bool | None:
    """Whether every member still in (not ``dropped``) but us announced holding ``seat``'s
    event ``seq`` (what :attr:`Finality.held_by` credits, capped at the count of its vote
    standing against ``seat``, ``freezes``); ``None`` where it is past ``seat``'s cut, and
    never counts. Once it is, no cut falls below it (a voter counts at least what it
    announced): the clock may take it whole (``Outbox.catch_up``, §5.3)."""
    cut = dropped.get(seat)
    if cut is not None and seq > cut:
        return None
    frozen = freezes.get(seat, {})
    for r, held in enumerate(finality.held_by):
        if r == finality.seat or r in dropped:
            continue
        if min(held[seat], frozen.get(r, held[seat])) < seq:
            return False
    return True


def uncovering(final: GameState, tentative: GameState, feeds: Sequence[Sized]) -> dict[int, int]:
    """The members whose word :func:`covered` no longer waits for (seat -> cut): those the
    final fold dropped, and those the held votes drop whose feed is held here up to the cut
    (:func:`released`, as :func:`settle` tries them).

    The word of a member the held votes drop stops at what its events up to the cut
    announced: its events past the cut are never taken, so its cover of another feed is
    credited no further, ever. Waited for, an event far ahead that it never announced is
    never taken whole (``Outbox.catch_up``), our clock stays ``lead`` above what we took,
    and so does every other member's word on it (our beats); where that drop rests on a
    withdrawal timed past there (:func:`decided`: a liar's leap), the stable time without
    the member never reaches it, the drop is never final and the table waits for ever
    (``soak.py --liars --two-liars --back readmit`` seed 256, docs/protocol.md §5.3, §13).
    The cut itself keeps what the member's votes up to it count: every one of them is held
    here."""
    pending = {q: cut for q, cut in tentative.dropped.items() if q not in final.dropped}
    return {**final.dropped, **released(pending, feeds)} if pending else dict(final.dropped)


def _frozen_cover(
    held: tuple[int, ...], voter: int, freezes: Mapping[int, Mapping[int, int]]
) -> tuple[int, ...]:
    """What ``voter`` is known to hold of each feed (``held``), capped at the count of its
    vote standing against that feed's member (``freezes``: :func:`standing_freezes`)."""
    return tuple(
        min(h, freezes[q].get(voter, h)) if q in freezes else h for q, h in enumerate(held)
    )


def rejoined(
    stable: int, excluded: Mapping[int, int], readmitted: Mapping[int, int], bound: Bound
) -> int:
    """``stable`` (the stable time with the seats in ``excluded`` out) held back by the
    members of ``excluded`` readmitted since their drop (seat -> the time of the
    readmission): a member again for everything after it, its feed holds the time back from
    there on, and a member that is no longer out holds it back as any member does.

    The one rule for a peer's held readmissions (:func:`settle`) and the audit's: its fold
    knows a member readmitted from its cut (the last pass found it, ``Fold._bound``) but not
    when, and passes 0, which holds the time back longer, never less (``--variants`` soak
    seed 693: a recovered log held a readmitted member's events after what the fold had
    passed)."""
    for q, at in readmitted.items():
        if q in excluded:
            rest = {k: v for k, v in excluded.items() if k != q}
            stable = min(stable, max(at, bound(rest)))
    return stable
