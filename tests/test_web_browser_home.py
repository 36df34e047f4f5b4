"""The browser tests' chromium keeps everything it writes inside its own temporary home.

Each test's chromium, killed at the test's end, left its singleton socket's directory
(``/tmp/org.chromium.Chromium.*``) behind: 2,559 of them on the project's machine after
session 33. :func:`web_helpers.open_browser` now gives chromium a profile (``--user-data-dir``)
and a ``TMPDIR`` inside a temporary directory it removes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web_helpers import browser_missing, open_browser

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
]


def test_open_browser_leaves_nothing_behind() -> None:
    with open_browser() as driver:
        driver.get("about:blank")
        profile = Path(driver.capabilities["chrome"]["userDataDir"])
        home = profile.parent
        assert home.name.startswith("nertz-chromium-"), profile
        # Chromium's own temporary files (its singleton socket's directory) are in the home.
        assert sorted(p.name for p in (home / "tmp").iterdir()), "chromium wrote no temp file"
    assert not home.exists()
