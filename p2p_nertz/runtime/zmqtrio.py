"""ZeroMQ ROUTER and DEALER sockets for trio: the one place where pyzmq meets the event loop.

pyzmq has no trio integration (DESIGN.md §7). This module wraps a non-blocking pyzmq socket in
:class:`AsyncSocket`, whose :meth:`~AsyncSocket.send_multipart` and
:meth:`~AsyncSocket.recv_multipart` wait the trio way, and opens the two kinds of socket that the
full mesh in the ZRE ("Harmony") shape needs, with the options the design fixes:

* :func:`open_router` binds the peer's one ROUTER (by default on an ephemeral port of
  ``127.0.0.1``) and reports the endpoint actually bound (``LAST_ENDPOINT``);
* :func:`open_dealer` connects one DEALER, under a routing id, to another peer's ROUTER.

The mesh itself (one ROUTER per peer, one DEALER per other peer) is built on top of this module;
nothing here knows about peers, envelopes or the game.

**Ownership.** DESIGN.md §7 asks for one owner task per socket. This module enforces the rule
per direction, as trio's own streams do: at most one task may be sending on a socket and at most
one task receiving, at any moment; a second task entering a busy direction raises
:exc:`trio.BusyResourceError`. So an owner task may hand the receiving side to a helper task
(ROUTER and DEALER are full duplex): the socket shares its one edge-triggered FD between the two
(see the theory of operation below). A peer node that gives each socket a single owner task
satisfies the rule trivially. The node (:mod:`p2p_nertz.runtime.node`) goes one step further
for its DEALERs: any task may :meth:`~AsyncSocket.try_send_multipart` while the owner task is
not sending (that never waits), and only the owner waits for room, which spares every message
a trip through the scheduler.

**Backpressure.** Nothing is dropped on the sending side. High-water marks are counted in
messages (:data:`DEFAULT_HWM` per pipe, both directions). When the pipe is full,
:meth:`~AsyncSocket.send_multipart` waits until the peer drains it -- as long as it takes; wrap it
in :func:`trio.move_on_after` to bound the wait, or use :meth:`~AsyncSocket.try_send_multipart`,
which never waits. ROUTERs use ``ROUTER_MANDATORY`` so that they, too, wait at the HWM instead of
silently dropping, and so that a message for an unknown routing id raises instead of vanishing.

**Size bound.** Every socket refuses frames above a size (``MAXMSGSIZE``,
:data:`DEFAULT_MAX_MESSAGE_SIZE` unless the caller passes its protocol's limit): zmq drops the
connection of a peer that sends one, before holding it, so what a socket holds is bounded by
HWM × size whoever is connected.

**A DEALER with no connected peer** (its ROUTER not bound yet, restarting, or unreachable) has a
pipe anyway (``IMMEDIATE`` is left at 0): sends are queued, up to the HWM, and delivered once the
connection is made; after that, ``send_multipart`` waits until the peer appears and drains the
queue. Messages already handed to a TCP connection that then dies are lost: the protocol's gap
repair, not the transport, makes delivery reliable (DESIGN.md §2, §3).

**Closing.** :meth:`~AsyncSocket.aclose` (or leaving the ``async with`` block) closes at once
(``LINGER 0``: unsent messages are discarded) and wakes every task waiting on the socket with
:exc:`~p2p_nertz.errors.TransportClosedError`. Any later use raises the same error. Closing is
idempotent. The zmq context belongs to the caller, who terminates it after closing its sockets.

**Cancellation.** Sending and receiving are all-or-nothing: a cancelled ``send_multipart`` has
queued nothing, a cancelled ``recv_multipart`` has consumed nothing.

**Errors.** Use after close, or a zmq context terminated underneath, raises
:exc:`~p2p_nertz.errors.TransportClosedError`; any other failure reported by zmq (an endpoint
that cannot be bound or connected, a routing id that is not connected) raises
:exc:`~p2p_nertz.errors.TransportBrokenError`, chained to the :exc:`zmq.ZMQError`.
``inproc://`` endpoints are refused with :exc:`ValueError` (see below).

>>> tcp_port("tcp://127.0.0.1:5555")
5555
"""

