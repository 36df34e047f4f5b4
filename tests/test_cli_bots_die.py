"""The bots a command starts die with it, however it ends, and its person's resume brings
them back (session 31: ``nertz play --bots`` killed with SIGKILL left its bots playing alone;
session 32: ``nertz host --bots`` resumed did not start its bots again; session 35: from the
game's directory moved whole, and never a bot that played started afresh without its log).

Real processes: a ``nertz play --bots 1`` at a pseudo-terminal, killed with SIGKILL once the
round is dealt; its bot stops by itself (cli/bots.py: a pipe it watches, whose other end only
the table held), its log whole; ``nertz resume`` of the person's log is refused while a
process still writes the bot's log (one left running by an earlier version), and otherwise
starts the bot again from its log, and the game goes on.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio
from cli_helpers import (
    at_end_of_test,
    cli_popen,
    descendants,
    held_ports,
    json_lines_until,
    kill_tree,
    make_key,
)

from cli.bots import TableBot, last_line, note_bots
from cli.keyfile import keep_key
from cli.places import game_log_name
from p2p_nertz.audit import LogSource, audit
from p2p_nertz.errors import NertzError
from p2p_nertz.logfile import RecordKind, read_log
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.node import PeerNode
from tests.test_cli_play import Tty

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

_GONE = 60.0  # seconds the bots get to see their table gone (generous for a loaded machine)
_PLAYS = 90.0  # seconds a resumed bot gets to sign its next event


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, not reaped by whoever adopted it, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pids: set[int], timeout: float) -> set[int]:
    """Poll until none of ``pids`` runs (at most ``timeout``); those still running."""
    deadline = time.monotonic() + timeout
    while (left := {p for p in pids if _alive(p)}) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def _kill_left(pids: set[int]) -> None:
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_play_bots_stop_with_a_killed_table_and_its_resume_starts_them_again(
    tmp_path: Path,
) -> None:
    game = tmp_path / "game"
    table = Tty(["play", "--bots", "1", "--speed", "10", "--seed", "31", "--rounds", "1",
                 "--dir", str(game)])  # fmt: skip
    table.wait("is dealt — go!", timeout=90)
    bots = descendants(table.child.pid)
    assert bots, "the quick game started no bot process"
    try:
        os.kill(table.child.pid, signal.SIGKILL)
        assert table.finish(30) == 128 + signal.SIGKILL
        left = _wait_gone(bots, _GONE)
        assert not left, f"bots {sorted(left)} play on alone after their table was killed"
    finally:
        _kill_left(bots)
    said = last_line(game / "bot1.err") or ""
    assert "the command that started it has ended" in said, said
    assert "Traceback" not in (game / "bot1.err").read_text()
    # The person moves the game's directory (it was --dir's): its bots come back from there.
    game = game.rename(tmp_path / "moved")
    you, bot_log = game / "you.log", game / "bot1.log"
    size = bot_log.stat().st_size

    # The bot's log not beside the person's (moved without it): the bot has played, so it
    # cannot start afresh (it would sign its moves anew, and be dropped as a cheat): said in
    # one line, nothing started (session 35: it started a fresh bot1).
    aside = bot_log.rename(tmp_path / "bot1.log")
    refused = Tty(["resume", str(you)])
    status = refused.finish(60)
    text = refused.raw.decode(errors="replace")
    assert status != 0 and "bot1 has played in this game and its log is not beside" in text, text
    assert not bot_log.exists() and "Traceback" not in text
    aside.rename(bot_log)

    # A process still writing the bot's log (a bot an earlier version left running): the
    # resume says so in one line and starts nothing.
    with bot_log.open("rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        refused = Tty(["resume", str(you)])
        status = refused.finish(60)
    text = refused.raw.decode(errors="replace")
    assert status != 0 and "bot1 of this game still plays alone" in text, text[-600:]
    assert f"(pid {os.getpid()})" in text and "Traceback" not in text
    assert bot_log.stat().st_size == size

    # Without it: the resume starts the bot again from its log, and it plays on.
    resumed = Tty(["resume", str(you)])
    resumed.wait("go!", timeout=90)
    deadline = time.monotonic() + _PLAYS
    while bot_log.stat().st_size == size and time.monotonic() < deadline:
        resumed.pump(0.2)
    assert bot_log.stat().st_size > size, f"the resumed bot signed nothing:\n{resumed.text()}"
    again = descendants(resumed.child.pid)
    assert again and not again & bots
    resumed.send("q")
    resumed.wait("leave the game?")
    resumed.send("y")
    assert resumed.finish(60) == 0
    left = _wait_gone(again, 30)  # (stopped by the table as it left)
    _kill_left(left)
    assert not left


def _grows(path: Path, size: int, timeout: float) -> bool:
    """Poll until the file at ``path`` is larger than ``size`` bytes (at most ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.stat().st_size > size:
            return True
        time.sleep(0.1)
    return False


def _started(argv: list[str]) -> subprocess.Popen[str]:
    proc = cli_popen(
        [sys.executable, "-m", "cli", *argv],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip

    def stop() -> None:
        kill_tree(proc.pid)
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()

    at_end_of_test(stop)
    return proc


def test_host_bots_stop_with_a_killed_host_and_its_resume_starts_them_again(
    tmp_path: Path,
) -> None:
    """``nertz host --bots``: the bots it seated are named beside its log (``LOG.bots``, as
    ``play --bots`` does), so ``nertz resume`` of the host's log starts them again from their
    own logs (which name the game: a lobby writes no spec file). The host plays as a bot here
    (``--bot``), which needs no terminal; both at speed 1, so the round is not over first."""
    key, logs = tmp_path / "ann.key", tmp_path / "logs"
    make_key(key)
    host = _started(["host", "--key", str(key), "--name", "Ann", "--bot", "greedy",
                     "--speed", "1", "--bots", "1", "--bot-speed", "1", "--players", "2",
                     "--rounds", "1", "--json", "--log-dir", str(logs)])  # fmt: skip
    start = json_lines_until(host, "start")[-1]
    you = Path(start["log"])
    note = json.loads(you.with_name(you.name + ".bots").read_text())
    assert [(b["seat"], b["name"], b["strategy"], b["speed"]) for b in note["bots"]] == [
        (start["players"].index("bot1"), "bot1", "greedy", "1")
    ], note
    bot_log = logs / f"{note['bots'][0]['stem']}.log"
    assert _grows(bot_log, 0, _PLAYS), "the host's bot wrote no log"
    assert _grows(bot_log, bot_log.stat().st_size, _PLAYS), "the host's bot signed nothing"
    bots = descendants(host.pid)
    assert bots, "the host started no bot process"
    try:
        host.kill()
        assert host.wait(30) == -signal.SIGKILL
        left = _wait_gone(bots, _GONE)
        assert not left, f"bots {sorted(left)} play on alone after their host was killed"
    finally:
        _kill_left(bots)
    size = bot_log.stat().st_size

    resumed = _started(
        ["resume", str(you), "--key", str(key), "--bot", "greedy", "--speed", "1", "--json"]
    )
    assert _grows(bot_log, size, _PLAYS), "the resumed host's bot signed nothing"
    again = descendants(resumed.pid)
    assert again and not again & bots
    resumed.send_signal(signal.SIGTERM)  # (it leaves, and stops its bots as it goes)
    resumed.wait(60)
    left = _wait_gone(again, 30)
    _kill_left(left)
    assert not left
    assert "Traceback" not in bot_log.with_suffix(".err").read_text()


def _person_log_alone(log: Path, person: Identity, bot: Identity, ports: list[int]) -> GameSpec:
    """The person's log of a game of two whose table stopped before its bot began: the
    person's node ran (its log has the game and its join) and the bot's never did."""
    spec = GameSpec.create(
        [(person.peer_id, "Ann"), (bot.peer_id, "bot1")],
        Rules(target=None, rounds=1),
        b"bot-never-signed",
    )
    node = PeerNode(person, spec, log, bind=f"tcp://127.0.0.1:{ports[0]}", linger=0.0)

    async def until_joined() -> None:
        async with trio.open_nursery() as nursery:
            # (Started: its join is in its log, written before it is sent.)
            await nursery.start(node.run, {bot.peer_id: f"tcp://127.0.0.1:{ports[1]}"})
            nursery.cancel_scope.cancel()

    trio.run(until_joined)
    return spec


def _signed_play(log: Path) -> bool:
    """Whether ``log`` (a node's, being written) holds a card move or claim its node signed:
    the round was dealt with every member, and it plays."""
    try:
        with read_log(log) as reader:
            records = list(reader)
    except (OSError, NertzError):  # (not there yet)
        return False
    for record in records:
        if record.kind is RecordKind.SENT_EVENT:
            try:
                kind = decode_message(record.data).kind
            except (NertzError, ValueError):
                continue  # (a record being written: read again)
            if kind in (Kind.MOVE, Kind.CLAIM):
                return True
    return False


def test_host_bots_resumed_a_bot_that_never_signed_starts_fresh(tmp_path: Path) -> None:
    """The table stopped (a host killed) before its bot made its log: ``nertz resume`` of the
    person's log started the bot from a log that is not there, and it failed into its
    ``.err`` (the person's node waited on a member that never came). A bot with no log never
    signed in the game, so it starts fresh from the person's log, and the game is played
    (the bot signs its moves; the person then leaves: the game's length is not this test's)."""
    key, logs = tmp_path / "ann.key", tmp_path / "logs"
    logs.mkdir()
    person, bot = make_key(key), Identity.generate()
    keep_key(bot)  # (a lobby's bot key is kept in the key store: resume finds it there)
    you = logs / "you.log"
    with held_ports(2) as ports:
        spec = _person_log_alone(you, person, bot, ports)
        stem = game_log_name(spec.game_id, bot.fingerprint).removesuffix(".log")
        note_bots(you, spec, [TableBot(spec.seat_of(bot.peer_id), "bot1", stem, "greedy", "10")])
        resumed = _started(
            ["resume", str(you), "--key", str(key), "--bot", "greedy", "--speed", "10", "--json"]
        )
        bot_log = logs / f"{stem}.log"
        deadline = time.monotonic() + _PLAYS
        while not _signed_play(bot_log) and resumed.poll() is None:
            assert time.monotonic() < deadline, "the bot signed no move"
            time.sleep(0.1)
        # (Over already, or playing: the person leaves, and its bot stops with it.)
        resumed.send_signal(signal.SIGTERM)
        said = bot_log.with_suffix(".err")  # (the resume starts the bot with it)
        assert resumed.wait(60) in (0, 128 + signal.SIGTERM), said.read_text()
    assert _signed_play(bot_log), bot_log.with_suffix(".err").read_text()
    err = bot_log.with_suffix(".err").read_text()
    assert "Traceback" not in err and "error" not in err, err
    report = audit([LogSource.from_bytes(p.name, p.read_bytes()) for p in (you, bot_log)])
    assert report.valid, report.violations


def test_resume_without_the_bots_note_says_which_bots_do_not_start(tmp_path: Path) -> None:
    """``nertz resume`` of the person's log with no ``LOG.bots`` beside it (deleted, or a
    log copied without it) started no bot and said nothing: the game waited for members that
    never came. A member whose key is kept on this machine is a bot a command started here:
    the resume names it, what is missing and what to do, in one line, and plays on."""
    key, logs = tmp_path / "ann.key", tmp_path / "logs"
    logs.mkdir()
    person, bot = make_key(key), Identity.generate()
    keep_key(bot)
    you = logs / "you.log"
    with held_ports(2) as ports:
        _person_log_alone(you, person, bot, ports)
        resumed = _started(["resume", str(you), "--key", str(key), "--bot", "greedy", "--json"])
        said = json_lines_until(resumed, "bots_not_started")
    assert [line["event"] for line in said][-2:] == ["resume", "bots_not_started"], said
    line = said[-1]["line"]
    assert line.startswith(
        "not started with you: bot1 (bot of this game, key kept on this machine)"
    )
    assert f"no {str(you) + '.bots'!r} says how they played" in line, line
    assert line.endswith("nertz resume LOG --bot STRATEGY") and "\n" not in line


def _log_alone(log: Path, who: Identity, spec: GameSpec, ports: list[int]) -> None:
    """``who``'s log of the game ``spec`` whose table stopped before the others began: its
    node ran (its log has the game and its join), theirs never did."""
    pairs = zip(spec.members, ports, strict=True)
    endpoints = {m.peer_id: f"tcp://127.0.0.1:{port}" for m, port in pairs}
    node = PeerNode(who, spec, log, bind=endpoints.pop(who.peer_id), linger=0.0)

    async def until_joined() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(node.run, endpoints)
            nursery.cancel_scope.cancel()

    trio.run(until_joined)


@pytest.mark.parametrize("noted", [False, True])
def test_the_resume_of_a_bots_log_names_the_other_bots_alone(tmp_path: Path, noted: bool) -> None:
    """``nertz resume`` of a quick game's bot's log (no note beside it: the note is beside the
    person's log, or gone) named the person among the bots not started, and told to start it
    with ``--bot`` (session 36): it names the other bots alone, and says what starts them,
    the person's resume when its note is there."""
    logs = tmp_path / "logs"
    logs.mkdir()
    person, bot1, bot2 = Identity.generate(), Identity.generate(), Identity.generate()
    keep_key(person, person=True)  # (as `nertz play --bots` keeps them)
    keep_key(bot1)
    keep_key(bot2)
    spec = GameSpec.create(
        [(person.peer_id, "Ann"), (bot1.peer_id, "bot1"), (bot2.peer_id, "bot2")],
        Rules(target=None, rounds=1),
        b"a-bots-log-resumed",
    )
    you, bots_log = logs / "you.log", logs / "bot1.log"
    if noted:
        bots = [(bot1, "bot1"), (bot2, "bot2")]
        table = [TableBot(spec.seat_of(b.peer_id), n, n, "greedy", "10") for b, n in bots]
        note_bots(you, spec, table)
    with held_ports(3) as ports:
        _log_alone(bots_log, bot1, spec, ports)
        resumed = _started(["resume", str(bots_log), "--bot", "greedy", "--json"])
        said = json_lines_until(resumed, "bots_not_started")[-1]["line"]
    assert said.startswith("not started with you: bot2 (bot of this game"), said
    assert "Ann" not in said and "\n" not in said, said
    if noted:  # (the person's resume starts them: said, with the command)
        assert said.endswith(f"starts them: nertz resume {you}"), said
    else:
        assert said.endswith("start each from its log: nertz resume LOG --bot STRATEGY"), said


def test_the_bots_note_or_no_kept_key_says_nothing_of_bots_not_started(tmp_path: Path) -> None:
    # (The words' function alone, no process: when a note names the bots, or no other
    # member's key is on this machine (people resume their own logs), nothing is said.)
    from cli.bots import unnoted_bots_words

    person, bot, other = Identity.generate(), Identity.generate(), Identity.generate()
    spec = GameSpec.create(
        [(person.peer_id, "Ann"), (bot.peer_id, "bot1"), (other.peer_id, "Bob")],
        Rules(target=None, rounds=1),
        b"bots-noted-or-not",
    )
    you = tmp_path / "you.log"
    assert unnoted_bots_words(you, spec, person.peer_id) is None  # (no key kept: people)
    keep_key(bot)
    keep_key(person, person=True)  # (a quick game keeps its person's key apart: no bot's)
    words = unnoted_bots_words(you, spec, person.peer_id)
    assert words is not None and words.startswith("not started with you: bot1 (bot of"), words
    note_bots(you, spec, [TableBot(1, "bot1", "bot1", "greedy", "10")])
    assert unnoted_bots_words(you, spec, person.peer_id) is None
