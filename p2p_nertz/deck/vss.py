"""A member who drops mid-round: Feldman VSS of each round secret among the others.

At the deal each member ``i`` splits its secret ``x_i`` with a polynomial of degree ``t − 1``::

    f_i(z) = x_i + a_1·z + … + a_{t−1}·z^{t−1}     (a_k = H("vss", x_i, context, k))
    σ_ij   = f_i(j + 1)                             (member j's share; index = seat + 1)
    A_k    = a_k·G                                  (published; A_0 = X_i, the key itself)

and boxes each ``σ_ij`` to member ``j`` (:func:`deal_shares`). Member ``j`` opens its box and
checks ``σ_ij·G = Σ_k (j + 1)^k·A_k`` (:func:`open_share`). If ``i`` drops mid-round, any ``t``
members left make *partial shares* ``σ_ij·C1`` of a position, each proven against the public
``σ_ij·G`` (:func:`share_key`), and the Lagrange combination at 0 gives ``x_i·C1``, the share
``i`` can no longer send (:func:`combine_partials`). After the round the members left publish
the shares they hold of a dropped member's secret, which rebuilds ``x_i`` (:func:`reconstruct`),
so its stages can be re-run and checked too.

The threshold is the drop majority, ``t = N // 2 + 1`` (protocol.md §9.2): the members who can
vote a member out are the members who can open its cards. The price: ``t`` members who collude
rebuild every member's secret and read every card. With two members there is no VSS (a member
of two that drops ends the game: protocol.md §9.3), :func:`threshold` is ``None``.

**Boxes.** A share is boxed (``crypto_box``: X25519, XSalsa20-Poly1305) from a box key derived
from the dealer's secret to the recipient's identity key converted to X25519, with a nonce
derived from the round, both seats and the box key. Everything in a dealing is then a function
of the dealer's secret and the public identities, so once the secret is revealed anyone re-makes
the dealing and compares it byte for byte (docs/shuffle.md §5).

>>> threshold(2), threshold(3), threshold(4), threshold(8)
(None, 2, 3, 5)
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nacl import bindings as sodium
from nacl.exceptions import CryptoError

from p2p_nertz.deck.group import (
    ORDER,
    SCALAR_BYTES,
    DeckError,
    add,
    base_mul,
    check_point,
    check_scalar,
    hash_scalar,
    mul,
    scalar_bytes,
)
from p2p_nertz.deck.keys import MemberKey

__all__ = [
    "BOX_BYTES",
    "Dealing",
    "check_dealing",
    "check_revealed_share",
    "combine_partials",
    "deal_shares",
    "lagrange",
    "open_share",
    "reconstruct",
    "share_key",
    "threshold",
    "x25519_public",
    "x25519_secret",
]

#: A boxed share: 32 bytes of scalar and Poly1305's 16-byte tag.
BOX_BYTES = SCALAR_BYTES + 16


def threshold(members: int) -> int | None:
    """The number of shares that rebuild a secret: the drop majority; ``None`` under 3 members."""
    if members < 3:
        return None
    return members // 2 + 1


def x25519_public(peer_id: bytes) -> bytes:
    """A member's identity (an Ed25519 public key) as the X25519 key its shares are boxed to."""
    try:
        return sodium.crypto_sign_ed25519_pk_to_curve25519(peer_id)
    except (CryptoError, RuntimeError, TypeError) as err:
        raise DeckError(f"not an identity key to box to: {err}") from None


def x25519_secret(identity_seed: bytes) -> bytes:
    """The X25519 secret of a member's identity, from its 32-byte Ed25519 private seed."""
    _, secret = sodium.crypto_sign_seed_keypair(identity_seed)
    return sodium.crypto_sign_ed25519_sk_to_curve25519(secret)


@dataclass(frozen=True, slots=True)
class Dealing:
    """One member's VSS dealing of its round secret.

    Attributes:
        commitments: ``A_1 … A_{t−1}`` (``A_0`` is the member's key, published beside them).
        box_key: the X25519 public box key ``E_i`` the shares are boxed from.
        boxes: one boxed share per other member, in seat order (the dealer's own seat skipped).
    """

    commitments: tuple[bytes, ...]
    box_key: bytes
    boxes: tuple[bytes, ...]


