"""Which build of the core the tests run on, and the mark of a test that needs the
interpreted one (p2p_nertz/build.py; docs/latency.md, "Session 42: the compiled build").

On the compiled build a core class's methods cannot be replaced, a core module's function
replaced by a spy is not the one its compiled callers call (they bind it at compile time),
and a core class cannot be subclassed by an interpreted one. A test that needs one of those
and has no seam that works compiled is marked :func:`interpreted_only`, with the reason: it
runs on the interpreted build (CI's, and every default install), and is skipped, saying why,
on the compiled one.
"""

from __future__ import annotations

import pytest

from p2p_nertz.build import compiled_modules

#: The core modules this process imports compiled (none on the interpreted build).
COMPILED = frozenset(compiled_modules())


def interpreted_only(reason: str, *modules: str) -> pytest.MarkDecorator:
    """Skip on a build that compiles any of ``modules`` (``p2p_nertz.protocol.peer``...:
    those whose functions or methods the test replaces or whose class it subclasses)."""
    why = _compiled_why(reason, modules)
    return pytest.mark.skipif(why is not None, reason=why or "")


def need_interpreted(reason: str, *modules: str) -> None:
    """:func:`interpreted_only` inside a test or a fixture: skip it here, saying why, on a
    build that compiles any of ``modules``."""
    why = _compiled_why(reason, modules)
    if why is not None:
        pytest.skip(why)


def _compiled_why(reason: str, modules: tuple[str, ...]) -> str | None:
    """Why a test needing ``modules`` interpreted is skipped on this build (``None``: not)."""
    compiled = sorted(COMPILED.intersection(modules))
    return (
        f"interpreted build only ({', '.join(compiled)} compiled): {reason}" if compiled else None
    )
