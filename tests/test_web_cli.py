"""``--web``'s options as a person mistypes them: one clear line, no traceback, nothing left
running."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from tests.cli_helpers import one_error_line
from tests.web_helpers import ROOT


def _nertz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli", *args],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_bad_web_bind_is_one_line() -> None:
    for bad in ("nonsense", "127.0.0.1", "300.1.1.1:80", "127.0.0.1:70000"):
        done = _nertz("play", "--web", "--web-bind", bad, "--bots", "1")
        one_error_line(done, "--web-bind")


def test_a_page_port_in_use_is_one_line_and_the_bots_stop(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _nertz(
            *("play", "--web", "--no-open", "--web-bind", f"127.0.0.1:{port}"),
            *("--bots", "1", "--seed", "5", "--dir", str(tmp_path / "game")),
        )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    assert f"cannot serve the page on 127.0.0.1:{port}" in done.stderr, done.stderr
    # The bot was stopped: no process of this game is left.
    ps = subprocess.run(["ps", "-eo", "args"], check=True, capture_output=True, text=True).stdout
    assert str(tmp_path / "game") not in ps
