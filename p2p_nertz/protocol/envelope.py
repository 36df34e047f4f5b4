"""The signed message envelope of the peer protocol: bytes to :class:`Message` and back.

Theory of operation
===================
Every message between peers is one signed envelope (DESIGN.md §2). This module is the codec and
nothing else: it does no I/O, keeps no state, and knows nothing of feeds, clocks or the lake.
:func:`encode_message` packs and signs; :func:`decode_message` checks and verifies. A local
message takes the same path as a remote one: the core encodes it, then decodes its own bytes.

What the codec may remember between calls, the messages it parsed and the signatures it
verified, is an :class:`EnvelopeCache` that the caller owns and passes in (``cache=``): a peer
holds one, a simulation one for all its peers, an audit one for all its passes. Without one,
every call parses and verifies. (At module level are only idle msgpack packers, which change
nothing any call returns.)

Wire format (protocol versions 9 and 10)
--------------------------------------
A message is a single byte string (one ZeroMQ frame, one log record): the msgpack array of two
bin values ``[payload, signature]``, or, for a ``drop`` that carries a proof, of three
``[payload, signature, carried]`` (below, *the carried part*). ``payload`` is itself the
msgpack encoding of an 8-array with fixed positions; ``signature`` is the 64-byte Ed25519
signature by ``author`` of ``SIGNATURE_DOMAIN + payload`` (the tag ``b"p2p-nertz/v1/msg\\0"``
keeps these signatures from being valid for anything else the same key signs). The message id is
``SHA-256(payload + signature)``.

The carried part (session 41)
-----------------------------
A vote on proof carries two signed messages of the member it accuses (docs/protocol.md §9.2),
up to ~8 KB: signed inline, a fork of such a vote could not be proven by any vote (its two
versions do not fit one ``drop``; a vote on that would carry two votes, and so on). So the
proof is not signed itself: the author signs its digest, ``SHA-256(CARRIED_DOMAIN +
carried)``, as the body's last element, and the wire carries ``carried`` (the canonical
msgpack of one array) third, beside the signature. The id and the signature cover the
payload alone, and :attr:`Message.signed_wire` (``[payload, signature]``, at most
:data:`MAX_MESSAGE_SIZE` for every kind) is what a proof of a fork of the vote carries: two
of them fit one. Decoding checks the digest and gives the body with the carried array in
the digest's place, as a :class:`Carried` (so a body parser tells it from an array signed
inline); :attr:`Message.wire` is the whole message, as logged and relayed. A drop whose body
names a carried part (its last element a ``bin`` of 32 bytes) without it is ``malformed``
(anyone could strip one: it says nothing of its author), but for :func:`decode_message`'s
``bare=True``, which proofs use. Only a ``drop`` carries a part.

===  ========  ===============================================================================
pos  field     value
===  ========  ===============================================================================
0    version   int: :data:`PROTOCOL_VERSION` (9) in a game dealt by commit and reveal,
               :data:`SHARES_VERSION` (10) in a game of the dealerless shuffle
1    game_id   bin, 32 bytes: the game the message belongs to (no replay across games)
2    author    bin, 32 bytes: the author's peer id (raw Ed25519 public key), who signs
3    seq       int: events 1, 2, 3... in the author's feed, no gaps; beats 0
4    prev      bin 32 (id of the author's event ``seq - 1``) or nil (event 1, and beats)
5    lamport   int: the author's Lamport clock after its ``+1`` for this send (DESIGN.md §3)
6    kind      int: the :class:`Kind` wire code below
7    body      any bounded msgpack value; its schema is per kind (below)
===  ========  ===============================================================================

A game's envelopes all carry its one version, fixed by its spec
(:attr:`~p2p_nertz.protocol.spec.GameSpec.wire_version`, docs/shuffle.md §10.6): a peer of the
game refuses the others as ``bad_version``. The versions differ only in their kinds (and in what
the move and claim bodies may carry): version 10 defines the kinds of the shuffle (12-17) and
the beats of a turn-up's shares (67, 68: docs/shuffle.md §10.14), which version 9 does not
(``unknown_kind``). :func:`defined_kinds` says which kinds a version defines; the audit reads a
game's logs at its one version
(:attr:`GameSpec.read_versions <p2p_nertz.protocol.spec.GameSpec.read_versions>`).

``seq`` and ``lamport`` are ints in ``[0, 2**63)``. Payload and framing must be the minimal
("canonical") msgpack encoding, as msgpack-python writes it, so one message has exactly one byte
form: the signature covers the bytes actually received, and a decoded message re-encodes to
them (checked, not assumed).

Kinds
-----
Codes 1-63 are **events**: chained in the author's feed, logged and replayed. Codes 64-127 are
**beats**: signed but not chained (``seq`` 0, ``prev`` nil); they carry the author's clock and
what it holds, and drive liveness, stability and gap repair.

====  ======  =============================================================================
code  kind    meaning
====  ======  =============================================================================
1     join    the author accepts a proposed game (roster, Rules): DESIGN.md §5.1
2     ready   the author is ready to start the round
3     commit  the fair deal's commitments ``H(secret)``, ``H(nonce)``: §5.2
4     reveal  a nonce (after all commits are final) or, after the round, the secret: §5.2, §5.6
5     move    a tableau move (draw, turn over, work-pile move, rotate): §5.3
6     claim   a card played to a foundation (foundation, height, card, source): §4
7     stuck   the author has no legal move (withdrawn by its next move): §5.4
8     nerts   the author calls Nerts: §5.5
9     result  the author's lake digest and scores for the round: §5.6
10    drop    a vote to drop a silent member, with the last seq held: §6
11    leave   the author leaves the game
12    deck_key     a shuffle game's round key, its proof and VSS dealing: docs/shuffle.md §8
13    deck_stage   one stage of the pipelined shuffle of one deck
14    deck_shares  decryption shares of the positions turned up
15    deck_open    the author's round secret, once play is over
16    deck_complain  the author's VSS share from a dealer does not open or check
17    deck_answer    the dealer's answer to a complaint: the share in the clear
64    beat    heartbeat: Lamport clock, feed head, highest contiguous seq held per author: §2
65    ack     a beat sent at once in answer to a received event (coalesced); same body as beat
66    want    gap repair: "send me author A's events from seq i to j" (any holder answers)
67    deck_reveal  a turn-up's shares, outside the feed: docs/shuffle.md §10.14 (version 10)
68    deck_want    "send me these shares of the positions turned up" (any holder answers)
====  ======  =============================================================================

The **bodies** are defined by later layers (the round state machine, the lake), which register a
validator per kind (see :data:`BodyValidator`); this module only bounds them: a body is nil,
bool, int, str, bin, an array, or a map whose keys are all str or all bin, nested at most
:data:`MAX_BODY_DEPTH` deep. No floats (nothing in the game needs them, and NaN is not even
equal to itself) and no extension types.

Decoding
--------
:func:`decode_message` checks, in this order, so that cheap checks guard expensive ones and
nothing looks at a field before it is known to be well formed:

1. size: at most :data:`MAX_VOTE_SIZE` bytes (``oversize``);
2. framing: one msgpack value within hard limits, ``[bin, bin]`` or ``[bin, bin, bin]``,
   64-byte signature, canonical (``malformed``, ``non_canonical``); the signed part at most
   :data:`MAX_MESSAGE_SIZE` bytes (``oversize``);
3. payload: an array whose version is one this codec reads (``bad_version``; checked before
   the length, which another version may change), then exact length, field types and ranges,
   a peer id that can sign, the chaining convention of the kind, a kind its version defines
   (``malformed``, ``unknown_kind``), bounded body (``bad_body``), canonical encoding
   (``non_canonical``); a carried part only on a ``drop``, matching its digest, one canonical
   array (``malformed``, ``non_canonical``), and a drop naming one carrying it;
4. the caller's context: the game's version, game id and roster, when given (``bad_version``,
   ``wrong_game``, ``unknown_author``);
5. the signature over the received payload bytes (``bad_signature``);
6. the kind's body validator, if one is registered (``bad_body``; the signed message is
   attached as :attr:`InvalidMessageError.evidence`: it proves what the author sent).

Every rejection is an :class:`InvalidMessageError` (a
:class:`~p2p_nertz.errors.RemoteProtocolError`) with a :class:`RejectReason`. For any input
bytes, decoding returns a :class:`Message` or raises that, nothing else (tests fuzz this).

>>> from p2p_nertz.protocol.identity import Identity
>>> alice = Identity.generate(seed=bytes(32))
>>> game = bytes(range(32))
>>> wire = encode_message(
...     alice, game_id=game, seq=1, prev=None, lamport=1, kind=Kind.JOIN, body={"name": "Alice"}
... )
>>> len(wire)
155
>>> message = decode_message(wire, game_id=game, roster={alice.peer_id})
>>> message.kind, message.seq, message.body["name"]
(<Kind.JOIN: 1>, 1, 'Alice')
>>> decode_message(wire[:-1] + bytes([wire[-1] ^ 1])).seq
Traceback (most recent call last):
...
p2p_nertz.protocol.envelope.InvalidMessageError: bad_signature: the signature does not verify
"""

