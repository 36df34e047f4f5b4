"""A spectator's port admits only the table's keys (CURVE + ZAP, runtime/watchport.py).

Real sockets over tcp://127.0.0.1: the spectator's :class:`WatchPort` bound; a member's real
:class:`Mesh` pushing to it through its ``--watcher`` DEALER; strangers' DEALERs (no key, a key
not the table's, a member's key towards the wrong server key) knocking. The tests synchronise on
zmq's monitor events and on the messages that arrive, never on sleeps.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
from collections import Counter
from collections.abc import Callable, Iterator

import pytest
import trio
import zmq
from test_mesh_curve import Sockets, dealer, next_event, receive

from cli.args import watcher_address
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.gate import client_keys, curve_public, server_keys, zap_user_id
from p2p_nertz.runtime.mesh import (
    ROUTER_KEEPALIVE,
    ROUTER_SILENCE_MS,
    WATCH_SPEC_TAG,
    Mesh,
    routing_id,
)
from p2p_nertz.runtime.watchport import (
    BAD_HANDSHAKE,
    NO_CURVE,
    NOT_THE_TABLE,
    WatchPort,
)

pytestmark = pytest.mark.timeout(60)

ANN, BOB, SPY, STRANGER = (Identity.generate(derive_seed(b"test-watch-port", i)) for i in range(4))
SPEC = GameSpec.create([(ANN.peer_id, "Ann"), (BOB.peer_id, "Bob")], Rules(), b"p" * 16)


@pytest.fixture
def ctx() -> Iterator[Sockets]:
    sockets = Sockets()
    try:
        yield sockets
    finally:
        sockets.close()


@pytest.fixture
def port(ctx: Sockets) -> Iterator[WatchPort]:
    """The spectator's port for Ann and Bob's game, bound; closed after the test."""
    watch = WatchPort(ctx.ctx, SPY, SPEC, "tcp://127.0.0.1:0")
    watch.bind()
    try:
        yield watch
    finally:
        watch.close()


def refusals_until(port: WatchPort, want: Counter[str]) -> Counter[str]:
    """The port's refusals, noted as libzmq reports them, until they include ``want``."""
    while not all(port.refused.counts[reason] >= n for reason, n in want.items()):
        assert port._monitor is not None and port._monitor.poll(20_000), port.refused.counts
        port.note_refusals(0.0)
    return port.refused.counts


def test_the_address_members_give_carries_the_spectators_key_and_parses_back(
    port: WatchPort,
) -> None:
    address = port.address
    assert address.key == SPY.peer_id
    text = str(address)
    assert text == f"{address.endpoint}#{SPY.peer_id.hex()}"
    assert watcher_address(text) == address
    assert watcher_address(text.removeprefix("tcp://")) == address  # HOST:PORT#KEY
    # The CURVE key a member's DEALER expects is the spectator's identity converted.
    assert server_keys(SPY).public == curve_public(address.key)


def test_a_members_pushes_reach_the_spectator_through_its_watcher_dealer(
    port: WatchPort,
) -> None:
    async def push() -> None:
        mesh = Mesh(ANN, SPEC.peer_ids, watchers=[port.address])
        try:
            mesh.connect({BOB.peer_id: "tcp://127.0.0.1:9"})  # (Bob is not there: no matter)
            async with trio.open_nursery() as nursery:
                mesh.serve_outlets(nursery, SPEC.to_wire())
                mesh.watch([b"an event"])
                first = await trio.to_thread.run_sync(receive, port)
                second = await trio.to_thread.run_sync(receive, port)
                nursery.cancel_scope.cancel()
        finally:
            mesh.close()
        # Named by Ann's key, under a routing id of Ann's DEALER (Ann's, then its nonce): the
        # spec first, then the event.
        assert first[0].startswith(routing_id(ANN.peer_id)) and second[0] == first[0]
        assert first[1:] == [WATCH_SPEC_TAG + SPEC.to_wire(), zap_user_id(ANN.peer_id)]
        assert second[1:] == [b"an event", zap_user_id(ANN.peer_id)]

    trio.run(push)


def _noted(port: WatchPort, done: Callable[[], object]) -> None:
    """Read the port's monitor as libzmq reports, until ``done()``."""
    while not done():
        assert port._monitor is not None and port._monitor.poll(20_000), port.connections
        port.refusals()


