"""``scripts/scan_real_faults.py``'s grid at two players (session 27): the 1|1 split both ways
and one way, each direction in turn, and two members killed, together or in turn."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import scan_real_faults as scan  # (a script, beside chaos.py)


def test_scan_two_players_split_both_ways_and_each_way_at_every_length() -> None:
    lengths = ["short", "drop", "2d", "past", "long"]
    cells = scan.partition_grid([2], ["one", "link", "oneway"], lengths, ["play", "end"])
    assert {c.name.split()[1] for c in cells} == {"one", "oneway"}  # (link: the table, at two)
    assert len(cells) == 2 * len(lengths) * 2
    ways = {(f.victim, f.other) for c in cells for f in c.plan.faults if f.kind == "cut-oneway"}
    assert ways == {(0, 1), (1, 0)}
    longest = max(f.length for c in cells for f in c.plan.faults)
    assert longest == 7 * scan.DROP + 4  # (60 s: far past an abandon and its wait)


def test_scan_two_members_killed_together_or_in_turn_each_log_cut_alike() -> None:
    cells = scan.torn_grid([2], ["both:kill-torn", "turn:frame40"], ["mid", "end"])
    together, turn = cells[0].plan.faults, cells[2].plan.faults
    assert [f.kind for f in together] == ["kill-torn", "kill-torn"]
    assert {f.victim for f in together} == {0, 1} and together[1].torn > 0
    # Both down at once: the second killed while the first is dead, resumed after it.
    assert 0 <= together[1].during < together[0].length
    # In turn: the second at a later card, once the first has been resumed.
    assert [f.kind for f in turn] == ["kill-frame", "kill-frame"]
    assert turn[1].during < 0 and turn[1].trigger == turn[0].trigger + 10
    assert turn[1].keep == turn[0].keep == 0.4
    assert cells[3].plan.faults[1].trigger == -1  # (at round 1's end: at once)


def test_scan_refuses_an_unknown_mode_or_cut(capsys: pytest.CaptureFixture[str]) -> None:
    for bad, said in (("twice:kill", "unknown: twice:kill"), ("both:nothing", "unknown: nothing")):
        with pytest.raises(SystemExit):
            scan.main(["torn", "--players", "2", "--cuts", bad, "--print"])
        assert said in capsys.readouterr().err


def test_scan_degraded_plays_every_shape_at_every_strength_and_size() -> None:
    """Session 31's degraded network: each shape at each of its strengths (a reset and a
    rolling partition at each length instead), the rolling partition from three players only,
    every member's link where the shape says ``all``."""
    cells = scan.degraded_grid([2, 3], list(scan.DEGRADED_SHAPES))
    faults = {c.name: c.plan.faults[0] for c in cells}
    assert not any(name.startswith("2p roll") for name in faults)
    for n in (2, 3):
        lossy = [f for name, f in faults.items() if name.startswith(f"{n}p lossy-all")]
        assert sorted(f.strength for f in lossy) == sorted(scan.chaos.LOSSES)
        assert all(f.everyone and f.kind == "lossy" for f in lossy)
        slow = [f for name, f in faults.items() if name.startswith(f"{n}p slow-one")]
        assert max(f.strength for f in slow) > scan.SUSPECT  # (one delay over suspicion)
        assert not any(f.everyone for f in slow)
        resets = [f.length for name, f in faults.items() if name.startswith(f"{n}p reset")]
        assert min(resets) < scan.SUSPECT and max(resets) > scan.DROP  # (straddling both)
    rolls = [f for name, f in faults.items() if name.startswith("3p roll")]
    assert [f.length for f in rolls] == sorted(f.length for f in rolls)  # short .. over
    assert rolls[-1].length / 2 > scan.DROP  # (each of the two steps past the drop)
    assert all(0 <= f.victim < c.plan.players for c in cells for f in c.plan.faults)
