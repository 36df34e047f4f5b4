"""The order the suite hands its tests to xdist's workers (tests/conftest.py,
``pytest_collection_modifyitems``): the tests of a module that share a game go to one worker
together, at the front of its share; the other slow tests go round the workers one by one, spread
over the first part of each share."""

from __future__ import annotations

import ast
import itertools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import pytest
from conftest import SPREAD_OVER, _games_shared, _sharing, dealt, pytest_collection_modifyitems

WORKERS = 6


@dataclass(frozen=True)
class _Item:
    """What the hook reads of a collected test: its node id, whether it is marked slow, and
    (here given, in the suite found by ``_games_shared``) the games it shares."""

    nodeid: str
    slow: bool
    games: frozenset[str] = field(default=frozenset())

    def get_closest_marker(self, name: str) -> object | None:
        return "slow" if self.slow and name == "slow" else None


def _module(item: _Item) -> str:
    return item.nodeid.partition("::")[0]


def _collected() -> list[_Item]:
    """A collection shaped like the suite's, in the order pytest collects it: modules whose
    slow tests share one game or two (a dealer_votes of 25, a cheats of 16 and 8), modules of
    slow tests that share nothing (a red_faults of 7 real-node games), a module of fast tests
    sharing a fixture, modules of one slow test and modules of fast tests only."""
    items: list[_Item] = []
    shared = {0: [(25, "cache a")], 1: [(16, "cache a"), (8, "cache b"), (3, "")], 2: [(5, "f")]}
    for m in range(3):
        for count, game in shared[m]:
            items += [
                _Item(f"tests/test_g{m}.py::test_{game}_{k}", True, frozenset({game} - {""}))
                for k in range(count)
            ]
        items += [_Item(f"tests/test_g{m}.py::test_fast_{k}", False) for k in range(4)]
    items += [_Item(f"tests/test_red.py::test_{k}", True) for k in range(7)]
    items += [_Item(f"tests/test_red.py::test_fast_{k}", False) for k in range(3)]
    items += [_Item(f"tests/test_fixture.py::test_{k}", False, frozenset({"f"})) for k in range(9)]
    for m in range(300):
        slow = 1 if m < 150 else 0
        items += [_Item(f"tests/test_m{m:03}.py::test_{k}", k < slow) for k in range(slow + 12)]
    return items


def _shares(ordered: list[_Item]) -> list[list[_Item]]:
    """Each worker's first hand-out by ``--dist worksteal`` (contiguous shares of
    ``len // workers left``)."""
    shares, at, left = [], 0, len(ordered)
    for k in range(WORKERS):
        size = left // (WORKERS - k)
        shares.append(ordered[at : at + size])
        at, left = at + size, left - size
    return shares


def _dealt(items: list[_Item]) -> list[_Item]:
    ordered = sorted(items, key=lambda item: not item.slow)
    return cast(
        "list[_Item]",
        dealt(cast("list[pytest.Item]", ordered), WORKERS, lambda item: set(item.games)),  # type: ignore[attr-defined]
    )


def test_the_tests_sharing_a_game_go_to_one_worker_together_at_the_front() -> None:
    items = _collected()
    ordered = _dealt(items)
    assert sorted(i.nodeid for i in ordered) == sorted(i.nodeid for i in items)
    shares = _shares(ordered)
    worker = {item: k for k, share in enumerate(shares) for item in share}
    groups = [(_module(i), game) for i in items for game in i.games]
    assert len(set(groups)) == 5
    for module, game in set(groups):
        mine = [i for i in items if _module(i) == module and game in i.games]
        assert len({worker[i] for i in mine}) == 1, (module, game)
        share = shares[worker[mine[0]]]
        # At the front, where worksteal, which takes the back half of a queue, leaves them.
        assert all(share.index(i) < len(share) // 4 for i in mine), (module, game)
    # A module's two games are two groups, on two workers.
    first = {i.nodeid: worker[i] for i in items}
    assert first["tests/test_g1.py::test_cache a_0"] != first["tests/test_g1.py::test_cache b_0"]


def test_the_slow_tests_that_share_nothing_go_round_the_workers() -> None:
    items = _collected()
    shares = _shares(_dealt(items))
    grouped = {i for i in items if i.games}
    lone = [Counter(i.slow and i not in grouped for i in share)[True] for share in shares]
    assert sum(lone) == sum(i.slow and i not in grouped for i in items)
    assert max(lone) - min(lone) <= 1
    # test_red's seven real-node games, which share nothing, do not run in a row.
    red = Counter(
        k
        for k, share in enumerate(shares)
        for i in share
        if i.nodeid.startswith("tests/test_red.py::test_") and i.slow
    )
    assert len(red) == WORKERS
    # In every share they are spread between the others over its first part (all six workers
    # beginning with them idled the cores), each next one further on, none in the last part.
    for share in shares:
        at = [n for n, i in enumerate(share) if i.slow and i not in grouped]
        assert at[-1] < len(share) * SPREAD_OVER, at
        gaps = [b - a for a, b in itertools.pairwise(at)]
        assert min(gaps) > 1 and max(gaps) <= 2 * min(gaps) + 1, gaps


def test_without_workers_the_slow_tests_come_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)
    items = _collected()
    ordered = list(items)
    pytest_collection_modifyitems(cast("list[pytest.Item]", ordered))
    assert ordered == [i for i in items if i.slow] + [i for i in items if not i.slow]


