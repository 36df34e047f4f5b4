"""Every command's arguments: the parsers of ``nertz``'s commands, and nothing a running
command needs.

A command line is parsed and its arguments checked (numbers, ports, endpoints, names, and
the options against each other: each command's ``_check_*``, run by :func:`_later`) before
the command's own module is imported: that module brings trio, ZeroMQ, the runtime, the audit
or the browser page, a few tenths of a second of CPU that a mistyped argument need not wait
for (tests/test_cli_help.py holds this). So nothing here imports them: what a parser shows
(the strategies, the speeds, the liveness timers' defaults, the beacon's port) comes from the
light constants of cli/args.py, and each command's function is named by its module
(:func:`_later`), imported once the arguments are good.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cli.args import (
    NEEDS_A_TERMINAL,
    add_liveness_arguments,
    add_rules_arguments,
    add_watcher_argument,
    add_web_arguments,
    beacon_port,
    bind_endpoint,
    bot_choices,
    bot_speed,
    check_liveness,
    check_web_options,
    default_log_dir,
    default_name,
    duration,
    host_port,
    ipv4,
    lan_address,
    path_arg,
    player_name,
    port_number,
    positive,
    rules_from,
    seed_arg,
    whole_number,
)
from cli.commands import COMMANDS
from cli.places import default_key_path, kept_key_path
from p2p_nertz.defaults import (
    BEACON_PORT,
    BOT_CMD_SPEED,
    BOTS_ONLY_SPEED,
    PLAY_BOT_SPEED,
    STRATEGY_NAMES,
    TABLE_BOT_SPEED,
)
from p2p_nertz.errors import NertzError
from p2p_nertz.rules.config import MAX_SEATS

__all__ = [
    "COMMAND_PARSERS",
    "DEFAULT_BOT_SPEED",
    "DEFAULT_TIMEOUT",
    "SPEC_FILE",
    "TARGET_TIMEOUT",
    "log_paths",
    "no_key_to_play",
    "require_player",
]

DEFAULT_TIMEOUT = 300.0
"""``nertz demo``'s ``--timeout`` for a game of a number of rounds."""

TARGET_TIMEOUT = 1800.0
"""``nertz demo``'s ``--timeout`` for a game to a target score: it runs many rounds."""

DEFAULT_BOT_SPEED = PLAY_BOT_SPEED
"""The bots' speed in a quick game (why: :data:`p2p_nertz.defaults.PLAY_BOT_SPEED`)."""

COMMAND_HELP = dict(COMMANDS)
"""Each command's one line of help, as ``nertz --help`` lists it (:data:`cli.commands.COMMANDS`)."""

SPEC_FILE = "game.spec"
"""The spec file ``nertz demo`` writes next to the logs (``nertz audit`` looks for it there)."""


def _later(
    module: str, name: str, check: Callable[[argparse.Namespace], None] | None = None
) -> Callable[[argparse.Namespace], int]:
    """The command function ``name`` of ``cli.<module>``, imported when it is called: once
    the arguments are parsed and good, and ``check`` (if any) has found nothing wrong with
    what they name (it raises :class:`~p2p_nertz.errors.NertzError`, said as the command's
    would be)."""

    def run(args: argparse.Namespace) -> int:
        if hasattr(args, "drop_after"):  # (add_liveness_arguments: the timers against each other)
            check_liveness(args)
        if hasattr(args, "no_open"):  # (add_web_arguments: --no-open, --web-bind go with --web)
            check_web_options(args)
        if check is not None:
            check(args)
        command: Callable[[argparse.Namespace], int] = getattr(
            importlib.import_module(f"cli.{module}"), name
        )
        return command(args)

    run.__name__ = name
    return run


def _command_parser(sub: Any, name: str, more: str = "") -> argparse.ArgumentParser:
    """The parser of the command ``name`` added to ``sub`` (what ``add_subparsers``
    returned): its help is its line of :data:`COMMAND_HELP`, and its description that line
    and ``more``."""
    help_text = COMMAND_HELP[name]
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help_text, description=help_text + more
    )
    return parser


def log_paths(logs: list[Path]) -> None:
    """The logs named on the command line (``nertz audit``, ``nertz replay``) are files that
    exist: not a directory, not a FIFO or a device (never a log, and its reads may never end).

    Raises:
        NertzError: a path is not such a file (a usage error, not a finding of the audit).
    """
    for log in logs:
        if log.is_dir():
            raise NertzError(
                f"{str(log)!r} is a directory: give the log files in it, e.g. "
                f"{shlex.quote(str(log))}/*.log"
            )
        if not log.exists():
            raise NertzError(f"no such log file: {str(log)!r}")
        if not log.is_file():
            raise NertzError(f"{str(log)!r} is not a regular file: not a log")


def _check_logs(args: argparse.Namespace) -> None:
    log_paths(args.logs)
    if args.spec is not None:
        _spec_file(args.spec, logs_too=False)


