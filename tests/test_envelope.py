"""Tests of p2p_nertz.protocol.envelope: the signed message codec and its receive-path promise."""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sodium_helpers import signature_checks

import p2p_nertz.protocol
from p2p_nertz.errors import LocalProtocolError, RemoteProtocolError
from p2p_nertz.protocol.envelope import (
    CARRIED_DOMAIN,
    MAX_BODY_DEPTH,
    MAX_COUNTER,
    MAX_MESSAGE_SIZE,
    MAX_VOTE_SIZE,
    PROTOCOL_VERSION,
    PROTOCOL_VERSIONS,
    SHARES_KINDS,
    SHARES_VERSION,
    SHUFFLE_KINDS,
    SIGNATURE_DOMAIN,
    Body,
    BodyValidator,
    Carried,
    EnvelopeCache,
    InvalidMessageError,
    Kind,
    Message,
    RejectReason,
    decode_message,
    defined_kinds,
    encode_message,
    looks_like_beat,
    verify_batch,
)
from p2p_nertz.protocol.identity import Identity, fingerprint

ALICE = Identity.generate(seed=bytes(32))
BOB = Identity.generate(seed=bytes([1]) * 32)
GAME = hashlib.sha256(b"test game").digest()
OTHER_GAME = hashlib.sha256(b"another game").digest()
PREV = hashlib.sha256(b"previous event").digest()
JOIN_BODY = {"name": "Alice"}

# ---------------------------------------------------------------------------------------------
# Helpers


def _event(
    identity: Identity = ALICE,
    *,
    game_id: bytes = GAME,
    seq: int = 1,
    prev: bytes | None = None,
    lamport: int = 1,
    kind: Kind = Kind.JOIN,
    body: Body = JOIN_BODY,
    version: int = PROTOCOL_VERSION,
) -> bytes:
    return encode_message(
        identity,
        game_id=game_id,
        seq=seq,
        prev=prev,
        lamport=lamport,
        kind=kind,
        body=body,
        version=version,
    )


VALID = _event()


def _pack(value: object) -> bytes:
    packed: bytes = msgpack.packb(value, use_bin_type=True)
    return packed


def _fields(**changes: object) -> list[object]:
    """The payload fields of VALID, with some replaced (by name)."""
    fields: dict[str, object] = {
        "version": PROTOCOL_VERSION,
        "game_id": GAME,
        "author": ALICE.peer_id,
        "seq": 1,
        "prev": None,
        "lamport": 1,
        "kind": Kind.JOIN.value,
        "body": JOIN_BODY,
    }
    assert set(changes) <= set(fields)
    fields.update(changes)
    return list(fields.values())


def _signed(payload: bytes, identity: Identity = ALICE, tag: bytes = SIGNATURE_DOMAIN) -> bytes:
    """Frame a payload with a real signature (so that only what the test changed is wrong)."""
    return _pack([payload, identity.sign(tag + payload)])


def _raw(**changes: object) -> bytes:
    """A correctly signed message whose payload fields are VALID's with some replaced."""
    return _signed(_pack(_fields(**changes)))


def _with_raw_body(body: bytes) -> bytes:
    """A correctly signed message whose body is the given (possibly invalid) msgpack bytes."""
    head = _pack(_fields()[:7])
    assert head[0] == 0x97  # fixarray of 7
    return _signed(b"\x98" + head[1:] + body)


def _nested(depth: int) -> Body:
    body: Body = 0
    for _ in range(depth):
        body = [body]
    return body


def _freeze(value: Any) -> Any:
    """What a body looks like once decoded: tuples for arrays (maps compare equal to dicts)."""
    if isinstance(value, list | tuple):
        return tuple(_freeze(item) for item in value)
    if isinstance(value, Mapping):
        return {key: _freeze(item) for key, item in value.items()}
    return value


def _refuse(body: Body) -> None:
    raise ValueError("no thanks")


def _buggy(body: Body) -> None:
    raise KeyError("a bug in a later layer")


def _payload_and_signature(wire: bytes) -> tuple[bytes, bytes]:
    payload, signature = msgpack.unpackb(wire)
    return payload, signature


_VALID_PAYLOAD, _VALID_SIGNATURE = _payload_and_signature(VALID)

# ---------------------------------------------------------------------------------------------
# Round trips and the shape of a message


