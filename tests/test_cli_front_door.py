"""What a person reads at the command line's front door (session 28): every refusal of a
number, a place, a topic or a word in the project's words, naming what is wanted, never
argparse's raw English ("invalid int value", "expected one argument", "unrecognized
arguments", "File exists"). Real ``nertz`` processes.
"""

from __future__ import annotations

import locale
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import json_lines_until, nertz, node_game, one_error_line, stop_all

from p2p_nertz.rules import Rules

#: argparse's own sentences: none may reach a person.
RAW = re.compile(
    r"invalid \w+ value|invalid choice|expected (one|at least one|\d+) argument|"
    r"unrecognized arguments|not allowed with argument|the following arguments are required|"
    r"could match|ignored explicit argument|File exists"
)


def _refused(done: object, *words: str) -> str:
    line = one_error_line(done, *words)  # type: ignore[arg-type]
    assert RAW.search(line) is None, line
    return line


@pytest.mark.parametrize(
    ("argv", "option", "takes"),
    [
        (["node", "--speed", "0.3"], "--speed", "from 1 to 10"),
        (["bot", "--speed", ""], "--speed", "from 1 to 10"),
        (["host", "--bot-speed", "1.5"], "--bot-speed", "from 1 to 10"),
        (["host", "--capacity", "9"], "--capacity", "from 1 to 8"),
        (["host", "--bots", "-1"], "--bots", "from 0 to 7"),
        (["host", "--players", "1e309"], "--players", "from 1 to 8"),
        (["demo", "--players", "2.5"], "--players", "0 or more"),
        (["match", "--false-call-penalty", "0.5"], "--false-call-penalty", "from 0 to 100"),
        (["match", "--false-call-penalty", "101"], "--false-call-penalty", "from 0 to 100"),
        (["match", "--target", "1" + "0" * 30], "--target", "from 1 to 10000"),
        (["match", "--rounds", "nan"], "--rounds", "from 1 to 1000"),
    ],
)
def test_a_wrong_number_says_what_the_option_takes(
    tmp_path: Path, argv: list[str], option: str, takes: str
) -> None:
    done = nertz(*argv, home=tmp_path)
    line = _refused(done, f"nertz {argv[0]}: error: {option} takes a whole number", takes)
    assert f"{argv[0]} --help" in line
    assert done.returncode == 2


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["demo", "--bots"], ["nertz demo: error: --bots needs a value"]),
        (["match", "--draw", "2"], ["--draw takes 1 or 3, not 2"]),
        (["match", "--target", "5", "--rounds", "3"], ["cannot be given together"]),
        (["demo", "--b", "2"], ["--b is the start of more than one option", "--bots"]),
        (["match", "--rotate-alone=yes"], ["--rotate-alone takes no value"]),
        (["demo", "--bogus"], ["nertz demo: error: it does not take --bogus", "demo --help"]),
        (["replay", "--speed", "2", "x.log"], ["nertz replay: error:", "--speed"]),
        (["frobnicate"], ["no command 'frobnicate' (the commands are demo", "match"]),
        (["node"], ["nertz node: error: required and not given: --key"]),
        ([], ["name a COMMAND", "demo", "replay"]),
    ],
)
def test_argparses_own_sentences_are_said_in_the_projects_words(
    tmp_path: Path, argv: list[str], words: list[str]
) -> None:
    done = nertz(*argv, home=tmp_path)
    _refused(done, *words)
    assert done.returncode == 2


@pytest.mark.parametrize("kind", ["device", "file"])
def test_demo_dir_that_is_not_a_directory_says_so(tmp_path: Path, kind: str) -> None:
    place = Path("/dev/null") if kind == "device" else tmp_path / "a-file"
    if kind == "file":
        place.write_bytes(b"x")
    done = nertz("demo", "--bots", "2", "--dir", str(place), home=tmp_path, cwd=tmp_path)
    _refused(done, "nertz demo: error:", "not a directory", "--dir")
    assert done.returncode == 2
    assert kind == "device" or place.read_bytes() == b"x"


