"""Shared test configuration: async tests run on trio through AnyIO's pytest plugin."""

from __future__ import annotations

import contextlib
import gc
import inspect
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType, ModuleType
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

# A shell starts a background job (`cmd &` without job control, nohup under some shells)
# with SIGINT ignored, and a process inherits that across exec: every `nertz` process a test
# starts would then ignore the Ctrl-C the signal tests send it (session 41: 10 such failures
# in a run started so). Python's own handler here (never inherited: a handled signal is
# reset to the default at exec) gives the suite the same start as a terminal's foreground.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The cyclic garbage collector's first generation at 20,000 new objects, not 700: a simulated
# game makes millions of short-lived objects, and each collection of the young ones walked
# those still alive. Session 33, three pairs of modules of simulated games, A and B side by
# side: the collections 1.3-1.6 CPU-s of a worker's 24-31 at 700, 0.2-0.65 here, the run 3-6%
# less CPU. (The processes the tests start keep Python's default.)
gc.set_threshold(20_000, 20, 10)

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
    """The tests marked slow start first, on every worker at once, and the tests of a module
    that share a game run on one worker.

    ``--dist worksteal`` hands each of its ``n`` workers a contiguous share of the collection,
    in order, then lets an idle worker take the back half of the longest queue. Sorted slow
    first, every slow test fell in the first worker's share: one worker ran the real-process
    games one after another while the others ran the CPU-bound ones. Here each worker's share
    holds its part of the slow tests, spread over its first part between its other tests
    (:func:`_spread`), so that the games, which mostly wait on the clock, run side by side
    with the tests that use the CPU.

    A module's tests that reach one game (a ``functools.cache`` of the tests, a module-scoped
    fixture: :func:`_games_shared`) go to one worker together, at the front of its share
    (worksteal takes from the back), the largest group first, each to the share with the
    fewest such tests so far: every other worker that ran one of them played the game again
    (tests/test_sim_freeze_beats.py's ``late_answer``, up to five times; not every test of
    tests/test_sim_shuffle_cheats.py's groups is marked slow, so the tests are counted, not
    the marks). The other slow tests go one by one, each to the share with the fewest of them:
    session 28 dealt a module's slow tests to one worker, and tests/test_red_faults.py's
    real-node games, which share nothing, ran in a row at the end. (Without workers, slow
    first.)"""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers >= 2:
        items[:] = dealt(items, workers, _games_shared)


def dealt(
    items: list[pytest.Item], workers: int, shared: Callable[[pytest.Item], set[str]]
) -> list[pytest.Item]:
    """``items`` (slow first) in the order that gives each of ``workers`` its share (see
    :func:`pytest_collection_modifyitems`); ``shared(item)`` names the games ``item``
    shares with other tests of its module."""
    slow = {item for item in items if item.get_closest_marker("slow") is not None}
    groups = [group for group in _sharing(items, shared) if len(group) > 1]
    groups.sort(key=lambda group: -len(group))  # (stable)
    shares: list[list[pytest.Item]] = [[] for _ in range(workers)]
    load = [0] * workers  # (the tests of the groups dealt: a slow mark says too little)
    room = len(items) // workers
    for group in groups:  # (each to the share with the least that has room, largest first)
        fits = [k for k in range(workers) if len(shares[k]) + len(group) <= room]
        k = min(fits or range(workers), key=lambda k: load[k])
        shares[k] += group
        load[k] += len(group)
    together = {item for group in groups for item in group}
    lone = [0] * workers
    for item in items:  # (each to the share with the fewest, of those the least load)
        if item in slow and item not in together:
            k = min(range(workers), key=lambda k: (lone[k], load[k]))
            shares[k].append(item)
            lone[k] += 1
    placed = {item for share in shares for item in share}
    rest = [item for item in items if item not in placed]
    left = len(items)
    at = 0
    for k, share in enumerate(shares):  # the sizes worksteal's first hand-out gives
        size = left // (workers - k)
        take = max(0, size - len(share))
        share.extend(rest[at : at + take])
        at += take
        left -= len(share)
    shares[-1].extend(rest[at:])
    return [item for share in shares for item in _spread(share, slow - together)]


