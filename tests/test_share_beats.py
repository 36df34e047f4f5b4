"""The beats of a turn-up's shares (docs/shuffle.md §10.14): ``deck_reveal`` (67) and
``deck_want`` (68), signed, not chained, a shuffle game's version (10) only; their codec, a
forged or malformed one refused (and one that is right changes neither fold:
tests/test_peer_share_beats.py); a shuffle game's envelopes at version 10, its logs read at 10
alone (versions 3, 4, 6 and 8, before session 42, are not read:
tests/test_resume_other_version.py)."""

from __future__ import annotations

import dataclasses

import msgpack  # type: ignore[import-untyped]
import pytest
from peer_helpers import sign

from p2p_nertz.protocol.bodies import DeckReveal, DeckWant, Join, encode_body, parse_body
from p2p_nertz.protocol.effects import Rejected
from p2p_nertz.protocol.envelope import (
    PROTOCOL_VERSION,
    SHARES_VERSION,
    SIGNATURE_DOMAIN,
    InvalidMessageError,
    Kind,
    RejectReason,
    decode_message,
)
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from tests.test_fold_shuffle_opening import _dealt


def _wire(value: object) -> object:
    return msgpack.unpackb(msgpack.packb(value), use_list=False)


def _raw(
    identity: Identity,
    spec: GameSpec,
    code: int,
    body: object,
    *,
    version: int = SHARES_VERSION,
    seq: int = 0,
    lamport: int = 1,
) -> bytes:
    """A message signed by ``identity`` as given, which ``encode_message`` would refuse to
    make (a kind its version lacks, a beat chained)."""
    payload = msgpack.packb(
        [version, spec.game_id, identity.peer_id, seq, None, lamport, code, body]
    )
    return msgpack.packb([payload, identity.sign(SIGNATURE_DOMAIN + payload)])


def _game(n: int = 3) -> tuple[GameSpec, list[Identity]]:
    identities = [Identity.generate(derive_seed("share beats", i)) for i in range(n)]
    members = [(ident.peer_id, f"p{i}") for i, ident in enumerate(identities)]
    spec = GameSpec.create(members, Rules(target=None, rounds=1), b"beats", deal=Deal.SHUFFLE)
    identities.sort(key=lambda ident: spec.seat_of(ident.peer_id))
    return spec, identities


def test_share_beats_round_trip_signed_at_version_6() -> None:
    t = _dealt(3)
    spec, ids = _game(3)
    reveal = DeckReveal(1, t.opening([(0, 3), (2, 40)]))
    want = DeckWant(1, ((0, 0, 3), (2, 2, 40), (1, 2, 40)))
    for kind, body in ((Kind.DECK_REVEAL, reveal), (Kind.DECK_WANT, want)):
        wire = sign(ids[1], spec, kind=kind, body=encode_body(body), lamport=5)
        message = decode_message(wire, game_id=spec.game_id, version=spec.wire_version)
        assert message.version == SHARES_VERSION and message.seq == 0 and message.prev is None
        assert not message.kind.is_event
        assert parse_body(message.kind, message.body, spec.seats) == body
    # A share relayed by another sender is the same share: its maker is in the entry.
    assert {s.seat for s in reveal.shares} == {0, 1, 2}


def test_share_beats_forged_or_of_another_version_are_refused() -> None:
    t = _dealt(3)
    spec, ids = _game(3)
    body = encode_body(DeckReveal(1, t.opening([(0, 3)])))
    wire = sign(ids[1], spec, kind=Kind.DECK_REVEAL, body=body)
    forged = wire[:-1] + bytes([wire[-1] ^ 1])
    with pytest.raises(InvalidMessageError) as refused:
        decode_message(forged, game_id=spec.game_id)
    assert refused.value.reason is RejectReason.BAD_SIGNATURE
    commit = _raw(ids[1], spec, Kind.DECK_REVEAL.value, body, version=PROTOCOL_VERSION)
    with pytest.raises(InvalidMessageError) as refused:
        decode_message(commit, game_id=spec.game_id)
    assert refused.value.reason is RejectReason.UNKNOWN_KIND
    for version in (2, 3, 4):  # (versions before session 39: not read at all)
        old = _raw(ids[1], spec, Kind.DECK_REVEAL.value, body, version=version)
        with pytest.raises(InvalidMessageError) as refused:
            decode_message(old, game_id=spec.game_id)
        assert refused.value.reason is RejectReason.BAD_VERSION
    # As an event (chained) it is malformed: a beat has seq 0 and no prev.
    chained = _raw(ids[1], spec, Kind.DECK_REVEAL.value, body, seq=1)
    with pytest.raises(InvalidMessageError) as refused:
        decode_message(chained, game_id=spec.game_id)
    assert refused.value.reason is RejectReason.MALFORMED


