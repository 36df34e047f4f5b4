"""``nertz play``: the terminal table — a human at the keyboard, playing one peer of a game.

The table is :func:`run_table`, a coroutine that plays a :class:`~p2p_nertz.runtime.node.PeerNode`
(with no bot) from a :class:`Terminal` until the game is over and the player has read the
standings, or the player leaves; the LAN lobby calls it once its game is fixed. Two ways in:

``nertz play --bots N``
    a quick game on this machine: like ``nertz demo`` it makes the identities, the spec, a free
    port per player and the keys (kept in the key store, cli/keyfile.py), starts N bot peers
    as ``nertz node`` processes on 127.0.0.1, and seats you at the table with them;
``nertz play --key K --spec S --bind E --peer WHO=ENDPOINT… --log L``
    one member of a game fixed elsewhere, exactly like ``nertz node`` but with you playing.

How curses and trio share the process: everything runs on trio's thread. Keys are read with
curses in no-delay mode whenever trio reports standard input readable; a resize (SIGWINCH, taken
by a trio signal receiver) re-reads the terminal size; the screen is re-rendered from the peer's
state after every key and notice, and a few times a second for the others' moves, and curses
only sends what changed. Ctrl-C (or SIGTERM) leaves the game cleanly — a signed ``leave`` the
others see — and a second one stops at once.

``--watcher ENDPOINT`` (both ways) also pushes every event this node holds to a spectator
running ``nertz watch`` there (see ``cli/watch.py``). ``--suspect-after`` and ``--drop-after``
set this player's liveness timers (DESIGN.md §6): once the one other member left is suspected
the table offers the abandon key (``a``); the node carries it out once that member has been
silent for ``--drop-after``, and until then the footer and the key say how many seconds are
left.
"""

from __future__ import annotations

import argparse
import contextlib
import curses
import locale
import math
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import trio

from cli.bots import LEAVE_PATIENCE, spawn_lobby_bot, stop_processes
from cli.demo import _Child, _stop, free_ports, game_dir, start_node_child
from cli.keyfile import keep_key
from cli.lobby_cmd import (
    _address,
    _default_log_dir,
    _default_name,
    _free_port,
    _host_port,
    _ipv4,
    _load_key,
    _name,
    _port,
    _write_key,
    default_key_path,
)
from cli.main import (
    _add_liveness_arguments,
    _add_rules_arguments,
    _add_watcher_argument,
    _liveness_argv,
    _liveness_from,
    _positive,
    _rules_from,
    _seed,
)
from cli.node_cmd import (
    bind_endpoint,
    load_identity,
    load_spec,
    parse_peers,
    say_if_every_interface,
)
from p2p_nertz.bots import STRATEGIES
from p2p_nertz.errors import IllegalMoveError, LocalProtocolError, NertzError
from p2p_nertz.lobby.beacon import BEACON_PORT
from p2p_nertz.lobby.messages import TableView
from p2p_nertz.lobby.state import HostLobby, LobbyError, Session, waiting_for
from p2p_nertz.protocol.identity import Identity, PeerId, fingerprint
from p2p_nertz.protocol.peer import Effect, Peer, PeerConfig
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.lobby import LobbyGuest, LobbyHost, Offer, discover, route_address
from p2p_nertz.runtime.node import PeerNode
from p2p_nertz.ui import (
    Abandon,
    CloseBoard,
    Context,
    KeyState,
    Leave,
    PlayMove,
    Screen,
    Style,
    Tracker,
    press,
    render,
)
from p2p_nertz.ui.keys import BACKSPACE, ENTER, ESC
from p2p_nertz.ui.lobby import (
    AddBot,
    AtTable,
    CreateTable,
    JoinTable,
    LeaveTable,
    Listing,
    LobbyAction,
    LobbyKeys,
    LobbyView,
    Quit,
    RemoveSeat,
    SeatLine,
    SetReady,
    StartGame,
    press_lobby,
    render_lobby,
)

__all__ = ["CursesTerminal", "Outcome", "Terminal", "add_parser", "run_table"]

EXIT_FAILED = 1
_REFRESH = 0.1  # seconds between redraws for the others' moves (when nothing else wakes us)
DEFAULT_BOT_SPEED = 1
"""The bots' speed in a quick game: level 1 is 24 moves a minute, a person's pace at the keys
(measured in docs/pace.md); faster levels are for people who know the keys."""
BETWEEN_ROUNDS = 30.0
"""Seconds the end-of-round board stays up before the next round starts by itself (Enter
starts it sooner). The next round's ``ready`` waits meanwhile, well within the protocol's
``phase_timeout`` (60 s), and the bots wait for every player's ``ready``."""
_NOT_TABLE_KEYS = frozenset({"RESIZE", "UP", "DOWN", "LEFT", "RIGHT", "\t"})


