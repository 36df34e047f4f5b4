"""The body of every message kind: typed values, their msgpack form, and a strict parser.

Bodies are msgpack arrays with fixed positions. Cards and moves travel in the rules engine's
notation (``"5S"``, ``"W>L@0S"``), so a log is readable with any msgpack tool and a bug report
can quote it. Every **event** body starts with the author's *frontier*, ``[seqs, ids]``: for
each roster seat, the highest seq of that seat's feed the author holds (DESIGN.md §3; the
author's own entry is ``seq - 1``) and the first :data:`ID_PREFIX` bytes of the id of the event
at that seq (empty where the seq is 0). Since protocol version 2 an event counts as an ack: the
ids let a receiver credit what the author holds, as from a beat (docs/protocol.md §5.1, §7.1).

=======  ===========================================================================  ==========
kind     body                                                                         class
=======  ===========================================================================  ==========
join     ``[frontier]``                                                               Join
commit   ``[frontier, round, H(secret), H(nonce)]``                                   Commit
reveal   ``[frontier, round, what, value]`` (what: 0 nonce, 1 secret)                 Reveal
ready    ``[frontier, round, [nerts top, work pile 1, ...]]``: the dealt face-up      Ready
move     ``[frontier, round, move, [revealed cards](, opening)]``                     Play
claim    ``[frontier, round, move, card, [revealed cards](, opening)]`` (``src>L@fid``) Play
stuck    ``[frontier, round(, seat)]`` (seat: a pass on its behalf, ``P@<seat>``)       Play
nerts    ``[frontier, round]``                                                        Play
result   ``[frontier, round, lake digest, [score per seat]]``                         Result
drop     ``[frontier, seat, last seq counted, reason, fork seq, [id prefixes]]``      Drop
         (a vote on proof: ``[..., [id prefixes], [took seq, took id], [wire a, wire b]]``:
         what its author took past what it counts (version 9), then its proof)
leave    ``[frontier]``                                                               Leave
deck_*   ``[frontier, ...]``: a shuffle game's key, stage, shares, secret (kinds 12-15,    DeckEvent
         docs/shuffle.md §8.1, fields as :mod:`p2p_nertz.deck.wire` gives them)
beat     ``[head seq, head id or nil, [seq held per seat], [id prefix per seat]]``    Beat
ack      as beat                                                                      Beat
want     ``[seat, first seq, last seq]``                                              Want
deck_reveal ``[round, opening]``: a turn-up's shares, signed, never logged (version 4)  DeckReveal
deck_want   ``[round, [[member, deck, position], ...]]``: shares asked for (version 4)  DeckWant
=======  ===========================================================================  ==========

*Revealed cards* are the cards a move turns face up, so that everyone can follow every tableau
without seeing the hidden ones (DESIGN.md §5.3): a stock turn lists the cards it turns, in the
order they land on the waste; a move that takes the Nerts top card names the card under it.

The *opening* (a shuffle game's move or claim, docs/shuffle.md §10.14): the decryption shares
of the sealed cards the move needs, as :func:`p2p_nertz.deck.wire.encode_opening` gives them;
a last field present only when the move carries at least one share, so that a body without
one is the very bytes it always was.

:func:`parse_body` turns a decoded body into its class or raises ``ValueError`` with a sentence
saying what is wrong; the peer reports that as a ``bad_body`` rejection.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from p2p_nertz.deck.elgamal import CIPHER_BYTES, MAX_DECK
from p2p_nertz.deck.shares import Share
from p2p_nertz.deck.wire import (
    MAX_OPENING,
    DeckAnswer,
    DeckComplain,
    DeckKey,
    DeckOpen,
    DeckShares,
    DeckStage,
    decode_opening,
    encode_opening,
)
from p2p_nertz.errors import chained
from p2p_nertz.protocol.envelope import (
    KIND_ACK,
    KIND_BEAT,
    KIND_CLAIM,
    KIND_MOVE,
    MAX_MESSAGE_SIZE,
    Body,
    Carried,
    InvalidMessageError,
    Kind,
    Message,
    decode_message,
)
from p2p_nertz.rules import Card, Move, MoveKind
from p2p_nertz.rules.cards import HIDDEN, MAX_JOKERS, new_deck
from p2p_nertz.rules.moves import PILE_NERTS
from p2p_nertz.slots import quick_init

__all__ = [
    "fits",
    "open_noted",
    "EVENT_BODIES",
    "ID_PREFIX",
    "MAX_ROUND",
    "NOT_EVENTS",
    "SHARE_BEATS",
    "PROOF_MESSAGE_MAX",
    "VOTE_WINDOW",
    "Beat",
    "Commit",
    "DeckEvent",
    "DeckMessage",
    "DeckReveal",
    "DeckWant",
    "Drop",
    "DropReason",
    "EventBody",
    "Join",
    "Leave",
    "Play",
    "Ready",
    "Result",
    "Reveal",
    "RevealWhat",
    "Want",
    "encode_body",
    "held_ids",
    "kind_of",
    "parse_body",
]

MAX_ROUND = 10_000
#: Bytes of an event id that beats quote for each feed's last held event.
ID_PREFIX = 8
#: Most id prefixes a drop vote quotes of the member's feed (ending at its ``last_seq``).
VOTE_WINDOW = 64
_MAX_SEQ = 2**63 - 1
HASH_SIZE = 32


class _HasId(Protocol):
    @property
    def id(self) -> bytes: ...


class RevealWhat(enum.IntEnum):
    """What a reveal discloses."""

    NONCE = 0
    SECRET = 1


class DropReason(enum.IntEnum):
    """Why a member is voted out, or that a vote is withdrawn."""

    SILENT = 0
    EQUIVOCATION = 1
    WITHDRAW = 2  #: the voter hears the member again: its earlier vote no longer counts
    WITHHELD = 3  #: the member stays connected but withholds what the round waits for
    ABANDON = 4  #: two members left and one is gone: the other ends the game (DESIGN.md §6)
    REJOIN = 5  #: a dropped member asked to rejoin (at its event ``last_seq``): readmit it
    FLAPPING = 6  #: the member withdrew its votes too often: a flap fault (protocol/flaps.py)


@dataclass(frozen=True, slots=True)
class Join:
    """The author accepts the game (its id binds the roster and the rules)."""

    frontier: tuple[int, ...]
    #: Per seat, the first :data:`ID_PREFIX` bytes of the id of the event at ``frontier``'s
    #: seq (empty where it is 0): what the author holds, as a beat's ``held_ids`` (§5.1).
    frontier_ids: tuple[bytes, ...] = ()


@dataclass(frozen=True, slots=True)
class Commit:
    """The fair deal's commitments for a round (DESIGN.md §5.2)."""

    frontier: tuple[int, ...]
    round: int
    secret_hash: bytes
    nonce_hash: bytes
    #: Per seat, the first :data:`ID_PREFIX` bytes of the id of the event at ``frontier``'s
    #: seq (empty where it is 0): what the author holds, as a beat's ``held_ids`` (§5.1).
    frontier_ids: tuple[bytes, ...] = ()


