"""One lobby connection on trio: the preamble, then length-prefixed frames (docs/lobby.md §3).

The bytes are :mod:`p2p_nertz.lobby.framing`'s; this module only moves them. A :class:`Link`
reads at most what the frame under way still needs (with a floor of a few KiB, never more
than :data:`READ_MAX`), so what one connection can make its reader hold is bounded by one
frame, whatever the other side sends; it writes one frame at a time under a deadline, so a
side that stops reading costs its writer that deadline, not a task for ever.

:func:`open_link` connects to a lobby endpoint (``tcp://IPv4:port``, what a host's
:class:`~p2p_nertz.runtime.lobby.LobbyHost` reports and a beacon's address and port make) and
reads the host's challenge, its first frame (docs/lobby.md §3).

A link's time limits (a frame to complete, a frame to send) count only while the process
listens, when its owner says since when it has (``listening``: the host's, fed by its ticks,
:class:`~p2p_nertz.protocol.listening.Listening`): a host stopped past them (``SIGSTOP``
longer than a guest's patience) read, on waking, the half of a frame it had, found its limit
passed and reset the connection with the rest unread, the guest's message lost; and a send
under way when it stopped was cut in the middle of its frame (session 37). Woken, it counts
each limit again from when it listens, and completes or sends the frame.
"""

from __future__ import annotations

import ipaddress
import math
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Final

import trio

from p2p_nertz.errors import TransportBrokenError
from p2p_nertz.lobby.framing import PREAMBLE, FrameReader, frame, read_challenge
from p2p_nertz.lobby.limits import TokenBuckets
from p2p_nertz.protocol.identity import PeerId

__all__ = ["READ_MAX", "FrameCut", "Link", "Listened", "open_link", "split_endpoint"]

READ_MAX: Final = 65536
"""Most bytes one read of a lobby connection takes."""
_READ_MIN: Final = 4096


def split_endpoint(endpoint: str) -> tuple[str, int]:
    """The IPv4 address and port of a lobby endpoint ``tcp://IPv4:port``.

    >>> split_endpoint("tcp://127.0.0.1:5670")
    ('127.0.0.1', 5670)

    Raises:
        ValueError: anything else.
    """
    host, _, port = endpoint.removeprefix("tcp://").rpartition(":")
    try:
        if not endpoint.startswith("tcp://"):
            raise ValueError
        address = str(ipaddress.IPv4Address(host))
        number = int(port)
    except ValueError:
        raise ValueError(f"a lobby endpoint is tcp://IPv4:port, not {endpoint!r}") from None
    if not 1 <= number <= 65535:
        raise ValueError(f"not a TCP port: {number}")
    return address, number


