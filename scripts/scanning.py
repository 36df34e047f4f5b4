"""What the scans of a fault class share: run the suite's own test of the class on one game
of a grid and say how it failed, and the ranges the scans take on their command line.

Used by ``scan_sleeper_forks.py`` and ``scan_drop_cuts.py``; not part of the suite.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import TypeVar

Case = TypeVar("Case")


def first_failure(test: Callable[[Case], None], case: Case, precondition: str) -> str | None:
    """How the test failed on ``case``: the failing line and its message; ``""`` when the
    first check that failed is ``precondition`` (the game is not one of the class); ``None``
    when it passed. A crash is a failure of its own kind, named."""
    try:
        test(case)
    except AssertionError as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        if precondition in (frame.line or ""):
            return ""
        message = str(exc).splitlines()[-1] if str(exc) else ""
        return f"line {frame.lineno}: {frame.line}" + (f": {message}" if message else "")
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def span(text: str) -> range:
    """``"N"`` or ``"N-M"`` (both ends in): a range of seeds or table sizes."""
    low, _, high = text.partition("-")
    return range(int(low), int(high or low) + 1)
