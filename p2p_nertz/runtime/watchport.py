"""A spectator's port: the ROUTER the members push a game to, admitting the table's keys only.

Theory of operation
-------------------
``nertz watch`` binds a ROUTER and members started with ``--watcher`` connect a DEALER to it
and push every message they log (:mod:`p2p_nertz.runtime.mesh`). Until session 23 that ROUTER
spoke the NULL mechanism and admitted anyone who reached its port: a stranger could flood it,
and abort the spectator's process through libzmq 4.3.5 (#4841, docs/protocol.md §13), the
same path the mesh closed in session 22. The port closes it the mesh's way (docs/protocol.md
§4.7 *Spectators*):

- The spectator has a key: its identity's (a ``nertz keygen`` key file), converted to
  Curve25519 as a member's is (:func:`~p2p_nertz.runtime.gate.server_keys`). Its ROUTER is a
  CURVE server under :data:`~p2p_nertz.runtime.gate.WATCH_ZAP_DOMAIN`.
- A member must know that key to connect at all (a CURVE client boxes its hello to the
  server's key): the person gives it with the endpoint, ``tcp://HOST:PORT#KEY``
  (:class:`WatcherAddress`, ``KEY`` the spectator's peer id in hex), and the member's DEALER
  connects as a CURVE client with the member's own key (:func:`~p2p_nertz.runtime.gate.
  client_keys`).
- The port's ZAP handler (:class:`~p2p_nertz.runtime.gate.Gate`) admits only the keys of the
  game's roster. So the spectator must know the roster before the first connection: the
  admission is made at the handshake, before any frame is decoded, and a spec pushed over a
  connection would come too late to decide who may connect. ``nertz watch`` therefore needs the
  game's spec (``--spec``); the spec a node still pushes first (:data:`~p2p_nertz.runtime.mesh.
  WATCH_SPEC_TAG`) is ignored.

Everyone else is refused at the handshake, never reaching the frame that could abort the
process: a client speaking NULL at its greeting (the mechanisms differ), a client whose key is
no member's at the ZAP reply, a client that does not know the spectator's key at its hello.
libzmq tells the port of each refusal on a monitor socket (``HANDSHAKE_FAILED_*`` events);
:meth:`WatchPort.note_refusals`, called every so often by the spectator's loop, reads it
without waiting, counts each by reason and logs them at a bounded rate (the node's
:class:`~p2p_nertz.runtime.guard.RefusalLog`: a first refusal in full at INFO, then a WARNING
summary per ten seconds at most, whatever the flood).

A member's connection whose machine went away without closing it (power, cable) is ended by
the port's kernel, as at a member's ROUTER: the ROUTER sets the mesh's TCP keepalive
(:data:`~p2p_nertz.runtime.mesh.ROUTER_KEEPALIVE`), so a connection that brought nothing for
:data:`~p2p_nertz.runtime.mesh.ROUTER_SILENCE_MS` ends (a live member's DEALER sends a PING a
second, and itself gives up on a spectator after its drop timer, 30 s at most). The same
monitor tells the port of each connection accepted and ended (:attr:`WatchPort.connections`,
:attr:`WatchPort.ended`).
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import Final

import zmq

from p2p_nertz.deck.group import DeckError
from p2p_nertz.protocol.identity import Identity, InvalidKeyError, PeerId, parse_peer_id
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.runtime.gate import WATCH_ZAP_DOMAIN, Gate, curve_public, server_keys
from p2p_nertz.runtime.guard import RefusalLog
from p2p_nertz.runtime.mesh import ROUTER_KEEPALIVE, WATCH_MAX_FRAME
from p2p_nertz.runtime.zmqtrio import AsyncSocket, create_socket, monitor_event

__all__ = [
    "KEY_SEPARATOR",
    "NO_CURVE",
    "NOT_THE_TABLE",
    "BAD_HANDSHAKE",
    "WatchPort",
    "WatcherAddress",
    "parse_watcher_key",
]

KEY_SEPARATOR: Final = "#"
"""Between a spectator's endpoint and its key in ``--watcher`` (``tcp://HOST:PORT#KEY``)."""

