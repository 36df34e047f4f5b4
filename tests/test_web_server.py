"""The page's server on a real socket (p2p_nertz/web/server.py): the token, the Host and Origin
checks, the files, and the live connection both ways. A real WebSocket client
(trio-websocket) and plain HTTP over a trio socket; no browser."""

from __future__ import annotations

import fcntl
import json
import queue
import socket
import struct
import termios
import threading
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from functools import partial
from urllib.parse import urlsplit

import pytest
import trio
from trio_websocket import WebSocketConnection, open_websocket_url

from cli.web_cmd import lobby_left
from p2p_nertz.errors import NertzError
from p2p_nertz.rules.book import rule_book
from p2p_nertz.web.model import (
    KEYS_ONLY,
    LOBBY_ACTIONS,
    TABLE_ACTIONS,
    Drop,
    KeyPress,
    LobbyPick,
    PageAction,
)
from p2p_nertz.web.server import MAX_CONNECTIONS, MAX_MESSAGE, Page, ViewFeed, WebApp, serve_page
from p2p_nertz.web.terminal import PageTerminal

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
        assert parts.hostname is not None and parts.port is not None
        self.address, self.port = parts.hostname, parts.port


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    feed = ViewFeed()
    got: list[PageAction] = []
    app = WebApp(Page(), feed, got.append)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_page, app, "127.0.0.1", 0)
        yield Served(url, app, feed, got)
        nursery.cancel_scope.cancel()


async def _connect(served: Served) -> trio.SocketStream:
    """A plain TCP connection to the server."""
    return await trio.open_tcp_stream(served.address, served.port)


async def _get(served: Served, path: str, host: str | None = None) -> tuple[int, bytes, bytes]:
    """A GET over a plain socket: the status, the headers and the body."""
    async with await _connect(served) as stream:
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
    # The rule book, for the page's help (a player in a browser has no `nertz rules` to type).
    status, head, body = await _get(served, served.path + "rules")
    assert status == 200 and body.decode() == rule_book(), body[:80]
    assert b"content-type: text/plain; charset=utf-8" in head.lower()
    assert (await _get(served, "/wrong-token/rules"))[0] == 404
    assert (await _get(served, "/"))[0] == 404
    assert (await _get(served, "/wrong-token/"))[0] == 404
    assert (await _get(served, served.path + "../pyproject.toml"))[0] == 404
    assert (await _get(served, served.path + "server.py"))[0] == 404


async def test_a_request_naming_another_host_is_refused(served: Served) -> None:
    # (A DNS-rebinding page reaches 127.0.0.1 under its own name.)
    assert (await _get(served, served.path, host=f"evil.example:{served.port}"))[0] == 421
    assert (await _get(served, served.path, host=f"localhost:{served.port}"))[0] == 200


def _live(served: Served) -> AbstractAsyncContextManager[WebSocketConnection]:
    """A live connection from the page's origin (trio-websocket's client)."""
    url = f"ws://{served.host}{served.path}ws"
    return open_websocket_url(url, extra_headers=[("Origin", f"http://{served.host}")])


async def _upgrade(
    stream: trio.SocketStream, served: Served, path: str, origin: str | None
) -> bytes:
    """A WebSocket handshake by hand on ``stream``: what the server sent, up to the end of its
    answer's head and whatever came with it. (By hand: trio-websocket's client leaves a
    socket the server refused or closed open.)"""
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
    return data


async def _handshake(served: Served, path: str, origin: str | None) -> int:
    """A WebSocket handshake by hand: the status of the answer (101: accepted)."""
    async with await _connect(served) as stream:
        data = await _upgrade(stream, served, path, origin)
    return int(data.split()[1])


async def _accepted(stream: trio.SocketStream, served: Served) -> bytes:
    """A live connection opened by hand on ``stream`` from the page's origin, accepted: what
    the server sent past its answer's head."""
    data = await _upgrade(stream, served, served.path + "ws", f"http://{served.host}")
    assert data.startswith(b"HTTP/1.1 101")
    return data.partition(b"\r\n\r\n")[2]