@pytest.mark.parametrize(
    ("kind", "body", "words"),
    [
        (Kind.DECK_REVEAL, [1], "array of 2"),
        (Kind.DECK_REVEAL, [0, []], "round"),
        (Kind.DECK_REVEAL, [1, []], "no share"),
        (Kind.DECK_REVEAL, [1, [[0, 0, 0, 3, b"x", b"", b""]]], "point"),
        (Kind.DECK_WANT, [1, []], "1 to 64"),
        (Kind.DECK_WANT, [1, [[0, 0, 3]] * 2], "twice"),
        (Kind.DECK_WANT, [1, [[3, 0, 3]]], "member"),
        (Kind.DECK_WANT, [1, [[0, 0, 54]]], "position"),
        (Kind.DECK_WANT, [1, [[0, 0]]], "array of 3"),
        (Kind.DECK_WANT, [1, [[0, 0, 1]] + [[0, 1, p] for p in range(64)]], "1 to 64"),
    ],
)
def test_share_beats_malformed_bodies_are_refused_with_a_clear_error(
    kind: Kind, body: list[object], words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        parse_body(kind, _wire(body), 3)


def test_share_beats_a_peer_refuses_a_forged_or_malformed_beat_and_changes_nothing() -> None:
    t = _dealt(2)
    spec, ids = _game(2)
    peer = Peer(ids[0], spec, 0.0)
    peer.start(0.0)
    peer.feed(
        sign(ids[1], spec, kind=Kind.JOIN, body=encode_body(Join((0, 0), (b"", b""))), seq=1), 0.0
    )
    before = (peer.held(1), peer.final.digest())
    right = encode_body(DeckReveal(1, t.opening([(0, 3)])))
    cases = {
        "bad_signature": sign(ids[0], spec, kind=Kind.DECK_REVEAL, body=right, lamport=3)[:-1]
        + b"\0",
        "bad_body": sign(ids[1], spec, kind=Kind.DECK_REVEAL, body=[1, []], lamport=4),
        "unknown_kind": _raw(
            ids[1], spec, Kind.DECK_WANT.value, [1, [[0, 0, 3]]], version=PROTOCOL_VERSION
        ),
        "bad_version": _raw(ids[1], spec, Kind.DECK_WANT.value, [1, [[0, 0, 3]]], version=4),
    }
    for reason, wire in cases.items():
        effects = peer.feed(wire, 1.0)
        assert [e.reason for e in effects if isinstance(e, Rejected)] == [reason], reason
        assert (peer.held(1), peer.final.digest()) == before
    # A right one is not refused, and changes neither fold (this one, of another game's deal,
    # cannot be checked here: it is not kept either).
    for kind, body in ((Kind.DECK_REVEAL, right), (Kind.DECK_WANT, [1, [[0, 0, 3]]])):
        effects = peer.feed(sign(ids[1], spec, kind=kind, body=body, lamport=6), 1.0)
        assert not [e for e in effects if isinstance(e, Rejected)]
        assert (peer.held(1), peer.final.digest()) == before


def test_share_beats_each_game_reads_only_its_own_version() -> None:
    spec, _ = _game(2)
    commit = dataclasses.replace(spec, deal=Deal.COMMIT)
    assert commit.read_versions == (commit.wire_version,) == (PROTOCOL_VERSION,)
    assert spec.read_versions == (spec.wire_version,) == (SHARES_VERSION,)
