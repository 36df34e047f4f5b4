"""The mesh ROUTER's TCP keepalive on a plain listening socket: the web table's server.

A listening socket's connections inherit its TCP options. The mesh's ROUTER and a spectator's
port set :data:`~p2p_nertz.runtime.mesh.ROUTER_KEEPALIVE` through zmq, so that the kernel ends
a connection whose far machine went away without closing it (power, cable, a phone out of
Wi-Fi): keepalive probes it after a silence, and ``TCP_USER_TIMEOUT`` (zmq's ``TCP_MAXRT``)
ends it once that long passed without an answer. :func:`keep_alive` sets the same on a socket of
Python's own, the numbers read from that one mapping, the give-up time its caller's.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Final

import zmq

from p2p_nertz.runtime.mesh import ROUTER_KEEPALIVE

__all__ = ["keep_alive"]

_AS_SOCKET: Final[Mapping[int, tuple[int, str]]] = {
    zmq.TCP_KEEPALIVE: (socket.SOL_SOCKET, "SO_KEEPALIVE"),
    zmq.TCP_KEEPALIVE_IDLE: (socket.IPPROTO_TCP, "TCP_KEEPIDLE"),
    zmq.TCP_KEEPALIVE_INTVL: (socket.IPPROTO_TCP, "TCP_KEEPINTVL"),
    zmq.TCP_KEEPALIVE_CNT: (socket.IPPROTO_TCP, "TCP_KEEPCNT"),
    zmq.TCP_MAXRT: (socket.IPPROTO_TCP, "TCP_USER_TIMEOUT"),
}
"""zmq's name of each option in :data:`ROUTER_KEEPALIVE`, and the socket module's."""
_GIVE_UP: Final = "TCP_USER_TIMEOUT"


def keep_alive(sock: socket.socket, silence_ms: int) -> None:
    """Set :data:`ROUTER_KEEPALIVE` on ``sock`` (a TCP socket, before it listens: its
    connections inherit it), ending a connection after ``silence_ms`` milliseconds without an
    answer instead of the mesh's. An option the platform lacks is left out (not Linux:
    ``TCP_USER_TIMEOUT``)."""
    for option, value in ROUTER_KEEPALIVE.items():
        level, name = _AS_SOCKET[option]
        if hasattr(socket, name):
            sock.setsockopt(level, getattr(socket, name), silence_ms if name == _GIVE_UP else value)
