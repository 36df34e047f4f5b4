"""The signed words that ended the game here, handed on: each member's beats, relayed.

A peer makes its own ``result`` final only once every member still in has told it, in a beat
or an ack of its own signing, that it holds that ``result`` and has sent nothing timed below
it (docs/protocol.md §7.1): that word is the member's alone to give. A member that sends one
peer only beats of a head it never gives (one event past its last: nothing of its feed is
known from them) and its true beats and acks to the others gives that peer no time past its
last event, and the peer's own ``result`` is never final once the others, over, have stopped
(docs/protocol.md §9.2, *only beats one ahead*). The others hold that word:
it made their end final. So a peer whose final fold comes to ``over`` relays, once, to each
other member still in, the beats or acks of every third member that made its terms on that
member what they are (:class:`LastWords`: the latest of a head held here, and per feed the
latest announcing the most of it held here): signed by their author, they are taken by the
receiver as the author's own word, old or not (``Finality.raises``), and make final there what
they made final here. Kept per term, not only the latest: a liar that, after its true acks,
sends the relayer its lie too (a head not held) or a beat announcing less leaves the relayer's
terms where the true ones set them, and those are what is relayed.

The relay is one message per member, and a member that gets a third member's word no other
way (that member sends it nothing of its own, or their link fails one way, docs/protocol.md
§13) stays held if it is lost on the way: a member still beating :data:`AGAIN` new beats after
our relay is sent its part again (:meth:`again`). In an ordinary game the others are over
before that many of their beats come, and nothing is sent again.

An honest member's own beats reach every member anyway: the relayed beat is then no newer
than one the receiver took and raises nothing, for the price of a signature check (none in a
burst behind a later beat of its author's, docs/protocol.md §7.2). What is left: a relayed
beat whose head the receiver does not hold yet is not kept for when it does (its cover waits
for its head, as a new beat's; the old one is dropped). The receiver needs that head anyway
once another member announces it, and fetches it from them (``Feeds.gap``); a relay that
overtakes it by less than ``want_delay`` is lost (docs/protocol.md §9.2, *an event past the
end, withheld*).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from p2p_nertz.protocol.bodies import ID_PREFIX, Beat
from p2p_nertz.protocol.effects import Send
from p2p_nertz.protocol.envelope import Message
from p2p_nertz.protocol.identity import PeerId

__all__ = ["LastWords"]

_Feeds = Sequence[Sequence[Message]]

#: A member's new beats or acks after our relay (our end) that send it the relay again.
AGAIN = 8


class LastWords:
    """Per member, the beats or acks of its that set what this peer knows of it: the latest
    of a head held here (what is known of its feed, ``Finality.known``), and per feed the
    latest announcing the most of it held here, its ids matching (its cover,
    ``Finality.held_by``); and whether our end has been relayed (:meth:`relay`). A beat whose
    head or counts are past what is held when it comes is kept aside, as finality keeps it
    (its head: the highest; a count: the highest per feed), and counted once held."""

    __slots__ = ("ahead", "cover", "early", "known", "relayed", "sent", "since")

    def __init__(self) -> None:
        self.known: dict[int, Message] = {}  # seat -> its latest beat of a head held here
        self.cover: dict[int, list[tuple[int, Message | None]]] = {}  # seat -> per feed
        self.ahead: dict[int, dict[int, tuple[int, bytes, Message]]] = {}  # counts not held
        self.early: dict[int, tuple[Message, Beat]] = {}  # seat -> its beat of a head not held
        self.relayed = False
        self.sent: tuple[int, tuple[int, ...], tuple[PeerId, ...]] = (-1, (), ())  # relay's
        self.since: dict[int, int] = {}  # member -> its new beats since our relay (again)

    def note(self, seat: int, message: Message, beat: Beat, feeds: _Feeds) -> list[Send]:
        """Take ``message`` (``beat``), a beat or ack of ``seat`` newer than every one taken
        before it (``feeds``: the feeds held here). Returns our relay to ``seat`` again,
        where it is due (:meth:`again`)."""
        if seat in self.early or self.ahead.get(seat):
            self._settle(seat, feeds)  # (what came since it was kept aside, first)
        if beat.head_seq > len(feeds[seat]):
            early = self.early.get(seat)
            if early is None or early[1].head_seq <= beat.head_seq:
                self.early[seat] = (message, beat)
        else:
            self._held(seat, message, beat, feeds)
        return self.again(seat, feeds) if self.relayed else []

    def _held(self, seat: int, message: Message, beat: Beat, feeds: _Feeds) -> None:
        known = self.known.get(seat)
        if known is None or known.lamport < message.lamport:
            self.known[seat] = message
        cover = self.cover.get(seat)
        if cover is None:
            cover = self.cover[seat] = [(0, None)] * len(feeds)
        for q, (h, prefix) in enumerate(zip(beat.held, beat.held_ids, strict=True)):
            if h < cover[q][0] or not h:
                continue
            if h <= len(feeds[q]):
                if feeds[q][h - 1].id[:ID_PREFIX] == prefix:
                    cover[q] = (h, message)
            elif h > self.ahead.setdefault(seat, {}).get(q, (0, b"", message))[0]:
                self.ahead[seat][q] = (h, prefix, message)

    def _settle(self, seat: int, feeds: _Feeds) -> None:
        """Count what was kept aside of ``seat``'s that is held now."""
        early = self.early.get(seat)
        if early is not None and early[1].head_seq <= len(feeds[seat]):
            del self.early[seat]
            self._held(seat, *early, feeds)
        cover = self.cover.get(seat)
        for q, (h, prefix, message) in list(self.ahead.get(seat, {}).items()):
            if cover is not None and h <= len(feeds[q]):
                del self.ahead[seat][q]
                if h >= cover[q][0] and feeds[q][h - 1].id[:ID_PREFIX] == prefix:
                    cover[q] = (h, message)

    def words(self, seat: int, feeds: _Feeds) -> list[Message]:
        """The beats of ``seat``'s that set what we know of it, each once."""
        self._settle(seat, feeds)
        found = [self.known.get(seat)] + [m for _, m in self.cover.get(seat, ())]
        return list({m.wire: m for m in found if m is not None}.values())

    def relay(
        self, seat: int, members: Collection[int], peer_ids: Sequence[PeerId], feeds: _Feeds
    ) -> list[Send]:
        """Once, as our final fold comes to ``over``: to each other member of ``members`` (the
        members still in), the beats that set what we know of every third member (``seat``:
        ours)."""
        if self.relayed:
            return []
        self.relayed = True
        self.sent = (seat, tuple(members), tuple(peer_ids))
        self.since = dict.fromkeys(members, 0)
        words = {q: self.words(q, feeds) for q in members if q != seat}
        return [send for r in members if r != seat for send in self._to(r, words)]

    def again(self, seat: int, feeds: _Feeds) -> list[Send]:
        """A beat or ack of ``seat`` (a member we relayed to) was taken after our relay: every
        :data:`AGAIN`-th such, the relay to it once more. A relay lost on the way is the only
        word of its author's that a member withheld from gets (docs/protocol.md §13, *A member
        that sends one member nothing of its own*), and one still beating long after our end
        may be waiting for it."""
        since = self.since
        if seat not in since:
            return []
        since[seat] += 1
        if since[seat] % AGAIN:
            return []
        own, members, _ = self.sent
        words = {q: self.words(q, feeds) for q in members if q not in (own, seat)}
        return self._to(seat, words)

    def _to(self, r: int, words: dict[int, list[Message]]) -> list[Send]:
        own, members, peer_ids = self.sent
        return [
            Send(message.wire, peer_ids[r])
            for q in members
            if q not in (own, r)
            for message in words[q]
        ]
