"""A player's log resumed on two machines at once, on real nodes in a lab of network namespaces
(docs/protocol.md §9.6, *two copies resumed at once*).

Bob's node (host 1) binds every interface, so a copy of its log can be resumed on another
machine (host 2) under the same endpoint; it is killed once cards are in the lake, its log
copied to host 2, and both copies resumed at once: host 2's and host 1's (the first machine
back). Ann sends to host 1's address, so host 2's copy hears nobody; the player lock is per
namespace, a machine to the nodes, so nothing local stops it. Before session 30 a node restored
from a log holding more than its join signed at once: the copy's bot played under seqs host 1's
signed too, a fork proven against an honest Bob. Now it signs nothing past its head before a
member's word, and stops in one line (status 5) at ``--drop-after``; Ann and Bob end alike.
Needs root and iproute2 (skipped with the reason where namespaces cannot be made).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_results import assert_audit_valid

from cli.keyfile import write_key
from p2p_nertz.logfile import RecordKind, read_log
from p2p_nertz.protocol.evidence import PROOF_NOTE
from p2p_nertz.testing.games import bot_game
from p2p_nertz.testing.netns import Lab, unavailable

_WHY = unavailable()
pytestmark = [
    pytest.mark.netns,
    pytest.mark.slow,
    pytest.mark.skipif(_WHY is not None, reason=f"no network namespaces here: {_WHY}"),
]

PORT = 7702
TIMERS = ["--suspect-after", "3", "--drop-after", "20"]  # (a loaded machine restarts slowly)
WAIT = 150.0  # only a hang waits this long: every wait ends on what it waits for


def _run(lab: Lab, host: int, tmp: Path, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
    with (tmp / f"{name}.out").open("wb") as out, (tmp / f"{name}.err").open("wb") as err:
        return lab.popen(
            host,
            [sys.executable, "-m", "cli", *argv],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )


def _events(tmp: Path, name: str, kind: str) -> list[dict[str, Any]]:
    lines = (tmp / f"{name}.out").read_text(errors="replace").splitlines()
    found = [json.loads(line) for line in lines if line.startswith("{")]
    return [e for e in found if e.get("event") == kind]


def _own(log: Path) -> list[bytes]:
    with read_log(log) as reader:
        return [r.data for r in reader if r.kind is RecordKind.SENT_EVENT]


def _says(tmp: Path, name: str) -> str:
    return f"{name}: {(tmp / f'{name}.out').read_text()[-600:]}{(tmp / f'{name}.err').read_text()}"


def test_lan_a_copy_of_a_log_resumed_on_a_second_machine_stops_unheard_without_forking(
    tmp_path: Path,
) -> None:
    identities, spec = bot_game(b"lan-twin-copies", 2, 30)
    (tmp_path / "game.spec").write_bytes(spec.to_wire())
    with Lab(3) as lab:
        addresses = [f"tcp://{lab.address(host)}:{PORT}" for host in (0, 1)]
        binds = [addresses[0], f"tcp://0.0.0.0:{PORT}"]  # (Bob: every interface)
        logs = [tmp_path / f"p{seat}.log" for seat in (0, 1)]
        procs = []
        for seat, identity in enumerate(identities):
            write_key(tmp_path / f"p{seat}.key", identity)
            argv = [
                "node", "--key", str(tmp_path / f"p{seat}.key"),
                "--spec", str(tmp_path / "game.spec"), "--bind", binds[seat],
                "--peer", f"{1 - seat}={addresses[1 - seat]}", "--log", str(logs[seat]),
                "--json", "--progress", "--speed", "10", *TIMERS,
            ]  # fmt: skip
            procs.append(_run(lab, seat, tmp_path, f"p{seat}", argv))
        deadline = time.monotonic() + WAIT
        while len(_events(tmp_path, "p0", "lake")) < 3:  # (cards in the lake: Bob signed)
            assert all(p.poll() is None for p in procs), _says(tmp_path, "p0") + _says(
                tmp_path, "p1"
            )
            assert time.monotonic() < deadline, _says(tmp_path, "p0")
            time.sleep(0.05)
        procs[1].kill()  # SIGKILL: the machine dies
        procs[1].wait()
        copy = tmp_path / "copy" / logs[1].name
        copy.parent.mkdir()
        shutil.copy(logs[1], copy)
        copied = _own(copy)
        resume = ["resume", "--key", str(tmp_path / "p1.key"), "--bot", "greedy", "--json"]
        twin = _run(lab, 2, tmp_path, "copy", [*resume, *TIMERS, str(copy)])
        procs[1] = _run(lab, 1, tmp_path, "p1-again", [*resume, *TIMERS, str(logs[1])])
        assert twin.wait(timeout=WAIT) == 5, _says(tmp_path, "copy")
        (line,) = (tmp_path / "copy.err").read_text().strip().splitlines()
        assert "heard nobody at this table in " in line and "signed nothing new" in line, line
        assert _own(copy) == copied  # it signed nothing
        for proc, name in zip(procs, ["p0", "p1-again"], strict=True):
            assert proc.wait(timeout=WAIT) == 0, _says(tmp_path, name)
        finals = [_events(tmp_path, name, "final")[-1] for name in ("p0", "p1-again")]
        assert all(f["over"] and not f["dropped"] for f in finals), finals
        assert finals[0]["digest"] == finals[1]["digest"]
        assert len(_own(logs[1])) > len(copied)  # (Bob played on, on the first machine)
    with read_log(logs[0]) as reader:
        assert not [r for r in reader if r.kind is RecordKind.NOTE and r.name == PROOF_NOTE]
    assert_audit_valid([*logs, copy])
