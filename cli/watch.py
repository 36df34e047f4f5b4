"""``nertz watch``: a spectator at the terminal, following a live game without playing.

The spectator binds a ROUTER at ``--bind`` and members started with ``--watcher`` that endpoint
(``nertz play``, ``host``, ``join``, ``bot``, ``node`` ... ``--watcher E``) push it the game's
spec, then every event they log. It needs the spec (its id and roster) to verify the members'
signatures: from ``--spec FILE``, or the first one pushed (``--game ID`` restricts it). It
never sends anything, is not in the roster and cannot change the game. The screen shows every
tableau (as the moves reveal it), the lake, the announcements and the end-of-round boards;
``q`` quits, ``?`` shows the keys.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio
import zmq

from cli.args import add_web_arguments, bind_endpoint, error_text, expected_errors
from cli.node_cmd import load_spec
from cli.terminal import Terminal, open_curses, symbols_ok
from cli.web_cmd import browser_opener
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.peer import Effect
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.spectator import Spectator
from p2p_nertz.runtime.node import WATCH_MAX_FRAME, WATCH_SPEC_TAG
from p2p_nertz.runtime.zmqtrio import AsyncSocket, create_socket
from p2p_nertz.ui import CloseBoard, Context, KeyState, Tracker, press, render
from p2p_nertz.ui.screen import Screen, Span, Style
from p2p_nertz.web.model import KeyPress, PageAction, view_json
from p2p_nertz.web.server import Page, ViewFeed, WebApp, serve_page

__all__ = ["add_parser", "watch", "watch_in_browser"]

_REFRESH = 0.2
_EARLY_MAX = 4096  # events kept while waiting for the spec


def add_parser(sub: Any) -> None:
    """Add the ``watch`` subcommand to ``sub`` (the ``nertz`` subparsers).

    Args:
        sub: the object returned by :meth:`argparse.ArgumentParser.add_subparsers`.
    """
    help_text = "follow a live game as a spectator (members push to you with --watcher)"
    p: argparse.ArgumentParser = sub.add_parser("watch", help=help_text, description=help_text)
    p.add_argument(
        "--spec",
        type=Path,
        help="the game's spec file (default: the spec the first member pushes, checked "
        "against --game if given)",
    )
    p.add_argument(
        "--game",
        metavar="ID",
        help="with no --spec: only the game whose id starts with these hex digits",
    )
    p.add_argument(
        "--bind",
        required=True,
        type=bind_endpoint,
        help="where members push events, e.g. 127.0.0.1:5600 or tcp://127.0.0.1:5600",
    )
    p.add_argument("--ascii", action="store_true", help="suits as letters C D H S")
    p.add_argument("--mono", action="store_true", help="no colour (also with NO_COLOR set)")
    add_web_arguments(p, "follow it in a browser page served by this process (its URL is printed)")
    p.set_defaults(func=_cmd_watch)


async def watch(
    spec: GameSpec | None,
    bind: str,
    *,
    terminal: Terminal,
    symbols: bool = True,
    game: str | None = None,
) -> Spectator | None:
    """Follow the game pushed to ``bind`` on ``terminal`` until the viewer quits (q, Ctrl-C).

    Args:
        spec: the game; ``None`` to take the spec the first member pushes (a node pushes it
            first, :data:`~p2p_nertz.runtime.node.WATCH_SPEC_TAG`), restricted to a game id
            starting with ``game`` (hex) if given. Events that come before it wait (bounded).
        bind: where members push.
        terminal: where to draw and read keys.
        symbols: suit symbols (else letters).
        game: see ``spec``.

    Returns:
        The spectator, or ``None`` if no game came before the viewer quit.

    Raises:
        TransportBrokenError: ``bind`` cannot be bound.
    """
    watcher = _Watcher(terminal, bind, symbols=symbols, game=game)
    if spec is not None:
        watcher.start(spec)
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    router = _watch_router(ctx)
    try:
        router.bind(bind)
        async with trio.open_nursery() as nursery:
            watcher.nursery = nursery
            nursery.start_soon(watcher.receive, router)
            nursery.start_soon(watcher.keyboard)
            nursery.start_soon(watcher.screen)
            nursery.start_soon(watcher.signals)
    finally:
        router.close()
        ctx.term()
    return watcher.spectator


def _watch_router(ctx: zmq.Context[zmq.Socket[bytes]]) -> AsyncSocket:
    """The spectator's ROUTER, members' DEALERs push to: only ever received on, so with no ZMTP
    heartbeat of its own (libzmq 4.3.5 aborts when one falls due on a connection whose input
    stopped at the HWM and then broke: a spectator stopped with a backlog; docs/lobby.md §8).
    The members' DEALERs' heartbeats, which it answers, watch each link."""
    return create_socket(ctx, zmq.ROUTER, max_message_size=WATCH_MAX_FRAME, heartbeat=False)


async def watch_in_browser(
    spec: GameSpec | None,
    bind: str,
    *,
    web: tuple[str, int],
    on_url: Callable[[str], None],
    game: str | None = None,
) -> Spectator | None:
    """:func:`watch`, in the browser table: the page its own server serves at ``web`` (its URL
    told to ``on_url``) shows what the terminal would, and its keys (Enter closes a board, q
    quits) come back.

    Raises:
        TransportBrokenError: ``bind`` cannot be bound.
        NertzError: the page cannot be served at ``web``.
    """
    watcher = _Watcher(None, bind, symbols=True, game=game)
    if spec is not None:
        watcher.start(spec)
    feed = ViewFeed()
    keys_in, keys_out = trio.open_memory_channel[str](64)

    def on_action(action: PageAction) -> None:
        if isinstance(action, KeyPress):
            with contextlib.suppress(trio.WouldBlock):  # (a flood: dropped)
                keys_in.send_nowait(action.key)

    async def keys() -> None:
        async for key in keys_out:
            if watcher.key(key):
                return
            watcher.wake.set()

    async def views() -> None:
        while True:
            watcher.wake = trio.Event()
            if watcher.spectator is None or watcher.tracker is None:
                data: dict[str, Any] = {"type": "waiting", "text": watcher.waiting()}
            else:
                data = view_json(watcher.tracker.view(watcher.spectator, watcher.keys))
            feed.publish(json.dumps(data, ensure_ascii=False))
            with trio.move_on_after(_REFRESH):
                await watcher.wake.wait()

    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    router = _watch_router(ctx)
    try:
        router.bind(bind)
        async with trio.open_nursery() as nursery:
            watcher.nursery = nursery
            on_url(await nursery.start(serve_page, WebApp(Page(), feed, on_action), *web))
            nursery.start_soon(watcher.receive, router)
            nursery.start_soon(keys)
            nursery.start_soon(views)
            nursery.start_soon(watcher.signals)
    finally:
        router.close()
        ctx.term()
    return watcher.spectator


class _Watcher:
    """The tasks of :func:`watch`: what members push, the keys, the screen, the signals
    (``terminal`` ``None``: in a browser, :func:`watch_in_browser`, whose own tasks read the
    keys and show the views)."""

    def __init__(
        self, terminal: Terminal | None, bind: str, *, symbols: bool, game: str | None
    ) -> None:
        self.terminal = terminal
        self.bind = bind
        self.symbols = symbols
        self.game = game
        self.spectator: Spectator | None = None
        self.tracker: Tracker | None = None
        self.early: list[bytes] = []  # events pushed before the spec
        self.keys = KeyState()
        self.wake = trio.Event()
        self.nursery: trio.Nursery | None = None

    def start(self, found: GameSpec) -> None:
        """The game is known: follow it, with the events that came before."""
        self.spectator = spectator = Spectator(found)
        self.tracker = tracker = Tracker(tuple(m.name for m in found.members), None, self.symbols)
        for data in self.early:
            tracker.take(list(spectator.feed(data)), spectator.final)
        self.early.clear()

    def take(self, data: bytes) -> None:
        """One message a member pushed: the spec (first), or an event."""
        if data.startswith(WATCH_SPEC_TAG):
            if self.spectator is None:
                try:
                    found = GameSpec.from_wire(data[len(WATCH_SPEC_TAG) :])
                except NertzError:
                    return
                if self.game is None or found.game_id.hex().startswith(self.game.lower()):
                    self.start(found)
                    self.wake.set()
            return
        if self.spectator is None or self.tracker is None:
            if len(self.early) < _EARLY_MAX:
                self.early.append(data)
            return
        notices: list[Effect] = list(self.spectator.feed(data))
        self.tracker.take(notices, self.spectator.final)
        self.wake.set()

    async def receive(self, router: AsyncSocket) -> None:
        while True:
            frames = await router.recv_multipart()
            if len(frames) == 2:
                self.take(frames[1])

    def quit(self) -> None:
        assert self.nursery is not None
        self.nursery.cancel_scope.cancel()

    async def keyboard(self) -> None:
        assert self.terminal is not None
        while True:
            await self.terminal.wait_input()
            for key in self.terminal.read_keys():
                if self.key(key):
                    return
            self.wake.set()

    def key(self, key: str) -> bool:
        """One key of the viewer; ``True``: it quit."""
        if key in ("q", "Q", "CTRL-C"):
            self.quit()
            return True
        spectator, tracker = self.spectator, self.tracker
        if key == "RESIZE" or spectator is None or tracker is None:
            return False
        ctx = Context(spectator.tentative.table, None, board=tracker.board is not None)
        self.keys, actions = press(self.keys, key, ctx)
        if any(isinstance(a, CloseBoard) for a in actions):
            tracker.close_board()
        return False

    def waiting(self) -> str:
        """What the screen says before the game is known."""
        wanted = f"game {self.game}…" if self.game else "a game"
        return f"waiting on {self.bind} for {wanted} · q quits"

    async def screen(self) -> None:
        assert self.terminal is not None
        while True:
            self.wake = trio.Event()
            width, height = self.terminal.size()
            if self.spectator is None or self.tracker is None:
                self.terminal.paint(_waiting(width, height, self.waiting()))
            else:
                view = self.tracker.view(self.spectator, self.keys)
                self.terminal.paint(render(view, width, height, symbols=self.symbols))
            with trio.move_on_after(_REFRESH):
                await self.wake.wait()

    async def signals(self) -> None:
        wanted = (signal.SIGINT, signal.SIGTERM, signal.SIGWINCH)
        with trio.open_signal_receiver(*wanted) as received:
            async for signum in received:
                if signum == signal.SIGWINCH:
                    if self.terminal is not None:
                        self.terminal.resized()
                        self.wake.set()
                    continue
                self.quit()
                return


def _waiting(width: int, height: int, text: str) -> Screen:
    rows = [(Span("p2p-nertz spectator", Style.BOLD),), (), (Span(text[:width]),)]
    return Screen(width, height, tuple(rows))


def _cmd_watch(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec) if args.spec is not None else None
    if args.game is not None:
        try:
            bytes.fromhex(args.game if len(args.game) % 2 == 0 else args.game + "0")
        except ValueError:
            raise NertzError(f"--game wants hex digits of a game id, not {args.game!r}") from None
    colour = not args.mono and "NO_COLOR" not in os.environ
    symbols = symbols_ok(args)
    if args.web:
        spectator = _watch_web(args, spec)
    else:
        with open_curses(colour=colour) as terminal:
            try:
                spectator = trio.run(_main, spec, args.bind, terminal, symbols, args.game)
            except NertzError as exc:
                raise NertzError(f"cannot watch on {args.bind}: {exc}") from None
    if spectator is None:
        print("no game was pushed here")
        return 0
    final = spectator.final
    names = [m.name for m in spectator.spec.members]
    totals = "  ".join(f"{names[s]} {t}" for s, t in enumerate(final.game.totals))
    print(f"watched {spectator.held()} events; after {len(final.game.history)} round(s): {totals}")
    if spectator.rejected:
        print(f"refused {spectator.rejected} message(s)", file=sys.stderr)
    return 0


async def _main(
    spec: GameSpec | None, bind: str, terminal: Terminal, symbols: bool, game: str | None
) -> Spectator | None:
    return await watch(spec, bind, terminal=terminal, symbols=symbols, game=game)


def _watch_web(args: argparse.Namespace, spec: GameSpec | None) -> Spectator | None:
    """``nertz watch --web``: the URL on a line of its own, the browser opened unless
    ``--no-open``."""

    on_url = browser_opener(args.web_bind, open_page=not args.no_open)

    async def main() -> Spectator | None:
        return await watch_in_browser(
            spec, args.bind, web=args.web_bind, on_url=on_url, game=args.game
        )

    try:
        return trio.run(main)
    except BaseExceptionGroup as group:
        errors = expected_errors(group)
        raise NertzError(f"cannot watch on {args.bind}: {error_text(errors[0])}") from None
    except NertzError as exc:
        raise NertzError(f"cannot watch on {args.bind}: {exc}") from None
