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
from p2p_nertz.runtime.mesh import LINK_RATE, LINK_TIMEOUT_MAX_MS, ROUTER_HWM, Mesh
from p2p_nertz.runtime.watchport import WatcherAddress, WatchPort
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
        patient = create_socket(ctx, kind, heartbeat=True, heartbeat_timeout_ms=7000)
        try:
            assert _beats(quiet) == QUIET
            assert _beats(beating) == BEATING
            assert _beats(patient) == (HEARTBEAT_IVL_MS, 7000)
        finally:
            quiet.close()
            beating.close()
            patient.close()
    with pytest.raises(ValueError, match="a heartbeat timeout is at least 1 ms"):
        create_socket(ctx, zmq.DEALER, heartbeat=True, heartbeat_timeout_ms=0)


async def test_open_router_is_quiet_and_open_dealer_beats(
    ctx: zmq.Context[zmq.Socket[bytes]],
) -> None:
    async with open_router(ctx) as router, open_dealer(ctx, router.endpoints[0]) as dealer:
        assert _beats(router) == QUIET
        assert _beats(dealer) == BEATING


@pytest.mark.parametrize("drop_after", [3.0, 12.0, 3600.0])
def test_the_mesh_router_is_quiet_and_its_dealers_beat(
    ctx: zmq.Context[zmq.Socket[bytes]], drop_after: float
) -> None:
    """A DEALER to a member gives its connection up no sooner than the drop timer (a link
    slower than ZMTP's 5 s is the protocol's to judge, docs/protocol.md §9.5), 5 s at least
    and 30 s at most; the ROUTER's mark holds what a member writes in the longest window at
    the highest honest rate, whatever timers the members chose (§9.7); a DEALER to a
    spectator waits as long (session 35: at 5 s, a spectator 3 s late each way was cut off at
    every PING, scripts/bench_dead_link.py way ``watch``)."""
    spy = Identity.generate(derive_seed(b"test-heartbeats-spy"))
    watcher = WatcherAddress("tcp://127.0.0.1:9", spy.peer_id)  # (never reached: not needed)
    mesh = Mesh(ANN, [ANN.peer_id, BOB.peer_id], ctx=ctx, watchers=[watcher], drop_after=drop_after)
    try:
        mesh.connect({BOB.peer_id: "tcp://127.0.0.1:9"})
        assert mesh.router is not None
        assert _beats(mesh.router) == QUIET
        waits = {3.0: HEARTBEAT_TIMEOUT_MS, 12.0: 12_000, 3600.0: LINK_TIMEOUT_MAX_MS}[drop_after]
        assert _beats(mesh._dealers[BOB.peer_id]) == (HEARTBEAT_IVL_MS, waits)
        assert _beats(mesh._watch_sockets[0]) == (HEARTBEAT_IVL_MS, waits)
        assert mesh.router._sock.get(zmq.RCVHWM) == ROUTER_HWM
        longest = (HEARTBEAT_IVL_MS + LINK_TIMEOUT_MAX_MS) / 1000  # (any member's timers)
        assert longest * LINK_RATE <= ROUTER_HWM and ROUTER_HWM >= 512  # (session 21's mark)
    finally:
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
