"""Ed25519 identities: who a player is, and how to check that they said something.

A player is an Ed25519 key pair (DESIGN.md §2). Its **peer id** is the 32-byte raw public key;
humans see a short :func:`fingerprint` of it instead. This module only turns keys into bytes and
back and signs and verifies bytes; where keys are stored (a file in the user's config dir, mode
0600) is the runtime's business, and which bytes are signed (the domain tag, the envelope) is the
envelope's (:mod:`p2p_nertz.protocol.envelope`).

Peer ids are plain :class:`bytes` at run time (so they pack into msgpack, sort, and key dicts as
they are) and a distinct :data:`PeerId` type for the type checker. Not every 32-byte string is
accepted as one, at two levels (docs/protocol.md §3.1):

- :func:`is_valid_peer_id`, cheap, on every message: the encoding is canonical and not one of the
  eight points of small order, for which "signatures" can be made without any private key;
- :func:`key_fault` / :func:`has_full_order`, once per key, wherever a key joins a roster (the
  lobby's seats and senders, a game spec read from anywhere): the key is a point of the curve
  of full (prime) order ``L``, so no small-order component is left for verifiers to disagree
  on. Libraries that check signatures without the cofactor and with it can give different
  answers for a key of mixed order, and two honest peers must never disagree on whether a
  message was signed.

Which signatures are valid is pinned by one rule (docs/protocol.md §3.3), :func:`verify`, which
every verifier of the project goes through (the envelope codec, hence the peer, the spectator
and the audit; the lobby and its beacon): ``S < L``; ``A`` and ``R`` canonically encoded and
not of small order; the cofactorless equation ``[S]B = R + [k]A``. The rule's checks on the
bytes are done here, in Python (:func:`signature_fault`); the equation by libsodium (PyNaCl),
about twice as fast here as OpenSSL's (through ``cryptography``), which :data:`OPENSSL` keeps
selectable, so tests can show that the verdict does not depend on the library underneath.

The functions that take a key, a seed or a signature from outside (:func:`key_fault`,
:func:`is_valid_peer_id`, :func:`parse_peer_id`, :func:`fingerprint`, :func:`signature_fault`,
:meth:`Identity.from_bytes`) type it ``object`` and check it themselves: a
``bytearray`` or a ``str`` gets their one refusal on both builds, where a ``bytes`` annotation
would have the compiled build (mypyc checks it at the call) raise ``TypeError`` first
(session 42).

>>> alice = Identity.generate(seed=bytes(32))
>>> alice.fingerprint
'copd-sqhg-jnkj-c4ra'
>>> signature = alice.sign(b"hello")
>>> verify(alice.peer_id, signature, b"hello")
True
>>> verify(alice.peer_id, signature, b"hello!")
False
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Callable
from typing import NewType

import nacl.bindings  # imported first: it initialises libsodium (sodium_init) for _sodium
import nacl.utils
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

# PyNaCl's cffi binding: libsodium's own entry points, without PyNaCl's checks and copies.
from nacl._sodium import ffi as _ffi  # type: ignore[import-not-found]
from nacl._sodium import lib as _lib

from p2p_nertz.curve import SQRT_M1 as _SQRT_M1
from p2p_nertz.curve import D as _D
from p2p_nertz.curve import P as _P
from p2p_nertz.errors import LocalProtocolError

__all__ = [
    "PEER_ID_SIZE",
    "PRIVATE_KEY_SIZE",
    "SIGNATURE_SIZE",
    "Identity",
    "LIBSODIUM",
    "OPENSSL",
    "Equation",
    "InvalidKeyError",
    "PeerId",
    "fingerprint",
    "has_full_order",
    "is_valid_peer_id",
    "key_fault",
    "parse_peer_id",
    "signature_fault",
    "verify",
]

PEER_ID_SIZE = 32
"""Length in bytes of a peer id (a raw Ed25519 public key)."""

PRIVATE_KEY_SIZE = 32
"""Length in bytes of a raw Ed25519 private key (the RFC 8032 seed)."""

SIGNATURE_SIZE = 64
"""Length in bytes of an Ed25519 signature."""

PeerId = NewType("PeerId", bytes)
"""A peer id: the 32-byte raw Ed25519 public key of a player (see :func:`parse_peer_id`)."""

_SIGN_BIT_MASK = (1 << 255) - 1
# The y-coordinates of the eight points of small order (orders 1, 2, 4 and 8) of edwards25519;
# each stands for one or two points (x and -x). Same list as libsodium's `has_small_order`.
# tests/test_identity.py recomputes the order of each from the curve equation.
_SMALL_ORDER_Y = frozenset(
    {
        0,  # order 4: (+-sqrt(-1), 0)
        1,  # order 1: the neutral element (0, 1)
        _P - 1,  # order 2: (0, -1)
        int.from_bytes(
            bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
            "little",
        ),  # order 8
        int.from_bytes(
            bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
            "little",
        ),  # order 8
    }
)


_D2 = 2 * _D % _P
_L = 2**252 + 27742317777372353535851937790883648493  # the prime order of the base point
_Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T), x = X/Z, y = Y/Z
_NEUTRAL: _Point = (0, 1, 1, 0)


class InvalidKeyError(LocalProtocolError, ValueError):
    """Raised when bytes given as a key, seed or peer id do not have the form of one."""


def is_valid_peer_id(raw: object) -> bool:
    """Tell whether ``raw`` is acceptable as a peer id.

    A peer id is 32 bytes, the canonical encoding of an Ed25519 public key (y < p), and not one
    of the points of small order. (Whether the point is on the curve at all is left to signature
    verification, which fails for every signature if it is not.)

    >>> is_valid_peer_id(Identity.generate(seed=bytes(32)).peer_id)
    True
    >>> is_valid_peer_id(bytes(32)), is_valid_peer_id(b"short")
    (False, False)
    """
    if type(raw) is not bytes or len(raw) != PEER_ID_SIZE:
        return False
    y = int.from_bytes(raw, "little") & _SIGN_BIT_MASK
    return y < _P and y not in _SMALL_ORDER_Y


def _decode_point(raw: bytes) -> _Point | str:
    """The point encoded by 32 bytes, decoded as RFC 8032 §5.1.3 says, or why there is none:
    the encoding is not canonical (y >= p, or x = 0 with the sign bit set) or names no point."""
    value = int.from_bytes(raw, "little")
    sign, y = value >> 255, value & _SIGN_BIT_MASK
    if y >= _P:
        return "not a canonical encoding (y >= p)"
    u = (y * y - 1) % _P
    v = (_D * y * y + 1) % _P
    x = u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P) % _P
    vx2 = v * x * x % _P
    if vx2 == (-u) % _P:
        x = x * _SQRT_M1 % _P
    elif vx2 != u:
        return "not a point of the curve"  # x^2 = u/v has no root
    if x == 0 and sign:
        return "not a canonical encoding (x = 0 with the sign bit set)"
    if x & 1 != sign:
        x = _P - x
    return (x, y, 1, x * y % _P)


def _add(a: _Point, b: _Point) -> _Point:
    # add-2008-hwcd-3 (Hisil, Wong, Carter, Dawson), for a = -1: complete on edwards25519.
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    aa = (y1 - x1) * (y2 - x2) % _P
    bb = (y1 + x1) * (y2 + x2) % _P
    cc = t1 * _D2 * t2 % _P
    dd = 2 * z1 * z2 % _P
    e, f, g, h = bb - aa, dd - cc, dd + cc, bb + aa
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _double(a: _Point) -> _Point:
    # dbl-2008-hwcd, for a = -1.
    x1, y1, z1, _ = a
    aa = x1 * x1 % _P
    bb = y1 * y1 % _P
    cc = 2 * z1 * z1 % _P
    h = aa + bb
    e = h - (x1 + y1) * (x1 + y1) % _P
    g = aa - bb
    f = cc + g
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _is_neutral(a: _Point) -> bool:
    x, y, z, _ = a
    return x % _P == 0 and (y - z) % _P == 0


def _times_order(a: _Point) -> _Point:
    """``L`` times the point (double and add: not constant time, and need not be: a public
    key is public)."""
    result = _NEUTRAL
    for bit in bin(_L)[2:]:
        result = _double(result)
        if bit == "1":
            result = _add(result, a)
    return result


@functools.lru_cache(maxsize=4096)
def _point_fault(raw: bytes) -> str | None:
    # Pure Python, about 2 ms a key: kept, since a peer checks the same few keys again and again.
    point = _decode_point(raw)
    if isinstance(point, str):
        return point
    if point[1] in _SMALL_ORDER_Y:
        return "a point of small order"
    if not _is_neutral(_times_order(point)):
        return "a point of mixed order (it has a small-order component)"
    return None


def key_fault(raw: object) -> str | None:
    """Say why ``raw`` cannot be a roster key, or ``None`` if it can (docs/protocol.md §3.1).

    A roster key is 32 bytes, the canonical encoding (RFC 8032 §5.1.3: y < p, and no sign bit
    on x = 0) of a point of the curve whose order is the prime ``L``: not one of the eight
    points of small order, and not a *mixed-order* point (a full-order point plus a
    small-order one), for which implementations that verify with and without the cofactor
    disagree. A key that passes is recognised by libsodium (``crypto_core_ed25519_is_valid_point``,
    the same four conditions); the reason a key fails is found in pure Python, kept per key.

    >>> key_fault(Identity.generate(seed=bytes(32)).peer_id) is None
    True
    >>> key_fault(bytes(32))
    'a point of small order'
    >>> key_fault(b"short")
    'not 32 bytes'
    """
    if type(raw) is not bytes or len(raw) != PEER_ID_SIZE:
        return f"not {PEER_ID_SIZE} bytes"
    # libsodium says in ~50 µs what the Python check says in ~2 ms: canonical, on the curve,
    # not of small order, L·A = 0. Only its "yes" is taken; a "no" is explained in Python.
    if _lib.crypto_core_ed25519_is_valid_point(raw) == 1:
        return None
    return _point_fault(raw)


def has_full_order(raw: object) -> bool:
    """Tell whether ``raw`` is acceptable as a roster key (see :func:`key_fault`)."""
    return key_fault(raw) is None


def parse_peer_id(raw: object) -> PeerId:
    """Return ``raw`` typed as a :data:`PeerId`, after checking it with :func:`key_fault`.

    Raises:
        InvalidKeyError: ``raw`` is not a usable roster key; the message says why.
    """
    fault = key_fault(raw)
    if fault is not None or type(raw) is not bytes:  # (key_fault refuses all but bytes)
        shown = raw.hex() if isinstance(raw, bytes) else repr(raw)
        raise InvalidKeyError(f"not a usable Ed25519 key ({fault}): {shown}")
    return PeerId(raw)


def fingerprint(peer_id: object) -> str:
    """Return the short human form of a peer id: 16 base32 characters in four groups.

    The characters are the first 80 bits of SHA-256 of the peer id, lowercase RFC 4648 base32,
    grouped as ``xxxx-xxxx-xxxx-xxxx``. It is stable (the same key always gives the same text)
    and meant for people to compare by eye; 80 bits make a chance collision negligible but do
    not stop a determined brute-force search, so software compares full peer ids.

    Raises:
        InvalidKeyError: ``peer_id`` is not 32 bytes.

    >>> fingerprint(Identity.generate(seed=bytes(32)).peer_id)
    'copd-sqhg-jnkj-c4ra'
    """
    if not isinstance(peer_id, bytes) or len(peer_id) != PEER_ID_SIZE:
        raise InvalidKeyError(f"a fingerprint needs a {PEER_ID_SIZE}-byte peer id, got {peer_id!r}")
    text = base64.b32encode(hashlib.sha256(peer_id).digest()[:10]).decode("ascii").lower()
    return "-".join(text[i : i + 4] for i in range(0, 16, 4))


Equation = Callable[[bytes, bytes, bytes], bool]
"""A library's check of the equation, ``equation(peer_id, signature, data)``; see :func:`verify`."""