from __future__ import annotations

import enum
import hashlib
import itertools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, NewType, TypeAlias

import msgpack  # type: ignore[import-untyped]

from p2p_nertz.errors import LocalProtocolError, RemoteProtocolError, chained
from p2p_nertz.fifo import Fifo
from p2p_nertz.protocol.carried import Carried
from p2p_nertz.protocol.identity import (
    PEER_ID_SIZE,
    SIGNATURE_SIZE,
    Identity,
    PeerId,
    fingerprint,
    is_valid_peer_id,
    verify,
)
from p2p_nertz.slots import quick_init

__all__ = [
    "GAME_ID_SIZE",
    "MAX_BODY_DEPTH",
    "MAX_COUNTER",
    "MAX_MESSAGE_SIZE",
    "MAX_VOTE_SIZE",
    "MESSAGE_ID_SIZE",
    "PROTOCOL_VERSION",
    "PROTOCOL_VERSIONS",
    "SHARES_KINDS",
    "SHARES_VERSION",
    "SHUFFLE_KINDS",
    "SIGNATURE_DOMAIN",
    "Body",
    "BodyValidator",
    "CARRIED_DIGEST_SIZE",
    "CARRIED_DOMAIN",
    "Carried",
    "EnvelopeCache",
    "InvalidMessageError",
    "Kind",
    "Message",
    "MessageId",
    "RejectReason",
    "decode_message",
    "defined_kinds",
    "encode_message",
    "looks_like_beat",
    "looks_like_share_beat",
    "decode_unverified",
    "peek_beat",
    "verify_batch",
]

PROTOCOL_VERSION: Final = 9
"""The version of the wire protocol of a game dealt by commit and reveal, position 0 of every
payload. Version 2 (issue 18): an event's frontier names the id of each event it counts, so
every event counts as an ack. Version 5 (session 39): a vote to drop a member on reason
*equivocation* carries its proof, the two signed events (docs/protocol.md §5.2, §9.2).
Version 7 (session 41): a ``drop`` may be :data:`MAX_VOTE_SIZE` bytes (session 40's larger
vote on proof, which a peer of version 5 refuses as ``oversize``; docs/protocol.md §4.2).
Version 9 (session 42): a vote on proof names the latest event of its member's feed its author
took past what it counts (``took``), which the leap bound reads (docs/protocol.md §5.3)."""

SHARES_VERSION: Final = 10
"""The version of the wire protocol of a game of the dealerless shuffle (docs/shuffle.md §8,
§10.6, §10.14): version 9 with the shuffle's kinds (12-17), the beats of a turn-up's shares
(67, 68), and a move or claim body that may carry an opening. Session 42: 10, the vote on
proof of version 9 (8 from session 41, 6 from session 39; 4 before, 3 before session 20)."""

PROTOCOL_VERSIONS: Final = (PROTOCOL_VERSION, SHARES_VERSION)
"""The versions this codec reads and writes (a game's envelopes carry one of them). Those of
earlier sessions are not read (``bad_version``): 1 (before issue 18); 2, 3 and 4, whose
vote on reason *equivocation* carried no proof; 5 and 6, whose ``drop`` was at most
:data:`MAX_MESSAGE_SIZE`; 7 and 8, whose vote on proof named nothing its author took past what
it counts (docs/protocol.md §4.1)."""

SIGNATURE_DOMAIN: Final = b"p2p-nertz/v1/msg\0"
"""The tag prefixed to the payload bytes before signing (domain separation)."""

CARRIED_DOMAIN: Final = b"p2p-nertz/v1/carried\0"
"""The tag prefixed to a carried part's bytes before hashing it into its digest."""

CARRIED_DIGEST_SIZE: Final = 32
"""The size of a carried part's digest (SHA-256), the last element of the drop's body."""

MAX_MESSAGE_SIZE: Final = 4096
"""The largest message accepted, in bytes of wire form (framing, payload and signature); for
a ``drop`` with a carried part, of its signed part (:attr:`Message.signed_wire`)."""

MAX_VOTE_SIZE: Final = 3 * MAX_MESSAGE_SIZE
"""The largest ``drop`` accepted, its carried part included (session 40): a vote on proof
carries its proof, two signed messages of the member of up to :data:`MAX_MESSAGE_SIZE` each
(a fork of a shuffle's ``deck_stage`` is ~3.5 KB), beside a signed vote of at most ~1.1 KB
(eight seats, 64 quoted ids, every number at its widest: ``tests/test_vote_proof.py`` builds
it). Since session 41 the proof is carried beside the signed part, so any message, a drop
too, fits a proof (its signed part is at most :data:`MAX_MESSAGE_SIZE`). docs/protocol.md
§4.2."""

