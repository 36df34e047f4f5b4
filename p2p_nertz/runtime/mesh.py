"""A node's sockets: one ROUTER it receives on, one DEALER to each member and to each spectator.

Theory of operation
-------------------
The mesh has the ZRE shape (DESIGN.md §7): one bound ROUTER (only ever received on, by the
node's receive task) and one DEALER per other member, connected to that member's ROUTER under
a routing id of its own: ``b"N" + peer id`` and a random nonce (:func:`dealer_id`; zmq reserves
ids that start with a zero byte), so that a second connection under the member's key never
takes the first's over at the ROUTER (``ROUTER_HANDOVER`` serves one DEALER's reconnects
only); nothing is sent to a member through a ROUTER by its routing id. Each DEALER
is an :class:`Outlet`: a message is handed to zmq at once, without waiting, by the task that
produced it when nothing is queued before it; otherwise (the pipe at its HWM: a member down or
slow) it is queued, in order, for the DEALER's owner task, which waits for room. The direct
hand-off saves a trip through trio's scheduler (half a millisecond on a loaded machine) on
every claim and ack; only the owner task ever *waits* on a DEALER. A full queue drops the
message and counts it (:attr:`Mesh.dropped`): the protocol's gap repair, not the transport,
makes delivery reliable, and the peer core must never wait on a slow member. After a broadcast
to two members or more the mesh yields the CPU, so that zmq's I/O thread sends it before the
node goes on.

A spectator (``nertz watch``) gets a DEALER too, but it is not in the roster: the mesh pushes
it the game spec first (:data:`WATCH_SPEC_TAG`), then whatever the node hands to
:meth:`Mesh.watch`; a slow spectator loses messages, it never slows the node.

The ROUTER is a CURVE server that admits only the other members' keys, and each DEALER to a
member a CURVE client (transport version 2, docs/protocol.md §4.7): the keys are the members'
identities converted, the admission the ZAP handler of :mod:`p2p_nertz.runtime.gate`, bound
in the mesh's zmq context before the ROUTER (one mesh a context). Each message the ROUTER
gives ends with the User-Id of the member whose key its connection authenticated, for the
guard to compare with the member its routing id starts with. Each DEALER to a spectator is a
CURVE client too, of the spectator's key that its ``--watcher`` address carries
(:class:`~p2p_nertz.runtime.watchport.WatcherAddress`), with the member's own key: the
spectator admits the roster's keys only (:mod:`p2p_nertz.runtime.watchport`).

The ROUTER has no ZMTP heartbeat of its own (:meth:`Mesh.bind`): its TCP keepalive
(:data:`ROUTER_KEEPALIVE`) ends a member's connection that brought nothing for
:data:`ROUTER_SILENCE_MS`, as one does whose machine went away without closing it.

Every socket refuses frames above :data:`MAX_FRAME` (zmq cuts the sender off). The mesh knows
sockets and peer ids only: what the messages mean is the node's and the peer core's.
"""

from __future__ import annotations

import math
import os
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import trio
import zmq

from p2p_nertz.defaults import DROP_AFTER, SUSPECT_AFTER
from p2p_nertz.errors import TransportBrokenError, TransportClosedError
from p2p_nertz.protocol.envelope import MAX_VOTE_SIZE
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.spec import MAX_SPEC_SIZE
from p2p_nertz.runtime.gate import Gate, client_keys, server_keys, zap_user_id
from p2p_nertz.runtime.handshakes import Handshakes
from p2p_nertz.runtime.redial import Redialer, try_after
from p2p_nertz.runtime.zmqtrio import (
    CURVE_BOX_BYTES,
    HEARTBEAT_IVL_MS,
    HEARTBEAT_TIMEOUT_MS,
    AsyncSocket,
    create_socket,
)

if TYPE_CHECKING:
    from p2p_nertz.runtime.watchport import WatcherAddress