@dataclass(frozen=True, slots=True)
class Reveal:
    """A round's nonce (once all commits are held) or secret (once the round is over)."""

    frontier: tuple[int, ...]
    round: int
    what: RevealWhat
    value: bytes
    #: Per seat, the first :data:`ID_PREFIX` bytes of the id of the event at ``frontier``'s
    #: seq (empty where it is 0): what the author holds, as a beat's ``held_ids`` (§5.1).
    frontier_ids: tuple[bytes, ...] = ()


@dataclass(frozen=True, slots=True)
class Ready:
    """The author's dealt face-up cards: the Nerts top card, then one per work pile."""

    frontier: tuple[int, ...]
    round: int
    visible: tuple[Card, ...]
    #: Per seat, the first :data:`ID_PREFIX` bytes of the id of the event at ``frontier``'s
    #: seq (empty where it is 0): what the author holds, as a beat's ``held_ids`` (§5.1).
    frontier_ids: tuple[bytes, ...] = ()


@quick_init
@dataclass(frozen=True, slots=True)
class Play:
    """A move of the author's during play: kinds move, claim, stuck and nerts.

    Attributes:
        card: for a claim, the card claimed (as it plays: a joker declared).
        reveals: the cards this move turns face up.
        opens: a shuffle game's move or claim: the shares of the sealed cards it needs
            (docs/shuffle.md §10.14), each share's ``seat`` its maker's member index.
    """

    frontier: tuple[int, ...]
    round: int
    move: Move
    card: Card | None = None
    reveals: tuple[Card, ...] = ()
    #: Per seat, the first :data:`ID_PREFIX` bytes of the id of the event at ``frontier``'s
    #: seq (empty where it is 0): what the author holds, as a beat's ``held_ids`` (§5.1).
    frontier_ids: tuple[bytes, ...] = ()
    opens: tuple[Share, ...] = ()


@dataclass(frozen=True, slots=True)
class Result:
    """The author's result for a round: the lake digest and each seat's round score."""

    frontier: tuple[int, ...]
    round: int
    digest: bytes
    scores: tuple[int, ...]
    #: Per seat, the first :data:`ID_PREFIX` bytes of the id of the event at ``frontier``'s
    #: seq (empty where it is 0): what the author holds, as a beat's ``held_ids`` (§5.1).
    frontier_ids: tuple[bytes, ...] = ()


