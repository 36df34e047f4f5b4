#!/usr/bin/env python3
"""Scan old copies of a node's log resumed, on real nodes (session 32; docs/protocol.md §9.6,
*an older copy of the log resumed*).

Every game is a ``scripts/chaos.py`` game (``nertz node`` bot processes over ZeroMQ on
127.0.0.1, one round, timers ``--suspect-after 2 --drop-after 8``). The victim's (seat 1's) log
is copied as it is at an age of the game, cut back to its last whole frame (a backup: it looks
whole), and put back and resumed:

``among-AGE``: the victim killed (SIGKILL) after the table's :data:`KILL_AT`-th card and its
    log replaced by the copy, then ``nertz resume`` of it at once, the others still playing.
    Whole, it must stop in one line (status 2: "your key has signed this game's events
    elsewhere … or is an older copy"), having signed nothing, and the others end without it
    (they drop it, or at two abandon it); or, started after the others had gone (a loaded
    machine), stop unheard (status 5), as chaos's checks allow. ``-torn``: the copy cut
    inside the record after it (a copy taken mid-write): the resume recovers (a cut tail) and
    learns its feed from the others, so it plays on, or is dropped meanwhile, as chaos's
    checks allow a faulted node.
``gone-AGE``: the game played to its end with the victim's first process, then ``nertz node``
    of the copy (another directory, the others' endpoints given, nobody there;
    ``--suspect-after 1 --drop-after 2``). Whole and taken before the end, it must stop
    unheard (status 5) in one line, its log's own events as the copy held them; taken
    ``over`` (after the game), it ends as the game did (status 0, the same digest) or stops
    unheard saying the game is over as its log has it (status 0 too since session 33: 5
    before); ``-torn``, it recovers, cannot,
    and refuses in one line (status 3, "cannot recover our own events").

AGE: ``start`` (the victim's log holds its join and commit), ``early`` (the table's 5th card),
``mid`` (the 10th), ``over`` (the game over; ``gone`` only; ``-torn``: cut inside its last
record). Every game: chaos's checks (no traceback, exits as documented, the finals alike)
and ``nertz audit`` of every log, the copies among them, VALID. One line per game, then the
counts.

    nice -n 10 python scripts/scan_old_backups.py [--cells among-mid,gone-over-torn,...]
        [--players 2-3] [--seed N] [--dir DIR] [--keep]
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import chaos
from scanning import game_record, grid_main

from p2p_nertz.logfile.format import LogDecoder, RecordKind
from p2p_nertz.logfile.store import read_log

SUSPECT, DROP = 2.0, 8.0
AFTER = ["--suspect-after", "1", "--drop-after", "2"]
VICTIM = 1
#: The ages a copy is taken at: cards to the lake (0: once the log holds :data:`START_BYTES`).
AGES = {"start": 0, "early": 5, "mid": 10}
START_BYTES = 1500
KILL_AT = 18
CELLS = tuple(
    f"{when}-{age}{torn}"
    for when in ("among", "gone")
    for age in (*AGES, "over")
    for torn in ("", "-torn")
    if not (when == "among" and age == "over")
)


def _copy_now(log: Path) -> bytes:
    """The victim's log as it is, cut back to its last whole frame (a backup that looks
    whole)."""
    raw = log.read_bytes()
    decoder = LogDecoder()
    decoder.feed(raw)
    return raw[: decoder.close().good_end]


def _own(log: Path) -> list[bytes]:
    with read_log(log) as reader:
        return [r.data for r in reader if r.kind is RecordKind.SENT_EVENT]


def play(cell: str, players: int, seed: int, root: Path) -> dict[str, Any]:
    when, age, *rest = cell.split("-")
    torn = bool(rest)
    plan = chaos.Schedule(seed, players, 1, ())
    workdir = root / f"{cell}-{players}p"
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    game = chaos.Game(plan, workdir, SUSPECT, DROP)
    deadline = time.monotonic() + 150.0 + 4 * DROP
    problems: list[str] = []
    notes: list[str] = []
    copy: bytes | None = None
    victim_said: list[str] = []
    try:
        game.begin(None)
        victim = game.nodes[VICTIM]
        if age != "over":
            cards = AGES[age]
            while time.monotonic() < deadline and not game.poll():
                if (
                    cards == 0 and victim.log.exists() and victim.log.stat().st_size >= START_BYTES
                ) or (cards and game.progress()[0] >= cards):
                    copy = _copy_now(victim.log)
                    notes.append(f"copied at {time.monotonic() - game.start:.1f}s ({len(copy)} B)")
                    break
                time.sleep(0.05)
        if when == "among" and copy is not None:
            while game.progress()[0] < KILL_AT and not game.poll() and time.monotonic() < deadline:
                time.sleep(0.1)
            if victim.last.proc.poll() is None:
                victim.last.proc.kill()
                victim.last.proc.wait()
                victim.last.killed = True
                victim.faulted = True
                now = victim.log.read_bytes()
                victim.log.write_bytes(now[: len(copy) + 9] if torn else copy)
                notes.append(f"killed at {time.monotonic() - game.start:.1f}s, copy put back")
                game.resume(victim)
            else:
                problems.append("the victim ended before the kill")
        running = chaos.play_out(game, deadline, plan.rounds)
    finally:
        game.stop_all()
    if copy is None and age != "over":
        problems.append("the game ended before the copy")
    found, facts = chaos.check(game, running)
    victim = game.nodes[VICTIM]
    said = victim.last.err.read_text(errors="replace").strip().splitlines()
    if when == "among" and not torn:
        # Stopped by its own events (``nertz resume``'s error status, 2) in one line; or, the
        # others gone before it listened (a slow start: seed 3200 at load 29, 12 s), unheard,
        # which chaos's checks judge (no member within its reach while it listened).
        elsewhere = f"{victim.name}: exit 2: "
        kept = [p for p in found if not p.startswith(elsewhere)]
        code = victim.last.proc.returncode
        if code == 2 and (len(said) != 1 or "an older copy" not in said[0]):
            kept.append(f"{victim.name}: not stopped in one line: {said}")
        elif code not in (2, chaos.EXIT_UNHEARD):
            kept.append(f"{victim.name}: exit {code}, not stopped: {said[-1:]}")
        found = kept
    problems += found
    if when == "gone":
        whole = victim.log.read_bytes()
        data: bytes | None = None
        if age == "over":  # (the finished game's log; torn: cut inside its last record)
            data = whole[:-5] if torn else whole
        elif copy is not None:
            data = whole[: len(copy) + 9] if torn else copy
        if data is not None:
            problems += _resume_gone(game, workdir, age, data, torn=torn, said=victim_said)
    said = (victim_said or said)[-1:]
    result = game_record(
        ("cell", cell), players, seed, game, facts=facts, problems=problems, notes=notes, said=said
    )
    (workdir / "result.json").write_text(json.dumps(result, indent=1))
    return result


def _resume_gone(
    game: chaos.Game, workdir: Path, age: str, data: bytes, *, torn: bool, said: list[str]
) -> list[str]:
    """``nertz node`` of the copy ``data`` once everyone is gone; what is wrong with it."""
    victim = game.nodes[VICTIM]
    copy = workdir / "copy" / victim.log.name
    copy.parent.mkdir()
    copy.write_bytes(data)
    own = _own(copy)
    argv = list(victim.argv)
    argv[argv.index("--log") + 1] = str(copy)
    argv[argv.index("--bind") + 1] = "tcp://127.0.0.1:0"
    cut = argv.index("--suspect-after")
    argv[cut : cut + 4] = AFTER
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False
    )
    (workdir / "copy.out").write_text(done.stdout + done.stderr)
    lines = done.stderr.strip().splitlines()
    said += lines
    problems = []
    if "Traceback" in done.stderr:
        problems.append("copy: traceback")
    if not torn and _own(copy) != own:
        problems.append("copy: signed anew")
    code = done.returncode
    expect = (0,) if age == "over" and not torn else (3,) if torn else (5,)
    words = "cannot recover our own events" if torn else "heard nobody at this table"
    if code not in expect or (code != 0 and (len(lines) != 1 or words not in lines[0])):
        problems.append(f"copy: exit {code}: {lines[-1:]}")
    # (The finished game's copy ends as the game did, or stops unheard saying the game is
    # over as its log has it: status 0 either way since session 33, cli/args.py gone_status.)
    unheard = [ln for ln in lines if "heard nobody at this table" in ln]
    if age == "over" and unheard and "the game is over as this log has it" not in unheard[0]:
        problems.append(f"copy: the game's end not said: {unheard[0]}")
    logs = [str(n.log) for n in game.nodes] + [str(copy)]
    audit = subprocess.run(
        [sys.executable, "-m", "cli", "audit", "--json", *logs],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    (workdir / "audit.out").write_text(audit.stdout + audit.stderr)
    if audit.returncode != 0:
        problems.append(f"audit with the copy: exit {audit.returncode}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    return grid_main(
        argv, doc=__doc__, option="cell", names=CELLS, players="2-3", seed=3200,
        directory="scan-old-backups", play=play, width=15,
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
