"""What a node lets in (issue 14 §2): members only, within a budget; refusals logged sparingly.

Unit tests of :mod:`p2p_nertz.runtime.guard` with times passed in, of the node's use of it,
and of the peer core's promise that a stranger's message never reaches a signature check
(a spy counts the checks). ``tests/test_node_flood.py`` floods real nodes on real sockets.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import zmq
from sodium_helpers import signature_checks

from p2p_nertz.protocol.envelope import MAX_VOTE_SIZE, Kind, encode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Peer, Rejected
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.gate import zap_user_id
from p2p_nertz.runtime.guard import (
    BAD_FRAMES,
    OUTSIDER,
    OVER_BUDGET,
    SENDER_BURST,
    SENDER_RATE,
    SUMMARY_INTERVAL,
    TWIN_AFTER,
    TWIN_AFTER_ENV,
    InboundGuard,
    RefusalLog,
    SenderBudget,
    TokenBucket,
)
from p2p_nertz.runtime.mesh import dealer_id
from p2p_nertz.runtime.node import MAX_FRAME, ROUTER_HWM, PeerNode, routing_id
from p2p_nertz.runtime.zmqtrio import CURVE_BOX_BYTES

MEMBERS = [Identity.generate(derive_seed(b"test-guard", i)) for i in range(3)]
STRANGER = Identity.generate(derive_seed(b"test-guard-stranger"))
SPEC = GameSpec.create(
    [(m.peer_id, f"p{i}") for i, m in enumerate(MEMBERS)], Rules(target=None, rounds=1), b"g"
)
#: What the ROUTER names the connections of member 1 and member 2 (the gate's User-Ids).
USER = zap_user_id(MEMBERS[1].peer_id)
OTHER_USER = zap_user_id(MEMBERS[2].peer_id)


def senders(*members: Identity) -> dict[bytes, bytes]:
    """The guard's view of ``members``: routing id -> User-Id."""
    return {routing_id(m.peer_id): zap_user_id(m.peer_id) for m in members}


def test_a_bucket_holds_its_burst_and_refills_at_its_rate() -> None:
    bucket = TokenBucket(SenderBudget(rate=4.0, burst=5), now=100.0)
    assert [bucket.take(100.0) for _ in range(6)] == [True] * 5 + [False]
    assert bucket.take(100.125) is False  # half a token
    assert bucket.take(100.25) is True
    assert bucket.take(99.0) is False  # a clock going back adds nothing
    assert sum(bucket.take(200.0) for _ in range(50)) == 5  # never more than the burst


def test_a_bad_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="budget"):
        SenderBudget(rate=0.0)
    with pytest.raises(ValueError, match="budget"):
        SenderBudget(burst=0)


def test_the_guard_drops_outsiders_bad_frames_and_what_exceeds_a_members_budget() -> None:
    member = routing_id(MEMBERS[1].peer_id)
    guard = InboundGuard(senders(MEMBERS[1], MEMBERS[2]), SenderBudget(rate=1.0, burst=2))
    assert guard.admit([b"N" + STRANGER.peer_id, b"x", USER], 0.0) is None  # no member's id
    assert guard.admit([b"anything", b"x", USER], 0.0) is None
    assert guard.admit([member, b"x", OTHER_USER], 0.0) is None  # member 2 claiming 1's id
    assert guard.admit([member, b"x", b""], 0.0) is None  # a connection the gate did not name
    assert guard.admit([member, b"a", b"b", USER], 0.0) is None
    assert guard.admit([member, USER], 0.0) is None  # no message at all
    assert [guard.admit([member, b"m%d" % i, USER], 0.0) for i in range(3)] == [
        b"m0",
        b"m1",
        None,
    ]
    assert guard.admit([member, b"later", USER], 1.0) == b"later"
    assert guard.counts == {OUTSIDER: 4, BAD_FRAMES: 2, OVER_BUDGET: 1}