class Link:
    """A lobby connection: :meth:`greet` (send the preamble), :meth:`send` and :meth:`receive`
    frames, :meth:`finish`. Sends are serialised (two tasks may send on one link).

    The host keeps a little about each link: :attr:`key`, the key whose signed message it
    carried first (``None`` until then), :attr:`taken`, when the table last took a message
    from it, and :attr:`opened`. Both sides know the link's :attr:`challenge`, the host's.
    """

    def __init__(
        self, stream: trio.SocketStream, *, opened: float = 0.0, challenge: bytes = b""
    ) -> None:
        self.stream = stream
        self.challenge = challenge
        """The host's challenge on this connection (a guest learns it in :func:`open_link`)."""
        self.reader = FrameReader()
        self.opened = opened
        self.taken = -math.inf
        self.key: PeerId | None = None
        self.scope = trio.CancelScope()
        """The scope of the task serving this link (the host cancels it to drop the link)."""
        self.outbox: trio.MemorySendChannel[bytes] | None = None
        """Where the host queues frames for this link's writer."""
        self.bucket = TokenBuckets(rate=1.0, burst=1, max_keys=1)
        """The host's rate for this link until it is bound to a key (the host sets it)."""
        self.label = self.peer.encode()
        """The other side's address, to count senders that have no key yet by."""
        self._ready: deque[bytes] = deque()
        self._sending = trio.Lock()

    @property
    def peer(self) -> str:
        """The other side's address and port."""
        try:
            address, port = self.stream.socket.getpeername()[:2]
        except OSError:
            return "?"
        return f"{address}:{port}"

    async def greet(self, *, timeout: float = math.inf, listening: Listened | None = None) -> None:
        """Send the preamble (each side sends it first), then, on the host's side (a link
        made with a :attr:`challenge`), the challenge as the first frame.

        Raises:
            TransportBrokenError: the connection broke, or took nothing in ``timeout``.
        """
        await self._send_bytes(
            PREAMBLE + (frame(self.challenge) if self.challenge else b""), timeout, listening
        )

    async def send(
        self, message: bytes, *, timeout: float = math.inf, listening: Listened | None = None
    ) -> None:
        """Send one frame within ``timeout`` seconds (of listening, with ``listening``: the
        module docstring).

        Raises:
            TransportBrokenError: the connection broke, or the other side did not take the
                frame in time (the link is then unusable: part of a frame may have left).
        """
        await self._send_bytes(frame(message), timeout, listening)

    async def _send_bytes(
        self, data: bytes, timeout: float, listening: Listened | None = None
    ) -> None:
        async with self._sending:
            with trio.CancelScope() as scope:
                if listening is None:
                    scope.deadline = trio.current_time() + timeout
                    await self._send_all(data)
                else:  # (a send is not cut and begun again: a watch moves its deadline)
                    broken: list[TransportBrokenError] = []
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(_cancel_past, scope, timeout, listening)
                        try:
                            await self._send_all(data)
                        except TransportBrokenError as exc:  # (raised as itself, not a group)
                            broken.append(exc)
                        nursery.cancel_scope.cancel()
                    if broken:
                        raise broken[0]
            if scope.cancelled_caught:
                raise TransportBrokenError(f"the other side took no frame for {timeout:g} s")

    async def _send_all(self, data: bytes) -> None:
        try:
            await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise TransportBrokenError(f"the lobby connection broke: {exc}") from None

    async def receive(self, *, idle: float = math.inf, listening: Listened | None = None) -> bytes:
        """The next frame; the preamble first is checked on the way.

        Args:
            idle: seconds (from now) within which a frame must be complete.
            listening: since when our process has listened without a break (module
                docstring): ``idle`` is counted from then where that is later.

        Raises:
            FramingError: the other side does not speak the lobby's stream (it is closed).
            FrameCut: the other side ended its stream in the middle of a frame.
            TransportBrokenError: the connection ended or broke, or ``idle`` passed.
        """
        start = trio.current_time()
        while True:
            with trio.move_on_at(_listened_from(start, listening) + idle):
                while not self._ready:
                    await self._read()
                return self._ready.popleft()
            if _listened_from(start, listening) + idle <= trio.current_time():
                raise TransportBrokenError(f"no complete frame in {idle:g} s")
            # (a stop of our own in between: the frame's read goes on, nothing of it lost)

    async def _read(self) -> None:
        try:
            data = await self.stream.receive_some(min(READ_MAX, max(self.reader.want, _READ_MIN)))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise TransportBrokenError(f"the lobby connection broke: {exc}") from None
        if not data and self.reader.pending:
            raise FrameCut(
                f"the other side closed the lobby connection {self.reader.pending} bytes into "
                "a frame (the part read is dropped: a guest asks again)"
            )
        if not data:
            raise TransportBrokenError("the other side closed the lobby connection")
        self._ready.extend(self.reader.feed(data))

    async def drain(self, seconds: float) -> None:
        """End our stream, then read and discard what the other side still sends until it
        closes, for ``seconds`` at most: a connection closed with bytes left unread is reset,
        and a reset may discard what we sent before it (the preamble that tells the other
        side our version)."""
        with (
            trio.move_on_after(seconds),
            suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError),
        ):
            await self.close_write()
            while await self.stream.receive_some(READ_MAX):
                pass

    async def close_write(self) -> None:
        """Say we send no more (the other side reads what we sent, then the end)."""
        async with self._sending:
            with suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                await self.stream.send_eof()


class FrameCut(TransportBrokenError):
    """The other side ended its stream in the middle of a frame (a guest that gave up while
    its ``hello`` was on the way): the part read is dropped."""


Listened = Callable[[], float]
"""Since when the process has listened without a break (trio's clock), asked now."""


def _listened_from(start: float, listening: Listened | None) -> float:
    """When a limit begun at ``start`` counts from: then, or since we listen again."""
    return start if listening is None else max(start, listening())


async def _cancel_past(scope: trio.CancelScope, seconds: float, listening: Listened) -> None:
    """Cancel ``scope`` once it has run ``seconds`` of our listening (module docstring)."""
    start = trio.current_time()
    while (due := _listened_from(start, listening) + seconds) > trio.current_time():
        await trio.sleep_until(due)
    scope.cancel()


@asynccontextmanager
async def open_link(endpoint: str) -> AsyncIterator[Link]:
    """Connect to the lobby at ``endpoint``, greet it and read its challenge (the link's
    :attr:`~Link.challenge`); the link is closed on exit.

    Raises:
        ValueError: ``endpoint`` is not ``tcp://IPv4:port``.
        TransportBrokenError: no connection (refused, unreachable, ...), or it ended before
            the challenge.
        FramingError: the other side is not a lobby of this stream's version (the message
            says what it is), or its first frame is no challenge.
    """
    host, port = split_endpoint(endpoint)
    try:
        stream = await trio.open_tcp_stream(host, port)
    except OSError as exc:
        raise TransportBrokenError(f"cannot connect to {endpoint}: {exc.strerror or exc}") from None
    async with stream:
        link = Link(stream, opened=trio.current_time())
        await link.greet()
        link.challenge = read_challenge(await link.receive())
        yield link
