"""A person names the wrong thing where a file is wanted: a directory, a FIFO, a device, a huge
file. Every command that reads a named file (a key, a spec, a log, an invite list) answers with
one line naming it, at once, and changes nothing: no traceback, no command blocked forever on
a FIFO's open or on ``/dev/zero``'s endless reads, no huge file read into memory. Real
``nertz`` processes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import pytest
from cli_helpers import make_key, nertz, one_error_line, ports_held_for_the_test

from cli.keyfile import load_identity
from p2p_nertz.logfile.format import LogHeader
from p2p_nertz.logfile.format import Record as LogRecord
from p2p_nertz.logfile.store import create_log
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.node import ENDPOINTS_NOTE, SPEC_NOTE

ROOT = Path(__file__).resolve().parent.parent


def _nertz(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    # (A command blocked on a FIFO or reading /dev/zero forever fails by this timeout.)
    return nertz(*argv, cwd=ROOT, timeout=30, home=tmp_path / "home")


class _Files:
    """A good key and spec of a two-player game, and the wrong things: a directory, a FIFO,
    and a huge (sparse) file."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        ids = [Identity.generate(derive_seed(b"test-cli-wrong-files", n)) for n in (0, 1)]
        spec = GameSpec.create(
            [(ids[0].peer_id, "Ann"), (ids[1].peer_id, "Bob")],
            Rules(target=None, rounds=1),
            b"wrong-files",
        )
        self.ids, self.game = ids, spec
        self.spec = tmp_path / "game.spec"
        self.spec.write_bytes(spec.to_wire())
        self.key = tmp_path / "ann.key"
        make_key(self.key)
        self.key.write_bytes(ids[0].to_bytes())
        self.ports = ports_held_for_the_test(2)  # (bound, never listening, till the end)
        self.directory = tmp_path / "a-directory"
        self.directory.mkdir()
        self.fifo = tmp_path / "a-fifo"
        os.mkfifo(self.fifo)
        self.huge = tmp_path / "huge"
        with self.huge.open("wb") as f:
            f.truncate(1 << 30)  # (sparse: a gibibyte of zeros on no disk space)

    def log(self, path: Path) -> None:
        """Ann's log at ``path``, holding its session notes only (a game not yet dealt)."""
        header = LogHeader(
            game_id=self.game.game_id, peer_id=bytes(self.ids[0].peer_id), created_at_ms=0
        )
        pairs = zip(self.ids, self.ports, strict=True)
        book = {bytes(i.peer_id): f"tcp://127.0.0.1:{p}" for i, p in pairs}
        with create_log(path, header) as writer:
            writer.append_many(
                [
                    LogRecord.note(SPEC_NOTE, self.game.to_wire()),
                    LogRecord.note(ENDPOINTS_NOTE, msgpack.packb(book, use_bin_type=True)),
                ]
            )

    def node(self, *, key: Path | None = None, spec: Path | None = None, log: Path | None = None):
        bob = self.game.seat_of(self.ids[1].peer_id)
        return [
            "node", "--key", str(key or self.key), "--spec", str(spec or self.spec),
            "--bind", f"127.0.0.1:{self.ports[0]}", "--peer", f"{bob}=127.0.0.1:{self.ports[1]}",
            "--log", str(log or self.tmp / "ann.log"), "--drop-after", "2", "--suspect-after", "1",
        ]  # fmt: skip


#: Where each command reads a key, given the key's path.
KEY_READERS: dict[str, Callable[[_Files, Path], list[str]]] = {
    "keygen --show": lambda f, key: ["keygen", "--show", "--key", str(key)],
    "keygen": lambda f, key: ["keygen", "--key", str(key)],
    "node": lambda f, key: f.node(key=key),
    "host": lambda f, key: ["host", "--bot", "greedy", "--players", "2", "--key", str(key)],
    "resume": lambda f, key: [
        "resume", str(f.tmp / "any.log"), "--bot", "greedy", "--key", str(key),
    ],
}  # fmt: skip