# Theory of operation
# -------------------
#
# A zmq socket is not a kernel socket. Its state (can I read? can I write?) lives in user space
# and is changed by *commands* that libzmq's I/O thread posts to the socket's mailbox: "a pipe
# has messages for you again", "a pipe has room again", "a peer connected". The state is only
# brought up to date when the application thread processes that mailbox, which happens inside
# send, recv and -- reliably, without throttling -- getsockopt(EVENTS). ``zmq.FD`` is the
# mailbox's signalling fd: it is readable while unprocessed commands wait.
#
# So the FD is edge-triggered with respect to what we care about:
#
# * It says "something may have changed", never "you can read" or "you can write". Only EVENTS
#   says that, and only after it has processed the mailbox.
# * Any call into the socket may process the mailbox and make the FD unreadable again --
#   including a call made by *another task* (a send while a receiver is waiting), and including
#   bind/connect. If that call's effect is not looked at, the waiting task sleeps through the
#   change: a lost edge.
# * A pipe that still holds messages raises no new command when more messages arrive: the FD
#   fires for incoming messages only after a recv has found the socket empty.
#
# Hence the rules this module follows:
#
# 1. Every operation is non-blocking (``NOBLOCK``); ``zmq.Again`` means "wait". Every wait
#    follows a failed attempt: the direction is drained (nothing to read, or no room) when the
#    task starts waiting, so the next change of that direction posts a command.
# 2. A task waits only if its failed attempt was the last look at the mailbox: right after the
#    attempt it checks (``poll`` with timeout 0) whether the FD is readable; if it is, commands
#    arrived that the attempt did not see, so they are processed (EVENTS) and the attempt is
#    retried. Otherwise any later command leaves the FD readable for the wait to see. No
#    retry without a new command, so no spinning. A receive attempt reads EVENTS first (it
#    processes the whole mailbox) and receives only if it shows POLLIN: when it does not, that
#    read *was* the last look, and the check is not needed (issue 18: a raised zmq.Again and a
#    syscall less on every wait of an idle receiver).
# 3. Another waiting task must not lose an edge to our calls. So after every call into the
#    socket (send, recv, bind, connect) made while another task waits, ``_refresh`` reads
#    EVENTS -- draining the mailbox -- and wakes that task if its direction is now ready; if
#    the drain included commands for the caller itself, the caller retries as well.
# 4. The FD is watched by at most one task at a time (trio allows one reader per fd anyway). A
#    second waiter parks in ``sleep_forever`` inside a cancel scope; ``_refresh`` wakes it by
#    cancelling that scope. When the FD watcher stops watching, for whatever reason, it wakes
#    the parked one so that it takes the FD over. A receive that watches the FD has no cancel
#    scope (issue 18: entering and leaving one, its deadline in and out of trio's heap, was a
#    third of the trio thread's work per message received): ``_refresh`` wakes it by the FD's
#    ``notify_closing``, which ends the one ``wait_readable`` on the FD with
#    ``ClosedResourceError`` (read as a nudge while the socket is open).
# 5. Every wait is bounded: if an edge were ever lost anyway, the waiter would look again after
#    ``SAFETY_TIMEOUT`` (50 ms; a send, by its wait's cancel scope) instead of stalling forever.
#    A receive, which never relies on it, is looked at for instead: a watchdog task, one per
#    trio run (``_Watchdog``), reads EVENTS every ``RECEIVE_SAFETY_TIMEOUT`` (1 s) for each
#    receive that has waited since its previous look, and wakes the receive if a message
#    waits (so 1 to 2 s; a receive parked behind a waiting sender keeps a scope of that
#    timeout). ``statistics().lost_edges`` counts the times this safety net was needed; the
#    tests require it to stay at 0.
#
#    One case relies on it by design. A ROUTER with ROUTER_MANDATORY reports POLLOUT when *any*
#    of its pipes has room, so EVENTS cannot say whether the send to *this* peer would go
#    through (and retrying whenever it shows POLLOUT would spin). When a receiver is waiting
#    too (rule 3), a "room again" command for the full peer that lands in the instant between
#    the sender's readability check and its refresh is processed unseen, and that sender
#    waits for the next command or the safety timeout. A ROUTER with no receiver waiting, or
#    with a single peer, is not affected; in the ZRE shape ROUTERs mostly receive, so this is
#    a rare delay of at most 50 ms, visible in ``statistics()``.
# 6. ``inproc://`` is refused, as DESIGN.md §7 requires: inproc pipes are wired straight
#    between two sockets, outside the I/O thread, and FD waiting is not relied upon there.
#
# Closing marks the socket closed, calls ``trio.lowlevel.notify_closing`` on the FD (waking the
# watcher with ClosedResourceError) and cancels the parked waiter, all before the zmq socket is
# closed and without a checkpoint in between, as trio requires.

from __future__ import annotations

import enum
import select
import struct
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Final, TypeVar

import trio
import zmq

from p2p_nertz.errors import TransportBrokenError, TransportClosedError
from p2p_nertz.runtime.inbatch import set_small_batch
from p2p_nertz.signals import held

__all__ = [
    "CURVE_BOX_BYTES",
    "DEFAULT_HWM",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "HEARTBEAT_IVL_MS",
    "HEARTBEAT_TIMEOUT_MS",
    "RECEIVE_SAFETY_TIMEOUT",
    "RECONNECT_IVL_MAX_MS",
    "RECONNECT_IVL_MS",
    "SAFETY_TIMEOUT",
    "WATCHDOG_NAME",
    "AsyncSocket",
    "CurveKeys",
    "SocketStatistics",
    "create_socket",
    "monitor_event",
    "open_dealer",
    "open_router",
    "tcp_port",
]

DEFAULT_HWM: Final = 1000
"""High-water mark, in messages, for each pipe in each direction (``SNDHWM`` and ``RCVHWM``).

Game messages are a few KiB and a peer sends a few dozen per second, so a thousand messages is
many seconds of backlog: reaching it means the peer is not reading, and the sender waits.
"""

DEFAULT_MAX_MESSAGE_SIZE: Final = 1 << 20
"""Largest frame, in bytes, a socket accepts unless told otherwise (``MAXMSGSIZE``).

No socket of this module is unbounded: a connected stranger could otherwise make it hold
``RCVHWM`` frames of any size (39 frames of 256 MiB took a node from 48 MB to 1.16 GB, issue
14). zmq reads a frame's length from its header and, when it is above the bound, drops the
connection before it allocates or reads the body, so memory stays bounded whatever the
sender claims. Callers that know their protocol's largest message pass a tighter bound (the
peer node passes the envelope's limit, the lobby its own).
"""

CURVE_BOX_BYTES: Final = 33
"""What CURVE adds to each message on the wire (its ``MESSAGE`` command's name, nonce, flags
and MAC), which zmq counts against ``MAXMSGSIZE``: a CURVE socket bounding its messages to
``n`` bytes sets ``n`` + this (found in session 32: at 4096, a 4064-byte message cut its
sender off)."""

SAFETY_TIMEOUT: Final = 0.05
"""Longest single wait to send, in seconds, before the operation is retried anyway (rule 5)."""

RECEIVE_SAFETY_TIMEOUT: Final = 1.0
"""The period, in seconds, of the safety net's looks at a waiting receive (rule 5).

A receive never relies on the safety net: it is there in case an edge were ever lost. At
:data:`SAFETY_TIMEOUT` an idle ROUTER, the peer's one waiting socket, woke 20 times a second
for nothing (issue 18); with its own timeout of 1 s it woke once a second; looked at by the
run's watchdog, a receive that has waited a period or more is woken only if a message waits.
"""

RECONNECT_IVL_MS: Final = 100
"""First delay before zmq retries a failed or lost connection, in milliseconds."""

RECONNECT_IVL_MAX_MS: Final = 1000
"""Cap of the exponential reconnect back-off, in milliseconds: a restarted peer is found in ~1 s."""

HEARTBEAT_IVL_MS: Final = 1000
"""Interval of ZMTP heartbeats (PING), in milliseconds, so that a dead TCP peer is noticed."""

