"""``--suspect-after`` and ``--drop-after`` on every command that runs a peer node.

One definition (``cli/main.py``) serves ``play``, ``host``, ``join``, ``bot``, ``resume`` and
``node``. The options parse into the node's :class:`~p2p_nertz.protocol.peer.PeerConfig`; bad
values are refused in one line with exit status 2 before anything starts; and, run as real
processes on 127.0.0.1, the timers given are the ones the node plays by: a bot left alone in a
game of two abandons it after its own ``--drop-after``. (The defaults, 5 s and 30 s, would not
end those games within the tests' deadlines.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli_popen, cli_run, held_port, json_lines_until, lobby_where

from cli.args import EXIT_UNHEARD, liveness_argv, liveness_from
from cli.keyfile import write_key
from cli.main import build_parser, main
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.node import BEATS_PER_SUSPICION, NODE_CONFIG
from p2p_nertz.testing.said import READY_BOUND, reap

#: The arguments each command needs besides the timers (parsing only: nothing is run).
COMMANDS: dict[str, list[str]] = {
    "play": ["play"],
    "host": ["host"],
    "join": ["join", "--peer", "127.0.0.1:5"],
    "bot": ["bot", "--peer", "127.0.0.1:5"],
    "resume": ["resume", "x.log"],
    "node": ["node", "--key", "k", "--spec", "s", "--bind", "tcp://127.0.0.1:5", "--log", "l"],
}

#: Deadline for a real process's game to end (far below the default ``--drop-after``, 30 s).
DEADLINE = 20.0


# -- parsing -----------------------------------------------------------------------------------
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_timers_parse_into_the_node_config_of_every_node_command(command: str) -> None:
    parser = build_parser()
    given = parser.parse_args([*COMMANDS[command], "--suspect-after", "1.5", "--drop-after", "4"])
    config = liveness_from(given)
    assert (config.suspect_after, config.drop_after) == (1.5, 4.0)
    # Only the timers change: the rest is the node's configuration on real sockets.
    assert config.ack_delay == NODE_CONFIG.ack_delay
    assert config.want_delay == NODE_CONFIG.want_delay
    assert config.phase_timeout == NODE_CONFIG.phase_timeout
    assert liveness_from(parser.parse_args(COMMANDS[command])) == NODE_CONFIG
    same = parser.parse_args([*COMMANDS[command], "--suspect-after", "3", "--drop-after", "3"])
    assert liveness_from(same).drop_after == 3.0  # drop at once when suspected: allowed


def test_a_short_suspect_after_shortens_the_beat_interval_with_it() -> None:
    # An idle member beats every beat interval: four beats at least within suspect_after, or
    # a node with a short --suspect-after would take idle members for silent ones.
    parser = build_parser()
    for suspect, beat in [("5", NODE_CONFIG.beat_interval), ("1.5", 0.375), ("1", 0.25)]:
        given = parser.parse_args([*COMMANDS["node"], "--suspect-after", suspect])
        config = liveness_from(given)
        assert config.beat_interval == beat
        assert config.beat_interval * BEATS_PER_SUSPICION <= config.suspect_after


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(
    ("timers", "words"),
    [
        (["--suspect-after", "0"], ["--suspect-after", "above 0"]),
        (["--drop-after", "-2"], ["--drop-after", "above 0"]),
        (["--drop-after", "nan"], ["--drop-after", "above 0"]),
        (["--suspect-after", "3601"], ["--suspect-after", "at most 3600"]),
        (["--suspect-after", "soon"], ["--suspect-after", "not a number"]),
        (["--suspect-after", "3", "--drop-after", "1"], ["--drop-after", "--suspect-after"]),
    ],
)
def test_bad_timers_are_refused_in_one_line_with_status_2(
    command: str,
    timers: list[str],
    words: list[str],
    *,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NERTZ_HOME", str(tmp_path / "home"))  # no key there: not reached
    with pytest.raises(SystemExit) as refused:
        status = main([*COMMANDS[command], *timers])
        raise SystemExit(status)  # the order check is the command's, not argparse's
    assert refused.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"nertz {command}: error: ")
    assert all(word in line for word in words), line
    assert list(tmp_path.iterdir()) == []  # nothing made: no key, no log, no directory


def test_help_of_host_and_join_says_the_timers_are_this_nodes_own() -> None:
    for command in ("host", "join"):
        done = cli_run(
            [sys.executable, "-m", "cli", command, "--help"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        text = " ".join(done.stdout.split())
        assert "--suspect-after SECONDS" in text and "--drop-after SECONDS" in text
        assert "each member sets its own" in text


# -- real processes ----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_node_alone_in_a_game_of_two_stops_after_its_own_drop_after_signing_nothing(
    tmp_path: Path,
) -> None:
    ids = [Identity.generate(derive_seed(b"test-cli-liveness", n)) for n in range(2)]
    spec = GameSpec.create(
        [(i.peer_id, name) for i, name in zip(ids, ("Ann", "Bob"), strict=True)],
        Rules(target=None, rounds=3),
        b"liveness-node",
    )
    (tmp_path / "game.spec").write_bytes(spec.to_wire())
    write_key(tmp_path / "ann.key", ids[0])
    other = spec.seat_of(ids[1].peer_id)
    with held_port() as port:  # Bob's: bound, never listening (he never comes)
        done = cli_run(
            [sys.executable, "-m", "cli", "node", "--key", str(tmp_path / "ann.key"),
             "--spec", str(tmp_path / "game.spec"), "--bind", "tcp://127.0.0.1:0",
             "--peer", f"{other}=tcp://127.0.0.1:{port}", "--log", str(tmp_path / "ann.log"),
             "--json", "--suspect-after", "0.2", "--drop-after", "0.5"],
            capture_output=True, text=True, timeout=DEADLINE, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    # Bob never came, and a `nertz node` given a game cannot tell that from its key playing
    # on elsewhere (docs/protocol.md §9.6): after its own --drop-after it stops, having signed
    # nothing past its join (no abandon that could fork the player's feed), in one line.
    assert done.returncode == EXIT_UNHEARD, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("nertz node: heard nobody at this table in 1 s"), line
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["event"] for e in events] == ["final"], events
    assert events[0]["over"] is False, events  # (no abandon: the game is not over for it)


@pytest.mark.slow
@pytest.mark.timeout(90)
@pytest.mark.parametrize("survivor", ["host", "join"])
def test_host_or_join_whose_opponent_is_killed_abandons_after_its_own_timers(
    tmp_path: Path, survivor: str
) -> None:
    homes = {who: tmp_path / who for who in ("host", "join")}
    for who, home in homes.items():
        home.mkdir()
        write_key(home / "key", Identity.generate(derive_seed(b"test-cli-liveness", who)))
    slow = ["--bot", "greedy", "--speed", "1", "--json", "--log-dir", str(tmp_path / "logs")]
    # Only the survivor has short timers; the one killed keeps the defaults.
    timers: dict[str, list[str]] = {who: [] for who in homes}
    timers[survivor] = ["--suspect-after", "0.3", "--drop-after", "1"]
    argv = {
        "host": ["host", "--name", "Ann", "--players", "2", "--rounds", "5", *slow,
                 *timers["host"]],
        "join": ["join", "--name", "Bob", *slow, *timers["join"]],
    }  # fmt: skip
    procs: dict[str, subprocess.Popen[str]] = {}
    try:
        for who in ("host", "join"):
            procs[who] = cli_popen(
                [sys.executable, "-m", "cli", *argv[who]],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                stdin=subprocess.DEVNULL, env=dict(os.environ, NERTZ_HOME=str(homes[who])),
            )  # fmt: skip
            if who == "host":  # bound (any free port): the guest may come
                where = lobby_where(json_lines_until(procs["host"], "lobby")[-1])
                argv["join"] += ["--peer", where]
        for proc in procs.values():
            json_lines_until(proc, "start")
        victim = "join" if survivor == "host" else "host"
        procs[victim].send_signal(signal.SIGKILL)
        out, err = procs[survivor].communicate(timeout=DEADLINE)
    finally:
        for proc in procs.values():
            reap(proc)  # (closes the pipes)
    assert procs[survivor].returncode == 0, err
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    gone = "Bob" if survivor == "host" else "Ann"
    kinds = [e["event"] for e in events]
    assert "suspected" in kinds and "final" in kinds
    suspected = next(e for e in events if e["event"] == "suspected")
    assert suspected["name"] == gone
    final = events[kinds.index("final")]
    assert final["over"] is True and final["rounds"] < 5  # cut short by the abandon


# -- the bots a command starts -----------------------------------------------------------------
_POPEN = subprocess.Popen


class _Spawned:
    """Stands in for subprocess.Popen: records the command lines of the bots started."""

    def __init__(self) -> None:
        self.commands: list[list[str]] = []

    def __call__(self, command: list[str], **kwargs: Any) -> Any:
        self.commands.append(list(command))
        # A real child, with nothing to do (its stdin a pipe where the bot's is: the bot stops
        # when that pipe closes, cli/node_cmd.py).
        return _POPEN([sys.executable, "-c", "pass"], stdin=kwargs.get("stdin"))


def _timers_of(command: list[str]) -> tuple[float, float]:
    """The timers a spawned ``nertz`` command line gives its node, as its own parser reads them."""
    config = liveness_from(build_parser().parse_args(command[command.index("cli") + 1 :]))
    return config.suspect_after, config.drop_after


def test_the_bots_host_starts_wait_as_long_as_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cli.bots
    import cli.lobby_cmd

    spawned = _Spawned()
    monkeypatch.setattr(cli.bots.subprocess, "Popen", spawned)
    args = build_parser().parse_args(
        ["host", "--bots", "2", "--suspect-after", "0.25", "--drop-after", "7.5",
         "--log-dir", str(tmp_path)]
    )  # fmt: skip
    for bot in cli.lobby_cmd._spawn_bots(args, "tcp://127.0.0.1:5"):
        bot.proc.wait(timeout=READY_BOUND)  # (a stand-in that ends at once: a hang's bound)
        if bot.proc.stdin is not None:  # (the pipe the bot stops with)
            bot.proc.stdin.close()
    assert len(spawned.commands) == 2
    assert {_timers_of(c) for c in spawned.commands} == {(0.25, 7.5)}


def test_the_bots_of_a_quick_game_wait_as_long_as_the_player(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cli.bots

    spawned = _Spawned()
    monkeypatch.setattr(cli.bots.subprocess, "Popen", spawned)
    identity = Identity.generate(derive_seed(b"test-cli-liveness", "bot"))
    spec = GameSpec.create([(identity.peer_id, "bot1")], Rules(), bytes(16))
    args = build_parser().parse_args(["play", "--suspect-after", "2", "--drop-after", "3"])
    child = cli.bots.start_node_child(  # (as cli/play.py starts each bot of a quick game)
        tmp_path, tmp_path / "spec", spec, identity, seat=0, name="bot1", stem="bot1",
        endpoint_of={identity.peer_id: "tcp://127.0.0.1:5"}, strategy="greedy", speed="5",
        own_session=True, options=liveness_argv(args),
    )  # fmt: skip
    assert child.proc is not None
    child.proc.wait(timeout=READY_BOUND)  # (a stand-in that ends at once: a hang's bound)
    for file in child.files:
        file.close()
    (command,) = spawned.commands
    assert _timers_of(command) == (2.0, 3.0)
    # Fresh, as the player's own node: the command made the game and the bot's key just now.
    assert build_parser().parse_args(command[command.index("cli") + 1 :]).fresh


def test_a_node_resumed_from_its_log_is_refused_as_fresh(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A log that holds anything is a feed its key signed before, maybe elsewhere too: the
    # wait for a member's word (docs/protocol.md §9.6) is not to be skipped for it.
    log = tmp_path / "ann.log"
    log.write_bytes(b"\0")
    argv = ["node", "--key", "k", "--spec", "s", "--bind", "tcp://127.0.0.1:0", "--fresh"]
    assert main([*argv, "--log", str(log)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("nertz node: error: --fresh: ") and "not fresh" in line, line