def add_parser(sub: Any) -> None:
    """Add the ``play`` subcommand to ``sub`` (the ``nertz`` subparsers).

    Args:
        sub: the object returned by :meth:`argparse.ArgumentParser.add_subparsers`.
    """
    help_text = "play at the terminal: the LAN lobby, a quick game (--bots N), or a given game"
    p: argparse.ArgumentParser = sub.add_parser(
        "play",
        help=help_text,
        description=(
            help_text + ". With neither --bots nor --spec: the lobby — the tables heard on the "
            "LAN (--discover BROADCAST) and given ones (--peer HOST:PORT); create one, join "
            "one, add bots, start. With --bots N: N bot processes on 127.0.0.1 and you (one "
            "round unless --rounds/--target). With --spec: give --key, --spec, --bind, --peer "
            "and --log as for `nertz node`. Keys: ? in the lobby and at the table."
        ),
    )
    quick = p.add_argument_group("a quick game against bots on this machine")
    quick.add_argument("--bots", type=_positive, help="number of bot players, 1-7")
    quick.add_argument(
        "--strategy",
        default="greedy",
        help=f"bot strategy, one for all or comma-separated per bot ({', '.join(STRATEGIES)})",
    )
    quick.add_argument(
        "--speed",
        default=str(DEFAULT_BOT_SPEED),
        help="bot speed 1-10 (about 24 moves a minute per level), one for all or per bot "
        f"(default {DEFAULT_BOT_SPEED}: a person's pace, docs/pace.md)",
    )
    quick.add_argument(
        "--practice",
        action="store_true",
        help="the bots wait for you: never more moves in a round than you have made",
    )
    quick.add_argument("--seed", type=_seed, default=None, help="seed for keys and deals")
    quick.add_argument(
        "--name", default=None, help="your name (default: you in a quick game, else your login)"
    )
    quick.add_argument("--dir", type=Path, default=None, help="directory for the spec and logs")
    given = p.add_argument_group("one member of a game fixed elsewhere (as `nertz node`)")
    given.add_argument("--key", type=Path, help="key file: raw 32-byte private key")
    given.add_argument("--spec", type=Path, help="game spec file")
    given.add_argument(
        "--bind", type=bind_endpoint, help="this peer's endpoint, e.g. tcp://127.0.0.1:5555"
    )
    given.add_argument(
        "--peer",
        action="append",
        default=[],
        metavar="WHO=ENDPOINT|HOST:PORT",
        help="another member (with --spec); in the lobby: a table's lobby address (repeatable)",
    )
    given.add_argument("--log", type=Path, help="this peer's log file")
    lobby = p.add_argument_group("the lobby (no --bots, no --spec)")
    lobby.add_argument(
        "--discover",
        type=_ipv4,
        metavar="BROADCAST",
        help="hear tables on this LAN, and announce yours there (nothing is broadcast without it)",
    )
    lobby.add_argument(
        "--beacon-port",
        type=_port,
        default=BEACON_PORT,
        help=f"UDP port of the discovery beacon (default {BEACON_PORT})",
    )
    lobby.add_argument(
        "--address",
        type=_address,
        help="your IPv4 address for a table you host and the game "
        "(default: the route to --discover or the first --peer, else 127.0.0.1)",
    )
    lobby.add_argument("--log-dir", type=Path, default=None, help="where game logs are written")
    look = p.add_argument_group("the screen")
    look.add_argument("--ascii", action="store_true", help="suits as letters C D H S")
    look.add_argument("--mono", action="store_true", help="no colour (also with NO_COLOR set)")
    _add_liveness_arguments(p)
    _add_watcher_argument(p)
    _add_rules_arguments(p)
    p.set_defaults(func=_cmd_play)


# -- the terminal ------------------------------------------------------------------------------
class Terminal(Protocol):
    """What the table needs from a terminal (curses in the product, a fake in unit tests)."""

    def size(self) -> tuple[int, int]:
        """``(width, height)`` now."""

    def paint(self, screen: Screen) -> None:
        """Show ``screen``."""

    def read_keys(self) -> list[str]:
        """The keys typed since the last call (names as :mod:`p2p_nertz.ui.keys` wants)."""

    async def wait_input(self) -> None:
        """Wait until a key may be there."""

    def resized(self) -> None:
        """The terminal was resized (SIGWINCH): take the new size."""


_ARROWS = {
    curses.KEY_UP: "UP",
    curses.KEY_DOWN: "DOWN",
    curses.KEY_LEFT: "LEFT",
    curses.KEY_RIGHT: "RIGHT",
}
_SPECIAL = {
    9: "\t",
    10: ENTER,
    13: ENTER,
    curses.KEY_ENTER: ENTER,
    27: ESC,
    127: BACKSPACE,
    8: BACKSPACE,
    curses.KEY_BACKSPACE: BACKSPACE,
}


class CursesTerminal:
    """The curses front end: paints a :class:`Screen`, reads keys without blocking.

    Args:
        window: the curses screen.
        colour: use colours if the terminal has them (else bold/reverse/underline).
    """

    def __init__(self, window: curses.window, *, colour: bool = True) -> None:
        self.window = window
        window.nodelay(True)
        window.keypad(True)
        self.attrs = _attributes(colour and curses.has_colors())
        self._width, self._height = self._measure()

    def _measure(self) -> tuple[int, int]:
        height, width = self.window.getmaxyx()
        return width, height

    def size(self) -> tuple[int, int]:
        return self._width, self._height

    def resized(self) -> None:
        try:
            columns, lines = os.get_terminal_size(sys.__stdout__.fileno())  # type: ignore[union-attr]
        except (OSError, AttributeError, ValueError):
            return
        curses.resizeterm(lines, columns)
        self.window.clear()
        self._width, self._height = self._measure()

    def paint(self, screen: Screen) -> None:
        window = self.window
        window.erase()
        for y, row in enumerate(screen.rows[: self._height]):
            x = 0
            for span in row:
                text = span.text[: max(0, self._width - x)]
                if y == self._height - 1 and x + len(text) >= self._width:
                    text = text[: self._width - x - 1]  # curses cannot write the last cell
                if text:
                    with contextlib.suppress(curses.error):
                        window.addstr(y, x, text, self.attrs[span.style])
                x += len(text)
        with contextlib.suppress(curses.error):
            window.move(self._height - 1, 0)
        window.refresh()

    def read_keys(self) -> list[str]:
        out: list[str] = []
        while True:
            try:
                code = self.window.get_wch()
            except curses.error:
                return out
            if isinstance(code, str):
                number = ord(code) if len(code) == 1 else -1
                if number in _SPECIAL:
                    out.append(_SPECIAL[number])
                elif number == 3:
                    out.append("CTRL-C")
                elif code.isprintable():
                    out.append(code)
            elif code == curses.KEY_RESIZE:
                self._width, self._height = self._measure()
                out.append("RESIZE")
            elif code in _SPECIAL:
                out.append(_SPECIAL[code])
            elif code in _ARROWS:
                out.append(_ARROWS[code])

    async def wait_input(self) -> None:
        await trio.lowlevel.wait_readable(sys.stdin.fileno())


