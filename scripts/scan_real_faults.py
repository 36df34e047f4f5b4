#!/usr/bin/env python3
"""Scan faults on real nodes over a grid (sessions 26, 27): partitions and torn logs, 2-5 players.

Every game is a ``scripts/chaos.py`` game (``nertz node`` bot processes over ZeroMQ, two
rounds, quick timers: ``--suspect-after 2 --drop-after 8``) with one fault, chosen from a
grid rather than drawn, so that every cell is played:

``partitions`` (in a network-namespace lab, :class:`p2p_nertz.testing.netns.Lab`: no packet
leaves the namespaces the scan makes), shapes by table size:

- ``one``: one member cut off (``cut-one``), at 3, 4 and 5 players;
- ``halves``: the table split in two, no majority either side at 4 (2|2), 2|3 at 5;
- ``link``: one link failed both ways, the two ends still reaching everyone else
  (``cut-link``, :meth:`~p2p_nertz.testing.netns.Lab.cut_link`);
- ``oneway``: what one member sends one other lost, nothing else (``cut-oneway``);

at two players (session 27) ``one`` is the table split 1|1 and ``oneway`` what one of the two
sends the other lost (each direction in turn, by the game's number); ``link`` is left out
there (the link is the table: ``one``);

each at the lengths ``--lengths`` names (``scripts/chaos.py`` ``--length``: ``short`` below
suspicion, ``drop`` healing as the votes are cast, ``2d`` twice the drop, ``past`` past the
abandon and its wait, ``long`` 60 s) and starting at the moments ``--moments`` names
(``play``: after the table's 10th card to the lake; ``end``: at the end of round 1).

``torn``: a node killed (SIGKILL) at a moment (after the table's 0th, 5th, 20th or 45th card
to the lake, or at round 1's end) and resumed (``nertz resume``) a second later with its log
as the kill left it (``kill``), its last few bytes cut (``kill-torn``: a torn last record), or
cut at a byte (``kill-cut``, keeping 10 %, 40 %, 70 % or 95 % of it: mid-record, so
recovered as torn, or on a frame boundary, resumed with ``--recover`` as the person who cut it
would, docs/protocol.md §9.6), at 3 and 4 players; ``--cuts`` also takes ``frame40``,
``frame70``, ``frame95`` (the cut moved back to the frame boundary before it, whole frames
lost, resumed with ``--recover``: ``kill-frame``) and ``header`` (a cut inside the log's
header, a thousandth of the log kept: nothing to resume from). A cut prefixed ``both:`` or
``turn:`` (session 27, e.g. ``both:kill-torn``) kills two members, the victim and the next
seat, each log cut the same way: ``both`` the second while the first is dead (both down at
once, resumed in turn half a second apart), ``turn`` the second once the first has been
resumed, ten cards to the lake later (at round 1's end, at once).

``degraded`` (session 31, in a lab too, with ``nft`` and ``tc``): a network bad rather than
gone, from the table's 10th card to the lake, at 2-5 players, by ``--shapes``:

- ``lossy-one``, ``lossy-all``: 5 %, 30 % or 60 % (in bursts) of the packets lost on one
  member's link, or between every two members (``chaos.py`` ``lossy``);
- ``slow-one``, ``slow-all``: every packet delayed 50 ms ± 20, 500 ms ± 200 or 2.5 s ± 1
  (over the suspect timer) on one member's link, or between every two (``slow``; the
  kernel here has no ``netem``: :mod:`p2p_nertz.testing.delay` holds the packets);
- ``narrow-one``, ``narrow-all``: a link narrowed to 256, 32 or 8 kbit/s, its queue delaying
  every message by up to 4 s (``narrow``);
- ``reset``: one member's TCP connections reset and refused (``reset``), for ``short``,
  ``suspect``, ``over`` and ``2d``;
- ``flap``: one member's link down and up with a period of ``s``, ``(s + d) / 2`` and ``d``,
  for ``2d`` (``flap``);
- ``roll``: A|BC…, AB|C…, … then whole, each step ``short``, ``suspect`` or ``over`` long,
  from three players (``roll``);

``lossy``, ``slow`` and ``narrow`` last ``suspect``, ``over`` or ``2d`` (one per cell, in turn).

Each game passes ``scripts/chaos.py``'s checks (no traceback; every node's exit as documented;
the settled finals equal; ``nertz audit`` of every log VALID), except that in ``torn`` a
resume may refuse the cut log clearly (a non-zero exit, its last stderr line a ``nertz``
error, no traceback: counted as ``refused``) and the audit may then report the cut log as a
file (findings that accuse nobody); an audit error that accuses a member is a failure in
every family (every member here is honest). One line per game, then the counts by cell.

    nice -n 10 python scripts/scan_real_faults.py partitions [--players 3-5]
        [--shapes one,halves,link,oneway] [--lengths short,drop,2d] [--moments play,end]
        [--only K] [--dir DIR]
    nice -n 10 python scripts/scan_real_faults.py torn [--players 3-4] [--cuts ...] [--only K]
    nice -n 10 python scripts/scan_real_faults.py degraded [--players 2-5] [--shapes lossy-one,...]

Session 27's two-player grid::

    scan_real_faults.py partitions --players 2 --shapes one,oneway --lengths short,drop,2d,past,long
    scan_real_faults.py torn --players 2 --cuts kill,kill-torn,keep40,frame40
    scan_real_faults.py torn --players 2 --moments early,mid,end \
        --cuts both:kill,both:kill-torn,turn:kill-torn,turn:frame40

``--only K`` plays the grid's K-th game alone (its number is on its line: the game's seed),
``--print`` lists the grid without playing.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import shutil
import signal
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import chaos
from scanning import span

from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.rng import derive_seed
from p2p_nertz.testing.netns import impairments_unavailable, unavailable

SUSPECT, DROP = 2.0, 8.0
SHAPES = ("one", "halves", "link", "oneway")
MOMENTS = {"play": 10, "end": -1}
TORN_MOMENTS = {"start": 0, "early": 5, "mid": 20, "late": 45, "end": -1}
CUTS = ("kill", "kill-torn", "keep10", "keep40", "keep70", "keep95")
#: Cut names ``--cuts`` takes besides :data:`CUTS`: ``frameK`` a ``keepK`` moved back to the frame
#: boundary before it, ``header`` a cut inside the log's header (a thousandth of it kept).
MORE_CUTS = ("frame40", "frame70", "frame95", "header")
#: Prefixes of a cut that kill two members (session 27, at two players: both): ``both:CUT``
#: the next seat killed while the first is dead (both down at once, resumed in turn), and
#: ``turn:CUT`` the next seat killed once the first has been resumed; each log cut by ``CUT``.
MODES = ("both", "turn")
#: ``degraded``'s shapes (session 31), and the lengths each plays.
DEGRADED_SHAPES = (
    "lossy-one", "lossy-all", "slow-one", "slow-all", "narrow-one", "narrow-all",
    "reset", "flap", "roll",
)  # fmt: skip
DEGRADED_LENGTHS = ("suspect", "over", "2d")
RESET_LENGTHS = ("short", "suspect", "over", "2d")
ROLL_STEPS = ("short", "suspect", "over")


@dataclass(frozen=True)
class Cell:
    """One game of the grid: its family, its cell's name and its schedule."""

    family: str
    name: str
    plan: chaos.Schedule