MAX_BODY_DEPTH: Final = 16
"""How deep arrays and maps may nest in a body (a scalar body has depth 0)."""

MAX_COUNTER: Final = 2**63 - 1
"""The largest ``seq`` or ``lamport`` (they fit a signed 64-bit integer)."""

GAME_ID_SIZE: Final = 32
"""Length in bytes of a game id."""

MESSAGE_ID_SIZE: Final = 32
"""Length in bytes of a message id (a SHA-256 digest)."""

_FIRST_BEAT_CODE: Final = 64

MessageId = NewType("MessageId", bytes)
"""A message id: ``SHA-256(payload + signature)``, 32 bytes."""

Body: TypeAlias = "bool | int | str | bytes | Sequence[Body] | Mapping[Any, Body] | None"
"""A message body: a bounded msgpack value. Decoded bodies use tuples and read-only mappings.

Map keys are all ``str`` or all ``bytes`` in one map (checked at run time). They are typed
``Any`` because mapping keys are invariant: a ``dict[PeerId, int]`` is no ``Mapping[bytes, ...]``.
"""

BodyValidator: TypeAlias = Callable[[Body], object]
"""Checks the body of one kind: raises (``ValueError`` by convention) if it is not acceptable.

Later layers pass ``{Kind.CLAIM: check_claim_body, ...}`` as ``validators`` to
:func:`decode_message`; kinds without a validator accept any body within the generic bounds.
The return value is ignored. Whatever a validator raises becomes a ``bad_body`` rejection, so a
bug in one cannot break the promise of the receive path (the original is chained as
``__cause__``).
"""


class Kind(enum.IntEnum):
    """The kind of a message; the value is its wire code (table in the module docstring)."""

    JOIN = 1
    READY = 2
    COMMIT = 3
    REVEAL = 4
    MOVE = 5
    CLAIM = 6
    STUCK = 7
    NERTS = 8
    RESULT = 9
    DROP = 10
    LEAVE = 11
    #: the dealerless shuffle's events (docs/shuffle.md §8.1): protocol version 10 only
    DECK_KEY = 12
    DECK_STAGE = 13
    DECK_SHARES = 14
    DECK_OPEN = 15
    DECK_COMPLAIN = 16
    DECK_ANSWER = 17
    BEAT = 64
    ACK = 65
    WANT = 66
    #: a turn-up's shares outside the feed (docs/shuffle.md §10.14): protocol version 10 only
    DECK_REVEAL = 67
    DECK_WANT = 68

    @property
    def is_event(self) -> bool:
        """Whether messages of this kind are events (chained in the author's feed).

        >>> Kind.CLAIM.is_event, Kind.BEAT.is_event
        (True, False)
        """
        return self < _FIRST_BEAT_CODE  # int comparison: no enum ``value`` lookup (hot path)


# Plain constants of the members read on hot paths (why: p2p_nertz/rules/moves.py).
KIND_JOIN = Kind.JOIN
KIND_MOVE = Kind.MOVE
KIND_CLAIM = Kind.CLAIM
KIND_NERTS = Kind.NERTS
KIND_DROP = Kind.DROP
KIND_BEAT = Kind.BEAT
KIND_ACK = Kind.ACK


class RejectReason(enum.StrEnum):
    """Why a message was rejected; the value is a short code for counters and logs."""

    OVERSIZE = "oversize"
    """Longer than :data:`MAX_MESSAGE_SIZE` (a ``drop``: :data:`MAX_VOTE_SIZE`)."""
    MALFORMED = "malformed"
    """Not msgpack within the limits, or a field of the wrong type, size or range."""
    NON_CANONICAL = "non_canonical"
    """Well formed, but not the one minimal msgpack encoding of its content."""
    BAD_VERSION = "bad_version"
    """A protocol version this codec does not read (:data:`PROTOCOL_VERSIONS`), or not the
    game's (the caller's ``version``)."""
    UNKNOWN_KIND = "unknown_kind"
    """A kind code that this version does not define."""
    WRONG_GAME = "wrong_game"
    """A game id other than the one expected (a replay from another game, or a stray)."""
    UNKNOWN_AUTHOR = "unknown_author"
    """An author outside the roster given."""
    BAD_SIGNATURE = "bad_signature"
    """The signature is not the author's over the payload received."""
    BAD_BODY = "bad_body"
    """The body exceeds the generic bounds, or its kind's validator refused it."""


class InvalidMessageError(RemoteProtocolError):
    """Raised by :func:`decode_message` for every message it rejects, with the reason.

    Attributes:
        reason: what was wrong, as a :class:`RejectReason`.
        detail: a sentence naming the offending field and value.
        evidence: the verified message when the rejection happened after its signature was
            checked (a body refused by its kind's validator): proof of what the author sent.
            ``None`` otherwise: the bytes then prove nothing about anyone.
    """

    reason: RejectReason
    detail: str
    evidence: Message | None

    def __init__(
        self, reason: RejectReason, detail: str, *, evidence: Message | None = None
    ) -> None:
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail
        self.evidence = evidence

    def __str__(self) -> str:
        return f"{self.reason.value}: {self.detail}"


@quick_init  # (one made per message received; session 25's _message, one text since 42)
@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Message:
    """A decoded, verified message: the envelope fields and the bytes they came from.

    Made by :func:`decode_message` (constructing one by hand skips every check). Two messages are
    equal when their ids are, and hash by id. The body is immutable: arrays are tuples, maps are
    read-only mappings.

    Attributes:
        version: the protocol version (one of :data:`PROTOCOL_VERSIONS` once decoded).
        game_id: the 32-byte game id.
        author: the author's peer id.
        seq: the position in the author's feed (events, from 1), or 0 (beats).
        prev: the id of the author's previous event, or ``None`` (first event, beats).
        lamport: the author's Lamport clock for this message.
        kind: the kind.
        body: the body, checked by the validator of its kind if one was given.
        payload: the exact payload bytes that were signed.
        signature: the 64-byte Ed25519 signature of ``SIGNATURE_DOMAIN + payload``.
        id: ``SHA-256(payload + signature)``.
        carried: the carried part's bytes (a ``drop`` on proof), or ``None``.
    """

    version: int
    game_id: bytes
    author: PeerId
    seq: int
    prev: MessageId | None
    lamport: int
    kind: Kind
    body: Body
    payload: bytes
    signature: bytes
    id: MessageId
    carried: bytes | None = None

    @property
    def wire(self) -> bytes:
        """The message in wire form: exactly the bytes that were decoded (framing is canonical),
        its carried part included."""
        if self.carried is None:
            return _pack((self.payload, self.signature))
        return _pack((self.payload, self.signature, self.carried))

    @property
    def signed_wire(self) -> bytes:
        """The message without its carried part, ``[payload, signature]``: what a proof of a
        fork of it carries (at most :data:`MAX_MESSAGE_SIZE`; the same id). The wire itself
        for a message that carries nothing."""
        return _pack((self.payload, self.signature))

    @property
    def is_event(self) -> bool:
        """Whether this message is an event of the author's feed (not a beat)."""
        return self.kind < _FIRST_BEAT_CODE  # as Kind.is_event, one property call fewer

    @property
    def sort_key(self) -> tuple[int, bytes, int]:
        """The key of the total order of events, ``(lamport, author, seq)`` (DESIGN.md §3)."""
        return (self.lamport, self.author, self.seq)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return self.id == other.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return (
            f"<Message {self.kind.name.lower()} by {fingerprint(self.author)} seq={self.seq}"
            f" lamport={self.lamport} id={self.id.hex()[:12]}>"
        )


