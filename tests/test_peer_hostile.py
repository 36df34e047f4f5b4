"""Hostile input on the receive path of the peer core (DESIGN.md §2, issue 3 "Hostile input").

Every attack is fed to a live peer in the middle of a game (play phase, cards in the lake): an
exact clone of seat 0 of a small bot-played network (``peer_helpers.PeerNetwork``). The promise
checked, h11-style: :meth:`Peer.feed` never raises; garbage and forgeries come back as one
``Rejected`` effect with the reason code, nothing is sent in answer but beats, and the state is
what it was (both folds, every feed, the lake, every tableau, the clock). Duplicates and replays
are silent. A well-signed event that is wrong *for the game* (an impossible claim, a false call,
a stacked deck) is different: it is part of its author's feed, so the fold refuses or penalises
it, the same way on every peer.

Tests may hold every member's identity, so forgeries by a member are signed for real.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_helpers import (
    PeerNetwork,
    PuppetPeer,
    Wires,
    beat_body,
    beat_of,
    forge,
    log_of,
    sign,
    snapshot,
)

from p2p_nertz.audit import FindingKind, Severity
from p2p_nertz.bots.base import Strategy
from p2p_nertz.errors import IllegalMoveError, LocalProtocolError
from p2p_nertz.protocol.bodies import ID_PREFIX, Drop, DropReason, Play, Ready, held_ids, parse_body
from p2p_nertz.protocol.delivery import ANSWER_BURST
from p2p_nertz.protocol.envelope import (
    MAX_COUNTER,
    MAX_VOTE_SIZE,
    SHARES_VERSION,
    SIGNATURE_DOMAIN,
    InvalidMessageError,
    Kind,
    Message,
    RejectReason,
    decode_message,
    defined_kinds,
)
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import (
    Effect,
    Equivocation,
    Peer,
    PeerConfig,
    Rejected,
    Send,
    Suspected,
)
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import GameState, Phase, Violation, deck_seed
from p2p_nertz.rules import (
    SUITS,
    Card,
    FoundationId,
    Move,
    Pile,
    RoundStatus,
    Rules,
    Table,
    Tableau,
    shuffled_deck,
)
from p2p_nertz.ui.tracker import Tracker
from tests.audit_helpers import Game, events_of, rewrite

VICTIM = 0  # the seat attacked
B = 1  # the member whose key signs the forgeries
ONE_ROUND = Rules(target=None, rounds=1)
HASH = hashlib.sha256(b"some 32 bytes").digest()


# -- the game under attack -------------------------------------------------------------------------
def _mid_game(net: PeerNetwork) -> bool:
    """Every peer's final fold is in play with at least four cards in the lake."""
    return all(
        p.final.phase is Phase.PLAY
        and p.final.table is not None
        and sum(1 for _ in p.final.table.lake.cards()) >= 4
        for p in net.peers
    )


@pytest.fixture(scope="module")
def mid() -> PeerNetwork:
    """A 3-seat game in mid play (shared: tests attack clones, never the network itself)."""
    net = PeerNetwork(3, seed=0)
    net.run(_mid_game)
    return net


@pytest.fixture
def victim(mid: PeerNetwork) -> tuple[Peer, float]:
    """A fresh clone of seat 0 and the time of its last input (no timer is due then)."""
    return mid.clone(VICTIM), mid.last_input_time[VICTIM]


@pytest.fixture(scope="module")
def shared(mid: PeerNetwork) -> Peer:
    """One clone of seat 0 for the fuzz tests (each example checks its own before and after)."""
    return mid.clone(VICTIM)


def _view(peer: Peer) -> Table:
    view = peer.view
    assert view is not None
    return view


def _final_table(peer: Peer) -> Table:
    table = peer.final.table
    assert table is not None
    return table


def _round(peer: Peer) -> int:
    return peer.tentative.round.number


def _frontier(peer: Peer) -> list[Any]:
    """What ``peer`` holds of every feed: the frontier ``[seqs, ids]`` of a member's next event
    (its own entry being its held head, ``seq - 1``), in msgpack form."""
    feeds = [peer.events(s) for s in range(peer.spec.seats)]
    seqs = [len(f) for f in feeds]
    return [seqs, list(held_ids(feeds, seqs))]


def _short(f: list[Any]) -> list[Any]:
    """A frontier of one seat too few."""
    return [f[0][:2], f[1][:2]]


def _pass(peer: Peer) -> Play:
    return Play((), _round(peer), Move.pass_())


def _event_sends(effects: list[Effect]) -> list[Message]:
    """The events (not beats, acks or wants) among the messages sent."""
    sent = [decode_message(e.data) for e in effects if isinstance(e, Send)]
    return [m for m in sent if m.kind.is_event]


def _rejections(effects: list[Effect]) -> list[Rejected]:
    return [e for e in effects if isinstance(e, Rejected)]


def assert_refused(peer: Peer, data: bytes, now: float, reason: str) -> Rejected:
    """Feed ``data``: exactly one ``Rejected`` with ``reason``, no event sent, state unchanged."""
    before = snapshot(peer)
    rejected_before = peer.rejected
    effects = peer.feed(data, now)
    rejections = _rejections(effects)
    assert [r.reason for r in rejections] == [reason], rejections
    assert rejections[0].detail
    assert _event_sends(effects) == []
    assert snapshot(peer) == before
    assert peer.rejected == rejected_before + 1
    return rejections[0]


def assert_ignored(peer: Peer, data: bytes, now: float) -> None:
    """Feed ``data``: no effect at all, state unchanged (a duplicate or a replay)."""
    before = snapshot(peer)
    assert peer.feed(data, now) == []
    assert snapshot(peer) == before


# -- bytes that are no message ---------------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=600))
def test_feed_random_bytes_is_rejected_unchanged(
    mid: PeerNetwork, shared: Peer, data: bytes
) -> None:
    before = snapshot(shared)
    effects = shared.feed(data, mid.last_input_time[VICTIM])
    (rejected,) = _rejections(effects)
    assert rejected.reason in {r.value for r in RejectReason}
    assert _event_sends(effects) == []
    assert snapshot(shared) == before