__all__ = [
    "DEFAULT_BIND",
    "LINK_RATE",
    "LINK_TIMEOUT_MAX_MS",
    "MAX_FRAME",
    "ROUTER_HWM",
    "ROUTER_KEEPALIVE",
    "ROUTER_SILENCE_MS",
    "ROUTING_NONCE",
    "SEND_QUEUE",
    "WATCH_MAX_FRAME",
    "WATCH_SPEC_TAG",
    "Mesh",
    "Outlet",
    "dealer_id",
    "link_timeout_ms",
    "routing_id",
]

DEFAULT_BIND: Final = "tcp://127.0.0.1:0"
"""Where a node's ROUTER binds unless told otherwise: an ephemeral port on loopback."""

WATCH_SPEC_TAG: Final = b"NERTZ-SPEC\0"
"""The first message a node pushes to a spectator: this tag, then the game spec's wire form
(a spectator checks that it hashes to the game it wants; no envelope starts with this tag)."""

MAX_FRAME: Final = MAX_VOTE_SIZE + CURVE_BOX_BYTES
"""The largest frame any socket of the node accepts (``MAXMSGSIZE``): the largest legal
message of docs/protocol.md §4.2, a drop's 12,288 bytes (any other message's 4,096; session
40: a vote on proof carries two messages of the member), framing and signature counted, in its
CURVE box (zmq counts the box's 33 bytes, not its own frame header: until session 32
a legal message of 4064 bytes or more cut its sender off). A peer sending a larger frame is
disconnected by zmq before the frame is held, so the ROUTER holds at most its HWM of these."""

LINK_TIMEOUT_MAX_MS: Final = round(DROP_AFTER * 1000)
"""The longest a member's DEALER waits for the node's answer to a ZMTP PING, in milliseconds,
whatever its drop timer (:func:`link_timeout_ms`): the default drop timer (30 s). It bounds the
window the ROUTER's mark is sized to (:data:`ROUTER_HWM`), whatever timers the members chose
(each sets its own). A link whose round trip passes 30 s is no LAN."""

LINK_RATE: Final = 32
"""Messages a second a member's DEALER may write to one connection, sustained over a whole
heartbeat window, that the ROUTER's mark is sized to hold (:data:`ROUTER_HWM`). Measured per
connection in games of greedy bots at full speed, 2-6 players, both deals, two rounds
(``scripts/bench_link_window.py``, session 32, load 10-40): at most 17 a second over any 6 s
and 11 over any 31 s (a 4-player shuffle game; means 4-11), so a window of either length at
this rate is twice to three times the most seen. A single second went up to 24 at 4 players
and 38 at 6 (a shuffle game's round start); no second-long burst lasts a window.
"""


def link_timeout_ms(drop_after: float) -> int:
    """How long, in milliseconds, a member's DEALER waits for the node's answer to a ZMTP PING
    before it gives the connection up: the drop timer (a connection is given up no sooner than
    the protocol would give the member up), at least :data:`HEARTBEAT_TIMEOUT_MS` and at most
    :data:`LINK_TIMEOUT_MAX_MS`.

    A link whose round trip passes the heartbeat's timeout is given up though every packet
    still arrives: what was queued on it is lost, and its TCP and CURVE handshakes take
    several round trips more, after which the same happens again (docs/protocol.md §9.5: two
    players 2.5 s ± 1 apart each way abandoned each other in four runs of five at 5 s). The
    protocol's timers judge a slow member; the heartbeat only notices a dead connection.

    >>> link_timeout_ms(8.0), link_timeout_ms(2.0), link_timeout_ms(3600.0)
    (8000, 5000, 30000)
    """
    return max(HEARTBEAT_TIMEOUT_MS, min(LINK_TIMEOUT_MAX_MS, math.ceil(drop_after * 1000)))


