"""What the ``nertz`` commands share: argument types and option groups, endpoints, ports,
default names and places, and the exit statuses.

One home for each: a command adds ``--suspect-after``/``--drop-after`` with
:func:`add_liveness_arguments` and reads them back with :func:`liveness_from`, the rules with
:func:`add_rules_arguments` and :func:`rules_from`, and so on. Nothing heavy is imported at
the top (``nertz --help`` must start fast): the engine and the runtime only inside the helpers
that need them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, NoReturn

from p2p_nertz.defaults import BOT_SPEEDS, DROP_AFTER, STRATEGY_NAMES, SUSPECT_AFTER
from p2p_nertz.errors import NertzError
from p2p_nertz.words import seat_named

if TYPE_CHECKING:
    from p2p_nertz.match import Player
    from p2p_nertz.protocol.gone import TableGone
    from p2p_nertz.protocol.peer import PeerConfig
    from p2p_nertz.protocol.spec import Deal
    from p2p_nertz.rules import Rules


EXIT_OK = 0


EXIT_USAGE = 2

#: The refusal of a terminal screen (the table, the lobby) without a terminal: said by the
#: play command's checks before anything is made (cli/parsers.py), and by the screen itself
#: (cli/terminal.py) for the commands that find out later.
NEEDS_A_TERMINAL = (
    "the table needs a terminal (standard input and output); --web shows it in a browser page "
    "instead"
)

#: The longest word an error line repeats whole (a path, a name, an argument): a longer one is
#: shown by its start and its length, so that one wrong 10,000-character argument gives one
#: line a person can read, not a screenful of it.
LONGEST_WORD = 400


def error_line(line: str) -> str:
    """``line`` with every word longer than :data:`LONGEST_WORD` characters cut short.

    >>> line = error_line("no such log file: " + "x" * 5000)
    >>> line[:22], line[-20:], len(line)
    ('no such log file: xxxx', 'x… (5000 characters)', 277)
    """
    words = line.split(" ")
    return " ".join(
        w if len(w) <= LONGEST_WORD else f"{w[: LONGEST_WORD * 3 // 5]}… ({len(w)} characters)"
        for w in words
    )


class Parser(argparse.ArgumentParser):
    """argparse that exits with one line in the project's words (:func:`usage_words`), not
    the whole usage, on a bad argument, and names the help that shows the fix."""

    def error(self, message: str) -> NoReturn:
        self.exit(
            EXIT_USAGE,
            error_line(f"{self.prog}: error: {usage_words(message)} (see {self.prog} --help)")
            + "\n",
        )


#: argparse's own sentences (Python 3.11 to 3.13) and the project's words for each, with the
#: fix where the sentence can name it: argparse says "expected one argument" where a person
#: needs "--bots needs a value".
_ARGPARSE_WORDS: tuple[tuple[str, str], ...] = (
    (r"argument (?P<o>\S+): expected one argument", r"\g<o> needs a value"),
    (r"argument (?P<o>\S+): expected at least one argument", r"\g<o> needs at least one value"),
    (r"argument (?P<o>\S+): expected (?P<n>\d+) arguments?", r"\g<o> needs \g<n> values"),
    (r"argument (?P<o>\S+): ignored explicit argument (?P<v>.*)",
     r"\g<o> takes no value (it is a switch), not \g<v>"),
    (r"argument (?P<o>\S+): not allowed with argument (?P<p>\S+)",
     r"\g<o> and \g<p> cannot be given together: give one of them"),
    (r"one of the arguments (?P<o>.*) is required", r"give one of \g<o>"),
    (r"ambiguous option: (?P<o>\S+) could match (?P<m>.*)",
     r"\g<o> is the start of more than one option (\g<m>): write it out in full"),
    (r"the following arguments are required: (?P<o>.*)", r"required and not given: \g<o>"),
    (r"argument (?P<o>\S+): invalid (?P<t>\S+) value: (?P<v>.*)",
     r"\g<o> takes a \g<t> value, not \g<v>"),
    (r"argument (?P<o>\S+): (?P<m>takes .*)", r"\g<o> \g<m>"),
    (r"argument (?P<o>\S+): (?P<m>.*)", r"\g<o>: \g<m>"),
)  # fmt: skip


def usage_words(message: str) -> str:
    """One of argparse's error sentences in the project's words (:data:`_ARGPARSE_WORDS`);
    any other message as it is.

    >>> usage_words("argument --bots: expected one argument")
    '--bots needs a value'
    >>> usage_words("argument --draw: invalid choice: 2 (choose from 1, 3)")
    '--draw takes 1 or 3, not 2'
    >>> usage_words("argument COMMAND: invalid choice: 'foo' (choose from 'demo', 'node')")
    "no command 'foo' (the commands are demo and node)"
    >>> usage_words("unrecognized arguments: --bogus 3")
    'it does not take --bogus 3'
    """
    import re  # (not at the top: `nertz --help` stays fast)

    choice = re.fullmatch(r"argument (\S+): invalid choice: (.*) \(choose from (.*)\)", message)
    if choice is not None:
        option, value, known = choice.groups()
        names = [k.strip().strip("'") for k in known.split(",")]
        listed = f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else names[0]
        if option == "COMMAND":
            return f"no command {value} (the commands are {listed})"
        return f"{option} takes {listed.replace(' and ', ' or ')}, not {value}"
    extra = re.fullmatch(r"unrecognized arguments: (.*)", message)
    if extra is not None:
        return f"it does not take {extra.group(1)}"
    for pattern, words in _ARGPARSE_WORDS:
        said, count = re.subn(f"^{pattern}$", words, message)
        if count:
            return said
    return message


def path_arg(text: str) -> Path:
    """A file or directory named on the command line. An empty one is refused: ``Path("")``
    is ``.``, so ``--dir ""`` (an unset shell variable) would write into the current
    directory and ``--key ""`` would name it. A leading ``~`` is the home directory, as in
    the shell: ``--dir=~/games`` and a quoted ``"~/games"`` reach ``nertz`` unexpanded, and
    made a directory named ``~`` in the current one."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path: give a file's or a directory's name")
    if text.startswith("~"):  # (`--dir=~/games`, or quoted: the shell leaves the ~ as it is)
        return Path(os.path.expanduser(text))
    return Path(text)


