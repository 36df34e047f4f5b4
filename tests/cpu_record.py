"""A pytest plugin that records each test's wall time and CPU time (session 38).

Load it with ``-p cpu_record`` (tests/ is on the path) and name a directory in the
``NERTZ_CPU_RECORD`` environment variable: every worker writes one JSON line per test to a
file of its own there (``scripts/suite_cpu.py`` sums them by module and ranks them).

A test's CPU is what its worker spent (``RUSAGE_SELF``) plus what the processes under the
worker spent:

- the children reaped during the test (``RUSAGE_CHILDREN``: every ``nertz`` process started
  and waited for);
- the worker's children still alive, read from ``/proc/PID/stat`` before and after the test:
  their own time and their reaped children's (``cutime``, ``cstime``). The fork servers
  (tests/forkserver.py) live for the worker's whole run and reap the ``nertz`` children they
  fork, so a forked command's CPU is theirs, not the worker's, until the server ends.

Setup and teardown are the test's (a module-scoped fixture's cost falls on the test that
first uses it or the last, as pytest runs them). A process not reaped by the worker or one of
its children (one that outlived its parent) is not counted.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Generator
from pathlib import Path
from typing import IO

import pytest

_TICK = os.sysconf("SC_CLK_TCK")
_OUT: list[IO[str]] = []


def _children_alive() -> float:
    """The CPU seconds of the worker's live children and of the children they reaped."""
    me = os.getpid()
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # (gone between the listing and the read)
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        if int(fields[1]) == me:  # ppid; fields[11:15]: utime stime cutime cstime
            total += sum(int(x) for x in fields[11:15])
    return total / _TICK


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, reaped.ru_utime + reaped.ru_stime + _children_alive()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    where = os.environ.get("NERTZ_CPU_RECORD")
    if not where:
        yield
        return
    if not _OUT:  # (opened at the first test: xdist's controller runs none)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(where).mkdir(parents=True, exist_ok=True)
        _OUT.append(open(Path(where) / f"{worker}.jsonl", "a", encoding="utf-8"))  # noqa: SIM115
    wall0 = time.monotonic()
    own0, kids0 = _cpu()
    yield
    own1, kids1 = _cpu()
    record = {
        "test": item.nodeid,
        "wall": round(time.monotonic() - wall0, 4),
        "self": round(own1 - own0, 4),
        "children": round(kids1 - kids0, 4),
    }
    _OUT[0].write(json.dumps(record) + "\n")
    _OUT[0].flush()


def pytest_unconfigure(config: pytest.Config) -> None:
    while _OUT:
        _OUT.pop().close()
