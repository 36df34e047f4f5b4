"""Transferable proof of cheating: two signed messages of one author that contradict each other.

docs/protocol.md §9.4: two different signed events of one author with one seq are an
**equivocation**; a beat (or ack) timed ``L`` announcing feed head ``h``, and an event of the
same author with seq ``> h`` timed at or below ``L``, are a **lie about time**. Either pair is
proof anyone can check with the roster's keys alone. A peer that finds one keeps the pair in its
log as a note named ``proof`` (docs/log-format.md §5)::

    data = msgpack.packb([wire_a, wire_b])     # two bins, each a signed message as received

(for a lie about time, the beat first). :func:`encode_proof` writes that form and
:func:`check_proof` reads it back, verifies both signatures and says what the pair proves, or
why it proves nothing. Since session 39 a vote on proof carries the same pair (``Drop.proof``;
since session 41 each message without a carried part of its own, its signed part alone: a
drop so is read ``bare``, ``envelope.py``'s *carried part*) and every fold refuses one whose
pair does not prove what the vote says (:func:`vote_unproven`, the one home of that rule,
asked by ``state._refuse_vote``). Pure: no clock, no I/O.

>>> check_proof(b"\\x90", game_id=bytes(32), roster=())
Traceback (most recent call last):
    ...
p2p_nertz.protocol.evidence.InvalidProofError: malformed: a proof is an array of two signed messages
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import msgpack  # type: ignore[import-untyped]

from p2p_nertz.errors import RemoteProtocolError, chained
from p2p_nertz.protocol.bodies import Beat, Drop, DropReason, parse_body
from p2p_nertz.protocol.envelope import (
    MAX_VOTE_SIZE,
    InvalidMessageError,
    Kind,
    Message,
    decode_message,
)
from p2p_nertz.protocol.identity import PeerId

__all__ = [
    "PROOF_NOTE",
    "InvalidProofError",
    "Proof",
    "ProofKind",
    "ProofProblem",
    "check_proof",
    "contradicts",
    "encode_proof",
    "vote_unproven",
]

PROOF_NOTE = "proof"
"""The name of the log note that holds a proof (docs/log-format.md §5)."""


class ProofKind(enum.StrEnum):
    """What a proof shows."""

    EQUIVOCATION = "equivocation"
    """Two different signed events with one author and seq."""
    CLOCK_LIE = "clock_lie"
    """A beat timed ``L`` with head ``h``, and an event of seq ``> h`` timed at or below ``L``."""


class ProofProblem(enum.StrEnum):
    """Why a would-be proof proves nothing (a stable code for machines)."""

    MALFORMED = "malformed"
    """Not an array of two messages in wire form."""
    UNVERIFIED = "unverified"
    """A message that does not decode or whose signature does not verify (or of another
    game, or by a key outside the roster)."""
    NO_CONTRADICTION = "no_contradiction"
    """Two good messages that do not contradict each other."""


class InvalidProofError(RemoteProtocolError, ValueError):
    """Raised by :func:`check_proof` for bytes that prove nothing, with the reason."""

    def __init__(self, problem: ProofProblem, detail: str) -> None:
        super().__init__(problem, detail)
        self.problem = problem
        self.detail = detail

    def __str__(self) -> str:
        return f"{self.problem.value}: {self.detail}"


@dataclass(frozen=True, slots=True)
class Proof:
    """A verified proof of cheating.

    Attributes:
        kind: what it proves.
        author: the cheater's peer id.
        seq: the event's seq (an equivocation: the forked seq; a lie: the event timed below
            the beat's clock).
        first: an equivocation: one version; a lie: the beat.
        second: the other version; a lie: the event.
        head: a lie: the head the beat announced (the lie covers seqs ``head + 1 .. seq``:
            along a chain, clocks increase, so each of them is timed below the beat too).
    """

    kind: ProofKind
    author: PeerId
    seq: int
    first: Message
    second: Message
    head: int = 0

    @property
    def span(self) -> tuple[int, int]:
        """The first and last seq of the author's feed at which this proves it cheated (what a
        vote's ``fork_seq`` may name): an equivocation, its seq; a lie, ``head + 1 .. seq``."""
        if self.kind is ProofKind.EQUIVOCATION:
            return (self.seq, self.seq)
        return (self.head + 1, self.seq)


