"""The build: pure Python unless ``NERTZ_MYPYC=1`` asks for the core compiled by mypyc.

Everything else about the package is in ``pyproject.toml``. The compiled build is opt-in
(README, "Install"; docs/latency.md, "Session 42: the compiled build, opt-in"): it needs mypy
and a C compiler where it is built, and is built without build isolation so that mypy reads the
same installed dependencies as the project's own type check::

    pip install 'setuptools>=77' mypy
    NERTZ_MYPYC=1 pip install --no-build-isolation '.'

What it compiles, and what it leaves interpreted, has one home: ``p2p_nertz/build.py``.
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path
from typing import Any

from setuptools import setup

ROOT = Path(__file__).resolve().parent


def _ext_modules() -> list[Any]:
    if os.environ.get("NERTZ_MYPYC", "0") in ("", "0"):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        sys.exit(
            "NERTZ_MYPYC=1 needs mypy in the build's environment: install mypy and build "
            "with pip's --no-build-isolation (README, Install)"
        )
    build = runpy.run_path(str(ROOT / "p2p_nertz" / "build.py"))
    os.chdir(ROOT)  # mypycify takes paths relative to the project's root
    return mypycify(
        build["source_paths"](ROOT), opt_level="3", multi_file=True, group_name="p2p_nertz_core"
    )


setup(ext_modules=_ext_modules())
