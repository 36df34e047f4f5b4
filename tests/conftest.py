"""Shared test configuration: async tests run on trio through AnyIO's pytest plugin."""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from cli_helpers import end_of_test
from hypothesis import HealthCheck, settings

from p2p_nertz.runtime.playerlock import SCOPE_ENV

if TYPE_CHECKING:
    from tests.web_helpers import ServedPage

pytest_plugins = ["pytester"]

# The suite starts hundreds of Python processes (every `nertz` command, every bot). Where the
# environment sets PYTHONDONTWRITEBYTECODE, each would compile every module it imports from
# source, about 0.25 s of CPU apiece here: the test run and the processes it starts (xdist's
# workers too, spawned after this is read) keep bytecode in __pycache__ as Python does by
# default.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Hypothesis: no per-example deadline and no "too slow" health check. Both are timing
# assertions, which do not belong in tests: on a shared 2-core machine a fast example can take
# seconds (a test that wants fewer examples says so with its own @settings).
settings.register_profile("nertz", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("nertz")


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Run every ``@pytest.mark.anyio`` test on trio (STYLE.md: async tests)."""
    return "trio"


@pytest.fixture(autouse=True)
def _private_config_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test, and every ``nertz`` process it starts, keeps keys and logs in its own
    temporary config and data dirs: a bot's fresh key goes to the key store (cli/keyfile.py),
    which must never be the real user's."""
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.delenv("NERTZ_HOME", raising=False)


@pytest.fixture(autouse=True)
def _logger_as_found() -> Iterator[None]:
    """A test that calls ``cli.main.main()`` in-process points the ``p2p_nertz`` logger at that
    test's captured stderr (``cli.main._configure_logging``): put back what it was, or every
    later test of the worker logs to a closed stream ("--- Logging error ---")."""
    logger = logging.getLogger("p2p_nertz")
    found = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:] = found[0]
    logger.setLevel(found[1])  # (clears the loggers' cache of what is enabled)
    logger.propagate = found[2]


@pytest.fixture(autouse=True)
def _own_player_locks(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test, and every node it starts, takes its players' locks in a scope of its own
    (``runtime/playerlock.py``): tests of one module play the same keys in the same game, on
    several workers at once, and would refuse each other's nodes as a player's second process.
    The worker's pid keeps two runs of the suite at once (two checkouts) apart too."""
    monkeypatch.setenv(SCOPE_ENV, f"{os.getpid()} {request.node.nodeid}")


#: The signals whose Python handler a test could leave changed in the pytest worker, for every
#: later test to inherit (a test must not leak process state).
_WATCHED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE)


def _kernel_signal_sets() -> dict[str, frozenset[str]]:
    """The kernel's view (Linux; empty elsewhere) of what a child process inherits: the signals
    this process ignores, and those its main thread blocks. Both survive ``exec``: a ``nertz``
    child started with SIGINT ignored or blocked never sees Ctrl-C. It also sees what a C
    library changes behind Python's back. (Caught signals are left out: a child starts with
    them at their default, and pytest-timeout takes SIGALRM back when a test fails.)"""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return {}
    return {
        name: _signal_names(int(mask, 16))
        for name, _, mask in (line.partition(":") for line in status.splitlines())
        if name in ("SigIgn", "SigBlk")
    }


def _signal_names(bits: int) -> frozenset[str]:
    """The signals set in a /proc mask (bit ``n - 1`` is signal ``n``), by name."""
    names = set()
    for n in range(1, bits.bit_length() + 1):
        if bits >> (n - 1) & 1:
            try:
                names.add(signal.Signals(n).name)
            except ValueError:  # a real-time signal
                names.add(f"signal {n}")
    return frozenset(names)


@pytest.fixture(autouse=True)
def _no_leaked_signal_handling() -> Iterator[None]:
    """Fails the test (at teardown) that leaves a watched signal's Python handler, or which
    signals the process ignores or blocks, otherwise than it found them; the watched handlers
    and the mask are put back for the tests after it."""
    handlers = {s: signal.getsignal(s) for s in _WATCHED_SIGNALS}
    kernel = _kernel_signal_sets()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    yield
    changes = [
        f"{s.name} handler {handlers[s]!r} -> {signal.getsignal(s)!r}"
        for s in _WATCHED_SIGNALS
        if signal.getsignal(s) != handlers[s]
    ]
    after = _kernel_signal_sets()
    for name, was in kernel.items():
        if after.get(name) != was:
            now = after.get(name, frozenset())
            changes.append(f"{name} +{sorted(now - was)} -{sorted(was - now)}")
    if signal.pthread_sigmask(signal.SIG_BLOCK, ()) != mask and not kernel:
        changes.append("blocked signals changed")
    if not changes:
        return
    for signum, handler in handlers.items():
        if handler is not None:
            signal.signal(signum, handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    pytest.fail("the test left the process's signal handling changed: " + "; ".join(changes))


@pytest.fixture(autouse=True)
def _no_process_outlives_its_test() -> Iterator[None]:
    """At the end of every test, passed or failed, stop the programs the test helpers started
    and every process under them (tests/cli_helpers.py, :func:`at_end_of_test`)."""
    yield
    end_of_test()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked slow start first, on every worker at once.

    ``--dist worksteal`` hands each of its ``n`` workers a contiguous share of the collection,
    in order, then lets an idle worker take the back half of the longest queue. Sorted slow
    first, every slow test fell in the first worker's share: one worker ran the real-process
    games one after another while the others ran the CPU-bound ones, and the last games, taken
    over late, ran alone at the end. Here each worker's share begins with every ``n``-th slow
    test, then its part of the others, so that the games, which mostly wait on the clock, run
    side by side with the tests that use the CPU. (Without workers, slow first.)"""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers < 2:
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    rest = items[len(slow) :]
    shares: list[list[pytest.Item]] = [slow[k::workers] for k in range(workers)]
    left = len(items)
    sizes = []
    for k in range(workers):  # the sizes worksteal's first hand-out gives (check_schedule)
        sizes.append(left // (workers - k))
        left -= sizes[-1]
    at = 0
    for share, size in zip(shares, sizes, strict=True):
        take = max(0, size - len(share))
        share.extend(rest[at : at + take])
        at += take
    shares[-1].extend(rest[at:])
    items[:] = [item for share in shares for item in share]


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Three workers per core for ``-n auto``: most slow tests are real processes playing at
    the bots' pace, waiting on the clock rather than the CPU, so more workers than cores run
    while they wait. (Session 22, 2 cores, quiet: 4 workers 9 min 43 s of wall time, 6 workers
    7 min 50 s, the same 11-12 min of CPU.)"""
    return 3 * (os.cpu_count() or 1)


@pytest.fixture
def page() -> Iterator[ServedPage]:
    """The real page server on a thread of its own (``web_helpers.ServedPage``), closed after
    the test: for browser tests that drive a table on cue."""
    from tests.web_helpers import ServedPage

    served = ServedPage()
    try:
        yield served
    finally:
        served.close()
