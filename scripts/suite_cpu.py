"""Where the test suite's CPU goes: the records of ``tests/cpu_record.py`` summed by module
and ranked (session 38).

Record a run, then read it (niced, a modest worker count: other work shares the cores)::

    NERTZ_CPU_RECORD=/tmp/cpu nice -n 10 .venv/bin/python -m pytest -p tests.cpu_record -n 4
    python scripts/suite_cpu.py /tmp/cpu                      # modules, by CPU
    python scripts/suite_cpu.py /tmp/cpu --tests 30           # the 30 costliest tests too
    python scripts/suite_cpu.py /tmp/cpu --against /tmp/cpu0  # per module, before -> after

A test's CPU is its worker's and that of every process under the worker (see
tests/cpu_record.py); its wall is the worker's time on it. Figures are CPU-seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path


def read(where: Path) -> dict[str, tuple[float, float, float]]:
    """Each test's (wall, worker CPU, children's CPU) from the records in ``where``."""
    tests: dict[str, tuple[float, float, float]] = {}
    for path in sorted(where.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            tests[r["test"]] = (r["wall"], r["self"], r["children"])
    return tests


def by_module(tests: dict[str, tuple[float, float, float]]) -> dict[str, list[float]]:
    """Per module: [tests, wall, worker CPU, children's CPU]."""
    modules: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for name, (wall, own, kids) in tests.items():
        m = modules[name.partition("::")[0]]
        m[0] += 1
        m[1] += wall
        m[2] += own
        m[3] += kids
    return modules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", type=Path, help="the directory NERTZ_CPU_RECORD named")
    parser.add_argument("--against", type=Path, help="an earlier run's records, to compare")
    parser.add_argument("--top", type=int, default=40, help="modules shown (default 40)")
    parser.add_argument("--tests", type=int, default=0, help="also the N costliest tests")
    args = parser.parse_args(argv)
    for where in (args.records, args.against):
        if where is not None and not any(where.glob("*.jsonl")):
            print(f"suite_cpu: no records (*.jsonl) in {where}", file=sys.stderr)
            return 2
    tests = read(args.records)
    modules = by_module(tests)
    before = by_module(read(args.against)) if args.against else {}
    total = sum(m[2] + m[3] for m in modules.values())
    wall = sum(m[1] for m in modules.values())
    print(f"{len(tests)} tests: {total / 60:.1f} CPU-min ({total:.0f} CPU-s),", end=" ")
    print(f"{wall / 60:.1f} worker-min")
    if before:
        was = sum(m[2] + m[3] for m in before.values())
        print(f"  against {sum(int(m[0]) for m in before.values())} tests: {was:.0f} CPU-s")
    print(f"{'module':<52} {'tests':>5} {'CPU-s':>7} {'self':>7} {'kids':>7} {'wall':>7}", end="")
    print(f" {'before':>7}" if before else "")
    ranked = sorted(modules.items(), key=lambda kv: -(kv[1][2] + kv[1][3]))
    for name, (n, w, own, kids) in ranked[: args.top]:
        line = f"{name:<52} {int(n):>5} {own + kids:>7.1f} {own:>7.1f} {kids:>7.1f} {w:>7.1f}"
        if before:
            b = before.get(name)
            line += f" {b[2] + b[3]:>7.1f}" if b else f" {'-':>7}"
        print(line)
    if args.tests:
        print()
        costly = sorted(tests.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))
        for name, (w, own, kids) in costly[: args.tests]:
            print(f"{own + kids:>7.1f} {w:>7.1f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
