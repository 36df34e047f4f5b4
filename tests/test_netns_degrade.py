"""The lab's degraded network (session 31): :meth:`Lab.lose`, :meth:`Lab.reset`,
:meth:`Lab.delay` and :meth:`Lab.throttle` on real namespaces, real sockets, real packets."""

from __future__ import annotations

import struct
import subprocess
import sys
from collections.abc import Iterator

import pytest

from p2p_nertz.testing import delay
from p2p_nertz.testing.netns import Lab, impairments_unavailable, unavailable

_WHY = unavailable() or impairments_unavailable()
needs_lab = pytest.mark.skipif(_WHY is not None, reason=f"needs a netns lab with nft: {_WHY}")

PORT = 7797
# Counts the datagrams that reach PORT (all told, for ever); answers "count" with the count so
# far and echoes "ping".
_COUNT = f"""
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
s.bind(("0.0.0.0", {PORT}))
print("up", flush=True)
n = 0
while True:
    data, peer = s.recvfrom(64)
    if data == b"count":
        s.sendto(str(n).encode(), peer)
    elif data == b"ping":
        s.sendto(data, peer)
    else:
        n += 1
"""
# Sends argv[2] datagrams to argv[1], then asks for the count until an answer comes (a request
# or its answer may be lost).
_BLAST = f"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.25)
for _ in range(int(sys.argv[2])):
    s.sendto(b"x", (sys.argv[1], {PORT}))
for _ in range(240):  # (the count does not move meanwhile: a late answer is as good)
    s.sendto(b"count", (sys.argv[1], {PORT}))
    try:
        print(s.recv(64).decode())
        break
    except TimeoutError:
        pass
"""
# Times one echo from argv[1] (the first datagram to come back).
_ECHO = f"""
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(30)
began = time.monotonic()
s.sendto(b"ping", (sys.argv[1], {PORT}))
s.recv(64)
print(time.monotonic() - began)
"""


def counted(lab: Lab, sent: int) -> int:
    """How many of ``sent`` datagrams from host 0 reached host 1."""
    before = _count(lab, 0)
    return _count(lab, sent) - before


def _count(lab: Lab, sent: int) -> int:
    done = lab.run(0, [sys.executable, "-c", _BLAST, lab.address(1), str(sent)],
                   capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip(), done.stderr
    return int(done.stdout)


@pytest.fixture
def lab() -> Iterator[Lab]:
    with Lab(2) as lab:
        lab.start(1, [sys.executable, "-c", _COUNT], ready="up")
        yield lab


@needs_lab
@pytest.mark.slow
def test_lab_lose_drops_a_share_of_the_packets_then_none(lab: Lab) -> None:
    assert counted(lab, 400) == 400
    lab.lose(1, 50)  # host 1's link: what it receives (and sends) half lost, each apart
    # (Binomial: 400 x 0.5 is 200 ± 10: 100-300 is ten deviations either side.)
    assert 100 <= counted(lab, 400) <= 300
    lab.lose(1, 0)
    assert counted(lab, 400) == 400
    with pytest.raises(ValueError, match="0 to 100"):
        lab.lose(1, 101)


@needs_lab
@pytest.mark.slow
def test_lab_delay_holds_every_packet_then_lets_go(lab: Lab) -> None:
    lab.delay(1, 0.4)  # both ways on host 1's link: a round trip held twice
    done = lab.run(0, [sys.executable, "-c", _ECHO, lab.address(1)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) >= 0.8  # (a lower bound: load only adds to it)
    held = lab.delay(1, 0)
    # Lifted, the delayer says what it did: it held the echo's ping and its answer (and how
    # late it let the latest go past its time: its own lateness, whatever the load).
    assert held is not None and held.held >= 2 and held.late >= 0
    assert counted(lab, 50) == 50  # lifted: nothing held, nothing lost
    lab.delay(1, 0.05)  # again, after a delayer went: the queue bound anew (no jitter: each
    assert counted(lab, 50) == 50  # packet held alike, in order, the count's request last)


# Serves "hello" to each connection on PORT+1.
_SERVE = f"""
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", {PORT + 1}))
s.listen(4)
print("up", flush=True)
while True:
    c = s.accept()[0]
    c.sendall(b"hello")
