"""Which build of the core is running: interpreted, or compiled by mypyc (issue 18).

The sans-I/O core (``protocol/``, ``rules/`` and ``fifo.py``) compiles with mypyc: the
simulator's CPU falls to about 0.7× (docs/latency.md, "Session 41: the core compiled" and
"Session 42: the compiled build, opt-in"). The build is opt-in (README, "Install"):
``pip install`` makes the pure-Python package as always; ``NERTZ_MYPYC=1`` with mypy in the
build's environment compiles :data:`COMPILED` less :data:`NOT_COMPILED`. ``setup.py`` reads
both from here (one home); ``nertz --version`` and the benchmarks print :func:`describe`.

>>> describe() == "interpreted" or describe().startswith("compiled (mypyc): ")
True
"""

from __future__ import annotations

from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Final

#: What the compiled build compiles, relative to the project's root: every module of a folder
#: (its ``__init__`` aside) or one file.
COMPILED: Final = ("p2p_nertz/protocol", "p2p_nertz/rules", "p2p_nertz/fifo.py")

#: The modules of :data:`COMPILED` the build leaves interpreted, because mypyc refuses a
#: subclass of a builtin type (docs/latency.md, session 41's table): ``Reason`` (a ``str``),
#: ``Carried`` and ``CoveredPile`` (``tuple``s), each kept in a module of its own for this
#: (session 42). A module made to compile leaves this list.
NOT_COMPILED: Final = (
    "p2p_nertz/protocol/carried.py",
    "p2p_nertz/protocol/reason.py",
    "p2p_nertz/rules/covered.py",
)

_ROOT: Final = Path(__file__).resolve().parent.parent


def source_paths(root: Path = _ROOT) -> list[str]:
    """The files the compiled build compiles, relative to *root*, sorted.

    >>> "p2p_nertz/protocol/peer.py" in source_paths()
    True
    >>> "p2p_nertz/rules/__init__.py" in source_paths()
    False
    """
    paths: list[str] = []
    for entry in COMPILED:
        found = sorted((root / entry).glob("*.py")) if (root / entry).is_dir() else [root / entry]
        paths += [path.relative_to(root).as_posix() for path in found if path.name != "__init__.py"]
    return sorted(set(paths) - set(NOT_COMPILED))


def compiled_modules(root: Path = _ROOT) -> list[str]:
    """The modules of :func:`source_paths` that an import takes compiled: those with an
    extension module beside their source (an import prefers it), found without importing them
    (``nertz --version`` stays quick). None on the interpreted build.

    >>> compiled_modules(Path("/nowhere"))
    []
    """
    found = []
    for path in source_paths(root):
        stem = (root / path).with_suffix("")
        if any(stem.with_name(stem.name + suffix).exists() for suffix in EXTENSION_SUFFIXES):
            found.append(path.removesuffix(".py").replace("/", "."))
    return found


def describe() -> str:
    """``"interpreted"``, or ``"compiled (mypyc): N of M core modules"``, M counting the ones
    :data:`NOT_COMPILED` too: the line the benchmarks and ``nertz --version`` print."""
    compiled = len(compiled_modules())
    if not compiled:
        return "interpreted"
    whole = compiled + len(NOT_COMPILED)
    return f"compiled (mypyc): {compiled} of {whole} core modules"
