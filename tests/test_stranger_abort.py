"""A stranger could abort a busy node's or lobby host's process through libzmq 4.3.5.

Anyone who can reach the port needed no key for this. Its connection speaks ZMTP 3.0 with
the NULL mechanism, as the lobby's sockets do (and the mesh's did), sends messages with a ZMTP
PING after each, and fills the ROUTER's pipe for that connection to its receive high-water mark
while the process's own loop is busy (zmq's I/O thread, which reads the connection, runs on).
zmq then stops reading that connection, a PING among the bytes it already holds. The stranger
resets the connection (``SO_LINGER`` 0, a TCP RST); zmq marks the stopped engine broken. When
the loop reads the pipe again, zmq restarts the connection's input, decodes the PING still held
and answers it on the broken connection: "Assertion failed: !_io_error
(src/stream_engine_base.cpp:310)", and the process aborts (SIGABRT). The path is libzmq
#4841's (docs/protocol.md §4.2 "Sizing the ROUTER's high-water mark"); no SIGSTOP is needed,
only a loop that does not read for as long as the stranger takes to fill the pipe.

Each test runs the project's own socket (the mesh's ROUTER, a real :class:`LobbyHost`) in a
real process over tcp://127.0.0.1, the stranger a plain TCP socket in the test process. They
synchronise on the process (a line on its stdin ends the busy spell) and on the stranger's
socket (it stops taking bytes once zmq stops reading), never on sleeps.

The mesh's ROUTER is now a CURVE server admitting only the roster's keys
(:mod:`p2p_nertz.runtime.gate`): the stranger is cut off at its greeting, none of its bytes is
decoded, and the node lives (its test failed before, with the abort).

The spectator's port (``nertz watch``) is a CURVE server admitting only the game's members'
keys since session 23 (:mod:`p2p_nertz.runtime.watchport`): the keyless stranger is cut off at
its greeting, a stranger with a key of its own at the ZAP reply, and the spectator lives and
still takes a member's pushes (main's NULL port aborted under the same attack).

A member passes both CURVE gates, so the members' cases (session 25) speak CURVE with a
member's key (:mod:`curve_member`): 1-byte messages and TTL-less PINGs, the densest flood. The
node and the spectator live only where libzmq has its drafts and their ROUTERs read 32 bytes
at a time (:mod:`p2p_nertz.runtime.inbatch`); without drafts these cases skip, saying why.

The lobby host speaks no ZMTP since session 22 (docs/lobby.md §3, its own stream on plain TCP):
its case sends the same attack in the lobby's stream (frames and, for good measure, ZMTP's
PING bytes inside them), and ZMTP itself, which the host refuses at the preamble; the host
seats a guest after both.
"""

from __future__ import annotations

import functools
import os
import select
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import zmq
from stranger_helpers import (
    GREETING,
    PING,
    READY,
    assert_seated_and_lived,
    flood_the_lobby_then_reset,
    flood_then_reset,
    seat_a_guest,
    zmtp_stranger_floods_and_resets,
)

from p2p_nertz.lobby.framing import frame
from p2p_nertz.runtime.inbatch import small_batch_available
from p2p_nertz.testing.said import first_line, reap

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(90),
    pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="needs SIGUSR1 (POSIX)"),
]

#: The node's side: the mesh's own ROUTER (and its ZAP handler) bound, for a game of two,
#: its endpoint printed; the process busy (reading nothing, zmq's I/O thread running on)
#: until a line on stdin; then it reads until quiet, prints how many messages it read and
#: exits 0.
NODE = """
import sys
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.runtime.mesh import Mesh
me, other = Identity.generate(bytes(32)), Identity.generate(bytes([1]) * 32)
mesh = Mesh(me, [me.peer_id, other.peer_id])
print(mesh.bind(), flush=True)
sys.stdin.readline()
router = mesh.router._sock
read = 0
while router.poll(2000):
    router.recv_multipart()
    read += 1
print(read, flush=True)
mesh.close()
"""

#: The spectator's side: its port (``nertz watch``'s own socket and ZAP handler) bound for a
#: game of two, its endpoint printed; the process busy until a line on stdin; then it reads
#: until quiet, prints the messages it read (in hex) and the refusals, and exits 0.
SPECTATOR = """
import sys
import zmq
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.watchport import WatchPort
ann, bob, spy = (Identity.generate(bytes([i]) * 32) for i in (1, 2, 3))
spec = GameSpec.create([(ann.peer_id, "Ann"), (bob.peer_id, "Bob")], Rules(), b"s" * 16)
ctx = zmq.Context()
port = WatchPort(ctx, spy, spec, "tcp://127.0.0.1:0")
print(port.bind().endpoint, flush=True)
sys.stdin.readline()
router = port.router._sock
read = []
while router.poll(2000):
    read.append(router.recv_multipart()[1].hex())
print(" ".join(read) or "-", flush=True)
print(" ".join(sorted(port.refusals())), flush=True)
port.close()
ctx.term()
"""

