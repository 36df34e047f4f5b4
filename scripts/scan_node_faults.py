#!/usr/bin/env python3
"""Scan faults of one node's machine on real nodes (session 28): disk, log, key, clocks, syncs.

Every game is a ``scripts/chaos.py`` game (``nertz node`` bot processes over ZeroMQ on
127.0.0.1, two rounds, quick timers ``--suspect-after 2 --drop-after 8``), with one fault done
to one node (the victim, seat 1) or its machine:

``full``: the victim's log alone on a small tmpfs of its own (a private mount namespace), which
    the game fills: ``SIZE`` KiB (``full16`` in round 1, ``full48`` in round 1 or 2, ``full96``
    in round 2 or not at all). The victim must stop with one line naming its log, the others
    end alike (they drop it, or at two abandon it), and the audit of every log (the victim's
    as the full disk left it) be VALID (notices only: the short log's gaps).
``twin``: a second ``nertz node`` of the victim (its key, another log, another port) started
    after the table's 5th card: it must be refused in one line before it signs anything
    (:mod:`p2p_nertz.runtime.playerlock`), and the game end as if it never came, audit VALID.
``unlink``: the victim's log removed after the table's 10th card (its directory entry: the
    node went on writing to a file no name reached, session 28). The node must write it again
    under its name and say so, the game end alike, every exit 0, the audit of every log VALID.
``clockN``: the victim's wall clock (``time.time``) jumps by ``N`` hours at start
    (``clock-24``: a day back; ``clock+24``; ``clock0``: 1 January 1970, a machine with no
    real-time clock). The node reads no wall clock but the log header's creation time; the
    game must end alike, audit VALID.
``rekill-M``: the victim killed (SIGKILL) at the moment ``M`` (``start``: once its log holds
    its join and commit, as it deals; ``early``, ``mid``: after the table's 5th, 20th card;
    ``end``: at the end of round 1, as it scores), resumed (``nertz resume``) a second later,
    and killed again 0.5 s after that resume said it started, during its catch-up (its
    restore, its gap repair), with its log's
    last bytes cut (a torn tail: the second resume recovers, docs/protocol.md §9.6), then
    resumed again a second later: ``scripts/chaos.py``'s checks (every node ends alike or as
    documented, every audit VALID).
``fsyncS``: a one-round game where every ``fsync``/``fdatasync`` of the victim takes ``S`` s (a
    ``sitecustomize`` on the victim's ``PYTHONPATH``, no LD_PRELOAD): ``fsync1`` (1 s, under
    the suspicion timer), ``fsync3`` (over suspicion, under the drop), ``fsync12`` (over the
    drop). The nodes that finish must agree and the audit be VALID; the victim may be dropped
    (and then finds the table gone, exit 3) only where a sync outlasted the drop timer; there
    at two players the other, hearing nobody while the victim's log is created, may stop
    unheard (exit 5, session 29) and the victim then abandon it (session 30). (Session 28:
    ``fsync3`` failed, the victim dropped before it was ever heard, its start making four syncs
    in a row before its first message; a new log is now created whole by its first write, two
    syncs: docs/protocol.md §9.6.)

The faults are passed to the child processes only: no mount, clock or sync of this machine
changes. One line per game, then the counts by fault and table size.

    nice -n 10 python scripts/scan_node_faults.py [--faults full48,twin,...] [--players 2-4]
        [--dir DIR] [--keep]
"""

from __future__ import annotations

import json
import os
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

SUSPECT, DROP = 2.0, 8.0
FAULTS = (
    "full16", "full48", "full96", "twin", "unlink",
    "clock-24", "clock+24", "clock0", "fsync1", "fsync3", "fsync12",
    "rekill-start", "rekill-early", "rekill-mid", "rekill-end",
)  # fmt: skip
#: ``rekill-*``: where the first kill falls (chaos's triggers: cards to the lake, -1 the end of
#: round 1), and how long after its resume began the second falls (seconds).
REKILL = {"start": 0, "early": 5, "mid": 20, "end": -1}
REKILL_DEAD, REKILL_INTO = 1.0, 0.5
#: ``rekill-start``: the first kill once the victim's log holds this many bytes (its join and
#: its commit, signed: the deal under way), not at once (before its log existed).
REKILL_START_BYTES = 1500
VICTIM = 1

