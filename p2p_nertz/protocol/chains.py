"""The chains that count, and how far they are final: the peer's part that follows them.

Theory of operation
-------------------
Which chain of a member's feed counts is decided by the events (a drop's cut and kept chain,
a rejoin's gap: :mod:`~.roster`); what that asks of the feeds held here (a cap on what a
frontier may name, events given up) is worked out by :class:`~.feeds.Feeds`, and the stable
time by :class:`~.finality.Finality` and :func:`~.finality.settle`. :class:`Chains` wires those
three with the folds: after each input it caps and gives up what the held votes call for
(:meth:`Chains.follow_held`, by :func:`follow_chains`, the rule a spectator follows them by
too), then moves the final fold as far as the stable time lets it
(:meth:`Chains.advance`), and says which members that readmits (:meth:`Chains.readmitted`).
It signs nothing: where one of its answers calls for a vote (a member readmitted that was
proven to fork while out), it yields the member and the peer signs before asking for the next.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from p2p_nertz.protocol.bodies import (
    NOT_EVENTS,
    DeckWant,
    Drop,
    DropReason,
    EventBody,
    parse_body,
)
from p2p_nertz.protocol.envelope import KIND_DROP, Kind, Message
from p2p_nertz.protocol.feeds import Feeds, Followed, Source
from p2p_nertz.protocol.finality import (
    Finality,
    covered,
    drops_waiting,
    standing_freezes,
    uncovering,
)
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.protocol.inbox import Inbox
from p2p_nertz.protocol.membership import Membership
from p2p_nertz.protocol.outbox import Outbox
from p2p_nertz.protocol.share_beats import PeerShares
from p2p_nertz.protocol.share_wants import ShareWants
from p2p_nertz.protocol.state import GameState

__all__ = ["Chains", "cap_feed", "follow_chains", "truncate_feed"]


class Chains:
    """One member's following of the chains that count, and its final fold's progress.

    Args:
        seat: our own seat.
        store: the feeds held here.
        finality: the stable time and what it is worked out from.
        membership: the forks proven here and our votes.
        folds: the final and the tentative fold (a peer may swap them before it starts).
        inbox: the codec, to open a proof's other version.
        outbox: our clock, and the queue the final fold's notices go to.
    """

    def __init__(
        self,
        seat: int,
        *,
        store: Feeds,
        finality: Finality,
        membership: Membership,
        folds: Folds,
        inbox: Inbox,
        outbox: Outbox,
    ) -> None:
        self.seat = seat
        self.store = store
        self.feeds = store.feeds
        self.finality = finality
        self.membership = membership
        self.folds = folds
        finality.over = folds.over  # (an old beat's word is taken once it is: Finality.raises)
        self.inbox = inbox
        self.outbox = outbox
        #: the turn-up shares held outside the feed (docs/shuffle.md §10.14)
        self.shares = PeerShares()
        #: our asks for the turn-up shares we lack, and our answers to others' (§10.14)
        self.wants = ShareWants()
        self.votes_held = False  # a drop vote was delivered: check for exclusions
        self._own_known = 0  # (what finality knows of our feed, set by each advance)

    def ask_shares(self, now: float, after: float, recovering: bool) -> None:
        """At the end of an input: ask for the turn-up shares we lack (:meth:`ShareWants.step`;
        none while we recover our own feed: we sign nothing then)."""
        if recovering:
            self.wants.pause()
        else:
            self.wants.step(self.folds, self.shares.store, self.outbox, now, after)

    def answer_shares(self, to: PeerId, want: DeckWant, now: float) -> None:
        """Answer ``to``'s ``deck_want`` from our store (:meth:`ShareWants.answer`)."""
        self.wants.answer(self.folds, self.shares.store, self.outbox, to, want, now=now)

    # -- capping and giving up ----------------------------------------------------------------
    def cap(self, seat: int, upto: int) -> None:
        """Events may be delivered once ``seat``'s feed is held up to ``upto``, whatever more
        of it their frontier names (a forked or dropped feed: the rest may never come)."""
        cap_feed(self.store, self.finality, seat, upto)

    def truncate(self, seat: int, keep: int) -> None:
        """Give up ``seat``'s events after ``keep`` (not final: another chain counts)."""
        truncate_feed(self.store, self.folds, self.finality, seat, keep)

    # -- following the chains that count ------------------------------------------------------
    def follow_held(self) -> GameState:
        """Cap and follow what the held votes decide (the chains that count); the held view
        after it (the final fold where no vote is held)."""
        folds = self.folds
        tentative = folds.tentative if self.votes_held else folds.final
        if self.votes_held:
            for q, cut in tentative.dropped.items():
                self.cap(q, cut)
        return self._follow_chains(tentative)

    def held_drops(self) -> GameState:
        """The held view as far as who is out and whose drop votes stand: the tentative fold,
        or the final one while no drop vote was ever delivered here and every held ``leave``
        is final. Only a vote or a leave puts a member out or casts a ballot, so the two folds
        then agree on both (``dropped``, ``roster.stands``), and the refold of the held events
        is spared: the stall scan (:meth:`Membership.stalls`) asks four times a second, and an
        event had dropped the tentative fold since in nearly every scan."""
        folds = self.folds
        leave = Kind.LEAVE
        if self.votes_held or any(event.kind is leave for event in folds.nonfinal):
            return folds.tentative
        return folds.final

    def _follow_chains(self, tentative: GameState) -> GameState:
        """Follow the chains that count, as ``tentative`` shows them, of the members that
        forked or were dropped or readmitted (:func:`follow_chains`), then the chain going on
        past a fork of ours (:meth:`follow_continued`); the held view after it."""
        store, folds = self.store, self.folds
        forked_at = self.membership.proof.forked_at
        tentative, _ = follow_chains(
            tentative, store, folds, self.finality, own=self.seat, forked_at=forked_at
        )
        if store.going_on and tentative.votes.get(self.seat):
            for seat in list(store.going_on):
                self.follow_continued(seat)
            tentative = folds.tentative
        return tentative

    def going_on_from(self, seat: int, message: Message, body: EventBody, source: Source) -> bool:
        """A refused event that is the next of a feed proven here to fork at our head, and
        follows the other version: kept (:meth:`Feeds.going_on_from`), and followed now if we
        may; whether we did."""
        fork = self.membership.proof.forked_at.get(seat)
        if not self.store.going_on_from(seat, message, body, source, fork):
            return False
        return self.follow_continued(seat)

    def follow_continued(self, seat: int) -> bool:
        """Follow the version of a fork proven here that its author's next event chains on,
        giving up ours, which nothing follows (:meth:`Feeds.going_on_at` says when and why):
        whether we did (the other version and that event are then pending)."""
        store = self.store
        fork = self.membership.proof.forked_at.get(seat)
        going = store.going_on_at(seat, fork)
        if going is None or fork is None:
            return False
        wire = self.membership.proof.proofs.get((seat, fork))
        if (
            wire is None
            or seat in store.required
            or not self.folds.tentative.votes.get(self.seat)
            or self.finality.final_count(seat) >= fork
        ):
            return False
        other = self.inbox.decode(wire)
        stable = self.finality.stable
        if other.id != going[0].prev or self.folds.too_late(seat, fork, other.lamport, stable):
            # (Timed at or below what is final here, the other version would be refused:
            # giving ours up for it, we would hold neither, and our log, which holds ours
            # and not the event that made us give it up, would restore another peer than
            # we are. Session 11's scan, 3 players.)
            return False
        store.switch_from(seat, fork, other)
        self.truncate(seat, fork - 1)
        parsed = parse_body(other.kind, other.body, len(self.feeds))
        assert not isinstance(parsed, NOT_EVENTS)  # (a proof holds two events)
        return store.switched(seat, fork, going, other, parsed)

    # -- finality -------------------------------------------------------------------------------
    def _bounds(self, excluded: dict[int, int], floor: int | None = None) -> int:
        """The stable time if the seats in ``excluded`` (seat -> cut) no longer play
        (:meth:`Finality.bounds`)."""
        clock = self.outbox.clock
        return self.finality.bounds(
            excluded,
            self.membership.voted,
            self._own_known,
            clock,
            floor=floor,
            forks=self._unheld_forks() if self.membership.proof.forked_at else None,
        )

    def _unheld_forks(self) -> dict[int, int]:
        """Seat -> the Lamport time of the other version of its first forked event, where our
        feed does not hold that version (:meth:`Finality.bounds`'s ``forks``)."""
        membership = self.membership
        out: dict[int, int] = {}
        for q, fork in membership.proof.forked_at.items():
            wire = membership.proof.proofs.get((q, fork))
            if wire is None:
                continue
            other = self.inbox.decode(wire)
            feed = self.feeds[q]
            if len(feed) >= fork and feed[fork - 1].id == other.id:
                continue  # (we follow that version now: the one it replaced never counts)
            out[q] = other.lamport
        return out

    def drops_waiting(self) -> dict[int, tuple[int, int] | None]:
        """The drops the held votes decide that are not final here, and what holds each back
        (:func:`~p2p_nertz.protocol.finality.drops_waiting`, with our own bound: our votes
        are terms of it)."""
        return drops_waiting(self.folds, self._bounds, self.finality)

    def advance(self, recovering: bool) -> bool:
        """Move the final fold as far as the stable time now lets it (its notices queued);
        whether it moved. ``recovering``: others may hold events of ours past our log."""
        finality = self.finality
        if not finality.dirty:
            return False
        finality.dirty = False
        tentative = self.follow_held()
        # Every event of ours timed up to here is held: all of them (our clock), except while
        # recovering, when others may hold ours past the last one here, timed anywhere above it.
        own = self.feeds[self.seat]
        if self.outbox.ahead:
            freezes = standing_freezes(tentative.roster)
            out = uncovering(self.folds.final, tentative, self.feeds)
            self.outbox.catch_up(partial(covered, finality, out, freezes))
        self._own_known = self.outbox.clock if not recovering else own[-1].lamport if own else 0
        forked = self.membership.proof.forked_at
        moved, notices = finality.advance(self.folds, tentative, self._bounds, forked)
        self.outbox.effects.extend(notices)
        return moved > 0

    def readmitted(self) -> Iterator[int]:
        """Take the members the final fold readmitted: we announce each one's feed again and
        wait for it (:meth:`Membership.readmit`). Yields, one at a time, those of them proven
        to have forked while out, for the caller to vote out again before the next."""
        final = self.folds.final
        membership = self.membership
        for q, at in final.readmitted_at.items():
            if not membership.readmit(q, at, final.dropped):
                continue
            self.store.uncap(q)
            self.finality.dirty = True
            if q in membership.proof.forked_at and not self._fork_voted_since(q, at):
                # Back in the game, and proven to have forked while out (its readmission came
                # before the proof): it is voted out as a cheater now (soak seed 544). (Not
                # again if we did after the readmission: restored from our log, we read that
                # vote back before the readmission was final here; soak seed 40.)
                yield q

    def _fork_voted_since(self, seat: int, at: int) -> bool:
        """Whether an event of ours timed after ``at`` is a vote against ``seat`` on proof
        of a fork."""
        for message in reversed(self.feeds[self.seat]):
            if message.lamport <= at:
                return False
            if message.kind is KIND_DROP:
                body = parse_body(message.kind, message.body, len(self.feeds))
                if (
                    isinstance(body, Drop)
                    and body.seat == seat
                    and body.reason is DropReason.EQUIVOCATION
                ):
                    return True
        return False


