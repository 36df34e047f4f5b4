"""The pure layers never reach for I/O, clocks or global randomness (DESIGN.md §1)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "p2p_nertz"
PURE = ["rules", "protocol", "sim", "bots", "audit", "match.py", "rng.py"]
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


def _modules() -> list[Path]:
    files: list[Path] = []
    for name in PURE:
        path = ROOT / name
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


def _imports(path: Path) -> set[str]:
    return {name.split(".")[0] for name in _modules_imported(path)}


def _modules_imported(path: Path) -> set[str]:
    """Every module ``path`` imports, by its full name (at any depth of the file)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


#: The layers below the simulator: it builds on them (and on the audit), never the reverse.
BELOW_SIM = ["rules", "protocol", "audit"]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_purity_pure_layers_import_no_io_clock_or_randomness(path: Path) -> None:
    assert not _imports(path) & FORBIDDEN, f"{path.name} imports {_imports(path) & FORBIDDEN}"


@pytest.mark.parametrize(
    "path",
    [p for name in BELOW_SIM for p in sorted((ROOT / name).rglob("*.py"))],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_purity_layers_below_the_simulator_do_not_import_it(path: Path) -> None:
    sim = {
        m for m in _modules_imported(path) if m == "p2p_nertz.sim" or m.startswith("p2p_nertz.sim.")
    }
    assert not sim, f"{path.name} imports {sim}"


def test_purity_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import time\nfrom os import path\nfrom p2p_nertz.sim.invariants import check\n")
    assert _imports(bad) & FORBIDDEN == {"time", "os"}
    assert "p2p_nertz.sim.invariants" in _modules_imported(bad)
