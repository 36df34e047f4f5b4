"""``nertz replay``: one line per event in the notation, and the interactive stepper."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from cli.main import main
from cli.replay_cmd import interact
from p2p_nertz.audit import LogSource
from p2p_nertz.audit.replay import Replay, load
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.rules import Move
from tests.audit_helpers import played

GOLDEN = Path(__file__).parent / "data" / "golden" / "two-players"


def _replay() -> Replay:
    game = played(players=2, seed=3, rounds=2)
    loaded = load([LogSource.from_bytes(f"p{i}.log", b) for i, b in enumerate(game.files())])
    assert isinstance(loaded, Replay)
    return loaded


def test_replay_text_has_one_line_per_counted_event(capsys: pytest.CaptureFixture[str]) -> None:
    logs = [str(p) for p in sorted(GOLDEN.glob("p*.log"))]
    assert main(["replay", "--text", *logs]) == 0
    lines = capsys.readouterr().out.splitlines()
    replay = load([LogSource.from_path(p) for p in logs])
    assert isinstance(replay, Replay)
    assert len(lines) == len(replay.steps) == replay.report.events
    names = {m.name for m in replay.spec.members}
    for line in lines:
        number, lamport, author, kind, *_ = line.split()
        assert number.startswith("r") and lamport.startswith("L") and author in names
        assert kind in {k.name.lower() for k in Kind} | {"stuck", "nerts"}
    lamports = [int(line.split()[1][1:]) for line in lines]
    assert lamports == sorted(lamports)  # the total order
    claims = [line.split() for line in lines if line.split()[3] == "claim"]
    assert claims and all(str(Move.parse(c[4])) == c[4] for c in claims)
    assert all(c[-1] in {"won", "tied"} or "lost" in c for c in claims)


def test_replay_steps_forward_and_back_to_the_same_state() -> None:
    replay = _replay()
    end = replay.state_at(len(replay))
    assert end.game.totals == replay.report.totals
    middle = len(replay) // 2 + 3
    forward = replay.state_at(middle)
    replay.state_at(len(replay))
    again = replay.state_at(middle)
    assert forward.digest() == again.digest()
    assert replay.state_at(0).round.number == 0
    assert replay.round_start(2) is not None
    assert replay.state_at(replay.round_start(2) + 1).round.number == 2  # type: ignore[operator]


def test_replay_interactive_commands() -> None:
    replay = _replay()
    name = replay.spec.members[0].name
    commands = "n\nn 20\nb 5\nr 2\ne 7\ne " + f"{name}:3\nwhat\nb 999\nend\nq\n"
    out = io.StringIO()
    interact(replay, io.StringIO(commands), out)
    text = out.getvalue()
    steps = [
        line.split(":")[0] for line in text.splitlines() if line.startswith(("> step", "step"))
    ]
    shown = [int(s.split()[-1].split("/")[0]) for s in steps]
    seq3 = replay.find(0, 3)
    assert shown == [0, 1, 21, 16, replay.round_start(2), 7, seq3, 0, len(replay)]
    assert "unknown command 'what'" in text
    assert "lake" in text and "??" in text  # tables are drawn, others' hidden cards hidden


def test_replay_interactive_a_command_without_its_argument_says_what_it_wants() -> None:
    # `r` and `e` alone said "no round None" and "no event None".
    replay = _replay()
    out = io.StringIO()
    interact(replay, io.StringIO("r\ne\nr 99\nq\n"), out)
    text = out.getvalue()
    rounds = len(replay.report.rounds)
    assert "None" not in text
    assert f"r wants a round: give rounds 0-{rounds} (0: before the deal)" in text
    assert "e wants an event: give a step number or NAME:SEQ" in text
    assert f"no round '99' in this game: give rounds 0-{rounds}" in text
