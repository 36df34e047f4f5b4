"""``nertz watch``: a spectator at the terminal, following a live game without playing.

The spectator binds a ROUTER at ``--bind`` and prints where members push to it: its endpoint
and its key, ``tcp://HOST:PORT#KEY`` (the key its identity's, ``--key``, a ``nertz keygen``
file). Members started with ``--watcher`` that address (``nertz play``, ``host``, ``join``,
``bot``, ``node`` ... ``--watcher E#K``) push it every event they log. The ROUTER is a CURVE
server admitting only the keys of the game's roster (:mod:`p2p_nertz.runtime.watchport`,
docs/protocol.md §4.7 *Spectators*), so the spectator needs the game before anyone connects:
``--spec FILE``, a game spec or a member's log of the game (its first record names the spec).
Anyone else (no key, or a key not the table's) is refused at the handshake and counted. It
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
from typing import TYPE_CHECKING, Any

import trio
import zmq

from cli.args import error_text, expected_errors
from cli.files import load_game_spec
from cli.keyfile import load_identity
from cli.terminal import TERMINAL_SIGNALS, Terminal, open_curses, require_terminal, symbols_ok
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.peer import Effect
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.spectator import Spectator
from p2p_nertz.runtime.gate import zap_user_id
from p2p_nertz.runtime.node import WATCH_SPEC_TAG
from p2p_nertz.runtime.watchport import WatcherAddress, WatchPort
from p2p_nertz.runtime.zmqtrio import AsyncSocket
from p2p_nertz.signals import as_sent, open_receiver, signal_status
from p2p_nertz.ui import CloseBoard, Context, KeyState, Tracker, press, render
from p2p_nertz.ui.screen import Screen, Span, Style
from p2p_nertz.words import counted

if TYPE_CHECKING:  # (the browser's modules: imported by --web alone, in watch_in_browser)
    from p2p_nertz.ui.view import TableView
    from p2p_nertz.web.model import PageAction

__all__ = ["watch", "watch_in_browser"]

_REFRESH = 0.2
_REFUSALS_EVERY = 0.5  # seconds between two reads of the port's refused handshakes


async def watch(
    port: WatchPort,
    spec: GameSpec,
    *,
    terminal: Terminal,
    symbols: bool = True,
) -> tuple[Spectator, int | None]:
    """Follow the game pushed to ``port`` (bound) on ``terminal`` until the viewer quits
    (q, Ctrl-C, SIGTERM).

    Args:
        port: the spectator's port, bound (:meth:`WatchPort.bind`); closed by the caller.
        spec: the game (the port admits its members).
        terminal: where to draw and read keys.
        symbols: suit symbols (else letters).

    Returns:
        The spectator (the handshakes the port refused are in ``port.refused``) and the
        signal that stopped it (``None``: the viewer quit with a key).
    """
    watcher = _Watcher(terminal, port, spec, symbols=symbols)
    assert port.router is not None
    async with trio.open_nursery() as nursery:
        watcher.nursery = nursery
        nursery.start_soon(watcher.receive, port.router)
        nursery.start_soon(watcher.refusals)
        nursery.start_soon(watcher.keyboard)
        nursery.start_soon(watcher.screen)
        nursery.start_soon(watcher.signals)
    return watcher.spectator, watcher.signal


async def watch_in_browser(
    port: WatchPort,
    spec: GameSpec,
    *,
    web: tuple[str, int],
    on_url: Callable[[str], None],
) -> tuple[Spectator, int | None]:
    """:func:`watch`, in the browser table: the page its own server serves at ``web`` (its URL
    told to ``on_url``) shows what the terminal would, and its keys (Enter closes a board, q
    quits) come back.

    Raises:
        NertzError: the page cannot be served at ``web``.
    """
    # (the web server, a third of this command's start: imported for --web only)
    from p2p_nertz.web.model import KEYS_ONLY, KeyPress, view_json
    from p2p_nertz.web.server import Page, ViewFeed, WebApp, serve_page

    watcher = _Watcher(None, port, spec, symbols=True)
    feed = ViewFeed()
    keys_in, keys_out = trio.open_memory_channel[str](64)

    def on_action(action: PageAction) -> None:
        assert isinstance(action, KeyPress)  # (the server takes nothing else: KEYS_ONLY)
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
            if not watcher.spectator.held():
                data: dict[str, Any] = {"type": "waiting", "text": watcher.waiting()}
            else:
                data = view_json(watcher.view())
            feed.publish(json.dumps(data, ensure_ascii=False))
            with trio.move_on_after(_REFRESH):
                await watcher.wake.wait()

    assert port.router is not None
    async with trio.open_nursery() as nursery:
        watcher.nursery = nursery
        # (the signals first: a Ctrl-C once the page's address is said is the watcher's quit,
        # never trio's KeyboardInterrupt raised into whichever task runs then, session 37)
        await nursery.start(watcher.signals)
        on_url(
            await nursery.start(serve_page, WebApp(Page(), feed, on_action, takes=KEYS_ONLY), *web)
        )
        nursery.start_soon(watcher.receive, port.router)
        nursery.start_soon(watcher.refusals)
        nursery.start_soon(keys)
        nursery.start_soon(views)
    return watcher.spectator, watcher.signal


class _Watcher:
    """The tasks of :func:`watch`: what members push, the refused handshakes, the keys, the
    screen, the signals (``terminal`` ``None``: in a browser, :func:`watch_in_browser`, whose
    own tasks read the keys and show the views)."""

    def __init__(
        self, terminal: Terminal | None, port: WatchPort, spec: GameSpec, *, symbols: bool
    ) -> None:
        self.terminal = terminal
        self.port = port
        self.symbols = symbols
        self.spectator = Spectator(spec)
        self.tracker = Tracker(tuple(m.name for m in spec.members), None, symbols)
        self._seat_of = {zap_user_id(pid): s for s, pid in enumerate(spec.peer_ids)}
        self.keys = KeyState()
        self.wake = trio.Event()
        self.nursery: trio.Nursery | None = None
        self.signal: int | None = None  # (the SIGINT or SIGTERM that stopped it, if one did)

    def take(self, data: bytes, user_id: bytes = b"") -> None:
        """One message a member pushed: an event or a beat (the spec a node pushes first is
        not needed: the port admitted the sender by the spec we hold). ``user_id``: the
        pushing member, as the port's gate named its connection (its peer id in hex): the
        screen says so once every member that pushes has gone."""
        seat = self._seat_of.get(user_id)
        if seat is not None and seat not in self.tracker.followed:
            self.tracker.followed.add(seat)
            self.wake.set()
        if data.startswith(WATCH_SPEC_TAG):
            return
        notices: list[Effect] = list(self.spectator.feed(data, trio.current_time()))
        self.tracker.take(notices, self.spectator.final)
        self.wake.set()

    async def receive(self, router: AsyncSocket) -> None:
        while True:
            frames = await router.recv_multipart()  # [routing id, message, User-Id]
            if len(frames) == 3:
                self.take(frames[1], frames[2])

    async def refusals(self) -> None:
        """Count and log (at a bounded rate) the handshakes the port refused."""
        while True:
            await trio.sleep(_REFUSALS_EVERY)
            self.port.note_refusals(trio.current_time())

    def quit(self) -> None:
        assert self.nursery is not None
        self.port.note_refusals(trio.current_time())  # (the last ones, for the summary)
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
        if key == "RESIZE":
            return False
        ctx = Context(self.spectator.tentative.table, None, board=self.tracker.board is not None)
        self.keys, actions = press(self.keys, key, ctx)
        if any(isinstance(a, CloseBoard) for a in actions):
            self.tracker.close_board()
        return False

    def view(self) -> TableView:
        """The table now, with why it waits (the votes short of a majority, the members held
        back: ``protocol/unmet.py``, timed on trio's clock; session 38: ``watch`` said
        neither; the members owing their phase's event and the drops decided, not final:
        session 40)."""
        return self.tracker.view(self.spectator, self.keys, now=trio.current_time())

    def waiting(self) -> str:
        """What the screen says before the first event: where members push."""
        return waiting_text(self.spectator.spec.game_id, self.port.address)

    async def screen(self) -> None:
        assert self.terminal is not None
        while True:
            self.wake = trio.Event()
            width, height = self.terminal.size()
            if not self.spectator.held():
                self.terminal.paint(_waiting(width, height, self.waiting()))
            else:
                view = self.view()
                self.terminal.paint(render(view, width, height, symbols=self.symbols))
            with trio.move_on_after(_REFRESH):
                await self.wake.wait()

    async def signals(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Quit on SIGINT or SIGTERM (said started once they are this task's)."""
        wanted = (signal.SIGINT, signal.SIGTERM, *TERMINAL_SIGNALS)
        with open_receiver(*wanted) as received:
            task_status.started()
            async for signum in received:
                if signum in TERMINAL_SIGNALS:
                    if self.terminal is not None:
                        self.terminal.resized()
                        self.wake.set()
                    continue
                self.signal = as_sent(signum)
                self.quit()
                return


