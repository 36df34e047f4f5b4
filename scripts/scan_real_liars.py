#!/usr/bin/env python3
"""Scan the lie fuzzer's lies on real nodes (session 32): every lie, a few seeds each.

The simulator's liars (:mod:`p2p_nertz.sim.liars`: 28 lies, each a well-formed, validly signed
message with one field wrong) put through the real runtime: each game is one trio run of 2 to
4 real nodes (:mod:`p2p_nertz.testing.liar_nodes`: ``PeerNode`` on tcp://127.0.0.1, real log
files, real signatures, greedy bots at speed 10, one round, the simulator's quick timers
``suspect_after 1, drop_after 3, phase_timeout 6``), one of them a
:class:`~p2p_nertz.testing.liar_nodes.LiarNode`. Seed ``k`` is the game the simulator's fuzzer
draws for it (``scripts/soak.py --liars`` seed ``k``: the table size, the liar's seat, its lie
``LIES[k % 28]``, when it starts lying and how often); ``--seeds N`` plays, for each lie, the
seeds ``i, i + 28, …`` (``N`` of them, ``i`` the lie's index).

Each game is judged as the simulator's are (:func:`~p2p_nertz.testing.liar_nodes.check`): no
node raised; every honest node ended within ``--bound`` seconds (no freeze), the game over,
with one final state; nobody honest dropped or refused; the audit of every log file reaches
that state, names no honest member, and names every liar whose lie the honest nodes proved.
``nertz audit --json`` (the command, a process) of every log must exit 1 where the audit
found errors, 0 where none, with no traceback, and name the same members in its errors. A
liar holding play open (a member that never passes, docs/protocol.md §13: a protocol gap
that is not the runtime's) is counted apart, not failed.

One line per game (the lies told, what the honest nodes refused, the audit's errors by
member, wall and CPU seconds), then the counts by lie. A failed game's logs are kept.

    nice -n 10 python scripts/scan_real_liars.py [--lies seq_skip,...] [--seeds 3]
        [--players 2-4] [--only SEED,...] [--bound 120] [--dir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

import trio

from p2p_nertz.sim.liars import LIES, Lie
from p2p_nertz.testing.liar_nodes import BOUND, audit_logs, check, draw, play

ROOT = Path(__file__).resolve().parent.parent
VERDICTS = ("ok", "slow", "held-open", "FAIL")


def seeds_of(lies: Sequence[Lie], per_lie: int) -> list[int]:
    """The seeds that play each of ``lies``, ``per_lie`` of each (seed ``k`` plays
    ``LIES[k % len(LIES)]``)."""
    return sorted(LIES.index(lie) + len(LIES) * k for lie in lies for k in range(per_lie))


def audit_command(logs: Sequence[Path]) -> tuple[int, set[int | None], str]:
    """``nertz audit --json --deep`` of ``logs``: its exit status, the seats its errors
    name, and its stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "cli", "audit", "--json", "--deep", *map(str, logs)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    named: set[int | None] = set()
    for line in proc.stdout.splitlines():
        entry = json.loads(line)
        finding = entry.get("finding")
        if entry.get("event") == "finding" and finding["severity"] == "error":
            named.add(finding.get("seat"))
    return proc.returncode, named, proc.stderr


