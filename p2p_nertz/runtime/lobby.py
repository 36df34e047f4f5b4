"""The lobby on real sockets: the beacon on UDP, the table on a ZeroMQ ROUTER, guests on DEALERs.

The state machines are :class:`~p2p_nertz.lobby.state.HostLobby` and
:class:`~p2p_nertz.lobby.state.GuestLobby`; this module only moves their bytes.

* :class:`LobbyHost` binds a ROUTER for the lobby (guests' DEALERs connect under the routing id
  ``b"L" + key``, so the host addresses a guest by its key and refuses a message signed by
  another key than the connection's) and, when asked to, broadcasts the beacon every second to
  one broadcast address. It keeps serving while the game runs, so a guest that missed ``start``
  gets it again with its next ``hello``.
* :func:`join_lobby` seats a guest and returns the started game; :class:`LobbyGuest` does the
  same for a guest that may change its mind while waiting (ready or not, leave the table).
* :func:`discover` listens for beacons on one address and returns the tables it heard.

Broadcast is opt-in: nothing here sends or listens on an address it was not given
(DESIGN.md §7).
"""

from __future__ import annotations

import errno
import logging
import os
import socket as stdsocket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

import trio
import zmq

from p2p_nertz.errors import NertzError, TransportBrokenError, TransportClosedError
from p2p_nertz.lobby.beacon import BEACON_PORT, MAX_BEACON, Beacon, BeaconError
from p2p_nertz.lobby.limits import DropTally
from p2p_nertz.lobby.messages import ANY_LOBBY, MAX_MESSAGE, LobbyMessageError, TableView
from p2p_nertz.lobby.state import (
    GuestLobby,
    HostLobby,
    LobbyError,
    Out,
    Session,
    StartRefusedError,
)
from p2p_nertz.protocol.identity import Identity, PeerId, fingerprint
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.zmqtrio import AsyncSocket, create_socket

__all__ = [
    "BEACON_EVERY",
    "HELLO_EVERY",
    "LobbyGuest",
    "LobbyHost",
    "MAX_FRAME",
    "Offer",
    "ROUTER_RECV_HWM",
    "discover",
    "join_lobby",
    "lobby_routing_id",
    "route_address",
]

BEACON_EVERY: Final = 1.0
"""Seconds between beacons."""
HELLO_EVERY: Final = 1.0
"""Seconds between a waiting guest's ``hello``s."""
SUMMARY_EVERY: Final = 10.0
"""Seconds between two summaries of the messages of one kind dropped (docs/lobby.md §6)."""
_TICK: Final = 0.5
_BYE_FLUSH: Final = 0.2
MAX_FRAME: Final = MAX_MESSAGE
"""The largest frame a lobby socket accepts (``MAXMSGSIZE``): the largest lobby message
(docs/lobby.md). A stranger sending a larger one is disconnected by zmq before it is held."""
ROUTER_RECV_HWM: Final = 16
"""Messages the host's ROUTER holds per connection before zmq stops reading it (a guest sends
a ``hello`` a second): with :data:`MAX_FRAME`, at most 512 KiB per connection, a stranger's
included, instead of 1000 × 32 KiB. It does not keep a stranger from aborting a busy host
through libzmq 4.3.5 (docs/lobby.md §8, ``tests/test_stranger_abort.py``: an open problem)."""

log = logging.getLogger("p2p_nertz.lobby")


def lobby_routing_id(peer_id: bytes) -> bytes:
    """The routing id of a guest's lobby DEALER: ``b"L"`` and its key."""
    return b"L" + bytes(peer_id)


def route_address(target: str) -> str:
    """This machine's IPv4 address on the route to ``target`` (no packet is sent).

    >>> route_address("127.0.0.1")
    '127.0.0.1'

    Raises:
        NertzError: no route to ``target`` (or it is not an IPv4 address).
    """
    with stdsocket.socket(stdsocket.AF_INET, stdsocket.SOCK_DGRAM) as s:
        s.setsockopt(stdsocket.SOL_SOCKET, stdsocket.SO_BROADCAST, 1)
        try:
            s.connect((target, 9))
        except OSError as exc:
            raise NertzError(f"no route to {target}: {exc.strerror or exc}") from None
        address: str = s.getsockname()[0]
    return address