_POLLIN: Final = int(zmq.POLLIN)
_POLLOUT: Final = int(zmq.POLLOUT)
_NOBLOCK: Final = int(zmq.NOBLOCK)
# (pyzmq's constants are enum members: ``events & zmq.POLLIN`` on an int runs enum.Flag's
# __and__ in Python and makes a flag of the result, ~90 opcodes for one AND. Once a message
# received, plain ints; docs/latency.md, session 26.)

HEARTBEAT_TIMEOUT_MS: Final = 5000
"""Silence after a PING, in milliseconds, after which zmq drops the connection and reconnects,
unless the socket's maker passes its own (:func:`create_socket`).

Matches the "suspected" timeout of DESIGN.md §6 (Zyre's 5 s). The least a member's DEALER
waits: it waits as long as the game's drop timer (``runtime/mesh.py``, session 32), so that a
link whose round trip passes 5 s is not given up while every packet still arrives.
"""

_SOCKET_TYPES: Final[dict[int, str]] = {zmq.ROUTER: "ROUTER", zmq.DEALER: "DEALER"}


def _recv_frames(zsock: zmq.Socket[bytes]) -> list[zmq.Frame]:
    """The frames of the next message, read without blocking (``zmq.Again``: none waits).

    As ``recv_multipart(copy=False)``, but each frame says itself whether another follows
    (``Frame.more``, read in C as it is received), where pyzmq asks the socket for
    ``RCVMORE`` through its Python option lookup once a frame (docs/latency.md, session 26).
    """
    frame = zsock.recv(_NOBLOCK, copy=False)
    frames = [frame]
    while frame.more:
        frame = zsock.recv(_NOBLOCK, copy=False)
        frames.append(frame)
    return frames


def _with_user_id(frames: list[zmq.Frame]) -> list[bytes]:
    """The frames' bytes, then the ZAP User-Id of the connection they came on."""
    try:
        user = frames[-1].get("User-Id")
    except zmq.ZMQError:  # none: the connection was not authenticated by a handler
        user = ""
    return [*(frame.bytes for frame in frames), str(user).encode()]


@dataclass(frozen=True, slots=True)
class CurveKeys:
    """A socket's CURVE keys (ZMTP's CURVE mechanism, RFC 26), raw 32-byte Curve25519 keys.

    Attributes:
        public: our long-term public key.
        secret: our long-term secret key.
        server: the server's public key, for a client; ``None`` makes the socket a CURVE
            server, which asks its context's ZAP handler about every client
            (``ZAP_ENFORCE_DOMAIN``: with no handler bound, every client is refused) and
            whose receives end with the connection's User-Id (:class:`AsyncSocket`).
        domain: a server's ZAP domain (not empty).
    """

    public: bytes
    secret: bytes
    server: bytes | None = None
    domain: bytes = b""

    def __post_init__(self) -> None:
        keys = (self.public, self.secret) + (() if self.server is None else (self.server,))
        if any(len(key) != 32 for key in keys):
            raise ValueError("a CURVE key is 32 bytes")
        if self.server is None and not self.domain:
            raise ValueError("a CURVE server needs a ZAP domain")

    def apply(self, zsock: zmq.Socket[bytes]) -> None:
        """Set the options on ``zsock`` (before it binds or connects)."""
        zsock.set(zmq.CURVE_PUBLICKEY, self.public)
        zsock.set(zmq.CURVE_SECRETKEY, self.secret)
        if self.server is None:
            zsock.set(zmq.CURVE_SERVER, 1)
            zsock.set(zmq.ZAP_DOMAIN, self.domain)
            zsock.set(zmq.ZAP_ENFORCE_DOMAIN, 1)
        else:
            zsock.set(zmq.CURVE_SERVERKEY, self.server)


_T = TypeVar("_T")


def tcp_port(endpoint: str) -> int:
    """Return the TCP port of a resolved zmq endpoint such as ``tcp://127.0.0.1:5555``.

    Raises:
        ValueError: if ``endpoint`` is not a ``tcp://`` endpoint with a numeric port.

    >>> tcp_port("tcp://[::1]:40000")
    40000
    """
    scheme, sep, rest = endpoint.partition("://")
    _, colon, port = rest.rpartition(":")
    if scheme != "tcp" or not sep or not colon or not port.isdigit():
        raise ValueError(f"not a tcp://host:port endpoint with a numeric port: {endpoint!r}")
    return int(port)


@dataclass(frozen=True, slots=True)
class SocketStatistics:
    """What :meth:`AsyncSocket.statistics` reports.

    Attributes:
        sending: a task is inside ``send_multipart`` right now.
        receiving: a task is inside ``recv_multipart`` right now.
        fd_watched: a task is waiting on the zmq FD right now. Whenever a task waits on the
            socket, one waiting task watches the FD, so this is true when either of the
            two above is true and the operation is blocked.
        safety_timeouts: waits that ended by :data:`SAFETY_TIMEOUT` rather than by the FD or
            a wake-up, and the safety net's looks at a waiting receive
            (:data:`RECEIVE_SAFETY_TIMEOUT`); harmless when the socket is idle.
        lost_edges: operations that succeeded only after such a timeout with no command
            pending, i.e. the times the safety net rescued a task that was never told its
            socket was ready. Should stay 0. (A message that lands in the microseconds
            between a timeout's check and the retry is counted too, so under heavy CPU
            contention a socket that idles through many timeouts may show a stray 1.)
    """

    sending: bool
    receiving: bool
    fd_watched: bool
    safety_timeouts: int
    lost_edges: int


class _Wake(enum.Enum):
    """Why a wait ended."""

    FD = enum.auto()
    NUDGE = enum.auto()
    TIMEOUT = enum.auto()


class _Waiter:
    """A task waiting for one direction of a socket, and how to wake it: the cancel scope of
    its wait, or, for a receive watching the FD with no scope (rule 5), the FD's
    ``notify_closing``, which ends that task's ``wait_readable`` and no one else's (rule 4:
    one task watches the FD)."""

    __slots__ = ("fd", "nudged", "scope")

    def __init__(self, scope: trio.CancelScope | None, fd: int = -1) -> None:
        self.scope = scope
        self.fd = fd
        self.nudged = False

    def nudge(self) -> None:
        self.nudged = True
        if self.scope is not None:
            self.scope.cancel()
        else:
            trio.lowlevel.notify_closing(self.fd)


