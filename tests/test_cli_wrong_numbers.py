"""Numbers a person can get wrong on the command line: a ``--timeout`` of ``nan``, ``inf``, 0
or below, and a demo of 0 players. Each is one line and exit status 2 at once, before anything
starts: not a traceback from deep in trio (a negative wait), not a command that never ends (a
``nan`` or ``inf`` timeout), not a four-player demo started for ``--bots 0``. Real ``nertz``
processes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_helpers import nertz, one_error_line

ROOT = Path(__file__).resolve().parent.parent

#: Every command with a --timeout, given one (127.0.0.1:1: nothing is reached before it).
TIMEOUTS = {
    "demo": ["demo", "--timeout"],
    "games": ["games", "--discover", "127.0.0.1", "--timeout"],
    "join": ["join", "--bot", "greedy", "--peer", "127.0.0.1:1", "--timeout"],
    "bot": ["bot", "--peer", "127.0.0.1:1", "--timeout"],
}


def _nertz(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return nertz(*argv, cwd=tmp_path, env={"NERTZ_HOME": str(tmp_path)})


@pytest.mark.parametrize("command", TIMEOUTS)
def test_a_timeout_that_is_not_a_finite_positive_number_is_a_usage_error(
    tmp_path: Path, command: str
) -> None:
    for value in ("nan", "inf", "0", "-1"):
        done = _nertz(tmp_path, *TIMEOUTS[command], value)
        line = one_error_line(done, "--timeout", value)
        assert done.returncode == 2, line
    assert list(tmp_path.iterdir()) == []  # (nothing was started: no key, no log)


@pytest.mark.parametrize("option", ["--bots", "--players"])
def test_a_demo_of_no_players_is_refused_not_played_with_four(tmp_path: Path, option: str) -> None:
    done = _nertz(tmp_path, "demo", option, "0")
    assert done.returncode == 2 and done.stdout == "", done.stdout
    one_error_line(done, "2 to 8 players", "not 0")
    assert list(tmp_path.iterdir()) == []


def test_a_demo_of_a_digit_that_is_not_a_number_says_what_bots_takes(tmp_path: Path) -> None:
    # ("²" is a Unicode digit that int() refuses: not argparse's word for a helper's name.)
    done = _nertz(tmp_path, "demo", "--bots", "²")
    line = one_error_line(done, "--bots is a number of bots", "'²'")
    assert done.returncode == 2 and "_bot_count" not in line, line
    assert list(tmp_path.iterdir()) == []


#: Every port argument of every command, PORT standing for the port given, and whether 0 is
#: a port there: 0 asks for any free one where this machine binds (``host --port``,
#: ``--bind``, ``--web-bind``), and names no port where others are reached or where the two
#: sides of a beacon must agree (``--beacon-port``, ``--peer``, ``--watcher``).
_KEY = "ab" * 32
PORTS: dict[str, tuple[list[str], bool]] = {
    "games --beacon-port": (["games", "--discover", "127.0.0.1", "--beacon-port", "PORT"], False),
    "host --beacon-port": (["host", "--bot", "greedy", "--beacon-port", "PORT"], False),
    "join --beacon-port": (["join", "--bot", "greedy", "--beacon-port", "PORT"], False),
    "bot --beacon-port": (["bot", "--beacon-port", "PORT"], False),
    "play --beacon-port": (["play", "--beacon-port", "PORT"], False),
    "host --port": (["host", "--bot", "greedy", "--port", "PORT"], True),
    "join --peer": (["join", "--bot", "greedy", "--peer", "127.0.0.1:PORT"], False),
    "bot --peer": (["bot", "--peer", "127.0.0.1:PORT"], False),
    "play --peer": (["play", "--peer", "127.0.0.1:PORT"], False),
    "host --watcher": (["host", "--bot", "greedy", "--watcher", f"127.0.0.1:PORT#{_KEY}"], False),
    "watch --bind": (["watch", "--spec", "game.spec", "--bind", "127.0.0.1:PORT"], True),
    "play --web-bind": (["play", "--web", "--web-bind", "127.0.0.1:PORT"], True),
    "replay --web-bind": (["replay", "x.log", "--web-bind", "127.0.0.1:PORT"], True),
}


@pytest.mark.parametrize("argument", PORTS)
def test_every_port_argument_refuses_what_is_not_a_port_there(
    tmp_path: Path, argument: str
) -> None:
    argv, zero_is_a_port = PORTS[argument]
    # (Fullwidth digits are digits to str.isdigit and int(): "８０" was taken as port 80.)
    bad = ["-1", "８０", "65536" if zero_is_a_port else "0"]
    for value in bad:
        done = _nertz(tmp_path, *(word.replace("PORT", value) for word in argv))
        line = one_error_line(done, argument.split()[1], value)
        assert done.returncode == 2, line
    assert list(tmp_path.iterdir()) == []  # (nothing was started: no key, no log)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--speed", "11"], ["--speed takes a whole number from 1 to 10", "not '11'"]),
        (["--strategy", "foo"], ["unknown strategy 'foo'", "greedy, lookahead"]),
        (["--speed", "1,2,3"], ["one speed for all bots or one per bot (2)"]),
    ],
)
def test_play_against_bots_refuses_their_speed_and_strategy_in_the_demos_words(
    tmp_path: Path, argv: list[str], words: list[str]
) -> None:
    # `play --bots 2 --speed 11` said "bad speed (1-10): '11'", beside demo's and match's
    # "--speed takes a whole number from 1 to 10, not '11'" for the same mistake.
    done = _nertz(tmp_path, "play", "--bots", "2", *argv)
    line = one_error_line(done, *words)
    assert done.returncode == 2, line
    assert list(tmp_path.iterdir()) == []
