"""Tests of p2p_nertz.protocol.identity: keys, signatures, peer ids and fingerprints."""

from __future__ import annotations

import re

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from hypothesis import given
from hypothesis import strategies as st

from p2p_nertz.errors import LocalProtocolError, NertzError
from p2p_nertz.protocol.identity import (
    PEER_ID_SIZE,
    SIGNATURE_SIZE,
    Identity,
    InvalidKeyError,
    fingerprint,
    is_valid_peer_id,
    parse_peer_id,
    verify,
)

seeds = st.binary(min_size=32, max_size=32)

# Edwards25519 (RFC 8032 §5.1), just enough arithmetic to check the small-order list.
P = 2**255 - 19
D = -121665 * pow(121666, -1, P) % P
NEUTRAL = (0, 1)


def _recover_x(y: int, sign: int) -> int | None:
    """Return the x of the curve point with this y and sign bit, or None if there is none."""
    x2 = (y * y - 1) * pow(D * y * y + 1, -1, P) % P
    x = pow(x2, (P + 3) // 8, P)
    if x * x % P != x2:
        x = x * pow(2, (P - 1) // 4, P) % P
    if x * x % P != x2:
        return None
    if x == 0 and sign == 1:
        return None  # "negative zero" is not a canonical encoding
    return P - x if x & 1 != sign else x


def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    (x1, y1), (x2, y2) = a, b
    t = D * x1 * x2 * y1 * y2 % P
    x3 = (x1 * y2 + x2 * y1) * pow(1 + t, -1, P) % P
    y3 = (y1 * y2 + x1 * x2) * pow(1 - t, -1, P) % P  # a = -1: y1*y2 - a*x1*x2
    return x3, y3


def _encode(y: int, sign: int) -> bytes:
    return (y | sign << 255).to_bytes(32, "little")


def _small_order_encodings() -> list[bytes]:
    """Every canonical encoding of a point P with 8P = 0 (the whole torsion subgroup)."""
    found = []
    for y in (0, 1, P - 1, *_order_8_ys()):
        for sign in (0, 1):
            x = _recover_x(y, sign)
            if x is not None:
                found.append(_encode(y, sign))
    return found


def _order_8_ys() -> list[int]:
    # For an order-8 point, 2P = (+-sqrt(-1), 0), so y^2 = -x^2; with the curve equation this
    # gives d*y^4 + 2*y^2 - 1 = 0, i.e. y^2 = (-1 + sqrt(1 + d)) / d (the other root has no root).
    s = pow(1 + D, (P + 3) // 8, P)
    if s * s % P != (1 + D) % P:
        s = s * pow(2, (P - 1) // 4, P) % P
    ys = []
    for root in (s, P - s):
        y2 = (-1 + root) * pow(D, -1, P) % P
        y = pow(y2, (P + 3) // 8, P)
        if y * y % P != y2:
            y = y * pow(2, (P - 1) // 4, P) % P
        if y * y % P == y2:
            ys += [y, P - y]
    return ys


def test_identity_generate_is_deterministic_from_seed() -> None:
    seed = bytes(range(32))
    assert Identity.generate(seed=seed).peer_id == Identity.generate(seed=seed).peer_id
    assert Identity.generate(seed=seed) == Identity.from_bytes(seed)


def test_identity_generate_without_seed_gives_distinct_keys() -> None:
    assert Identity.generate().peer_id != Identity.generate().peer_id


def test_identity_peer_id_is_known_for_rfc8032_test_vector() -> None:
    # RFC 8032 §7.1, TEST 1.
    secret = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    public = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
    signature = bytes.fromhex(
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
        "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
    )
    identity = Identity.from_bytes(secret)
    assert identity.peer_id == public
    assert identity.sign(b"") == signature
    assert verify(public, signature, b"")


@given(seeds)
def test_identity_bytes_round_trip(seed: bytes) -> None:
    identity = Identity.from_bytes(seed)
    assert identity.to_bytes() == seed
    assert Identity.from_bytes(identity.to_bytes()) == identity
    assert len(identity.peer_id) == PEER_ID_SIZE
    assert is_valid_peer_id(identity.peer_id)


@pytest.mark.parametrize("raw", [b"", bytes(31), bytes(33), bytearray(32), "0" * 32])
def test_identity_from_bytes_rejects_wrong_form(raw: bytes) -> None:
    with pytest.raises(InvalidKeyError) as caught:
        Identity.from_bytes(raw)
    assert isinstance(caught.value, LocalProtocolError | ValueError)
    assert isinstance(caught.value, NertzError)
    with pytest.raises(InvalidKeyError):
        Identity.generate(seed=raw)


@given(seeds, st.binary(max_size=200))
def test_identity_sign_is_deterministic_and_verifies(seed: bytes, data: bytes) -> None:
    identity = Identity.from_bytes(seed)
    signature = identity.sign(data)
    assert len(signature) == SIGNATURE_SIZE
    assert identity.sign(data) == signature
    assert Identity.from_bytes(seed).sign(data) == signature
    assert verify(identity.peer_id, signature, data)
    assert not verify(identity.peer_id, signature, data + b"\0")


def test_identity_sign_depends_on_key() -> None:
    alice, bob = Identity.generate(seed=bytes(32)), Identity.generate(seed=bytes([1]) * 32)
    signature = alice.sign(b"move")
    assert bob.sign(b"move") != signature
    assert not verify(bob.peer_id, signature, b"move")


def test_identity_repr_shows_fingerprint_not_secret() -> None:
    seed = bytes(range(32))
    identity = Identity.from_bytes(seed)
    assert repr(identity) == f"Identity({identity.fingerprint})"
    assert seed.hex() not in repr(identity)
    assert str(seed) not in repr(identity)


def test_identity_is_immutable() -> None:
    identity = Identity.generate(seed=bytes(32))
    with pytest.raises(AttributeError):
        identity.peer_id = bytes(32)  # type: ignore[misc, assignment]
    with pytest.raises(AttributeError):
        identity.other = 1


def test_identity_equality_and_hash_follow_the_key() -> None:
    a1, a2 = Identity.generate(seed=bytes(32)), Identity.generate(seed=bytes(32))
    b = Identity.generate(seed=bytes([1]) * 32)
    assert a1 == a2
    assert hash(a1) == hash(a2)
    assert a1 != b
    assert a1 != a1.peer_id
    assert len({a1, a2, b}) == 2


def test_fingerprint_is_stable() -> None:
    # Golden values: a fingerprint shown to a player must never change between versions.
    assert fingerprint(Identity.generate(seed=bytes(32)).peer_id) == "copd-sqhg-jnkj-c4ra"
    assert fingerprint(bytes(range(32))) == "mmg4-2klg-yqzw-neis"


@given(seeds)
def test_fingerprint_has_four_groups_of_four_base32(seed: bytes) -> None:
    identity = Identity.from_bytes(seed)
    assert re.fullmatch(r"[a-z2-7]{4}(-[a-z2-7]{4}){3}", identity.fingerprint)
    assert identity.fingerprint == fingerprint(identity.peer_id)


def test_fingerprint_rejects_wrong_length() -> None:
    with pytest.raises(InvalidKeyError):
        fingerprint(bytes(31))


@given(st.binary(max_size=40), st.binary(max_size=70), st.binary(max_size=50))
def test_verify_never_raises(peer_id: bytes, signature: bytes, data: bytes) -> None:
    assert verify(peer_id, signature, data) in (True, False)


def test_small_order_list_is_the_whole_torsion_subgroup() -> None:
    encodings = _small_order_encodings()
    assert len(set(encodings)) == 8  # E(F_p) has a torsion subgroup of order exactly 8
    for encoded in encodings:
        y = int.from_bytes(encoded, "little") & ((1 << 255) - 1)
        x = _recover_x(y, encoded[31] >> 7)
        assert x is not None
        point = (x, y)
        multiple = point
        for _ in range(7):
            multiple = _add(multiple, point)
        assert multiple == NEUTRAL
        assert not is_valid_peer_id(encoded)


def test_verify_refuses_small_order_key_forgery() -> None:
    # With the all-zero key (a point of order 4), the all-zero "signature" passes a plain
    # cofactorless check for some messages without any private key. That must not count.
    weak_key = Ed25519PublicKey.from_public_bytes(bytes(32))
    forged = []
    for i in range(64):
        message = i.to_bytes(2, "big")
        try:
            weak_key.verify(bytes(64), message)
        except Exception:
            continue
        forged.append(message)
    assert forged, "expected the library to accept at least one forgery (test premise)"
    for message in forged:
        assert not verify(bytes(32), bytes(64), message)


@pytest.mark.parametrize(
    "raw",
    [
        bytes(31),
        bytes(33),
        P.to_bytes(32, "little"),  # y = p: non-canonical 0
        (P + 2).to_bytes(32, "little"),  # y = p + 2: non-canonical 2
        b"\xff" * 32,
    ],
)
def test_is_valid_peer_id_rejects_malformed_encodings(raw: bytes) -> None:
    assert not is_valid_peer_id(raw)
    with pytest.raises(InvalidKeyError):
        parse_peer_id(raw)


def test_parse_peer_id_accepts_real_keys() -> None:
    peer_id = Identity.generate(seed=bytes(32)).peer_id
    assert parse_peer_id(peer_id) == peer_id
