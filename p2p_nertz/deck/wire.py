"""The shuffle's messages: msgpack-ready values, exact encoders and strict decoders.

Each message is the part of an event body after its frontier (docs/shuffle.md §7 gives the event
kinds: the body is ``[frontier, *fields]``). ``encode()`` gives a list of ints, bytes and lists
that msgpack packs as it is; ``decode(value, ...)`` takes what msgpack unpacked and returns the
message, or raises :class:`~p2p_nertz.deck.group.DeckError` naming the field at fault. It checks
every point and scalar, every length and range, so that ``decode(encode(m)) == m`` and a message
that decodes has exactly one encoding.

============  ====  ==============================================================  ==========
message       kind  fields after the frontier                                       size (N=4)
============  ====  ==============================================================  ==========
DeckKey       12    round, key, proof_c, proof_s, [A_1..A_{t−1}], box_key, [box…],   ~330 B
                    attempt
DeckStage     13    round, deck, stage, ciphers (64 bytes × deck size), attempt     3,338 B
DeckShares    14    round, [[of_seat, deck, position, point, proof_c, proof_s]…]     103 B each
DeckOpen      15    round, secret, [[of_seat, share]…]                               ~40 B
DeckComplain  16    round, dealer                                                    ~5 B
DeckAnswer    17    round, recipient, share                                          ~40 B
============  ====  ==============================================================  ==========

A move or claim that needs a card turned up and not opened in its author's fold carries the
card's **opening** (docs/shuffle.md §10.14): every member's share of the position, as
``[[seat, of_seat, deck, position, point, proof_c, proof_s], …]`` (``seat`` the share's maker,
both member indices; 107 bytes an entry). :func:`encode_opening` and :func:`decode_opening`
give its exact form: at most :data:`MAX_OPENING` entries, none twice.

>>> m = DeckComplain(round=3, dealer=1)
>>> DeckComplain.decode(m.encode(), members=4) == m
True
"""

from __future__ import annotations

from dataclasses import dataclass

from p2p_nertz.deck.deal import MAX_MEMBERS
from p2p_nertz.deck.elgamal import MAX_DECK, Deck
from p2p_nertz.deck.group import DeckError, check_point, check_scalar, scalar_bytes
from p2p_nertz.deck.proofs import Proof
from p2p_nertz.deck.shares import Share
from p2p_nertz.deck.vss import BOX_BYTES, Dealing, threshold

__all__ = [
    "KINDS",
    "MAX_SHARES",
    "DeckAnswer",
    "DeckComplain",
    "DeckKey",
    "DeckOpen",
    "DeckShares",
    "DeckStage",
    "MAX_OPENING",
    "decode_opening",
    "encode_opening",
]

MAX_ROUND = 10_000
#: The most deals of one round (docs/shuffle.md §3.1: the attempt is a byte of the context).
MAX_ATTEMPT = 255
#: At most this many shares in one event (a deal's face-up cards of 8 decks: 8 × 8 = 64; a
#: turn-up of a member dropped, with partials: at most 3 positions × 8 secrets).
MAX_SHARES = 256
#: At most this many shares in one opening (a move needs at most one sealed card: one share a
#: member, or ``t`` partials for each member dropped; 64 bounds every table of 8).
MAX_OPENING = 64

Value = object


def _list(
    value: Value, what: str, length: int | None = None, most: int | None = None
) -> list[Value]:
    if not isinstance(value, list | tuple):
        raise DeckError(f"{what}: expected an array, got {type(value).__name__}")
    if length is not None and len(value) != length:
        raise DeckError(f"{what}: expected {length} fields, got {len(value)}")
    if most is not None and len(value) > most:
        raise DeckError(f"{what}: at most {most} entries, got {len(value)}")
    return list(value)


