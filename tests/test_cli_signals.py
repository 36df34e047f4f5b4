"""Every long-running ``nertz`` command answers SIGINT and SIGTERM alike whenever they come:
right after it starts, during its start-up (a lobby, a node waiting for its peers, a page
waiting for its browser) and in play, real processes each time.

The status is the signal's, 128 + N (README, *Exit statuses*; ``cli.args.signal_status``):
130 for SIGINT, 143 for SIGTERM. Session 36's ``nertz watch`` exited 0 or 130 on a SIGTERM
depending on whether its own signal receiver was running yet (a forked child met the early
one more often); ``nertz play``'s lobby and table said 0 or 1 for a signal that came before
the game. A signal that comes before the interpreter has set any handler ends the process
by the signal itself (a status of -N here), which a shell shows as the same 128 + N: taken
as the same answer at that moment only. Never a traceback, and nothing the command started
(bots, nodes) is left running.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from cli_helpers import (
    at_end_of_test,
    foreground,
    kill_tree,
    lobby_table_with_a_bot,
    lobby_where,
    make_key,
    nertz_process,
    node_game,
)
from trio_websocket import open_websocket_url

from cli.keyfile import write_key
from cli.play import HANDOVER_PAUSED
from p2p_nertz.logfile import RecordKind, read_log
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.signals import signal_status
from p2p_nertz.testing.said import lines, reap
from tests.test_cli_play import Tty

pytestmark = pytest.mark.timeout(240)

SIGNALS = [signal.SIGINT, signal.SIGTERM]
SIGNAL_IDS = ["SIGINT", "SIGTERM"]

#: A bound against a hang, not a timing: a command leaving cleanly (its node's leave, its
#: bots stopped after their patience) on a machine at a load of 40.
ENDS_WITHIN = 90.0

_RULES = Rules(target=None, rounds=1)


def _session(pid: int) -> set[int]:
    """The live processes of the session ``pid`` leads (the command, and what it started)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == pid and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def _start(argv: list[str], signum: int, home: Path, **kw: object) -> subprocess.Popen[str]:
    """``nertz argv…`` in a session of its own, its output piped: for SIGINT as a terminal
    starts a foreground command (SIGINT not ignored, :func:`cli_helpers.foreground`), for
    SIGTERM forked by the fork server as the suite starts commands."""
    env = dict(os.environ, NERTZ_HOME=str(home))
    options: dict[str, object] = {
        "stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True,
        "stdin": subprocess.DEVNULL, "env": env, "start_new_session": True, **kw,
    }  # fmt: skip
    if signum == signal.SIGINT:
        proc = subprocess.Popen(foreground(*argv), **options)  # type: ignore[call-overload]
    else:
        proc = nertz_process(*argv, **options)
    at_end_of_test(lambda: _reap(proc))
    return proc