def test_what_a_handed_over_connection_held_is_taken_as_its_keys_member() -> None:
    # A member's DEALER reconnecting (its link timeout after a stop or a cut) takes its
    # routing id over (ROUTER_HANDOVER); what the old connection still gives comes under an
    # id of zmq's own, a zero byte first, the member's key as its User-Id (scripts/
    # bench_catchup.py: 48 of a member's messages at a node woken from a 30 s stop, dropped as
    # an outsider's until session 33). It is the member's, on the member's own budget.
    member = routing_id(MEMBERS[1].peer_id)
    guard = InboundGuard(senders(MEMBERS[1], MEMBERS[2]), SenderBudget(rate=1.0, burst=2))
    assert guard.admit([b"\0\x80\0\0\x01", b"held", USER], 0.0) == b"held"
    assert guard.admit([b"\0", b"held", OTHER_USER], 0.0) == b"held"  # (its own bucket)
    assert guard.admit([member, b"new", USER], 0.0) == b"new"
    assert guard.admit([b"\0\x80\0\0\x02", b"more", USER], 0.0) is None  # budget spent
    # Only zmq's ids, and only a member's key: a DEALER's own id or a stranger's stays out.
    assert guard.admit([b"\x01\x80\0\0\x01", b"x", OTHER_USER], 1.0) is None
    assert guard.admit([b"\0\x80\0\0\x01", b"x", zap_user_id(STRANGER.peer_id)], 1.0) is None
    assert guard.admit([b"\0\x80\0\0\x01", b"x", b""], 1.0) is None
    assert guard.counts == {OVER_BUDGET: 1, OUTSIDER: 3}


def test_each_dealer_of_a_member_is_taken_as_the_member_on_one_budget() -> None:
    # Each DEALER has a routing id of its own: the member's, then a nonce (mesh.dealer_id), so
    # that a key run on two machines makes two connections side by side at the ROUTER, not
    # one taking the other's over. Both are the member's, on the member's one budget.
    first, second = (dealer_id(MEMBERS[1].peer_id) for _ in range(2))
    guard = InboundGuard(senders(MEMBERS[1], MEMBERS[2]), SenderBudget(rate=1.0, burst=3))
    assert guard.admit([first, b"a", USER], 0.0) == b"a"
    assert guard.admit([second, b"b", USER], 0.0) == b"b"
    assert guard.admit([routing_id(MEMBERS[1].peer_id), b"c", USER], 0.0) == b"c"  # (no nonce)
    assert guard.admit([second, b"d", USER], 0.0) is None  # the budget both spend
    # Another member's nonce after this key's member's id, or this member's id under another
    # key, or a routing id shorter than a member's: outsiders.
    assert guard.admit([dealer_id(MEMBERS[2].peer_id), b"x", USER], 1.0) is None
    assert guard.admit([first, b"x", OTHER_USER], 1.0) is None
    assert guard.admit([first[:-9], b"x", USER], 1.0) is None
    assert guard.counts == {OVER_BUDGET: 1, OUTSIDER: 3}
    with pytest.raises(ValueError, match="differ in length"):
        InboundGuard({b"N1": USER, b"N22": OTHER_USER})


def test_a_batch_is_admitted_as_each_of_its_frames_would_be_and_says_its_own_drops() -> None:
    member = routing_id(MEMBERS[1].peer_id)
    batch = [
        [b"N" + STRANGER.peer_id, b"x", USER],
        [member, b"m0", USER],
        [member, b"a", b"b", USER],
        [member, b"m1", USER],
        [member, b"m2", USER],  # over the budget
        [member, b"y", OTHER_USER],
    ]
    one_by_one = InboundGuard(senders(MEMBERS[1], MEMBERS[2]), SenderBudget(rate=1.0, burst=2))
    expected = [m for m in (one_by_one.admit(f, 0.0) for f in batch) if m is not None]
    guard = InboundGuard(senders(MEMBERS[1], MEMBERS[2]), SenderBudget(rate=1.0, burst=2))
    assert guard.admit_many(batch, 0.0) == (expected, {OUTSIDER: 2, BAD_FRAMES: 1, OVER_BUDGET: 1})
    assert expected == [b"m0", b"m1"]
    assert guard.counts == one_by_one.counts
    # The next batch's drops are its own; the counts go on adding up.
    assert guard.admit_many([[member, b"later", USER]], 1.0) == ([b"later"], {})
    assert guard.admit_many([[member, b"z", USER]] * 2, 1.0) == ([], {OVER_BUDGET: 2})
    assert guard.counts[OVER_BUDGET] == 3