def whole_number(low: int, high: int | None = None) -> Callable[[str], int]:
    """The one converter of a whole number given on a command line: from ``low`` to ``high``
    (no highest if ``None``). Anything else (a fraction, a sign out of range, a word, an empty
    argument, a number of 5,000 digits) is refused in words that say what the option takes.

    >>> whole_number(1, 10)("3")
    3
    >>> whole_number(1, 10)("0.3")
    Traceback (most recent call last):
      ...
    argparse.ArgumentTypeError: takes a whole number from 1 to 10, not '0.3'
    """
    if high is None:
        takes = f"takes a whole number, {low} or more"
    else:
        takes = f"takes a whole number from {low} to {high}"

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:  # (a word, a fraction, "", too many digits for int())
            value = None
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{takes}, not {text!r}")
        return value

    convert.__name__ = f"whole number {low}-{high}"  # (argparse's name for its type)
    return convert


positive = whole_number(1)
"""A whole number, 1 or more."""


def bot_speed() -> Callable[[str], int]:
    """``--speed`` and ``--bot-speed`` of one bot: a speed level (p2p_nertz/bots: the
    levels)."""
    return whole_number(BOT_SPEEDS[0], BOT_SPEEDS[-1])


def rule_number(name: str) -> Callable[[str], int]:
    """The converter of the rule ``name`` (``target``, ``rounds``, ``false_call_penalty``):
    the rules' own limits (p2p_nertz/rules/config.py)."""
    from p2p_nertz.rules.config import LIMITS

    return whole_number(*LIMITS[name])


def seed_arg(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer seed: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"a seed is not negative: {value}")
    return value