def _attributes(colour: bool) -> dict[Style, int]:
    mono = {
        Style.PLAIN: curses.A_NORMAL,
        Style.DIM: curses.A_NORMAL,
        Style.BOLD: curses.A_BOLD,
        Style.RED: curses.A_BOLD,
        Style.BLACK: curses.A_NORMAL,
        Style.KEY: curses.A_BOLD,
        Style.SELECTED: curses.A_REVERSE,
        Style.PENDING: curses.A_UNDERLINE | curses.A_BOLD,
        Style.GOOD: curses.A_NORMAL,
        Style.WARN: curses.A_BOLD,
        Style.BAD: curses.A_BOLD | curses.A_UNDERLINE,
    }
    if not colour:
        return mono
    curses.start_color()
    with contextlib.suppress(curses.error):
        curses.use_default_colors()
    pairs = {
        Style.RED: (curses.COLOR_RED, 0),
        Style.KEY: (curses.COLOR_CYAN, 0),
        Style.PENDING: (curses.COLOR_MAGENTA, curses.A_BOLD | curses.A_UNDERLINE),
        Style.GOOD: (curses.COLOR_GREEN, 0),
        Style.WARN: (curses.COLOR_YELLOW, 0),
        Style.BAD: (curses.COLOR_RED, curses.A_BOLD),
        Style.DIM: (curses.COLOR_BLUE, 0),
    }
    attrs = dict(mono)
    for number, (style, (fg, extra)) in enumerate(pairs.items(), 1):
        try:
            curses.init_pair(number, fg, -1)
        except curses.error:
            curses.init_pair(number, fg, curses.COLOR_BLACK)
        attrs[style] = curses.color_pair(number) | extra
    attrs[Style.RED] |= curses.A_BOLD
    attrs[Style.BLACK] = curses.A_BOLD
    return attrs


