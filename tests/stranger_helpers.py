"""What the tests of a stranger's floods share: the flood itself, and a guest seated after it.

A stranger's connection is plain TCP from the test process; the host is a real process whose
lobby prints its endpoint, then the started game's players, and exits 0.
"""

from __future__ import annotations

import select
import socket
import struct
import subprocess

import trio

from p2p_nertz.lobby.framing import PREAMBLE
from p2p_nertz.lobby.state import LobbyError, Session
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed
from p2p_nertz.runtime.lobby import join_lobby


def _command(body: bytes) -> bytes:
    """A short ZMTP 3.0 command frame."""
    return bytes([0x04, len(body)]) + body


#: A ZMTP 3.0 client's greeting (NULL mechanism) and READY, as a DEALER with no routing id.
GREETING = b"\xff" + bytes(8) + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\0") + bytes(32)
READY = _command(b"\x05READY" + b"\x0bSocket-Type" + struct.pack(">I", 6) + b"DEALER")
#: A ZMTP PING with no TTL and no context.
PING = _command(b"\x04PING" + bytes(2))


def zmtp_stranger_floods_and_resets(endpoint: str) -> int:
    """Connect to ``endpoint`` as a stranger (plain TCP speaking ZMTP, no key), send 100-byte
    messages each followed by a PING until the connection stops taking bytes (zmq stopped
    reading it at the ROUTER's high-water mark, the kernel's buffers full), then reset it.
    Return the bytes of messages sent (until the end, or until the other side closed the
    connection; none if it closed it at the greeting)."""
    host, port = endpoint.removeprefix("tcp://").rsplit(":", 1)
    chunk = (bytes([0x00, 100]) + b"x" * 100 + PING) * 100
    sock = socket.create_connection((host, int(port)), timeout=30)
    try:
        try:
            sock.sendall(GREETING + READY)
            greeting = sock.recv(10)
        except ConnectionError:
            greeting = b""
        if not greeting:  # cut off at its greeting (the node speaks another mechanism)
            sock.close()
            return 0
        assert greeting[:1] == b"\xff"  # zmq's greeting: its I/O thread reads this one
    except BaseException:
        sock.close()
        raise
    return flood_then_reset(sock, chunk)


def flood_then_reset(sock: socket.socket, chunk: bytes) -> int:
    """Send ``chunk`` over and over until the connection takes no byte for 2 s (the other
    side's reader has stopped and the kernel's buffers are full) or the other side closes it,
    then reset it (``SO_LINGER`` 0: a TCP RST) and close it. Return the bytes sent."""
    try:
        sock.setblocking(False)
        sent = 0
        while select.select([], [sock], [], 2.0)[1]:
            try:
                sent += sock.send(chunk)
            except BlockingIOError:
                continue
            except OSError:  # reset or closed by the other side: it refused us
                break
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    finally:
        sock.close()
    return sent


def flood_the_lobby_then_reset(endpoint: str, chunk: bytes) -> int:
    """Open a connection to the lobby at ``endpoint``, send the stream's preamble, then
    :func:`flood_then_reset` with ``chunk`` (frames of the lobby's stream). The bytes sent."""
    host, port = endpoint.removeprefix("tcp://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=30)  # (the kernel accepts it)
    try:
        sock.sendall(PREAMBLE)
    except BaseException:
        sock.close()
        raise
    return flood_then_reset(sock, chunk)


def seat_a_guest(
    host: subprocess.Popen[str], endpoint: str, label: bytes, timeout: float
) -> tuple[Session | None, str, str, str]:
    """A guest, Bob, asks the host's lobby at ``endpoint`` for a seat; then the host is let
    finish (its stdin closed). Returns the session (``None`` if refused), why it was refused,
    and the host's stdout and stderr."""
    guest = Identity.generate(derive_seed(label, 1))
    session: Session | None = None
    refused = ""
    try:
        session = trio.run(
            lambda: join_lobby(guest, "Bob", "tcp://127.0.0.1:10", endpoint, timeout=timeout)
        )
    except LobbyError as exc:
        refused = str(exc)  # (the host's exit says why, first)
    out, err = host.communicate(timeout=30)  # (closes its stdin: it stops serving)
    return session, refused, out, err


def assert_seated_and_lived(
    host: subprocess.Popen[str], session: Session | None, refused: str, out: str, err: str
) -> None:
    """The host exited 0 (an abort is a signal's negative status), Bob sat with Ann, the
    host printed the game's players, and no traceback."""
    assert host.returncode == 0, err
    assert session is not None, refused
    assert sorted(m.name for m in session.spec.members) == ["Ann", "Bob"]
    assert out.split() == ["Ann", "Bob"]
    assert "Traceback" not in err
