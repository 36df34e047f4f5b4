"""A lobby host stopped with half of a guest's frame read takes the whole frame once woken,
however long the stop, and says so plainly when the rest never comes (docs/lobby.md §3, §8,
session 37).

Before, a host stopped (``SIGSTOP``) longer than ``LINK_IDLE`` (10 s, which a frame must be
completed within, and the guests' patience) woke, read the rest of a frame that had come
meanwhile, found the connection's limit passed (counted while it was stopped) and reset the
connection with the rest unread: the guest's ``hello`` was lost. A limit now counts only while
the host listens (``protocol/listening.py``): woken, it completes the frame and seats the
guest. And a frame whose rest never comes (the guest gave up and closed its connection) is
dropped as a ``cut frame``, in one line of the host's log, nothing else changed.

A real ``nertz host`` process; the guest is the test's own connection in the lobby's stream,
its ``hello`` signed for the connection's challenge as a guest signs it, so that the frame can
be cut where the test chooses. The stop's length is the fault under test, not a wait.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import trio
import trio.testing
from cli_helpers import json_lines_until, make_key, nertz_process

from p2p_nertz.lobby.framing import PREAMBLE, FrameReader, frame
from p2p_nertz.lobby.messages import Hello, TableView, decode, encode
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed
from p2p_nertz.runtime.lobby import LINK_IDLE
from p2p_nertz.testing.said import lines

pytestmark = [
    pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs SIGSTOP/SIGCONT (POSIX)"),
    pytest.mark.timeout(120),
]

#: A bound against a hang: what the test waits for comes at once on a quiet machine.
HANG = 60.0


def _host(tmp_path: Path) -> tuple[subprocess.Popen[str], int, bytes]:
    """``nertz host`` (a bot of a table for three: it waits for two guests), its lobby's port
    and id."""
    make_key(tmp_path / "key")
    host = nertz_process(
        "host", "--bot", "greedy", "--players", "3", "--json", "--port", "0",
        "--key", str(tmp_path / "key"), "--log-dir", str(tmp_path / "logs"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    lobby = json_lines_until(host, "lobby")[-1]
    port = int(str(lobby["endpoint"]).rsplit(":", 1)[1])
    return host, port, bytes.fromhex(lobby["lobby_id"])


def _greeted(port: int) -> tuple[socket.socket, FrameReader, bytes]:
    """A connection to the lobby that has sent its preamble and read the host's challenge."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=HANG)
    sock.sendall(PREAMBLE)
    reader = FrameReader()
    frames: list[bytes] = []
    while not frames:
        data = sock.recv(4096)
        assert data, "the host closed the connection before its challenge"
        frames += reader.feed(data)
    assert len(frames[0]) == 32
    return sock, reader, frames[0]