def partition_grid(
    players: Sequence[int], shapes: Sequence[str], lengths: Sequence[str], moments: Sequence[str]
) -> list[Cell]:
    cells = []
    for n in players:
        for shape in shapes:
            if shape == "halves" and n < 4:
                continue  # (at three, a half is one member: ``one``)
            if shape == "link" and n < 3:
                continue  # (at two, the link is the table: ``one``)
            for length in lengths:
                for moment in moments:
                    k = len(cells)
                    rng = random.Random(derive_seed(b"scan-real-faults", k))
                    victim = 1 + k % (n - 1)  # seat 0 stays on br0's side
                    other = (victim + 1 + k // n % (n - 1)) % n
                    if other == victim:
                        other = (other + 1) % n
                    if n == 2 and shape == "oneway":
                        victim = k // 2 % 2  # (each direction lost in turn)
                        other = 1 - victim
                    half: tuple[int, ...] = ()
                    kind = {"one": "cut-one", "halves": "cut-halves"}.get(shape, f"cut-{shape}")
                    if shape == "halves":
                        half = tuple(sorted(rng.sample(range(1, n), 2)))
                        victim, other = half[0], -1
                    elif shape == "one":
                        other = -1
                    seconds = round(chaos.named_length(length, SUSPECT, DROP, rng), 2)
                    fault = chaos.Fault(
                        kind, victim, MOMENTS[moment], seconds, half=half, other=other
                    )
                    plan = chaos.Schedule(k, n, 2, (fault,))
                    cells.append(Cell("partitions", f"{n}p {shape} {length} {moment}", plan))
    return cells


def _kill(cut: str, victim: int, trigger: int, rng: random.Random) -> chaos.Fault:
    """The kill fault ``cut`` names (one of :data:`CUTS` or :data:`MORE_CUTS`) on ``victim``."""
    kind, torn, keep = cut, 0, -1.0
    if cut == "kill-torn":
        torn = rng.randint(1, 12)
    elif cut.startswith("keep"):
        kind, keep = "kill-cut", int(cut[4:]) / 100
    elif cut.startswith("frame"):
        kind, keep = "kill-frame", int(cut[5:]) / 100
    elif cut == "header":
        kind, keep = "kill-cut", 0.001
    return chaos.Fault(kind, victim, trigger, SUSPECT / 2, torn=torn, keep=keep)


def torn_grid(players: Sequence[int], cuts: Sequence[str], moments: Sequence[str]) -> list[Cell]:
    cells = []
    for n in players:
        for cut in cuts:
            for moment in moments:
                k = len(cells)
                rng = random.Random(derive_seed(b"scan-real-faults-torn", k))
                victim = k % n
                mode, _, base = cut.rpartition(":")
                trigger = TORN_MOMENTS[moment]
                faults = [_kill(base, victim, trigger, rng)]
                if mode:
                    # Two members killed: the next seat too, with its log cut the same way,
                    # ``both`` while the first is dead (both down, resumed in turn), ``turn``
                    # once the first has been resumed, 10 cards to the lake later.
                    second = _kill(base, (victim + 1) % n, max(trigger, 0) + 10, rng)
                    if trigger < 0:
                        second = dataclasses.replace(second, trigger=-1)
                    if mode == "both":
                        second = dataclasses.replace(second, during=SUSPECT / 4)
                    faults.append(second)
                plan = chaos.Schedule(k, n, 2, tuple(faults))
                cells.append(Cell("torn", f"{n}p {cut} {moment}", plan))
    return cells


def degraded_grid(players: Sequence[int], shapes: Sequence[str]) -> list[Cell]:
    """The ``degraded`` games: each shape at each of its strengths (``reset``, ``roll``: at each
    of their lengths), at each table size (``roll`` from three)."""
    strengths = {
        "lossy": chaos.LOSSES,
        "slow": chaos.slow_delays(SUSPECT),
        "narrow": chaos.RATES,
        "flap": chaos.flap_periods(SUSPECT, DROP),
    }
    cells = []
    for n in players:
        for shape in shapes:
            if shape == "roll" and n < 3:
                continue  # (at two, a rolling partition is a flap)
            kind, _, spread = shape.partition("-")
            names = {"reset": RESET_LENGTHS, "roll": ROLL_STEPS}.get(kind, ())
            for i, power in enumerate(strengths.get(kind, (0.0,) * len(names))):
                k = len(cells)
                rng = random.Random(derive_seed(b"scan-real-faults-degraded", k))
                name = names[i] if names else "2d" if kind == "flap" else DEGRADED_LENGTHS[i % 3]
                seconds = chaos.named_length(name, SUSPECT, DROP, rng)
                if kind == "roll":
                    seconds *= n - 1  # (each of its n - 1 steps that long)
                fault = chaos.Fault(
                    kind, k % n, MOMENTS["play"], round(seconds, 2),
                    strength=power, everyone=spread == "all",
                )  # fmt: skip
                label = f"{shape} {power:g} {name}" if power else f"{shape} {name}"
                cells.append(Cell("degraded", f"{n}p {label}", chaos.Schedule(k, n, 2, (fault,))))
    return cells


def audit_class(workdir: Path) -> str:
    """The worst the audit said: ``valid``, ``notice``, ``log`` (errors about the files, that
    accuse nobody), ``victim`` (a member named wronged), ``ACCUSES`` (a member named a cheat)."""
    found = []
    for text in (workdir / "audit.out").read_text().splitlines():
        if text.startswith('{"event": "finding"'):
            found.append(json.loads(text)["finding"])
    errors = [f for f in found if f.get("severity") == "error"]
    if not found:
        return "valid"
    if not errors:
        return "notice"
    kinds = {FindingKind(f["kind"]) for f in errors}
    if any(k.accuses for k in kinds):
        return "ACCUSES"
    if FindingKind.UNTRACED_FORFEIT in kinds:
        return "victim"
    return "log"


def judge(cell: Cell, result: dict[str, Any], workdir: Path) -> tuple[str, list[str]]:
    """The game's verdict (``ok``, ``refused``, ``FAIL``) and the problems that make it one."""
    audit = audit_class(workdir)
    problems = [p for p in result["problems"] if not p.startswith("audit exit")]
    refused = False
    if cell.family == "torn":
        victim = f"P{cell.plan.faults[0].victim + 1}: exit "
        for p in list(problems):
            words = p.removeprefix(victim)
            if p.startswith(victim) and not words.startswith(("0", "3")) and "nertz" in words:
                problems.remove(p)  # a clear refusal of the cut log (no traceback: checked)
                refused = True
        if audit not in ("valid", "notice", "log"):
            problems.append(f"audit: {audit}")
    elif audit not in ("valid", "notice"):
        problems.append(f"audit: {audit}")
    result["audit"] = audit
    if problems:
        return "FAIL", problems
    return ("refused" if refused else "ok"), []


def main(argv: Sequence[str] | None = None) -> int:
    from ports import own_player_locks

    own_player_locks()  # (two runs at once must not lock each other's nodes out)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("family", choices=("partitions", "torn", "degraded"))
    p.add_argument("--players", help="table sizes (default 3-5 partitions, 3-4 torn)")
    p.add_argument("--shapes", help="default: all of the family's")
    p.add_argument("--lengths", default="short,drop,2d")
    p.add_argument("--moments", help="default play,end (partitions), all five (torn)")
    p.add_argument("--cuts", default=",".join(CUTS))
    p.add_argument("--only", type=int, action="append", help="play only the K-th game(s)")
    p.add_argument("--dir", type=Path, default=Path("scan-real-faults"))
    p.add_argument("--print", action="store_true", help="list the grid; play nothing")
    args = p.parse_args(argv)
    words = {
        k: [w for w in (getattr(args, k) or "").split(",") if w]
        for k in ("shapes", "lengths", "moments", "cuts")
    }
    unknown = (
        set(words["shapes"]) - set(DEGRADED_SHAPES if args.family == "degraded" else SHAPES)
        | set(words["lengths"]) - set(chaos.LENGTHS)
        | {c for c in words["cuts"] if c.rpartition(":")[0] not in ("", *MODES)}
        | {c.rpartition(":")[2] for c in words["cuts"]} - set(CUTS) - set(MORE_CUTS)
        | set(words["moments"]) - set(MOMENTS if args.family == "partitions" else TORN_MOMENTS)
    )
    if unknown:
        p.error(f"unknown: {', '.join(sorted(unknown))}")
    if args.family == "degraded":
        cells = degraded_grid(list(span(args.players or "2-5")), words["shapes"] or DEGRADED_SHAPES)
    elif args.family == "partitions":
        cells = partition_grid(
            list(span(args.players or "3-5")),
            words["shapes"] or SHAPES,
            words["lengths"],
            words["moments"] or list(MOMENTS),
        )
    else:
        cells = torn_grid(
            list(span(args.players or "3-4")), words["cuts"], words["moments"] or list(TORN_MOMENTS)
        )
    if args.only:
        cells = [c for c in cells if c.plan.seed in args.only]
    if args.print:
        for c in cells:
            faults = " + ".join(f.describe() for f in c.plan.faults)
            print(f"{c.plan.seed:4d}  {c.name:28s} {faults}")
        return 0
    if args.family != "torn" and (why := unavailable()) is not None:
        p.error(f"{args.family} need a netns lab: {why}")
    if args.family == "degraded" and (why := impairments_unavailable()) is not None:
        p.error(f"a degraded network needs: {why}")
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, chaos._interrupt)
    args.dir.mkdir(parents=True, exist_ok=True)
    tally: Counter[tuple[str, str]] = Counter()
    with (args.dir / "results.jsonl").open("a") as book:
        for cell in cells:
            result = chaos.play(cell.plan, args.dir, SUSPECT, DROP, keep=True)
            workdir = args.dir / f"seed{cell.plan.seed}"
            verdict, problems = judge(cell, result, workdir)
            result.update(cell=cell.name, verdict=verdict, why=problems)
            book.write(json.dumps(result) + "\n")
            book.flush()
            head = " ".join(cell.name.split()[:2])
            tally[head, verdict] += 1
            missed = f"  missed {','.join(result['missed'])}" if result["missed"] else ""
            print(
                f"{verdict:7s} {cell.plan.seed:4d}  {cell.name:26s} exits {result['exits']:10s}"
                f" audit {result['audit']:7s} {result['wall']:6.1f}s{missed}",
                flush=True,
            )
            for problem in problems:
                print(f"        {problem}", flush=True)
            if verdict != "FAIL":
                shutil.rmtree(workdir)
    verdicts = ("ok", "refused", "FAIL")
    for head in sorted({h for h, _ in tally}):
        print(f"  {head:16s} " + "  ".join(f"{v} {tally[head, v]}" for v in verdicts))
    total = Counter(v for (_, v), n in tally.items() for _ in range(n))
    print(f"{sum(total.values())} game(s): " + ", ".join(f"{total[v]} {v}" for v in verdicts))
    return 1 if total["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