@dataclass(frozen=True, slots=True)
class Drop:
    """A membership vote about ``seat``: drop it (silent, withheld, equivocation), withdraw
    such a vote, end a two-member game without it (abandon), or readmit it (rejoin).

    ``last_seq`` is the highest seq of the member's feed the voter counts (for a rejoin, the
    seq of the member's rejoin request). ``ids`` are the first :data:`ID_PREFIX` bytes of the
    ids of the voter's copies of the member's events ``last_seq - len(ids) + 1 .. last_seq``
    (``min(last_seq, VOTE_WINDOW)`` of them; none for a withdrawal): an id names the whole
    chain before it, so the votes say which chain each voter counts, and the fold keeps one
    (docs/protocol.md §9.2). For an equivocation, ``fork_seq`` is the seq the voter has proof
    the member signed twice; for a flap fault, the seq of the member's withdrawal that passed
    the limit (:mod:`p2p_nertz.protocol.flaps`).

    A vote on proof (*equivocation*) carries its ``proof``: the two signed messages that
    prove the fault (:func:`~p2p_nertz.protocol.evidence.encode_proof`'s pair; for a lie
    about time the beat first), each at most :data:`PROOF_MESSAGE_MAX` bytes, each without
    a carried part of its own (:attr:`Message.signed_wire`). Since session 41 the proof is
    the message's carried part (:class:`~p2p_nertz.protocol.envelope.Carried`: signed as its
    digest, beside the payload), so that a fork of the vote is proven by two signed parts of
    ~1.2 KB; a proof signed inline is refused. The schema wants it there and nowhere else;
    whether it proves what the vote says is the fold's to check
    (:func:`~p2p_nertz.protocol.evidence.vote_unproven`, session 39).

    A vote on proof also names what its author's clock took past what it counts
    (``took_seq``, ``took_id``: the latest event of the member's feed it holds past its
    frontier's entry, by seq and id prefix; ``0``, empty: none), which the leap bound reads
    (:func:`~p2p_nertz.protocol.feeds.took_time`, docs/protocol.md §5.3, session 42).
    """

    frontier: tuple[int, ...]
    seat: int
    last_seq: int
    reason: DropReason
    fork_seq: int = 0
    ids: tuple[bytes, ...] = ()
    #: Per seat, the first :data:`ID_PREFIX` bytes of the id of the event at ``frontier``'s
    #: seq (empty where it is 0): what the author holds, as a beat's ``held_ids`` (§5.1).
    frontier_ids: tuple[bytes, ...] = ()
    #: A vote on proof: the two signed messages that prove it (empty for any other reason).
    proof: tuple[bytes, ...] = ()
    #: A vote on proof: the seq of the latest event of the member's feed its author holds past
    #: what its frontier names of it (0: none), its clock having taken it (§5.3).
    took_seq: int = 0
    #: The first :data:`ID_PREFIX` bytes of that event's id (empty where ``took_seq`` is 0).
    took_id: bytes = b""

    @property
    def fork_id(self) -> bytes:
        """The id prefix of the version of the forked event this voter counts (empty if it
        does not count it, or it is outside the window)."""
        return self.id_at(self.fork_seq) if self.fork_seq else b""

    def id_at(self, seq: int) -> bytes:
        """The voter's id prefix of the member's event ``seq`` (empty outside the window)."""
        first = self.last_seq - len(self.ids) + 1
        return self.ids[seq - first] if first <= seq <= self.last_seq else b""


@dataclass(frozen=True, slots=True)
class Leave:
    """The author leaves the game."""

    frontier: tuple[int, ...]
    #: Per seat, the first :data:`ID_PREFIX` bytes of the id of the event at ``frontier``'s
    #: seq (empty where it is 0): what the author holds, as a beat's ``held_ids`` (§5.1).
    frontier_ids: tuple[bytes, ...] = ()


DeckMessage = DeckKey | DeckStage | DeckShares | DeckOpen | DeckComplain | DeckAnswer


@dataclass(frozen=True, slots=True)
class DeckEvent:
    """An event of a shuffle game's deal (docs/shuffle.md §8.1): the message of
    :mod:`p2p_nertz.deck.wire` after the frontier.

    The body parser checks every point, scalar and length; what depends on the round (its
    members, the deck size, the counts of a dealing) the fold checks. A share's ``seat`` (its
    maker's index among the round's members) is not on the wire: the parser leaves it 0, and
    the fold sets it from the event's author.
    """

    frontier: tuple[int, ...]
    message: DeckMessage
    #: Per seat, the first :data:`ID_PREFIX` bytes of the id of the event at ``frontier``'s
    #: seq (empty where it is 0): what the author holds, as a beat's ``held_ids`` (§5.1).
    frontier_ids: tuple[bytes, ...] = ()

    @property
    def round(self) -> int:
        """The round the message is of."""
        return self.message.round


@quick_init
@dataclass(frozen=True, slots=True)
class Beat:
    """A heartbeat or ack: the author's feed head and what it holds of every feed.

    ``held_ids`` names, for each seat, the first :data:`ID_PREFIX` bytes of the id of the last
    event held (empty when none): two peers holding different events under one seq (an author
    that equivocated) see it in each other's beats.
    """

    head_seq: int
    head_id: bytes | None
    held: tuple[int, ...]
    held_ids: tuple[bytes, ...] = ()


@dataclass(frozen=True, slots=True)
class Want:
    """Gap repair: ask for ``seat``'s events ``first``..``last``."""

    seat: int
    first: int
    last: int


@dataclass(frozen=True, slots=True)
class DeckReveal:
    """A beat of a shuffle game (docs/shuffle.md §10.14): shares of positions turned up in
    round ``round``, each ``seat`` its maker's member index (the sender may relay another's:
    a share proves itself). Signed, not chained, never logged."""

    round: int
    shares: tuple[Share, ...]


@dataclass(frozen=True, slots=True)
class DeckWant:
    """A beat of a shuffle game (docs/shuffle.md §10.14): the shares of round ``round`` its
    sender lacks, as ``(member, deck, position)`` (member indices): any holder answers with a
    :class:`DeckReveal`. Signed, not chained, never logged."""

    round: int
    wanted: tuple[tuple[int, int, int], ...]


