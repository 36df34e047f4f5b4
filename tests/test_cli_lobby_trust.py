"""``nertz host`` and ``nertz join`` trust nobody (issue 14 §1): the rules a guest joins are
printed, a table may be invite-only, bad invites are one line. Real processes on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli_popen

from p2p_nertz.lobby.state import LobbyError, StartRefusedError
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.lobby import LobbyHost
from tests.cli_helpers import lobby_where, nertz
from tests.test_cli_lobby import after_connecting, keygen, one_error_line


def popen(*argv: str, home: Path) -> subprocess.Popen[str]:
    return cli_popen(
        [sys.executable, "-m", "cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, NERTZ_HOME=str(home)),
        stdin=subprocess.DEVNULL,
    )


def lines_until(proc: subprocess.Popen[str], wanted: str, patience: float = 60) -> list[str]:
    """Read ``proc``'s output lines up to the first that contains ``wanted`` (killing it if
    that does not come within ``patience`` seconds, so that a failure is not a hang)."""
    assert proc.stdout is not None
    seen = []
    timer = threading.Timer(patience, proc.kill)
    timer.start()
    try:
        for line in proc.stdout:
            seen.append(line.rstrip("\n"))
            if wanted in line:
                return seen
    finally:
        timer.cancel()
    raise AssertionError(f"{wanted!r} never printed; got {seen}")


def stop(*procs: subprocess.Popen[str]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--invite", "nonsense"], ["--invite", "not a fingerprint", "nonsense"]),
        (["--invite-file", "/nonexistent/invites"], ["invite file", "/nonexistent/invites"]),
    ],
)
def test_host_refuses_a_bad_invite_in_one_line(
    tmp_path: Path, argv: list[str], words: list[str]
) -> None:
    keygen(tmp_path)
    one_error_line(nertz("host", "--bot", "greedy", "--players", "2", *argv, home=tmp_path), *words)


def test_host_names_the_bad_line_of_an_invite_file(tmp_path: Path) -> None:
    keygen(tmp_path)
    invites = tmp_path / "invites"
    invites.write_text("# friends\ncopd-sqhg-jnkj-c4ra  Ann\n\nnot-a-key\n")
    done = nertz(
        "host", "--bot", "greedy", "--players", "2", "--invite-file", str(invites), home=tmp_path
    )
    one_error_line(done, f"{invites}:4", "not-a-key")


def test_join_prints_the_rules_it_is_joining(tmp_path: Path) -> None:
    ann, bob, cy = tmp_path / "ann", tmp_path / "bob", tmp_path / "cy"
    for home in (ann, bob):
        keygen(home)
    logs = str(tmp_path / "logs")
    host = popen(
        "host", "--name", "Ann", "--bot", "greedy", "--players", "4",
        "--rounds", "2", "--draw", "1", "--log-dir", logs, "--json", home=ann,
    )  # fmt: skip
    guests: list[subprocess.Popen[str]] = []
    try:
        where = lobby_where(json.loads(lines_until(host, '"lobby"')[-1]))
        guests.append(
            popen(
                "join",
                "--name",
                "Bob",
                "--bot",
                "greedy",
                "--peer",
                where,
                "--json",
                "--log-dir",
                logs,
                home=bob,
            )
        )
        guests.append(popen("bot", "--name", "Cy", "--peer", where, "--log-dir", logs, home=cy))
        event = json.loads(lines_until(guests[0], '"rules"')[-1])
        text = lines_until(guests[1], "rules:")[-1]
    finally:
        stop(host, *guests)
    assert event == {
        "event": "rules",
        "rules": Rules(draw=1, rounds=2, target=None).to_dict(),
        "deal": "commit",
    }
    assert text.startswith("rules: draw 1") and "exactly 2 rounds" in text


def _events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.mark.slow
def test_an_invite_only_host_refuses_a_stranger_and_plays_with_the_invited(
    tmp_path: Path,
) -> None:
    ann, bob, eve = tmp_path / "ann", tmp_path / "bob", tmp_path / "eve"
    keygen(ann), keygen(eve)
    bob_fp = keygen(bob).fingerprint
    logs = str(tmp_path / "logs")
    host = popen(
        "host", "--name", "Ann", "--bot", "greedy", "--players", "3",
        "--bots", "1", "--bot-speed", "10", "--invite", bob_fp, "--rounds", "1",
        "--log-dir", logs, "--json",
        home=ann,
    )  # fmt: skip
    try:
        lobby = json.loads(lines_until(host, '"lobby"')[-1])
        assert lobby["invited"] and bob_fp in lobby["invited"]
        where = lobby_where(lobby)
        refused = nertz(
            "join", "--name", "Eve", "--bot", "greedy", "--peer", where, "--log-dir", logs,
            home=eve,
        )  # fmt: skip
        one_error_line(after_connecting(refused, where), "invite-only", "not invited")
        joined = nertz(
            "join", "--name", "Bob", "--bot", "greedy", "--peer", where, "--log-dir", logs,
            "--json", home=bob, timeout=120,
        )  # fmt: skip
        rest, err = host.communicate(timeout=120)
    finally:
        stop(host)
    assert host.returncode == 0, err
    assert joined.returncode == 0, joined.stderr
    final = next(e for e in _events(joined.stdout) if e["event"] == "final")
    assert sorted(final["names"]) == ["Ann", "Bob", "bot1"]
    news = [e["line"] for e in _events(rest) if e["event"] == "news"]
    assert any("Bob" in line and "sat down" in line for line in news)
    assert not any("Eve" in line for line in news)  # refused: never seated


@pytest.mark.anyio
async def test_host_prompt_removes_and_invites(tmp_path: Path) -> None:
    import trio

    from cli.lobby_cmd import host_command
    from p2p_nertz.runtime.lobby import join_lobby

    ann, eve = Identity.generate(seed=b"p" * 32), Identity.generate(seed=b"q" * 32)
    lobby = LobbyHost(ann, "Ann", Rules(), address="127.0.0.1", game_port=7700)
    refused: list[LobbyError] = []
    async with trio.open_nursery() as nursery:
        endpoint = await nursery.start(lobby.serve)

        async def eve_sits() -> None:
            try:
                await join_lobby(eve, "Eve", "tcp://127.0.0.1:7701", endpoint, timeout=15)
            except LobbyError as exc:
                refused.append(exc)

        nursery.start_soon(eve_sits)
        with trio.fail_after(15):
            while len(lobby.table.seats) < 2:
                await trio.sleep(0.01)
        # Seats count from 0, as on the table: the host is 0, Eve (the first guest) 1.
        assert "no guest in seat 2" in host_command(lobby, "remove 2")
        assert "seat 0 is you, the host: the guest is in seat 1" in host_command(lobby, "remove 0")
        assert "removed" in host_command(lobby, "remove 1")
        with trio.fail_after(15):
            while not refused:
                await trio.sleep(0.01)
        assert "invite" in host_command(lobby, "help")
        assert "may sit" in host_command(lobby, f"invite {eve.fingerprint}")
        assert not lobby.table.removed
        nursery.cancel_scope.cancel()
    assert not isinstance(refused[0], StartRefusedError)
    assert "removed you" in str(refused[0])


@pytest.mark.anyio
async def test_join_refuses_a_lying_hosts_start_in_one_line_and_a_json_notice(
    tmp_path: Path,
) -> None:
    import trio

    from tests.test_lobby_trust import ANN, ANN_AT, heard, lying_host, say, start

    keygen(tmp_path)
    from cli.node_cmd import load_identity

    bob = load_identity(tmp_path / "key")
    async with lying_host() as (router, endpoint):
        port = endpoint.rpartition(":")[2]
        argv = ["join", "--name", "Bob", "--bot", "greedy", "--peer", f"127.0.0.1:{port}",
                "--json", "--log-dir", str(tmp_path / "logs")]  # fmt: skip
        async with trio.open_nursery() as nursery:
            done: list[subprocess.CompletedProcess[bytes]] = []

            async def run() -> None:
                done.append(
                    await trio.run_process(
                        [sys.executable, "-m", "cli", *argv],
                        capture_stdout=True,
                        capture_stderr=True,
                        check=False,
                        env=dict(os.environ, NERTZ_HOME=str(tmp_path)),
                    )
                )

            nursery.start_soon(run)
            with trio.fail_after(60):
                routing, hello = await heard(router)  # the first hello: no table shown yet
                endpoint_of_bob = hello.endpoint  # type: ignore[attr-defined]
                await say(router, routing, start(Rules(), (ANN, "Ann", ANN_AT),
                                                 (bob, "Bob", endpoint_of_bob)))  # fmt: skip
                while not done:
                    await trio.sleep(0.01)
    (proc,) = done
    assert proc.returncode != 0
    err = proc.stderr.decode().strip().splitlines()
    assert err.pop(0).startswith("connecting to ")  # said at once (test_cli_lobby)
    assert len(err) == 1 and "did not join" in err[0] and "before it showed" in err[0]
    events = _events(proc.stdout.decode())
    assert [e["event"] for e in events] == ["refused"]
    assert "before it showed us any table" in events[0]["reason"]
    assert not (tmp_path / "logs").exists() or not any((tmp_path / "logs").glob("*.log"))
