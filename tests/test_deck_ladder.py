"""The fast paths of a stage against their slow twins: the X25519 ladder for ``r·X`` and
``(r + 1)·G`` at stage 0 against libsodium's checked multiplication, one re-encryption at a
time; the ladder's check of many points against ``crypto_core_ed25519_is_valid_point``; and
the deal's bytes pinned for a few seeds."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nacl import bindings as sodium

from p2p_nertz.deck.deal import DealTranscript
from p2p_nertz.deck.elgamal import Deck, initial_deck, reencrypt, shuffle_stage, stage_plan
from p2p_nertz.deck.group import BASE, ORDER, DeckError, base_mul, mul
from p2p_nertz.deck.keys import joint_key
from p2p_nertz.deck.ladder import Multiples, multiples, valid_points
from p2p_nertz.rules.cards import new_deck
from tests.deck_helpers import CONTEXT, deal, member_keys
from tests.test_deck import MIXED, NOT_CANONICAL, SMALL_ORDER

_INV8 = pow(8, -1, ORDER)
# Scalars at the edges of what the ladder expresses (X25519 multiplies by 8·m, 2^251 ≤ m <
# 2^252): 0 < m ≤ 2^125 and L − 2^125 ≤ m < L go to the checked multiplication; r = ±1 has
# u(r·X) = u(X), where the recovery of v does not hold.
EDGES = [
    1,
    2,
    3,
    8,
    16,
    ORDER - 1,
    ORDER - 2,
    ORDER - 8,
    2**251 * 8 % ORDER,
    (2**252 - 1) * 8 % ORDER,
    (ORDER - 2**251) * 8 % ORDER,
    2**125 * 8 % ORDER,
    (ORDER - 2**125) * 8 % ORDER,
    _INV8,
]


def _slow_stage(secret: int, deck: int, source: Deck, joint: bytes) -> Deck:
    plan = stage_plan(secret, CONTEXT, deck, len(source))
    return Deck(
        tuple(reencrypt(source[p], r, joint) for p, r in zip(plan.perm, plan.rand, strict=True))
    )


@settings(max_examples=30, deadline=None)
@given(
    st.integers(min_value=1, max_value=ORDER - 1),
    st.lists(st.integers(min_value=1, max_value=ORDER - 1), min_size=1, max_size=6),
)
def test_deck_ladder_multiples_are_the_checked_products(point_log: int, scalars: list[int]) -> None:
    point = base_mul(point_log)
    assert Multiples(point).of(scalars) == [mul(r, point) for r in scalars]


def test_deck_ladder_multiples_at_the_edges_are_the_checked_products() -> None:
    for point in (BASE, base_mul(2), base_mul(ORDER - 1), base_mul(987654321)):
        assert multiples(point).of(EDGES) == [mul(r, point) for r in EDGES]
    assert multiples(BASE).of([]) == []


def test_deck_ladder_refuses_a_zero_scalar_and_a_bad_point() -> None:
    point = base_mul(5)
    for zero in (0, ORDER, 5 * ORDER):
        with pytest.raises(DeckError, match="cannot multiply"):
            multiples(point).of([3, zero])
    for bad in (SMALL_ORDER, MIXED, b"\x01" * 31):
        with pytest.raises(DeckError):
            Multiples(bad)


@settings(max_examples=10, deadline=None)
@given(st.binary(min_size=1, max_size=8), st.integers(min_value=0, max_value=3))
def test_deck_stage_is_its_slow_twin_at_every_stage(seed: bytes, deck: int) -> None:
    keys = member_keys(4, seed=seed.hex())
    joint = joint_key(k.public for k in keys)
    source = initial_deck(new_deck(jokers=deck % 2 * 2), joint)  # stage 0: C1 is G
    for key in keys:
        fast = shuffle_stage.__wrapped__(key.x, CONTEXT, deck, source, joint)
        assert fast == _slow_stage(key.x, deck, source, joint)
        source = fast  # the later stages: C1 is not G


def test_deck_stage_zero_takes_c1_equal_to_g_anywhere() -> None:
    """A C1 equal to G after stage 0 (a peer may send one) gives the same bytes as a sum."""
    keys = member_keys(2, seed="g")
    joint = joint_key(k.public for k in keys)
    later = shuffle_stage(keys[0].x, CONTEXT, 0, initial_deck(new_deck()[:6], joint), joint)
    mixed = Deck((later[0], (BASE, later[1][1]), *later.ciphers[2:]))
    assert shuffle_stage.__wrapped__(keys[1].x, CONTEXT, 0, mixed, joint) == _slow_stage(
        keys[1].x, 0, mixed, joint
    )


def _digest(transcript: DealTranscript) -> str:
    h = hashlib.sha256(transcript.joint)
    for stage in transcript.stages:
        for deck in stage:
            h.update(deck.to_bytes())
    return h.hexdigest()


@pytest.mark.parametrize(
    ("n", "seed", "digest"),
    [
        (2, "pin", "d2790892bd8605caa14b6888a4a17ff79eeef2d47db493eeb79d8e8fbbebd8aa"),
        (4, "pin", "9678017aa7ae68474948a1db2dcd578e29497180a894dfcd7518169c8eb7e8c9"),
        (3, 7, "18f31d3cab00415e6ca9ed193487eace75d2974b5fcea82d9f02fb3938fa2698"),
    ],
)
def test_deck_deal_bytes_are_pinned(n: int, seed: str | int, digest: str) -> None:
    """Every stage of a deal, byte for byte, as the checked multiplication made it (session
    15's code): a speed-up of the deal changes none of them."""
    assert _digest(deal(n, seed)) == digest


# -- checking points ---------------------------------------------------------------------------

_P = 2**255 - 19
#: The eight points of order dividing 8 (the identity, order 2, two of order 4, four of 8).
TORSION = [
    bytes.fromhex(h)
    for h in (
        "0100000000000000000000000000000000000000000000000000000000000000",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0000000000000000000000000000000000000000000000000000000000000080",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    )
]


def _libsodium(raws: list[bytes]) -> list[bool]:
    return [len(r) == 32 and sodium.crypto_core_ed25519_is_valid_point(r) == 1 for r in raws]


def _around(log: int) -> list[bytes]:
    """A point of the subgroup, its negation, and it plus each point of small order."""
    point = base_mul(log)
    out = [point, point[:31] + bytes([point[31] ^ 0x80])]
    for torsion in TORSION[1:]:
        out.append(sodium.crypto_core_ed25519_add(point, torsion))
    return out


def test_deck_valid_points_is_libsodium_s_check_on_every_kind_of_string() -> None:
    cases = [*TORSION, MIXED, SMALL_ORDER, NOT_CANONICAL, BASE, bytes(32), b"\xff" * 32]
    for log in (1, 2, 7, ORDER - 1, 2**200 + 3, 987654321):
        cases += _around(log)
    for y in (*range(0, 12), *range(_P - 12, _P + 19)):  # small, near p, and not canonical
        cases += [(y % 2**255).to_bytes(32, "little"), (y | 1 << 255).to_bytes(32, "little")]
    cases += [b"", b"\x01" * 31, b"\x01" * 33]
    want = _libsodium(cases)
    assert valid_points(cases) == want
    assert 10 < sum(want) < len(cases) - 10  # both answers are exercised


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(min_size=32, max_size=32), min_size=1, max_size=12))
def test_deck_valid_points_is_libsodium_s_check_on_any_bytes(raws: list[bytes]) -> None:
    """About half of all strings are on the curve, an eighth of those in the subgroup: the
    twist, the cofactor and the encoding are all met."""
    assert valid_points(raws) == _libsodium(raws)


@settings(max_examples=20, deadline=None)
@given(st.integers(min_value=1, max_value=ORDER - 1))
def test_deck_valid_points_on_multiples_and_their_mixes(log: int) -> None:
    cases = _around(log)
    assert valid_points(cases) == _libsodium(cases) == [True, True] + [False] * 7


def test_deck_decoding_a_deck_names_the_first_bad_point() -> None:
    keys = member_keys(2, seed="decode")
    deck = initial_deck(new_deck()[:3], joint_key(k.public for k in keys))
    raw = deck.to_bytes()
    assert Deck.from_bytes(raw, 3) == deck
    for at, bad, where in ((0, MIXED, "position 0, C1"), (160, SMALL_ORDER, "position 2, C2")):
        tampered = raw[:at] + bad + raw[at + 32 :]
        with pytest.raises(DeckError, match=where):
            Deck.from_bytes(tampered, 3)