#: What in a test module's source says that several of its tests may reach one game.
_SHARING = re.compile(
    r"@(functools\.)?(cache|lru_cache)\b|functools\.(cache|lru_cache)\(|"
    r"scope=\"(module|class|package)\""
)


def _reaching(helper: Path) -> set[str]:
    """The names of ``helper`` (a tests/ helper module) that reach a game it caches or a
    fixture it keeps: its cached functions, and the functions and classes whose source names
    one of those, to a fixed point (a name's use, not a call traced: enough for these files)."""
    tree = ast.parse(helper.read_text())
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    found = {
        d.name
        for d in defs
        if _SHARING.search("".join(f"@{ast.unparse(x)}\n" for x in d.decorator_list))
    }
    found |= {d.name for d in defs if "fixture" in "".join(map(ast.unparse, d.decorator_list))}
    while True:
        more = {
            d.name
            for d in defs
            if d.name not in found
            and any(isinstance(n, ast.Name) and n.id in found for n in ast.walk(d))
        }
        if not more:
            return found
        found |= more


def _reaches_a_shared_game(module: Path, helpers: dict[str, set[str]]) -> bool:
    """Whether ``module``'s source may reach a game shared among its tests: it caches or
    keeps one itself, or imports from a helper a name that reaches one (:func:`_reaching`;
    a whole helper imported as a module counts)."""
    text = module.read_text()
    if _SHARING.search(text):
        return True
    for node in ast.parse(text).body:  # (the module's imports: one inside a test is one test's)
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            helper = helpers.get(node.module.removeprefix("tests."))
            if helper is not None and any(a.name in helper for a in node.names):
                return True
        elif isinstance(node, ast.Import) and any(
            a.name.removeprefix("tests.") in helpers for a in node.names
        ):
            return True
    return False


def _items(collector: pytest.Collector) -> Iterator[pytest.Item]:
    for node in collector.collect():
        if isinstance(node, pytest.Item):
            yield node
        else:
            yield from _items(cast("pytest.Collector", node))


def test_every_module_that_shares_a_game_has_its_tests_found(
    request: pytest.FixtureRequest,
) -> None:
    """The suite's own modules, collected: where a module's source caches a game or keeps a
    fixture past one test, the hook finds the tests that reach it (a way of sharing it does not
    see fails here, not silently on the workers), and deals each group to one worker among a
    collection of the suite's size."""
    here = Path(__file__).parent
    helpers = {
        p.stem: _reaching(p)
        for p in here.glob("*.py")
        if not p.stem.startswith("test_") and _SHARING.search(p.read_text())
    }
    modules = sorted(p for p in here.glob("test_*.py") if _reaches_a_shared_game(p, helpers))
    assert len(modules) >= 20
    everything: list[pytest.Item] = []
    for path in modules:
        items = list(_items(pytest.Module.from_parent(request.session, path=path)))
        assert any(_games_shared(item) for item in items), path.name
        everything += items
    groups = [g for g in _sharing(everything, _games_shared) if len(g) > 1]
    assert {g[0].nodeid.partition("::")[0] for g in groups} >= {
        "tests/test_sim_freeze_beats.py",  # (a module-scoped fixture)
        "tests/test_sim_shuffle_dealer_votes.py",  # (a functools.cache)
        "tests/test_audit_tamper.py",  # (audit_helpers' functools.cache, through played())
    }
    everything += [_Item(f"tests/test_m{m}.py::test", m % 10 == 0) for m in range(3500)]
    shares = _shares(cast("list[_Item]", dealt(everything, WORKERS, _games_shared)))
    worker = {item.nodeid: k for k, share in enumerate(shares) for item in share}
    for group in groups:
        assert len({worker[i.nodeid] for i in group}) == 1, group[0].nodeid