def _coefficients(key: MemberKey, t: int) -> list[int]:
    x = key.secret_bytes
    return [key.x] + [hash_scalar("vss", x, key.context, bytes([k])) for k in range(1, t)]


def _evaluate(coefficients: Sequence[int], seat: int) -> int:
    value = 0
    for a in reversed(coefficients):
        value = (value * (seat + 1) + a) % ORDER
    return value


def _box_secret(key: MemberKey) -> bytes:
    return hashlib.sha512(b"p2p-nertz/v3/vss-box-key\0" + key.secret_bytes + key.context).digest()[
        :32
    ]


def _nonce(context: bytes, dealer: int, recipient: int, box_key: bytes) -> bytes:
    raw = b"p2p-nertz/v3/vss-box\0" + context + bytes([dealer, recipient]) + box_key
    return hashlib.sha256(raw).digest()[:24]


def deal_shares(key: MemberKey, seat: int, recipients: Sequence[bytes]) -> Dealing:
    """Member ``seat``'s dealing: ``recipients[j]`` is member j's X25519 key (own entry unused)."""
    members = len(recipients)
    t = threshold(members)
    if t is None or not 0 <= seat < members:
        raise ValueError(f"no VSS dealing for seat {seat} of {members} members")
    coefficients = _coefficients(key, t)
    secret = _box_secret(key)
    box_key = sodium.crypto_scalarmult_base(secret)
    boxes = []
    for j, recipient in enumerate(recipients):
        if j == seat:
            continue
        share = scalar_bytes(_evaluate(coefficients, j))
        nonce = _nonce(key.context, seat, j, box_key)
        boxes.append(sodium.crypto_box(share, nonce, recipient, secret))
    return Dealing(tuple(base_mul(a) for a in coefficients[1:]), box_key, tuple(boxes))


def share_for(key: MemberKey, recipient: int, members: int) -> int:
    """Member ``recipient``'s share of ``key``'s secret, as the dealer's box holds it: what
    the dealer answers a complaint with, in the clear (docs/shuffle.md §6.3)."""
    t = threshold(members)
    if t is None or not 0 <= recipient < members:
        raise ValueError(f"no VSS share for seat {recipient} of {members} members")
    return _evaluate(_coefficients(key, t), recipient)


def share_key(public: bytes, commitments: Sequence[bytes], seat: int) -> bytes:
    """``σ·G`` for member ``seat``'s share: ``Σ_k (seat + 1)^k·A_k`` with ``A_0 = public``."""
    return _share_key(public, tuple(commitments), seat)


@functools.lru_cache(maxsize=1024)
def _share_key(public: bytes, commitments: tuple[bytes, ...], seat: int) -> bytes:
    # Kept: a fold checks every partial share of a member dropped against this value, and
    # each refold of the round from scratch checks them all again (8 players, a member
    # dropped: 369,252 calls, 38 % of the game's CPU, for at most 8 × 7 distinct values a
    # round, scan24 soak seed 49013). Pure in its arguments, so remembered; at most 1024
    # values of about 32 × (t + 1) bytes each (docs/shuffle.md, performance).
    total = public
    power = 1
    for a in commitments:
        power = power * (seat + 1) % ORDER
        total = add(total, mul(power, a))
    return total


def _check_shape(dealing: Dealing, members: int) -> None:
    t = threshold(members)
    if t is None:
        raise DeckError(f"a dealing among {members} members: no VSS under 3 members")
    if len(dealing.commitments) != t - 1:
        raise DeckError(f"dealing: expected {t - 1} commitments, got {len(dealing.commitments)}")
    if len(dealing.boxes) != members - 1:
        raise DeckError(f"dealing: expected {members - 1} boxes, got {len(dealing.boxes)}")
    for k, a in enumerate(dealing.commitments, start=1):
        check_point(a, f"dealing commitment A_{k}")
    if not isinstance(dealing.box_key, bytes) or len(dealing.box_key) != 32:
        raise DeckError("dealing: the box key is not 32 bytes")
    for box in dealing.boxes:
        if not isinstance(box, bytes) or len(box) != BOX_BYTES:
            raise DeckError(f"dealing: a box is not {BOX_BYTES} bytes")


