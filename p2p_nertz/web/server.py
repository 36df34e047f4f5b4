"""The page's server: one small ASGI app, served by hypercorn's trio worker on one port.

Why this stack: the node already runs under trio, and hypercorn's trio worker serves an ASGI
app inside the node's own event loop (no thread, no second loop), the static page and the
WebSocket on the same port; it is a maintained server (h11 and wsproto underneath), and the app
itself is a hundred lines with no framework.

What it serves, all under an unguessable token (``/TOKEN/``; any other path is a 404):

* ``/TOKEN/`` the page, and its script and style sheet (package data, ``static/``);
* ``/TOKEN/rules`` the rule book as the package ships it (plain text: the page's help links
  it, for a player with no terminal to type ``nertz rules`` in);
* ``/TOKEN/ws`` the live connection: each view of the table as JSON
  (:func:`~p2p_nertz.web.model.view_json`), and the page's keys and drops back
  (:func:`~p2p_nertz.web.model.parse_action`).

Who may use it: whoever has the URL, from a page the server itself served. The ``Host`` header
must name the address it is bound to (so a DNS-rebinding page, whose host is its own name, is
refused) and the WebSocket's ``Origin`` must be that same address (so another web page open in
the browser cannot drive the peer). And the live connection must come from the player's own
user when it comes from this machine (``web/owner.py``): the URL is on the browser's command
line, which every user of the machine can read, and a program sends any Host and Origin it
likes; another user's connection is refused whatever it knows (a 403). Bound to 127.0.0.1
(the default) nobody else on the LAN can reach it; ``--web-bind`` on another address lets
anyone on another machine who learns the URL play for you.

What a client may cost it, token or not: a request without the token is a 404, one naming
another host a 421, a WebSocket from another origin a 403; a header block over 16 KiB is
refused (431) and a connection idle 5 s is closed (hypercorn's limits, which also end a
slowloris). With the token and the page's origin: at most :data:`MAX_CONNECTIONS` live
connections (one more is refused), messages of at most :data:`MAX_MESSAGE` (a longer one
closes its connection, 1009), each bad message answered with an error and nothing changed, a
flood of actions beyond what the table takes dropped (``web/table.py``), and a message of a
kind this page does not take now (a lobby choice at the table, a drop in the lobby or a
replay: :attr:`WebApp.takes`) answered with an error saying so, and nothing done. A client
that leaves what it is sent unread for :data:`STALLED_AFTER` seconds is dropped by the
kernel. None of them holds up the game: each connection is a task of its own, and the node's
tasks only publish to the :class:`ViewFeed` and queue actions, never waiting on a page.

How a page's connection ends: when its peer is done (the game over, the player gone, the
table gone), :meth:`ViewFeed.close` sends every page a last message, ``{"type": "closed",
"text": ...}``, the words to show, and closes its connection (1000); the page then stops
trying. Any other end (the peer killed or restarted, a network blip, a laptop asleep) is a
bare close: the page tries again, 0.5 s then twice as long each time up to 5 s, and takes up
the table from the next view it is sent (the URL, token and port, must be the same:
``nertz resume LOG --web`` serves the page at the address its game's first run did). After
30 s of failed tries it says so and what the person can do (a player's page: the resume
command, its log named, which each view carries: ``p2p_nertz.web.table.unanswered``), and
goes on trying.
"""

from __future__ import annotations

import importlib.resources
import json
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from p2p_nertz.errors import NertzError
from p2p_nertz.rules.book import rule_book
from p2p_nertz.runtime.keepalive import keep_alive
from p2p_nertz.web.model import ALL_ACTIONS, BadAction, PageAction, not_taken, parse_action
from p2p_nertz.web.owner import TCP_TABLE, client_owner

__all__ = [
    "MAX_CONNECTIONS",
    "MAX_MESSAGE",
    "STALLED_AFTER",
    "Page",
    "ViewFeed",
    "WebApp",
    "serve_page",
]

_log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

