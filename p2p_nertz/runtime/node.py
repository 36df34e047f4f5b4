"""A peer node: one sans-I/O :class:`~p2p_nertz.protocol.peer.Peer` on real ZeroMQ sockets.

Theory of operation
-------------------
A node is the runtime around one peer core (DESIGN.md §1, §6, §7). It owns:

* **the mesh** in the ZRE shape: one bound ROUTER (only ever received on) and one DEALER per
  other member, connected to that member's ROUTER under the routing id ``b"N" + peer id``
  (zmq reserves ids that start with a zero byte). The receive task owns the ROUTER. Each
  DEALER is an :class:`_Outlet`: a message is handed to zmq at once, without waiting, by the
  task that produced it when nothing is queued before it; otherwise (the pipe at its HWM: a
  member down or slow) it is queued, in order, for the DEALER's owner task, which waits for
  room. The direct hand-off saves a trip through trio's scheduler (half a millisecond on a
  loaded machine) on every claim and ack; only the owner task ever *waits* on a DEALER. A full
  queue drops the message and counts it: the protocol's gap repair, not the transport, makes
  delivery reliable, and the peer core must never wait on a slow member. After a broadcast the
  node yields the CPU, so that zmq's I/O thread sends it before the node goes on;
* **the log** (:mod:`p2p_nertz.logfile.store`), opened with
  :func:`~p2p_nertz.logfile.store.open_for_append`: if it already holds events, the peer is
  rebuilt with :meth:`Peer.restore` from them and from the highest durable clock note, so a
  killed process continues the game with no seq reused. If the log's tail had to be cut (it
  may have lost an event we sent), or a recovery noted in it did not finish, or ``recover``
  says so, the peer is restored in recovery: it learns its own feed from the others before it
  signs (docs/protocol.md §9.6), between a ``recovering`` and a ``recovered`` note;
* **three input tasks** — the receive task (bytes in bursts, :meth:`Peer.feed_many`), the timer
  (:meth:`Peer.tick` at :meth:`Peer.next_deadline`, woken early when an input makes a tick due
  sooner) and the optional bot (a strategy choosing moves on the tentative view at a human
  pace).
* **the guard** (:mod:`p2p_nertz.runtime.guard`): every socket refuses frames above
  :data:`MAX_FRAME` (zmq cuts the sender off), and the receive task hands the peer only what
  arrives under a member's routing id, within that member's budget; the rest is dropped
  unread and unverified, counted in :attr:`PeerNode.guard`. Refusals of the guard and of the
  peer are logged at a bounded rate (:attr:`PeerNode.refusals`), never a line each.

The peer is not thread- or task-safe, so every call into it and the application of the effects
it returns happen under one :class:`trio.Lock`. Effects are applied **in order**: consecutive
:class:`Record`, :class:`Reserve` and :class:`Note` effects are batched into one write that
completes before any :class:`Send` that follows them is handed to a DEALER; a ``Reserve`` is
logged as the note ``clock`` (8 bytes, big-endian), a ``Note`` as the note it names (``proof``:
the two signed messages that prove a member cheated, durable before the vote they justify is
sent). A batch holding anything but received events is made durable
(:meth:`LogWriter.append_many`, synced on the trio thread while the lock is held: nothing with
work to do could run meanwhile, and a worker thread's hand-offs delayed every claim); a batch
of received events only is written at once without a sync: its events are held, signed, by
their authors, and waiting for the disk there would delay every ack. Other effects (notices)
go to an optional callback, in order.

Time is whatever ``clock`` returns (by default :func:`trio.current_time`, monotonic seconds); the
peer never reads a clock itself. The timer sleeps ``deadline - clock()``, so any clock counting
seconds works.

The node stops by itself once the game is over (the final phase is ``OVER``) and every member
holds all our events (our last event is final: :attr:`Peer.stable` reached its Lamport time),
or once ``grace`` seconds passed after the game ended without that; it then keeps answering
for ``linger`` seconds (so the others can finish with our acks) and closes every socket
(``LINGER 0``) and the log. :meth:`PeerNode.leave` is the clean way out mid-game (a signed
``leave``, then the same wait for the others to hold it, for :data:`LEAVE_GRACE` at most: in a
frozen game nobody will). Cancelling :meth:`PeerNode.run`
is an abrupt stop, like a crash: the log stays valid and a later run on the same log
continues the game.
"""

from __future__ import annotations

import collections
import logging
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from time import time as wall_time
from typing import Final

import msgpack  # type: ignore[import-untyped]
import trio
import zmq

