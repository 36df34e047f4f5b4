"""tests/cpu_record.py counts a test's CPU wherever it was spent: in the worker, in a child
reaped during the test, and in a child's own reaped children while the child lives on (the
fork servers' case). Each burner below spends at least 0.3 CPU-s by its own clock."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

#: Spends at least 0.3 s of the process's own CPU time.
BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"

INNER = f"""
import subprocess, sys
LIVE = []

BURN = {BURN!r}

def test_in_the_worker():
    exec(BURN)

def test_in_a_child_reaped():
    subprocess.run([sys.executable, "-c", BURN], check=True)

def test_in_a_live_childs_child():
    # The child reaps a burner of its own, says so, and lives on past the test.
    server = subprocess.Popen(
        [sys.executable, "-c",
         "import subprocess, sys; subprocess.run([sys.executable, '-c', sys.argv[1]]);"
         " print('done', flush=True); sys.stdin.read()", BURN],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert server.stdout.readline() == "done\\n"
    LIVE.append(server)

def test_idle():
    pass

def test_the_live_child_ended():
    for server in LIVE:
        server.kill()
        server.communicate()
"""


def test_cpu_record_counts_the_worker_its_reaped_children_and_a_live_childs(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_inner=INNER)
    records = tmp_path / "records"
    monkeypatch.setenv("NERTZ_CPU_RECORD", str(records))
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    result = pytester.runpytest_inprocess(
        "-p", "tests.cpu_record", "-p", "no:xdist", "-p", "no:cacheprovider", "-o", "addopts="
    )  # fmt: skip
    result.assert_outcomes(passed=5)
    got = {
        (r := json.loads(line))["test"].partition("::")[2]: r
        for line in (records / "main.jsonl").read_text().splitlines()
    }
    # (CPU times are read in clock ticks: 0.25 leaves room for a tick or two.)
    assert got["test_in_the_worker"]["self"] >= 0.25, got
    assert got["test_in_a_child_reaped"]["children"] >= 0.25, got
    assert got["test_in_a_live_childs_child"]["children"] >= 0.25, got
    assert got["test_idle"]["children"] < 0.25, got


def test_suite_cpu_sums_the_records_by_module(tmp_path: Path) -> None:
    (tmp_path / "gw0.jsonl").write_text(
        "".join(
            json.dumps({"test": t, "wall": w, "self": s, "children": c}) + "\n"
            for t, w, s, c in [
                ("tests/test_a.py::one", 2.0, 1.0, 0.5),
                ("tests/test_b.py::one", 1.0, 0.25, 0.0),
                ("tests/test_a.py::two", 3.0, 0.5, 2.0),
            ]
        )
    )
    out = subprocess.run(
        [sys.executable, "scripts/suite_cpu.py", str(tmp_path)],
        capture_output=True, text=True, check=True, cwd=Path(__file__).parent.parent,
    ).stdout  # fmt: skip
    rows = [line.split() for line in out.splitlines() if line.startswith("tests/")]
    assert rows == [
        ["tests/test_a.py", "2", "4.0", "1.5", "2.5", "5.0"],
        ["tests/test_b.py", "1", "0.2", "0.2", "0.0", "1.0"],
    ]
    missing = subprocess.run(
        [sys.executable, "scripts/suite_cpu.py", str(tmp_path / "none")],
        capture_output=True, text=True, cwd=Path(__file__).parent.parent, check=False,
    )  # fmt: skip
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr.count("\n") == 1 and "no records" in missing.stderr
