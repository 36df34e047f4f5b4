"""What a newcomer following the README reads from the command line (session 30's first hour).

Unit tests of the one function that says each thing: no game is played.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from cli.audit_cmd import format_report
from cli.places import self_command


def _program(where: Path) -> Path:
    where.mkdir(parents=True)
    program = where / "nertz"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    return program


def test_demo_names_the_nertz_that_was_run_in_its_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The README's first command is `.venv/bin/nertz demo`, with the venv's bin not on the
    # PATH: the advice said `/…/python3 -m cli audit …`, a command the README never names.
    program = _program(tmp_path / "a venv" / "bin")
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(sys, "argv", [str(program), "demo"])
    assert self_command() == shlex.quote(str(program))
    monkeypatch.chdir(tmp_path)  # (typed relative: the advice still works from anywhere)
    monkeypatch.setattr(sys, "argv", ["a venv/bin/nertz", "demo"])
    assert self_command() == shlex.quote(str(program))
    # The nertz the PATH finds: its name alone.
    monkeypatch.setenv("PATH", str(program.parent))
    monkeypatch.setattr(sys, "argv", [str(program), "demo"])
    assert self_command() == "nertz"
    # Another nertz first on the PATH: the path of the one that was run, not that one.
    _program(tmp_path / "other")
    monkeypatch.setenv("PATH", str(tmp_path / "other"))
    assert self_command() == shlex.quote(str(program))
    # `python -m cli demo`: the same again.
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "cli" / "__main__.py"), "demo"])
    assert self_command() == f"{shlex.quote(sys.executable)} -m cli"


def test_audit_says_the_rules_in_words() -> None:
    # The readable report said `rules: target=None, rounds=1`: a Python value a person cannot
    # read. Now the rules in the lobby's words (rules_text, their one home).
    from tests.audit_helpers import played

    text = format_report(played(players=2, rounds=1).audit()).splitlines()
    at = next(i for i, line in enumerate(text) if line.startswith("rules: "))
    said = text[at] + text[at + 1]
    assert "None" not in said and "=" not in said, said
    assert "exactly 1 round" in text[at] and "Nerts card −2" in text[at + 1], said
    assert text[at + 1].startswith(" " * len("rules: ")), said


def test_the_first_run_welcome_fits_an_80_column_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The welcome was 81 characters: its full stop wrapped onto a line of its own.
    from cli.play import _first_run

    def answer(prompt: str) -> str:
        print(prompt)  # (as a terminal shows it)
        return "Dee"

    monkeypatch.setattr("builtins.input", answer)
    _identity, name = _first_run(tmp_path / "key", "root")
    assert name == "Dee" and (tmp_path / "key").is_file()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Welcome to p2p-nertz!") and "identity" in lines[0], lines
    assert all(len(line) <= 80 for line in lines[:2]), lines  # (then the key's whole path)


def test_the_spectator_shows_its_address_whole_on_an_80_column_screen() -> None:
    # `nertz watch` showed `--watcher tcp://127.0.0.1:PORT#KEY` (97 characters) cut at the
    # 80th, inside the key: copied from the screen, it came in two pieces and was refused.
    from cli.args import watcher_address
    from cli.watch import _waiting, waiting_text
    from p2p_nertz.protocol.identity import Identity
    from p2p_nertz.runtime.watchport import WatcherAddress

    address = WatcherAddress("tcp://127.0.0.1:65535", Identity.generate().peer_id)
    screen = _waiting(80, 24, waiting_text(bytes(range(32)), address))
    rows = screen.text().splitlines()
    whole = [row.strip() for row in rows if address.key.hex() in row]
    assert len(whole) == 1, rows
    assert watcher_address(whole[0]) == address  # (as a member gives it to --watcher)
    assert any(row.rstrip().endswith("--watcher") for row in rows), rows


def test_match_says_in_words_how_its_game_was_decided(capsys: pytest.CaptureFixture[str]) -> None:
    # `nertz match --rounds 1` said "1 rounds" and "winner: P2 with 20 (rounds)", the words
    # the table no longer says since a newcomer could not read them (ui.view.decided_by).
    from cli.main import build_parser
    from cli.match_cmd import _cmd_match

    _cmd_match(build_parser("match").parse_args(["match", "--rounds", "1", "--players", "2"]))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(", 1 round"), lines[0]
    assert lines[-1].startswith("winner: P") and lines[-1].endswith(" (after 1 round)"), lines