bodies: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.binary(max_size=16)
    | st.text(max_size=16),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=8), children, max_size=4)
        | st.dictionaries(st.binary(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
ids = st.binary(min_size=32, max_size=32)
counters = st.integers(min_value=0, max_value=MAX_COUNTER)
event_kinds = st.sampled_from([kind for kind in Kind if kind.is_event])
beat_kinds = st.sampled_from([kind for kind in Kind if not kind.is_event])


@st.composite
def envelopes(draw: st.DrawFn) -> dict[str, Any]:
    """Keyword arguments of encode_message (without the identity) for any valid message."""
    version = draw(st.sampled_from(PROTOCOL_VERSIONS))
    kind = draw((event_kinds | beat_kinds).filter(lambda k: k in defined_kinds(version)))
    if kind.is_event:
        seq = draw(st.integers(min_value=1, max_value=MAX_COUNTER))
        prev = None if seq == 1 else draw(ids)
    else:
        seq, prev = 0, None
    return {
        "game_id": draw(ids),
        "seq": seq,
        "prev": prev,
        "lamport": draw(counters),
        "kind": kind,
        "body": draw(bodies),
        "version": version,
    }


@given(st.sampled_from([ALICE, BOB]), envelopes())
def test_encode_decode_round_trip(identity: Identity, fields: dict[str, Any]) -> None:
    wire = encode_message(identity, **fields)
    message = decode_message(
        wire, game_id=fields["game_id"], roster=[identity.peer_id], version=fields["version"]
    )
    assert message.version == fields["version"]
    assert message.author == identity.peer_id
    assert message.game_id == fields["game_id"]
    assert message.seq == fields["seq"]
    assert message.prev == fields["prev"]
    assert message.lamport == fields["lamport"]
    assert message.kind is fields["kind"]
    assert message.body == _freeze(fields["body"])
    assert message.wire == wire
    assert len(wire) <= MAX_MESSAGE_SIZE


@given(envelopes())
def test_encode_is_deterministic(fields: dict[str, Any]) -> None:
    assert encode_message(ALICE, **fields) == encode_message(ALICE, **fields)


def test_encode_known_bytes_are_stable() -> None:
    # Golden value: the wire format is a contract with every other peer and every old log.
    assert _signed(_pack(_fields())) == VALID  # the documented layout, packed independently
    assert VALID[:5] == b"\x92\xc4\x56\x98\x09"  # [bin8 payload (86 bytes): [8 fields: version 9,
    assert VALID[-66:-64] == b"\xc4\x40"  # ..., bin8 signature (64 bytes)]
    assert hashlib.sha256(VALID).hexdigest() == (
        "41fa949b013c83ca7b902d9556a75f4b44c11dc4a3b11b7bf0a784967d7575ab"
    )


def test_message_id_is_sha256_of_payload_and_signature() -> None:
    message = decode_message(VALID)
    assert message.payload == _VALID_PAYLOAD
    assert message.signature == _VALID_SIGNATURE
    assert message.id == hashlib.sha256(_VALID_PAYLOAD + _VALID_SIGNATURE).digest()


def test_message_body_is_immutable() -> None:
    message = decode_message(_event(body={"cards": [1, 2], "pile": {"w": [3]}}))
    assert isinstance(message.body, Mapping)
    assert message.body == {"cards": (1, 2), "pile": {"w": (3,)}}
    assert isinstance(message.body["cards"], tuple)
    with pytest.raises(TypeError):
        message.body["cards"] = ()  # type: ignore[index]
    with pytest.raises(AttributeError):
        message.seq = 2  # type: ignore[misc]


def test_message_equality_and_hash_follow_the_id() -> None:
    first, again = decode_message(VALID), decode_message(bytes(VALID))
    other = decode_message(_event(lamport=2))
    assert first == again
    assert hash(first) == hash(again)
    assert first != other
    assert first != VALID
    assert len({first, again, other}) == 2


def test_message_sort_key_is_lamport_author_seq() -> None:
    message = decode_message(_event(BOB, seq=3, prev=PREV, lamport=17, kind=Kind.CLAIM))
    assert message.sort_key == (17, BOB.peer_id, 3)


def test_message_repr_names_kind_author_and_counters() -> None:
    message = decode_message(_event(seq=2, prev=PREV, lamport=5, kind=Kind.MOVE))
    text = repr(message)
    assert text.startswith(f"<Message move by {fingerprint(ALICE.peer_id)} seq=2 lamport=5 id=")
    assert message.id.hex()[:12] in text


def test_kind_codes_are_stable() -> None:
    # The wire codes are part of the protocol: never renumber, only add.
    assert {kind.name.lower(): kind.value for kind in Kind} == {
        "join": 1,
        "ready": 2,
        "commit": 3,
        "reveal": 4,
        "move": 5,
        "claim": 6,
        "stuck": 7,
        "nerts": 8,
        "result": 9,
        "drop": 10,
        "leave": 11,
        "deck_key": 12,
        "deck_stage": 13,
        "deck_shares": 14,
        "deck_open": 15,
        "deck_complain": 16,
        "deck_answer": 17,
        "beat": 64,
        "ack": 65,
        "want": 66,
        "deck_reveal": 67,
        "deck_want": 68,
    }


def test_kind_is_event_splits_events_from_beats() -> None:
    assert [kind.name for kind in Kind if not kind.is_event] == [
        "BEAT",
        "ACK",
        "WANT",
        "DECK_REVEAL",
        "DECK_WANT",
    ]
    message = decode_message(_event(seq=0, kind=Kind.BEAT, body={"head": 0}))
    assert not message.is_event
    assert decode_message(VALID).is_event


@pytest.mark.parametrize("convert", [bytearray, memoryview])
def test_decode_accepts_bytes_like(convert: Callable[[bytes], bytes]) -> None:
    assert decode_message(convert(VALID)) == decode_message(VALID)


def test_decode_rejects_non_bytes_as_local_misuse() -> None:
    with pytest.raises(TypeError):
        decode_message(VALID.hex())  # type: ignore[arg-type]


def test_decode_rejects_malformed_expected_game_id_as_local_misuse() -> None:
    with pytest.raises(LocalProtocolError):
        decode_message(VALID, game_id=GAME.hex())  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError):
        decode_message(VALID, game_id=GAME[:16])


def test_decode_accepts_exactly_max_size() -> None:
    base = len(_event(body=bytes(300)))
    largest = 300 + MAX_MESSAGE_SIZE - base
    assert len(_event(body=bytes(largest))) == MAX_MESSAGE_SIZE
    assert decode_message(_event(body=bytes(largest))).body == bytes(largest)
    with pytest.raises(LocalProtocolError, match="oversize"):
        _event(body=bytes(largest + 1))


def _carrying(size: int) -> Body:
    """A drop's body that carries one bin of ``size`` bytes beside its payload."""
    return [1, Carried((bytes(size),))]


def test_a_drop_may_be_larger_than_any_other_message() -> None:
    """A vote on proof carries two messages of the member (session 40, docs/protocol.md §4.2),
    beside its signed payload (session 41): a drop is accepted up to ``MAX_VOTE_SIZE`` with
    its carried part, its signed part and every other message up to ``MAX_MESSAGE_SIZE``."""
    base = len(_event(kind=Kind.DROP, body=_carrying(300)))
    largest = 300 + MAX_VOTE_SIZE - base
    wire = _event(kind=Kind.DROP, body=_carrying(largest))
    assert len(wire) == MAX_VOTE_SIZE
    message = decode_message(wire)
    assert message.body == (1, (bytes(largest),)) and type(message.body[-1]) is Carried
    assert message.wire == wire and len(message.signed_wire) < MAX_MESSAGE_SIZE
    with pytest.raises(LocalProtocolError, match="oversize"):
        _event(kind=Kind.DROP, body=_carrying(largest + 1))
    for kind in (Kind.DROP, Kind.JOIN, Kind.DECK_STAGE, Kind.LEAVE):  # (a drop signed inline)
        with pytest.raises(LocalProtocolError, match="oversize"):
            _event(kind=kind, body=bytes(MAX_MESSAGE_SIZE), version=SHARES_VERSION)
    with pytest.raises(LocalProtocolError, match="carries nothing beside"):
        _event(kind=Kind.JOIN, body=_carrying(10))


def _carried_wire(
    carried: bytes,
    *,
    digest: bytes | None = None,
    kind: Kind = Kind.DROP,
    third: object = None,
    signed: bytes = b"",
) -> bytes:
    """A correctly signed message of ``kind`` whose body (``signed`` first) names ``carried``
    by ``digest`` (its own by default), its wire carrying ``third`` (``carried`` by default)."""
    named = hashlib.sha256(CARRIED_DOMAIN + carried).digest() if digest is None else digest
    payload = _pack(_fields(kind=kind.value, seq=2, prev=PREV, body=[signed, named]))
    part = carried if third is None else third
    return _pack([payload, ALICE.sign(SIGNATURE_DOMAIN + payload), part])


_ARRAY = _pack([b"x" * 10])
_DROP_NAMING = _carried_wire(_ARRAY)  # (a drop with its carried part)


def _bin16(data: bytes) -> bytes:
    """``data`` as a msgpack bin 16 (a header wider than it needs below 256 bytes)."""
    return b"\xc5" + len(data).to_bytes(2, "big") + data


def test_a_drop_carries_its_part_beside_the_signed_payload() -> None:
    """The carried part is named by its digest in the signed body (session 41): the id and
    the signature cover the payload alone; the drop's signed part alone is refused in a feed
    (``malformed``, blaming nobody: anyone can strip one) but read ``bare`` for a proof."""
    message = decode_message(_DROP_NAMING, game_id=GAME, roster={ALICE.peer_id})
    assert message.body == (b"", (b"x" * 10,)) and message.carried == _ARRAY
    assert message.id == hashlib.sha256(message.payload + message.signature).digest()
    bare = message.signed_wire
    with pytest.raises(InvalidMessageError, match="does not carry it") as refused:
        decode_message(bare, game_id=GAME, roster={ALICE.peer_id})
    assert refused.value.reason is RejectReason.MALFORMED and refused.value.evidence is None
    read = decode_message(bare, game_id=GAME, roster={ALICE.peer_id}, bare=True)
    assert read.id == message.id and read.carried is None and type(read.body[-1]) is bytes
    cache = EnvelopeCache()  # (a cache holding it read bare refuses it as a feed's still)
    decode_message(bare, bare=True, cache=cache)
    with pytest.raises(InvalidMessageError, match="does not carry it"):
        decode_message(bare, cache=cache)
    assert verify_batch([bare], game_id=GAME, roster={ALICE.peer_id}, cache=cache) == []


def test_decode_accepts_max_body_depth() -> None:
    body = _nested(MAX_BODY_DEPTH)
    assert decode_message(_event(body=body)).body == _freeze(body)


def test_decode_runs_validator_of_the_kind_only() -> None:
    seen: list[Body] = []
    validators: dict[Kind, BodyValidator] = {Kind.JOIN: seen.append, Kind.CLAIM: _refuse}
    message = decode_message(VALID, validators=validators)
    assert seen == [message.body]
    with pytest.raises(InvalidMessageError):
        decode_message(_event(kind=Kind.CLAIM), validators=validators)


# ---------------------------------------------------------------------------------------------
# Rejections: every reason, and nothing changes

_roster_ok: dict[str, Any] = {"roster": [ALICE.peer_id, BOB.peer_id]}
_frame_bin16 = (
    b"\x92\xc5"
    + len(_VALID_PAYLOAD).to_bytes(2, "big")
    + _VALID_PAYLOAD
    + b"\xc4\x40"
    + _VALID_SIGNATURE
)
# The payload of VALID with lamport (1) written as a uint8 (0xcc 0x01), correctly signed.
_wide_lamport = _VALID_PAYLOAD.replace(b"\xc0\x01\x01\x81", b"\xc0\xcc\x01\x01\x81")
assert _wide_lamport != _VALID_PAYLOAD

REJECTIONS: dict[str, tuple[RejectReason, bytes, dict[str, Any]]] = {
    "oversize-bytes": (RejectReason.OVERSIZE, bytes(MAX_VOTE_SIZE + 1), {}),
    "oversize-signed": (RejectReason.OVERSIZE, _raw(body=bytes(MAX_MESSAGE_SIZE)), {}),
    "oversize-drop": (RejectReason.OVERSIZE, _raw(kind=Kind.DROP, body=bytes(MAX_VOTE_SIZE)), {}),
    "oversize-beat": (
        RejectReason.OVERSIZE,
        _raw(kind=Kind.BEAT, seq=0, body=bytes(MAX_MESSAGE_SIZE)),
        {},
    ),
    "empty": (RejectReason.MALFORMED, b"", {}),
    "reserved-byte": (RejectReason.MALFORMED, b"\xc1", {}),
    "truncated": (RejectReason.MALFORMED, VALID[:-1], {}),
    "trailing-data": (RejectReason.MALFORMED, VALID + b"\x00", {}),
    "huge-array-header": (RejectReason.MALFORMED, b"\xdd\xff\xff\xff\xff", {}),
    "huge-bin-header": (RejectReason.MALFORMED, b"\xc6\xff\xff\xff\xff", {}),
    "deep-frame": (RejectReason.MALFORMED, b"\x91" * 2000 + b"\xc0", {}),
    "frame-not-array": (RejectReason.MALFORMED, _pack(_VALID_PAYLOAD), {}),
    "frame-three-items": (
        RejectReason.MALFORMED,
        _pack([_VALID_PAYLOAD, _VALID_SIGNATURE, b""]),
        {},
    ),
    "frame-four-items": (
        RejectReason.MALFORMED,
        _pack([_VALID_PAYLOAD, _VALID_SIGNATURE, b"", b""]),
        {},
    ),
    # A carried part (session 41): a drop's alone, matching its digest, one canonical array.
    "carried-by-a-move": (RejectReason.MALFORMED, _carried_wire(_ARRAY, kind=Kind.MOVE), {}),
    "carried-other-digest": (RejectReason.MALFORMED, _carried_wire(_ARRAY, digest=bytes(32)), {}),
    "carried-not-bin": (RejectReason.MALFORMED, _carried_wire(_ARRAY, third=[b"x"]), {}),
    "carried-not-array": (RejectReason.MALFORMED, _carried_wire(_pack(b"x")), {}),
    "carried-not-msgpack": (RejectReason.MALFORMED, _carried_wire(b"\xc1"), {}),
    "carried-non-canonical": (RejectReason.NON_CANONICAL, _carried_wire(b"\xdc\x00\x00"), {}),
    "carried-too-deep": (RejectReason.BAD_BODY, _carried_wire(_pack(_nested(17))), {}),
    "carried-framing-non-canonical": (
        RejectReason.NON_CANONICAL,
        _DROP_NAMING[: -len(_ARRAY) - 2] + _bin16(_ARRAY),
        {},
    ),
    "carried-beside-a-signed-part-oversize": (
        RejectReason.OVERSIZE,
        _carried_wire(_ARRAY, signed=bytes(MAX_MESSAGE_SIZE)),
        {},
    ),
    "drop-without-its-carried-part": (
        RejectReason.MALFORMED,
        _pack(list(msgpack.unpackb(_DROP_NAMING)[:2])),
        {},
    ),
    "frame-payload-str": (RejectReason.MALFORMED, _pack(["payload", _VALID_SIGNATURE]), {}),
    "signature-short": (RejectReason.MALFORMED, _pack([_VALID_PAYLOAD, _VALID_SIGNATURE[:63]]), {}),
    "payload-not-msgpack": (RejectReason.MALFORMED, _signed(b"\xc1"), {}),
    "payload-not-array": (RejectReason.MALFORMED, _signed(_pack({"version": 1})), {}),
    "payload-empty-array": (RejectReason.MALFORMED, _signed(_pack([])), {}),
    "version-not-int": (RejectReason.MALFORMED, _raw(version="1"), {}),
    "seven-fields": (RejectReason.MALFORMED, _signed(_pack(_fields()[:7])), {}),
    "nine-fields": (RejectReason.MALFORMED, _signed(_pack([*_fields(), None])), {}),
    "game-id-short": (RejectReason.MALFORMED, _raw(game_id=GAME[:31]), {}),
    "author-str": (RejectReason.MALFORMED, _raw(author="alice"), {}),
    "author-small-order": (RejectReason.MALFORMED, _raw(author=bytes(32)), {}),
    "seq-negative": (RejectReason.MALFORMED, _raw(seq=-1), {}),
    "seq-2**63": (RejectReason.MALFORMED, _raw(seq=2**63, prev=PREV), {}),
    "seq-bool": (RejectReason.MALFORMED, _raw(seq=True), {}),
    "lamport-float": (RejectReason.MALFORMED, _raw(lamport=1.0), {}),
    "lamport-nil": (RejectReason.MALFORMED, _raw(lamport=None), {}),
    "prev-short": (RejectReason.MALFORMED, _raw(seq=2, prev=PREV[:31]), {}),
    "kind-str": (RejectReason.MALFORMED, _raw(kind="join"), {}),
    "event-seq-0": (RejectReason.MALFORMED, _raw(seq=0), {}),
    "event-1-with-prev": (RejectReason.MALFORMED, _raw(prev=PREV), {}),
    "event-2-without-prev": (RejectReason.MALFORMED, _raw(seq=2), {}),
    "beat-with-seq": (RejectReason.MALFORMED, _raw(kind=Kind.BEAT.value), {}),
    "beat-with-prev": (RejectReason.MALFORMED, _raw(kind=Kind.ACK.value, seq=0, prev=PREV), {}),
    "map-int-key": (RejectReason.MALFORMED, _raw(body={1: "one"}), {}),
    "map-bool-key": (RejectReason.MALFORMED, _raw(body={True: "yes"}), {}),
    "map-duplicate-key": (RejectReason.MALFORMED, _with_raw_body(b"\x82\xa1a\x01\xa1a\x02"), {}),
    "ext-type": (RejectReason.MALFORMED, _with_raw_body(b"\xd4\x05\x00"), {}),
    "ext-type-empty": (RejectReason.MALFORMED, _with_raw_body(b"\xc7\x00\x05"), {}),
    "timestamp": (RejectReason.MALFORMED, _with_raw_body(b"\xd6\xff\x00\x00\x00\x00"), {}),
    "invalid-utf8": (RejectReason.MALFORMED, _with_raw_body(b"\xa2\xc3\x28"), {}),
    "frame-bin16": (RejectReason.NON_CANONICAL, _frame_bin16, {}),
    "payload-wide-int": (RejectReason.NON_CANONICAL, _signed(_wide_lamport), {}),
    # Version 1 (before every event counted as an ack, issue 18) is refused like any other, and
    # so are 2, 3 and 4 (their vote on proof carried no proof: session 39).
    **{
        f"version-{version}": (RejectReason.BAD_VERSION, _raw(version=version), {})
        for version in (0, 1, 2, 3, 4, 5, 6, 7, 8, 11)
    },
    "version-3-other-shape": (RejectReason.BAD_VERSION, _signed(_pack([3, "a", "b"])), {}),
    # A game's envelopes carry its one version: the other is refused (docs/shuffle.md §10.6).
    "version-10-in-a-version-9-game": (
        RejectReason.BAD_VERSION,
        _raw(version=SHARES_VERSION),
        {"version": PROTOCOL_VERSION},
    ),
    "version-9-in-a-version-10-game": (RejectReason.BAD_VERSION, VALID, {"version": 10}),
    "version-9-read-as-10": (RejectReason.BAD_VERSION, VALID, {"version": (10,)}),
    "kind-18-version-10": (RejectReason.UNKNOWN_KIND, _raw(kind=18, version=SHARES_VERSION), {}),
    # The beats of a turn-up's shares are a shuffle game's (version 10): 9 does not define them.
    **{
        f"{kind.name.lower()}-in-version-9": (
            RejectReason.UNKNOWN_KIND,
            _raw(kind=kind.value, seq=0, version=PROTOCOL_VERSION),
            {},
        )
        for kind in sorted(SHARES_KINDS)
    },
    "kind-0": (RejectReason.UNKNOWN_KIND, _raw(kind=0), {}),
    "kind-16": (RejectReason.UNKNOWN_KIND, _raw(kind=16), {}),
    # The shuffle's kinds are version 10's: version 9 does not define them.
    **{
        f"{kind.name.lower()}-in-version-9": (
            RejectReason.UNKNOWN_KIND,
            _raw(kind=kind.value, seq=2, prev=PREV),
            {},
        )
        for kind in sorted(SHUFFLE_KINDS)
    },
    "kind-200": (RejectReason.UNKNOWN_KIND, _raw(kind=200, seq=0), {}),
    "wrong-game": (RejectReason.WRONG_GAME, VALID, {"game_id": OTHER_GAME}),
    "wrong-game-bad-signature": (
        RejectReason.WRONG_GAME,
        _signed(_VALID_PAYLOAD, BOB),
        {"game_id": OTHER_GAME},
    ),
    "unknown-author": (RejectReason.UNKNOWN_AUTHOR, VALID, {"roster": [BOB.peer_id]}),
    "empty-roster": (RejectReason.UNKNOWN_AUTHOR, VALID, {"roster": frozenset()}),
    "signed-by-other": (RejectReason.BAD_SIGNATURE, _signed(_VALID_PAYLOAD, BOB), _roster_ok),
    "signed-without-domain-tag": (RejectReason.BAD_SIGNATURE, _signed(_VALID_PAYLOAD, tag=b""), {}),
    "signed-with-other-tag": (
        RejectReason.BAD_SIGNATURE,
        _signed(_VALID_PAYLOAD, tag=b"p2p-nertz/v1/log\0"),
        {},
    ),
    "signature-zero": (RejectReason.BAD_SIGNATURE, _pack([_VALID_PAYLOAD, bytes(64)]), {}),
    "author-swapped": (RejectReason.BAD_SIGNATURE, _raw(author=BOB.peer_id), {}),
    "body-float": (RejectReason.BAD_BODY, _raw(body=1.5), {}),
    "body-nan": (RejectReason.BAD_BODY, _raw(body={"x": float("nan")}), {}),
    "body-too-deep": (RejectReason.BAD_BODY, _raw(body=_nested(MAX_BODY_DEPTH + 1)), {}),
    "body-mixed-keys": (RejectReason.BAD_BODY, _raw(body={"a": 1, b"b": 2}), {}),
    "body-refused": (RejectReason.BAD_BODY, VALID, {"validators": {Kind.JOIN: _refuse}}),
    "body-validator-bug": (RejectReason.BAD_BODY, VALID, {"validators": {Kind.JOIN: _buggy}}),
}


@pytest.mark.parametrize(("reason", "data", "context"), REJECTIONS.values(), ids=REJECTIONS.keys())
def test_decode_rejects_with_reason_and_changes_nothing(
    reason: RejectReason, data: bytes, context: dict[str, Any]
) -> None:
    before = decode_message(VALID, **_roster_ok)
    context_copy = {key: type(value)(value) for key, value in context.items()}
    with pytest.raises(InvalidMessageError) as caught:
        decode_message(data, **context)
    error = caught.value
    assert error.reason is reason, str(error)
    assert isinstance(error, RemoteProtocolError)
    assert str(error).startswith(f"{reason.value}: ")
    assert error.detail
    # Decoding is pure: the arguments are untouched and a valid message decodes as before.
    assert context == context_copy
    assert decode_message(VALID, **_roster_ok) == before
    assert decode_message(VALID, **_roster_ok).body == before.body


def test_decode_rejection_cases_cover_every_reason() -> None:
    assert {reason for reason, _, _ in REJECTIONS.values()} == set(RejectReason)


def test_decode_bad_body_from_validator_carries_signed_evidence() -> None:
    with pytest.raises(InvalidMessageError) as caught:
        decode_message(VALID, validators={Kind.JOIN: _buggy})
    assert caught.value.evidence == decode_message(VALID)
    assert isinstance(caught.value.__cause__, KeyError)
    with pytest.raises(InvalidMessageError) as unsigned:
        decode_message(_raw(body=1.5))
    assert unsigned.value.evidence is None


def test_decode_signature_without_domain_tag_does_not_verify() -> None:
    payload = _VALID_PAYLOAD
    assert decode_message(_signed(payload, tag=SIGNATURE_DOMAIN)) == decode_message(VALID)
    with pytest.raises(InvalidMessageError) as caught:
        decode_message(_signed(payload, tag=b""))
    assert caught.value.reason is RejectReason.BAD_SIGNATURE


# ---------------------------------------------------------------------------------------------
# Local errors: encode refuses what peers would reject

LOCAL_ERRORS: dict[str, dict[str, Any]] = {
    "kind-int": {"kind": 1},
    "game-id-short": {"game_id": GAME[:16]},
    "game-id-str": {"game_id": "game"},
    "seq-negative": {"seq": -1},
    "seq-2**63": {"seq": 2**63, "prev": PREV},
    "seq-2**64": {"seq": 2**64, "prev": PREV},
    "lamport-float": {"lamport": 1.0},
    "event-seq-0": {"seq": 0},
    "event-1-with-prev": {"prev": PREV},
    "event-2-without-prev": {"seq": 2},
    "beat-with-seq": {"kind": Kind.BEAT},
    "prev-short": {"seq": 2, "prev": b"x"},
    "body-float": {"body": 0.5},
    "body-set": {"body": {1, 2}},
    "body-object": {"body": object()},
    "body-int-key": {"body": {1: 2}},
    "body-huge-int": {"body": 2**64},
    "body-too-deep": {"body": _nested(MAX_BODY_DEPTH + 1)},
    "body-oversize": {"body": bytes(MAX_MESSAGE_SIZE)},
    **{f"version-{version}": {"version": version} for version in (1, 2, 3, 4, 5, 6, 7, 8)},
    "version-str": {"version": "9"},
    "deck-kind-in-version-9": {"kind": Kind.DECK_KEY, "seq": 2, "prev": PREV},
}


@pytest.mark.parametrize("changes", LOCAL_ERRORS.values(), ids=LOCAL_ERRORS.keys())
def test_encode_rejects_bad_fields_as_local_error(changes: dict[str, Any]) -> None:
    with pytest.raises(LocalProtocolError):
        _event(**changes)


def test_encode_accepts_counter_bounds_and_mapping_bodies() -> None:
    big = decode_message(_event(seq=MAX_COUNTER, prev=PREV, lamport=MAX_COUNTER))
    assert (big.seq, big.lamport) == (MAX_COUNTER, MAX_COUNTER)
    proxied = decode_message(_event(body=MappingProxyType({"a": (1, [2])})))
    assert proxied.body == {"a": (1, (2,))}


# ---------------------------------------------------------------------------------------------
# The receive-path promise (h11): for any bytes, a Message or an InvalidMessageError


def _decode_or_reason(data: bytes, **context: Any) -> Message | RejectReason:
    try:
        return decode_message(data, **context)
    except InvalidMessageError as error:
        return error.reason


@settings(deadline=None)
@given(st.binary(max_size=MAX_MESSAGE_SIZE + 8))
def test_decode_random_bytes_raises_only_invalid_message(data: bytes) -> None:
    assert isinstance(_decode_or_reason(data), RejectReason)


msgpack_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats()
    | st.binary(max_size=70)
    | st.text(max_size=20)
    | st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=8)),
    lambda children: (
        st.lists(children, max_size=9)
        | st.dictionaries(
            st.text(max_size=4) | st.integers(-(2**63), 2**64 - 1) | st.binary(max_size=4),
            children,
            max_size=5,
        )
    ),
    max_leaves=10,
)