def _reap(proc: subprocess.Popen[str]) -> None:
    """Kill what is left of ``proc``'s session, and ``proc``; close its pipes."""
    for pid in _session(proc.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if proc.poll() is None:
        kill_tree(proc.pid)
    with contextlib.suppress(subprocess.TimeoutExpired, ValueError, OSError):
        proc.communicate(timeout=10)


def _send(pid: int, signum: int) -> None:
    """SIGINT as Ctrl-C sends it (to the whole foreground group: the command and its
    children); SIGTERM as ``kill`` does (to the command alone)."""
    if signum == signal.SIGINT:
        os.killpg(pid, signum)
    else:
        os.kill(pid, signum)


def _before_nertz(said: str) -> bool:
    """Whether a Ctrl-C ended the process before any of nertz's code ran: while CPython itself
    started (its ``site`` import: its own fatal-error report) or while ``python -m cli`` read
    the package and its ``__main__`` (frames of the import machinery alone), status 1. Nothing
    a program can answer; ``cli/__main__.py`` answers from its first line on (a load of 20
    stretches that start: 4 of 10 runs of the ``at once`` cases met it here)."""
    if "KeyboardInterrupt" not in said:
        return False
    ours = re.search(r'File "[^"]*/(cli|p2p_nertz)/', said)
    return said.startswith("Fatal Python error: init_") or ours is None


def _answers(
    proc: subprocess.Popen[str],
    signum: int,
    *,
    at_once: bool = False,
    then: Callable[[], None] = lambda: None,
) -> str:
    """Signal ``proc`` (and ``then`` do what follows the signal) and check its answer: the
    signal's status (or, ``at_once``, its end by the signal itself), no traceback, and nothing
    of its session left; what it said on stderr."""
    _send(proc.pid, signum)
    then()
    out, err = proc.communicate(timeout=ENDS_WITHIN)
    if at_once and proc.returncode == 1 and _before_nertz(err):
        pass
    else:
        statuses = {signal_status(signum)} | ({-signum} if at_once else set())
        assert proc.returncode in statuses, (proc.returncode, out[-600:], err[-1500:])
        assert "Traceback" not in err and "Exception" not in err, err
    deadline = time.monotonic() + ENDS_WITHIN  # (its children reaped by init: a poll)
    while _session(proc.pid):
        assert time.monotonic() < deadline, f"left running: {_session(proc.pid)}"
        time.sleep(0.05)
    return err


def _line_with(
    proc: subprocess.Popen[str], test: Callable[[str], bool], what: str, *, stderr: bool = False
) -> str:
    """Read ``proc``'s stdout (its stderr with ``stderr``) up to the first line ``test`` takes,
    each wait bounded (:func:`~p2p_nertz.testing.said.lines`); failing at its end."""
    for line in lines(proc, what, ENDS_WITHIN, stderr=stderr):
        if test(line):
            return line
    other = proc.stdout if stderr else proc.stderr
    end = "" if other is None else proc.communicate(timeout=ENDS_WITHIN)[int(not stderr)]
    raise AssertionError(f"it ended before {what}: {end[-1500:]}")


def _event(name: str) -> Callable[[str], bool]:
    return lambda line: line.startswith("{") and json.loads(line).get("event") == name


def _sent(log: Path) -> list[Kind]:
    """The kinds of the events ``log`` says its node signed (mid-write: read leniently)."""
    with contextlib.suppress(OSError, ValueError):
        return [
            decode_message(r.data).kind for r in read_log(log) if r.kind is RecordKind.SENT_EVENT
        ]
    return []


def _until(check: Callable[[], bool], what: str, proc: subprocess.Popen[str]) -> None:
    """Poll ``check`` (a file another process writes: no event to wait on) until it holds."""
    deadline = time.monotonic() + ENDS_WITHIN
    while not check():
        assert proc.poll() is None, f"it ended before {what}"
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.05)


# -- nertz demo ----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["at once", "starting", "playing"])
@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_demo_answers_a_signal_alike_whenever_it_comes(
    tmp_path: Path, signum: int, moment: str
) -> None:
    argv = ["demo", "--players", "2", "--speed", "1", "--rounds", "1", "--dir", str(tmp_path / "d")]
    proc = _start(argv, signum, tmp_path)
    if moment == "starting":  # (its game named, its nodes not yet listed)
        _line_with(proc, lambda line: line.startswith("game "), "naming its game")
    elif moment == "playing":
        _line_with(proc, lambda line: "to the lake so far" in line, "its game went on")
    err = _answers(proc, signum, at_once=moment == "at once")
    if moment != "at once":
        assert err.splitlines()[-1] == "nertz demo: interrupted", err


# -- nertz node ----------------------------------------------------------------------------------


