"""The pure layers never reach for I/O, clocks or global randomness (DESIGN.md §1).

Pure: the sans-I/O core (rules, protocol, and the shuffle's cryptography in deck), what drives
it in memory (sim, bots), and the layers above it that take bytes and times as arguments and
return values: the lobby's state machines (``lobby/``: their sockets are ``runtime/lobby.py``'s),
the table's screens and key handling (``ui/``: curses is ``cli/``'s), and the audit (``audit/``:
it reads records from streams).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "p2p_nertz"
PURE = [
    "rules",
    "protocol",
    "deck",
    "sim",
    "bots",
    "lobby",
    "ui",
    "audit",
    "match.py",
    "rng.py",
    "errors.py",
    "slots.py",
    "curve.py",
    "fifo.py",
    "defaults.py",
    "words.py",
]
#: The rest of the library: the I/O layers (trio, zmq, files, the browser's server, network
#: namespaces for tests, the process's signal handlers, which build of the core is installed)
#: and the package's own ``__init__``.
#: Every layer is in one list or the other
#: (:func:`test_purity_every_layer_is_pure_or_named_as_io`), so a new one is checked.
NOT_PURE = ["runtime", "logfile", "web", "testing", "signals.py", "build.py", "__init__.py"]
FORBIDDEN = {
    "trio",
    "zmq",
    "socket",
    "time",
    "random",
    "os",
    "asyncio",
    "threading",
    "select",
    "subprocess",
    "datetime",
    "secrets",
    "anyio",
}


# The library's own I/O modules: trio, zmq, sockets and files. A pure module importing one
# would reach the I/O through it.
IO_MODULES = ("p2p_nertz.runtime", "p2p_nertz.logfile.store", "cli")
# Pure modules that need one of them, and why (each entry must still be needed: see below).
IO_ALLOWED = {
    # LogSource.from_path opens the file it is given (``nertz audit FILE``): the audit's one
    # file access, imported inside that constructor only; the audit itself reads streams.
    "audit/auditor.py": {"p2p_nertz.logfile.store"},
}


def _modules() -> list[Path]:
    files: list[Path] = []
    for name in PURE:
        path = ROOT / name
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


def _imports(path: Path) -> set[str]:
    return {name.split(".")[0] for name in _imported(path)}


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports, by its full dotted name (function bodies included)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _io_imports(path: Path) -> set[str]:
    return {
        name
        for name in _imported(path)
        if any(name == io or name.startswith(io + ".") for io in IO_MODULES)
    }


#: The layers below the simulator: it builds on them (and on the audit), never the reverse.
BELOW_SIM = ["rules", "protocol", "audit"]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_purity_pure_layers_import_no_io_clock_or_randomness(path: Path) -> None:
    assert not _imports(path) & FORBIDDEN, f"{path.name} imports {_imports(path) & FORBIDDEN}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_purity_pure_layers_import_none_of_the_io_layers(path: Path) -> None:
    allowed = IO_ALLOWED.get(str(path.relative_to(ROOT)), set())
    assert _io_imports(path) <= allowed, f"{path.name} imports {_io_imports(path) - allowed}"


@pytest.mark.parametrize("name", sorted(IO_ALLOWED))
def test_purity_io_exemptions_are_still_needed(name: str) -> None:
    # An exemption nobody needs any more would let the next import through unremarked.
    assert _io_imports(ROOT / name) == IO_ALLOWED[name]


@pytest.mark.parametrize(
    "path",
    [p for name in BELOW_SIM for p in sorted((ROOT / name).rglob("*.py"))],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_purity_layers_below_the_simulator_do_not_import_it(path: Path) -> None:
    sim = {m for m in _imported(path) if m == "p2p_nertz.sim" or m.startswith("p2p_nertz.sim.")}
    assert not sim, f"{path.name} imports {sim}"


def test_purity_every_layer_is_pure_or_named_as_io() -> None:
    layers = {
        path.name
        for path in ROOT.iterdir()
        if (path.suffix == ".py") or (path.is_dir() and (path / "__init__.py").exists())
    }
    assert layers == set(PURE) | set(NOT_PURE)
    assert not set(PURE) & set(NOT_PURE)


def test_purity_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import time\nfrom os import path\nfrom p2p_nertz.sim.invariants import check\n")
    assert _imports(bad) & FORBIDDEN == {"time", "os"}
    assert "p2p_nertz.sim.invariants" in _imported(bad)


def test_purity_check_sees_an_io_layer_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from p2p_nertz.runtime.node import PeerNode\n"
        "def f():\n    import p2p_nertz.logfile.store\n"
        "from p2p_nertz.logfile.format import Record\n"
    )
    assert _io_imports(bad) == {"p2p_nertz.runtime.node", "p2p_nertz.logfile.store"}
