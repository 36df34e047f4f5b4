"""Benchmark of ``nertz audit``: throughput against bare Ed25519 verification, and memory.

Prints figures, asserts nothing (no timing in tests). Each measurement runs in a fresh Python
process, so the envelope codec's caches start cold, as for a real audit:

* **throughput**: distinct events audited per second over a multi-player game's logs (every
  event is in every log), divided by the number of bare Ed25519 verifications per second of
  the same messages, measured in the same process just before. Target: at least 0.5.
* **memory**: the peak of Python allocations (tracemalloc) while auditing a log of about
  10,000 events and one of about 100,000 (a long solo game), to show it stays flat: the audit
  streams the records and keeps 24 bytes per event.

    .venv/bin/python scripts/bench_audit.py                # generates the logs (~2 minutes)
    .venv/bin/python scripts/bench_audit.py --dir /tmp/b   # keep the logs for the next run
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _generate(folder: Path, name: str, players: int, rounds: int, seed: int) -> list[Path]:
    from p2p_nertz.audit.simlogs import log_files
    from p2p_nertz.rules import Rules
    from p2p_nertz.sim import SimConfig, Simulation

    paths = [folder / f"{name}-p{seat + 1}.log" for seat in range(players)]
    if all(p.is_file() for p in paths):
        return paths
    config = SimConfig(
        players=players,
        seed=seed,
        rules=Rules(target=None, rounds=rounds),
        max_time=10.0**7,
    )
    started = time.perf_counter()
    result = Simulation(config).run()
    for path, data in zip(paths, log_files(result), strict=True):
        path.write_bytes(data)
    print(
        f"  generated {name}: {players} player(s), {rounds} rounds, "
        f"{sum(len(log) for log in result.logs)} records in "
        f"{time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return paths


def _worker(mode: str, paths: list[str]) -> None:
    """Run in a fresh process: print one JSON object of figures."""
    from p2p_nertz.audit import LogSource, audit

    sources = [LogSource.from_path(p) for p in paths]
    if mode == "memory":
        tracemalloc.start()
        report = audit(sources)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(json.dumps({"events": report.events, "peak": peak, "valid": report.valid}))
        return
    # Bare verification of the same messages, first, then the audit.
    from p2p_nertz.logfile import RecordKind, read_log
    from p2p_nertz.protocol.envelope import SIGNATURE_DOMAIN
    from p2p_nertz.protocol.identity import verify

    messages = []
    import msgpack  # type: ignore[import-untyped]

    with read_log(paths[0]) as reader:
        for record in reader:
            if record.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT):
                payload, signature = msgpack.unpackb(record.data)
                author = msgpack.unpackb(payload)[2]
                messages.append((author, signature, SIGNATURE_DOMAIN + payload))
    rates = []
    for _ in range(3):
        started = time.perf_counter()
        for author, signature, data in messages:
            verify(author, signature, data)
        rates.append(len(messages) / (time.perf_counter() - started))
    started = time.perf_counter()
    report = audit(sources)
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "events": report.events,
                "records": sum(i.records for i in report.logs),
                "seconds": seconds,
                "verify_per_s": statistics.median(rates),
                "valid": report.valid,
            }
        )
    )


def _run(mode: str, paths: list[Path]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--worker", mode, *map(str, paths)],
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description="benchmark nertz audit")
    parser.add_argument("--dir", type=Path, default=None, help="where to keep generated logs")
    parser.add_argument("--repeat", type=int, default=3, help="throughput runs (median)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("paths", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker, args.paths)
        return 0
    with tempfile.TemporaryDirectory() as temp:
        folder = args.dir or Path(temp)
        folder.mkdir(parents=True, exist_ok=True)
        print("generating logs (deterministic simulator games)...", flush=True)
        game = _generate(folder, "three", players=3, rounds=6, seed=1)
        small = _generate(folder, "solo-small", players=1, rounds=60, seed=2)
        large = _generate(folder, "solo-large", players=1, rounds=600, seed=2)

        runs = [_run("throughput", game) for _ in range(args.repeat)]
        rate = statistics.median(r["events"] / r["seconds"] for r in runs)
        verify_rate = statistics.median(r["verify_per_s"] for r in runs)
        first = runs[0]
        print(
            f"throughput: {first['events']:.0f} events ({first['records']:.0f} records in "
            f"{len(game)} logs), median of {len(runs)} runs"
        )
        print(f"  audit:              {rate:10.0f} events/s")
        print(f"  bare Ed25519 verify: {verify_rate:9.0f} verifications/s (same process)")
        print(f"  ratio:              {rate / verify_rate:10.2f}  (target >= 0.5)")

        low = _run("memory", small)
        high = _run("memory", large)
        print("peak memory while auditing (tracemalloc):")
        for label, figures in (("small", low), ("large", high)):
            print(
                f"  {label}: {figures['events']:7.0f} events"
                f"  peak {figures['peak'] / 2**20:6.2f} MiB"
                f"  ({figures['peak'] / figures['events']:.0f} B/event)"
            )
        print(
            f"  {high['events'] / low['events']:.1f}x the events, "
            f"{high['peak'] / low['peak']:.2f}x the peak memory"
        )
        if not all(r["valid"] for r in (*runs, low, high)):
            print("warning: an audit was not valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
