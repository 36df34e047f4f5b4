"""A command that refuses changes nothing: what ``nertz demo`` and ``nertz play --bots`` made
for their game before a refusal (its directory, the directories on the way, the spec, its
bots' files) is taken away (cli/made.py), or not made before the check.

Session 43: a refused ``demo --dir`` on a full disk left an empty directory behind; a quick
game without a terminal made its directory and started its bots before it said it needed one.
The full disks are small tmpfs mounts in a mount namespace of their own (root and ``unshare``:
skipped, with the reason, where they cannot be made); what is on the disk after the command is
listed in that namespace, before it goes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import nertz, node_spec

from cli.args import NEEDS_A_TERMINAL
from cli.keyfile import write_key
from p2p_nertz.rules import Rules

pytestmark = pytest.mark.timeout(180)

#: A hang's bound, not a timing: a refusal at a load of 40 (a demo whose bot stopped).
ENDS_WITHIN = 120.0

_LISTED = "--- on the disk:"


def _why_no_tmpfs() -> str | None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return "needs root and unshare to mount a tmpfs"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"],
        capture_output=True, check=False,
    )  # fmt: skip
    return None if probe.returncode == 0 else f"cannot mount a tmpfs: {probe.stderr!r}"


def _on_a_full_disk(
    tmp_path: Path, argv: list[str], *, room: int = 0, before: str = ""
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """``nertz argv…`` run in ``tmp_path/disk``, a tmpfs of 12 KiB with ``room`` bytes left
    (whole pages), after the shell line ``before``; what it did, and every path on the disk
    after it (the filler left out)."""
    why = _why_no_tmpfs()
    if why is not None:
        pytest.skip(why)
    disk = tmp_path / "disk"
    disk.mkdir()
    shell = (
        f"mount -t tmpfs -o size=12k tmpfs {disk} && cd {disk} && "
        f"(head -c {12288 - room} /dev/zero > filler 2>/dev/null; true) && {before or 'true'} "
        f'&& "$@"; s=$?; echo "{_LISTED}"; find . -mindepth 1 ! -name filler; exit $s'
    )
    command = ["unshare", "-m", "sh", "-c", shell, "sh", sys.executable, "-m", "cli", *argv]
    env = dict(os.environ, NERTZ_HOME=str(tmp_path / "home"))
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=ENDS_WITHIN,
        stdin=subprocess.DEVNULL, check=False, cwd=tmp_path,
    )  # fmt: skip
    out, _, listed = done.stdout.partition(_LISTED)
    assert listed, done
    return subprocess.CompletedProcess(command, done.returncode, out, done.stderr), sorted(
        listed.split()
    )


def _refused(done: subprocess.CompletedProcess[str], command: str, *words: str) -> None:
    lines = done.stderr.splitlines()
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert len(lines) == 1 and lines[0].startswith(f"nertz {command}: error: "), lines
    assert all(w in lines[0] for w in words), lines
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--players", "2", "--dir", "new/a/b"],  # (three directories made)
        ["demo", "--players", "2"],  # (nertz-logs/demo-<id>)
        ["play", "--bots", "1", "--web", "--no-open", "--dir", "new"],
        ["play", "--bots", "1", "--web", "--no-open"],  # (nertz-logs/play-<id>)
    ],
    ids=["demo --dir", "demo", "play --dir", "play"],
)
def test_a_game_refused_by_a_full_disk_leaves_no_directory(tmp_path: Path, argv: list[str]) -> None:
    done, left = _on_a_full_disk(tmp_path, argv)
    _refused(done, argv[0], "No space left on device", "game.spec")
    assert left == []


@pytest.mark.parametrize("command", ["demo", "play"])
def test_a_game_refused_by_a_disk_full_after_its_spec_leaves_nothing(
    tmp_path: Path, command: str
) -> None:
    """Room for the spec, none for the logs: refused as its bots (or its own log) start."""
    argv = ["demo", "--players", "2"] if command == "demo" else ["play", "--bots", "1", "--web"]
    done, left = _on_a_full_disk(tmp_path, [*argv, "--dir", "game"], room=4096)
    _refused(done, command, "full" if command == "demo" else "No space left on device")
    assert left == []


def test_a_refusal_in_a_directory_that_was_there_leaves_it_as_it_was(tmp_path: Path) -> None:
    """``--dir`` an existing directory (holding a file of the person's): only what the run
    added goes."""
    done, left = _on_a_full_disk(
        tmp_path, ["demo", "--players", "2", "--dir", "mine"], before="mkdir mine && : > mine/notes"
    )
    _refused(done, "demo", "No space left on device")
    assert left == ["./mine", "./mine/notes"]


@pytest.mark.parametrize("given", ["--bots", "--spec"])
def test_a_game_at_the_terminal_without_one_is_refused_before_anything_is_made(
    tmp_path: Path, given: str
) -> None:
    if given == "--bots":
        argv = ["play", "--bots", "1", "--dir", str(tmp_path / "game")]
    else:  # (a given game: its log, never made)
        ids, spec = node_spec(["ann", "bob"], Rules(), keys=b"qa44", salt=b"qa44")
        (tmp_path / "game.spec").write_bytes(spec.to_wire())
        write_key(tmp_path / "key", ids[0])
        argv = ["play", "--key", str(tmp_path / "key"), "--spec", str(tmp_path / "game.spec"),
                "--bind", "tcp://127.0.0.1:0", "--peer", "1=tcp://127.0.0.1:9",
                "--log", str(tmp_path / "game")]  # fmt: skip
    done = nertz(*argv, home=tmp_path / "home")
    _refused(done, "play", NEEDS_A_TERMINAL)
    assert not (tmp_path / "game").exists()
