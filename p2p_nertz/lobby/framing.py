"""The lobby's stream: length-prefixed frames on a plain TCP connection (docs/lobby.md §3).

The lobby is open to strangers, so its transport is the project's own, small and bounded, not
ZMTP (libzmq 4.3.5 lets a stranger abort the process, docs/protocol.md §13). Each side of a
connection first sends the :data:`PREAMBLE` (the magic ``NRTZLBY`` and the stream's version),
then frames::

    frame = length message        length: 4 bytes, big-endian, 1..MAX_MESSAGE

The host's first frame is its **challenge** for this connection, :data:`CHALLENGE_SIZE`
random bytes (:func:`read_challenge`): every message a guest signs on the connection carries
it, so a message captured on one connection is refused on any other (docs/lobby.md §3).

A :class:`FrameReader` is sans-I/O: it is fed the bytes as they come and returns the complete
frames; it never holds more than the preamble or one frame's header and
:data:`~p2p_nertz.lobby.messages.MAX_MESSAGE` bytes, whatever it is fed, and refuses a wrong
preamble, a frame of length 0 or one over the limit with :class:`FramingError` (the connection
is then closed: nothing after it can be framed).

>>> reader = FrameReader()
>>> wire = PREAMBLE + frame(b"hello") + frame(b"bye")
>>> reader.feed(wire[:10]), reader.feed(wire[10:])
([], [b'hello', b'bye'])
>>> FrameReader().feed(PREAMBLE + bytes(4))
Traceback (most recent call last):
...
p2p_nertz.lobby.framing.FramingError: a lobby frame holds 1 to 32768 bytes, not 0
"""

from __future__ import annotations

import struct
from typing import Final

from p2p_nertz.errors import RemoteProtocolError
from p2p_nertz.lobby.messages import CHALLENGE_SIZE, MAX_MESSAGE

__all__ = [
    "CHALLENGE_SIZE",
    "HEADER",
    "PREAMBLE",
    "STREAM_VERSION",
    "FrameReader",
    "FramingError",
    "frame",
    "read_challenge",
]

STREAM_VERSION: Final = 2
"""The version of the lobby's stream (the preamble's last byte). Version 2 (session 23) added
the host's challenge (the first frame); version 1 had none."""
PREAMBLE: Final = b"NRTZLBY" + bytes([STREAM_VERSION])
"""What each side sends first on a lobby connection."""
HEADER: Final = struct.Struct(">I")
"""A frame's length."""


class FramingError(RemoteProtocolError, ValueError):
    """The bytes on a lobby connection are not the lobby's stream; the connection is closed."""


def frame(message: bytes) -> bytes:
    """``message`` as a frame.

    Raises:
        ValueError: the message is empty or longer than the lobby's limit.
    """
    if not 1 <= len(message) <= MAX_MESSAGE:
        raise ValueError(f"a lobby frame holds 1 to {MAX_MESSAGE} bytes, not {len(message)}")
    return HEADER.pack(len(message)) + message


def read_challenge(message: bytes) -> bytes:
    """The host's challenge, from its first frame on a connection.

    >>> read_challenge(bytes(32)) == bytes(32)
    True

    Raises:
        FramingError: the frame is not a challenge (the connection is then closed).
    """
    if len(message) != CHALLENGE_SIZE:
        raise FramingError(
            f"the host's first frame is a {CHALLENGE_SIZE}-byte challenge, not {len(message)} bytes"
        )
    return message


class FrameReader:
    """Cut a lobby connection's bytes into frames; see the module docstring.

    After a :class:`FramingError` the reader is spent (every later :meth:`feed` raises it).
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._greeted = False
        self._error: FramingError | None = None
        self.frames = 0
        """Frames completed so far."""

    @property
    def pending(self) -> int:
        """Bytes held of an unfinished preamble or frame."""
        return len(self._buffer)

    @property
    def want(self) -> int:
        """Most bytes to read next: never more than the preamble or the frame under way needs
        (so a reader holds one frame at most, whatever the other side sends)."""
        if not self._greeted:
            return len(PREAMBLE) - len(self._buffer)
        if len(self._buffer) < HEADER.size:
            return HEADER.size - len(self._buffer)
        length: int = HEADER.unpack_from(self._buffer)[0]
        return HEADER.size + length - len(self._buffer)

    def feed(self, data: bytes) -> list[bytes]:
        """Take ``data``; return the frames it completed, in order.

        Raises:
            FramingError: a wrong preamble, or a frame's length 0 or over the limit.
        """
        if self._error is not None:
            raise self._error
        frames: list[bytes] = []
        view = memoryview(data)
        while view:
            take = min(self.want, len(view))
            self._buffer += view[:take]
            view = view[take:]
            try:
                done = self._step()
            except FramingError as exc:
                self._error = exc
                self._buffer.clear()
                raise
            if done is not None:
                frames.append(done)
        return frames

    def _step(self) -> bytes | None:
        if not self._greeted:
            if len(self._buffer) == len(PREAMBLE):
                _check_preamble(bytes(self._buffer))
                self._greeted = True
                self._buffer.clear()
            return None
        if len(self._buffer) == HEADER.size:
            (length,) = HEADER.unpack_from(self._buffer)
            if not 1 <= length <= MAX_MESSAGE:
                raise FramingError(f"a lobby frame holds 1 to {MAX_MESSAGE} bytes, not {length}")
            return None
        if len(self._buffer) > HEADER.size and self.want == 0:
            message = bytes(self._buffer[HEADER.size :])
            self._buffer.clear()
            self.frames += 1
            return message
        return None


def _check_preamble(got: bytes) -> None:
    if got == PREAMBLE:
        return
    if got[:1] == b"\xff":
        raise FramingError(
            "it speaks ZMTP (ZeroMQ), not the lobby's stream: a p2p-nertz lobby from before "
            "the stream (session 22); upgrade it"
        )
    if got[:7] == PREAMBLE[:7]:
        older = "the other side's p2p-nertz" if got[7] < STREAM_VERSION else "this p2p-nertz"
        raise FramingError(
            f"it speaks version {got[7]} of the lobby's stream and this p2p-nertz speaks "
            f"version {STREAM_VERSION}: upgrade {older}"
        )
    raise FramingError(f"not a p2p-nertz lobby (it began {got!r})")