EventBody = Join | Commit | Reveal | Ready | Play | Result | Drop | Leave | DeckEvent
#: The bodies of the messages that are not events, for ``isinstance`` (a tuple: ``Beat | Want``
#: would build a union object per event).
NOT_EVENTS = (Beat, Want, DeckReveal, DeckWant)
#: The bodies of a turn-up's share beats (version 4), for ``isinstance``.
SHARE_BEATS = (DeckReveal, DeckWant)
EVENT_BODIES: dict[Kind, type] = {
    Kind.JOIN: Join,
    Kind.COMMIT: Commit,
    Kind.REVEAL: Reveal,
    Kind.READY: Ready,
    Kind.MOVE: Play,
    Kind.CLAIM: Play,
    Kind.STUCK: Play,
    Kind.NERTS: Play,
    Kind.RESULT: Result,
    Kind.DROP: Drop,
    Kind.LEAVE: Leave,
    Kind.DECK_KEY: DeckEvent,
    Kind.DECK_STAGE: DeckEvent,
    Kind.DECK_SHARES: DeckEvent,
    Kind.DECK_OPEN: DeckEvent,
    Kind.DECK_COMPLAIN: DeckEvent,
    Kind.DECK_ANSWER: DeckEvent,
}
_DECK_KINDS: dict[type, Kind] = {
    DeckKey: Kind.DECK_KEY,
    DeckStage: Kind.DECK_STAGE,
    DeckShares: Kind.DECK_SHARES,
    DeckOpen: Kind.DECK_OPEN,
    DeckComplain: Kind.DECK_COMPLAIN,
    DeckAnswer: Kind.DECK_ANSWER,
}


# -- encoding -------------------------------------------------------------------------------
def encode_body(body: EventBody | Beat | Want | DeckReveal | DeckWant) -> list[Any]:
    """The msgpack form (a list) of a body.

    Raises:
        ValueError: an event body whose ``frontier_ids`` do not name one id per seat (they
            are filled in when the event is signed: :func:`held_ids`).
    """
    if isinstance(body, Beat | Want):
        if isinstance(body, Beat):
            return [body.head_seq, body.head_id, list(body.held), list(body.held_ids)]
        return [body.seat, body.first, body.last]
    if isinstance(body, DeckReveal):
        return [body.round, encode_opening(body.shares)]
    if isinstance(body, DeckWant):
        return [body.round, [list(w) for w in body.wanted]]
    if len(body.frontier_ids) != len(body.frontier):
        raise ValueError("an event's frontier names one id per seat (frontier_ids)")
    frontier = [list(body.frontier), list(body.frontier_ids)]
    if isinstance(body, Join | Leave):
        return [frontier]
    if isinstance(body, Commit):
        return [frontier, body.round, body.secret_hash, body.nonce_hash]
    if isinstance(body, Reveal):
        return [frontier, body.round, int(body.what), body.value]
    if isinstance(body, Ready):
        return [frontier, body.round, [str(c) for c in body.visible]]
    if isinstance(body, Play):
        head: list[Any] = [frontier, body.round]
        kind = body.move.kind
        if kind is MoveKind.PASS or kind is MoveKind.CALL:
            if body.opens:
                raise ValueError("a stuck or nerts body carries no opening")
            behalf = body.move.behalf
            return head if behalf is None else [*head, behalf]
        reveals = [str(c) for c in body.reveals]
        opening = [encode_opening(body.opens)] if body.opens else []
        if body.move.is_lake:
            assert body.card is not None
            return [*head, str(body.move), str(body.card), reveals, *opening]
        return [*head, str(body.move), reveals, *opening]
    if isinstance(body, Result):
        return [frontier, body.round, body.digest, list(body.scores)]
    if isinstance(body, Drop):
        fields = [frontier, body.seat, body.last_seq, int(body.reason), body.fork_seq]
        if body.reason is DropReason.EQUIVOCATION:
            took = [body.took_seq, body.took_id]
            return [*fields, list(body.ids), took, Carried(body.proof)]
        return [*fields, list(body.ids)]
    if isinstance(body, DeckEvent):
        return [frontier, *body.message.encode()]
    raise TypeError(f"not a body: {body!r}")


def held_ids(feeds: Sequence[Sequence[_HasId]], held: Sequence[int]) -> tuple[bytes, ...]:
    """The id prefixes that go with ``held`` (a frontier, or a beat's counts): per seat, the
    first :data:`ID_PREFIX` bytes of the id of the event at that seq in ``feeds`` (empty
    where the count is 0). The one rule for both, so that a receiver checks them alike."""
    return tuple(feeds[q][h - 1].id[:ID_PREFIX] if h else b"" for q, h in enumerate(held))


def kind_of(body: EventBody) -> Kind:
    """The message kind that carries an event body."""
    if isinstance(body, Play):
        kind = body.move.kind
        if kind is MoveKind.PASS:
            return Kind.STUCK
        if kind is MoveKind.CALL:
            return Kind.NERTS
        return Kind.CLAIM if body.move.is_lake else Kind.MOVE
    if isinstance(body, DeckEvent):
        return _DECK_KINDS[type(body.message)]
    for k, cls in EVENT_BODIES.items():
        if type(body) is cls:
            return k
    raise TypeError(f"not an event body: {body!r}")


# -- parsing --------------------------------------------------------------------------------
def _array(value: Body, length: int, what: str) -> tuple[Body, ...]:
    if not isinstance(value, tuple) or len(value) != length:
        raise ValueError(f"{what} must be an array of {length}")
    return value


def _int(value: Body, low: int, high: int, what: str) -> int:
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"{what} must be an integer in {low}..{high}, not {value!r}")
    return value


def _hash(value: Body, what: str) -> bytes:
    if type(value) is not bytes or len(value) != HASH_SIZE:
        raise ValueError(f"{what} must be {HASH_SIZE} bytes")
    return value


