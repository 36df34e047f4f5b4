"""The cheat's size (scripts/peek_gain.py) runs on a few rounds and prints its figures.

No figure is asserted (a few rounds say nothing about the gain): the test checks the shape of
the output, one block per table size, and that bad arguments are refused in one line.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "peek_gain.py"
NUMBER = r"[+-]\d+\.\d{3}"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )


def test_a_few_paired_rounds_print_the_gain_with_its_interval() -> None:
    done = _run("--seeds", "2", "--rounds", "1", "--players", "2", "3", "--bootstrap", "50")
    assert done.returncode == 0, done.stderr[-2000:]
    for players in (2, 3):
        head = re.search(
            rf"^{players} players: peeking gains ({NUMBER}) points a round over (\d+) rounds "
            r"\((\d+) games\)$",
            done.stdout,
            re.MULTILINE,
        )
        assert head is not None, done.stdout
        assert int(head.group(2)) == 2  # 2 seeds x 1 round: one paired deal each
        assert int(head.group(3)) == 2 * (1 + players)  # the honest game, then one per seat
    for kind in ("normal", "bootstrap"):
        rows = re.findall(
            rf"^  95% CI, {kind}: +\[({NUMBER}), ({NUMBER})\]", done.stdout, re.MULTILINE
        )
        assert len(rows) == 2, done.stdout
        assert all(float(lo) <= float(hi) for lo, hi in rows)


def test_bad_arguments_are_refused_in_one_line() -> None:
    done = _run("--players", "9")
    assert done.returncode == 2
    assert "--players must be 2 to 8, not 9" in done.stderr
    assert "Traceback" not in done.stderr