@dataclass(frozen=True, slots=True)
class Offer:
    """A table heard on the LAN: its beacon and the host's address (the datagram's source)."""

    beacon: Beacon
    address: str

    @property
    def lobby_endpoint(self) -> str:
        """Where to connect to sit at this table."""
        return f"tcp://{self.address}:{self.beacon.port}"


def _udp_socket() -> trio.socket.SocketType:
    sock = trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM)
    sock.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_REUSEADDR, 1)
    if hasattr(trio.socket, "SO_REUSEPORT"):
        sock.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_REUSEPORT, 1)
    sock.setsockopt(trio.socket.SOL_SOCKET, trio.socket.SO_BROADCAST, 1)
    return sock


async def discover(
    listen: str,
    *,
    port: int = BEACON_PORT,
    timeout: float,
    until: Callable[[Offer], bool] | None = None,
    on_offer: Callable[[Offer], None] | None = None,
    on_junk: Callable[[str, str], None] | None = None,
) -> list[Offer]:
    """Listen for beacons sent to ``listen`` (a broadcast or unicast IPv4 address) on ``port``.

    Returns after ``timeout`` seconds, or as soon as an offer satisfies ``until``; the offers
    heard, one per table (the latest beacon of each), in the order first heard. Datagrams that
    are not valid beacons are reported to ``on_junk(source, reason)`` and otherwise ignored.

    Raises:
        NertzError: the address cannot be listened on.
    """
    offers: dict[bytes, Offer] = {}
    with _udp_socket() as sock:
        try:
            await sock.bind((listen, port))
        except OSError as exc:
            raise NertzError(
                f"cannot listen for beacons on {listen}:{port}: {exc.strerror}"
            ) from None
        with trio.move_on_after(timeout):
            while True:
                data, source = await sock.recvfrom(MAX_BEACON + 1)
                try:
                    beacon = Beacon.decode(data)
                except BeaconError as exc:
                    log.debug("ignored a datagram from %s: %s", source[0], exc)
                    if on_junk is not None:
                        on_junk(source[0], str(exc))
                    continue
                offer = Offer(beacon, source[0])
                offers[beacon.lobby_id] = offer
                if on_offer is not None:
                    on_offer(offer)
                if until is not None and until(offer):
                    break
    return list(offers.values())