@contextlib.contextmanager
def open_curses(*, colour: bool = True) -> Iterator[CursesTerminal]:
    """Take over the terminal with curses (cbreak: Ctrl-C still signals) and give it back.

    Raises:
        NertzError: standard input or output is not a terminal.
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise NertzError("the table needs a terminal (standard input and output)")
    locale.setlocale(locale.LC_ALL, "")
    window = curses.initscr()
    try:
        curses.noecho()
        curses.cbreak()
        with contextlib.suppress(curses.error):
            curses.curs_set(0)
        with contextlib.suppress(AttributeError, curses.error):
            curses.set_escdelay(25)
        yield CursesTerminal(window, colour=colour)
    finally:
        window.keypad(False)
        curses.nocbreak()
        curses.echo()
        curses.endwin()


# -- the table ---------------------------------------------------------------------------------
@dataclass
class Outcome:
    """How :func:`run_table` ended.

    Attributes:
        peer: the peer (``None`` if the node never started).
        left: the player left the game (a key, or a signal).
        signal: the signal that ended it, if one did.
    """

    peer: Peer | None = None
    left: bool = False
    signal: int | None = None
    errors: list[BaseException] = field(default_factory=list)


async def run_table(
    node: PeerNode,
    endpoints: Mapping[PeerId, str],
    *,
    terminal: Terminal,
    symbols: bool = True,
    signals: bool = True,
    hint: str | None = None,
) -> Outcome:
    """Play ``node`` from ``terminal`` until the game is over and read, or the player leaves.

    The node must have no bot strategy; this runs it (:meth:`PeerNode.run`), so do not.

    Args:
        node: the player's node, bound or not.
        endpoints: every other member's endpoint.
        terminal: where to draw and read keys.
        symbols: suit symbols (else letters).
        signals: leave on SIGINT/SIGTERM (only possible on the main thread).
        hint: a first message on the table (how to change the bots' speed, say).

    Returns:
        How it ended.
    """
    spec = node.spec
    seat = spec.seat_of(node.identity.peer_id)
    tracker = Tracker(tuple(m.name for m in spec.members), seat, symbols)
    outcome = Outcome()
    keys = KeyState()
    if hint is not None:
        tracker.say(hint)
    wake = trio.Event()
    stopped = False  # the node's run returned
    quitting = False
    released = 1  # the last round whose ready we let the node sign
    countdown_end: float | None = None  # while a board is up: when the next round starts
    board_round: int | None = None  # the round whose board holds the next round's ready

    def on_notice(effect: Effect) -> None:
        tracker.notice(effect, node.peer.final, trio.current_time())
        wake.set()

    node.add_listener(on_notice)

    def silence(peer: Peer) -> tuple[float, float]:
        # How long the others have been silent, and how long the core wants before it takes
        # an abandon. (With one other member left this is that member's silence, unless a
        # dropped one is still heard: then the table says to wait a little too long.)
        # A member that talks while finality waits for it counts as gone too (past
        # phase_timeout): then as silent as the core's wait, so that the key is on offer.
        now = node.clock()
        silent, needed = peer.silent_for(now), peer.config.drop_after
        gone = peer.gone_for(now)
        return (silent if gone is None else max(silent, needed + gone)), needed

    def context() -> Context:
        peer = node.peer
        return Context(
            peer.view,
            seat,
            frozenset(peer.frozen_piles()),
            board=tracker.board is not None,
            symbols=symbols,
            abandon=tracker.may_abandon(peer, *silence(peer)),
            alone=tracker.alone(peer),
        )

    def draw() -> None:
        width, height = terminal.size()
        try:
            peer = node.peer
        except RuntimeError:
            return
        silent, needed = silence(peer)
        view = tracker.view(peer, keys, final=stopped, silent=silent, needed=needed)
        if countdown_end is not None and view.board is not None and view.board.result is None:
            left = math.ceil(max(0.0, countdown_end - trio.current_time()))
            view = replace(view, countdown=left)
        terminal.paint(render(view, width, height, symbols=symbols))

    async with trio.open_nursery() as nursery:

        async def play() -> None:
            nonlocal stopped
            try:
                outcome.peer = await node.run(endpoints)
            finally:
                stopped = True
                wake.set()
            if outcome.left or quitting:
                nursery.cancel_scope.cancel()

        async def leave() -> None:
            outcome.left = True
            tracker.say("leaving the game: waiting for the others to hold our leave…")
            wake.set()
            try:
                await node.leave()
            except RuntimeError:  # not started yet
                nursery.cancel_scope.cancel()

        async def keyboard() -> None:
            nonlocal keys, quitting
            while True:
                await terminal.wait_input()
                for key in terminal.read_keys():
                    if key in _NOT_TABLE_KEYS:
                        continue
                    if key == "CTRL-C":
                        nursery.start_soon(leave)
                        continue
                    if stopped and key.lower() == "q":
                        quitting = True
                        nursery.cancel_scope.cancel()
                        return
                    try:
                        ctx = context()
                    except RuntimeError:
                        continue
                    keys, actions = press(keys, key, ctx)
                    for action in actions:
                        if isinstance(action, PlayMove):
                            try:
                                await node.play(action.move)
                            except (IllegalMoveError, LocalProtocolError) as exc:
                                keys = KeyState(status=f"illegal: {_brief(str(exc))}")
                        elif isinstance(action, CloseBoard):
                            tracker.close_board()
                        elif isinstance(action, Abandon):
                            keys = await _abandon(node, keys)
                        elif isinstance(action, Leave):
                            if stopped:
                                quitting = True
                                nursery.cancel_scope.cancel()
                                return
                            nursery.start_soon(leave)
                wake.set()

        def between_rounds() -> None:
            # The board of round r is up: the next round's ready waits until the player closes
            # it or the countdown ends (then the board closes by itself).
            nonlocal released, countdown_end, board_round
            board = tracker.board
            if stopped:
                return
            if board is not None and board.result is None and board.round >= released:
                now = trio.current_time()
                if board_round != board.round or countdown_end is None:
                    board_round, countdown_end = board.round, now + BETWEEN_ROUNDS
                if now < countdown_end:
                    return
                tracker.close_board()
            elif board_round is None:
                return
            released = board_round + 1
            board_round = countdown_end = None
            nursery.start_soon(release, released)

        async def release(number: int) -> None:
            # (Not started: nothing to sign yet. Stopped meanwhile: nothing to sign any more.)
            with contextlib.suppress(RuntimeError, NertzError):
                await node.release_ready(number)

        async def screen() -> None:
            nonlocal wake
            while True:
                wake = trio.Event()
                between_rounds()
                draw()
                with trio.move_on_after(_REFRESH):
                    await wake.wait()

        async def watch_signals() -> None:
            wanted = [signal.SIGINT, signal.SIGTERM, signal.SIGWINCH]
            with trio.open_signal_receiver(*wanted) as received:
                async for signum in received:
                    if signum == signal.SIGWINCH:
                        terminal.resized()
                        wake.set()
                        continue
                    if outcome.signal is not None or stopped:
                        nursery.cancel_scope.cancel()
                        return
                    outcome.signal = signum
                    nursery.start_soon(leave)

        nursery.start_soon(play)
        nursery.start_soon(keyboard)
        nursery.start_soon(screen)
        if signals:
            nursery.start_soon(watch_signals)
    if outcome.peer is None:
        with contextlib.suppress(RuntimeError):
            outcome.peer = node.peer
    return outcome


async def _abandon(node: PeerNode, keys: KeyState) -> KeyState:
    """End the game by an abandon; the status line says how it went (the core may refuse:
    the other has not been silent long enough, say — then nothing changes)."""
    try:
        await node.abandon()
    except LocalProtocolError as exc:
        return KeyState(status=f"cannot abandon: {exc}")
    return replace(keys, status="you abandoned the game")


def _brief(message: str) -> str:
    """An engine message without the tableau dump some of them end with."""
    return message.split(" in N: ", maxsplit=1)[0]


# -- the command -------------------------------------------------------------------------------
def _symbols_ok(args: argparse.Namespace) -> bool:
    if args.ascii:
        return False
    locale.setlocale(locale.LC_ALL, "")
    return "utf" in locale.getpreferredencoding(False).lower().replace("-", "")


def _cmd_play(args: argparse.Namespace) -> int:
    config = _liveness_from(args)  # bad timers are refused before anything starts
    given = [args.key, args.spec, args.bind, args.log]
    lobby_only = args.discover is not None or args.address is not None or args.log_dir is not None
    if args.bots is not None and (any(given) or args.peer):
        raise NertzError("--bots makes its own game: do not give --key/--spec/--bind/--peer/--log")
    if (args.bots is not None or any(given[1:])) and lobby_only:
        raise NertzError("--discover, --address and --log-dir are for the lobby (no --bots/--spec)")
    colour = not args.mono and "NO_COLOR" not in os.environ
    symbols = _symbols_ok(args)
    if args.bots is not None:
        return _play_bots(args, colour=colour, symbols=symbols)
    if not any(given[1:]):
        return _play_lobby(args, colour=colour, symbols=symbols)
    if not all(given):
        raise NertzError("a given game needs all of --key, --spec, --bind and --log")
    identity = load_identity(args.key)
    spec = load_spec(args.spec)
    if identity.peer_id not in spec.peer_ids:
        raise NertzError(f"key {identity.fingerprint} is not a member of this game")
    endpoints = parse_peers(args.peer, spec, identity.peer_id)
    node = _make_node(identity, spec, args.log, args.bind, args.watcher, config=config)
    say_if_every_interface("play", args.bind)
    outcome = _run_in_terminal(node, endpoints, colour=colour, symbols=symbols)
    return _summary(outcome, node, args.log.parent)


def _make_node(
    identity: Identity,
    spec: GameSpec,
    log: Path,
    bind: str,
    watchers: list[str],
    *,
    config: PeerConfig,
) -> PeerNode:
    node = PeerNode(
        identity,
        spec,
        log,
        bind=bind,
        strategy=None,
        watchers=watchers,
        config=config,
        hold_ready=True,  # the next round waits while the player reads the board (run_table)
    )
    try:
        node.bind()
    except NertzError as exc:
        raise NertzError(str(exc)) from None  # (it names the address)
    return node


def _run_in_terminal(
    node: PeerNode,
    endpoints: Mapping[PeerId, str],
    *,
    colour: bool,
    symbols: bool,
    hint: str | None = None,
) -> Outcome:
    with open_curses(colour=colour) as terminal:
        try:
            return trio.run(_table_main, node, endpoints, terminal, symbols, hint)
        except BaseExceptionGroup as group:
            errors = _leaves(group)
            if not all(isinstance(e, NertzError | OSError) for e in errors):
                raise
            return Outcome(errors=errors)


async def _table_main(
    node: PeerNode,
    endpoints: Mapping[PeerId, str],
    terminal: Terminal,
    symbols: bool,
    hint: str | None,
) -> Outcome:
    return await run_table(node, endpoints, terminal=terminal, symbols=symbols, hint=hint)


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out += _leaves(exc)
        else:
            out.append(exc)
    return out


def _summary(outcome: Outcome, node: PeerNode, where: Path) -> int:
    """Print how the game went (after curses gave the terminal back); the exit status."""
    if outcome.errors:
        print(f"nertz play: error: {outcome.errors[0]}", file=sys.stderr)
        return EXIT_FAILED
    peer = outcome.peer
    if peer is None:
        print("nertz play: stopped before the game started", file=sys.stderr)
        return EXIT_FAILED
    final = peer.final
    names = [m.name for m in peer.spec.members]
    totals = "  ".join(f"{names[s]} {t}" for s, t in enumerate(final.game.totals))
    print(f"after {len(final.game.history)} round(s): {totals}")
    result = final.game.result
    if result is not None:
        print("winner(s): " + ", ".join(names[w] for w in result.winners))
    print(f"signed log: {node.log_path}  (game files in {where})")
    if outcome.signal is not None:
        print(f"nertz play: left the game on signal {outcome.signal}", file=sys.stderr)
        return 128 + outcome.signal
    if outcome.left:
        print("nertz play: you left the game", file=sys.stderr)
        return 0
    return 0 if final.phase is Phase.OVER else EXIT_FAILED


def _per_bot(text: str, bots: int, what: str, check: Callable[[str], bool]) -> list[str]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    if len(values) == 1:
        values *= bots
    if len(values) != bots:
        raise NertzError(f"give one {what} for all bots or one per bot ({bots})")
    for v in values:
        if not check(v):
            raise NertzError(f"bad {what}: {v!r}")
    return values


def _play_bots(args: argparse.Namespace, *, colour: bool, symbols: bool) -> int:
    if args.rounds is None and args.target is None:
        args.rounds = 1
    rules = _rules_from(args)
    config = _liveness_from(args)
    players = args.bots + 1
    if not 2 <= players <= 8:
        raise NertzError(f"a table has 2 to 8 players: give --bots 1 to 7, not {args.bots}")
    rules.validate_players(players)
    strategies = _per_bot(args.strategy, args.bots, "strategy", lambda s: s in STRATEGIES)
    speeds = _per_bot(
        args.speed, args.bots, "speed (1-10)", lambda s: s.isdigit() and 1 <= int(s) <= 10
    )
    name = (args.name or "you").strip()
    if not name or len(name) > 16 or not name.isprintable():
        raise NertzError(f"--name wants 1 to 16 printable characters, not {args.name!r}")
    seed: int = args.seed if args.seed is not None else secrets.randbits(32)
    identities = [
        Identity.generate(derive_seed(b"nertz-play-key", seed, n)) for n in range(players)
    ]
    names = [name] + [f"bot{n}" for n in range(1, players)]
    spec = GameSpec.create(
        [(i.peer_id, names[n]) for n, i in enumerate(identities)],
        rules,
        derive_seed(b"nertz-play-game", seed)[:16],
    )
    workdir, spec_path = game_dir(args.dir, "play", spec)
    ports = free_ports(players)
    endpoint_of = {
        i.peer_id: f"tcp://127.0.0.1:{port}" for i, port in zip(identities, ports, strict=True)
    }
    human = identities[0]
    keep_key(human)  # in the key store, not beside the logs (cli/keyfile.py)
    node = _make_node(
        human, spec, workdir / "you.log", endpoint_of[human.peer_id], args.watcher, config=config
    )
    children: list[_Child] = []
    for n, identity in enumerate(identities[1:], 1):
        seat = spec.seat_of(identity.peer_id)
        child = _spawn_bot(
            workdir,
            spec_path,
            spec,
            identity,
            seat=seat,
            number=n,
            endpoint_of=endpoint_of,
            strategy=strategies[n - 1],
            speed=speeds[n - 1],
            options=_liveness_argv(args) + (["--practice"] if args.practice else []),
        )
        children.append(child)
    endpoints = {pid: e for pid, e in endpoint_of.items() if pid != human.peer_id}
    outcome = Outcome()
    # (Short enough for one row at 80 columns.)
    hint = (
        "practice: the bots wait for you · at their pace: nertz play --speed N (1-10)"
        if args.practice
        else f"bots at speed {args.speed} of 10 · change: nertz play --speed N, or --practice"
    )
    try:
        outcome = _run_in_terminal(node, endpoints, colour=colour, symbols=symbols, hint=hint)
    finally:
        # After the game the bots finish by themselves; if you left, they leave too (SIGTERM).
        over = outcome.peer is not None and outcome.peer.final.phase is Phase.OVER
        _stop(children, patience=LEAVE_PATIENCE if over else 0.0)
    return _summary(outcome, node, workdir)


def _spawn_bot(
    workdir: Path,
    spec_path: Path,
    spec: GameSpec,
    identity: Identity,
    *,
    seat: int,
    number: int,
    endpoint_of: Mapping[PeerId, str],
    strategy: str,
    speed: str,
    options: Sequence[str],
) -> _Child:
    """Start one bot peer as a ``nertz node`` process (its output goes to files)."""
    return start_node_child(
        workdir,
        spec_path,
        spec,
        identity,
        seat=seat,
        name=f"bot{number}",
        stem=f"bot{number}",
        endpoint_of=endpoint_of,
        strategy=strategy,
        speed=speed,
        own_session=True,
        options=options,
    )


# -- the lobby ---------------------------------------------------------------------------------
_OFFER_STALE = 4.0  # seconds without a beacon after which a LAN table leaves the list
_LOBBY_REFRESH = 0.25  # seconds between redraws of the lobby when nothing else wakes it
_CLOSE_FLUSH = 0.3  # seconds a closed table keeps serving, so the guests hear the bye
_JOIN_TIMEOUT = 10.0  # seconds to wait for a table's first answer


@dataclass
class _Started:
    """The game the lobby fixed, and the table we host (it keeps serving late guests)."""

    session: Session
    hosting: LobbyHost | None


class _LobbyApp:
    """The lobby screen on the network: discovery, a hosted table or a seat at one, bots.

    It runs in its own nursery (keys, screen, signals, discovery, the guest's seat) inside the
    caller's ``outer`` nursery, where a hosted table serves: when the game starts the lobby's
    nursery ends and :meth:`run` returns the game, while the hosted table goes on answering.
    """

    def __init__(
        self,
        args: argparse.Namespace,
        identity: Identity,
        name: str,
        rules: Rules,
        *,
        address: str,
        peers: list[tuple[str, int]],
        log_dir: Path,
        terminal: Terminal,
    ) -> None:
        self.args = args
        self.identity = identity
        self.name = name
        self.rules = rules
        self.address = address
        self.peers = peers
        self.log_dir = log_dir
        self.terminal = terminal
        self.strategies = tuple(sorted(STRATEGIES))
        self.keys = LobbyKeys()
        self.messages: list[str] = []
        self.offers: dict[str, tuple[Offer, float]] = {}
        self.seen: dict[str, TableView] = {}
        self.host: LobbyHost | None = None
        self.host_scope: trio.CancelScope | None = None
        self.guest: LobbyGuest | None = None
        self.guest_scope: trio.CancelScope | None = None
        self.where: str | None = None
        self.started: _Started | None = None
        self.bots: list[subprocess.Popen[bytes]] = []
        self.bot_names: set[str] = set()
        self.wake = trio.Event()
        self._nursery: trio.Nursery | None = None
        self._outer: trio.Nursery | None = None
        self._host_log = 0

    # -- what the screen shows -----------------------------------------------------------------
    def listings(self) -> list[Listing]:
        out = []
        own = None if self.host is None else self.host.table.lobby_id
        for where, (offer, _) in self.offers.items():
            b = offer.beacon
            if b.lobby_id != own:
                out.append(Listing(where, b.name, b.fingerprint, b.taken, b.capacity, "LAN"))
        for host, port in self.peers:
            where = f"{host}:{port}"
            if where in self.offers:
                continue
            seen = self.seen.get(where)
            if seen is None or not seen.seats:
                out.append(Listing(where, found="--peer"))
            else:
                first = seen.seats[0]
                out.append(
                    Listing(
                        where,
                        first.name,
                        fingerprint(first.peer_id),
                        len(seen.seats),
                        seen.capacity,
                        "--peer",
                    )
                )
        return out

    def at_table(self) -> AtTable | None:
        if self.where is None:
            return None
        me = self.identity.peer_id
        if self.host is not None:
            table = self.host.table
            seats, capacity = table.seats, table.capacity
            rules: Rules | None = table.rules
            blocker = table.why_not_start()
            if blocker is None or blocker.startswith("waiting for"):
                # What it waits for in full (seats too), not only the first blocker.
                blocker = waiting_for(seats, table.rules)
            if blocker is not None and len(seats) < 2:
                blocker += " (b adds a bot)"
        else:
            view = None if self.guest is None else self.guest.table
            if view is None:
                return AtTable(self.where)
            seats, capacity = view.seats, view.capacity
            try:
                rules = Rules.from_dict(view.rules)
            except NertzError:
                rules = None
            blocker = None if rules is None else waiting_for(seats, rules)
        lines = tuple(
            SeatLine(s.name, fingerprint(s.peer_id), s.ready, host=i == 0, you=s.peer_id == me)
            for i, s in enumerate(seats)
        )
        return AtTable(self.where, lines, rules, capacity, self.host is not None, blocker)

    def view(self) -> LobbyView:
        listings = tuple(self.listings())
        return LobbyView(
            self.name,
            self.identity.fingerprint,
            listings,
            self.at_table(),
            self.keys,
            self.strategies,
            self.args.discover,
            tuple(self.messages[-8:]),
        )

    def say(self, text: str, *, status: bool = False) -> None:
        self.messages.append(text)
        if status:
            self.keys = replace(self.keys, status=text)
        self.poke()

    def poke(self) -> None:
        self.wake.set()

    # -- the tasks -----------------------------------------------------------------------------
    async def run(self, outer: trio.Nursery) -> _Started | None:
        """Show the lobby until a game starts (returned) or the player quits (``None``)."""
        self._outer = outer
        if self.args.discover is None and not self.peers:
            self.say("no --peer and no --discover: c creates a table here", status=True)
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._keyboard)
            nursery.start_soon(self._screen)
            nursery.start_soon(self._signals)
            if self.args.discover is not None:
                nursery.start_soon(self._discover)
        return self.started

    def _begin(self, started: _Started) -> None:
        self.started = started
        assert self._nursery is not None
        self._nursery.cancel_scope.cancel()

    async def _keyboard(self) -> None:
        while True:
            await self.terminal.wait_input()
            for key in self.terminal.read_keys():
                if key == "RESIZE":
                    continue
                if key == "CTRL-C":
                    await self._do(Quit())
                    return
                self.keys, actions = press_lobby(self.keys, key, self.view().context())
                for action in actions:
                    await self._do(action)
            self.poke()

    async def _screen(self) -> None:
        while True:
            self.wake = trio.Event()
            now = trio.current_time()
            for where, (_, heard) in list(self.offers.items()):
                if now - heard > _OFFER_STALE:
                    del self.offers[where]
            width, height = self.terminal.size()
            self.terminal.paint(render_lobby(self.view(), width, height))
            with trio.move_on_after(_LOBBY_REFRESH):
                await self.wake.wait()

    async def _signals(self) -> None:
        wanted = [signal.SIGINT, signal.SIGTERM, signal.SIGWINCH]
        with trio.open_signal_receiver(*wanted) as received:
            async for signum in received:
                if signum == signal.SIGWINCH:
                    self.terminal.resized()
                    self.poke()
                    continue
                await self._do(Quit())
                return

    async def _discover(self) -> None:
        def on_offer(offer: Offer) -> None:
            where = f"{offer.address}:{offer.beacon.port}"
            if where not in self.offers:
                self.poke()
            self.offers[where] = (offer, trio.current_time())

        try:
            await discover(
                self.args.discover,
                port=self.args.beacon_port,
                timeout=math.inf,
                on_offer=on_offer,
            )
        except NertzError as exc:
            self.say(f"error: {exc}", status=True)

    # -- the actions ---------------------------------------------------------------------------
    async def _do(self, action: LobbyAction) -> None:
        try:
            if isinstance(action, CreateTable):
                await self._create()
            elif isinstance(action, JoinTable):
                self._join(action.index)
            elif isinstance(action, SetReady):
                if self.guest is not None:
                    self.guest.set_ready(action.ready)
            elif isinstance(action, AddBot):
                self._add_bot(action.strategy, action.speed)
            elif isinstance(action, StartGame):
                self._start()
            elif isinstance(action, RemoveSeat):
                self._remove(action.seat)
            elif isinstance(action, LeaveTable):
                self._leave()
            elif isinstance(action, Quit):
                self._leave()
                self.stop_bots()
                assert self._nursery is not None
                self._nursery.cancel_scope.cancel()
        except (NertzError, OSError) as exc:
            self.say(f"error: {exc}", status=True)
        self.poke()

    async def _create(self) -> None:
        host = LobbyHost(
            self.identity,
            self.name,
            self.rules,
            address=self.address,
            game_port=_free_port(self.address),
            broadcast=self.args.discover,
            beacon_port=self.args.beacon_port,
            on_change=self._table_changed,
        )
        assert self._outer is not None
        endpoint: str = await self._outer.start(self._serve, host)
        self.host = host
        self.where = endpoint.removeprefix("tcp://")
        told = f" (announced on {self.args.discover})" if self.args.discover else ""
        self.say(f"you host a table at {self.where}{told}: others join with --peer {self.where}")
        self.keys = replace(self.keys, status="your table is open: b adds a bot, s starts")

    async def _serve(self, host: LobbyHost, *, task_status: trio.TaskStatus[str]) -> None:
        with trio.CancelScope() as scope:
            self.host_scope = scope
            await host.serve(task_status=task_status)

    def _table_changed(self, table: HostLobby) -> None:
        while self._host_log < len(table.log):
            self.messages.append(table.log[self._host_log])
            self._host_log += 1
        self.poke()

    def _join(self, index: int) -> None:
        listings = self.listings()
        if not 0 <= index < len(listings):
            self.say("that table is gone", status=True)
            return
        item = listings[index]
        host_ip = item.where.rpartition(":")[0]
        offer = self.offers.get(item.where)
        kwargs: dict[str, Any] = {}
        if offer is not None:
            kwargs = {"host": offer[0].beacon.host, "lobby_id": offer[0].beacon.lobby_id}
        address = route_address(host_ip) if self.args.address is None else self.address
        game_endpoint = f"tcp://{address}:{_free_port(address)}"
        where = item.where

        resets = [0]

        def on_table(view: TableView) -> None:
            self._seats_news(self.seen.get(where), view)
            self.seen[where] = view
            if guest.state.resets > resets[0]:  # docs/lobby.md §5: a ready is for one table
                resets[0] = guest.state.resets
                self.say("the table changed: you are not ready any more (r when ready)")
            self.poke()

        guest = LobbyGuest(
            self.identity,
            self.name,
            game_endpoint,
            f"tcp://{where}",
            ready=False,
            timeout=_JOIN_TIMEOUT,
            on_table=on_table,
            **kwargs,
        )
        self.guest = guest
        self.where = where
        self.say(f"joining the table at {where}…")
        assert self._nursery is not None
        self._nursery.start_soon(self._sit, guest)

    def _seats_news(self, before: TableView | None, after: TableView) -> None:
        if before is None:
            host = after.seats[0] if after.seats else None
            if host is not None:
                text = f"at {host.name}'s table ({fingerprint(host.peer_id)}): r when ready"
                self.say(text, status=True)
            return
        old = {s.peer_id: s for s in before.seats}
        new = {s.peer_id: s for s in after.seats}
        for pid, seat in new.items():
            if pid not in old:
                self.say(f"{seat.name} ({fingerprint(pid)}) sat down")
            elif old[pid].ready != seat.ready and pid != self.identity.peer_id:
                self.say(f"{seat.name} is {'ready' if seat.ready else 'not ready'}")
        for pid, seat in old.items():
            if pid not in new:
                self.say(f"{seat.name} ({fingerprint(pid)}) left")

    async def _sit(self, guest: LobbyGuest) -> None:
        with trio.CancelScope() as scope:
            self.guest_scope = scope
            try:
                session = await guest.run()
            except LobbyError as exc:
                if self.guest is guest:
                    self.guest = None
                    self.where = None
                    self.say(str(exc), status=True)
                return
        if session is not None and self.guest is guest:
            self._begin(_Started(session, None))

    def _start(self) -> None:
        if self.host is None:
            return
        try:
            session = self.host.start()
        except LobbyError as exc:
            self.say(str(exc), status=True)
            return
        self._begin(_Started(session, self.host))

    def _remove(self, seat: int) -> None:
        if self.host is None:
            return
        seats = self.host.table.seats
        if not 1 <= seat < len(seats):
            self.say(f"no guest in seat {seat}", status=True)
            return
        who = seats[seat]
        try:
            self.host.remove(who.peer_id)
        except LobbyError as exc:
            self.say(str(exc), status=True)
            return
        self.say(f"removed {who.name} ({fingerprint(who.peer_id)}) from the table", status=True)

    def _leave(self) -> None:
        if self.host is not None:
            self.host.close("the host closed the table")
            scope = self.host_scope
            if scope is not None:
                scope.deadline = trio.current_time() + _CLOSE_FLUSH
            self.host = None
            self.host_scope = None
            self.stop_bots()
        if self.guest is not None:
            self.guest.leave("left the table")
            self.guest = None
            self.stop_bots()
        self.where = None

    def _add_bot(self, strategy: str, speed: int) -> None:
        if self.where is None:
            return
        taken = set(self.bot_names)
        table = self.at_table()
        if table is not None:
            taken |= {s.name for s in table.seats}
        name = next(f"{strategy}{n}" for n in range(1, 100) if f"{strategy}{n}" not in taken)
        self.bot_names.add(name)
        proc = spawn_lobby_bot(
            self.where,
            name,
            strategy=strategy,
            speed=speed,
            log_dir=self.log_dir,
            options=_liveness_argv(self.args),
            err=self.log_dir / f"{name}.err",
            own_session=True,  # Ctrl-C at this terminal is for the player, not the bots
        )
        self.bots.append(proc)
        self.say(f"started a {strategy} bot at speed {speed}: {name}", status=True)

    def stop_bots(self) -> None:
        stop_processes(self.bots)
        self.bots.clear()


def _name_path(key: Path) -> Path:
    """Where the first run keeps the name it asked for: beside the default key."""
    return key.parent / "name"


def _saved_name(key: Path) -> str | None:
    """The name the first run asked for, if it kept one (and it is still a valid name)."""
    try:
        text = _name_path(key).read_text(encoding="utf-8").strip()
        return _name(text)
    except (OSError, UnicodeDecodeError, argparse.ArgumentTypeError):
        return None


def _first_run(key: Path, default: str) -> tuple[Identity, str]:
    """No key yet (a first game on this machine): ask for a name and make the identity.

    The key goes where ``nertz keygen`` puts it (:func:`default_key_path`, mode 0600) and the
    name beside it, so later games use both without asking.

    Raises:
        NertzError: no name was given (end of input), or the key cannot be written.
    """
    print("Welcome to p2p-nertz! This is your first game here: you need an identity (a key).")
    while True:
        try:
            text = input(f"your name at the table [{default}]: ").strip() or default
        except EOFError:
            print()
            raise NertzError("no name given: nothing was made") from None
        try:
            name = _name(text)
            break
        except argparse.ArgumentTypeError as exc:
            print(exc)
    identity = Identity.generate()
    _write_key(key, identity)
    with contextlib.suppress(OSError):  # the name is a convenience: --name works without it
        _name_path(key).write_text(name + "\n", encoding="utf-8")
    print(f"new key {identity.fingerprint} written to {key}; you play as {name!r}")
    return identity, name


def _play_lobby(args: argparse.Namespace, *, colour: bool, symbols: bool) -> int:
    try:
        peers = [_host_port(p) for p in args.peer]
        name = _name(args.name) if args.name is not None else _default_name()
    except argparse.ArgumentTypeError as exc:
        raise NertzError(str(exc)) from None
    rules = _rules_from(args)
    key: Path = args.key if args.key is not None else default_key_path()
    if not key.exists():
        if args.key is not None or not sys.stdin.isatty():
            raise NertzError(
                f"no key at {str(key)!r}: make one with `nertz keygen --key {key}`, "
                "or play a quick game against bots with --bots N"
            )
        identity, chosen = _first_run(key, args.name or _saved_name(key) or name)
        if args.name is None:
            name = chosen
    else:
        identity = _load_key(key)
        if args.name is None:
            name = _saved_name(key) or name
    if args.address is not None:
        address = args.address
    elif args.discover is not None:
        address = route_address(args.discover)
    elif peers:
        address = route_address(peers[0][0])
    else:
        address = "127.0.0.1"
    log_dir: Path = args.log_dir if args.log_dir is not None else _default_log_dir()
    config = _liveness_from(args)
    result: list[tuple[Outcome, PeerNode | None]] = []
    apps: list[_LobbyApp] = []

    async def main(terminal: Terminal) -> None:
        app = _LobbyApp(
            args, identity, name, rules, address=address, peers=peers, log_dir=log_dir,
            terminal=terminal,
        )  # fmt: skip
        apps.append(app)
        async with trio.open_nursery() as outer:
            started = await app.run(outer)
            if started is None:
                outer.cancel_scope.cancel()
                result.append((Outcome(), None))
                return
            session = started.session
            spec = session.spec
            try:
                log_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise NertzError(f"cannot create {str(log_dir)!r}: {exc.strerror}") from None
            log = log_dir / f"{spec.game_id.hex()[:16]}-{identity.fingerprint}.log"
            bind = session.endpoints[identity.peer_id]
            node = _make_node(identity, spec, log, bind, args.watcher, config=config)
            outcome = await run_table(node, session.endpoints, terminal=terminal, symbols=symbols)
            outer.cancel_scope.cancel()  # the hosted table stops serving
            result.append((outcome, node))

    try:
        with open_curses(colour=colour) as terminal:
            try:
                trio.run(main, terminal)
            except BaseExceptionGroup as group:
                errors = _leaves(group)
                if not all(isinstance(e, NertzError | OSError) for e in errors):
                    raise
                result.append((Outcome(errors=errors), None))
    finally:
        for app in apps:
            outcome = result[0][0] if result else Outcome()
            over = outcome.peer is not None and outcome.peer.final.phase is Phase.OVER
            stop_processes(app.bots, LEAVE_PATIENCE if over else 0.0)
    outcome, node = result[0]
    if node is None:
        if outcome.errors:
            print(f"nertz play: error: {outcome.errors[0]}", file=sys.stderr)
            return EXIT_FAILED
        print("nertz play: left the lobby", file=sys.stderr)
        return 0
    return _summary(outcome, node, log_dir)