#: The files of the page, by the name under the token (nothing else is served: no path from
#: the URL ever reaches the file system).
FILES = {
    "": ("index.html", "text/html; charset=utf-8"),
    "table.js": ("table.js", "text/javascript; charset=utf-8"),
    "table.css": ("table.css", "text/css; charset=utf-8"),
}
#: The name under the token of the rule book (:func:`~p2p_nertz.rules.book.rule_book`).
RULES = "rules"
#: Seconds a client may leave what it is sent unread before the kernel drops it (Linux's
#: ``TCP_USER_TIMEOUT``, set on the listening socket and inherited by each connection).
#: hypercorn waits for a full socket shielded from cancellation, so without it one client that
#: asks and never reads (no token needed: pipelined requests for a 404 do) would keep the
#: peer from ever exiting. A browser reads all the time; a tablet asleep on the LAN
#: (``--web-bind``) is dropped, and its page is reloaded to play on when it wakes. With the
#: mesh's TCP keepalive (:func:`~p2p_nertz.runtime.keepalive.keep_alive`), a client whose
#: machine went away without a close (a phone out of Wi-Fi) is dropped 10-15 s after it last
#: answered, the table changing or not (docs/protocol.md §4.7).
STALLED_AFTER = 10.0
#: Live connections at once (a player's tabs, say): one more is refused (403), so that a page
#: opening them in a loop cannot make the peer send every view a thousand times.
MAX_CONNECTIONS = 8
#: The longest WebSocket message taken, in bytes; a longer one closes its connection (1009).
#: An action is at most 4 KiB (:func:`~p2p_nertz.web.model.parse_action`).
MAX_MESSAGE = 64 * 1024
#: Seconds the pages get, once their peer is done, to be told why and close.
FAREWELL = 1.0
#: The page may load only its own files and talk only to its own server.
_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'"


class ViewFeed:
    """The latest view of the table, as the text sent to every page; pages wait for a new one."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.version = 0
        self.closed: str | None = None
        self._changed = trio.Event()

    def publish(self, text: str) -> None:
        """A new view (the same text as the last one is not sent again)."""
        if text == self.text or self.closed is not None:
            return
        self.text = text
        self._bump()

    def close(self, words: str) -> None:
        """The peer is done with its pages: each is sent the last view, then ``words`` (a
        ``closed`` message: the page shows them and stops trying to reconnect), and its
        connection is closed; a page that connects after is told the same."""
        if self.closed is None:
            self.closed = words
            self._bump()

    def _bump(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = trio.Event()

    async def wait_after(self, version: int) -> None:
        """Return once the feed is newer than ``version``."""
        while self.version <= version:
            await self._changed.wait()


@dataclass
class Page:
    """Where the page is and who may open it.

    Attributes:
        token: the secret path segment.
        hosts: the ``host:port`` names the browser may use for it (``None``: any, when bound
            to every interface; the Origin must then match the Host the browser used).
    """

    token: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    hosts: frozenset[str] | None = frozenset()

    def host_ok(self, host: str) -> bool:
        """Whether a request's ``Host`` header names this server."""
        return self.hosts is None or host in self.hosts

    def origin_ok(self, origin: str | None, host: str) -> bool:
        """Whether a WebSocket's ``Origin`` is a page of this server."""
        if origin is None:
            return False
        parts = urlsplit(origin)
        return parts.scheme == "http" and parts.netloc == host and self.host_ok(parts.netloc)


