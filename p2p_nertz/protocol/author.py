"""Our own feed: what this member signs, and when (votes, phase events, recovery wants).

Theory of operation
-------------------
Every event of ours is signed here (:meth:`Author.emit`): the :class:`~.outbox.Outbox` signs,
logs and queues it, and it is delivered to us at once, as any member's
(:meth:`Delivery.deliver`), so that our own feed, finality and folds see it like the others'.
What calls for an event of ours is decided elsewhere and carried out here, in the order it
comes: a vote on a proof (:meth:`Membership.fork_vote`), on silence or withholding
(:meth:`Membership.vote`, :meth:`Membership.silence_due`, :meth:`Membership.withholding`,
:meth:`Membership.stalls`), a readmission (:meth:`Duties.sponsorships`), the events the final
fold's phase calls for (:class:`~.duties.Duties`). Where acting on one answer changes the next
(our vote is an event the next member's wait may owe), the answers are taken one at a time.

While our log's lost end is recovered from the others (:class:`~.recovery.Recovery`, owned
here) we sign nothing: it asks for our own events (:meth:`Author.recovery_want`) and says when
it is over (:meth:`Author.recovered`). Nothing here calls back into the peer; the receive path
(:class:`~.delivery.Delivery`) and the chains (:class:`~.chains.Chains`) are below it.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

from p2p_nertz.deck.wire import DeckAnswer, DeckComplain
from p2p_nertz.protocol import flaps
from p2p_nertz.protocol.bodies import (
    VOTE_WINDOW,
    DeckEvent,
    Drop,
    DropReason,
    EventBody,
    Join,
    Leave,
)
from p2p_nertz.protocol.deadlines import earliest
from p2p_nertz.protocol.delivery import Delivery
from p2p_nertz.protocol.duties import Duties
from p2p_nertz.protocol.effects import Send, Suspected
from p2p_nertz.protocol.feeds import Source, taken_past
from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.protocol.membership import WAITING_PHASES, recovered_withdrawals
from p2p_nertz.protocol.phase_waits import Awaited
from p2p_nertz.protocol.reach import Reach
from p2p_nertz.protocol.recovery import Doubt, Recovery
from p2p_nertz.protocol.share_waits import ShareWaits
from p2p_nertz.protocol.state import GameState, Phase

__all__ = ["Author", "Timers"]


class Timers(Protocol):
    """What this part reads of the peer's configuration (``PeerConfig``), when it reads it."""

    @property
    def beat_interval(self) -> float: ...
    @property
    def clock_reserve(self) -> int: ...
    @property
    def max_want(self) -> int: ...
    @property
    def rejoin(self) -> bool: ...
    @property
    def drop_after(self) -> float: ...
    @property
    def suspect_after(self) -> float: ...
    @property
    def fresh(self) -> bool: ...


