"""The mesh admits only the roster's keys (CURVE + ZAP, :mod:`p2p_nertz.runtime.gate`).

Real sockets over tcp://127.0.0.1: a member's :class:`Mesh` bound, other members' and
strangers' DEALERs connecting to it. The tests synchronise on zmq's monitor events (a
handshake refused or made) and on the messages that arrive, never on sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator

import nacl.bindings
import pytest
import zmq
import zmq.utils.monitor
import zmq.utils.z85

from p2p_nertz.errors import TransportBrokenError
from p2p_nertz.protocol.envelope import MAX_VOTE_SIZE
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed
from p2p_nertz.runtime.gate import (
    MESH_ZAP_DOMAIN,
    Gate,
    client_keys,
    curve_public,
    server_keys,
    zap_user_id,
)
from p2p_nertz.runtime.guard import TWIN_AFTER, InboundGuard
from p2p_nertz.runtime.mesh import Mesh, routing_id
from p2p_nertz.runtime.watchport import WatchPort
from p2p_nertz.runtime.zmqtrio import CurveKeys

pytestmark = pytest.mark.timeout(60)

ANN, BOB, CAT = (Identity.generate(derive_seed(b"test-mesh-curve", i)) for i in range(3))
STRANGER = Identity.generate(derive_seed(b"test-mesh-curve-stranger"))


@pytest.fixture
def ann() -> Iterator[Mesh]:
    """Ann's mesh in a game of three (Ann, Bob, Cat), bound; closed after the test."""
    mesh = Mesh(ANN, [ANN.peer_id, BOB.peer_id, CAT.peer_id])
    mesh.bind()
    try:
        yield mesh
    finally:
        mesh.close()


class Sockets:
    """A zmq context whose sockets the test's end closes (a socket left to the collector is
    an error under the suite's warnings)."""

    def __init__(self) -> None:
        self.ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        self.made: list[zmq.Socket[bytes]] = []

    def socket(self, kind: int) -> zmq.Socket[bytes]:
        sock = self.ctx.socket(kind)
        self.made.append(sock)
        return sock

    def close(self) -> None:
        for sock in self.made:
            sock.close(linger=0)
        self.ctx.destroy(linger=0)


@pytest.fixture
def ctx() -> Iterator[Sockets]:
    sockets = Sockets()
    try:
        yield sockets
    finally:
        sockets.close()


def dealer(
    ctx: Sockets, routing: bytes, keys: CurveKeys | None
) -> tuple[zmq.Socket[bytes], zmq.Socket[bytes]]:
    """A plain DEALER under ``routing`` with ``keys`` (none: the NULL mechanism), and a
    monitor of its handshakes; not connected yet."""
    sock = ctx.socket(zmq.DEALER)
    sock.set(zmq.LINGER, 0)
    sock.set(zmq.ROUTING_ID, routing)
    if keys is not None:
        keys.apply(sock)
    events = (
        zmq.EVENT_HANDSHAKE_SUCCEEDED
        | zmq.EVENT_HANDSHAKE_FAILED_AUTH
        | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
        | zmq.EVENT_DISCONNECTED
    )
    monitor = sock.get_monitor_socket(events)
    ctx.made.insert(0, monitor)
    return sock, monitor


def next_event(monitor: zmq.Socket[bytes]) -> int:
    assert monitor.poll(20_000), "no handshake event in 20 s"
    return int(zmq.utils.monitor.parse_monitor_message(monitor.recv_multipart())["event"])


def member_in(ctx: Sockets, ann: Mesh, key: Identity, *, claims: Identity) -> zmq.Socket[bytes]:
    """A DEALER with ``key``'s CURVE keys under ``claims``'s routing id, connected to
    ``ann``: returned once its handshake succeeded."""
    sock, monitor = dealer(
        ctx, routing_id(claims.peer_id), client_keys(server_keys(key), ANN.peer_id)
    )
    sock.connect(ann.endpoint)
    assert next_event(monitor) == zmq.EVENT_HANDSHAKE_SUCCEEDED
    return sock


def receive(owner: Mesh | WatchPort) -> list[bytes]:
    """The next message at the ROUTER of ``owner`` (a member's mesh or a spectator's port), as
    the node's receive loop gets it."""
    router = owner.router
    assert router is not None
    frames = router.try_recv_multipart()
    while frames is None:
        assert router._sock.poll(20_000), "nothing arrived in 20 s"
        frames = router.try_recv_multipart()
    return frames