def add_watcher_argument(p: argparse.ArgumentParser) -> None:
    """``--watcher ENDPOINT#KEY`` (repeatable), for every command that runs a peer node."""
    p.add_argument(
        "--watcher",
        action="append",
        default=[],
        type=watcher_address,
        metavar="ENDPOINT#KEY",
        help="push every event to a `nertz watch` spectator: the endpoint and key it prints, "
        "e.g. 127.0.0.1:5600#<64 hex digits> (repeatable)",
    )


if TYPE_CHECKING:
    from p2p_nertz.runtime.watchport import WatcherAddress


def watcher_address(text: str) -> WatcherAddress:
    """``--watcher``: a spectator's endpoint (as :func:`connect_endpoint`) and its key, the
    64 hex digits of its peer id, joined by ``#``: what ``nertz watch`` prints.

    Raises:
        argparse.ArgumentTypeError: no key, a bad key, or a bad endpoint.
    """
    from p2p_nertz.runtime.watchport import (  # (not at the top: `nertz --help` stays fast)
        KEY_SEPARATOR,
        WatcherAddress,
        parse_watcher_key,
    )

    endpoint, sep, key = text.strip().partition(KEY_SEPARATOR)
    if not sep:
        raise argparse.ArgumentTypeError(
            f"a spectator's endpoint needs its key: ENDPOINT#KEY as `nertz watch` prints it "
            f"(e.g. 127.0.0.1:5600#<64 hex digits>), not {text!r}"
        )
    try:
        peer_id = parse_watcher_key(key)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (in {text!r})") from None
    return WatcherAddress(connect_endpoint(endpoint), peer_id)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 3600:  # (NaN fails this too)
        raise argparse.ArgumentTypeError(f"seconds must be above 0 and at most 3600, not {text}")
    return value