def _int(value: Value, what: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise DeckError(f"{what}: expected an integer in {low}..{high}, got {value!r}")
    return value


def _bin(value: Value, what: str, size: int) -> bytes:
    if not isinstance(value, bytes) or len(value) != size:
        got = len(value) if isinstance(value, bytes) else type(value).__name__
        raise DeckError(f"{what}: expected {size} bytes, got {got}")
    return value


def _round(value: Value) -> int:
    return _int(value, "round", 1, MAX_ROUND)


def _attempt(value: Value, what: str) -> int:
    return _int(value, what, 0, MAX_ATTEMPT)


def _seat(value: Value, what: str, members: int) -> int:
    return _int(value, what, 0, members - 1)


def _members(members: int) -> int:
    if not 2 <= members <= MAX_MEMBERS:
        raise ValueError(f"a round has 2..{MAX_MEMBERS} members, not {members}")
    return members


def _proof(c: Value, s: Value, what: str) -> Proof:
    return check_scalar(c, f"{what} challenge"), check_scalar(s, f"{what} answer")


@dataclass(frozen=True, slots=True)
class DeckKey:
    """A member's round key with its proof of knowledge, and its VSS dealing (``None`` for N=2),
    for the deal ``attempt`` of the round (docs/shuffle.md §8.4: a deal restarted after a drop
    has new keys; a key of an attempt given up is no key of the next)."""

    round: int
    key: bytes
    proof: Proof
    dealing: Dealing | None
    attempt: int = 0

    def encode(self) -> list[Value]:
        d = self.dealing
        return [
            self.round,
            self.key,
            scalar_bytes(self.proof[0]),
            scalar_bytes(self.proof[1]),
            list(d.commitments) if d else [],
            d.box_key if d else b"",
            list(d.boxes) if d else [],
            self.attempt,
        ]

    @classmethod
    def decode(cls, value: Value, *, members: int) -> DeckKey:
        f = _list(value, "deck_key", 8)
        attempt = _attempt(f[7], "deck_key attempt")
        t = threshold(_members(members))
        key = check_point(f[1], "deck_key key")
        proof = _proof(f[2], f[3], "deck_key proof")
        commitments = _list(f[4], "deck_key commitments", (t or 1) - 1)
        boxes = _list(f[6], "deck_key boxes", members - 1 if t else 0)
        if t is None:
            _bin(f[5], "deck_key box_key", 0)
            return cls(_round(f[0]), key, proof, None, attempt)
        dealing = Dealing(
            tuple(
                check_point(a, f"deck_key commitment {k + 1}") for k, a in enumerate(commitments)
            ),
            _bin(f[5], "deck_key box_key", 32),
            tuple(_bin(b, f"deck_key box {k}", BOX_BYTES) for k, b in enumerate(boxes)),
        )
        return cls(_round(f[0]), key, proof, dealing, attempt)


@dataclass(frozen=True, slots=True)
class DeckStage:
    """Deck ``deck`` after the author's stage ``stage`` of the deal (docs/shuffle.md §4)."""

    round: int
    deck: int
    stage: int
    ciphers: Deck
    attempt: int = 0  # the deal's attempt (as DeckKey's)

    def encode(self) -> list[Value]:
        return [self.round, self.deck, self.stage, self.ciphers.to_bytes(), self.attempt]

    @classmethod
    def decode(cls, value: Value, *, members: int, size: int) -> DeckStage:
        f = _list(value, "deck_stage", 5)
        _members(members)
        if not 1 <= size <= MAX_DECK:
            raise ValueError(f"a deck is 1..{MAX_DECK} cards, not {size}")
        return cls(
            _round(f[0]),
            _seat(f[1], "deck_stage deck", members),
            _seat(f[2], "deck_stage stage", members),
            Deck.from_bytes(f[3], size),
            _attempt(f[4], "deck_stage attempt"),
        )


@dataclass(frozen=True, slots=True)
class DeckShares:
    """Decryption shares by ``seat`` (the author): its own, and partials for dropped members."""

    round: int
    seat: int
    shares: tuple[Share, ...]

    def encode(self) -> list[Value]:
        return [self.round, [_share_entry(s) for s in self.shares]]

    @classmethod
    def decode(cls, value: Value, *, seat: int, members: int, size: int) -> DeckShares:
        f = _list(value, "deck_shares", 2)
        _members(members)
        entries = _list(f[1], "deck_shares shares", most=MAX_SHARES)
        if not entries:
            raise DeckError("deck_shares: no share")
        return cls(_round(f[0]), seat, _shares(entries, "deck_shares", members, size, seat))


def encode_opening(shares: tuple[Share, ...]) -> list[Value]:
    """The wire form of an opening: one entry a share, its maker first (module docstring)."""
    return [[s.seat, *_share_entry(s)] for s in shares]


def _share_entry(s: Share) -> list[Value]:
    """A share's entry as ``deck_shares`` carries it (its maker is the author); an opening's
    entry names the maker first."""
    c, z = s.proof
    return [s.of_seat, s.deck, s.position, s.point, scalar_bytes(c), scalar_bytes(z)]


def decode_opening(value: Value, *, members: int, size: int) -> tuple[Share, ...]:
    """An opening as :func:`encode_opening` makes it: 1 to :data:`MAX_OPENING` entries, no
    share (maker, of whom, deck, position) twice, every index in range, every point and scalar
    checked. Whether each share is *right* (its proof against its member's key and the final
    deck) the fold checks (:meth:`DeckRound.take_carried
    <p2p_nertz.protocol.shuffle.DeckRound.take_carried>`).

    Raises:
        DeckError: naming the entry and field at fault.
    """
    _members(members)
    entries = _list(value, "opening", most=MAX_OPENING)
    if not entries:
        raise DeckError("opening: no share (a move that opens nothing carries no opening)")
    return _shares(entries, "opening", members, size, None)


def _shares(
    entries: list[Value], what: str, members: int, size: int, maker: int | None
) -> tuple[Share, ...]:
    """The shares of a ``deck_shares`` (``maker``: its author; entries ``[of_seat, deck,
    position, point, c, s]``) or of an opening (``maker`` ``None``: each entry names its maker
    first), none twice, every index, point and scalar checked."""
    shares = []
    seen = set()
    for k, raw in enumerate(entries):
        name = f"{what} share {k}"
        e = _list(raw, name, 6 if maker is not None else 7)
        seat = maker if maker is not None else _seat(e[0], f"{name} seat", members)
        f = e if maker is not None else e[1:]
        of_seat = _seat(f[0], f"{name} of_seat", members)
        deck = _seat(f[1], f"{name} deck", members)
        position = _int(f[2], f"{name} position", 0, size - 1)
        key = (seat, of_seat, deck, position)
        if key in seen:
            raise DeckError(f"{what}: share {k} repeats {key if maker is None else key[1:]}")
        seen.add(key)
        point = check_point(f[3], f"{name} point")
        shares.append(Share(seat, of_seat, deck, position, point, _proof(f[4], f[5], name)))
    return tuple(shares)


@dataclass(frozen=True, slots=True)
class DeckOpen:
    """After the round: the author's round secret and the VSS shares it holds of dropped members."""

    round: int
    secret: int
    held: tuple[tuple[int, int], ...]

    def encode(self) -> list[Value]:
        return [self.round, scalar_bytes(self.secret), [[s, scalar_bytes(v)] for s, v in self.held]]

    @classmethod
    def decode(cls, value: Value, *, members: int) -> DeckOpen:
        f = _list(value, "deck_open", 3)
        _members(members)
        secret = check_scalar(f[1], "deck_open secret")
        if secret == 0:
            raise DeckError("deck_open secret: 0 is no round secret")
        held = []
        for k, raw in enumerate(_list(f[2], "deck_open held", most=members - 1)):
            e = _list(raw, f"deck_open held {k}", 2)
            held.append(
                (_seat(e[0], f"held {k} seat", members), check_scalar(e[1], f"held {k} share"))
            )
        seats = [s for s, _ in held]
        if seats != sorted(set(seats)):
            raise DeckError("deck_open held: seats must be increasing, each once")
        return cls(_round(f[0]), secret, tuple(held))


@dataclass(frozen=True, slots=True)
class DeckComplain:
    """The author's VSS share from ``dealer`` did not open or did not verify (§5.3)."""

    round: int
    dealer: int
    attempt: int = 0  # the deal's attempt (as DeckKey's: a complaint of a box of that deal)

    def encode(self) -> list[Value]:
        return [self.round, self.dealer, self.attempt]

    @classmethod
    def decode(cls, value: Value, *, members: int) -> DeckComplain:
        f = _list(value, "deck_complain", 3)
        return cls(
            _round(f[0]),
            _seat(f[1], "deck_complain dealer", _members(members)),
            _attempt(f[2], "deck_complain attempt"),
        )


@dataclass(frozen=True, slots=True)
class DeckAnswer:
    """A dealer's answer to a complaint: ``recipient``'s share, in the clear (§5.3)."""

    round: int
    recipient: int
    share: int
    attempt: int = 0  # the deal's attempt (the complaint's)

    def encode(self) -> list[Value]:
        return [self.round, self.recipient, scalar_bytes(self.share), self.attempt]

    @classmethod
    def decode(cls, value: Value, *, members: int) -> DeckAnswer:
        f = _list(value, "deck_answer", 4)
        return cls(
            _round(f[0]),
            _seat(f[1], "deck_answer recipient", _members(members)),
            check_scalar(f[2], "deck_answer share"),
            _attempt(f[3], "deck_answer attempt"),
        )


#: The proposed event kinds (docs/shuffle.md §7), after protocol v2's.
KINDS: dict[int, type] = {
    12: DeckKey,
    13: DeckStage,
    14: DeckShares,
    15: DeckOpen,
    16: DeckComplain,
    17: DeckAnswer,
}
