"""Shared test configuration: async tests run on trio through AnyIO's pytest plugin."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Run every ``@pytest.mark.anyio`` test on trio (STYLE.md: async tests)."""
    return "trio"