def duration(text: str) -> float:
    """A command's ``--timeout``: seconds, above 0 and finite (``nan`` would never end a wait
    and ``inf`` never time out; a negative one is refused deep in trio, with a traceback)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < float("inf"):  # (NaN fails this too)
        raise argparse.ArgumentTypeError(f"seconds must be above 0 and finite, not {text}")
    return value


def add_liveness_arguments(p: argparse.ArgumentParser) -> None:
    """``--suspect-after`` and ``--drop-after``, for every command that runs a peer node.

    The timers are this node's own (DESIGN.md §6), not part of the game spec: members may set
    different ones. A drop still needs a majority's votes, each member voting after its own
    ``--drop-after``; an abandon (one other member left) is this node's alone.
    """
    live = p.add_argument_group(
        "liveness (this node's timers; each member sets its own, the game spec has none)"
    )
    live.add_argument(
        "--suspect-after",
        type=_seconds,
        default=SUSPECT_AFTER,
        metavar="SECONDS",
        help=f"silence before a member is shown as suspected (default {SUSPECT_AFTER:g})",
    )
    live.add_argument(
        "--drop-after",
        type=_seconds,
        default=DROP_AFTER,
        metavar="SECONDS",
        help="silence before this node votes a member out, or, with one other member left, "
        "may abandon the game; not shorter than --suspect-after "
        f"(default {DROP_AFTER:g})",
    )


def liveness_from(args: argparse.Namespace) -> PeerConfig:
    """The node's configuration with the liveness timers of :func:`add_liveness_arguments`
    (:func:`~p2p_nertz.runtime.node.node_config`: a short ``--suspect-after`` shortens the
    beat interval with it).

    Raises:
        NertzError: ``--drop-after`` is shorter than ``--suspect-after``.
    """
    check_liveness(args)
    from p2p_nertz.runtime.node import node_config  # (not at the top: `nertz --help` stays fast)

    return node_config(suspect_after=args.suspect_after, drop_after=args.drop_after)


def check_liveness(args: argparse.Namespace) -> None:
    """Refuse liveness timers of :func:`add_liveness_arguments` that contradict each other,
    without importing the node (``nertz demo`` checks the timers it passes its node
    processes: the whole runtime, trio and ZeroMQ were a third of its own start).

    Raises:
        NertzError: ``--drop-after`` is shorter than ``--suspect-after``.
    """
    if args.drop_after < args.suspect_after:
        raise NertzError(
            f"--drop-after ({args.drop_after:g}) must not be shorter than "
            f"--suspect-after ({args.suspect_after:g})"
        )


def liveness_argv(args: argparse.Namespace) -> list[str]:
    """The liveness options of ``args`` as command-line arguments, for the bot processes a
    command starts: they wait for a silent player as long as the player who started them."""
    return ["--suspect-after", repr(args.suspect_after), "--drop-after", repr(args.drop_after)]


DEALS = ("commit", "shuffle")
"""The values of ``--deal``: :class:`~p2p_nertz.protocol.spec.Deal`'s (not imported here:
``nertz --help`` stays fast; tests/test_cli_deal.py holds the two lists equal)."""


def add_rules_arguments(parser: argparse.ArgumentParser, *, deal: bool = True) -> None:
    """The rules options, and ``--deal`` if ``deal`` (a command whose players are peers: an
    in-process match has no deal to choose); read them back with :func:`rules_from` and
    :func:`deal_from`."""
    group = parser.add_argument_group(
        "rules (nertz rules prints them; defaults: the standard game)"
    )
    goal = group.add_mutually_exclusive_group()
    goal.add_argument(
        "--target", type=rule_number("target"), help="play to this score (default 100)"
    )
    goal.add_argument(
        "--rounds",
        type=rule_number("rounds"),
        help="play exactly this many rounds (Racing Demon)",
    )
    group.add_argument("--draw", type=int, choices=(1, 3), default=3, help="stock turn size")
    group.add_argument(
        "--work-piles", type=int, choices=(4, 5, 6), default=4, help="work piles (river)"
    )
    group.add_argument(
        "--bonus", type=int, choices=(0, 5, 10, 25), default=0, help="bonus for calling Nerts"
    )
    group.add_argument(
        "--card-penalty",
        type=int,
        choices=(1, 2),
        default=2,
        help="points lost per card left in a Nerts (Pounce) pile",
    )
    group.add_argument(
        "--false-call-penalty",
        type=rule_number("false_call_penalty"),
        default=5,
        help="points lost for a false Nerts call",
    )
    group.add_argument(
        "--rotate-alone", action="store_true", help="a stuck player may rotate alone"
    )
    group.add_argument("--pairs", action="store_true", help="two-player teams (seats 0+1, 2+3…)")
    group.add_argument("--jokers", type=int, choices=(0, 1, 2), default=0, help="jokers per deck")
    group.add_argument(
        "--turn-based",
        action="store_true",
        help="one move per turn in seat order instead of all at once (a Nerts call any time)",
    )
    if deal:
        group.add_argument(
            "--deal",
            choices=DEALS,
            default="commit",
            help="how the decks are dealt (default commit). commit: each deck by its "
            "owner's machine, from a secret it committed to, checked by all after the round. "
            "shuffle: every deck shuffled by every player's machine and each card turned up "
            "by the whole table, so no machine, its owner's included, reads a card before it "
            "is turned up; the deal takes about N+1 round trips instead of 2 (N players), and "
            "each card turned up some CPU (docs/shuffle.md)",
        )


def rules_from(args: argparse.Namespace) -> Rules:
    from p2p_nertz.rules import Rules

    goal: dict[str, int | None] = {}
    if args.rounds is not None:
        goal = {"target": None, "rounds": args.rounds}
    elif args.target is not None:
        goal = {"target": args.target}
    return Rules(
        draw=args.draw,
        work_piles=args.work_piles,
        nerts_bonus=args.bonus,
        nerts_card_penalty=args.card_penalty,
        false_call_penalty=args.false_call_penalty,
        rotate_alone=args.rotate_alone,
        pairs=args.pairs,
        jokers=args.jokers,
        turn_based=args.turn_based,
        **goal,
    )


def deal_from(args: argparse.Namespace) -> Deal:
    """The deal ``--deal`` chose (:func:`add_rules_arguments`); commit if the command has no
    ``--deal``."""
    from p2p_nertz.protocol.spec import Deal

    return Deal(getattr(args, "deal", "commit"))


def _per_seat(text: str, players: int, what: str, who: str) -> list[str]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    if len(values) == 1:
        values *= players
    if len(values) != players:
        raise NertzError(f"give one {what} for all {who}s or one per {who} ({players})")
    return values


def bot_choices(
    strategies: str, speeds: str, count: int, who: str = "player"
) -> list[tuple[str, int]]:
    """Each of ``count`` bots' strategy and speed level, from the comma-separated lists of
    the command line (one value for all, or one per bot: ``match``, ``demo``, ``play
    --bots``, whose refusals were "bad speed (1-10): '11'" beside demo's words).

    Raises:
        NertzError: a list of another length, an unknown strategy, a speed out of range.
    """
    chosen = []
    for strategy, speed in zip(
        _per_seat(strategies, count, "strategy", who),
        _per_seat(speeds, count, "speed", who),
        strict=True,
    ):
        if strategy not in STRATEGY_NAMES:  # (the bots' own list: not imported, see defaults)
            known = ", ".join(STRATEGY_NAMES)
            raise NertzError(f"unknown strategy {strategy!r} (known: {known})")
        try:
            level = bot_speed()(speed)
        except argparse.ArgumentTypeError as exc:
            raise NertzError(f"--speed {exc}") from None
        chosen.append((strategy, level))
    return chosen


def players_from(args: argparse.Namespace, strategies_text: str | None = None) -> list[Player]:
    """One player per seat from ``--players``, ``--speed`` and the strategies (``--bots`` of
    ``match``, unless ``strategies_text`` gives them: ``demo --strategy``)."""
    from p2p_nertz.match import Player

    strategies = args.bots if strategies_text is None else strategies_text
    return [
        Player(strategy, level, seat_named("P", seat))
        for seat, (strategy, level) in enumerate(bot_choices(strategies, args.speed, args.players))
    ]


EXIT_FAILED = 1
"""Exit status of a node whose game did not finish (a runtime failure, or it left)."""

EXIT_GONE = 3
"""Exit status of a node that stopped waiting because the table is gone: nobody still in the
game was heard for ``3 × --drop-after`` (docs/protocol.md §9.9; a member voted out while
away, woken after the others went home). It signed nothing for it: run it again on its log
(``nertz resume``) to take the game up if the others are still playing. Not where the game's
end is on its table (the others went home before it was final here): 0, the game is over
(:func:`gone_status`)."""

EXIT_LEFT = 4
"""Exit status of ``nertz resume`` (and ``nertz node``) on the log of a game its player left:
a member that signed a ``leave`` cannot rejoin (docs/protocol.md §9.3), so no node starts."""

EXIT_UNHEARD = 5
"""Exit status of a node that heard nobody at its table for ``--drop-after`` since it started,
so signed nothing new (docs/protocol.md §9.6, *a second machine that hears nobody*): its key may
be playing on another machine whose table does not answer this one, or the others never came.
Not where its log holds the game's end (an old copy of a finished game's log, resumed once
everyone went home): that is status 0, the game over as the log has it (:func:`gone_status`)."""


def gone_status(gone: TableGone) -> int:
    """The exit status of a node that stopped waiting at an empty table: :data:`EXIT_UNHEARD`
    if it never heard anyone, else :data:`EXIT_GONE`; 0 whatever the reason where the game's
    end is on its table (``gone.ended``: only the others' acks are missing): the game is
    over, as the person's table shows it and as ``nertz resume`` of the same log says
    without starting a node (status 0, "as this log's table has it"); a resume has nothing
    left to take up (session 32's old copies exited 5 alone, and a script read a game over
    as "another nertz may be playing as you"; until session 34 a member whose others went
    home before the end was final here exited 3, "the table is gone", its game over)."""
    from p2p_nertz.protocol.gone import GoneReason

    if gone.ended:
        return EXIT_OK
    return EXIT_UNHEARD if gone.reason is GoneReason.UNHEARD else EXIT_GONE


class GoneError(NertzError):
    """A command that stopped because everyone it waits for is gone: it signed nothing for
    it, and exits with :data:`EXIT_GONE`, as a node that found the table gone does (a resume
    whose recovery every member it waits for left unanswered, docs/protocol.md §9.6 step 5)."""

    exit_status = EXIT_GONE


_EVERY_INTERFACE = ("*", "0.0.0.0")


def bind_endpoint(text: str) -> str:
    """``--bind``: ``tcp://ADDRESS:PORT`` or ``ADDRESS:PORT`` (one endpoint syntax for
    ``--bind``, ``--peer`` and ``--watcher``), as ``tcp://ADDRESS:PORT``, with a port ZeroMQ
    will not silently wrap (it binds ``:70000`` as ``:4464``); ADDRESS is an IPv4 address,
    ``localhost`` (127.0.0.1), or ``*`` or ``0.0.0.0`` (every interface).

    >>> bind_endpoint("localhost:5600"), bind_endpoint("tcp://0.0.0.0:0")
    ('tcp://127.0.0.1:5600', 'tcp://0.0.0.0:0')

    Raises:
        argparse.ArgumentTypeError: anything else.
    """
    return _endpoint(text, every_interface=True)


def connect_endpoint(text: str) -> str:
    """``--watcher`` and the endpoints of ``--peer``: as :func:`bind_endpoint`, but a
    concrete address (not ``*`` or ``0.0.0.0``).

    Raises:
        argparse.ArgumentTypeError: anything else.
    """
    return _endpoint(text, every_interface=False)


def _endpoint(text: str, *, every_interface: bool) -> str:
    import ipaddress  # (not at the top: `nertz --help` stays fast)

    address, sep, port = text.strip().removeprefix("tcp://").rpartition(":")
    if not sep or not address or not port.isdigit():
        raise argparse.ArgumentTypeError(
            f"want HOST:PORT or tcp://HOST:PORT (e.g. 127.0.0.1:5600), not {text!r}"
        )
    number = _port(port, "TCP port", lowest=0 if every_interface else 1, within=text)
    if address == "localhost":
        address = "127.0.0.1"
    elif address in _EVERY_INTERFACE:
        if not every_interface:
            raise argparse.ArgumentTypeError(f"{address} is only for --bind, not {text!r}")
    else:
        try:
            ipaddress.IPv4Address(address)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not an IPv4 address or localhost: {address!r} in {text!r}"
            ) from None
    return f"tcp://{address}:{number}"


def say_if_every_interface(command: str, bind: str) -> None:
    """Tell the person, on stderr, that ``bind`` listens on every interface of this machine
    (every network it is on, not only the game's), if it does."""
    address = bind.removeprefix("tcp://").rpartition(":")[0]
    if address in _EVERY_INTERFACE:
        print(
            f"nertz {command}: note: --bind {bind} listens on every interface of this machine",
            file=sys.stderr,
            flush=True,
        )


def default_log_dir() -> Path:
    """Where games' logs go by default (``$XDG_DATA_HOME/p2p-nertz/logs``, or under
    ``$NERTZ_HOME``: the same rule as the key store, cli/keyfile.py)."""
    from cli.places import config_home  # (not at the top: `nertz --help` stays fast)

    return config_home("XDG_DATA_HOME", ".local/share") / "logs"


def default_name() -> str:
    import getpass  # (not at the top: `nertz --help` stays fast)

    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = "player"
    from p2p_nertz.protocol.names import MAX_NAME, name_fault

    name = "".join(c for c in name if c.isprintable())[:MAX_NAME].strip(" ")
    return "player" if name_fault(name) else name


def player_name(text: str) -> str:
    """``text`` if it is a good player's name (p2p_nertz/protocol/names.py: the one rule).

    Raises:
        argparse.ArgumentTypeError: one line saying what a name may be and what is wrong.
    """
    from p2p_nertz.protocol.names import NAME_RULE, name_fault

    fault = name_fault(text)
    if fault is not None:
        raise argparse.ArgumentTypeError(f"{NAME_RULE} ({fault}), not {text!r}")
    return text


def host_port(text: str) -> tuple[str, int]:
    import socket  # (not at the top: `nertz --help` stays fast)

    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"want HOST:PORT (IPv4 address and port), not {text!r}")
    number = _port(port, "TCP port", lowest=1, within=text)
    try:
        socket.inet_aton(host)
    except OSError:
        raise argparse.ArgumentTypeError(f"not an IPv4 address: {host!r}") from None
    return host, number