def encode_proof(first: bytes, second: bytes) -> bytes:
    """The data of a ``proof`` note: the two signed messages, as received (a lie: beat first).

    >>> encode_proof(b"a", b"b")
    b'\\x92\\xc4\\x01a\\xc4\\x01b'
    """
    return bytes(msgpack.packb([bytes(first), bytes(second)], use_bin_type=True))


def contradicts(beat_lamport: int, head_seq: int, event_seq: int, event_lamport: int) -> bool:
    """Whether a beat timed ``beat_lamport`` announcing head ``head_seq`` and an event of the same
    author are a lie about time (docs/protocol.md §9.4): the beat said nothing of the author's
    would come at or below its clock past its head.

    >>> contradicts(40, 6, 7, 40), contradicts(40, 6, 7, 41), contradicts(40, 7, 7, 12)
    (True, False, False)
    """
    return event_seq > head_seq and event_lamport <= beat_lamport


def check_proof(
    data: bytes, *, game_id: bytes, roster: Collection[bytes], seats: int | None = None
) -> Proof:
    """Verify the data of a ``proof`` note: both signatures, and the contradiction.

    Args:
        data: the note's data.
        game_id: the game; a message of another game proves nothing here.
        roster: the members' peer ids.
        seats: the number of seats (for the beat's body); the roster's size by default.

    Raises:
        InvalidProofError: the bytes prove nothing (the reason says why). Nothing else.
    """
    try:
        pair = msgpack.unpackb(
            data,
            raw=False,
            max_bin_len=MAX_VOTE_SIZE,  # (a fork of a drop too: §13)
            max_str_len=0,
            max_array_len=2,
            max_map_len=0,
            max_ext_len=0,
        )
    except Exception as exc:  # any bytes at all: msgpack raises several kinds
        raise chained(
            InvalidProofError(ProofProblem.MALFORMED, "a proof is an array of two signed messages"),
            exc,
        )
    if not (isinstance(pair, list) and len(pair) == 2 and all(type(w) is bytes for w in pair)):
        raise InvalidProofError(
            ProofProblem.MALFORMED, "a proof is an array of two signed messages"
        )
    return check_pair(pair[0], pair[1], game_id=game_id, roster=roster, seats=seats)


def check_pair(
    first: bytes,
    second: bytes,
    *,
    game_id: bytes,
    roster: Collection[bytes],
    seats: int | None = None,
) -> Proof:
    """:func:`check_proof` of the pair itself (a vote's ``proof``): both signatures, and the
    contradiction.

    Raises:
        InvalidProofError: the pair proves nothing (the reason says why). Nothing else.
    """
    pair = (first, second)
    messages: list[Message] = []
    for index, wire in enumerate(pair):
        try:
            # (bare: a drop's signed part alone proves what its author signed, session 41)
            messages.append(decode_message(wire, game_id=game_id, roster=roster, bare=True))
        except InvalidMessageError as exc:
            raise chained(
                InvalidProofError(
                    ProofProblem.UNVERIFIED, f"its message {index + 1} is refused: {exc}"
                ),
                exc,
            )
    a, b = messages
    if a.author != b.author:
        raise InvalidProofError(
            ProofProblem.NO_CONTRADICTION, "its two messages are by different authors"
        )
    if a.is_event and b.is_event:
        if a.seq != b.seq:
            raise InvalidProofError(
                ProofProblem.NO_CONTRADICTION,
                f"two events with different seqs ({a.seq}, {b.seq}) are no equivocation",
            )
        if a.id == b.id:
            raise InvalidProofError(
                ProofProblem.NO_CONTRADICTION, f"the same event {a.seq} twice is no equivocation"
            )
        return Proof(ProofKind.EQUIVOCATION, a.author, a.seq, a, b)
    beat, event = (b, a) if a.is_event else (a, b)
    if event.is_event and beat.kind in (Kind.BEAT, Kind.ACK):
        n = len(roster) if seats is None else seats
        try:
            body = parse_body(beat.kind, beat.body, n)
        except ValueError as refused:  # (not ``exc``: compiled, one name is one type, above's)
            raise chained(
                InvalidProofError(
                    ProofProblem.UNVERIFIED, f"its beat has a malformed body: {refused}"
                ),
                refused,
            )
        assert isinstance(body, Beat)
        if not contradicts(beat.lamport, body.head_seq, event.seq, event.lamport):
            raise InvalidProofError(
                ProofProblem.NO_CONTRADICTION,
                f"a beat timed {beat.lamport} with head {body.head_seq} and event {event.seq} "
                f"timed {event.lamport} agree",
            )
        return Proof(ProofKind.CLOCK_LIE, event.author, event.seq, beat, event, body.head_seq)
    raise InvalidProofError(
        ProofProblem.NO_CONTRADICTION,
        f"a {a.kind.name.lower()} and a {b.kind.name.lower()} prove nothing together",
    )