def test_a_members_curve_keys_are_its_identitys_converted_and_form_a_pair() -> None:
    keys = server_keys(ANN)
    # libzmq derives the public key from the secret itself: it agrees with the peer id's
    # conversion, so a DEALER that knows only the roster has the server's real key.
    assert zmq.curve_public(zmq.utils.z85.encode(keys.secret)) == zmq.utils.z85.encode(keys.public)
    assert keys.public == curve_public(ANN.peer_id)
    assert keys.public == nacl.bindings.crypto_sign_ed25519_pk_to_curve25519(ANN.peer_id)
    assert curve_public(BOB.peer_id) != keys.public
    towards_bob = client_keys(keys, BOB.peer_id)
    assert (towards_bob.public, towards_bob.server) == (keys.public, curve_public(BOB.peer_id))


def test_the_gate_admits_a_members_key_named_as_the_member_and_refuses_the_rest(
    ctx: Sockets,
) -> None:
    gate = Gate(ctx.ctx, [BOB.peer_id, CAT.peer_id])

    def ask(*, key: bytes, mechanism: bytes = b"CURVE", domain: bytes = MESH_ZAP_DOMAIN) -> list:
        request = [b"1.0", b"7", domain, b"127.0.0.1", b"", mechanism, key]
        return gate.reply(request)

    assert ask(key=curve_public(BOB.peer_id)) == [
        b"1.0",
        b"7",
        b"200",
        b"OK",
        zap_user_id(BOB.peer_id),
        b"",
    ]
    assert ask(key=curve_public(CAT.peer_id))[4] == zap_user_id(CAT.peer_id)
    assert ask(key=curve_public(STRANGER.peer_id))[2] == b"400"
    assert ask(key=curve_public(ANN.peer_id))[2] == b"400"  # not in the gate's members
    assert ask(key=curve_public(BOB.peer_id), domain=b"other")[2] == b"400"
    assert ask(key=curve_public(BOB.peer_id), mechanism=b"PLAIN")[2] == b"400"
    assert gate.reply([b"0.9", b"8"])[:3] == [b"1.0", b"8", b"500"]
    assert gate.reply([])[2] == b"500"
    assert gate.refused == 6


def test_a_member_is_admitted_under_its_routing_id_and_named_by_its_key(
    ctx: Sockets, ann: Mesh
) -> None:
    bob = member_in(ctx, ann, BOB, claims=BOB)
    bob.send(b"hello")
    assert receive(ann) == [routing_id(BOB.peer_id), b"hello", zap_user_id(BOB.peer_id)]


def test_a_message_of_several_frames_comes_in_whole_with_the_user_id_last(
    ctx: Sockets, ann: Mesh
) -> None:
    # The adapter reads each frame's "more" flag itself (zmqtrio._recv_frames), not pyzmq's
    # recv_multipart: every frame in order, an empty one too, then the User-Id.
    bob = member_in(ctx, ann, BOB, claims=BOB)
    frames = [b"one", b"", bytes(range(256)), b"last"]  # (each within MAX_FRAME)
    bob.send_multipart(frames)
    bob.send(b"next")
    assert receive(ann) == [routing_id(BOB.peer_id), *frames, zap_user_id(BOB.peer_id)]
    assert receive(ann) == [routing_id(BOB.peer_id), b"next", zap_user_id(BOB.peer_id)]


