"""``nertz play``: the terminal table — a human at the keyboard, playing one peer of a game.

The table is :func:`run_table`, a coroutine that plays a :class:`~p2p_nertz.runtime.node.PeerNode`
(with no bot) from a :class:`Terminal` until the game is over and the player has read the
standings, or the player leaves; the LAN lobby calls it once its game is fixed. Two ways in:

``nertz play --bots N``
    a quick game on this machine: like ``nertz demo`` it makes the identities, the spec, a free
    port per player and the key files, starts N bot peers as ``nertz node`` processes on
    127.0.0.1, and seats you at the table with them;
``nertz play --key K --spec S --bind E --peer WHO=ENDPOINT… --log L``
    one member of a game fixed elsewhere, exactly like ``nertz node`` but with you playing.

How curses and trio share the process: everything runs on trio's thread. Keys are read with
curses in no-delay mode whenever trio reports standard input readable; a resize (SIGWINCH, taken
by a trio signal receiver) re-reads the terminal size; the screen is re-rendered from the peer's
state after every key and notice, and a few times a second for the others' moves, and curses
only sends what changed. Ctrl-C (or SIGTERM) leaves the game cleanly — a signed ``leave`` the
others see — and a second one stops at once.

``--watcher ENDPOINT`` (both ways) also pushes every event this node holds to a spectator
running ``nertz watch`` there (see ``cli/watch.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import curses
import locale
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import trio

from cli.demo import _Child, _stop, free_ports, write_key
from cli.main import _add_rules_arguments, _positive, _rules_from, _seed
from cli.node_cmd import load_identity, load_spec, parse_peers
from p2p_nertz.bots import STRATEGIES
from p2p_nertz.errors import IllegalMoveError, LocalProtocolError, NertzError
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.peer import Effect, Peer
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import derive_seed
from p2p_nertz.runtime.node import PeerNode
from p2p_nertz.ui import (
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

__all__ = ["CursesTerminal", "Outcome", "Terminal", "add_parser", "run_table"]

EXIT_FAILED = 1
_REFRESH = 0.1  # seconds between redraws for the others' moves (when nothing else wakes us)
_LEAVE_PATIENCE = 15.0  # seconds the bots get to finish by themselves after the game


def add_parser(sub: Any) -> None:
    """Add the ``play`` subcommand to ``sub`` (the ``nertz`` subparsers).

    Args:
        sub: the object returned by :meth:`argparse.ArgumentParser.add_subparsers`.
    """
    help_text = "play at the terminal table: against local bots (--bots N) or in a given game"
    p: argparse.ArgumentParser = sub.add_parser(
        "play",
        help=help_text,
        description=(
            help_text + ". With --bots N: N bot processes on 127.0.0.1 and you (one round "
            "unless --rounds/--target). Otherwise give --key, --spec, --bind, --peer and --log "
            "as for `nertz node`. Keys: ? at the table."
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
        "--speed", default="3", help="bot speed 1-10, one for all or per bot (default 3)"
    )
    quick.add_argument("--seed", type=_seed, default=None, help="seed for keys and deals")
    quick.add_argument("--name", default="you", help="your name at the table (default you)")
    quick.add_argument("--dir", type=Path, default=None, help="directory for keys, spec and logs")
    given = p.add_argument_group("one member of a game fixed elsewhere (as `nertz node`)")
    given.add_argument("--key", type=Path, help="key file: raw 32-byte private key")
    given.add_argument("--spec", type=Path, help="game spec file")
    given.add_argument("--bind", help="this peer's endpoint, e.g. tcp://127.0.0.1:5555")
    given.add_argument(
        "--peer", action="append", default=[], metavar="WHO=ENDPOINT", help="another member"
    )
    given.add_argument("--log", type=Path, help="this peer's log file")
    look = p.add_argument_group("the screen")
    look.add_argument("--ascii", action="store_true", help="suits as letters C D H S")
    look.add_argument("--mono", action="store_true", help="no colour (also with NO_COLOR set)")
    p.add_argument(
        "--watcher",
        action="append",
        default=[],
        metavar="ENDPOINT",
        help="push every event to a `nertz watch` spectator bound there (repeatable)",
    )
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


_SPECIAL = {
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
) -> Outcome:
    """Play ``node`` from ``terminal`` until the game is over and read, or the player leaves.

    The node must have no bot strategy; this runs it (:meth:`PeerNode.run`), so do not.

    Args:
        node: the player's node, bound or not.
        endpoints: every other member's endpoint.
        terminal: where to draw and read keys.
        symbols: suit symbols (else letters).
        signals: leave on SIGINT/SIGTERM (only possible on the main thread).

    Returns:
        How it ended.
    """
    spec = node.spec
    seat = spec.seat_of(node.identity.peer_id)
    tracker = Tracker(tuple(m.name for m in spec.members), seat, symbols)
    outcome = Outcome()
    keys = KeyState()
    wake = trio.Event()
    stopped = False  # the node's run returned
    quitting = False

    def on_notice(effect: Effect) -> None:
        tracker.notice(effect, node.peer.final)
        wake.set()

    node.add_listener(on_notice)

    def context() -> Context:
        peer = node.peer
        return Context(
            peer.view,
            seat,
            frozenset(peer.frozen_piles()),
            board=tracker.board is not None,
            symbols=symbols,
        )

    def draw() -> None:
        width, height = terminal.size()
        try:
            peer = node.peer
        except RuntimeError:
            return
        view = tracker.view(peer, keys, final=stopped)
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
                    if key == "RESIZE":
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
                        elif isinstance(action, Leave):
                            if stopped:
                                quitting = True
                                nursery.cancel_scope.cancel()
                                return
                            nursery.start_soon(leave)
                wake.set()

        async def screen() -> None:
            nonlocal wake
            while True:
                wake = trio.Event()
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
    given = [args.key, args.spec, args.bind, args.log]
    if args.bots is None and not any(given) and not args.peer:
        raise NertzError("give --bots N for a quick game, or --key, --spec, --bind and --log")
    if args.bots is not None and (any(given) or args.peer):
        raise NertzError("--bots makes its own game: do not give --key/--spec/--bind/--peer/--log")
    if args.bots is None and not all(given):
        raise NertzError("a given game needs all of --key, --spec, --bind and --log")
    colour = not args.mono and "NO_COLOR" not in os.environ
    symbols = _symbols_ok(args)
    if args.bots is not None:
        return _play_bots(args, colour=colour, symbols=symbols)
    identity = load_identity(args.key)
    spec = load_spec(args.spec)
    if identity.peer_id not in spec.peer_ids:
        raise NertzError(f"key {identity.fingerprint} is not a member of this game")
    endpoints = parse_peers(args.peer, spec, identity.peer_id)
    node = _make_node(identity, spec, args.log, args.bind, args.watcher)
    outcome = _run_in_terminal(node, endpoints, colour=colour, symbols=symbols)
    return _summary(outcome, node, args.log.parent)


def _make_node(
    identity: Identity, spec: GameSpec, log: Path, bind: str, watchers: list[str]
) -> PeerNode:
    node = PeerNode(identity, spec, log, bind=bind, strategy=None, watchers=watchers)
    try:
        node.bind()
    except NertzError as exc:
        raise NertzError(f"cannot bind {bind}: {exc}") from None
    return node


def _run_in_terminal(
    node: PeerNode, endpoints: Mapping[PeerId, str], *, colour: bool, symbols: bool
) -> Outcome:
    with open_curses(colour=colour) as terminal:
        try:
            return trio.run(_table_main, node, endpoints, terminal, symbols)
        except BaseExceptionGroup as group:
            errors = _leaves(group)
            if not all(isinstance(e, NertzError | OSError) for e in errors):
                raise
            return Outcome(errors=errors)


async def _table_main(
    node: PeerNode, endpoints: Mapping[PeerId, str], terminal: Terminal, symbols: bool
) -> Outcome:
    return await run_table(node, endpoints, terminal=terminal, symbols=symbols)


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
    players = args.bots + 1
    if not 2 <= players <= 8:
        raise NertzError(f"a table has 2 to 8 players: give --bots 1 to 7, not {args.bots}")
    rules.validate_players(players)
    strategies = _per_bot(args.strategy, args.bots, "strategy", lambda s: s in STRATEGIES)
    speeds = _per_bot(
        args.speed, args.bots, "speed (1-10)", lambda s: s.isdigit() and 1 <= int(s) <= 10
    )
    name = args.name.strip()
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
    game = spec.game_id.hex()
    workdir: Path = args.dir if args.dir is not None else Path("nertz-logs") / f"play-{game[:12]}"
    try:
        workdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NertzError(f"cannot create {str(workdir)!r}: {exc.strerror}") from None
    if any(workdir.glob("*.log")):
        raise NertzError(
            f"{str(workdir)!r} already holds game logs; remove them or choose another --dir"
        )
    spec_path = workdir / "game.spec"
    spec_path.write_bytes(spec.to_wire())
    ports = free_ports(players)
    endpoint_of = {
        i.peer_id: f"tcp://127.0.0.1:{port}" for i, port in zip(identities, ports, strict=True)
    }
    human = identities[0]
    key = workdir / "you.key"
    if key.exists():
        key.unlink()
    write_key(key, human)
    node = _make_node(human, spec, workdir / "you.log", endpoint_of[human.peer_id], args.watcher)
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
        )
        children.append(child)
    endpoints = {pid: e for pid, e in endpoint_of.items() if pid != human.peer_id}
    outcome = Outcome()
    try:
        outcome = _run_in_terminal(node, endpoints, colour=colour, symbols=symbols)
    finally:
        # After the game the bots finish by themselves; if you left, they leave too (SIGTERM).
        over = outcome.peer is not None and outcome.peer.final.phase is Phase.OVER
        _stop(children, patience=_LEAVE_PATIENCE if over else 0.0)
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
) -> _Child:
    """Start one bot peer as a ``nertz node`` process (its output goes to files)."""
    key = workdir / f"bot{number}.key"
    if key.exists():
        key.unlink()
    write_key(key, identity)
    child = _Child(
        seat,
        f"bot{number}",
        identity.fingerprint,
        workdir / f"bot{number}.log",
        workdir / f"bot{number}.out",
        workdir / f"bot{number}.err",
    )
    command = [
        sys.executable,
        "-m",
        "cli",
        "node",
        "--key",
        str(key),
        "--spec",
        str(spec_path),
        "--bind",
        endpoint_of[identity.peer_id],
        "--log",
        str(child.log),
        "--bot",
        strategy,
        "--speed",
        speed,
        "--json",
    ]
    for other, pid in enumerate(spec.peer_ids):
        if pid != identity.peer_id:
            command += ["--peer", f"{other + 1}={endpoint_of[pid]}"]
    out = child.out.open("wb")
    err = child.err.open("wb")
    child.files = [out, err]
    child.proc = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
    )
    return child