class Author:
    """What one member signs, and when (see the module docstring).

    Args:
        seat: our own seat.
        peer_ids: each seat's member.
        config: the peer's timers and limits (read when used: a peer's may be replaced).
        delivery: the receive path, which delivers our events to us too (and, below it, the
            chains, feeds, finality, membership, folds and outbox it works over).
        duties: the phase events of ours, done and due.
    """

    def __init__(
        self,
        seat: int,
        peer_ids: tuple[PeerId, ...],
        *,
        now: float,
        config: Timers,
        delivery: Delivery,
        duties: Duties,
    ) -> None:
        self.seat = seat
        self.peer_ids = peer_ids
        self.config = config
        self.delivery = delivery
        self.chains = chains = delivery.chains
        self.store = chains.store
        self.feeds = chains.feeds
        self.finality = chains.finality
        self.membership = chains.membership
        self.outbox = chains.outbox
        self.duties = duties
        # Recovery (restore with ``recover``): our log may lack events we signed and sent;
        # while it lasts we sign nothing (protocol/recovery.py).
        self.recovery: Recovery | None = None
        # A member's word that it holds more of our feed than we signed (protocol/recovery.py,
        # Doubt): until it is decided (``doubt_until``, or our event past our head arrives:
        # ``elsewhere``, then we stop for good), we sign nothing and send no beat.
        self.doubt = Doubt(seat)
        self.doubt_until: float | None = None
        self.elsewhere: int | None = None
        self.leave_due = False  # a leave asked while held back (signed once released)
        # New, or restored from our log (a copy of which may be resumed elsewhere), no member
        # has told us yet what it holds of our feed (WordsOnUs.told): our key may have signed
        # past our head elsewhere. Until one has, we sign nothing past it, and send no beat but
        # a new peer's first (the same bytes wherever our key starts): wants instead (§9.6, *a
        # second machine that hears nobody*, *two copies resumed*). Not alone at the table, nor
        # a new process that sat at the lobby that made the game (``PeerConfig.fresh``).
        self.unheard = len(peer_ids) > 1 and not config.fresh
        self.forger = False  # (a simulated liar that forged its own feed: no doubt, no stop)
        self.emit, self.liveness = self.emit_honest, self.liveness_honest  # (liars': Outbox's)
        self.now = now  # the time of the latest input (what a recovery waits for depends on it)
        # The phase timer: the final fold's phase, and when it entered it (at an input's end).
        self.phase: tuple[Phase, int] = (Phase.JOINING, 0)
        self.phase_since = now
        self.reach = Reach()  # (the members out of reach, said once: protocol/reach.py)

    @property
    def left(self) -> bool:
        """Whether we signed our ``leave``: we then sign nothing more. Our events past it count
        nowhere (the cut of a leave is its own seq, §9.3), and a node that leaves waits for the
        others to hold its leave as the last event of its feed (issue 13 §2)."""
        return self.duties.left

    @property
    def final(self) -> GameState:
        """The final fold (the chains' folds: a peer may swap them before it starts)."""
        return self.chains.folds.final

    # -- signing ------------------------------------------------------------------------------
    def frontier(self) -> tuple[int, ...]:
        """What we announce holding (:meth:`Membership.frontier`)."""
        return self.membership.frontier(self.feeds, self.final.dropped)

    def sign(self, body: EventBody, now: float | None) -> None:
        """Sign one of our events with the frontier we announce now (:meth:`emit`)."""
        self.emit(dataclasses.replace(body, frontier=self.frontier()), now)

    def emit_honest(self, body: EventBody, now: float | None) -> None:
        """Sign one of our events, log it, send it, and deliver it to ourselves (our own
        turn-up shares go first in a ``deck_reveal`` beat: :meth:`PeerShares.reveal`)."""
        self.chains.shares.reveal(self.outbox, self.chains.folds, body)
        message, body = self.outbox.sign_event(self.feeds, self.seat, body, now)
        self.duties.mark_done(message.kind, body)
        self.delivery.deliver(self.seat, message, body, now or 0.0, source=Source.LOCAL)

    # -- votes (decided by Membership; signed here) --------------------------------------------
    def vote_fork(self, seat: int, fork_seq: int, now: float | None) -> None:
        """Vote out an author proven to have forked at ``fork_seq`` (:meth:`Membership.fork_vote`
        says what the vote counts), carrying the proof (none we can carry: no vote, §9.4)."""
        proof = self.membership.proof.carried(seat, fork_seq)
        held, final = len(self.feeds[seat]), self.finality.final_count(seat)
        if self.left or not proof or self.membership.proof.parts_below(seat, fork_seq, held):
            return
        recovering = self.recovery is not None or self.held_back
        cut = self.membership.fork_vote(seat, fork_seq, held, final, recovering=recovering)
        if cut is not None:
            ids = self.store.ids(seat, cut, VOTE_WINDOW)
            took, took_id = taken_past(self.feeds[seat], cut)  # (what our clock took: §5.3)
            body = Drop((), seat, cut, DropReason.EQUIVOCATION, fork_seq, ids, proof=proof)
            self.sign(dataclasses.replace(body, took_seq=took, took_id=took_id), now)

    def sign_vote(
        self, seat: int, last: int, reason: DropReason, now: float | None, fork_seq: int = 0
    ) -> None:
        """Sign a vote on ``seat`` counting its feed up to ``last``, quoting our copies of the
        ids of its last events up to there (:meth:`Feeds.ids`)."""
        if self.left:
            return
        ids = self.store.ids(seat, last, VOTE_WINDOW)
        self.sign(Drop((), seat, last, reason, fork_seq, ids), now)

    def vote(self, seat: int, reason: DropReason, now: float | None) -> None:
        """Vote ``seat`` out (silent, withheld) counting all we hold (:meth:`Membership.vote`)."""
        if self.left:
            return
        out = self.seat in self.final.dropped
        last = self.membership.vote(seat, len(self.feeds[seat]), out=out)
        if last is not None:
            self.sign_vote(seat, last, reason, now)

    def relay_debts(self) -> None:
        """With each vote *withheld* of ours on a member for its own feed (``Membership.
        stall_votes``), send everyone the signed beat that announced the head it owes (``Debts``),
        at each stall scan while the vote stands (one lost leaves a member that does not owe-track
        the head judging our vote): a head announced to us alone would leave our vote alone,
        freezing our announcements of its feed for good (docs/protocol.md §9.2). So too the
        beats that announced holding a third member's feed past ours, where that is what it
        owed (§9.2, *a claim on a silent member's feed*)."""
        debts = self.delivery.debts
        self.outbox.effects.extend(debts.relayed(self.membership.stall_votes, self.feeds))

    def vote_flaps(self, now: float | None) -> None:
        """Vote out, reason *flapping*, each member whose flap fault our final fold holds
        (:func:`flaps.due`), naming the withdrawal that passed the limit; the vote stands when
        the member is heard, as one on proof does (docs/protocol.md §9.4)."""
        final, membership = self.final, self.membership
        found = final.flaps
        if self.left or not found.faults:
            return
        for q in flaps.due(found, self.seat, final.spec.seats, final.dropped, membership.voted):
            last = membership.vote(q, len(self.feeds[q]), out=False)
            assert last is not None
            membership.proven_seats.add(q)
            self.sign_vote(q, last, DropReason.FLAPPING, now, found.faults[q])

    # -- acting on the final state ------------------------------------------------------------
    def act(self, ready_through: int | None) -> None:
        """Sign the events the final state now calls for (:class:`Duties`); ``ready_through``:
        the last round whose ``ready`` we sign by ourselves (``None``: every round)."""
        if self.recovery is not None or self.held_back:
            return  # nothing is signed before our own feed is known (recovered, then act)
        if self.left:
            return  # (a phase the final fold enters after our leave asks nothing of us)
        final = self.final
        duties = self.duties
        own = self.feeds[self.seat]
        if final.phase is Phase.OVER and not self.delivery.words.relayed:
            # The words that made our end final, to every member still in (last_words).
            members = [q for q in range(len(self.feeds)) if q not in final.dropped]
            self.outbox.effects.extend(
                self.delivery.words.relay(self.seat, members, self.peer_ids, self.feeds)
            )
        author = duties.abandon_to_answer(final, own)
        if author is not None:
            self.sign_vote(author, len(self.feeds[author]), DropReason.ABANDON, None)
        if self.seat in final.dropped:
            # Our own votes no longer count (we were out): our announcements unfreeze.
            voted = self.membership.voted
            for q in [q for q in voted if q not in final.dropped]:
                del voted[q]
            join = duties.rejoin_request(final, own, self.config.rejoin)
            if join is not None:
                self.sign(join, None)
            return
        # A shuffle game's shares are owed from the tentative fold too (docs/shuffle.md §10.4:
        # a turn-up costs one round trip, not a finality); a commit game never refolds here.
        tentative = self.chains.folds.tentative if final.round.deck is not None else None
        if tentative is not None:
            # Our shares of a move's turn-up: beats alone, before anything we sign (§10.14).
            for beat in duties.reveals(final, tentative):
                self.chains.shares.send(self.outbox, self.chains.folds, beat)
            # Making them noted each in the deck's memo of shares made, which the fold holds:
            # the view is taken again, not read across that change (tests/test_folds_shared.py).
            tentative = self.chains.folds.tentative
        body = duties.phase_event(final, ready_through, tentative)
        while body is not None:
            self.sign(body, None)
            if not _first(body):
                break
            # A complaint or an answer of ours: the next one, or what follows them, in the
            # same act. The answers go before anything else we sign (a move, a vote: the
            # audit reads a move whose past proves our final fold held a complaint of our
            # box unanswered as the answer withheld, docs/shuffle.md §6.3).
            body = duties.phase_event(final, ready_through, tentative)

    def next_deadline(self) -> float:
        """When the timers next have something to do: a beat or an ack of ours, a gap to ask
        for, a wait or a silence to act on (:func:`~p2p_nertz.protocol.deadlines.deadlines`).
        Asked after every input: membership's timers are read only where one may come before
        ours (:func:`~p2p_nertz.protocol.deadlines.earliest`)."""
        outbox = self.outbox
        least = outbox.last_sent + self.config.beat_interval
        for due, _, _ in self.store.gaps.values():
            least = min(least, due)
        if self.recovery is not None:  # only our wants and gap repair run (no votes, no acks)
            return least
        if self.doubt_until is not None:  # (as recovering, until the doubt ends)
            return min(least, self.doubt_until)
        if self.unheard:  # (our wants ask for our own events, as doubting: until a word)
            return least
        if outbox.ack_due is not None and outbox.ack_due < least:
            least = outbox.ack_due
        if not self.left:  # we vote no more: no wait of membership's is ours (a due one spun)
            least = earliest(self.membership, self.final, self.phase_since, least)
        return least

    def liveness_honest(self, now: float) -> None:
        """At the end of an input: note when the final fold's phase began, then readmit,
        probe, suspect and vote as the timers call for (nothing while recovering, §9.6)."""
        final = self.final
        phase = (final.phase, final.round.number)
        if phase != self.phase:
            self.phase = phase
            self.phase_since = now
        since = self.phase_since
        membership = self.membership
        if self.recovery is not None or self.held_back:
            return  # no vote, no readmission before our own feed is known (§9.6)
        words = self.delivery.words
        if words.held:  # (votes for silence come before we had listened long: relays.py)
            self.outbox.effects.extend(words.reconsider(now, self.feeds))
        if membership.rejoin_requests:  # (readmit those whose requests we hold: Duties)
            for q, request in self.duties.sponsorships(
                final, membership.rejoin_requests, membership.sponsored, membership.proof.forked_at
            ):
                self.sign_vote(q, request, DropReason.REJOIN, now)
        interval = self.config.beat_interval
        for q, fork_seq in membership.proof.probes_due(
            now, final.dropped, interval, membership.voted, membership.rejoin_requests
        ):
            # A fork we cannot prove: ask everyone for that seq (one holding another sends it).
            self.outbox.effects.append(Send(self.delivery.want_wire(q, fork_seq, fork_seq)))
        for q, fork_seq in membership.proof.parted_votes() if membership.proof.parting else ():
            self.vote_fork(q, fork_seq, now)  # (the version below never came: Proofs.parts_below)
        folds = self.chains.folds
        membership.track_silence(now, final.dropped, lambda: folds.tentative.dropped)
        # Connected but withholding what the round waits for: a majority's votes drop the seat.
        # (A commit game refolds here only for a vote, or a vote to withdraw: rare.)
        for q in membership.withholding(now, final, since, lambda: folds.tentative):
            self.vote(q, DropReason.WITHHELD, now)
        self.vote_flaps(now)
        if final.round.deck is not None:  # (a commit game owes no shares: no refold here)
            store = self.chains.shares.store  # (a move's turn-up shares: beats, §10.14)
            for q in membership.withheld_shares(now, final, folds.tentative, store):
                self.vote(q, DropReason.WITHHELD, now)
        if membership.withheld_back:
            self.recall(now)
        for q in membership.withheld_relieved(final, folds, self.chains.shares.store):
            # What it owed is held here: our vote held it back from finality (§9.2).
            if not self.left:
                self.emit(Drop(self.frontier(), q, 0, DropReason.WITHDRAW), now)
        if now >= membership.stall_scan_at:
            membership.stall_scan_at = now + interval
            # The members that keep talking while finality waits for them (§9.2): a vote
            # *withheld* stands when it beats again.
            for q in membership.relieved(final, folds, self.feeds, self.finality, now):
                # It gave what it owed: late, not withheld (§9.2). Withdrawn as for silence.
                if not self.left:
                    self.emit(Drop(self.frontier(), q, 0, DropReason.WITHDRAW), now)
            view: list[GameState] = []  # (the held view, made once a scan: n² reads)

            def held() -> GameState:
                if not view:
                    view.append(self.chains.held_drops())
                return view[0]

            for q in membership.stalls(now, final, held, self.feeds, self.finality):
                view.clear()  # (our vote changes it)
                membership.proven_seats.add(q)  # not withdrawn when heard: it is heard
                self.vote(q, DropReason.WITHHELD, now)
            self.relay_debts()
            for due in self.duties.behalf.due(now, self.seat, folds, membership.timers, self.left):
                self.sign(due, now)  # a pass on the behalf of a seat that plays nothing (§8.7)
        for q, vote in membership.silence_due(now, final.dropped):
            if vote:
                self.vote(q, DropReason.SILENT, now)
            else:
                self.outbox.effects.append(Suspected(q, True))
        if final.phase is not Phase.OVER and not self.left:  # (a split with no majority here)
            ears = membership.listening
            listened = now >= ears.since + ears.gap  # (not just woken: protocol/reach.py)
            notice = self.reach.check(
                final.roster, self.seat, membership.suspected, listened=listened
            )
            if notice is not None:
                self.outbox.effects.append(notice)

    def recall(self, now: float) -> None:
        """Why each vote *withheld* of ours read back from our log was cast (its record died
        with the process): third members' events it claimed past our vote's frontier (``debt``
        notes, ``Debts.stall``: session 36; first, as a restored final fold lags and may wait
        for the member's phase event); else, once the final fold says, the event its phase
        waits for, or what it owes of its deal that neither that fold nor our share store holds
        (docs/shuffle.md §10.13, §10.14). Withdrawn once held here, as before the restart
        (``Membership.relieved``, ``withheld_relieved``); any other (its head, cover) stands."""
        membership = self.membership
        final = self.final
        waiting = final.waiting() if final.phase in WAITING_PHASES else frozenset()
        shares: ShareWaits | None = None
        for q in sorted(membership.withheld_back):
            records = (membership.phase_votes, membership.share_votes, membership.stall_votes)
            if q not in membership.voted or any(q in r for r in records):
                pass  # (withdrawn since, or voted again by this process)
            elif stall := self.delivery.debts.stall(q, membership.withheld_back[q], now):
                membership.stall_votes[q] = stall  # (a claim: withdrawn once it is paid)
            elif q in waiting:
                membership.phase_votes[q] = (now, Awaited.of(final, q))
            else:
                if shares is None:
                    shares = ShareWaits()
                    if final.round.deck is not None:  # (all it owes now, as if late)
                        store = self.chains.shares.store  # (held too: §10.14)
                        shares.late(now, final, final, 0.0, now, store=store)
                if q not in shares.items:
                    continue  # (not yet: the final fold catches up)
                membership.share_votes[q] = (now, tuple(shares.items[q]))
            del membership.withheld_back[q]

    # -- our feed claimed past our head (recovery.Doubt) ----------------------------------------
    @property
    def held_back(self) -> bool:
        """Whether we sign nothing now: a doubt on our own feed is open, or our key signed
        past our head elsewhere (:class:`~.recovery.Doubt`)."""
        return self.doubt_until is not None or self.elsewhere is not None or self.unheard

    def doubts(self, now: float, ready_through: int | None = None) -> bool:
        """Decide at an input's end whether a doubt on our own feed holds us back (not while
        recovering: that waits for our feed anyway), or no member's word on it has come since
        we started (:attr:`unheard`); whether one does; as it ends, what fell due is signed."""
        told = self.unheard and self.delivery.on_us.told
        if told:
            self.unheard = False
        if self.recovery is not None or self.elsewhere is not None or self.forger:
            self.doubt_until = None
            self.membership.holding = self.elsewhere is not None
            return self.elsewhere is not None
        dropped = self.final.dropped
        members = [q for q in range(len(self.feeds)) if q not in dropped]
        was = self.doubt_until
        self.doubt_until = self.doubt.holds(
            self.finality.claimed,
            self.delivery.on_us.said,
            len(self.feeds[self.seat]),
            members,
            now=now,
            wait=self.config.suspect_after,
        )
        held = self.membership.holding = self.doubt_until is not None or self.unheard
        if held:
            return True
        if was is not None or told:
            self.released(now)
            self.act(ready_through)  # (the phase events too: docs/protocol.md §9.6, Doubt)
        return False

    def released(self, now: float) -> None:
        """Sign what waited while a doubt on our own feed (or no word on it yet) held us back,
        as a recovery's end does (§9.6): the leave asked meanwhile; the votes on proofs of a
        fork found meanwhile (:meth:`Membership.fork_vote`); the withdrawals of our votes for
        silence on members heard meanwhile, if still due (:func:`recovered_withdrawals`: our
        vote standing would hold their later events back from finality, §9.2)."""
        if self.leave_due and not self.left and self.seat not in self.final.dropped:
            self.sign(Leave(()), now)
        self.leave_due = False
        deferred = self.membership.deferred_forks
        for seat, fork_seq in list(deferred):
            self.vote_fork(seat, fork_seq, now)
        deferred.clear()
        for q in recovered_withdrawals(self.membership, self.chains.folds):
            if not self.left:
                self.emit(Drop(self.frontier(), q, 0, DropReason.WITHDRAW), now)

    def leave_later(self) -> bool:
        """Whether a leave asked now waits, held back (:attr:`held_back`): it is signed once
        that ends with our feed ours (:meth:`released`), never if our key signs elsewhere."""
        self.leave_due = self.held_back
        return self.leave_due

    def doubt_want(self, now: float) -> None:
        """Ask every member for our own events past our head (a want announces no head: it
        keeps us heard, as a recovery's do)."""
        self.outbox.effects.append(Send(own_want(self)))
        self.outbox.spoke(now)

    # -- recovery -------------------------------------------------------------------------------
    def awaiting(self, now: float | None = None) -> tuple[int, ...]:
        """The seats a recovering peer still waits for at ``now`` (by default the latest
        input's time): :meth:`Recovery.awaiting`, :meth:`Recovery.awaiting_outside`; empty
        when not recovering."""
        recovery = self.recovery
        if recovery is None:
            return ()
        tentative = self.chains.folds.tentative
        members = [q for q in range(len(self.feeds)) if q not in tentative.dropped]
        membership = self.membership
        cheaters = {q for q, _ in membership.proof.proven} | set(membership.proof.forked_at)
        own_held = len(self.feeds[self.seat])
        inside = recovery.awaiting(
            members,
            cheaters,
            own_held,
            self.finality.claimed,
            tentative.votes,
            frozen=self.frozen_on_us(members),
        )
        outside = [q for q in range(len(self.feeds)) if q not in members or q in cheaters]
        out = recovery.awaiting_outside(
            outside,
            own_held,
            membership.heard,
            self.now if now is None else now,
            self.config.drop_after,
        )
        return tuple(sorted({*inside, *out}))

    def frozen_on_us(self, members: list[int]) -> list[int]:
        """The members whose latest announcement may hold back events of our feed they hold
        (:meth:`Recovery.frozen`): they cannot vouch for what they hold of it."""
        recovery = self.recovery
        assert recovery is not None
        seat = self.seat
        tentative = self.chains.folds.tentative
        voters = {voter for voter, _ in tentative.votes.get(seat, ())}
        cut = max((lo for lo, _ in tentative.gaps.get(seat, ())), default=0)
        own_held = len(self.feeds[seat])
        return [
            r
            for r in members
            if r != seat and recovery.frozen(r, self.feeds[r], r in voters, cut, own_held)
        ]

    def hopeless(self, now: float) -> bool:
        """Whether a recovering peer cannot finish (:meth:`Recovery.hopeless`)."""
        recovery = self.recovery
        if recovery is None:
            return False
        return recovery.hopeless(
            self.awaiting(now), self.membership.heard, now, self.config.drop_after
        )

    def recovery_want(self, now: float) -> None:
        """Ask every member for our own events past what we hold (a want is signed but names
        no head: it announces nothing of our feed, and keeps us heard)."""
        recovery = self.recovery
        assert recovery is not None
        outbox = self.outbox
        if not recovery.clock:
            # The first one is timed far above anything we sent before (our reservation):
            # another member's clock passes it by taking it in (§5.3), or only after some
            # thousand messages of the table, long after what we sent before the crash arrived.
            outbox.clock = max(outbox.clock, outbox.reserved) + self.config.clock_reserve
        frontier = self.frontier() if recovery.recovering_too() else ()
        held = [len(feed) for feed in self.feeds]
        asks = recovery.asks(held[self.seat], frontier, held, self.config.max_want)
        for to, seat, first, last in asks:
            wire = self.delivery.want_wire(seat, first, last)
            if not recovery.clock:
                recovery.clock = outbox.clock  # (our first want's time)
            outbox.effects.append(Send(wire, None if to is None else self.peer_ids[to]))
        outbox.spoke(now)

    def recovered(self, now: float) -> bool:
        """End the recovery once nothing the others hold of our feed is missing here: the
        :class:`Recovered` effect, the votes on proofs found meanwhile, our join if the log
        lost even that. Whether it ended (the caller then acts and beats)."""
        own = self.feeds[self.seat]
        self.now = now
        if self.awaiting() or self.store.waiting(self.seat):
            return False
        assert self.recovery is not None
        votes = self.chains.folds.tentative.votes.get(self.seat, ())
        done = self.recovery.finished(len(own), self.finality.claimed, votes)
        if done is None:
            return False
        self.recovery = None
        self.unheard = False  # (every member still in told us what it holds of our feed)
        self.outbox.effects.append(done)
        self.finality.dirty = True
        for seat, fork_seq in self.membership.deferred_forks:
            self.vote_fork(seat, fork_seq, now)
        self.membership.deferred_forks.clear()
        for q in recovered_withdrawals(self.membership, self.chains.folds):
            if not self.left:  # (heard while we recovered: §9.2)
                self.emit(Drop(self.frontier(), q, 0, DropReason.WITHDRAW), now)
        if not own:
            self.emit(Join(self.frontier()), now)  # (the log lost even our join, or had none)
        return True