@settings(deadline=None)
@given(msgpack_values)
def test_decode_random_msgpack_values_raises_only_invalid_message(value: Any) -> None:
    packed = _pack(value)
    for data in (packed, _pack([packed, ALICE.sign(packed)]), _signed(packed)):
        assert isinstance(_decode_or_reason(data), RejectReason | Message)


# Plausible values for each payload position, plus arbitrary ones, so the fuzzer reaches every
# check (version, types, chaining, body, signature) rather than stopping at the framing.
_junk = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats()
    | st.binary(max_size=33)
    | st.text(max_size=4)
    | st.lists(st.integers(0, 3), max_size=2)
)
_positions = [
    st.sampled_from([PROTOCOL_VERSION, SHARES_VERSION, 0, 2, 4, 6, 7, 8]) | _junk,
    st.sampled_from([GAME, OTHER_GAME]) | _junk,
    st.sampled_from([ALICE.peer_id, BOB.peer_id, bytes(32)]) | _junk,
    st.sampled_from([0, 1, 2, MAX_COUNTER, MAX_COUNTER + 1, -1]) | _junk,
    st.sampled_from([None, PREV]) | _junk,
    counters | _junk,
    st.sampled_from([kind.value for kind in Kind] + [0, 16, 255]) | _junk,
    bodies | _junk,
]


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.tuples(*_positions).map(list) | st.lists(_junk, max_size=10),
    st.sampled_from([{}, {"game_id": GAME}, _roster_ok, {"validators": {Kind.JOIN: _buggy}}]),
)
def test_decode_random_envelopes_raise_only_invalid_message(
    fields: list[Any], context: dict[str, Any]
) -> None:
    try:
        payload = _pack(fields)
    except (ValueError, TypeError, OverflowError):
        return  # not even packable (e.g. an int map key collision): nothing to send
    result = _decode_or_reason(_signed(payload), **context)
    if isinstance(result, Message):
        assert result.payload == payload
        assert result.author == ALICE.peer_id


