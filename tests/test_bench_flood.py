"""The flood benchmark (scripts/bench_flood.py) runs a short flood and prints its table.

No figure is asserted (they depend on the machine): the test checks that a two-player game
starts, is flooded, and that the table row is printed with numbers.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "bench_flood.py"


def test_a_short_flood_prints_its_row() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--players", "2", "--seconds", "1", "--attacks", "forged"],
        capture_output=True,
        text=True,
        timeout=80,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"^attack\s+sent/s\s+CPU flooded", done.stdout, re.MULTILINE), done.stdout
    row = re.search(r"^forged\s+([\d,]+)\s+(\d+)%\s+(\d+)%", done.stdout, re.MULTILINE)
    assert row is not None, done.stdout
    assert int(row.group(1).replace(",", "")) > 0  # the flood was sent


def test_bad_arguments_are_refused_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--attacks", "nope"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "unknown attacks: ['nope']" in done.stderr
    assert "Traceback" not in done.stderr