class LobbyHost:
    """The host's lobby on sockets; see the module docstring.

    Use::

        host = LobbyHost(identity, "Ann", rules, address="10.0.0.5", game_port=5601)
        async with trio.open_nursery() as nursery:
            lobby_endpoint = await nursery.start(host.serve)
            session = await host.wait_started()    # after start() or auto_start
            ...  # run the game; the lobby keeps answering late guests
            nursery.cancel_scope.cancel()

    Args:
        identity: the host's key.
        name: the host's name.
        rules: the game's rules.
        address: the IPv4 address the lobby ROUTER binds, and the host's game endpoint's.
        game_port: the host's game ROUTER port (the game endpoint is ``tcp://address:port``).
        lobby_port: the lobby ROUTER's port (0: any free one).
        capacity: most players, 1 to 8.
        auto_start: start as soon as this many players are seated and ready.
        broadcast: the broadcast address to send beacons to, or ``None`` for no beacon.
        beacon_port: the UDP port beacons go to.
        lobby_id: the lobby's id (random by default).
        on_change: called after anything changed at the table (a guest came, left, got ready).
        clock: the time source, in seconds.
        invited: fingerprints that may sit (the table is then invite-only); ``None``: anybody.
        summary_every: seconds between two log lines about dropped messages of one kind.
        deal: how the game will be dealt (:class:`~p2p_nertz.protocol.spec.Deal`).
    """

    def __init__(
        self,
        identity: Identity,
        name: str,
        rules: Rules,
        *,
        address: str,
        game_port: int,
        lobby_port: int = 0,
        capacity: int = 8,
        auto_start: int | None = None,
        broadcast: str | None = None,
        beacon_port: int = BEACON_PORT,
        lobby_id: bytes | None = None,
        on_change: Callable[[HostLobby], None] | None = None,
        clock: Callable[[], float] = trio.current_time,
        invited: Iterable[str] | None = None,
        summary_every: float = SUMMARY_EVERY,
        deal: Deal = Deal.COMMIT,
    ) -> None:
        self.table = HostLobby(
            identity,
            name,
            f"tcp://{address}:{game_port}",
            rules,
            lobby_id=lobby_id or os.urandom(32),
            capacity=capacity,
            invited=invited,
            deal=deal,
        )
        self.address = address
        self._lobby_port = lobby_port
        self._auto_start = auto_start
        self._broadcast = broadcast
        self._beacon_port = beacon_port
        self._on_change = on_change
        self._clock = clock
        self._outbox_send, self._outbox = trio.open_memory_channel[Out](1024)
        self._started = trio.Event()
        self._beacon_now = trio.Event()
        self._router: AsyncSocket | None = None
        self.rejected = 0
        """Lobby messages dropped (invalid, or over a sender's rate)."""
        self.drops = DropTally(every=summary_every)
        """The dropped messages and refused hellos, counted for the log's summaries."""
        self._logged = 0

    @property
    def endpoint(self) -> str:
        """The lobby ROUTER's endpoint (after :meth:`serve` started)."""
        if self._router is None:
            raise RuntimeError("the lobby is not serving yet")
        return self._router.endpoints[0]

    async def serve(self, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve the lobby until cancelled; report the lobby endpoint when bound.

        Raises:
            TransportBrokenError: the lobby endpoint cannot be bound (e.g. the port is in use).
        """
        ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        try:
            # No ZMTP heartbeat of its own: libzmq 4.3.5 aborts the process ("Assertion failed:
            # !_io_error") when one falls due on a connection whose input stopped at the HWM
            # and then broke: a host stopped past a sender's heartbeat timeout (or busy) with
            # a backlog (tests/test_lobby_wakes.py, docs/lobby.md §8). Nor does it need one to
            # notice a dead guest: the table unseats a guest silent for its guest_timeout (a
            # guest says hello every second), and a guest's DEALER reconnects by itself when
            # its connection breaks.
            router = create_socket(
                ctx,
                zmq.ROUTER,
                recv_hwm=ROUTER_RECV_HWM,
                max_message_size=MAX_FRAME,
                heartbeat=False,
            )
            async with router:
                router.bind(f"tcp://{self.address}:{self._lobby_port}")
                self._router = router
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._receive_loop, router)
                    nursery.start_soon(self._send_loop, router)
                    nursery.start_soon(self._tick_loop)
                    if self._broadcast is not None:
                        nursery.start_soon(self._beacon_loop, router.port)
                    task_status.started(router.endpoints[0])
        finally:
            ctx.term()

    async def wait_started(self) -> Session:
        """Wait for the game to start; return it."""
        await self._started.wait()
        assert self.table.started is not None
        return self.table.started

    def start(self, label: bytes | None = None) -> Session:
        """Start the game now.

        Raises:
            LobbyError: it cannot start (not everybody is ready, too few players, ...).
        """
        session, outs = self.table.start(label if label is not None else self.table.lobby_id)
        self._queue(outs)
        self._started.set()
        self._changed()
        return session

    def close(self, reason: str) -> None:
        """Close the lobby: the guests are told; nobody else is seated."""
        self._queue(self.table.close(reason))
        self._changed()

    def remove(self, who: PeerId, reason: str = "removed by the host") -> None:
        """Unseat a guest; it is told, and refused for the rest of this lobby.

        Raises:
            LobbyError: the game has started, or ``who`` is not seated.
        """
        self._queue(self.table.remove(who, reason))
        self._changed()

    def invite(self, text: str) -> str:
        """Let this fingerprint sit (see :meth:`HostLobby.invite`); return it.

        Raises:
            ValueError: ``text`` is not a fingerprint.
        """
        return self.table.invite(text)

    # -- internals -----------------------------------------------------------------------------
    def _queue(self, outs: list[Out]) -> None:
        for out in outs:
            try:
                self._outbox_send.send_nowait(out)
            except trio.WouldBlock:  # a thousand answers pending: guests will ask again
                break

    def _changed(self) -> None:
        while self._logged < len(self.table.log):
            log.info("%s", self.table.log[self._logged])
            self._logged += 1
        self._beacon_now.set()
        if self._on_change is not None:
            self._on_change(self.table)
        if (
            self._auto_start is not None
            and self.table.started is None
            and len(self.table.seats) >= self._auto_start
            and self.table.why_not_start() is None
        ):
            self.start()

    def _drop(self, kind: str, sender: bytes | None, reason: str) -> None:
        # One line per kind every few seconds, not one per message (docs/lobby.md §6).
        for line in self.drops.drop(kind, sender, reason, self._clock()):
            log.warning("%s", line)

    async def _receive_loop(self, router: AsyncSocket) -> None:
        while True:
            frames = await router.recv_multipart()
            if len(frames) != 2 or not frames[0].startswith(b"L") or len(frames[0]) != 33:
                self.rejected += 1
                self._drop("malformed frames", frames[0][:33], "not [routing id L+key, message]")
                continue
            before = (self.table.seats, self.table.started)
            try:
                outs = self.table.receive(frames[1], self._clock(), sender=PeerId(frames[0][1:]))
            except LobbyMessageError as exc:
                self.rejected += 1
                self._drop(f"{exc.code} {exc.kind or 'lobby'}", frames[0][1:], str(exc))
                continue
            for who, code, reason in self.table.refusals:
                self._drop(f"refused ({code}) hello", who, f"{fingerprint(who)}: {reason}")
            self.table.refusals.clear()
            # A refusal goes to the one who asked, seated or not.
            self._queue(outs)
            if (self.table.seats, self.table.started) != before or self._logged < len(
                self.table.log
            ):
                self._changed()

    async def _send_loop(self, router: AsyncSocket) -> None:
        async for out in self._outbox:
            if out.to is not None:
                targets = [out.to]
            else:
                targets = [s.peer_id for s in self.table.seats[1:]]
                if self.table.started is not None:
                    targets = [
                        p for p in self.table.started.endpoints if p != self.table.identity.peer_id
                    ]
            for who in targets:
                try:
                    with trio.move_on_after(1.0):
                        await router.send_multipart([lobby_routing_id(who), out.data])
                except TransportBrokenError:
                    pass  # that guest is not connected (any more): it will ask again

    async def _tick_loop(self) -> None:
        while True:
            await trio.sleep(_TICK)
            for line in self.drops.flush(self._clock()):
                log.warning("%s", line)
            before = self.table.seats
            self._queue(self.table.tick(self._clock()))
            if self.table.seats != before:
                self._changed()

    async def _beacon_loop(self, lobby_port: int) -> None:
        assert self._broadcast is not None
        with _udp_socket() as sock:
            while True:
                if self.table.started is None and not self.table.closed:
                    data = self.table.beacon(lobby_port).encode(self.table.identity)
                    try:
                        await sock.sendto(data, (self._broadcast, self._beacon_port))
                    except OSError as exc:  # the network went away; try again next time
                        if exc.errno not in (errno.ENETUNREACH, errno.ENETDOWN, errno.EHOSTUNREACH):
                            raise
                self._beacon_now = trio.Event()
                with trio.move_on_after(BEACON_EVERY):
                    await self._beacon_now.wait()


async def join_lobby(
    identity: Identity,
    name: str,
    game_endpoint: str,
    lobby_endpoint: str,
    *,
    host: PeerId | None = None,
    lobby_id: bytes = ANY_LOBBY,
    ready: bool = True,
    timeout: float = 10.0,
    on_table: Callable[[TableView], None] | None = None,
) -> Session:
    """Sit at the table at ``lobby_endpoint`` and wait for the game to start.

    Args:
        identity: our key.
        name: our name.
        game_endpoint: where our game node will bind (``tcp://IPv4:port``).
        lobby_endpoint: the host's lobby ROUTER.
        host: the host's key if known (from a beacon).
        lobby_id: the lobby's id if known (from a beacon).
        ready: whether we are ready; we stay ready as the players change (nobody here could
            say it again: each table is shown to ``on_table``), for the rules first shown.
        timeout: seconds to wait for the host's first answer.
        on_table: called with every new table the host shows.

    Raises:
        StartRefusedError: the host started a game that is not a table we said ready for, or
            showed other rules than first (docs/lobby.md §5).
        LobbyError: no answer within ``timeout``, the host refused us or closed the lobby.
    """
    guest = LobbyGuest(
        identity,
        name,
        game_endpoint,
        lobby_endpoint,
        host=host,
        lobby_id=lobby_id,
        ready=ready,
        stay_ready=True,
        timeout=timeout,
        on_table=on_table,
    )
    session = await guest.run()
    assert session is not None  # nobody calls leave() on this guest
    return session


class LobbyGuest:
    """A guest's seat on sockets, for a guest who may change its mind while waiting.

    :meth:`run` sits down at the table and returns the started game, like :func:`join_lobby`;
    meanwhile :meth:`set_ready` says ready or not ready (the host hears it at once) and
    :meth:`leave` gets up (the host hears ``bye``; :meth:`run` returns ``None``).

    Use::

        guest = LobbyGuest(identity, "Bob", "tcp://10.0.0.6:5601", "tcp://10.0.0.5:5670",
                           ready=False)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(press_r_later, guest)   # guest.set_ready(True)
            session = await guest.run()

    Args:
        identity: our key.
        name: our name.
        game_endpoint: where our game node will bind (``tcp://IPv4:port``).
        lobby_endpoint: the host's lobby ROUTER.
        host: the host's key if known (from a beacon).
        lobby_id: the lobby's id if known (from a beacon).
        ready: whether we are ready to begin with.
        stay_ready: stay ready when the table changes; otherwise (a person) a changed table
            makes us not ready until :meth:`set_ready` again.
        timeout: seconds to wait for the host's first answer, and for its next one once it
            has answered (it answers every ``hello``, one a second): a host silent that long
            has quit, crashed or lost the network, and :meth:`run` says so.
        on_table: called with every table the host shows.
    """

    def __init__(
        self,
        identity: Identity,
        name: str,
        game_endpoint: str,
        lobby_endpoint: str,
        *,
        host: PeerId | None = None,
        lobby_id: bytes = ANY_LOBBY,
        ready: bool = True,
        stay_ready: bool = False,
        timeout: float = 10.0,
        on_table: Callable[[TableView], None] | None = None,
    ) -> None:
        self.state = GuestLobby(
            identity,
            name,
            game_endpoint,
            host=host,
            lobby_id=lobby_id,
            ready=ready,
            stay_ready=stay_ready,
        )
        self.lobby_endpoint = lobby_endpoint
        self.timeout = timeout
        self._on_table = on_table
        self._poke = trio.Event()
        self._leaving: str | None = None
        self._error: LobbyError | None = None
        self._ran = False
        self._host_heard: float | None = None  # when the host last answered (trio's clock)
        self.drops = DropTally(every=SUMMARY_EVERY)
        """Messages from the host's connection that were dropped, counted for the log."""

    @property
    def ready(self) -> bool:
        """Whether we say we are ready."""
        return self.state.ready

    @property
    def table(self) -> TableView | None:
        """The latest table the host showed, if any."""
        return self.state.table

    def set_ready(self, ready: bool) -> None:
        """Say ready (or not); the host hears it with the next ``hello``, sent now."""
        self.state.ready = ready
        self._poke.set()

    def leave(self, reason: str = "left the table") -> None:
        """Get up: send ``bye`` and make :meth:`run` return ``None``."""
        self._leaving = reason
        self._poke.set()

    async def run(self) -> Session | None:
        """Sit at the table and wait for the game to start; ``None`` if we left first.

        Raises:
            StartRefusedError: the host started a game that is not a table we said ready for
                (the host is told with a ``bye``; we join nothing).
            LobbyError: no answer within ``timeout``, the host refused us or closed the lobby.
            RuntimeError: when run a second time.
        """
        if self._ran:
            raise RuntimeError("a LobbyGuest runs once")
        self._ran = True
        ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        try:
            # No ZMTP heartbeat either (the host sends to it: the same abort, docs/lobby.md §8):
            # a host that stopped answering is noticed by the hellos' own timeout.
            dealer = create_socket(
                ctx,
                zmq.DEALER,
                identity=lobby_routing_id(self.state.identity.peer_id),
                max_message_size=MAX_FRAME,
                heartbeat=False,
            )
            async with dealer:
                try:
                    dealer.connect(self.lobby_endpoint)
                except TransportBrokenError as exc:
                    raise LobbyError(f"cannot connect to {self.lobby_endpoint}: {exc}") from None
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._receive_loop, dealer, nursery.cancel_scope)
                    await self._hello_loop(dealer)
                    nursery.cancel_scope.cancel()
        except TransportClosedError as exc:  # pragma: no cover - only if the context dies
            raise LobbyError(str(exc)) from None
        finally:
            ctx.term()
        if self._error is not None:
            raise self._error
        return self.state.session

    async def _hello_loop(self, dealer: AsyncSocket) -> None:
        deadline = trio.current_time() + self.timeout
        while self.state.session is None and self._error is None:
            if self._leaving is not None:
                await dealer.send_multipart([self.state.bye(self._leaving)])
                await trio.sleep(_BYE_FLUSH)  # LINGER is 0: give the bye time to leave
                return
            await dealer.send_multipart([self.state.hello()])
            answered = self.state.table is not None
            wait = HELLO_EVERY if answered else min(HELLO_EVERY, deadline - trio.current_time())
            with trio.move_on_after(max(wait, 0.0)):
                await self._poke.wait()
            self._poke = trio.Event()
            where = self.lobby_endpoint
            silent = self.state.table is None and self.state.session is None
            if silent and trio.current_time() >= deadline:
                self._error = LobbyError(f"no answer from a lobby at {where} in {self.timeout:g} s")
            elif (
                self._host_heard is not None
                and self.state.session is None
                and trio.current_time() >= self._host_heard + self.timeout
            ):
                # (Nothing hangs: a guest left waiting at the table of a host that died would
                # wait for ever, and its bots with it.)
                self._error = LobbyError(
                    f"the host at {where} has not answered for {self.timeout:g} s: "
                    "it has quit, crashed or lost the network"
                )

    async def _receive_loop(self, dealer: AsyncSocket, scope: trio.CancelScope) -> None:
        while True:
            frames = await dealer.recv_multipart()
            now = trio.current_time()
            for line in self.drops.flush(now):
                log.warning("%s", line)
            if len(frames) != 1:
                for line in self.drops.drop("malformed frames", None, "not one frame", now):
                    log.warning("%s", line)
                continue
            try:
                got = self.state.receive(frames[0])
            except LobbyMessageError as exc:
                kind = f"{exc.code} {exc.kind or 'lobby'}"
                for line in self.drops.drop(kind, None, str(exc), now):
                    log.warning("%s", line)
                continue
            except StartRefusedError as exc:
                log.info("refused the host's start: %s", exc)  # (the caller says it)
                self._error = exc
                with trio.move_on_after(_BYE_FLUSH):  # tell the host why we do not join
                    await dealer.send_multipart([self.state.bye(f"refused the start: {exc}")])
                    await trio.sleep(_BYE_FLUSH)  # LINGER is 0: give the bye time to leave
                scope.cancel()
                return
            except LobbyError as exc:
                self._error = exc
                scope.cancel()
                return
            if isinstance(got, Session):
                scope.cancel()
                return
            if isinstance(got, TableView):
                self._host_heard = now
                if self.state.hello_due():
                    self._poke.set()  # the table changed: say now what we say for it
                if self._on_table is not None:
                    self._on_table(got)
