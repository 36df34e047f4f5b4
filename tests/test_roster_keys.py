"""Roster keys are Ed25519 points of full order only (docs/protocol.md §3.1): the rule in
p2p_nertz.protocol.identity, and the lobby and the game spec refusing what it refuses.

The vectors are the public keys of the ed25519-speccheck set (novifinancial/ed25519-speccheck,
cases.txt), whose verdicts differ between libraries that verify with and without the cofactor,
the non-canonical encodings of RFC 8032 §5.1.3, and the RFC 8032 §7.1 keys, which must pass.
"""

from __future__ import annotations

import hashlib

import msgpack  # type: ignore[import-untyped]
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p_nertz.errors import InvalidRulesError
from p2p_nertz.lobby.messages import (
    LobbyMessageError,
    Seat,
    Start,
    TableView,
    decode,
    encode,
)
from p2p_nertz.protocol.envelope import PROTOCOL_VERSION
from p2p_nertz.protocol.identity import (
    Identity,
    InvalidKeyError,
    has_full_order,
    is_valid_peer_id,
    key_fault,
    parse_peer_id,
)
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rules import Rules

# -- an independent, affine Edwards25519 (RFC 8032 §5.1), slow and plain -------------------------
P = 2**255 - 19
D = -121665 * pow(121666, -1, P) % P
L = 2**252 + 27742317777372353535851937790883648493
NEUTRAL = (0, 1)