@pytest.mark.parametrize("command", KEY_READERS)
@pytest.mark.parametrize("wrong", ["directory", "fifo"])
def test_a_key_that_is_a_directory_or_a_fifo_is_one_line(
    tmp_path: Path, command: str, wrong: str
) -> None:
    files = _Files(tmp_path)
    if command == "resume":
        files.log(tmp_path / "any.log")  # (resume reads the log first)
    path: Path = getattr(files, wrong)
    line = one_error_line(_nertz(tmp_path, *KEY_READERS[command](files, path)), str(path))
    if command == "keygen" and wrong == "directory":  # (it writes one: no "cannot read")
        assert "is a directory: give the path of the key file to make" in line, line
        return
    want = "Is a directory" if wrong == "directory" else "not a regular file"
    assert want in line and "cannot read key file" in line, line


#: Where each command reads a game spec, given its path.
SPEC_READERS: dict[str, Callable[[_Files, str], list[str]]] = {
    "node": lambda f, spec: f.node(spec=Path(spec)),
    "watch": lambda f, spec: [
        "watch", "--spec", spec, "--key", str(f.key), "--bind", "127.0.0.1:0",
    ],
    "audit": lambda f, spec: ["audit", "--spec", spec, str(f.key)],
    "play": lambda f, spec: [
        "play", "--key", str(f.key), "--spec", spec, "--bind", "127.0.0.1:0",
        "--log", str(f.tmp / "x.log"),
    ],
}  # fmt: skip


@pytest.mark.parametrize("command", SPEC_READERS)
def test_a_spec_that_is_a_fifo_or_a_device_is_refused_at_once(tmp_path: Path, command: str) -> None:
    files = _Files(tmp_path)
    for path in (str(files.fifo), "/dev/zero"):
        line = one_error_line(_nertz(tmp_path, *SPEC_READERS[command](files, path)), path)
        assert "cannot read spec file" in line and "not a regular file" in line, line


@pytest.mark.parametrize("command", ["resume", "node"])
def test_a_log_that_is_a_fifo_or_a_device_is_refused_at_once(tmp_path: Path, command: str) -> None:
    files = _Files(tmp_path)
    for log in (files.fifo, Path("/dev/zero")):
        if command == "resume":
            argv = ["resume", str(log), "--bot", "greedy", "--key", str(files.key)]
        else:
            argv = files.node(log=log)
        line = one_error_line(_nertz(tmp_path, *argv), str(log))
        assert "not a regular file" in line, line


def test_a_node_log_that_is_a_directory_is_named_in_words(tmp_path: Path) -> None:
    files = _Files(tmp_path)
    line = one_error_line(_nertz(tmp_path, *files.node(log=files.directory)))
    assert f"{str(files.directory)!r}: Is a directory" in line and "[Errno" not in line, line


@pytest.mark.parametrize("command", ["node", "play"])
@pytest.mark.parametrize("place", ["no-directory", "under-a-file", "not-a-log"])
def test_a_log_place_a_node_cannot_use_is_refused_before_anything_runs(
    tmp_path: Path, command: str, place: str
) -> None:
    # Session 37: a node bound its port and said its seat, then failed on its log with the
    # status of a game that did not finish (1); it is a refusal before anything ran (2).
    files = _Files(tmp_path)
    (tmp_path / "junk.log").write_bytes(b"not a log at all")
    log = {
        "no-directory": tmp_path / "missing" / "ann.log",
        "under-a-file": tmp_path / "junk.log" / "ann.log",
        "not-a-log": tmp_path / "junk.log",
    }[place]
    argv = files.node(log=log)
    if command == "play":  # (a given game: the table's node, its log checked alike)
        argv = ["play", *argv[1 : argv.index("--drop-after")]]
    done = _nertz(tmp_path, *argv)
    line = one_error_line(done, str(log) if place != "under-a-file" else "junk.log")
    assert done.returncode == 2 and line.startswith(f"nertz {command}: error: "), line
    assert done.stdout == ""  # (no seat said: nothing bound)
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("wrong", ["fifo", "huge", "empty"])
def test_an_invite_file_that_cannot_be_a_list_of_keys_is_one_line(
    tmp_path: Path, wrong: str
) -> None:
    files = _Files(tmp_path)
    path = tmp_path / "empty" if wrong == "empty" else getattr(files, wrong)
    if wrong == "empty":
        path.write_text("# nobody yet\n\n")
    done = _nertz(
        tmp_path, "host", "--bot", "greedy", "--players", "2", "--key", str(files.key),
        "--port", str(files.ports[0]), "--invite-file", str(path),
    )  # fmt: skip
    why = {"fifo": "not a regular file", "huge": "larger than", "empty": "names no key"}[wrong]
    line = one_error_line(done, str(path), why)
    assert done.returncode == 2, line