from p2p_nertz.bots import BotDriver, Pacing, make_strategy
from p2p_nertz.errors import (
    LocalProtocolError,
    TransportBrokenError,
    TransportClosedError,
)
from p2p_nertz.logfile.format import LogHeader, RecordKind
from p2p_nertz.logfile.format import Record as LogRecord
from p2p_nertz.logfile.store import LogWriter, Recovery, open_for_append
from p2p_nertz.protocol.envelope import MAX_MESSAGE_SIZE, looks_like_beat
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.peer import (
    Effect,
    Note,
    Peer,
    PeerConfig,
    Record,
    Recovered,
    Rejected,
    Reserve,
    Send,
    Suspected,
)
from p2p_nertz.protocol.spec import MAX_SPEC_SIZE, SPEC_NOTE, GameSpec
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import Rng, derive_seed
from p2p_nertz.rules import Move
from p2p_nertz.runtime.guard import (
    BAD_FRAMES,
    OUTSIDER,
    OVER_BUDGET,
    InboundGuard,
    RefusalLog,
    SenderBudget,
)
from p2p_nertz.runtime.zmqtrio import AsyncSocket, create_socket

__all__ = [
    "BEAT_CHUNK",
    "CLOCK_NOTE",
    "DEFAULT_BIND",
    "LEAVE_GRACE",
    "ENDPOINTS_NOTE",
    "MAX_BURST",
    "MAX_FRAME",
    "NODE_CONFIG",
    "RECOVERED_NOTE",
    "RECOVERING_NOTE",
    "ROUTER_HWM",
    "SEND_QUEUE",
    "SPEC_NOTE",
    "WATCH_MAX_FRAME",
    "WATCH_SPEC_TAG",
    "PeerNode",
    "decode_clock_note",
    "encode_clock_note",
    "read_session",
    "recovery_unfinished",
    "routing_id",
    "serve_peer",
]

LEAVE_GRACE: Final = 2.0
"""Seconds a node that leaves (:meth:`PeerNode.leave`: Ctrl-C, SIGTERM) waits at most for the
others to hold its ``leave``: live members do within a round trip; a frozen game (a member
stopped, a partition) must not keep a node from stopping (issue 13 §2). The ``leave`` is in
the log before it is sent, so the others learn it from whoever holds it, or from a restart."""

CLOCK_NOTE: Final = "clock"
"""The name of the log note that makes a :class:`Reserve` durable."""

ENDPOINTS_NOTE: Final = "endpoints"
"""The name of the log note holding the members' endpoints this node used (msgpack map of peer
id to endpoint string, ours included): with the spec note, enough to resume from the log."""

RECOVERING_NOTE: Final = "recovering"
"""The log note that says the peer is learning its own feed from the others (its log may lack
events it sent, docs/protocol.md §9.6): written in place of a cut tail, or when asked to
recover; until a :data:`RECOVERED_NOTE` follows it, every restart recovers again."""

RECOVERED_NOTE: Final = "recovered"
"""The log note that ends a recovery (data: our head before and after, 8 bytes each), written
before anything the recovered peer signs."""

DEFAULT_BIND: Final = "tcp://127.0.0.1:0"
"""Where a node's ROUTER binds unless told otherwise: an ephemeral port on loopback."""

NODE_CONFIG: Final = PeerConfig(ack_delay=0.0, want_delay=0.02)
"""The peer core's configuration on real sockets: acks go out as soon as a burst of received
messages has been taken in (the receive loop hands the peer everything waiting at once, which
coalesces acks under load), instead of after a fixed window: on a LAN the round trip is a few
hundred microseconds, and a 2 ms window would be most of a claim's time to finality. A gap
that a third member's ack reveals is asked for only if it is still open 20 ms later: such an
ack often overtakes the events themselves, on their way from their author, and asking at once
would fetch them twice."""

WATCH_SPEC_TAG: Final = b"NERTZ-SPEC\0"
"""The first message a node pushes to a spectator: this tag, then the game spec's wire form
(a spectator checks that it hashes to the game it wants; no envelope starts with this tag)."""

MAX_FRAME: Final = MAX_MESSAGE_SIZE
"""The largest frame any socket of the node accepts (``MAXMSGSIZE``): the largest legal
message of docs/protocol.md §4.2, whose 4096 bytes count its msgpack framing and signature
(zmq's own frame header is not part of the size it bounds). A peer sending a larger frame is
disconnected by zmq before the frame is held, so the ROUTER holds at most its HWM of these."""

ROUTER_HWM: Final = 64
"""The ROUTER's receive high-water mark, per connection, in messages: what zmq holds for one
sender before it stops reading that sender's TCP connection (flow control: nothing is lost,
the sender waits). With :data:`MAX_FRAME` it bounds what one connection, a stranger's
included, can make the node hold to 64 × 4 KiB. Honest members send a few dozen messages a
second (docs/protocol.md §9.7) and the receive task drains every pipe in bursts of
:data:`MAX_BURST`, so only a flood fills it."""

WATCH_MAX_FRAME: Final = len(WATCH_SPEC_TAG) + MAX_SPEC_SIZE
"""The largest frame a spectator's ROUTER accepts: the game spec a node pushes first is the
largest message it receives (``nertz watch``)."""

SEND_QUEUE: Final = 4096
"""Messages queued per DEALER before further ones to that member are dropped."""

MAX_BURST: Final = 256
"""Most messages taken from the ROUTER and held unfed (events are fed at once, beats in chunks)."""

