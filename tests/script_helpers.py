"""The scripts under ``scripts/`` as modules, for the tests of what their figures stand on."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def load_script(name: str) -> ModuleType:
    """``scripts/NAME.py`` as the module ``NAME``, loaded once a process: dataclasses and
    pickle find their classes through ``sys.modules`` by the module's name, and a module-scoped
    fixture that asks again (a worker coming back to its file) gets the same classes."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]  # (not half a module for the next test)
        raise
    return module