@pytest.mark.parametrize(
    "wire",
    [
        VALID,
        _event(seq=0, kind=Kind.BEAT, lamport=300, body={"heads": {BOB.peer_id: 12}}),
        _event(BOB, seq=7, prev=PREV, lamport=2**40, kind=Kind.CLAIM, body=[1, -2, "5S", None]),
    ],
    ids=["join", "beat", "claim"],
)
def test_decode_every_bit_flip_is_rejected(wire: bytes) -> None:
    # Flipping a bit either breaks the framing or changes the payload or the signature; Ed25519
    # (strict, with canonical keys) then fails. Acceptance would be a forgery or a second byte
    # form of one message, so "rejected" is the only acceptable outcome.
    original = decode_message(wire)
    for index in range(len(wire)):
        for bit in range(8):
            flipped = bytearray(wire)
            flipped[index] ^= 1 << bit
            result = _decode_or_reason(bytes(flipped))
            assert isinstance(result, RejectReason), (index, bit)
    assert decode_message(wire) == original


@st.composite
def mutations(draw: st.DrawFn) -> bytes:
    """VALID with a few random byte-level edits: replace, insert, delete or truncate."""
    data = bytearray(VALID)
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, max(len(data) - 1, 0)))
        edit = draw(st.sampled_from(["replace", "insert", "delete", "truncate"]))
        if edit == "replace" and data:
            data[index] = draw(st.integers(0, 255))
        elif edit == "insert":
            data[index:index] = draw(st.binary(min_size=1, max_size=4))
        elif edit == "delete":
            del data[index : index + draw(st.integers(1, 4))]
        else:
            del data[index:]
    return bytes(data)


