"""Players of two protocol versions part in the lobby, each told in one line (session 40).

A game's messages carry its protocol version (``envelope.PROTOCOL_VERSION``); since session 40
the lobby's ``hello`` and ``table`` carry it too (docs/lobby.md §3), so a host seats no guest
of another version and a guest sits at no table of another, before any game is made. Real
``nertz host`` and ``nertz bot`` processes on 127.0.0.1; the side of "another version" is the
same program with the lobby's version set otherwise before it runs (what a build of another
version would say in the lobby). And a stranger's ``hello`` with no version or a garbled one,
to a real host: refused, the table unchanged, a guest seated after.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
import trio
from cli_helpers import cli_popen, json_lines_until, lobby_where, make_key
from test_lobby_floods import a_guest_sits_and_the_game_starts, challenge_of, serving, stranger

from p2p_nertz.lobby.framing import PREAMBLE, frame
from p2p_nertz.lobby.messages import _DOMAIN, VERSION
from p2p_nertz.protocol.envelope import PROTOCOL_VERSION
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed
from p2p_nertz.testing.said import first_line, reap

OTHER = 7
"""The version of the other build: the one before, what a player not yet upgraded speaks (the
lobby of session 41; this build speaks 9 since session 42, ``PROTOCOL_VERSION``)."""

_AS_OTHER = (
    "import sys\n"
    "from p2p_nertz.lobby import state\n"
    "for machine in (state.HostLobby, state.GuestLobby):\n"
    f"    machine.__init__.__kwdefaults__['version'] = {OTHER}\n"
    "from cli.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _nertz(home: Path, other: bool, *argv: str) -> subprocess.Popen[str]:
    """``nertz argv…`` with ``$NERTZ_HOME`` at ``home``; with ``other``, as a build of version
    :data:`OTHER` (its lobby's; nothing else of it differs)."""
    command = [sys.executable, *(("-c", _AS_OTHER) if other else ("-m", "cli")), *argv]
    return cli_popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, NERTZ_HOME=str(home)),
        stdin=subprocess.DEVNULL,
    )


def _news(events: list[dict[str, Any]]) -> list[str]:
    return [e["line"] for e in events if e["event"] == "news"]


@pytest.mark.parametrize("other_side", ["guest", "host"])
def test_a_player_of_another_protocol_version_is_told_in_the_lobby_and_not_seated(
    tmp_path: Path, other_side: str
) -> None:
    """A ``nertz bot`` and a ``nertz host`` of two versions: the bot stops with one line
    naming both versions, the host tells its person once and seats nobody; with the host of
    this version, a bot of this version then sits and the game starts without the other."""
    homes = [tmp_path / name for name in ("ann", "bot2", "cy")]
    for home in homes:
        make_key(home / "key")
    procs: list[subprocess.Popen[str]] = []
    logs = ["--log-dir", str(tmp_path / "logs")]
    try:
        host = _nertz(homes[0], other_side == "host", "host", "--name", "Ann", "--bot", "greedy",
                      "--players", "2", "--rounds", "1", "--json", *logs)  # fmt: skip
        procs.append(host)
        where = lobby_where(json.loads(first_line(host, "the host")))
        bot = _nertz(homes[1], other_side == "guest", "bot", "--name", "bot2", "--peer", where,
                     "--json", *logs)  # fmt: skip
        procs.append(bot)
        _, err = bot.communicate(timeout=60)
        host_says = json_lines_until(host, "news")
        if other_side == "guest":
            # The game starts with a player of this version, and without bot2.
            cy = _nertz(homes[2], False, "bot", "--name", "Cy", "--peer", where, "--json", *logs)
            procs.append(cy)
            host_says += json_lines_until(host, "start")
        host.send_signal(signal.SIGTERM)
    finally:
        for proc in procs:
            reap(proc)
    host_v, guest_v = (
        (PROTOCOL_VERSION, OTHER) if other_side == "guest" else (OTHER, PROTOCOL_VERSION)
    )
    assert bot.returncode != 0
    said = [line for line in err.splitlines() if not line.startswith("connecting to ")]
    assert said == [
        f"nertz bot: error: the host refused us: this table speaks protocol version {host_v}; "
        f"bot2 speaks {guest_v}"
    ], err
    told = [line for line in _news(host_says) if "bot2" in line]
    assert len(told) == 1, host_says  # (once, not at each of the bot's hellos)
    assert told[0].startswith("bot2 (") and told[0].endswith(
        f") speaks protocol version {guest_v}; this nertz speaks {host_v}: not seated"
    ), told
    tables = [[s["name"] for s in e["seats"]] for e in host_says if e["event"] == "table"]
    assert all("bot2" not in names for names in tables), tables
    if other_side == "guest":
        assert host_says[-1]["event"] == "start"
        assert tables[-1] == ["Ann", "Cy"]  # (the table that started)


MAL = Identity.generate(derive_seed(b"test-cli-lobby-version", 0))


def _hello(lobby_id: bytes, challenge: bytes, *version: object) -> bytes:
    """A ``hello`` signed by :data:`MAL`, its fields as given after the table digest."""
    body = ["Mal", "tcp://127.0.0.1:7790", True, b"", *version]
    payload = msgpack.packb(
        [VERSION, "hello", lobby_id, bytes(MAL.peer_id), challenge, body], use_bin_type=True
    )
    return bytes(payload + MAL.sign(_DOMAIN + payload))


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("version", "words"),
    [
        ((), "it carries no protocol version"),
        (("5",), "a protocol version is an integer 1 to 255, not '5'"),
        ((True,), "a protocol version is an integer 1 to 255, not True"),
        ((None,), "a protocol version is an integer 1 to 255, not None"),
        ((0,), "a protocol version is an integer 1 to 255, not 0"),
        ((2**40,), "a protocol version is an integer 1 to 255, not 1099511627776"),
        ((PROTOCOL_VERSION, PROTOCOL_VERSION), "bad 'hello' message"),
    ],
    ids=["missing", "text", "bool", "nil", "zero", "huge", "twice"],
)
async def test_a_hello_with_no_or_a_garbled_protocol_version_is_refused_and_changes_nothing(
    version: tuple[object, ...], words: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A real host takes a stranger's signed ``hello`` whose version is missing or not a
    version as it takes any malformed message: dropped in one line that says why, the table
    as it was, and a guest of its version seated after."""
    caplog.set_level(logging.WARNING, logger="p2p_nertz")
    async with serving(auto_start=2) as (lobby, endpoint):
        stream = await stranger(endpoint)
        challenge = await challenge_of(stream)
        await stream.send_all(PREAMBLE + frame(_hello(lobby.table.lobby_id, challenge, *version)))
        with trio.fail_after(15):
            while lobby.rejected < 1:
                await trio.sleep(0.01)
        assert [s.name for s in lobby.table.seats] == ["Ann"]
        assert lobby.table.log == []
        await a_guest_sits_and_the_game_starts(lobby, endpoint)
    dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(dropped) == 1 and words in dropped[0], caplog.text
