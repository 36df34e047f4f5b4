"""The lobby on real sockets: the beacon on UDP, the table on plain TCP (the lobby's own stream).

The state machines are :class:`~p2p_nertz.lobby.state.HostLobby` and
:class:`~p2p_nertz.lobby.state.GuestLobby`; this module only moves their bytes, as frames on
TCP connections (:mod:`p2p_nertz.lobby.framing`, :mod:`p2p_nertz.runtime.lobbylink`). The lobby
is open to strangers, so it speaks no ZMTP: libzmq 4.3.5 lets anyone who reaches a ROUTER
abort the process (docs/protocol.md §13); a lobby connection's bytes only ever fill that
connection's own buffers.

* :class:`LobbyHost` listens on a TCP port for the lobby. It sends each connection a challenge
  of its own (random, the first frame), which a guest's every message must carry there (a
  message replayed from another connection is refused). A connection is bound to the key
  whose signed message it carried first: its later messages are counted against that key's
  rate before their signature is checked, and refused if another key signed them; the host
  answers a key on the connection that last brought a message the table took from it. It
  holds at most :data:`MAX_LINKS` connections (a newcomer displaces the one that has gone
  longest without a message taken, strangers' first), closes one that completes no frame in
  :data:`LINK_IDLE` seconds, and, when asked to, broadcasts the beacon every second to one
  broadcast address. It keeps serving while the game runs, so a guest that missed ``start``
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
import math
import os
import socket as stdsocket
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from typing import Final

import trio

from p2p_nertz.errors import NertzError, TransportBrokenError
from p2p_nertz.lobby.beacon import BEACON_PORT, MAX_BEACON, Beacon, BeaconError
from p2p_nertz.lobby.framing import FramingError
from p2p_nertz.lobby.limits import DropTally, TokenBuckets
from p2p_nertz.lobby.messages import (
    ANY_LOBBY,
    CHALLENGE_SIZE,
    LobbyMessageError,
    TableView,
    signed_by,
)
from p2p_nertz.lobby.state import (
    KEY_BURST,
    KEY_RATE,
    LISTEN_GAP,
    NEWCOMER_BURST,
    NEWCOMER_RATE,
    GuestLobby,
    HostLobby,
    LobbyError,
    Out,
    Session,
    StartRefusedError,
)
from p2p_nertz.protocol.identity import Identity, PeerId, fingerprint
from p2p_nertz.protocol.listening import Listening, heard_at, silence_vote_at
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.lobbylink import FrameCut, Link, open_link, split_endpoint

__all__ = [
    "BEACON_EVERY",
    "HELLO_EVERY",
    "LINK_IDLE",
    "LINK_OUTBOX",
    "LobbyGuest",
    "LobbyHost",
    "MAX_LINKS",
    "Offer",
    "SEND_TIMEOUT",
    "discover",
    "join_lobby",
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
_LISTEN_TURN: Final = LISTEN_GAP / 4
"""Longest wait between two turns of a listener for beacons: well inside ``LISTEN_GAP``, so
that waiting is never taken for a stop of its own."""
MAX_LINKS: Final = 128
"""Most lobby connections the host holds at once; a newcomer beyond displaces one
(docs/lobby.md §6). With a frame's 32 KiB and :data:`LINK_OUTBOX`, what strangers can make the
host hold is bounded, whatever they send."""
LINK_IDLE: Final = 10.0
"""Seconds within which a connection must complete a frame, or the host closes it (a guest
says ``hello`` every second; a stranger that never finishes a frame holds no slot longer)."""
LINK_OUTBOX: Final = 16
"""Frames the host holds for one connection that is slow to read; more are dropped."""
SEND_TIMEOUT: Final = 5.0
"""Seconds a connection has to take one frame before the host closes it."""

log = logging.getLogger("p2p_nertz.lobby")


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
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> list[Offer]:
    """Listen for beacons sent to ``listen`` (a broadcast or unicast IPv4 address) on ``port``.

    Returns after ``timeout`` seconds, or as soon as an offer satisfies ``until``; the offers
    heard, one per table (the latest beacon of each), in the order first heard. Datagrams that
    are not valid beacons are reported to ``on_junk(source, reason)`` and otherwise ignored.

    Reports the UDP port it listens on through ``task_status`` once bound (for
    :meth:`trio.Nursery.start`): with ``port=0`` the system picks a free one, which only this
    tells (the hosts must then be told to beacon there), and no beacon sent after the start
    returns is missed for want of a listener.

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
        task_status.started(int(sock.getsockname()[1]))
        # ``timeout`` is counted while we listen: woken from a stop of our own past it, we
        # read the beacons that waited and hear the hosts' next ones (one a second) for
        # LISTEN_GAP before we say there is none (session 36; protocol/listening.py).
        started = trio.current_time()
        ears: Listening | None = None
        while True:
            now = trio.current_time()
            ears = heard_at(ears, now, LISTEN_GAP)
            end = silence_vote_at(started, timeout, ears)
            if now >= end:
                break
            with trio.move_on_after(min(end - now, _LISTEN_TURN)):
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
        address: the IPv4 address the lobby listens on, and the host's game endpoint's.
        game_port: the host's game ROUTER port (the game endpoint is ``tcp://address:port``).
        lobby_port: the lobby's TCP port (0: any free one).
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
        max_links: most connections held at once (:data:`MAX_LINKS`).
        link_idle: seconds within which a connection must complete a frame (:data:`LINK_IDLE`).
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
        max_links: int = MAX_LINKS,
        link_idle: float = LINK_IDLE,
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
        self._port: int | None = None
        self._links: set[Link] = set()
        #: Connections accepted since the lobby began to serve (each displacement is made as
        #: one is accepted).
        self.accepted = 0
        self._max_links = max_links
        self._link_idle = link_idle
        self._routes: dict[PeerId, Link] = {}
        # Connections not bound to a key yet share the newcomers' rate before any signature
        # is checked (the table's own buckets need a key, which such bytes only claim).
        self._unbound = TokenBuckets(rate=NEWCOMER_RATE, burst=NEWCOMER_BURST, max_keys=1)
        self.rejected = 0
        """Lobby messages dropped (invalid, or over a sender's rate)."""
        self.drops = DropTally(every=summary_every)
        """The dropped messages and refused hellos, counted for the log's summaries."""
        self._logged = 0
        # Since when the process has listened, on trio's clock, the links' limits' (a frame to
        # complete, one to send: runtime/lobbylink.py), fed by the ticks.
        self._ears: Listening | None = None

    def _listening(self) -> float:
        """Since when the host has listened without a break (a stop of its own longer than
        ``LISTEN_GAP`` between two ticks), asked now on trio's clock."""
        if self._ears is None:  # (no tick yet: no break known, each limit counts from its start)
            return -math.inf
        return self._ears.since_at(trio.current_time())

    @property
    def endpoint(self) -> str:
        """The lobby's endpoint, ``tcp://address:port`` (after :meth:`serve` started)."""
        if self._port is None:
            raise RuntimeError("the lobby is not serving yet")
        return f"tcp://{self.address}:{self._port}"

    @property
    def links(self) -> int:
        """Lobby connections open now."""
        return len(self._links)

    async def serve(self, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve the lobby until cancelled; report the lobby endpoint when listening.

        Raises:
            TransportBrokenError: the lobby's port cannot be listened on (e.g. it is in use).
        """
        try:
            listeners = await trio.open_tcp_listeners(self._lobby_port, host=self.address)
        except OSError as exc:
            raise TransportBrokenError(
                f"cannot listen on {self.address}:{self._lobby_port} for the lobby: "
                f"{exc.strerror or exc}"
            ) from None
        listener = listeners[0]
        async with listener:
            self._port = int(listener.socket.getsockname()[1])
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._accept_loop, listener, nursery)
                nursery.start_soon(self._send_loop)
                nursery.start_soon(self._tick_loop)
                if self._broadcast is not None:
                    nursery.start_soon(self._beacon_loop, self._port)
                task_status.started(self.endpoint)

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

    async def _accept_loop(self, listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        while True:
            try:
                stream = await listener.accept()
            except OSError as exc:  # out of descriptors or memory: the links held go on
                if exc.errno not in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    raise
                log.warning("cannot take a lobby connection now: %s", exc.strerror)
                await trio.sleep(_TICK)
                continue
            self.accepted += 1
            if len(self._links) >= self._max_links:
                self._displace()
            link = Link(stream, opened=self._clock(), challenge=os.urandom(CHALLENGE_SIZE))
            link.bucket = TokenBuckets(rate=KEY_RATE, burst=KEY_BURST, max_keys=1)
            self._links.add(link)
            nursery.start_soon(self._serve_link, link)

    def _displace(self) -> None:
        """Drop the link that has gone longest without a message the table took, a link not
        bound to a seated guest (or member) first, then the oldest."""
        members = set(self.table.started.endpoints) if self.table.started else set()
        members |= {s.peer_id for s in self.table.seats}

        def worth(link: Link) -> tuple[bool, float, float]:
            return (link.key in members, link.taken, link.opened)

        victim = min(self._links, key=worth)
        self._links.discard(victim)
        victim.scope.cancel()
        reason = f"its connection was displaced (more than {self._max_links} open)"
        self._drop("displaced", victim.key or victim.label, reason)

    async def _serve_link(self, link: Link) -> None:
        try:
            with link.scope:
                async with link.stream, trio.open_nursery() as nursery:
                    send, outbox = trio.open_memory_channel[bytes](LINK_OUTBOX)
                    link.outbox = send
                    # The greeting first, before anything is read: whatever the other side
                    # speaks, it learns our version (§3) before we can close on it.
                    with suppress(TransportBrokenError):
                        await link.greet(timeout=SEND_TIMEOUT, listening=self._listening)
                        nursery.start_soon(self._write_link, link, outbox, nursery.cancel_scope)
                        await self._read_link(link)
                    nursery.cancel_scope.cancel()
        finally:
            self._links.discard(link)
            if link.key is not None and self._routes.get(link.key) is link:
                del self._routes[link.key]

    async def _write_link(
        self, link: Link, outbox: trio.MemoryReceiveChannel[bytes], scope: trio.CancelScope
    ) -> None:
        try:
            async for data in outbox:
                await link.send(data, timeout=SEND_TIMEOUT, listening=self._listening)
        except TransportBrokenError:
            scope.cancel()  # that guest will connect and ask again

    async def _read_link(self, link: Link) -> None:
        while True:
            try:
                data = await link.receive(idle=self._link_idle, listening=self._listening)
            except FramingError as exc:
                self.rejected += 1
                self._drop(
                    "broken stream", link.key or link.label, f"from {link.label.decode()}: {exc}"
                )
                await link.drain(_BYE_FLUSH)  # (so that our preamble reaches it, §3)
                return
            except FrameCut as exc:  # (said, as any message dropped; a reset says nothing)
                self._drop("cut frame", link.key or link.label, f"{link.peer}: {exc}")
                return
            except TransportBrokenError:
                return
            self._take(link, data)
            await trio.lowlevel.checkpoint()  # one connection's burst does not hold the rest

    def _take(self, link: Link, data: bytes) -> None:
        now = self._clock()
        if link.key is None and not (link.bucket.allow(b"", now) and self._unbound.allow(b"", now)):
            # One connection spends at most a key's rate of the share all of them have.
            self.rejected += 1
            reason = "a connection not bound to a key sends more than a key's rate, or all do"
            self._drop("rate-limited lobby", link.label, reason)
            return
        before = (self.table.seats, self.table.started)
        try:
            outs = self.table.receive(data, now, sender=link.key, challenge=link.challenge)
        except LobbyMessageError as exc:
            self.rejected += 1
            self._drop(f"{exc.code} {exc.kind or 'lobby'}", link.key or link.label, str(exc))
            return
        if link.key is None:
            link.key = signed_by(data)  # (the table took it: the signature is that key's)
        if link.key is not None:
            self._routes[link.key] = link
        link.taken = now
        for who, code, reason in self.table.refusals:
            self._drop(f"refused ({code}) hello", who, f"{fingerprint(who)}: {reason}")
        self.table.refusals.clear()
        # A refusal goes to the one who asked, seated or not.
        self._queue(outs)
        if (self.table.seats, self.table.started) != before or self._logged < len(self.table.log):
            self._changed()

    async def _send_loop(self) -> None:
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
                link = self._routes.get(who)
                if link is None or link.outbox is None:
                    continue  # that guest is not connected (any more): it will ask again
                # (It reads slowly or has gone: it will ask again.)
                with suppress(trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                    link.outbox.send_nowait(out.data)

    async def _tick_loop(self) -> None:
        while True:
            self._ears = heard_at(self._ears, trio.current_time(), LISTEN_GAP)
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
        lobby_endpoint: the host's lobby, ``tcp://IPv4:port``.
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
        lobby_endpoint: the host's lobby, ``tcp://IPv4:port``.
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
        # Since when we have run without a stop of our own (our loop's inputs, at least one a
        # HELLO_EVERY): woken, we read what the host said meanwhile before we call it silent.
        self._ears: Listening | None = None
        self._link: Link | None = None
        self._unlinked = trio.Event()
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
        try:
            split_endpoint(self.lobby_endpoint)
        except ValueError as exc:
            raise LobbyError(f"cannot connect to {self.lobby_endpoint}: {exc}") from None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._link_loop, nursery.cancel_scope)
            await self._hello_loop()
            nursery.cancel_scope.cancel()
        if self._error is not None:
            raise self._error
        return self.state.session

    async def _say(self, data: bytes) -> bool:
        """Send ``data`` to the host if connected; whether it left."""
        link = self._link
        if link is None:
            return False
        try:
            await link.send(data, timeout=SEND_TIMEOUT)
        except TransportBrokenError:
            return False  # the link loop sees it broken and connects again
        return True

    async def _bye(self, data: bytes) -> None:
        """Send ``bye`` and the end of our stream; wait a moment for the host to close it (a
        connection closed with bytes left unread is reset, and the bye could be lost)."""
        link = self._link
        with trio.move_on_after(_BYE_FLUSH):
            if link is not None and await self._say(data):
                await link.close_write()
                await self._unlinked.wait()

    async def _hello_loop(self) -> None:
        # The host's first answer is awaited as its next one is: ``timeout`` from our first
        # try, and not before we have listened LISTEN_GAP since a stop of our own (woken past
        # the timeout, the answer may wait unread in our socket, or the host may be about to
        # read our connection: session 36; protocol/listening.py).
        started = trio.current_time()
        ears = self._saw(started)
        while self.state.session is None and self._error is None:
            if self._leaving is not None:
                await self._bye(self.state.bye(self._leaving))
                return
            await self._say(self.state.hello())
            answered = self.state.table is not None
            first_by = silence_vote_at(started, self.timeout, ears)
            wait = HELLO_EVERY if answered else min(HELLO_EVERY, first_by - trio.current_time())
            with trio.move_on_after(max(wait, 0.0)):
                await self._poke.wait()
            self._poke = trio.Event()
            now = trio.current_time()
            ears = self._saw(now)
            where = self.lobby_endpoint
            silent = self.state.table is None and self.state.session is None
            if silent and now >= silence_vote_at(started, self.timeout, ears):
                self._error = LobbyError(f"no answer from a lobby at {where} in {self.timeout:g} s")
            elif (
                self._host_heard is not None
                and self.state.session is None
                and now >= silence_vote_at(self._host_heard, self.timeout, ears)
            ):
                # (Nothing hangs: a guest left waiting at the table of a host that died would
                # wait for ever, and its bots with it.)
                self._error = LobbyError(
                    f"the host at {where} has not answered for {self.timeout:g} s: "
                    "it has quit, crashed or lost the network"
                )

    async def _link_loop(self, scope: trio.CancelScope) -> None:
        """Keep a connection to the host (as a DEALER did: again a second after it broke or
        was refused) and read it."""
        while True:
            try:
                async with open_link(self.lobby_endpoint) as link:
                    self.state.challenge = link.challenge  # what we sign on this link answers
                    self._link = link
                    self._unlinked = trio.Event()
                    self._poke.set()  # say hello on this connection now
                    try:
                        while True:
                            if await self._got(await link.receive(), scope):
                                return
                    finally:
                        self._link = None
                        self._unlinked.set()
            except FramingError as exc:
                where = self.lobby_endpoint
                self._error = LobbyError(f"{where} is not a lobby we can sit at: {exc}")
                scope.cancel()
                return
            except TransportBrokenError as exc:
                log.debug("lobby connection to %s: %s", self.lobby_endpoint, exc)
            await trio.sleep(HELLO_EVERY)

    def _saw(self, now: float) -> Listening:
        """An input of ours at ``now`` (the hello loop's turn, a message read)."""
        self._ears = heard_at(self._ears, now, LISTEN_GAP)
        return self._ears

    async def _got(self, data: bytes, scope: trio.CancelScope) -> bool:
        """Take one message from the host; whether we are done."""
        now = trio.current_time()
        self._saw(now)
        for line in self.drops.flush(now):
            log.warning("%s", line)
        try:
            got = self.state.receive(data)
        except LobbyMessageError as exc:
            kind = f"{exc.code} {exc.kind or 'lobby'}"
            for line in self.drops.drop(kind, None, str(exc), now):
                log.warning("%s", line)
            return False
        except StartRefusedError as exc:
            log.info("refused the host's start: %s", exc)  # (the caller says it)
            self._error = exc
            await self._bye(self.state.bye(f"refused the start: {exc}"))  # tell the host why
            scope.cancel()
            return True
        except LobbyError as exc:
            self._error = exc
            scope.cancel()
            return True
        if isinstance(got, Session):
            scope.cancel()
            return True
        if isinstance(got, TableView):
            self._host_heard = now
            if self.state.hello_due():
                self._poke.set()  # the table changed: say now what we say for it
            if self._on_table is not None:
                self._on_table(got)
        return False