#: Verdicts of :func:`vote_unproven` by (game, proof, target, fork seq): a vote is
#: folded again at every refold, and two signatures cost ~0.3 ms. A pure function's memo
#: (the answer depends on its key alone), bounded.
_VERDICTS: dict[tuple[bytes, tuple[bytes, ...], bytes, int], str] = {}
_VERDICTS_MAX = 4096


def vote_unproven(body: Drop, *, game_id: bytes, roster: Sequence[bytes], seats: int) -> str:
    """Why the vote on proof ``body`` proves nothing ("" if its proof stands): the one rule of
    every fold (docs/protocol.md §9.2, *a vote on proof carries its proof*, session 39).

    Its ``proof`` must verify (:func:`check_pair`: two messages of this game signed by
    members, that contradict each other), be the target member's (``roster[body.seat]``),
    and prove a fault at the vote's ``fork_seq`` (:attr:`Proof.span`: an equivocation its
    seq, a lie about time ``head + 1 .. seq``). The ids the vote quotes are not compared with
    the proof's versions: a forked member may have signed more than two, and the quoted ids
    are weighed against the member's counted events by the rules of the ids
    (``roster.contradicts``, ``roster.unsigned_id``, a disputed seq cutting nothing).

    >>> vote_unproven(Drop((0, 0), 1, 0, DropReason.EQUIVOCATION, 1), game_id=bytes(32),
    ...               roster=(bytes(32), bytes(32)), seats=2)
    'malformed: a vote on proof carries two signed messages'
    """
    if body.reason is not DropReason.EQUIVOCATION:
        return ""
    if len(body.proof) != 2:
        return "malformed: a vote on proof carries two signed messages"
    key = (game_id, body.proof, bytes(roster[body.seat]), body.fork_seq)
    known = _VERDICTS.get(key)
    if known is None:
        known = _unproven(body, game_id=game_id, roster=roster, seats=seats)
        if len(_VERDICTS) >= _VERDICTS_MAX:
            _VERDICTS.clear()
        _VERDICTS[key] = known
    return known


def _unproven(body: Drop, *, game_id: bytes, roster: Sequence[bytes], seats: int) -> str:
    try:
        proof = check_pair(*body.proof, game_id=game_id, roster=roster, seats=seats)
    except InvalidProofError as exc:
        return str(exc)
    if proof.author != roster[body.seat]:
        return f"its proof is of another member than seat {body.seat}"
    low, high = proof.span
    if not low <= body.fork_seq <= high:
        named = f"event {low}" if low == high else f"events {low} to {high}"
        return f"its proof is of {named}, not of event {body.fork_seq}"
    return ""
