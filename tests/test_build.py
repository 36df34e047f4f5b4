"""p2p_nertz/build.py: what the opt-in compiled build compiles, and which build is running
(issue 18, session 42; docs/latency.md, "Session 42: the compiled build, opt-in")."""

from __future__ import annotations

from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from builds import COMPILED

from p2p_nertz import build

ROOT = Path(build.__file__).resolve().parent.parent


def test_build_compiles_every_core_module_but_those_it_names() -> None:
    core = {
        path.relative_to(ROOT).as_posix()
        for folder in ("protocol", "rules")
        for path in (ROOT / "p2p_nertz" / folder).glob("*.py")
        if path.name != "__init__.py"
    } | {"p2p_nertz/fifo.py"}
    paths = build.source_paths()
    assert paths == sorted(paths)
    assert set(paths) == core - set(build.NOT_COMPILED)
    # Every module left out is one of the core's (a renamed or removed one leaves the list).
    assert set(build.NOT_COMPILED) <= core


def test_build_tells_a_compiled_module_by_its_extension_beside_the_source(tmp_path: Path) -> None:
    for path in build.source_paths():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    assert build.compiled_modules(tmp_path) == []
    peer = tmp_path / "p2p_nertz" / "protocol" / ("peer" + EXTENSION_SUFFIXES[0])
    peer.write_bytes(b"")
    assert build.compiled_modules(tmp_path) == ["p2p_nertz.protocol.peer"]
    # A module left interpreted is not counted, whatever lies beside it.
    left = tmp_path / build.NOT_COMPILED[0]
    left.parent.mkdir(parents=True, exist_ok=True)
    left.with_suffix(EXTENSION_SUFFIXES[0]).write_bytes(b"")
    assert build.compiled_modules(tmp_path) == ["p2p_nertz.protocol.peer"]


def test_build_describes_the_build_this_process_runs() -> None:
    described = build.describe()
    if COMPILED:
        whole = len(build.source_paths()) + len(build.NOT_COMPILED)
        assert described == f"compiled (mypyc): {len(COMPILED)} of {whole} core modules"
    else:
        assert described == "interpreted"