ROUTER_HWM: Final = math.ceil((HEARTBEAT_IVL_MS + LINK_TIMEOUT_MAX_MS) / 1000 * LINK_RATE)
"""The ROUTER's receive high-water mark, per connection, in messages (992): what zmq holds
for one sender before it stops reading that sender's TCP connection (flow control: nothing is
lost, the sender waits). With :data:`MAX_FRAME` it bounds what one connection, a member's
flood included, can make the node hold to 992 × 12 KiB (~11.7 MiB; strangers are cut off at the
CURVE handshake). Honest members send a few dozen messages a second at most (docs/protocol.md
§9.7) and the receive task drains every pipe in bursts of
:data:`~p2p_nertz.runtime.node.MAX_BURST`, so only a flood or a stopped node fills it.

It holds everything a member's DEALER can have written to one connection before its ZMTP
heartbeat gives that connection up (``HEARTBEAT_IVL_MS`` + :data:`LINK_TIMEOUT_MAX_MS`, the
longest window any member's timers give, 31 s, at :data:`LINK_RATE`): libzmq 4.3.5 aborts the
process ("Assertion failed: !_io_error", stream_engine_base.cpp:310) when a connection whose
input stopped at this mark breaks and the bytes still buffered hold a PING (it answers the
PING on the broken connection). A node stopped past the heartbeat's window wakes to such a
connection: at 64, a member sending 20 messages a second (the 4-player peak) made it abort
every time after a 5 s window (chaos seed 2128 of session 21, a shuffle game, whose turn-ups
send more; ``tests/test_mesh_router_wakes.py``); at 512, a 6 s window held (sessions 21-31),
and since session 32 the window is the drop timer's. No mark keeps a sender from the same
path on purpose (a PING after each frame, the pipe filled while the node's loop is busy, then
a TCP RST; ``tests/test_stranger_abort.py``, docs/protocol.md §13): CURVE keeps strangers off
it (only the members' keys get a connection past its handshake); a member keeps the power."""

ROUTER_SILENCE_MS: Final = LINK_TIMEOUT_MAX_MS
"""How long, in milliseconds, a connection at the ROUTER may bring nothing (nor acknowledge
what the ROUTER sent on it) before the ROUTER's kernel ends it (:data:`ROUTER_KEEPALIVE`): 30 s,
the longest any member's DEALER waits for an answer to a PING (:data:`LINK_TIMEOUT_MAX_MS`), so
no connection a DEALER still keeps is ended at the ROUTER first, whatever timers its member
chose. A live DEALER sends a PING every ``HEARTBEAT_IVL_MS`` (1 s), so only a dead one meets it."""

ROUTER_KEEPALIVE: Final[Mapping[int, int]] = {
    zmq.TCP_KEEPALIVE: 1,
    zmq.TCP_KEEPALIVE_IDLE: 10,
    zmq.TCP_KEEPALIVE_INTVL: 5,
    zmq.TCP_KEEPALIVE_CNT: math.ceil((ROUTER_SILENCE_MS / 1000 - 10) / 5),
    zmq.TCP_MAXRT: ROUTER_SILENCE_MS,
}
"""The ROUTER's TCP options, inherited by every connection it accepts: how a connection whose
member's machine went away without closing it (power cut, cable pulled, session 35) is ended.

The ROUTER only receives, and has no ZMTP heartbeat of its own (libzmq #4841: see
:meth:`Mesh.bind`), so nothing of its own ever told it that such a connection is dead: it
stayed for the rest of the game, one descriptor and its buffers at every other member, and the
node started again elsewhere on its key connected beside it. TCP keepalive probes it after 10 s
without a packet, then every 5 s; ``TCP_MAXRT`` (Linux's ``TCP_USER_TIMEOUT``) makes the
kernel end it once :data:`ROUTER_SILENCE_MS` passed without an answer, a probe's or, when the
cut caught an answer to a PING on its way, that answer's retransmissions' (which hold keepalive
off: keepalive alone did not close it within 120 s, 2 runs; TCP retries for ~15 minutes).
Measured in ``scripts/bench_dead_link.py`` (session 35, load 14-28): the old connection closed
30.4-30.5 s after the cut (never within 90 s before), 31.7-31.8 s with an answer on its way; the
same segments a second on an idle link (a live DEALER's PING a second keeps a link from ever
being idle 10 s); no connection closed on a link 3 s late each way for 40 s.

Not the DEALERs' ``ZMQ_HEARTBEAT_TTL``, which asks the ROUTER to close a connection silent that
long after a PING: libzmq cancels that timer at any message and arms it again only at the next
PING, so a connection whose last frame was a message, not a PING, is never closed (every run
of the bench). Keepalive may end a connection whose input stopped at :data:`ROUTER_HWM`, which
libzmq 4.3.5 can answer with that mark's abort: it takes the mark filled (a flood, or the
node's loop held past the window) and the member's machine then gone 30 s, where the member's
own DEALER ends such a connection after 30 s of unanswered PINGs at most anyway."""

