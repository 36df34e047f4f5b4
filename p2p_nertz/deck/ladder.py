"""Many multiples of one fixed point, through libsodium's X25519 ladder.

Theory of operation
-------------------
A shuffle stage multiplies the joint key ``X`` by 52 scalars (``r_k·X``, docs/shuffle.md §4.2),
and the checks after the round re-run every stage, N² of them. libsodium's
``crypto_scalarmult_ed25519_noclamp`` spends about half of each call checking that its input
point is in the prime-order subgroup (a multiplication by ``L``), for a point that is the same
at every call and was checked once when the keys came in. Its X25519 function,
``crypto_scalarmult_curve25519`` (``crypto_scalarmult``), checks nothing, is written for speed,
and works on the same group seen through the Montgomery form of the curve; it takes a quarter to
a third of the time (31 µs against 93–133 µs in session 16). It gives only the Montgomery
``u``-coordinate of the product, for a clamped scalar, so three things are put back here:

- **the scalar.** X25519 clamps: it multiplies by ``8·m`` with ``2^251 ≤ m < 2^252``. ``X`` is
  of order ``L``, so ``r·X = (8·m)·X`` for ``m = r/8 mod L``, and ``u`` is the same for
  ``−r·X``: one of ``m`` and ``L − m`` is in range unless ``m`` is within ``2^125`` of ``0`` or
  ``L`` (then the checked multiplication is used);
- **the sign.** ``u`` is that of ``±r·X``. The ``u`` of ``(r + 1)·X`` as well, from a second
  ladder, gives the ``v``-coordinate of ``r·X`` exactly (Okeya–Sakurai's recovery, with ``X``'s
  own ``(u, v)``);
- **the encoding.** ``(u, v)`` goes back to Edwards ``(x, y)`` and to the canonical 32-byte
  encoding, with one field inversion for all the scalars of a call (Montgomery's trick).

The bytes are those of the checked multiplication, which stays the slow twin of this fast path
(``tests/test_deck_ladder.py`` compares them). Only :func:`multiples` of a point that has passed
:func:`~p2p_nertz.deck.group.check_point` (a joint key made of checked keys) may be asked for.

**Checking many points.** libsodium's ``crypto_core_ed25519_is_valid_point`` multiplies each
point by ``L``. :func:`valid_points` gives its answer for every 32-byte string with one ladder
a point: write a point as ``P = P' + T``, ``P'`` in the prime-order subgroup and ``T`` of order
dividing 8. X25519 by ``k = 5L − 1`` (a multiple of 8 in the clamp's range, and ``−1`` mod
``L``) gives ``u(k·P) = u(−P') = u(P')``, which is ``u(P)`` only if ``P' = ±P``, i.e. ``T = 0``;
a ``y`` on no point of the curve gives a ``u`` of the twist, of order ``4·q`` for a prime ``q``
that divides neither ``k − 1`` nor ``k + 1``, so that ``u(k·Q) ≠ u(Q)`` there; the small-order
points give 0, which libsodium refuses. The encoding must be canonical (``y < p``); either sign
of ``x`` encodes a point of the subgroup or neither does, and ``x = 0`` is only at ``y = ±1``
(the identity and the point of order 2: refused).

>>> from p2p_nertz.deck.group import base_mul, mul
>>> point = base_mul(12345)
>>> multiples(point).of([7, 2**200 + 1]) == [mul(7, point), mul(2**200 + 1, point)]
True
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import nacl.bindings  # noqa: F401  (imported first: it initialises libsodium, sodium_init)
from nacl._sodium import ffi as _ffi  # type: ignore[import-not-found]
from nacl._sodium import lib as _lib

from p2p_nertz.curve import SQRT_M1 as _SQRT_M1
from p2p_nertz.curve import D as _D
from p2p_nertz.curve import P as _P
from p2p_nertz.deck.group import ORDER, check_point, mul

__all__ = ["Multiples", "multiples", "valid_points"]

#: Montgomery's ``A`` (``v² = u³ + A·u² + u``), and ``c`` with ``c² = −(A + 2)``: the maps
#: ``(u, v) = ((1 + y)/(1 − y), c·u/x)`` and back, ``x = c·u/v``, ``y = (u − 1)/(u + 1)``.
_A = 486662
_C = pow(_P - (_A + 2), (_P + 3) // 8, _P)
if _C * _C % _P != _P - (_A + 2):
    _C = _C * _SQRT_M1 % _P
_INV8 = pow(8, -1, ORDER)
#: ``5L − 1``: ``≡ −1 (mod L)``, ``≡ 0 (mod 8)``, ``2^254 ≤ k < 2^255`` (X25519's clamp keeps it).
_MINUS_ONE = (5 * ORDER - 1).to_bytes(32, "little")
_Y_MASK = (1 << 255) - 1
_LOW, _HIGH = 2**251, 2**252


def _edwards_xy(point: bytes) -> tuple[int, int]:
    """Affine Edwards coordinates of a valid point's encoding (RFC 8032 §5.1.3)."""
    raw = int.from_bytes(point, "little")
    y, sign = raw & ((1 << 255) - 1), raw >> 255
    yy = y * y % _P
    x2 = (yy - 1) * pow(_D * yy + 1, _P - 2, _P) % _P
    x = pow(x2, (_P + 3) // 8, _P)
    if x * x % _P != x2:
        x = x * _SQRT_M1 % _P
    if x & 1 != sign:
        x = _P - x
    return x, y


class Multiples:
    """``r·point`` for many ``r``, one fixed ``point`` (see the module's docstring)."""

    __slots__ = ("_point", "_u", "_u_bytes", "_v2_inv")

    def __init__(self, point: bytes) -> None:
        self._point = check_point(point, "fixed point")
        x, y = _edwards_xy(point)
        u = (1 + y) * pow(1 - y, _P - 2, _P) % _P
        v = _C * u * pow(x, _P - 2, _P) % _P
        self._u = u
        self._u_bytes = u.to_bytes(32, "little")
        self._v2_inv = pow(2 * v, _P - 2, _P)

    def _ladder(self, scalar: int) -> int | None:
        """``u`` of ``scalar·point``, or ``None`` where X25519's clamp cannot express it."""
        m = scalar * _INV8 % ORDER
        if not _LOW <= m < _HIGH:
            m = ORDER - m
            if not _LOW <= m < _HIGH:
                return None
        out = _ffi.new("unsigned char[32]")
        if _lib.crypto_scalarmult(out, (8 * m).to_bytes(32, "little"), self._u_bytes):
            return None  # an all-zero result: never for a scalar in range and a checked point
        return int.from_bytes(_ffi.buffer(out, 32), "little")

    def of(self, scalars: Sequence[int]) -> list[bytes]:
        """``[r·point for r in scalars]``, byte for byte what :func:`~.group.mul` gives.

        Raises :class:`~p2p_nertz.deck.group.DeckError` for a scalar of 0 mod ``L``, as
        :func:`~.group.mul` does.
        """
        up, p = self._u, _P
        recovered: list[tuple[int, int] | None] = []
        denominators: list[int] = []
        for r in scalars:
            uq = self._ladder(r)
            ur = self._ladder(r + 1)
            if uq is None or ur is None or uq == up:
                recovered.append(None)  # the slow twin below (never for a random scalar)
                continue
            # Okeya–Sakurai: v of Q = r·P from u of P, Q and Q + P, and v of P.
            diff = up - uq
            vq = ((up * uq + 1) * (up + uq + 2 * _A) - 2 * _A - diff * diff % p * ur) % p
            vq = vq * self._v2_inv % p
            w = (uq + 1) * vq % p
            if not w:
                recovered.append(None)
                continue
            recovered.append((uq, vq))
            denominators.append(w)
        inverses = _batch_inverse(denominators)
        out: list[bytes] = []
        at = 0
        for r, uv in zip(scalars, recovered, strict=True):
            if uv is None:
                out.append(mul(r, self._point))
                continue
            uq, vq = uv
            inv = inverses[at]
            at += 1
            y = (uq - 1) * vq % p * inv % p  # (u − 1)/(u + 1)
            x = _C * uq % p * (uq + 1) % p * inv % p  # c·u/v
            out.append((y | (x & 1) << 255).to_bytes(32, "little"))
        return out


def _batch_inverse(values: list[int]) -> list[int]:
    """The inverses mod p of non-zero ``values``, with one exponentiation (Montgomery)."""
    if not values:
        return []
    prefix = [1] * (len(values) + 1)
    for i, value in enumerate(values):
        prefix[i + 1] = prefix[i] * value % _P
    inv = pow(prefix[-1], _P - 2, _P)
    out = [0] * len(values)
    for i in range(len(values) - 1, -1, -1):
        out[i] = prefix[i] * inv % _P
        inv = inv * values[i] % _P
    return out


@functools.lru_cache(maxsize=64)
def multiples(point: bytes) -> Multiples:
    """The :class:`Multiples` of ``point``, remembered: a round's joint key is asked for at
    every stage, of the deal and of the checks after the round. :class:`DeckError` if
    ``point`` is not a valid point."""
    return Multiples(point)


def valid_points(raws: Sequence[bytes]) -> list[bool]:
    """For each string, what ``crypto_core_ed25519_is_valid_point`` says of it: a canonical
    encoding of a point of the prime-order subgroup, not the identity (see the module's
    docstring; ``tests/test_deck_ladder.py`` compares the two). One X25519 ladder a point and
    one field inversion for all of them, where libsodium multiplies each by ``L``."""
    ys: list[int] = []
    for raw in raws:
        y = int.from_bytes(raw, "little") & _Y_MASK if len(raw) == 32 else _P
        ys.append(y if y < _P and y != 1 else 0)  # 0: refused (1 − y is never 0 then)
    inverses = _batch_inverse([(1 - y) % _P if y else 1 for y in ys])
    out = _ffi.new("unsigned char[32]")
    answers = []
    for y, inv in zip(ys, inverses, strict=True):
        if not y:
            answers.append(False)
            continue
        u = (1 + y) * inv % _P
        if _lib.crypto_scalarmult(out, _MINUS_ONE, u.to_bytes(32, "little")):
            answers.append(False)  # k·P is the identity (P of small order) or u is refused
            continue
        answers.append(int.from_bytes(_ffi.buffer(out, 32), "little") == u)
    return answers