def test_feed_every_truncation_of_a_valid_event_is_rejected(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    wire = forge(peer, mid.identities[B], _pass(peer))
    for length in range(len(wire)):
        assert_refused(peer, wire[:length], now, "malformed")
    peer.feed(wire, now)  # whole, it is an event like any other
    assert peer.held(B) == mid.peers[VICTIM].held(B) + 1


def test_feed_oversize_message_is_rejected(victim: tuple[Peer, float], mid: PeerNetwork) -> None:
    peer, now = victim
    wire = forge(peer, mid.identities[B], _pass(peer))
    assert_refused(peer, wire + bytes(MAX_VOTE_SIZE + 1 - len(wire)), now, "oversize")
    # Well framed and signed, but too big even for a drop: refused before anything is parsed.
    payload = msgpack.packb([1, b"x" * MAX_VOTE_SIZE], use_bin_type=True)
    signature = mid.identities[B].sign(SIGNATURE_DOMAIN + payload)
    assert_refused(peer, msgpack.packb([payload, signature], use_bin_type=True), now, "oversize")


def _payload_of(wire: bytes) -> list[Any]:
    payload, _signature = msgpack.unpackb(wire, raw=False)
    return list(msgpack.unpackb(payload, raw=False))


def _resigned(identity: Identity, fields: list[Any]) -> bytes:
    """A well-signed message whose payload is ``fields`` exactly as given."""
    payload = msgpack.packb(fields, use_bin_type=True)
    return msgpack.packb([payload, identity.sign(SIGNATURE_DOMAIN + payload)], use_bin_type=True)


def _with_field(wire: bytes, position: int, value: Any) -> list[Any]:
    fields = _payload_of(wire)
    fields[position] = value
    return fields


MALFORMED: dict[str, tuple[Callable[[bytes, Identity], bytes], str]] = {
    "empty": (lambda w, i: b"", "malformed"),
    "reserved-byte": (lambda w, i: b"\xc1", "malformed"),  # a byte msgpack never uses
    "cut-array": (lambda w, i: b"\x92\xc4", "malformed"),
    "trailing-byte": (lambda w, i: w + b"\x00", "malformed"),
    "deep-nesting": (lambda w, i: b"\x91" * 2000, "malformed"),
    "not-bin-pair": (lambda w, i: msgpack.packb([1, 2]), "malformed"),
    "map": (lambda w, i: msgpack.packb({"a": 1}), "malformed"),
    "short-signature": (lambda w, i: msgpack.packb([b"x", b"y" * 63]), "malformed"),
    "array16-framing": (lambda w, i: b"\xdc\x00\x02" + w[1:], "non_canonical"),
    "version-1": (lambda w, i: _resigned(i, _with_field(w, 0, 1)), "bad_version"),
    # Versions before session 39 (a vote on proof without its proof) are not read.
    **{
        f"version-{v}": (lambda w, i, v=v: _resigned(i, _with_field(w, 0, v)), "bad_version")
        for v in (2, 3, 4)
    },
    "seven-fields": (lambda w, i: _resigned(i, _payload_of(w)[:7]), "malformed"),
    "kind-63": (lambda w, i: _resigned(i, _with_field(w, 6, 63)), "unknown_kind"),
    "kind-99": (lambda w, i: _resigned(i, _with_field(w, 6, 99)), "unknown_kind"),
    # The shuffle's kinds are a shuffle game's version (10): a commit game's version 9 has none.
    "deck-key-in-version-9": (lambda w, i: _resigned(i, _with_field(w, 6, 12)), "unknown_kind"),
    "deck-shares-in-version-10": (
        lambda w, i: _resigned(i, [SHARES_VERSION, *_with_field(w, 6, 14)[1:]]),
        "bad_version",
    ),
    "event-seq-0": (lambda w, i: _resigned(i, _with_field(w, 3, 0)), "malformed"),
    "negative-lamport": (lambda w, i: _resigned(i, _with_field(w, 5, -1)), "malformed"),
    "short-game-id": (lambda w, i: _resigned(i, _with_field(w, 1, b"x" * 31)), "malformed"),
    "str-author": (lambda w, i: _resigned(i, _with_field(w, 2, "author")), "malformed"),
    "float-body": (lambda w, i: _resigned(i, _with_field(w, 7, 1.5)), "bad_body"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_feed_malformed_message_is_rejected(
    victim: tuple[Peer, float], mid: PeerNetwork, case: str
) -> None:
    peer, now = victim
    make, reason = MALFORMED[case]
    wire = forge(peer, mid.identities[B], _pass(peer))
    assert_refused(peer, make(wire, mid.identities[B]), now, reason)


# -- a valid envelope with a malformed body, for every kind ----------------------------------------
BodyMaker = Callable[[list[Any], int], Any]
FIVE = ["AS", "2S", "3S", "4S", "5S"]

# Per kind: a valid body, and corruptions of it (the valid one proves that the corruption is
# what gets the body refused).
BODIES: list[tuple[Kind, BodyMaker, dict[str, BodyMaker]]] = [
    (
        Kind.JOIN,
        lambda f, r: [f],
        {
            "short-frontier": lambda f, r: [_short(f)],
            "long-frontier": lambda f, r: [[[*f[0], 0], [*f[1], b""]]],
            "negative-seq": lambda f, r: [[[-1, *f[0][1:]], f[1]]],
            "str-seq": lambda f, r: [[["1", *f[0][1:]], f[1]]],
            # Version 2: the ids are required, one per seat, 8 bytes where the seq is not 0.
            "version-1-frontier": lambda f, r: [f[0]],
            "no-ids": lambda f, r: [[f[0]]],
            "short-ids": lambda f, r: [[f[0], f[1][:2]]],
            "short-id": lambda f, r: [[f[0], [f[1][0][:7], *f[1][1:]]]],
            "id-at-seq-0": lambda f, r: [[[0, *f[0][1:]], f[1]]],
            "str-id": lambda f, r: [[f[0], ["12345678", *f[1][1:]]]],
            "frontier-extra": lambda f, r: [[*f, []]],
            "empty": lambda f, r: [],
            "not-array": lambda f, r: "join",
        },
    ),
    (
        Kind.COMMIT,
        lambda f, r: [f, r, HASH, HASH],
        {
            "short-frontier": lambda f, r: [_short(f), r, HASH, HASH],
            "short-hash": lambda f, r: [f, r, HASH, HASH[:31]],
            "str-hash": lambda f, r: [f, r, "x" * 32, HASH],
            "round-0": lambda f, r: [f, 0, HASH, HASH],
            "three-fields": lambda f, r: [f, r, HASH],
        },
    ),
    (
        Kind.REVEAL,
        lambda f, r: [f, r, 1, HASH],
        {
            "short-frontier": lambda f, r: [_short(f), r, 1, HASH],
            "what-2": lambda f, r: [f, r, 2, HASH],
            "long-value": lambda f, r: [f, r, 0, HASH + b"x"],
            "bool-what": lambda f, r: [f, r, True, HASH],
        },
    ),
    (
        Kind.READY,
        lambda f, r: [f, r, FIVE],
        {
            "short-frontier": lambda f, r: [_short(f), r, FIVE],
            "hidden-card": lambda f, r: [f, r, [*FIVE[:4], "??"]],
            "bad-card": lambda f, r: [f, r, [*FIVE[:4], "ZZ"]],
            "four-cards": lambda f, r: [f, r, FIVE[:4]],
            "eight-cards": lambda f, r: [f, r, [*FIVE, "6S", "7S", "8S"]],
            "int-cards": lambda f, r: [f, r, [1, 2, 3, 4, 5]],
            "str-round": lambda f, r: [f, str(r), FIVE],
            "lower-case-card": lambda f, r: [f, r, [*FIVE[:4], FIVE[4].lower()]],
        },
    ),
    (
        Kind.MOVE,
        lambda f, r: [f, r, "1>2", []],
        {
            "short-frontier": lambda f, r: [_short(f), r, "1>2", []],
            "bad-notation": lambda f, r: [f, r, "Q>Z", []],
            "lake-move": lambda f, r: [f, r, "N>L", []],
            "pass-as-move": lambda f, r: [f, r, "P", []],
            "hidden-revealed": lambda f, r: [f, r, "S", ["??"]],
            "four-reveals": lambda f, r: [f, r, "S", ["AS", "2S", "3S", "4S"]],
            "int-move": lambda f, r: [f, r, 5, []],
            "long-move": lambda f, r: [f, r, "1>2" + " " * 30, []],
            "spaced-move": lambda f, r: [f, r, " 1>2", []],
            "ten-as-t": lambda f, r: [f, r, "S", ["TH"]],
        },
    ),
    (
        Kind.CLAIM,
        lambda f, r: [f, r, "N>L@0S", "5S", ["3H"]],
        {
            "short-frontier": lambda f, r: [_short(f), r, "N>L@0S", "5S", ["3H"]],
            "hidden-card": lambda f, r: [f, r, "N>L@0S", "??", ["3H"]],
            "hidden-revealed": lambda f, r: [f, r, "N>L@0S", "5S", ["??"]],
            "bad-card": lambda f, r: [f, r, "N>L@0S", "1Z", ["3H"]],
            "undeclared-joker": lambda f, r: [f, r, "N>L@0S", "JK1", ["3H"]],
            "wrong-suit": lambda f, r: [f, r, "N>L@0S", "5H", ["3H"]],
            "not-to-lake": lambda f, r: [f, r, "N>2", "5S", ["3H"]],
            "no-foundation": lambda f, r: [f, r, "N>L", "5S", ["3H"]],
            "reveal-from-waste": lambda f, r: [f, r, "W>L@0S", "5S", ["3H"]],
            "int-card": lambda f, r: [f, r, "N>L@0S", 5, ["3H"]],
            "lower-case-move": lambda f, r: [f, r, "n>l@0s", "5S", ["3H"]],
            "symbol-card": lambda f, r: [f, r, "N>L@0S", "5♠", ["3H"]],
        },
    ),
    (
        Kind.STUCK,
        lambda f, r: [f, r],
        {
            "short-frontier": lambda f, r: [_short(f), r],
            "no-round": lambda f, r: [f],
            # (A third field names the seat of a pass on its behalf, P@<seat>: protocol.md §8.7.)
            "extra-fields": lambda f, r: [f, r, 1, 1],
            "behalf-no-seat": lambda f, r: [f, r, 9],
            "behalf-str-seat": lambda f, r: [f, r, "1"],
            "str-round": lambda f, r: [f, "1"],
        },
    ),
    (
        Kind.NERTS,
        lambda f, r: [f, r],
        {
            "short-frontier": lambda f, r: [_short(f), r],
            "negative-round": lambda f, r: [f, -1],
            "huge-round": lambda f, r: [f, 10**6],
        },
    ),
    (
        Kind.RESULT,
        lambda f, r: [f, r, HASH, [0, 0, 0]],
        {
            "short-frontier": lambda f, r: [_short(f), r, HASH, [0, 0, 0]],
            "two-scores": lambda f, r: [f, r, HASH, [0, 0]],
            "huge-score": lambda f, r: [f, r, HASH, [0, 0, 10**6]],
            "str-digest": lambda f, r: [f, r, "digest", [0, 0, 0]],
        },
    ),
    (
        Kind.DROP,
        lambda f, r: [f, 2, 0, 0, 0, []],
        {
            "short-frontier": lambda f, r: [_short(f), 2, 0, 0, 0, []],
            "seat-out-of-range": lambda f, r: [f, 3, 0, 0, 0, []],
            "reason-6": lambda f, r: [f, 2, 0, 6, 0, []],
            "negative-seq": lambda f, r: [f, 2, -1, 0, 0, []],
            "three-fields": lambda f, r: [f, 2, 0],
            "ids-without-count": lambda f, r: [f, 2, 0, 0, 0, [b"12345678"]],
            "fork-seq-without-fork": lambda f, r: [f, 2, 0, 0, 3, []],
            "fork-without-fork-seq": lambda f, r: [f, 2, 1, 1, 0, [b"12345678"]],
            "too-few-ids": lambda f, r: [f, 2, 3, 0, 0, [b"12345678"]],
            "short-id": lambda f, r: [f, 2, 2, 0, 0, [b"12345678", b"1234567"]],
            "ids-not-array": lambda f, r: [f, 2, 1, 0, 0, b"12345678"],
            "withdraw-counting": lambda f, r: [f, 2, 1, 2, 0, [b"12345678"]],
            "rejoin-without-request": lambda f, r: [f, 2, 0, 5, 0, []],
        },
    ),
    (
        Kind.LEAVE,
        lambda f, r: [f],
        {
            "short-frontier": lambda f, r: [_short(f)],
            "extra-field": lambda f, r: [f, 1],
        },
    ),
]

VALID_BODIES = {kind: valid for kind, valid, _ in BODIES}
BODY_CASES = [
    pytest.param(kind, valid, bad, id=f"{kind.name.lower()}-{name}")
    for kind, valid, corruptions in BODIES
    for name, bad in corruptions.items()
]


def _parsed_body(wire: bytes, seats: int = 3) -> object:
    message = decode_message(wire)
    return parse_body(message.kind, message.body, seats)


@pytest.mark.parametrize(("kind", "valid", "bad"), BODY_CASES)
def test_feed_event_with_malformed_body_is_rejected(
    victim: tuple[Peer, float],
    mid: PeerNetwork,
    kind: Kind,
    valid: BodyMaker,
    bad: BodyMaker,
) -> None:
    peer, now = victim
    frontier, number = _frontier(peer), _round(peer)
    assert _parsed_body(forge(peer, mid.identities[B], valid(frontier, number), kind=kind))
    wire = forge(peer, mid.identities[B], bad(frontier, number), kind=kind)
    rejected = assert_refused(peer, wire, now, "bad_body")
    assert rejected.author == mid.identities[B].peer_id


def _changed(body: list[Any], position: int, value: Any) -> list[Any]:
    out = list(body)
    out[position] = value
    return out


# Corruptions of a valid beat body ``[head seq, head id, held per seat, ...]``.
BEAT_CASES: dict[str, Callable[[list[Any]], Any]] = {
    "head-0-with-id": lambda b: _changed(_changed(b, 0, 0), 1, HASH),
    "head-without-id": lambda b: _changed(b, 1, None),
    "short-head-id": lambda b: _changed(b, 1, HASH[:31]),
    "short-held": lambda b: _changed(b, 2, b[2][:2]),
    "negative-held": lambda b: _changed(b, 2, [-1, *b[2][1:]]),
    "str-held": lambda b: _changed(b, 2, ["1", *b[2][1:]]),
    "field-missing": lambda b: b[:-1],
    "field-extra": lambda b: [*b, 0],
    "not-array": lambda b: {"head": b[0]},
}


@pytest.mark.parametrize("kind", [Kind.BEAT, Kind.ACK])
@pytest.mark.parametrize("case", list(BEAT_CASES))
def test_feed_beat_with_malformed_body_is_rejected(
    victim: tuple[Peer, float], mid: PeerNetwork, kind: Kind, case: str
) -> None:
    peer, now = victim
    valid = beat_body(peer, B)
    lamport = peer.clock + 1
    assert _parsed_body(sign(mid.identities[B], mid.spec, kind=kind, body=valid, lamport=lamport))
    bad = BEAT_CASES[case](valid)
    wire = sign(mid.identities[B], mid.spec, kind=kind, body=bad, lamport=lamport)
    assert_refused(peer, wire, now, "bad_body")


WANT_CASES: dict[str, list[Any]] = {
    "first-0": [0, 0, 1],
    "last-before-first": [0, 5, 2],
    "seat-out-of-range": [3, 1, 1],
    "two-fields": [0, 1],
    "str-seat": ["0", 1, 1],
}


@pytest.mark.parametrize("case", list(WANT_CASES))
def test_feed_want_with_malformed_body_is_rejected(
    victim: tuple[Peer, float], mid: PeerNetwork, case: str
) -> None:
    peer, now = victim
    assert _parsed_body(sign(mid.identities[B], mid.spec, kind=Kind.WANT, body=[0, 1, 2]))
    wire = sign(mid.identities[B], mid.spec, kind=Kind.WANT, body=WANT_CASES[case])
    assert_refused(peer, wire, now, "bad_body")


# -- forgeries: signatures, authors, games ---------------------------------------------------------
def test_feed_flipped_signature_bit_is_rejected(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    wire = forge(peer, mid.identities[B], _pass(peer))
    for index in (len(wire) - 1, len(wire) - 33, len(wire) - 64):
        for bit in (0, 7):
            flipped = bytearray(wire)
            flipped[index] ^= 1 << bit
            assert_refused(peer, bytes(flipped), now, "bad_signature")


def test_feed_changed_payload_under_old_signature_is_rejected(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    wire = forge(peer, mid.identities[B], _pass(peer))
    _payload, signature = msgpack.unpackb(wire, raw=False)
    fields = _payload_of(wire)
    for position, value in [(3, fields[3] + 1), (5, fields[5] ^ 1), (6, int(Kind.NERTS))]:
        payload = msgpack.packb(_with_field(wire, position, value), use_bin_type=True)
        forged = msgpack.packb([payload, signature], use_bin_type=True)
        assert_refused(peer, forged, now, "bad_signature")


def test_feed_unknown_author_is_rejected(victim: tuple[Peer, float], mid: PeerNetwork) -> None:
    peer, now = victim
    stranger = Identity.generate(hashlib.sha256(b"not in the roster").digest())
    event = sign(stranger, mid.spec, kind=Kind.JOIN, body=[[0, 0, 0]], seq=1, lamport=1)
    assert_refused(peer, event, now, "unknown_author")
    beat = sign(stranger, mid.spec, kind=Kind.BEAT, body=beat_body(peer, B), lamport=1)
    assert_refused(peer, beat, now, "unknown_author")


def test_feed_event_in_our_own_name_is_rejected(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    # Signed with the victim's own key (stolen, or a second process of its player): its log
    # holds every event it ever signed here. Refused, and, signed by its key past its head,
    # proof that its feed goes on elsewhere: it stops, signing nothing more (a next event of
    # its own would fork its feed; docs/protocol.md §9.6, two processes of one player).
    peer, now = victim
    wire = forge(peer, mid.identities[VICTIM], _pass(peer))
    assert_refused(peer, wire, now, "not_ours")
    assert peer._author.elsewhere == len(peer.events(VICTIM)) + 1
    assert peer.tick(now + 60.0) == []


def test_feed_message_of_another_game_is_rejected(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    other = GameSpec.create(
        [(m.peer_id, m.name) for m in mid.spec.members], mid.spec.rules, b"another game"
    )
    assert other.game_id != mid.spec.game_id
    # The member's real next event, word for word, but signed for the other game.
    message = decode_message(forge(peer, mid.identities[B], _pass(peer)))
    replayed = sign(
        mid.identities[B],
        other,
        kind=message.kind,
        body=message.body,
        seq=message.seq,
        prev=message.prev,
        lamport=message.lamport,
    )
    assert_refused(peer, replayed, now, "wrong_game")


# -- replays and duplicates ------------------------------------------------------------------------
def test_feed_replayed_events_change_nothing(victim: tuple[Peer, float]) -> None:
    peer, now = victim
    for seat in range(3):
        assert peer.events(seat)
        for message in peer.events(seat):
            assert_ignored(peer, message.wire, now)


def test_feed_replayed_beat_changes_nothing(victim: tuple[Peer, float], mid: PeerNetwork) -> None:
    peer, now = victim
    author = mid.spec.peer_ids[B]
    beats = [
        m
        for m in map(decode_message, mid.beat_wires())
        if m.author == author and m.kind in (Kind.BEAT, Kind.ACK)
    ]
    assert len(beats) >= 3
    for message in (beats[0], beats[len(beats) // 2]):
        assert_ignored(peer, message.wire, now)


def test_a_flood_of_wants_is_answered_a_burst_then_once_per_want_interval(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    # A member with a valid key asks for everything, again and again: each want is new (its
    # clock rises), and each used to be answered with up to max_want events. One asker's wants
    # for one feed are now answered ANSWER_BURST at once, then one per want_interval (§9.7).
    peer, now = victim
    asker = mid.spec.peer_ids[B]

    def answers(count: int, at: float) -> int:
        sent = 0
        for _ in range(count):
            wire = sign(
                mid.identities[B], mid.spec, kind=Kind.WANT, body=[0, 1, 64], lamport=peer.clock + 1
            )
            sent += any(
                isinstance(e, Send) and e.to == asker and e.data == peer.events(0)[0].wire
                for e in peer.feed(wire, at)
            )
        return sent

    interval = peer.config.want_interval
    assert answers(50, now) == ANSWER_BURST
    assert answers(50, now + interval / 2) == 0  # half a token
    assert answers(50, now + interval) == 1
    assert answers(50, now + 100 * interval) == ANSWER_BURST  # never more than the burst


# -- events that do not fit their author's feed ----------------------------------------------------
def test_feed_event_whose_prev_does_not_chain_is_rejected(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    older = peer.events(B)[-2].id
    for prev in (HASH, older, peer.events(VICTIM)[-1].id):
        wire = forge(peer, mid.identities[B], _pass(peer), prev=prev)
        rejected = assert_refused(peer, wire, now, "broken_chain")
        assert rejected.author == mid.identities[B].peer_id


def test_feed_event_whose_frontier_skips_its_own_feed_is_rejected(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    frontier = _frontier(peer)
    frontier[0][B] -= 1  # says it follows its event seq - 2 (and names that one's id)
    frontier[1][B] = peer.events(B)[frontier[0][B] - 1].id[:ID_PREFIX]
    wire = forge(peer, mid.identities[B], [frontier, _round(peer)], kind=Kind.STUCK)
    assert_refused(peer, wire, now, "broken_chain")


def test_feed_event_not_after_its_frontier_is_rejected(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    highest = max(peer.events(s)[-1].lamport for s in range(3))
    for lamport in (highest, highest - 1, 1):
        wire = forge(peer, mid.identities[B], _pass(peer), lamport=lamport)
        # Timed below the clock B announced in its beats, too: besides the refusal, the pair
        # (beat, event) is relayed as proof and B is voted out; B's feed gains nothing.
        held = peer.held(B)
        effects = peer.feed(wire, now)
        assert [r.reason for r in _rejections(effects)] == ["broken_chain"]
        assert peer.held(B) == held
    # One more and it is an event like any other.
    peer.feed(forge(peer, mid.identities[B], _pass(peer)), now)  # above B's announced clock
    assert peer.held(B) == mid.peers[VICTIM].held(B) + 1


def test_feed_events_too_far_ahead_are_rejected(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    # Events after a gap wait in pending, up to a bound: a member cannot fill our memory.
    peer, now = victim
    peer.config = dataclasses.replace(peer.config, max_pending=2)
    ahead = [forge(peer, mid.identities[B], _pass(peer), seq=peer.held(B) + k) for k in (2, 3, 4)]
    before = snapshot(peer)
    assert peer.feed(ahead[0], now) == [] and peer.feed(ahead[1], now) == []
    assert snapshot(peer) == before
    assert_refused(peer, ahead[2], now, "too_far_ahead")


# -- well-signed events the game refuses -----------------------------------------------------------
def _tops(table: Table, seat: int) -> dict[Pile, Card]:
    """The cards ``seat`` shows on its work piles and waste."""
    tableau = table.tableaux[seat]
    tops = {}
    for pile in (*tableau.work_piles, Pile.WASTE):
        card = tableau.top(pile)
        if card is not None:
            tops[pile] = card
    return tops


def _impossible_claim(peer: Peer, identity: Identity) -> bytes:
    """A claim by ``identity`` of the next card of an open foundation, from one of its work
    piles that shows another card."""
    view = _view(peer)
    seat = peer.spec.seat_of(identity.peer_id)
    fid, height = next(view.lake.open_foundations())
    card = Card(height + 1, fid.suit)
    pile = next(p for p, top in _tops(view, seat).items() if p.is_work and top != card)
    return forge(peer, identity, Play((), _round(peer), Move.to_lake(pile, fid), card, ()))


def _assert_refused_by_fold(peer: Peer, wire: bytes, now: float, needle: str) -> Violation:
    """Feed a well-formed event that the fold refuses: it joins its author's feed, records one
    Violation, and changes neither the lake nor any tableau."""
    before = snapshot(peer)
    effects = peer.feed(wire, now)
    assert _rejections(effects) == []
    assert _event_sends(effects) == []
    after = snapshot(peer)
    message = decode_message(wire)
    seat = peer.spec.seat_of(message.author)
    assert after.held == tuple(h + (s == seat) for s, h in enumerate(before.held))
    assert (after.lake, after.tableaux) == (before.lake, before.tableaux)
    assert after.violations[: len(before.violations)] == before.violations
    (violation,) = after.violations[len(before.violations) :]
    assert (violation.seat, violation.seq, violation.kind) == (seat, message.seq, message.kind)
    assert needle in violation.reason
    return violation


def test_feed_impossible_claim_is_refused_by_the_fold(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    _assert_refused_by_fold(peer, _impossible_claim(peer, mid.identities[B]), now, "claims")


def _vote(peer: Peer, target: int, reason: DropReason, last: int) -> Drop:
    feed = peer.events(target)
    ids = tuple(m.id[:8] for m in feed[max(0, last - 64) : last])
    return Drop((), target, last, reason, 0, ids)


def test_feed_abandon_with_three_members_left_is_refused_by_the_fold(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    # Abandon ends a two-member game; with three members left a majority can drop instead.
    peer, now = victim
    vote = _vote(peer, VICTIM, DropReason.ABANDON, peer.held(VICTIM))
    wire = forge(peer, mid.identities[B], vote)
    _assert_refused_by_fold(peer, wire, now, "exactly two members")
    assert VICTIM not in peer.tentative.dropped and peer.tentative.phase is not Phase.OVER


def test_feed_rejoin_for_a_member_never_dropped_changes_nothing(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    other = next(s for s in range(peer.spec.seats) if s not in (VICTIM, B))
    vote = _vote(peer, other, DropReason.REJOIN, peer.held(other))
    held, violations = peer.held(B), peer.tentative.violations
    peer.feed(forge(peer, mid.identities[B], vote), now)
    assert peer.held(B) == held + 1  # held, and counted as nothing
    assert peer.tentative.violations == violations
    assert not peer.tentative.rejoining and not peer.tentative.dropped


def test_feed_claim_on_missing_foundation_is_refused_by_the_fold(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    view = _view(peer)
    pile, card = next(
        (p, c) for p, c in _tops(view, B).items() if p.is_work and c.suit is not None and c.rank > 1
    )
    assert card.suit is not None
    fid = next(f for f in (FoundationId(o, card.suit) for o in range(10)) if f not in view.lake)
    wire = forge(peer, mid.identities[B], Play((), _round(peer), Move.to_lake(pile, fid), card))
    _assert_refused_by_fold(peer, wire, now, "does not fit")


def test_impossible_claim_is_refused_alike_on_every_peer() -> None:
    net = PeerNetwork(3, seed=3, rules=ONE_ROUND, factories={B: PuppetPeer})
    net.run(_mid_game)
    # The member's own core signs it (its later events chain on it), and sends it to all.
    message = decode_message(_impossible_claim(net.peers[B], net.identities[B]))
    body = parse_body(message.kind, message.body, 3)
    assert isinstance(body, Play)
    (sent,) = _event_sends(net.emit(B, body))
    assert sent.body == message.body
    net.run_until_over()
    violations = net.peers[0].final.violations
    (refused,) = [v for v in violations if v.seat == B and v.seq == sent.seq]
    assert refused.kind is Kind.CLAIM and "claims" in refused.reason
    assert {p.final.violations for p in net.peers} == {violations}
    assert len({p.final.digest() for p in net.peers}) == 1


def test_feed_false_nerts_call_costs_the_penalty_only(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    before_view, before = _view(peer), snapshot(peer)
    assert before_view.tableaux[B].nerts  # cards left: the call is false
    wire = forge(peer, mid.identities[B], Play((), _round(peer), Move.call()))
    effects = peer.feed(wire, now)
    assert _rejections(effects) == [] and _event_sends(effects) == []
    view, after = _view(peer), snapshot(peer)
    assert view.false_calls[B] == before_view.false_calls[B] + 1
    others = [s for s in range(3) if s != B]
    assert [view.false_calls[s] for s in others] == [before_view.false_calls[s] for s in others]
    assert view.status is RoundStatus.PLAYING  # play goes on
    assert (view.callers, view.cut) == (before_view.callers, before_view.cut)
    assert (after.lake, after.tableaux, after.violations) == (
        before.lake,
        before.tableaux,
        before.violations,
    )


def _play_when_possible(net: PeerNetwork, seat: int, move: Move) -> None:
    """Play ``move`` for ``seat`` as soon as its peer accepts it (a pile may be frozen)."""
    for _ in range(10_000):
        try:
            net.play(seat, move)
        except (IllegalMoveError, LocalProtocolError):
            net.step()
        else:
            return
    raise AssertionError(f"seat {seat} could never play {move}")


def test_false_nerts_call_is_penalised_alike_on_every_peer() -> None:
    rules = ONE_ROUND
    net = PeerNetwork(3, seed=4, rules=rules)
    net.run(_mid_game)
    assert _view(net.peers[B]).tableaux[B].nerts
    _play_when_possible(net, B, Move.call())  # a misclick: the public API allows it
    # The caller's row says what the call was: not "Nerts!", as a call that ended the round.
    names = [m.name for m in net.spec.members]
    assert Tracker(names, seat=B).view(net.peers[B]).last[B] == "false Nerts call"
    net.run(lambda n: all(_final_table(p).false_calls[B] == 1 for p in n.peers))
    assert all(_final_table(p).status is RoundStatus.PLAYING for p in net.peers)
    net.run_until_over()
    assert len({p.final.scores for p in net.peers}) == 1
    assert len({p.final.digest() for p in net.peers}) == 1
    (score,) = net.peers[0].final.scores
    assert score.players[B].penalty == rules.false_call_penalty > 0
    assert all(p.penalty == 0 for p in score.players if p.seat != B)
    assert net.peers[0].final.violations == ()
    # The peers' logs audit valid: the call is named, a notice (an honest mistake the rules
    # allow at a cost), and the signed results carry the penalty the audit recomputes.
    game = Game(net.spec, net.identities, [log_of(net, s) for s in range(net.n)], None)  # type: ignore[arg-type]
    report = game.audit()
    assert report.valid and report.exit_status == 0, [str(v) for v in report.violations]
    (false,) = [v for v in report.violations if v.kind is FindingKind.FALSE_NERTS]
    assert false.severity is Severity.NOTICE and false.seat == B and false.event == "nerts"
    name = net.spec.members[B].name
    assert false.detail.startswith(f"{name} called Nerts with ")
    assert f"a cost of {rules.false_call_penalty} points" in false.detail
    assert report.totals == net.peers[0].final.game.totals
    # Results signed without the penalty (each author's own, signed again) are errors.
    logs = game.copy()
    penalty = rules.false_call_penalty

    def unpaid(m: Message) -> dict[str, Any]:
        frontier, number, digest, scores, *more = m.body  # type: ignore[misc]
        paid = [s + penalty if i == B else s for i, s in enumerate(scores)]
        return {"body": [frontier, number, digest, paid, *more]}

    for seat in range(net.n):
        (result,) = events_of(logs, seat, net.spec, Kind.RESULT)
        rewrite(game, logs, seat, result.seq, unpaid)
    report = game.audit(logs)
    assert {v.kind for v in report.errors} == {FindingKind.RESULT_MISMATCH}
    assert [v.kind for v in report.violations if v.severity is Severity.NOTICE] == [
        FindingKind.FALSE_NERTS
    ]


class StackedDeckPeer(Peer):
    """Commits to its real secret, then reveals another one (the deck it would rather have)."""

    lying = False

    def _secret(self, number: int) -> bytes:
        if self.lying:
            return hashlib.sha256(b"a deck with the aces on top").digest()
        return super()._secret(number)


@pytest.fixture(scope="module")
def stacked_deck() -> tuple[PeerNetwork, int]:
    """A one-round game whose seat 2 reveals a secret that does not match its commit, and
    whose reveal comes last of all (the seed makes it so)."""
    cheat = 2
    net = PeerNetwork(3, seed=5, rules=ONE_ROUND, factories={cheat: StackedDeckPeer})
    liar = net.peers[cheat]
    assert isinstance(liar, StackedDeckPeer)
    # Lie only once its own deal is final: the commit and the deal were honest.
    net.run(lambda n: cheat in liar.final.round.ready)
    liar.lying = True
    return net, cheat


def test_stacked_deck_is_refused_alike_on_every_peer(
    stacked_deck: tuple[PeerNetwork, int],
) -> None:
    net, cheat = stacked_deck
    net.run(lambda n: all(p.final.violations for p in n.peers), within=120.0)
    for peer in net.peers:
        (violation,) = peer.final.violations
        assert (violation.seat, violation.kind) == (cheat, Kind.REVEAL)
        assert "stacked deck" in violation.reason
        assert peer.final.round.forfeit == {cheat}
    assert len({p.final.digest() for p in net.peers}) == 1


def test_stacked_deck_revealed_last_still_ends_the_round(
    stacked_deck: tuple[PeerNetwork, int],
) -> None:
    net, cheat = stacked_deck
    net.run_until_over(within=60.0)
    for peer in net.peers:
        (score,) = peer.final.scores
        forfeit = score.players[cheat]
        assert (forfeit.lake, forfeit.nerts_left) == (0, 13)
    assert len({p.final.digest() for p in net.peers}) == 1


# -- equivocation ----------------------------------------------------------------------------------
def _equivocation(peer: Peer, identity: Identity) -> tuple[Message, bytes]:
    """The member's latest held event, and another event it signs with the same seq."""
    original = peer.events(peer.spec.seat_of(identity.peer_id))[-1]
    body = parse_body(original.kind, original.body, peer.spec.seats)
    frontier = getattr(body, "frontier")  # noqa: B009 - every event body has one
    move = Move.call() if original.kind is Kind.STUCK else Move.pass_()
    other = forge(
        peer,
        identity,
        Play(frontier, _round(peer), move),
        seq=original.seq,
        frontier=frontier,
        lamport=original.lamport,
    )
    assert decode_message(other).id != original.id
    return original, other


def _assert_equivocation_handled(
    effects: list[Effect], *, seat: int, seq: int, first: bytes, second: bytes, cut: int
) -> None:
    (proof,) = [e for e in effects if isinstance(e, Equivocation)]
    assert (proof.seat, proof.seq, proof.first, proof.second) == (seat, seq, first, second)
    relayed = [e for e in effects if isinstance(e, Send) and e.data in (first, second)]
    assert sorted(e.data for e in relayed) == sorted([first, second])
    assert all(e.to is None for e in relayed)  # to everyone
    (vote,) = [m for m in _event_sends(effects) if m.wire not in (first, second)]
    assert vote.kind is Kind.DROP
    body = parse_body(vote.kind, vote.body, 3)
    assert isinstance(body, Drop)
    assert (body.seat, body.reason, body.last_seq) == (seat, DropReason.EQUIVOCATION, cut)
    assert _rejections(effects) == []


def test_feed_equivocation_is_proven_relayed_and_voted_out(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    original, other = _equivocation(peer, mid.identities[B])
    held = _frontier(peer)
    effects = peer.feed(other, now)
    # The victim had already announced holding the original (others may have taken it as
    # final), so its vote counts it and names that version.
    _assert_equivocation_handled(
        effects, seat=B, seq=original.seq, first=original.wire, second=other, cut=original.seq
    )
    assert peer.events(B)[-1] == original  # the feed keeps what it had
    assert _frontier(peer)[0] == [h + (s == VICTIM) for s, h in enumerate(held[0])]  # + vote
    votes = peer.tentative.votes.get(B, ())
    assert any(
        voter == VICTIM
        and vote.last_seq == original.seq
        and vote.reason is DropReason.EQUIVOCATION
        and vote.fork_id == original.id[:8]
        for voter, vote in votes
    )


def test_feed_equivocation_among_pending_events_is_proven(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    seq = peer.held(B) + 2  # after a gap: both wait in pending
    first = forge(peer, mid.identities[B], _pass(peer), seq=seq)
    second = forge(peer, mid.identities[B], Play((), _round(peer), Move.call()), seq=seq)
    before = snapshot(peer)
    assert peer.feed(first, now) == []
    assert snapshot(peer) == before
    effects = peer.feed(second, now)
    _assert_equivocation_handled(
        effects, seat=B, seq=seq, first=first, second=second, cut=peer.held(B)
    )


def test_feed_same_equivocation_twice_is_relayed_once(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    original, other = _equivocation(peer, mid.identities[B])
    assert any(isinstance(e, Equivocation) for e in peer.feed(other, now))
    again = peer.feed(other, now) + peer.feed(original.wire, now)
    assert [e for e in again if isinstance(e, Equivocation | Send)] == []


# -- fuzzing: the receive path never raises, never changes state on garbage ------------------------
def _valid(peer: Peer, data: bytes) -> bool:
    """Whether ``data`` is a well-signed message of this game (only those may change state)."""
    try:
        decode_message(data, game_id=peer.game_id, roster=set(peer.spec.peer_ids))
    except InvalidMessageError:
        return False
    return True


def _feed_checked(peer: Peer, data: bytes, now: float) -> list[Effect]:
    """Feed ``data``: it must not raise; garbage, and anything rejected, changes nothing."""
    before = snapshot(peer)
    valid = _valid(peer, data)
    effects = peer.feed(data, now)
    if not valid:
        assert len(_rejections(effects)) == 1
    if any(isinstance(e, Equivocation) for e in effects):
        # A second signed event under a seq already held (the fuzz peer keeps what earlier
        # examples fed it) is proof that its author forked: the proof is relayed, and our
        # vote to drop the author is the one event of ours it makes.
        own = peer.spec.peer_ids[peer.seat]
        ours = [m.kind for m in _event_sends(effects) if m.author == own]
        assert ours == [Kind.DROP], _rejections(effects)
    elif not valid or _rejections(effects):
        assert snapshot(peer) == before, _rejections(effects)
        assert _event_sends(effects) == []
    return effects


@st.composite
def mutations(draw: st.DrawFn, wires: list[bytes]) -> bytes:
    """A recorded message, damaged: bit flips, cuts, insertions, deletions, field swaps."""
    wire = draw(st.sampled_from(wires))
    how = draw(st.sampled_from(["flip", "cut", "insert", "delete", "swap", "splice", "reframe"]))
    if how == "flip":
        out = bytearray(wire)
        for _ in range(draw(st.integers(1, 4))):
            out[draw(st.integers(0, len(out) - 1))] ^= 1 << draw(st.integers(0, 7))
        return bytes(out)
    if how == "cut":
        return wire[: draw(st.integers(0, len(wire) - 1))]
    if how == "insert":
        at = draw(st.integers(0, len(wire)))
        return wire[:at] + draw(st.binary(min_size=1, max_size=8)) + wire[at:]
    if how == "delete":
        at = draw(st.integers(0, len(wire) - 1))
        return wire[:at] + wire[at + draw(st.integers(1, 8)) :]
    payload, signature = msgpack.unpackb(wire, raw=False)
    other_payload, other_signature = msgpack.unpackb(draw(st.sampled_from(wires)), raw=False)
    if how == "reframe":  # payload and signature swapped, or another message's signature
        pair = draw(
            st.sampled_from(
                [[signature, payload], [payload, other_signature], [other_payload, signature]]
            )
        )
        return bytes(msgpack.packb(pair, use_bin_type=True))
    fields = list(msgpack.unpackb(payload, raw=False))
    if how == "swap":
        i, j = draw(st.lists(st.integers(0, 7), min_size=2, max_size=2, unique=True))
        fields[i], fields[j] = fields[j], fields[i]
    else:  # splice: one field from another recorded message
        i = draw(st.integers(0, 7))
        fields[i] = list(msgpack.unpackb(other_payload, raw=False))[i]
    resigned = [msgpack.packb(fields, use_bin_type=True), signature]  # the old signature
    return bytes(msgpack.packb(resigned, use_bin_type=True))


@pytest.fixture(scope="module")
def recorded(mid: PeerNetwork) -> Wires:
    """Every message sent up to mid game."""
    return Wires(mid.sent)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_feed_mutated_recorded_messages_never_raise_nor_change_state(
    mid: PeerNetwork, shared: Peer, recorded: Wires, data: st.DataObject
) -> None:
    _feed_checked(shared, data.draw(mutations(recorded)), mid.last_input_time[VICTIM])


_leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.sampled_from(["AS", "10H", "JK1", "JK2=5H", "??", "N>L@0S", "1>2", "S", "P", "X", ""])
    | st.text(max_size=12)
    | st.binary(max_size=40)
    | st.just(HASH)
)
_bodies = st.recursive(_leaves, lambda inner: st.lists(inner, max_size=6), max_leaves=20)


@st.composite
def signed_bodies(draw: st.DrawFn, peer: Peer, identity: Identity) -> bytes:
    """A message of any kind by a member, its body random or a valid one with one random part:
    signed, chained and in time, so that only the body can be wrong."""
    kinds = sorted(defined_kinds(peer.spec.wire_version))
    kind = draw(st.sampled_from(kinds))
    if kind in VALID_BODIES and draw(st.booleans()):
        body: Any = VALID_BODIES[kind](_frontier(peer), _round(peer))
        part = body
        while isinstance(part, list) and part:
            index = draw(st.integers(0, len(part) - 1))
            if isinstance(part[index], list) and draw(st.booleans()):
                part[index] = list(part[index])
                part = part[index]
                continue
            part[index] = draw(_bodies)
            break
    else:
        body = draw(_bodies)
    if kind.is_event:
        return forge(peer, identity, body, kind=kind)
    return sign(identity, peer.spec, kind=kind, body=body, lamport=peer.clock + 1)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_feed_signed_random_bodies_never_raise(
    mid: PeerNetwork, shared: Peer, data: st.DataObject
) -> None:
    wire = data.draw(signed_bodies(shared, mid.identities[B]))
    _feed_checked(shared, wire, mid.last_input_time[VICTIM])


# Piles 5 and 6 do not exist with four work piles: see the regression test below.
_piles = st.sampled_from(["N", "W", "1", "2", "3", "4"])
_cards = st.sampled_from(
    [f"{r}{s}" for r in ("A", "2", "3", "5", "9", "10", "Q", "K") for s in "SHDC"]
    + ["JK1", "JK2", "JK1=5H", "JK2=AS"]
)


@st.composite
def play_events(draw: st.DrawFn, peer: Peer, identity: Identity) -> bytes:
    """A move or claim event in valid notation, whatever the tableau: legal or not."""
    source = draw(_piles)
    reveals = draw(st.lists(_cards, max_size=3))
    number = draw(st.sampled_from([_round(peer), _round(peer), _round(peer) + 1]))
    if draw(st.booleans()):
        count = draw(st.sampled_from(["", "", ":2", ":3"]))
        target = draw(st.sampled_from(["1", "2", "3", "4", "_1", "_3"]))
        declare = draw(st.sampled_from(["", "", "=5H", "=KS"]))
        text = draw(st.sampled_from([f"{source}{count}>{target}{declare}", "S", "R"]))
        return forge(peer, identity, [_frontier(peer), number, text, reveals], kind=Kind.MOVE)
    card = draw(_cards)
    suit = card[-1] if card[-1] in "SHDC" else "S"
    owner = draw(st.integers(0, 3))
    joker = draw(st.sampled_from(["", "", "*1"]))
    declare = draw(st.sampled_from(["", "", "=5H", "=AS"]))
    text = f"{source}>L@{owner}{suit}{joker}{declare}"
    body = [_frontier(peer), number, text, card, reveals[:1]]
    return forge(peer, identity, body, kind=Kind.CLAIM)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_feed_signed_moves_and_claims_never_raise(mid: PeerNetwork, data: st.DataObject) -> None:
    peer = mid.clone(VICTIM)
    now = mid.last_input_time[VICTIM]
    for _ in range(data.draw(st.integers(1, 3))):
        author = data.draw(st.sampled_from([1, 2]))
        _feed_checked(peer, data.draw(play_events(peer, mid.identities[author])), now)
    assert peer.tentative.phase is Phase.PLAY  # still a game to play on


# -- a silent member, and a replay of its old beat -------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SilentMember:
    """Seat 2 fell silent mid game and seat 0 just voted to drop it (the first vote)."""

    net: PeerNetwork
    old_beat: bytes  # the last beat seat 2 sent before
    inputs: int  # seat 0's inputs up to its vote
    now: float

    def voter(self) -> Peer:
        """Seat 0 as it was right after its vote."""
        return self.net.clone(VICTIM, self.inputs)


@pytest.fixture(scope="module")
def silent_member() -> SilentMember:
    net = PeerNetwork(3, seed=6, config=PeerConfig(suspect_after=1.0, drop_after=2.0))
    net.run(_mid_game)
    author = net.spec.peer_ids[2]
    old = [w for w in net.beat_wires() if decode_message(w).author == author][-1]
    net.silence(2)
    seen = 0

    def voted(n: PeerNetwork) -> bool:
        nonlocal seen
        fresh, seen = n.effects[VICTIM][seen:], len(n.effects[VICTIM])
        return any(m.kind is Kind.DROP for m in _event_sends(fresh))

    net.run(voted)
    return SilentMember(net, old, len(net.inputs[VICTIM]), net.last_input_time[VICTIM])


def test_silent_member_is_suspected_then_voted_out(silent_member: SilentMember) -> None:
    voter = silent_member.voter()
    effects = silent_member.net.effects[VICTIM]
    assert Suspected(2, True) in effects
    (vote,) = [m for m in _event_sends(effects) if m.kind is Kind.DROP]
    body = parse_body(vote.kind, vote.body, 3)
    assert isinstance(body, Drop) and (body.seat, body.reason) == (2, DropReason.SILENT)
    assert 2 not in voter.tentative.dropped  # one vote of the two needed so far
    silent_member.net.run(lambda n: all(2 in p.final.dropped for p in n.peers[:2]))


def test_replayed_old_beat_does_not_revive_a_silent_member(silent_member: SilentMember) -> None:
    voter = silent_member.voter()
    effects = voter.feed(silent_member.old_beat, silent_member.now)
    assert Suspected(2, False) not in effects
    assert _event_sends(effects) == []  # no withdrawn vote


# -- bugs found by this suite, fixed: kept as regression tests ---------------------------------
def test_feed_claim_from_missing_work_pile_is_refused(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    fid, height = next(_view(peer).lake.open_foundations())
    card = Card(height + 1, fid.suit)
    wire = forge(peer, mid.identities[B], Play((), _round(peer), Move.to_lake(Pile.W5, fid), card))
    _assert_refused_by_fold(peer, wire, now, "work pile")


def test_feed_survives_a_beat_at_the_largest_lamport(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    beat = beat_of(peer, mid.identities[B], MAX_COUNTER)
    peer.feed(beat, now)
    peer.feed(peer.events(B)[0].wire, now + 1.0)  # a beat is due by now: the peer sends
    peer.tick(now + 2.0)


def test_feed_forked_beat_is_refused_unchanged(
    victim: tuple[Peer, float], mid: PeerNetwork
) -> None:
    peer, now = victim
    body = beat_body(peer, B)
    body[1] = HASH  # another event than the one held under that seq
    wire = sign(mid.identities[B], mid.spec, kind=Kind.BEAT, body=body, lamport=peer.clock + 100)
    assert_refused(peer, wire, now, "fork")


def test_stale_event_below_announced_clock_does_not_split_final_state(
    mid: PeerNetwork,
) -> None:
    now = mid.last_input_time[VICTIM]
    first, second = mid.clone(VICTIM), mid.clone(VICTIM)
    ids = mid.identities
    stale = forge(first, ids[B], _pass(first))  # B's next event, Lamport time just above its past
    clock = first.clock + 50
    announce = [beat_of(first, ids[s], clock) for s in (1, 2)]  # "all held up to `clock`"
    for wire in announce:
        first.feed(wire, now)
    (own,) = _event_sends(first.play(Move.pass_(), now))  # an event above the announced clock
    cover = [beat_of(first, ids[s], clock + 5) for s in (1, 2)]
    for wire in cover:
        first.feed(wire, now)
    assert first.stable > decode_message(stale).lamport  # its time is final here...
    first.feed(stale, now)  # ...when it arrives
    late = [beat_of(first, ids[s], clock + 20) for s in (1, 2)]
    for wire in late:
        first.feed(wire, now)
    for wire in [stale, *announce, own.wire, *cover, *late]:  # the same messages, stale first
        second.feed(wire, now)
    assert first.final.digest() == second.final.digest(), (
        first.final.violations,
        second.final.violations,
    )


class FakeDealPeer(Peer):
    """Publishes a dealt face-up card its deck does not have: an ace on work pile 1.

    Its own fold follows its tableau the way the others do (from what it published), so that it
    can play the fake ace like any card. (It overrides private hooks: a test-only cheat.)
    """

    fake: Card | None = None

    def __init__(
        self, identity: Identity, spec: GameSpec, now: float, config: PeerConfig | None = None
    ) -> None:
        super().__init__(identity, spec, now, config)
        self._final = GameState(spec, seat=self.seat, secrets=None)
        self._folds = Folds(self._final, own=self.seat)
        self._folds.forked_at = self._membership.proof.forked_at

    def _act(self) -> None:
        rs = self._final.round
        if self._final.phase is Phase.PLAY and not self._duties.is_done(Kind.READY, rs.number):
            assert rs.fair.randomness is not None
            rules = self.spec.rules
            seed = deck_seed(self._secret(rs.number), rs.fair.randomness, rs.number)
            dealt = Tableau.deal(shuffled_deck(seed, rules.jokers), rules)
            visible = [dealt.nerts[-1], *(pile[-1] for pile in dealt.work)]
            shown = {c.physical for c in visible}
            self.fake = next(Card(1, s) for s in SUITS if Card(1, s) not in shown)
            visible[1] = self.fake
            self._emit(Ready(self._frontier(), rs.number, tuple(visible)), None)
            return
        super()._act()


class PlayTheFake(Strategy):
    """Plays the fake ace, then passes whenever not stuck (so that the others can finish)."""

    def __init__(self, cheat: FakeDealPeer) -> None:
        super().__init__()
        self.cheat = cheat

    def choose(self, table: Table, seat: int) -> Move | None:
        if table.tableaux[seat].top(Pile.W1) == self.cheat.fake:
            return Move.to_lake(Pile.W1)
        return None if table.stuck[seat] else Move.pass_()


def test_fake_dealt_card_is_caught_by_the_deck_replay() -> None:
    cheat = 2
    net = PeerNetwork(3, seed=1, rules=ONE_ROUND, factories={cheat: FakeDealPeer})
    liar = net.peers[cheat]
    assert isinstance(liar, FakeDealPeer)
    net.bots[cheat] = PlayTheFake(liar)
    net.run_until_over()
    assert liar.fake is not None
    for peer in net.peers:
        (score,) = peer.final.scores
        assert any(v.seat == cheat for v in peer.final.violations)
        assert score.players[cheat].lake == 0  # it forfeits: nothing of it counts