WATCH_MAX_FRAME: Final = len(WATCH_SPEC_TAG) + MAX_SPEC_SIZE + CURVE_BOX_BYTES
"""The largest frame a spectator's ROUTER accepts: the game spec a node pushes first is the
largest message it receives (``nertz watch``)."""

SEND_QUEUE: Final = 4096
"""Messages queued per DEALER before further ones to that member are dropped."""


ROUTING_NONCE: Final = 8
"""Random bytes after :func:`routing_id` in the routing id of each DEALER (:func:`dealer_id`)."""


def routing_id(peer_id: bytes) -> bytes:
    """What the routing id of each of a member's DEALERs starts with: ``b"N"`` and its peer id
    (the guard reads the member there, :mod:`~p2p_nertz.runtime.guard`).

    >>> routing_id(bytes(32))[:2]
    b'N\\x00'
    """
    return b"N" + peer_id


def dealer_id(peer_id: bytes, nonce: bytes | None = None) -> bytes:
    """The routing id of one DEALER of a member: :func:`routing_id` and a nonce of that socket
    (:data:`ROUTING_NONCE` random bytes unless given).

    Each DEALER has its own, so that at a ROUTER only that socket's own reconnects take its
    id over (``ROUTER_HANDOVER``): a second connection under the member's key (its key file
    run on a second machine, a copy of its log resumed there) has another id and leaves the
    first's connection alone, where under one shared id each took the id over from the other
    in turn, and the one that lost it wrote into a closed pipe until its heartbeat gave up, a
    drop timer later (``scripts/bench_twin_key.py``). Nor can another member learn an id it
    could take over: each is sent only inside the CURVE connection to one ROUTER.

    >>> len(dealer_id(bytes(32))), dealer_id(bytes(32)) != dealer_id(bytes(32))
    (41, True)
    >>> dealer_id(bytes(32), b"#1")[32:]
    b'\\x00#1'
    """
    return routing_id(peer_id) + (secrets.token_bytes(ROUTING_NONCE) if nonce is None else nonce)


def _yield_cpu() -> None:
    """Let zmq's I/O thread, just handed a broadcast, run before we go on (``sched_yield``).

    The hand-off wakes that thread, and the scheduler often queues it on our own core: it
    would then wait for the rest of our turn (the sends to the other members, an ack, the
    timers: a few hundred microseconds) before the message even leaves this process. Yielding
    lets it go first. With nothing else runnable on our core, the call returns at once.
    ``scripts/bench_lan.py``: claim delivery at 4 peers 3.9 -> 2.8 ms, at 8 peers 11.8 -> 9.6
    ms (medians, docs/latency.md). Not after a send to a single member (a broadcast at 2
    peers): there no other send waits behind ours, and without the yield a claim reached the
    other's ROUTER ~8 µs sooner and was final 3-8% sooner (medians of 9 alternated pairs,
    docs/latency.md, session 20).
    """
    if _SCHED_YIELD is not None:
        _SCHED_YIELD()


_SCHED_YIELD: Final = getattr(os, "sched_yield", None)  # not on Windows