def test_a_message_of_the_largest_legal_size_comes_in_through_its_curve_box(
    ctx: Sockets, ann: Mesh
) -> None:
    # zmq bounds the boxed message (CURVE adds 33 bytes): at MAXMSGSIZE 4096 a member that
    # sent a legal message of 4064 bytes or more was cut off, the message never delivered.
    bob = member_in(ctx, ann, BOB, claims=BOB)
    largest = bytes(range(256)) * (MAX_VOTE_SIZE // 256)  # (a drop's, session 40)
    assert len(largest) == MAX_VOTE_SIZE
    bob.send(largest)
    bob.send(b"after it")
    assert receive(ann) == [routing_id(BOB.peer_id), largest, zap_user_id(BOB.peer_id)]
    assert receive(ann)[1] == b"after it"


def test_a_stranger_with_a_key_of_its_own_or_none_gets_nothing_through(
    ctx: Sockets, ann: Mesh
) -> None:
    keyed, keyed_events = dealer(
        ctx, routing_id(BOB.peer_id), client_keys(server_keys(STRANGER), ANN.peer_id)
    )
    keyless, keyless_events = dealer(ctx, routing_id(CAT.peer_id), None)
    for sock in (keyed, keyless):
        sock.connect(ann.endpoint)
        sock.send(b"let me in")  # queued on its side, for a connection it never gets
    assert next_event(keyed_events) == zmq.EVENT_HANDSHAKE_FAILED_AUTH  # the gate said no
    assert next_event(keyless_events) in (  # cut off at its greeting: the mechanisms differ
        zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL,
        zmq.EVENT_DISCONNECTED,
    )
    assert ann.gate is not None and ann.gate.refused >= 1
    # A member's message comes in after their attempts, and it is the first thing that does.
    bob = member_in(ctx, ann, BOB, claims=BOB)
    bob.send(b"member")
    assert receive(ann)[1] == b"member"
    assert ann.router is not None and ann.router.try_recv_multipart() is None


def test_a_member_under_another_members_routing_id_is_still_named_by_its_own_key(
    ctx: Sockets, ann: Mesh
) -> None:
    # Cat holds her own key but claims Bob's routing id: the ROUTER takes the claim, the
    # User-Id says Cat, and the node's guard drops the frame (tests/test_guard.py).
    cat = member_in(ctx, ann, CAT, claims=BOB)
    cat.send(b"I am Bob")
    assert receive(ann) == [routing_id(BOB.peer_id), b"I am Bob", zap_user_id(CAT.peer_id)]


def test_a_curve_server_with_no_zap_handler_refuses_even_a_member(
    ctx: Sockets,
) -> None:
    # Fail closed: without the gate bound in its context (ZAP_ENFORCE_DOMAIN), libzmq would
    # otherwise admit any key.
    router = ctx.socket(zmq.ROUTER)
    router.set(zmq.LINGER, 0)
    server_keys(ANN).apply(router)
    port = router.bind_to_random_port("tcp://127.0.0.1")
    bob, monitor = dealer(ctx, routing_id(BOB.peer_id), client_keys(server_keys(BOB), ANN.peer_id))
    bob.connect(f"tcp://127.0.0.1:{port}")
    bob.send(b"hello")
    assert next_event(monitor) != zmq.EVENT_HANDSHAKE_SUCCEEDED
    assert router.poll(0) == 0


def test_a_second_mesh_in_one_context_is_refused_clearly(
    ctx: Sockets,
) -> None:
    first = Mesh(ANN, [ANN.peer_id, BOB.peer_id], ctx=ctx.ctx)
    second = Mesh(BOB, [ANN.peer_id, BOB.peer_id], ctx=ctx.ctx)
    try:
        first.bind()
        with pytest.raises(TransportBrokenError, match="already has a ZAP handler"):
            second.bind()
        assert second.router is None
    finally:
        second.close()
        first.close()


def test_a_members_key_in_two_meshes_reaches_a_member_twice_and_neither_cuts_the_other(
    ann: Mesh,
) -> None:
    # Bob's key run on two machines (two nodes, each its own context): until session 34 both
    # DEALERs had Bob's one routing id, the second's connection took it over at Ann's ROUTER
    # (ROUTER_HANDOVER) and the first's wrote into a closed pipe until its heartbeat gave up,
    # a drop timer later: Ann heard none of the honest Bob and voted him out for silence.
    # Each DEALER has an id of its own now: both stand, and the first's messages go on; Ann's
    # node says that Bob's key reaches it from two places.
    members = [ANN.peer_id, BOB.peer_id, CAT.peer_id]
    bobs = [Mesh(BOB, members), Mesh(BOB, members)]
    try:
        bobs[0].connect({ANN.peer_id: ann.endpoint, CAT.peer_id: "tcp://127.0.0.1:9"})
        first = bobs[0]._dealers[ANN.peer_id]
        lost = first.monitor(zmq.EVENT_DISCONNECTED)  # (libzmq gives its handshakes too)
        try:
            first._sock.send(b"first, alone")
            heard = receive(ann)
            assert heard[1:] == [b"first, alone", zap_user_id(BOB.peer_id)]
            assert heard[0].startswith(routing_id(BOB.peer_id))
            bobs[1].connect({ANN.peer_id: ann.endpoint, CAT.peer_id: "tcp://127.0.0.1:9"})
            bobs[1]._dealers[ANN.peer_id]._sock.send(b"second")
            twin = receive(ann)
            assert twin[1:] == [b"second", zap_user_id(BOB.peer_id)]
            assert twin[0] != heard[0] and twin[0].startswith(routing_id(BOB.peer_id))
            first._sock.send(b"first, beside the second")
            beside = receive(ann)
            assert beside == [heard[0], b"first, beside the second", heard[2]]
            events = []
            while lost.poll(0):
                events.append(zmq.utils.monitor.recv_monitor_message(lost)["event"])
            assert zmq.EVENT_DISCONNECTED not in events  # (the first's connection never went)
        finally:
            lost.close(linger=0)
    finally:
        for mesh in bobs:
            mesh.close()
    # Ann's guard takes all three as Bob's, and, the first still heard TWIN_AFTER after
    # the second's first message (times as its node's clock would give them), says so.
    twins: list[bytes] = []
    guard = InboundGuard({routing_id(BOB.peer_id): zap_user_id(BOB.peer_id)}, on_twin=twins.append)
    at = [0.0, 1.0, 1.0 + TWIN_AFTER]
    assert [guard.admit(f, t) for f, t in zip([heard, twin, beside], at, strict=True)] == [
        b"first, alone",
        b"second",
        b"first, beside the second",
    ]
    assert twins == [routing_id(BOB.peer_id)]