#: The lobby host: a lobby for two that starts itself once a guest sits; prints its lobby
#: endpoint, then the started game's players, and exits. SIGUSR1 makes its loop busy (reading
#: nothing) until a line on stdin.
HOST = """
import signal, sys
import trio
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.lobby import LobbyHost

async def main():
    host = LobbyHost(
        Identity.generate(derive_seed(b"test-stranger-abort", 0)), "Ann",
        Rules(target=None, rounds=1), address="127.0.0.1", game_port=9, auto_start=2,
    )
    async with trio.open_nursery() as nursery:
        print(await nursery.start(host.serve), flush=True)
        session = await host.wait_started()
        print(" ".join(sorted(m.name for m in session.spec.members)), flush=True)
        await trio.to_thread.run_sync(sys.stdin.read)  # serving on until the guest has it
        nursery.cancel_scope.cancel()

signal.signal(signal.SIGUSR1, lambda *_: (print("busy", flush=True), sys.stdin.readline()))
trio.run(main)
"""


def test_a_busy_nodes_mesh_router_survives_a_strangers_flood_of_pings_and_reset() -> None:
    node = subprocess.Popen(
        [sys.executable, "-c", NODE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert node.stdout is not None
        endpoint = first_line(node, "the node")
        assert endpoint.startswith("tcp://127.0.0.1:"), endpoint
        zmtp_stranger_floods_and_resets(endpoint)  # (it met the node's greeting: it connected)
        out, err = node.communicate("\n", timeout=60)  # the node reads again
    finally:
        reap(node, "the node")
    assert node.returncode == 0, err  # libzmq's abort: -SIGABRT and its assertion
    assert int(out.split()[-1]) == 0  # no key: not one of its messages reached the node
    assert "Traceback" not in err


ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def small_batch_python() -> str | None:
    """An interpreter whose libzmq reads a few bytes at a time, for the members' cases: this
    one if its pyzmq has libzmq's drafts, else the drafts build CI puts beside the suite's venv
    (`.venv-drafts`, by scripts/install_zmq_drafts.sh; or ``$NERTZ_DRAFTS_PYTHON``), so that
    the suite itself runs on pyzmq's wheel, as a person's ``pip install`` gets, and the
    protection is tested all the same. ``None`` if there is neither."""
    if small_batch_available():
        return sys.executable
    other = os.environ.get("NERTZ_DRAFTS_PYTHON") or str(ROOT / ".venv-drafts" / "bin" / "python")
    if not Path(other).exists():
        return None
    probe = "import sys; from p2p_nertz.runtime.inbatch import small_batch_available as s\n"
    probe += "sys.exit(not s())"
    ran = subprocess.run(
        [other, "-c", probe], check=False, cwd=ROOT, capture_output=True, timeout=60
    )
    return other if ran.returncode == 0 else None


def victim_python() -> str:
    """:func:`small_batch_python`, or a skip saying why there is none. (A skip, not a strict
    xfail: without drafts the victim's abort is known, and a run where load kept the race from
    landing would fail the suite.)"""
    found = small_batch_python()
    if found is None:
        pytest.skip(
            "no libzmq with its draft API here (pyzmq's wheel, and no .venv-drafts): "
            "ZMQ_IN_BATCH_SIZE cannot be set, and any member can abort another member's node "
            "or a spectator (docs/protocol.md §13); scripts/install_zmq_drafts.sh builds a "
            "pyzmq with it (CI does, in .venv-drafts)"
        )
    return found


def _member_attacks(script: str, member: Any, target: Any) -> str:
    """Run ``script`` (it binds, prints its endpoint, reads once a line comes) in
    :func:`victim_python`; ``member`` floods it past the CURVE gate as ``target`` expects, and
    resets; it must live, and read again. What it wrote on stdout."""
    from curve_member import member_floods_and_resets

    victim = subprocess.Popen(
        [victim_python(), "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert victim.stdout is not None
        endpoint = first_line(victim, "the victim")
        assert endpoint.startswith("tcp://127.0.0.1:"), endpoint
        sent = member_floods_and_resets(endpoint, member, target)
        out, err = victim.communicate("\n", timeout=60)  # it reads again
    finally:
        reap(victim, "the victim")
    assert sent > 0
    assert victim.returncode == 0, err  # libzmq's abort: -SIGABRT and its assertion
    assert "Traceback" not in err
    return out


def test_a_busy_nodes_mesh_router_survives_a_members_flood_of_pings_and_reset() -> None:
    from p2p_nertz.protocol.identity import Identity

    me, other = Identity.generate(bytes(32)), Identity.generate(bytes([1]) * 32)  # (NODE's)
    out = _member_attacks(NODE, other, me.peer_id)
    assert int(out.split()[-1]) > 0  # a member's: its messages reached the node, up to the mark


def _stranger_floods_zmtp_and_resets(endpoint: str) -> int:
    """The attack as :func:`zmtp_stranger_floods_and_resets` makes it (ZMTP's greeting, READY,
    messages and PINGs until the connection stops taking bytes, then a reset), but taking the
    other side's greeting only if one comes within 2 s: a busy process that is not ZeroMQ's
    sends none (zmq's I/O thread, on main, does, and the host aborted). Return the bytes
    sent."""
    host, port = endpoint.removeprefix("tcp://").rsplit(":", 1)
    chunk = (bytes([0x00, 100]) + b"x" * 100 + PING) * 100
    sock = socket.create_connection((host, int(port)), timeout=30)
    try:
        sock.sendall(GREETING + READY)
        if select.select([sock], [], [], 2.0)[0]:
            sock.recv(10)
    except BaseException:
        sock.close()
        raise
    return flood_then_reset(sock, chunk)


def test_a_busy_lobby_host_survives_a_strangers_flood_of_pings_and_reset_and_seats_a_guest() -> (
    None
):
    host = subprocess.Popen(
        [sys.executable, "-c", HOST],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert host.stdout is not None and host.stdin is not None
        endpoint = first_line(host, "the host")
        assert endpoint.startswith("tcp://127.0.0.1:"), endpoint
        host.send_signal(signal.SIGUSR1)
        assert first_line(host, "the host, busy") == "busy"  # (its next: none before it)
        sent = _stranger_floods_zmtp_and_resets(endpoint)
        # The same in the lobby's own stream: frames of 100 bytes and a PING each.
        sent += flood_the_lobby_then_reset(endpoint, (frame(b"x" * 100) + frame(PING)) * 100)
        host.stdin.write("\n")  # the host's loop reads again
        host.stdin.flush()
        session, refused, out, err = seat_a_guest(host, endpoint, b"test-stranger-abort", 10.0)
    finally:
        reap(host, "the host")
    assert sent > 0
    assert_seated_and_lived(host, session, refused, out, err)


def test_a_busy_spectators_port_survives_strangers_and_still_takes_a_members_push() -> None:
    from p2p_nertz.protocol.identity import Identity
    from p2p_nertz.runtime.gate import client_keys, server_keys
    from p2p_nertz.runtime.mesh import routing_id
    from p2p_nertz.runtime.watchport import NO_CURVE, NOT_THE_TABLE

    ann, spy, stranger = (Identity.generate(bytes([i]) * 32) for i in (1, 3, 9))
    spectator = subprocess.Popen(
        [sys.executable, "-c", SPECTATOR],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        assert spectator.stdout is not None
        endpoint = first_line(spectator, "the spectator")
        assert endpoint.startswith("tcp://127.0.0.1:"), endpoint
        zmtp_stranger_floods_and_resets(endpoint)  # no key: cut off at its greeting
        # A stranger with a key of its own (and the spectator's, which it learnt): it floods,
        # but its connection is refused at the ZAP reply, before any frame is decoded.
        keyed = ctx.socket(zmq.DEALER)
        keyed.set(zmq.LINGER, 0)
        client_keys(server_keys(stranger), spy.peer_id).apply(keyed)
        monitor = keyed.get_monitor_socket(zmq.EVENT_HANDSHAKE_FAILED_AUTH)
        keyed.connect(endpoint)
        # It floods as much as its socket takes: the refusal can come (under load) before the
        # thousandth send, and a socket refused and reconnecting takes fewer than its high-water
        # mark (783 of 1,000 once here), so a send can meet zmq.Again: the flood ends there.
        sent = 0
        for _ in range(1000):
            try:
                keyed.send(b"x" * 100, zmq.NOBLOCK)
            except zmq.Again:
                break
            sent += 1
        assert sent > 0, "the keyed stranger's socket took none of its flood"
        assert monitor.poll(20_000), "the keyed stranger was not refused in 20 s"
        # Ann, a member, pushes one message while the spectator is still busy.
        member = ctx.socket(zmq.DEALER)
        member.set(zmq.LINGER, 0)
        member.set(zmq.ROUTING_ID, routing_id(ann.peer_id))
        client_keys(server_keys(ann), spy.peer_id).apply(member)
        done = member.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
        member.connect(endpoint)
        member.send(b"an event of Ann's")
        assert done.poll(20_000), "the member was not admitted in 20 s"
        out, err = spectator.communicate("\n", timeout=60)  # the spectator reads again
        for sock in (monitor, keyed, done, member):
            sock.close(linger=0)
    finally:
        ctx.destroy(linger=0)
        reap(spectator, "the spectator")
    assert spectator.returncode == 0, err  # libzmq's abort: -SIGABRT and its assertion
    read, refused = out.splitlines()[-2:]
    assert read.split() == [b"an event of Ann's".hex()]  # the member's, nothing else
    assert {NO_CURVE, NOT_THE_TABLE} <= set(refused.split())
    assert "Traceback" not in err


def test_a_busy_spectators_port_survives_a_members_flood_of_pings_and_reset() -> None:
    from p2p_nertz.protocol.identity import Identity

    ann, spy = (Identity.generate(bytes([i]) * 32) for i in (1, 3))  # (SPECTATOR's)
    out = _member_attacks(SPECTATOR, ann, spy.peer_id)  # a member: admitted
    read = out.splitlines()[-2].split()
    assert read and set(read) == {b"x".hex()}  # the member's 1-byte messages, up to the mark