def _spread(share: list[pytest.Item], waiting: set[pytest.Item]) -> list[pytest.Item]:
    """``share`` with its ``waiting`` tests (slow, sharing no game: real processes, mostly
    waiting on the clock) spread evenly over its first :data:`SPREAD_OVER`, between the others
    in their order. Dealt at the front of every share, the six workers all began with such
    games at once and the 2 cores idled for minutes (session 29: load 1 for the first five
    minutes of the suite); spread, a worker that waits runs beside one that computes, and none
    is left with a long game at the end, where worksteal cannot help."""
    others = [item for item in share if item not in waiting]
    mine = [item for item in share if item in waiting]
    if not mine:
        return others
    span = int(len(others) * SPREAD_OVER)
    spread: list[pytest.Item] = []
    at = 0
    for n, item in enumerate(mine):
        upto = n * span // len(mine)
        spread += others[at:upto]
        at = max(at, upto)
        spread.append(item)
    return spread + others[at:]


SPREAD_OVER = 0.7
"""The part of a worker's share, from its front, over which its waiting tests are spread."""


def _sharing(
    items: list[pytest.Item], shared: Callable[[pytest.Item], set[str]]
) -> list[list[pytest.Item]]:
    """``items`` in groups, each in the order collected: two tests of one module that name a
    game in common are in one group, and so, through them, are the tests sharing a game with
    either."""
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for i, item in enumerate(items):
        module = item.nodeid.partition("::")[0]
        for game in shared(item):
            j = first.setdefault(f"{module} {game}", i)
            parent[root(i)] = root(j)
    groups: dict[int, list[pytest.Item]] = {}
    for i, item in enumerate(items):
        groups.setdefault(root(i), []).append(item)
    return list(groups.values())


_TESTS = Path(__file__).parent


def _games_shared(item: pytest.Item) -> set[str]:
    """The games ``item`` may share with other tests of its module: the ``functools.cache``
    functions of the tests (tests/*.py) that its function and its fixtures call, directly or
    through the tests' helpers, and the fixtures it uses that live longer than one test
    (module or class scope; a session's are the whole run's, wherever its tests go)."""
    found = set(_caches_called(getattr(item, "obj", None)))
    info = getattr(item, "_fixtureinfo", None)
    for name, defs in info.name2fixturedefs.items() if info is not None else ():
        if defs[-1].scope in ("class", "module", "package"):
            found.add(f"fixture {name}")
        found.update(_caches_called(defs[-1].func))
    return found


_CALLED: dict[CodeType, frozenset[str]] = {}


def _caches_called(start: object) -> frozenset[str]:
    """The tests' ``functools.cache`` functions that the function ``start`` calls, directly
    or through the tests' other functions (memoized: a test's parameters share it)."""
    code = getattr(start, "__code__", None)
    if code is None:
        return frozenset()
    if code not in _CALLED:
        found: set[str] = set()
        functions = [start]
        seen: set[CodeType] = set()
        while functions:
            function = functions.pop()
            with contextlib.suppress(ValueError):  # (a loop of __wrapped__)
                function = inspect.unwrap(function) if callable(function) else function
            called = getattr(function, "__code__", None)
            if called is None or called in seen or not _of_the_tests(called):
                continue
            seen.add(called)
            names = function.__globals__
            for name in _names(called):
                value = names.get(name)
                if isinstance(value, ModuleType) and _of_the_tests(value):
                    functions += [getattr(value, n, None) for n in _names(called)]
                elif hasattr(value, "cache_info") and hasattr(value, "__wrapped__"):
                    if _of_the_tests(value.__wrapped__.__code__):
                        found.add(f"cache {value.__module__}.{value.__qualname__}")
                    functions.append(value.__wrapped__)
                else:
                    functions.append(value)
        _CALLED[code] = frozenset(found)
    return _CALLED[code]


def _names(code: CodeType) -> Iterator[str]:
    """The global and attribute names ``code`` and the functions defined in it use."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _names(const)


def _of_the_tests(thing: CodeType | ModuleType) -> bool:
    """Whether a function's code, or a module, is one of the tests' (tests/*.py)."""
    path = thing.co_filename if isinstance(thing, CodeType) else getattr(thing, "__file__", None)
    return path is not None and Path(path).parent == _TESTS


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Four workers per core for ``-n auto``: most of the suite's time is real processes
    playing at the bots' pace, waiting on the clock rather than the CPU (session 29: tests
    whose CPU is under half their wall hold 45 of the 57 worker-minutes of a run, and 7.8 of
    its 13.9 CPU-minutes), so more workers than cores run while they wait. (Session 29, 2
    cores, quiet, the same tree: 6 workers 9 min 30 s, 8 workers 7 min 30 s, 13-14 CPU-minutes
    both; session 22: 4 workers 9 min 43 s, 6 workers 7 min 50 s.)"""
    return 4 * (os.cpu_count() or 1)


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
