"""The group: Ed25519's prime-order subgroup through libsodium, its scalars, and the cards in it.

A *point* is its canonical 32-byte Ed25519 encoding (``bytes``); a *scalar* is a Python ``int``
in ``[0, L)``, written on the wire as 32 bytes little-endian. Every point received from a peer
goes through :func:`check_point` (libsodium's ``crypto_core_ed25519_is_valid_point``: canonical,
on the curve, in the prime-order subgroup, not of small order), every scalar through
:func:`check_scalar` (canonical: below ``L``). Both raise :class:`DeckError`, a
:class:`~p2p_nertz.errors.RemoteProtocolError` that names the field.

Each card is a fixed point, hashed from its name (docs/shuffle.md §2.2)::

    M(card) = from_uniform(SHA-512("p2p-nertz/v3/card\\0" ‖ name)[:32])

``crypto_core_ed25519_from_uniform`` maps 32 bytes to the curve (Elligator 2) and clears the
cofactor, so every card point is in the subgroup and nobody knows a relation between two of
them. :func:`card_of` maps a point back to its card, or ``None`` for a point that is no card.

>>> card_of(card_point(Card.parse("10H")))
Card.parse('10H')
>>> card_of(BASE) is None
True
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable

from nacl import bindings as sodium  # imported first: it initialises libsodium (sodium_init)

# PyNaCl's cffi binding: libsodium's own entry points, without PyNaCl's checks and copies
# (about 5 to 8 µs a call, a quarter of an addition), as identity.py calls crypto_sign.
from nacl._sodium import ffi as _ffi  # type: ignore[import-not-found]
from nacl._sodium import lib as _lib

from p2p_nertz.errors import RemoteProtocolError
from p2p_nertz.rules.cards import Card, new_deck

__all__ = [
    "BASE",
    "IDENTITY",
    "ORDER",
    "POINT_BYTES",
    "SCALAR_BYTES",
    "DeckError",
    "add",
    "base_mul",
    "card_of",
    "card_point",
    "check_point",
    "check_scalar",
    "hash_scalar",
    "mul",
    "scalar_bytes",
    "sub",
]

#: ``L``, the order of the prime-order subgroup.
ORDER = 2**252 + 27742317777372353535851937790883648493
POINT_BYTES = 32
SCALAR_BYTES = 32
#: The standard base point ``G`` (``1·G``).
BASE: bytes = sodium.crypto_scalarmult_ed25519_base_noclamp((1).to_bytes(32, "little"))
#: The neutral element's encoding; never valid on the wire (it is of small order).
IDENTITY = b"\x01" + bytes(31)

_DOMAIN = b"p2p-nertz/v3/"


class DeckError(RemoteProtocolError, ValueError):
    """Raised when a value of the shuffle is malformed: a bad point, a bad scalar, a wrong length.

    Raised by the decoders and checks of :mod:`p2p_nertz.deck` on what a peer sent, and by its
    functions when asked to work on such a value; nothing is changed when it is raised.
    """


def check_point(raw: object, what: str = "point") -> bytes:
    """``raw`` if it is a point of the subgroup, not the identity; else :class:`DeckError`."""
    if not isinstance(raw, bytes) or len(raw) != POINT_BYTES:
        size = len(raw) if isinstance(raw, bytes) else type(raw).__name__
        raise DeckError(f"{what}: expected {POINT_BYTES} bytes, got {size}")
    if not _is_point(bytes(raw)):
        raise DeckError(f"{what}: not a point of the prime-order subgroup ({raw.hex()[:16]}…)")
    return raw


@functools.lru_cache(maxsize=16384)
def _is_point(raw: bytes) -> bool:
    # The same points come again and again: every member decodes every stage of the deal (104
    # points a deck), its folds and the audit take the same messages. Pure, so remembered (a
    # hit costs a dict look-up; libsodium's check about 100 µs).
    return bool(_lib.crypto_core_ed25519_is_valid_point(raw) == 1)


def check_scalar(raw: object, what: str = "scalar") -> int:
    """The scalar in ``raw`` (32 bytes, little-endian, below ``L``); else :class:`DeckError`."""
    if not isinstance(raw, bytes) or len(raw) != SCALAR_BYTES:
        size = len(raw) if isinstance(raw, bytes) else type(raw).__name__
        raise DeckError(f"{what}: expected {SCALAR_BYTES} bytes, got {size}")
    value = int.from_bytes(raw, "little")
    if value >= ORDER:
        raise DeckError(f"{what}: not a canonical scalar (not below the group order)")
    return value


def scalar_bytes(value: int) -> bytes:
    """The 32-byte little-endian encoding of ``value mod L``."""
    return (value % ORDER).to_bytes(SCALAR_BYTES, "little")


def hash_scalar(label: str, *parts: bytes) -> int:
    """A scalar from SHA-512 of a labelled, length-prefixed list of parts, reduced mod ``L``.

    Never 0 in practice (probability 2^-252); the callers that multiply by it say what a 0 does.
    """
    h = hashlib.sha512(_DOMAIN + label.encode() + b"\0")
    for part in parts:
        h.update(len(part).to_bytes(4, "big") + part)
    return int.from_bytes(h.digest(), "little") % ORDER


def _points(*points: bytes) -> None:
    # libsodium reads 32 bytes from each pointer: a shorter string must never reach it.
    for point in points:
        if not isinstance(point, bytes) or len(point) != POINT_BYTES:
            raise DeckError(f"expected a {POINT_BYTES}-byte point, got {point!r:.40}")


def mul(scalar: int, point: bytes) -> bytes:
    """``scalar · point`` for a valid ``point``; :class:`DeckError` if either is unusable.

    libsodium refuses a point outside the subgroup and a product that is the identity (a scalar
    of 0 mod ``L``): both are a peer's fault here, never an honest value. (It checks ``point``
    at every call, half the cost: :mod:`p2p_nertz.deck.ladder` multiplies one fixed point by
    many scalars without that.)
    """
    _points(point)
    out = _ffi.new("unsigned char[32]")
    if _lib.crypto_scalarmult_ed25519_noclamp(out, scalar_bytes(scalar), point):
        raise DeckError(f"cannot multiply {point.hex()[:16]}… by a scalar: a bad point or 0")
    return bytes(_ffi.buffer(out, POINT_BYTES))


def base_mul(scalar: int) -> bytes:
    """``scalar · G``; :class:`DeckError` for a scalar of 0 mod ``L``."""
    out = _ffi.new("unsigned char[32]")
    if _lib.crypto_scalarmult_ed25519_base_noclamp(out, scalar_bytes(scalar)):
        raise DeckError("cannot multiply the base point by 0")
    return bytes(_ffi.buffer(out, POINT_BYTES))


def add(p: bytes, q: bytes) -> bytes:
    """``p + q``; :class:`DeckError` if either is not a point of the curve."""
    _points(p, q)
    out = _ffi.new("unsigned char[32]")
    if _lib.crypto_core_ed25519_add(out, p, q):
        raise DeckError(f"cannot add {p.hex()[:16]}… and {q.hex()[:16]}…: not points")
    return bytes(_ffi.buffer(out, POINT_BYTES))


def sub(p: bytes, q: bytes) -> bytes:
    """``p - q``; :class:`DeckError` if either is not a point of the curve."""
    _points(p, q)
    out = _ffi.new("unsigned char[32]")
    if _lib.crypto_core_ed25519_sub(out, p, q):
        raise DeckError(f"cannot subtract {q.hex()[:16]}… from {p.hex()[:16]}…: not points")
    return bytes(_ffi.buffer(out, POINT_BYTES))


def card_point(card: Card) -> bytes:
    """The fixed point of a physical card (a declared joker is its physical joker)."""
    return _POINTS[card.physical]


def card_of(point: bytes) -> Card | None:
    """The card whose point is ``point``, or ``None`` if it is no card's."""
    return _CARDS.get(point)


def _hash_card(card: Card) -> bytes:
    digest = hashlib.sha512(_DOMAIN + b"card\0" + str(card).encode()).digest()
    return sodium.crypto_core_ed25519_from_uniform(digest[:32])


def _table(cards: Iterable[Card]) -> dict[Card, bytes]:
    return {c: _hash_card(c) for c in cards}


_POINTS: dict[Card, bytes] = _table(new_deck(jokers=2))
_CARDS: dict[bytes, Card] = {p: c for c, p in _POINTS.items()}
assert len(_CARDS) == len(_POINTS), "two cards hash to the same point"