class Outlet:
    """One DEALER and what waits to go through it (see the module docstring).

    Messages leave in the order they are posted: one goes to zmq directly only when nothing
    is queued or being sent by the owner task (:meth:`run`) before it.
    """

    def __init__(self, socket: AsyncSocket, size: int = SEND_QUEUE) -> None:
        self.socket = socket
        self._in, self._out = trio.open_memory_channel[bytes](size)
        self.backlog = 0
        """Messages queued for the owner task or being sent by it."""

    def post(self, data: bytes) -> bool:
        """Send ``data`` now if zmq takes it without waiting, else queue it; return ``False``
        if it was dropped (the queue is full, or the node is shutting down)."""
        if self.backlog == 0:
            try:
                if self.socket.try_send_multipart([data]):
                    return True
            except (TransportClosedError, TransportBrokenError):
                return False
        try:
            self._in.send_nowait(data)
        except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
            # Full, or shutting down (the owner was cancelled while a non-cancellable log
            # write finished): the message goes nowhere, as in a crash after the write.
            return False
        self.backlog += 1
        return True

    async def run(self) -> None:
        """The owner task: send what was queued, waiting for room in the pipe."""
        async with self._out:
            async for data in self._out:
                try:
                    await self.socket.send_multipart([data])
                finally:
                    self.backlog -= 1


OutletFactory = Callable[[AsyncSocket], Outlet]


