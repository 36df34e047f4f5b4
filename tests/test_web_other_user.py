"""Another user of the machine who learnt the page's URL (session 30's red team).

The URL, token and all, is on the browser's command line when ``nertz`` opens it, and every
user of the machine reads command lines (``ps``). A program sends whatever ``Host`` and
``Origin`` it likes, so until session 30 another user's process opened the live connection,
was sent the player's view (their cards) and played keys for them. The server now refuses a
live connection whose client socket is another user's (p2p_nertz/web/owner.py).
"""

from __future__ import annotations

import os
import shutil
import socket
import struct
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import trio

from p2p_nertz.web.model import PageAction
from p2p_nertz.web.owner import TCP_TABLE, client_owner
from p2p_nertz.web.server import Page, ViewFeed, WebApp, serve_page

pytestmark = pytest.mark.anyio

#: What another user's program sends: a handshake from the page's own origin, then a key
#: (one masked text frame), and it prints the status it was answered.
_INTRUDER = r"""
import socket, sys
host, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.create_connection((host, port))
name = f"{host}:{port}"
s.sendall((f"GET {path}ws HTTP/1.1\r\nHost: {name}\r\nConnection: Upgrade\r\n"
           "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
           f"Origin: http://{name}\r\n\r\n").encode())
data = b""
while b"\r\n\r\n" not in data:
    data += s.recv(4096)
status = data.split()[1].decode()
if status == "101":
    key = b'{"type": "key", "key": "d"}'
    s.sendall(bytes([0x81, 0x80 | len(key)]) + b"\0\0\0\0" + key + b"\x88\x80\0\0\0\0")
    while s.recv(4096):
        pass
print(status)
"""


class Served:
    def __init__(self, url: str, app: WebApp, got: list[PageAction]) -> None:
        parts = urlsplit(url)
        assert parts.hostname is not None and parts.port is not None
        self.address, self.port, self.path = parts.hostname, parts.port, parts.path
        self.app = app
        self.got = got


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    got: list[PageAction] = []
    app = WebApp(Page(), ViewFeed(), got.append)
    app.feed.publish('{"type": "view"}')
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_page, app, "127.0.0.1", 0)
        yield Served(url, app, got)
        nursery.cancel_scope.cancel()


def _row(local: tuple[str, int], remote: tuple[str, int], uid: int) -> str:
    """A line of Linux's ``/proc/net/tcp`` for a socket ``local`` → ``remote`` owned by uid."""

    def address(host: str, port: int) -> str:
        (word,) = struct.unpack("=I", socket.inet_aton(host))
        return f"{word:08X}:{port:04X}"

    return (
        f"   0: {address(*local)} {address(*remote)} 01 00000000:00000000 00:00000000 "
        f"00000000 {uid:>5}        0 12345 1 0000000000000000 20 4 30 10 -1"
    )


async def _handshake_from(served: Served, client: trio.socket.SocketType) -> int:
    """A WebSocket handshake on ``client`` (bound, not connected): the answer's status."""
    await client.connect((served.address, served.port))
    name = f"{served.address}:{served.port}"
    request = (
        f"GET {served.path}ws HTTP/1.1\r\nHost: {name}\r\nConnection: Upgrade\r\n"
        "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
        f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: http://{name}\r\n\r\n"
    )
    await client.send(request.encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += await client.recv(4096)
    return int(data.split()[1])


@pytest.mark.parametrize("another", [False, True])
async def test_a_live_connection_the_table_says_is_another_users_is_refused(
    served: Served, tmp_path: Path, another: bool
) -> None:
    # The table the kernel keeps, written here (any system): the client's row names its owner.
    with trio.socket.socket() as client:
        await client.bind(("127.0.0.1", 0))
        uid = os.getuid() + 1 if another else os.getuid()
        table = tmp_path / "tcp"
        mine = (served.address, served.port)
        table.write_text(
            "  sl  local_address rem_address   st ...\n"
            + _row(mine, client.getsockname(), os.getuid())  # (the server's end: ours)
            + "\n"
            + _row(client.getsockname(), mine, uid)
            + "\n"
        )
        served.app.tcp_table = table
        assert await _handshake_from(served, client) == (403 if another else 101)
    assert served.app.refusals == (1 if another else 0)


@pytest.mark.skipif(not TCP_TABLE.exists(), reason="/proc/net/tcp is Linux's")
async def test_the_owner_of_a_connection_from_this_machine_is_read_from_the_kernel(
    served: Served,
) -> None:
    with trio.socket.socket() as client:
        await client.connect((served.address, served.port))
        here, there = client.getsockname(), client.getpeername()
        assert client_owner(here, there) == os.getuid()
        assert client_owner(here, (there[0], there[1] ^ 1)) is None  # (no such connection)


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or not TCP_TABLE.exists(),
    reason="needs root, setpriv and Linux's /proc/net/tcp to run a program as another user",
)
async def test_another_user_with_the_url_can_neither_watch_nor_play(served: Served) -> None:
    # (On main: 101, the view sent, and the key played.)
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    done = await trio.run_process(
        [
            *as_nobody,
            sys.executable,
            "-c",
            _INTRUDER,
            served.address,
            str(served.port),
            served.path,
        ],
        capture_stdout=True,
        capture_stderr=True,
        cwd="/",
    )
    assert done.stdout.decode().strip() == "403", done.stderr.decode()
    assert served.got == []
