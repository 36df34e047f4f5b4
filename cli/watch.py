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
import os
import signal
import sys
from pathlib import Path
from typing import Any

import trio
import zmq

from cli.args import bind_endpoint
from cli.node_cmd import load_spec
from cli.terminal import Terminal, open_curses, symbols_ok
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.peer import Effect
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.runtime.node import WATCH_MAX_FRAME, WATCH_SPEC_TAG
from p2p_nertz.runtime.zmqtrio import create_socket
from p2p_nertz.ui import CloseBoard, Context, KeyState, Tracker, press, render
from p2p_nertz.ui.screen import Screen, Span, Style
from p2p_nertz.ui.spectator import Spectator

__all__ = ["add_parser", "watch"]

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
    spectator: Spectator | None = None
    tracker: Tracker | None = None
    early: list[bytes] = []  # events pushed before the spec

    def start(found: GameSpec) -> None:
        nonlocal spectator, tracker
        spectator = Spectator(found)
        tracker = Tracker(tuple(m.name for m in found.members), None, symbols)
        for data in early:
            tracker.take(list(spectator.feed(data)), spectator.final)
        early.clear()

    if spec is not None:
        start(spec)
    keys = KeyState()
    wake = trio.Event()
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    router = create_socket(ctx, zmq.ROUTER, max_message_size=WATCH_MAX_FRAME)
    try:
        router.bind(bind)
        async with trio.open_nursery() as nursery:

            async def receive() -> None:
                while True:
                    frames = await router.recv_multipart()
                    if len(frames) != 2:
                        continue
                    data = frames[1]
                    if data.startswith(WATCH_SPEC_TAG):
                        if spectator is None:
                            try:
                                found = GameSpec.from_wire(data[len(WATCH_SPEC_TAG) :])
                            except NertzError:
                                continue
                            if game is None or found.game_id.hex().startswith(game.lower()):
                                start(found)
                                wake.set()
                        continue
                    if spectator is None or tracker is None:
                        if len(early) < _EARLY_MAX:
                            early.append(data)
                        continue
                    notices: list[Effect] = list(spectator.feed(data))
                    tracker.take(notices, spectator.final)
                    wake.set()

            async def keyboard() -> None:
                nonlocal keys
                while True:
                    await terminal.wait_input()
                    for key in terminal.read_keys():
                        if key in ("q", "Q", "CTRL-C"):
                            nursery.cancel_scope.cancel()
                            return
                        if key == "RESIZE" or spectator is None or tracker is None:
                            continue
                        ctx_ = Context(
                            spectator.tentative.table, None, board=tracker.board is not None
                        )
                        keys, actions = press(keys, key, ctx_)
                        if any(isinstance(a, CloseBoard) for a in actions):
                            tracker.close_board()
                    wake.set()

            async def screen() -> None:
                nonlocal wake
                while True:
                    wake = trio.Event()
                    width, height = terminal.size()
                    if spectator is None or tracker is None:
                        wanted = f"game {game}…" if game else "a game"
                        terminal.paint(
                            _waiting(width, height, f"waiting on {bind} for {wanted} · q quits")
                        )
                    else:
                        view = tracker.view(spectator, keys)
                        terminal.paint(render(view, width, height, symbols=symbols))
                    with trio.move_on_after(_REFRESH):
                        await wake.wait()

            async def signals() -> None:
                with trio.open_signal_receiver(
                    signal.SIGINT, signal.SIGTERM, signal.SIGWINCH
                ) as received:
                    async for signum in received:
                        if signum == signal.SIGWINCH:
                            terminal.resized()
                            wake.set()
                            continue
                        nursery.cancel_scope.cancel()
                        return

            nursery.start_soon(receive)
            nursery.start_soon(keyboard)
            nursery.start_soon(screen)
            nursery.start_soon(signals)
    finally:
        router.close()
        ctx.term()
    return spectator


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