class Mesh:
    """The sockets of one member: its ROUTER, its DEALERs to the others and to spectators.

    The ROUTER is a CURVE server admitting only the other members' keys, each DEALER to a
    member a CURVE client (:mod:`p2p_nertz.runtime.gate`, docs/protocol.md §4.7), and each
    DEALER to a spectator a CURVE client of the spectator's key.

    Args:
        identity: ours (our peer id is the routing id of our DEALERs; our CURVE keys are
            derived from it).
        members: every member's peer id, ours included (we get no DEALER).
        bind: the ROUTER's endpoint (port 0 for an ephemeral one).
        ctx: a zmq context to use (the caller terminates it, after :meth:`close`); by default
            the mesh makes its own and terminates it in :meth:`close`. The mesh binds the
            context's ZAP handler: one mesh a context.
        watchers: spectators' addresses (endpoint and key).
        outlet: makes the :class:`Outlet` of a DEALER (a hook for instrumentation).
        drop_after: the node's drop timer, in seconds: each DEALER to a member (and to a
            spectator) waits as long for an answer before it gives its connection up
            (:func:`link_timeout_ms`).
        suspect_after: the node's suspect timer, in seconds: a member heard before and silent
            for :data:`~p2p_nertz.runtime.redial.TRY_AFTER`, or this if shorter, has its
            address tried afresh, and its DEALER re-dialled once the link answers
            (:mod:`~p2p_nertz.runtime.redial`; the node says what it hears: :meth:`heard`).
    """

    def __init__(
        self,
        identity: Identity,
        members: Sequence[PeerId],
        *,
        bind: str = DEFAULT_BIND,
        ctx: zmq.Context[zmq.Socket[bytes]] | None = None,
        watchers: Sequence[WatcherAddress] = (),
        outlet: OutletFactory = Outlet,
        drop_after: float = DROP_AFTER,
        suspect_after: float = SUSPECT_AFTER,
    ) -> None:
        self._own = identity.peer_id
        self.link_timeout_ms = link_timeout_ms(drop_after)
        """How long each DEALER to a member waits for an answer to a PING (milliseconds)."""
        self._members = tuple(members)
        self._keys = server_keys(identity)
        self.gate: Gate | None = None
        """The ZAP handler admitting the other members' keys (once bound)."""
        self._bind_to = bind
        self._own_ctx = ctx is None
        self.ctx: zmq.Context[zmq.Socket[bytes]] | None = ctx
        self.router: AsyncSocket | None = None
        self._dealers: dict[PeerId, AsyncSocket] = {}
        self._watch_to = tuple(watchers)
        self._watch_sockets: list[AsyncSocket] = []
        self._make_outlet = outlet
        self.outlets: dict[PeerId, Outlet] = {}
        """Each other member's outlet (once :meth:`serve_outlets` started them)."""
        self.watch_outlets: list[Outlet] = []
        """Each spectator's outlet (once started)."""
        self.dropped = 0
        """Messages dropped because a member's send queue was full."""
        self._handshakes = Handshakes()
        self.redialer = Redialer(try_after(suspect_after))
        """Tries the address of a silent member, and re-dials its DEALER once it answers."""
        self._heard_as = {zap_user_id(pid): pid for pid in self._members if pid != self._own}

    @property
    def endpoint(self) -> str:
        """The ROUTER's resolved endpoint (after :meth:`bind`).

        Raises:
            RuntimeError: before :meth:`bind`.
        """
        if self.router is None:
            raise RuntimeError("the node is not bound yet")
        return self.router.endpoints[0]

    @property
    def watched(self) -> bool:
        """Whether any spectator is pushed what the node sends and receives."""
        return bool(self.watch_outlets)

    def bind(self) -> str:
        """Create and bind the ROUTER (idempotent); return its resolved endpoint.

        Raises:
            TransportBrokenError: the endpoint cannot be bound (port in use, bad address), or
                the context already has another mesh's ZAP handler.
        """
        if self.router is None:
            if self.ctx is None:
                self.ctx = zmq.Context()
            if self.gate is None:  # before the ROUTER: it refuses every client until then
                self.gate = Gate(self.ctx, (pid for pid in self._members if pid != self._own))
                self.gate.start()
            # No heartbeat of its own: libzmq 4.3.5 aborts the process ("Assertion failed:
            # !_io_error", stream_engine_base.cpp) when a heartbeat falls due on a connection
            # whose input stopped at the HWM and then broke, as when a node stopped past a
            # member's HEARTBEAT_TIMEOUT wakes to a backlog (chaos seed 19304; libzmq #4841).
            # The ROUTER is only ever received on: the members' DEALERs' heartbeats, which
            # it answers, watch each link and reconnect it; a connection whose member's machine
            # vanished without a close is ended by TCP keepalive (ROUTER_KEEPALIVE). A member
            # could abort us the same way by a PING kept past a refused frame, unless the
            # engine reads a few bytes at a time (where libzmq has drafts: runtime/inbatch.py).
            router = create_socket(
                self.ctx,
                zmq.ROUTER,
                recv_hwm=ROUTER_HWM,
                max_message_size=MAX_FRAME,
                heartbeat=False,
                curve=self._keys,
                small_batch=True,
                options=ROUTER_KEEPALIVE,
            )
            try:
                router.bind(self._bind_to)
            except BaseException:
                router.close()
                raise
            self.router = router
        return self.endpoint

    def connect(self, endpoints: Mapping[PeerId, str]) -> None:
        """Bind if not yet bound, then connect a DEALER to every other member's ROUTER and to
        every spectator.

        Raises:
            KeyError: a member has no endpoint.
            TransportBrokenError: a socket cannot be bound or connected.
        """
        self.bind()
        assert self.ctx is not None
        for pid in self._members:
            if pid != self._own:
                dealer = self._dealer(pid, self.link_timeout_ms)
                self._dealers[pid] = dealer
                self._handshakes.add(dealer, pid, endpoints[pid])
                self.redialer.add(pid, dealer, endpoints[pid], self._new_dealer_id)
                dealer.connect(endpoints[pid])
        for address in self._watch_to:
            # (A spectator sends us nothing: the bound only caps what a stranger could.) It
            # waits as a member's does: at 5 s, a spectator 3 s late each way (the slow-link
            # tests' link) was cut off every PING and never kept a connection (session 35).
            watcher = self._dealer(address.key, self.link_timeout_ms)
            self._watch_sockets.append(watcher)
            watcher.connect(address.endpoint)

    def _new_dealer_id(self) -> bytes:
        """A routing id of ours for a re-dialled DEALER: never one it used (``redial.py``)."""
        return dealer_id(self._own)

    def _dealer(self, server: PeerId, timeout_ms: int) -> AsyncSocket:
        """A DEALER under a routing id of its own (:func:`dealer_id`): a CURVE client of
        ``server``'s key (a member's, or a spectator's), with ours, giving a connection up
        ``timeout_ms`` after an unanswered PING."""
        assert self.ctx is not None
        # The program's one socket with a ZMTP heartbeat of its own: it only sends (the ROUTER it
        # connects to never sends back, so its input never stops, and the abort the ROUTER
        # avoids cannot happen here), and the heartbeat is how it notices a dead or stopped
        # member and reconnects: after the drop timer (a slow link is the protocol's to judge,
        # docs/protocol.md §9.5), a spectator's too (since session 35; before, DESIGN.md §6's
        # 5 s). A spectator slower than its outlet loses messages; it never slows the node.
        return create_socket(
            self.ctx,
            zmq.DEALER,
            identity=dealer_id(self._own),
            max_message_size=MAX_FRAME,
            heartbeat=True,
            heartbeat_timeout_ms=timeout_ms,
            curve=client_keys(self._keys, server),
        )

    def serve_outlets(self, nursery: trio.Nursery, spec_wire: bytes) -> None:
        """Start the owner task of every DEALER in ``nursery``; push each spectator the game
        first (:data:`WATCH_SPEC_TAG` and ``spec_wire``), so that it needs no spec file. Watch
        the DEALERs' handshakes there too: a member of another transport version fails the
        nursery with :exc:`~p2p_nertz.runtime.handshakes.TransportVersionError`."""
        nursery.start_soon(self._handshakes.watch)
        self.redialer.start(nursery)
        for pid, dealer in self._dealers.items():
            self.outlets[pid] = outlet = self._make_outlet(dealer)
            nursery.start_soon(outlet.run)
        for watcher in self._watch_sockets:
            outlet = self._make_outlet(watcher)
            outlet.post(WATCH_SPEC_TAG + spec_wire)
            self.watch_outlets.append(outlet)
            nursery.start_soon(outlet.run)

    def send(self, data: bytes, to: PeerId | None) -> None:
        """Hand ``data`` to ``to``'s outlet, or to every member's (``None``: a broadcast, after
        which, to two members or more, the CPU is yielded to zmq's I/O thread); count what a
        full queue drops."""
        targets: Iterable[PeerId] = self.outlets.keys() if to is None else (to,)
        for pid in targets:
            outlet = self.outlets.get(pid)
            if outlet is None:
                continue  # ourselves, or not a member
            if not outlet.post(data):
                self.dropped += 1
        if to is None and len(self.outlets) > 1:
            _yield_cpu()

    def heard(self, user_ids: Iterable[bytes]) -> None:
        """Note that the members whose connections carry these User-Ids (the last frame of
        what the ROUTER gives) were heard just now; any other is ignored."""
        for user_id in user_ids:
            pid = self._heard_as.get(user_id)
            if pid is not None:
                self.redialer.heard(pid)

    def watch(self, wires: Iterable[bytes]) -> None:
        """Push messages to the spectators (dropped, never waited on, when one is slow)."""
        for wire in wires:
            for outlet in self.watch_outlets:
                outlet.post(wire)

    def close(self) -> None:
        """Close every socket (``LINGER 0``) and the ZAP handler, and the context if the mesh
        made it."""
        self._handshakes.close()
        for dealer in (*self._dealers.values(), *self._watch_sockets):
            dealer.close()
        if self.router is not None:
            self.router.close()
        if self.gate is not None:
            self.gate.close()
        if self._own_ctx and self.ctx is not None:
            # (destroy: a socket its owner had not taken yet when a Ctrl-C came is closed
            # too, where term waited for it for ever; the ZAP thread has ended: session 39)
            self.ctx.destroy(linger=0)
            self.ctx = None