class EnvelopeCache:
    """What :func:`encode_message` and :func:`decode_message` may remember between calls.

    Owned by the caller and passed in as ``cache``: a :class:`~p2p_nertz.protocol.peer.Peer`
    holds one (or shares the one it is given: the simulator gives all its peers one), an audit
    one for all its passes over the logs. Two bounded memos, oldest dropped first, each of
    answers that cannot change, so a hit returns what the work would have:

    * the ids of messages whose signature verified: the id hashes payload *and* signature, so
      a hit is the very same bytes, and verifying them again would give the same answer.
      Relays, duplicates and peers sharing a cache skip the expensive check;
    * parsed messages by their exact bytes: parsing is pure and a :class:`Message` is
      immutable, so the same bytes seen again (a duplicate, a relay, every peer of a
      simulation) parse once. Only verified messages are kept: strangers cannot fill it;
    * whether an author's peer id is a usable key (:func:`~.identity.is_valid_peer_id`, pure):
      checked once per message parsed, for the same few authors over and over.

    Args:
        size: how many entries each memo keeps at most.
    """

    __slots__ = ("_authors", "_keep_parsed", "_keep_verified", "_parsed", "_size", "_verified")

    def __init__(self, size: int = 16384) -> None:
        if size < 1:
            raise ValueError(f"an envelope cache keeps at least one entry, not {size}")
        self._size = size
        # (Fifo: the oldest dropped in O(1); a dict's own oldest is found by a walk that grows
        # with every drop, ~20 µs an insert once 16,384 are held: p2p_nertz/fifo.py.)
        self._verified: Fifo[bytes, None] = Fifo(size)
        self._parsed: Fifo[bytes, Message] = Fifo(size)
        self._authors: Fifo[bytes, bool] = Fifo(size)
        # Remember a message id verified, and a message parsed by its bytes (each one call).
        self._keep_verified: Callable[[bytes, None], None] = self._verified.keep
        self._keep_parsed: Callable[[bytes, Message], None] = self._parsed.keep

    def __repr__(self) -> str:
        return (
            f"<EnvelopeCache {len(self._parsed)} parsed, {len(self._verified)} verified"
            f" of {self._size}>"
        )

    def clear(self) -> None:
        """Forget everything: the next calls parse and verify for real (benchmarks)."""
        self._verified.clear()
        self._parsed.clear()
        self._authors.clear()

    def _usable_author(self, author: bytes) -> bool:
        """:func:`~.identity.is_valid_peer_id`, remembered (bounded, oldest dropped first)."""
        authors = self._authors
        usable = authors.get(author)
        if usable is None:
            usable = is_valid_peer_id(author)
            authors.keep(author, usable)
        return usable


def encode_message(
    identity: Identity,
    *,
    game_id: object,
    seq: object,
    prev: object,
    lamport: object,
    kind: object,
    body: Body,
    cache: EnvelopeCache | None = None,
    version: object = PROTOCOL_VERSION,
) -> bytes:
    """Pack and sign a message by ``identity``; return its wire form.

    Deterministic: Ed25519 signatures are, so the same identity and fields always give the same
    bytes. The result is checked as :func:`decode_message` would check it (short of the caller's
    context and the body validators), so nothing encoded here is rejected by a peer for its form.
    The fields are typed ``object``, checked here or by that check: one refusal on both builds
    (compiled, an annotation is checked first, by mypyc: tests/test_build_refusals.py).

    Args:
        identity: the author, who signs.
        game_id: the 32-byte game id (``bytes``).
        seq: events: the position in the author's feed, from 1; beats: 0 (an ``int``).
        prev: events: the id of the author's event ``seq - 1``, or ``None`` for ``seq`` 1;
            beats: ``None``.
        lamport: the author's Lamport clock for this send (an ``int``).
        kind: the kind (a :class:`Kind`).
        body: the body (lists and tuples, dicts and other mappings are accepted); a ``drop``'s
            may end in a :class:`Carried`, carried beside the payload and signed as its digest.
        cache: where to remember the message as parsed and verified, so that decoding these
            bytes with the same cache (the peer delivers its own events by the remote path)
            neither parses them again nor verifies; ``None``: nowhere.
        version: the game's protocol version (:attr:`GameSpec.wire_version
            <p2p_nertz.protocol.spec.GameSpec.wire_version>`).

    Raises:
        LocalProtocolError: a field is out of range or of the wrong type, the body is not a
            bounded msgpack value, or the message would exceed :data:`MAX_MESSAGE_SIZE` (a
            ``drop``'s signed part; with its carried part, :data:`MAX_VOTE_SIZE`).
    """
    if not isinstance(kind, Kind):
        raise LocalProtocolError(f"kind must be a Kind, got {kind!r}")
    if type(version) is not int or version not in PROTOCOL_VERSIONS:
        raise LocalProtocolError(f"protocol version {version!r} is not one of {PROTOCOL_VERSIONS}")
    carried = None
    if isinstance(body, list | tuple) and body and type(body[-1]) is Carried:
        if kind is not Kind.DROP:
            raise LocalProtocolError(f"a {kind.name.lower()} carries nothing beside its payload")
        try:
            carried = _pack(tuple(body[-1]))
        except (TypeError, ValueError, OverflowError) as exc:
            raise chained(LocalProtocolError(f"cannot encode the carried part: {exc}"), exc)
        body = (*body[:-1], _carried_digest(carried))
    fields = (version, game_id, identity.peer_id, seq, prev, lamport, kind.value, body)
    try:
        payload = _pack(fields)
    except (TypeError, ValueError, OverflowError) as exc:
        raise chained(
            LocalProtocolError(f"cannot encode the {kind.name.lower()} message: {exc}"), exc
        )
    signature = identity.sign(SIGNATURE_DOMAIN + payload)
    wire = _pack((payload, signature) if carried is None else (payload, signature, carried))
    try:
        message = _parse(wire, cache)
    except _Rejected as rejected:
        raise chained(
            LocalProtocolError(
                f"refusing to encode a {kind.name.lower()} message that peers would reject"
                f" ({rejected.reason.value}): {rejected.detail}"
            ),
            None,
        )
    if cache is not None:
        # Signed here, so its signature holds: decoding these bytes (the peer delivers its own
        # events by the remote path) need not parse them again nor verify (~0.15 ms) before the
        # claim can be sent.
        cache._keep_verified(message.id, None)
        cache._keep_parsed(wire, message)
    return wire


