"""``--deal {commit,shuffle}`` on the command line (issue 19, "on real sockets"): a shuffle game
of real processes (``nertz demo --deal shuffle``) that every node agrees on, whose logs audit
clean and replay; and a bad ``--deal`` refused as a usage error in one line.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli_popen, held_port, held_udp_port, json_lines_until, make_key, nertz
from test_cli_play import Tty, watched_to_the_leave

from cli.args import DEALS
from cli.keyfile import load_identity
from cli.replay_cmd import interact
from p2p_nertz.audit import LogSource
from p2p_nertz.audit.replay import Replay, load
from p2p_nertz.logfile.format import RecordKind
from p2p_nertz.logfile.store import read_log
from p2p_nertz.protocol.envelope import SHARES_VERSION
from p2p_nertz.protocol.spec import SPEC_NOTE, Deal, GameSpec
from p2p_nertz.testing.said import first_line, reap
from p2p_nertz.web.replay import ReplayStepper

DEMO_TIMEOUT = 120.0


def test_deal_choices_are_the_deals_of_the_spec() -> None:
    # (cli/args.py spells them out so that `nertz --help` imports no protocol code.)
    assert tuple(d.value for d in Deal) == DEALS


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_demo_deal_shuffle_plays_agrees_audits_and_replays(tmp_path: Path) -> None:
    work = tmp_path / "demo"
    done = nertz(
        "demo",
        "--deal",
        "shuffle",
        "--players",
        "3",
        "--rounds",
        "1",
        "--speed",
        "10",
        "--seed",
        "7",
        "--dir",
        str(work),
        timeout=DEMO_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "deal shuffle" in done.stdout  # (said in the game's line)
    assert "all 3 nodes agree on the game's digest:\n  " in done.stdout, done.stdout
    assert "Traceback" not in done.stderr
    # The option reached the game: the spec the nodes played, and each log's first record.
    spec = GameSpec.from_wire((work / "game.spec").read_bytes())
    assert spec.deal is Deal.SHUFFLE and spec.wire_version == SHARES_VERSION
    logs = sorted(str(p) for p in work.glob("p*.log"))
    assert len(logs) == 3

    audit = nertz("audit", "--json", *logs, timeout=60.0)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    lines = [json.loads(line) for line in audit.stdout.splitlines()]
    verdicts = [line for line in lines if line.get("event") == "verdict"]
    assert len(verdicts) == 1 and verdicts[0]["valid"] is True, audit.stdout
    assert verdicts[0]["errors"] == 0 and verdicts[0]["finished"] is True
    assert verdicts[0]["deal"] == "shuffle"
    text = nertz("audit", *logs, timeout=60.0)
    assert text.returncode == 0 and "\ndeal: shuffle " in text.stdout, text.stdout
    assert not [line for line in lines if line.get("event") == "finding"], audit.stdout

    replay = nertz("replay", "--text", logs[0], timeout=60.0)
    assert replay.returncode == 0, replay.stderr
    assert " deck_stage" in replay.stdout and " deck_open" in replay.stdout  # the shuffle's
    assert " result " in replay.stdout and "Traceback" not in replay.stderr
    # The stepper of `nertz replay` and of `replay --web` draws every step of it.
    loaded = load([LogSource.from_bytes(Path(p).name, Path(p).read_bytes()) for p in logs])
    assert isinstance(loaded, Replay) and loaded.spec == spec
    stepped = io.StringIO()
    interact(loaded, io.StringIO("end\nq\n"), stepped)
    assert f"step {len(loaded)}/{len(loaded)}: " in stepped.getvalue()
    stepper = ReplayStepper(loaded)
    for _ in range(len(loaded)):
        json.dumps(stepper.view())
        stepper.key("n")
    assert stepper.at == len(loaded) and stepper.view()["phase"] == "over"


@pytest.mark.parametrize(
    "command",
    [
        ("demo", "--players", "3"),
        ("host", "--players", "2"),
        ("play", "--bots", "1"),
    ],
)
def test_a_bad_deal_is_a_usage_error_in_one_line(command: tuple[str, ...]) -> None:
    done = nertz(*command, "--deal", "cards")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "--deal" in lines[0] and "'cards'" in lines[0] and "shuffle" in lines[0], lines[0]
    assert done.stdout == ""


def test_match_has_no_deal_to_choose() -> None:
    # An in-process match has no peers, so no deal protocol: the option is not offered.
    done = nertz("match", "--deal", "shuffle")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "--deal" in done.stderr


@pytest.fixture
def beacon_port() -> Iterator[int]:
    """The UDP port the test's host beacons to and its commands listen on, held bound for the
    test (``held_udp_port``): a port picked and let go could be another test's by then."""
    with held_udp_port() as port:
        yield port


