"""A member cut off without a TCP close: the spectator's port ends its old connection
(session 35).

A member's machine that loses power or its cable sends no FIN: the connection of its
``--watcher`` DEALER stayed at the spectator's ROUTER for the rest of the game (the port only
receives and has no heartbeat of its own), one descriptor and its buffers. The port now sets
the mesh ROUTER's TCP keepalive (``mesh.ROUTER_KEEPALIVE``), which ends it once it has brought
nothing for ``ROUTER_SILENCE_MS`` (30 s), and leaves the member started again alone.

A spectator's :class:`~p2p_nertz.runtime.watchport.WatchPort` and a member's mesh pushing to
it, in a network-namespace lab, each in a process of ``scripts/bench_dead_link.py`` (way
``watch``) that prints the connections the port itself counts (``WatchPort.connections``).
The member's host is cut at its switch port and the member started again on a third host; the
test reads the port's count: the old connection ends, the new one stays. Before, the old one
never ended (not within 80 s in the bench). No timing is asserted: the bound is a hang's.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from script_helpers import load_script
from test_twin_dead_link import TIMERS, _until

from p2p_nertz.testing.netns import Lab, unavailable

_WHY = unavailable()
pytestmark = [
    pytest.mark.netns,
    pytest.mark.slow,
    pytest.mark.skipif(_WHY is not None, reason=f"needs a netns lab: {_WHY}"),
]


@pytest.mark.timeout(600)
def test_a_spectators_port_ends_the_connection_of_a_member_cut_off_without_a_close(
    tmp_path: Path,
) -> None:
    bench = load_script("bench_dead_link")
    processes: list[Any] = []
    with Lab(3) as lab, contextlib.ExitStack() as closing:
        closing.callback(lambda: [process.close() for process in processes])
        spectator = bench.Member(lab, 0, 0, tmp_path / "spectator.txt", timers=TIMERS, way="watch")
        member = bench.Member(lab, 1, 1, tmp_path / "member.txt", timers=TIMERS, way="watch")
        processes += [spectator, member]
        member.tell(spectator.endpoint())
        _until("the member's connection", lambda: spectator.events("accepted"))
        (old, _), *_ = spectator.events("accepted")
        lab.cut(1)  # (its switch port down: no FIN, no RST; the old connection stays open)
        again = bench.Member(lab, 2, 1, tmp_path / "again.txt", timers=TIMERS, way="watch")
        processes.append(again)
        again.tell(spectator.endpoint())
        _until("the new connection", lambda: len(spectator.events("accepted")) > 1)
        new = spectator.events("accepted")[1][0]

        def ended() -> set[int]:
            return {fd for fd, _ in spectator.events("disconnected")}

        _until("the old connection's end", lambda: old in ended())
        assert new != old and new not in ended()
