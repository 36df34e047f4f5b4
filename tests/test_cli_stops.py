"""A command stopped from outside stops the bot processes it started, not leaving them running
behind it with no parent. SIGTERM (``kill``, ``timeout``, a service manager) stops a command
as Ctrl-C does: before, ``nertz demo`` and ``nertz host --bots`` died at once on SIGTERM and
their nodes and bots played on (README: Ctrl-C or SIGTERM leaves a game cleanly). A closed
stdout (``nertz demo | head -1``) stops the demo quietly: before, the node started before the
first line failed to print was left playing. Real processes."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from cli_helpers import cli_popen, foreground, make_key

from cli.bots import LEAVE_PATIENCE
from p2p_nertz.testing.said import first_line, lines

ROOT = Path(__file__).resolve().parent.parent


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # (gone meanwhile)
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def _alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` still running (not zombies)."""
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


def _start(tmp_path: Path, *argv: str) -> subprocess.Popen[str]:
    return cli_popen(
        foreground(*argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL, cwd=ROOT, env={**os.environ, "NERTZ_HOME": str(tmp_path)},
    )  # fmt: skip


def _term_and_check(proc: subprocess.Popen[str], started: set[int], within: float = 60.0) -> str:
    """SIGTERM ``proc``; it ends within ``within`` seconds with one line, and none of
    ``started`` is left."""
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=within)
    finally:
        for pid in _alive(started):  # (a failed test leaves nothing behind either)
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 128 + signal.SIGTERM, (proc.returncode, err)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert not _alive(started), f"left running: {_alive(started)}"
    return err


@pytest.mark.slow
def test_sigterm_to_a_demo_stops_its_nodes_too(tmp_path: Path) -> None:
    proc = _start(tmp_path, "demo", "--dir", str(tmp_path / "game"), "--bots", "2")
    assert proc.stdout is not None
    listed = 0
    for line in lines(proc, "the demo"):  # (a line a node: "  P2  FINGERPRINT  greedy  on …")
        listed += " on tcp://127.0.0.1:" in line
        if listed == 2:
            break
    nodes = _children(proc.pid)
    assert len(nodes) == 2, nodes
    # The nodes got no signal (a SIGTERM goes to the demo alone): the demo tells them at once.
    # Before, it waited LEAVE_PATIENCE for them to leave by themselves, as after a Ctrl-C
    # (which the terminal sends them too), then TERM_PATIENCE: the bound is that wait, not a
    # speed (the demo takes a second or two here).
    err = _term_and_check(proc, nodes, within=LEAVE_PATIENCE)
    assert "nertz demo: interrupted" in err.splitlines()[-1], err


def test_sigterm_to_a_host_stops_its_bots_too(tmp_path: Path) -> None:
    make_key(tmp_path / "key")
    proc = _start(
        tmp_path, "host", "--bot", "greedy", "--players", "3", "--bots", "1", "--port", "0",
        "--log-dir", str(tmp_path / "logs"),
    )  # fmt: skip
    assert proc.stdout is not None
    for line in lines(proc, "the host"):  # (the bot has started once it is seated)
        if "sat down" in line:
            break
    bots = _children(proc.pid)
    assert len(bots) == 1, bots
    err = _term_and_check(proc, bots)
    assert err.strip() == "nertz host: interrupted", err


def _running_with(word: str) -> set[int]:
    """The processes whose command line holds ``word`` (not zombies)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if word in argv:
                found.add(int(entry.name))
    return _alive(found)


def _close_output_after_a_line(proc: subprocess.Popen[str], marker: str) -> str:
    """``| head -1``: read one line of ``proc``'s output, close the pipe, and wait for it to
    end; no process whose command line holds ``marker`` (the game's directory) may be left.
    Returns what it wrote on stderr."""
    assert proc.stdout is not None and proc.stderr is not None
    try:
        first_line(proc, "the command")
        proc.stdout.close()
        with proc.stderr:
            err = proc.stderr.read()
        proc.wait(timeout=60)
    finally:
        left = _running_with(marker)
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    assert not left, f"left running: {left}"
    return err


def test_a_demo_whose_output_is_closed_stops_quietly_and_leaves_no_node(tmp_path: Path) -> None:
    where = str(tmp_path / "game")
    proc = _start(tmp_path, "demo", "--dir", where, "--bots", "2")
    err = _close_output_after_a_line(proc, where)
    assert proc.returncode == 0 and "Traceback" not in err, (proc.returncode, err)


def test_a_host_whose_output_is_closed_stops_quietly_and_leaves_no_bot(tmp_path: Path) -> None:
    make_key(tmp_path / "key")
    logs = str(tmp_path / "logs")
    proc = _start(
        tmp_path, "host", "--bot", "greedy", "--players", "2", "--bots", "1", "--port", "0",
        "--log-dir", logs,
    )  # fmt: skip
    err = _close_output_after_a_line(proc, logs)
    # Before: "nertz host: error: Broken pipe", status 2.
    assert (proc.returncode, err) == (0, ""), (proc.returncode, err)


@pytest.mark.parametrize(
    "argv",
    [
        ["rules"],
        ["match", "--players", "2", "--seed", "3", "--rounds", "1"],
        ["keygen", "--show"],
        ["replay", "--text", "LOG"],
        ["audit", "LOG"],
    ],
)
def test_a_command_whose_output_is_closed_before_it_writes_ends_quietly(
    tmp_path: Path, argv: list[str]
) -> None:
    make_key(tmp_path / "key")
    if "LOG" in argv:
        argv = [str(_one_log(tmp_path)) if word == "LOG" else word for word in argv]
    proc = _start(tmp_path, *argv)
    assert proc.stdout is not None
    proc.stdout.close()  # (`| true`: the reader is gone before the first line)
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (0, ""), (proc.returncode, err)


def _one_log(tmp_path: Path) -> Path:
    """A finished game's log file: an in-process game of two bots (no network)."""
    from audit_helpers import played

    game = played(players=2, seed=7)
    path = tmp_path / "p1.log"
    path.write_bytes(game.files()[0])
    return path
