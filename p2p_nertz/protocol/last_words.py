"""The signed words that ended the game here, handed on: each member's latest beat, relayed.

A peer makes its own ``result`` final only once every member still in has told it, in a beat
or an ack of its own signing, that it holds that ``result`` and has sent nothing timed below
it (docs/protocol.md §7.1): that word is the member's alone to give. A member that sends one
peer only beats of a head it never gives (one event past its last: nothing of its feed is
known from them) and its true beats and acks to the others gives that peer no time past its
last event, and the peer's own ``result`` is never final once the others, over, have stopped
(docs/protocol.md §9.2, *only beats one ahead*). The others hold that word:
it made their end final. So a peer whose final fold comes to ``over`` relays, once, to each
other member still in, the latest beat or ack it took of every third member (:class:`LastWords`):
signed by its author, it is taken by the receiver as the author's own word, old or not
(``Finality.raises``), and makes final there what it made final here.

An honest member's own beats reach every member anyway: the relayed beat is then no newer
than one the receiver took and raises nothing, for the price of a signature check (none in a
burst behind a later beat of its author's, docs/protocol.md §7.2). What is left: only the
*latest* beat is relayed (a liar whose latest beat to us says less than an earlier one leaves
the receiver short), and a relayed beat whose head the receiver does not hold yet is not kept
for when it does (its cover waits for its head, as a new beat's; the old one is dropped).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from p2p_nertz.protocol.effects import Send
from p2p_nertz.protocol.envelope import Message
from p2p_nertz.protocol.identity import PeerId

__all__ = ["LastWords"]


class LastWords:
    """Per member, the latest beat or ack of its taken here (the highest Lamport time), and
    whether our end has been relayed (:meth:`relay`)."""

    __slots__ = ("beats", "relayed")

    def __init__(self) -> None:
        self.beats: dict[int, Message] = {}  # seat -> its latest beat or ack taken here
        self.relayed = False

    def note(self, seat: int, message: Message) -> None:
        """Keep ``message``, a beat or ack of ``seat`` newer than every one taken before it."""
        self.beats[seat] = message

    def relay(self, seat: int, members: Collection[int], peer_ids: Sequence[PeerId]) -> list[Send]:
        """Once, as our final fold comes to ``over``: to each other member of ``members`` (the
        members still in), the latest beat of every third member we took (``seat``: ours)."""
        if self.relayed:
            return []
        self.relayed = True
        beats = self.beats
        return [
            Send(beats[q].wire, peer_ids[r])
            for r in members
            if r != seat
            for q in members
            if q not in (seat, r) and q in beats
        ]