@settings(deadline=None)
@given(mutations())
def test_decode_mutated_messages_are_rejected_or_unchanged(data: bytes) -> None:
    result = _decode_or_reason(data)
    if isinstance(result, Message):
        assert data == VALID
        assert result == decode_message(VALID)


# ---------------------------------------------------------------------------------------------
# The codec's memo: owned by the caller, never a module's


def _counting_verify(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bytes, bytes]]:
    """Count the signature checks decode_message makes (key and signature of each, in order:
    what libsodium is asked, on both builds)."""
    return signature_checks(monkeypatch)


def test_envelope_cache_without_one_every_decode_verifies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The codec keeps no state of its own: nothing a call did, with or without a cache,
    # spares a call without one the check.
    calls = _counting_verify(monkeypatch)
    wire = _event(lamport=41)
    decode_message(wire, cache=EnvelopeCache())
    decode_message(wire)
    decode_message(wire)
    assert len(calls) == 3


def test_envelope_cache_verifies_once_per_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_verify(monkeypatch)
    wire = _event(lamport=42)
    mine, theirs = EnvelopeCache(), EnvelopeCache()
    first = decode_message(wire, game_id=GAME, cache=mine)
    again = decode_message(bytearray(wire), game_id=GAME, cache=mine)
    assert len(calls) == 1
    assert again is first  # the very message: parsed once
    assert decode_message(wire, cache=theirs) == first
    assert len(calls) == 2  # another owner's memo is its own


