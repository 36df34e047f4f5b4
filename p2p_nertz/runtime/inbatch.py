"""How much a ROUTER's engine reads at once: the small batch that keeps a member from aborting
another member's process through libzmq (docs/protocol.md §13, "A member or a spectator's
sender can abort a process through libzmq").

libzmq 4.3 (4.3.4 and 4.3.5 alike) aborts the process ("Assertion failed: !_io_error") when a
connection whose input stopped at the ROUTER's high-water mark breaks, and the bytes the engine
kept past the refused frame hold a whole ZMTP PING: draining the pipe decodes the PING and
answers it on the broken connection. The kept bytes come from the engine's last read, at most
``ZMQ_IN_BATCH_SIZE - 1`` of them (8191 by default); a PING frame is at least 7 bytes (40
under CURVE), so with :data:`IN_BATCH` no whole PING can be kept on a CURVE socket. A mesh's
members pass the CURVE gate (runtime/gate.py) and so could send that flood; strangers cannot.

``ZMQ_IN_BATCH_SIZE`` is a draft option: pyzmq's wheels bundle a libzmq without drafts, where
setting it fails (``EINVAL``), and the socket keeps libzmq's default. ``scripts/
install_zmq_drafts.sh`` puts a pyzmq with drafts in a venv. :func:`protection` says which
case this process is in (``nertz --version``).
"""

from __future__ import annotations

from functools import cache
from typing import Final

import zmq

from p2p_nertz.signals import held

__all__ = ["IN_BATCH", "protection", "set_small_batch", "small_batch_available"]

IN_BATCH: Final = 32
"""Bytes a ROUTER's engine reads from a connection at once, where libzmq has its drafts.

Both ROUTERs it is set on are CURVE servers (a NULL greeting is cut off before any frame), and
under CURVE the smallest frame carrying a PING is 40 bytes (2 of header, ``\x07MESSAGE``, an
8-byte nonce, a 16-byte MAC, a flags byte and ``\x04PING``): the ``IN_BATCH - 1`` bytes kept
past a refused frame cannot hold one. Not 8 or less: libzmq 4.3.4 then reads a long frame's
8-byte size straight into its decoder's own buffer and, taking that for its read buffer,
builds the next message on the decoder's memory (v2_decoder.cpp ``size_ready``); with 6 a
flood of 300- and 2,000-byte messages aborted the process 3 times in about 15 runs
("Assertion failed: check ()", msg.cpp:414, in CURVE's decode). Not 1 either (libzmq 4.3.5
then overran the high-water mark, session 23). A NULL socket would need 7 or less.
"""


@cache
def small_batch_available() -> bool:
    """Whether this process's libzmq takes ``ZMQ_IN_BATCH_SIZE`` (it has its draft API)."""
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        with held():  # (made and known to the context at once: zmqtrio.new_socket)
            sock = ctx.socket(zmq.ROUTER)
        try:
            sock.set(zmq.IN_BATCH_SIZE, IN_BATCH)
            return bool(sock.get(zmq.IN_BATCH_SIZE) == IN_BATCH)
        except (zmq.ZMQError, AttributeError):
            return False
        finally:
            sock.close(linger=0)
    finally:
        ctx.destroy(linger=0)  # (a socket a Ctrl-C left unclosed too: term would wait for it)


def set_small_batch(sock: zmq.Socket[bytes], *, wanted: bool = True) -> bool:
    """Make ``sock``'s engines read at most :data:`IN_BATCH` bytes at once, if ``wanted`` and
    libzmq can; return whether it did (before any bind or connect: libzmq reads the option
    then)."""
    if not (wanted and small_batch_available()):
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
        "libzmq (docs/protocol.md §13; scripts/install_zmq_drafts.sh builds a pyzmq with them)"
    )
