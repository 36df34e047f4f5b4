"""The lab's :meth:`Lab.split`: real namespaces, real TCP connections across its bridges."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from p2p_nertz.testing.netns import Lab, unavailable

_WHY = unavailable()
pytestmark = [
    pytest.mark.skipif(_WHY is not None, reason=f"needs a netns lab: {_WHY}"),
    pytest.mark.slow,  # (each unreachable probe waits its second)
]

PORT = 7799
# Listens on PORT and accepts for ever (each host one: the lab kills it on close).
_LISTEN = f"""
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", {PORT}))
s.listen(16)
print("up", flush=True)
while True:
    s.accept()[0].close()
"""
# Tries every address given at once (a second each) and prints those it reached.
_PROBE = f"""
import socket, sys, threading
reached = []
def probe(addr):
    try:
        socket.create_connection((addr, {PORT}), timeout=1.0).close()
        reached.append(addr)
    except OSError:
        pass
threads = [threading.Thread(target=probe, args=(a,)) for a in sys.argv[1:]]
for t in threads: t.start()
for t in threads: t.join()
print(" ".join(sorted(reached)))
"""


@pytest.fixture
def lab() -> Iterator[Lab]:
    with Lab(4) as lab:
        for host in range(lab.hosts):
            lab.start(host, [sys.executable, "-c", _LISTEN], ready="up")
        yield lab


def reach(lab: Lab) -> dict[int, set[int]]:
    """Whom each host reaches over the LAN (itself left out)."""
    found = {}
    for host in range(lab.hosts):
        others = [lab.address(o) for o in range(lab.hosts) if o != host]
        done = lab.run(host, [sys.executable, "-c", _PROBE, *others], capture_output=True)
        assert done.returncode == 0, done.stderr
        found[host] = {int(a.rsplit(".", 1)[1]) - 1 for a in done.stdout.decode().split()}
    return found


def test_lab_split_reaches_only_the_own_side_and_heals(lab: Lab) -> None:
    everyone = {h: {o for o in range(4) if o != h} for h in range(4)}
    assert reach(lab) == everyone
    # Two splits at once, {1, 2} | {0, 3} and {2, 3} | {0, 1}: sides as pairs.
    lab.split([(0, 0), (1, 0), (1, 1), (0, 1)])
    assert reach(lab) == {0: set(), 1: set(), 2: set(), 3: set()}
    lab.split([0, 1, 1, 0])
    assert reach(lab) == {0: {3}, 1: {2}, 2: {1}, 3: {0}}
    lab.cut(0)  # a cut holds across a split and its end
    lab.split(["a", "a", "a", "a"])
    assert reach(lab) == {0: set(), 1: {2, 3}, 2: {1, 3}, 3: {1, 2}}
    lab.heal(0)
    assert reach(lab) == everyone


def test_lab_split_refuses_a_side_count_that_is_not_the_hosts() -> None:
    lab = Lab(3)  # not entered: the check comes before any namespace is touched
    with pytest.raises(ValueError, match="a side for each of the 3 hosts, not 2"):
        lab.split([0, 1])


# Binds PORT + 1, says so, and once told (a line on stdin: the datagram was sent) waits up to
# a second more for it; prints what came ("" for nothing). (Its second not counted from its
# start: the sender, a Python started on a loaded machine, can take longer than that to send.)
_CATCH = f"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", {PORT + 1}))
print("up", flush=True)
sys.stdin.readline()
s.settimeout(1.0)
try:
    print(s.recv(64).decode(), flush=True)
except OSError:
    print("", flush=True)
"""
_SEND = f"""
import socket, sys
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"hello", (sys.argv[1], {PORT + 1}))
"""


def datagram_arrives(lab: Lab, src: int, dst: int) -> bool:
    """Whether a UDP datagram sent by ``src`` to ``dst`` reaches it (within a second of its
    sending)."""
    catcher = lab.start(dst, [sys.executable, "-c", _CATCH], ready="up", stdin=subprocess.PIPE)
    assert lab.run(src, [sys.executable, "-c", _SEND, lab.address(dst)]).returncode == 0
    catcher.clear()
    assert catcher.proc.stdin is not None
    with catcher.proc.stdin as told:
        told.write("sent\n")
    return catcher.wait_for("", 90) == "hello"


def test_lab_cut_link_parts_two_hosts_only_each_way_asked_and_heals(lab: Lab) -> None:
    everyone = {h: {o for o in range(4) if o != h} for h in range(4)}
    lab.cut_link(0, 2)
    lab.cut_link(1, 3, one_way=True)  # 1 -> 3 lost; TCP needs both ways, so both fail
    assert reach(lab) == {0: {1, 3}, 1: {0, 2}, 2: {1, 3}, 3: {0, 2}}
    # One way is one way: what 3 sends 1 still arrives, what 1 sends 3 does not.
    assert datagram_arrives(lab, 3, 1)
    assert not datagram_arrives(lab, 1, 3)
    assert not datagram_arrives(lab, 2, 0)
    lab.heal_link(0, 2)
    lab.heal_link(3, 1)  # either order of the two hosts
    assert reach(lab) == everyone


def test_lab_cut_link_refuses_a_host_to_itself() -> None:
    lab = Lab(2)  # not entered: the check comes before any namespace is touched
    with pytest.raises(ValueError, match="not host 1 to itself"):
        lab.cut_link(1, 1)