def _encoding_fault(raw: bytes) -> str | None:
    # For A and R: y < p, and not one of the small-order points (which are also every encoding
    # of x = 0, the "negative zero" of RFC 8032 §5.1.3, so that case needs no check of its own).
    y = int.from_bytes(raw, "little") & _SIGN_BIT_MASK
    if y >= _P:
        return "not a canonical encoding (y >= p)"
    if y in _SMALL_ORDER_Y:
        return "a point of small order"
    return None


@functools.lru_cache(maxsize=1024)
def _key_fault(peer_id: bytes) -> str | None:
    # A verifier checks the same few keys over and over (an audit, every message of a game's
    # roster): the key's half of signature_fault, remembered. Pure, so the answer is the same.
    return _encoding_fault(peer_id)


def signature_fault(peer_id: object, signature: object) -> str | None:
    """Say why no message can carry ``signature`` by ``peer_id``, or ``None`` (§3.3, 1 to 3).

    The acceptance rule's checks on the bytes alone, before any equation: 32 and 64 bytes;
    ``S`` (the signature's second half, little-endian) below ``L``; the key ``A`` and the
    signature's ``R`` canonically encoded (``y < p``) and not of small order. Cheap (a few
    integer operations), pure, and the same whatever library checks the equation.

    >>> alice = Identity.generate(seed=bytes(32))
    >>> signature_fault(alice.peer_id, alice.sign(b"hi")) is None
    True
    >>> signature_fault(alice.peer_id, bytes(64))
    'R: a point of small order'
    """
    if type(peer_id) is not bytes or len(peer_id) != PEER_ID_SIZE:
        return f"the key is not {PEER_ID_SIZE} bytes"
    if type(signature) is not bytes or len(signature) != SIGNATURE_SIZE:
        return f"the signature is not {SIGNATURE_SIZE} bytes"
    if int.from_bytes(signature[32:], "little") >= _L:
        return "S is not below L (a second form of a signature)"
    fault = _key_fault(peer_id)
    if fault is not None:
        return f"A: {fault}"
    fault = _encoding_fault(signature[:32])
    if fault is not None:
        return f"R: {fault}"
    return None