# -- files named on the command line -----------------------------------------------------------
# Read (a key, a spec) or looked at (a log, a directory to make) by each command's check, before
# its module is imported: a wrong file is one line at once, not after trio, ZeroMQ and the game
# (session 36: `nertz watch` loaded the spec, then imported all that, then found no key). The
# readers are the commands' own (cli/keyfile.py, cli/files.py: light, imported when asked); the
# command reads the file again for its use.


def _key_file(path: Path | None) -> None:
    """A key file named (``--key``) is one: there, a regular file, a key (``load_key``'s words)."""
    if path is not None:
        from cli.keyfile import load_key

        load_key(path)


def _spec_file(path: Path | None, *, logs_too: bool = True) -> None:
    """A game named (``--spec``) is a spec file, or (``logs_too``) a member's log of the game."""
    if path is not None:
        from cli.files import load_game_spec, load_spec

        (load_game_spec if logs_too else load_spec)(path)


def _readable_file(path: Path) -> None:
    """A file named to be read is a regular file that can be opened (the words of the
    command's reader: ``cannot read 'x.log': No such file or directory``)."""
    from cli.files import read_small_file

    try:
        read_small_file(path, 0)
    except OSError as exc:
        raise NertzError(f"cannot read {str(path)!r}: {exc.strerror}") from None