def test_envelope_cache_remembers_what_encode_signed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_verify(monkeypatch)
    cache = EnvelopeCache()
    wire = encode_message(
        ALICE,
        game_id=GAME,
        seq=1,
        prev=None,
        lamport=43,
        kind=Kind.JOIN,
        body=JOIN_BODY,
        cache=cache,
    )
    assert decode_message(wire, game_id=GAME, roster=[ALICE.peer_id], cache=cache).lamport == 43
    assert calls == []  # signed here: its signature holds


def test_envelope_cache_hit_still_checks_the_context_and_the_body() -> None:
    cache = EnvelopeCache()
    message = decode_message(VALID, cache=cache)
    with pytest.raises(InvalidMessageError) as caught:
        decode_message(VALID, game_id=OTHER_GAME, cache=cache)
    assert caught.value.reason is RejectReason.WRONG_GAME
    with pytest.raises(InvalidMessageError) as caught:
        decode_message(VALID, roster=[BOB.peer_id], cache=cache)
    assert caught.value.reason is RejectReason.UNKNOWN_AUTHOR
    with pytest.raises(InvalidMessageError) as caught:
        decode_message(VALID, validators={Kind.JOIN: _refuse_all}, cache=cache)
    assert caught.value.reason is RejectReason.BAD_BODY
    flipped = VALID[:-1] + bytes([VALID[-1] ^ 1])  # the same payload, another signature
    with pytest.raises(InvalidMessageError) as caught:
        decode_message(flipped, cache=cache)
    assert caught.value.reason is RejectReason.BAD_SIGNATURE
    assert decode_message(VALID, cache=cache) is message


