"""The ``nertz`` command: entry points only; the game logic lives in :mod:`p2p_nertz`.

Every subcommand answers bad input with one clear line on stderr and a non-zero exit (2 for a
usage error), never a traceback.

``nertz --help`` (no command) is answered from :data:`COMMANDS` without importing the
commands, so that it starts at once: trio, zmq, the bots and the engine are imported only by
the commands that need them. A command line is parsed by the parsers of cli/parsers.py,
which import none of that: a wrong argument is refused before the command's own module is
imported, and the module of the command it names is imported only to run it.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from cli.args import EXIT_OK, EXIT_USAGE, Parser, error_line
from cli.commands import COMMANDS
from p2p_nertz import __version__
from p2p_nertz.errors import NertzError
from p2p_nertz.signals import interrupted_status, let_go_of_unread_streams, term_as_ctrl_c

__all__ = ["COMMANDS", "build_parser", "main"]


class _Version(argparse.Action):
    """``--version``: ours and the core's build (interpreted or compiled: p2p_nertz/build.py),
    then libzmq's line (runtime/inbatch.py: zmq imported only here)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from p2p_nertz.build import describe
        from p2p_nertz.runtime.inbatch import protection

        print(f"{parser.prog} {__version__} (core {describe()})\n{protection()}")
        parser.exit()