def test_the_port_counts_its_connections_and_each_has_the_meshs_keepalive(port: WatchPort) -> None:
    # A member's connection whose machine went away without a close is ended by the kernel
    # (tests/test_watch_dead_link.py): the options it does it by, read from the connection
    # the port accepted (the descriptor its monitor gave, in this process).
    async def push() -> tuple[int, int, int]:
        mesh = Mesh(ANN, SPEC.peer_ids, watchers=[port.address])
        try:
            mesh.connect({BOB.peer_id: "tcp://127.0.0.1:9"})
            async with trio.open_nursery() as nursery:
                mesh.serve_outlets(nursery, SPEC.to_wire())
                await trio.to_thread.run_sync(receive, port)  # (the spec: the connection is up)
                _noted(port, lambda: port.connections)
                (fd,) = port.connections
                with socket.socket(fileno=os.dup(fd)) as accepted:
                    options = (
                        accepted.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
                        accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
                        accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT),
                    )
                nursery.cancel_scope.cancel()
        finally:
            mesh.close()
        return options

    idle = ROUTER_KEEPALIVE[zmq.TCP_KEEPALIVE_IDLE]
    assert trio.run(push) == (1, idle, ROUTER_SILENCE_MS)
    _noted(port, lambda: port.ended)  # the member closed: the port counts it ended
    assert port.ended == 1 and not port.connections


def test_no_key_a_key_not_the_tables_or_the_wrong_spectator_key_gets_nothing_in(
    ctx: Sockets, port: WatchPort
) -> None:
    endpoint = port.address.endpoint
    keyless, keyless_events = dealer(ctx, b"Nnull", None)
    keyed, keyed_events = dealer(ctx, b"Nkeyed", client_keys(server_keys(STRANGER), SPY.peer_id))
    # A member, but towards another spectator's key: its hello cannot be opened here.
    astray, astray_events = dealer(ctx, b"Nastray", client_keys(server_keys(BOB), STRANGER.peer_id))
    for sock in (keyless, keyed, astray):
        sock.connect(endpoint)
        sock.send(b"let me in")  # queued on its side, for a connection it never gets
    assert next_event(keyed_events) == zmq.EVENT_HANDSHAKE_FAILED_AUTH  # the gate said no
    assert next_event(keyless_events) in (
        zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL,
        zmq.EVENT_DISCONNECTED,
    )
    assert next_event(astray_events) != zmq.EVENT_HANDSHAKE_SUCCEEDED
    seen = refusals_until(port, Counter({NO_CURVE: 1, NOT_THE_TABLE: 1, BAD_HANDSHAKE: 1}))
    assert set(seen) == {NO_CURVE, NOT_THE_TABLE, BAD_HANDSHAKE}
    assert re.fullmatch(
        r"refused \d+ connection\(s\): \d+ with a failed handshake, \d+ without a key, "
        r"\d+ with a key not the table's",
        port.summary(),
    ), port.summary()
    # Bob, with his key towards the spectator's, is the first whose message comes in.
    bob, bob_events = dealer(
        ctx, routing_id(BOB.peer_id), client_keys(server_keys(BOB), SPY.peer_id)
    )
    bob.connect(endpoint)
    assert next_event(bob_events) == zmq.EVENT_HANDSHAKE_SUCCEEDED
    bob.send(b"member")
    assert receive(port) == [routing_id(BOB.peer_id), b"member", zap_user_id(BOB.peer_id)]
    assert port.router is not None and port.router.try_recv_multipart() is None


def test_a_person_watching_their_own_game_under_their_own_key_is_admitted(ctx: Sockets) -> None:
    watch = WatchPort(ctx.ctx, ANN, SPEC, "tcp://127.0.0.1:0")  # Ann's default key for both
    try:
        watch.bind()
        ann, events = dealer(
            ctx, routing_id(ANN.peer_id), client_keys(server_keys(ANN), ANN.peer_id)
        )
        ann.connect(watch.address.endpoint)
        assert next_event(events) == zmq.EVENT_HANDSHAKE_SUCCEEDED
        ann.send(b"mine")
        assert receive(watch)[1:] == [b"mine", zap_user_id(ANN.peer_id)]
    finally:
        watch.close()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("127.0.0.1:5600", "needs its key"),
        ("127.0.0.1:5600#", "64 hex digits"),
        ("127.0.0.1:5600#xyz", "64 hex digits"),
        (f"127.0.0.1:5600#{'ab' * 31}", "64 hex digits"),
        (f"127.0.0.1:5600#{bytes(32).hex()}", "not a spectator's key"),  # a point of small order
        (f"example:5600#{SPY.peer_id.hex()}", "'example'"),
        (f"0.0.0.0:5600#{SPY.peer_id.hex()}", "only for --bind"),
    ],
)
def test_a_bad_watcher_address_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=says):
        watcher_address(text)