def _sodium_equation(peer_id: bytes, signature: bytes, data: bytes) -> bool:
    # libsodium's crypto_sign_open, called directly: PyNaCl's wrapper (nacl.bindings) costs
    # ~20 µs more a call in checks and copies that signature_fault has already made. libsodium
    # (>= 1.0.16, not built with ED25519_COMPAT) checks S < L, canonical and not small-order A
    # and R itself, decodes A, and compares the encoding of [S]B - [k]A with R's bytes: the
    # cofactorless equation, R's non-canonical encodings refused. The output buffer is scratch.
    signed = signature + data
    out = _ffi.new("unsigned char[]", len(signed))
    return bool(_lib.crypto_sign_open(out, _ffi.NULL, signed, len(signed), peer_id) == 0)


@functools.lru_cache(maxsize=1024)
def _public_key(peer_id: bytes) -> Ed25519PublicKey:
    # A verifier checks the same few keys over and over; loading one costs more than a lookup.
    return Ed25519PublicKey.from_public_bytes(peer_id)


def _openssl_equation(peer_id: bytes, signature: bytes, data: bytes) -> bool:
    # OpenSSL (through cryptography) checks S < L, decodes A, and compares the encoding of
    # [S]B - [k]A with R's bytes: cofactorless too. It accepts small-order A and R, which
    # signature_fault refuses before it is called.
    try:
        _public_key(peer_id).verify(signature, data)
    except (InvalidSignature, ValueError):
        return False
    return True