def test_keygen_force_on_a_directory_refuses_and_leaves_it(tmp_path: Path) -> None:
    files = _Files(tmp_path)
    (files.directory / "inside").write_text("kept")
    line = one_error_line(_nertz(tmp_path, "keygen", "--force", "--key", str(files.directory)))
    assert "is a directory" in line, line
    assert (files.directory / "inside").read_text() == "kept"


def test_keygen_force_replaces_the_key_whole_and_private(tmp_path: Path) -> None:
    key = tmp_path / "key"
    old = make_key(key)
    done = _nertz(tmp_path, "keygen", "--force", "--key", str(key))
    assert done.returncode == 0, done.stderr
    new = load_identity(key)  # (refuses one open to others)
    assert new != old and new.fingerprint in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key"]  # (no temporary file left)


@pytest.mark.parametrize("command", ["audit", "replay"])
def test_audit_and_replay_of_a_fifo_say_it_is_not_a_log_file_not_that_it_is_missing(
    tmp_path: Path, command: str
) -> None:
    files = _Files(tmp_path)
    for path in (str(files.fifo), "/dev/null"):
        line = one_error_line(_nertz(tmp_path, command, path), path)
        assert "is not a regular file" in line and "no such" not in line, line


def _lobby_argv(files: _Files, command: str) -> list[str]:
    """``command`` (a lobby's: host, join, bot, play) with all it needs but a --log-dir."""
    where = ["--peer", f"127.0.0.1:{files.ports[1]}"]
    return {
        "host": [
            "host",
            "--bot",
            "greedy",
            "--players",
            "2",
            "--bots",
            "1",
            "--key",
            str(files.key),
        ],
        "join": ["join", "--bot", "greedy", *where, "--key", str(files.key)],
        "bot": ["bot", *where],  # (no --key: a bot would make one and keep it)
        # (play's lobby, told no table: it would open on a terminal, the log dir unchecked
        # until the game it made started, after the others sat down, until session 43)
        "play": ["play", "--key", str(files.key)],
    }[command]


LOBBIES = ["host", "join", "bot", "play"]


@pytest.mark.parametrize("command", LOBBIES)
def test_a_log_dir_that_cannot_be_made_is_one_line_before_any_lobby_or_key(
    tmp_path: Path, command: str
) -> None:
    files = _Files(tmp_path)
    argv = _lobby_argv(files, command)
    for log_dir in (files.spec, files.spec / "logs"):  # (a file; a directory inside a file)
        done = _nertz(tmp_path, *argv, "--log-dir", str(log_dir))
        line = one_error_line(done, "cannot create log directory", str(log_dir))
        assert done.returncode == 2 and done.stdout == "", (line, done.stdout)
    assert not (tmp_path / "home").exists()  # (no key kept, nothing made)