BEAT_CHUNK: Final = 4
"""Beats fed to the peer at a time before the ROUTER is looked at again for events."""

log = logging.getLogger("p2p_nertz.node")

_GUARD_DETAILS: Final = {  # what the log says of a frame the guard dropped, by reason
    OUTSIDER: "a frame under a routing id that is no member's",
    OVER_BUDGET: "a member's connection over its budget",
    BAD_FRAMES: "a message of more than one frame",
}

_MIN_WAIT: Final = 0.001  # seconds: the least the timer waits when a tick left its deadline due


def _yield_cpu() -> None:
    """Let zmq's I/O thread, just handed a broadcast, run before we go on (``sched_yield``).

    The hand-off wakes that thread, and the scheduler often queues it on our own core: it
    would then wait for the rest of our turn (the sends to the other members, an ack, the
    timers: a few hundred microseconds) before the message even leaves this process. Yielding
    lets it go first. With nothing else runnable on our core, the call returns at once.
    ``scripts/bench_lan.py``: claim delivery at 4 peers 3.9 -> 2.8 ms, at 8 peers 11.8 -> 9.6
    ms (medians, docs/latency.md).
    """
    if _SCHED_YIELD is not None:
        _SCHED_YIELD()


_SCHED_YIELD: Final = getattr(os, "sched_yield", None)  # not on Windows

NoticeCallback = Callable[[Effect], None]
Clock = Callable[[], float]


def routing_id(peer_id: bytes) -> bytes:
    """The zmq routing id of a member's DEALERs: ``b"N"`` and its peer id.

    >>> routing_id(bytes(32))[:2]
    b'N\\x00'
    """
    return b"N" + peer_id


def encode_clock_note(clock: int) -> LogRecord:
    """The durable log note for a :class:`Reserve` of ``clock``.

    >>> decode_clock_note(encode_clock_note(1000))
    1000
    """
    return LogRecord.note(CLOCK_NOTE, clock.to_bytes(8, "big"))


def decode_clock_note(record: LogRecord) -> int | None:
    """The clock a log record reserves, or ``None`` if it is not a clock note."""
    if record.kind is not RecordKind.NOTE or record.name != CLOCK_NOTE or len(record.data) != 8:
        return None
    return int.from_bytes(record.data, "big")


def read_session(records: Iterable[LogRecord]) -> tuple[GameSpec, dict[PeerId, str]] | None:
    """The game spec and endpoints a node noted in its log, or ``None`` if it noted none.

    Raises:
        InvalidRulesError: the spec note is not a valid spec.
    """
    spec: GameSpec | None = None
    endpoints: dict[PeerId, str] = {}
    for record in records:
        if record.kind is not RecordKind.NOTE:
            continue
        if record.name == SPEC_NOTE and spec is None:
            spec = GameSpec.from_wire(record.data)
        elif record.name == ENDPOINTS_NOTE and not endpoints:
            try:
                raw = msgpack.unpackb(record.data, raw=False)
                endpoints = {PeerId(bytes(k)): str(v) for k, v in dict(raw).items()}
            except Exception:
                endpoints = {}
    return None if spec is None else (spec, endpoints)


