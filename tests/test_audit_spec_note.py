"""The spec note at the head of each log: read once per distinct note, named in every log."""

from __future__ import annotations

import pytest
from audit_helpers import played

from p2p_nertz.audit import FindingKind
from p2p_nertz.audit import auditor as auditor_module
from p2p_nertz.logfile import Record, RecordKind
from p2p_nertz.protocol.spec import SPEC_NOTE, GameSpec


def test_audit_parses_the_spec_note_every_log_holds_once(monkeypatch: pytest.MonkeyPatch) -> None:
    game = played(players=3, seed=11)
    logs = game.copy()
    assert all(log[0].kind is RecordKind.NOTE and log[0].name == SPEC_NOTE for log in logs)
    parsed: list[bytes] = []

    class Counted:  # what the audit asks of the spec's module, counted (on both builds)
        @staticmethod
        def from_wire(data: bytes) -> GameSpec:
            parsed.append(data)
            return GameSpec.from_wire(data)

    monkeypatch.setattr(auditor_module, "GameSpec", Counted)
    report = game.audit(logs)
    assert report.valid and report.spec == game.spec
    assert parsed == [logs[0][0].data]  # three logs, one note: parsed once


def test_audit_names_a_broken_spec_note_in_every_log_that_holds_it() -> None:
    game = played(players=3, seed=11)
    logs = game.copy()
    for log in logs:
        log[0] = Record.note(SPEC_NOTE, b"\x94garbage")
    report = game.audit(logs, candidates=[game.spec])  # (the game's spec found elsewhere)
    broken = [
        v.log
        for v in report.violations
        if v.kind is FindingKind.UNREADABLE and "the spec note is not a game spec" in v.detail
    ]
    assert broken == ["p1.log", "p2.log", "p3.log"]
    assert report.spec == game.spec
