"""A newcomer's first game (issue 15), driven in a pseudo-terminal as a person would.

The real program runs (``python -m cli play``, bot processes, the curses table) in an 80×24
pty read through pyte (the ``Tty`` of test_cli_play). Every wait is for screen content or a
file, bounded by a deadline: no sleep stands in for synchronisation.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_cli_play import Tty, leave

from p2p_nertz.logfile import RecordKind, read_log
from p2p_nertz.protocol.bodies import Ready, parse_body
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.spec import GameSpec

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

_PLAYS = frozenset({Kind.MOVE, Kind.CLAIM, Kind.STUCK, Kind.NERTS})


def _countdown(text: str) -> int | None:
    m = re.search(r"next round in (\d+) s", text)
    return int(m[1]) if m else None


def test_the_next_round_waits_for_the_board_with_a_countdown(tmp_path: Path) -> None:
    game = tmp_path / "game"
    args = ["--bots", "1", "--speed", "10", "--seed", "5", "--rounds", "2", "--dir", str(game)]
    tty = Tty(["play", *args])
    tty.wait("[n] Nerts")
    # Pass while stuck until the bot calls Nerts (or everyone is stuck long enough).
    text = tty.wait("round 1 over", timeout=220, keep="p")
    first = _countdown(text)
    assert first is not None, text
    # The board stays up and counts down; the bot does not start round 2 meanwhile.
    text = tty.wait(lambda t: (_countdown(t) or first) <= first - 2, timeout=20)
    assert "round 1 over" in text
    tty.send("\r")
    tty.wait(lambda t: "round 2" in t.splitlines()[0], timeout=30)
    leave(tty)
    assert b"Traceback" not in tty.raw

    # In the bot's log, my ready of round 2 came before the bot's first play of round 2.
    spec = GameSpec.from_wire((game / "game.spec").read_bytes())
    me = next(m.peer_id for m in spec.members if m.name == "you")
    roster = frozenset(spec.peer_ids)
    order: list[str] = []
    with read_log(game / "bot1.log") as reader:
        for record in reader:
            if record.kind not in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT):
                continue
            message = decode_message(record.data, game_id=spec.game_id, roster=roster)
            body = parse_body(message.kind, message.body, spec.seats)
            if message.kind is Kind.READY and isinstance(body, Ready) and body.round == 2:
                order.append("my ready" if message.author == me else "its ready")
            elif message.author != me and message.kind in _PLAYS and "its ready" in order:
                order.append("its play")
    assert "my ready" in order, order
    assert "its play" not in order or order.index("my ready") < order.index("its play"), order
