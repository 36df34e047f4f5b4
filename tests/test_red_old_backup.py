"""An old copy of a player's log resumed after the game, on real ``nertz node`` processes
(session 32; docs/protocol.md §9.6, *an older copy of the log resumed*).

Ann and Bob play one round; Bob's log is copied as it is once a card is in the lake (a backup:
whole frames, it looks whole) and again once the game is over, and the first copy is torn too
(cut inside a record, as a copy taken mid-write). Once both have gone home, ``nertz node`` on
each copy, Ann's endpoint given and nobody there:

- the copy from mid round hears nobody and stops in one line, status 5, having signed nothing:
  it cannot know that the game went on and ended, and says its log may be an older copy;
- the copy of the finished game ends as the game did (status 0, the same final digest as
  Ann's) or, where its own fold lacks the acks that made the end final, stops unheard saying
  the game is over as its log has it, with the score (before session 32: "another nertz may be
  playing as you, … or the others never came");
- the torn copy recovers first (a cut tail, §9.6), cannot, and refuses in one line, status 3;
- Ann's log given to Bob's node (a copy of another member's log) is refused in one line
  naming it so, nothing written.

None of them signs anything, and the audit of every log, the copies among them, is VALID: what
a copy lacks of Bob's feed is a ``log_ends_early`` notice. ``scripts/scan_old_backups.py``
plays more ages and sizes, with the others still playing too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import SHORT_ROUND, cli_run, json_lines_until, node_game
from cli_results import assert_audit_valid, final_event

from p2p_nertz.logfile.format import LogDecoder, RecordKind, TailState
from p2p_nertz.logfile.store import read_log
from p2p_nertz.protocol.recovery import RECOVERING_NOTE
from p2p_nertz.runtime.nodelog import read_session

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

NERTZ = [sys.executable, "-m", "cli"]
#: The game's timers (a loaded machine plays a round of two within them), and the copies':
#: nobody is there, so the wait before a copy stops is all they cost.
TIMERS = ["--suspect-after", "2", "--drop-after", "8"]
AFTER = ["--suspect-after", "1", "--drop-after", "2"]


def _own(log: Path) -> list[bytes]:
    """The events ``log`` holds as its writer's own, in order."""
    with read_log(log) as reader:
        return [r.data for r in reader if r.kind is RecordKind.SENT_EVENT]


def test_old_copies_of_a_log_resumed_after_the_game_sign_nothing_and_say_why(
    tmp_path: Path,
) -> None:
    spec, procs, logs = node_game(
        tmp_path, ["Ann", "Bob"], SHORT_ROUND,
        keys=b"test-red-old-backup", salt=b"red-old-backup",
        args=lambda n: ["--progress", *TIMERS],
    )  # fmt: skip
    json_lines_until(procs[0], "lake")
    raw = logs[1].read_bytes()  # (Bob's node is writing it: the copy ends where a frame does)
    decoder = LogDecoder()
    decoder.feed(raw)
    mid = decoder.close().good_end
    outs = [p.communicate(timeout=240)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    finals = [final_event(out) for out in outs]
    assert finals[0]["over"] and finals[0]["digest"] == finals[1]["digest"], finals
    whole = logs[1].read_bytes()
    copies = {}
    for name, data in (("mid", whole[:mid]), ("over", whole), ("torn", whole[: mid + 9])):
        (tmp_path / name).mkdir()
        copies[name] = tmp_path / name / "bob.log"
        copies[name].write_bytes(data)
    decoder = LogDecoder()
    decoder.feed(whole[: mid + 9])
    assert decoder.close().tail is TailState.TORN  # (the case is built: cut inside a record)
    with read_log(logs[0]) as reader:
        session = read_session(reader)
    assert session is not None
    ann = spec.peer_ids[0] if spec.members[0].name == "Ann" else spec.peer_ids[1]
    gone = f"{spec.seat_of(ann)}={session[1][ann]}"  # (Ann's endpoint: nobody there now)

    def node(log: Path, key: str = "1.key") -> subprocess.CompletedProcess[str]:
        return cli_run(
            [*NERTZ, "node", "--key", str(tmp_path / key), "--spec", str(tmp_path / "game.spec"),
             "--bind", "tcp://127.0.0.1:0", "--peer", gone, "--log", str(log), "--json",
             "--speed", "10", *AFTER],
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip

    signed = {name: _own(log) for name, log in copies.items()}
    ran = {name: node(log) for name, log in copies.items()}
    for name, done in ran.items():
        assert "Traceback" not in done.stderr, (name, done.stderr)
        assert _own(copies[name]) == signed[name] or name == "torn", name  # (nothing signed)
    said = ran["mid"]
    assert said.returncode == 5, said.stdout + said.stderr
    (line,) = said.stderr.strip().splitlines()
    assert "heard nobody at this table in " in line and "an older copy of yours" in line, line
    assert "learns your events from the others before it signs" in line, line  # (not "whole")
    with read_log(copies["mid"]) as reader:
        records = list(reader)
    assert records[-1].kind is RecordKind.NOTE and records[-1].name == RECOVERING_NOTE
    said = ran["over"]
    # Status 0 either way, as `nertz resume` of the log says "over" (session 32: 5 alone).
    assert said.returncode == 0, said.stdout + said.stderr
    final = final_event(said.stdout)
    if final["gone"] is None:  # (its fold held the end final: it ends as the game did)
        assert final["over"] and final["digest"] == finals[0]["digest"], final
    else:  # (its fold lacked the acks that made the end final: it says what it holds)
        assert final["gone"] == "unheard", final
        (line,) = said.stderr.strip().splitlines()
        assert "the game is over as this log has it (the score: " in line, line
        assert "nothing is left to play" in line, line
    said = ran["torn"]
    assert said.returncode == 3, said.stdout + said.stderr
    (line,) = said.stderr.strip().splitlines()
    assert "cannot recover our own events" in line and "Nothing was signed" in line, line
    assert _own(copies["torn"]) == signed["mid"]  # (its whole records: the torn one cut)
    # A copy of Ann's log given to Bob's node: refused in one line, nothing written.
    size = logs[0].stat().st_size
    said = node(logs[0])
    assert said.returncode == 1, said.stdout + said.stderr
    (line,) = said.stderr.strip().splitlines()
    assert "is another player's log of this game" in line, line
    assert logs[0].stat().st_size == size
    assert_audit_valid([*logs, *copies.values()])
