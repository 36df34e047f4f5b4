"""Errors a person can act on (issue 15): one line, in words, naming what to fix.

Each bad input is given to the real command (a subprocess); the answer is one line on stderr
with exit status 2, that names the input and says what is wrong, and no traceback.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from cli_helpers import nertz, one_error_line

from cli.keyfile import write_key
from cli.main import build_parser
from p2p_nertz.logfile.format import NOT_A_LOG
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules

ROOT = Path(__file__).resolve().parent.parent


def one_line(*args: str, home: Path) -> str:
    done = nertz(*args, cwd=ROOT, env={"NERTZ_HOME": str(home), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2, (done.returncode, done.stderr)
    return one_error_line(done)


@pytest.fixture
def game(tmp_path: Path) -> tuple[Path, Path]:
    """A key file and the spec of a two-player game it is in."""
    me, other = (Identity.generate(derive_seed(b"test-words", n)) for n in range(2))
    key = tmp_path / "me.key"
    write_key(key, me)
    spec = GameSpec.create([(me.peer_id, "me"), (other.peer_id, "other")], Rules(), b"w" * 16)
    path = tmp_path / "game.spec"
    path.write_bytes(spec.to_wire())
    return key, path


def test_one_endpoint_syntax_with_or_without_tcp_and_localhost() -> None:
    parser = build_parser()
    args = parser.parse_args(["watch", "--spec", "s", "--bind", "127.0.0.1:5600"])
    assert args.bind == "tcp://127.0.0.1:5600"
    node = ["node", "--key", "k", "--spec", "s", "--log", "l", "--bind", "localhost:0"]
    key = Identity.generate(derive_seed(b"test-words-spy")).peer_id
    args = parser.parse_args([*node, "--watcher", f"localhost:5600#{key.hex()}"])
    assert args.bind == "tcp://127.0.0.1:0"
    assert [(w.endpoint, w.key) for w in args.watcher] == [("tcp://127.0.0.1:5600", key)]


def test_a_bad_endpoint_says_which_forms_work(tmp_path: Path) -> None:
    line = one_line("watch", "--spec", "s", "--bind", "example:5600", home=tmp_path)
    assert "'example'" in line and "localhost" in line
    line = one_line("watch", "--spec", "s", "--bind", "5600", home=tmp_path)
    assert "HOST:PORT" in line


def test_a_bind_error_names_the_address(tmp_path: Path, game: tuple[Path, Path]) -> None:
    key, spec = game
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_line(
            "node", "--key", str(key), "--spec", str(spec), "--log", str(tmp_path / "x.log"),
            "--bind", f"127.0.0.1:{port}", "--peer", "1=127.0.0.1:1", home=tmp_path,
        )  # fmt: skip
    assert f"cannot bind tcp://127.0.0.1:{port}: " in line, line
    assert "AsyncSocket" not in line and "addr=" not in line


def test_a_bad_spec_says_why_in_words(tmp_path: Path, game: tuple[Path, Path]) -> None:
    key, _ = game
    bad = tmp_path / "bad.spec"
    bad.write_bytes(b"not a spec at all\n")
    line = one_line(
        "node", "--key", str(key), "--spec", str(bad), "--log", str(tmp_path / "x.log"),
        "--bind", "127.0.0.1:0", home=tmp_path,
    )  # fmt: skip
    assert str(bad) in line and "game.spec" in line, line
    assert "unpack" not in line and "msgpack" not in line


def test_a_bad_log_says_why_in_words(tmp_path: Path) -> None:
    bad = tmp_path / "bad.log"
    bad.write_bytes(b"garbage\n" * 10)
    done = nertz("audit", str(bad), cwd=ROOT)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"unreadable: {NOT_A_LOG}: it does not begin as one" in done.stdout, done.stdout
    assert "b'" not in done.stdout  # (not Python's bytes)


@pytest.mark.parametrize("command", ["audit", "replay", "resume"])
def test_every_door_to_a_log_says_what_a_file_is_not_in_one_plain_line(
    tmp_path: Path, game: tuple[Path, Path], command: str
) -> None:
    # A newcomer gave `nertz replay` the game's spec: "unreadable: not a readable log: not a
    # log: does not start with b'NERTZLOG'". The spec is named, and where the logs are.
    _, spec = game
    line = one_line(command, str(spec), home=tmp_path)
    assert line.startswith(f"nertz {command}: error: {str(spec)!r} is the game's spec, not a "), (
        line
    )
    assert f"nertz {command} reads " in line and f"({tmp_path}/*.log)" in line, line
    # Any other file: what it is not, in the one set of words all three use (LogProblem.words).
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    line = one_line(command, str(other), home=tmp_path) if command != "audit" else ""
    if command == "audit":  # (the audit's report: a finding, its verdict, status 2)
        done = nertz(command, str(other), cwd=ROOT)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        (line,) = [t for t in done.stdout.splitlines() if t.startswith("ERROR")]
    assert f"{NOT_A_LOG}: it does not begin as one (NERTZLOG)" in line, line
    assert "b'" not in line and "not a log:" not in line, line


def test_a_node_given_another_file_for_its_log_says_what_it_is_not(
    tmp_path: Path, game: tuple[Path, Path]
) -> None:
    key, spec = game
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    done = nertz(
        "node", "--key", str(key), "--spec", str(spec), "--log", str(other),
        "--bind", "127.0.0.1:0", "--peer", "1=tcp://127.0.0.1:1", cwd=ROOT,
    )  # fmt: skip
    line = one_error_line(done, str(other))
    assert line.endswith(f"{NOT_A_LOG}: it does not begin as one (NERTZLOG)"), line
    assert other.read_text() == "hello\n"  # (not written)


def test_audit_of_a_directory_says_it_is_one(tmp_path: Path) -> None:
    line = one_line("audit", str(tmp_path), home=tmp_path)
    assert "is a directory" in line and f"{tmp_path}/*.log" in line


def test_keygen_refuses_a_key_in_a_directory_that_is_not_there(tmp_path: Path) -> None:
    where = tmp_path / "no" / "such" / "dir" / "key"
    line = one_line("keygen", "--key", str(where), home=tmp_path / "home")
    assert "no directory" in line and str(where.parent) in line
    assert not (tmp_path / "no").exists()


def test_a_spectators_arguments_say_what_is_missing(
    tmp_path: Path, game: tuple[Path, Path]
) -> None:
    """``nertz watch`` admits the game's members only: it wants the game, and a key of its
    own; a member's ``--watcher`` wants the spectator's key with its endpoint."""
    key, spec = game
    line = one_line("watch", "--bind", "127.0.0.1:0", home=tmp_path)
    assert "--spec" in line and "required" in line
    line = one_line("watch", "--spec", str(spec), "--bind", "127.0.0.1:0", home=tmp_path)
    assert "no key file" in line and "nertz keygen" in line and "--key" in line
    bad = tmp_path / "bad.spec"
    bad.write_bytes(b"neither a spec nor a log\n")
    line = one_line(
        "watch", "--spec", str(bad), "--key", str(key), "--bind", "127.0.0.1:0", home=tmp_path
    )
    assert str(bad) in line and "not a game spec" in line and "log" in line
    node = ["node", "--key", str(key), "--spec", str(spec), "--log", str(tmp_path / "x.log")]
    line = one_line(*node, "--watcher", "127.0.0.1:5600", home=tmp_path)
    assert "--watcher" in line and "needs its key" in line and "ENDPOINT#KEY" in line
    line = one_line(*node, "--watcher", "127.0.0.1:5600#beef", home=tmp_path)
    assert "64 hex digits" in line and "'127.0.0.1:5600#beef'" in line
    line = one_line(*node, "--watcher", f"127.0.0.1:5600#{bytes(32).hex()}", home=tmp_path)
    assert "not a spectator's key" in line