@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_a_node_answers_a_signal_at_once_and_while_it_waits_for_its_peers(
    tmp_path: Path, signum: int
) -> None:
    ids = [Identity.generate(derive_seed(b"signals-node", n)) for n in range(2)]
    spec = GameSpec.create([(i.peer_id, f"P{n}") for n, i in enumerate(ids)], _RULES, b"s")
    (tmp_path / "game.spec").write_bytes(spec.to_wire())
    write_key(tmp_path / "0.key", ids[0])
    argv = ["node", "--key", str(tmp_path / "0.key"), "--spec", str(tmp_path / "game.spec"),
            "--bind", "tcp://127.0.0.1:0", "--log", str(tmp_path / "n.log"), "--json"]  # fmt: skip
    at_once = _start(argv, signum, tmp_path)
    _answers(at_once, signum, at_once=True)
    # With its peers to come on stdin: it bound and waits for them (a blocking read).
    waiting = _start([*argv, "--peers-on-stdin"], signum, tmp_path, stdin=subprocess.PIPE)
    _line_with(waiting, _event("bound"), "binding")
    _answers(waiting, signum)
    # With its peers given, and none answering: its node runs, the game not started.
    alone = _start([*argv, "--peer", "1=tcp://127.0.0.1:9"], signum, tmp_path)
    _until(lambda: Kind.JOIN in _sent(tmp_path / "n.log"), "signing its join", alone)
    assert _answers(alone, signum).splitlines()[-1].endswith(f"signal {signum}")


@pytest.mark.slow
@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_a_node_in_play_answers_a_signal_with_a_leave(tmp_path: Path, signum: int) -> None:
    _, procs, logs = node_game(
        tmp_path, ["Ann", "Bob"], _RULES, keys=b"signals-play", salt=b"p",
        args=lambda n: ["--progress", "--speed", "1"],
    )  # fmt: skip
    try:
        _line_with(procs[0], _event("lake"), "a card to the lake")
        procs[0].send_signal(signum)
        out, err = procs[0].communicate(timeout=ENDS_WITHIN)
        assert procs[0].returncode == signal_status(signum), (out[-400:], err)
        assert "Traceback" not in err
        assert err.splitlines()[-1] == f"nertz node: left the game on signal {signum}", err
        assert _sent(logs[0])[-1] is Kind.LEAVE
    finally:
        for proc in procs:
            reap(proc)


# -- nertz host, join, bot ---------------------------------------------------------------------


@pytest.mark.parametrize("moment", ["at once", "lobby", "playing"])
@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_host_answers_a_signal_alike_whenever_it_comes(
    tmp_path: Path, signum: int, moment: str
) -> None:
    make_key(tmp_path / "key")
    players = "2" if moment == "playing" else "3"
    argv = ["host", "--name", "Ann", "--bot", "greedy", "--bot-speed", "1", "--json",
            "--players", players, "--bots", "1", "--port", "0",
            "--log-dir", str(tmp_path / "logs")]  # fmt: skip
    proc = _start(argv, signum, tmp_path)
    if moment == "lobby":  # (its bot seated, a third player awaited)
        _line_with(proc, lambda line: "sat down" in line, "its bot sat down")
    elif moment == "playing":
        _line_with(proc, _event("start"), "the game's start")
        logs = tmp_path / "logs"
        _until(
            lambda: any(Kind.MOVE in _sent(log) for log in logs.glob("**/*.log")),
            "a move signed", proc,
        )  # fmt: skip
    err = _answers(proc, signum, at_once=moment == "at once")
    if moment == "lobby":
        assert err.splitlines()[-1] == "nertz host: interrupted", err
    elif moment == "playing":
        assert err.splitlines()[-1] == f"nertz host: left the game on signal {signum}", err


@pytest.mark.parametrize("command", ["join", "bot"])
@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_join_and_bot_answer_a_signal_at_once_and_seated(
    tmp_path: Path, signum: int, command: str
) -> None:
    make_key(tmp_path / "host.key")
    make_key(tmp_path / "guest.key")
    host = _start(
        ["host", "--name", "Ann", "--bot", "greedy", "--json", "--players", "3", "--port", "0",
         "--key", str(tmp_path / "host.key"), "--log-dir", str(tmp_path / "hl")],
        signal.SIGTERM, tmp_path,
    )  # fmt: skip
    where = lobby_where(json.loads(_line_with(host, _event("lobby"), "its lobby")))
    argv = [command, "--peer", where, "--key", str(tmp_path / "guest.key"),
            "--log-dir", str(tmp_path / "gl")]  # fmt: skip
    if command == "join":
        argv += ["--name", "Bob", "--bot", "greedy", "--json"]
    else:
        argv += ["--name", "Bot", "--json"]
    _answers(_start(argv, signum, tmp_path), signum, at_once=True)
    seated = _start(argv, signum, tmp_path)
    _line_with(seated, _event("table"), "being seated")
    assert _answers(seated, signum).splitlines()[-1] == f"nertz {command}: interrupted"
    host.terminate()