"""
# Connects to argv[1]:PORT+1 and prints what it met: "hello", then (given a line on stdin) what
# writing and reading again met, the connection reset by the lab meanwhile.
_CONNECT = f"""
import socket, sys
try:
    c = socket.create_connection((sys.argv[1], {PORT + 1}), timeout=10)
    print(c.recv(5).decode(), flush=True)
    if not sys.stdin.readline():  # (the lab resets the connection meanwhile; none: done)
        sys.exit()
    c.settimeout(10)
    c.sendall(b"more")
    print("read", repr(c.recv(5)), flush=True)
except OSError as exc:
    print(type(exc).__name__, flush=True)
"""


@needs_lab
@pytest.mark.slow
def test_lab_reset_resets_open_connections_and_refuses_new_ones_until_lifted() -> None:
    with Lab(2) as lab:
        lab.start(1, [sys.executable, "-c", _SERVE], ready="up")
        client = lab.start(
            0, [sys.executable, "-c", _CONNECT, lab.address(1)], ready="", stdin=subprocess.PIPE
        )
        assert client.lines == ["hello"]
        lab.reset(1)
        client.clear()
        assert client.proc.stdin is not None
        with client.proc.stdin as told:
            told.write("go\n")
        # Reset (ECONNRESET) or aborted: never the data, never a hang.
        said = client.wait_for("", 60)
        assert said in ("ConnectionResetError", "BrokenPipeError", "read b''")
        refused = lab.run(0, [sys.executable, "-c", _CONNECT, lab.address(1)],
                          input="", capture_output=True, text=True, timeout=60)  # fmt: skip
        assert refused.stdout.strip() == "ConnectionRefusedError"  # (a reset to its SYN)
        lab.reset(1, False)
        again = lab.run(0, [sys.executable, "-c", _CONNECT, lab.address(1)],
                        input="", capture_output=True, text=True, timeout=60)  # fmt: skip
        assert again.stdout.split() == ["hello"]


@needs_lab
def test_lab_throttle_puts_a_token_bucket_on_both_ends_of_the_link_and_lifts_it() -> None:
    with Lab(1) as lab:
        ends = [(lab.namespace(0), "eth0"), (lab.switch, "p0")]

        def shown() -> list[str]:
            argv = ["tc", "qdisc", "show", "dev"]
            done = [lab_tool(ns, [*argv, dev]) for ns, dev in ends]
            return done

        lab.throttle(0, 32)
        assert all("tbf" in s and "32Kbit" in s for s in shown()), shown()
        lab.throttle(0, 0)
        assert not any("tbf" in s for s in shown())


def lab_tool(namespace: str, argv: list[str]) -> str:
    done = subprocess.run(
        ["ip", "netns", "exec", namespace, *argv], capture_output=True, text=True, check=True
    )
    return done.stdout


def test_delay_reads_every_packet_id_of_a_netlink_read() -> None:
    """Two queued packets in one read (and an ack between them, skipped): both ids, in order."""

    def packet(pid: int) -> bytes:
        attrs = delay._attr(delay._PACKET_HDR, struct.pack("!IHB", pid, 0x0800, 3))
        attrs += delay._attr(9, b"\0" * 20)  # (the payload: not asked for, skipped)
        return delay._message(delay._PACKET, 7, attrs)

    ack = struct.pack("=IHHII", 36, 2, 0, 0, 0) + b"\0" * 20  # NLMSG_ERROR 0: an ack
    assert delay.packet_ids(packet(41) + ack + packet(0x01020304)) == [41, 0x01020304]
    assert delay.packet_ids(b"") == []
    assert delay.packet_ids(struct.pack("=IHHII", 8, 0, 0, 0, 0)) == []  # (a short length)


def test_lab_degrading_refuses_bad_strengths() -> None:
    lab = Lab(2)  # not entered: the checks come before any namespace is touched
    with pytest.raises(ValueError, match="a loss is 0 to 100 %"):
        lab.lose(0, -1)
    with pytest.raises(ValueError, match="a delay is 0 s or more"):
        lab.delay(0, -0.5)
    with pytest.raises(ValueError, match="a rate is 0 kbit/s or more"):
        lab.throttle(0, -8)
    with pytest.raises(IndexError):
        lab.reset(2)


def test_delay_module_needs_its_queue_and_delay(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        delay.main(["--delay", "0.1"])
    assert "--queue" in capsys.readouterr().err
