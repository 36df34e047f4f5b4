"""Benchmark of ``nertz audit``: throughput against bare Ed25519 verification, and memory.

Prints figures, asserts nothing (no timing in tests). Each measurement runs in a fresh Python
process, so the envelope codec's caches start cold, as for a real audit:

* **throughput**: distinct events audited per second, of one peer's log and of every peer's
  log of a three-player game (every event is in every log), divided by the number of bare
  Ed25519 verifications per second of the same messages by libsodium (its
  ``crypto_sign_open`` called directly, the fastest Ed25519 verify here: a reference that does
  not move with the library the project uses), measured in the same process before and after
  the audit. Target: at least 0.5 (issue 18). OpenSSL's bare rate is printed beside it.
* **memory**: the peak of Python allocations (tracemalloc) while auditing a log of about
  100,000 events (a long solo game) cut at 10%, 25% and 50% and whole, to show it stays
  flat: the audit streams the records; past the codec's bounded caches it keeps a few bytes
  per event (the ids that reveal a fork between logs). Then the throughput at the same cuts
  (no tracemalloc; the reference is the bare verify of the log's first 2,000 messages): the
  events per second must not fall as the log grows.

    .venv/bin/python scripts/bench_audit.py                # generates the logs (~2 minutes)
    .venv/bin/python scripts/bench_audit.py --dir /tmp/b   # keep the logs for the next run
    .venv/bin/python scripts/bench_audit.py --dir /tmp/b --no-memory   # throughput only
    .venv/bin/python scripts/bench_audit.py --deal shuffle --no-memory  # a shuffle game's audit

With ``--deal shuffle`` the three-player game is a shuffle game (issue 19: "the audit's events
per second"): its audit re-runs every member's stages and checks every share after each round
(docs/shuffle.md §7), so the ratio to bare verification says what those checks cost per event.
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
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _generate(
    folder: Path, name: str, players: int, rounds: int, seed: int, *, deal: str = "commit"
) -> list[Path]:
    from p2p_nertz.protocol.spec import Deal
    from p2p_nertz.rules import Rules
    from p2p_nertz.sim import SimConfig, Simulation
    from p2p_nertz.sim.logfiles import log_files

    paths = [folder / f"{name}-p{seat + 1}.log" for seat in range(players)]
    if all(p.is_file() for p in paths):
        return paths
    config = SimConfig(
        players=players,
        seed=seed,
        rules=Rules(target=None, rounds=rounds),
        max_time=10.0**7,
        deal=Deal(deal),
    )
    started = time.perf_counter()
    result = Simulation(config).run()
    for path, data in zip(paths, log_files(result), strict=True):
        path.write_bytes(data)
    print(
        f"  generated {name}: {players} player(s), {rounds} rounds, {deal} deal, "
        f"{sum(len(log) for log in result.logs)} records in "
        f"{time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return paths


def _prefixes(path: Path, fractions: tuple[float, ...]) -> list[Path]:
    """Logs holding the first part of ``path``'s records (the same game, cut short)."""
    from p2p_nertz.logfile import encode_log, read_log

    with read_log(path) as reader:
        records = list(reader)
        header = reader.header
    assert header is not None
    out = []
    for fraction in fractions:
        cut = path.with_name(f"{path.stem}-{round(fraction * 100)}pct.log")
        if not cut.is_file():
            cut.write_bytes(encode_log(header, records[: int(len(records) * fraction)]))
        out.append(cut)
    return out


