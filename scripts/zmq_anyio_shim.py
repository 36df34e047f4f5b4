"""The API of ``p2p_nertz.runtime.zmqtrio`` on top of zmq-anyio, for comparing the two (issue 18).

Only for ``scripts/bench_transport.py``: it runs the adapter's conformance suite
(``tests/test_zmqtrio.py``, with ``NERTZ_ZMQTRIO_IMPL=zmq_anyio``) and the same-run round trip
and throughput figures against this shim. It is as thin as the two APIs allow: zmq-anyio
(``zmq_anyio.Socket``, 0.4.x) gives a socket whose ``arecv_multipart`` and ``asend_multipart``
return AnyIO futures, served by a task the socket starts in its own task group; this module
adds the parts of our contract that zmq-anyio does not have (one task per direction, the
errors of :mod:`p2p_nertz.errors`, ``try_*`` calls, ``inproc://`` refused, the socket options
of :func:`p2p_nertz.runtime.zmqtrio.create_socket`). Where zmq-anyio's behaviour differs from
the contract (cancellation, closing), the shim does not hide it: the suite reports it.

It needs the ``bench`` extra (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import trio
import zmq
import zmq_anyio

from p2p_nertz.errors import TransportBrokenError, TransportClosedError
from p2p_nertz.runtime.zmqtrio import (
    DEFAULT_HWM,
    DEFAULT_MAX_MESSAGE_SIZE,
    HEARTBEAT_IVL_MS,
    HEARTBEAT_TIMEOUT_MS,
    RECONNECT_IVL_MAX_MS,
    RECONNECT_IVL_MS,
    tcp_port,
)

__all__ = [
    "DEFAULT_HWM",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "AsyncSocket",
    "SocketStatistics",
    "create_socket",
    "open_dealer",
    "open_router",
    "tcp_port",
]

_KINDS = {zmq.ROUTER: "ROUTER", zmq.DEALER: "DEALER"}


@dataclass(frozen=True, slots=True)
class SocketStatistics:
    """The fields of ``zmqtrio.SocketStatistics``; zmq-anyio has no safety timeout (0 both)."""

    sending: bool
    receiving: bool
    fd_watched: bool
    safety_timeouts: int
    lost_edges: int


class _OneTask:
    def __init__(self, message: str) -> None:
        self.busy = False
        self._message = message

    def check(self) -> None:
        if self.busy:
            raise trio.BusyResourceError(self._message)

    def __enter__(self) -> None:
        self.check()
        self.busy = True

    def __exit__(self, *exc_info: object) -> None:
        self.busy = False


class AsyncSocket:
    """A zmq-anyio socket behind the methods of ``zmqtrio.AsyncSocket``."""

    def __init__(self, zsock: Any) -> None:
        self._sock = zsock  # a zmq_anyio.Socket (a zmq.Socket subclass: options work as usual)
        self._kind = _KINDS[zsock.get(zmq.TYPE)]
        self._endpoints: list[str] = []
        self._closed = False
        self._send_guard = _OneTask("another task is already sending on this socket")
        self._recv_guard = _OneTask("another task is already receiving on this socket")

    def __repr__(self) -> str:
        where = " ".join(self._endpoints) or "unbound"
        return f"<zmq-anyio {self._kind} {where} {'closed' if self._closed else 'open'}>"

    async def __aenter__(self) -> AsyncSocket:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def endpoints(self) -> tuple[str, ...]:
        return tuple(self._endpoints)

    @property
    def port(self) -> int:
        return tcp_port(self._endpoints[0])

    def statistics(self) -> SocketStatistics:
        waiting = self._send_guard.busy or self._recv_guard.busy
        return SocketStatistics(
            sending=self._send_guard.busy,
            receiving=self._recv_guard.busy,
            fd_watched=waiting,
            safety_timeouts=0,
            lost_edges=0,
        )

    def bind(self, endpoint: str) -> str:
        return self._attach("bind", endpoint)

    def connect(self, endpoint: str) -> str:
        return self._attach("connect", endpoint)

    def _attach(self, how: str, endpoint: str) -> str:
        if endpoint.startswith("inproc://"):
            raise ValueError(f"inproc:// endpoints are not supported: {endpoint!r}")
        self._check_open()
        try:
            getattr(self._sock, how)(endpoint)
        except zmq.ZMQError as exc:
            raise TransportBrokenError(f"cannot {how} {endpoint}: {exc.strerror}") from exc
        resolved: str = self._sock.get_string(zmq.LAST_ENDPOINT)
        self._endpoints.append(resolved)
        return resolved

    def _check_open(self) -> None:
        if self._closed or self._sock.closed:
            raise TransportClosedError(f"{self!r} is closed")

    def _translate(self, exc: zmq.ZMQError, action: str) -> Exception:
        if exc.errno in (zmq.ENOTSOCK, zmq.ETERM):
            return TransportClosedError(f"cannot {action} on {self!r}: {exc.strerror}")
        if exc.errno == zmq.EHOSTUNREACH:
            return TransportBrokenError(f"cannot {action}: no connected peer has that routing id")
        return TransportBrokenError(f"cannot {action} on {self!r}: {exc.strerror}")

    async def _await(self, future: Any, action: str) -> Any:
        try:
            return await future
        except anyio.FutureCancelled as exc:  # zmq-anyio cancels what waits when it closes
            raise TransportClosedError(f"{self!r} is closed") from exc
        except anyio.FutureFailed as exc:  # zmq-anyio's wrapper of the ZMQError
            cause = exc.__cause__
            if isinstance(cause, zmq.ZMQError):
                raise self._translate(cause, action) from cause
            raise
        except trio.Cancelled:
            future.cancel()  # zmq-anyio's own way to withdraw a pending request
            raise

    async def send_multipart(self, frames: Sequence[bytes]) -> None:
        if not frames:
            raise ValueError("a message needs at least one frame")
        with self._send_guard:
            self._check_open()
            await self._await(self._sock.asend_multipart(list(frames)), "send")

    async def recv_multipart(self) -> list[bytes]:
        with self._recv_guard:
            self._check_open()
            result: list[bytes] = await self._await(self._sock.arecv_multipart(), "receive")
            return result

    def try_send_multipart(self, frames: Sequence[bytes]) -> bool:
        if not frames:
            raise ValueError("a message needs at least one frame")
        self._send_guard.check()
        self._check_open()
        try:
            # The plain pyzmq socket: zmq-anyio's own send_multipart queues a task and
            # reports nothing, so it cannot say "no room".
            self._sock._shadow_sock.send_multipart(list(frames), flags=zmq.NOBLOCK)
        except zmq.Again:
            return False
        except zmq.ZMQError as exc:
            raise self._translate(exc, "send") from exc
        return True

    def try_recv_multipart(self) -> list[bytes] | None:
        self._recv_guard.check()
        self._check_open()
        try:
            frames: list[bytes] = self._sock._shadow_sock.recv_multipart(flags=zmq.NOBLOCK)
        except zmq.Again:
            return None
        except zmq.ZMQError as exc:
            raise self._translate(exc, "receive") from exc
        return frames

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._sock.close(linger=0)

    async def aclose(self) -> None:
        # zmq-anyio's close(): cancels the futures that wait, wakes its event task (which
        # leaves at its socket's async-with exit, in open_router/open_dealer: its task group
        # must be left in the task and scope it was entered in).
        self.close()
        await trio.lowlevel.checkpoint()


def create_socket(
    ctx: zmq.Context[Any],
    socket_type: int,
    *,
    hwm: int = DEFAULT_HWM,
    identity: bytes | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    recv_hwm: int | None = None,
) -> AsyncSocket:
    """As ``zmqtrio.create_socket``, with the same options and checks."""
    if socket_type not in _KINDS:
        raise ValueError(f"only zmq.ROUTER and zmq.DEALER are supported, not {socket_type}")
    recv_hwm = hwm if recv_hwm is None else recv_hwm
    if hwm < 1 or recv_hwm < 1:
        raise ValueError(f"hwm must be at least 1 message: {hwm}, {recv_hwm}")
    if max_message_size < 1:
        raise ValueError(f"max_message_size must be at least 1 byte: {max_message_size}")
    if identity is not None and not (0 < len(identity) < 256 and identity[0] != 0):
        raise ValueError(f"a routing id is 1 to 255 bytes, not starting with 0: {identity!r}")
    zsock = zmq_anyio.Socket(ctx, socket_type)
    zsock.set(zmq.LINGER, 0)
    zsock.set(zmq.SNDHWM, hwm)
    zsock.set(zmq.RCVHWM, recv_hwm)
    zsock.set(zmq.MAXMSGSIZE, max_message_size)
    zsock.set(zmq.RECONNECT_IVL, RECONNECT_IVL_MS)
    zsock.set(zmq.RECONNECT_IVL_MAX, RECONNECT_IVL_MAX_MS)
    zsock.set(zmq.HEARTBEAT_IVL, HEARTBEAT_IVL_MS)
    zsock.set(zmq.HEARTBEAT_TIMEOUT, HEARTBEAT_TIMEOUT_MS)
    if socket_type == zmq.ROUTER:
        zsock.set(zmq.ROUTER_HANDOVER, 1)
        zsock.set(zmq.ROUTER_MANDATORY, 1)
    if identity is not None:
        zsock.set(zmq.ROUTING_ID, identity)
    return AsyncSocket(zsock)


@asynccontextmanager
async def open_router(
    ctx: zmq.Context[Any],
    bind: str = "tcp://127.0.0.1:0",
    *,
    hwm: int = DEFAULT_HWM,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> AsyncIterator[AsyncSocket]:
    """As ``zmqtrio.open_router``."""
    router = create_socket(ctx, zmq.ROUTER, hwm=hwm, max_message_size=max_message_size)
    try:
        router.bind(bind)
        async with router._sock:  # zmq-anyio's task group, its event task
            yield router
    finally:
        router.close()


@asynccontextmanager
async def open_dealer(
    ctx: zmq.Context[Any],
    connect: str,
    *,
    identity: bytes | None = None,
    hwm: int = DEFAULT_HWM,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> AsyncIterator[AsyncSocket]:
    """As ``zmqtrio.open_dealer``."""
    dealer = create_socket(
        ctx, zmq.DEALER, hwm=hwm, identity=identity, max_message_size=max_message_size
    )
    try:
        dealer.connect(connect)
        async with dealer._sock:
            yield dealer
    finally:
        dealer.close()