class _Outlet:
    """One DEALER and what waits to go through it (see the module docstring, *the mesh*).

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


def recovery_unfinished(records: Iterable[LogRecord]) -> bool:
    """Whether the log's latest recovery note is :data:`RECOVERING_NOTE`: a recovery began and
    the process stopped before it ended (so the log may still lack events we sent)."""
    state = False
    for record in records:
        if record.kind is RecordKind.NOTE and record.name in (RECOVERING_NOTE, RECOVERED_NOTE):
            state = record.name == RECOVERING_NOTE
    return state


def _event_wires(records: Iterable[LogRecord]) -> list[bytes]:
    kinds = (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT)
    return [r.data for r in records if r.kind in kinds]


class PeerNode:
    """One peer on real sockets; see the module docstring.

    Typical use binds first (so the endpoints of every member can be gathered), then runs::

        node = PeerNode(identity, spec, "game.log", strategy="greedy")
        endpoint = node.bind()
        ...  # learn the other members' endpoints
        peer = await node.run(endpoints)

    Args:
        identity: this peer's key; it must be in ``spec``'s roster.
        spec: the game agreed in the lobby.
        log_path: the log file; created if missing, continued (restart) if it holds events.
        bind: the ROUTER's endpoint (port 0 for an ephemeral one).
        strategy: a bot strategy name (see :func:`~p2p_nertz.bots.make_strategy`), or ``None``
            for no bot (moves only through :meth:`play`).
        speed: the bot's pacing level, 1 to 10.
        practice: the bot waits for the slowest other player: it makes a move only while it
            has made no more moves this round than every other playing seat
            (:func:`~p2p_nertz.bots.keeps_pace`), so that a person learning the keys sets the
            pace (``nertz play --practice``).
        hold_ready: sign the ``ready`` of round 2 and later only when :meth:`release_ready`
            says so (a person reading the last round's board: ``Peer.ready_through``).
        seed: the bot's randomness; by default derived from the peer id.
        config: the peer core's timers and limits; by default :data:`NODE_CONFIG`.
        clock: the time source passed to the peer as ``now``, in seconds.
        on_notice: called, in order, with every effect that is not a Send, Record, Reserve or Note
            (notices, rejections, suspicions). It runs with the peer locked: it may read the
            peer but must not call into it.
        linger: seconds to keep answering after the node is done, before closing.
        grace: seconds after the game is over to wait for every member to hold our events.
        ctx: a zmq context to use (the caller terminates it); by default the node makes its own
            and terminates it when :meth:`run` returns.
        watchers: endpoints of spectators (``nertz watch``): the node connects a DEALER to each
            and pushes it the game spec (:data:`WATCH_SPEC_TAG`), then every message it
            receives and every one it broadcasts (its own events once durable, and beats).
            A spectator is not in the roster; it verifies the members' signatures itself.
        recover: restore the peer in recovery even if the log's tail is clean (a log that may
            have lost its end, say restored from a backup): it learns its own feed from the
            others before it signs (:meth:`Peer.restore`). A log whose tail had to be cut is
            always restored so.
        cut_damaged_tail: cut a damaged (not merely torn) tail of the log instead of refusing
            it (:func:`~p2p_nertz.logfile.store.open_for_append`); the peer then recovers.
        budget: how many messages each member's connection may send us (a token bucket,
            :mod:`p2p_nertz.runtime.guard`); frames from routing ids of no member are dropped
            unread whatever the budget.

    Raises:
        ValueError: an unknown strategy or a bad speed.
    """

    def __init__(
        self,
        identity: Identity,
        spec: GameSpec,
        log_path: str | os.PathLike[str],
        *,
        bind: str = DEFAULT_BIND,
        strategy: str | None = None,
        speed: int = 10,
        practice: bool = False,
        hold_ready: bool = False,
        seed: int | bytes | None = None,
        config: PeerConfig | None = None,
        clock: Clock = trio.current_time,
        on_notice: NoticeCallback | None = None,
        linger: float = 1.0,
        grace: float = 10.0,
        ctx: zmq.Context[zmq.Socket[bytes]] | None = None,
        watchers: Sequence[str] = (),
        recover: bool = False,
        cut_damaged_tail: bool = False,
        budget: SenderBudget | None = None,
    ) -> None:
        self.identity = identity
        self.spec = spec
        self.log_path = Path(log_path)
        self._bind_to = bind
        pacing = Pacing(speed)
        self._hold_ready = hold_ready
        rng_seed = seed if seed is not None else derive_seed(b"node-bot", identity.peer_id)
        self._rng = Rng(rng_seed)
        self._bot = (
            None
            if strategy is None
            else BotDriver(make_strategy(strategy, self._rng.fork(0)), pacing, practice=practice)
        )
        self._config = config if config is not None else NODE_CONFIG
        self._clock = clock
        self._on_notice = on_notice
        self._listeners: list[NoticeCallback] = []
        self._linger = linger
        self._grace = grace
        self._own_ctx = ctx is None
        self._ctx: zmq.Context[zmq.Socket[bytes]] | None = ctx
        self._router: AsyncSocket | None = None
        self._peer: Peer | None = None
        self._writer: LogWriter | None = None
        self._outlets: dict[PeerId, _Outlet] = {}
        self._watch_to = tuple(watchers)
        self._watch_outlets: list[_Outlet] = []
        self._watch_sockets: list[AsyncSocket] = []
        self._lock = trio.Lock()
        self._wake = trio.Event()
        # When the timer task wakes by itself: +inf while it waits for input only, -inf while
        # it runs (it reads the next deadline again before it waits).
        self._timer_at = -math.inf
        self._done = trio.Event()
        self._over_at: float | None = None  # when the game ended, or we left
        self._provisional_since: float | None = None  # when it ended on a provisional result
        self.provisional_wait = 3 * self._config.drop_after
        """How long a game ended on a provisional result (an abandon the other member may not
        agree with yet) waits for that member to come back before the node stops."""
        self._leaving = False
        self._left_at: float | None = None  # when we left (the wait is LEAVE_GRACE at most)
        self._ran = False
        self._recover = recover
        self._cut_damaged_tail = cut_damaged_tail
        self.restored = False
        """Whether :meth:`run` rebuilt the peer from an existing log."""
        self.recovery: Recovery | None = None
        """What reopening the log found (once :meth:`run` has opened it)."""
        self.dropped = 0
        """Messages dropped because a member's send queue was full."""
        self.guard = InboundGuard(
            (routing_id(pid) for pid in spec.peer_ids if pid != identity.peer_id), budget
        )
        """What the ROUTER lets through to the peer: members' connections, within a budget."""
        self.refusals = RefusalLog(log)
        """Every message refused (by the guard or the peer), counted by reason; logged at a
        bounded rate."""

    # -- introspection -------------------------------------------------------------------------
    @property
    def peer(self) -> Peer:
        """The peer core (once :meth:`run` has started it).

        Raises:
            RuntimeError: before :meth:`run` created it.
        """
        if self._peer is None:
            raise RuntimeError("the node has not started its peer yet")
        return self._peer

    @property
    def endpoint(self) -> str:
        """The ROUTER's resolved endpoint (after :meth:`bind`).

        Raises:
            RuntimeError: before :meth:`bind`.
        """
        if self._router is None:
            raise RuntimeError("the node is not bound yet")
        return self._router.endpoints[0]

    @property
    def clock(self) -> Clock:
        """The time source the peer is given as ``now`` (for a front end that compares with
        the peer's timers, e.g. :meth:`~p2p_nertz.protocol.peer.Peer.silent_for`)."""
        return self._clock

    @property
    def done(self) -> bool:
        """Whether the game is over (or we left) and every member holds our events (or
        ``grace`` ran out)."""
        return self._done.is_set()

    # -- lifecycle -----------------------------------------------------------------------------
    async def leave(self) -> None:
        """Leave the game cleanly: sign a ``leave``, then stop once the others hold it.

        :meth:`run` returns after every member holds our events (or ``grace`` seconds, and at
        most :data:`LEAVE_GRACE`, whatever the state of the game) and ``linger`` more. Use it
        for Ctrl-C and SIGTERM; cancelling :meth:`run` instead is a crash (the others suspect,
        then drop us, unless we restart from the log).

        Raises:
            RuntimeError: before :meth:`run` started the peer.
        """
        async with self._lock:
            peer = self.peer
            self._leaving = True
            if self._left_at is None:
                self._left_at = self._clock()
            await self._apply(peer.leave(self._clock()))

    async def play(self, move: Move) -> None:
        """Play a move of the local player (a human at the keyboard, or any caller).

        The move takes the same path as a bot's: the peer signs it, and its effects (log
        first, then the sends) are applied before this returns.

        Raises:
            IllegalMoveError: the move is illegal now; nothing changes.
            LocalProtocolError: the round is not in play, the pile is frozen by a claim in the
                air, or we have left the game.
            RuntimeError: before :meth:`run` started the peer.
        """
        async with self._lock:
            peer = self.peer
            if self._leaving:
                raise LocalProtocolError(f"{move}: we have left the game")
            await self._apply(peer.play(move, self._clock()))

    def add_listener(self, callback: NoticeCallback) -> None:
        """Call ``callback`` too with every notice effect, after ``on_notice`` (same rules:
        it runs with the peer locked and may read it but must not call into it)."""
        self._listeners.append(callback)

    async def abandon(self) -> None:
        """End a game of two whose other member has gone (:meth:`Peer.abandon`).

        A node playing with a bot does this by itself once it may.

        Raises:
            LocalProtocolError: the game does not allow it now (the message says why).
            RuntimeError: before :meth:`run` started the peer.
        """
        async with self._lock:
            await self._apply(self.peer.abandon(self._clock()))

    async def release_ready(self, number: int) -> None:
        """Sign our ``ready`` of round ``number`` now (with ``hold_ready``: the player closed
        the last round's board, or its countdown ended).

        Raises:
            RuntimeError: before :meth:`run` started the peer.
        """
        async with self._lock:
            await self._apply(self.peer.release_ready(number, self._clock()))

    def bind(self) -> str:
        """Create and bind the ROUTER (idempotent); return its resolved endpoint.

        Raises:
            TransportBrokenError: the endpoint cannot be bound (port in use, bad address).
        """
        if self._router is None:
            if self._ctx is None:
                self._ctx = zmq.Context()
            router = create_socket(
                self._ctx, zmq.ROUTER, recv_hwm=ROUTER_HWM, max_message_size=MAX_FRAME
            )
            try:
                router.bind(self._bind_to)
            except BaseException:
                router.close()
                raise
            self._router = router
        return self.endpoint

    async def run(
        self,
        endpoints: Mapping[PeerId, str],
        *,
        task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
    ) -> Peer:
        """Play the game until done (see the module docstring); return the peer.

        Binds first if :meth:`bind` was not called. Reports the ROUTER's endpoint through
        ``task_status`` once the peer has started. Always closes the sockets and the log.

        Args:
            endpoints: every other member's ROUTER endpoint (our own entry is ignored).
            task_status: for :meth:`trio.Nursery.start`.

        Raises:
            RuntimeError: when run a second time.
            KeyError: a member has no endpoint.
            LogFormatError: the log belongs to another game or peer, or is damaged.
            TransportBrokenError: a socket cannot be bound or connected.
        """
        if self._ran:
            raise RuntimeError("a PeerNode runs once; make a new one to restart")
        self._ran = True
        own = self.identity.peer_id
        dealers: dict[PeerId, AsyncSocket] = {}
        try:
            self.bind()
            assert self._ctx is not None and self._router is not None
            for pid in self.spec.peer_ids:
                if pid != own:
                    dealer = create_socket(
                        self._ctx, zmq.DEALER, identity=routing_id(own), max_message_size=MAX_FRAME
                    )
                    dealers[pid] = dealer
                    dealer.connect(endpoints[pid])
            for endpoint in self._watch_to:
                # (A spectator sends us nothing: the bound only caps what a stranger could.)
                watcher = create_socket(
                    self._ctx, zmq.DEALER, identity=routing_id(own), max_message_size=MAX_FRAME
                )
                self._watch_sockets.append(watcher)
                watcher.connect(endpoint)
            header = LogHeader(
                game_id=self.spec.game_id,
                peer_id=bytes(own),
                created_at_ms=int(wall_time() * 1000),
            )
            self._writer, recovery = open_for_append(
                self.log_path,
                create_with=header,
                cut_damaged_tail=self._cut_damaged_tail,
                cut_note=RECOVERING_NOTE,  # (durable before the cut: a crash keeps it)
            )
            self.recovery = recovery
            if not recovery.records:
                await self._write(self._session_notes(endpoints))
            elif not recovery.cut and self._recover and not recovery_unfinished(recovery.records):
                await self._write([LogRecord.note(RECOVERING_NOTE)])
            effects = self._make_peer(recovery)
            async with trio.open_nursery() as nursery:
                for pid, dealer in dealers.items():
                    self._outlets[pid] = outlet = self._outlet(dealer)
                    nursery.start_soon(outlet.run)
                for watcher in self._watch_sockets:
                    outlet = self._outlet(watcher)
                    # First the game itself, so a spectator needs no spec file.
                    outlet.post(WATCH_SPEC_TAG + self.spec.to_wire())
                    self._watch_outlets.append(outlet)
                    nursery.start_soon(outlet.run)
                async with self._lock:
                    await self._apply(effects)
                nursery.start_soon(self._receive_loop, self._router)
                nursery.start_soon(self._timer_loop)
                if self._bot is not None:
                    nursery.start_soon(self._bot_loop)
                task_status.started(self.endpoint)
                await self._done.wait()
                await trio.sleep(self._linger)  # keep acking so the others can finish too
                nursery.cancel_scope.cancel()
            return self.peer
        finally:
            self._close(dealers)

    def _close(self, dealers: Mapping[PeerId, AsyncSocket]) -> None:
        self.refusals.flush(self._clock(), force=True)
        for dealer in (*dealers.values(), *self._watch_sockets):
            dealer.close()
        if self._router is not None:
            self._router.close()
        if self._writer is not None:
            self._writer.close()
        if self._own_ctx and self._ctx is not None:
            self._ctx.term()
            self._ctx = None

    def _session_notes(self, endpoints: Mapping[PeerId, str]) -> list[LogRecord]:
        own = self.identity.peer_id
        book = {
            bytes(pid): (self.endpoint if pid == own else endpoints[pid])
            for pid in self.spec.peer_ids
        }
        return [
            LogRecord.note(SPEC_NOTE, self.spec.to_wire()),
            LogRecord.note(ENDPOINTS_NOTE, msgpack.packb(book, use_bin_type=True)),
        ]

    def _make_peer(self, recovery: Recovery) -> list[Effect]:
        now = self._clock()
        wires = _event_wires(recovery.records)
        recover = self._recover or recovery.cut or recovery_unfinished(recovery.records)
        if wires or recover:  # (a cut tail may have held our join: recover it too)
            reserved = max(
                (c for c in map(decode_clock_note, recovery.records) if c is not None), default=0
            )
            # A cut tail may have held an event we had sent: learn our feed before signing.
            self._peer, effects = Peer.restore(
                self.identity,
                self.spec,
                wires,
                now,
                self._config,
                reserved=reserved,
                recover=recover,
            )
            self.restored = True
            log.info("rebuilt from %s: %d events", self.log_path, len(wires))
            return effects
        self._peer = Peer(self.identity, self.spec, now, self._config)
        if self._hold_ready:
            self._peer.ready_through = 1  # (a restored peer signs what it had: no board up)
        return self._peer.start(now)

    # -- effects -------------------------------------------------------------------------------
    async def _apply(self, effects: list[Effect]) -> None:
        """Carry out the peer's effects in order; the caller holds the lock."""
        durable: list[LogRecord] = []
        watched: list[bytes] = []
        for effect in effects:
            if isinstance(effect, Record):
                wire = effect.data
                if self._watch_outlets:
                    watched.append(wire)
                durable.append(
                    LogRecord.sent_event(wire) if effect.own else LogRecord.received_event(wire)
                )
            elif isinstance(effect, Reserve):
                durable.append(encode_clock_note(effect.clock))
            elif isinstance(effect, Note):
                durable.append(LogRecord.note(effect.name, effect.data))  # a proof, say
            elif isinstance(effect, Recovered):
                # Durable before anything we sign after it (a restart no longer recovers).
                data = effect.first.to_bytes(8, "big") + effect.head.to_bytes(8, "big")
                durable.append(LogRecord.note(RECOVERED_NOTE, data))
                self._notify(effect)
            elif isinstance(effect, Send):
                if durable:
                    await self._write(durable)
                    durable = []
                self._send(effect)
                if effect.to is None and self._watch_outlets:
                    watched.append(effect.data)  # our beats tell a spectator what is final
            else:
                if isinstance(effect, Rejected):
                    # Counted; logged at a bounded rate (a flood is not a line per message).
                    self.refusals.refused(effect.reason, effect.detail, self._clock())
                elif isinstance(effect, Suspected):
                    heard = "is silent" if effect.suspected else "is heard again"
                    log.info("seat %d %s", effect.seat, heard)
                else:
                    log.debug("%s", effect)
                self._notify(effect)
        if durable:
            await self._write(durable)
        self._watch(watched)  # durable by now, like everything we send
        due = self.peer.next_deadline()
        if due is not None and due < self._timer_at:
            # Only when the peer wants a tick sooner than the timer will wake: after most
            # inputs the next deadline moves later (heard from, sent to), and a task step
            # for nothing is ~0.1 ms on a woken process, on every message received.
            self._wake.set()
        self._check_done()

    def _notify(self, effect: Effect) -> None:
        if self._on_notice is not None:
            self._on_notice(effect)
        for listener in self._listeners:
            listener(effect)

    def _watch(self, wires: Iterable[bytes]) -> None:
        """Push messages to the spectators (dropped, never waited on, when one is slow)."""
        for wire in wires:
            for outlet in self._watch_outlets:
                outlet.post(wire)

    async def _write(self, records: list[LogRecord]) -> None:
        writer = self._writer
        assert writer is not None
        if all(r.kind is RecordKind.RECEIVED_EVENT for r in records):
            # Only others' events, each held signed by its author (who synced it before
            # sending): written at once, without waiting for the disk or a thread, so the
            # receive path (and the acks that make claims final) never stalls on a sync.
            # They survive our process being killed; a machine crash may lose them, and
            # gap repair fetches them again (docs/protocol.md, restart from the log).
            writer.append_many(records, sync=False)
            return
        # Our own events and clock notes: durable before anything after them is sent. Synced
        # on the trio thread, blocking it for the sync (~0.9 ms here): the caller holds the
        # node's lock, so every other task that has work to do waits for it anyway, and a
        # worker thread's two hand-offs cost a claim ~0.5 ms more between being signed and
        # being sent (scripts/bench_lan.py, 2 peers), more on a busy machine. A write that
        # started completes (or fails) before a cancellation is seen.
        writer.append_many(records)
        await trio.lowlevel.checkpoint()

    def _send(self, effect: Send) -> None:
        if effect.to is not None:
            targets: Iterable[PeerId] = (effect.to,)
        else:
            targets = self._outlets.keys()
        for pid in targets:
            outlet = self._outlets.get(pid)
            if outlet is None:
                continue  # ourselves, or not a member
            if not outlet.post(effect.data):
                self.dropped += 1
        if effect.to is None:
            _yield_cpu()

    def _outlet(self, dealer: AsyncSocket) -> _Outlet:
        """The outlet of a DEALER (a hook for instrumentation: ``scripts/bench_lan.py``)."""
        return _Outlet(dealer)

    def _check_done(self) -> None:
        peer = self.peer
        if self._done.is_set():
            return
        now = self._clock()
        if peer.final.phase is Phase.OVER and peer.provisional and not self._leaving:
            # An abandoned game whose result the other member may not share yet (it may have
            # seen one round more or less scored, docs/protocol.md §9.3): wait a while for it
            # to come back and settle it, then stop with the result marked provisional.
            if self._provisional_since is None:
                self._provisional_since = now
            if now - self._provisional_since < self.provisional_wait:
                return
        # (Silence first: after anything arrived, reading the tentative fold rebuilds it.)
        if peer.silent_for(now) >= peer.config.drop_after and peer.tentative.phase is Phase.OVER:
            # Every event of the game is here and nobody has been heard for the drop timeout
            # (a restart after everyone else went home): the others' acks, which finality
            # needs, will not come. Nothing is lost: the log holds the whole game.
            self._done.set()
            return
        if peer.final.phase is not Phase.OVER and not self._leaving:
            return
        if self._leaving and peer.recovering:
            self._done.set()  # it signed nothing (Peer.leave): nobody needs to hold anything
            return
        if self._over_at is None:
            self._over_at = now
        own = peer.events(peer.seat)
        if not own or own[-1].lamport <= peer.stable or now - self._over_at >= self._grace:
            self._done.set()
        elif self._left_at is not None and now - self._left_at >= min(self._grace, LEAVE_GRACE):
            # Leaving, and the others do not all hold our leave yet: frozen members, or gone.
            log.info("left without every member holding our leave (it is in our log)")
            self._done.set()

    # -- tasks ---------------------------------------------------------------------------------
    async def _receive_loop(self, router: AsyncSocket) -> None:
        # Events before beats: a claim queued behind the others' acks is delivered, and acked,
        # before their signatures are checked (at 8 peers a claim's receiver often has six
        # acks ahead of it, ~0.3 ms each). Beats wait in ``beats``, in order, and are fed
        # BEAT_CHUNK at a time, with the socket looked at again in between; the socket is
        # only read while fewer than MAX_BURST wait, so its HWM still bounds what is held.
        beats: collections.deque[bytes] = collections.deque()
        while True:
            if beats:
                await trio.lowlevel.checkpoint()  # the bot and the timers get their turn
                first = router.try_recv_multipart()
                batch = [] if first is None else [first]
            else:
                batch = [await router.recv_multipart()]
            while len(batch) + len(beats) < MAX_BURST:
                more = router.try_recv_multipart()
                if more is None:
                    break
                batch.append(more)
            messages = self._admit(batch)
            self._watch(messages)  # the others' beats and events, for the spectators
            events: list[bytes] = []
            for message in messages:
                (beats if looks_like_beat(message) else events).append(message)
            if not events and not beats:
                continue
            try:
                # The lock is free unless a move or a tick is being applied: take it without
                # a trip through the scheduler (the recv above was this task's checkpoint).
                self._lock.acquire_nowait()
            except trio.WouldBlock:
                await self._lock.acquire()
            try:
                if events:
                    await self._apply(self.peer.feed_many(events, self._clock()))
                if beats:
                    chunk = [beats.popleft() for _ in range(min(BEAT_CHUNK, len(beats)))]
                    await self._apply(self.peer.feed_many(chunk, self._clock()))
            finally:
                self._lock.release()

    def _admit(self, batch: Sequence[list[bytes]]) -> list[bytes]:
        """The messages of ``batch`` that the guard lets through to the peer; the others are
        counted and noted for the log (``frames`` is ``[routing id, message]``)."""
        guard = self.guard
        now = self._clock()
        before = guard.counts.copy()
        messages = []
        for frames in batch:
            message = guard.admit(frames, now)
            if message is not None:
                messages.append(message)
        if len(messages) < len(batch):
            for reason, n in (guard.counts - before).items():
                self.refusals.refused(reason, _GUARD_DETAILS[reason], now, n)
        return messages

    async def _timer_loop(self) -> None:
        last_due: float | None = None
        while True:
            self._wake = trio.Event()
            deadline = self.peer.next_deadline()
            if deadline is None:
                self._timer_at = math.inf
                await self._wake.wait()
                self._timer_at = -math.inf
                continue
            now = self._clock()
            delay = deadline - now
            if deadline == last_due:
                delay = max(delay, _MIN_WAIT)  # a tick left this deadline due: do not spin
            if delay > 0:
                self._timer_at = now + delay
                with trio.move_on_after(delay):
                    await self._wake.wait()
                self._timer_at = -math.inf
                if self._wake.is_set():
                    continue  # an input made a tick due sooner
                deadline = self.peer.next_deadline()
                if deadline is None or deadline > self._clock():
                    continue  # inputs since moved it later (they do not wake us for that)
            last_due = deadline
            async with self._lock:
                await self._apply(self.peer.tick(self._clock()))
                self.refusals.flush(self._clock())  # the last summary of a flood that ended
                if self._bot is not None and not self._leaving:
                    abandoned = self._bot.abandon(self.peer, self._clock())
                    if abandoned is not None:
                        await self._apply(abandoned)
                self._check_done()

    async def _bot_loop(self) -> None:
        bot = self._bot
        assert bot is not None
        while True:
            await trio.sleep(bot.delay(self._rng))
            async with self._lock:
                if self._leaving:
                    return
                peer = self.peer
                move = bot.choose(peer)
                if move is None:
                    continue
                effects = bot.play(peer, move, self._clock())
                if effects is not None:
                    await self._apply(effects)


async def serve_peer(
    identity: Identity,
    spec: GameSpec,
    endpoints: Mapping[PeerId, str],
    bind: str,
    log_path: str | os.PathLike[str],
    *,
    strategy: str | None = None,
    speed: int = 10,
    config: PeerConfig | None = None,
    clock: Clock = trio.current_time,
    on_notice: NoticeCallback | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> Peer:
    """Run one peer node until its game is done; return the peer (see :class:`PeerNode`).

    Args:
        identity: this peer's key.
        spec: the game.
        endpoints: every member's ROUTER endpoint (ours is ignored; we bind ``bind``).
        bind: our ROUTER's endpoint.
        log_path: the log file (continued if it holds events: a restart).
        strategy: a bot strategy name, or ``None``.
        speed: the bot's pacing, 1 to 10.
        config: the peer core's timers and limits.
        clock: the time source.
        on_notice: called with every notice effect.
        task_status: reports the bound endpoint to :meth:`trio.Nursery.start`.
    """
    node = PeerNode(
        identity,
        spec,
        log_path,
        bind=bind,
        strategy=strategy,
        speed=speed,
        config=config,
        clock=clock,
        on_notice=on_notice,
    )
    return await node.run(endpoints, task_status=task_status)
