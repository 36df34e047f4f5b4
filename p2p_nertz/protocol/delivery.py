"""The receive path of a peer: what comes in, checked, held, delivered, or refused.

Theory of operation
-------------------
:class:`Delivery` takes a message in (:meth:`Delivery.receive`): the :class:`~.inbox.Inbox`
opens it; a beat, an ack or a want is checked against the events held of its author and taken
(cover for finality, gaps to repair, what to send back); an event is a duplicate, a proof of a
fork or of a lie about time, or held until its causal past is, then delivered in turn
(:meth:`Delivery.drain`, over :meth:`Feeds.ready`) to the feeds, finality, membership and the
folds (:meth:`Delivery.deliver`). Refusals and the effects of taking a message in (records,
wants, proofs relayed, acks due) go to the :class:`~.outbox.Outbox` queue, in order.

Some of what it finds calls for an event of ours: a vote on a proof of cheating, the
withdrawal of a vote for silence when the member is heard again; and a want is answered by the
peer (a test's cheat may keep some answers back). Signing delivers our own event, which may
change what the next message does, so the receive path does not sign: it **yields** an
:data:`Ask` where the event is due, and the peer signs it (or answers) before asking for the
next, as :meth:`Membership.stalls` does. Nothing here calls back into the peer.

``Delivery.deliver`` and ``_receive_reveal`` are attributes set to their ``…_honest`` methods:
the seams ``scripts/bench_lan.py``'s probes extend (a compiled method cannot be replaced on an
instance; as ``Outbox.sign_event``'s, session 43).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from p2p_nertz.errors import LogFormatError, chained
from p2p_nertz.protocol.bodies import (
    NOT_EVENTS,
    SHARE_BEATS,
    Beat,
    DeckReveal,
    DeckWant,
    Drop,
    DropReason,
    EventBody,
    Want,
    parse_body,
)
from p2p_nertz.protocol.chains import Chains
from p2p_nertz.protocol.debts import DEBT_NOTE, Debts, excused, note_due
from p2p_nertz.protocol.duties import Duties
from p2p_nertz.protocol.effects import Equivocation, Note, Record, Rejected, Send, Suspected
from p2p_nertz.protocol.envelope import (
    KIND_DROP,
    KIND_JOIN,
    KIND_MOVE,
    InvalidMessageError,
    Kind,
    Message,
    RejectReason,
)
from p2p_nertz.protocol.feeds import ChainCode, Feeds, Parting, Ready, Refusal, Source
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.protocol.membership import announces
from p2p_nertz.protocol.recovery import Elsewhere, Recovery, WordsOnUs, fork_vote_of
from p2p_nertz.protocol.relays import Relays
from p2p_nertz.protocol.share_beats import BAD_SHARE
from p2p_nertz.protocol.share_notes import BAD_SHARE_NOTE
from p2p_nertz.protocol.state import Event

__all__ = ["ANSWER_BURST", "Answer", "AnswerBudget", "Ask", "Delivery", "ForkVote", "Withdraw"]

_LIE = "event {} is timed below a clock its author announced"
_LATE = "event {} is timed {}, below what is final"

ANSWER_BURST = 4.0
"""Wants of one asker for one feed answered at once before the rest wait their turn, one per
``want_interval`` (:class:`AnswerBudget`, docs/protocol.md §9.7)."""
_NOTHING: Iterator[Ask] = iter(())  # (nothing asked: an empty iterator, shared)


@dataclass(frozen=True, slots=True)
class Withdraw:
    """Sign the withdrawal of our vote against ``seat``, heard again (:meth:`Membership.withdraws`
    took it out of our votes)."""

    seat: int
    now: float


@dataclass(frozen=True, slots=True)
class ForkVote:
    """Vote ``seat`` out, proven here just now to have cheated at ``seq`` (the proof is logged
    and relayed already): :meth:`Membership.fork_vote` says what the vote counts."""

    seat: int
    seq: int
    now: float | None


@dataclass(frozen=True, slots=True)
class Answer:
    """Send ``to`` what its want asks for that we hold (:meth:`Delivery.answer_want`)."""

    to: PeerId
    want: Want


#: What the receive path asks the peer to do before it goes on.
Ask = Withdraw | ForkVote | Answer | Elsewhere


class AnswerBudget:
    """Which wants are answered: a token bucket per asker and feed, refilled one answer per
    ``want_interval`` (an honest member asks no more often, §6.3) and holding
    :data:`ANSWER_BURST` (for the network's jitter, and the asks of a fork's proof). A member
    flooding wants gets the rest ignored, not an answer of up to ``max_want`` events each
    (§9.7)."""

    def __init__(self, store: Feeds) -> None:
        self._store = store
        #: AnswerBudget left to wants of (asker, feed), and as of when.
        self._tokens: dict[tuple[int, int], tuple[float, float]] = {}
        #: Wants answered, by asker (what a flood got: at most ``ANSWER_BURST`` and one a
        #: ``want_interval`` for each feed).
        self.answered: dict[int, int] = {}

    def may(self, asker: int, feed: int, now: float) -> bool:
        """Whether a want of ``asker`` for ``feed`` at ``now`` is answered (it is counted)."""
        if not self._within(asker, feed, now):
            return False
        self.answered[asker] = self.answered.get(asker, 0) + 1
        return True

    def _within(self, asker: int, feed: int, now: float) -> bool:
        interval = self._store.want_interval
        if interval <= 0:
            return True
        tokens, then = self._tokens.get((asker, feed), (ANSWER_BURST, now))
        tokens = min(ANSWER_BURST, tokens + max(0.0, now - then) / interval)
        if tokens < 1:
            self._tokens[asker, feed] = (tokens, now)
            return False
        self._tokens[asker, feed] = (tokens - 1, now)
        return True


class Delivery:
    """One member's receive path (see the module docstring).

    Args:
        seat: our own seat.
        peer_ids: each seat's member.
        max_pending: events held per author ahead of its delivered feed.
        beat_interval: how long after refusing an event a fork it shows is probed.
        chains: the feeds, finality, membership, folds, inbox and outbox (the part below).
        duties: the phase events of ours done (an event of ours taken back is one).
    """

    def __init__(
        self,
        seat: int,
        peer_ids: tuple[PeerId, ...],
        *,
        max_pending: int,
        beat_interval: float,
        chains: Chains,
        duties: Duties,
    ) -> None:
        self.seat = seat
        self.on_us = WordsOnUs(seat, len(peer_ids))  # what members said of our feed (Doubt)
        self.peer_ids = peer_ids
        self.max_pending = max_pending
        self.beat_interval = beat_interval
        self.chains = chains
        self.store = chains.store
        self.feeds = chains.feeds
        self.finality = chains.finality
        self.membership = chains.membership
        self.folds: Folds = chains.folds
        self.inbox = chains.inbox
        self.outbox = chains.outbox
        self.duties = duties
        self.debts = Debts(
            lambda: excused(self.folds.final.dropped, self.membership.proof.forked_at)
        )
        self.words = Relays(membership=self.membership, peer_ids=peer_ids)  # (§9.2, relays)
        self.answers = AnswerBudget(self.store)  # which wants we answer
        self.deliver, self._receive_reveal = self.deliver_honest, self._receive_reveal_honest

    # -- refusals -------------------------------------------------------------------------------
    def _reject(self, reason: str, detail: str, author: PeerId | None = None) -> None:
        self.refused(Rejected(reason, detail, author))

    def refused(self, rejected: Rejected) -> None:
        """Count a refusal and queue it (a :class:`Rejected` effect)."""
        self.inbox.rejected += 1
        self.outbox.effects.append(rejected)

    # -- taking a message in --------------------------------------------------------------------
    def receive(
        self,
        data: bytes,
        now: float,
        source: Source,
        recovery: Recovery | None,
        *,
        superseded: bool = False,
    ) -> Iterator[Ask]:
        """Take one message in (``recovery``: ours, while it lasts): what it asks of us, one at
        a time, as it is taken (iterate it at once: the message is opened now, taken as asked).
        A beat ``superseded`` by a later one of its author already taken is verified only if it
        proves something (:meth:`_old_beat_matters`, §7.2).
        """
        old = self.inbox.old_beat(data) if superseded else None
        if old is not None and not self._old_beat_matters(*old):
            self.inbox.unverified += 1  # (verified or not, it would change nothing)
            return _NOTHING
        opened = self.inbox.open(data)
        if isinstance(opened, Rejected):
            self.refused(opened)
            return _NOTHING
        seat, message, body = opened
        # (The generator of the kind, not one around it: this runs for every message.)
        if type(body) is Beat or type(body) is Want:  # (parse_body gives each kind its class)
            if seat == self.seat:  # (our own beat, echoed: nothing to learn)
                return _NOTHING
            return self._receive_beat(seat, message, body, now, recovery)
        if isinstance(body, SHARE_BEATS):
            if seat == self.seat:  # (our own, echoed)
                return _NOTHING
            if type(body) is DeckReveal:
                return self._receive_reveal(seat, message, body, now, recovery)
            assert type(body) is DeckWant
            self.chains.answer_shares(message.author, body, now)  # (from our store, §10.14)
            return _NOTHING
        assert not isinstance(body, NOT_EVENTS)
        return self._receive_event(seat, message, body, now, source=source, recovery=recovery)

    def _receive_reveal_honest(
        self, seat: int, message: Message, body: DeckReveal, now: float, recovery: Recovery | None
    ) -> Iterator[Ask]:
        """Take another member's ``deck_reveal`` (docs/shuffle.md §10.14): its shares offered
        to our store, the wrong ones refused; its author heard, as by a beat, unless it is
        timed below the latest beat of its taken (a replay says nothing of now)."""
        wrong = self.chains.shares.take(self.folds, body)
        for share in wrong:
            detail = f"seat {seat}'s deck_reveal: a wrong share of {share.seat}"
            self._reject(BAD_SHARE, detail, message.author)
        if wrong and self.chains.shares.note_due(self.folds, seat, body, wrong):
            # Its signed proof of a wrong share, kept for the audit (docs/shuffle.md §10.14).
            self.outbox.effects.append(Note(BAD_SHARE_NOTE, message.wire))
        fresh = not wrong and message.lamport >= self.inbox.beat_clock[seat]
        if fresh and self._heard_from(seat, now, recovery is not None):
            yield Withdraw(seat, now)

    def _old_beat_matters(self, seat: int, message: Message, beat: Beat) -> bool:
        """Whether a beat older than one of its author's taken does anything: contradict an
        event (a proof, a fork refused), be kept to catch a later one, or say more."""
        lamport = message.lamport
        held = len(self.feeds[seat])
        return (
            self.store.contradicts(seat, lamport, beat) is not None
            or self.membership.proof.watch_slot(seat, lamport, beat.head_seq, held) is not None
            or self.finality.raises(seat, lamport, beat)
        )

    def _receive_beat(
        self, seat: int, message: Message, body: Beat | Want, now: float, recovery: Recovery | None
    ) -> Iterator[Ask]:
        """Take a beat, an ack or a want of another member (none is an event)."""
        beat = body if type(body) is Beat else None
        if beat is not None:
            # Check it against the events we hold of its author before it changes anything
            # (Feeds.contradiction): a fork is refused, a lie about time proven.
            wrong = self.store.contradiction(seat, message.lamport, beat)
            if wrong is not None:
                if wrong.event is None:
                    detail = f"seat {seat} announces another event {beat.head_seq}"
                    self._reject(ChainCode.FORK.value, detail)
                else:
                    yield from self._clock_lie(seat, message, wrong.event, now)
                return
            # Even an old beat (a relayed proof) may contradict an event to come: kept for that.
            held = len(self.feeds[seat])
            self.membership.proof.watch_beat(seat, message, beat.head_seq, held)
            # And one announcing any feed past what is held here is its author's debt (debts).
            kept = self.debts.take(seat, message, beat, self.feeds, self.finality)
            if kept and note_due(self.folds.tentative.roster, seat, beat):  # (for the audit)
                self.outbox.effects.append(Note(DEBT_NOTE, message.wire))
        new = self.inbox.new_beat(seat, message.lamport)
        # An old beat (replayed, overtaken in the network, or relayed as a game ended:
        # last_words) is taken only for what it says of its author's feed and cover, if more.
        if beat is not None and (new or self.finality.raises(seat, message.lamport, beat)):
            self.outbox.effects.extend(self.words.note(seat, message, beat, self.feeds))
            if not new:
                self.take_beat(seat, message.lamport, beat, now)
        if not new:
            return
        if self._heard_from(seat, now, recovery is not None):
            yield Withdraw(seat, now)
        if self.outbox.take_beat(message.lamport):  # (capped: §5.3)
            self.finality.dirty = True
        if beat is not None:
            self.take_beat(seat, message.lamport, beat, now)
            # Timed above our first recovery want (far above our old clock): sent after it
            # took the want in, so after all we sent it before the crash (§9.6). If it lacks
            # some of ours, it cannot learn our head from a beat: send them (it may hold a
            # later one of ours waiting for them).
            held = len(self.feeds[self.seat])
            if (
                recovery is not None
                and recovery.beat(seat, message.lamport, beat)
                and beat.held[self.seat] < held
            ):
                yield Answer(message.author, Want(self.seat, beat.held[self.seat] + 1, held))
        elif isinstance(body, Want):
            self.on_us.want(seat, body)
            if self.answers.may(seat, body.seat, now):
                yield Answer(message.author, body)
            if recovery is not None:
                recovery.want(seat, message.lamport, body)

    def _receive_event(
        self,
        seat: int,
        message: Message,
        body: EventBody,
        now: float,
        *,
        source: Source,
        recovery: Recovery | None,
    ) -> Iterator[Ask]:
        """Take an event: a duplicate, a proof of a fork or of a lie, or one to deliver."""
        store = self.store
        if (
            seat == self.seat
            and message.seq > len(self.feeds[seat])
            and source is Source.NETWORK
            and recovery is None
        ):
            # Our log holds all we signed here: another process of ours (or this one before its
            # log was lost) signed it; we stop (recovery.Doubt). Recovering, it is taken back.
            detail = f"event {message.seq} in our name that we never signed here"
            self._reject(ChainCode.NOT_OURS.value, detail)
            yield Elsewhere(message.seq)
            return
        held = store.version(seat, message.seq)
        if held is not None:
            if held.id != message.id:
                yield from self._equivocation(seat, held, message, now, source)
            return  # a duplicate (a replay or a relay we already have)
        if store.gone and seat != self.seat:
            gone = store.given_up(seat, message)
            if gone is not None:
                # We held another version and gave it up for the chain that counts: the two
                # are proof all the same (§9.4, "A version given up"). This one goes on in.
                yield from self._equivocation(seat, gone, message, now, source, held=False)
        lie = self._lie_of_next(seat, message)
        if lie is not None:
            # A beat of its author announced that nothing of its would come at or below its
            # clock past its head: both signed, so proof now, whatever came between. (Only for
            # the next event of the feed: one further on is checked when its turn comes, once
            # we hold the events before it and our vote can count them; a vote counting less
            # than the others hold cuts what they built on, §9.2.)
            yield from self._clock_lie(seat, lie, message, now)
            self.refused(refusal((ChainCode.BROKEN_CHAIN, _LIE.format(message.seq)), message))
            return
        if store.full(seat, self.max_pending):
            self._reject(ChainCode.TOO_FAR_AHEAD.value, f"seat {seat} has too many events waiting")
            return
        if seat != self.seat and self._heard_from(seat, now, recovery is not None):
            yield Withdraw(seat, now)
        self.on_us.event(seat, body.frontier, live=source is Source.NETWORK)
        store.hold(seat, message, body, source)
        yield from self.drain(now)

    def _lie_of_next(self, seat: int, message: Message) -> Message | None:
        """The kept beat of ``seat`` that ``message``, the next event of its feed, contradicts
        (then proof), if any."""
        membership = self.membership
        if (
            not membership.proof.watch[seat]
            or message.seq != len(self.feeds[seat]) + 1
            or seat in membership.proof.forked_at
        ):
            return None
        return membership.proof.watched_lie(seat, message)

    def _heard_from(self, seat: int, now: float, recovering: bool) -> bool:
        """``seat`` is heard now: whether our vote against it is withdrawn (to sign now)."""
        membership = self.membership
        if membership.heard_from(seat, now):
            self.outbox.effects.append(Suspected(seat, False))
        return seat in membership.voted and membership.withdraws(seat, self.folds, recovering)

    # -- delivery -------------------------------------------------------------------------------
    def drain(self, now: float) -> Iterator[Ask]:
        """Deliver every waiting event whose turn has come (:meth:`Feeds.ready`)."""
        membership = self.membership
        for step in self.store.ready():
            if type(step) is Refusal:
                self._reject(step.code.value, step.detail, step.author)
            elif type(step) is Parting:
                self.chains.truncate(step.seat, step.keep)
            else:
                assert type(step) is Ready
                seat, message, body, source = step.seat, step.message, step.body, step.source
                if membership.proof.watch[seat] and seat not in membership.proven_seats:
                    # It contradicts a beat of its author kept here: proof, acted on. (Once an
                    # author is proven to cheat and voted out, the drop's cut decides which of
                    # its events count; its timing lies no longer matter.)
                    lie = membership.proof.watched_lie(seat, message)
                    if lie is not None:
                        yield from self._clock_lie(seat, lie, message, None)
                        self._refuse(step, (ChainCode.BROKEN_CHAIN, _LIE.format(message.seq)), now)
                        continue
                problem = self._chain_problem(seat, message, body, source)
                if problem is None:
                    self.deliver(seat, message, body, now, source=source)
                    continue
                self._refuse(step, problem, now)

    def _refuse(self, step: Ready, problem: tuple[ChainCode, str], now: float) -> None:
        """Refuse a ready event for its chain; follow the other version of a fork it goes on
        from, or probe the fork it shows."""
        seat, message, body, source = step.seat, step.message, step.body, step.source
        self.refused(refusal(problem, message))
        if self.chains.going_on_from(seat, message, body, source):
            return  # (the other version and this event wait again, in turn)
        self._probe_fork(step, problem[0], now)

    def _probe_fork(self, step: Ready, code: ChainCode, now: float) -> None:
        """After refusing an event for its chain: ask everyone for the other version of a fork
        it shows, at the next beat (:meth:`Proofs.probe_refused`, §9.4); refused as a leap,
        for the versions it names that we know nothing of (:meth:`Proofs.ask_versions`, §5.3)."""
        seat, message, membership = step.seat, step.message, self.membership
        clash = None
        if step.source is not Source.LOG:
            clash = self.store.time_clash(message, step.body.frontier, membership.proof.forked_at)
        feed = self.feeds[seat]
        head = feed[-1].id if feed else None
        at = now + self.beat_interval
        membership.proof.probe_refused(seat, message, clash, held=len(feed), head=head, at=at)
        if code is ChainCode.CLOCK_JUMP:
            membership.proof.ask_versions(self.feeds, step, at)

    def _chain_problem(
        self, seat: int, message: Message, body: EventBody, source: Source
    ) -> tuple[ChainCode, str] | None:
        """Why a ready event may not be delivered: too late, or off its author's chain."""
        if self.folds.too_late(seat, message.seq, message.lamport, self.finality.stable):
            return ChainCode.BROKEN_CHAIN, _LATE.format(message.seq, message.lamport)
        proof = self.membership.proof  # (a forked event's version named, by its id: §5.3)
        return self.store.chain_problem(
            seat, message, body, source, proof.forked_at, versions=proof.pairs
        )

    def deliver_honest(
        self, seat: int, message: Message, body: EventBody, now: float, *, source: Source
    ) -> None:
        """Deliver an event whose turn has come (ours, signed just now, too)."""
        self.feeds[seat].append(message)
        self.finality.dirty = True
        self.membership.proof.delivered(seat, message.seq)
        named = announces(self.membership, self.feeds, self.folds, seat)
        (outbox := self.outbox).take_event(message.lamport, named, seat, message.seq)
        # Its author's early beat now covered, and the event as an ack (§7.1; not our own):
        # what they show we lack is asked for, but of an ack read back from our log.
        early, ack = self.finality.take_event(seat, message, body)
        if early is not None:
            self.ask(seat, *early, now)
        if ack is not None and source is not Source.LOG:
            self.ask(seat, *ack, now)
        event = Event(seat, message.seq, message.lamport, message.kind, body, message.id)
        # (Timed at or below what is final, it never counts: see Folds.never_counts.)
        outbox.effects.extend(self.folds.add(event, self.finality.stable))
        if message.kind is KIND_JOIN and message.seq > 1 and seat != self.seat:
            self.membership.rejoin_requests[seat] = message.seq
        if message.kind is KIND_DROP:
            self.chains.votes_held = True
            assert isinstance(body, Drop)
            outbox.effects.extend(self.words.vote(seat, body, now, source, self.feeds))
            if body.reason is DropReason.EQUIVOCATION and body.seat != self.seat:
                self.membership.proof.unproven.setdefault(body.seat, body.fork_seq)
        if seat == self.seat:
            if source is Source.NETWORK:  # ours, taken back from the others in recovery
                outbox.effects.append(Record(message.wire, own=True))
                self.take_back(message)
        else:
            if source is Source.NETWORK:
                outbox.effects.append(Record(message.wire, own=False))
            # Acked at once: any event but a tableau move, and a move only while a claim waits
            # for it (Folds.claim_waits, issue #4); the others are announced by our next event
            # or beat (an event's frontier is an ack, §7.2).
            if outbox.ack_due is None and (
                message.kind is not KIND_MOVE or self.folds.claim_waits(message.lamport)
            ):
                outbox.ack_due = now + outbox.ack_delay

    def take_back(self, message: Message) -> None:
        """Take one of our own events (logged, or from the others in recovery) as done."""
        body = parse_body(message.kind, message.body, len(self.feeds))
        self.duties.mark_done(message.kind, body)
        assert not isinstance(body, NOT_EVENTS)
        self.membership.take_back(body.frontier, body if isinstance(body, Drop) else None)

    # -- beats and wants ------------------------------------------------------------------------
    def take_beat(self, seat: int, lamport: int, beat: Beat, now: float) -> None:
        """Take what a sound beat says: cover for finality, forks to prove, gaps to repair."""
        self.on_us.told = True  # (what it holds of our feed: Finality.claimed, Doubt)
        ahead, forks = self.finality.take_beat(seat, lamport, beat)
        self.ask(seat, beat, ahead, forks, now)

    def ask(
        self, seat: int, beat: Beat, ahead: list[int], forks: list[tuple[int, int, int]], now: float
    ) -> None:
        """Ask for what a beat of ``seat`` that finality took showed we lack (``ahead``,
        ``forks``: :meth:`Finality.take_beat`): the versions of a fork, the rest of a feed."""
        source = self.peer_ids[seat]
        dropped = self.folds.final.dropped
        store = self.store
        if forks:
            # It holds another event under a seq: the author forked. Fetch its versions since
            # the last agreed seq: the earliest pair of different signed events is the proof.
            for q, first, count in store.fork_asks(forks, dropped, now):
                self.outbox.effects.append(Send(self.want_wire(q, first, count), source))
        # Gap repair: whoever holds more of a feed than we do can send it; ask it for the rest
        # now, or after ``want_delay`` if it has not come by then (Feeds.gap, Feeds.due).
        for q, upto in store.behind(seat, beat, ahead, dropped):
            if store.gap(q, upto, source, now):
                self.want(q, upto, source, now)

    def want(self, seat: int, upto: int, source: PeerId, now: float) -> None:
        """Ask ``source`` for ``seat``'s events up to ``upto`` (:meth:`Feeds.want` says which)."""
        asked = self.store.want(seat, upto, source, now)
        if asked is not None:
            self.outbox.effects.append(Send(self.want_wire(seat, *asked), source))

    def want_wire(self, seat: int, first: int, last: int) -> bytes:
        """A want of ours for ``seat``'s ``first`` to ``last``, signed."""
        self.finality.dirty = True  # (our clock moves)
        return self.outbox.sign_beat(Kind.WANT, Want(seat, first, last))

    def answer_want(self, to: PeerId, want: Want) -> None:
        """Send ``to`` what it asks for that we hold, with proofs (:meth:`Proofs.proofs_for`)."""
        sent = self.store.answer(want)
        for wire in self.membership.proof.proofs_for(want.seat, want.first, want.last, sent):
            self.outbox.effects.append(Send(wire, to))
        if to == self.peer_ids[want.seat] and want.seat != self.seat:
            # A member asking for its own events recovers (§9.6): it must learn what we hold
            # of its feed, which our beats do not say once a vote of ours froze them (§9.2).
            # A want of ours for the rest of its feed says it.
            held = len(self.feeds[want.seat])
            wire = self.want_wire(want.seat, held + 1, held + self.store.max_want)
            self.outbox.effects.append(Send(wire, to))

    # -- proofs (decided by Membership; logged and relayed here, voted on by the peer) ----------
    def _clock_lie(
        self, seat: int, beat: Message, event: Message, now: float | None
    ) -> Iterator[Ask]:
        """A beat and a later event of one author that contradict each other's clocks."""
        if self.membership.proof.clock_lie(seat, beat, event):
            self.chains.cap(seat, event.seq - 1)
            yield self._prove(seat, event.seq, beat.wire, event.wire, now)

    def _equivocation(
        self,
        seat: int,
        first: Message,
        second: Message,
        now: float,
        source: Source,
        *,
        held: bool = True,
    ) -> Iterator[Ask]:
        """Two versions of one event of ``seat``: ``first`` held or waiting here (``held``), or
        given up for the chain that counts, ``second`` come now (then delivered in turn)."""
        membership = self.membership
        # The version not held here is the other half, relayed with ours when asked.
        ours, other = (first, second) if held else (second, first)
        if source is Source.LOG:
            # Both versions from our own log: we followed one, then switched to the one a
            # drop kept. What we did about it is in our log (our votes), not to be redone.
            membership.proof.proven_fork(seat, first.seq)
            membership.proof.proofs.setdefault((seat, first.seq), other.wire)
            membership.proof.found(seat, first.seq, first, second)
            self.chains.cap(seat, first.seq - 1)
        elif membership.proof.equivocation(seat, ours, other):
            self.chains.cap(seat, first.seq - 1)
            yield self._prove(seat, first.seq, first.wire, second.wire, now)

    def _prove(
        self, seat: int, seq: int, wire_a: bytes, wire_b: bytes, now: float | None
    ) -> ForkVote:
        """A new proof that ``seat`` cheated at ``seq``: log it before anything is sent, relay
        both messages to everyone; the vote that puts the author out before the fork."""
        effects = self.outbox.effects
        effects.append(Equivocation(seat, seq, wire_a, wire_b))
        effects.append(Note.proof(wire_a, wire_b))
        effects.append(Send(wire_a))
        effects.append(Send(wire_b))
        return ForkVote(seat, seq, now)

    # -- our log read back ----------------------------------------------------------------------
    def read_back(self, records: list[bytes], now: float, debts: Sequence[bytes]) -> Iterator[Ask]:
        """Take our log back: every event as it came (nothing is logged or sent again), our own
        events as done (:meth:`take_back`), after the beats of its ``debt`` notes (``debts``)."""
        chains, feeds, store = self.chains, self.feeds, self.store
        for data in records:
            # Our votes on proof of a fork first: the events we delivered past that fork (on
            # one version or the other) are delivered again the same way.
            try:
                message = self.inbox.decode(data)
            except InvalidMessageError as exc:
                if exc.reason is RejectReason.BAD_VERSION:
                    # Another version's log (a game begun before the protocol changed): taken
                    # back with its records skipped, the peer would play on from a table it
                    # does not hold and sign over its own feed. Refused before anything is done.
                    version = f"the log was written in another protocol version ({exc.detail})"
                    why = f"{version}: this nertz cannot play it on (docs/log-format.md §9)"
                    raise chained(LogFormatError(why), None)
                continue
            fork = fork_vote_of(message, self.peer_ids[self.seat], len(feeds))
            if fork is not None:
                self.membership.proof.proven_fork(*fork)
                chains.cap(fork[0], self.membership.proof.forked_at[fork[0]] - 1)
        self.debts.read_back(debts, self.inbox, feeds, self.finality)
        for data in records:
            held = [len(feed) for feed in feeds]
            yield from self.receive(data, now, Source.LOG, None)
            # What the votes read so far decide is followed before the next record, as live
            # after each input: the kept version of a forked event, taken live once the votes
            # came, follows them in the log, and is refused as a fork if the version they did
            # not keep is still held when it is read. (After each vote taken, not after every
            # record: that refolded the game per record, a restore quadratic in the log.)
            if chains.votes_held and any(
                m.kind is KIND_DROP for feed, n in zip(feeds, held, strict=True) for m in feed[n:]
            ):
                chains.follow_held()
                while store.redrain:
                    yield from self.drain(now)
        effects = self.outbox.effects
        effects[:] = [e for e in effects if not isinstance(e, Send | Record)]
        for message in feeds[self.seat]:
            self.take_back(message)


def refusal(problem: tuple[ChainCode, str], message: Message) -> Rejected:
    """The refusal of ``message``, an event in its turn, for its chain (``problem``: the code
    and the words): it names the event, seq and id, for a refusal may be taken back (the event
    delivered later, once a version it names is fetched, §5.3), and whoever reads the refusals
    tells the two apart only by the event (``sim.liar_games.standing_leaps``)."""
    code, detail = problem
    return Rejected(code.value, detail, message.author, message.seq, message.id)