class _Watchdog:
    """The safety net of the receives that watch the FD without a cancel scope (rule 5).

    One per trio run (a system task, started by the first such wait and ending when none is
    left): every :data:`RECEIVE_SAFETY_TIMEOUT` it looks at each socket whose receive has
    waited since before its previous look, a whole period or more, as the wait's own timeout
    would have (:meth:`AsyncSocket._safety_look`). A look reads EVENTS in place of the waiting
    task and wakes it only if a message waits: an idle receiver is not woken at all, and a
    busy one pays no cancel scope per wait (~600 of trio's opcodes a message received,
    docs/latency.md, session 27).
    """

    __slots__ = ("_period", "_running", "_waiting")

    def __init__(self) -> None:
        self._period = 0
        self._running = False
        self._waiting: dict[AsyncSocket, int] = {}  # a waiting socket: its wait's period

    @staticmethod
    def current() -> _Watchdog:
        """This run's watchdog (made on first use)."""
        try:
            return _WATCHDOG.get()
        except LookupError:
            watchdog = _Watchdog()
            _WATCHDOG.set(watchdog)
            return watchdog

    def watch(self, sock: AsyncSocket) -> None:
        """Start bounding ``sock``'s receive (which waits on the FD from now on)."""
        if not self._running:
            trio.lowlevel.spawn_system_task(self._run, name=WATCHDOG_NAME)
            self._running = True
        self._waiting[sock] = self._period

    def unwatch(self, sock: AsyncSocket) -> None:
        """``sock``'s receive stopped waiting."""
        del self._waiting[sock]

    async def _run(self) -> None:
        try:
            while self._waiting:
                await trio.sleep(RECEIVE_SAFETY_TIMEOUT)
                self._period += 1
                for sock, since in list(self._waiting.items()):
                    if since < self._period - 1:
                        sock._safety_look()
        finally:
            self._running = False


WATCHDOG_NAME: Final = "zmqtrio receive safety net"
"""The name of the watchdog's task (trio's ``Task.name``), for instruments and tests."""

_WATCHDOG: Final[trio.lowlevel.RunVar[_Watchdog]] = trio.lowlevel.RunVar("zmqtrio_watchdog")


class _OneTask:
    """Refuses a second task in one direction of a socket, like trio's own conflict detector."""

    __slots__ = ("_busy", "_message")

    def __init__(self, message: str) -> None:
        self._busy = False
        self._message = message

    @property
    def busy(self) -> bool:
        return self._busy

    def check(self) -> None:
        if self._busy:
            raise trio.BusyResourceError(self._message)

    def __enter__(self) -> None:
        self.check()
        self._busy = True

    def __exit__(self, *exc_info: object) -> None:
        self._busy = False


def _check_endpoint(endpoint: str) -> None:
    if endpoint.startswith("inproc://"):
        raise ValueError(
            f"inproc:// endpoints are not supported with FD waiting (DESIGN.md §7): {endpoint!r}"
        )


