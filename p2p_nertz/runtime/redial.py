"""A silent member's link tried afresh, so that a short cut ends when the link is back.

Theory of operation
-------------------
A cut shorter than the link window (the DEALER's heartbeat, :func:`~p2p_nertz.runtime.mesh.
link_timeout_ms`) keeps its TCP connection: what was sent during the cut waits for TCP's next
retransmission, whose timer doubled at every try (200 ms, 400 ms, ... : the next try after a
cut of ``C`` seconds may come up to about ``C`` after the link is back), and a cut longer than
the window ends in a reconnect whose SYNs back off the same way. The members then stay silent
to each other for up to twice the cut: past the drop timer for a cut of more than about half
of it (``scripts/bench_cut_return.py``; docs/protocol.md §9.5 *a cut shorter than the drop
timer*).

A new connection waits on no such timer. So once a member heard before has been silent for
:data:`TRY_AFTER` (three of a node's idle beats; the suspect timer if shorter; session 33: the
suspect timer, so a cut shorter than it still waited on TCP's timer, up to 3.5 s at the
default 5 s), :class:`Redialer` tries the member's address with a plain TCP
connect every :data:`PROBE_EVERY` seconds, each a new SYN, each given up after as long; the
first one answered says the link is back, and the DEALER to that member is dialled again, once
(:meth:`~p2p_nertz.runtime.zmqtrio.AsyncSocket.redial`: the old connection and what it held are
given up; the protocol's gap repair fetches the events again, as after any reconnect), once a
silence. Hearing the member again does not end the tries: what we hear may be its own DEALER's
new connection, ours still waiting on TCP's timer (``bench_cut_return.py``: one side heard 0.9 s
after the heal, the other 8.2 s, while only one side re-dialled). One try begun after it was
heard, and unanswered, does.

The DEALER is re-dialled under a routing id it never used (``new_id``, :meth:`Redialer.add`):
zmq ends the old connection asynchronously, and a handshake of it still under way (zmq's own
reconnect, which meets a restarted member's port as it opens, as the tries do) may end at the
member's ROUTER after the new one's. Under one id it then took the id over
(``ROUTER_HANDOVER``) and closed, and the new connection, its pipe ended there, was written
into unheard until its heartbeat gave up, a drop timer later (session 34's restarted member,
heard by its peer and hearing nobody for 15 s: ``tests/test_redial.py`` holds the member's ZAP
answers to end the handshakes in that order). A silence whose tries were all *refused* until
one is answered (the host answers, its port is closed: the member's process gone or starting
again) re-dials nothing: zmq's own reconnect, refused as promptly, waits on no timer of TCP's
and finds the port within its back-off (a second), with what the DEALER held for the member.
One try unanswered in it (a cut, a host starting again: zmq's SYNs back off) and it re-dials.

What it leaves alone: our own process stopped or stalled past a member's silence (woken, it
listens as long again before it calls anyone silent, as its peer does before it votes);
a slow link, not a cut one, whose member is heard, late (a probe
unanswered within :data:`PROBE_EVERY` changes nothing, and the old connection goes on
carrying what it carries: session 32's slow link, docs/protocol.md §9.5); a member whose
process is stopped (its host's kernel answers the probe: the DEALER is re-dialled once, as its
heartbeat would at the window's end, and waits for the handshake until the member wakes). A
probe that its ROUTER accepts carries no byte: zmq there closes a connection that never
greeted, and nothing else sees it.

What it does not do (measured in session 34, docs/protocol.md §9.5): cap the connection's own
retransmission timer (``TCP_RTO_MAX_MS``, Linux 6.15, at its least, a second). It healed
every cut within a second on the old connection, but a link whose round trip passes the cap
(session 32's slow link, 3 s each way) then retransmits spuriously every second, its
congestion window back to one segment each time: the slow member was dropped, at two players
and at three. A SYN answered within :data:`PROBE_EVERY` is what tells a link back from a slow
one.
"""

from __future__ import annotations

import enum
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import trio

from p2p_nertz.protocol.identity import PeerId, fingerprint
from p2p_nertz.runtime.zmqtrio import AsyncSocket, tcp_port

__all__ = [
    "PROBE_EVERY",
    "REFUSED",
    "TRY_AFTER",
    "Refused",
    "Redialer",
    "host_and_port",
    "try_after",
]

log = logging.getLogger(__name__)

PROBE_EVERY: Final = 0.5
"""Seconds between two tries of a silent member's address, and how long one waits for its
SYN's answer (a LAN answers in a millisecond; a link slower than this is not cut). A second
until session 34: the half second saved came off the least gap between a cut and the drop
timer at which a game of two goes on (docs/protocol.md §9.5, *the margin under the drop
timer*: about 1.5 s, now about 1 s, at timers 2/8 s)."""

TRY_AFTER: Final = 1.5
"""Seconds of silence after which a member heard before has its address tried: three of the
beats an idle node sends every half second (``runtime/node.py``), so that a cut shorter than
the suspect timer heals as soon as a longer one (session 33 tried from the suspect timer)."""


def try_after(suspect_after: float) -> float:
    """The silence after which a member's address is tried, for a node whose suspect timer is
    ``suspect_after``: :data:`TRY_AFTER`, or the suspect timer if shorter.

    >>> try_after(5.0), try_after(1.0)
    (1.5, 1.0)
    """
    return min(TRY_AFTER, suspect_after)