@pytest.mark.skipif(
    os.geteuid() == 0 and shutil.which("setpriv") is None,
    reason="root writes in any directory: needs setpriv to run nertz without that right",
)
@pytest.mark.parametrize("command", LOBBIES)
def test_a_log_dir_not_to_write_in_is_one_line_before_any_lobby(
    tmp_path: Path, command: str
) -> None:
    """An existing --log-dir this user may not make files in was taken: the lobby opened,
    others sat down, and the game's start failed on its log (session 43)."""
    files = _Files(tmp_path)
    log_dir = tmp_path / "not-mine"
    log_dir.mkdir()
    log_dir.chmod(0o555)
    argv = [sys.executable, "-m", "cli", *_lobby_argv(files, command), "--log-dir", str(log_dir)]
    if os.geteuid() == 0:  # (root, without the rights to override a file's mode)
        argv = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", *argv]
    done = subprocess.run(
        argv, capture_output=True, text=True, cwd=ROOT, timeout=30, stdin=subprocess.DEVNULL,
        env={**os.environ, "NERTZ_HOME": str(tmp_path / "home")}, check=False,
    )  # fmt: skip
    line = one_error_line(done, "cannot write in log directory", str(log_dir), "--log-dir")
    assert done.returncode == 2 and done.stdout == "", (line, done.stdout)
    assert list(log_dir.iterdir()) == [] and not (tmp_path / "home").exists()


def test_a_spec_file_place_that_is_a_directory_is_one_line_and_left_alone(tmp_path: Path) -> None:
    where = tmp_path / "game"
    (where / "game.spec").mkdir(parents=True)
    (where / "game.spec" / "inside").write_text("kept")
    done = _nertz(tmp_path, "demo", "--bots", "2", "--dir", str(where))
    line = one_error_line(done, str(where / "game.spec"), "Is a directory")
    assert line.startswith("nertz demo: error: cannot write ") and done.returncode == 2, line
    assert (where / "game.spec" / "inside").read_text() == "kept"


#: An empty path is "." to Python: each kind of path argument, given as "".
EMPTY_PATHS = {
    "demo --dir": ["demo", "--bots", "2", "--dir", ""],
    "keygen --key": ["keygen", "--key", ""],
    "node --log": ["node", "--key", "k", "--spec", "s", "--bind", "127.0.0.1:1", "--log", ""],
    "audit LOG": ["audit", ""],
    "replay --spec": ["replay", "--text", "--spec", "", "x.log"],
    "host --log-dir": ["host", "--bot", "greedy", "--log-dir", ""],
}


@pytest.mark.parametrize("argv", EMPTY_PATHS.values(), ids=list(EMPTY_PATHS))
def test_an_empty_path_is_a_usage_error_not_the_current_directory(
    tmp_path: Path, argv: list[str]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = nertz(*argv, cwd=work, timeout=30, home=tmp_path / "home", env=env)
    line = one_error_line(done, "an empty path")
    assert done.returncode == 2 and line.startswith(f"nertz {argv[0]}: error: "), line
    assert list(work.iterdir()) == []  # (nothing written where the command was started)


@pytest.mark.parametrize("junk", [b"", b"NERTZ", bytes(range(256))], ids=["empty", "cut", "junk"])
def test_replay_of_an_unreadable_log_says_one_line_naming_it(tmp_path: Path, junk: bytes) -> None:
    log = tmp_path / "p1.log"
    log.write_bytes(junk)
    done = _nertz(tmp_path, "replay", "--text", str(log))
    line = one_error_line(done, "nertz replay: error: cannot replay: ", log.name)
    assert done.returncode == 2 and done.stdout == "", line
    assert log.read_bytes() == junk


@pytest.mark.parametrize("command", ["host", "join", "bot"])
@pytest.mark.parametrize("wrong", ["missing", "directory"])
def test_a_key_that_cannot_be_read_leaves_no_log_dir_made(
    tmp_path: Path, command: str, wrong: str
) -> None:
    files = _Files(tmp_path)
    key = tmp_path / "no.key" if wrong == "missing" else files.directory
    logs = tmp_path / "logs"
    argv = [command, "--key", str(key), "--log-dir", str(logs)]
    if command != "bot":
        argv += ["--bot", "greedy"]
    if command != "host":
        argv += ["--peer", f"127.0.0.1:{files.ports[1]}"]
    line = one_error_line(_nertz(tmp_path, *argv), str(key))
    assert line.startswith(f"nertz {command}: error: "), line
    assert not logs.exists()