def _events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.mark.slow
@pytest.mark.timeout(150)
def test_host_deal_shuffle_reaches_the_guest_through_the_lobby(tmp_path: Path) -> None:
    """``nertz host --deal shuffle`` and ``nertz join``: the guest is shown the deal with the
    rules, both start the same shuffle game, agree at its end, and its logs audit clean."""
    ann, bob = tmp_path / "ann", tmp_path / "bob"
    for home in (ann, bob):
        make_key(home / "key")
    logs = tmp_path / "logs"
    host = cli_popen(
        [sys.executable, "-m", "cli", "host", "--name", "Ann", "--bot", "greedy",
         "--players", "2", "--log-dir", str(logs), "--json", "--rounds", "1",
         "--deal", "shuffle"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, NERTZ_HOME=str(ann)), stdin=subprocess.DEVNULL,
    )  # fmt: skip
    guest: subprocess.Popen[str] | None = None
    try:
        assert host.stdout is not None
        lobby = json.loads(first_line(host, "the host"))  # printed once the lobby is bound
        assert lobby["event"] == "lobby", lobby
        guest = cli_popen(
            [sys.executable, "-m", "cli", "join", "--name", "Bob", "--bot", "greedy", "--peer",
             lobby["endpoint"].removeprefix("tcp://"), "--json", "--log-dir", str(logs)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, NERTZ_HOME=str(bob)), stdin=subprocess.DEVNULL,
        )  # fmt: skip
        out, err = guest.communicate(timeout=120)
        rest, host_err = host.communicate(timeout=120)
    finally:
        for p in (host, guest):
            if p is not None and p.poll() is None:
                p.kill()
    assert host.returncode == 0, host_err
    assert guest.returncode == 0, err
    joined, hosted = _events(out), _events(rest)
    (rules,) = [e for e in joined if e["event"] == "rules"]
    assert rules["deal"] == "shuffle", rules
    starts = [next(e for e in s if e["event"] == "start") for s in (joined, hosted)]
    assert [s["deal"] for s in starts] == ["shuffle", "shuffle"]
    assert starts[0]["game_id"] == starts[1]["game_id"]
    finals = [next(e for e in s if e["event"] == "final") for s in (joined, hosted)]
    assert finals[0]["digest"] == finals[1]["digest"] and all(f["over"] for f in finals)
    audit = nertz("audit", "--json", *(s["log"] for s in starts), timeout=60.0)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    (verdict,) = [e for e in _events(audit.stdout) if e["event"] == "verdict"]
    assert verdict["valid"] is True and verdict["errors"] == 0, verdict


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_play_bots_deal_shuffle_is_followed_by_watch(tmp_path: Path) -> None:
    """``nertz play --bots 2 --deal shuffle --watcher``: the game is a shuffle game, and
    ``nertz watch`` follows it (the spectator folds a shuffle game's events too)."""
    # The watcher's port, held from its pick until the end (the watcher binds it meanwhile):
    # picked and let go, another process could take it before the watcher bound it.
    with held_port() as port:
        endpoint = f"tcp://127.0.0.1:{port}"
        spy = tmp_path / "spy.key"
        make_key(spy)
        address = f"{endpoint}#{load_identity(spy).peer_id.hex()}"
        game = tmp_path / "game"
        args = ["play", "--bots", "2", "--speed", "10", "--seed", "12", "--rounds", "1"]
        player = Tty([*args, "--deal", "shuffle", "--dir", str(game), "--watcher", address])
        player.wait("[n] Nerts")
        spec = GameSpec.from_wire((game / "game.spec").read_bytes())
        assert spec.deal is Deal.SHUFFLE
        # The spectator is given the game by the player's log (a game of `nertz host` or `join`
        # has no spec file): the log's first record is the spec.
        assert _spec_of_log(game / "you.log") == spec
        log = str(game / "you.log")
        watcher = Tty(["watch", "--spec", log, "--key", str(spy), "--bind", endpoint])
        text = watcher.wait(lambda t: re.search(r"^\d bot1 ", t, re.M) is not None)
        assert "spectator" in watcher.line(0)
        for name in ("you", "bot1", "bot2"):
            row = re.search(rf"^\d {name} +N +\d+ .*$\n^   N \S+ S \d+ +1:", text, re.M)
            assert row, text
        # The bots play on, their cards opened by the table's shares: the lake fills in.
        watched_to_the_leave(player, watcher)