def _frontier(value: Body, seats: int) -> tuple[tuple[int, ...], tuple[bytes, ...]]:
    """An event's frontier, ``[seqs, ids]``: one seq per seat and the id prefix of the event
    at that seq (§5.1), checked as a beat's ``held`` and ``held_ids`` are."""
    if not isinstance(value, tuple) or len(value) != 2:
        raise ValueError("the frontier must be an array of 2: the seqs and their ids")
    seqs, ids = value
    return _held(seqs, ids, seats, "the frontier")


def _held(
    counts: Body, ids: Body, seats: int, what: str
) -> tuple[tuple[int, ...], tuple[bytes, ...]]:
    """One count per seat and the id prefix of the event at each count (none at 0): a
    frontier's, or a beat's ``held`` and ``held_ids``."""
    if not isinstance(counts, tuple) or len(counts) != seats:
        raise ValueError(f"{what} must list one seq per seat ({seats})")
    seqs = _seqs(counts, what)
    if not isinstance(ids, tuple) or len(ids) != seats:
        raise ValueError(f"{what} must list one id per seat ({seats})")
    for count, prefix in zip(seqs, ids, strict=True):
        if type(prefix) is not bytes or len(prefix) != (ID_PREFIX if count else 0):
            raise ValueError(f"an id of {what} is {ID_PREFIX} bytes (none for an empty feed)")
    # (Each item is checked just above: a decoded array is kept as it is.)
    return seqs, ids if type(ids) is tuple else tuple(ids)


def _seqs(value: tuple[Body, ...], what: str) -> tuple[int, ...]:
    """An array of seqs (of ``what``); a decoded one is returned as it is when it holds only
    seqs. (The words of an error are made only for an error: this runs once per event.)"""
    if type(value) is tuple:
        for v in value:
            if type(v) is not int or not 0 <= v <= _MAX_SEQ:
                break
        else:
            return value  # type: ignore[return-value]  # every item checked just above
    return tuple(_int(v, 0, _MAX_SEQ, f"a seq of {what}") for v in value)


# Every card a body can name, by its canonical spelling: a hit is a card that parses, is
# spelt canonically and is not hidden (what _card checks). A miss takes _card's way, which
# says what is wrong.
_CARD_TEXT: dict[str, Card] = {
    str(c): c
    for c in (
        *new_deck(MAX_JOKERS),
        *(
            Card(base.rank, base.suit, joker)
            for joker in range(1, MAX_JOKERS + 1)
            for base in new_deck()
        ),
    )
}


def _cards(value: Body, most: int, what: str) -> tuple[Card, ...]:
    if not isinstance(value, tuple) or len(value) > most:
        raise ValueError(f"{what} must be an array of at most {most} cards")
    cards = []
    for v in value:
        c = _CARD_TEXT.get(v) if type(v) is str else None
        cards.append(c if c is not None else _card(v, what))
    return tuple(cards)


def _card(v: Body, what: str) -> Card:
    if type(v) is not str or len(v) > 8:
        raise ValueError(f"{what}: not a card: {v!r}")
    c = Card.parse(v)  # NotationError is a ValueError
    if str(c) != v:
        raise ValueError(f"{what}: {v!r} is not the canonical spelling {str(c)!r}")
    if c is HIDDEN:
        raise ValueError(f"{what}: a revealed card cannot be hidden")
    return c


_NOT_ON_TABLEAU = (MoveKind.PASS, MoveKind.CALL)


def _round(value: Body) -> int:
    return _int(value, 1, MAX_ROUND, "the round")


def parse_body(
    kind: Kind, body: Body, seats: int
) -> EventBody | Beat | Want | DeckReveal | DeckWant:
    """Parse a decoded body of ``kind`` for a game of ``seats`` seats.

    Raises:
        ValueError: the body does not follow its kind's schema (the message says how).
    """
    parser = _PARSERS.get(kind)
    if parser is None:
        raise ValueError(f"no body schema for kind {kind.name.lower()}")
    return parser(body, seats)


def _parse_beat(body: Body, seats: int) -> Beat:
    head, head_id, held, held_ids = _array(body, 4, "a beat body")
    head_seq = _int(head, 0, _MAX_SEQ, "the head seq")
    if head_seq == 0:
        if head_id is not None:
            raise ValueError("an empty feed has no head id")
        hid = None
    else:
        hid = _hash(head_id, "the head id")
    counts, ids = _held(held, held_ids, seats, "what a beat holds")
    return Beat(head_seq, hid, counts, ids)


def _opening(
    body: Body, fields: int, what: str, seats: int
) -> tuple[tuple[Body, ...], tuple[Share, ...]]:
    """A move's or claim's ``fields`` fields and the opening after them, if any (its last
    field, present only when it carries a share: one body, one encoding)."""
    if isinstance(body, tuple):
        if len(body) == fields:
            return body, ()  # (what _array checks, without the call: the usual body)
        if len(body) == fields + 1:
            opens = decode_opening(body[fields], members=max(seats, 2), size=MAX_DECK)
            return body[:fields], opens
    return _array(body, fields, what), ()


def _parse_move(body: Body, seats: int) -> Play:
    (f, r, text, reveals), opens = _opening(body, 4, "a move body", seats)
    move = _move(text)
    if move.is_lake or move.kind in _NOT_ON_TABLEAU:
        raise ValueError(f"{move} is not a tableau move (lake moves are claims)")
    seqs, ids = _frontier(f, seats)
    return Play(seqs, _round(r), move, None, _cards(reveals, 3, "reveals"), ids, opens)


