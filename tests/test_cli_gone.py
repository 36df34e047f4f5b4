"""A real three-player game with one node stopped (``SIGSTOP``) past the others'
``--drop-after``: they vote it out, finish the game and exit; continued, it wakes to an empty
table, says so and exits by itself with the "gone" status (docs/protocol.md §9.9), instead of
waiting until it is killed (session 14's fault).

Three ``nertz node`` processes over ZeroMQ on 127.0.0.1 with short timers. The order of things
is read from the processes' own JSON lines and exits: no sleep stands in for it.

The silence is the test's own (session 44): every node's silence votes and abandons are aimed
(:class:`~p2p_nertz.testing.silences.SilenceAim`, ``tests/timed_node.py``'s ``--aim``), Ann's
and Bob's at Cy once he is stopped, Cy's at nobody. On the timer alone a loaded machine's
stall of one process is a silence too: the two left could drop each other, or one abandon the
other once Cy was out.
"""

from __future__ import annotations

import signal
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from cli_helpers import SHORT_ROUND, json_lines_until, node_game, stop_all
from cli_results import assert_audit_valid, final_event

from cli.args import EXIT_GONE, EXIT_OK, EXIT_UNHEARD, gone_status
from cli.node_cmd import say_gone
from p2p_nertz.protocol.gone import GoneReason, TableGone

_POSIX = pytest.mark.skipif(
    not hasattr(signal, "SIGUSR2"), reason="needs SIGSTOP, SIGCONT and SIGUSR2 (POSIX)"
)

# The woken node gives up after 3 x 4 s of silence.
TIMERS = ["--suspect-after", "1", "--drop-after", "4"]
GONE_AFTER = 3 * 4.0
TIMED = Path(__file__).with_name("timed_node.py")
AIMS = ("Cy", "Cy", "")
"""Whom Ann, Bob and Cy vote out (or abandon) for silence once told (``SIGUSR2``)."""


@_POSIX
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_cli_gone_a_node_woken_after_the_others_finished_exits_with_the_gone_status(
    tmp_path: Path,
) -> None:
    spec, procs, logs = node_game(
        tmp_path,
        ("Ann", "Bob", "Cy"),
        SHORT_ROUND,
        keys=b"test-cli-gone",
        salt=b"gone-sigstop",
        args=lambda n: [*TIMERS, *(["--progress"] if n == 2 else [])],
        wrap=lambda n: [sys.executable, str(TIMED), "60", f"--aim={AIMS[n]}", "--"],
    )
    try:
        sleeper = procs[2]
        json_lines_until(sleeper, "lake")  # the round is in play, and Cy in it
        sleeper.send_signal(signal.SIGSTOP)
        for proc in procs[:2]:
            proc.send_signal(signal.SIGUSR2)  # (Cy's silence is the one their timers answer)
        try:
            # The two others vote Cy out, finish the game and exit, by themselves.
            outs = [proc.communicate(timeout=150) for proc in procs[:2]]
        finally:
            sleeper.send_signal(signal.SIGCONT)
        # Woken, Cy hears nobody: it exits by itself, within the bound and a margin for a
        # loaded machine (it used to wait until killed).
        out, err = sleeper.communicate(timeout=GONE_AFTER + 45)
    finally:
        stop_all(procs)
    for proc, (_, their_err) in zip(procs[:2], outs, strict=True):
        assert proc.returncode == 0, their_err
    finals = [final_event(o) for o, _ in outs]
    cy = [m.name for m in spec.members].index("Cy")
    assert all(f["over"] and f["dropped"] == [cy] and f["gone"] is None for f in finals)
    assert "Traceback" not in err
    mine = final_event(out)
    # Woken, it learns its drop if the others' votes waited in its sockets ("dropped"), else
    # it hears nothing at all ("silent"): both are the table gone (§9.9), which of the two
    # depends on what the sockets kept while it was stopped (CI met "silent" once).
    assert not mine["over"] and mine["gone"] in ("dropped", "silent"), mine
    # (The game's end on its table, its sockets having kept it all: over, status 0.)
    assert sleeper.returncode == (EXIT_OK if mine["ended"] else EXIT_GONE), err
    said = {
        "dropped": "you were voted out while away; the game went",
        "silent": "the others have left",
    }[mine["gone"]]
    assert mine["why"].startswith(said)
    assert f"nertz node: {said}" in err and "Stopped waiting; nothing was signed" in err
    # Its log stays a valid log: the audit of the three reads it, and finds no violation.
    assert_audit_valid(logs)


def test_cli_gone_an_unheard_stop_whose_log_holds_the_games_end_exits_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Session 32's old copy of a finished game's log, resumed once everyone had gone home,
    exited 5 ("unheard": another nertz may be playing as you) where the same log resumed with
    the others answering exits 0, and ``nertz resume`` of it without a bot says the game is
    over (0): its log holds the end, only the others' acks are missing. It exits 0, saying
    so; unheard with a game not over on its log is still 5, and the table gone 3."""
    words = "heard nobody …: the game is over as this log has it (the score: Ann 3  Bob 1)"
    over = TableGone(GoneReason.UNHEARD, 2.0, 2.0, (0,), True, words)
    assert gone_status(over) == EXIT_OK
    assert say_gone("node", over) == EXIT_OK
    line = capsys.readouterr().err.strip()
    assert line.startswith(f"nertz node: {words}. Stopped waiting") and "nothing is left" in line
    assert gone_status(replace(over, ended=False)) == EXIT_UNHEARD
    assert gone_status(replace(over, reason=GoneReason.SILENT, ended=False)) == EXIT_GONE


def test_cli_gone_a_stop_with_the_games_end_on_the_table_exits_0_whatever_its_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The others went home before the game's end was final here: the person's table shows
    the game over, yet a "silent" or "dropped" stop exited 3 ("the table is gone: resuming
    takes the game up again", with nothing left to play). The game is over as the log has
    it: 0, as the unheard stop with the game's end (above) and ``nertz resume`` of the log."""
    words = "the game is over on the table; Bob (seat 1) left before it was final here (…)"
    for reason in (GoneReason.SILENT, GoneReason.DROPPED):
        over = TableGone(reason, 12.0, 4.0, (1,), True, words)
        assert gone_status(over) == EXIT_OK
        assert say_gone("node", over) == EXIT_OK
        assert "nothing is left to play" in capsys.readouterr().err
        assert gone_status(replace(over, ended=False)) == EXIT_GONE