def _top_parser() -> tuple[Parser, argparse._SubParsersAction[Parser]]:
    """The parser of ``nertz`` itself, with its subparsers to be filled."""
    parser = Parser(
        prog="nertz",
        description=(
            "p2p-nertz: Nertz (Nerts, Pounce, Racing Demon) peer to peer, with no server and "
            "signed, auditable game logs."
        ),
    )
    parser.add_argument(
        "--version",
        action=_Version,
        nargs=0,
        help="show the version, and libzmq's and whether it guards against the other members",
    )
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="log more on stderr: -v what happens (info), -vv everything (debug)",
    )
    loudness.add_argument("-q", "--quiet", action="store_true", help="log only errors on stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    return parser, sub


def _light_parser() -> Parser:
    """``nertz`` with every command listed (:data:`COMMANDS`) but none imported: for
    ``nertz --help``, ``--version`` and the errors of a command line that names no command."""
    parser, sub = _top_parser()
    for name, help_text in COMMANDS:
        sub.add_parser(name, help=help_text)
    return parser


def _names_a_command(argv: Sequence[str]) -> bool:
    """Whether ``argv`` names a command (the options of ``nertz`` itself take no values)."""
    return any(not arg.startswith("-") for arg in argv)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``nertz`` and its subcommands: every one, or only those added
    with ``command`` (cli/parsers.py: no command's own module is imported)."""
    from cli.parsers import COMMAND_PARSERS

    parser, sub = _top_parser()
    sub.required = True
    for add, names in COMMAND_PARSERS:
        if command is None or command in names:
            add(sub)
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names, if it is one (else ``None``: every command's parser is
    built, and says which there are)."""
    word = next((arg for arg in argv if not arg.startswith("-")), None)
    return word if any(word == name for name, _ in COMMANDS) else None


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of ``command`` among ``parser``'s subcommands."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found: argparse.ArgumentParser = sub.choices[command]
    return found


def _configure_logging(verbose: int, quiet: bool) -> None:
    """Log records of ``p2p_nertz`` go to stderr: warnings by default, more with ``-v``."""
    if quiet:
        level = logging.ERROR
    else:
        level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbose, 2)]
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("nertz: %(levelname)s: %(name)s: %(message)s"))
    root = logging.getLogger("p2p_nertz")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``nertz`` command line; returns the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    before = hangup = None
    try:
        # (inside the try: a Ctrl-C in the instants these take is answered in words too —
        # session 43: one came inside ``term_as_ctrl_c``'s ``getsignal`` at a load of 40 and
        # printed a traceback)
        _closed_streams_to_devnull()
        _plain_where_not_unicode()
        # (first: a SIGTERM while the command's modules are imported or its arguments read is
        # answered as one later, "interrupted" and 143, not by the process dying mid-import)
        before = term_as_ctrl_c()
        hangup = _hangup_as_term()  # (apart: one interrupted here leaves SIGTERM put back)
        return _run(words)
    except KeyboardInterrupt:
        # (a Ctrl-C while the command's modules are imported or its arguments read: on a
        # loaded machine that takes a second, long enough for a person to change their mind)
        let_go_of_unread_streams()
        print(f"nertz {_command(words) or ''}: interrupted".replace(" :", ":"), file=sys.stderr)
        return interrupted_status()
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)
        if hangup is not None:
            signal.signal(signal.SIGHUP, hangup)


def _run(words: list[str]) -> int:
    """Parse ``words`` and run the command they name (:func:`main`'s body)."""
    if not _names_a_command(words):
        light = _light_parser()
        _, unknown = light.parse_known_args(words)  # --help and --version exit here
        if unknown:
            light.error(f"unrecognized arguments: {' '.join(unknown)}")
        light.error(f"name a COMMAND: nertz COMMAND …, one of {', '.join(n for n, _ in COMMANDS)}")
    parser = build_parser(_command(words))
    args, unknown = parser.parse_known_args(words)
    if unknown:  # (said by the command's parser: its name and its --help, not nertz's)
        _subparser(parser, args.command).error(f"unrecognized arguments: {' '.join(unknown)}")
    _configure_logging(args.verbose, args.quiet)
    try:
        status: int = args.func(args)
    except NertzError as exc:
        print(error_line(f"nertz {args.command}: error: {exc}"), file=sys.stderr)
        status = getattr(exc, "exit_status", EXIT_USAGE)  # (GoneError's: the others are gone)
        return int(status)
    except KeyboardInterrupt:
        # (the streams nobody reads let go first: a Ctrl-C's "interrupted" written to a full
        # pipe blocked the command for ever, p2p_nertz/signals.py)
        let_go_of_unread_streams()
        print(f"nertz {args.command}: interrupted", file=sys.stderr)
        return interrupted_status()
    except BaseExceptionGroup as group:
        # Ctrl-C inside trio comes wrapped with whatever it cancelled (the lobby's tasks): one
        # line all the same, not the group's traceback.
        if group.subgroup(KeyboardInterrupt) is None:
            raise
        let_go_of_unread_streams()
        print(f"nertz {args.command}: interrupted", file=sys.stderr)
        return interrupted_status()
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_OK
    except OSError as exc:
        # A file the command named that the system refuses in a way its own checks did not
        # foresee (a name too long for the file system, a directory on the way it may not
        # search): the system's words and the file, in one line.
        where = f"cannot use {str(exc.filename)!r}: " if exc.filename is not None else ""
        print(error_line(f"nertz {args.command}: error: {where}{exc.strerror or exc}"),
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    return status


def _closed_streams_to_devnull() -> None:
    """Give a standard stream that was closed when ``nertz`` started (``nertz play <&-``,
    ``nertz rules >&-``) the null device, as if it had been redirected there.

    Python leaves ``sys.stdin`` (``stdout``, ``stderr``) ``None`` for a closed descriptor, and
    the command's first ``isatty()`` or ``print`` said a traceback. Worse, the descriptor was
    free: the first file the command opened (a game's log) would take number 1, and whatever
    wrote to "standard output" (a node process started with it) would write into the log.
    """
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
        except OSError:
            devnull = os.open(os.devnull, os.O_RDWR)  # (the lowest free number: fd itself)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, "r" if fd == 0 else "w", closefd=False))  # noqa: SIM115


def _plain_where_not_unicode() -> None:
    """Write what stdout and stderr cannot encode in plain letters (cli/plain.py) on a
    terminal that is not UTF-8, instead of ending with a traceback at the first dash of
    ``nertz rules`` (UnicodeEncodeError)."""
    from cli.plain import PLAIN_ERRORS, is_unicode

    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if is_unicode(getattr(stream, "encoding", None)) or reconfigure is None:
            continue
        with contextlib.suppress(ValueError, OSError):
            reconfigure(errors=PLAIN_ERRORS)


def _quiet_stdout() -> None:
    """After the reader of our stdout went (``nertz … | head -1``): what is left in its buffer
    goes nowhere, so that Python's flush at exit says nothing ("Exception ignored … Broken
    pipe") and exits 0, as a command whose reader stopped reading should."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # (no stdout file to replace: nothing will be flushed to it either)


def _hangup_as_term() -> signal._HANDLER | None:
    """Make SIGHUP (the terminal went away: its window closed, its tmux session killed) do
    what SIGTERM does: a game's node signs its ``leave`` and goes, a command stops its bots;
    return the handler it replaced (``None``: not replaced, off the main thread, or SIGHUP
    ignored, as ``nohup`` starts a command: it plays on).

    Without this the process died at once on SIGHUP and the others waited the drop timer for
    it (a newcomer closed the terminal of ``nertz play``). The standard streams that were the
    terminal are taken off it first (:func:`_off_the_terminal`): what is written after (the
    table's last drawing, the score) goes nowhere instead of failing.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
        return None
    # (asked now: a terminal that hung up no longer says it is one)
    terminal = [fd for fd in (0, 1, 2) if os.isatty(fd)]

    def as_term(signum: int, frame: FrameType | None) -> None:
        _off_the_terminal(terminal)
        signal.raise_signal(signal.SIGTERM)  # (whoever handles SIGTERM now: a node, a table…)

    return signal.signal(signal.SIGHUP, as_term)


_HUNG_UP: list[int] = []  # (the write end of the pipe standard input reads after a hang-up)


def _off_the_terminal(terminal: list[int]) -> None:
    """Point the standard streams that were a terminal (the descriptors ``terminal``) and
    no longer are one (it hung up) elsewhere: output to the null device (a hung-up terminal
    refuses every write), input to a pipe nothing writes to (a hung-up terminal is always
    "readable", at its end: the table's keyboard would spin on it while the node leaves).
    A SIGHUP sent while the terminal is still there (``kill -HUP``) leaves it as it is."""
    for fd in terminal:
        try:
            if os.isatty(fd):
                continue
            if fd == 0:
                read_end, write_end = os.pipe()
                _HUNG_UP.append(write_end)  # (kept open: the pipe never ends)
            else:
                read_end = os.open(os.devnull, os.O_WRONLY)
            os.dup2(read_end, fd)
            os.close(read_end)
        except OSError:
            continue  # (nothing better to do: the stream stays as it was)


if __name__ == "__main__":
    sys.exit(main())
