"""The page's server on a real socket (p2p_nertz/web/server.py): the token, the Host and Origin
checks, the files, and the live connection both ways. A real WebSocket client
(trio-websocket) and plain HTTP over a trio socket; no browser."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import pytest
import trio
from trio_websocket import open_websocket_url

from p2p_nertz.errors import NertzError
from p2p_nertz.web.model import Drop, KeyPress, PageAction
from p2p_nertz.web.server import Page, ViewFeed, WebApp, serve_page

pytestmark = pytest.mark.anyio


class Served:
    def __init__(self, url: str, app: WebApp, feed: ViewFeed, got: list[PageAction]) -> None:
        self.url = url
        self.app = app
        self.feed = feed
        self.got = got
        parts = urlsplit(url)
        self.host = parts.netloc
        self.path = parts.path


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    feed = ViewFeed()
    got: list[PageAction] = []
    app = WebApp(Page(), feed, got.append)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_page, app, "127.0.0.1", 0)
        yield Served(url, app, feed, got)
        nursery.cancel_scope.cancel()


async def _get(served: Served, path: str, host: str | None = None) -> tuple[int, bytes, bytes]:
    """A GET over a plain socket: the status, the headers and the body."""
    address, port = served.host.split(":")
    stream = await trio.open_tcp_stream(address, int(port))
    async with stream:
        request = f"GET {path} HTTP/1.1\r\nHost: {host or served.host}\r\n"
        await stream.send_all(f"{request}Connection: close\r\n\r\n".encode())
        data = b""
        while chunk := await stream.receive_some():
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), head, body


async def test_the_page_is_served_under_its_token_only(served: Served) -> None:
    assert served.url.startswith("http://127.0.0.1:") and len(served.app.page.token) >= 24
    status, head, body = await _get(served, served.path)
    assert status == 200 and b"<title>p2p-nertz</title>" in body
    assert b"content-security-policy: default-src 'self'" in head.lower()
    assert (await _get(served, served.path + "table.js"))[0] == 200
    assert (await _get(served, served.path + "table.css"))[0] == 200
    assert (await _get(served, "/"))[0] == 404
    assert (await _get(served, "/wrong-token/"))[0] == 404
    assert (await _get(served, served.path + "../pyproject.toml"))[0] == 404
    assert (await _get(served, served.path + "server.py"))[0] == 404


async def test_a_request_naming_another_host_is_refused(served: Served) -> None:
    # (A DNS-rebinding page reaches 127.0.0.1 under its own name.)
    port = served.host.split(":")[1]
    assert (await _get(served, served.path, host=f"evil.example:{port}"))[0] == 421
    assert (await _get(served, served.path, host=f"localhost:{port}"))[0] == 200


def _ws(served: Served, path: str | None = None) -> str:
    return f"ws://{served.host}{path or served.path + 'ws'}"


async def _handshake(served: Served, path: str, origin: str | None) -> int:
    """A WebSocket handshake by hand: the status of the answer (101: accepted)."""
    address, port = served.host.split(":")
    stream = await trio.open_tcp_stream(address, int(port))
    async with stream:
        request = (
            f"GET {path} HTTP/1.1\r\nHost: {served.host}\r\nConnection: Upgrade\r\n"
            "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            + (f"Origin: {origin}\r\n" if origin else "")
            + "\r\n"
        )
        await stream.send_all(request.encode())
        data = b""
        while b"\r\n\r\n" not in data:
            data += await stream.receive_some()
    return int(data.split()[1])


async def test_the_live_connection_wants_the_token_and_the_page_origin(served: Served) -> None:
    # (A handshake by hand: trio-websocket's client leaves a refused socket open.)
    served.feed.publish('{"type": "view"}')
    port = served.host.split(":")[1]
    ws = served.path + "ws"
    for path, origin in [
        (ws, f"http://{served.host}"),
        (ws, f"http://evil.example:{port}"),
        (ws, f"https://{served.host}"),
        (ws, None),
        ("/wrong/ws", f"http://{served.host}"),
    ]:
        status = await _handshake(served, path, origin)
        assert status == (101 if origin == f"http://{served.host}" and path == ws else 403), (
            path,
            origin,
        )
    assert served.got == []


async def test_views_go_out_and_actions_come_in(served: Served) -> None:
    served.feed.publish(json.dumps({"type": "view", "n": 1}))
    origin = [("Origin", f"http://{served.host}")]
    async with open_websocket_url(_ws(served), extra_headers=origin) as ws:
        assert json.loads(await ws.get_message()) == {"type": "view", "n": 1}
        served.feed.publish(json.dumps({"type": "view", "n": 1}))  # the same: not sent again
        served.feed.publish(json.dumps({"type": "view", "n": 2}))
        assert json.loads(await ws.get_message()) == {"type": "view", "n": 2}
        await ws.send_message('{"type": "key", "key": "s"}')
        await ws.send_message('{"type": "drop", "from": "n", "to": ["l"], "id": 1}')
        await ws.send_message('{"type": "drop", "from": "lake"}')
        error = json.loads(await ws.get_message())
        assert error["type"] == "error" and "source" in error["error"]
    assert served.got == [KeyPress("s"), Drop("n", ("l",), 1)]


async def test_an_address_in_use_is_one_clear_error(served: Served) -> None:
    port = int(served.host.split(":")[1])
    app = WebApp(Page(), ViewFeed(), lambda action: None)
    with pytest.raises(NertzError, match=f"cannot serve the page on 127.0.0.1:{port}"):
        await serve_page(app, "127.0.0.1", port)