def _first(body: EventBody) -> bool:
    """Whether ``body`` is a complaint or an answer of a shuffle game (signed before anything
    else, :meth:`Author.act`)."""
    return isinstance(body, DeckEvent) and isinstance(body.message, DeckComplain | DeckAnswer)


def own_want(author: Author) -> bytes:
    """A want of ``author``'s peer for its own events past its head, signed (a want names no
    head: it keeps us heard, as a doubt's and a recovery's do)."""
    first = len(author.feeds[author.seat]) + 1
    return author.delivery.want_wire(author.seat, first, first + author.config.max_want - 1)


def keep_heard(author: Author, now: float, reserved: int) -> bytes | None:
    """A message that keeps ``author``'s peer heard while what it signed last cannot be sent
    yet (its record is not durable: a slow disk's sync, docs/log-format.md §6), or ``None`` if
    none may go now. It is a want for our own events past our head (:func:`own_want`): it
    names no head, so it announces nothing of our feed, and a want is heard (§9.1).
    ``reserved`` is the clock the log holds durably reserved: a want timed past it, or past a
    reservation asked for, would wait for a sync too.

    The beats and acks the caller still holds, signed before it and sent after it, are old by
    its time where they arrive (§7.2): an ack is due at once, to announce what they did once
    the caller has sent them."""
    outbox = author.outbox
    if author.recovery is not None or author.elsewhere is not None:
        return None  # (recovering: our wants go out anyway; elsewhere: we stop)
    if outbox.clock + 1 > min(reserved, outbox.reserved):
        return None
    wire = own_want(author)
    outbox.ack_due = now if outbox.ack_due is None else min(outbox.ack_due, now)
    return wire