class WebApp:
    """The ASGI app (see the module docstring).

    Args:
        page: the token and the allowed hosts.
        feed: the views to send.
        on_action: called with each action a page sends (it must not block; a
            :class:`~p2p_nertz.web.model.BadAction` it raises is answered to that page).
        takes: the kinds of action the page's front end takes now (the table's, the
            lobby's...: ``web/model.py``); any other kind is answered with an error saying so,
            and ``on_action`` is not called.
    """

    def __init__(
        self,
        page: Page,
        feed: ViewFeed,
        on_action: Callable[[PageAction], None],
        *,
        takes: tuple[type[PageAction], ...] = ALL_ACTIONS,
    ) -> None:
        self.page = page
        self.feed = feed
        self.on_action = on_action
        self.takes = takes
        self.connections = 0
        self.refusals = 0
        #: Set once a page's live connection is accepted (the person's page is up: ``nertz
        #: play --web``'s first deal waits for it, ``web/table.py``).
        self.page_seen = trio.Event()
        #: Where the owners of this machine's TCP sockets are read (``web/owner.py``).
        self.tcp_table = TCP_TABLE
        self._left = trio.Event()

    async def close_pages(self, words: str, patience: float = FAREWELL) -> None:
        """Tell every page ``words`` and close its connection (:meth:`ViewFeed.close`: the
        pages stop trying to reconnect); return once they are closed, or after ``patience``
        seconds (a page asleep must not hold up the peer's exit)."""
        self.feed.close(words)
        with trio.move_on_after(patience):
            while self.connections:
                await self._left.wait()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await _lifespan(receive, send)
        elif kind == "http":
            await self._http(scope, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)

    def _route(self, scope: Scope) -> str | None:
        """The name under the token the request asks for; ``None``: not ours."""
        path: str = scope["path"]
        prefix = f"/{self.page.token}/"
        if not path.startswith(prefix):
            return None
        return path[len(prefix) :]

    async def _http(self, scope: Scope, send: Send) -> None:
        headers = _headers(scope)
        name = self._route(scope)
        if not self.page.host_ok(headers.get("host", "")):
            await _respond(send, 421, b"wrong host\n", "text/plain")
            return
        if scope["path"] == f"/{self.page.token}":  # (the URL copied without its last "/")
            await _respond(send, 301, b"", "text/plain", location=f"/{self.page.token}/")
            return
        known = name is not None and (name in FILES or name == RULES)
        if not known or scope["method"] not in ("GET", "HEAD"):
            await _respond(send, 404, b"not found\n", "text/plain")
            return
        if name == RULES:
            body, content_type = rule_book().encode(), "text/plain; charset=utf-8"
        else:
            filename, content_type = FILES[name or ""]
            body = importlib.resources.files(__package__).joinpath("static", filename).read_bytes()
        await _respond(
            send, 200, b"" if scope["method"] == "HEAD" else body, content_type, len(body)
        )

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        host = headers.get("host", "")
        if (
            self._route(scope) != "ws"
            or not self.page.host_ok(host)
            or not self.page.origin_ok(headers.get("origin"), host)
        ):
            self._refused(f"path, host or origin: {headers}")
            await send({"type": "websocket.close", "code": 4403})
            return
        if not self._players_own(scope):
            self._refused(f"from {scope.get('client')}, a socket of another user of this machine")
            await send({"type": "websocket.close", "code": 4403})
            return
        if self.connections >= MAX_CONNECTIONS:
            self._refused(f"{self.connections} already open")
            await send({"type": "websocket.close", "code": 4429})
            return
        self.connections += 1  # (now: handshakes at the same time count too)
        try:
            message = await receive()
            if message["type"] != "websocket.connect":
                return
            await send({"type": "websocket.accept"})
            self.page_seen.set()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._send_views, send, nursery.cancel_scope)
                await self._read_actions(receive, send)
                nursery.cancel_scope.cancel()
        finally:
            self.connections -= 1
            self._left.set()
            self._left = trio.Event()

    def _players_own(self, scope: Scope) -> bool:
        """Whether a connection is not another user's of this machine (``web/owner.py``)."""
        client, server = scope.get("client"), scope.get("server")
        if client is None or server is None:
            return False
        owner = client_owner((client[0], client[1]), (server[0], server[1]), self.tcp_table)
        return owner is None or owner == os.getuid()

    def _refused(self, why: str) -> None:
        """Say on the terminal that a live connection was refused: the 1st, 2nd, 4th, 8th...
        (a page refused in a loop must not flood the player's terminal)."""
        self.refusals += 1
        if self.refusals & (self.refusals - 1) == 0:
            _log.warning("refused a live connection (%d so far): %s", self.refusals, why)

    async def _send_views(self, send: Send, done: trio.CancelScope) -> None:
        sent = 0
        shown: str | None = None
        while True:
            await self.feed.wait_after(sent)
            sent = self.feed.version
            if self.feed.text is not None and self.feed.text != shown:
                shown = self.feed.text
                await send({"type": "websocket.send", "text": shown})
            if self.feed.closed is not None:
                last = json.dumps({"type": "closed", "text": self.feed.closed}, ensure_ascii=False)
                await send({"type": "websocket.send", "text": last})
                await send({"type": "websocket.close", "code": 1000})
                done.cancel()
                return

    async def _read_actions(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] != "websocket.receive":
                return  # (a disconnect)
            text = message.get("text")
            data = text if text is not None else message.get("bytes") or b""
            try:
                action = parse_action(data)
                if not isinstance(action, self.takes):
                    raise BadAction(not_taken(action, self.takes))
                self.on_action(action)
            except BadAction as exc:  # (not an action, or not one that means anything now)
                await send({"type": "websocket.send", "text": _error(str(exc))})


