"""Helpers for the tests that run the real ``nertz`` command as processes."""

from __future__ import annotations

import json
import subprocess
from typing import Any


def json_lines_until(proc: subprocess.Popen[str], event: str) -> list[dict[str, Any]]:
    """The JSON lines ``proc`` prints (``--json``) up to and including the first ``event``;
    other output is skipped. Fails if the process ends first."""
    assert proc.stdout is not None
    seen: list[dict[str, Any]] = []
    for line in proc.stdout:
        if line.startswith("{"):
            seen.append(json.loads(line))
            if seen[-1]["event"] == event:
                return seen
    raise AssertionError(f"no {event!r} line before the end: {seen}")


def one_error_line(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """The one line a command that refused its input wrote on stderr (no traceback), holding
    each of ``words``."""
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]
