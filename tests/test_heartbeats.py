"""Which sockets run a ZMTP heartbeat of their own (docs/lobby.md §8).

libzmq 4.3.5 aborts a process when a heartbeat of its own falls due on a connection whose input
stopped at the receive HWM and then broke (tests/test_lobby_wakes.py and
tests/test_mesh_router_wakes.py reproduce it on real processes). Only a socket that receives
nothing may run one: the mesh's DEALERs (and ``open_dealer``'s), whose heartbeat is how a
member notices a dead peer. Every other socket the program makes is read here, as built, on
real zmq sockets: the mesh's ROUTER and the spectator's ROUTER (only received on). The lobby
makes none: it speaks its own stream on plain TCP (docs/lobby.md §3), checked here too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import trio
import zmq

from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.lobby import LobbyHost, join_lobby
from p2p_nertz.runtime.mesh import Mesh
from p2p_nertz.runtime.watchport import WatchPort
from p2p_nertz.runtime.zmqtrio import (
    HEARTBEAT_IVL_MS,
    HEARTBEAT_TIMEOUT_MS,
    AsyncSocket,
    create_socket,
    open_dealer,
    open_router,
)

pytestmark = pytest.mark.anyio

ANN, BOB = (Identity.generate(derive_seed(b"test-heartbeats", n)) for n in range(2))


#: What a socket with no heartbeat of its own reads: no interval (zmq's default timeout, -1).
QUIET = (0, -1)
BEATING = (HEARTBEAT_IVL_MS, HEARTBEAT_TIMEOUT_MS)


def _beats(sock: AsyncSocket) -> tuple[int, int]:
    """The socket's own heartbeat interval and timeout, in ms."""
    return sock._sock.get(zmq.HEARTBEAT_IVL), sock._sock.get(zmq.HEARTBEAT_TIMEOUT)


@pytest.fixture
def ctx() -> Iterator[zmq.Context[zmq.Socket[bytes]]]:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    yield context
    context.destroy(linger=0)


def test_a_socket_beats_only_when_asked(ctx: zmq.Context[zmq.Socket[bytes]]) -> None:
    for kind in (zmq.ROUTER, zmq.DEALER):
        quiet = create_socket(ctx, kind)
        beating = create_socket(ctx, kind, heartbeat=True)
        try:
            assert _beats(quiet) == QUIET
            assert _beats(beating) == BEATING
        finally:
            quiet.close()
            beating.close()


async def test_open_router_is_quiet_and_open_dealer_beats(
    ctx: zmq.Context[zmq.Socket[bytes]],
) -> None:
    async with open_router(ctx) as router, open_dealer(ctx, router.endpoints[0]) as dealer:
        assert _beats(router) == QUIET
        assert _beats(dealer) == BEATING


def test_the_mesh_router_is_quiet_and_its_dealers_beat(
    ctx: zmq.Context[zmq.Socket[bytes]],
) -> None:
    mesh = Mesh(ANN, [ANN.peer_id, BOB.peer_id], ctx=ctx)
    mesh.bind()
    assert mesh.router is not None
    dealer = mesh._dealer(BOB.peer_id)
    try:
        assert _beats(mesh.router) == QUIET
        assert _beats(dealer) == BEATING
    finally:
        dealer.close()
        mesh.close()  # (its ZAP handler's sockets too, before the fixture ends the context)


def test_the_spectators_router_is_quiet(ctx: zmq.Context[zmq.Socket[bytes]]) -> None:
    spec = GameSpec.create([(ANN.peer_id, "Ann"), (BOB.peer_id, "Bob")], Rules(), b"h" * 16)
    port = WatchPort(ctx, Identity.generate(derive_seed(b"test-heartbeats-spy")), spec,
                     "tcp://127.0.0.1:0")  # fmt: skip
    try:
        port.bind()
        assert port.router is not None
        assert _beats(port.router) == QUIET
    finally:
        port.close()  # (its ZAP handler's sockets too, before the fixture ends the context)


async def test_the_lobby_makes_no_zmq_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real table on loopback: the host and the guest make no zmq socket (nothing of theirs
    can run a heartbeat, nor be aborted through libzmq), and the game still starts."""
    made: list[int] = []
    socket = zmq.Context.socket

    def spy(self: zmq.Context[Any], kind: int, *args: Any, **kwargs: Any) -> Any:
        made.append(kind)
        return socket(self, kind, *args, **kwargs)

    monkeypatch.setattr(zmq.Context, "socket", spy)
    lobby = LobbyHost(ANN, "Ann", Rules(), address="127.0.0.1", game_port=7200, auto_start=2)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            endpoint = await nursery.start(lobby.serve)
            session = await join_lobby(BOB, "Bob", "tcp://127.0.0.1:7201", endpoint, timeout=10)
            nursery.cancel_scope.cancel()
    assert session.game_id == (await lobby.wait_started()).game_id
    assert made == []
    # (The spy does see a zmq socket made: it is not blind.)
    with zmq.Context() as ctx, ctx.socket(zmq.DEALER):
        assert made == [zmq.DEALER]