def open_share(
    dealing: Dealing,
    *,
    public: bytes,
    dealer: int,
    seat: int,
    members: int,
    secret: bytes,
    context: bytes,
) -> int:
    """Member ``seat``'s share of ``dealer``'s secret, opened and checked against the commitments.

    ``secret`` is the recipient's X25519 secret (:func:`x25519_secret`). Raises
    :class:`DeckError` if the box does not open or the share is not the committed one: the
    recipient then complains (docs/shuffle.md §5.3).
    """
    _check_shape(dealing, members)
    if seat == dealer or not 0 <= seat < members:
        raise ValueError(f"seat {seat} holds no share of seat {dealer}'s secret")
    box = dealing.boxes[seat if seat < dealer else seat - 1]
    nonce = _nonce(context, dealer, seat, dealing.box_key)
    try:
        raw = sodium.crypto_box_open(box, nonce, dealing.box_key, secret)
    except (CryptoError, RuntimeError) as err:
        raise DeckError(f"the share boxed by seat {dealer} for seat {seat} does not open") from err
    value = check_scalar(raw, f"share of seat {dealer}'s secret")
    check_revealed_share(value, public=public, commitments=dealing.commitments, seat=seat)
    return value


def check_revealed_share(
    value: int, *, public: bytes, commitments: Sequence[bytes], seat: int
) -> None:
    """Check ``value`` is member ``seat``'s share of the committed secret (:class:`DeckError`)."""
    if base_mul(value) != share_key(public, commitments, seat):
        raise DeckError(f"the share for seat {seat} is not the one the commitments fix")


def check_dealing(dealing: Dealing, key: MemberKey, seat: int, recipients: Sequence[bytes]) -> bool:
    """After the round: whether ``dealing`` is the one the revealed secret makes, byte for byte."""
    return deal_shares(key, seat, recipients) == dealing


def lagrange(seats: Sequence[int]) -> dict[int, int]:
    """The Lagrange coefficients at 0 of the members ``seats`` (indices ``seat + 1``)."""
    if len(set(seats)) != len(seats) or not seats:
        raise ValueError(f"Lagrange needs distinct seats, not {list(seats)}")
    out = {}
    for j in seats:
        num, den = 1, 1
        for m in seats:
            if m != j:
                num = num * (m + 1) % ORDER
                den = den * (m - j) % ORDER
        out[j] = num * pow(den, -1, ORDER) % ORDER
    return out


def combine_partials(partials: Mapping[int, bytes]) -> bytes:
    """``x_i·C1`` from ``t`` partial shares ``σ_ij·C1``, keyed by the seat ``j`` that made each."""
    return _combined(tuple(sorted(partials.items())))


@functools.lru_cache(maxsize=2048)
def _combined(partials: tuple[tuple[int, bytes], ...]) -> bytes:
    # Kept: a peer's held view opens every position its share store holds again at each look
    # (``ShareStore.held_table``), a dropped member's share each time from the same partials:
    # 75 % of the CPU at 8 players once share_key was kept (scan24 seed 49013, py-spy). Pure
    # in its arguments; at most 2048 values (one per position turned up and member dropped).
    held = dict(partials)
    total: bytes | None = None
    for j, coefficient in lagrange(sorted(held)).items():
        term = mul(coefficient, held[j])
        total = term if total is None else add(total, term)
    assert total is not None
    return total


def reconstruct(shares: Mapping[int, int]) -> int:
    """The secret ``f(0)`` from ``t`` shares ``σ_j``, keyed by seat."""
    return sum(c * shares[j] for j, c in lagrange(sorted(shares)).items()) % ORDER
