"""Who may connect to a node's ROUTER: the roster's members, by their CURVE keys (ZAP).

Theory of operation
-------------------
The mesh's sockets speak ZMTP 3.0 with the CURVE mechanism (RFC 26, docs/protocol.md §4.1):
every member's ROUTER is a CURVE server and every DEALER to a member a CURVE client. A
member's CURVE key pair is its identity's, converted: the Ed25519 public key that is its peer
id becomes a Curve25519 (X25519) public key (libsodium's ``crypto_sign_ed25519_pk_to_curve25519``)
and its Ed25519 secret key the matching X25519 secret (``..._sk_to_curve25519``), the
conversion the deck already makes to box shares (:func:`~p2p_nertz.deck.vss.x25519_public`).
So nothing new is announced: a DEALER knows its server's key from the roster's peer id, and
a ROUTER knows every client key it may admit.

libzmq asks the ZAP handler of the socket's zmq context (RFC 27, a REP socket bound at
:data:`ZAP_ENDPOINT`) about every CURVE handshake, once the client has proved that it holds
the secret of the key it offers and before any of the connection's messages is decoded.
:class:`Gate` is that handler: it admits a client key only if it is a member's (other than
ours), and names the member in its reply's User-Id (:func:`zap_user_id`: the peer id in
hex). libzmq attaches that User-Id to every message of the connection; the node's guard
(:mod:`p2p_nertz.runtime.guard`) drops a message whose routing id does not start with the
one of the member its key names. A ZAP request does not carry the routing id the client claims
(libzmq sends the *server's* own routing id in that frame), so this check cannot be the
handler's: it is made per message, for a few hundred nanoseconds.

Everyone else is refused at the handshake: a stranger without a key speaking the NULL
mechanism is disconnected at the greeting (the mechanisms differ), one with a key not the
roster's at the ZAP reply. Neither gets a single frame decoded, so neither can reach the
libzmq 4.3.5 abort of docs/protocol.md §13 (it needs a PING decoded while the connection's
input is stopped at the HWM; a handshake's commands are never held that way). The ROUTER sets
``ZAP_ENFORCE_DOMAIN``: with no handler bound, libzmq refuses every client instead of
admitting all (it fails closed).

A spectator's ROUTER (``nertz watch``, :mod:`p2p_nertz.runtime.watchport`) is admitted the
same way, by a :class:`Gate` of its own context under :data:`WATCH_ZAP_DOMAIN`: the game's
members' keys, its key the spectator's identity converted (:func:`server_keys`).

The handler runs in a thread of its own, not in the node's trio loop: a handshake waits for
its reply, and a loop busy for a second (a shuffle's proofs, a restart's replay) would hold
every reconnecting member's handshake that long. The thread answers from a frozen mapping,
needs no lock, and takes the GIL for a few microseconds a handshake. It is a plain REP loop
of our own rather than pyzmq's ``ThreadAuthenticator``: that one runs an asyncio loop in its
thread, logs every decision at DEBUG, and names a CURVE client by its Z85 key, where we want
the member it is.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Final

import zmq

from p2p_nertz.deck.vss import x25519_public, x25519_secret
from p2p_nertz.errors import TransportBrokenError
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.runtime.zmqtrio import CurveKeys, new_socket

__all__ = [
    "MESH_ZAP_DOMAIN",
    "WATCH_ZAP_DOMAIN",
    "ZAP_ENDPOINT",
    "Gate",
    "client_keys",
    "curve_public",
    "server_keys",
    "zap_user_id",
]

log = logging.getLogger(__name__)

ZAP_ENDPOINT: Final = "inproc://zeromq.zap.01"
"""Where libzmq sends a context's ZAP requests (RFC 27)."""

MESH_ZAP_DOMAIN: Final = b"nertz-mesh"
"""The ZAP domain of a node's ROUTER (libzmq refuses an empty one under ``ZAP_ENFORCE_DOMAIN``)."""

WATCH_ZAP_DOMAIN: Final = b"nertz-watch"
"""The ZAP domain of a spectator's ROUTER (``nertz watch``, :mod:`p2p_nertz.runtime.watchport`):
the same admission, the roster's keys, under a domain of its own."""

_ZAP_VERSION: Final = b"1.0"
_ids = itertools.count()


def curve_public(peer_id: bytes) -> bytes:
    """A member's CURVE public key (32 bytes): its peer id converted to X25519."""
    return x25519_public(peer_id)


def zap_user_id(peer_id: bytes) -> bytes:
    """The User-Id the gate gives a member's connections: its peer id in hex (ASCII: libzmq
    hands a User-Id back as a C string, so raw key bytes would be cut at a zero byte)."""
    return peer_id.hex().encode()


