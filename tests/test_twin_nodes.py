"""One player's key in two live ``nertz node`` processes, and a restart: only the first warns.

A node that hears a member's key over two connections at once, an older one still heard
``TWIN_AFTER`` after a newer one's first message, says so in a WARNING naming the member
(:attr:`~p2p_nertz.runtime.guard.InboundGuard.twins`; docs/protocol.md §4.7, *Routing ids*):
its key file run on a second machine. A restart (the process killed, a new one on the key
and its log) is no twin: the killed process's connection ends with it. Until session 35 only
the guard's unit tests and the mesh's sockets showed it; here real processes do, the wait
shortened to a second by :data:`~p2p_nertz.runtime.guard.TWIN_AFTER_ENV` (never a sleep: the
test waits for the line itself, bounded).

One game of two, whose bots play at the slowest pace so that it outlasts a restart and a
second process's life on a loaded machine (it is killed once both are seen): Bob's node is
killed and started again on his log and endpoint; then Ann's key is run in a second process,
on "another machine" (another lock scope), given Bob's endpoint only: it hears nobody (Bob
sends to the first Ann) and stops in its one line, while Bob, hearing both Anns, warns once
that her key reaches him from two places. Ann never warns about the restarted Bob.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cli_helpers import at_end_of_test, cli_popen, cli_run, json_lines_until, node_game, stop_all

from p2p_nertz.logfile.store import read_log
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.guard import TWIN_AFTER_ENV
from p2p_nertz.runtime.nodelog import read_session
from p2p_nertz.runtime.playerlock import SCOPE_ENV
from p2p_nertz.testing.said import first_line, reap

NERTZ = [sys.executable, "-m", "cli"]
#: Timers a node killed and started again keeps within on a loaded machine (nobody is voted
#: out meanwhile), and the slowest pace: the game must go on until the test has seen both.
SLOW = ["--suspect-after", "10", "--drop-after", "60", "--speed", "1"]
TWICE = "'s key reaches this node from two places at once"
#: The longest the test waits for a line a process is about to write (a loaded machine).
BOUND = 90.0


def _lines(proc: subprocess.Popen[str]) -> queue.Queue[str | None]:
    """Every line ``proc`` writes on stderr, as it comes, then ``None`` (its end)."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def _until(lines: queue.Queue[str | None], words: str) -> list[str]:
    """The lines up to the first holding ``words``; fails at the end or after :data:`BOUND`."""
    seen: list[str] = []
    while True:
        try:
            line = lines.get(timeout=BOUND)
        except queue.Empty:
            raise AssertionError(f"no {words!r} within {BOUND:g} s: {seen}") from None
        if line is None:
            raise AssertionError(f"no {words!r} before the end: {seen}")
        seen.append(line)
        if words in line:
            return seen


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_key_in_two_live_processes_is_said_once_and_a_restart_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TWIN_AFTER_ENV, "1")  # (every node of the test: a second, not ten)
    spec, procs, logs = node_game(
        tmp_path, ["Ann", "Bob"], Rules(target=None, rounds=1),
        keys=b"test-twin-nodes", salt=b"twin-nodes", args=lambda n: [*SLOW, "--progress"],
    )  # fmt: skip
    ann_seat, bob_seat = (
        next(s for s, m in enumerate(spec.members) if m.name == name) for name in ("Ann", "Bob")
    )
    json_lines_until(procs[0], "lake")  # (under way)
    ann_end = _endpoint(logs[0], ann_seat)
    bob_end = _endpoint(logs[0], bob_seat)
    # Bob's node killed (its connections end with it) and started again: his key, his log,
    # his endpoint, as a person starts it again on the same machine.
    reap(procs[1], "Bob's node")
    again = cli_popen(
        [*NERTZ, "node", "--key", str(tmp_path / "1.key"), "--spec", str(tmp_path / "game.spec"),
         "--bind", bob_end, "--peers-on-stdin", "--log", str(logs[1]), "--json", *SLOW],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.PIPE,
    )  # fmt: skip
    at_end_of_test(lambda: stop_all([again]))
    assert again.stdout is not None and again.stdin is not None
    bound = first_line(again, "Bob's node, started again")
    assert '"bound"' in bound, bound + again.communicate(timeout=60)[1]
    again.stdin.write(f"{ann_seat}={ann_end}\n\n")
    again.stdin.flush()
    bobs = _lines(again)
    # Ann's key on a second machine, told Bob's endpoint only: Bob sends to the first Ann, so
    # it hears nobody, signs nothing new and stops in its line (status 5).
    env = {**os.environ, SCOPE_ENV: f"{os.environ.get(SCOPE_ENV, '')} another machine"}
    twin = cli_run(
        [*NERTZ, "node", "--key", str(tmp_path / "0.key"), "--spec", str(tmp_path / "game.spec"),
         "--bind", "tcp://127.0.0.1:0", "--peer", f"{bob_seat}={bob_end}",
         "--log", str(tmp_path / "ann-elsewhere.log"), "--json", "--speed", "10",
         "--suspect-after", "1", "--drop-after", "3"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False, env=env,
    )  # fmt: skip
    assert twin.returncode == 5, twin.stdout + twin.stderr
    assert "heard nobody at this table in " in twin.stderr, twin.stderr
    # Bob heard Ann's key from both (the first Ann plays on): said once, naming her.
    said = _until(bobs, TWICE)
    assert f"Ann{TWICE}: it may be in use on another machine" in said[-1], said
    again.kill()  # (the game would go on for minutes at this pace)
    _, ann_err = reap(procs[0], "Ann's node")
    rest = []
    while (line := bobs.get(timeout=BOUND)) is not None:
        rest.append(line)
    assert "Traceback" not in ann_err + "".join(said + rest)
    assert not [line for line in rest if TWICE in line], rest  # (once)
    # Ann heard Bob's old connection, then his new one: a restart, never called a twin.
    assert TWICE not in ann_err, ann_err


def _endpoint(log: Path, seat: int) -> str:
    """The endpoint of ``seat`` a node noted at the head of its log."""
    with read_log(log) as reader:
        session = read_session(reader)
    assert session is not None
    spec, book = session
    return next(end for pid, end in book.items() if spec.seat_of(pid) == seat)