def _log_to_write(path: Path) -> None:
    """A node's ``--log``: a log to go on with (a regular file that can be read), or a new
    one in a directory that is there and may be written in. Checked before anything runs
    (exit status 2, README): a node bound its port, said its seat, then failed on the log,
    status 1, as a game that did not finish (session 37)."""
    import os

    if path.exists() or path.is_symlink():
        _readable_file(path)
        from p2p_nertz.logfile.format import MAGIC, NOT_A_LOG, NOT_ITS_START

        with contextlib.suppress(OSError), path.open("rb") as f:
            start = f.read(len(MAGIC))
            if start and not MAGIC.startswith(start[: len(MAGIC)]):
                raise NertzError(f"{str(path)!r}: {NOT_A_LOG}: {NOT_ITS_START}")
        return
    parent = path.parent
    if not parent.is_dir():
        why = "not a directory" if parent.exists() else "no such directory"
        raise NertzError(f"cannot write the log {str(path)!r}: {why}: {str(parent)!r}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise NertzError(f"cannot write the log {str(path)!r}: {str(parent)!r} is not writable")


def _directory_to_make(path: Path | None, what: str, option: str) -> None:
    """A directory named to be made (``--log-dir``, ``--dir``) does not name a file, nor a
    directory that may not be written in."""
    if path is not None:
        from cli.files import refuse_an_unusable_directory

        refuse_an_unusable_directory(path, what, option)


def no_key_to_play(key: Path) -> str:
    """What ``nertz play`` says of a key it cannot find (and cannot make: ``--key`` named, or
    no terminal to ask the name at)."""
    return (
        f"no key at {str(key)!r}: make one with `nertz keygen --key {key}`, "
        "or play a quick game against bots with --bots N"
    )


# -- demo --------------------------------------------------------------------------------------


def _add_demo(sub: Any) -> None:
    """Add ``nertz demo`` to ``sub`` (what ``add_subparsers`` returned)."""
    p = _command_parser(
        sub,
        "demo",
        ". One process per player, explicit peers on 127.0.0.1 (no broadcast). "
        "By default one round (--rounds 1); --target 100 plays a full game.",
    )
    strategies = ", ".join(STRATEGY_NAMES)
    count = p.add_mutually_exclusive_group()
    count.add_argument(
        "--bots",
        type=_bot_count,
        metavar="N",
        help="number of bot players, 2-8, as in `nertz play --bots N` (default 4)",
    )
    count.add_argument(
        "--players", type=whole_number(0), help="the same as --bots: every player is a bot"
    )
    p.add_argument(
        "--strategy",
        default="greedy",
        help=f"bot strategy, one for all or comma-separated per seat (known: {strategies}; "
        "default greedy)",
    )
    p.add_argument(
        "--speed",
        default=str(BOTS_ONLY_SPEED),
        help=f"bot speed 1-10, one per seat or one for all (default {BOTS_ONLY_SPEED})",
    )
    p.add_argument(
        "--seed",
        type=seed_arg,
        default=None,
        help="seed for the keys and the game (default random)",
    )
    p.add_argument(
        "--dir",
        type=path_arg,
        default=None,
        help="working directory for the spec and logs (default ./nertz-logs/demo-<game id>)",
    )
    p.add_argument(
        "--timeout",
        type=duration,
        default=None,
        help=(
            f"seconds before the game is given up (default {DEFAULT_TIMEOUT:.0f}, "
            f"or {TARGET_TIMEOUT:.0f} with --target)"
        ),
    )
    add_rules_arguments(p)
    add_liveness_arguments(p)
    p.set_defaults(func=_later("demo", "_cmd_demo", _check_demo))


def _check_demo(args: argparse.Namespace) -> None:
    """``--bots``/``--players`` (the same: every player a bot) is a table's size, 4 if not
    given; set in ``args.players`` for the command."""
    given = args.bots if args.bots is not None else args.players
    args.players = 4 if given is None else given
    if not 2 <= args.players <= MAX_SEATS:
        raise NertzError(f"a demo has 2 to {MAX_SEATS} players, not {args.players}")
    _check_seats(args, args.strategy, args.players, "player")
    _directory_to_make(args.dir, "game directory", "--dir")


def _check_seats(args: argparse.Namespace, strategies: str, bots: int, who: str) -> None:
    """The rules (:func:`~cli.args.rules_from`) seat the table's players (``args.players``,
    or ``--bots`` and you), and each of the ``bots`` has a known strategy and speed.

    Raises:
        NertzError: rules that cannot seat them, a bad list of strategies or speeds.
    """
    players = getattr(args, "players", None) or bots + 1
    rules_from(args).validate_players(players)
    bot_choices(strategies, args.speed, bots, who)


def _bot_count(text: str) -> int:
    """``--bots N``: a number, as in ``nertz play --bots N`` (strategies go in --strategy)."""
    if not text.strip().isdecimal():  # (not isdigit: "²" is a digit int() refuses)
        raise argparse.ArgumentTypeError(
            f"--bots is a number of bots, as in `nertz play --bots N`, not {text!r} "
            f"(strategies: --strategy {text})"
        )
    return int(text)


# -- node --------------------------------------------------------------------------------------


def add_stop_with_stdin(p: argparse.ArgumentParser) -> None:
    """``--stop-with-stdin``, given by a command to the bots it starts (cli/bots.py)."""
    p.add_argument(
        "--stop-with-stdin",
        action="store_true",
        help=(
            "stop at once, without leaving the game, when standard input ends: a command "
            "that starts this peer keeps the other end open, so the peer goes with it however "
            "it ends (killed too); its log stays resumable"
        ),
    )


def _add_node(sub: Any) -> None:
    """Add ``nertz node`` to ``sub`` (what ``add_subparsers`` returned)."""
    p = _command_parser(
        sub,
        "node",
        ". Every other member's endpoint is given with --peer (no discovery).",
    )
    p.add_argument("--key", required=True, type=path_arg, help="your key file (nertz keygen)")
    p.add_argument(
        "--spec",
        required=True,
        type=path_arg,
        help="the game: its spec file (GameSpec wire) or a member's log of it",
    )
    p.add_argument(
        "--bind",
        required=True,
        type=bind_endpoint,
        help="this peer's endpoint, e.g. tcp://127.0.0.1:5555 (tcp://0.0.0.0:N: every interface)",
    )
    p.add_argument(
        "--peer",
        action="append",
        default=[],
        metavar="WHO=ENDPOINT",
        help=(
            "another member's endpoint; WHO is its fingerprint or its seat (0 = first, as on "
            "the table); repeat for every other member"
        ),
    )
    p.add_argument(
        "--peers-on-stdin",
        action="store_true",
        help=(
            "bind first (a port of 0 takes a free one), print the endpoint bound (with --json "
            'a line {"event": "bound", "endpoint": ...}), then read more WHO=ENDPOINT items '
            "from standard input, one a line, up to an empty line"
        ),
    )
    p.add_argument("--log", required=True, type=path_arg, help="this peer's log file")
    add_stop_with_stdin(p)
    p.add_argument(
        "--fresh",
        action="store_true",
        help=(
            "the game and this key were made just now by the command starting this node (its "
            "log new): no other process of the key can have signed in it, so the node signs "
            "without first hearing a member's word on its feed, and abandons a member silent "
            "from the start; nertz demo and play start their bots so (a person's node: leave "
            "it out)"
        ),
    )
    p.add_argument(
        "--bot",
        default="greedy",
        choices=STRATEGY_NAMES,
        help="the bot strategy (default greedy)",
    )
    p.add_argument(
        "--speed", type=bot_speed(), default=BOTS_ONLY_SPEED, metavar="1-10", help="bot pace"
    )
    p.add_argument(
        "--practice",
        action="store_true",
        help="the bot waits for the slowest other player: never more moves this round than them",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print JSON lines: each round, the game's end, then the result",
    )
    p.add_argument(
        "--progress",
        action="store_true",
        help="also print a JSON line for each card to the lake (what `nertz demo` shows)",
    )
    add_liveness_arguments(p)
    add_watcher_argument(p)
    p.set_defaults(func=_later("node_cmd", "_cmd_node", _check_node))


def _check_node(args: argparse.Namespace) -> None:
    """``--key`` and ``--spec`` are a key and a game; ``--fresh`` (``PeerConfig.fresh``),
    given by a command for the bot it starts in a game it just made (cli/bots.py), is refused
    on a log that holds anything: a resumed node's key has signed in the game before, maybe
    elsewhere too (docs/protocol.md §9.6).

    Raises:
        NertzError: no key or game there, or ``--fresh`` with a log that is not empty.
    """
    if args.fresh:  # (said first, as the node did before it read its files)
        with contextlib.suppress(OSError):
            if args.log.stat().st_size > 0:
                raise NertzError(
                    f"--fresh: {str(args.log)!r} already holds this node's game: a node "
                    "resumed from its log is not fresh (leave --fresh out)"
                )
    _key_file(args.key)
    _spec_file(args.spec)
    _log_to_write(args.log)


# -- keygen, host, join, bot, games, resume ----------------------------------------------------


def _common(p: argparse.ArgumentParser, *, key_required: bool = True) -> None:
    p.add_argument(
        "--key",
        type=path_arg,
        default=default_key_path() if key_required else None,
        help="your key file (default: %(default)s)" if key_required else "a key file",
    )
    p.add_argument(
        "--name",
        type=player_name,
        default=default_name(),
        help="your name at the table (1-32 visible chars, no space at either end)",
    )
    p.add_argument(
        "--log-dir",
        type=path_arg,
        default=default_log_dir(),
        help="where the game's log is written (default: %(default)s)",
    )
    p.add_argument("--json", action="store_true", help="print JSON lines instead of text")
    add_liveness_arguments(p)
    add_watcher_argument(p)


def _player(p: argparse.ArgumentParser, *, bot_option: str = "--bot") -> None:
    choices = STRATEGY_NAMES
    if bot_option == "--bot":  # (a bot playing your seat for you: BOTS_ONLY_SPEED)
        p.add_argument("--bot", choices=choices, help="let a bot of this strategy play for you")
        speed, why = BOTS_ONLY_SPEED, "as fast as it can"
    else:  # (`nertz bot`: an opponent a person adds to a table, BOT_CMD_SPEED)
        p.add_argument(
            "--strategy", dest="bot", choices=choices, default="greedy", help="bot strategy"
        )
        speed, why = BOT_CMD_SPEED, "a quick player, as host --bots; a person plays at about 1"
    p.add_argument(
        "--speed", type=bot_speed(), default=speed, metavar="1-10",
        help=f"bot pace, about 24 moves a minute per level (default {speed}: {why})",
    )  # fmt: skip


def _discovery(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--beacon-port",
        type=beacon_port,
        default=BEACON_PORT,
        help=f"UDP port of the discovery beacon (default {BEACON_PORT})",
    )


def _add_lobby(sub: Any) -> None:
    """Add ``keygen``, ``host``, ``join``, ``bot``, ``games`` and ``resume`` to ``sub``."""
    _add_keygen(sub)
    _add_host(sub)
    _add_join_and_bot(sub)
    _add_games(sub)
    _add_resume(sub)


def _add_keygen(sub: Any) -> None:
    p = sub.add_parser(
        "keygen",
        help=COMMAND_HELP["keygen"],
        description="Make a new Ed25519 key, or --show the fingerprint of yours.",
    )
    p.add_argument(
        "--key", type=path_arg, default=default_key_path(), help="key file (default: %(default)s)"
    )
    p.add_argument("--force", action="store_true", help="replace an existing key")
    p.add_argument("--show", action="store_true", help="show the key's fingerprint; make nothing")
    p.set_defaults(func=_later("keygen_cmd", "_cmd_keygen"))


def _add_host(sub: Any) -> None:
    p = sub.add_parser(
        "host",
        help=COMMAND_HELP["host"],
        description=(
            "Open a table others can join. It starts by itself with --players N, or when you "
            "press Enter. Discovery is off unless --discover names a broadcast address."
        ),
    )
    _common(p)
    _player(p)
    p.add_argument(
        "--address", type=lan_address, help="your IPv4 address for the lobby and the game "
        "(default: the route to --discover, else 127.0.0.1)",
    )  # fmt: skip
    p.add_argument(
        "--port", type=port_number, default=0, help="the lobby's TCP port (default: any)"
    )
    p.add_argument(
        "--discover", type=ipv4, metavar="BROADCAST", help="broadcast beacons to this address"
    )
    _discovery(p)
    p.add_argument(
        "--players",
        type=whole_number(1, MAX_SEATS),
        help="start as soon as this many are seated and ready",
    )
    p.add_argument(
        "--invite",
        action="append",
        default=[],
        metavar="FINGERPRINT",
        help="only these keys may sit (repeatable; as `nertz keygen --show` prints them)",
    )
    p.add_argument(
        "--invite-file",
        type=path_arg,
        metavar="PATH",
        help="invite the fingerprints in this file (one a line, # comments)",
    )
    p.add_argument(
        "--capacity", type=whole_number(1, MAX_SEATS), default=MAX_SEATS,
        metavar=f"1-{MAX_SEATS}",
        help="seats at the table, you included (default 8)",
    )  # fmt: skip
    p.add_argument("--bots", type=whole_number(0, MAX_SEATS - 1), default=0,
                   metavar=f"0-{MAX_SEATS - 1}",
                   help="bot peers to start on this machine, joining this table")  # fmt: skip
    p.add_argument(
        "--bot-strategy", choices=STRATEGY_NAMES, default="greedy",
        help="strategy of the --bots (default greedy)",
    )  # fmt: skip
    p.add_argument(
        "--bot-speed", type=bot_speed(), default=TABLE_BOT_SPEED, metavar="1-10",
        help="speed of the --bots: about 24 moves a minute per level (default "
        f"{TABLE_BOT_SPEED}, as the lobby's b: a quick player; a person plays at about 1, "
        "docs/pace.md)",
    )  # fmt: skip
    add_rules_arguments(p)
    p.set_defaults(func=_later("lobby_cmd", "_cmd_host", _check_host))


def _check_host(args: argparse.Namespace) -> None:
    """``nertz host`` has a player (:func:`require_player`), and its numbers of players, bots
    and seats leave a seat for each and start.

    Raises:
        NertzError: no player, or numbers that contradict each other (the table would wait
            for ever, or be full).
    """
    require_player(args, "host")
    if args.players is not None:
        rules_from(args).validate_players(args.players)
        if args.bots >= args.players:
            raise NertzError(f"--bots {args.bots} leaves no seat for anybody else")
        if args.players > args.capacity:
            raise NertzError(
                f"--players {args.players} is more than the table seats (--capacity "
                f"{args.capacity}): it would wait for ever"
            )
    if args.bots >= args.capacity:
        raise NertzError(
            f"--bots {args.bots} and you are more than the table seats (--capacity {args.capacity})"
        )
    _key_file(args.key)
    if args.invite_file is not None:  # (its keys' words are the lobby's: checked by the host)
        from cli.files import read_invite_file

        read_invite_file(args.invite_file)
    _directory_to_make(args.log_dir, "log directory", "--log-dir")


def _add_join_and_bot(sub: Any) -> None:
    for name in ("join", "bot"):
        p = _command_parser(sub, name)
        _common(p, key_required=name == "join")
        _player(p, bot_option="--bot" if name == "join" else "--strategy")
        where = p.add_mutually_exclusive_group()
        where.add_argument("--peer", type=host_port, metavar="HOST:PORT", help="the host's lobby")
        where.add_argument(
            "--discover", type=ipv4, metavar="BROADCAST", help="find a table on this LAN"
        )
        p.add_argument("--host", metavar="FINGERPRINT", help="with --discover: this host's table")
        _discovery(p)
        p.add_argument(
            "--timeout", type=duration, default=10.0, help="seconds to find the table (default 10)"
        )
        if name == "bot":
            add_stop_with_stdin(p)
        p.set_defaults(func=_later("lobby_cmd", "_cmd_join", _check_join))


def _check_join(args: argparse.Namespace) -> None:
    """``nertz join`` and ``nertz bot`` are told where the table is, one way.

    Raises:
        NertzError: no player (:func:`require_player`), neither ``--peer`` nor ``--discover``.
    """
    require_player(args, args.command)
    if (args.peer is None) == (args.discover is None):  # (both: refused as exclusive)
        raise NertzError("say where the table is: --peer HOST:PORT or --discover BROADCAST")
    _key_file(args.key)  # (a bot's, if given: none is a fresh key)
    _directory_to_make(args.log_dir, "log directory", "--log-dir")


def require_player(args: argparse.Namespace, command: str) -> None:
    """Without ``--bot`` a person plays at the terminal table: that needs a terminal (or,
    ``resume --web``, a browser: the URL is printed)."""
    if args.bot is not None:
        return
    bots = ", ".join(STRATEGY_NAMES)
    if getattr(args, "json", False):
        raise NertzError(f"--json is for a bot player: add --bot STRATEGY ({bots})")
    if not getattr(args, "web", False) and not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise NertzError(
            f"you play nertz {command} at the terminal table, which needs a terminal; "
            f"or let a bot play: --bot STRATEGY ({bots})"
        )


def _add_games(sub: Any) -> None:
    p = sub.add_parser(
        "games",
        help=COMMAND_HELP["games"],
        description="Listen for beacons sent to BROADCAST and list the tables heard.",
    )
    p.add_argument(
        "--discover", type=ipv4, metavar="BROADCAST", required=True,
        help="the LAN's broadcast address to listen on for tables, e.g. 192.168.1.255",
    )  # fmt: skip
    _discovery(p)
    p.add_argument("--timeout", type=duration, default=3.0, help="seconds to listen (default 3)")
    p.add_argument("--json", action="store_true", help="print JSON lines")
    p.set_defaults(func=_later("lobby_cmd", "_cmd_games"))


def _add_resume(sub: Any) -> None:
    p = sub.add_parser(
        "resume",
        help=COMMAND_HELP["resume"],
        description="Rebuild a peer from its log (same key, same seat, no seq reused) and play on. "
        "The log of a game you left says so and starts nothing (status 4: a member that left "
        "cannot rejoin); without --bot, that of a game over says so with the score (status 0). "
        "The bots your command started for the game (play --bots, host --bots, b in the "
        "lobby) start again too. Exit statuses: README, the command line.",
    )
    p.add_argument("log", type=path_arg, help="the peer's log file")
    p.add_argument(
        "--key",
        type=path_arg,
        help="the key (default: the log's key from the key store "
        f"{kept_key_path('FINGERPRINT').parent}, or your own key)",
    )
    p.add_argument(
        "--recover",
        action="store_true",
        help="the log may have lost its end (e.g. restored from a backup): take our own "
        "events back from the others before signing anything (always done after a cut tail)",
    )
    p.add_argument(
        "--cut-damaged-tail",
        action="store_true",
        help="cut a damaged (not merely torn) end of the log instead of refusing it, then "
        "recover our own events from the others",
    )
    _player(p)
    p.add_argument("--json", action="store_true", help="print JSON lines")
    add_liveness_arguments(p)
    add_watcher_argument(p)
    add_web_arguments(
        p,
        "play on in a browser page, at the URL of the game's first --web run when kept "
        "(its open pages reconnect by themselves)",
    )
    p.set_defaults(func=_later("lobby_cmd", "_cmd_resume", _check_resume))


def _check_resume(args: argparse.Namespace) -> None:
    """The log to resume is a file to read; ``--key``, if given, a key."""
    _readable_file(args.log)
    _key_file(args.key)


# -- play --------------------------------------------------------------------------------------


def _add_play(sub: Any) -> None:
    """Add ``nertz play`` to ``sub`` (what ``add_subparsers`` returned)."""
    p = _command_parser(
        sub,
        "play",
        ". With neither --bots nor --spec: the lobby — the tables heard on the "
        "LAN (--discover BROADCAST) and given ones (--peer HOST:PORT); create one, join "
        "one, add bots, start. With --bots N: N bot processes on 127.0.0.1 and you (one "
        "round unless --rounds/--target). With --spec: give --key, --spec, --bind, --peer "
        "and --log as for `nertz node`. Keys: ? in the lobby and at the table.",
    )
    quick = p.add_argument_group("a quick game against bots on this machine")
    quick.add_argument("--bots", type=positive, help="number of bot players, 1-7")
    quick.add_argument(
        "--strategy",
        default="greedy",
        help=f"bot strategy, one for all or comma-separated per bot ({', '.join(STRATEGY_NAMES)})",
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
    quick.add_argument("--seed", type=seed_arg, default=None, help="seed for keys and deals")
    quick.add_argument(
        "--name", default=None, help="your name (default: you in a quick game, else your login)"
    )
    quick.add_argument(
        "--dir",
        type=path_arg,
        default=None,
        help="directory for the spec and logs (default ./nertz-logs/play-<game id>)",
    )
    given = p.add_argument_group("one member of a game fixed elsewhere (as `nertz node`)")
    given.add_argument("--key", type=path_arg, help="your key file (nertz keygen)")
    given.add_argument(
        "--spec", type=path_arg, help="the game: its spec file or a member's log of it"
    )
    given.add_argument(
        "--bind", type=bind_endpoint, help="this peer's endpoint, e.g. tcp://127.0.0.1:5555"
    )
    given.add_argument(
        "--peer",
        action="append",
        default=[],
        metavar="WHO=ENDPOINT|HOST:PORT",
        help="another member (with --spec; WHO: its seat from 0, or its fingerprint); in the "
        "lobby: a table's lobby address (repeatable)",
    )
    given.add_argument("--log", type=path_arg, help="this peer's log file")
    _add_lobby_and_screen(p)
    add_liveness_arguments(p)
    add_watcher_argument(p)
    add_rules_arguments(p)
    add_web_arguments(p)
    p.set_defaults(func=_later("play", "_cmd_play", _check_play))


def _check_play(args: argparse.Namespace) -> None:
    """``nertz play``'s three ways in (``--bots``, a given game, the lobby) take options that
    do not mix; ``--name`` a good name, and the lobby's ``--peer`` HOST:PORT each (set in
    ``args.peer`` as pairs for the command).

    Raises:
        NertzError: options of two ways, a given game without all its parts, a number of
            bots a table cannot seat, a bad name or lobby address.
    """
    given = [args.key, args.spec, args.bind, args.log]
    lobby_only = args.discover is not None or args.address is not None or args.log_dir is not None
    if args.bots is not None and (any(given) or args.peer):
        raise NertzError("--bots makes its own game: do not give --key/--spec/--bind/--peer/--log")
    if (args.bots is not None or any(given[1:])) and lobby_only:
        raise NertzError("--discover, --address and --log-dir are for the lobby (no --bots/--spec)")
    if args.bots is not None:
        if not 2 <= args.bots + 1 <= MAX_SEATS:
            raise NertzError(
                f"a table has 2 to {MAX_SEATS} players: give --bots 1 to {MAX_SEATS - 1}, "
                f"not {args.bots}"
            )
        _check_seats(args, args.strategy, args.bots, "bot")
    else:
        _no_quick_options(args)
        if any(given[1:]) and not all(given):
            raise NertzError("a given game needs all of --key, --spec, --bind and --log")
        if args.log is not None:
            _log_to_write(args.log)
        if not any(given[1:]):  # (the lobby's --peer: a table's HOST:PORT)
            try:
                args.peer = [host_port(p) for p in args.peer]
            except argparse.ArgumentTypeError as exc:
                raise NertzError(f"--peer: {exc}") from None
    try:
        if args.name is not None:
            player_name(args.name)
    except argparse.ArgumentTypeError as exc:
        raise NertzError(f"--name: {exc}") from None
    if args.bots is not None:
        _directory_to_make(args.dir, "game directory", "--dir")
    elif args.spec is not None:  # (a given game: all of its parts, checked above)
        _key_file(args.key)
        _spec_file(args.spec)
    else:  # (the lobby: a key named must be there; none may be made)
        if args.key is not None:
            if not args.key.exists():
                raise NertzError(no_key_to_play(args.key))
            _key_file(args.key)
        # (as host's and join's: before the lobby opens, not when the game it made starts)
        _directory_to_make(args.log_dir, "log directory", "--log-dir")
    # (before anything is made: a quick game made its directory and started its bots, a
    # given game its log, then found no terminal and left them behind; session 44)
    at_a_terminal = sys.stdin.isatty() and sys.stdout.isatty()
    if (args.bots is not None or args.spec is not None) and not (args.web or at_a_terminal):
        raise NertzError(NEEDS_A_TERMINAL)


def _no_quick_options(args: argparse.Namespace) -> None:
    """Without ``--bots``, the quick game's options would be ignored: ``nertz play
    --practice`` opened the LAN lobby (or said there was no key), the practice forgotten.

    Raises:
        NertzError: one of them is given.
    """
    given = [
        flag
        for flag, on in (
            ("--practice", args.practice),
            ("--strategy", args.strategy != "greedy"),
            ("--speed", args.speed != str(DEFAULT_BOT_SPEED)),
            ("--seed", args.seed is not None),
            ("--dir", args.dir is not None),
        )
        if on
    ]
    if given:
        raise NertzError(
            f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} for a quick game "
            f"against bots: add --bots N (nertz play --bots 2 {given[0]} …)"
        )


def _add_lobby_and_screen(p: argparse.ArgumentParser) -> None:
    """``play``'s options for the lobby and for the screen."""
    lobby = p.add_argument_group("the lobby (no --bots, no --spec)")
    lobby.add_argument(
        "--discover",
        type=ipv4,
        metavar="BROADCAST",
        help="hear tables on this LAN, and announce yours there (nothing is broadcast without it)",
    )
    lobby.add_argument(
        "--beacon-port",
        type=beacon_port,
        default=BEACON_PORT,
        help=f"UDP port of the discovery beacon (default {BEACON_PORT})",
    )
    lobby.add_argument(
        "--address",
        type=lan_address,
        help="your IPv4 address for a table you host and the game "
        "(default: the route to --discover or the first --peer, else 127.0.0.1)",
    )
    lobby.add_argument("--log-dir", type=path_arg, default=None, help="where game logs are written")
    look = p.add_argument_group("the screen")
    look.add_argument("--ascii", action="store_true", help="suits as letters C D H S")
    look.add_argument("--mono", action="store_true", help="no colour (also with NO_COLOR set)")


# -- watch -------------------------------------------------------------------------------------


def _add_watch(sub: Any) -> None:
    """Add ``nertz watch`` to ``sub`` (what ``add_subparsers`` returned)."""
    p = _command_parser(sub, "watch")
    p.add_argument(
        "--spec",
        type=path_arg,
        required=True,
        help="the game: its spec file (game.spec) or a member's log of it; only its members' "
        "keys may connect",
    )
    p.add_argument(
        "--key",
        type=path_arg,
        default=default_key_path(),
        help="your key file, the spectator's key members connect to (`nertz keygen`; "
        "default: %(default)s)",
    )
    p.add_argument(
        "--bind",
        required=True,
        type=bind_endpoint,
        help="where members push events, e.g. 127.0.0.1:5600 or tcp://127.0.0.1:5600; "
        "`nertz watch` prints the ENDPOINT#KEY they give as --watcher",
    )
    p.add_argument("--ascii", action="store_true", help="suits as letters C D H S")
    p.add_argument("--mono", action="store_true", help="no colour (also with NO_COLOR set)")
    add_web_arguments(p, "follow it in a browser page served by this process (its URL is printed)")
    p.set_defaults(func=_later("watch", "_cmd_watch", _check_watch))


def _check_watch(args: argparse.Namespace) -> None:
    """The game a spec or a member's log (in the order ``nertz watch`` reads them), then the
    spectator's key there (one without it told how to make it) and a key."""
    _spec_file(args.spec)
    if not args.key.exists():
        raise NertzError(
            f"no key file at {str(args.key)!r}: the spectator needs a key for members to "
            "connect to; make one with `nertz keygen`, or give --key FILE"
        )
    _key_file(args.key)


# -- audit, replay -----------------------------------------------------------------------------


def _add_audit(sub: Any) -> None:
    """Add ``nertz audit`` to ``sub``."""
    p = _command_parser(
        sub,
        "audit",
        ". Exit status 0: valid; 1: violations found; 2: unreadable input.",
    )
    p.add_argument("logs", nargs="+", type=path_arg, metavar="LOG", help="a peer's log file")
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per line: each finding, then the verdict",
    )
    p.add_argument("--strict", action="store_true", help="stop at the first error")
    p.add_argument(
        "--deep",
        action="store_true",
        help="also re-check the rules engine: replay every round with every deck, checking "
        "that each card is in exactly one place after every move (about twice as slow)",
    )
    p.add_argument(
        "--spec",
        type=path_arg,
        default=None,
        metavar="FILE",
        help=f"the game spec file, if the logs carry none (default: {SPEC_FILE} beside them)",
    )
    p.set_defaults(func=_later("audit_cmd", "_cmd_audit", _check_logs))