# -- nertz watch, play (terminal and browser) ----------------------------------------------------


def _tty_ends(tty: Tty, signum: int, *, at_once: bool = False) -> int:
    """Send ``signum`` to ``tty``'s program; its exit status, within the bound (``at_once``:
    the signal's, where it came before any of nertz's code ran, :func:`_before_nertz`)."""
    tty.child.kill(signum)
    status = tty.finish(ENDS_WITHIN)
    if at_once and status == 1 and _before_nertz(_said(tty)):
        return signal_status(signum)
    return status


def _said(tty: Tty) -> str:
    """All ``tty``'s program wrote, as text."""
    return tty.raw.decode(errors="replace").replace("\r\n", "\n")


def _spec_and_key(tmp_path: Path, args: list[str]) -> tuple[Path, Path]:
    """The spec ``nertz play`` makes from ``args`` (its ``--seed``), and a spectator's key."""
    from cli.main import build_parser
    from cli.play import bots_game

    spec = bots_game(build_parser("play").parse_args(args))[1]
    (tmp_path / "game.spec").write_bytes(spec.to_wire())
    make_key(tmp_path / "spy.key")
    return tmp_path / "game.spec", tmp_path / "spy.key"


@pytest.mark.parametrize("moment", ["at once", "waiting"])
@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_watch_answers_a_signal_alike_at_once_and_waiting(
    tmp_path: Path, signum: int, moment: str
) -> None:
    spec, key = _spec_and_key(tmp_path, ["play", "--bots", "1", "--seed", "7"])
    tty = Tty(["watch", "--spec", str(spec), "--key", str(key), "--bind", "127.0.0.1:0"])
    if moment == "waiting":
        tty.wait("members push here with --watcher")
    at_once = moment == "at once"
    assert _tty_ends(tty, signum, at_once=at_once) == signal_status(signum), tty.raw[-600:]
    assert b"Traceback" not in tty.raw or (at_once and _before_nertz(_said(tty)))


@pytest.mark.slow
@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_watch_following_a_game_answers_a_signal_with_its_status(
    tmp_path: Path, signum: int
) -> None:
    args = ["play", "--bots", "1", "--speed", "1", "--seed", "7", "--rounds", "1"]
    spec, key = _spec_and_key(tmp_path, args)
    watcher = Tty(["watch", "--spec", str(spec), "--key", str(key), "--bind", "127.0.0.1:0"])
    watcher.wait("members push here with --watcher")
    address = next(w for w in watcher.text().split() if w.startswith("127.0.0.1:") and "#" in w)
    player = Tty([*args, "--dir", str(tmp_path / "game"), "--watcher", address])
    player.wait("[n] Nerts")
    watcher.wait(lambda text: "bot0" in text)  # (seed 7: the bot sits at seat 0)
    assert _tty_ends(watcher, signum) == signal_status(signum), watcher.raw[-600:]
    assert f"nertz watch: stopped on signal {signum}".encode() in watcher.raw
    assert b"Traceback" not in watcher.raw
    player.close()


