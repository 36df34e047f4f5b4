"""The order the suite hands its tests to xdist's workers (tests/conftest.py,
``pytest_collection_modifyitems``): each worker's share begins with its slow tests, and a
module's slow tests go to one worker together, so that a game they share is played once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import pytest
from conftest import pytest_collection_modifyitems

WORKERS = 6


@dataclass(frozen=True)
class _Item:
    """What the hook reads of a collected test: its node id and whether it is marked slow."""

    nodeid: str
    slow: bool

    def get_closest_marker(self, name: str) -> object | None:
        return "slow" if self.slow and name == "slow" else None


def _collected() -> list[_Item]:
    """A collection shaped like the suite's: modules of several slow tests (sharing a game),
    of one, and modules of fast tests only, in the order pytest collects them."""
    items: list[_Item] = []
    for m in range(120):
        slow = {0: 20, 1: 6, 2: 3}.get(m, 1 if m < 103 else 0)
        items += [_Item(f"tests/test_m{m:03}.py::test_{k}", k < slow) for k in range(slow + 4)]
    return items


def _handed_out(
    items: list[_Item], monkeypatch: pytest.MonkeyPatch
) -> tuple[list[_Item], list[list[_Item]]]:
    """The hook's order, and each worker's first hand-out by ``--dist worksteal`` (contiguous
    shares of ``len // workers left``)."""
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", str(WORKERS))
    ordered = list(items)
    pytest_collection_modifyitems(cast("list[pytest.Item]", ordered))
    shares, at, left = [], 0, len(ordered)
    for k in range(WORKERS):
        size = left // (WORKERS - k)
        shares.append(ordered[at : at + size])
        at, left = at + size, left - size
    return ordered, shares


def _module(item: _Item) -> str:
    return item.nodeid.partition("::")[0]


def test_a_modules_slow_tests_go_to_one_worker_together(monkeypatch: pytest.MonkeyPatch) -> None:
    items = _collected()
    ordered, shares = _handed_out(items, monkeypatch)
    assert sorted(i.nodeid for i in ordered) == sorted(i.nodeid for i in items)
    slow = [i for i in items if i.slow]
    most = -(-len(slow) // (4 * WORKERS))  # (a quarter of a worker's part of them)
    assert most >= 5
    worker = {item: k for k, share in enumerate(shares) for item in share}
    for name in {_module(i) for i in slow}:
        mine = [i for i in slow if _module(i) == name]
        # Pieces of ``most`` in the order collected, each on one worker.
        for start in range(0, len(mine), most):
            assert len({worker[i] for i in mine[start : start + most]}) == 1, name
        if len(mine) <= most:  # (and its other tests with them)
            assert {worker[i] for i in items if _module(i) == name} == {worker[mine[0]]}
    # Every worker's share starts with its slow tests, and they are dealt evenly.
    dealt = []
    for share in shares:
        flags = [i.slow or any(j.slow for j in share if _module(j) == _module(i)) for i in share]
        assert flags == sorted(flags, reverse=True)
        dealt.append(sum(i.slow for i in share))
    assert sum(dealt) == len(slow) and max(dealt) - min(dealt) <= most


def test_without_workers_the_slow_tests_come_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)
    items = _collected()
    ordered = list(items)
    pytest_collection_modifyitems(cast("list[pytest.Item]", ordered))
    assert ordered == [i for i in items if i.slow] + [i for i in items if not i.slow]