def one(seed: int, args: argparse.Namespace, players: tuple[int, int], root: Path) -> dict:
    """Play and judge seed ``seed``'s game; its line's fields."""
    spec, identities, liars = draw(seed, players=players)
    workdir = root / f"seed{seed}"
    workdir.mkdir(parents=True, exist_ok=True)
    cpu = time.process_time()
    said = logging.FileHandler(workdir / "nodes.txt")  # (what the nodes log, kept with the logs)
    said.setFormatter(logging.Formatter("%(relativeCreated)8.0f %(name)s %(message)s"))
    logging.getLogger().addHandler(said)
    try:
        run = trio.run(lambda: play(spec, identities, liars, workdir, bound=args.bound))
    finally:
        logging.getLogger().removeHandler(said)
        said.close()
    report = audit_logs(run)
    problems, holding = check(run, report)
    status, named, stderr = audit_command([p for p in run.logs if p.exists()])
    errors = {f.seat for f in report.errors}
    if status != (1 if errors else 0) or "Traceback" in stderr:
        problems.append(f"nertz audit: exit {status} for {len(errors)} errors: {stderr[-200:]}")
    elif named != errors:
        problems.append(f"nertz audit named {sorted(map(str, named))}, the library {errors}")
    refused: Counter[str] = Counter()
    for seat, counts in enumerate(run.refused):
        if seat not in run.cheaters:
            refused.update(counts)
    verdict = (
        "FAIL" if problems else "held-open" if holding else "slow" if run.wall > args.slow else "ok"
    )
    if verdict == "ok" and not args.keep:
        shutil.rmtree(workdir)
    return {
        "seed": seed,
        "lie": str(liars[0].lie),
        "players": spec.seats,
        "liar": liars[0].seat,
        "told": sum(run.told.values()),
        "verdict": verdict,
        "problems": problems,
        "refused": dict(sorted(refused.items())),
        "audit": sorted(f"{f.kind}@{f.seat}" for f in report.errors),
        "dropped": sorted({q for p in run.peers if p is not None for q in p.final.dropped}),
        "wall": run.wall,
        "still": run.longest_still,
        "cpu": time.process_time() - cpu,
        "dir": str(workdir),
    }


def line(r: dict) -> str:
    head = (
        f"seed {r['seed']:4d} {r['lie']:<17} {r['players']}p liar {r['liar']} told {r['told']}"
        f" {r['verdict']:<9} {r['wall']:5.1f}s (still {r['still']:4.1f}) {r['cpu']:4.1f}cpu"
        f" dropped {r['dropped']}"
    )
    detail = f" refused {r['refused']} audit {sorted(set(r['audit']))}"
    fail = "".join(f"\n    {p}" for p in r["problems"])
    kept = f"\n    kept {r['dir']}" if r["verdict"] != "ok" else ""
    return head + detail + kept + fail


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lies", default=",".join(LIES), help="the lies (default: all 28)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per lie (default 3)")
    parser.add_argument("--only", default="", help="these seeds alone (comma-separated)")
    parser.add_argument("--players", default="2-4", help="table sizes drawn from (default 2-4)")
    parser.add_argument(
        "--bound",
        type=float,
        default=BOUND,
        help="seconds a game may take at most (one that moves but never ends); a freeze is "
        "no honest fold moving for STILL s (liar_nodes)",
    )
    parser.add_argument(
        "--slow", type=float, default=60.0, help="seconds past which a game is named slow"
    )
    parser.add_argument("--dir", type=Path, default=None, help="where the games' logs go")
    parser.add_argument("--keep", action="store_true", help="keep the logs of passed games too")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
    low, _, high = args.players.partition("-")
    players = (int(low), int(high or low))
    try:
        lies = [Lie(name.strip()) for name in args.lies.split(",") if name.strip()]
    except ValueError as exc:
        parser.error(f"{exc}; the lies: {', '.join(LIES)}")
    seeds = [int(s) for s in args.only.split(",")] if args.only else seeds_of(lies, args.seeds)
    root = args.dir or Path(tempfile.mkdtemp(prefix="real-liars-"))
    results = []
    for seed in seeds:
        r = one(seed, args, players, root)
        results.append(r)
        print(line(r), flush=True)
    by_lie: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        by_lie[r["lie"]][r["verdict"]] += 1
        by_lie["all"][r["verdict"]] += 1
    print(f"\n{'lie':<18} {' '.join(VERDICTS)}   (load {os.getloadavg()[0]:.1f})")
    for lie in [*LIES, "all"]:
        if lie in by_lie:
            counts = " ".join(f"{by_lie[lie][v]:{len(v)}d}" for v in VERDICTS)
            print(f"{lie:<18} {counts}")
    c = by_lie["all"]
    return 1 if c["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