def _parse_claim(body: Body, seats: int) -> Play:
    (f, r, text, card_text, reveals), opens = _opening(body, 5, "a claim body", seats)
    move = _move(text)
    if not move.is_lake or move.foundation is None:
        raise ValueError(f"a claim is a lake move naming its foundation, not {move}")
    card = _CARD_TEXT.get(card_text) if type(card_text) is str else None  # (as _cards does)
    if card is None:
        card = _card(card_text, "the claimed card")
    if card.suit is None:
        raise ValueError("a claimed joker must be declared")
    if card.suit is not move.foundation.suit:
        raise ValueError(f"{card} cannot go on foundation {move.foundation}")
    if move.source is PILE_NERTS:
        revealed = _cards(reveals, 1, "reveals")
    else:
        revealed = _cards(reveals, 0, "reveals")
    seqs, ids = _frontier(f, seats)
    return Play(seqs, _round(r), move, card, revealed, ids, opens)


def _parse_join(body: Body, seats: int) -> Join:
    (f,) = _array(body, 1, "a join body")
    return Join(*_frontier(f, seats))


def _parse_leave(body: Body, seats: int) -> Leave:
    (f,) = _array(body, 1, "a leave body")
    return Leave(*_frontier(f, seats))


def _parse_commit(body: Body, seats: int) -> Commit:
    f, r, sh, nh = _array(body, 4, "a commit body")
    seqs, ids = _frontier(f, seats)
    return Commit(seqs, _round(r), _hash(sh, "H(secret)"), _hash(nh, "H(nonce)"), ids)


def _parse_reveal(body: Body, seats: int) -> Reveal:
    f, r, what, value = _array(body, 4, "a reveal body")
    seqs, ids = _frontier(f, seats)
    return Reveal(
        seqs,
        _round(r),
        RevealWhat(_int(what, 0, 1, "what is revealed")),
        _hash(value, "the revealed value"),
        ids,
    )


def _parse_ready(body: Body, seats: int) -> Ready:
    f, r, visible = _array(body, 3, "a ready body")
    cards = _cards(visible, 7, "the dealt face-up cards")
    if len(cards) < 5:
        raise ValueError("the dealt face-up cards are the Nerts top and 4 to 6 work piles")
    seqs, ids = _frontier(f, seats)
    return Ready(seqs, _round(r), cards, ids)


def _parse_stuck(body: Body, seats: int) -> Play:
    # (A third field only for a pass on a seat's behalf: an own pass is the bytes it was.)
    if isinstance(body, tuple) and len(body) == 3:
        f, r, behalf = body
        move = Move.pass_for(_int(behalf, 0, seats - 1, "the seat passed for"))
    else:
        f, r = _array(body, 2, "a stuck body")
        move = Move.pass_()
    seqs, ids = _frontier(f, seats)
    return Play(seqs, _round(r), move, frontier_ids=ids)


def _parse_nerts(body: Body, seats: int) -> Play:
    f, r = _array(body, 2, "a nerts body")
    seqs, ids = _frontier(f, seats)
    return Play(seqs, _round(r), Move.call(), frontier_ids=ids)


def _parse_result(body: Body, seats: int) -> Result:
    f, r, digest, scores = _array(body, 4, "a result body")
    if not isinstance(scores, tuple) or len(scores) != seats:
        raise ValueError(f"a result lists one score per seat ({seats})")
    seqs, ids = _frontier(f, seats)
    return Result(
        seqs,
        _round(r),
        _hash(digest, "the lake digest"),
        tuple(_int(s, -10_000, 10_000, "a score") for s in scores),
        ids,
    )


#: The votes that name the seq of the fault they prove (``Drop.fork_seq``).
_PROOF_VOTES = frozenset({DropReason.EQUIVOCATION, DropReason.FLAPPING})


def _parse_drop(body: Body, seats: int) -> Drop:
    on_proof = (
        isinstance(body, tuple)
        and len(body) > 3
        and type(body[3]) is int
        and body[3] == DropReason.EQUIVOCATION
    )
    if on_proof:
        f, seat, last, reason, fork_seq, quoted, took, carried = _array(
            body, 8, "a vote on proof's body (what its author took, then its proof)"
        )
        proof = _carried_proof(carried)
    else:
        f, seat, last, reason, fork_seq, quoted = _array(body, 6, "a drop body")
        proof, took = (), (0, b"")
    seqs, frontier_ids = _frontier(f, seats)
    vote = Drop(
        seqs,
        _int(seat, 0, seats - 1, "the dropped seat"),
        _int(last, 0, _MAX_SEQ, "the last seq held"),
        DropReason(_int(reason, 0, len(DropReason) - 1, "the drop reason")),
        _int(fork_seq, 0, _MAX_SEQ, "the fork seq"),
    )
    if (vote.reason in _PROOF_VOTES) != (vote.fork_seq > 0):
        raise ValueError(
            "an equivocation or flapping vote names its fork seq (the fault's), and only it does"
        )
    if vote.reason is DropReason.WITHDRAW and vote.last_seq:
        raise ValueError("a withdrawal counts nothing (last seq 0)")
    if vote.reason is DropReason.REJOIN and not vote.last_seq:
        raise ValueError("a rejoin names the member's request (last seq above 0)")
    want = min(vote.last_seq, VOTE_WINDOW)
    if not isinstance(quoted, tuple) or len(quoted) != want:
        raise ValueError(f"a vote quotes the ids of the last {want} event(s) it counts")
    prefixes: list[bytes] = []
    for prefix in quoted:
        if type(prefix) is not bytes or len(prefix) != ID_PREFIX:
            raise ValueError(f"a quoted id is its first {ID_PREFIX} bytes")
        prefixes.append(prefix)
    took_seq, took_id = _took(took, vote)
    return dataclasses.replace(
        vote,
        ids=tuple(prefixes),
        frontier_ids=frontier_ids,
        proof=proof,
        took_seq=took_seq,
        took_id=took_id,
    )


