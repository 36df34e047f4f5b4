"""``nertz demo`` and ``nertz node`` as real processes: a 3-player game over ZeroMQ on loopback.

The demo is run exactly as a user runs it (``python -m cli demo``), so it spawns one ``nertz
node`` process per player; the test checks the scoreboard, the agreement on the final digest
and the logs on disk.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

DEMO_TIMEOUT = 120.0


def nertz(*args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    """Run ``python -m cli ARGS`` and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_demo_plays_a_multi_process_game(tmp_path: Path) -> None:
    work = tmp_path / "demo"
    done = nertz(
        "demo",
        "--players",
        "3",
        "--rounds",
        "1",
        "--speed",
        "10",
        "--seed",
        "7",
        "--dir",
        str(work),
        timeout=DEMO_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "scoreboard after 1 round(s):" in out
    for name in ("P1", "P2", "P3"):
        assert re.search(rf"^  {name} +[a-z2-7]{{4}}(-[a-z2-7]{{4}}){{3}} +-?\d+$", out, re.M), out
    assert re.search(r"^winner: P\d", out, re.M), out
    assert re.search(r"^all 3 nodes agree: digest [0-9a-f]{64}$", out, re.M), out
    assert "-m cli audit " in out or "nertz audit " in out  # runnable as printed
    for seat in (1, 2, 3):
        log = work / f"p{seat}.log"
        assert log.is_file() and log.stat().st_size > 0
    # The keys are in the key store (owner only), not beside the logs handed to auditors.
    store = Path(os.environ["XDG_CONFIG_HOME"]) / "p2p-nertz" / "keys"
    kept = sorted(store.iterdir())
    assert len(kept) == 3 and all(k.stat().st_mode & 0o777 == 0o600 for k in kept)
    secrets = [k.read_bytes() for k in kept]
    for path in work.iterdir():
        assert path.suffix != ".key" and not any(s in path.read_bytes() for s in secrets), path
    assert "Traceback" not in done.stderr


def test_node_with_a_missing_key_fails_in_one_line(tmp_path: Path) -> None:
    done = nertz(
        "node",
        "--key",
        str(tmp_path / "missing.key"),
        "--spec",
        str(tmp_path / "game.spec"),
        "--bind",
        "tcp://127.0.0.1:0",
        "--log",
        str(tmp_path / "p.log"),
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "key file" in lines[0] and "Traceback" not in done.stderr


def test_demo_rejects_bad_arguments_in_one_line(tmp_path: Path) -> None:
    done = nertz("demo", "--players", "3", "--strategy", "nobody", "--dir", str(tmp_path))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "unknown strategy" in done.stderr