class AsyncSocket(trio.abc.AsyncResource):
    """A ROUTER or DEALER zmq socket used from trio; see the module docstring for the contract.

    Build one with :func:`open_router`, :func:`open_dealer` or :func:`create_socket`. Wrapping
    a pyzmq socket directly hands it over: nothing else may use it afterwards, and it must be
    created in, and used from, the thread that runs trio.

    At most one task may send and at most one task may receive at a time; they may be two
    different tasks running concurrently.

    Args:
        zsock: an open ROUTER or DEALER pyzmq socket, already configured.
        user_id: every message received ends with one more frame: the User-Id that the
            context's ZAP handler gave the connection it came on (for a CURVE server;
            ``b""`` if the handler gave none).

    Raises:
        ValueError: if ``zsock`` is neither a ROUTER nor a DEALER.
        TransportClosedError: if ``zsock`` is already closed.
    """

    def __init__(self, zsock: zmq.Socket[bytes], *, user_id: bool = False) -> None:
        if zsock.closed:
            raise TransportClosedError("cannot wrap a zmq socket that is already closed")
        kind = _int_option(zsock, zmq.TYPE)
        if kind not in _SOCKET_TYPES:
            raise ValueError(f"only ROUTER and DEALER sockets are supported, not type {kind}")
        self._sock = zsock
        self._user_id = user_id
        self._kind = _SOCKET_TYPES[kind]
        self._fd = zsock.fileno()
        # Only ever asked "is the FD readable right now?" (timeout 0); select() where no poll().
        self._poller = select.poll() if hasattr(select, "poll") else None
        if self._poller is not None:
            self._poller.register(self._fd, select.POLLIN)
        self._closed = False
        self._endpoints: list[str] = []
        self._send_guard = _OneTask("another task is already sending on this socket")
        self._recv_guard = _OneTask("another task is already receiving on this socket")
        self._waiters: dict[int, _Waiter | None] = {_POLLIN: None, _POLLOUT: None}
        self._fd_watched = False
        self._settled = False  # the last failed attempt ended with EVENTS read (rule 2)
        self._safety_timeouts = 0
        self._lost_edges = 0

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        where = " ".join(self._endpoints) or "unbound"
        return f"<AsyncSocket {self._kind} {where} {state}>"

    # -- introspection -----------------------------------------------------------------------

    @property
    def kind(self) -> str:
        """``"ROUTER"`` or ``"DEALER"``."""
        return self._kind

    @property
    def closed(self) -> bool:
        """True once :meth:`aclose` or :meth:`close` was called."""
        return self._closed

    @property
    def endpoints(self) -> tuple[str, ...]:
        """The resolved endpoints bound or connected so far, in order (ports made concrete)."""
        return tuple(self._endpoints)

    @property
    def port(self) -> int:
        """The TCP port of the first endpoint (for a ROUTER: the port it listens on).

        Raises:
            ValueError: if there is no endpoint yet or the first one is not ``tcp://``.
        """
        if not self._endpoints:
            raise ValueError(f"{self!r} has no endpoint yet")
        return tcp_port(self._endpoints[0])

    def monitor(self, events: int) -> zmq.Socket[bytes]:
        """A PAIR socket on which libzmq reports ``events`` (``zmq.EVENT_*``) of this socket.

        The caller reads it without waiting (``zmq.NOBLOCK``), never through trio: it is an
        ``inproc://`` socket (rule: no FD waiting on inproc), and closes it after this socket.

        Raises:
            TransportClosedError: if the socket is closed.
        """
        self._check_open()
        with held():  # (made and known to the context at once: :func:`new_socket`)
            monitor: zmq.Socket[bytes] = self._sock.get_monitor_socket(events)
        return monitor

    def statistics(self) -> SocketStatistics:
        """Return who is using the socket and how often the safety timeout fired."""
        return SocketStatistics(
            sending=self._send_guard.busy,
            receiving=self._recv_guard.busy,
            fd_watched=self._fd_watched,
            safety_timeouts=self._safety_timeouts,
            lost_edges=self._lost_edges,
        )

    # -- endpoints ---------------------------------------------------------------------------

    def bind(self, endpoint: str) -> str:
        """Bind to ``endpoint`` and return it resolved (``LAST_ENDPOINT``: real port, real host).

        Use port ``0`` or ``*`` for an ephemeral port.

        Raises:
            ValueError: for an ``inproc://`` endpoint.
            TransportClosedError: if the socket is closed.
            TransportBrokenError: if zmq cannot bind (address in use, bad address, ...).
        """
        return self._attach("bind", endpoint)

    def connect(self, endpoint: str) -> str:
        """Connect to ``endpoint`` and return it as zmq records it. Does not wait for the peer.

        Raises:
            ValueError: for an ``inproc://`` endpoint.
            TransportClosedError: if the socket is closed.
            TransportBrokenError: if zmq refuses the endpoint.
        """
        return self._attach("connect", endpoint)

    def redial(self, endpoint: str, routing_id: bytes | None = None) -> None:
        """Give up the connection to ``endpoint`` (a connected one) and what it holds, and
        connect to it anew: a new TCP connection, which waits on none of the old one's
        retransmission timers (:mod:`~p2p_nertz.runtime.redial`), under ``routing_id`` if
        given (``ROUTING_ID``: this connection's and its reconnects', not the old one's).

        A ROUTER with ``ROUTER_HANDOVER`` needs the new id: zmq ends the old connection
        asynchronously, and a handshake of it still under way may end after the new one's;
        under one id it then takes the id over and closes, and the new connection, its pipe
        ended by the handover but its TCP connection left open (libzmq 4.3.5), is written
        into unheard until its heartbeat gives up (session 35, ``tests/test_redial.py``).

        Raises:
            TransportClosedError: if the socket is closed.
            TransportBrokenError: if zmq refuses the endpoint.
            ValueError: a routing id zmq would misread.
        """
        _check_size_and_identity(1, routing_id)
        self._check_open()
        with suppress(zmq.ZMQError):  # (not connected to it: connected below)
            self._sock.disconnect(endpoint)
        self._endpoints = [e for e in self._endpoints if e != endpoint]
        if routing_id is not None:
            self._sock.set(zmq.ROUTING_ID, routing_id)
        self.connect(endpoint)

    def _attach(self, how: str, endpoint: str) -> str:
        _check_endpoint(endpoint)
        self._check_open()
        try:
            if how == "bind":
                self._sock.bind(endpoint)
            else:
                self._sock.connect(endpoint)
            resolved = self._sock.get_string(zmq.LAST_ENDPOINT)
        except zmq.ZMQError as exc:
            error = self._translate(exc, f"{how} {endpoint!r}")
            if isinstance(error, TransportBrokenError):
                # Named by the address a person gave, not by the socket's repr.
                why = (exc.strerror or str(exc)).split(" (addr=", 1)[0]
                error = TransportBrokenError(f"cannot {how} {endpoint}: {why}")
            raise error from exc
        finally:
            if not self._sock.closed:
                self._inform_waiters()  # bind/connect may drain the mailbox too: rule 3
        self._endpoints.append(resolved)
        return resolved

    # -- sending and receiving ---------------------------------------------------------------

    async def send_multipart(self, frames: Sequence[bytes]) -> None:
        """Queue one message of one or more frames, waiting while the pipe is at its HWM.

        For a ROUTER the first frame is the routing id of the destination. The message is
        queued whole or not at all, also when the call is cancelled.

        Raises:
            ValueError: if ``frames`` is empty.
            trio.BusyResourceError: if another task is already sending on this socket.
            TransportClosedError: if the socket is or gets closed.
            TransportBrokenError: if zmq refuses the message (a ROUTER whose destination
                routing id is not connected).
        """
        _check_frames(frames)
        with self._send_guard:
            await self._perform(_POLLOUT, lambda: self._attempt_send(frames))

    async def recv_multipart(self) -> list[bytes]:
        """Wait for the next message and return its frames.

        On a ROUTER the first frame is the sender's routing id. A cancelled call consumes
        nothing.

        Raises:
            trio.BusyResourceError: if another task is already receiving on this socket.
            TransportClosedError: if the socket is or gets closed, also while waiting.
        """
        with self._recv_guard:
            return await self._perform(_POLLIN, self._attempt_recv)

    def try_send_multipart(self, frames: Sequence[bytes]) -> bool:
        """Queue one message if that is possible without waiting; return whether it was queued.

        Raises:
            ValueError: if ``frames`` is empty.
            trio.BusyResourceError: if a task is inside :meth:`send_multipart`.
            TransportClosedError: if the socket is closed.
            TransportBrokenError: as for :meth:`send_multipart`.
        """
        _check_frames(frames)
        self._send_guard.check()
        self._check_open()
        return self._try_now(lambda: self._attempt_send(frames)) is not None

    def try_recv_multipart(self) -> list[bytes] | None:
        """Return the next message if one is ready, else ``None``; never waits.

        Raises:
            trio.BusyResourceError: if a task is inside :meth:`recv_multipart`.
            TransportClosedError: if the socket is closed.
        """
        self._recv_guard.check()
        self._check_open()
        # EVENTS first (rule 2): a receive loop asks once more after every burst, usually to
        # hear "none".
        result = self._attempt_recv()
        self._inform_waiters()  # rule 3
        return result

    def _attempt_send(self, frames: Sequence[bytes]) -> bool | None:
        self._settled = False  # a failed send may leave commands unseen: rule 2's FD check
        try:
            self._sock.send_multipart(frames, flags=_NOBLOCK)
        except zmq.Again:
            return None
        except zmq.ZMQError as exc:
            self._nudge_all()  # the failed call may have drained the mailbox: rule 3
            raise self._translate(exc, "send") from exc
        return True

    def _attempt_recv(self) -> list[bytes] | None:
        # EVENTS first: reading it processes the whole mailbox and says whether a message
        # waits, for a fifth of the cost of a receive that fails (a raised zmq.Again); and
        # when it says "none", the FD is left to signal the next command, so the wait needs
        # no FD check before it (rule 2). Rule 3 holds: the read wakes any waiter whose
        # direction is ready.
        self._settled = False
        if not self._refresh() & _POLLIN:
            self._settled = True
            return None
        try:
            frames = _recv_frames(self._sock)
            if self._user_id:
                return _with_user_id(frames)
            return [frame.bytes for frame in frames]
        except zmq.Again:  # pragma: no cover - EVENTS said a message waits
            return None
        except zmq.ZMQError as exc:
            self._nudge_all()
            raise self._translate(exc, "receive") from exc

    def _try_now(self, attempt: Callable[[], _T | None]) -> _T | None:
        """Run ``attempt`` once, or twice if commands it did not see were pending (rule 2)."""
        result = attempt()
        if result is None and self._fd_pending():
            self._refresh()
            result = attempt()
        self._inform_waiters()  # rule 3
        return result

    async def _perform(self, want: int, attempt: Callable[[], _T | None]) -> _T:
        """Run ``attempt`` until it succeeds, waiting for ``want`` (POLLIN/POLLOUT) in between.

        Checkpoints exactly like a trio primitive: cancellation is checked before the first
        attempt, and a successful attempt is never undone by a cancellation afterwards.
        """
        self._check_open()
        await trio.lowlevel.checkpoint_if_cancelled()
        believe_events = True
        rescued = False
        waited = False
        other = _POLLOUT if want == _POLLIN else _POLLIN
        while True:
            self._check_open()
            result = attempt()
            if result is not None:
                self._inform_waiters()  # rule 3
                if rescued:
                    self._lost_edges += 1
                if not waited:
                    # Done without waiting: still a schedule point, as trio's own sockets.
                    # After a wait (itself one) no second trip through the scheduler, which
                    # costs every message received on an idle socket ~0.1 ms.
                    await trio.lowlevel.cancel_shielded_checkpoint()
                return result
            # Commands the attempt did not see? (rule 2) None, if its last call read EVENTS.
            pending = False if self._settled else self._fd_pending()
            if self._waiters[other] is not None:
                # Rule 3: drain for the other waiter's sake. EVENTS is exact except for a
                # ROUTER's POLLOUT (any pipe with room), which earns one retry per wake-up
                # unless the drain processed new commands (rule 5).
                events = self._refresh()
                retry = bool(events & want) and (pending or believe_events)
            else:
                if pending:
                    self._refresh()
                retry = pending
            if retry:
                believe_events = False
                continue
            wake = await self._wait(want)
            waited = True
            believe_events = True
            # A timeout while a command is pending is a race with the FD, not a lost edge.
            rescued = wake is _Wake.TIMEOUT and not self._fd_pending()

    def _fd_pending(self) -> bool:
        """Whether the FD is readable right now: commands wait unprocessed in the mailbox."""
        if self._poller is not None:
            return bool(self._poller.poll(0))
        return bool(select.select([self._fd], [], [], 0)[0])  # pragma: no cover - Windows

    def _inform_waiters(self) -> None:
        """After a call into the socket: if another task waits, let it know what changed."""
        if self._waiters[_POLLIN] is not None or self._waiters[_POLLOUT] is not None:
            self._refresh()

    def _refresh(self) -> int:
        """Read EVENTS (draining the mailbox) and wake the waiters whose direction is ready."""
        try:
            events = _int_option(self._sock, zmq.EVENTS)
        except zmq.ZMQError as exc:
            raise self._translate(exc, "poll") from exc
        for direction, waiter in self._waiters.items():
            if waiter is not None and events & direction:
                waiter.nudge()
        return events

    def _nudge_all(self) -> None:
        """Wake every waiting task, so that each re-checks the socket for itself."""
        for waiter in self._waiters.values():
            if waiter is not None:
                waiter.nudge()

    async def _wait(self, want: int) -> _Wake:
        """Wait until the FD fires, a refresh nudges us, or the safety timeout expires.

        The caller's attempt has just failed and no unseen command was pending, with no
        checkpoint since (rule 2).
        """
        if want == _POLLIN and not self._fd_watched:
            return await self._watch_for_message()
        other = _POLLOUT if want == _POLLIN else _POLLIN
        timeout = RECEIVE_SAFETY_TIMEOUT if want == _POLLIN else SAFETY_TIMEOUT
        with trio.move_on_after(timeout) as scope:
            waiter = _Waiter(scope)
            self._waiters[want] = waiter
            try:
                if self._fd_watched:
                    await trio.sleep_forever()  # a nudge or the deadline ends this
                else:
                    self._fd_watched = True
                    try:
                        await trio.lowlevel.wait_readable(self._fd)
                    except trio.ClosedResourceError:
                        raise self._closed_error() from None
                    finally:
                        self._fd_watched = False
                        # Rule 4: whoever parked behind us must now take the FD over.
                        parked = self._waiters[other]
                        if parked is not None:
                            parked.nudge()
                    return _Wake.FD
            finally:
                self._waiters[want] = None
        if self._closed:
            raise self._closed_error()
        if waiter.nudged:
            return _Wake.NUDGE
        self._safety_timeouts += 1
        return _Wake.TIMEOUT

    async def _watch_for_message(self) -> _Wake:
        """A receive's wait on the FD, with no cancel scope: a refresh or the close wakes it by
        the FD's ``notify_closing``, and this run's :class:`_Watchdog` bounds it (rule 5)."""
        watchdog = _Watchdog.current()
        watchdog.watch(self)
        self._waiters[_POLLIN] = _Waiter(None, self._fd)
        self._fd_watched = True
        try:
            await trio.lowlevel.wait_readable(self._fd)
        except trio.ClosedResourceError:
            if self._closed:
                raise self._closed_error() from None
            return _Wake.NUDGE  # (a refresh, or the watchdog's look, found a message)
        finally:
            watchdog.unwatch(self)
            self._fd_watched = False
            self._waiters[_POLLIN] = None
            # Rule 4: whoever parked behind us must now take the FD over.
            parked = self._waiters[_POLLOUT]
            if parked is not None:
                parked.nudge()
        return _Wake.FD

    def _safety_look(self) -> None:
        """The watchdog's look at a receive that has waited a whole period (rule 5): EVENTS
        read in its place, and the waiters woken whose direction is ready. A message found
        waiting with no command pending is a lost edge, rescued."""
        if self._closed or self._waiters[_POLLIN] is None:
            return  # (closed, or woken, since the watchdog's list was made)
        self._safety_timeouts += 1
        pending = self._fd_pending()
        try:
            events = self._refresh()
        except (TransportClosedError, TransportBrokenError):
            self._nudge_all()  # each finds the error for itself
            return
        if events & _POLLIN and not pending:
            self._lost_edges += 1

    # -- closing -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the socket now, discarding unsent messages; wake every waiter. Idempotent.

        Waiting tasks raise :exc:`~p2p_nertz.errors.TransportClosedError`. Call it from the
        thread that runs trio.
        """
        if self._closed:
            return
        self._closed = True
        if self._fd_watched:
            # Only a task inside trio can be watching, so trio is running here.
            trio.lowlevel.notify_closing(self._fd)
        self._nudge_all()
        self._sock.close(linger=0)

    async def aclose(self) -> None:
        """Close the socket (see :meth:`close`); closes even if the calling task is cancelled."""
        self.close()
        await trio.lowlevel.checkpoint()

    # -- errors ------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise self._closed_error()

    def _closed_error(self) -> TransportClosedError:
        return TransportClosedError(f"{self!r} is closed")

    def _translate(
        self, exc: zmq.ZMQError, action: str
    ) -> TransportClosedError | TransportBrokenError:
        if exc.errno in (zmq.ENOTSOCK, zmq.ETERM):
            return TransportClosedError(f"cannot {action} on {self!r}: {exc.strerror}")
        if exc.errno == zmq.EHOSTUNREACH:
            return TransportBrokenError(
                f"cannot {action} on {self!r}: no connected peer has that routing id"
            )
        return TransportBrokenError(f"cannot {action} on {self!r}: {exc.strerror}")


def _int_option(zsock: zmq.Socket[bytes], option: int) -> int:
    value = zsock.get(option)
    if not isinstance(value, int):  # pragma: no cover - zmq's integer options are ints
        raise TypeError(f"zmq option {option} is not an integer: {value!r}")
    return value


def monitor_event(frames: Sequence[bytes]) -> tuple[int, int]:
    """The event (``zmq.EVENT_*``) and its value in one message of a monitor socket
    (:meth:`AsyncSocket.monitor`): libzmq's form, a frame of a 16-bit event and a 32-bit value
    in the machine's order, then the endpoint's.

    pyzmq's ``zmq.utils.monitor.parse_monitor_message`` reads the same, but importing it
    imports ``asyncio`` (its other function is asyncio's): a tenth of a node's start (35 ms
    of CPU in every process that runs the mesh), for two lines of :mod:`struct`.

    Raises:
        ValueError: ``frames`` are not in that form.
    """
    if len(frames) != 2 or len(frames[0]) != _MONITOR_HEAD.size:
        raise ValueError(f"not a monitor event: {len(frames)} frame(s)")
    event, value = _MONITOR_HEAD.unpack(frames[0])
    return int(event), int(value)


_MONITOR_HEAD: Final = struct.Struct("=Hi")


def _check_frames(frames: Sequence[bytes]) -> None:
    if not frames:
        raise ValueError("a message needs at least one frame")


def create_socket(
    ctx: zmq.Context[zmq.Socket[bytes]],
    socket_type: int,
    *,
    hwm: int = DEFAULT_HWM,
    identity: bytes | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    recv_hwm: int | None = None,
    heartbeat: bool = False,
    heartbeat_timeout_ms: int = HEARTBEAT_TIMEOUT_MS,
    curve: CurveKeys | None = None,
    small_batch: bool = False,
    options: Mapping[int, int] | None = None,
) -> AsyncSocket:
    """Create a ROUTER or DEALER in ``ctx`` with the mesh's options, not yet bound or connected.

    Options: ``SNDHWM`` = ``hwm`` and ``RCVHWM`` = ``recv_hwm`` (by default ``hwm``) messages;
    ``LINGER 0``; reconnect after :data:`RECONNECT_IVL_MS`, backing off to
    :data:`RECONNECT_IVL_MAX_MS`; ZMTP heartbeats every :data:`HEARTBEAT_IVL_MS`, dropping a
    connection silent for ``heartbeat_timeout_ms`` after a PING (only with ``heartbeat``;
    without, it still answers the peer's); ``MAXMSGSIZE`` = ``max_message_size`` (a larger
    frame's sender is disconnected, the frame never delivered nor held). ROUTER only:
    ``ROUTER_HANDOVER 1`` (a peer reconnecting under the same routing id takes the id over from
    its stale connection: each mesh DEALER's id is its own, ``mesh.dealer_id``) and
    ``ROUTER_MANDATORY 1`` (wait at the HWM, or raise for a routing id not connected).

    Args:
        ctx: the zmq context; the caller owns and terminates it.
        socket_type: ``zmq.ROUTER`` or ``zmq.DEALER``.
        hwm: the high-water mark in messages, at least 1.
        recv_hwm: the receive high-water mark, per connection, if not ``hwm``: with
            ``max_message_size``, what one connection can make the socket hold (no more read).
        identity: the routing id the peer's ROUTER will see (``ROUTING_ID``), 1 to 255 bytes,
            not starting with a zero byte (zmq reserves those). Needed for ``ROUTER_HANDOVER``
            to recognise a reconnecting peer; zmq picks a random one if omitted.
        max_message_size: the largest frame accepted, in bytes, at least 1.
        heartbeat: ZMTP heartbeats of its own, only for a socket that receives nothing and
            needs them to notice a dead peer: libzmq 4.3.5 aborts when one falls due on a
            connection whose input stopped and then broke (docs/lobby.md §8).
        heartbeat_timeout_ms: with ``heartbeat``, the silence after a PING that ends a link.
        curve: speak CURVE with these keys (a server's receives end with the connection's
            ZAP User-Id, :class:`AsyncSocket`); by default NULL.
        small_batch: read few bytes at once where libzmq can (:mod:`~.runtime.inbatch`).
        options: more integer socket options, set last (the mesh ROUTER's TCP keepalive).

    Raises:
        ValueError: for another socket type, a bad ``hwm``, a bad ``identity``, a bad
            ``max_message_size`` or a bad ``heartbeat_timeout_ms``.
    """
    if socket_type not in _SOCKET_TYPES:
        raise ValueError(f"only zmq.ROUTER and zmq.DEALER are supported, not {socket_type}")
    if recv_hwm is None:
        recv_hwm = hwm
    _check_bounds(hwm, recv_hwm, heartbeat_timeout_ms)
    _check_size_and_identity(max_message_size, identity)
    zsock = new_socket(ctx, socket_type)
    try:
        zsock.set(zmq.LINGER, 0)
        zsock.set(zmq.SNDHWM, hwm)
        zsock.set(zmq.RCVHWM, recv_hwm)
        zsock.set(zmq.MAXMSGSIZE, max_message_size)
        zsock.set(zmq.RECONNECT_IVL, RECONNECT_IVL_MS)
        zsock.set(zmq.RECONNECT_IVL_MAX, RECONNECT_IVL_MAX_MS)
        if heartbeat:
            zsock.set(zmq.HEARTBEAT_IVL, HEARTBEAT_IVL_MS)
            zsock.set(zmq.HEARTBEAT_TIMEOUT, heartbeat_timeout_ms)
        if socket_type == zmq.ROUTER:
            zsock.set(zmq.ROUTER_HANDOVER, 1)
            zsock.set(zmq.ROUTER_MANDATORY, 1)
        if identity is not None:
            zsock.set(zmq.ROUTING_ID, identity)
        if curve is not None:
            curve.apply(zsock)
        set_small_batch(zsock, wanted=small_batch)
        for option, value in (options or {}).items():
            zsock.set(option, value)
        return AsyncSocket(zsock, user_id=curve is not None and curve.server is None)
    except BaseException:
        zsock.close(linger=0)
        raise


def new_socket(ctx: zmq.Context[zmq.Socket[bytes]], socket_type: int) -> zmq.Socket[bytes]:
    """A socket of ``ctx``, made with the stopping signals held (:func:`~p2p_nertz.signals.held`):
    pyzmq makes it, then adds it to the context's sockets, and a Ctrl-C between the two left a
    socket that neither its maker nor ``ctx.destroy`` closes, for which ``ctx.term`` waits
    for ever (session 39)."""
    with held():
        return ctx.socket(socket_type)


def _check_bounds(hwm: int, recv_hwm: int, heartbeat_timeout_ms: int) -> None:
    """Raise :exc:`ValueError` for a high-water mark or a heartbeat timeout zmq would read as
    none (0)."""
    if hwm < 1 or recv_hwm < 1:
        raise ValueError(
            f"hwm must be at least 1 message (0 would mean unbounded): {hwm}, {recv_hwm}"
        )
    if heartbeat_timeout_ms < 1:
        raise ValueError(
            f"a heartbeat timeout is at least 1 ms (0 would mean none): {heartbeat_timeout_ms}"
        )


def _check_size_and_identity(max_message_size: int, identity: bytes | None) -> None:
    """Raise :exc:`ValueError` for a ``MAXMSGSIZE`` or a routing id zmq would misread."""
    if max_message_size < 1:
        raise ValueError(
            "max_message_size must be at least 1 byte (zmq reads -1 as unbounded):"
            f" {max_message_size}"
        )
    if identity is not None and not (0 < len(identity) < 256 and identity[0] != 0):
        raise ValueError(
            f"a routing id is 1 to 255 bytes and must not start with a zero byte: {identity!r}"
        )


@asynccontextmanager
async def open_router(
    ctx: zmq.Context[zmq.Socket[bytes]],
    bind: str = "tcp://127.0.0.1:0",
    *,
    hwm: int = DEFAULT_HWM,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> AsyncIterator[AsyncSocket]:
    """Open a ROUTER bound to ``bind``; the socket is closed when the block exits.

    The endpoint actually bound is ``router.endpoints[0]`` and its port ``router.port``::

        async with open_router(ctx) as router:
            announce(router.port)  # the ephemeral port, for the other peers to connect to
            while True:
                routing_id, *frames = await router.recv_multipart()

    Raises:
        ValueError: for an ``inproc://`` endpoint, a bad ``hwm`` or ``max_message_size``.
        TransportBrokenError: if the endpoint cannot be bound.
    """
    router = create_socket(ctx, zmq.ROUTER, hwm=hwm, max_message_size=max_message_size)
    async with router:
        router.bind(bind)
        yield router


@asynccontextmanager
async def open_dealer(
    ctx: zmq.Context[zmq.Socket[bytes]],
    connect: str,
    *,
    identity: bytes | None = None,
    hwm: int = DEFAULT_HWM,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> AsyncIterator[AsyncSocket]:
    """Open a DEALER connected to ``connect`` under ``identity``; closed when the block exits.

    Does not wait for the connection: messages sent before it is made are queued (up to
    ``hwm``) and delivered once it is; zmq keeps retrying in the background.

    Raises:
        ValueError: for an ``inproc://`` endpoint, a bad ``hwm``, ``identity`` or
            ``max_message_size``.
        TransportBrokenError: if zmq refuses the endpoint.
    """
    dealer = create_socket(  # (sends only, as the mesh's: a heartbeat watches the link)
        ctx,
        zmq.DEALER,
        hwm=hwm,
        identity=identity,
        max_message_size=max_message_size,
        heartbeat=True,
    )
    async with dealer:
        dealer.connect(connect)
        yield dealer
