"""The LAN benchmark (scripts/bench_lan.py) runs its smallest configuration and prints its table.

No timing is asserted (figures depend on the machine); the tests check that the quick run of two
peers completes, that every claim it timed was complete, and that the table and verdicts are
printed. The lab run (network namespaces, and Pyre inside them) is skipped with the reason where
namespaces cannot be made or the ``bench`` extra (zeromq-pyre) is not installed.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from p2p_nertz import build
from p2p_nertz.testing.netns import unavailable

pytestmark = [pytest.mark.slow, pytest.mark.timeout(540)]

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "bench_lan.py"


def run_bench(*args: str) -> str:
    """Run the benchmark with ``args``; its standard output (it must exit 0)."""
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--peers", "2", "--seconds", "5", *args],
        capture_output=True,
        text=True,
        timeout=480,  # (a hang bound: ~70 s at a load of 25, over 180 s at 40-50, session 41)
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def table_row(out: str, where: str) -> list[str]:
    """The cells of the table row for two peers placed ``where``."""
    rows = [line.split() for line in out.splitlines() if re.match(rf"{where}\s+2\s", line)]
    assert len(rows) == 1, out
    return rows[0]


def test_quick_loopback_run_prints_the_table() -> None:
    out = run_bench("--no-lab", "--tasks", "--kinds")
    assert "floor = bare pyzmq DEALER→ROUTER round trip" in out
    # Which core every peer ran, as each peer reported it (session 43): the one this test
    # imports, from the same folder, the same in the benchmark's process and in every peer.
    ours = f"{build.describe()} from {Path(build.__file__).resolve().parent}"
    assert f"the core {ours}, in this process and every peer" in out, out
    assert re.search(r"^where\s+peers\s+floor\s+deliv med", out, re.MULTILINE), out
    row = table_row(out, "loopback")
    # Some claims were timed: the delivery and finality medians are numbers, not "-".
    assert re.fullmatch(r"[\d,]+", row[3]) and re.fullmatch(r"[\d,]+", row[6]), row
    assert re.search(r"loopback 2: \d+ claims, .* 0 incomplete", out), out
    assert "skipped: lab games and lab floor: --no-lab" in out
    assert re.search(r"\[(MET|MISSED)\] peak RSS per peer process", out), out
    # Issue 18: CPU per final claim beside its floor, the paper figure for a core per peer,
    # and finality at 2 peers against the bare trio+pyzmq round trip measured in the run.
    assert "CPU per final claim, every peer process summed" in out, out
    assert re.search(r"bare pyzmq send\+receive [\d,]+ µs of CPU per message", out), out
    assert re.search(r"^  2 peers: t = \d+ µs; delivery [\d,]+ µs, finality", out, re.M), out
    # The bots' thinking is measured, and the figure less it printed beside (what peers
    # played by people spend), with the paper figure of such peers on a core each.
    row_cpu = re.search(
        r"^  loopback +2 +[\d.]+ +([\d,]+) +(?:[\d.]+ +){3}[\d,]+ +[\d.]+× +([\d,]+) +([\d,]+) ",
        out,
        re.M,
    )
    assert row_cpu is not None, out
    cpu, thinking, person = (int(cell.replace(",", "")) for cell in row_cpu.groups())
    assert 0 < thinking < cpu and abs(cpu - thinking - person) <= 1, row_cpu.group(0)
    paper = r"^    CPU per final claim, peers played by people .* = [\d,]+ µs, [\d.]+× the floor"
    assert re.search(paper, out, re.M), out
    # The receive loop's bursts in play: every message fed is in one turn and one input,
    # and a turn feeds one input or more.
    bursts = re.search(
        r"^    bursts in play: ([\d,]+) messages fed in ([\d,]+) receive turns, ([\d.]+) a turn, "
        r"([\d.]+) an input to the core \(([\d.]+) inputs a turn",
        out,
        re.M,
    )
    assert bursts is not None, out
    fed, turns = (int(cell.replace(",", "")) for cell in bursts.groups()[:2])
    per_turn, per_input, inputs_per_turn = (float(cell) for cell in bursts.groups()[2:])
    assert 0 < turns <= fed and per_turn >= per_input >= 1 and inputs_per_turn >= 1, bursts[0]
    assert abs(per_turn - fed / turns) < 0.01, bursts[0]
    # A claim's path, both legs (docs/latency.md, session 27): its arrival at the receiver's
    # ROUTER split at trio's loop coming out of its I/O wait, and the way back, each part a
    # figure, over some of the claims timed.
    assert re.search(r"at ROUTER [\d,]+ \(trio's loop out of its I/O wait [\d,]+\)", out), out
    back = re.search(
        r"^    return leg \(([\d,]+) claims\): at the receiver, delivered → the core's feed done "
        r"\(fold, finality, answer signed\) [\d,]+ \([\d,]+ of CPU from the lock\), → answer "
        r"to the mesh [\d,]+ \(→ its receive loop waiting again [\d,]+\); answer → at the "
        r"author's ROUTER [\d,]+ \(trio's loop out of its I/O wait [\d,]+\), lock wait [\d,]+, "
        r"→ final [\d,]+ \([\d,]+ of CPU from the lock\)$",
        out,
        re.M,
    )
    assert back is not None, out
    timed = re.search(r"loopback 2: (\d+) claims", out)
    assert timed is not None and 0 < int(back[1]) <= int(timed[1]), back[0]
    # --tasks: the play phase's CPU by task, the receive loop among them, and the rest.
    assert "CPU in play by task, loopback, 2 peers" in out, out
    assert re.search(r"^  _receive_loop +[\d.]+%", out, re.M), out
    assert re.search(r"^  \(other threads: zmq I/O\) +[\d.]+%", out, re.M), out
    assert re.search(r"\[(MET|MISSED)\] median finality at 2 peers \(loopback\)", out), out
    # --kinds: per final claim by kind, sent / signed / verified; at 2 peers each message
    # goes to one member, and every claim is signed once, sent once and verified once.
    kinds = re.search(r"^  loopback +2((?: +[\d.]+/[\d.]+/[\d.]+){6})$", out, re.M)
    assert kinds is not None, out
    claim, *_ = (tuple(map(float, cell.split("/"))) for cell in kinds.group(1).split())
    assert claim[0] > 0 and abs(claim[0] - claim[1]) < 0.1, kinds.group(0)


def test_quick_shuffle_run_prints_turn_ups_beside_claims() -> None:
    # Issue 19 on real sockets: a shuffle game's turn-ups timed beside its claims' finality,
    # each other member's share counted from the first of its deck_reveal beat and its
    # deck_shares event (and from the events alone), where a turn-up's time goes, the
    # deck_wants sent, and the share work's CPU per turn-up per peer.
    out = run_bench("--deal", "shuffle", "--seconds", "10")
    header = r"^ peers\s+logs\s+turn-ups\s+beat\|event @mover med\s+p99\s+@all med\s+event @mover"
    assert re.search(header, out, re.MULTILINE), out
    rows = [line.split() for line in out.splitlines() if re.match(r"\s+2\s+disk\s", line)]
    assert len(rows) == 1, out
    row = rows[0]
    # Turn-ups and claims were timed: counts, medians in ms, ratios and the CPU are numbers
    # (the events-only figures may be nan: a share may come by its beat alone).
    number, maybe = r"\d+(\.\d+)?", r"\d+(\.\d+)?|nan"
    assert int(row[2]) > 0 and int(row[7]) > 0, row
    for cell in (row[3], row[5], row[8], row[10], row[12]):
        assert re.fullmatch(number, cell), row
    for cell in (row[6], row[11]):
        assert re.fullmatch(maybe, cell), row
    beat = r"by the beat \(median, ms, over \d+ move x member\): sent -> the other's deck_reveal"
    assert re.search(beat, out), out
    assert re.search(r"deck_want: \d+ shares asked for .*, \d+ sent back in answers", out), out


@pytest.mark.netns
def test_quick_lab_run_with_pyre() -> None:
    why = unavailable()
    if why is not None:
        pytest.skip(f"no network namespaces here: {why}")
    if importlib.util.find_spec("pyre") is None:
        pytest.skip("zeromq-pyre is not installed (the bench extra: pip install -e '.[bench]')")
    out = run_bench("--no-loopback")
    assert "lab bridge (two namespaces), back to back" in out, out
    row = table_row(out, "lab")
    assert re.fullmatch(r"[\d,]+", row[3]), row  # our delivery median
    assert re.fullmatch(r"[\d,]+", row[9]), row  # Pyre's delivery median
    assert re.search(r"pyre 2: \d+ shouts timed, 0 incomplete", out), out
    assert re.search(r"\[(MET|MISSED)\] claim delivery beats Pyre SHOUT delivery", out), out
