"""``nertz replay``'s lines say what their marks are (a newcomer read ``L19`` and ``T*=306``
with no legend): ``--text`` prints a legend on stderr, ahead of the lines, and stdout stays one
line per event; the interactive replay and the browser's say it too."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from cli.main import main
from cli.replay_cmd import interact, read_by_someone
from p2p_nertz.audit import LogSource
from p2p_nertz.audit.replay import Replay, load
from p2p_nertz.rules import Move
from p2p_nertz.web.replay import ReplayStepper

GOLDEN = Path(__file__).parent / "data" / "golden" / "two-players"
LOGS = [str(p) for p in sorted(GOLDEN.glob("p*.log"))]


def _golden() -> Replay:
    replay = load([LogSource.from_path(p) for p in LOGS])
    assert isinstance(replay, Replay)
    return replay


def _claim(tokens: list[str]) -> bool:
    """Whether ``tokens`` read as a claim's line: ``rN LN author claim MOVE CARD outcome``."""
    number, lamport, _, kind, move, *_ = tokens
    return (
        number[0] == "r"
        and number[1:].isdigit()
        and lamport[0] == "L"
        and lamport[1:].isdigit()
        and kind == "claim"
        and str(Move.parse(move)) == move
        and bool({"won", "tied", "lost"} & set(tokens[5:]))
    )


def test_replay_text_legend_comes_first_on_stderr_and_names_every_mark(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["replay", "--text", *LOGS]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    legend = captured.err
    # stdout is untouched: one line per counted event, as what reads it expects.
    assert len(lines) == len(_golden().steps)
    assert legend.startswith("legend: ") and "Traceback" not in legend
    # Every mark the lines use is named in words, ...
    assert "T*=" in captured.out and "T*=" in legend
    words = " ".join(legend.split())
    assert "round 1 (r0: before the first deal)" in words
    assert "Lamport time 13 (the one order every peer counts the events in)" in words
    assert "a Nerts call ended the round at Lamport time 306 (later plays do not count)" in words
    assert "!! = what the audit found wrong" in words
    # ... and its example reads as the lines do (a claim: round, time, who, move, card, outcome).
    example = legend.split("=", 1)[0].split()[1:]
    assert _claim(example), example
    claims = [line.split() for line in lines if line.split()[3] == "claim"]
    assert claims and all(_claim(c) for c in claims)
    # Fits a terminal of 80 columns.
    assert all(len(line) < 80 for line in legend.splitlines())


def test_replay_interactive_and_web_show_the_same_legend() -> None:
    replay = _golden()
    out = io.StringIO()
    interact(replay, io.StringIO("q\n"), out)
    text = out.getvalue()
    assert "legend: " in text and "Lamport time" in text
    # (before the first step's line, which uses the marks)
    assert text.index("legend: ") < text.index("step 0/")
    view = ReplayStepper(replay).view()
    legend = view["replay"]["legend"]
    assert legend.startswith("legend: ") and "T*=306" in legend and "Lamport time 13" in legend
    assert "\n" not in legend  # (one paragraph on the page)


def test_no_legend_once_the_lines_reader_has_gone() -> None:
    # `nertz replay --text LOG | true`: the lines have no reader, so neither has the legend
    # (tests/test_cli_stops.py runs the command so and wants nothing on stderr).
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as lines:
        assert read_by_someone(lines)
        os.close(read_end)
        assert not read_by_someone(lines)
    assert read_by_someone(io.StringIO())  # (a capture: no descriptor, counted as read)
