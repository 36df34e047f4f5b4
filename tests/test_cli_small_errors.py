"""The small ones of issue 14, section 4: each bad situation gives one clear line on stderr
(what is wrong and what to do), never a traceback. Real ``nertz`` processes."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import pytest
from cli_helpers import cli_run, make_key, one_error_line, ports_held_for_the_test

from cli.args import EXIT_UNHEARD
from cli.keyfile import write_key
from p2p_nertz.logfile.format import LogHeader
from p2p_nertz.logfile.format import Record as LogRecord
from p2p_nertz.logfile.store import LogWriter, create_log
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.node import ENDPOINTS_NOTE, SPEC_NOTE

NERTZ = [sys.executable, "-m", "cli"]


def _run(argv: list[str], *, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    run = subprocess.run if prefix else cli_run  # (the fork server's child, where it is nertz)
    return run(
        [*prefix, *NERTZ, *argv], capture_output=True, text=True, timeout=60,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


class _Game:
    """A two-player game on disk: Ann's key and the spec, and where the node options point."""

    def __init__(self, tmp_path: Path) -> None:
        self.ids = [Identity.generate(derive_seed(b"test-cli-small-errors", n)) for n in (0, 1)]
        self.spec = GameSpec.create(
            [(i.peer_id, name) for i, name in zip(self.ids, ("Ann", "Bob"), strict=True)],
            Rules(target=None, rounds=1),
            b"small-errors",
        )
        self.spec_path = tmp_path / "game.spec"
        self.spec_path.write_bytes(self.spec.to_wire())
        self.key = tmp_path / "ann.key"
        write_key(self.key, self.ids[0])
        self.ports = ports_held_for_the_test(2)  # (bound, never listening, till the end)
        self.book = {
            bytes(i.peer_id): f"tcp://127.0.0.1:{p}"
            for i, p in zip(self.ids, self.ports, strict=True)
        }

    def node(self, log: Path, bind: str | None = None, *extra: str) -> list[str]:
        other = self.spec.seat_of(self.ids[1].peer_id)
        return [
            "node", "--key", str(self.key), "--spec", str(self.spec_path),
            "--bind", bind or self.book[bytes(self.ids[0].peer_id)],
            "--peer", f"{other}={self.book[bytes(self.ids[1].peer_id)]}", "--log", str(log),
            *extra,
        ]  # fmt: skip

    def log_with_tail(self, path: Path, tail: bytes) -> bytes:
        """Ann's log with its session notes, then ``tail``; returns its bytes."""
        header = LogHeader(
            game_id=self.spec.game_id, peer_id=bytes(self.ids[0].peer_id), created_at_ms=0
        )
        with create_log(path, header) as writer:
            writer.append_many(
                [
                    LogRecord.note(SPEC_NOTE, self.spec.to_wire()),
                    LogRecord.note(ENDPOINTS_NOTE, msgpack.packb(self.book, use_bin_type=True)),
                ]
            )
        with path.open("ab") as f:
            f.write(tail)
        return path.read_bytes()


# -- host --address --------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [["host", "--bot", "greedy", "--players", "2"], ["play"]])
def test_host_at_the_every_interface_address_says_so_in_one_line(
    tmp_path: Path, command: list[str]
) -> None:
    make_key()
    done = _run([*command, "--address", "0.0.0.0"])
    one_error_line(done, "--address", "0.0.0.0", "every interface", "LAN address")


# -- --bind ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["node", "play"])
@pytest.mark.parametrize(
    ("bind", "words"),
    [
        ("tcp://127.0.0.1:70000", ["70000 is not a TCP port (0-65535)"]),
        ("tcp://127.0.0.1:65536", ["65536 is not a TCP port"]),
        ("5555", ["HOST:PORT or tcp://HOST:PORT"]),  # (127.0.0.1:5555 is taken: issue 15)
        ("tcp://nowhere:5555", ["not an IPv4 address"]),
    ],
)
def test_bind_refuses_a_port_or_address_zeromq_would_misread(
    tmp_path: Path, command: str, bind: str, words: list[str]
) -> None:
    game = _Game(tmp_path)
    argv = game.node(tmp_path / "ann.log", bind)
    argv[0] = command
    done = _run(argv)
    one_error_line(done, "--bind", *words)
    assert done.returncode == 2
    assert not (tmp_path / "ann.log").exists()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("address", ["0.0.0.0", "*"])
def test_bind_on_every_interface_says_so(tmp_path: Path, address: str) -> None:
    game = _Game(tmp_path)
    bind = f"tcp://{address}:{game.ports[0]}"
    # Bob never comes: Ann stops after her --drop-after, having heard nobody (status 5).
    done = _run(
        game.node(
            tmp_path / "ann.log", bind, "--json", "--suspect-after", "0.2", "--drop-after", "0.5"
        )
    )
    assert done.returncode == EXIT_UNHEARD, done.stderr
    note, unheard = done.stderr.splitlines()
    assert note == f"nertz node: note: --bind {bind} listens on every interface of this machine"
    assert unheard.startswith("nertz node: heard nobody at this table"), unheard


