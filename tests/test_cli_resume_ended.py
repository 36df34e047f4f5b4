"""``nertz resume`` and ``nertz node`` on the log of a game its player is done with (person24).

Real processes on 127.0.0.1 (``nertz node`` bots, tests/cli_helpers.py's ``node_game``): a
member that signed a ``leave`` cannot rejoin (docs/protocol.md §9.3), so a resume of its log
says it left, with the score and the audit command, and exits with ``EXIT_LEFT``, starting no
node and no table (before: it reopened the table, or without a terminal refused for want of
one); a resume of a finished game's log says the game is over, with the score, status 0.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from cli_helpers import SHORT_ROUND, cli_run, json_lines_until, node_game, stop_all

from cli.args import EXIT_LEFT
from cli.keyfile import load_identity
from p2p_nertz.ui.view import counted
from tests.test_cli_play import Tty

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

NERTZ = [sys.executable, "-m", "cli"]
# Bounds the run of a command that should start nothing (one that starts a node waits for
# the others for --drop-after and more); generous for a loaded machine.
_QUICK = 30.0


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    """``nertz argv…`` without a terminal (stdin and stdout not a tty)."""
    return cli_run(
        [*NERTZ, *argv],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
        timeout=_QUICK,
    )


def test_resume_and_node_on_the_log_of_a_game_we_left_say_so_and_start_nothing(
    tmp_path: Path,
) -> None:
    spec, procs, logs = node_game(
        tmp_path, ("Ann", "Bob", "Cy"), replace(SHORT_ROUND, rounds=3),
        keys=b"test-cli-resume-ended-left", salt=b"resume-ended-left",
    )  # fmt: skip
    try:
        json_lines_until(procs[0], "round")  # round 1 scored: Ann plays round 2
        procs[0].send_signal(signal.SIGTERM)  # (a node leaves cleanly on the first one)
        assert procs[0].wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        stop_all(procs)
    key = str(tmp_path / "0.key")
    done = _run("resume", str(logs[0]), "--key", key)
    assert done.returncode == EXIT_LEFT, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout
    assert "you left this game in round " in lines[0]
    assert "Ann " in lines[0] and "Bob " in lines[0] and "nertz audit " in lines[0]
    assert "resuming" not in done.stdout and "terminal" not in done.stderr

    with_bot = _run("resume", str(logs[0]), "--key", key, "--bot", "greedy", "--json")
    assert with_bot.returncode == EXIT_LEFT, (with_bot.stdout, with_bot.stderr)
    (line,) = [json.loads(x) for x in with_bot.stdout.splitlines()]
    assert line["event"] == "ended" and line["left"] is True
    assert line["round"] >= 2 and line["seq"] > 0 and not line["over"]
    assert len(line["totals"]) == 3

    size = logs[0].stat().st_size
    seat = spec.seat_of(load_identity(Path(key)).peer_id)
    others = [arg for s in range(3) if s != seat for arg in ("--peer", f"{s}=tcp://127.0.0.1:9")]
    node = _run(
        "node", "--key", key, "--spec", str(tmp_path / "game.spec"),
        "--bind", "tcp://127.0.0.1:0", *others, "--log", str(logs[0]),
    )  # fmt: skip
    assert node.returncode == EXIT_LEFT, (node.stdout, node.stderr)
    assert "you left this game" in node.stdout and "Traceback" not in node.stderr
    assert logs[0].stat().st_size == size  # nothing was written: no node ran


def test_resume_of_a_finished_game_says_it_is_over_with_the_score(tmp_path: Path) -> None:
    _, procs, logs = node_game(
        tmp_path, ("Ann", "Bob"), SHORT_ROUND,
        keys=b"test-cli-resume-ended-over", salt=b"resume-ended-over",
    )  # fmt: skip
    try:
        final = json_lines_until(procs[0], "final")[-1]
        assert all(p.wait(timeout=60) == 0 for p in procs)
    finally:
        stop_all(procs)
    assert final["over"]
    size = logs[0].stat().st_size
    done = _run("resume", str(logs[0]), "--key", str(tmp_path / "0.key"))
    assert done.returncode == 0, (done.stdout, done.stderr)
    (line,) = done.stdout.strip().splitlines()
    assert "this game is over" in line
    totals = "  ".join(f"{n} {t}" for n, t in zip(("Ann", "Bob"), final["totals"], strict=True))
    # One round, or more when it ended tied (the tiebreak, RULES.md): the bots' timing on real
    # processes decides that; resume says the rounds the node's own final counted.
    assert final["rounds"] >= 1, final
    assert f"after {counted(final['rounds'], 'round')}: {totals}" in line
    assert logs[0].stat().st_size == size


def test_resume_at_the_terminal_of_a_game_the_person_left_opens_no_table(tmp_path: Path) -> None:
    # person24's steps: play with a bot, q then y (leave), then resume the log at a terminal.
    game = tmp_path / "game"
    tty = Tty(["play", "--bots", "1", "--speed", "10", "--seed", "3", "--rounds", "2",
               "--dir", str(game)])  # fmt: skip
    tty.wait("is dealt — go!", timeout=60)
    tty.send("q")
    tty.wait("leave the game?")
    tty.send("y")
    assert tty.finish(30) == 0
    log = next(game.glob("you*.log"))
    again = Tty(["resume", str(log)])
    assert again.finish(_QUICK) == EXIT_LEFT, again.raw[-500:]
    said = again.raw.decode()
    assert "you left this game in round 1" in said and "Traceback" not in said
    assert "not answering" not in said and "resuming" not in said  # (no table, no node)