def _error(text: str) -> str:
    return json.dumps({"type": "error", "error": text})


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


async def _respond(
    send: Send,
    status: int,
    body: bytes,
    content_type: str,
    length: int | None = None,
    *,
    location: str | None = None,
) -> None:
    moved = [] if location is None else [(b"location", location.encode())]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *moved,
                (b"content-type", content_type.encode()),
                (b"content-length", str(len(body) if length is None else length).encode()),
                (b"content-security-policy", _CSP.encode()),
                (b"cache-control", b"no-store"),
                (b"x-content-type-options", b"nosniff"),
                (b"referrer-policy", b"no-referrer"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """The ``host:port`` names a browser may use for a server bound there (``None``: any)."""
    if host in ("0.0.0.0", ""):
        return None
    names = {f"{host}:{port}"}
    if host == "127.0.0.1":
        names.add(f"localhost:{port}")
    return frozenset(names)


async def serve_page(
    app: WebApp,
    host: str,
    port: int,
    *,
    stalled_after: float = STALLED_AFTER,
    taken: Callable[[int], None] | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` on ``host:port`` (``0``: a free port) until cancelled; started (with
    ``nursery.start``) once it listens, with the page's URL. A client that takes nothing
    of what it is sent for ``stalled_after`` seconds is dropped (see :data:`STALLED_AFTER`).
    With ``taken``, a ``port`` that cannot be had is not an error: ``taken`` is told it and a
    free port is served (a resumed game's kept port: one attempt, no look first that another
    process could answer wrong by taking the port between the look and the bind).

    Raises:
        NertzError: the address cannot be bound (the message names it).
    """
    try:
        sock = _listening(host, port, stalled_after)
    except NertzError:
        if taken is None or port == 0:
            raise
        taken(port)
        sock = _listening(host, 0, stalled_after)
    bound: int = sock.getsockname()[1]
    app.page.hosts = allowed_hosts(host, bound)
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    config = Config()
    config.bind = [f"fd://{sock.detach()}"]  # hypercorn owns the socket from here
    config.errorlog = logging.getLogger("p2p_nertz.web.http")
    config.accesslog = None
    config.websocket_max_message_size = MAX_MESSAGE
    config.graceful_timeout = 0.5  # a page's socket never ends by itself: do not wait long
    await trio.lowlevel.checkpoint()
    async with trio.open_nursery() as nursery:
        await nursery.start(_serve, app, config)
        task_status.started(f"http://{shown}:{bound}/{app.page.token}/")


def try_address(host: str, port: int) -> None:
    """Bind and listen on ``host:port`` once, and let go: a look before a command makes
    anything (``nertz play --bots N --web``'s game directory and bots), so that a port in
    use or an address not of this machine is said first (status 2), not after. A look, not
    a hold: another program may still take the port before :func:`serve_page` binds it.

    Raises:
        NertzError: the address cannot be bound (the message names it, as serve_page's).
    """
    _listening(host, port, STALLED_AFTER).close()


def _listening(host: str, port: int, stalled_after: float) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening: both in one attempt (a socket of
    another's bound with SO_REUSEADDR and not listening lets the bind pass and takes the port
    at its own listen; whichever listens first has it).

    Raises:
        NertzError: the port cannot be had (the message names the address).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        keep_alive(sock, int(stalled_after * 1000))  # (inherited by every connection)
        sock.bind((host, port))
        sock.listen()  # (hypercorn listens again, with its backlog)
    except OSError as exc:
        sock.close()
        raise NertzError(f"cannot serve the page on {host}:{port}: {exc.strerror}") from None
    return sock


async def _serve(
    app: WebApp, config: Config, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
) -> None:
    async with trio.open_nursery() as nursery:
        await nursery.start(serve, app, config)  # (hypercorn's own start: it listens)
        task_status.started()