def _refuse_all(body: Body) -> None:
    raise ValueError("no")


def test_envelope_cache_keeps_no_rejected_message() -> None:
    cache = EnvelopeCache()
    flipped = VALID[:-1] + bytes([VALID[-1] ^ 1])
    with pytest.raises(InvalidMessageError):
        decode_message(flipped, cache=cache)
    assert repr(cache) == "<EnvelopeCache 0 parsed, 0 verified of 16384>"


def test_envelope_cache_is_bounded_oldest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_verify(monkeypatch)
    cache = EnvelopeCache(size=2)
    wires = [_event(lamport=100 + i) for i in range(3)]
    for wire in wires:
        decode_message(wire, cache=cache)
    assert repr(cache) == "<EnvelopeCache 2 parsed, 2 verified of 2>"
    decode_message(wires[2], cache=cache)
    assert len(calls) == 3  # the newest is remembered
    decode_message(wires[0], cache=cache)
    assert len(calls) == 4  # the oldest was forgotten
    cache.clear()
    decode_message(wires[0], cache=cache)
    assert len(calls) == 5


def test_envelope_cache_needs_room_for_one() -> None:
    with pytest.raises(ValueError, match="at least one"):
        EnvelopeCache(size=0)


# ---------------------------------------------------------------------------------------------
# Purity

