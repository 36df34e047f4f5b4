"""Membership and faults: who is heard, suspected, voted out, proven to cheat, readmitted.

Theory of operation
-------------------
A member silent for ``suspect_after`` is suspected; past ``drop_after`` this peer votes to drop
it; a member that keeps talking while finality waits for it alone is voted out for withholding
after ``phase_timeout`` (a *stall*); two signed messages of one author that contradict each other
(two events under one seq, or a beat and an event whose clocks disagree) prove it cheated
(docs/protocol.md §9). :class:`Membership` owns what this peer knows and decided about each
member: when it was last heard, our votes, the rejoin requests we sponsored, the readmissions
we handled; and, as its part :class:`~p2p_nertz.protocol.proofs.Proofs` (``proof``), the
beats kept to check later events against, the proofs we hold and the forks we probe. Its
methods read that state and return decisions: whether a pair of messages is a new proof
(:meth:`Proofs.clock_lie`, :meth:`Proofs.equivocation`), what a vote counts
(:meth:`Membership.fork_vote`, :meth:`Membership.vote`), which forks to probe, which members
are readmitted. The peer signs the votes, sends the proofs and caps the feeds; nothing here
calls back into it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.debts import excused, owed_relays
from p2p_nertz.protocol.envelope import Message
from p2p_nertz.protocol.finality import Finality
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.listening import Listening, silence_vote_at
from p2p_nertz.protocol.phase_waits import Awaited, Debtors
from p2p_nertz.protocol.proofs import Proofs
from p2p_nertz.protocol.roster import named_within_cuts
from p2p_nertz.protocol.share_store import ShareStore
from p2p_nertz.protocol.share_waits import Owed, ShareWaits
from p2p_nertz.protocol.state import GameState, Phase
from p2p_nertz.protocol.unjoined import unexcused

__all__ = [
    "WAITING_PHASES",
    "Membership",
    "SilenceTimers",
    "Stall",
    "heard_now",
    "judging_at_end",
    "recovered_withdrawals",
    "waits_for",
]

#: A stall record (:attr:`Membership.stall`): since when, the seq of the member's own feed we
#: wait to hold, what of each feed we wait for it to cover, and what of each third member's
#: feed it announced holding past what we hold (:func:`~p2p_nertz.protocol.debts.owed_relays`).
Stall = tuple[float, int, tuple[int, ...], tuple[int, ...]]

#: Phases that wait for an event from every member (play: for every seat's ``ready``; a
#: shuffle game's key, deal and open: its key, its stages, its secret).
WAITING_PHASES = (
    Phase.PLAY,
    Phase.COMMIT,
    Phase.NONCE,
    Phase.REVEAL,
    Phase.RESULT,
    Phase.KEY,
    Phase.DEAL,
    Phase.OPEN,
)
# (A tuple: ``in`` compares identities in C, where a set would hash the member in Python.)


Dropped = dict[int, int]  # seat -> cut, as GameState.dropped
Held = Callable[[], Dropped] | None  # the held fold's dropped, read when asked (track_silence)


@dataclass(frozen=True, slots=True)
class SilenceTimers:
    """The liveness timers membership needs (a subset of the peer's configuration)."""

    suspect_after: float
    drop_after: float
    phase_timeout: float
    max_watch: int


class Membership:
    """One member's view of every member's standing (see the module docstring).

    Args:
        seat: our own seat.
        seats: how many seats the game has.
        now: the current time (every member counts as heard at the start).
        timers: the silence and stall timers.
    """

    def __init__(self, seat: int, seats: int, now: float, timers: SilenceTimers) -> None:
        self.seat = seat
        self.n = n = seats
        self.timers = timers
        self._heard = [now] * n
        #: the earliest time another member was last heard (inf: none), kept by heard_from and
        #: the heard setter: the silence timers' bound after every input (latency.md, s. 26)
        self.least_heard = _least_other(self._heard, seat)
        #: since when we have run without a break: a vote for silence waits for it
        self.listening = Listening(now, timers.suspect_after)
        # Members that keep talking while finality waits for them (§9.2): seat -> (since,
        # the seq of its feed we wait to hold, what of each feed we wait for it to cover,
        # what of each third member's feed it announced holding past ours: owed_relays).
        self.stall: dict[int, Stall] = {}
        self.stall_scan_at = now
        #: seat -> the stall record (as :attr:`stall`) our vote *withheld* on it was cast on:
        #: withdrawn once it has given what it owed then (:meth:`relieved`)
        self.stall_votes: dict[int, Stall] = {}
        self.proven_seats: set[int] = set()  # seats we voted out on proof (never withdrawn)
        #: the proofs of cheating we hold and the forks we probe (the receive path and the
        #: author call it directly: ``membership.proof``)
        self.proof = Proofs(seat, n, timers.max_watch)
        self.rejoin_requests: dict[int, int] = {}  # seat -> seq of its latest rejoin request
        self.sponsored: set[tuple[int, int]] = set()  # (seat, request seq) we readmitted
        self.readmissions: set[tuple[int, int]] = set()  # (seat, time) final here, handled
        self.announced_held = [0] * n  # the most of each feed we ever said we hold
        # Since when every other member still in has been heard within ``suspect_after``
        # (None: one is silent now). Nobody is blamed for withholding before then (blame_from).
        self.all_heard_since: float | None = now
        #: when each position of a shuffle game's deal was turned up, for its shares' wait
        self.share_waits = ShareWaits()
        #: seat -> when we voted it out for a share it still owes (it counts as gone since),
        #: and what it owed then (the vote is withdrawn once that is held: withheld_relieved)
        self.share_votes: dict[int, tuple[float, tuple[Owed, ...]]] = {}
        #: seat -> when we voted it out *withheld* for the event of the final phase (it
        #: counts as gone since, as for a share) and that event (the vote is withdrawn once
        #: it is held: withheld_relieved); the members whose event is held, not waited for
        self.phase_votes: dict[int, tuple[float, Awaited]] = {}
        self.held_waits: frozenset[int] = frozenset()
        self.debtors = Debtors()  # members owing us events not held: the phase blames no other
        self.frontier = self.frontier_honest  # (a liar's seam, as Outbox.sign_event's)
        self.silence_vote_at = self.silence_vote_at_honest  # (a test's seam: testing/silences)
        self.withheld_back: dict[int, Sequence[int]] = {}  # our votes *withheld* in our log
        self.suspected: set[int] = set()
        self.back: dict[int, float] = {}  # seat -> when last heard again, suspected (relays)
        self.voted: dict[int, int] = {}  # seat -> seq we voted to drop it at (frozen there)
        #: seats heard while we recovered with a vote of ours for silence on them standing
        self.heard_recovering: set[int] = set()
        self.holding = False  # a doubt on our own feed holds us back: withdrawals wait too
        self.deferred_forks: list[tuple[int, int]] = []  # proofs found while recovering

    def frontier_honest(
        self, feeds: Sequence[Sequence[object]], dropped: dict[int, int]
    ) -> tuple[int, ...]:
        """What we announce holding: every feed's length, except past our vote for a suspect,
        and past the cut of a member our final fold dropped (``dropped``: seat -> cut) until
        it is readmitted (remembered in :attr:`announced_held`)."""
        held = _announced(feeds, self.voted, dropped, self.seat)
        announced = self.announced_held
        for q, h in enumerate(held):
            announced[q] = max(announced[q], h)
        return tuple(held)

    # -- silence ----------------------------------------------------------------------------
    @property
    def heard(self) -> list[float]:
        """When each member was last heard, by seat (written by heard_from, or set whole)."""
        return self._heard

    @heard.setter
    def heard(self, times: list[float]) -> None:
        self._heard, self.least_heard = times, _least_other(times, self.seat)

    def track_silence(self, now: float, dropped: Dropped, held_dropped: Held = None) -> None:
        """Keep :attr:`all_heard_since` up to date: whether a member still in is silent now
        (one that ``held_dropped`` drops is out: :func:`_silent_in`)."""
        # (Asked after every input: nobody is silent while the longest-unheard member is not,
        # as silence_due reads it; the walk only when one may be. No other member: never.)
        if now >= self.least_heard + self.timers.suspect_after and _silent_in(
            self, now, dropped, held_dropped
        ):
            self.all_heard_since = None
        elif self.all_heard_since is None:
            self.all_heard_since = now

    def heard_from(self, seat: int, now: float) -> bool:
        """``seat`` is heard now (directly or by relay); whether it was suspected until now."""
        heard = self._heard
        before = heard[seat]
        heard[seat] = now
        if seat != self.seat:
            if now < self.least_heard:
                self.least_heard = now
            elif before == self.least_heard:  # it held the least (or shared it): it may move
                self.least_heard = _least_other(heard, self.seat)
        if seat in self.suspected:
            self.suspected.discard(seat)
            self.back[seat] = now
            return True
        return False

    def withdraws(self, seat: int, folds: Folds, recovering: bool) -> bool:
        """Whether our vote against ``seat``, heard again, is withdrawn now (taken out of our
        votes: the caller signs the withdrawal). A vote for silence only counts while still
        needed; a vote on proof of cheating or withholding stands, and so does one whose drop
        the final or the held events decide (or that a readmission not final yet may undo);
        while recovering it waits, and is withdrawn once we have recovered
        (:func:`recovered_withdrawals`)."""
        if seat not in self.voted or seat in self.proven_seats:
            return False
        if recovering or self.holding:
            self.heard_recovering.add(seat)  # (withdrawn once recovered: Author.recovered)
            return False
        if not self._undecided(seat, folds):
            return False
        del self.voted[seat]
        return True

    @staticmethod
    def _undecided(seat: int, folds: Folds) -> bool:
        """Whether a vote of ours against ``seat`` may still be withdrawn: neither the final
        nor the held events drop it, nor readmit it in a readmission not final yet."""
        final = folds.final
        if seat in final.dropped:
            return False
        tentative = folds.tentative
        return seat not in tentative.dropped and tentative.readmitted_at.get(seat) == (
            final.readmitted_at.get(seat)
        )

    def blame_from(self, since: float) -> float | None:
        """When a wait that began at ``since`` starts to count against the members it waits for:
        not before every member still in has been heard again (None: one is silent now).

        A member that is silent to us may be holding back the others' finality as well as ours
        (a partition, a crash): what they owe us then waits on it, not on them. Blaming them
        for it made both sides of a healed partition vote each other out for withholding, votes
        that stand, and no majority ever formed (soak seed 229). The silence timers deal with
        the silent member first; the waits count once it is heard again or dropped.
        """
        if self.all_heard_since is None:
            return None
        return max(since, self.all_heard_since, self.debtors.settled_at)

    def silence_due(self, now: float, dropped: dict[int, int]) -> list[tuple[int, bool]]:
        """The members whose silence calls for something now, in seat order: ``(seat, False)``
        to suspect (and mark suspected here), ``(seat, True)`` to vote out for silence."""
        timers = self.timers
        if now < self.least_heard + min(timers.suspect_after, timers.drop_after):
            # No other member has been silent long enough for anything below (a float sum
            # does not decrease when a term grows: each sum below is at least this one).
            return []
        due = []
        for q in range(self.n):
            if q == self.seat or q in dropped:
                continue
            # Compare with the same sums the peer's next deadline uses, or a float rounding
            # could leave a deadline that is due but never acted on.
            heard = self._heard[q]
            if now >= heard + timers.suspect_after and q not in self.suspected:
                self.suspected.add(q)
                due.append((q, False))
            if q not in self.voted and now >= self.silence_vote_at(q):
                due.append((q, True))
        return due

    def silence_vote_at_honest(self, q: int, now: float | None = None) -> float:
        """When ``q`` is voted out for silence, or counts as gone for an abandon asked at ``now``
        (:meth:`gone_for`): ``drop_after`` after last heard, once we listened (its seam's)."""
        return silence_vote_at(self._heard[q], self.timers.drop_after, self.listening, now)

    def silent_for(self, now: float, dropped: dict[int, int]) -> float:
        """Seconds since any other member still in the game (not in ``dropped``) was last
        heard from (directly or by relay)."""
        others = [self._heard[q] for q in range(self.n) if q != self.seat and q not in dropped]
        return now - max(others) if others else float("inf")

    def withholding(
        self, now: float, final: GameState, since: float, held: Callable[[], GameState]
    ) -> Iterator[int]:
        """The members to vote out now for withholding what the final phase (in it since
        ``since``) waits for, past ``phase_timeout`` (a nonce, a secret, a result: DESIGN.md
        §5.2 makes that a forfeit), and the ``held`` fold lacks too (:mod:`phase_waits
        <p2p_nertz.protocol.phase_waits>`; ``held`` gives it as it is when called), one at a
        time (the caller votes before asking for the next). Such a vote is not withdrawn when
        the member is heard, but once the held fold has the event (:meth:`withheld_relieved`);
        a member whose event is held is not waited for (:attr:`held_waits`)."""
        self.held_waits = frozenset()
        self.debtors.scan(self.stall, now - self.timers.phase_timeout / 2, now)
        blame_from = self.blame_from(since)
        if (
            final.phase not in WAITING_PHASES
            or blame_from is None
            or now < blame_from + self.timers.phase_timeout
        ):
            return
        for q in sorted(waits_for(final)):
            if q != self.seat and q not in self.voted and not _silent(self, q, now):
                if self.debtors.excuse(q):  # (it may wait on what another owes us)
                    continue
                awaited = Awaited.of(final, q)
                if awaited.held_in(held()):
                    self.held_waits |= {q}
                    continue
                self.proven_seats.add(q)
                self.share_votes.pop(q, None)  # (one vote a member: this one says why)
                self.phase_votes[q] = (now, awaited)
                yield q

    def withheld_shares(
        self, now: float, final: GameState, held: GameState, store: ShareStore | None = None
    ) -> Iterator[int]:
        """The members to vote out now for withholding their share (own, or partial for a
        member dropped) of a position the final fold turned up, or their answer to a complaint
        of their box, ``phase_timeout`` ago, every member heard and no debt settled meanwhile
        (:meth:`blame_from`; none blamed for another's debt, :class:`Debtors`: session 40), and
        that the ``held`` fold and our share ``store`` lack too (a shuffle game: docs/shuffle.md
        §10.4, §10.14, §6.3; the members left open its shares, §6.4), one at a time. Such a
        vote stands when the member is heard, until the held fold or the store has what it owed."""
        heard = self.blame_from(-math.inf)
        if heard is None or self.seat in final.dropped:
            return
        waits = self.share_waits
        for q in waits.late(now, final, held, self.timers.phase_timeout, heard, store=store):
            if _blamed(self, q, now):
                self.proven_seats.add(q)
                self.phase_votes.pop(q, None)  # (one vote a member: this one says why)
                self.share_votes[q] = (now, tuple(waits.items[q]))
                yield q

    def withheld_relieved(
        self, final: GameState, folds: Folds, store: ShareStore | None = None
    ) -> list[int]:
        """The members whose vote *withheld* of ours for a share or an answer
        (:meth:`withheld_shares`) or for the event of a phase (:meth:`withholding`) is
        withdrawn now (taken out of our votes: the caller signs the withdrawals), in seat
        order: the held fold (or for a share our ``store``) has every item it owed when we
        voted (:meth:`Owed.held_in
        <p2p_nertz.protocol.share_waits.Owed.held_in>`, :meth:`Awaited.held_in
        <p2p_nertz.protocol.phase_waits.Awaited.held_in>`), and the held votes have not
        dropped it (:meth:`withdraws`' rule).

        The item came, and our vote, which froze our announcements of its feed, held it back
        from finality: standing, it held every member's later events back too, each member's
        final fold then showed the others owing, and votes that capped each other dropped
        nobody (soak seed 518; a late key, docs/shuffle.md §10.13). As a stall vote is
        (:meth:`relieved`); a member that still owes another item past its time, held nowhere
        here, is voted out again."""
        shares, phases = self.share_votes, self.phase_votes
        if (not shares and not phases) or self.seat in final.dropped or final.phase is Phase.OVER:
            return []
        out = []
        held = folds.tentative
        owed: dict[int, Sequence[Owed | Awaited]] = {q: v[1] for q, v in shares.items()}
        owed.update((q, (awaited,)) for q, (_, awaited) in phases.items())
        for q, items in sorted(owed.items()):
            gone = q not in self.voted or q in final.dropped  # (it owes nothing; drop stands)
            if not gone and not (
                all(
                    item.held_in(held, store) if isinstance(item, Owed) else item.held_in(held)
                    for item in items
                )
                and q not in self.proof.forked_at  # (proven to fork since: the vote stands)
                and self._undecided(q, folds)
            ):
                continue
            shares.pop(q, None)
            phases.pop(q, None)
            if not gone:
                del self.voted[q]
                self.proven_seats.discard(q)
                out.append(q)
        return out

    def gone_for(self, seat: int, now: float) -> float:
        """How long ``seat`` has counted as gone: silent past ``drop_after``, talking while
        finality waits for it past ``phase_timeout`` (§9.2), or voted out *withheld* by us for
        the event of the final phase or a share it owes (since the vote). Negative: not gone,
        and how much longer before it is."""
        timers = self.timers
        # (Silent past drop_after while we listened, not while our own process or disk held
        # us: the silence vote's timer, through its seam, asked at now.)
        gone = now - self.silence_vote_at(seat, now)
        for votes in (self.share_votes, self.phase_votes):
            withheld = votes.get(seat)
            if withheld is not None:
                # Voted out for a share it owes, or for the event the final phase waits for
                # (two members: nobody can be dropped, so the one left may abandon; §9.3,
                # docs/shuffle.md §10.4): a member heard that never reveals holds the game.
                gone = max(gone, now - withheld[0])
        stall = self.stall.get(seat)
        if stall is not None and now < self._heard[seat] + timers.suspect_after:
            # (A member silent now is the silence timers' alone, as Author.liveness says: a
            # wait noted while it still talked does not count, even before the next scan drops
            # it.)
            gone = max(gone, now - stall[0] - timers.phase_timeout)
        return gone

    def stalls(
        self,
        now: float,
        final: GameState,
        tentative: Callable[[], GameState],
        feeds: Sequence[Sequence[Message]],
        finality: Finality,
    ) -> Iterator[int]:
        """The members to vote out now for withholding, one at a time (the caller votes before
        asking for the next: our vote is an event of ours, which the next one may owe).

        A member that beats is never suspected; if what it owes never comes, it would hold
        every peer's finality back forever. What it owes is what only it can give: its events
        up to the head it announced itself, and its announcements of holding the events held
        here (of feeds it has not voted out). A wait that sees no progress on what was owed when
        it began, while the member is heard, for ``phase_timeout``, is a vote *withheld*: it
        stands when the member beats again, until it gives what it owed (:meth:`relieved`).
        (Its events and cover come from it alone; any honest member sends them within a round
        trip, or fetches what it lacks from us.) ``tentative`` gives the held view as it is
        when called (our votes change it).
        """
        if self.seat in final.dropped or self.all_heard_since is None:
            self.stall.clear()  # (a member is silent: nobody is blamed for now, blame_from)
            return
        if final.phase is Phase.OVER:  # (only a claim on our own feed past its head)
            yield from _claims_at_end(self, now, feeds, finality.claimed)
            return
        timers, stall = self.timers, self.stall
        members = [q for q in range(self.n) if q not in final.dropped]
        for q in [q for q in stall if q in final.dropped]:
            del stall[q]  # out of the game: it owes nothing
        counts: list[int | None] | None = None  # (:meth:`_counts`, once a scan and a vote)
        lengths, owe_none = [len(f) for f in feeds], excused(final.dropped, self.proof.forked_at)
        for q in members:
            if q == self.seat:
                continue
            if _silent(self, q, now):
                stall.pop(q, None)  # silent, not talking: the silence timers apply
                continue
            owed_feed = max(finality.announced[q][1], finality.claimed[q][q])
            if owed_feed <= len(feeds[q]):
                owed_feed = 0
            if counts is None:
                view = tentative()
                counts = self._counts(members, feeds, view)
            owing = unexcused(q, view.roster, feeds, finality, _ours(self, final, now))
            held = _cover(finality.held_by[q], owing)
            due = _due(q, counts, view, held, owing)
            owed_cover = tuple(d if held[r] < d else 0 for r, d in enumerate(due))
            relay = owed_relays(q, finality.claimed[q], lengths, owe_none)
            owes = owed_feed > 0 or any(owed_cover) or any(relay)
            record = stall.get(q)
            if record is not None and not _progress(record, lengths, q, held, due, relay=relay):
                if now >= record[0] + timers.phase_timeout and q not in self.voted:
                    self.stall_votes[q] = record
                    yield q
                    counts = None  # (our vote changed what we count and the held view)
                continue
            if owes:
                stall[q] = (now, owed_feed, owed_cover, relay)
            else:
                stall.pop(q, None)

    def relieved(
        self,
        final: GameState,
        folds: Folds,
        feeds: Sequence[Sequence[Message]],
        finality: Finality,
        now: float = math.inf,
    ) -> list[int]:
        """The members whose vote *withheld* of ours (:meth:`stalls`) is withdrawn now (taken
        out of our votes: the caller signs the withdrawals), in seat order: each has given what
        it owed when we voted (its feed up to the head it had announced, its cover of what we
        held then), and the held votes have not dropped it (:meth:`withdraws`' rule). (``now``:
        the scan's time, as :meth:`stalls` is given it.)

        The member was heard all along; what it owed was late, not withheld: a member
        recovering its own feed (§9.6) announces nothing until it has, and a stall scan that
        blamed it so meanwhile left a vote that stood for good (forced lost-tail scan seed
        8067). Such a vote freezes our announcements of the member's feed, so none of its
        later events could be final anywhere while we are in, and caps its later votes (§9.2):
        with no majority to drop it, the game stalled. A member that withholds again is voted
        out again after another ``phase_timeout``, which its progress meanwhile bought.
        """
        if not self.stall_votes or self.seat in final.dropped:
            return []  # (none; or our votes count for nothing: Author.act unfroze them)
        members = [q for q in range(self.n) if q not in final.dropped]
        out = []
        counts: list[int | None] | None = None
        lengths, owe_none = [len(f) for f in feeds], excused(final.dropped, self.proof.forked_at)
        for q, record in sorted(self.stall_votes.items()):
            if q not in self.voted or q not in members or q in self.proof.forked_at:
                # (Proven to fork since: the vote stands, as one on proof would.)
                del self.stall_votes[q]
                continue
            if counts is None:
                view = folds.tentative
                counts = self._counts(members, feeds, view)
            owing = unexcused(q, view.roster, feeds, finality, _ours(self, final, now))
            held = _cover(finality.held_by[q], owing)
            due = _due(q, counts, view, held, owing)
            relay = owed_relays(q, finality.claimed[q], lengths, owe_none)
            if _progress(record, lengths, q, held, due, relay=relay) and self._undecided(q, folds):
                counts = None  # (a vote withdrawn: we count more of its feed)
                del self.stall_votes[q]
                del self.voted[q]
                self.proven_seats.discard(q)
                out.append(q)
        return out

    def _counts(
        self, members: list[int], feeds: Sequence[Sequence[Message]], view: GameState
    ) -> list[int | None]:
        """What of each feed a member must cover now, before what it voted itself
        (:func:`_due`): up to what we count of it (no more than our vote, nor a drop's cut in
        the held ``view``); ``None`` for a member's feed that counts no more. The same for
        every member: worked out once a scan, and again after a vote of ours (it changes
        both)."""
        voted, dropped = self.voted, view.dropped
        counts: list[int | None] = []
        for r in range(self.n):
            if r in members:
                count = len(feeds[r])
                counts.append(min(count, voted.get(r, count), dropped.get(r, count)))
            else:
                counts.append(None)
        return counts

    def take_back(self, frontier: Sequence[int], vote: Drop | None) -> None:
        """One of our own events taken back (from our log, or from the others in recovery):
        what it announced holding we announced (a vote of ours on a fork must count it:
        others may have made it final on our word, §9.4), and our ``vote`` in it stands."""
        announced = self.announced_held
        for q, h in enumerate(frontier):
            announced[q] = max(announced[q], h)
        if vote is None:
            return
        if vote.reason is DropReason.REJOIN:
            self.sponsored.add((vote.seat, vote.last_seq))
        elif vote.reason is not DropReason.WITHDRAW:
            self.voted[vote.seat] = vote.last_seq
            if vote.reason in _STANDING:
                self.proven_seats.add(vote.seat)  # not withdrawn when heard (§9.2)
            if vote.reason is DropReason.WITHHELD:
                self.withheld_back[vote.seat] = frontier  # (why: Author.recall)
        else:
            self.voted.pop(vote.seat, None)

    def fork_vote(
        self, seat: int, fork_seq: int, held: int, final_count: int, *, recovering: bool
    ) -> int | None:
        """What our vote against ``seat``, proven to have forked at ``fork_seq``, counts of its
        feed (``None``: no vote now; one recovering is deferred until it may sign).

        We count what we have already announced holding (others may have taken it as final:
        ``final_count`` is what is final of it here), and nothing past the fork that we have
        not; the vote names the version we count. It stands when the member is heard."""
        if seat in self.voted or seat == self.seat:
            return None
        if recovering:  # we may sign nothing yet: vote once recovered
            self.deferred_forks.append((seat, fork_seq))
            return None
        counted = max(fork_seq - 1, self.announced_held[seat], final_count)
        cut = min(held, counted)
        self.voted[seat] = cut
        self.proven_seats.add(seat)
        return cut

    def vote(self, seat: int, held: int, *, out: bool) -> int | None:
        """What our vote against ``seat`` for silence or withholding counts (all we hold, and
        our announcements freeze there); ``None``: no vote, for we are ``out`` ourselves.

        Not while we are out: our votes would not count, and the rejoin request unfreezes them
        at each step (soak seed 1216: a dropped member voted another out for withholding ten
        thousand times)."""
        if out:
            return None
        self.voted[seat] = held
        return held

    def readmit(self, seat: int, at: int, dropped: dict[int, int]) -> bool:
        """A member readmitted at ``at`` in the final fold: whether that is news. Then we
        announce its feed again and wait for it, as for any member (our vote against it and
        the fork we probed are history); the caller uncaps its feed."""
        if (seat, at) in self.readmissions or seat in dropped:
            return False
        self.readmissions.add((seat, at))
        self.voted.pop(seat, None)
        self.proven_seats.discard(seat)
        self.proof.unproven.pop(seat, None)
        return True


def recovered_withdrawals(membership: Membership, folds: Folds) -> list[int]:
    """The members heard while ``membership``'s peer recovered whose vote for silence of its
    is withdrawn now that it has (taken out of its votes: the caller signs the withdrawals), in
    seat order (:meth:`Membership.withdraws`' rule). Heard later only by a new message: a
    member whose link to us fails is heard by its relayed events alone, and those we fetched
    while we recovered; our vote, standing, would hold its later events back from finality
    everywhere, and the others vote out a voter that lets it stand (§9.2, *a vote for silence
    that never ends*)."""
    heard, membership.heard_recovering = membership.heard_recovering, set()
    return [q for q in sorted(heard) if membership.withdraws(q, folds, recovering=False)]


def _ours(m: Membership, final: GameState, now: float) -> Callable[[], frozenset[int]]:
    """The members ``m``'s peer waits for itself, asked where a vote *withheld* stands
    (:func:`~p2p_nertz.protocol.unjoined.unexcused`): our votes, the shares owed us past their
    time, the members the ``final`` phase waits for, and our stall records without progress
    for half a ``phase_timeout`` at ``now`` (a member's cover lags ours by a round trip all
    through play: a record that young is no debt, and counted it would restart our wait on
    the voter at every scan that caught one)."""
    since = now - m.timers.phase_timeout / 2
    return lambda: (
        frozenset(
            (*m.voted, *m.share_waits.items, *(q for q, r in m.stall.items() if r[0] <= since))
        )
        | waits_for(final)
    )


def _claims_at_end(
    m: Membership, now: float, feeds: Sequence[Sequence[Message]], claimed: Sequence[Sequence[int]]
) -> Iterator[int]:
    """:meth:`Membership.stalls` once our final fold is over: we sign nothing more, so what
    the others wait for from us is our word (beats, acks) alone, except where a member
    announces holding our own feed past its head. That caps our term at every peer while it
    stands (§7.1), and nobody but the claimant can give those events; the member claimed is
    the one sure to be owed them, and its vote may be the one the majority lacks (two liars at
    five players, seed 3: the claimed member over, the two other honest members short of a
    third vote, the table waiting for good). So we vote such a member out *withheld* after
    ``phase_timeout``, as before the end (docs/protocol.md §9.2, session 39); nothing else
    is judged."""
    stall, seat = m.stall, m.seat
    claims = _claims_past_head(m, feeds, claimed)
    for q in range(m.n):
        target = claims.get(q, 0) if not _silent(m, q, now) else 0
        record = stall.get(q)
        if not target:
            stall.pop(q, None)
        elif record is None or record[1] or any(record[2]) or record[3][seat] < target:
            relay = tuple(target if r == seat else 0 for r in range(m.n))
            stall[q] = (now, 0, (0,) * m.n, relay)  # (a new wait, or one of before the end)
        elif now >= record[0] + m.timers.phase_timeout and q not in m.voted:
            m.stall_votes[q] = record
            yield q


def _claims_past_head(
    m: Membership, feeds: Sequence[Sequence[Message]], claimed: Sequence[Sequence[int]]
) -> dict[int, int]:
    """The other members that announce holding our own feed past its head: seat -> the seq
    claimed (what :func:`_claims_at_end` judges, and :func:`judging_at_end` waits on)."""
    seat, head = m.seat, len(feeds[m.seat])
    return {q: claimed[q][seat] for q in range(m.n) if q != seat and claimed[q][seat] > head}


def judging_at_end(
    m: Membership,
    final: GameState,
    feeds: Sequence[Sequence[Message]],
    claimed: Sequence[Sequence[int]],
) -> bool:
    """Whether ``m``'s peer, its final fold over, still owes the table a judgement: a member
    not out claims our own feed past its head and we have not voted it out *withheld* yet
    (:func:`_claims_at_end`: the vote may be the one the majority lacks, §9.2, session 39).
    ``False`` before the end, once we are out, and once every such vote is cast. A silence
    (the claimant's, or another member's) only delays the vote (nothing is judged then,
    :meth:`Membership.stalls`): the duty stands. The node stays for it (``runtime/node.py``'s
    ending, session 40); the vote itself it then waits for the others to hold, as for any
    last event of ours."""
    if final.phase is not Phase.OVER or m.seat in final.dropped:
        return False
    claims = _claims_past_head(m, feeds, claimed)
    return any(q not in m.voted and q not in final.dropped for q in claims)


def _blamed(m: Membership, q: int, now: float) -> bool:
    """Whether member ``q`` may be voted out *withheld* for a share it owes now: another
    member, not voted out by us, heard, and no other member owing us events meanwhile (its
    own fold may wait on them: :class:`Debtors`, as for the phase's event)."""
    return q != m.seat and q not in m.voted and not _silent(m, q, now) and not m.debtors.excuse(q)


def _silent(m: Membership, seat: int, now: float) -> bool:
    """Whether ``seat`` is silent to ``m``'s peer now (suspected, or unheard for
    ``suspect_after``): the silence timers' alone, never blamed for withholding. (Only a
    member the held votes drop can be silent while ``all_heard_since`` is set.)"""
    return seat in m.suspected or now >= m.heard[seat] + m.timers.suspect_after


def _silent_in(m: Membership, now: float, dropped: Dropped, held_dropped: Held) -> bool:
    """Whether a member ``m``'s peer counts as still in is silent now (unheard for
    ``suspect_after``): one not in ``dropped`` (the final fold's), nor in ``held_dropped``
    (the held fold's, read only if one is silent).

    A member the held votes drop (a majority of the standing votes, decided) is out here as
    it is for finality once decided (§7.4, session 37). Its drop is final only once the
    stable time passes the vote that decided it, and a member whose own term holds that
    time back (a frontier naming an event nobody signed) was never blamed while the member
    dropped stayed silent: a member crashed for good, the table waiting for good
    (docs/protocol.md §9.2, *nobody is blamed while a member is silent*)."""
    heard, seat, limit = m.heard, m.seat, m.timers.suspect_after
    silent = [q for q in range(m.n) if q != seat and q not in dropped and now >= heard[q] + limit]
    if silent and held_dropped is not None:
        out = held_dropped()
        return any(q not in out for q in silent)
    return bool(silent)


def _least_other(heard: list[float], seat: int) -> float:
    """The earliest of ``heard`` but ``seat``'s (inf: no other member)."""
    others = heard[:seat] + heard[seat + 1 :]
    return min(others) if others else math.inf


def _announced(
    feeds: Sequence[Sequence[object]], voted: dict[int, int], dropped: dict[int, int], seat: int
) -> list[int]:
    """What :meth:`Membership.frontier` announces holding of each feed."""
    held = [len(f) for f in feeds]
    for q, seq in voted.items():
        # Once the drop is final its cut counts, whatever our vote said: a claim on a card
        # the member played between our vote and the cut must show it saw that card
        # (soak seed 2449: every claim on it lost, forever).
        cut = dropped.get(q)
        held[q] = min(held[q], seq if cut is None else max(seq, cut))
    # None of a member's events past the cut our final fold dropped it at counts here, ever
    # (§9.2): we announce none of them, as a voter announces no more than its vote.
    # Announced, they let a peer whose fold keeps the member in make them final, and the
    # drops resting on them, in the past of what we made final; and they took back, for
    # whoever held the announcement, a cut Unheld offered. Two groups of honest peers made
    # different drops final (--late-withdrawals seeds 18, 54 and 78 at three players;
    # docs/protocol.md §13, two drops each resting on a cap lifted after it).
    return named_within_cuts(held, dropped, seat)


def _due(
    q: int,
    counts: list[int | None],
    view: GameState,
    held: Sequence[int],
    owing: dict[int, int],
) -> list[int]:
    """What of each feed member ``q`` must cover now (``counts``: :meth:`Membership._counts`),
    unless ``q`` voted that member out in the held ``view`` withheld or on proof (it then
    announces no more than its vote, whether that vote counts or is capped: §9.2), or for
    silence where the held view drops the member. Worked out afresh at each scan: a target set
    earlier on a feed that stopped counting (a member dropped, or voted out by ``q``) is met.
    (``owing``: ``q``'s votes standing in ``view`` that excuse nothing,
    :func:`~p2p_nertz.protocol.unjoined.unexcused`: for silence, or *withheld* where we do
    not join them.)

    A vote of ``q``'s for silence on a member still in excuses nothing (§9.2, *a vote for
    silence that never ends*): we hold that member's events past the vote's count, so it
    spoke, and an honest ``q`` fetches them from whoever announces them (us among them),
    hears the member so and withdraws within a round trip; its cover then rises. A voter
    that lets it stand holds those events back from finality everywhere, for good. So does a
    vote *withheld* that waits for nothing we wait for (§9.2, *a vote withheld that never
    ends*: :mod:`~p2p_nertz.protocol.unjoined`)."""
    # (A capped vote of q's freezes q's announcements all the same: soak seed 8067, where the
    # cheater's vote, never withdrawn on its chain held here, capped q's proof vote on it, and
    # we voted q out for not covering more.)
    roster = view.roster
    return [
        0
        if count is None
        or r == q
        or (held[r] < count and roster.stands(q, r) and (r not in owing or r in roster.dropped))
        else count
        for r, count in enumerate(counts)
    ]


def _cover(held: Sequence[int], owing: dict[int, int]) -> Sequence[int]:
    """What a member is known to hold of each feed (``held``: ``Finality.held_by``), its word
    on a member whose cover its standing vote does not excuse (``owing``: a vote for silence,
    or *withheld* where we do not join it) taken no further than the vote's count (§9.2, *the
    freeze on the coverage term*): a voter that breaks its freeze does not pay its debt by
    announcing what its vote still holds back everywhere."""
    if not owing:
        return held
    return tuple(min(h, owing.get(r, h)) for r, h in enumerate(held))


def _progress(
    record: Stall,
    lengths: Sequence[int],
    q: int,
    held: Sequence[int],
    due: list[int],
    *,
    relay: Sequence[int],
) -> bool:
    """Whether member ``q`` has given what a stall ``record`` says it owed: its feed held here
    up to the target (``lengths``: how much of each feed we hold), its cover (``held``) up to
    each target, or to what it owes of that feed now (``due``), whichever is less, and each
    third member's feed it announced holding up to the target, unless it owes none of it now
    (``relay``: :func:`~p2p_nertz.protocol.debts.owed_relays`; a feed out of the game or
    proven to fork since)."""
    _, feed_target, cover_target, relay_target = record
    return (
        lengths[q] >= feed_target
        and all(h >= min(c, d) for h, c, d in zip(held, cover_target, due, strict=True))
        and all(t <= n or not r for t, n, r in zip(relay_target, lengths, relay, strict=True))
    )


def waits_for(final: GameState) -> frozenset[int]:
    """The seats the final phase waits for, each for itself: :meth:`GameState.waiting`, but in
    a shuffle game's deal only the members whose next stage's input is in (a member waiting
    for another's stage withholds nothing: docs/shuffle.md §4.3)."""
    waiting = final.waiting()
    deck = final.round.deck
    if final.phase is not Phase.DEAL or deck is None:
        return waiting
    return waiting & {deck.members[i] for i in deck.stages_due()}


#: Our votes that stand when their member is heard (§9.2): on proof, or *withheld*.
_STANDING = frozenset({DropReason.EQUIVOCATION, DropReason.WITHHELD, DropReason.FLAPPING})


def heard_now(m: Membership, seat: int, now: float) -> bool:
    """Whether ``seat`` is heard by ``m``'s peer now (not silent, :func:`_silent`): a member
    whose wait is not the silence timers' (a wait on what it owes, protocol/unmet.py)."""
    return not _silent(m, seat, now)


def announces(
    membership: Membership, feeds: Sequence[Sequence[object]], folds: Folds, seat: int
) -> bool:
    """Whether the frontier we sign next names the last event held of ``seat``'s feed (not
    past our vote on it, nor past the cut of its drop in our final fold:
    :meth:`Membership.frontier`). One it does not name moves our clock only as a beat does
    (``Outbox.take_event``, §5.3)."""
    held = _announced(feeds, membership.voted, folds.final.dropped, membership.seat)
    return held[seat] >= len(feeds[seat])
