"""A member's time handed on in play, to a member that votes it out for silence while we hear it.

Theory of operation
-------------------
What a peer knows of a member's feed and cover comes from that member's own signed word, its
events and its beats (docs/protocol.md §7.1). Its events reach a peer through any member (gap
repair, §6.3); its beats and acks only from itself. A member that sends one peer nothing of
its own (a withholder, or a link between them that fails one way, §4.7: each direction is its
own connection) leaves that peer, once the member signs no more events, without its time: in
a phase where the member has nothing to sign (it sits out a tiebreak round, or waits on the
peer's own commit) nothing later is final there, the peer signs nothing the round waits for,
and the others vote it out *withheld* (§13, *A member that sends one member nothing of its
own*: ``withhold_fork`` seed 25, ``two_withhold`` seed 23 as a link).

The peer says so itself, in a signed event every member holds: past ``drop_after`` without a
word of the member it votes it out for silence. A peer that holds that vote while it hears
the member itself (not voting it out, heard within ``suspect_after``) hands the member's word
on: at once, the beats that set what it knows of the member (``LastWords.words``), and from
then on, for the rest of the game, every new beat of the member it takes (not its acks),
forwarded as received (:class:`Relays`). The voter takes them as the member's own (they are
new there: it took none of the member's since the link failed), hears the member through
them and withdraws its vote, as when the member's events come relayed; and since the
forwarding goes on after the withdrawal, it is not voted again (no flap, ``protocol/flaps.py``).

Why no liar gains by it. A forwarded beat is signed by its author and checked by the receiver
as any (sound against the events held, new or not): a relayer can choose which of the
member's beats to hand on and when, which the network can too, and cannot forge one. A voter
that votes a member out for silence only to be sent its beats costs each relayer one message
per beat of that member, no more; and a vote for silence on a member the others hear is
already a vote that reaches no majority. An honest game (no vote for silence, or one on a
member nobody hears) sends nothing more: a member dead to all beats no more, and one back
from a crash or a partition within ``drop_after`` was silent here too when the vote was
cast (``Membership.back``); a voter back from a partition that cut it off from us too voted
across the partition, not a link, and hears the member itself once it heals (the same
check on the voter). A relayer that has not listened without a break for ``drop_after``
(restored or woken lately, ``Listening``) counts every member as heard since, without having
heard it, and hands nothing on yet: it holds the vote and asks it again, at the end of an input,
once it has listened that long (:meth:`Relays.reconsider`), unless the voter has withdrawn it
meanwhile. A vote read back from our own log (a restart) hands nothing on.

:class:`Relays` is the peer's :class:`~p2p_nertz.protocol.last_words.LastWords` (the words
that ended the game, relayed at its end) with the hand-on in play beside them: both keep the
member's latest words, and every new beat passes through :meth:`LastWords.note`.
"""

from __future__ import annotations

from collections.abc import Sequence

from p2p_nertz.protocol.bodies import Beat, Drop, DropReason
from p2p_nertz.protocol.effects import Send
from p2p_nertz.protocol.envelope import Kind, Message
from p2p_nertz.protocol.feeds import Source
from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.protocol.last_words import LastWords
from p2p_nertz.protocol.membership import Membership

__all__ = ["Relays"]

_Feeds = Sequence[Sequence[Message]]


class Relays(LastWords):
    """:class:`LastWords`, and per member the members we hand its beats on to in play (each
    voted it out for silence while we heard it), in seat order."""

    __slots__ = ("held", "membership", "peer_ids", "to")

    def __init__(self, *, membership: Membership, peer_ids: Sequence[PeerId]) -> None:
        super().__init__()
        self.membership = membership
        self.peer_ids = peer_ids
        self.to: dict[int, tuple[int, ...]] = {}  # member -> voters we forward its beats to
        #: member -> voters whose votes for silence on it came before we had listened for
        #: ``drop_after`` (asked again once we have: :meth:`reconsider`)
        self.held: dict[int, tuple[int, ...]] = {}

    def vote(self, voter: int, body: Drop, now: float, source: Source, feeds: _Feeds) -> list[Send]:
        """``voter``'s membership event ``body``, delivered: a vote for silence on a member we
        hear (no vote of ours on it, heard within ``suspect_after``, neither it nor the voter
        suspected here in the last ``drop_after``, and we listening all that time), taken from
        the network, makes us hand that member's beats on to ``voter`` from now on; the beats
        that set what we know of it go at once. One that comes before we have listened that
        long is held (:attr:`held`) and asked again once we have (:meth:`reconsider`), unless
        its voter withdraws it first."""
        member = body.seat
        membership = self.membership
        if body.reason is DropReason.WITHDRAW and voter in self.held.get(member, ()):
            self.held[member] = tuple(v for v in self.held[member] if v != voter)
        if (
            body.reason is not DropReason.SILENT
            or source is not Source.NETWORK
            or membership.seat in (voter, member)
            or member in membership.voted
        ):
            return []
        if now - membership.listening.since_at(now) < membership.timers.drop_after:
            # (Not listening for all that time: restarted or woken lately, §9.1. Asked again
            # once we have: reconsider.)
            self.held[member] = tuple(sorted({*self.held.get(member, ()), voter}))
            return []
        return self._hand_on(voter, member, now, feeds)

    def reconsider(self, now: float, feeds: _Feeds) -> list[Send]:
        """The votes :meth:`vote` held because they came before we had listened without a
        break for ``drop_after``, once we have (the end of every input, ``Author.liveness``):
        each is asked again as if it came now, and handed on if it passes the other checks
        now (docs/protocol.md §9.2, *Handed on in play*: *reconsidered*)."""
        membership = self.membership
        if now - membership.listening.since_at(now) < membership.timers.drop_after:
            return []
        held, self.held = self.held, {}
        sends: list[Send] = []
        for member, voters in sorted(held.items()):
            if member in membership.voted:
                continue
            for voter in voters:
                sends.extend(self._hand_on(voter, member, now, feeds))
        return sends

    def _hand_on(self, voter: int, member: int, now: float, feeds: _Feeds) -> list[Send]:
        """Hand ``member``'s beats on to ``voter`` from now on, if we hear ``member`` and
        neither it nor the voter was suspected here in the last ``drop_after``: the beats that
        set what we know of it, at once."""
        membership = self.membership
        timers = membership.timers
        if now - membership.heard[member] >= timers.suspect_after:
            return []  # (silent here too: nothing of its to hand on)
        if now - membership.back.get(member, -timers.drop_after) < timers.drop_after:
            return []  # (silent here too until lately: back from a crash or a partition)
        if now - membership.back.get(voter, -timers.drop_after) < timers.drop_after:
            return []  # (the voter silent here until lately: a partition cut us off from it)
        voters = self.to.get(member, ())
        if voter in voters:
            return []
        self.to[member] = tuple(sorted((*voters, voter)))
        to = self.peer_ids[voter]
        return [Send(message.wire, to) for message in self.words(member, feeds)]

    def note(self, seat: int, message: Message, beat: Beat, feeds: _Feeds) -> list[Send]:
        """:meth:`LastWords.note`; and a new beat (not an ack) of a member we hand on, to each
        of its voters. (Old beats come here too, only where they raise what we know of their
        author at the game's end: a voter got the new one first, or took it from its author.)"""
        sends = super().note(seat, message, beat, feeds)
        voters = self.to.get(seat) if self.to else None
        if voters and message.kind is Kind.BEAT:
            sends.extend(Send(message.wire, self.peer_ids[r]) for r in voters)
        return sends