def _spec_of_log(path: Path) -> GameSpec:
    """The game spec a log names in its first record (docs/log-format.md §5)."""
    with read_log(path) as reader:
        first = next(iter(reader))
    assert first.kind is RecordKind.NOTE and first.name == SPEC_NOTE, first
    return GameSpec.from_wire(first.data)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_play_lobby_deal_shuffle_shows_it_and_its_bots_play_it(tmp_path: Path) -> None:
    """``nertz play --deal shuffle``: the table created in the lobby shows the deal with the
    rules, the bot it adds sits down for it, and the game started is a shuffle game."""
    key = tmp_path / "dee.key"
    make_key(key)
    logs = tmp_path / "logs"
    tty = Tty(["play", "--key", str(key), "--name", "Dee", "--log-dir", str(logs),
               "--rounds", "1", "--deal", "shuffle"])  # fmt: skip
    tty.wait("c creates a table here")
    tty.send("c")
    text = tty.wait("your table at 127.0.0.1:")
    assert "variants: shuffle deal" in text, text
    tty.send("b")
    tty.wait("add a bot:")
    tty.send("\r")
    tty.wait("everybody is ready: s starts")
    tty.send("s")
    tty.wait("[n] Nerts")  # (the shuffle deal, on a loaded machine: Tty.wait's own guard)
    tty.child.sendintr()  # leave the game cleanly; the bot finishes by itself
    assert tty.finish(60) == 128 + 2
    assert b"Traceback" not in tty.raw
    specs = [_spec_of_log(log) for log in sorted(logs.glob("*.log"))]
    assert len(specs) == 2 and all(s.deal is Deal.SHUFFLE for s in specs), specs
    assert specs[0] == specs[1]