NO_CURVE: Final = "no_curve"
"""Refusal: a client that did not speak CURVE (a NULL or PLAIN greeting: no key at all)."""
NOT_THE_TABLE: Final = "not_the_table"
"""Refusal: a CURVE client whose key is no member's of the game (the ZAP handler's 400)."""
BAD_HANDSHAKE: Final = "bad_handshake"
"""Refusal: any other failed handshake (a hello not boxed to our key, garbage)."""

log = logging.getLogger(__name__)

_WORDS: Final = {
    NO_CURVE: "without a key",
    NOT_THE_TABLE: "with a key not the table's",
    BAD_HANDSHAKE: "with a failed handshake",
}

_REFUSALS: Final = (
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
    | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
)
_CONNECTIONS: Final = zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED


def parse_watcher_key(text: str) -> PeerId:
    """A spectator's key as ``--watcher`` gives it: its peer id, 64 hex digits.

    Raises:
        ValueError: not 64 hex digits, or not a key a CURVE client can connect to.
    """
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise ValueError(
            f"a spectator's key is the 64 hex digits `nertz watch` prints, not {text!r}"
        )
    try:
        key = parse_peer_id(raw)
        curve_public(key)
    except (InvalidKeyError, DeckError) as exc:
        raise ValueError(f"not a spectator's key: {exc}") from None
    return key


@dataclass(frozen=True, slots=True)
class WatcherAddress:
    """Where a spectator listens, and its key: what a member's ``--watcher`` names.

    Its text form (``str``) is ``tcp://HOST:PORT#KEY``, what ``nertz watch`` prints.

    Attributes:
        endpoint: the spectator's ROUTER, ``tcp://HOST:PORT``.
        key: the spectator's peer id (its identity's Ed25519 public key), whose Curve25519
            conversion is its ROUTER's CURVE key.
    """

    endpoint: str
    key: PeerId

    def __str__(self) -> str:
        return f"{self.endpoint}{KEY_SEPARATOR}{self.key.hex()}"


