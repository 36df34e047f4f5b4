"""A member of another transport version is named at the handshake, not waited for
(docs/protocol.md §4.7).

The other member is played by what a peer of transport version 1 (p2p-nertz before session 22,
or an independent peer built to that document) binds: a ZeroMQ ROUTER of the NULL mechanism,
on a real socket. Our side is a real :class:`Mesh`, and a real ``nertz node`` process.
"""

from __future__ import annotations

import logging
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import trio
import zmq
from cli_helpers import cli_run, one_error_line

from cli.args import EXIT_FAILED
from cli.keyfile import write_key
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.guard import RefusalLog
from p2p_nertz.runtime.handshakes import CLOSED_UNANSWERED, TransportVersionError
from p2p_nertz.runtime.mesh import Mesh

pytestmark = pytest.mark.anyio

ANN, BOB = (Identity.generate(derive_seed(b"test-transport-version", n)) for n in range(2))


@contextmanager
def version_one_router() -> Iterator[str]:
    """A ROUTER of the NULL mechanism (transport version 1) on 127.0.0.1; its endpoint."""
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        router = ctx.socket(zmq.ROUTER)
        try:
            port = router.bind_to_random_port("tcp://127.0.0.1")
            yield f"tcp://127.0.0.1:{port}"
        finally:
            router.close(linger=0)
    finally:
        ctx.term()


async def _mesh_stopped_by(endpoint: str) -> TransportVersionError:
    """Ann's real mesh, Bob at ``endpoint``: the one error its outlets stop with."""
    mesh = Mesh(ANN, [ANN.peer_id, BOB.peer_id])
    try:
        mesh.connect({BOB.peer_id: endpoint})
        # The deadline inside: were it passed, its TooSlowError says so, rather than the
        # group of the tasks' Cancelled it would otherwise leave (seen once at load 15).
        with pytest.raises(BaseExceptionGroup) as failed, trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                mesh.serve_outlets(nursery, b"spec")
    finally:
        mesh.close()
    (error,) = failed.value.exceptions
    assert isinstance(error, TransportVersionError)
    return error


async def test_a_mesh_names_a_member_of_transport_version_one_within_seconds() -> None:
    with version_one_router() as endpoint:
        error = await _mesh_stopped_by(endpoint)
    words = str(error)
    assert f"the member {BOB.fingerprint} at {endpoint} speaks another transport" in words
    assert "transport version 2 (ZMTP CURVE)" in words and "version 1 (NULL" in words


@contextmanager
def resetting_listener() -> Iterator[tuple[str, list[int]]]:
    """A listener on 127.0.0.1 that resets every connection before its greeting: what a NULL
    ROUTER looks like when its reset overtakes the greeting that names its mechanism (a loaded
    machine). Its endpoint, and the count of connections it reset."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    reset: list[int] = [0]
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()  # LINGER 0: a reset, nothing sent
            reset[0] += 1

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}", reset
    finally:
        done.set()
        thread.join()
        server.close()


async def test_connections_reset_before_any_handshake_are_taken_as_the_mismatch() -> None:
    with resetting_listener() as (endpoint, reset):
        error = await _mesh_stopped_by(endpoint)
    assert f"the member {BOB.fingerprint} at {endpoint}" in str(error)
    # Not at the first reset: a member restarting mid-handshake is not a version.
    assert reset[0] >= CLOSED_UNANSWERED


def test_a_node_whose_peer_speaks_transport_version_one_stops_and_says_so(
    tmp_path: Path,
) -> None:
    """``nertz node`` given a spec and a --peer whose ROUTER is of version 1: one error line
    naming both versions and the member, and the failure status, within seconds (it used to
    wait in silence, then call a game that never began "abandoned")."""
    spec = GameSpec.create([(ANN.peer_id, "Ann"), (BOB.peer_id, "Bob")], Rules(), b"versions")
    (tmp_path / "game.spec").write_bytes(spec.to_wire())
    write_key(tmp_path / "ann.key", ANN)
    with version_one_router() as endpoint:
        done = cli_run(
            [
                sys.executable, "-m", "cli", "node",
                "--key", str(tmp_path / "ann.key"),
                "--spec", str(tmp_path / "game.spec"),
                "--bind", "tcp://127.0.0.1:0",
                "--peer", f"{spec.seat_of(BOB.peer_id)}={endpoint}",
                "--log", str(tmp_path / "ann.log"),
            ],
            capture_output=True,
            check=False,
            text=True,
            # A guard against a hang, not a timing: the silent wait of before (30 s, then an
            # "abandoned" game) is told apart by its words; a loaded machine takes 10 s to start.
            timeout=90,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert done.returncode == EXIT_FAILED
    line = one_error_line(done, BOB.fingerprint, endpoint, "version 2", "version 1")
    assert line.startswith("nertz node: error: the member")


def test_a_message_of_another_protocol_version_is_said_once_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The transport can match and the protocol differ (a shuffle game between a build that
    speaks protocol version 4 and one that speaks 6, session 39's): the node's refusals say it
    in a WARNING line at the first such message, naming both, and only once."""
    refusals = RefusalLog(logging.getLogger("test.versions"))
    with caplog.at_level(logging.WARNING, logger="test.versions"):
        for now in (0.0, 0.1, 30.0):
            refusals.refused("bad_version", "version 4, this game's is 6", now)
    said = [r.getMessage() for r in caplog.records if "protocol version" in r.getMessage()]
    assert said == [
        "refused a message of another protocol version (version 4, this game's is 6): a member "
        "runs another p2p-nertz; every member must run the same version (docs/protocol.md §4.7)"
    ]
    assert refusals.counts["bad_version"] == 3