@pytest.mark.parametrize("moment", ["at once", "lobby", "table"])
@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_play_answers_a_signal_alike_whenever_it_comes(
    tmp_path: Path, signum: int, moment: str
) -> None:
    make_key(tmp_path / "key")
    env = dict(os.environ, NERTZ_HOME=str(tmp_path))
    if moment == "lobby":
        argv = ["play", "--name", "Ann", "--log-dir", str(tmp_path / "logs")]
    else:
        argv = ["play", "--bots", "1", "--practice", "--speed", "1", "--seed", "5",
                "--rounds", "1", "--dir", str(tmp_path / "game")]  # fmt: skip
    tty = Tty(argv, env=env)
    if moment == "lobby":
        tty.wait("c creates a table here")
    elif moment == "table":
        tty.wait("is dealt — go!")
    at_once = moment == "at once"
    assert _tty_ends(tty, signum, at_once=at_once) == signal_status(signum), tty.raw[-600:]
    assert b"Traceback" not in tty.raw or (at_once and _before_nertz(_said(tty)))
    if moment == "table":
        sent = _sent(tmp_path / "game" / "you.log")
        assert sent[-1] is Kind.LEAVE, sent


@pytest.mark.parametrize("command", ["play", "watch", "lobby"])
@pytest.mark.parametrize("moment", ["at once", "page"])
@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_the_web_table_answers_a_signal_alike_at_once_and_serving(
    tmp_path: Path, signum: int, moment: str, command: str
) -> None:
    """The browser's table (``play --bots 1 --web``, ``watch --web``, and the lobby's page:
    ``play --web``), at once and once it serves its page, no browser come yet (one needs none
    to be signalled). Once the page's address is
    said the signal is the table's own (the game left, the watching stopped, said with the
    signal), never trio's KeyboardInterrupt raised into whichever of its tasks runs then:
    session 37, 1 run in 6 of these at load 20 then never ended, and half of the runs said
    "interrupted" instead (the receiver opened only after the address was printed)."""
    web = ["--web", "--no-open", "--web-bind", "127.0.0.1:0"]
    if command == "play":
        argv = ["play", "--bots", "1", "--seed", "5", "--dir", str(tmp_path / "game"), *web]
    elif command == "lobby":
        make_key(tmp_path / "key")
        argv = ["play", "--name", "Ann", "--log-dir", str(tmp_path / "logs"), *web]
    else:
        spec, key = _spec_and_key(tmp_path, ["play", "--bots", "1", "--seed", "7"])
        argv = ["watch", "--spec", str(spec), "--key", str(key), "--bind", "127.0.0.1:0", *web]
    proc = _start(argv, signum, tmp_path)
    if moment == "page":
        _line_with(proc, lambda line: "http://127.0.0.1:" in line, "its page's address")
    err = _answers(proc, signum, at_once=moment == "at once")
    if moment == "page":
        said = {
            "play": "play: left the game",
            "watch": "watch: stopped",
            "lobby": "play: left the lobby",
        }
        assert err.splitlines()[-1] == f"nertz {said[command]} on signal {signum}", err[-600:]


# -- the hand-over from the lobby to the table -----------------------------------------------------


async def _start_from_the_page(url: str) -> None:
    """On the lobby's page (its live connection, as the page's script opens it): create a
    table, add a bot, and start the game once it is ready."""
    host = url.split("/")[2]
    origin = [("Origin", f"http://{host}")]
    async with open_websocket_url(
        url.replace("http://", "ws://") + "ws", extra_headers=origin
    ) as ws:

        async def until(test: Callable[[dict[str, Any]], bool]) -> None:
            while not test(view := json.loads(await ws.get_message())):
                assert view.get("type") in ("lobby", None), view  # (an error: said)

        async def pick(**choice: object) -> None:
            await ws.send_message(json.dumps({"type": "lobby", **choice}))

        with trio.fail_after(ENDS_WITHIN):
            await pick(do="create")
            await until(lambda view: view.get("table") is not None)
            await pick(do="bot", strategy="greedy", speed=5)
            await until(lambda view: bool((view.get("table") or {}).get("can_start")))
            await pick(do="start")


def _went_on(paused: Path) -> Callable[[], None]:
    """What lets ``nertz play`` go on from the hand-over (``NERTZ_HANDOVER_PAUSE``)."""
    return lambda: paused.write_text("go on")