def _took(took: Body, vote: Drop) -> tuple[int, bytes]:
    """What a vote on proof says its author took past what it counts (docs/protocol.md §5.3):
    ``[0, ""]`` (nothing), or an event of the member past the vote's frontier entry, by seq
    and id prefix."""
    seq, prefix = _array(took, 2, "what a vote on proof took ([seq, id prefix])")
    seq = _int(seq, 0, _MAX_SEQ, "the seq taken")
    if type(prefix) is not bytes or len(prefix) != (ID_PREFIX if seq else 0):
        raise ValueError(f"what a vote took is named by its first {ID_PREFIX} id bytes, or none")
    if seq and seq <= vote.frontier[vote.seat]:
        raise ValueError("what a vote took lies past what its frontier names of the member")
    return seq, prefix


#: The largest signed message a vote on proof may carry in its proof: any message's signed part
#: (:data:`~p2p_nertz.protocol.envelope.MAX_MESSAGE_SIZE`; a drop's without its carried part,
#: session 41). The largest vote on proof (eight seats, 64 quoted ids, every seq and clock at
#: its widest) with two such messages is within
#: :data:`~p2p_nertz.protocol.envelope.MAX_VOTE_SIZE` (``tests/test_vote_proof.py`` builds
#: it), so a fork of a shuffle's ``deck_stage`` or ``deck_shares`` (up to ~3.6 KB) is voted on
#: as any other (session 40; session 39 bounded it to 1,500 bytes in a 4,096-byte drop, and
#: such a fork froze a table), and so is a fork of a vote on proof (session 41: its two signed
#: parts, ~1.2 KB each; before, its whole 8 KB versions did not fit: docs/protocol.md §13).
PROOF_MESSAGE_MAX = MAX_MESSAGE_SIZE


def fits(proof: Sequence[bytes]) -> bool:
    """Whether ``proof`` may be a vote's: two messages of at most :data:`PROOF_MESSAGE_MAX`
    bytes each (the schema's rule, asked before signing one)."""
    return len(proof) == 2 and all(0 < len(w) <= PROOF_MESSAGE_MAX for w in proof)


def _carried_proof(carried: Body) -> tuple[bytes, ...]:
    if type(carried) is not Carried:
        raise ValueError("a vote on proof carries its proof beside its payload, not signed inline")
    wires = tuple(w for w in carried if type(w) is bytes)
    if not (len(wires) == len(carried) and fits(wires)):
        raise ValueError(
            f"a vote on proof carries its proof: two signed messages of at most "
            f"{PROOF_MESSAGE_MAX} bytes each"
        )
    return wires


def _parse_deck_reveal(body: Body, seats: int) -> DeckReveal:
    r, opening = _array(body, 2, "a deck_reveal body")
    return DeckReveal(_round(r), decode_opening(opening, members=max(seats, 2), size=MAX_DECK))


def _parse_deck_want(body: Body, seats: int) -> DeckWant:
    r, entries = _array(body, 2, "a deck_want body")
    if not isinstance(entries, tuple) or not 1 <= len(entries) <= MAX_OPENING:
        raise ValueError(f"a deck_want asks for 1 to {MAX_OPENING} shares")
    members = max(seats, 2)
    wanted = []
    for entry in entries:
        member, deck, position = _array(entry, 3, "a share wanted")
        wanted.append(
            (
                _int(member, 0, members - 1, "the member of a share wanted"),
                _int(deck, 0, members - 1, "the deck of a share wanted"),
                _int(position, 0, MAX_DECK - 1, "the position of a share wanted"),
            )
        )
    if len(set(wanted)) != len(wanted):
        raise ValueError("a deck_want asks for a share twice")
    return DeckWant(_round(r), tuple(wanted))


def _parse_want(body: Body, seats: int) -> Want:
    seat, first, last = _array(body, 3, "a want body")
    first_i = _int(first, 1, _MAX_SEQ, "the first seq")
    last_i = _int(last, first_i, _MAX_SEQ, "the last seq")
    return Want(_int(seat, 0, seats - 1, "the seat"), first_i, last_i)


#: The parser of each kind's body (one lookup: the if-chain it replaces tested the kinds in turn).
def _deck_fields(body: Body, what: str) -> tuple[tuple[tuple[int, ...], tuple[bytes, ...]], Body]:
    if not isinstance(body, tuple) or len(body) < 2:
        raise ValueError(f"a {what} body is an array: the frontier, then its fields")
    return body[0], body[1:]


def _parse_deck_key(body: Body, seats: int) -> DeckEvent:
    f, rest = _deck_fields(body, "deck_key")
    if not isinstance(rest, tuple) or len(rest) != 8 or not isinstance(rest[6], tuple):
        raise ValueError("a deck_key body has 8 fields after the frontier")
    # The round's members are one more than the boxes (none for two): the fold checks that
    # they are the round's.
    members = len(rest[6]) + 1 if rest[6] else 2
    if members > seats:
        raise ValueError(f"a deck_key for {members} members in a game of {seats} seats")
    return DeckEvent(*_with_frontier(f, seats, DeckKey.decode(rest, members=members)))