def recover_x(y: int, sign: int) -> int | None:
    x2 = (y * y - 1) * pow(D * y * y + 1, -1, P) % P
    x = pow(x2, (P + 3) // 8, P)
    if x * x % P != x2:
        x = x * pow(2, (P - 1) // 4, P) % P
    if x * x % P != x2 or (x == 0 and sign == 1):
        return None
    return P - x if x & 1 != sign else x


def add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    (x1, y1), (x2, y2) = a, b
    t = D * x1 * x2 * y1 * y2 % P
    return (
        (x1 * y2 + x2 * y1) * pow(1 + t, -1, P) % P,
        (y1 * y2 + x1 * x2) * pow(1 - t, -1, P) % P,
    )


def times(k: int, a: tuple[int, int]) -> tuple[int, int]:
    result, addend = NEUTRAL, a
    while k:
        if k & 1:
            result = add(result, addend)
        addend = add(addend, addend)
        k >>= 1
    return result


def encode_point(a: tuple[int, int]) -> bytes:
    x, y = a
    return (y | (x & 1) << 255).to_bytes(32, "little")


def decode_point(raw: bytes) -> tuple[int, int]:
    value = int.from_bytes(raw, "little")
    y = value & ((1 << 255) - 1)
    x = recover_x(y, value >> 255)
    assert x is not None
    return x, y


BASE = decode_point((4 * pow(5, -1, P) % P).to_bytes(32, "little"))  # RFC 8032: y = 4/5
ORDER_8 = decode_point(
    bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
)

# -- the vectors ---------------------------------------------------------------------------------
SPECCHECK_SMALL = [  # cases 0, 1: A of small order (order 8, x negative)
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
]
SPECCHECK_MIXED = [  # cases 2, 8, 9 and 3, 4, 5: A of mixed order
    "f7badec5b8abeaf699583992219b7b223f1df3fbbea919844e3f7c554a43dd43",
    "cdb267ce40c5cd45306fa5d2f29731459387dbf9eb933b7bd5aed9a765b88d4d",
]
SPECCHECK_NON_CANONICAL = [  # cases 10, 11: (0, -1) with the sign bit set
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
]
SPECCHECK_FULL = [  # cases 6, 7: A of full order (their R is the mixed one)
    "442aad9f089ad9e14647b1ef9099a1ff4798d78589e66f28eca69c11f582a623",
]
RFC8032_KEYS = [  # §7.1, TEST 1, 2, 3, 1024 and SHA(abc)
    "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
    "278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e",
    "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
]


def small_order_encodings() -> list[bytes]:
    """All eight points P with 8P = 0, canonically encoded."""
    found = {encode_point(times(k, ORDER_8)) for k in range(8)}
    assert len(found) == 8
    return sorted(found)


def non_canonical_encodings() -> list[bytes]:
    """Every 32-byte string with y >= p (both signs), and "negative zero" x for y = +-1."""
    out = [((P + i) | sign << 255).to_bytes(32, "little") for i in range(19) for sign in (0, 1)]
    out += [(1 | 1 << 255).to_bytes(32, "little"), ((P - 1) | 1 << 255).to_bytes(32, "little")]
    return out


def mixed_order_key(scalar: int, torsion: int) -> bytes:
    """The full-order key of ``scalar`` plus ``torsion`` times a point of order 8."""
    return encode_point(add(times(scalar, BASE), times(torsion, ORDER_8)))


# -- the rule ------------------------------------------------------------------------------------
@pytest.mark.parametrize("hex_key", RFC8032_KEYS + SPECCHECK_FULL)
def test_roster_key_of_full_order_passes(hex_key: str) -> None:
    raw = bytes.fromhex(hex_key)
    assert key_fault(raw) is None
    assert has_full_order(raw)
    assert parse_peer_id(raw) == raw


@pytest.mark.parametrize("hex_key", SPECCHECK_SMALL)
def test_roster_key_of_small_order_from_speccheck_is_refused(hex_key: str) -> None:
    assert key_fault(bytes.fromhex(hex_key)) == "a point of small order"


@pytest.mark.parametrize("hex_key", SPECCHECK_MIXED)
def test_roster_key_of_mixed_order_from_speccheck_is_refused(hex_key: str) -> None:
    raw = bytes.fromhex(hex_key)
    assert is_valid_peer_id(raw)  # the cheap per-message check cannot see it...
    Ed25519PublicKey.from_public_bytes(raw)  # ...nor OpenSSL...
    assert key_fault(raw) == "a point of mixed order (it has a small-order component)"
    with pytest.raises(InvalidKeyError, match="mixed order"):
        parse_peer_id(raw)


@pytest.mark.parametrize("hex_key", SPECCHECK_NON_CANONICAL)
def test_roster_key_non_canonical_from_speccheck_is_refused(hex_key: str) -> None:
    assert "not a canonical encoding" in str(key_fault(bytes.fromhex(hex_key)))


@pytest.mark.parametrize("raw", small_order_encodings(), ids=lambda r: r.hex()[:8])
def test_roster_key_refuses_all_eight_small_order_points(raw: bytes) -> None:
    assert key_fault(raw) == "a point of small order"


@pytest.mark.parametrize("raw", non_canonical_encodings(), ids=lambda r: r.hex()[:8])
def test_roster_key_refuses_every_non_canonical_encoding(raw: bytes) -> None:
    fault = key_fault(raw)
    assert fault is not None and fault.startswith("not a canonical encoding"), fault


@pytest.mark.parametrize("torsion", range(1, 8))
def test_roster_key_refuses_a_full_order_key_plus_any_torsion(torsion: int) -> None:
    raw = mixed_order_key(0x1234567, torsion)
    assert key_fault(raw) == "a point of mixed order (it has a small-order component)"
    assert key_fault(mixed_order_key(0x1234567, 0)) is None


def test_roster_key_refuses_a_point_off_the_curve() -> None:
    y = next(y for y in range(2, 100) if recover_x(y, 0) is None)
    assert key_fault(y.to_bytes(32, "little")) == "not a point of the curve"


@pytest.mark.parametrize("raw", [b"", bytes(31), bytes(33), bytearray(32), "0" * 32])
def test_roster_key_refuses_what_is_not_32_bytes(raw: bytes) -> None:
    assert key_fault(raw) == "not 32 bytes"


@settings(max_examples=20, deadline=None)
@given(st.integers(min_value=1, max_value=L - 1), st.integers(min_value=0, max_value=7))
def test_roster_key_verdict_matches_the_slow_order_check(scalar: int, torsion: int) -> None:
    raw = mixed_order_key(scalar, torsion)
    point = decode_point(raw)
    assert has_full_order(raw) == (times(L, point) == NEUTRAL and point != NEUTRAL)


# -- where keys are refused ---------------------------------------------------------------------
MIXED = bytes.fromhex(SPECCHECK_MIXED[0])


def test_game_spec_refuses_a_roster_key_of_mixed_order() -> None:
    alice = Identity.generate(seed=bytes(32))
    with pytest.raises(InvalidRulesError, match="mixed order"):
        GameSpec.create([(alice.peer_id, "Alice"), (MIXED, "Mallory")], Rules(), b"x")


def test_game_spec_read_from_bytes_refuses_a_roster_key_of_mixed_order() -> None:
    alice = Identity.generate(seed=bytes(32))
    good = GameSpec.create(
        [(alice.peer_id, "Alice"), (Identity.generate(seed=b"\1" * 32).peer_id, "Bob")],
        Rules(),
        b"x",
    )
    roster = sorted([[alice.peer_id, "Alice"], [MIXED, "Mallory"]])
    wire = msgpack.packb([1, roster, good.rules.to_dict(), b"x"], use_bin_type=True)
    with pytest.raises(InvalidRulesError, match="mixed order"):
        GameSpec.from_wire(wire)


SIGNER_SCALAR = 0xC0FFEE
SIGNER = mixed_order_key(SIGNER_SCALAR, 1)  # a key whose private scalar we know


def _sign_as_mixed_key(message: bytes) -> bytes:
    """An RFC 8032 signature of ``message`` by :data:`SIGNER` that OpenSSL (which verifies
    without the cofactor) accepts: the nonce is tried until 8 divides the hash."""
    for nonce in range(1, 200):
        r_point = encode_point(times(nonce, BASE))
        k = int.from_bytes(hashlib.sha512(r_point + SIGNER + message).digest(), "little") % L
        if k % 8 == 0:
            s = (nonce + k * SIGNER_SCALAR) % L
            return r_point + s.to_bytes(32, "little")
    raise AssertionError("no nonce found")  # pragma: no cover


def test_lobby_refuses_a_hello_signed_by_a_mixed_order_key() -> None:
    payload = msgpack.packb(
        [
            3,
            "hello",
            bytes(32),
            SIGNER,
            bytes(32),
            ["Mallory", "tcp://127.0.0.1:5555", True, b"", PROTOCOL_VERSION],
        ],
        use_bin_type=True,
    )
    signed = b"p2p-nertz/v1/lobby\0" + payload
    signature = _sign_as_mixed_key(signed)
    Ed25519PublicKey.from_public_bytes(SIGNER).verify(signature, signed)  # the premise
    with pytest.raises(LobbyMessageError, match="mixed order"):
        decode(payload + signature)


def test_lobby_refuses_a_table_or_start_seating_a_mixed_order_key() -> None:
    host = Identity.generate(seed=bytes(32))
    seat = Seat(MIXED, "Mallory", "tcp://127.0.0.1:5555", True)  # type: ignore[arg-type]
    table = encode(host, bytes(32), TableView(Rules().to_dict(), 8, (seat,)))
    with pytest.raises(LobbyMessageError, match="mixed order"):
        decode(table)
    start = encode(host, bytes(32), Start(b"spec", {MIXED: "tcp://127.0.0.1:5555"}))  # type: ignore[dict-item]
    with pytest.raises(LobbyMessageError, match="mixed order"):
        decode(start)