def ipv4(text: str) -> str:
    import socket  # (not at the top: `nertz --help` stays fast)

    try:
        socket.inet_aton(text)
    except OSError:
        raise argparse.ArgumentTypeError(f"not an IPv4 address: {text!r}") from None
    return text


def lan_address(text: str) -> str:
    """An IPv4 address this machine is reached at: it is announced to the others."""
    from p2p_nertz.lobby.messages import check_endpoint  # (the lobby's rule for an address)

    address = ipv4(text)
    try:
        check_endpoint(f"tcp://{address}:1")
    except ValueError:
        why = " (it means every interface of this machine)" if address == "0.0.0.0" else ""
        raise argparse.ArgumentTypeError(
            f"{text} is not an address the others can reach{why}: give this machine's LAN address"
        ) from None
    return address


def _port(text: str, kind: str, *, lowest: int, within: str | None = None) -> int:
    """The one check of a port number given on a command line: ASCII digits, from
    ``lowest`` to 65535. ``lowest`` is 0 for a port this machine binds (0: any free one, the
    system picks it), 1 for a port to reach or to agree on with others (a beacon's: port 0
    names no port there). ``within``: the argument the port is part of, for the message.

    Raises:
        argparse.ArgumentTypeError: anything else (a sign, a space, other digits, too big).
    """
    if not (text.isascii() and text.isdigit()) or not lowest <= int(text) <= 65535:
        where = f" in {within!r}" if within is not None else ""
        shown = text if text.isdigit() else repr(text)
        raise argparse.ArgumentTypeError(f"{shown} is not a {kind} ({lowest}-65535){where}")
    return int(text)