def waiting_text(game_id: bytes, address: WatcherAddress) -> str:
    """Where members push, the address on a line of its own without ``tcp://`` (``--watcher``
    takes it so): 80 characters on 127.0.0.1, so an 80-column screen shows it whole, to be
    copied in one piece (with ``--watcher`` before it, it wrapped inside the key)."""
    where = str(address).removeprefix("tcp://")
    return f"waiting for game {game_id.hex()[:16]}; members push here with --watcher\n{where}"


def _waiting(width: int, height: int, text: str) -> Screen:
    """The screen before the first event: the text's lines, each wrapped (the address is
    long), and q."""
    rows: list[tuple[Span, ...]] = [(Span("p2p-nertz spectator", Style.BOLD),), ()]
    for line in text.splitlines():
        rows += [(Span(line[at : at + width]),) for at in range(0, len(line), max(width, 1))]
    rows += [(), (Span("q quits"[:width]),)]
    return Screen(width, height, tuple(rows[:height]))


def _cmd_watch(args: argparse.Namespace) -> int:
    spec = load_game_spec(args.spec)  # (the key and the game: checked by cli/parsers.py)
    identity = load_identity(args.key, players=spec.peer_ids)
    if not args.web:
        require_terminal()  # (before it binds and says where members push)
    colour = not args.mono and "NO_COLOR" not in os.environ
    symbols = symbols_ok(args)
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    port = WatchPort(ctx, identity, spec, args.bind)
    try:
        try:
            address = port.bind()
        except NertzError as exc:
            raise NertzError(f"cannot watch on {args.bind}: {exc}") from None
        anywhere = address.endpoint.startswith(("tcp://0.0.0.0:", "tcp://*:"))
        where = " (this machine's address on the table's network for 0.0.0.0)" if anywhere else ""
        print(f"members push here with: --watcher {address}{where}", file=sys.stderr, flush=True)
        if args.web:
            spectator, signum = _watch_web(args, port, spec)
        else:
            with open_curses(colour=colour) as terminal:
                spectator, signum = trio.run(_main, port, spec, terminal, symbols)
    finally:
        port.close()
        # (destroy: a socket its owner had not taken yet when a Ctrl-C came is closed too,
        # where term waited for it for ever, the program hung; session 39)
        ctx.destroy(linger=0)
    final = spectator.final
    names = [m.name for m in spectator.spec.members]
    totals = "  ".join(f"{names[s]} {t}" for s, t in enumerate(final.game.totals))
    rounds = counted(len(final.game.history), "round")
    print(f"watched {spectator.held()} events; after {rounds}: {totals}")
    if spectator.rejected:
        print(f"refused {counted(spectator.rejected, 'message')}", file=sys.stderr)
    if port.summary():
        print(port.summary(), file=sys.stderr)
    if signum is not None:  # (as at a signal before the viewer was up: cli/args.py)
        print(f"nertz watch: stopped on signal {signum}", file=sys.stderr)
        return signal_status(signum)
    return 0


async def _main(
    port: WatchPort, spec: GameSpec, terminal: Terminal, symbols: bool
) -> tuple[Spectator, int | None]:
    return await watch(port, spec, terminal=terminal, symbols=symbols)


def _watch_web(
    args: argparse.Namespace, port: WatchPort, spec: GameSpec
) -> tuple[Spectator, int | None]:
    """``nertz watch --web``: the URL on a line of its own, the browser opened unless
    ``--no-open``."""
    from cli.web_cmd import browser_opener

    on_url = browser_opener(args.web_bind, open_page=not args.no_open)

    async def main() -> tuple[Spectator, int | None]:
        return await watch_in_browser(port, spec, web=args.web_bind, on_url=on_url)

    try:
        return trio.run(main)
    except BaseExceptionGroup as group:
        errors = expected_errors(group)
        raise NertzError(f"cannot watch on {args.bind}: {error_text(errors[0])}") from None
    except NertzError as exc:
        raise NertzError(f"cannot watch on {args.bind}: {exc}") from None
