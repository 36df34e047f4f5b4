"""The effects a :class:`~p2p_nertz.protocol.peer.Peer` returns: what the runtime must do.

A value each (h11's events): records for the durable log, sends, clock reservations, notes
of evidence, and notices for the UI. They are defined here, apart from the peer, so that the
objects that make some of them (:class:`~p2p_nertz.protocol.outbox.Outbox`) need not import
the peer; :mod:`p2p_nertz.protocol.peer` exports them all.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.evidence import PROOF_NOTE, encode_proof
from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.protocol.reach import OutOfReach
from p2p_nertz.protocol.recovery import RECOVERED_NOTE, RECOVERING_NOTE, Elsewhere, Recovered
from p2p_nertz.protocol.unmet import DropWaits, FeedHeld, Owed, VoteShort
from p2p_nertz.slots import quick_init

__all__ = [
    "Effect",
    "Elsewhere",
    "Equivocation",
    "Note",
    "OutOfReach",
    "Record",
    "Rejected",
    "Reserve",
    "Send",
    "Suspected",
    "VoteShort",
]


@quick_init
@dataclass(frozen=True, slots=True)
class Send:
    """Send ``data`` to one member (``to``) or to every other member (``to is None``)."""

    data: bytes
    to: PeerId | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class Record:
    """Append ``data`` (a wire message) to the durable log; ``own``: one of our events.

    The runtime must make one of our events durable before performing any :class:`Send`
    after it; a received event is only written, in order, and need not precede a send
    (docs/protocol.md §1.1, §9.6).
    """

    data: bytes
    own: bool


@dataclass(frozen=True, slots=True)
class Reserve:
    """Make durable that our Lamport clock may reach ``clock`` (a note in the log), before
    any :class:`Send` after it: a restart starts its clock there, so no message it sends can
    be timed below one it sent before the crash (beats are not logged)."""

    clock: int


@dataclass(frozen=True, slots=True)
class Rejected:
    """A message was refused and changed nothing (the reason is a short code).

    ``seq`` and ``event_id``: the refused event, where an event of a member's feed was refused
    for its place in the chain (``Delivery``): such a refusal may be taken back, the event
    delivered later (one naming a version of a forked feed fetched since, docs/protocol.md
    §5.3), and a reader of the refusals (the fuzzer of liars' leap check,
    ``sim.liar_games.standing_leaps``) tells it from one that stands only by which event it
    was. ``None`` for a refusal of a message, not of an event in its turn."""

    reason: str
    detail: str
    author: PeerId | None = None
    seq: int | None = None
    event_id: bytes | None = None


@dataclass(frozen=True, slots=True)
class Suspected:
    """A member has been silent too long (``suspected``), or is heard again (``False``)."""

    seat: int
    suspected: bool


@dataclass(frozen=True, slots=True)
class Equivocation:
    """Proof of cheating: two different signed events by one author with one seq."""

    seat: int
    seq: int
    first: bytes
    second: bytes


@dataclass(frozen=True, slots=True)
class Note:
    """Append the note ``name`` holding ``data`` to the log (never sent): evidence for an audit.

    The runtime writes it in order with the :class:`Record` effects around it. The core's notes:
    :data:`PROOF_NOTE` (:meth:`proof`): ``data`` is ``msgpack [wire_a, wire_b]``, two complete
    signed messages exactly as received, that together prove their author cheated: two events
    of one seq (an equivocation), or a beat or ack (``wire_a``) and an event (``wire_b``) whose
    clocks contradict each other (a lie about time, docs/protocol.md §9.4); and the recovery
    notes of docs/protocol.md §9.6 (:meth:`recovering`, :meth:`recovered`), which the runtime
    and the simulator write alike from here.
    """

    name: str
    data: bytes

    @classmethod
    def proof(cls, wire_a: bytes, wire_b: bytes) -> Note:
        """The ``proof`` note of two signed messages.

        >>> Note.proof(b"a", b"b").data
        b'\\x92\\xc4\\x01a\\xc4\\x01b'
        """
        return cls(PROOF_NOTE, encode_proof(wire_a, wire_b))

    @classmethod
    def recovering(cls) -> Note:
        """The note that says our log may end short of our feed (:data:`RECOVERING_NOTE`): a
        restart from it learns the feed from the others first, and the audit reads the log's
        end as lost, not as events we sent unlogged (until a :meth:`recovered` follows it)."""
        return cls(RECOVERING_NOTE, b"")

    @classmethod
    def recovered(cls, done: Recovered) -> Note:
        """The note that ends a recovery (:data:`RECOVERED_NOTE`; our head before and after, 8
        bytes each), durable before anything the recovered peer signs.

        >>> Note.recovered(Recovered(3, 7, ())).data.hex()
        '00000000000000030000000000000007'
        """
        return cls(RECOVERED_NOTE, done.first.to_bytes(8, "big") + done.head.to_bytes(8, "big"))


Effect = (
    Send
    | Record
    | Reserve
    | Note
    | Rejected
    | Suspected
    | Equivocation
    | Recovered
    | Elsewhere
    | OutOfReach
    | VoteShort
    | FeedHeld
    | Owed
    | DropWaits
    | st.Notice
)