async def test_the_live_connection_wants_the_token_and_the_page_origin(served: Served) -> None:
    # (A handshake by hand: trio-websocket's client leaves a refused socket open.)
    served.feed.publish('{"type": "view"}')
    ws = served.path + "ws"
    for path, origin in [
        (ws, f"http://{served.host}"),
        (ws, f"http://evil.example:{served.port}"),
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
    async with _live(served) as ws:
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


async def test_the_url_without_its_last_slash_leads_to_the_page(served: Served) -> None:
    # (A URL copied without its "/" would otherwise be "not found".)
    status, head, _ = await _get(served, served.path.rstrip("/"))
    assert status == 301 and f"location: {served.path}\r\n".encode() in head
    assert (await _get(served, served.path.rstrip("/") + "x"))[0] == 404


async def test_live_connections_beyond_the_limit_are_refused(served: Served) -> None:
    served.feed.publish('{"type": "view"}')
    async with AsyncExitStack() as stack:
        for _ in range(MAX_CONNECTIONS):
            ws = await stack.enter_async_context(_live(served))
            assert json.loads(await ws.get_message()) == {"type": "view"}
        assert await _handshake(served, served.path + "ws", f"http://{served.host}") == 403
    # (Closed: room again.)
    async with _live(served) as ws:
        assert json.loads(await ws.get_message()) == {"type": "view"}


async def test_a_message_far_longer_than_any_action_closes_the_connection(served: Served) -> None:
    async with await _connect(served) as stream:
        data = await _accepted(stream, served)
        size = MAX_MESSAGE + 1  # one text frame, masked (as a client's are) with 0s
        await stream.send_all(b"\x81\xff" + size.to_bytes(8, "big") + b"\0" * 4 + b"x" * size)
        while len(data) < 4:
            data += await stream.receive_some()
        assert data[0] == 0x88 and int.from_bytes(data[2:4], "big") == 1009  # (message too big)
    assert served.got == []
    async with _live(served) as ws:  # (nothing else)
        await ws.send_message('{"type": "key", "key": "s"}')
        await ws.send_message("{")  # (an answer: the key was taken before it)
        assert json.loads(await ws.get_message())["error"] == "not JSON"
    assert served.got == [KeyPress("s")]


async def test_refusals_in_a_loop_do_not_flood_the_terminal(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    for _ in range(40):
        assert await _handshake(served, served.path + "ws", "http://evil.example") == 403
    said = [r.getMessage() for r in caplog.records if "refused a live connection" in r.message]
    assert [m.split(" so far")[0] for m in said] == [
        f"refused a live connection ({n}" for n in (1, 2, 4, 8, 16, 32)
    ], said
    assert "evil.example" in said[0]


async def test_an_address_in_use_is_one_clear_error(served: Served) -> None:
    app = WebApp(Page(), ViewFeed(), lambda action: None)
    with pytest.raises(NertzError, match=f"cannot serve the page on 127.0.0.1:{served.port}"):
        await serve_page(app, "127.0.0.1", served.port)


@pytest.mark.skipif(not hasattr(socket, "TCP_USER_TIMEOUT"), reason="TCP_USER_TIMEOUT is Linux's")
def test_a_client_that_never_reads_is_dropped_and_the_server_still_stops() -> None:
    # Anyone on this machine, token or not, can ask for answers it never reads (pipelined
    # requests): the server's send then waits on a full socket, and hypercorn shields that
    # wait from cancellation, so the peer could never exit. The kernel drops such a client
    # (TCP_USER_TIMEOUT, here after 1 s); meanwhile the page is served to others.
    app = WebApp(Page(), ViewFeed(), lambda action: None)
    started: queue.Queue[tuple[str, trio.lowlevel.TrioToken, trio.CancelScope]] = queue.Queue()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            url = await nursery.start(partial(serve_page, stalled_after=1.0), app, "127.0.0.1", 0)
            started.put((url, trio.lowlevel.current_trio_token(), nursery.cancel_scope))

    server = threading.Thread(target=trio.run, args=(main,), daemon=True)
    server.start()
    url, token, scope = started.get(timeout=30)
    served = Served(url, app, app.feed, [])
    with socket.create_connection((served.address, served.port)) as hog:
        request = f"GET {served.path}table.js HTTP/1.1\r\nHost: {served.host}\r\n\r\n".encode()
        hog.sendall(request * 2000)  # (some 60 MB of answers: far more than sockets hold)
        while _unread(hog) < 1 << 16:  # the server is filling the socket
            time.sleep(0.05)
        assert trio.run(_get, served, served.path)[0] == 200
        trio.from_thread.run_sync(scope.cancel, trio_token=token)
        server.join(timeout=60)
        assert not server.is_alive(), "the server did not stop"


def _unread(sock: socket.socket) -> int:
    """The bytes waiting in a socket's receive queue."""
    return int(struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0" * 4))[0])


_KINDS = {
    KeyPress: '{"type": "key", "key": "s"}',
    Drop: '{"type": "drop", "from": "n", "to": ["l"], "id": 1}',
    LobbyPick: '{"type": "lobby", "do": "ready", "ready": true}',
}


@pytest.mark.parametrize("takes", [TABLE_ACTIONS, LOBBY_ACTIONS, KEYS_ONLY])
async def test_a_message_of_a_kind_the_page_does_not_take_is_answered_and_changes_nothing(
    served: Served, takes: tuple[type[PageAction], ...]
) -> None:
    # (A lobby choice sent to the table's page was once dropped without a word.)
    served.app.takes = takes
    served.feed.publish('{"type": "view"}')
    async with _live(served) as ws:
        assert json.loads(await ws.get_message()) == {"type": "view"}
        for kind, text in _KINDS.items():
            await ws.send_message(text)
            if kind not in takes:
                error = json.loads(await ws.get_message())
                assert error["type"] == "error", error
                assert "means nothing on this page now (it takes a key" in error["error"], error
        await ws.send_message("{")  # (answered after every message before it was handled)
        assert json.loads(await ws.get_message())["error"] == "not JSON"
    assert [type(a) for a in served.got] == [k for k in _KINDS if k in takes]


async def test_the_lobby_page_answers_a_drop_and_a_choice_before_it_is_shown() -> None:
    terminal = PageTerminal()
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_page, terminal.app, "127.0.0.1", 0)
        served = Served(url, terminal.app, terminal.feed, [])
        terminal.feed.publish('{"type": "lobby"}')
        async with _live(served) as ws:
            assert json.loads(await ws.get_message()) == {"type": "lobby"}
            await ws.send_message(_KINDS[Drop])
            assert "a dragged card means nothing" in json.loads(await ws.get_message())["error"]
            await ws.send_message(_KINDS[LobbyPick])  # (no lobby view yet to choose from)
            assert "not shown yet" in json.loads(await ws.get_message())["error"]
            await ws.send_message(_KINDS[KeyPress])
            await ws.send_message("{")
            assert json.loads(await ws.get_message())["error"] == "not JSON"
        assert terminal.read_keys() == ["s"]
        # The person leaves the lobby without a game: the page is told, and closed.
        async with trio.open_nursery() as inner:
            told: list[str] = []
            connected = trio.Event()

            async def page() -> None:
                frames = await _server_frames(served, 3, connected)
                told.extend(json.loads(text)["type"] for _, text in frames[:2])

            inner.start_soon(page)
            await connected.wait()
            await lobby_left(terminal)
        assert told == ["lobby", "closed"]
        assert terminal.feed.closed == "you left the lobby: your nertz program has stopped"
        nursery.cancel_scope.cancel()


async def _server_frames(
    served: Served, count: int, first: trio.Event | None = None
) -> list[tuple[int, bytes]]:
    """Open a live connection by hand and read ``count`` frames the server sends (opcode,
    payload; ``first`` is set once the first is in), then end (:func:`_upgrade`)."""
    async with await _connect(served) as stream:
        data = await _accepted(stream, served)
        frames: list[tuple[int, bytes]] = []
        while len(frames) < count:
            while len(data) < 2 or len(data) < 2 + (data[1] & 0x7F):
                more = await stream.receive_some()
                assert more, f"closed after {frames}"
                data += more
            size = data[1] & 0x7F
            assert size < 126  # (short frames only: these tests send no long ones)
            frames.append((data[0] & 0x0F, data[2 : 2 + size]))
            if first is not None:
                first.set()
            data = data[2 + size :]
    return frames


async def test_a_peer_that_is_done_tells_its_pages_why_and_closes_them(served: Served) -> None:
    served.feed.publish('{"type": "view", "n": 1}')
    async with trio.open_nursery() as nursery:
        got: list[list[tuple[int, bytes]]] = []

        connected = trio.Event()

        async def page() -> None:
            got.append(await _server_frames(served, 4, connected))

        nursery.start_soon(page)
        await connected.wait()  # (the page has the first view: it gets what follows)
        served.feed.publish('{"type": "view", "n": 2}')
        await served.app.close_pages("the game is over", patience=30.0)
    # Each view, then the last word, then a close (opcode 8) with code 1000 (normal).
    (one,) = got
    assert [json.loads(text) for _, text in one[:3]] == [
        {"type": "view", "n": 1},
        {"type": "view", "n": 2},
        {"type": "closed", "text": "the game is over"},
    ]
    assert one[3][0] == 8 and int.from_bytes(one[3][1][:2], "big") == 1000
    assert served.app.connections == 0
    # A page that connects after is told the same, and closed.
    late = await _server_frames(served, 3)
    assert [json.loads(text)["type"] for _, text in late[:2]] == ["view", "closed"]
    assert late[2][0] == 8