def test_demo_dir_holding_another_games_spec_is_left_alone(tmp_path: Path) -> None:
    place = tmp_path / "busy"
    place.mkdir()
    (place / "game.spec").write_bytes(b"another game's spec")
    done = nertz("demo", "--bots", "2", "--dir", str(place), home=tmp_path, cwd=tmp_path)
    _refused(done, "already holds another game")
    assert (place / "game.spec").read_bytes() == b"another game's spec"
    assert sorted(p.name for p in place.iterdir()) == ["game.spec"]


def test_a_quoted_tilde_is_the_home_directory_not_a_directory_named_tilde(
    tmp_path: Path,
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (home / "taken").write_bytes(b"x")  # (refused before any game starts: no processes)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "NERTZ_HOME": str(tmp_path / "nh")}
    done = nertz("demo", "--bots", "2", "--dir=~/taken", env=env, cwd=work)
    _refused(done, repr(str(home / "taken")), "not a directory")
    assert list(work.iterdir()) == []


def test_rules_topic_prints_its_section_and_a_wrong_one_lists_the_topics(
    tmp_path: Path,
) -> None:
    whole = nertz("rules").stdout
    lake = nertz("rules", "LAKE")
    assert lake.returncode == 0
    assert lake.stdout.startswith("### The lake\n") and lake.stdout in whole
    assert lake.stdout.count("\n### ") == 0
    both = nertz("rules", "nerts").stdout
    assert [h for h in both.splitlines() if h.startswith("#")] == [
        "### The Nerts pile",
        "### Calling Nerts",
    ]
    done = nertz("rules", "x")
    line = _refused(done, "nertz rules: error: the rule book has no topic 'x'")
    for topic in ("the lake", "scoring a round", "variants"):
        assert topic in line
    assert done.returncode == 2 and done.stdout == ""


def test_resume_of_a_log_a_live_node_writes_names_the_node_not_its_address(
    tmp_path: Path,
) -> None:
    """The live node holds the game's address and the log's lock: the lock is asked first,
    and said (on main the bind was tried first: "Address already in use")."""
    _, procs, logs = node_game(
        tmp_path, ["Ann", "Bob"], Rules(target=10_000), keys=b"w28-live", salt=b"w28-live",
        args=lambda n: ["--speed", "1", "--progress"],
    )  # fmt: skip
    try:
        json_lines_until(procs[0], "lake")  # (playing: its log and its address are held)
        done = nertz("resume", "--key", str(tmp_path / "0.key"), str(logs[0]), home=tmp_path)
        line = _refused(done, "nertz resume: error:", "in use", f"pid {procs[0].pid}")
        assert "Address already in use" not in line
        assert procs[0].poll() is None  # (the live node plays on)
    finally:
        stop_all(procs)


def test_a_terminal_that_is_not_utf8_gets_plain_letters_not_a_traceback(
    tmp_path: Path,
) -> None:
    env = dict(os.environ, PYTHONIOENCODING="ascii")
    whole = nertz("rules", env=env)
    assert whole.returncode == 0 and "Traceback" not in whole.stderr, whole.stderr
    assert whole.stdout.isascii()
    assert "Every card left in a Nerts pile\n   is -2" in whole.stdout  # (the book's "−2")
    assert "(also Nerts, Pounce" in whole.stdout
    done = nertz("rules", "nowhere", env=env)
    _refused(done, "nertz rules: error: the rule book has no topic 'nowhere'")


def test_the_tables_suits_follow_the_terminals_codeset_not_pythons_utf8_mode() -> None:
    """In a C locale Python writes UTF-8 (UTF-8 mode) but curses writes the C library's
    codeset, ASCII: the suit symbols were dropped from the cards ("A  10A")."""
    probe = "import argparse; from cli.terminal import symbols_ok; " + (
        "print(symbols_ok(argparse.Namespace(ascii=False)))"
    )
    try:
        locale.setlocale(locale.LC_CTYPE, "C.UTF-8")
    except locale.Error:
        pytest.skip("this system has no C.UTF-8 locale to compare with")
    finally:
        locale.setlocale(locale.LC_CTYPE, "")
    said = {}
    for where in ("C", "C.UTF-8"):
        env = dict(os.environ, LC_ALL=where)
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True,
            timeout=60, cwd=Path(__file__).parent.parent,
        )  # fmt: skip
        said[where] = done.stdout.strip()
    assert said == {"C": "False", "C.UTF-8": "True"}
