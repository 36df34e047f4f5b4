"""``scripts/bench_wakeup.py``: the trio thread's work per message received outside the core,
the adapter's receive loop against a bare trio loop on the same CURVE ROUTER."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import bench_wakeup  # (a script, not a module of the package)

from p2p_nertz.runtime import zmqtrio


def _rows(out: str) -> dict[str, list[float]]:
    """Each loop's row of figures: turns a message, opcodes a message, by part, CPU."""
    rows = {}
    for name in ("bare trio + pyzmq", "the adapter, baseline", "the adapter"):
        match = re.search(rf"^  {re.escape(name)} +([\d., ]+)", out, re.M)
        if match is not None and name not in rows:
            rows[name] = [float(x.replace(",", "")) for x in match.group(1).split()]
    return rows


def test_both_loops_take_every_message_and_their_opcodes_add_up(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        bench_wakeup.main(
            ["--rounds", "2", "--counted", "1", "--messages", "30", "--interval", "1"]
        )
        == 0
    )
    rows = _rows(capsys.readouterr().out)
    assert set(rows) == {"bare trio + pyzmq", "the adapter"}
    for turns, total, trio, adapter, pyzmq, rest, cpu, *_ in rows.values():
        assert 0 < turns <= 1  # (a turn takes one message or more)
        assert total > 0 and cpu > 0
        assert abs(trio + adapter + pyzmq + rest - total) <= 4  # (each part rounded)
    assert rows["bare trio + pyzmq"][3] == 0  # the reference runs nothing of the adapter
    assert rows["the adapter"][3] > 0


def test_a_baseline_adapter_runs_as_a_third_loop(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--rounds", "1", "--counted", "1", "--messages", "10", "--interval", "1"]
    assert bench_wakeup.main([*argv, "--baseline", zmqtrio.__file__]) == 0
    rows = _rows(capsys.readouterr().out)
    assert set(rows) == {"bare trio + pyzmq", "the adapter", "the adapter, baseline"}
    assert rows["the adapter, baseline"][3] > 0  # its own file's functions, counted as the adapter


def test_bad_arguments_are_one_line_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench_wakeup.main(["--rounds", "0"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.startswith("bench_wakeup: ")
