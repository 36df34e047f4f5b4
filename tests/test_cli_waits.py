"""The lobby says what it waits for, and the table says when nobody else is left (issue 15).

- ``waiting_for`` (the lobby state) in words; the lobby screen for host and guest; the
  ``table`` lines of ``nertz host --json`` (a real host process and its bot).
- At the game table, once the last opponent has left: the table says so, and ``q`` leaves at
  once (a real ``nertz play --bots 1`` in a pseudo-terminal, its bot sent SIGTERM).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from cli.lobby_cmd import guest_waits_for
from p2p_nertz.lobby.messages import Seat, TableView
from p2p_nertz.lobby.state import waiting_for
from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.rules import Rules
from p2p_nertz.testing.said import lines, reap
from p2p_nertz.ui import Context, KeyState, Leave, press
from p2p_nertz.ui.lobby import AtTable, LobbyView, SeatLine, render_lobby
from tests.cli_helpers import cli_popen, foreground, make_key
from tests.test_cli_play import Tty, bot_processes, leave


def _seat(n: int, name: str, ready: bool = False) -> Seat:
    return Seat(PeerId(bytes([n]) * 32), name, f"tcp://10.0.0.{n}:5601", ready)


ANN, DEE, CY = _seat(1, "Ann", True), _seat(2, "Dee"), _seat(3, "Cy")


def test_waiting_for_names_the_seats_and_the_players_not_ready() -> None:
    assert waiting_for([ANN], Rules()) == "waiting for 1 more seat"
    assert waiting_for([ANN], Rules(), players=3) == "waiting for 2 more seats"
    assert waiting_for([ANN, DEE], Rules()) == "waiting for Dee to be ready"
    assert waiting_for([ANN, DEE, CY], Rules(), players=4) == (
        "waiting for 1 more seat and Dee and Cy to be ready"
    )
    assert waiting_for([ANN, _seat(2, "Dee", True)], Rules(pairs=True)) == (
        "waiting for 2 more seats"
    )
    assert waiting_for([ANN, _seat(2, "Dee", True)], Rules()) is None


def test_a_guest_waits_for_the_host_once_everybody_is_ready() -> None:
    ready = TableView(Rules().to_dict(), 8, (ANN, _seat(2, "Dee", True)))
    assert guest_waits_for(ready) == "waiting for Ann to start"
    assert guest_waits_for(TableView(Rules().to_dict(), 8, (ANN, DEE))) == (
        "waiting for Dee to be ready"
    )


def _lobby(table: AtTable) -> str:
    view = LobbyView("Dee", "dddd-eeee-ffff-gggg", (), table)
    return render_lobby(view, 80, 24).text()


def test_the_lobby_screen_says_what_the_table_waits_for_host_and_guest() -> None:
    seats = (SeatLine("Ann", "aaaa", True, host=True), SeatLine("Dee", "dddd", False, you=True))
    guest = _lobby(
        AtTable("10.0.0.1:5670", seats, Rules(), 8, blocker="waiting for Dee to be ready")
    )
    assert "waiting for Dee to be ready" in guest
    both = tuple(s if s.ready else SeatLine("Dee", "dddd", True, you=True) for s in seats)
    assert "waiting for Ann to start" in _lobby(AtTable("10.0.0.1:5670", both, Rules(), 8))
    alone = (SeatLine("Dee", "dddd", True, host=True, you=True),)
    host = _lobby(AtTable("127.0.0.1:7000", alone, Rules(), 8, hosting=True,
                          blocker="waiting for 1 more seat (b adds a bot)"))  # fmt: skip
    assert "waiting for 1 more seat (b adds a bot)" in host


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_host_json_table_lines_say_what_the_table_waits_for(tmp_path: Path) -> None:
    env = dict(os.environ, NERTZ_HOME=str(tmp_path))
    make_key(tmp_path / "key")  # ($NERTZ_HOME/key)
    host = cli_popen(
        foreground("host", "--name", "Ann", "--bot", "greedy",
                   "--players", "3", "--bots", "1", "--json", "--log-dir", str(tmp_path / "logs")),
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert host.stdout is not None
        waits = []
        for line in lines(host, "the host"):
            event = json.loads(line)
            if event["event"] == "table":
                waits.append(event["waiting"])
                if event["seats"][1]["ready"]:
                    break
    finally:
        # Ctrl-C: the host leaves with one line and stops the bot it started (a kill would
        # leave the bot waiting for a lobby that is gone).
        host.send_signal(signal.SIGINT)
        try:
            host.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            reap(host, "the host")
    assert waits[0] == "waiting for 1 more seat and bot1 to be ready", waits
    assert waits[-1] == "waiting for 1 more seat", waits


def test_q_leaves_at_once_when_nobody_else_is_left() -> None:
    state, actions = press(KeyState(), "q", Context(None, 0, alone=True))
    assert actions == [Leave()]
    state, actions = press(KeyState(), "q", Context(None, 0))
    assert actions == [] and "leave the game?" in state.status


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_table_says_the_game_is_over_when_the_last_opponent_has_left_and_q_quits(
    tmp_path: Path,
) -> None:
    # A leave that leaves one member in ends the game (docs/protocol.md §9.3, *left alone*):
    # the table says who left and that the game is over, and q quits as at any game's end.
    tty = Tty(["play", "--bots", "1", "--speed", "1", "--seed", "5", "--rounds", "3",
               "--dir", str(tmp_path / "game")])  # fmt: skip
    try:
        tty.wait("is dealt — go!", timeout=60)
        (bot,) = bot_processes(tty.child.pid)
        os.kill(bot, signal.SIGTERM)  # the bot leaves cleanly: a signed leave
        text = tty.wait("bot1 left the game — the game is over")
        assert "game over" in text and "(ended early)" in text, text
        leave(tty)  # (q, and y if asked, as at any game's end: a clean exit, status 0)
        assert b"Traceback" not in tty.raw
    finally:
        if tty.child.isalive():
            tty.child.kill(9)