# -- a damaged tail ------------------------------------------------------------------------------
def test_node_on_a_log_with_a_damaged_tail_names_the_command_that_cuts_it(tmp_path: Path) -> None:
    game = _Game(tmp_path)
    log = tmp_path / "ann.log"
    before = game.log_with_tail(log, b"\x07" * 40)
    done = _run(game.node(log))
    one_error_line(done, "damaged", f"nertz resume --cut-damaged-tail {log}")
    assert log.read_bytes() == before  # nothing cut


def test_resume_of_a_log_with_a_damaged_tail_names_the_command_that_cuts_it(
    tmp_path: Path,
) -> None:
    game = _Game(tmp_path)
    log = tmp_path / "ann.log"
    before = game.log_with_tail(log, b"\x07" * 40)
    done = _run(["resume", str(log), "--key", str(game.key), "--bot", "greedy"])
    one_error_line(done, "damaged", f"nertz resume --cut-damaged-tail {log}")
    assert log.read_bytes() == before


# -- a full disk -----------------------------------------------------------------------------------
def _can_mount_tmpfs() -> str | None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return "needs root and unshare to mount a tmpfs"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"],
        capture_output=True, check=False,
    )  # fmt: skip
    return None if probe.returncode == 0 else f"cannot mount a tmpfs: {probe.stderr!r}"


@pytest.mark.timeout(60)
def test_node_on_a_full_disk_names_the_log_file(tmp_path: Path) -> None:
    why = _can_mount_tmpfs()
    if why is not None:
        pytest.skip(why)
    game = _Game(tmp_path)
    disk = tmp_path / "disk"
    disk.mkdir()
    log = disk / "ann.log"
    # A tmpfs of its own mount namespace, filled up: it goes away with the process.
    shell = (
        f"mount -t tmpfs -o size=8k tmpfs {disk} && "
        f'(head -c 65536 /dev/zero > {disk}/filler 2>/dev/null; true) && exec "$@"'
    )
    done = _run(game.node(log), prefix=("unshare", "-m", "sh", "-c", shell, "sh"))
    line = one_error_line(done, "No space left on device", str(log))
    assert line.startswith("nertz node: error: ")


@pytest.mark.timeout(60)
def test_demo_on_a_full_disk_names_the_spec_file_and_leaves_no_half_of_it(tmp_path: Path) -> None:
    why = _can_mount_tmpfs()
    if why is not None:
        pytest.skip(why)
    disk = tmp_path / "disk"
    disk.mkdir()
    where = disk / "game"
    shell = (
        f"mount -t tmpfs -o size=8k tmpfs {disk} && mkdir {where} && "
        f'(head -c 65536 /dev/zero > {disk}/filler 2>/dev/null; true) && "$@"; '
        f"s=$?; ls -A {where}; exit $s"
    )
    argv = ["demo", "--bots", "2", "--dir", str(where)]
    done = _run(argv, prefix=("unshare", "-m", "sh", "-c", shell, "sh"))
    line = one_error_line(done, "No space left on device", str(where / "game.spec"))
    assert line.startswith("nertz demo: error: ") and done.returncode == 2, line
    assert done.stdout.strip() == "", done.stdout  # (ls: the directory is left empty)


def test_log_writer_on_a_full_disk_names_the_log_file(tmp_path: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    path = tmp_path / "ann.log"
    header = LogHeader(game_id=b"g" * 32, peer_id=bytes(32), created_at_ms=0)
    writer = LogWriter(os.open("/dev/full", os.O_WRONLY), path, header, 0)
    with writer, pytest.raises(OSError) as caught:
        writer.append(LogRecord.note("x", b"data"))
    assert caught.value.errno == errno.ENOSPC
    assert caught.value.filename == str(path)
    assert str(path) in str(caught.value)


# -- logs of protocol versions no longer read: 1 (before every event counted as an ack, issue 18),
# 2 (a commit game's before session 39, whose vote on proof carried no proof) and 7 (a commit
# game's of session 41, whose vote on proof named nothing its author took: session 42) ---------
V1_LOG = Path(__file__).parent / "data" / "v1" / "three-players-p1.log"
V2_LOG = Path(__file__).parent / "data" / "v2" / "two-players-p1.log"
V7_LOG = Path(__file__).parent / "data" / "v7" / "three-players-lossy-p1.log"


@pytest.mark.parametrize("command", ["audit", "replay"])
@pytest.mark.parametrize(("log", "version"), [(V1_LOG, 1), (V2_LOG, 2), (V7_LOG, 7)])
def test_a_log_of_an_old_protocol_version_is_one_line_naming_its_version(
    command: str, log: Path, version: int
) -> None:
    done = _run([command, str(log)])
    assert done.returncode == 2
    one_error_line(done, f"protocol version {version}", "reads versions 9 and 10")
