"""``scripts/soak.py`` refuses a flag the chosen mix would not read, in one line.

Session 42's scans asked for ``--liars --late-withdrawals`` and got ``--liars`` alone: the lie
fuzzer reads none of the fault mix's flags (and the fault mix none of the liars'), so the scan
ran, passed and said nothing of the mix asked for."""

from __future__ import annotations

import sys

import pytest

from tests.script_helpers import load_script

#: Each mix's flags (with a value where it takes one) that the other mix does not read.
FAULT_MIX = [
    ["--no-cheats"],
    ["--variants"],
    ["--short"],
    ["--rounds", "2"],
    ["--timers", "default"],
    ["--sleeper-forks"],
    ["--late-withdrawals"],
    ["--deck-cheats", "--deal", "shuffle"],
]
LIARS_ONLY = [["--two-liars"], ["--join"], ["--back", "readmit"], ["--more-lies"]]
LIARS_ONLY += [["--lie", "seq_reuse"]]


def run(monkeypatch: pytest.MonkeyPatch, *argv: str) -> int:
    soak = load_script("soak")
    monkeypatch.setattr(sys, "argv", ["soak.py", "--games", "0", "--workers", "1", *argv])
    try:
        return int(soak.main())
    except SystemExit as stop:
        return int(stop.code or 0)


def last_error(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize(
    "argv",
    [["--liars", *flags] for flags in FAULT_MIX] + [["--shuffle-forks", "--short"]],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_a_fault_mix_flag_with_the_liars_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert run(monkeypatch, *argv) == 2
    assert last_error(capsys) == (
        f"soak.py: error: {argv[1]} plays the soak's fault mix, not --liars (nor --shuffle-forks)"
    )


@pytest.mark.parametrize("flags", LIARS_ONLY, ids=lambda flags: flags[0])
def test_a_liar_flag_without_the_liars_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], flags: list[str]
) -> None:
    assert run(monkeypatch, *flags) == 2
    assert last_error(capsys) == f"soak.py: error: {flags[0]} needs --liars"


@pytest.mark.parametrize(
    "argv",
    [
        ["--liars", "--two-liars", "--back", "readmit", "--lie", "seq_reuse", "--watch"],
        ["--liars", "--deal", "shuffle", "--more-lies", "--join"],
        ["--shuffle-forks", "--two-liars"],
        ["--late-withdrawals", "--rounds", "2", "--no-cheats", "--timers", "default"],
        ["--deal", "shuffle", "--deck-cheats", "--variants", "--short", "--sleeper-forks"],
    ],
)
def test_each_mix_takes_its_own_flags(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert run(monkeypatch, *argv) == 0
    assert "error" not in capsys.readouterr().err