def _after_the_hand_over(said: str, signum: int) -> None:
    """The one line a signal at the hand-over ends ``nertz play`` with: the table's (it read
    the signal first, before its node started, or once it had: then a leave), never trio's
    KeyboardInterrupt ("interrupted") nor a traceback."""
    last = said.strip().splitlines()[-1]
    ends = ("nertz play: stopped before the game started",
            f"nertz play: left the game on signal {signum}")  # fmt: skip
    assert last.endswith(ends), said[-1500:]
    assert "Traceback" not in said and "interrupted" not in said, said[-1500:]


@pytest.mark.slow
@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_the_web_lobby_answers_a_signal_at_the_hand_over_to_the_table(
    tmp_path: Path, signum: int
) -> None:
    """``nertz play --web``'s lobby hands its page over to the table: a signal between the two
    (the process held there, ``NERTZ_HANDOVER_PAUSE``, until the test has sent it) waits in
    the one receiver held across the hand-over and the table answers it (session 37's gap:
    no receiver there, trio's KeyboardInterrupt raised into whichever task ran)."""
    make_key(tmp_path / "key")
    go_on = tmp_path / "go-on"
    argv = ["play", "--name", "Ann", "--key", str(tmp_path / "key"), "--log-dir",
            str(tmp_path / "logs"), "--web", "--no-open", "--web-bind", "127.0.0.1:0"]  # fmt: skip
    env = dict(os.environ, NERTZ_HOME=str(tmp_path), NERTZ_HANDOVER_PAUSE=str(go_on))
    proc = _start(argv, signum, tmp_path, env=env)
    url = _line_with(proc, lambda line: "http://127.0.0.1:" in line, "its page's address")
    trio.run(_start_from_the_page, url.strip())
    _line_with(proc, lambda line: line.startswith(HANDOVER_PAUSED), "the hand-over", stderr=True)
    _after_the_hand_over(_answers(proc, signum, then=_went_on(go_on)), signum)


@pytest.mark.slow
@pytest.mark.parametrize("signum", SIGNALS, ids=SIGNAL_IDS)
def test_the_terminal_lobby_answers_a_signal_at_the_hand_over_to_the_table(
    tmp_path: Path, signum: int
) -> None:
    """The same at the terminal: ``nertz play``'s lobby screen, its table created, a bot
    added, started; the signal sent while the process is held between lobby and table."""
    make_key(tmp_path / "key")
    go_on = tmp_path / "go-on"
    env = dict(os.environ, NERTZ_HOME=str(tmp_path), NERTZ_HANDOVER_PAUSE=str(go_on))
    argv = ["play", "--name", "Ann", "--key", str(tmp_path / "key"), "--log-dir",
            str(tmp_path / "logs")]  # fmt: skip
    tty = Tty(argv, env=env)
    lobby_table_with_a_bot(tty, start=True)
    tty.wait(lambda text: HANDOVER_PAUSED.encode() in tty.raw)
    tty.child.kill(signum)
    _went_on(go_on)()
    assert tty.finish(ENDS_WITHIN) == signal_status(signum), tty.raw[-600:]
    _after_the_hand_over(_said(tty), signum)


@pytest.mark.parametrize(
    "step",
    ["_closed_streams_to_devnull", "_plain_where_not_unicode", "term_as_ctrl_c", "_hangup_as_term"],
)
def test_a_ctrl_c_in_nertz_s_first_instants_is_answered_in_words(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], step: str
) -> None:
    """A Ctrl-C inside one of ``main``'s set-up steps (session 43: one came inside
    ``term_as_ctrl_c``'s ``getsignal`` at a load of 40, before ``main``'s answer, and printed
    a traceback): one line, the interrupted status, and the signal handlers as they were."""
    import cli.main

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    handlers = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)
    monkeypatch.setattr(cli.main, step, interrupted)
    try:
        status = cli.main.main(["rules"])
    except KeyboardInterrupt:  # (out of main: the person would read a traceback)
        pytest.fail(f"a Ctrl-C in {step} escaped main")
    assert status == signal_status(signal.SIGINT)
    assert capsys.readouterr().err == "nertz rules: interrupted\n"
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)) == handlers