def server_keys(identity: Identity, domain: bytes = MESH_ZAP_DOMAIN) -> CurveKeys:
    """Our ROUTER's CURVE keys (a server, in ``domain``: the mesh's, or a spectator's)."""
    secret = x25519_secret(identity.to_bytes())
    return CurveKeys(curve_public(identity.peer_id), secret, domain=domain)


def client_keys(own: CurveKeys, server: PeerId) -> CurveKeys:
    """Our DEALER's CURVE keys towards the member ``server``, from our :func:`server_keys`."""
    return CurveKeys(own.public, own.secret, server=curve_public(server))


class Gate:
    """The ZAP handler of one zmq context, admitting the CURVE keys of ``members``.

    Bound (in the calling thread, so that a failure is the caller's) by :meth:`start`,
    before any CURVE server of the context binds; :meth:`close` stops the thread and closes
    its sockets, before the context is terminated. Any number of :meth:`close` calls.

    Args:
        ctx: the zmq context whose CURVE servers it answers for.
        members: the peer ids whose keys are admitted (ours is left out by the caller).
        domain: the ZAP domain of those servers (any other is refused).

    Attributes:
        refused: handshakes refused so far (written by the handler's thread only).
    """

    def __init__(
        self,
        ctx: zmq.Context[zmq.Socket[bytes]],
        members: Iterable[PeerId],
        domain: bytes = MESH_ZAP_DOMAIN,
    ) -> None:
        self._ctx = ctx
        self._domain = domain
        self._admitted: Mapping[bytes, bytes] = {
            curve_public(pid): zap_user_id(pid) for pid in members
        }
        self._thread: threading.Thread | None = None
        self._stop: zmq.Socket[bytes] | None = None
        self.refused = 0

    def start(self) -> None:
        """Bind the handler and start its thread (idempotent).

        Raises:
            TransportBrokenError: the context already has a ZAP handler (another mesh's).
        """
        if self._thread is not None:
            return
        control = f"inproc://nertz-gate-{next(_ids)}"
        rep = new_socket(self._ctx, zmq.REP)
        stop_out = new_socket(self._ctx, zmq.PAIR)
        stop_in = new_socket(self._ctx, zmq.PAIR)
        try:
            for sock in (rep, stop_out, stop_in):
                sock.set(zmq.LINGER, 0)
            try:
                rep.bind(ZAP_ENDPOINT)
            except zmq.ZMQError as exc:
                raise TransportBrokenError(
                    f"this zmq context already has a ZAP handler (one mesh a context): {exc}"
                ) from exc
            stop_out.bind(control)
            stop_in.connect(control)
        except BaseException:
            for sock in (rep, stop_out, stop_in):
                sock.close()
            raise
        self._stop = stop_out
        # The thread owns ``rep`` and ``stop_in`` from here (its start is the memory barrier
        # zmq asks for when a socket changes threads).
        self._thread = threading.Thread(
            target=self._serve, args=(rep, stop_in), name="nertz-zap", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """Stop the handler's thread and close its sockets."""
        if self._thread is None or self._stop is None:
            return
        with contextlib.suppress(zmq.Again):  # (a thread that died of a bug reads nothing)
            self._stop.send(b"", zmq.NOBLOCK)
        if self._thread.ident is not None:  # (never started: a Ctrl-C in start; session 39)
            self._thread.join()
        self._stop.close()
        self._thread = None
        self._stop = None

    def reply(self, request: list[bytes]) -> list[bytes]:
        """The ZAP reply to ``request`` (RFC 27's frames): 200 and the member's User-Id for
        a member's CURVE key, 400 for anything else."""
        request_id = request[1] if len(request) > 1 else b""
        if len(request) != 7 or request[0] != _ZAP_VERSION:
            self.refused += 1
            return [_ZAP_VERSION, request_id, b"500", b"malformed ZAP request", b"", b""]
        _, _, domain, _address, _, mechanism, key = request
        user = self._admitted.get(key) if mechanism == b"CURVE" else None
        if user is None or domain != self._domain:
            self.refused += 1
            return [_ZAP_VERSION, request_id, b"400", b"not a member's key", b"", b""]
        return [_ZAP_VERSION, request_id, b"200", b"OK", user, b""]

    def _serve(self, rep: zmq.Socket[bytes], stop: zmq.Socket[bytes]) -> None:
        poller = zmq.Poller()
        poller.register(rep, zmq.POLLIN)
        poller.register(stop, zmq.POLLIN)
        try:
            while True:
                ready = dict(poller.poll())
                if stop in ready:
                    return
                if rep in ready:
                    rep.send_multipart(self.reply(rep.recv_multipart()))
        except zmq.ContextTerminated:  # pragma: no cover - close() comes first
            return
        except Exception:  # pragma: no cover - a bug: every handshake is refused from here
            log.exception("the ZAP handler stopped; no member can connect any more")
        finally:
            rep.close()
            stop.close()
