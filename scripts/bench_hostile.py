#!/usr/bin/env python3
"""A hostile member on real nodes: what each attack costs the honest nodes, against no attack.

Session 24. For each player count and each attack of ``tests/hostile_helpers.py`` (the honest
members in processes of their own, greedy bots on tcp://127.0.0.1 with CURVE; the hostile
member, the last seat, in this process with its valid key), a game of the same seed is played
with no attack first (the reference), then with the attack. Printed per game: whether the
honest nodes ended the same game (final digests equal), whom they dropped, what the audit of
every log names, and the honest nodes' mean CPU seconds, peak RSS and wall time, with their
ratios to the reference. Timing figures depend on the machine's load: the load average is
printed beside them.

    python scripts/bench_hostile.py [--players 2,3,4] [--attacks wants,equivocate,...]
                                    [--seed 1] [--timeout 130]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT / "tests", ROOT):
    if str(path) not in sys.path:  # run as a file: the harness lives beside the tests
        sys.path.insert(0, str(path))

from hostile_helpers import ATTACKS, GameOutcome, run_game  # noqa: E402


def _mean(values: Sequence[float | None]) -> float:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else float("nan")


def _line(outcome: GameOutcome, reference: GameOutcome | None) -> str:
    cpu = _mean([h.cpu for h in outcome.honest])
    rss = _mean([h.rss_mb for h in outcome.honest])
    wall = _mean([h.wall for h in outcome.honest])
    ratios = ""
    if reference is not None:
        ref = [_mean([getattr(h, k) for h in reference.honest]) for k in ("cpu", "rss_mb", "wall")]
        ratios = f"  x{cpu / ref[0]:.1f} cpu x{rss / ref[1]:.2f} rss x{wall / ref[2]:.1f} wall"
    dropped = sorted({s for h in outcome.honest for s in h.dropped})
    crashed = [h.seat for h in outcome.honest if h.returncode != 0 or h.traceback]
    named = {code: sorted(set(seats)) for code, seats in outcome.findings.items()}
    return (
        f"{outcome.attack:12} n={outcome.players} same_game={outcome.agreed} "
        f"timed_out={outcome.timed_out} dropped={dropped} crashed={crashed} sent={outcome.sent}"
        f"\n    cpu {cpu:.2f} s  rss {rss:.1f} MB  wall {wall:.1f} s{ratios}"
        f"\n    audit: dropped {outcome.audit_dropped}, findings {named}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    from ports import own_player_locks

    own_player_locks()  # (two runs at once must not lock each other's nodes out)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", default="2,3,4")
    parser.add_argument("--attacks", default=",".join(a for a in ATTACKS if a != "none"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=130.0, help="seconds a game may take")
    args = parser.parse_args(argv)
    attacks = [a for a in args.attacks.split(",") if a]
    unknown = sorted(set(attacks) - set(ATTACKS))
    try:
        players = [int(p) for p in args.players.split(",") if p]
    except ValueError:
        players = []
    if unknown or not players or min(players) < 2:
        parser.error(f"bad arguments (unknown attacks: {unknown}; players >= 2)")
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        for n in players:
            reference = run_game("none", n, args.seed, Path(tmp), timeout=args.timeout)
            print(f"load {os.getloadavg()[0]:.1f}  " + _line(reference, None), flush=True)
            for attack in attacks:
                outcome = run_game(attack, n, args.seed, Path(tmp), timeout=args.timeout)
                print(f"load {os.getloadavg()[0]:.1f}  " + _line(outcome, reference), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