_REFERENCE = 2000  # mode "along": the first log's messages verified bare for the reference


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
    import msgpack  # type: ignore[import-untyped]
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from nacl._sodium import ffi, lib  # type: ignore[import-not-found]

    from p2p_nertz.logfile import RecordKind, read_log
    from p2p_nertz.protocol.envelope import SIGNATURE_DOMAIN

    def bare_sodium(author: bytes, signature: bytes, data: bytes) -> bool:
        signed = signature + data
        out = ffi.new("unsigned char[]", len(signed))
        return bool(lib.crypto_sign_open(out, ffi.NULL, signed, len(signed), author) == 0)

    def bare_openssl(author: bytes, signature: bytes, data: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(author).verify(signature, data)
        except InvalidSignature:
            return False
        return True

    messages = []

    with read_log(paths[0]) as reader:
        for record in reader:
            if record.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT):
                payload, signature = msgpack.unpackb(record.data)
                author = msgpack.unpackb(payload)[2]
                messages.append((author, signature, SIGNATURE_DOMAIN + payload))
                if mode == "along" and len(messages) == _REFERENCE:
                    break  # (a rate per message: a long log's first ones say it)

    # CPU time of this process, not wall time: the machine is shared, and another process
    # taking the core for a while would otherwise count against whichever side it fell on.
    clock = time.process_time

    def verify_rate(bare: Callable[[bytes, bytes, bytes], bool]) -> float:
        started = clock()
        for author, signature, data in messages:
            assert bare(author, signature, data)
        return len(messages) / (clock() - started)

    # The verify rate is measured around the audit (before and after), so that a change in the
    # machine's load during the run weighs on both sides of the ratio alike.
    rates = [verify_rate(bare_sodium) for _ in range(3)]
    openssl = [verify_rate(bare_openssl)]
    started = clock()
    report = audit(sources)
    seconds = clock() - started
    openssl.append(verify_rate(bare_openssl))
    rates += [verify_rate(bare_sodium) for _ in range(3)]
    print(
        json.dumps(
            {
                "events": report.events,
                "records": sum(i.records for i in report.logs),
                "seconds": seconds,
                "verify_per_s": statistics.median(rates),
                "openssl_per_s": statistics.median(openssl),
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
    parser.add_argument(
        "--no-memory", action="store_true", help="skip the memory part (throughput only)"
    )
    parser.add_argument(
        "--deal",
        choices=("commit", "shuffle"),
        default="commit",
        help="how the three-player game is dealt: a shuffle game's audit also re-runs every "
        "stage and checks every share (issue 19; its logs are kept apart in --dir)",
    )
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
        if args.deal == "commit":
            game = _generate(folder, "three", players=3, rounds=6, seed=1)
        else:
            game = _generate(folder, "three-shuffle", 3, rounds=6, seed=1, deal=args.deal)

        valid = True
        for label, paths in (("one peer's log", game[:1]), ("every peer's log", game)):
            runs = [_run("throughput", paths) for _ in range(args.repeat)]
            valid = valid and all(r["valid"] for r in runs)
            rate = statistics.median(r["events"] / r["seconds"] for r in runs)
            verify_rate = statistics.median(r["verify_per_s"] for r in runs)
            ratio = statistics.median(r["events"] / r["seconds"] / r["verify_per_s"] for r in runs)
            first = runs[0]
            print(
                f"throughput, {label}: {first['events']:.0f} distinct events "
                f"({first['records']:.0f} records in {len(paths)} log(s)), "
                f"median of {len(runs)} runs"
            )
            print(f"  audit:              {rate:10.0f} events/s")
            openssl_rate = statistics.median(r["openssl_per_s"] for r in runs)
            print(f"  bare libsodium verify: {verify_rate:7.0f} verifications/s (same process)")
            print(f"  (bare OpenSSL verify:  {openssl_rate:7.0f} verifications/s, for comparison)")
            print(f"  ratio:              {ratio:10.3f}  (median of runs; target >= 0.5)")

        if not valid:
            print("warning: an audit was not valid")
        if args.no_memory:
            return 0
        large = _generate(folder, "solo-large", players=1, rounds=600, seed=2)
        print("peak memory while auditing (tracemalloc), the long game cut at several points:")
        sizes = [*_prefixes(large[0], (0.1, 0.25, 0.5)), large[0]]
        memory = [_run("memory", [p]) for p in sizes]
        for previous, figures in zip([None, *memory], memory, strict=False):
            grew = ""
            if previous is not None:
                per = (figures["peak"] - previous["peak"]) / (
                    figures["events"] - previous["events"]
                )
                grew = f"  +{per:.0f} B per event since the previous cut"
            print(
                f"  {figures['events']:7.0f} events  peak {figures['peak'] / 2**20:6.2f} MiB{grew}"
            )
        print(
            "  (the peak holds the codec's bounded caches, filled by ~16k events, plus the "
            "audit's few bytes per event for the ids that reveal forks across logs)"
        )
        # The events per second along the same game, without tracemalloc: flat, or the audit
        # does more per event the longer the log (session 26: the codec's full caches did).
        print("throughput along the long game (one cold audit each, the same cuts):")
        rates = [_run("along", [p]) for p in sizes]
        for figures in rates:
            ratio = figures["events"] / figures["seconds"] / figures["verify_per_s"]
            print(
                f"  {figures['events']:7.0f} events  {figures['events'] / figures['seconds']:6.0f}"
                f" events/s  ratio to libsodium's bare verify {ratio:.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