def _parse_deck_stage(body: Body, seats: int) -> DeckEvent:
    f, rest = _deck_fields(body, "deck_stage")
    if not isinstance(rest, tuple) or len(rest) != 5 or not isinstance(rest[3], bytes):
        raise ValueError("a deck_stage body has 5 fields after the frontier, its ciphers bin")
    size, extra = divmod(len(rest[3]), CIPHER_BYTES)
    if extra or not 1 <= size <= MAX_DECK:
        raise ValueError(f"a deck_stage's ciphers are 64 bytes a card, not {len(rest[3])} bytes")
    return DeckEvent(
        *_with_frontier(f, seats, DeckStage.decode(rest, members=max(seats, 2), size=size))
    )


def _parse_deck_shares(body: Body, seats: int) -> DeckEvent:
    f, rest = _deck_fields(body, "deck_shares")
    message = DeckShares.decode(rest, seat=0, members=max(seats, 2), size=MAX_DECK)
    return DeckEvent(*_with_frontier(f, seats, message))


def _parse_deck_open(body: Body, seats: int) -> DeckEvent:
    f, rest = _deck_fields(body, "deck_open")
    return DeckEvent(*_with_frontier(f, seats, DeckOpen.decode(rest, members=max(seats, 2))))


def _parse_deck_simple(
    body: Body, seats: int, message: type[DeckComplain] | type[DeckAnswer]
) -> DeckEvent:
    f, rest = _deck_fields(body, message.__name__)
    return DeckEvent(*_with_frontier(f, seats, message.decode(rest, members=max(seats, 2))))


def _with_frontier(
    f: Body, seats: int, message: DeckMessage
) -> tuple[tuple[int, ...], DeckMessage, tuple[bytes, ...]]:
    seqs, ids = _frontier(f, seats)
    return seqs, message, ids


_PARSERS: dict[Kind, Callable[[Body, int], EventBody | Beat | Want | DeckReveal | DeckWant]] = {
    Kind.DECK_REVEAL: _parse_deck_reveal,
    Kind.DECK_WANT: _parse_deck_want,
    Kind.DECK_KEY: _parse_deck_key,
    Kind.DECK_STAGE: _parse_deck_stage,
    Kind.DECK_SHARES: _parse_deck_shares,
    Kind.DECK_OPEN: _parse_deck_open,
    Kind.DECK_COMPLAIN: lambda body, seats: _parse_deck_simple(body, seats, DeckComplain),
    Kind.DECK_ANSWER: lambda body, seats: _parse_deck_simple(body, seats, DeckAnswer),
    KIND_ACK: _parse_beat,
    KIND_BEAT: _parse_beat,
    KIND_MOVE: _parse_move,
    KIND_CLAIM: _parse_claim,
    Kind.JOIN: _parse_join,
    Kind.LEAVE: _parse_leave,
    Kind.COMMIT: _parse_commit,
    Kind.REVEAL: _parse_reveal,
    Kind.READY: _parse_ready,
    Kind.STUCK: _parse_stuck,
    Kind.NERTS: _parse_nerts,
    Kind.RESULT: _parse_result,
    Kind.DROP: _parse_drop,
    Kind.WANT: _parse_want,
}


def _move(text: Body) -> Move:
    if type(text) is str:
        known = _MOVE_TEXT.get(text)
        if known is not None:
            return known
    if type(text) is not str or len(text) > 24:
        raise ValueError(f"not a move: {text!r}")
    move = Move.parse(text)
    if str(move) != text:
        # One meaning, one signed form: no lower case, no "T" for ten, no spaces.
        raise ValueError(f"{text!r} is not the canonical spelling {str(move)!r}")
    if len(_MOVE_TEXT) < _MOVE_TEXT_MAX:
        _MOVE_TEXT[text] = move
    return move


def open_noted(
    data: bytes,
    kinds: Collection[Kind],
    *,
    game_id: bytes,
    roster: Collection[bytes],
    versions: Sequence[int],
    seats: int,
) -> tuple[Message, EventBody | Beat | Want | DeckReveal | DeckWant]:
    """A signed message a log's note holds (a ``proof``-like note: a beat, a ``deck_reveal``),
    its signature verified against ``roster`` and its body parsed; one of ``kinds``.

    Raises:
        ValueError: the bytes are not such a message of a member of this game (the reason says
            why: refused as a message, another kind, or a body its kind refuses).
    """
    try:
        message = decode_message(data, game_id=game_id, roster=roster, version=tuple(versions))
    except InvalidMessageError as exc:
        raise chained(ValueError(f"its message is refused: {exc}"), None)
    if message.kind not in kinds:
        wanted = " or ".join(sorted(k.name.lower() for k in kinds))
        raise ValueError(f"it holds a {message.kind.name.lower()}, not a {wanted}")
    try:
        return message, parse_body(message.kind, message.body, seats)
    except ValueError as refused:  # (not ``exc``: compiled, one name is one type, above's)
        raise chained(
            ValueError(f"its {message.kind.name.lower()}'s body is refused: {refused}"), None
        )


# Moves by canonical spelling, as met: parsing is pure and a Move immutable, so a spelling
# seen again (a game repeats a few hundred of them) skips the parse and the spelling check.
# Only spellings that passed both are kept; bounded.
_MOVE_TEXT: dict[str, Move] = {}
_MOVE_TEXT_MAX = 4096
