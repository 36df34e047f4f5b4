"""The acceptance rule for signatures (docs/protocol.md §3.3), whichever library is underneath.

Every vector of tests/data/ed25519-vectors.json (RFC 8032 §7.1, and the 12 edge cases of
ed25519-speccheck: small-order and mixed-order A and R, S >= L, non-canonical encodings) goes
through :func:`p2p_nertz.protocol.identity.verify` with libsodium and with OpenSSL checking the
equation, and must get the verdict the rule gives. The rule's verdict is recomputed here by a
slow, independent implementation (affine coordinates, the rule's clauses one by one), so the
data file's ``expected`` cannot drift from the rule either.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nacl.bindings
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from hypothesis import given, settings
from hypothesis import strategies as st

from p2p_nertz.audit import LogSource, audit, auditor
from p2p_nertz.audit.auditor import _Pass
from p2p_nertz.logfile import LogStream
from p2p_nertz.protocol.envelope import (
    EnvelopeCache,
    InvalidMessageError,
    Kind,
    decode_message,
    encode_message,
    verify_batch,
)
from p2p_nertz.protocol.identity import (
    LIBSODIUM,
    OPENSSL,
    Equation,
    Identity,
    signature_fault,
    verify,
)
from tests.audit_helpers import played

DATA = Path(__file__).parent / "data" / "ed25519-vectors.json"
VECTORS: list[dict[str, Any]] = json.loads(DATA.read_text())["vectors"]
LIBRARIES: dict[str, Equation] = {"libsodium": LIBSODIUM, "openssl": OPENSSL}

# -- an independent reference of the rule: affine Edwards25519, slow and plain -------------------
P = 2**255 - 19
D = -121665 * pow(121666, -1, P) % P
L = 2**252 + 27742317777372353535851937790883648493
NEUTRAL = (0, 1)


def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    (x1, y1), (x2, y2) = a, b
    t = D * x1 * x2 * y1 * y2 % P
    return (
        (x1 * y2 + x2 * y1) * pow(1 + t, -1, P) % P,
        (y1 * y2 + x1 * x2) * pow(1 - t, -1, P) % P,
    )


def _times(k: int, a: tuple[int, int]) -> tuple[int, int]:
    result, addend = NEUTRAL, a
    while k:
        if k & 1:
            result = _add(result, addend)
        addend = _add(addend, addend)
        k >>= 1
    return result


def _decode(raw: bytes) -> tuple[int, int] | None:
    """RFC 8032 §5.1.3, strictly: None unless y < p, x exists, and x = 0 has no sign bit."""
    value = int.from_bytes(raw, "little")
    y, sign = value & ((1 << 255) - 1), value >> 255
    if y >= P:
        return None
    x2 = (y * y - 1) * pow(D * y * y + 1, -1, P) % P
    x = pow(x2, (P + 3) // 8, P)
    if x * x % P != x2:
        x = x * pow(2, (P - 1) // 4, P) % P
    if x * x % P != x2 or (x == 0 and sign):
        return None
    return (P - x, y) if x & 1 != sign else (x, y)


BASE = _decode((4 * pow(5, -1, P) % P).to_bytes(32, "little"))


def rule(key: bytes, signature: bytes, message: bytes) -> bool:
    """The acceptance rule of docs/protocol.md §3.3, clause by clause."""
    assert BASE is not None
    s = int.from_bytes(signature[32:], "little")
    a, r = _decode(key), _decode(signature[:32])
    if s >= L or a is None or r is None:  # 1 and 2
        return False
    if _times(8, a) == NEUTRAL or _times(8, r) == NEUTRAL:  # 3
        return False
    k = int.from_bytes(hashlib.sha512(signature[:32] + key + message).digest(), "little") % L
    return _times(s, BASE) == _add(r, _times(k, a))  # 4: cofactorless


# -- bare libraries, without the rule's checks ---------------------------------------------------
def bare_libsodium(key: bytes, signature: bytes, message: bytes) -> bool:
    try:
        nacl.bindings.crypto_sign_open(signature + message, key)
    except Exception:  # PyNaCl raises BadSignatureError, or ValueError for a bad key
        return False
    return True


def bare_openssl(key: bytes, signature: bytes, message: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def _fields(vector: dict[str, Any]) -> tuple[bytes, bytes, bytes]:
    return (
        bytes.fromhex(vector["pub_key"]),
        bytes.fromhex(vector["signature"]),
        bytes.fromhex(vector["message"]),
    )


NAMES = [v["name"] for v in VECTORS]


# -- the vectors ---------------------------------------------------------------------------------
def test_vector_file_holds_rfc8032_and_all_twelve_speccheck_cases() -> None:
    sources = [v["source"] for v in VECTORS]
    assert sources.count("rfc8032") == 4
    assert sources.count("speccheck") == 12


@pytest.mark.parametrize("vector", VECTORS, ids=NAMES)
def test_expected_verdict_is_the_rule_s(vector: dict[str, Any]) -> None:
    assert rule(*_fields(vector)) is vector["expected"]


@pytest.mark.parametrize("library", sorted(LIBRARIES))
@pytest.mark.parametrize("vector", VECTORS, ids=NAMES)
def test_verify_gives_the_rule_s_verdict_with_either_library(
    vector: dict[str, Any], library: str
) -> None:
    assert verify(*_fields(vector), library=LIBRARIES[library]) is vector["expected"]


@pytest.mark.parametrize("vector", [v for v in VECTORS if "seed" in v], ids=lambda v: v["name"])
def test_rfc8032_signatures_are_what_both_libraries_make(vector: dict[str, Any]) -> None:
    key, signature, message = _fields(vector)
    seed = bytes.fromhex(vector["seed"])
    identity = Identity.from_bytes(seed)
    assert identity.peer_id == key
    assert identity.sign(message) == signature
    assert Ed25519PrivateKey.from_private_bytes(seed).sign(message) == signature


@pytest.mark.parametrize("vector", VECTORS, ids=NAMES)
def test_where_a_bare_library_differs_the_rule_s_checks_on_bytes_decide(
    vector: dict[str, Any],
) -> None:
    # The libraries differ only in what they check before the equation (OpenSSL takes small-
    # order A and R; docs/protocol.md §3.3 has the table); the equation is the same in both.
    key, signature, message = _fields(vector)
    for bare in (bare_libsodium, bare_openssl):
        if bare(key, signature, message) is not vector["expected"]:
            assert signature_fault(key, signature) is not None, bare.__name__


def test_bare_openssl_accepts_what_the_rule_refuses() -> None:
    # Why the rule is needed at all: without it, OpenSSL's verdict differs on small-order keys.
    differs = [v["name"] for v in VECTORS if bare_openssl(*_fields(v)) is not v["expected"]]
    assert differs, "OpenSSL now refuses small-order points: update docs/protocol.md §3.3"
    for vector in VECTORS:
        print(
            f"{vector['name']}: rule {vector['expected']}, bare libsodium "
            f"{bare_libsodium(*_fields(vector))}, bare OpenSSL {bare_openssl(*_fields(vector))}"
        )


# -- either library, any bytes -------------------------------------------------------------------
@settings(max_examples=60)
@given(seed=st.binary(min_size=32, max_size=32), data=st.binary(max_size=200))
def test_both_libraries_accept_a_real_signature(seed: bytes, data: bytes) -> None:
    identity = Identity.from_bytes(seed)
    signature = identity.sign(data)
    assert verify(identity.peer_id, signature, data, library=LIBSODIUM)
    assert verify(identity.peer_id, signature, data, library=OPENSSL)


@settings(max_examples=60)
@given(
    seed=st.binary(min_size=32, max_size=32),
    data=st.binary(max_size=64),
    flip=st.integers(min_value=0, max_value=64 * 8 - 1),
)
def test_both_libraries_refuse_any_flipped_bit(seed: bytes, data: bytes, flip: int) -> None:
    identity = Identity.from_bytes(seed)
    signature = bytearray(identity.sign(data))
    signature[flip // 8] ^= 1 << (flip % 8)
    for library in LIBRARIES.values():
        assert not verify(identity.peer_id, bytes(signature), data, library=library)


@settings(max_examples=100)
@given(
    key=st.binary(min_size=32, max_size=32),
    signature=st.binary(min_size=64, max_size=64),
    data=st.binary(max_size=16),
)
def test_both_libraries_agree_on_arbitrary_bytes(key: bytes, signature: bytes, data: bytes) -> None:
    sodium = verify(key, signature, data, library=LIBSODIUM)
    assert sodium is verify(key, signature, data, library=OPENSSL)
    assert sodium is False  # a forgery by chance would be news


def test_a_second_form_of_a_valid_signature_is_refused_by_both() -> None:
    identity = Identity.generate(seed=bytes(range(32)))
    signature = identity.sign(b"claim")
    s = int.from_bytes(signature[32:], "little")
    second = signature[:32] + (s + L).to_bytes(32, "little")  # the same point equation holds
    for library in LIBRARIES.values():
        assert verify(identity.peer_id, signature, b"claim", library=library)
        assert not verify(identity.peer_id, second, b"claim", library=library)
    assert signature_fault(identity.peer_id, second) == (
        "S is not below L (a second form of a signature)"
    )


def test_only_the_identity_module_calls_a_signature_library() -> None:
    # One home for the rule: no other module of the package verifies on its own.
    root = Path(__file__).parent.parent / "p2p_nertz"
    verifies = ("crypto_sign_open", "crypto_sign_verify", "Ed25519PublicKey", "cryptography.")
    calls = (*verifies, "nacl.")
    # The shuffle's cryptography (deck/, docs/shuffle.md) works in libsodium's group and boxes
    # through nacl.bindings; it verifies no signature.
    group = root / "deck"
    offenders = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path.name != "identity.py"
        and any(c in path.read_text() for c in (verifies if group in path.parents else calls))
    ]
    assert offenders == []


# -- verifying a batch (the audit reads ahead) ---------------------------------------------------
def _messages() -> tuple[bytes, list[bytes], list[bytes]]:
    """A game id, a roster of two, and messages: good, duplicated, forged, of another game, by
    a stranger, malformed."""
    alice, bob, eve = (Identity.generate(seed=bytes([n]) * 32) for n in (1, 2, 3))
    game = bytes(32)

    def beat(who: Identity, lamport: int, game_id: bytes = game) -> bytes:
        return encode_message(
            who, game_id=game_id, seq=0, prev=None, lamport=lamport, kind=Kind.BEAT, body=[]
        )

    good = beat(alice, 1)
    forged = good[:-1] + bytes([good[-1] ^ 1])
    datas = [good, beat(bob, 2), good, forged, beat(alice, 3, bytes([1]) * 32), beat(eve, 4)]
    datas += [b"\x92\xc4\x00", b""]
    return game, [alice.peer_id, bob.peer_id], datas


def _outcomes(datas: list[bytes], game: bytes, roster: list[bytes], cache: Any) -> list[str]:
    out = []
    for data in datas:
        try:
            out.append(decode_message(data, game_id=game, roster=roster, cache=cache).id.hex())
        except InvalidMessageError as exc:
            out.append(exc.reason.value)
    return out


def test_verify_batch_changes_no_decoding_result() -> None:
    game, roster, datas = _messages()
    expected = _outcomes(datas, game, roster, None)
    assert expected[3:] == [
        "bad_signature",
        "wrong_game",
        "unknown_author",
        "malformed",
        "malformed",
    ]
    cache = EnvelopeCache()
    verify_batch(datas, game_id=game, roster=roster, cache=cache)
    assert _outcomes(datas, game, roster, cache) == expected


def test_verify_batch_returns_what_decoding_returns_of_what_it_kept() -> None:
    game, roster, datas = _messages()
    cache = EnvelopeCache()
    kept = verify_batch(datas, game_id=game, roster=roster, cache=cache)
    assert [data for data, _ in kept] == [datas[0], datas[1]]  # (the copy was kept already)
    for data, message in kept:
        assert message == decode_message(data, game_id=game, roster=roster)
        assert message.payload == decode_message(data).payload
    assert verify_batch(datas, game_id=game, roster=roster, cache=cache) == []


def test_verify_batch_remembers_only_what_passes() -> None:
    game, roster, datas = _messages()
    cache = EnvelopeCache()
    verify_batch(datas, game_id=game, roster=roster, cache=cache)
    assert repr(cache) == "<EnvelopeCache 2 parsed, 2 verified of 16384>"


def _read_fails_after(data: bytes, good: int) -> LogSource:
    """A log whose reader raises OSError after ``good`` bytes."""

    def chunks() -> Iterator[memoryview]:
        yield memoryview(data)[:good]
        raise OSError("the disk went away")

    return LogSource("p1.log", lambda: LogStream(chunks()))


@pytest.mark.parametrize("cut", [0.3, 0.7])
def test_audit_reads_ahead_without_changing_a_finding(
    cut: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The audit verifies records in batches before it reads them (issue 18): the same
    # findings, a read error included, as reading one record at a time.
    game = played(players=3, seed=11, rounds=1)
    files = game.files()
    sources = [
        _read_fails_after(files[0], int(len(files[0]) * cut)),
        *(LogSource.from_bytes(f"p{i + 2}.log", f) for i, f in enumerate(files[1:])),
    ]
    monkeypatch.setattr(auditor, "_AHEAD", 8)  # many batches, the error inside one
    ahead = audit(sources)
    # One record a batch, nothing verified ahead:
    monkeypatch.setattr(_Pass, "_read_ahead", lambda self, records: ([r] for r in records))
    one_by_one = audit(sources)
    assert ahead == one_by_one
    assert "the disk went away" in str(ahead.violations)