def verify_batch(
    datas: Iterable[bytes],
    *,
    game_id: bytes,
    roster: Collection[bytes],
    cache: EnvelopeCache,
) -> list[tuple[bytes, Message]]:
    """Parse and verify several messages in one go, remembering in ``cache`` those that pass.

    For each message, what :func:`decode_message` with the same ``game_id``, ``roster`` and
    ``cache`` checks (short of the body validators and the protocol version), and nothing is
    raised: a message that passes is kept as parsed and verified, so that decoding it next is
    a lookup; one that fails is left for :func:`decode_message` to refuse, with its reason. So
    calling this first changes no result of decoding. Why batch: the signatures are checked
    one after the other, with no other work between them; a verify costs ~25% more here when
    an audit's fold runs between two (libsodium's tables leave the CPU's caches).

    Returns:
        The messages kept by this call (not those the cache held already), with their bytes,
        in the order given: what :func:`decode_message` of those bytes returns, with the same
        arguments and no validators, if the message's version is the one asked for.
    """
    parsed = cache._parsed
    pending: list[tuple[bytes, Message]] = []
    kept: list[tuple[bytes, Message]] = []
    for data in datas:
        if type(data) is not bytes or data in parsed:
            continue
        try:
            message = _parse(data, cache)
        except _Rejected:
            continue
        if _bare(message):
            continue  # (decode_message refuses it)
        if message.game_id == game_id and message.author in roster:
            pending.append((data, message))
    verified = cache._verified
    for data, message in pending:
        if data in parsed:
            continue  # a second copy in this batch, kept already
        if message.id in verified or verify(
            message.author, message.signature, SIGNATURE_DOMAIN + message.payload
        ):
            cache._keep_verified(message.id, None)
            cache._keep_parsed(data, message)
            kept.append((data, message))
    return kept


def decode_message(
    data: bytes | bytearray | memoryview,
    *,
    game_id: object = None,
    roster: Collection[bytes] | None = None,
    validators: Mapping[Kind, BodyValidator] | None = None,
    cache: EnvelopeCache | None = None,
    version: int | Collection[int] | None = None,
    bare: bool = False,
) -> Message:
    """Check and verify one message in wire form; return it, or raise why it is rejected.

    Pure: the result depends only on the arguments, which are not modified (but for what
    ``cache`` remembers, which never changes a result). The checks and their order are in the
    module docstring.

    Args:
        data: the bytes received (``bytes``, ``bytearray`` or ``memoryview``).
        game_id: if given, the only game id accepted.
        roster: if given, the only authors accepted (peer ids).
        validators: body validators by kind; kinds missing here accept any bounded body.
        cache: the caller's memo of messages parsed and signatures verified (a hit skips the
            work, with the same result); ``None``: parse and verify.
        version: if given, the only protocol version accepted (the game's, docs/shuffle.md
            §10.6), or those accepted (``GameSpec.read_versions``); ``None``: any read here.
        bare: take a ``drop`` that names a carried part without it (:attr:`Message.signed_wire`,
            as a proof of a fork carries it; its body keeps the digest): for proofs only.

    Raises:
        InvalidMessageError: the message is rejected; for any bytes, nothing else is raised.
        TypeError: ``data`` is not bytes-like (a bug of the caller, not of the peer).
        LocalProtocolError: ``game_id`` is given but is not a game id.
    """
    # The usual case, bytes: nothing more to check, nothing to copy. Anything else is checked
    # here, alike on both builds (the compiled one checks the annotation first, the same way).
    if type(data) is not bytes and not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"decode_message needs bytes, got {type(data).__name__}")
    if game_id is not None and (type(game_id) is not bytes or len(game_id) != GAME_ID_SIZE):
        raise LocalProtocolError(f"the expected game id must be {GAME_ID_SIZE} bytes: {game_id!r}")
    try:
        if type(data) is bytes:
            raw = data  # (its size is checked by _parse; a memo hit was parsed, so within it)
        else:
            _check_size(memoryview(data).nbytes, MAX_VOTE_SIZE)  # before copying anything
            raw = bytes(data)
        message = cache._parsed.get(raw) if cache is not None else None
        cached = message is not None
        if message is None:
            message = _parse(raw, cache)
        if not bare and _bare(message):
            raise _Rejected(RejectReason.MALFORMED, _BARE)
        _check_context(message, version, game_id, roster)
        if cache is None or message.id not in cache._verified:
            if not verify(message.author, message.signature, SIGNATURE_DOMAIN + message.payload):
                raise _Rejected(RejectReason.BAD_SIGNATURE, "the signature does not verify")
            if cache is not None:
                cache._keep_verified(message.id, None)
        if not cached and cache is not None:
            cache._keep_parsed(raw, message)  # only verified ones: strangers cannot fill it
    except _Rejected as rejected:
        raise chained(InvalidMessageError(rejected.reason, rejected.detail), None)
    validator = validators.get(message.kind) if validators is not None else None
    if validator is not None:
        try:
            validator(message.body)
        except Exception as exc:  # any failure of a validator is the body's fault, see above
            raise chained(
                InvalidMessageError(
                    RejectReason.BAD_BODY,
                    f"{message.kind.name.lower()} body refused: {exc}",
                    evidence=message,
                ),
                exc,
            )
    return message


_BARE: Final = "the drop names a carried part by its digest and does not carry it"


def _check_context(
    message: Message,
    version: int | Collection[int] | None,
    game_id: object,
    roster: Collection[bytes] | None,
) -> None:
    """Check ``message`` against the caller's context of :func:`decode_message`, in order:
    the game's version, its game id, its roster (each if given)."""
    if version is not None and message.version != version and not _among(message, version):
        raise _Rejected(
            RejectReason.BAD_VERSION, f"version {message.version}, this game's is {version}"
        )
    if game_id is not None and message.game_id != game_id:  # (decode_message checked it)
        expected = game_id.hex() if isinstance(game_id, bytes) else repr(game_id)
        raise _Rejected(
            RejectReason.WRONG_GAME,
            f"game id {message.game_id.hex()[:16]}..., expected {expected[:16]}...",
        )
    if roster is not None and message.author not in roster:
        raise _Rejected(
            RejectReason.UNKNOWN_AUTHOR,
            f"author {fingerprint(message.author)} is not in the roster",
        )


