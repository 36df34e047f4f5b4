"""How much a ROUTER's engine reads at once: the small batch that keeps a member from aborting
another member's process through libzmq (docs/protocol.md §9, "A member or a spectator's
sender can abort a process through libzmq").

libzmq 4.3 (4.3.4 and 4.3.5 alike) aborts the process ("Assertion failed: !_io_error") when a
connection whose input stopped at the ROUTER's high-water mark breaks, and the bytes the engine
kept past the refused frame hold a whole ZMTP PING: draining the pipe decodes the PING and
answers it on the broken connection. The kept bytes come from the engine's last read, at most
``ZMQ_IN_BATCH_SIZE - 1`` of them (8191 by default); a PING frame is at least 7 bytes (42
under CURVE), so with :data:`IN_BATCH` no whole PING can be kept. A mesh's members pass the
CURVE gate (runtime/gate.py) and so could send that flood; strangers cannot.

``ZMQ_IN_BATCH_SIZE`` is a draft option: pyzmq's wheels bundle a libzmq without drafts, where
setting it fails (``EINVAL``), and the socket keeps libzmq's default. ``scripts/
install_zmq_drafts.sh`` puts a pyzmq with drafts in a venv. :func:`protection` says which
case this process is in (``nertz --version``).
"""

from __future__ import annotations

from functools import cache
from typing import Final

import zmq

__all__ = ["IN_BATCH", "protection", "set_small_batch", "small_batch_available"]

IN_BATCH: Final = 6
"""Bytes a ROUTER's engine reads from a connection at once, where libzmq has its drafts.

At most 7 (a NULL PING frame, 7 bytes, must not fit in the ``IN_BATCH - 1`` bytes kept past a
refused frame), and not 1 (libzmq 4.3.5 then overran the high-water mark and aborted
elsewhere, "rc == 0", pipe.cpp:186). 6 and 8 survived every attack measured in session 23;
6 leaves a byte of margin under CURVE's smallest frame too.
"""


@cache
def small_batch_available() -> bool:
    """Whether this process's libzmq takes ``ZMQ_IN_BATCH_SIZE`` (it has its draft API)."""
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        sock = ctx.socket(zmq.ROUTER)
        try:
            sock.set(zmq.IN_BATCH_SIZE, IN_BATCH)
            return bool(sock.get(zmq.IN_BATCH_SIZE) == IN_BATCH)
        except (zmq.ZMQError, AttributeError):
            return False
        finally:
            sock.close(linger=0)
    finally:
        ctx.term()


def set_small_batch(sock: zmq.Socket[bytes]) -> bool:
    """Make ``sock``'s engines read at most :data:`IN_BATCH` bytes at once, where libzmq can;
    return whether it did (before any bind or connect: libzmq reads the option then)."""
    if not small_batch_available():
        return False
    sock.set(zmq.IN_BATCH_SIZE, IN_BATCH)
    return True


def protection() -> str:
    """One line saying whether the members of a game can abort this process through libzmq."""
    version = f"libzmq {zmq.zmq_version()} (pyzmq {zmq.pyzmq_version()})"
    if small_batch_available():
        return (
            f"{version} with drafts: ROUTERs read {IN_BATCH} bytes at a time; another member "
            "cannot abort this process through libzmq"
        )
    return (
        f"{version} without drafts: another member of a game can abort this process through "
        "libzmq (docs/protocol.md §9; scripts/install_zmq_drafts.sh builds a pyzmq with them)"
    )
