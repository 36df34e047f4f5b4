"""``nertz keygen``, ``host``, ``join``, ``bot``, ``games``, ``resume`` as a user runs them: real
processes on 127.0.0.1 (the LAN with discovery is in test_lan.py)."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import (
    background,
    cli_popen,
    foreground,
    held_port,
    interrupted_by_sigterm,
    json_lines_until,
    lobby_where,
    make_key,
    nertz,
)

from cli.bots import spawn_lobby_bot
from cli.keyfile import load_key
from cli.main import build_parser
from p2p_nertz.defaults import BOT_SPEEDS, PLAY_BOT_SPEED, TABLE_BOT_SPEED
from p2p_nertz.logfile.format import LogHeader, encode_header
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.testing.said import first_line, reap
from p2p_nertz.ui.lobby import LobbyKeys
from p2p_nertz.web.model import LobbyPick


def keygen(home: Path) -> Identity:
    """The key ``nertz keygen`` makes in ``home`` (``$NERTZ_HOME``), made in this process."""
    return make_key(home / "key")


def one_error_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in lines[0], lines[0]


def after_connecting(
    done: subprocess.CompletedProcess[str], where: str
) -> subprocess.CompletedProcess[str]:
    """``done`` without the line ``join``/``bot`` print first on stderr, which says where they
    connect (test_join_says_at_once_where_it_connects_on_stderr_not_in_the_json)."""
    first, _, rest = done.stderr.partition("\n")
    assert first == f"connecting to {where}…", done.stderr
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout, rest)


def test_keygen_makes_a_key_and_shows_its_fingerprint(tmp_path: Path) -> None:
    made = nertz("keygen", home=tmp_path)
    assert made.returncode == 0, made.stderr
    fp = made.stdout.split()[2]
    assert (tmp_path / "key").read_text().startswith(f"p2p-nertz secret key v1\nfingerprint {fp}\n")
    assert oct((tmp_path / "key").stat().st_mode & 0o777) == "0o600"
    shown = nertz("keygen", "--show", home=tmp_path)
    assert shown.stdout.split()[0] == fp
    # The spectator's key for the members' --watcher, before any spec (a lobby game's spec
    # exists only once it starts): `nertz watch` prints the same one.
    assert shown.stdout.splitlines()[-1] == f"KEY: {load_key(tmp_path / 'key').peer_id.hex()}"
    again = nertz("keygen", home=tmp_path)
    one_error_line(again, fp, "--force")
    assert nertz("keygen", "--show", home=tmp_path).stdout.split()[0] == fp  # unchanged
    forced = nertz("keygen", "--force", home=tmp_path)
    assert forced.returncode == 0 and forced.stdout.split()[2] != fp


@pytest.mark.parametrize(
    ("content", "words"),
    [(None, ["no key", "nertz keygen"]), (b"short", ["not a key file"])],
)
def test_host_with_a_missing_or_bad_key_says_so(
    tmp_path: Path, content: bytes | None, words: list[str]
) -> None:
    if content is not None:
        (tmp_path / "key").write_bytes(content)
        (tmp_path / "key").chmod(0o600)  # (one open to others is refused first: test_cli_keys)
    done = nertz("host", "--bot", "greedy", "--players", "2", home=tmp_path)
    one_error_line(done, *words)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["join", "--peer", "nowhere", "--bot", "greedy"], ["HOST:PORT"]),
        (["join", "--peer", "300.1.1.1:5", "--bot", "greedy"], ["IPv4"]),
        (["join", "--bot", "greedy"], ["--peer HOST:PORT or --discover"]),
        (["bot", "--speed", "11", "--peer", "127.0.0.1:5"], ["--speed"]),
        (["host", "--bot", "greedy"], ["--players"]),
        (["host", "--bot", "greedy", "--players", "3", "--pairs"], ["pair"]),
        (["host", "--players", "2"], ["--bot"]),
        (["games"], ["--discover"]),
        (["resume"], ["log"]),
    ],
)
def test_lobby_commands_refuse_bad_arguments_in_one_line(
    tmp_path: Path, argv: list[str], words: list[str]
) -> None:
    keygen(tmp_path)
    one_error_line(nertz(*argv, home=tmp_path), *words)


def test_join_with_nobody_there_fails_in_one_line(tmp_path: Path) -> None:
    keygen(tmp_path)
    with held_port() as port:  # (bound, never listening: nobody answers there)
        done = nertz(
            "join", "--peer", f"127.0.0.1:{port}", "--bot", "greedy", "--timeout", "0.5",
            "--log-dir", str(tmp_path / "logs"), home=tmp_path,
        )  # fmt: skip
    one_error_line(after_connecting(done, f"127.0.0.1:{port}"), "no answer", str(port))


@pytest.mark.parametrize("command", ["join", "bot"])
def test_join_says_at_once_where_it_connects_on_stderr_not_in_the_json(
    tmp_path: Path, command: str
) -> None:
    """Issue 15: ``join --peer`` to a dead address was silent until its timeout (10 s)."""
    keygen(tmp_path)
    with held_port() as port:  # (bound, never listening: nobody answers there)
        argv = [command, "--peer", f"127.0.0.1:{port}", "--json", "--timeout", "60",
                "--log-dir", str(tmp_path / "logs")]  # fmt: skip
        if command == "join":
            argv += ["--bot", "greedy"]
        proc = cli_popen(
            [sys.executable, "-m", "cli", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, NERTZ_HOME=str(tmp_path)),
            stdin=subprocess.DEVNULL,
        )
        try:
            assert proc.stderr is not None
            line = first_line(proc, f"the {command}", stderr=True)
            assert line == f"connecting to 127.0.0.1:{port}…"
            assert proc.poll() is None  # said while it still waits for an answer (60 s)
        finally:
            out, _ = reap(proc, "the guest")
    assert "connecting" not in out  # stdout stays the --json sequence


def test_host_on_a_port_in_use_fails_in_one_line(tmp_path: Path) -> None:
    keygen(tmp_path)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = nertz(
            "host", "--bot", "greedy", "--players", "2", "--port", str(port), home=tmp_path
        )
    one_error_line(done, "in use")


@pytest.mark.parametrize("content", [b"", b"NERTZLOG garbage", None])
def test_resume_refuses_a_file_that_is_not_a_usable_log(
    tmp_path: Path, content: bytes | None
) -> None:
    log = tmp_path / "x.log"
    if content is not None:
        log.write_bytes(content)
    one_error_line(nertz("resume", str(log), "--bot", "greedy", home=tmp_path), str(log))


@pytest.mark.parametrize(("keep", "said"), [(0, "empty"), (5, "only 5 bytes"), (51, "header")])
def test_resume_of_a_log_cut_in_its_first_bytes_says_where_it_ends(
    tmp_path: Path, keep: int, said: str
) -> None:
    # scripts/scan_real_faults.py torn --cuts header: a node killed, its log cut inside the
    # header; the refusal says what the reader found, not only "not a log".
    log = tmp_path / "x.log"
    header = LogHeader(game_id=b"g" * 16, peer_id=bytes(32), created_at_ms=0)
    log.write_bytes(encode_header(header)[:keep])
    done = nertz("resume", str(log), "--bot", "greedy", home=tmp_path)
    one_error_line(done, str(log), said)


def _events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.mark.slow
def test_host_join_and_bot_in_separate_processes_play_a_game(tmp_path: Path) -> None:
    """The README's two terminals: one hosts, one joins, plus a bot; all agree at the end."""
    ann, bob = tmp_path / "ann", tmp_path / "bob"
    for home in (ann, bob):
        keygen(home)
    env = dict(os.environ, NERTZ_HOME=str(ann))
    common = ["--json", "--rounds", "1"]
    host = cli_popen(
        [sys.executable, "-m", "cli", "host", "--name", "Ann", "--bot", "greedy",
         "--players", "3", "--log-dir", str(tmp_path / "logs"), *common],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    guests: list[subprocess.Popen[str]] = []
    try:
        assert host.stdout is not None
        where = lobby_where(json.loads(first_line(host, "the host")))  # said once it is bound
        guests += [
            cli_popen(
                [
                    sys.executable,
                    "-m",
                    "cli",
                    *argv,
                    "--peer",
                    where,
                    "--json",
                    "--log-dir",
                    str(tmp_path / "logs"),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=dict(os.environ, NERTZ_HOME=str(bob)),
                stdin=subprocess.DEVNULL,
            )
            for argv in (["join", "--name", "Bob", "--bot", "lookahead"], ["bot", "--name", "Cy"])
        ]
        outs = [p.communicate(timeout=120) for p in guests]
        rest, err = host.communicate(timeout=120)
    finally:
        for p in (host, *guests):
            if p.poll() is None:
                p.kill()
    assert host.returncode == 0, err
    assert all(p.returncode == 0 for p in guests), [o[1] for o in outs]
    streams = [_events(rest), *(_events(o[0]) for o in outs)]
    finals = [next(e for e in s if e["event"] == "final") for s in streams]
    assert len({f["digest"] for f in finals}) == 1
    assert all(f["over"] for f in finals)
    assert sorted(finals[0]["names"]) == ["Ann", "Bob", "Cy"]
    tables = [e for e in streams[1] if e["event"] == "table"]
    assert tables and tables[0]["seats"][0]["name"] == "Ann"  # the host sits first
    starts = [next(e for e in s if e["event"] == "start") for s in streams]
    assert len({s["game_id"] for s in starts}) == 1
    assert all(Path(s["log"]).stat().st_size > 0 for s in starts)


def test_a_friend_joining_on_the_same_account_with_the_hosts_key_is_told_what_to_do(
    tmp_path: Path,
) -> None:
    """Two terminals of one machine and account (the README's friend game): ``nertz join``
    takes the default key, the host's. Its hello was dropped unanswered as "forged": the join
    waited at "connecting…" for ever. Now it is refused in one line that says what to do, and
    the host's table stays open for a key of the friend's own."""
    home = tmp_path / "ann"
    keygen(home)
    env = dict(os.environ, NERTZ_HOME=str(home))
    host = cli_popen(
        [sys.executable, "-m", "cli", "host", "--name", "Ann", "--bot", "greedy",
         "--players", "2", "--json", "--log-dir", str(tmp_path / "logs")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        where = lobby_where(json.loads(first_line(host, "the host")))
        done = nertz(
            "join", "--peer", where, "--name", "Bob", "--bot", "greedy", "--timeout", "20",
            "--log-dir", str(tmp_path / "logs"), home=home,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        one_error_line(
            after_connecting(done, where), "the host's own", "nertz keygen --key", "--key FILE"
        )
        assert host.poll() is None  # (still open for the friend's own key)
    finally:
        host.kill()
        _, err = host.communicate(timeout=30)
    assert "forged" not in err and "own key" in err, err


@pytest.mark.parametrize("command", ["host", "join"])
def test_ctrl_c_in_the_lobby_leaves_with_one_line(tmp_path: Path, command: str) -> None:
    """Issue 15: Ctrl-C in ``nertz host`` / ``nertz join`` before the game started printed a
    38-line ExceptionGroup traceback (trio wraps the interrupt with the tasks it cancelled)."""
    ann, bob = tmp_path / "ann", tmp_path / "bob"
    for home in (ann, bob):
        keygen(home)
    procs: list[subprocess.Popen[str]] = []

    def spawn(home: Path, *argv: str) -> subprocess.Popen[str]:
        procs.append(
            cli_popen(
                foreground(*argv, "--json", "--log-dir", str(tmp_path / "l")),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=dict(os.environ, NERTZ_HOME=str(home)),
                stdin=subprocess.DEVNULL,
            )
        )
        return procs[-1]

    try:
        host = spawn(ann, "host", "--name", "Ann", "--bot", "greedy", "--players", "3")
        assert host.stdout is not None
        where = lobby_where(json.loads(first_line(host, "the host")))
        target = host
        if command == "join":
            target = spawn(bob, "join", "--name", "Bob", "--bot", "greedy", "--peer", where)
            json_lines_until(target, "table")  # seated, waiting for a third player
        target.send_signal(signal.SIGINT)  # what Ctrl-C at the terminal sends
        _, err = target.communicate(timeout=30)
    finally:
        for proc in procs:
            reap(proc)
    assert target.returncode == 130
    assert "Traceback" not in err and "ExceptionGroup" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    if command == "join":  # (said first, at once: test_join_says_at_once_where_it_connects)
        assert lines.pop(0) == f"connecting to {where}…", err
    assert lines == [f"nertz {command}: interrupted"], err


def _event_within(
    proc: subprocess.Popen[bytes],
    event: str,
    seconds: float,
    *,
    bot: subprocess.Popen[bytes],
    said: Path,
) -> dict[str, Any]:
    """The first JSON line of ``proc`` (binary stdout) whose event is ``event``, read within
    ``seconds`` (a hang guard), failing at once with what ``bot`` said (its stderr, in
    ``said``) if it stopped first."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buffered = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if bot.poll() is not None:
            raise AssertionError(f"the bot stopped: {said.read_text(errors='replace')}")
        if not select.select([fd], [], [], 0.2)[0]:
            continue
        chunk = os.read(fd, 65536)
        assert chunk, "the host ended"
        buffered += chunk
        *lines, buffered = buffered.split(b"\n")
        for line in lines:
            data = json.loads(line)
            if data["event"] == event:
                return dict(data)
    raise AssertionError(f"no {event!r} line in {seconds:g} s")


def _said_within(path: Path, words: str, seconds: float) -> None:
    """Wait until the file at ``path`` holds ``words`` (``seconds``: a hang guard)."""
    deadline = time.monotonic() + seconds
    while not (path.exists() and words in path.read_text(errors="replace")):
        assert time.monotonic() < deadline, f"{path.name} never said {words!r}"
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_bot_started_for_a_table_waits_for_a_host_that_is_slow_to_answer(
    tmp_path: Path,
) -> None:
    """A bot a lobby starts (cli.bots.spawn_lobby_bot: ``nertz play``'s ``b``, ``nertz host
    --bots``) waits longer for the host's answer than the 10 s a person's ``nertz join`` does:
    its parent stops it when the person goes, and a host that is merely slow must not lose
    it. CI's busy machine did: the bot gave up and its seat never filled. Here the host is
    stopped (SIGSTOP) for longer than those 10 s while the bot connects, then continued; the
    bot sits down and the game starts."""
    ann = tmp_path / "ann"
    keygen(ann)
    logs = tmp_path / "logs"
    host = cli_popen(
        [sys.executable, "-m", "cli", "host", "--name", "Ann", "--bot", "greedy",
         "--players", "2", "--rounds", "1", "--json", "--log-dir", str(logs)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
        env=dict(os.environ, NERTZ_HOME=str(ann)),
    )  # fmt: skip
    bot: subprocess.Popen[bytes] | None = None
    try:
        assert host.stdout is not None
        lobby = json.loads(first_line(host, "the host"))  # printed once the lobby is bound
        assert lobby["event"] == "lobby", lobby
        host.send_signal(signal.SIGSTOP)
        bot = spawn_lobby_bot(
            lobby["endpoint"].removeprefix("tcp://"), "slowpoke", Identity.generate(),
            strategy="greedy", speed=10,
            log_dir=logs, err=tmp_path / "bot.err",
        ).proc  # fmt: skip
        _said_within(tmp_path / "bot.err", "connecting to", 60.0)  # (then its wait starts)
        # The host's silence, the thing under test (not a wait for anything): the kernel
        # takes the bot's connection, the host answers nothing for longer than 10 s.
        time.sleep(11.0)
        host.send_signal(signal.SIGCONT)
        assert bot.poll() is None, (tmp_path / "bot.err").read_text()
        start = _event_within(host, "start", 60.0, bot=bot, said=tmp_path / "bot.err")
        assert sorted(start["players"]) == ["Ann", "slowpoke"], start
    finally:
        host.send_signal(signal.SIGCONT)
        for proc in (host, bot):
            if proc is not None and proc.poll() is None:
                proc.kill()
            if proc is not None:
                proc.wait()
        if bot is not None and bot.stdin is not None:  # (the pipe the bot stops with)
            bot.stdin.close()
        if host.stdout is not None:
            host.stdout.close()


def test_a_bot_added_to_a_table_of_people_has_one_speed_by_every_door() -> None:
    # A newcomer following README's `nertz host --players 3 --bots 1` met bots at full speed
    # (10) where the lobby's b gave 5: now the same level, and not full speed.
    host = build_parser().parse_args(["host", "--players", "3", "--bots", "1"])
    assert host.bot_speed == LobbyKeys().speed == LobbyPick("bot").speed == TABLE_BOT_SPEED
    # `nertz bot`, a person's own opponent at a table, gave 10 until session 31.
    assert build_parser().parse_args(["bot", "--peer", "127.0.0.1:5"]).speed == TABLE_BOT_SPEED
    assert host.bot_speed < max(BOT_SPEEDS)  # (not full speed)
    play = build_parser().parse_args(["play", "--bots", "1"])  # alone with bots: a person's pace
    assert int(play.speed) == PLAY_BOT_SPEED < TABLE_BOT_SPEED
    # The page's slider starts where the page's lobby pick does (HTML cannot import the value:
    # its copy is held to it here).
    html = (Path(__file__).parents[1] / "p2p_nertz/web/static/index.html").read_text()
    (slider,) = [line for line in html.splitlines() if 'id="bot-speed"' in line]
    assert f'value="{TABLE_BOT_SPEED}"' in slider, slider


def test_the_hosts_first_lines_fit_80_columns_with_the_join_command_whole() -> None:
    # A newcomer's `nertz host` printed "… others join with: nertz join --peer 127.0." and
    # "0.1:32867" on the next row of an 80-column terminal.
    from cli.lobby_cmd import OPEN_WORDS, PROMPT_WORDS, hosting_words
    from p2p_nertz.protocol.names import MAX_NAME
    from p2p_nertz.ui.lobby import loopback_words

    longest = "N" * MAX_NAME
    endpoint = "tcp://255.255.255.255:65535"
    text = hosting_words(longest, "xqiq-b5gz-iwoo-nwm2", endpoint, "255.255.255.255")
    for words in (text, OPEN_WORDS, PROMPT_WORDS):
        assert all(len(line) <= 80 for line in words.splitlines()), words
    lines = text.splitlines()
    assert lines[1].split()[-4:] == ["nertz", "join", "--peer", "255.255.255.255:65535"]
    assert lines[2].split()[-3:] == ["join", "--discover", "255.255.255.255"]
    assert len(hosting_words("Ann", "xqiq-b5gz-iwoo-nwm2", endpoint, None).splitlines()) == 2
    # On the loopback (no --address, no --discover) a last line says it is this machine's
    # only and how to open a table to the LAN, in the words the play lobby uses.
    local = hosting_words(longest, "xqiq-b5gz-iwoo-nwm2", "tcp://127.0.0.1:65535", None)
    assert local.splitlines()[-1] == loopback_words("host", "127.0.0.1:65535")
    assert all(len(line) <= 80 for line in local.splitlines()), local


def test_a_host_started_in_the_background_stops_on_sigterm_in_its_lobby_with_one_line(
    tmp_path: Path,
) -> None:
    """A SIGTERM (``kill``) to ``nertz host`` waiting in its lobby, started as a shell
    without job control starts ``nertz … &`` (SIGINT ignored): ``nertz``'s handler raised
    KeyboardInterrupt in the middle of trio, and a page of trio's tracebacks followed "nertz
    host: interrupted". Now the command takes the signal inside trio: one line."""
    make_key(tmp_path / "ann.key")
    host = cli_popen(
        background("host", "--key", str(tmp_path / "ann.key"), "--name", "Ann", "--bot",
                   "greedy", "--players", "3", "--bots", "1", "--json",
                   "--log-dir", str(tmp_path / "logs")),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        json_lines_until(host, "open")  # (the lobby is up: the command waits in trio)
    finally:
        interrupted_by_sigterm(host, "host")
