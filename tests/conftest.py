"""Shared test configuration: async tests run on trio through AnyIO's pytest plugin."""

from __future__ import annotations

import os

import pytest


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked slow run first, so that the longest ones start at once and none is left
    running alone at the end while the other workers idle. (With ``--dist worksteal``: the
    default scheduler queues tests on a worker ahead of time, and a worker that drew several
    slow ones kept the fast ones queued behind them while the others had nothing to do.)"""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Two workers per core for ``-n auto``: most slow tests are real processes playing at the
    bots' pace, waiting on the clock rather than the CPU, so a second worker per core runs
    while they wait."""
    return 2 * (os.cpu_count() or 1)