class WatchPort:
    """A spectator's ROUTER: a CURVE server admitting the keys of ``spec``'s members only.

    :meth:`bind` starts the ZAP handler and binds; :meth:`close` closes both (any number of
    times). Messages come from :attr:`router` as ``[routing id, message, User-Id]``.

    Args:
        ctx: the zmq context (its ZAP handler is the port's: one port a context); the caller
            terminates it after :meth:`close`.
        identity: the spectator's (its CURVE key pair is this identity's, converted).
        spec: the game whose members may push.
        bind: where to bind (``tcp://HOST:PORT``, port 0 for an ephemeral one).
    """

    def __init__(
        self,
        ctx: zmq.Context[zmq.Socket[bytes]],
        identity: Identity,
        spec: GameSpec,
        bind: str,
    ) -> None:
        self._ctx = ctx
        self._identity = identity
        # Every member, the spectator's own key included: a person may watch the game they
        # play under the same key (their node's DEALER then connects with the spectator's).
        self._members = tuple(spec.peer_ids)
        self._bind = bind
        self.gate: Gate | None = None
        self.router: AsyncSocket | None = None
        self._monitor: zmq.Socket[bytes] | None = None
        self.refused = RefusalLog(log)
        """The handshakes refused so far (``refused.counts``, by reason), as logged."""
        self.connections: set[int] = set()
        """The descriptors of the connections accepted and not ended (a stranger's too, until
        its handshake fails), as the monitor had told by the last :meth:`refusals`."""
        self.ended = 0
        """How many of the connections accepted have ended since."""

    @property
    def address(self) -> WatcherAddress:
        """What members give as ``--watcher`` (after :meth:`bind`; the bound endpoint).

        Raises:
            RuntimeError: before :meth:`bind`.
        """
        if self.router is None:
            raise RuntimeError("the spectator's port is not bound yet")
        return WatcherAddress(self.router.endpoints[0], self._identity.peer_id)

    def bind(self) -> WatcherAddress:
        """Start the ZAP handler, then create and bind the ROUTER (idempotent).

        Raises:
            TransportBrokenError: the endpoint cannot be bound, or the context already has a
                ZAP handler.
        """
        if self.router is not None:
            return self.address
        if self.gate is None:  # before the ROUTER: it refuses every client until then
            self.gate = Gate(self._ctx, self._members, WATCH_ZAP_DOMAIN)
            self.gate.start()
        # Only ever received on, so with no ZMTP heartbeat of its own (libzmq 4.3.5 aborts
        # when one falls due on a connection whose input stopped at the HWM and then broke:
        # docs/lobby.md §8); the members' DEALERs' heartbeats, which it answers, watch each link,
        # and TCP keepalive ends one whose member's machine went away (as the mesh's ROUTER).
        router = create_socket(
            self._ctx,
            zmq.ROUTER,
            max_message_size=WATCH_MAX_FRAME,
            heartbeat=False,
            curve=server_keys(self._identity, WATCH_ZAP_DOMAIN),
            small_batch=True,  # (the members it admits: runtime/inbatch.py)
            options=ROUTER_KEEPALIVE,
        )
        try:
            self._monitor = router.monitor(_REFUSALS | _CONNECTIONS)
            router.bind(self._bind)
        except BaseException:
            self._close_monitor()
            router.close()
            raise
        self.router = router
        return self.address

    def refusals(self) -> Counter[str]:
        """The handshakes refused since the last call, by reason (:data:`NO_CURVE`,
        :data:`NOT_THE_TABLE`, :data:`BAD_HANDSHAKE`); never waits. The connections accepted
        and ended since are noted in :attr:`connections` and :attr:`ended`."""
        counts: Counter[str] = Counter()
        if self._monitor is None:
            return counts
        while True:
            try:
                frames = self._monitor.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return counts
            try:
                kind, value = monitor_event(frames)
            except ValueError:  # pragma: no cover - libzmq's own form
                continue
            if kind == zmq.EVENT_ACCEPTED:  # (the value: the connection's descriptor)
                self.connections.add(value)
            elif kind == zmq.EVENT_DISCONNECTED:
                if value in self.connections:
                    self.connections.discard(value)
                    self.ended += 1
            else:
                counts[_reason(kind, value)] += 1

    def note_refusals(self, now: float) -> None:
        """Count and log the handshakes refused since the last call (``now``: seconds, any
        monotonic origin, for the log's rate bound)."""
        for reason, count in sorted(self.refusals().items()):
            self.refused.refused(reason, f"a connection {_WORDS[reason]}", now, count)
        self.refused.flush(now)

    def summary(self) -> str:
        """The refused handshakes in words (empty if none): ``refused 3 connection(s): 2
        without a key, 1 with a key not the table's``."""
        counts = self.refused.counts
        if not counts:
            return ""
        parts = ", ".join(f"{n} {_WORDS[reason]}" for reason, n in sorted(counts.items()))
        return f"refused {sum(counts.values())} connection(s): {parts}"

    def close(self) -> None:
        """Close the ROUTER, its monitor and the ZAP handler."""
        if self.router is not None:
            self.router.close()
        self._close_monitor()
        if self.gate is not None:
            self.gate.close()
            self.gate = None

    def _close_monitor(self) -> None:
        if self._monitor is not None:
            self._monitor.close(linger=0)
            self._monitor = None


def _reason(event: int, value: int) -> str:
    if event == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
        return NOT_THE_TABLE
    if (
        event == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
        and value == zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH
    ):
        return NO_CURVE
    return BAD_HANDSHAKE
