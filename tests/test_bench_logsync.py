"""The synced-write benchmark (scripts/bench_logsync.py) runs every method and prints its rows.

No figure is asserted (they depend on the disk): the tests check that each method writes its
records, that the chunked ones fill ahead when the records reach the end of their region, and
that the benchmark leaves nothing behind in the directory it measured.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.timeout(60)]

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "bench_logsync.py"


def run_bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )


def test_bench_logsync_prints_a_row_per_method_with_fills_and_leaves_no_file(
    tmp_path: Path,
) -> None:
    done = run_bench(
        "--dir",
        str(tmp_path),
        "--rounds",
        "2",
        "--writes",
        "5",
        "--sizes",
        "240",
        "--chunks",
        "512",
        "--mix",
        "1",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for method in ("append", "append-dsync", "fallocate", "zeros", "zeros-dsync"):
        row = re.search(rf"^  {method}\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)", done.stdout, re.M)
        assert row is not None, done.stdout
        assert int(row.group(1)) == 10  # 2 rounds x 5 synced writes
    # 2 rounds x 10 records of 240 B through 512 B chunks: each round fills ahead 4 times.
    zeros = re.search(r"^  zeros\s.*\s(\d+) \((\d+)\)", done.stdout, re.M)
    assert zeros is not None and zeros.group(2) == "8", done.stdout
    assert not any(tmp_path.iterdir())


def test_bench_logsync_refuses_an_unknown_method_in_one_line() -> None:
    done = run_bench("--methods", "append,nope")
    assert done.returncode == 2
    assert "methods must include append" in done.stderr
    assert "Traceback" not in done.stderr