#: The victim's ``sitecustomize``: a wall clock that jumps (``RED_CLOCK``), syncs that take
#: ``RED_FSYNC`` s (all of them, or the first ``RED_FSYNC_FIRST``: tests/test_red_faults.py;
#: ``RED_FSYNC=0,0.3,6``: the first sync quick, the second 0.3 s, every one after 6 s).
SITECUSTOMIZE = """\
import os, time
_jump = os.environ.get("RED_CLOCK")
if _jump is not None:
    _real = time.time
    _at = 0.0 if _jump == "zero" else None
    def _time():
        return (_real() - _start) + 1.0 if _at is not None else _real() + float(_jump) * 3600
    _start = _real()
    time.time = _time
_delay = os.environ.get("RED_FSYNC")
if _delay is not None:
    _sync, _datasync = os.fsync, getattr(os, "fdatasync", None)
    _slow_left = [int(os.environ.get("RED_FSYNC_FIRST", "-1"))]  # (-1: every sync)
    _delays = [float(d) for d in _delay.split(",")]  # (the n-th sync's, the last one's after)
    def _slow(call):
        def slow(fd):
            if _slow_left[0] != 0:
                _slow_left[0] -= 1
                time.sleep(_delays.pop(0) if len(_delays) > 1 else _delays[0])
            return call(fd)
        return slow
    os.fsync = _slow(_sync)
    if _datasync is not None:
        os.fdatasync = _slow(_datasync)
"""


class FaultGame(chaos.Game):
    """A chaos game whose victim starts under the fault (its command wrapped, its
    environment changed)."""

    def __init__(self, plan: chaos.Schedule, workdir: Path, fault: str) -> None:
        super().__init__(plan, workdir, SUSPECT, DROP)
        self.fault = fault
        self.disk = workdir / "disk"
        self.site = workdir / "site"

    def _spawn(
        self, node: chaos.Node, argv: list[str], stem: str, *, stdin: int = subprocess.DEVNULL
    ) -> None:
        if node.seat != VICTIM or node.runs:
            super()._spawn(node, argv, stem, stdin=stdin)
            return
        out, err = self.dir / f"{stem}.out", self.dir / f"{stem}.err"
        files = [out.open("wb"), err.open("wb")]
        env = None
        if self.fault.startswith("full"):
            self.disk.mkdir()
            size = self.fault.removeprefix("full")
            log = self.disk / node.log.name
            argv = [str(log) if a == str(node.log) else a for a in argv]
            mount = (
                f'mount -t tmpfs -o size={size}k none {self.disk} && "$@"; code=$?; '
                f"cp {log} {node.log}; exit $code"
            )
            argv = ["unshare", "-m", "sh", "-c", mount, "sh", *argv]
        elif self.fault.startswith(("clock", "fsync")):
            self.site.mkdir()
            (self.site / "sitecustomize.py").write_text(SITECUSTOMIZE)
            env = {**os.environ, "PYTHONPATH": str(self.site)}
            if self.fault.startswith("clock"):
                hours = self.fault.removeprefix("clock")
                env["RED_CLOCK"] = "zero" if hours == "0" else hours
            else:
                env["RED_FSYNC"] = self.fault.removeprefix("fsync")
        proc = subprocess.Popen(argv, stdin=stdin, stdout=files[0], stderr=files[1], env=env)
        node.runs.append(chaos.Run(proc, out, err, list(files), time.monotonic()))


def play_rekill(moment: str, players: int, seed: int, root: Path) -> dict[str, Any]:
    """A ``rekill-*`` game: two kills of the victim, the second during the resume the first
    made (chaos's ``during`` would miss it: it falls while the node is dead)."""
    first = chaos.Fault("kill", VICTIM, REKILL[moment], REKILL_DEAD)
    again = chaos.Fault("kill-torn", VICTIM, 0, REKILL_DEAD, torn=5)
    plan = chaos.Schedule(seed, players, 2, (first, again))
    workdir = root / f"rekill-{moment}-{players}p"
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    game = chaos.Game(plan, workdir, SUSPECT, DROP)
    deadline = time.monotonic() + 90.0 * plan.rounds + 4 * DROP
    problems: list[str] = []

    def wait(seconds: float) -> None:
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            game.poll()
            time.sleep(0.05)

    try:
        game.begin(None)
        log = game.nodes[VICTIM].log
        while moment == "start" and time.monotonic() < deadline and not game.poll():
            if log.exists() and log.stat().st_size >= REKILL_START_BYTES:
                break
            time.sleep(0.02)
        if game.wait_trigger(first, deadline, time.monotonic()):
            restart = game.inflict(first)
            wait(first.length)
            restart()
            resumed = game.nodes[VICTIM].last
            until = time.monotonic() + 30.0
            while time.monotonic() < until and resumed.proc.poll() is None:
                if resumed.out.read_bytes().startswith(b'{"event": "resume"'):
                    break
                time.sleep(0.02)
            wait(REKILL_INTO)
            if game.nodes[VICTIM].last.proc.poll() is None:
                restart = game.inflict(again)
                wait(again.length)
                restart()
            else:
                problems.append("the resume had ended before the second kill")
        else:
            problems.append("the game ended before the first kill")
        running = chaos.play_out(game, deadline, plan.rounds)
    finally:
        game.stop_all()
    found, facts = chaos.check(game, running)
    problems += found
    return game_record(
        ("fault", f"rekill-{moment}"), players, seed, game, facts=facts, problems=problems
    )