LIBSODIUM: Equation = _sodium_equation
"""The equation as libsodium (PyNaCl) checks it: the one :func:`verify` uses."""

OPENSSL: Equation = _openssl_equation
"""The equation as OpenSSL (through ``cryptography``) checks it: for tests and benchmarks."""


def verify(peer_id: bytes, signature: bytes, data: bytes, library: Equation = LIBSODIUM) -> bool:
    """Tell whether ``signature`` is the Ed25519 signature by ``peer_id`` of exactly ``data``.

    The project's one acceptance rule (docs/protocol.md §3.3): every verifier goes through it,
    so that two honest peers, the audit, the lobby and a spectator never disagree on a
    signature. A signature ``R ‖ S`` by ``A`` of ``M`` is valid if and only if

    1. ``S < L`` (so a valid signature has one form only);
    2. ``A`` and ``R`` are canonical encodings (``y < p``) of points of the curve;
    3. neither ``A`` nor ``R`` is of small order;
    4. ``[S]B = R + [k]A``, with ``k = SHA-512(R ‖ A ‖ M) mod L`` over the bytes as received:
       the cofactorless equation.

    1 to 3 are checked here (:func:`signature_fault`), 4 by ``library``; both libraries check
    4 the same way once 1 to 3 hold, so the verdict does not depend on the library
    (tests/test_signatures.py runs the RFC 8032 and edge-case vectors through both). A key of
    *mixed* order is not refused here (that check costs more than a signature's): callers
    verify only roster keys, which :func:`key_fault` admits, or check the key after.

    Never raises for any bytes: a malformed key or signature simply does not verify.

    Args:
        peer_id: the author's key, ``A``.
        signature: the 64-byte signature, ``R ‖ S``.
        data: the signed bytes, ``M``.
        library: which library checks the equation (:data:`LIBSODIUM` or :data:`OPENSSL`).
    """
    return signature_fault(peer_id, signature) is None and library(peer_id, signature, data)