def _bare(message: Message) -> bool:
    """Whether ``message`` is a ``drop`` naming a carried part it does not carry (its body's
    last element a ``bin`` of a digest's size)."""
    if message.carried is not None or message.kind is not Kind.DROP:
        return False
    body = message.body
    return (
        type(body) is tuple
        and len(body) > 0
        and type(body[-1]) is bytes
        and len(body[-1]) == CARRIED_DIGEST_SIZE
    )


def _carried_digest(carried: bytes) -> bytes:
    """The digest a ``drop``'s author signs of the part it carries."""
    return hashlib.sha256(CARRIED_DOMAIN + carried).digest()


def _among(message: Message, versions: int | Collection[int]) -> bool:
    """Whether ``message``'s version is one of ``versions`` (a collection, not one version)."""
    return type(versions) is not int and message.version in versions  # type: ignore[operator]


def decode_unverified(
    data: bytes,
    *,
    game_id: bytes,
    roster: Collection[bytes],
    cache: EnvelopeCache | None = None,
    version: int | Collection[int] | None = None,
) -> Message:
    """Every check of :func:`decode_message` but the signature's: a message that is only to be
    dropped unread if it proves nothing (a beat or ack older than one of its author's already
    taken, docs/protocol.md §7.2). Nothing it returns may change anything: a caller that would
    act on it decodes it with :func:`decode_message`. Never remembered as verified.

    Raises:
        InvalidMessageError: as :func:`decode_message`, but never ``bad_signature``.
    """
    try:
        raw = bytes(data)
        message = cache._parsed.get(raw) if cache is not None else None
        if message is None:
            message = _parse(raw, cache)
        if _bare(message):
            raise _Rejected(RejectReason.MALFORMED, _BARE)
        if version is not None and message.version != version and not _among(message, version):
            raise _Rejected(
                RejectReason.BAD_VERSION, f"version {message.version}, this game's is {version}"
            )
        if message.game_id != game_id:
            raise _Rejected(RejectReason.WRONG_GAME, f"game id {message.game_id.hex()[:16]}...")
        if message.author not in roster:
            raise _Rejected(
                RejectReason.UNKNOWN_AUTHOR,
                f"author {fingerprint(message.author)} is not in the roster",
            )
    except _Rejected as rejected:
        raise chained(InvalidMessageError(rejected.reason, rejected.detail), None)
    return message


def peek_beat(data: bytes) -> tuple[bytes, int] | None:
    """The author and Lamport time of a beat or an ack, from its bytes, unverified; ``None``
    for anything else (or garbage). A hint for ordering a burst's work (a beat superseded by a
    later one of its author is taken after it: :meth:`~.peer.Peer.feed_many`), never for a
    decision."""
    if not looks_like_beat(data):
        return None
    try:
        frame = _unpack(bytes(data), "the message")
        fields = _unpack(frame[0], "the payload")
        author, lamport, code = fields[2], fields[5], fields[6]
    except (_Rejected, TypeError, IndexError, KeyError):
        return None
    if code not in (Kind.BEAT.value, Kind.ACK.value) or type(lamport) is not int:
        return None
    if type(author) is not bytes:
        return None
    return author, lamport


class _Rejected(Exception):
    """Internal: a check failed; made into the caller's error type at the API boundary."""

    def __init__(self, reason: RejectReason, detail: str) -> None:
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail


def _pack(value: object) -> bytes:
    # msgpack.packb makes a Packer (and its 256 KiB buffer) per call, which costs more than
    # packing a message: reuse them. A Packer is not reentrant (_pack_default runs Python
    # code in the middle of a pack, where another thread may pack too), so each call takes
    # one from the pool (list.pop is atomic) or makes one, and puts it back. A Packer empties
    # its buffer when packing fails, so an error leaves nothing behind.
    try:
        packer = _PACKERS.pop()
    except IndexError:
        packer = msgpack.Packer(use_bin_type=True, default=_pack_default)
    try:
        packed: bytes = packer.pack(value)
    finally:
        _PACKERS.append(packer)
    return packed


_PACKERS: list[Any] = []  # idle Packers (as many as callers ever packed at once)


def _pack_default(value: object) -> object:
    # Decoded maps are read-only mappings; callers may pass any Mapping.
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} values cannot be encoded")


