"""``nertz audit`` given two logs of one member (docs/audit.md, *Two logs of one member*).

Real files: copies and cuts of the golden two-player logs. An old copy (a prefix of the
member's log, its last record torn where it was cut), an identical copy, or the same file
named twice is read as one log, with a ``same_member`` notice naming both: the verdict is the
one the member's log alone gives. Two logs of one member that differ are both read, and what
differs keeps its own findings.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from tests.audit_helpers import played, retimed_below_what_it_saw

GOLDEN = Path(__file__).parent / "data" / "golden" / "two-players"


def _audit(capsys: pytest.CaptureFixture[str], *logs: Path) -> tuple[int, str, dict[str, Any]]:
    """The exit status and text of ``nertz audit``, and its ``--json`` lines (findings, verdict)."""
    status = main(["audit", *map(str, logs)])
    text = capsys.readouterr().out
    assert main(["audit", "--json", *map(str, logs)]) == status
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    findings = [e["finding"] for e in lines if e["event"] == "finding"]
    verdict = next(e for e in lines if e["event"] == "verdict")
    return status, text, {"findings": findings, "verdict": verdict}


@pytest.fixture
def logs(tmp_path: Path) -> tuple[Path, Path]:
    """The two golden logs, copied (p1 is bot2's, seat 0)."""
    p1, p2 = tmp_path / "p1.log", tmp_path / "p2.log"
    shutil.copy(GOLDEN / "p1.log", p1)
    shutil.copy(GOLDEN / "p2.log", p2)
    return p1, p2


def _same_member(found: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in found["findings"] if f["kind"] == "same_member"]


@pytest.mark.parametrize("cut", [30000, 4096])
def test_an_old_copy_is_read_as_one_log_with_its_member_named(
    logs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], cut: int
) -> None:
    p1, p2 = logs
    old = tmp_path / "old.log"
    old.write_bytes(p1.read_bytes()[:cut])
    alone_status, _, alone = _audit(capsys, p1, p2)
    assert alone_status == 0
    for order in ((old, p1, p2), (p1, old, p2), (p1, p2, old)):
        status, text, found = _audit(capsys, *order)
        assert status == 0, text  # a copy is no gap: the game is valid, as without it
        (notice,) = _same_member(found)
        assert notice["severity"] == "notice"
        assert notice["log"] == str(old) and notice["other_log"] == str(p1)
        assert notice["seat"] == 0 and notice["author"] == "bot2"
        assert "are both bot2's log (seat 0)" in notice["detail"]
        assert f"{old} is a shorter copy of it" in notice["detail"]
        # Nothing else is said of it (no gap, no torn tail: it is not read) ...
        rest = [f for f in found["findings"] if f["kind"] != "same_member"]
        assert rest == alone["findings"]
        # ... and the game is the one the member's log gives.
        verdict, expected = found["verdict"], alone["verdict"]
        assert verdict["rounds"] == expected["rounds"] and verdict["totals"] == expected["totals"]
        # Every log given is listed, in the order given, the copy as a copy.
        listed = verdict["logs"]
        assert [entry["name"] for entry in listed] == [str(p) for p in order]
        copy = listed[order.index(old)]
        assert copy["copy_of"] == str(p1) and copy["records"] < listed[order.index(p1)]["records"]
        assert all("copy_of" not in entry for entry in listed if entry["name"] != str(old))
        assert f"{old}: a copy of {p1}," in text and "give one of them" in text


def test_an_identical_copy_and_a_file_named_twice_are_read_once(
    logs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p1, p2 = logs
    same = tmp_path / "same.log"
    shutil.copy(p1, same)
    _, _, alone = _audit(capsys, p1, p2)
    status, _, found = _audit(capsys, p2, p1, same)
    assert status == 0
    (notice,) = _same_member(found)
    assert notice["log"] == str(same) and notice["other_log"] == str(p1)
    assert "is a copy of it (the same records)" in notice["detail"]
    status, _, found = _audit(capsys, p2, p2, p1)
    assert status == 0
    (notice,) = _same_member(found)
    assert notice["log"] == notice["other_log"] == str(p2) and notice["seat"] == 1
    assert "the same file given twice" in notice["detail"]
    assert found["verdict"]["rounds"] == alone["verdict"]["rounds"]


def test_two_logs_of_one_member_that_differ_are_both_read(
    logs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A damaged copy is no clean copy: both are read, and the damage keeps its finding."""
    p1, p2 = logs
    damaged = bytearray(p1.read_bytes())
    damaged[len(damaged) // 2] ^= 0x40
    bad = tmp_path / "bad.log"
    bad.write_bytes(bytes(damaged))
    status, text, found = _audit(capsys, p1, bad, p2)
    assert status == 1, text
    (notice,) = _same_member(found)
    assert {notice["log"], notice["other_log"]} == {str(p1), str(bad)}
    assert "both are read" in notice["detail"] and notice["severity"] == "notice"
    assert any(f["kind"] == "log_damage" and f["log"] == str(bad) for f in found["findings"])
    assert all("copy_of" not in entry for entry in found["verdict"]["logs"])


def test_a_copy_of_another_member_or_game_is_no_copy(
    logs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cut of one member's log beside the other member's log: no ``same_member``, and the
    cut's own gap stays an error (it is that member's only log)."""
    p1, p2 = logs
    old = tmp_path / "old.log"
    old.write_bytes(p1.read_bytes()[:30000])
    status, _, found = _audit(capsys, old, p2)
    assert status == 1
    assert not _same_member(found)
    assert any(f["kind"] == "gap" and f["log"] == str(old) for f in found["findings"])


def test_two_logs_of_one_member_with_two_versions_of_its_event_prove_its_fork(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its log and another log of it with one of its events re-signed (its own key, its feed
    signed again after it): both are read, and the two versions are its ``equivocation``."""
    game = played(players=2, seed=3)
    forged = game.copy()
    event = retimed_below_what_it_saw(game, forged, seat=1)
    honest, other = game.files()[1], game.files()[0]
    paths = [tmp_path / "p2.log", tmp_path / "p2-other.log", tmp_path / "p1.log"]
    for path, data in zip(paths, (honest, game.files(forged)[1], other), strict=True):
        path.write_bytes(data)
    status, text, found = _audit(capsys, *paths)
    assert status == 1, text
    (notice,) = _same_member(found)
    assert {notice["log"], notice["other_log"]} == {str(paths[0]), str(paths[1])}
    assert notice["seat"] == 1 and "they differ at record" in notice["detail"]
    forks = [f for f in found["findings"] if f["kind"] == "equivocation"]
    assert forks and all(f["seat"] == 1 for f in forks)
    assert any(f["seq"] == event.seq for f in forks)


def test_of_several_copies_each_names_the_longest(
    logs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p1, p2 = logs
    short, mid = tmp_path / "short.log", tmp_path / "mid.log"
    short.write_bytes(p1.read_bytes()[:4096])
    mid.write_bytes(p1.read_bytes()[:30000])
    status, _, found = _audit(capsys, short, mid, p2, p1)
    assert status == 0
    notices = _same_member(found)
    assert [(n["log"], n["other_log"]) for n in notices] == [
        (str(short), str(p1)),
        (str(mid), str(p1)),
    ]
    listed = {entry["name"]: entry.get("copy_of") for entry in found["verdict"]["logs"]}
    assert listed == {str(short): str(p1), str(mid): str(p1), str(p2): None, str(p1): None}
