"""The shape of ``cli/`` (issue 16): no import circle between its modules, no private name
(``_x``) imported from one of its modules into another, and no function over ~80 lines.

Read from the source with :mod:`ast`: every import counts, at the top of a module or inside a
function (a lazy import still ties two modules together).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parent.parent / "cli"
LONGEST = 80  # lines of one function, its docstring included


def _modules() -> dict[str, ast.Module]:
    return {f"cli.{path.stem}": ast.parse(path.read_text()) for path in sorted(CLI.glob("*.py"))}


def _imports(tree: ast.Module) -> list[tuple[str, str]]:
    """``(module, name)`` for each name imported from a ``cli`` module (``name`` empty for a
    plain ``import cli.x``)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            if node.module == "cli":
                found += [(f"cli.{alias.name}", "") for alias in node.names]
            elif node.module.startswith("cli."):
                found += [(node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names if alias.name.startswith("cli.")]
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` (as the modules round it), or ``None``."""
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        path.append(node)
        for other in sorted(graph.get(node, ())):
            found = visit(other)
            if found is not None:
                return found
        path.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start)
        if found is not None:
            return found
    return None


def test_cli_has_no_import_circle() -> None:
    modules = _modules()
    graph = {
        name: {module for module, _ in _imports(tree) if module in modules and module != name}
        for name, tree in modules.items()
    }
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_no_private_name_is_imported_across_cli_modules() -> None:
    crossing = [
        f"{name} imports {imported} from {module}"
        for name, tree in _modules().items()
        for module, imported in _imports(tree)
        if imported.startswith("_") and module != name
    ]
    assert crossing == []


@pytest.mark.parametrize(
    "path", [*sorted(CLI.glob("*.py")), CLI.parent / "p2p_nertz/ui/controller.py"]
)
def test_no_function_is_over_80_lines(path: Path) -> None:
    long = [
        f"{path.name}:{node.lineno} {node.name}: {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > LONGEST
    ]
    assert long == []


def test_the_checks_see_a_circle_and_a_private_import() -> None:
    # The checks themselves: a circle of three, and a private name, are found.
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    tree = ast.parse("from cli.x import _hidden, shown\nimport cli.y\nfrom cli import z\n")
    assert _imports(tree) == [
        ("cli.x", "_hidden"),
        ("cli.x", "shown"),
        ("cli.y", ""),
        ("cli.z", ""),
    ]
