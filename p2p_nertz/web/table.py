"""The browser table: a person playing one peer from a page its own node serves.

:func:`run_web_table` is the browser's twin of the terminal's ``cli.table.run_table``: the
same :class:`~p2p_nertz.ui.controller.TableController` decides everything; this module runs it
under trio with the page server (:mod:`p2p_nertz.web.server`) as its front end. Each view the
controller shows is sent to the page as JSON; each key or drop the page sends goes to the
controller, and what the controller asks of the node is carried out here.

Each view also carries what the page says if its peer stops answering without a last word
(killed, crashed): :func:`unanswered`, how to take the game up again from the node's log.

SIGINT and SIGTERM are taken before the page is served, so before its address is said: a
Ctrl-C once a person (or a script) has the address leaves the game, and is never trio's
KeyboardInterrupt raised into whichever task runs then (session 37: at load 20 half of such
Ctrl-Cs said "interrupted", one ended on a trio internal error). One that comes before the
table's tasks start waits in the receiver; so does one that comes between the lobby and the
table, whose receiver is the lobby's, held across the hand-over (session 38). Each is said as
it was sent (:mod:`p2p_nertz.signals`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import GameState
from p2p_nertz.runtime.node import PeerNode
from p2p_nertz.runtime.table import TableRunner
from p2p_nertz.signals import STOPPING, Signals, receiver_or_none
from p2p_nertz.ui import TableView
from p2p_nertz.ui.controller import TableController
from p2p_nertz.web.model import TABLE_ACTIONS, Drop, KeyPress, PageAction, view_json
from p2p_nertz.web.picture import picture_of
from p2p_nertz.web.server import Page, ViewFeed, WebApp, serve_page

__all__ = ["WebFront", "WebOutcome", "run_web_table", "unanswered"]

_QUEUE = 64  # actions waiting for the controller; a page sending faster is told to slow down


def unanswered(log: Path) -> str:
    """What the page says once its peer has not answered for a while (``table.js``: 30 s of
    failed tries, which go on): how to take the game up again, with the node's log named as
    a shell takes it from anywhere.

    >>> said = unanswered(Path("/tmp/my games/you.log"))
    >>> said.startswith("the nertz program is not answering — if it stopped, nertz resume '/tmp/m")
    True
    """
    command = f"nertz resume {shlex.quote(str(log.absolute()))} --web"
    # ("the peer", the README's word, was not a newcomer's: it is their nertz program.)
    return (
        f"the nertz program is not answering — if it stopped, {command} takes the game up "
        "again here"
    )


class WebFront:
    """The controller's front end in a browser: each view becomes the JSON the pages get
    (with the round's picture on the board, from ``final``: the node's final fold).

    Attributes:
        feed: the latest view, as text, for the server.
        ack: the last drop the controller took (the page's id for it).
        handled_ms: how long that drop took from its message to the node's answer.
        log: the node's log, named in what the page says if the peer stops answering
            (:func:`unanswered`; ``None``: the page's own general words).
    """

    def __init__(
        self,
        feed: ViewFeed,
        *,
        symbols: bool = True,
        final: Callable[[], GameState | None] = lambda: None,
        log: Path | None = None,
    ) -> None:
        self.feed = feed
        self.symbols = symbols
        self.final = final
        self.ack: int | None = None
        self.handled_ms: float | None = None
        self._unanswered = None if log is None else unanswered(log)
        self._pictures: dict[int, dict[str, Any] | None] = {}

    def show(self, view: TableView) -> None:
        data = view_json(view, symbols=self.symbols, ack=self.ack)
        data["handled_ms"] = self.handled_ms
        data["unanswered"] = self._unanswered
        if view.board is not None and data["board"] is not None:
            data["board"]["picture"] = self._picture(view.board.round)
        self.feed.publish(json.dumps(data, ensure_ascii=False))

    def _picture(self, number: int) -> dict[str, Any] | None:
        """The round's picture, from the final fold (worked out once: a scored round's log
        is final)."""
        if number not in self._pictures:
            final = self.final()
            picture = None if final is None else picture_of(final, number)
            self._pictures[number] = None if picture is None else picture.as_json()
        return self._pictures[number]


@dataclass
class WebOutcome:
    """How :func:`run_web_table` ended (as ``cli.table.Outcome``)."""

    peer: Peer | None = None
    left: bool = False
    signal: int | None = None


async def run_web_table(
    node: PeerNode,
    endpoints: Mapping[PeerId, str],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    on_url: Callable[[str], None],
    symbols: bool = True,
    signals: bool | Signals = True,
    hint: str | None = None,
    app: WebApp | None = None,
    token: str | None = None,
    taken: Callable[[int], None] | None = None,
    first_deal: float | None = None,
) -> WebOutcome:
    """Play ``node`` from a browser page until the game is over and read, or the player leaves.

    The node must have no bot strategy; this runs it (:meth:`PeerNode.run`), so do not.

    Args:
        node: the player's node, bound or not.
        endpoints: every other member's endpoint.
        host: the address the page is served on (127.0.0.1: this machine only).
        port: its port (0: a free one).
        on_url: told the page's URL once it is served (print it, open a browser).
        symbols: suit symbols in the words (the cards are drawn either way).
        signals: leave on SIGINT/SIGTERM (the main thread's); or the receiver the caller holds
            across a hand-over (the lobby's: :func:`p2p_nertz.signals.open_signals`).
        hint: a first announcement.
        app: a page server already serving (the lobby's, :mod:`p2p_nertz.web.terminal`): the
            table takes it over, on the same URL (``on_url`` is not called).
        token: the page's secret path segment (``None``: a new one). A resumed game serves
            its page at the URL of its first run, so that its open pages reconnect.
        taken: told ``port`` when it is taken, a free one served instead (``serve_page``).
        first_deal: let the node's held round-1 ``ready`` (``hold_ready=0``) go once a page
            connects, or after this many seconds (:meth:`_Runner.first_deal`; ``None``: never).

    Raises:
        NertzError: the page cannot be served on ``host:port``.
    """
    feed = ViewFeed() if app is None else app.feed
    final = functools.partial(_final, node)
    front = WebFront(feed, symbols=symbols, final=final, log=node.log_path)
    table = TableController(
        tuple(m.name for m in node.spec.members),
        node.spec.seat_of(node.identity.peer_id),
        front,
        symbols=symbols,
        hint=hint,
    )
    runner = _Runner(node, table, front)
    node.add_listener(runner.on_notice)
    with receiver_or_none(signals) as received:  # (before the address is said: see top)
        async with trio.open_nursery() as server:
            if app is None:
                page = Page() if token is None else Page(token=token)
                app = WebApp(page, feed, runner.on_action, takes=TABLE_ACTIONS)
                serve = functools.partial(serve_page, taken=taken)
                on_url(await server.start(serve, app, host, port))
            else:
                app.on_action, app.takes = runner.on_action, TABLE_ACTIONS
            async with trio.open_nursery() as nursery:
                runner.nursery = nursery
                nursery.start_soon(runner.play, endpoints)
                nursery.start_soon(runner.actions)
                nursery.start_soon(runner.screen)
                if first_deal is not None:
                    nursery.start_soon(runner.first_deal, app.page_seen, first_deal)
                if received is not None:
                    nursery.start_soon(runner.watch_signals, received)
            # The pages are told why the table is done (they stop trying to reconnect), then
            # the server stops (the lobby's, when it is that one, is its caller's to stop).
            await app.close_pages(table.farewell())
            server.cancel_scope.cancel()
    outcome = WebOutcome(runner.peer, table.left, table.signal)
    if outcome.peer is None:
        with contextlib.suppress(RuntimeError):
            outcome.peer = node.peer
    return outcome


def _final(node: PeerNode) -> GameState | None:
    """The node's final fold (``None``: not started yet)."""
    try:
        return node.peer.final
    except RuntimeError:
        return None


class _Runner(TableRunner):
    """The trio tasks of :func:`run_web_table` around its controller: the shared ones
    (:class:`~p2p_nertz.runtime.table.TableRunner`), and the page's actions and the process's
    signals."""

    def __init__(self, node: PeerNode, table: TableController, front: WebFront) -> None:
        super().__init__(node, table)
        self.front = front
        self.send, self.receive = trio.open_memory_channel[tuple[PageAction, float]](_QUEUE)

    def on_action(self, action: PageAction) -> None:
        """An action of the page (from the server's task): queued for :meth:`actions`."""
        with contextlib.suppress(trio.WouldBlock):  # (a flood: dropped, as keys typed ahead)
            self.send.send_nowait((action, time.perf_counter()))

    async def actions(self) -> None:
        async for action, received in self.receive:
            now = self.node.clock()
            if isinstance(action, KeyPress):
                await self.carry_out(self.table.press(action.key, self.current(), now))
            elif isinstance(action, Drop):
                requests = self.table.drop(
                    action.source, action.targets, self.current(), now, count=action.count
                )
                await self.carry_out(requests)
                self.front.ack = action.id
                self.front.handled_ms = (time.perf_counter() - received) * 1000.0
            self.wake.set()

    async def first_deal(self, page_seen: trio.Event, bound: float) -> None:
        """Let round 1's ``ready`` go once the person's page is connected, or after ``bound``
        seconds (a page never opened, ``--no-open``): the browser takes 1-8 s to show the
        page, and the bots, which play a round only once every player has its deal, would
        otherwise play its first seconds (or, at ``--speed 10``, all of it) unseen. The bound
        is the between-rounds countdown's (:data:`~p2p_nertz.ui.controller.BETWEEN_ROUNDS`,
        30 s, counted here from before the round's deal began), within the protocol's
        ``phase_timeout`` (60 s) after which a member holding up ``play`` is voted out."""
        with trio.move_on_after(bound):
            await page_seen.wait()
        await self.node.started.wait()  # (not started yet: nothing to sign)
        await self.release(1)

    async def watch_signals(self, received: Signals) -> None:
        """Leave at a SIGINT or SIGTERM, said as sent (:func:`p2p_nertz.signals.as_sent`: a
        SIGTERM ``nertz`` raised as a Ctrl-C is a SIGTERM); others a held receiver takes
        (the terminal's resizes, the lobby's) mean nothing to a page."""
        async for signum in received:
            if signum in STOPPING:
                await self.carry_out(self.table.signal_received(signum))
                self.wake.set()
