"""What finished ``nertz`` processes left: the JSON lines of their output, their final line,
and the audit of their logs (the real ``nertz audit`` command)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cli_helpers import nertz


def json_events(out: str) -> list[dict[str, Any]]:
    """The JSON lines of a ``--json`` command's output, in order (other lines skipped)."""
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def final_event(out: str) -> dict[str, Any]:
    """The last ``final`` line of a ``--json`` command's output."""
    return next(e for e in reversed(json_events(out)) if e["event"] == "final")


def assert_audit_valid(logs: Iterable[Path]) -> None:
    """``nertz audit --json`` of ``logs`` exits 0: the logs are a valid game."""
    audit = nertz("audit", "--json", *map(str, logs), timeout=60)
    assert audit.returncode == 0, audit.stdout + audit.stderr