_FORBIDDEN_IMPORTS = {"os", "time", "random", "socket", "trio", "zmq", "threading", "asyncio"}


@pytest.mark.parametrize("module", ["__init__", "identity", "envelope"])
def test_protocol_modules_import_no_io(module: str) -> None:
    path = Path(p2p_nertz.protocol.__file__).parent / f"{module}.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert not imported & _FORBIDDEN_IMPORTS


# ---------------------------------------------------------------------------------------------
# The beat hint a runtime orders a burst by


@settings(max_examples=200, deadline=None)
@given(
    kind=st.sampled_from(list(Kind)),
    seq=st.integers(min_value=1, max_value=MAX_COUNTER),
    lamport=st.integers(min_value=0, max_value=MAX_COUNTER),
    padding=st.binary(max_size=3000),
)
def test_looks_like_beat_tells_beats_from_events(
    kind: Kind, seq: int, lamport: int, padding: bytes
) -> None:
    beat = kind.value >= Kind.BEAT.value
    wire = encode_message(
        BOB,
        game_id=GAME,
        seq=0 if beat else seq,
        prev=None if beat or seq == 1 else PREV,
        lamport=lamport,
        kind=kind,
        body=[padding],  # short and long payloads: bin 8 and bin 16 framing
        version=SHARES_VERSION,  # (every kind)
    )
    assert looks_like_beat(wire) is beat


@given(st.binary(max_size=200))
def test_looks_like_beat_never_raises_and_needs_the_frame_of_a_message(data: bytes) -> None:
    # Any bytes at all are answered (short ones included); only a two-item msgpack array
    # with a bin payload long enough to hold a seq can look like a beat.
    if looks_like_beat(data):
        assert data[0] == 0x92 and data[1] in (0xC4, 0xC5, 0xC6) and len(data) >= 80
    assert looks_like_beat(b"\x92\xc4" + data[:70]) is False  # too short to hold the seq


def test_envelope_cache_remembers_usable_authors_not_the_module() -> None:
    # Whether an author's key is usable is remembered by the cache passed in, never by the codec
    # (which keeps no state): a cache's answer is the one its parses take, and neither a call
    # without a cache nor another cache takes it. Planted here: a key of small order said usable
    # passes the fields' checks and is refused only by the signature's.
    first, second = _event(lamport=51), _event(lamport=52)
    cache = EnvelopeCache()
    decode_message(first, cache=cache)
    decode_message(second, cache=cache)
    assert list(cache._authors.items()) == [(ALICE.peer_id, True)]  # once per author
    small = _raw(author=bytes(32))
    planted = EnvelopeCache()
    planted._authors.keep(bytes(32), True)
    reasons = []
    for context in ({"cache": planted}, {}, {"cache": EnvelopeCache()}, {"cache": planted}):
        with pytest.raises(InvalidMessageError) as caught:
            decode_message(small, **context)
        reasons.append(caught.value.reason)
    assert reasons == [BAD_SIGNATURE, MALFORMED, MALFORMED, BAD_SIGNATURE]
    planted.clear()
    with pytest.raises(InvalidMessageError, match="malformed"):
        decode_message(small, cache=planted)  # asked afresh


BAD_SIGNATURE, MALFORMED = RejectReason.BAD_SIGNATURE, RejectReason.MALFORMED


def test_envelope_cache_bounds_the_authors_it_remembers() -> None:
    cache = EnvelopeCache(size=1)
    assert cache._usable_author(ALICE.peer_id)
    assert not cache._usable_author(bytes(32))  # a point of small order: never usable
    assert list(cache._authors) == [bytes(32)]