class Identity:
    """A player's Ed25519 private key: signs bytes, and names the player by :attr:`peer_id`.

    Identities are immutable and compare equal when they hold the same key. The ``repr`` shows
    the fingerprint, never the secret.

    >>> Identity.generate(seed=bytes(32))
    Identity(copd-sqhg-jnkj-c4ra)
    >>> Identity.from_bytes(bytes(32)) == Identity.generate(seed=bytes(32))
    True
    """

    __slots__ = ("_peer_id", "_secret", "_seed")

    _seed: bytes
    _secret: bytes
    _peer_id: PeerId

    def __init__(self, seed: bytes) -> None:
        """Hold the identity of a 32-byte RFC 8032 private key; prefer :meth:`generate` and
        :meth:`from_bytes`, which check it."""
        # libsodium's secret key is the seed followed by the public key; signing needs both.
        public, secret = nacl.bindings.crypto_sign_seed_keypair(seed)
        object.__setattr__(self, "_seed", seed)
        object.__setattr__(self, "_secret", secret)
        object.__setattr__(self, "_peer_id", PeerId(public))

    @classmethod
    def generate(cls, seed: object = None) -> Identity:
        """Make an identity: a fresh random one, or the one determined by a 32-byte ``seed``.

        The seed is the RFC 8032 private key itself, so ``generate(seed=s)`` is the same
        identity as ``from_bytes(s)``; tests and the simulator derive seeds from their own seed.
        Without a seed the key comes from the operating system's randomness (libsodium's
        ``randombytes``).

        Raises:
            InvalidKeyError: ``seed`` is not 32 bytes.
        """
        if seed is None:
            return cls(nacl.utils.random(PRIVATE_KEY_SIZE))
        return cls.from_bytes(seed)

    @classmethod
    def from_bytes(cls, raw: object) -> Identity:
        """Load the identity whose raw 32-byte private key is ``raw`` (see :meth:`to_bytes`).

        Raises:
            InvalidKeyError: ``raw`` is not 32 bytes.
        """
        if not isinstance(raw, bytes) or len(raw) != PRIVATE_KEY_SIZE:
            length = len(raw) if isinstance(raw, bytes) else type(raw).__name__
            raise InvalidKeyError(
                f"an Ed25519 private key is {PRIVATE_KEY_SIZE} bytes, got {length}"
            )
        return cls(bytes(raw))

    def to_bytes(self) -> bytes:
        """Return the raw 32-byte private key: a secret, for the runtime's key file and the
        name of its player lock (``runtime/playerlock.py``) only."""
        return self._seed

    @property
    def peer_id(self) -> PeerId:
        """The 32-byte raw public key that names this player."""
        return self._peer_id

    @property
    def fingerprint(self) -> str:
        """The short human form of :attr:`peer_id` (see :func:`fingerprint`)."""
        return fingerprint(self._peer_id)

    def sign(self, data: bytes) -> bytes:
        """Return the 64-byte Ed25519 signature of ``data``.

        Ed25519 is deterministic: the same identity and data always give the same signature,
        whichever library makes it (libsodium here; OpenSSL made the same bytes before).
        Callers sign domain-separated bytes (the envelope prefixes its own tag).
        """
        # crypto_sign (libsodium's combined form: signature then message) called directly,
        # as in _sodium_equation: ~7 µs less a call than through nacl.bindings.
        out = _ffi.new("unsigned char[]", len(data) + SIGNATURE_SIZE)
        _lib.crypto_sign(out, _ffi.NULL, data, len(data), self._secret)
        signature: bytes = _ffi.buffer(out, SIGNATURE_SIZE)[:]
        return signature

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Identity):
            return NotImplemented
        return self._peer_id == other._peer_id

    def __hash__(self) -> int:
        return hash(self._peer_id)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.fingerprint})"