@pytest.mark.timeout(150)  # (five processes one after another: CI's load needed more than 60 s)
def test_games_shows_a_tables_deal_from_its_beacon(tmp_path: Path, beacon_port: int) -> None:
    """``nertz games`` lists a ``host --deal shuffle`` table with its deal (docs/lobby.md §2: the
    beacon's deal byte), beacons sent to 127.0.0.1 (the same path as a LAN's broadcast)."""
    ann = tmp_path / "ann"
    make_key(ann / "key")
    host = cli_popen(
        [sys.executable, "-m", "cli", "host", "--name", "Ann", "--bot", "greedy",
         "--players", "2", "--json", "--deal", "shuffle", "--discover", "127.0.0.1",
         "--beacon-port", str(beacon_port), "--log-dir", str(tmp_path / "logs")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, NERTZ_HOME=str(ann)), stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert host.stdout is not None
        lobby = json.loads(first_line(host, "the host"))  # printed once the lobby is bound
        assert lobby["event"] == "lobby", lobby
        listed = nertz(
            "games", "--discover", "127.0.0.1", "--beacon-port", str(beacon_port), "--json",
            "--timeout", "6",  # (the host beacons every second; a busy one may miss some)
        )  # fmt: skip
        text = nertz(
            "games", "--discover", "127.0.0.1", "--beacon-port", str(beacon_port),
            "--timeout", "6",  # (the host beacons every second; a busy one may miss some)
        )  # fmt: skip
        # `join --discover` says the deal of the table it found, before it sits down.
        bob = tmp_path / "bob"
        make_key(bob / "key")
        guest = cli_popen(
            [sys.executable, "-m", "cli", "join", "--name", "Bob", "--bot", "greedy",
             "--discover", "127.0.0.1", "--beacon-port", str(beacon_port), "--json",
             "--log-dir", str(tmp_path / "logs")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, NERTZ_HOME=str(bob)), stdin=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            found = json_lines_until(guest, "found")[-1]
        finally:
            reap(guest, "the guest")
    finally:
        reap(host, "the host")
    assert found["deal"] == "shuffle", found
    assert listed.returncode == 0, listed.stderr
    (game,) = [e for e in _events(listed.stdout) if e["event"] == "game"]
    assert game["name"] == "Ann" and game["deal"] == "shuffle", game
    assert text.returncode == 0 and "shuffle deal" in text.stdout, text.stdout


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_play_lobby_lists_a_tables_deal_heard_and_asked(tmp_path: Path, beacon_port: int) -> None:
    """``nertz play``'s list of tables names a ``host --deal shuffle`` table's deal as
    ``nertz games`` does: from its beacon (``--discover``, beacons sent to 127.0.0.1), and for
    a ``--peer`` table once its ``table`` is seen (after joining it)."""
    ann = tmp_path / "ann"
    make_key(ann / "key")
    dee = tmp_path / "dee.key"
    make_key(dee)
    logs = str(tmp_path / "logs")
    host = cli_popen(
        [sys.executable, "-m", "cli", "host", "--name", "Ann", "--bot", "greedy",
         "--players", "2", "--json", "--deal", "shuffle", "--discover", "127.0.0.1",
         "--beacon-port", str(beacon_port), "--log-dir", logs],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, NERTZ_HOME=str(ann)), stdin=subprocess.DEVNULL,
    )  # fmt: skip
    ttys: list[Tty] = []
    try:
        assert host.stdout is not None
        lobby = json.loads(first_line(host, "the host"))  # printed once the lobby is bound
        assert lobby["event"] == "lobby", lobby
        argv = ["play", "--key", str(dee), "--name", "Dee", "--log-dir", logs]
        heard = Tty([*argv, "--discover", "127.0.0.1", "--beacon-port", str(beacon_port)])
        ttys.append(heard)
        text = heard.wait("Ann's table")  # (two programs' start-up: Tty.wait's own guard)
        assert re.search(r"1  Ann's table · shuffle +\w{4}-", text), text
        heard.child.kill(9)
        where = lobby["endpoint"].removeprefix("tcp://")  # (the port it bound)
        asked = Tty([*argv, "--peer", where])
        ttys.append(asked)
        text = asked.wait(where)
        assert "not asked yet" in text and "shuffle" not in text, text  # (nothing told yet)
        asked.send("\r")  # join it: its `table` names the deal
        text = asked.wait(lambda t: re.search(r"1  Ann's table · shuffle +\w{4}-", t) is not None)
        assert "variants: shuffle deal" in text, text
    finally:
        for tty in ttys:
            tty.child.kill(9)
        host.kill()
        host.communicate()
    assert all(b"Traceback" not in tty.raw for tty in ttys)