def play(fault: str, players: int, seed: int, root: Path) -> dict[str, Any]:
    if fault.startswith("rekill-"):
        return play_rekill(fault.removeprefix("rekill-"), players, seed, root)
    # A node whose every sync takes seconds signs an event every few seconds: one round
    # (some 150 events of its own, more at two players: at fsync3 its round took 866 s, past
    # the 12 min once allowed, session 28), and time for it.
    slow = fault in ("fsync1", "fsync3")
    plan = chaos.Schedule(seed, players, 1 if fault.startswith("fsync") else 2, ())
    workdir = root / f"{fault}-{players}p"
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    game = FaultGame(plan, workdir, fault)
    deadline = time.monotonic() + 90.0 * plan.rounds + 4 * DROP + 1500.0 * slow
    notes: list[str] = []
    twin: chaos.Node | None = None
    try:
        game.begin(None)
        victim = game.nodes[VICTIM]
        if fault in ("twin", "unlink"):
            cards = 5 if fault == "twin" else 10
            while game.progress()[0] < cards and not game.poll() and time.monotonic() < deadline:
                time.sleep(0.1)
            if fault == "unlink" and victim.log.exists():
                victim.log.unlink()
                notes.append(f"log removed at {time.monotonic() - game.start:.1f}s")
            elif fault == "twin":
                twin = chaos.Node(VICTIM, victim.key, workdir / "twin.log")
                argv = list(victim.argv)
                argv[argv.index("--log") + 1] = str(twin.log)
                argv[argv.index("--bind") + 1] = "tcp://127.0.0.1:0"
                chaos.Game._spawn(game, twin, argv, "twin")
                notes.append(f"twin started at {time.monotonic() - game.start:.1f}s")
        while not game.poll() and time.monotonic() < deadline:
            time.sleep(0.2)
        running = [n.name for n in game.nodes if n.last.proc.poll() is None]
    finally:
        game.stop_all()
        if twin is not None:
            for run in twin.runs:
                if run.proc.poll() is None:
                    run.proc.kill()
                run.proc.wait()
                run.poll(time.monotonic())
    problems, facts = chaos.check(game, running)
    problems = judge(fault, game, twin, problems)
    said = [n.last.err.read_text(errors="replace").strip() for n in game.nodes]
    last = said[VICTIM].splitlines()[-1:] if said[VICTIM] else []
    result = game_record(
        ("fault", fault),
        players,
        seed,
        game,
        facts=facts,
        problems=problems,
        notes=notes,
        said=last,
    )
    if twin is not None:
        result["twin"] = [twin.last.proc.returncode, *twin.last.err.read_text().splitlines()[-1:]]
    (workdir / "result.json").write_text(json.dumps(result, indent=1))
    return result


def judge(fault: str, game: chaos.Game, twin: chaos.Node | None, problems: list[str]) -> list[str]:
    """The problems of the game for ``fault``: chaos's checks, less what the fault makes
    right (the victim's exit on a full disk, its drop on a sync past the drop timer)."""
    victim = game.nodes[VICTIM]
    code = victim.last.proc.returncode
    err = victim.last.err.read_text(errors="replace").strip().splitlines()
    kept = []
    for p in problems:
        if fault.startswith("full") and p.startswith(f"{victim.name}: exit 1: "):
            named = (
                f"nertz node: error: {str(game.disk / victim.log.name)!r}: No space left on device"
            )
            if err != [named]:
                kept.append(f"{victim.name}: not one line naming its log: {err}")
            continue
        if fault == "fsync12" and p.startswith(f"{victim.name}: found the table gone"):
            continue  # (it slept past the drop: the others were right to drop it)
        if fault == "fsync12" and p.endswith(
            f": stopped unheard while {victim.name} played within reach"
        ):
            # At two players the victim's first syncs, before its join is sent (its log's
            # creation: two of 12 s), keep it silent past the drop: the other, having heard
            # nobody, stops unheard as documented (docs/protocol.md §9.6, session 29).
            continue
        kept.append(p)
    if fault.startswith("full") and code == 0:
        kept.append(f"{victim.name}: its disk never failed it (exit 0)")
    if fault.startswith("fsync") and fault != "fsync12":
        dropped = {d for n in game.nodes if (f := n.last.final()) for d in f.get("dropped", ())}
        if VICTIM in dropped:
            kept.append(f"{victim.name}: dropped, though no sync outlasted the drop timer")
    if fault == "unlink":
        if not victim.log.exists():
            kept.append(f"{victim.name}: its log, removed, was not written again")
        if not any("was removed while the game ran: written again there" in e for e in err):
            kept.append(f"{victim.name}: did not say its log was written again: {err}")
    if twin is not None:
        said = twin.last.err.read_text(errors="replace").strip().splitlines()
        if twin.last.proc.returncode != 1 or len(said) != 1 or "already playing" not in said[0]:
            kept.append(f"twin: not refused in one line: {twin.last.proc.returncode} {said}")
        if twin.log.exists():
            kept.append("twin: wrote a log")
    return kept


def main(argv: Sequence[str] | None = None) -> int:
    return grid_main(
        argv, doc=__doc__, option="fault", names=FAULTS, players="2-4", seed=2800,
        directory="scan-node-faults", play=play,
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