def port_number(text: str) -> int:
    """A TCP port this machine listens on (``host --port``): 0 for any free one."""
    return _port(text, "TCP port", lowest=0)


def beacon_port(text: str) -> int:
    """``--beacon-port``: the UDP port the host's beacons go to and the others listen on; both
    sides name the same port, so 0 (any) is not one."""
    return _port(text, "UDP port", lowest=1)


class PortHold:
    """A free TCP port of ``address``, kept for the game's node until it binds it.

    The lobby says a player's game endpoint before the game exists, so that node cannot bind
    port 0 and say the port it got (as ``nertz play --bots``'s nodes do, cli/bots.py). A port
    picked and let go stayed free for anyone for as long as the lobby lasted: another
    program's bind, or any outgoing connection's local port, could take it, and the game then
    failed to start. This holds it bound (never listening) from the pick on; no bind of port 0
    and no outgoing connection takes a bound port. :meth:`release` it just before the node
    binds.

    Raises:
        NertzError: nothing can be bound on ``address``.
    """

    def __init__(self, address: str) -> None:
        import socket  # (not at the top: `nertz --help` stays fast)

        self._socket: socket.socket | None = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self._socket.bind((address, 0))
        except OSError as exc:
            self.release()
            raise NertzError(f"cannot bind on {address}: {exc.strerror}") from None
        self.port: int = self._socket.getsockname()[1]

    def release(self) -> None:
        """Let the port go (the node binds it next); idempotent."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None


def error_leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """The exceptions inside ``group`` and its nested groups, in order."""
    """The exceptions a (nested) exception group holds, in order: trio wraps what a task
    raised with what it cancelled."""
    out: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out += error_leaves(exc)
        else:
            out.append(exc)
    return out


def error_text(exc: BaseException) -> str:
    """The words of an expected failure for a command's one line: an :class:`OSError` as the
    file it names and what is wrong (``'games/x.log': Is a directory``), not as Python writes
    it (``[Errno 21] Is a directory: 'games/x.log'``)."""
    if isinstance(exc, OSError) and exc.strerror:
        name = exc.filename
        if isinstance(name, bytes):
            name = os.fsdecode(name)
        return f"{str(name)!r}: {exc.strerror}" if name is not None else exc.strerror
    return str(exc)


def expected_errors(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """The runtime's expected failures in ``group`` (:class:`NertzError`, :class:`OSError`):
    a command says the first in one line. Anything else is a bug, and ``group`` is raised
    again (with its traceback). A :class:`BrokenPipeError` among them (the reader of our
    stdout went: ``nertz host … | head -1``) is raised alone, for ``nertz`` to end quietly
    as at a closed stdout anywhere else.
    """
    errors = error_leaves(group)
    if not all(isinstance(e, NertzError | OSError) for e in errors):
        raise group
    closed = next((e for e in errors if isinstance(e, BrokenPipeError)), None)
    if closed is not None:
        raise closed  # (our stdout was closed, `| head -1`: no error, cli/main.py ends quietly)
    return errors


#: ``--web-bind``'s default, this very object when the option is not given
#: (:func:`check_web_options` tells the two apart: a value given is a new tuple).
WEB_BIND_DEFAULT: Final = ("127.0.0.1", 0)


def check_web_options(args: argparse.Namespace) -> None:
    """``--no-open`` and ``--web-bind`` go with ``--web`` (:func:`add_web_arguments`), and
    ``--web`` not with ``replay --text``: given without it they were ignored, the command run
    at the terminal, the person's choice of page dropped without a word (session 43).

    Raises:
        NertzError: one of them given without ``--web``, or ``--web`` with ``--text``.
    """
    if getattr(args, "text", False) and args.web:
        raise NertzError("--text prints the events and exits; --web serves a page: give one")
    if args.web:
        return
    given = [
        flag
        for flag, on in (
            ("--no-open", args.no_open),
            ("--web-bind", args.web_bind is not WEB_BIND_DEFAULT),
        )
        if on
    ]
    if given:
        one = len(given) == 1
        raise NertzError(
            f"{' and '.join(given)} {'is' if one else 'are'} for the page (--web), which is "
            f"not asked for: add --web, or leave {'it' if one else 'them'} out"
        )


def add_web_arguments(
    p: argparse.ArgumentParser,
    what: str = "play in a browser page served by this peer (its URL is printed on a line of "
    "its own), instead of the terminal",
) -> None:
    """``--web``, ``--no-open`` and ``--web-bind``: the table in a browser (issue 17);
    ``what``: the help of ``--web``."""
    web = p.add_argument_group("the table in a browser")
    web.add_argument("--web", action="store_true", help=what)
    web.add_argument(
        "--no-open", action="store_true", help="with --web: print the URL, open no browser"
    )
    web.add_argument(
        "--web-bind",
        type=web_bind,
        default=WEB_BIND_DEFAULT,
        metavar="HOST:PORT",
        help="with --web: where the page is served (default 127.0.0.1 and a free port: this "
        "machine only). Another address exposes it on purpose: anyone on that network who "
        "learns the URL (it holds a secret token) can see it and act in it",
    )


def web_bind(text: str) -> tuple[str, int]:
    """``HOST:PORT`` for ``--web-bind`` (port 0: a free one)."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"want HOST:PORT (IPv4 address and port), not {text!r}")
    number = _port(port, "TCP port", lowest=0, within=text)
    return ipv4(host), number


def page_address_usable(args: argparse.Namespace) -> None:
    """``--web``'s page address, tried before anything is made or started: a port in use
    (or an address not of this machine) was said after the game's directory, its spec and
    its bots were made and their logs begun, status 1 (session 43); ``nertz resume --web``'s
    after its node was made.

    Raises:
        NertzError: the page cannot be served there.
    """
    if args.web:
        from p2p_nertz.web.server import try_address

        try_address(*args.web_bind)
