"""``nertz --help`` and every command's options (issue 15, "The first game").

``nertz --help`` lists the commands without importing them (fast: no trio, zmq, bots or
engine); the list matches the real parsers; every option of every command says what it does;
an unknown option is named as such.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from cli.main import COMMANDS, build_parser
from tests.cli_helpers import nertz as run_nertz

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("trio", "zmq", "p2p_nertz.bots", "p2p_nertz.rules", "p2p_nertz.protocol", "curses")


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


def nertz(*args: str) -> subprocess.CompletedProcess[str]:
    return run_nertz(*args, cwd=ROOT)


def test_help_imports_none_of_the_game() -> None:
    probe = (
        "import sys\n"
        "from cli.main import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.strip().endswith("[]"), done.stdout
    assert "COMMAND" in done.stdout and "play" in done.stdout


def test_a_command_imports_its_own_module_alone() -> None:
    # ``nertz node`` (every bot process of a game) starts without the terminal table, the
    # browser table's server or the other commands.
    probe = (
        "import sys\n"
        "from cli.main import main\n"
        "try:\n"
        "    main(['-v', 'node', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('cli.', 'hypercorn'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    loaded = done.stdout.strip().splitlines()[-1]
    assert "'cli.node_cmd'" in loaded and "--bot" in done.stdout
    for other in ("cli.play", "cli.demo", "cli.lobby_cmd", "cli.web_cmd", "hypercorn"):
        assert f"'{other}" not in loaded, loaded


def test_the_light_command_list_is_the_real_one() -> None:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            real = [(c.dest, c.help) for c in action._choices_actions]
            assert real == list(COMMANDS)
            return
    raise AssertionError("no subcommands")


def test_every_option_of_every_command_has_help_text() -> None:
    missing = []
    for name, sub in _commands(build_parser()).items():
        for action in sub._actions:
            if action.option_strings and not action.help:
                missing.append(f"{name} {'/'.join(action.option_strings)}")
    assert missing == []


def test_an_unknown_option_says_so() -> None:
    for args in (["--frobnicate"], ["-x"], ["--frobnicate", "play"], ["play", "--frobnicate"]):
        done = nertz(*args)
        assert done.returncode == 2
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "does not take" in lines[0], (args, done.stderr)
        assert "--frobnicate" in lines[0] or "-x" in lines[0]
    done = nertz()
    assert done.returncode == 2 and "COMMAND" in done.stderr


def test_demo_bots_is_a_number_of_bots_as_in_play() -> None:
    parser = build_parser()
    assert parser.parse_args(["demo", "--bots", "3"]).bots == 3
    assert parser.parse_args(["play", "--bots", "3"]).bots == 3
    done = nertz("demo", "--bots", "greedy")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--strategy greedy" in lines[0], done.stderr


def test_the_play_command_says_it_plays_in_a_browser_too() -> None:
    # A newcomer reading `nertz --help` for the browser table found "play at the terminal".
    (summary,) = [text for name, text in COMMANDS if name == "play"]
    assert summary.startswith("play at the terminal or in a browser (--web): "), summary