def test_the_default_budget_never_drops_an_honest_members_traffic() -> None:
    # The measured honest peaks (docs/protocol.md §9.7: 26 messages in a second, 10 in 100
    # ms) with a margin, then gap-repair answers of max_want (64) events at once: none is
    # dropped. (A restart's catch-up may ask faster than SENDER_RATE: what is dropped then
    # is asked for again, docs/protocol.md §9.7.)
    member = routing_id(MEMBERS[1].peer_id)
    guard = InboundGuard(senders(MEMBERS[1]))
    now = 0.0
    for second in range(60):
        for i in range(50):  # 50 a second, in bursts of 10
            now = second + (i // 10) * 0.2
            assert guard.admit([member, b"beat", USER], now) is not None
    for _ in range(int(SENDER_RATE) // 64):  # a second of wants answered in full
        now += 1 / (SENDER_RATE // 64)
        for _ in range(64):
            assert guard.admit([member, b"relayed", USER], now) is not None
    assert guard.counts[OVER_BUDGET] == 0


def test_a_flood_from_a_member_is_cut_to_the_budget() -> None:
    member = routing_id(MEMBERS[1].peer_id)
    guard = InboundGuard(senders(MEMBERS[1]))
    admitted = sum(
        guard.admit([member, b"flood", USER], i / 10_000) is not None for i in range(100_000)
    )  # 10,000 a second for 10 s
    assert admitted <= SENDER_BURST + 10 * SENDER_RATE + 1
    assert guard.counts[OVER_BUDGET] == 100_000 - admitted


def test_a_flood_of_refusals_writes_a_line_per_interval_not_per_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="test.guard")
    refusals = RefusalLog(logging.getLogger("test.guard"))
    seconds = 60
    for i in range(100_000):
        reason = "bad_signature" if i % 2 else OUTSIDER
        refusals.refused(reason, "detail", i * seconds / 100_000)
    refusals.flush(seconds, force=True)
    assert refusals.counts == {"bad_signature": 50_000, OUTSIDER: 50_000}
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == refusals.lines <= 2 * (seconds / SUMMARY_INTERVAL + 1)
    assert lines[0] == f"refused a message: {OUTSIDER} (detail)"
    assert "bad_signature" in lines[1] and "more messages in" in lines[1]
    # Every refusal is in the first line or a summary.
    summed = 0
    for line in lines[1:]:
        summed += int(line.split()[1].replace(",", ""))
    assert summed == 100_000 - 1


def test_a_lone_refusal_is_logged_in_full_and_a_quiet_spell_resets(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="test.guard")
    refusals = RefusalLog(logging.getLogger("test.guard"), interval=5.0)
    refusals.refused("malformed", "first", 0.0)
    refusals.flush(100.0)  # nothing counted since: no summary
    refusals.refused("malformed", "again", 100.0)
    assert [r.getMessage() for r in caplog.records] == [
        "refused a message: malformed (first)",
        "refused a message: malformed (again)",
    ]


def test_a_node_lets_only_its_members_connections_through_within_their_budget(
    tmp_path: Path,
) -> None:
    node = PeerNode(MEMBERS[0], SPEC, tmp_path / "log", budget=SenderBudget(rate=1.0, burst=3))
    member = routing_id(MEMBERS[1].peer_id)
    batch = [
        # our own routing id and key: nobody sends as us
        [routing_id(MEMBERS[0].peer_id), b"ours", zap_user_id(MEMBERS[0].peer_id)],
        [routing_id(STRANGER.peer_id), b"stranger", USER],
        [member, b"forged", OTHER_USER],  # member 2's connection under member 1's id
        *([member, b"m%d" % i, USER] for i in range(5)),
    ]
    node._clock = lambda: 0.0
    assert node._admit(batch) == [b"m0", b"m1", b"m2"]
    assert node.refusals.counts == {OUTSIDER: 3, OVER_BUDGET: 2}


def test_a_key_heard_over_two_live_connections_is_a_twin_and_a_restart_is_not() -> None:
    said: list[bytes] = []
    guard = InboundGuard(senders(MEMBERS[1], MEMBERS[2]), on_twin=said.append)
    member, other = routing_id(MEMBERS[1].peer_id), routing_id(MEMBERS[2].peer_id)
    old, new, twin = (dealer_id(MEMBERS[1].peer_id) for _ in range(3))
    # A restart: the old connection's last messages come just after the new one's first
    # (what the ROUTER held of it), then only the new one's, ever after.
    for at, rid in [(0.0, old), (50.0, new), (50.1, old), (50.5, old), (51.0, new)]:
        assert guard.admit([rid, b"m", USER], at) == b"m"
    assert guard.admit([new, b"m", USER], 51.0 + 10 * TWIN_AFTER) == b"m"
    # What a handed-over connection held (zmq's own ids) is no connection of another copy's.
    for at in (200.0, 200.0 + 2 * TWIN_AFTER):
        assert guard.admit([b"\0\x80\0\0\x01", b"m", USER], at) == b"m"
        assert guard.admit([new, b"m", USER], at) == b"m"
    assert guard.twins == set() and said == []
    # A second copy of the key connects beside the first and both go on: said once, as the
    # older is heard TWIN_AFTER after the newer's first message. Member 2 is not concerned.
    start = 300.0
    for step in range(4 * round(TWIN_AFTER)):
        at = start + step / 2
        assert guard.admit([new if step % 2 else twin, b"m", USER], at) == b"m"
        assert guard.admit([dealer_id(b"x" * 32)[:1] + other[1:], b"m", OTHER_USER], at) == b"m"
        assert guard.twins == (set() if at < start + 0.5 + TWIN_AFTER else {member})
    assert said == [member]


def test_a_node_says_whose_key_reaches_it_from_two_places_at_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="p2p_nertz.node")
    node = PeerNode(MEMBERS[0], SPEC, tmp_path / "log")
    first, second = (dealer_id(MEMBERS[1].peer_id) for _ in range(2))
    # The second copy's first message a second after the first's; both go on past TWIN_AFTER.
    for at, batch in [(0.0, [first]), (1.0, [first, second]), (1.0 + TWIN_AFTER, [second, first])]:
        node._clock = lambda at=at: at
        assert node._admit([[rid, b"m", USER] for rid in batch]) == [b"m"] * len(batch)
    (said,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert said.getMessage().startswith("p1's key reaches this node from two places at once:")
    assert "another machine" in said.getMessage()


@pytest.mark.parametrize("value", ["1.5", "0", "-2", "soon", "nan", "inf", ""])
def test_a_nodes_twin_wait_is_the_environments_if_it_is_a_positive_number_of_seconds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """The real-process tests shorten the wait (``TWIN_AFTER_ENV``); any other value is said in
    one line and the node waits ``TWIN_AFTER``, as it does when the variable is unset."""
    caplog.set_level(logging.WARNING, logger="p2p_nertz.node")
    monkeypatch.setenv(TWIN_AFTER_ENV, value)
    node = PeerNode(MEMBERS[0], SPEC, tmp_path / "log")
    after = 1.5 if value == "1.5" else TWIN_AFTER
    first, second = (dealer_id(MEMBERS[1].peer_id) for _ in range(2))
    for at, batch in [(0.0, [first]), (1.0, [second, first]), (1.0 + after, [second, first])]:
        node._clock = lambda at=at: at
        assert node._admit([[rid, b"m", USER] for rid in batch]) == [b"m"] * len(batch)
        assert node.guard.twins == (set() if at < 1.0 + after else {routing_id(MEMBERS[1].peer_id)})
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert lines[-1].startswith("p1's key reaches this node from two places at once:")
    if value != "1.5":
        (bad,) = lines[:-1]
        assert (
            bad == f"{TWIN_AFTER_ENV} must be a positive number of seconds, not {value!r}: "
            f"it waits {TWIN_AFTER:g} s"
        )
    else:
        assert len(lines) == 1


def test_a_nodes_router_bounds_what_one_connection_can_make_it_hold(tmp_path: Path) -> None:
    node = PeerNode(MEMBERS[0], SPEC, tmp_path / "log")
    node.bind()
    try:
        router = node._mesh.router
        assert router is not None
        # (The largest message in its CURVE box: tests/test_mesh_curve.py sends one.)
        assert router._sock.get(zmq.MAXMSGSIZE) == MAX_FRAME == MAX_VOTE_SIZE + CURVE_BOX_BYTES
        assert router._sock.get(zmq.RCVHWM) == ROUTER_HWM
    finally:
        node._mesh.close()


def test_a_strangers_messages_never_reach_a_signature_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checked = signature_checks(monkeypatch)
    peer = Peer(MEMBERS[0], SPEC, 0.0)
    strangers = [
        encode_message(
            STRANGER, game_id=SPEC.game_id, seq=seq, prev=None, lamport=5, kind=kind, body=[]
        )
        for seq, kind in ((0, Kind.BEAT), (0, Kind.ACK), (1, Kind.JOIN))
    ]
    # (Each with a signature no cache has seen: encode_message remembers what it signed.)
    strangers = [wire[:-1] + bytes([wire[-1] ^ 1]) for wire in strangers]
    effects = peer.feed_many(strangers, 1.0)
    rejected = [e for e in effects if isinstance(e, Rejected)]
    assert [r.reason for r in rejected] == ["unknown_author"] * 3
    assert checked == []
    # The spy sees checks: a member's forged beat is checked (and refused).
    beat = encode_message(
        MEMBERS[1], game_id=SPEC.game_id, seq=0, prev=None, lamport=5, kind=Kind.BEAT, body=[]
    )
    effects = peer.feed(beat[:-1] + bytes([beat[-1] ^ 1]), 2.0)
    assert [key for key, _ in checked] == [MEMBERS[1].peer_id]
    assert [e.reason for e in effects if isinstance(e, Rejected)] == ["bad_signature"]
