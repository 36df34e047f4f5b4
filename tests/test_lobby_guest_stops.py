"""A lobby guest stopped (SIGSTOP, a laptop's lid) before the host's first answer sits at the
table when woken (docs/lobby.md §8).

Session 35 mended the guest stopped after the host's first answer (it reads the host before it
calls it silent, protocol/listening.py); the guest stopped before it still gave up on waking
("no answer from a lobby … in 3 s"): its patience for the first answer ran on the wall clock
alone, and on waking it judged before it read the answer waiting in its socket. So did the
listener for beacons (``join --discover``, ``nertz games``): woken past its ``--timeout`` it
read one datagram and stopped listening, and a table whose beacons waited behind other traffic
was not found.

Real ``nertz host`` and ``nertz bot`` processes on 127.0.0.1 (beacons sent to 127.0.0.1, not
broadcast). The host is stopped while the guest connects (or binds its beacon listener), so
that no answer can come before the guest itself is stopped; the host is then continued, and the
guest woken after a stop shorter than its patience (3 s), past it, and past the host's
``LINK_IDLE`` (10 s: the host has closed the connection the guest never spoke on, and the
guest connects again). The table forms and the game starts.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_helpers import (
    cli_popen,
    held_udp_port,
    json_lines_until,
    lobby_where,
    make_key,
    stop_all,
)

from p2p_nertz.testing.said import READY_BOUND, reap
from p2p_nertz.testing.stalls import describe

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(120),
    pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs SIGSTOP/SIGCONT (POSIX)"),
    pytest.mark.skipif(
        not Path("/proc/net/tcp").exists(),
        reason="sees the guest's sockets in Linux's /proc/net/tcp and /proc/net/udp",
    ),
]

#: The guest's patience (``--timeout``), seconds: short, so that a stop passes it.
PATIENCE = 3.0


def _spawn(tmp_path: Path, name: str, *argv: str) -> subprocess.Popen[str]:
    home = tmp_path / name
    make_key(home / "key")
    return cli_popen(
        [sys.executable, "-m", "cli", *argv, "--name", name, "--json",
         "--log-dir", str(tmp_path / "logs")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
        env=dict(os.environ, NERTZ_HOME=str(home)),
    )  # fmt: skip


def _rows(table: str) -> Iterator[list[str]]:
    """The rows of ``/proc/net/TABLE`` (IPv4), split into fields, past the header."""
    lines = Path("/proc/net", table).read_text().splitlines()[1:]
    return (line.split() for line in lines)


def _port_of(address: str) -> tuple[str, int]:
    """``0100007F:1F90`` → (``0100007F``, 8080)."""
    ip, port = address.split(":")
    return ip, int(port, 16)


def _wait_for(
    what: Callable[[], bool], proc: subprocess.Popen[str], bound: float = READY_BOUND
) -> None:
    """Until ``what()``, within ``bound`` s (a hang's bound: then what ``proc`` is doing),
    failing if ``proc`` ends first (with what it said)."""
    deadline = time.monotonic() + bound
    while not what():
        assert proc.poll() is None, reap(proc)
        assert time.monotonic() < deadline, f"not within {bound:g} s\n{describe(proc.pid)}"
        time.sleep(0.02)  # (polling a condition of the kernel's, not standing in for one)


def _connected_to(port: int) -> bool:
    """Whether a connection to 127.0.0.1:``port`` is established (the guest's side: the
    stopped host has accepted nothing, its side waits in its backlog)."""
    return any(row[3] == "01" and _port_of(row[2]) == ("0100007F", port) for row in _rows("tcp"))


def _listening_on(port: int) -> bool:
    """Whether a UDP socket is bound to 127.0.0.1:``port`` (the guest's beacon listener; the
    test's hold is bound to 0.0.0.0)."""
    return any(_port_of(row[1]) == ("0100007F", port) for row in _rows("udp"))


def _stop_guest_then_wake_it(
    host: subprocess.Popen[str],
    guest: subprocess.Popen[str],
    stop: float,
    meanwhile: Callable[[], None] = lambda: None,
) -> None:
    """The host is stopped: stop the guest, do ``meanwhile``, continue the host (it answers,
    or beacons, into the stopped guest's sockets), and continue the guest ``stop`` seconds
    later."""
    os.kill(guest.pid, signal.SIGSTOP)
    meanwhile()
    os.kill(host.pid, signal.SIGCONT)
    try:
        time.sleep(stop)  # (the stop itself, not a wait for something)
    finally:
        os.kill(guest.pid, signal.SIGCONT)


def _assert_the_game_starts(host: subprocess.Popen[str], guest: subprocess.Popen[str]) -> None:
    # (The guest first: one that gave up ends, where the host would wait on for a guest.)
    joined = json_lines_until(guest, "start")[-1]
    start = json_lines_until(host, "start")[-1]
    assert sorted(start["players"]) == ["Ann", "Bob"], start
    assert joined["game_id"] == start["game_id"]


def _end(*procs: subprocess.Popen[str]) -> None:
    errs = stop_all(procs)
    assert not [err for err in errs if err and "Traceback" in err], errs


# Shorter than the guest's patience, past it, and past the host's LINK_IDLE (10 s).
@pytest.mark.parametrize("stop", [1.0, 6.0, 12.0])
def test_a_guest_stopped_before_the_hosts_first_answer_sits_when_woken(
    tmp_path: Path, stop: float
) -> None:
    host = _spawn(tmp_path, "Ann", "host", "--bot", "greedy", "--players", "2", "--rounds", "1")
    guest = None
    try:
        where = lobby_where(json_lines_until(host, "lobby")[-1])
        os.kill(host.pid, signal.SIGSTOP)
        guest = _spawn(tmp_path, "Bob", "bot", "--peer", where, "--timeout", f"{PATIENCE:g}")
        _wait_for(lambda: _connected_to(int(where.rsplit(":", 1)[1])), guest)
        _stop_guest_then_wake_it(host, guest, stop)
        _assert_the_game_starts(host, guest)
    finally:
        _end(host, *([guest] if guest is not None else []))


def test_a_guest_stopped_before_the_first_beacon_finds_the_table_when_woken(
    tmp_path: Path,
) -> None:
    with held_udp_port() as beacon_port:
        host = _spawn(
            tmp_path, "Ann", "host", "--bot", "greedy", "--players", "2", "--rounds", "1",
            "--discover", "127.0.0.1", "--beacon-port", str(beacon_port),
        )  # fmt: skip
        guest = None
        try:
            json_lines_until(host, "lobby")
            os.kill(host.pid, signal.SIGSTOP)
            guest = _spawn(
                tmp_path, "Bob", "bot", "--discover", "127.0.0.1",
                "--beacon-port", str(beacon_port), "--timeout", f"{PATIENCE:g}",
            )  # fmt: skip
            _wait_for(lambda: _listening_on(beacon_port), guest)

            def other_traffic() -> None:
                # Something else on the port first (anything on a LAN's beacon port): woken,
                # the listener read it, then stopped listening, the host's beacons unread.
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as other:
                    other.sendto(b"not a beacon", ("127.0.0.1", beacon_port))

            _stop_guest_then_wake_it(host, guest, 6.0, other_traffic)
            found = json_lines_until(guest, "found")[-1]
            assert found["endpoint"].startswith("tcp://127.0.0.1:"), found
            _assert_the_game_starts(host, guest)
        finally:
            _end(host, *([guest] if guest is not None else []))