def host_and_port(endpoint: str) -> tuple[str, int]:
    """The host and port of a ``tcp://`` endpoint.

    >>> host_and_port("tcp://10.77.0.2:5601"), host_and_port("tcp://[::1]:40000")
    (('10.77.0.2', 5601), ('::1', 40000))

    Raises:
        ValueError: not a ``tcp://host:port`` endpoint.
    """
    port = tcp_port(endpoint)
    host = endpoint.partition("://")[2].rpartition(":")[0].removeprefix("[").removesuffix("]")
    if not host:
        raise ValueError(f"not a tcp://host:port endpoint: {endpoint!r}")
    return host, port


class Refused(enum.Enum):
    """The answer of a try that its member's host refused."""

    REFUSED = "refused"


REFUSED: Final = Refused.REFUSED
"""A try's answer when the member's host refused the connection (its port closed)."""


@dataclass(slots=True)
class _Link:
    dealer: AsyncSocket
    endpoint: str
    member: PeerId
    new_id: Callable[[], bytes] | None
    """A routing id the DEALER never used, for each re-dial (``None``: the DEALER's own)."""
    heard: float = -math.inf
    """When the member was last heard (never: minus infinity)."""
    changed: trio.Event = field(default_factory=trio.Event)
    """Set when it is heard after a silence (the waiting task looks again)."""
    redials: int = 0


class Redialer:
    """Tries the address of each member silent for ``silent_after`` seconds, and re-dials our
    DEALER to it once an attempt is answered (see the module docstring).

    Args:
        silent_after: how long a member is silent before it is tried, in seconds
            (:func:`try_after` of the node's suspect timer).
        every: seconds between two tries (:data:`PROBE_EVERY`).
    """

    def __init__(self, silent_after: float, every: float = PROBE_EVERY) -> None:
        self.silent_after = silent_after
        self.every = every
        self._links: dict[PeerId, _Link] = {}

    def add(
        self,
        member: PeerId,
        dealer: AsyncSocket,
        endpoint: str,
        new_id: Callable[[], bytes] | None = None,
    ) -> None:
        """Look after ``dealer``, our DEALER to ``member`` at ``endpoint``, re-dialled under
        ``new_id()`` each time (see the module docstring: needed at a ``ROUTER_HANDOVER``
        ROUTER)."""
        self._links[member] = _Link(dealer, endpoint, member, new_id)

    def redials(self, member: PeerId) -> int:
        """How many times the DEALER to ``member`` was dialled again."""
        return self._links[member].redials

    def heard(self, member: PeerId) -> None:
        """Note that ``member`` was heard just now (a message came from it)."""
        link = self._links.get(member)
        if link is not None:
            silent = trio.current_time() - link.heard >= self.silent_after
            link.heard = trio.current_time()
            if silent:
                link.changed.set()

    def start(self, nursery: trio.Nursery) -> None:
        """Start a task for each member's link in ``nursery`` (they run until cancelled)."""
        for link in self._links.values():
            nursery.start_soon(self._serve_link, link)

    async def _serve_link(self, link: _Link) -> None:
        while True:
            link.changed = trio.Event()
            if link.heard == -math.inf:
                await link.changed.wait()  # (never heard: nothing to try again yet)
            elif not self._silent(link):
                due = link.heard + self.silent_after
                with trio.move_on_at(due):
                    await link.changed.wait()
                if trio.current_time() > due + self.every:
                    # We stood still (a stop, a stalled machine), not the member: listen for
                    # as long again before calling it silent (a waker votes nobody out
                    # before then either, docs/protocol.md §9.5).
                    link.heard = trio.current_time()
            else:
                await self._try_link(link)

    async def _try_link(self, link: _Link) -> None:
        """A silence: try the member's address until it answers (then re-dial, unless every
        try before was refused, and wait until the member is heard), or until a try begun after
        it was heard again goes unanswered (a slow link, not a cut one: left alone)."""
        refused = unanswered = False
        while True:
            heard_before = not self._silent(link)
            answer = await self._answered(link.endpoint)
            if answer is REFUSED:
                refused = True
            elif answer:
                if unanswered or not refused:
                    self._redial(link)
                link.changed = trio.Event()
                if self._silent(link):
                    await link.changed.wait()  # (once a silence)
                return
            else:
                unanswered = True  # (a cut: zmq's own SYNs may wait on TCP's timer)
            if heard_before:
                return

    def _redial(self, link: _Link) -> None:
        link.dealer.redial(link.endpoint, None if link.new_id is None else link.new_id())
        link.redials += 1
        log.info(
            "re-dialled %s at %s: its address answers (last heard %.1f s ago)",
            fingerprint(link.member), link.endpoint, trio.current_time() - link.heard,
        )  # fmt: skip

    def _silent(self, link: _Link) -> bool:
        return trio.current_time() - link.heard >= self.silent_after

    async def _answered(self, endpoint: str) -> bool | Refused:
        """Whether a TCP connect to ``endpoint`` is answered within :attr:`every` seconds
        (then closed at once), or :data:`REFUSED`; returns no sooner than that unless
        answered."""
        started = trio.current_time()
        answer: bool | Refused = False
        with trio.move_on_after(self.every):
            try:
                stream = await trio.open_tcp_stream(*host_and_port(endpoint))
            except OSError as exc:  # (unreachable: tried again)
                if _refused(exc):
                    answer = REFUSED  # (its host answers, nobody listens there)
            else:
                await stream.aclose()
                return True
        await trio.sleep_until(started + self.every)
        return answer


def _refused(exc: OSError) -> bool:
    """Whether a failed :func:`trio.open_tcp_stream` was refused at every address it tried
    (it raises an :exc:`OSError` from a group of each address's)."""
    errors = exc.__cause__.exceptions if isinstance(exc.__cause__, ExceptionGroup) else [exc]
    return all(isinstance(e, ConnectionRefusedError) for e in errors)
