#!/usr/bin/env python3
"""Benchmark of the synced log write (issues 18/19): what a durable append costs, and what not.

Every event a peer signs is written to its log and synced (``fdatasync``) before it is sent
(docs/log-format.md §6). An append grows the file, so the sync must also make the new size
durable: on a journalling file system that is a journal commit (a second write and a second
cache flush) on top of the data. This script times, per record, on each directory given
(default: the disk of the temporary directory, where ``nertz`` and ``bench_lan.py`` put logs,
and ``/dev/shm``, a tmpfs):

* ``append``: ``O_APPEND`` write, then ``fdatasync`` (the log store as it stands: the
  reference every other figure is divided by);
* ``append-dsync``: ``O_APPEND | O_DSYNC`` write (the sync inside the write);
* ``fallocate``: ``posix_fallocate`` of the next ``chunk`` bytes when the writes reach the
  end of the region, then ``pwrite`` inside it and ``fdatasync`` (on ext4 the region's blocks
  are *unwritten* extents: the first write to each converts it, a metadata change);
* ``zeros``: zeros written ahead (``chunk`` bytes at a time, synced), then ``pwrite`` over
  them and ``fdatasync``: an overwrite of allocated, written blocks of a file whose size does
  not change, so the sync has no metadata to journal;
* ``zeros-dsync``: the same region, ``O_DSYNC`` writes.

Each write is one record's frame (``--sizes``, bytes: a claim's frame is ~240 B, the golden
logs' median; a ``deck_shares`` a few hundred). With ``--mix K`` each synced write is preceded
by K unsynced ones (the received events the runtime writes with ``sync=False``), whose data
the next sync also carries. The methods run in alternated rounds (a fresh file each, in an
order rotated every round), so that the machine's load reaches all of them alike; each
figure is printed beside ``append``'s in the same run as a ratio of medians. The time of a
synced write is wall time (it waits for the device, it does not use the CPU); the CPU time
per write is printed too. The first chunk is prepared when a file is made (as a writer would
at creation); a later fill (or fallocate), on a record's path, is timed on its own and
amortised over the records of a chunk. With ``--contenders N``, N processes meanwhile append
and sync a record every ``--gap`` seconds each in the same directory (the other peers of a
game on one machine, whose syncs share the file system's journal).

Prints figures, asserts nothing.

    .venv/bin/python scripts/bench_logsync.py [--dir PATH ...] [--sizes 240,600]
        [--chunks 65536,1048576] [--rounds 12] [--writes 100] [--mix 0] [--contenders N]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

NS_PER_US = 1000
HEADER = 102  # bytes before the first record of a log (docs/log-format.md §10)


def pct(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by the nearest-rank method."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


@dataclass
class Samples:
    """One method's times on one directory, size and chunk: per synced write (ns, wall and
    CPU) and per fill (ns, wall), with how many records each fill served."""

    wall: list[int] = field(default_factory=list)
    cpu: list[int] = field(default_factory=list)
    fills: list[int] = field(default_factory=list)
    bytes_written: int = 0


class Method:
    """One way of writing a record durably; ``write(data, sync)`` returns the ns spent filling
    ahead (0 when it did not)."""

    name = ""

    def __init__(self, path: Path, chunk: int) -> None:
        self.path = path
        self.chunk = chunk
        self.fd = -1
        self.size = 0  # where the next record goes
        self.region = 0  # where the prepared region ends

    def open(self) -> None:
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | self.extra_flags()
        self.fd = os.open(self.path, flags, 0o600)
        # The prefix and header, synced, as create_log leaves a log.
        os.write(self.fd, b"\1" * HEADER)
        os.fsync(self.fd)
        self.size = HEADER
        self.region = HEADER
        self.prepare()

    def extra_flags(self) -> int:
        return os.O_APPEND if self.appends() else 0

    def appends(self) -> bool:
        return False

    def prepare(self) -> int:
        """Extend the prepared region by a chunk; return the ns it took (0: nothing to do)."""
        return 0

    def write(self, data: bytes, sync: bool) -> int:
        filled = 0
        if self.size + len(data) > self.region:
            filled = self.prepare()
        if self.appends():
            os.write(self.fd, data)
        else:
            os.pwrite(self.fd, data, self.size)
        self.size += len(data)
        if sync:
            self.sync()
        return filled

    def sync(self) -> None:
        os.fdatasync(self.fd)

    def close(self) -> None:
        os.close(self.fd)
        self.path.unlink()


class Append(Method):
    name = "append"

    def appends(self) -> bool:
        return True


class AppendDsync(Append):
    name = "append-dsync"

    def extra_flags(self) -> int:
        return os.O_APPEND | os.O_DSYNC

    def write(self, data: bytes, sync: bool) -> int:
        # O_DSYNC makes every write synced: an unsynced (received) write cannot be had on
        # this descriptor, so it costs a sync too. (A second descriptor without O_DSYNC
        # would give it back; the figure with --mix 0 is the one that compares.)
        os.write(self.fd, data)
        self.size += len(data)
        return 0

    def sync(self) -> None:
        pass


class Fallocate(Method):
    name = "fallocate"

    def prepare(self) -> int:
        start = time.perf_counter_ns()
        os.posix_fallocate(self.fd, self.region, self.chunk)
        os.fdatasync(self.fd)
        self.region += self.chunk
        return time.perf_counter_ns() - start


class Zeros(Method):
    name = "zeros"

    def __init__(self, path: Path, chunk: int) -> None:
        super().__init__(path, chunk)
        self.zeros = bytes(chunk)

    def prepare(self) -> int:
        start = time.perf_counter_ns()
        os.pwrite(self.fd, self.zeros, self.region)
        os.fdatasync(self.fd)
        self.region += self.chunk
        return time.perf_counter_ns() - start


class ZerosDsync(Zeros):
    name = "zeros-dsync"

    def open(self) -> None:
        super().open()
        # The fill goes through this (plain) descriptor; the records through an O_DSYNC one.
        self.dsync_fd = os.open(self.path, os.O_WRONLY | os.O_DSYNC)

    def write(self, data: bytes, sync: bool) -> int:
        filled = 0
        if self.size + len(data) > self.region:
            filled = self.prepare()
        os.pwrite(self.dsync_fd if sync else self.fd, data, self.size)
        self.size += len(data)
        return filled

    def close(self) -> None:
        os.close(self.dsync_fd)
        super().close()


METHODS: dict[str, type[Method]] = {
    m.name: m for m in (Append, AppendDsync, Fallocate, Zeros, ZerosDsync)
}
CHUNKED = {"fallocate", "zeros", "zeros-dsync"}


def one_round(method: Method, size: int, writes: int, mix: int, into: Samples) -> None:
    """Open a fresh file, time ``writes`` synced records (each after ``mix`` unsynced ones),
    close and remove it."""
    data = b"\2" * size
    method.open()
    try:
        for _ in range(writes):
            for _ in range(mix):
                filled = method.write(data, False)
                if filled:
                    into.fills.append(filled)
            wall = time.perf_counter_ns()
            cpu = time.process_time_ns()
            filled = method.write(data, True)
            cpu = time.process_time_ns() - cpu
            wall = time.perf_counter_ns() - wall
            if filled:
                into.fills.append(filled)
                # Timed on its own: the write's own figure excludes the fill it triggered.
                wall -= filled
            into.wall.append(wall)
            into.cpu.append(cpu)
        into.bytes_written += (writes * (mix + 1)) * size
    finally:
        method.close()


def measure(
    directory: Path,
    methods: Sequence[str],
    *,
    size: int,
    chunk: int,
    rounds: int,
    writes: int,
    mix: int,
) -> dict[str, Samples]:
    """Alternated rounds of every method on ``directory``; the samples per method."""
    samples = {name: Samples() for name in methods}
    with tempfile.TemporaryDirectory(prefix="bench-logsync-", dir=directory) as tmp:
        for r in range(rounds):
            order = list(methods[r % len(methods) :]) + list(methods[: r % len(methods)])
            for name in order:
                method = METHODS[name](Path(tmp) / f"{name}-{r}.log", chunk)
                one_round(method, size, writes, mix, samples[name])
    return samples


def report(
    where: str,
    *,
    size: int,
    chunk: int,
    mix: int,
    samples: dict[str, Samples],
    out: Callable[[str], None] = print,
) -> None:
    base = statistics.median(samples["append"].wall) if "append" in samples else float("nan")
    out(
        f"\n{where}: records of {size} B, chunk {chunk:,} B, "
        f"{mix} unsynced write(s) before each synced one"
    )
    out(
        f"  {'method':<13} {'n':>5} {'median us':>10} {'p99 us':>9} {'/append':>8} "
        f"{'cpu us':>7} {'fill us (n)':>14} {'fill/rec us':>11}"
    )
    for name, s in samples.items():
        med = statistics.median(s.wall) / NS_PER_US
        fill = f"{statistics.median(s.fills) / NS_PER_US:8.0f} ({len(s.fills)})" if s.fills else "-"
        per_record = (size * (mix + 1)) / chunk  # the share of a chunk one synced write uses
        amort = (
            f"{statistics.median(s.fills) / NS_PER_US * per_record:11.1f}"
            if s.fills
            else f"{'-':>11}"
        )
        out(
            f"  {name:<13} {len(s.wall):>5} {med:>10.0f} {pct(s.wall, 0.99) / NS_PER_US:>9.0f} "
            f"{med * NS_PER_US / base:>8.2f} {statistics.median(s.cpu) / NS_PER_US:>7.0f} "
            f"{fill:>14} {amort}"
        )


def describe(directory: Path) -> str:
    """The directory with its file system type and device, from /proc/mounts (Linux)."""
    best = ("", "?", "?")
    try:
        lines = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return str(directory)
    real = str(directory.resolve())
    for line in lines:
        device, mount, kind = line.split()[:3]
        if (real == mount or real.startswith(mount.rstrip("/") + "/")) and len(mount) >= len(
            best[0]
        ):
            best = (mount, kind, device)
    return f"{directory} ({best[1]} on {best[2]})"


def contend(directory: Path, index: int, gap: float) -> int:
    """Fork a process that appends a record and syncs it every ``gap`` seconds to a file of
    its own in ``directory`` (another peer of a game on this machine), until it is killed;
    return its pid."""
    pid = os.fork()
    if pid:
        return pid
    try:  # the child: never returns
        path = directory / f"contender-{index}.log"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        data = b"\3" * 240
        while True:
            os.write(fd, data)
            os.fdatasync(fd)
            time.sleep(gap)
    finally:
        os._exit(0)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dir",
        action="append",
        type=Path,
        default=None,
        help="a directory to measure in (repeatable; default: the temporary directory's disk "
        "and /dev/shm)",
    )
    parser.add_argument("--sizes", default="240,600", help="record frame sizes in bytes")
    parser.add_argument(
        "--chunks", default="65536,1048576", help="preallocation chunk sizes in bytes"
    )
    parser.add_argument("--methods", default=",".join(METHODS), help="methods to run")
    parser.add_argument("--rounds", type=int, default=12, help="alternated rounds per method")
    parser.add_argument("--writes", type=int, default=100, help="synced writes per round")
    parser.add_argument("--mix", type=int, default=0, help="unsynced writes before each synced one")
    parser.add_argument(
        "--contenders",
        type=int,
        default=0,
        help="processes appending and syncing a record every --gap seconds in the same "
        "directory meanwhile (the other peers of a game on one machine)",
    )
    parser.add_argument("--gap", type=float, default=0.002, help="a contender's pause (s)")
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    unknown = [m for m in methods if m not in METHODS]
    if unknown or "append" not in methods:
        parser.error(f"methods must include append and be among {', '.join(METHODS)}")
    if not hasattr(os, "fdatasync") or not hasattr(os, "posix_fallocate"):
        print("bench_logsync: needs fdatasync and posix_fallocate (Linux)", file=sys.stderr)
        return 2
    dirs = args.dir or [Path(tempfile.gettempdir()), Path("/dev/shm")]
    sizes = [int(s) for s in args.sizes.split(",")]
    chunks = [int(c) for c in args.chunks.split(",")]
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    for directory in dirs:
        if not directory.is_dir():
            print(f"\n{directory}: not a directory, skipped")
            continue
        with tempfile.TemporaryDirectory(prefix="bench-logsync-c-", dir=directory) as side:
            pids = [contend(Path(side), i, args.gap) for i in range(args.contenders)]
            try:
                run_directory(directory, methods, sizes, chunks, args)
            finally:
                for pid in pids:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    return 0


def run_directory(
    directory: Path,
    methods: Sequence[str],
    sizes: Sequence[int],
    chunks: Sequence[int],
    args: argparse.Namespace,
) -> None:
    """Every size and chunk on ``directory``, each printed as it is measured."""
    if args.contenders:
        print(f"\n{args.contenders} contender(s) syncing a record every {args.gap * 1e3:g} ms")
    for size in sizes:
        for chunk in chunks:
            # append and append-dsync do not depend on the chunk: run them with each chunk
            # anyway, as the same run's reference for the chunked methods.
            samples = measure(
                directory,
                methods,
                size=size,
                chunk=chunk,
                rounds=args.rounds,
                writes=args.writes,
                mix=args.mix,
            )
            report(describe(directory), size=size, chunk=chunk, mix=args.mix, samples=samples)


if __name__ == "__main__":
    sys.exit(main())
