"""A ROUTER's connection whose input stopped at the high-water mark, then its sender's machine
gone: it ends, as docs/protocol.md §4.7's table says (session 36).

The corner of the ROUTER's keepalive (``mesh.ROUTER_KEEPALIVE``): libzmq reads nothing more
from a connection whose pipe is at the mark (the node's loop held while a member floods it),
the kernel's receive buffer fills and its window closes, and then the member's machine goes
without a close. Found (``scripts/bench_hwm_dead_link.py``): the kernel ends the TCP
connection after its 30 s of silence all the same (keepalive probes go out whatever the
window), and libzmq, whose engine no longer polls it, keeps the descriptor and the messages
at the mark until the process reads again; then it delivers them and ends the connection
(``DISCONNECTED``, the descriptor closed). The mark holds nothing for ever: the node's loop
reads its ROUTER whenever it runs.

A ROUTER with the mesh's options in a process of a network-namespace lab that reads nothing
until told, a DEALER on another host flooding it until nothing more can be sent, that host cut
at its switch port. The DEALER sends no ZMTP PING here: a PING among the bytes libzmq kept is
the abort of docs/protocol.md §13 (libzmq 4.3.5, on pyzmq's wheel), a race this test is not
about. No timing is asserted: the bounds are a hang's.
"""

from __future__ import annotations

import pytest
from script_helpers import load_script

from p2p_nertz.runtime.mesh import ROUTER_HWM, ROUTER_SILENCE_MS
from p2p_nertz.testing.netns import Lab, unavailable
from p2p_nertz.testing.said import NeverSaid

_WHY = unavailable()
pytestmark = [
    pytest.mark.netns,
    pytest.mark.slow,
    pytest.mark.skipif(_WHY is not None, reason=f"needs a netns lab: {_WHY}"),
]


@pytest.mark.timeout(400)
def test_a_connection_stopped_at_the_mark_ends_when_its_machine_is_gone() -> None:
    bench = load_script("bench_hwm_dead_link")
    result = bench.one_run(1000, False, ROUTER_SILENCE_MS / 1000 + 90.0)
    assert result["sent before full"] and result["sent before full"] > ROUTER_HWM, result
    # The kernel ended it (keepalive, TCP_MAXRT), the input stopped at the mark or not.
    assert result["kernel ended it after s"] is not None, result
    # libzmq kept the descriptor, unpolled, and said nothing while nothing read it…
    assert result["events before read"] == [], result
    assert result["sockets after kernel"] == result["sockets before"], result
    # …then read what the mark held, ended the connection and closed it; the process lives.
    assert result["read"] is not None and int(result["read"].split()[1]) >= ROUTER_HWM, result
    assert any(e.startswith("event DISCONNECTED") for e in result["events after read"]), result
    before, after = (int(result[k].split()[1]) for k in ("sockets before", "sockets after read"))
    assert after == before - 1, result
    assert result["router exit"] is None, result


@pytest.mark.timeout(300)
def test_a_router_process_that_cannot_start_fails_saying_how_far_it_got() -> None:
    # (session 37: the red CI's "never bound" carried nothing but an empty stderr.) Host 0 told
    # to bind an address that is not its own: its start says each step up to the bind, and
    # the failure carries those lines and what it wrote to its stderr, its process ended.
    bench = load_script("bench_hwm_dead_link")
    with Lab(1) as lab:
        proc = bench.Probe(lab, 0, ["--router", "10.77.0.99"], "the ROUTER's process")
        try:
            with pytest.raises(NeverSaid) as raised:
                proc.started("bound", 90)
        finally:
            proc.close()
    message = str(raised.value)
    assert message.startswith("the ROUTER's process never said 'bound': ended (exit 1)")
    assert [line for line in message.splitlines() if "'step " in line] == [
        f"  'step {step}'" for step in ("python", "imported", "socket", "monitor")
    ]
    assert "its stderr: " in message and "Cannot assign requested address" in message