# -- following the chains that count: the peer's rule and the spectator's --------------------
def cap_feed(store: Feeds, finality: Finality, seat: int, upto: int) -> None:
    """Events may be delivered once ``seat``'s feed is held up to ``upto`` (:meth:`Feeds.cap`),
    finality told."""
    if store.cap(seat, upto):
        finality.dirty = True


def truncate_feed(
    store: Feeds, folds: Folds, finality: Finality, seat: int, keep: int
) -> list[Message]:
    """Give up ``seat``'s events after ``keep`` (not final: another chain counts), but none
    final here (:meth:`Folds.keep_floor`); the events given up."""
    keep = max(keep, folds.keep_floor(seat, finality.final_count(seat)))
    gone = store.feeds[seat][keep:]
    if not store.truncate(seat, keep):
        return []
    folds.forget(seat, keep)
    finality.dirty = True
    return gone


def follow_chains(
    tentative: GameState,
    store: Feeds,
    folds: Folds,
    finality: Finality,
    *,
    own: int,
    forked_at: dict[int, int],
) -> tuple[GameState, list[Message]]:
    """Follow the chains that count, as ``tentative`` shows them, of the members that forked
    or were dropped or readmitted, but ``own`` (:meth:`Feeds.follow_kept`, and, of a member
    proven here to fork, ``forked_at``, :meth:`Feeds.follow_voted`; :meth:`Feeds.follow_rejoined`):
    cap their feeds and give up what is off those chains. The held view after it, and the
    events given up. One rule for a peer (:meth:`Chains.follow_held`) and a spectator, which
    fetches nothing: it holds the chain again from the versions it was pushed (session 42)."""
    gone: list[Message] = []

    def follow(followed: list[Followed]) -> None:
        for step in followed:
            cap_feed(store, finality, step.seat, step.cap)
            if step.keep is not None:
                gone.extend(truncate_feed(store, folds, finality, step.seat, step.keep))

    if tentative.kept_forks:
        follow(store.follow_kept(tentative, own))
        tentative = folds.tentative
    if forked_at and tentative.votes:
        follow(store.follow_voted(tentative, own, forked_at))
        tentative = folds.tentative
    if tentative.rejoin_ids:
        for parting in store.follow_rejoined(tentative, own):
            gone.extend(truncate_feed(store, folds, finality, parting.seat, parting.keep))
        tentative = folds.tentative
    return tentative, gone
