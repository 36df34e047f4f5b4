"""Telling a member of another transport version apart at the handshake (docs/protocol.md §4.7).

The mesh's transport is versioned by its ZMTP security mechanism, and nothing on the wire
negotiates it: version 2 (session 22) is CURVE between members, version 1 was NULL. A DEALER
of version 2 connecting to a ROUTER of version 1 (an older p2p-nertz, or an independent peer
built to the older document) fails at the greeting, again every reconnect, and without a word
a node would wait for that member until its liveness timers gave up on it: 30 s and more, then
a game "abandoned" that never began. libzmq reports the failure to a socket monitor as a
*mechanism mismatch* (``ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL`` with
``ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH``) on the first attempt, so
:class:`Handshakes` watches each DEALER to a member for it and raises
:class:`TransportVersionError`, naming the member, its endpoint and both versions, within
:data:`CHECK_EVERY` of the first attempt.

The NULL side sees the mismatch too and closes at once; when it closes with our greeting
unread its kernel resets the connection, and a reset that arrives before our I/O thread read
its greeting throws that greeting away: we see the connection close, mid-handshake, and no
mismatch. On a loaded machine that happens at every attempt (seen in the test suite's runs).
So a DEALER whose connections close before any handshake succeeds :data:`CLOSED_UNANSWERED`
times in a row, none refused for its key (``HANDSHAKE_FAILED_AUTH``: another game's roster), is
taken as the same evidence.

A connection that breaks after a handshake succeeded is no evidence of a version, nor is a
refused key or a member that does not answer at all (stopped, gone: no connection closes),
and the mesh's own repair and timers handle those.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import suppress
from typing import Final

import trio
import zmq

from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.identity import PeerId, fingerprint
from p2p_nertz.runtime.zmqtrio import AsyncSocket, monitor_event

__all__ = [
    "CHECK_EVERY",
    "CLOSED_UNANSWERED",
    "TRANSPORT_VERSION",
    "Handshakes",
    "TransportVersionError",
]

TRANSPORT_VERSION: Final = 2
"""The mesh's transport version (docs/protocol.md §4.7): ZMTP's CURVE between members."""
CHECK_EVERY: Final = 0.25
"""Seconds between two looks at the DEALERs' handshake failures."""
CLOSED_UNANSWERED: Final = 5
"""Connections in a row closed by the other side before any handshake succeeded (about 1.5 s
of zmq's reconnect back-off) that count as a mismatch the reset hid."""
_MISMATCH: Final = zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH
_EVENTS: Final = (
    zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
    | zmq.EVENT_HANDSHAKE_SUCCEEDED
    | zmq.EVENT_DISCONNECTED
)


class TransportVersionError(NertzError):
    """A member's ROUTER speaks another transport version than ours: we cannot talk to it."""


def mismatch(member: PeerId, endpoint: str) -> str:
    """What a person is told when ``member`` at ``endpoint`` speaks another mechanism.

    >>> print(mismatch(PeerId(bytes(32)), "tcp://10.0.0.7:5601")[:79])
    the member mzuh-vlpy-mk6x-o3ep at tcp://10.0.0.7:5601 speaks another transport:
    """
    return (
        f"the member {fingerprint(member)} at {endpoint} speaks another transport: this "
        f"p2p-nertz speaks the mesh's transport version {TRANSPORT_VERSION} (ZMTP CURVE) and it "
        "answered the handshake with another mechanism, as a peer of version 1 (NULL; "
        "p2p-nertz before session 22) does; every member must run the same version "
        "(docs/protocol.md §4.7): upgrade the older side"
    )


class Handshakes:
    """The handshake failures of a mesh's DEALERs to members; see the module docstring."""

    def __init__(self) -> None:
        self._monitors: list[tuple[zmq.Socket[bytes], PeerId, str]] = []
        self._unanswered: dict[int, int] = {}  # a monitor's index: closes in a row, no handshake
        self._refused: set[int] = set()  # monitors whose current connection was refused its key

    def add(self, dealer: AsyncSocket, member: PeerId, endpoint: str) -> None:
        """Watch ``dealer``, our DEALER to ``member`` at ``endpoint`` (before it connects)."""
        monitor = dealer.monitor(_EVENTS)
        self._monitors.append((monitor, member, endpoint))

    def mismatches(self) -> Iterator[str]:
        """The mechanism mismatches reported since the last look, in words (never waits)."""
        for index, (monitor, member, endpoint) in enumerate(self._monitors):
            while True:
                try:
                    kind, value = monitor_event(monitor.recv_multipart(zmq.NOBLOCK))
                except zmq.Again:
                    break
                if self._mismatched(index, kind, value):
                    yield mismatch(member, endpoint)

    def _mismatched(self, index: int, kind: int, value: int) -> bool:
        """Take one event of monitor ``index``: is it (with those before) a mismatch?"""
        if kind == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL:
            return value == _MISMATCH
        if kind == zmq.EVENT_HANDSHAKE_SUCCEEDED:
            self._unanswered[index] = 0
        elif kind == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
            self._refused.add(index)
            self._unanswered[index] = 0
        elif kind == zmq.EVENT_DISCONNECTED:
            if index in self._refused:
                self._refused.discard(index)
            else:
                self._unanswered[index] = self._unanswered.get(index, 0) + 1
                return self._unanswered[index] >= CLOSED_UNANSWERED
        return False

    async def watch(self) -> None:
        """Look every :data:`CHECK_EVERY` seconds until cancelled.

        Raises:
            TransportVersionError: a member speaks another transport version.
        """
        while True:
            for reason in self.mismatches():
                raise TransportVersionError(reason)
            await trio.sleep(CHECK_EVERY)

    def close(self) -> None:
        """Close the monitors (before the DEALERs and the context)."""
        for monitor, _, _ in self._monitors:
            with suppress(zmq.ZMQError):
                monitor.close(linger=0)
        self._monitors.clear()