def _unread_by_host(host_pid: int, port: int, ours: int) -> int:
    """Bytes the host's kernel holds on our connection that the host has not read
    (``/proc/PID/net/tcp``'s receive queue of its end: local ``port``, remote ``ours``)."""
    for line in Path(f"/proc/{host_pid}/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, queues = fields[1], fields[2], fields[4]
        if int(local.split(":")[1], 16) == port and int(remote.split(":")[1], 16) == ours:
            return int(queues.split(":")[1], 16)
    raise AssertionError("the host's end of the connection is not in its table")


def _half_sent(host: subprocess.Popen[str], port: int, sock: socket.socket, data: bytes) -> None:
    """Send ``data`` and wait until the host has read it (its end's queue empty): a frame's
    first half held in the host's reader, not in its kernel."""
    sock.sendall(data)
    ours = sock.getsockname()[1]
    deadline = time.monotonic() + HANG
    while _unread_by_host(host.pid, port, ours):
        assert time.monotonic() < deadline, "the host never read the frame's first half"
        time.sleep(0.01)  # (a poll of the kernel's count: no event to wait on)


@pytest.mark.parametrize(
    "stopped",
    [1.0, 6.0, LINK_IDLE + 2.0],
    ids=["short", "past-the-guests-first-patience", "past-link-idle"],
)
def test_a_host_stopped_mid_frame_completes_it_and_seats_the_guest(
    tmp_path: Path, stopped: float
) -> None:
    host, port, lobby_id = _host(tmp_path)
    try:
        sock, reader, challenge = _greeted(port)
        bob = Identity.generate(derive_seed(b"test-lobby-mid-frame", 1))
        hello = Hello("Bob", "tcp://127.0.0.1:10", False)
        wire = frame(encode(bob, lobby_id, hello, challenge))
        _half_sent(host, port, sock, wire[: len(wire) // 2])
        os.kill(host.pid, signal.SIGSTOP)
        try:
            time.sleep(stopped)
            sock.sendall(wire[len(wire) // 2 :])  # (the rest comes while the host is stopped)
        finally:
            os.kill(host.pid, signal.SIGCONT)
        # Nothing lost: the host seats Bob from that frame and answers on that connection.
        news = json_lines_until(host, "news")[-1]
        assert news["line"].startswith("Bob ("), news
        answers: list[bytes] = []
        while not answers:
            data = sock.recv(65536)
            assert data, "the host closed the connection"
            answers += reader.feed(data)
        view = decode(answers[0]).body
        assert isinstance(view, TableView) and [s.name for s in view.seats][1:] == ["Bob"]
        sock.close()
    finally:
        host.send_signal(signal.SIGTERM)
        _, err = host.communicate(timeout=HANG)
    assert "Traceback" not in err and "broken stream" not in err, err


def test_a_frame_whose_rest_never_comes_is_dropped_in_one_line(tmp_path: Path) -> None:
    host, port, lobby_id = _host(tmp_path)
    try:
        sock, _, challenge = _greeted(port)
        bob = Identity.generate(derive_seed(b"test-lobby-mid-frame", 2))
        wire = frame(encode(bob, lobby_id, Hello("Bob", "tcp://127.0.0.1:10", False), challenge))
        _half_sent(host, port, sock, wire[: len(wire) // 2])
        os.kill(host.pid, signal.SIGSTOP)
        try:
            sock.close()  # (the guest gave up while the host was stopped)
        finally:
            os.kill(host.pid, signal.SIGCONT)
        assert host.stderr is not None
        deadline = time.monotonic() + HANG
        # (its log: the drop is said at once, the first of its kind)
        for line in lines(host, "the host", HANG, stderr=True):
            if "cut frame" in line:
                assert f"{len(wire) // 2} bytes into a frame" in line, line
                break
            assert time.monotonic() < deadline
        else:
            raise AssertionError("the host never said it dropped the frame cut short")
        # It serves on: a guest that asks again is seated.
        again, _, challenge = _greeted(port)
        again.sendall(frame(encode(bob, lobby_id, Hello("Bob", "tcp://127.0.0.1:10", False),
                                   challenge)))  # fmt: skip
        news = json_lines_until(host, "news")[-1]
        assert news["line"].startswith("Bob ("), news
        again.close()
    finally:
        host.send_signal(signal.SIGTERM)
        host.communicate(timeout=HANG)


@pytest.mark.parametrize(
    ("stop", "cancelled_at"),
    [(None, 5.0), ((3.0, 4.0), 5.0), ((4.0, 12.0), 17.0)],
    ids=["no-stop", "a-pause-under-the-gap", "a-stop-past-the-limit"],
)
def test_a_links_send_limit_counts_only_while_the_host_listens(
    stop: tuple[float, float] | None, cancelled_at: float
) -> None:
    # The send side of the same rule (runtime/lobbylink.py: a send cannot be cut and begun
    # again, so a watch moves its deadline): a 5 s limit from 0, the host stopped from
    # stop[0] to stop[1] as its ticks tell it (Listening, LISTEN_GAP 2 s). A pause under the
    # gap is no stop; a stop past the limit moves it to 5 s after the host woke.
    from p2p_nertz.lobby.state import LISTEN_GAP
    from p2p_nertz.protocol.listening import Listening
    from p2p_nertz.runtime.lobbylink import _cancel_past

    ears = Listening(0.0, LISTEN_GAP)
    clock = trio.testing.MockClock(autojump_threshold=0)

    async def ticks() -> None:  # (the host's tick loop, every 0.5 s, feeds its Listening)
        stopped = stop is None
        while True:
            ears.saw(trio.current_time())
            if not stopped and trio.current_time() >= stop[0]:  # type: ignore[index]
                stopped = True
                clock.jump(stop[1] - stop[0])  # type: ignore[index]  # (nothing runs meanwhile)
            await trio.sleep(0.5)

    def listening() -> float:
        return ears.since_at(trio.current_time())

    async def main() -> float:
        async with trio.open_nursery() as outer:
            outer.start_soon(ticks)
            with trio.CancelScope() as scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_cancel_past, scope, 5.0, listening)
                    await trio.sleep_forever()  # (a send the other side never takes)
            outer.cancel_scope.cancel()
        assert scope.cancelled_caught
        return trio.current_time()

    assert trio.run(main, clock=clock) == pytest.approx(cancelled_at, abs=0.5)