def _freeze_map(pairs: list[tuple[Any, Any]]) -> Mapping[Any, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        # Two values for one key: which one a reader keeps would be up to its library.
        raise ValueError("duplicate map key")
    return MappingProxyType(mapping)


def _refuse_ext(code: int, data: bytes) -> object:
    raise ValueError(f"extension type {code} is not allowed")


def _unpack(data: bytes, what: str) -> Any:
    """Decode exactly one msgpack value from untrusted ``data``, within the hard limits."""
    try:
        return msgpack.unpackb(
            data,
            use_list=False,
            raw=False,
            strict_map_key=True,
            object_pairs_hook=_freeze_map,
            ext_hook=_refuse_ext,
            max_str_len=MAX_VOTE_SIZE,
            max_bin_len=MAX_VOTE_SIZE,
            max_array_len=MAX_VOTE_SIZE,
            max_map_len=MAX_VOTE_SIZE,
            max_ext_len=0,
        )
    except Exception as exc:  # msgpack reports bad input with many unrelated exception types
        detail = str(exc) or type(exc).__name__
        raise chained(
            _Rejected(RejectReason.MALFORMED, f"{what} is not one msgpack value: {detail}"), None
        )


def _frame(data: bytes) -> tuple[bytes, bytes, bytes | None]:
    """The payload, the signature and the carried part (or ``None``) of a message's bytes, its
    frame checked: within the size limit, ``[payload: bin, signature: bin]`` or ``[payload,
    signature, carried: bin]``, a 64-byte signature, canonical, the signed part within
    :data:`MAX_MESSAGE_SIZE`.

    The frame is canonical exactly when it is 3 + h + len(payload) + 64 bytes, h the
    payload's bin header (2, 3 or 5 bytes: bin 8, 16 or 32, the narrowest that holds it): a
    fixarray (1 byte), that bin, and the signature as a bin 8 (2 bytes); and a carried part
    adds its own bin header and bytes. Every other header msgpack allows for these values
    (array 16/32, a wider bin) is longer, and unpacking used every byte, so the size decides
    what packing the frame again and comparing would.
    """
    size = len(data)
    if size > MAX_MESSAGE_SIZE:
        _check_size(size, MAX_VOTE_SIZE)
    frame = _unpack(data, "the message")
    if not (
        type(frame) is tuple
        and 2 <= len(frame) <= 3
        and type(frame[0]) is bytes
        and type(frame[1]) is bytes
        and (len(frame) == 2 or type(frame[2]) is bytes)
    ):
        raise _Rejected(
            RejectReason.MALFORMED,
            "the message is not [payload: bin, signature: bin] (nor with a carried part: bin)",
        )
    payload, signature = frame[0], frame[1]
    carried = frame[2] if len(frame) == 3 else None
    if len(signature) != SIGNATURE_SIZE:
        raise _Rejected(
            RejectReason.MALFORMED,
            f"the signature is {len(signature)} bytes, not {SIGNATURE_SIZE}",
        )
    signed = 3 + _bin_header(len(payload)) + len(payload) + SIGNATURE_SIZE
    whole = signed if carried is None else signed + _bin_header(len(carried)) + len(carried)
    if size != whole:
        raise _Rejected(RejectReason.NON_CANONICAL, "the framing is not minimal msgpack")
    if carried is not None:
        _check_size(signed, MAX_MESSAGE_SIZE)  # (without one, the size is checked once the kind is)
    return payload, signature, carried


def _bin_header(n: int) -> int:
    """The bytes of msgpack's narrowest bin header for ``n`` bytes (bin 8, 16 or 32)."""
    return 2 if n < 1 << 8 else 3 if n < 1 << 16 else 5


def _parse(data: bytes, cache: EnvelopeCache | None = None) -> Message:
    """Check everything that needs no context and no signature; return the unverified message
    (``cache``: where the check of the author's key is remembered)."""
    payload, signature, carried = _frame(data)
    fields = _unpack(payload, "the payload")
    if type(fields) is not tuple or not fields or type(fields[0]) is not int:
        raise _Rejected(
            RejectReason.MALFORMED, "the payload is not an array starting with a version"
        )
    if fields[0] not in _VERSIONS:
        raise _Rejected(
            RejectReason.BAD_VERSION, f"version {fields[0]}, expected one of {PROTOCOL_VERSIONS}"
        )
    if len(fields) != 8:
        raise _Rejected(RejectReason.MALFORMED, f"the payload has {len(fields)} fields, not 8")
    version, game_id, author, seq, prev, lamport, code, body = fields
    if not (  # every field sound, tested inline (the usual case: no call per field)
        type(game_id) is bytes
        and len(game_id) == GAME_ID_SIZE
        and type(author) is bytes
        and len(author) == PEER_ID_SIZE
        and type(seq) is int
        and 0 <= seq <= MAX_COUNTER
        and (prev is None or (type(prev) is bytes and len(prev) == MESSAGE_ID_SIZE))
        and type(lamport) is int
        and 0 <= lamport <= MAX_COUNTER
        and (is_valid_peer_id(author) if cache is None else cache._usable_author(author))
    ):
        # Something is wrong: the checks one by one, in their order, name the first fault.
        _check_fields(game_id, author, seq, prev, lamport)
    if type(code) is not int:
        raise _Rejected(RejectReason.MALFORMED, f"kind is {type(code).__name__}, not int")
    kind = _KINDS.get(code)
    if kind is None or code in _UNDEFINED[version]:
        raise _Rejected(
            RejectReason.UNKNOWN_KIND, f"kind code {code} is not defined in version {version}"
        )
    if code < _FIRST_BEAT_CODE:
        if seq < 1:
            raise _Rejected(RejectReason.MALFORMED, f"{kind.name.lower()} event with seq 0")
        if (prev is None) != (seq == 1):
            expected = "nil" if seq == 1 else "the previous event's id"
            raise _Rejected(
                RejectReason.MALFORMED, f"{kind.name.lower()} event {seq} needs prev {expected}"
            )
    elif seq != 0 or prev is not None:
        raise _Rejected(RejectReason.MALFORMED, f"{kind.name.lower()} needs seq 0 and prev nil")
    if carried is None:
        _check_size(len(data), MAX_MESSAGE_SIZE)
    elif code != Kind.DROP:
        raise _Rejected(
            RejectReason.MALFORMED, f"a {kind.name.lower()} carries nothing beside its payload"
        )
    _check_body(body)
    if _pack(fields) != payload:
        raise _Rejected(RejectReason.NON_CANONICAL, "the payload is not minimal msgpack")
    if carried is not None:
        body = _take_carried(body, carried)
    return Message(  # the fields in order (quick_init: one is made per message received)
        version,
        game_id,
        PeerId(author),
        seq,
        MessageId(prev) if prev is not None else None,
        lamport,
        kind,
        body,
        payload,
        signature,
        MessageId(hashlib.sha256(payload + signature).digest()),
        carried,
    )


def _take_carried(body: Body, carried: bytes) -> tuple[Body, ...]:
    """A drop's ``body`` with its carried part in the place of its digest, checked: the digest
    the author signed (the body's last element), one canonical array within the body's
    bounds."""
    if not (type(body) is tuple and body and type(body[-1]) is bytes):
        raise _Rejected(RejectReason.MALFORMED, "a carried part has no digest in the body")
    if _carried_digest(carried) != body[-1]:
        raise _Rejected(
            RejectReason.MALFORMED, "the carried part does not match the digest its author signed"
        )
    value = _unpack(carried, "the carried part")
    if type(value) is not tuple:
        raise _Rejected(RejectReason.MALFORMED, "the carried part is not an array")
    _check_body(value)
    if _pack(value) != carried:
        raise _Rejected(RejectReason.NON_CANONICAL, "the carried part is not minimal msgpack")
    return (*body[:-1], Carried(value))


def _check_fields(
    game_id: object, author: object, seq: object, prev: object, lamport: object
) -> None:
    """Check the fields of a payload between its version and its kind, in order."""
    _check_bin("game_id", game_id, GAME_ID_SIZE)
    _check_bin("author", author, PEER_ID_SIZE)
    if not is_valid_peer_id(author):
        raise _Rejected(RejectReason.MALFORMED, "author is not a usable Ed25519 public key")
    _check_counter("seq", seq)
    if prev is not None:
        _check_bin("prev", prev, MESSAGE_ID_SIZE)
    _check_counter("lamport", lamport)


_KINDS: Final = {int(kind): kind for kind in Kind}  # wire code -> kind, without Kind()'s lookup
_VERSIONS: Final = frozenset(PROTOCOL_VERSIONS)
SHUFFLE_KINDS: Final = frozenset(
    {
        Kind.DECK_KEY,
        Kind.DECK_STAGE,
        Kind.DECK_SHARES,
        Kind.DECK_OPEN,
        Kind.DECK_COMPLAIN,
        Kind.DECK_ANSWER,
    }
)
"""The kinds of the dealerless shuffle (docs/shuffle.md §8.1), defined by a shuffle game's
version (10) only: version 9 does not define them (``unknown_kind``)."""
_SHUFFLE_CODES: Final = frozenset(int(k) for k in SHUFFLE_KINDS)
SHARES_KINDS: Final = frozenset({Kind.DECK_REVEAL, Kind.DECK_WANT})
"""The beats of a turn-up's shares (docs/shuffle.md §10.14), defined by a shuffle game's version
(10) only: version 9 does not define them (``unknown_kind``)."""
_SHARES_CODES: Final = frozenset(int(k) for k in SHARES_KINDS)
#: The codes each version does not define (of those :class:`Kind` names).
_UNDEFINED: Final = {
    PROTOCOL_VERSION: _SHUFFLE_CODES | _SHARES_CODES,
    SHARES_VERSION: frozenset[int](),
}


def defined_kinds(version: int) -> frozenset[Kind]:
    """The kinds protocol ``version`` defines (one of :data:`PROTOCOL_VERSIONS`).

    >>> sorted(defined_kinds(10) - defined_kinds(9)) == sorted(SHUFFLE_KINDS | SHARES_KINDS)
    True
    """
    if version not in _VERSIONS:
        raise ValueError(f"version {version} is not one of {PROTOCOL_VERSIONS}")
    return frozenset(kind for kind in Kind if int(kind) not in _UNDEFINED[version])


_BIN_HEADER: Final = {0xC4: 2, 0xC5: 3, 0xC6: 5}  # msgpack bin 8/16/32 -> header bytes
_SEQ_AT: Final = 70  # seq's offset in a payload: fixarray, version, game_id and author before it


def looks_like_beat(data: bytes) -> bool:
    """Tell, from the bytes alone, whether ``data`` has the shape of a beat-class message.

    True when the payload's ``seq`` is 0 and its ``prev`` nil, at their fixed positions: a beat,
    ack or want. Nothing is decoded or verified, so this is a hint for ordering work (a runtime
    takes the events of a burst before its beats: docs/protocol.md §7.2), never for a
    decision: whatever it says, :func:`decode_message` still checks the message.

    >>> from p2p_nertz.protocol.identity import Identity
    >>> alice = Identity.generate(seed=bytes(32))
    >>> def signed(seq, prev, kind):
    ...     return encode_message(
    ...         alice, game_id=bytes(32), seq=seq, prev=prev, lamport=7, kind=kind, body=[]
    ...     )
    >>> looks_like_beat(signed(0, None, Kind.ACK)), looks_like_beat(signed(1, None, Kind.MOVE))
    (True, False)
    >>> looks_like_beat(b"not a message")
    False
    """
    if len(data) < 80 or data[0] != 0x92:
        return False
    header = _BIN_HEADER.get(data[1])
    if header is None:
        return False
    at = 1 + header + _SEQ_AT
    return data[at] == 0 and data[at + 1] == 0xC0


#: msgpack's unsigned integers past a fixint (uint 8/16/32/64): bytes, the marker included
_UINT_SIZE: Final = {0xCC: 2, 0xCD: 3, 0xCE: 5, 0xCF: 9}
_SHARE_BEAT_CODES: Final = frozenset({67, 68})  # Kind.DECK_REVEAL, Kind.DECK_WANT


def looks_like_share_beat(data: bytes) -> bool:
    """Tell, from the bytes alone, whether ``data`` has the shape of a share beat (a
    ``deck_reveal`` or ``deck_want``, docs/shuffle.md §10.14): a beat-class message
    (:func:`looks_like_beat`) whose kind, read past its Lamport time, is 67 or 68. A hint for
    ordering work, as :func:`looks_like_beat` is (a runtime takes a burst's share beats with its
    events: they are on a turn-up's path), never for a decision.

    >>> from p2p_nertz.protocol.identity import Identity
    >>> alice = Identity.generate(seed=bytes(32))
    >>> def signed(kind, lamport):
    ...     return encode_message(
    ...         alice, game_id=bytes(32), seq=0, prev=None, lamport=lamport, kind=kind, body=[],
    ...         version=SHARES_VERSION,
    ...     )
    >>> [looks_like_share_beat(signed(Kind.DECK_REVEAL, t)) for t in (7, 300, 2**40)]
    [True, True, True]
    >>> looks_like_share_beat(signed(Kind.ACK, 7)), looks_like_share_beat(b"not a message")
    (False, False)
    """
    if not looks_like_beat(data):
        return False
    at = 1 + _BIN_HEADER[data[1]] + _SEQ_AT + 2  # (seq 0 and prev nil: one byte each)
    size = 1 if data[at] <= 0x7F else _UINT_SIZE.get(data[at], 0)
    return size > 0 and len(data) > at + size and data[at + size] in _SHARE_BEAT_CODES


def _check_size(size: int, limit: int) -> None:
    if size > limit:
        raise _Rejected(RejectReason.OVERSIZE, f"{size} bytes, over the limit of {limit}")


def _check_bin(name: str, value: object, size: int) -> None:
    if type(value) is not bytes or len(value) != size:
        got = f"{len(value)} bytes" if type(value) is bytes else type(value).__name__
        raise _Rejected(RejectReason.MALFORMED, f"{name} must be {size} bytes, got {got}")


def _check_counter(name: str, value: object) -> None:
    if type(value) is not int or not 0 <= value <= MAX_COUNTER:
        raise _Rejected(
            RejectReason.MALFORMED, f"{name} must be an int in [0, 2**63), got {value!r}"
        )


_SCALARS: Final = frozenset({type(None), bool, int, str, bytes})
_TUPLES_ONLY: Final = frozenset({tuple})
_chain = itertools.chain


def _check_body(body: object) -> None:
    """Check the generic bounds of a decoded body (types and depth; sizes are bounded already)."""
    if type(body) in _SCALARS:
        return
    if type(body) is tuple:
        # The usual body, an array of scalars and arrays of scalars (an event's frontier: an
        # array of two such arrays), is within every bound: recognised with C loops, without
        # a call per array. Anything else takes the walk.
        for item in body:
            if type(item) not in _SCALARS and not (
                type(item) is tuple
                and (
                    _SCALARS.issuperset(map(type, item))
                    or (
                        _TUPLES_ONLY.issuperset(map(type, item))
                        and _SCALARS.issuperset(map(type, _chain(*item)))
                    )
                )
            ):
                break
        else:
            return
    _check_nested(body, 0)


def _check_nested(value: object, depth: int) -> None:
    """Check a body value that is not a scalar, at ``depth``, and everything in it.

    Depth first, last item first (the order the checks have always been made in, so the
    first fault found, which names the rejection, is the same). Scalars are skipped without
    a call: most bodies are an array of scalars and arrays of scalars.
    """
    if depth >= MAX_BODY_DEPTH:
        raise _Rejected(
            RejectReason.BAD_BODY, f"the body nests deeper than {MAX_BODY_DEPTH} levels"
        )
    items: Sequence[object]
    if type(value) is tuple:
        items = value
    elif type(value) is MappingProxyType:
        if len({type(key) for key in value}) > 1:
            raise _Rejected(RejectReason.BAD_BODY, "a body map mixes str and bin keys")
        items = tuple(value.values())
    else:
        raise _Rejected(
            RejectReason.BAD_BODY, f"{type(value).__name__} values are not allowed in a body"
        )
    for item in reversed(items):
        if type(item) not in _SCALARS:
            _check_nested(item, depth + 1)
