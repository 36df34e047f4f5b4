"""A newcomer's first game (issue 15), driven in a pseudo-terminal as a person would.

The real program runs (``python -m cli play``, bot processes, the curses table) in an 80×24
pty read through pyte (the ``Tty`` of test_cli_play). Every wait is for screen content or a
file, bounded by a deadline: no sleep stands in for synchronisation.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from cli_helpers import at_end_of_test, cli_run, nertz
from test_cli_play import ROOT, WIDTH, Tty, leave

from cli.keyfile import load_identity
from cli.main import build_parser
from cli.play import bots_game
from p2p_nertz.logfile import RecordKind, read_log
from p2p_nertz.protocol.bodies import Ready, parse_body
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.ui import Tracker
from p2p_nertz.ui.view import distinct_names

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


def test_first_run_asks_for_a_name_and_makes_the_identity(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = dict(os.environ, NERTZ_HOME=str(home))
    tty = Tty(["play"], env=env)
    tty.wait("your name at the table")
    tty.send("Dee\r")
    text = tty.wait("lobby")
    key = home / "key"
    identity = load_identity(key)  # refuses a key others may read
    assert "Dee" in text and identity.fingerprint in text, text
    assert (home / "name").read_text().strip() == "Dee"
    tty.send("q")
    assert tty.finish() == 0
    assert b"Traceback" not in tty.raw

    # The next time: no question; the same identity and name.
    again = Tty(["play"], env=env)
    text = again.wait("lobby")
    assert "your name" not in text and "Dee" in text and identity.fingerprint in text, text
    again.send("q")
    assert again.finish() == 0


def test_without_a_terminal_play_says_how_to_get_a_key_in_one_line(tmp_path: Path) -> None:
    env = dict(os.environ, NERTZ_HOME=str(tmp_path))
    done = cli_run(
        [sys.executable, "-m", "cli", "play"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        cwd=ROOT,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "nertz keygen" in lines[0] and "--bots" in lines[0], lines
    assert not (tmp_path / "key").exists()


def test_same_names_at_one_table_are_told_apart() -> None:
    tracker = Tracker(("root", "root", "bot1", "root"), 0, True)
    assert tracker.names == ("root", "root (2)", "bot1", "root (3)")
    assert len(set(distinct_names(["Bartholomew"] * 3))) == 3
    assert all(len(n) <= 10 for n in distinct_names(["Bartholomew"] * 3)[1:])


@pytest.mark.parametrize(
    "names",
    [
        ("Ann", "you", "Bob"),  # announced as the local player: "Nerts! called by you"
        ("Ann", "YOU", "Bob"),
        ("Ann", "Bob (2)", "Bob", "Bob"),  # a name that is another's suffixed form
        ("bob", "Ann", "Bob"),
    ],
)
def test_no_players_chosen_name_reads_as_another_seat_or_as_you(names: tuple[str, ...]) -> None:
    # (Session 30's red team: a guest who sat down as "you" was announced as each of the
    # others themselves, "5♠ lost to you", and "Bob (2)" made the second Bob read as it.)
    for local in (None, *range(len(names))):
        tracker = Tracker(names, local, True)
        said = [tracker.name(seat).casefold() for seat in range(len(names))]
        assert len(set(said)) == len(names), (local, said)
        assert tracker.names[local or 0] == names[local or 0]  # (the local seat keeps its own)


def test_demo_shows_progress_and_its_audit_advice_works_as_printed(tmp_path: Path) -> None:
    where = tmp_path / "a demo"  # a space in the path: the advice must quote it
    args = ["demo", "--bots", "2", "--speed", "6", "--seed", "4", "--dir", str(where)]
    done = nertz(*args, cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr
    progress = r"^ +\d+\.\d s  round 1: (1 card|\d+ cards) to the lake so far$"
    assert re.search(progress, done.stdout, re.M)
    said = done.stdout.splitlines()
    advice = said[said.index("audit them:") + 1]  # (on a line of its own: never wrapped)
    audit = subprocess.run(
        ["sh", "-c", advice],
        capture_output=True,
        text=True,
        cwd=ROOT,  # run from elsewhere than the demo: the advice holds the whole path
        timeout=120,
        check=False,
    )
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "VALID" in audit.stdout


def test_the_table_says_how_fast_the_bots_are_and_how_to_change_it(tmp_path: Path) -> None:
    for more, said in (
        ([], "bots at speed 1 of 10 · change: nertz play --speed N, or --practice"),
        (["--practice"], "practice: the bots wait for you · at their pace: nertz play --speed"),
    ):
        args = ["--bots", "1", "--seed", "5", "--rounds", "1", "--dir", str(tmp_path / str(more))]
        tty = Tty(["play", *args, *more])
        tty.wait(said)  # (whole: one row at 80 columns)
        leave(tty)


def test_play_ends_saying_how_to_audit_and_replay_the_game_just_played(tmp_path: Path) -> None:
    # The README's audit and replay are of a demo's logs: a newcomer who had played `nertz
    # play --bots` was told where their log was, and not how to check the game they played.
    # A space in the path: the advice must quote it. Short enough for a line of 80 columns
    # (pytest's own folders may not be), long enough that after words it wrapped mid-way.
    short = Path(tempfile.mkdtemp(prefix="nz-", dir="/tmp"))
    at_end_of_test(lambda: shutil.rmtree(short, ignore_errors=True))
    where = short / "a game" / "first"
    tty = Tty(["play", "--bots", "1", "--speed", "10", "--seed", "6", "--dir", str(where)])
    tty.wait("is dealt — go!")
    leave(tty)
    # On the screen (80 columns), each place is whole on a line of its own, under its words.
    rows = [row.rstrip() for row in tty.text().splitlines()]
    for label, place in (("your signed log:", where / "you.log"), ("the game's files:", where)):
        assert len(str(place)) <= WIDTH - 2, place  # (a longer one wraps, however laid out)
        assert rows[rows.index(label) + 1] == f"  {place}", rows[-12:]
    said = tty.raw.decode().replace("\r\n", "\n").splitlines()
    # Each command on a line of its own under what it does (a path after words wrapped at 80
    # columns mid-way), and copied whole as it is, indent and all.
    advice = {label: said[said.index(f"{label}:") + 1] for label in ("audit it", "replay it")}
    for command, more, expected in (
        # every log of the game, yours and the bot's; the replay (--text: it prints and ends)
        (advice["audit it"], "", ("VALID", "by you", "by bot1")),
        (advice["replay it"], " --text", (" you join", " bot1 join")),
    ):
        done = subprocess.run(
            ["sh", "-c", command + more], capture_output=True, text=True, cwd=tmp_path,
            timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        assert all(word in done.stdout for word in expected), done.stdout


@pytest.mark.parametrize("bots", [1, 2, 3, 7])
def test_a_quick_games_bots_are_named_by_their_seats(bots: int) -> None:
    # Named in the order of their keys, the bots sat "0 bot2 / 1 you / 2 bot1" (seed 3): a
    # number in a name is its seat, as the rows, the lake's digits and the notation count.
    parser = build_parser("play")
    for seed in range(12):
        args = parser.parse_args(["play", "--bots", str(bots), "--seed", str(seed)])
        names = [m.name for m in bots_game(args)[1].members]
        assert names.count("you") == 1, (seed, names)
        assert all(name in ("you", f"bot{seat}") for seat, name in enumerate(names)), names


def test_the_table_shows_each_bot_on_the_row_of_its_number(tmp_path: Path) -> None:
    # Seed 3 seats you between the bots: the table read "0 bot2 / 1 you / 2 bot1".
    game = tmp_path / "game"
    tty = Tty(["play", "--bots", "2", "--speed", "1", "--seed", "3", "--rounds", "1",
               "--dir", str(game)])  # fmt: skip
    text = tty.wait("is dealt — go!")
    rows = re.findall(r"^(\d) (\S+) +N +\d+ ", text, re.M)
    assert rows == [("0", "bot0"), ("1", "you"), ("2", "bot2")], text
    assert "you (seat 1)" in tty.line(0), tty.line(0)
    leave(tty)
    assert sorted(p.name for p in game.glob("*.log")) == ["bot0.log", "bot2.log", "you.log"]