def _add_replay(sub: Any) -> None:
    """Add ``nertz replay`` to ``sub``."""
    p = _command_parser(sub, "replay")
    p.add_argument("logs", nargs="+", type=path_arg, metavar="LOG", help="a peer's log file")
    p.add_argument("--text", action="store_true", help="print one line per event and exit")
    p.add_argument(
        "--spec", type=path_arg, default=None, metavar="FILE", help="the game spec file, if needed"
    )
    add_web_arguments(
        p, "step through it in a browser page served by this process (its URL is printed)"
    )
    p.set_defaults(func=_later("replay_cmd", "_cmd_replay", _check_logs))


# -- rules, match ------------------------------------------------------------------------------


def _add_rules_and_match(sub: Any) -> None:
    """Add the ``rules`` and ``match`` subcommands to ``sub`` (the ``nertz`` subparsers)."""
    rules_help = (
        "print the rules of the game (how to play, the variants, where each rule comes from)"
    )
    p = sub.add_parser("rules", help=rules_help, description=rules_help)
    p.add_argument(
        "topic",
        nargs="*",
        metavar="TOPIC",
        help="print only the sections whose heading holds these words (e.g. lake, scoring, "
        "variants); a wrong one lists the topics",
    )
    p.set_defaults(func=_later("match_cmd", "_cmd_rules"))
    strategies = ", ".join(STRATEGY_NAMES)
    for name, help_text in (
        ("match", "play an in-process match of bots (no network) and print the scoreboard"),
    ):
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument(
            "--players", type=positive, default=4, help="number of players, 1-8 (default 4)"
        )
        p.add_argument(
            "--bots",
            default="greedy",
            help=(
                f"comma-separated strategies, one per seat or one for all (known: {strategies}; "
                "default greedy)"
            ),
        )
        p.add_argument(
            "--speed",
            default="5",
            help="bot speed level 1-10, one per seat (comma-separated) or one for all",
        )
        p.add_argument("--seed", type=seed_arg, default=1, help="the match seed (default 1)")
        p.add_argument("--json", action="store_true", help="print one JSON object per round")
        add_rules_arguments(p, deal=False)  # (no peers: no deal to choose)
        p.set_defaults(func=_later("match_cmd", "_cmd_match", _check_match))


def _check_match(args: argparse.Namespace) -> None:
    _check_seats(args, args.bots, args.players, "player")


COMMAND_PARSERS: tuple[tuple[Callable[[Any], None], tuple[str, ...]], ...] = (
    (_add_demo, ("demo",)),
    (_add_node, ("node",)),
    (_add_lobby, ("keygen", "host", "join", "bot", "games", "resume")),
    (_add_play, ("play",)),
    (_add_watch, ("watch",)),
    (_add_audit, ("audit",)),
    (_add_replay, ("replay",)),
    (_add_rules_and_match, ("rules", "match")),
)
"""What adds each command's parser to ``nertz``'s subparsers, in the order of
:data:`cli.commands.COMMANDS`."""
