"""``nertz play``: a person at the keyboard, playing one peer of a game at the terminal table
(:func:`cli.table.run_table`). Three ways in: the LAN lobby (:class:`cli.lobby_app.LobbyApp`,
with neither ``--bots`` nor ``--spec``; a first run at a terminal makes the identity), and:

``nertz play --bots N``
    a quick game on this machine: like ``nertz demo`` it makes the identities, the spec, a free
    port per player and the keys (kept in the key store, cli/keyfile.py), starts N bot peers
    as ``nertz node`` processes on 127.0.0.1, and seats you at the table with them;
``nertz play --key K --spec S --bind E --peer WHO=ENDPOINT… --log L``
    one member of a game fixed elsewhere, exactly like ``nertz node`` but with you playing.

How curses and trio share the process is :mod:`cli.terminal`'s; what the table does is the
library's :class:`~p2p_nertz.ui.controller.TableController`. Ctrl-C (or SIGTERM) leaves the
game cleanly — a signed ``leave`` the others see — and a second one stops at once.

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
import os
import secrets
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final

import trio

from cli.args import (
    EXIT_FAILED,
    bot_choices,
    deal_from,
    default_log_dir,
    default_name,
    error_text,
    expected_errors,
    liveness_argv,
    liveness_from,
    page_address_usable,
    player_name,
    rules_from,
    say_if_every_interface,
)
from cli.bots import (
    FREE_PORT,
    LEAVE_PATIENCE,
    NodeChild,
    TableBot,
    introduce_children,
    note_bots,
    note_lobby_bots,
    start_node_child,
    stop_children,
    stop_processes,
)
from cli.demo import made_game_dir
from cli.files import make_directory
from cli.keyfile import default_key_path, keep_key, load_key, save_key
from cli.lobby_app import LobbyApp
from cli.node_cmd import load_game_spec, load_identity, parse_peers
from cli.parsers import DEFAULT_BOT_SPEED, no_key_to_play
from cli.places import game_log_name
from cli.table import Outcome, make_node, run_in_terminal, run_table, summary
from cli.terminal import TERMINAL_SIGNALS, Terminal, open_curses, symbols_ok
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import derive_seed
from p2p_nertz.runtime.lobby import route_address
from p2p_nertz.runtime.node import PeerNode
from p2p_nertz.signals import STOPPING, open_signals, signal_status
from p2p_nertz.ui.view import bots_hint
from p2p_nertz.words import seat_named

if TYPE_CHECKING:  # (the browser's modules: imported by --web alone, see _page_of)
    from p2p_nertz.lobby.state import Session
    from p2p_nertz.protocol.peer import PeerConfig
    from p2p_nertz.web.terminal import PageTerminal

__all__ = ["DEFAULT_BOT_SPEED", "bots_game"]


# -- the terminal ------------------------------------------------------------------------------


# -- the table ---------------------------------------------------------------------------------


# -- the command -------------------------------------------------------------------------------


def _cmd_play(args: argparse.Namespace) -> int:
    config = liveness_from(args)  # (the options' form: checked by cli/parsers.py)
    colour = not args.mono  # (and no NO_COLOR: open_curses)
    symbols = symbols_ok(args)
    if args.bots is not None:
        return _play_bots(args, colour=colour, symbols=symbols)
    if args.spec is None:
        return _play_lobby(args, colour=colour, symbols=symbols)
    identity = load_identity(args.key)
    spec = load_game_spec(args.spec)  # (a member's log too, as node)
    if identity.peer_id not in spec.peer_ids:
        load_identity(args.key, players=spec.peer_ids)  # (a player's public key: says so)
        raise NertzError(f"key {identity.fingerprint} is not a member of this game")
    endpoints = parse_peers(args.peer, spec, identity.peer_id)
    page_address_usable(args)
    node = make_node(
        identity, spec, args.log, args.bind, args.watcher, config=config, first_waits=args.web
    )
    say_if_every_interface("play", args.bind)
    if args.web:
        from cli.web_cmd import run_in_browser

        outcome = run_in_browser(node, endpoints, bind=args.web_bind, open_page=not args.no_open)
    else:
        outcome = run_in_terminal(node, endpoints, colour=colour, symbols=symbols)
    return summary(outcome, node, args.log.parent)


def bots_game(args: argparse.Namespace) -> tuple[list[Identity], GameSpec]:
    """The keys and the spec of a game against bots (``nertz play --bots``, its arguments
    parsed and checked, cli/parsers.py): the player's name, and each bot's by its seat
    (``bot2`` sits at seat 2: :func:`~p2p_nertz.words.seat_named`); with ``--seed`` the same
    each time (a test makes the spec a spectator admits by before the game starts:
    tests/test_web_watch.py).

    Raises:
        NertzError: rules the table cannot have.
    """
    if args.rounds is None and args.target is None:
        args.rounds = 1
    rules = rules_from(args)
    players = args.bots + 1  # (--bots, the seats and --name: checked by cli/parsers.py)
    name = "you" if args.name is None else args.name
    seed: int = args.seed if args.seed is not None else secrets.randbits(32)
    identities = [
        Identity.generate(derive_seed(b"nertz-play-key", seed, n)) for n in range(players)
    ]
    seated = sorted(identities, key=lambda i: i.peer_id)  # (the roster sits by key: GameSpec)
    names = [name] + [seat_named("bot", seated.index(i)) for i in identities[1:]]
    spec = GameSpec.create(
        [(i.peer_id, names[n]) for n, i in enumerate(identities)],
        rules,
        derive_seed(b"nertz-play-game", seed)[:16],
        deal=deal_from(args),
    )
    return identities, spec


def _play_bots(args: argparse.Namespace, *, colour: bool, symbols: bool) -> int:
    config = liveness_from(args)
    identities, spec = bots_game(args)
    bots = bot_choices(args.strategy, args.speed, args.bots, "bot")
    page_address_usable(args)
    workdir, spec_path, note, made = made_game_dir(args.dir, "play", spec)
    if note:  # (before the table takes the screen: there when it gives it back)
        print(note)
    human = identities[0]
    children: list[NodeChild] = []
    try:
        keep_key(human, person=True)  # in the key store, not beside the logs (cli/keyfile.py)
        # Every node binds a free port itself before anyone needs it (none is picked first).
        node = make_node(
            human, spec, workdir / "you.log", FREE_PORT, args.watcher, config=config,
            fresh=True, first_waits=args.web,  # (round 1 dealt once the page is there)
        )  # fmt: skip
        options = tuple(liveness_argv(args) + (["--practice"] if args.practice else []))
        table_bots = [
            TableBot(seat, spec.members[seat].name, spec.members[seat].name, bots[n - 1][0],
                     str(bots[n - 1][1]), options)
            for n, seat in enumerate((spec.seat_of(i.peer_id) for i in identities[1:]), 1)
        ]  # fmt: skip
        note_bots(workdir / "you.log", spec, table_bots)  # (for `nertz resume` of your log)
        for bot, identity in zip(table_bots, identities[1:], strict=True):
            start_node_child(
                workdir, spec_path, spec, identity, seat=bot.seat, name=bot.name,
                stem=bot.stem, endpoint_of=None, strategy=bot.strategy, speed=bot.speed,
                own_session=True, options=bot.options, into=children,
            )  # fmt: skip
        endpoint_of = introduce_children(children, spec, {human.peer_id: node.endpoint})
    except BaseException as exc:  # (the person's node, bound, closes with the process)
        stop_children(children)
        if isinstance(exc, NertzError):  # (a refusal before the game: nothing of it left)
            made.take_back()
        raise
    endpoints = {pid: e for pid, e in endpoint_of.items() if pid != human.peer_id}
    outcome = Outcome()
    # (Short enough for one row at 80 columns; the page's names no terminal command.)
    hint = bots_hint(practice=args.practice, speed=args.speed, page=args.web)
    try:
        if args.web:
            from cli.web_cmd import run_in_browser

            outcome = run_in_browser(
                node, endpoints, bind=args.web_bind, open_page=not args.no_open, hint=hint
            )
        else:
            outcome = run_in_terminal(node, endpoints, colour=colour, symbols=symbols, hint=hint)
    finally:
        # After the game the bots finish by themselves; if you left, they leave too (SIGTERM).
        over = outcome.peer is not None and outcome.peer.final.phase is Phase.OVER
        stop_children(children, patience=LEAVE_PATIENCE if over else 0.0)
    return summary(outcome, node, workdir, game_dir=True)


# -- the lobby ---------------------------------------------------------------------------------


def _name_path(key: Path) -> Path:
    """Where the first run keeps the name it asked for: beside the default key."""
    return key.parent / "name"


def _saved_name(key: Path) -> str | None:
    """The name the first run asked for, if it kept one (and it is still a valid name)."""
    try:
        text = _name_path(key).read_text(encoding="utf-8").strip()
        return player_name(text)
    except (OSError, UnicodeDecodeError, argparse.ArgumentTypeError):
        return None


def _first_run(key: Path, default: str) -> tuple[Identity, str]:
    """No key yet (a first game on this machine): ask for a name and make the identity.

    The key goes where ``nertz keygen`` puts it (:func:`default_key_path`, mode 0600) and the
    name beside it, so later games use both without asking.

    Raises:
        NertzError: no name was given (end of input), or the key cannot be written.
    """
    print("Welcome to p2p-nertz! Your first game here needs an identity (a key).")
    while True:
        try:
            text = input(f"your name at the table [{default}]: ").strip() or default
        except EOFError:
            print()
            raise NertzError("no name given: nothing was made") from None
        try:
            name = player_name(text)
            break
        except argparse.ArgumentTypeError as exc:
            print(exc)
    identity = Identity.generate()
    save_key(key, identity)
    with contextlib.suppress(OSError):  # the name is a convenience: --name works without it
        _name_path(key).write_text(name + "\n", encoding="utf-8")
    print(f"new key {identity.fingerprint} written to {key}; you play as {name!r}")
    return identity, name


def _identity(args: argparse.Namespace, name: str) -> tuple[Identity, str]:
    """The person's key and name for the lobby: ``--key`` or the default key, made on a first
    run at a terminal (which asks for the name); the name kept beside it unless ``--name``.

    Raises:
        NertzError: no key, and no terminal to make one at (or ``--key`` names none).
    """
    key: Path = args.key if args.key is not None else default_key_path()
    if not key.exists():
        if args.key is not None or not sys.stdin.isatty():
            raise NertzError(no_key_to_play(key))
        identity, chosen = _first_run(key, args.name or _saved_name(key) or name)
        return identity, chosen if args.name is None else name
    identity = load_key(key)
    return identity, (_saved_name(key) or name) if args.name is None else name


def _play_lobby(args: argparse.Namespace, *, colour: bool, symbols: bool) -> int:
    peers = args.peer  # (HOST:PORT each, and --name: checked by cli/parsers.py)
    name = args.name if args.name is not None else default_name()
    rules = rules_from(args)
    identity, name = _identity(args, name)
    if args.address is not None:
        address = args.address
    elif args.discover is not None:
        address = route_address(args.discover)
    elif peers:
        address = route_address(peers[0][0])
    else:
        address = "127.0.0.1"
    log_dir: Path = args.log_dir if args.log_dir is not None else default_log_dir()
    config = liveness_from(args)
    result: list[tuple[Outcome, PeerNode | None]] = []
    apps: list[LobbyApp] = []

    async def main(terminal: Terminal) -> None:
        # (once there is a table to play at, before the lobby opens, as host's: a --log-dir
        # the game cannot write its log in was found when the game started, after the others
        # sat down; session 43)
        make_directory(log_dir, "log directory", "--log-dir")
        app = LobbyApp(
            args, identity, name, rules, address=address, peers=peers, log_dir=log_dir,
            terminal=terminal,
        )  # fmt: skip
        apps.append(app)
        # One receiver from the lobby to the table: a signal between them waits for the
        # table (a leave), never trio's KeyboardInterrupt (session 38).
        with open_signals(*STOPPING, *TERMINAL_SIGNALS) as signals:
            async with trio.open_nursery() as outer:
                page = _page_of(terminal, args)  # the lobby's, then the table's
                serve = None if page is None else partial(_serve_page, outer, page, args)
                started = await app.run(outer, signals, serve)
                if started is None:
                    await _lobby_left(page)  # (its page is told, and stops trying)
                    outer.cancel_scope.cancel()
                    result.append((Outcome(signal=app.signal), None))
                    return
                await _handover_pause()
                session = started.session
                node = _lobby_node(app, session, config)
                if page is not None:
                    from cli.web_cmd import table_in_page

                    outcome = await table_in_page(node, session.endpoints, page, signals)
                else:
                    outcome = await run_table(
                        node, session.endpoints, terminal=terminal, symbols=symbols,
                        signals=signals,
                    )  # fmt: skip
                outer.cancel_scope.cancel()  # the hosted table stops serving
                result.append((outcome, node))

    try:
        page = contextlib.nullcontext(_page_terminal()) if args.web else None
        with page or open_curses(colour=colour) as terminal:
            try:
                trio.run(main, terminal)
            except BaseExceptionGroup as group:
                errors = expected_errors(group)
                result.append((Outcome(errors=errors), None))
    finally:
        for app in apps:
            outcome = result[0][0] if result else Outcome()
            over = outcome.peer is not None and outcome.peer.final.phase is Phase.OVER
            stop_processes(app.bots, LEAVE_PATIENCE if over else 0.0)
    outcome, node = result[0]
    if node is None:
        if outcome.errors:
            print(f"nertz play: error: {error_text(outcome.errors[0])}", file=sys.stderr)
            return EXIT_FAILED
        if outcome.signal is not None:  # (as at a signal before the lobby was up)
            print(f"nertz play: left the lobby on signal {outcome.signal}", file=sys.stderr)
            return signal_status(outcome.signal)
        print("nertz play: left the lobby", file=sys.stderr)
        return 0
    return summary(outcome, node, log_dir)


HANDOVER_PAUSE_ENV: Final = "NERTZ_HANDOVER_PAUSE"
"""For the tests: set to a file's path, ``nertz play`` stops between its lobby and its table
(the game fixed, its node not yet made), says so on stderr (:data:`HANDOVER_PAUSED`), and
goes on once that file exists: a signal sent meanwhile comes at the hand-over."""

HANDOVER_PAUSED: Final = "nertz play: paused between the lobby and the table"


async def _handover_pause() -> None:
    """Wait here while :data:`HANDOVER_PAUSE_ENV` names a file that does not exist yet."""
    go_on = os.environ.get(HANDOVER_PAUSE_ENV)
    if not go_on:
        return
    print(HANDOVER_PAUSED, file=sys.stderr, flush=True)
    while not os.path.exists(go_on):
        await trio.sleep(0.05)  # (a poll of a file the test writes: nothing to wait on)


def _lobby_node(app: LobbyApp, session: Session, config: PeerConfig) -> PeerNode:
    """The person's node for the game ``app`` fixed, bound, its log in the lobby's log
    directory (and the lobby's bots noted beside it, for ``nertz resume`` to start them)."""
    spec, identity, log_dir = session.spec, app.identity, app.log_dir
    make_directory(log_dir, "log directory", "--log-dir")  # (made at the start: gone since?)
    log = log_dir / game_log_name(spec.game_id, identity.fingerprint)
    bind = session.endpoints[identity.peer_id]
    node = make_node(identity, spec, log, bind, app.args.watcher, config=config, fresh=True)
    note_lobby_bots(log, spec, app.lobby_bots)
    return node


def _page_terminal() -> PageTerminal:
    """The browser's page as the lobby's terminal (``--web``: the web server is imported for
    it alone, not by every ``nertz play`` at a terminal or with bots)."""
    from p2p_nertz.web.terminal import PageTerminal

    return PageTerminal()


def _page_of(terminal: Terminal, args: argparse.Namespace) -> PageTerminal | None:
    """``terminal`` if it is the browser's page (``--web`` alone makes one)."""
    if not args.web:
        return None
    from p2p_nertz.web import terminal as web_page

    return terminal if isinstance(terminal, web_page.PageTerminal) else None


async def _serve_page(outer: trio.Nursery, page: PageTerminal, args: argparse.Namespace) -> None:
    """Serve the lobby's ``page`` in ``outer``, its address said (the lobby's signals are its
    own by then: :meth:`LobbyApp.run`)."""
    from cli.web_cmd import serve_lobby_page

    await serve_lobby_page(outer, page, bind=args.web_bind, open_page=not args.no_open)


async def _lobby_left(page: PageTerminal | None) -> None:
    """The person left the lobby without a game: its page, if there is one, is told so."""
    if page is not None:
        from cli.web_cmd import lobby_left

        await lobby_left(page)
