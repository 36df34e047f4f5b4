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
then on, for the rest of the game, every new beat or ack of the member it takes, forwarded
as received (:class:`Relays`). The voter takes them as the member's own (they are new there:
it took none of the member's since the link failed), hears the member through them and
withdraws its vote, as when the member's events come relayed; and since the forwarding goes
on after the withdrawal, it is not voted again (no flap, ``protocol/flaps.py``).

Why no liar gains by it. A forwarded beat is signed by its author and checked by the receiver
as any (sound against the events held, new or not): a relayer can choose which of the
member's beats to hand on and when, which the network can too, and cannot forge one. A voter
that votes a member out for silence only to be sent its beats costs each relayer one message
per beat of that member, no more; and a vote for silence on a member the others hear is
already a vote that reaches no majority. An honest game (no vote for silence, or one on a
member nobody hears) sends nothing more: a member dead to all beats no more.
"""

from __future__ import annotations

from collections.abc import Sequence

from p2p_nertz.protocol.effects import Send
from p2p_nertz.protocol.envelope import Message
from p2p_nertz.protocol.identity import PeerId

__all__ = ["Relays"]


class Relays:
    """Per member, the members we forward its beats and acks to (each voted it out for
    silence while we heard it), in seat order."""

    __slots__ = ("back", "to")

    def __init__(self) -> None:
        self.to: dict[int, tuple[int, ...]] = {}  # member -> voters we forward its word to
        self.back: dict[int, float] = {}  # member -> when we last heard it again, suspected

    def voted(self, voter: int, member: int) -> bool:
        """``voter`` votes ``member`` out for silence while we hear ``member``: forward its
        word to ``voter`` from now on. Whether that is new (then hand on what we hold of it
        now, ``LastWords.words``)."""
        voters = self.to.get(member, ())
        if voter in voters:
            return False
        self.to[member] = tuple(sorted((*voters, voter)))
        return True

    def forward(self, member: int, message: Message, peer_ids: Sequence[PeerId]) -> list[Send]:
        """A new beat of ``member``, taken here: to each voter we forward its word to."""
        voters = self.to.get(member)
        if not voters:
            return []
        return [Send(message.wire, peer_ids[r]) for r in voters]
