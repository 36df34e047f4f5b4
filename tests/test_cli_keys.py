"""Private keys stay private (issue 14, section 3): every command refuses a key file others may
read, with the fix in one line; keys are written 0600; a key a command makes by itself goes to
the key store in the user's config dir, never beside the logs handed to auditors, and
``nertz resume`` finds it there. Real ``nertz`` processes, with HOME and the XDG dirs in a
temporary directory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from cli_helpers import cli_popen, cli_run, held_ports, lobby_where, make_key, one_error_line
from key_helpers import secret_in

from cli.keyfile import keep_key, kept_key_path, load_identity, write_key
from p2p_nertz.errors import NertzError
from p2p_nertz.logfile.format import LogHeader, RecordKind
from p2p_nertz.logfile.format import Record as LogRecord
from p2p_nertz.logfile.store import create_log, read_log
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.node import ENDPOINTS_NOTE, SPEC_NOTE

NERTZ = [sys.executable, "-m", "cli"]
DEADLINE = 120.0


def _env(tmp_path: Path, who: str) -> dict[str, str]:
    """A user of their own: HOME, config and data dirs under ``tmp_path/who``."""
    env = {k: v for k, v in os.environ.items() if k != "NERTZ_HOME"}
    base = tmp_path / who
    env.update(
        HOME=str(base / "home"),
        XDG_CONFIG_HOME=str(base / "config"),
        XDG_DATA_HOME=str(base / "data"),
    )
    return env


def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return cli_run(
        [*NERTZ, *argv], capture_output=True, text=True, timeout=60, env=env,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


@pytest.fixture
def ports() -> Iterator[list[int]]:
    """Three ports of 127.0.0.1 held bound for the test (``held_ports``): the addresses its
    commands are given, none of which they reach (each refuses its key first), nor any other
    process binds meanwhile."""
    with held_ports(3) as held:
        yield held


# -- key files open to others --------------------------------------------------------------------
def _game_files(
    tmp_path: Path, identity: Identity, ports: list[int]
) -> tuple[Path, Path, list[str]]:
    """A game of ``identity`` and another on the first two ``ports``, its spec file, a log of
    ``identity`` that resume can read, and the ``--bind``/``--peer`` options of a node of
    it."""
    other = Identity.generate(derive_seed(b"test-cli-keys-other", 0))
    spec = GameSpec.create([(identity.peer_id, "Ann"), (other.peer_id, "Bob")], Rules(), b"k")
    spec_path = tmp_path / "game.spec"
    spec_path.write_bytes(spec.to_wire())
    book = {
        bytes(i.peer_id): f"tcp://127.0.0.1:{p}"
        for i, p in zip((identity, other), ports[:2], strict=True)
    }
    log = tmp_path / "ann.log"
    header = LogHeader(game_id=spec.game_id, peer_id=bytes(identity.peer_id), created_at_ms=0)
    with create_log(log, header) as writer:
        writer.append_many(
            [
                LogRecord.note(SPEC_NOTE, spec.to_wire()),
                LogRecord.note(ENDPOINTS_NOTE, msgpack.packb(book, use_bin_type=True)),
            ]
        )
    other_seat = spec.seat_of(other.peer_id)
    node = [
        "--bind",
        book[bytes(identity.peer_id)],
        "--peer",
        f"{other_seat}={book[other.peer_id]}",
    ]
    return spec_path, log, node


@pytest.mark.parametrize("mode", [0o644])
@pytest.mark.parametrize(
    "command",
    ["keygen", "keygen --show", "host", "join", "bot", "play", "play-given", "node", "resume",
     "resume-found"],
)  # fmt: skip
def test_every_command_refuses_a_key_file_open_to_others_in_one_line(
    tmp_path: Path, command: str, mode: int, ports: list[int]
) -> None:
    env = _env(tmp_path, "ann")
    key = tmp_path / "ann" / "config" / "p2p-nertz" / "key"  # the default key
    key.parent.mkdir(parents=True)
    identity = Identity.generate()
    write_key(key, identity)
    key.chmod(mode)
    spec, log, node = _game_files(tmp_path, identity, ports)
    where = f"127.0.0.1:{ports[2]}"
    argv = {
        "keygen": ["keygen"],
        "keygen --show": ["keygen", "--show"],
        "host": ["host", "--bot", "greedy", "--players", "2"],
        "join": ["join", "--peer", where, "--bot", "greedy", "--timeout", "0.5"],
        "bot": ["bot", "--key", str(key), "--peer", where, "--timeout", "0.5"],
        "play": ["play", "--peer", where],
        "play-given": ["play", "--key", str(key), "--spec", str(spec), "--log", str(log), *node],
        "node": ["node", "--key", str(key), "--spec", str(spec), "--log", str(log), *node],
        "resume": ["resume", str(log), "--key", str(key), "--bot", "greedy"],
        "resume-found": ["resume", str(log), "--bot", "greedy"],  # finds the default key
    }[command]
    before, key_before = log.read_bytes(), key.read_bytes()
    line = one_error_line(_run(argv, env), str(key), f"chmod 600 {key}", oct(mode)[2:])
    assert "accessible by others" in line
    assert key.read_bytes() == key_before  # nothing replaced...
    assert log.read_bytes() == before  # ...nor written


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602, 0o660, 0o707])
def test_load_identity_refuses_any_access_by_group_or_others(tmp_path: Path, mode: int) -> None:
    key = tmp_path / "key"
    write_key(key, Identity.generate())
    key.chmod(mode)
    with pytest.raises(NertzError, match=f"chmod 600 {key}"):
        load_identity(key)


@pytest.mark.parametrize("mode", [0o600, 0o400, 0o700])
def test_load_identity_accepts_a_key_readable_by_its_owner_only(tmp_path: Path, mode: int) -> None:
    key = tmp_path / "key"
    identity = Identity.generate()
    write_key(key, identity)
    key.chmod(mode)
    assert load_identity(key) == identity


def test_keygen_writes_the_key_0600_whatever_the_umask(tmp_path: Path) -> None:
    env = _env(tmp_path, "ann")
    done = cli_run(
        [*NERTZ, "keygen"], capture_output=True, text=True, timeout=60, env=env, check=False,
        preexec_fn=lambda: os.umask(0),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    key = tmp_path / "ann" / "config" / "p2p-nertz" / "key"
    assert key.stat().st_mode & 0o777 == 0o600
    assert key.parent.stat().st_mode & 0o777 == 0o700
    shown = _run(["keygen", "--show"], env)
    assert shown.returncode == 0 and shown.stdout.split()[0] == done.stdout.split()[2]


# -- keys a command makes: the key store, never the log dir ---------------------------------------
class _Proc:
    """A ``nertz`` process with its output in files (no pipe to fill while we wait)."""

    def __init__(self, base: Path, argv: list[str], env: dict[str, str]) -> None:
        self.out, self.err = base.with_suffix(".out"), base.with_suffix(".err")
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.proc = cli_popen(
                [*NERTZ, *argv], stdout=out, stderr=err, env=env, stdin=subprocess.DEVNULL
            )

    def events(self) -> list[dict[str, Any]]:
        lines = self.out.read_text(errors="replace").splitlines()
        return [json.loads(line) for line in lines if line.startswith("{")]

    def wait_for(self, event: str) -> dict[str, Any]:
        """The first ``event`` line: polled until a deadline (the process says when it is
        there; this only looks), failing at once if the process ended without it."""
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            ended = self.proc.poll() is not None
            found = [e for e in self.events() if e.get("event") == event]
            if found:
                return found[0]
            assert not ended, f"no {event!r}: {self.err.read_text()[-2000:]}"
            time.sleep(0.1)
        raise AssertionError(f"no {event!r} in {DEADLINE} s: {self.err.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def _secrets(paths: list[Path]) -> dict[Path, bytes]:
    return {p: load_identity(p).to_bytes() for p in paths}


def _wait_for_own_event(log: Path, within: float = 60.0) -> None:
    """Return once ``log`` holds an event its owner signed (the log is read as it grows)."""
    limit = time.monotonic() + within
    while time.monotonic() < limit:
        if log.exists():
            with read_log(log) as reader:
                if any(r.kind is RecordKind.SENT_EVENT for r in reader):
                    return
        time.sleep(0.05)  # (polling the condition itself, with a deadline)
    raise AssertionError(f"{log} holds no event of its own after {within:g} s")


def _assert_no_secret_under(directory: Path, secrets: dict[Path, bytes]) -> None:
    files = [p for p in directory.rglob("*") if p.is_file()]
    assert files, f"nothing was written in {directory}"
    assert not [p for p in files if p.suffix == ".key"], files
    for path in files:
        data = path.read_bytes()
        for where, secret in secrets.items():
            assert not secret_in(data, secret), f"the private key of {where} is in {path}"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_bot_and_join_without_key_keep_no_key_in_the_log_dir_and_resume_finds_it(
    tmp_path: Path,
) -> None:
    ann, bob, bot = _env(tmp_path, "ann"), _env(tmp_path, "bob"), _env(tmp_path, "bot")
    for env in (ann, bob):
        make_key(Path(env["XDG_CONFIG_HOME"]) / "p2p-nertz" / "key")  # (the default key)
    logs = {who: tmp_path / who / "logs" for who in ("ann", "bob", "bot")}
    procs: list[_Proc] = []

    def start(name: str, argv: list[str], env: dict[str, str]) -> _Proc:
        procs.append(_Proc(tmp_path / name, [*argv, "--json"], env))
        return procs[-1]

    try:
        host = start(
            "host",
            ["host", "--name", "Ann", "--bot", "greedy",
             "--players", "3", "--rounds", "1", "--log-dir", str(logs["ann"])],
            ann,
        )  # fmt: skip
        where = lobby_where(host.wait_for("lobby"))
        joiner = start(
            "join",
            ["join", "--name", "Bob", "--bot", "greedy", "--peer", where,
             "--log-dir", str(logs["bob"])],
            bob,
        )  # fmt: skip
        player = start(
            "bot",
            ["bot", "--name", "Cy", "--peer", where, "--log-dir", str(logs["bot"])],
            bot,
        )  # fmt: skip
        started = player.wait_for("start")
        # The bot's fresh key is in its key store, and only there.
        (kept,) = (tmp_path / "bot" / "config" / "p2p-nertz" / "keys").iterdir()
        assert kept.stat().st_mode & 0o777 == 0o600
        assert kept.parent.stat().st_mode & 0o777 == 0o700
        assert kept.stem in started["log"]  # the log's name carries the fingerprint
        # Killed mid-game (once its log holds an event it signed: the start line comes
        # before the log is made), the bot resumes from its log with the key found in the store.
        _wait_for_own_event(Path(started["log"]))
        player.proc.send_signal(signal.SIGKILL)
        player.proc.wait()
        resumed = start("resume", ["resume", started["log"], "--bot", "greedy"], bot)
        finals = [p.wait_for("final") for p in (host, joiner, resumed)]
        for p in (host, joiner, resumed):
            assert p.proc.wait(timeout=DEADLINE) == 0, p.err.read_text()
    finally:
        for p in procs:
            p.stop()
    assert all(f["over"] for f in finals), finals
    assert len({f["digest"] for f in finals}) == 1
    kinds = [e["event"] for e in resumed.events()]
    assert kinds[0] == "resume"
    assert "round" in kinds  # resume --json says the rounds like the other commands (section 4)
    assert all("Traceback" not in p.err.read_text() for p in procs)
    secrets = _secrets(
        [
            tmp_path / "ann" / "config" / "p2p-nertz" / "key",
            tmp_path / "bob" / "config" / "p2p-nertz" / "key",
            kept,
        ]
    )
    for directory in logs.values():
        _assert_no_secret_under(directory, secrets)


def test_resume_without_key_says_where_it_looked(tmp_path: Path, ports: list[int]) -> None:
    env = _env(tmp_path, "ann")
    _, log, _ = _game_files(tmp_path, Identity.generate(), ports)
    one_error_line(_run(["resume", str(log), "--bot", "greedy"], env), "--key", "keys")


def test_keep_key_keeps_one_file_per_key_in_a_private_store() -> None:
    identity = Identity.generate(derive_seed(b"test-cli-keys-keep", 0))
    path = keep_key(identity)
    assert path == kept_key_path(identity.fingerprint)
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert keep_key(identity) == path  # the same key again: found, not an error
    assert load_identity(path) == identity
    path.write_bytes(Identity.generate().to_bytes())  # another key under this name
    with pytest.raises(NertzError, match="another key"):
        keep_key(identity)


# -- a public key where the secret is due (docs/key-files.md) -------------------------------------
@pytest.mark.parametrize("command", ["keygen --show", "node", "resume"])
def test_a_public_key_given_as_the_key_is_refused_in_one_line(
    tmp_path: Path, command: str, ports: list[int]
) -> None:
    """Its 32 raw bytes would read as another identity: refused, saying whose public key it
    is (the default key's for keygen; a player's where the game is known), changing nothing."""
    env = _env(tmp_path, "ann")
    mine = make_key(tmp_path / "ann" / "config" / "p2p-nertz" / "key")
    spec, log, node = _game_files(tmp_path, mine, ports)
    public = tmp_path / "ann.pub"
    public.write_bytes(bytes(mine.peer_id))
    public.chmod(0o600)
    argv = {
        "keygen --show": ["keygen", "--show", "--key", str(public)],
        "node": ["node", "--key", str(public), "--spec", str(spec), "--log", str(log), *node],
        "resume": ["resume", str(log), "--key", str(public), "--bot", "greedy"],
    }[command]
    before = log.read_bytes()
    one_error_line(_run(argv, env), str(public), f"public key of {mine.fingerprint}", "give")
    assert log.read_bytes() == before and public.read_bytes() == bytes(mine.peer_id)


def test_an_old_raw_key_keeps_its_fingerprint_and_a_new_key_is_named(tmp_path: Path) -> None:
    env = _env(tmp_path, "ann")
    old = tmp_path / "old.key"
    identity = Identity.generate(derive_seed(b"test-cli-keys-old", 0))
    old.write_bytes(identity.to_bytes())  # (as every key was written before session 27)
    old.chmod(0o600)
    shown = _run(["keygen", "--show", "--key", str(old)], env)
    assert shown.returncode == 0 and shown.stdout.split()[0] == identity.fingerprint, shown
    assert old.read_bytes() == identity.to_bytes()
    made = _run(["keygen", "--key", str(tmp_path / "new.key")], env)
    assert made.returncode == 0, made.stderr
    text = (tmp_path / "new.key").read_text()
    assert text.startswith("p2p-nertz secret key v1\n")
    assert f"fingerprint {made.stdout.split()[2]}\n" in text
