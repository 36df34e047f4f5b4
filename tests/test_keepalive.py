"""The mesh ROUTER's TCP keepalive on the web table's listening socket (runtime/keepalive.py).

A browser tab on a phone that left the Wi-Fi sends no FIN: its connection stayed at the web
server while the table did not change (``TCP_USER_TIMEOUT`` only ends a connection whose data
goes unacknowledged, and a page is sent nothing while nothing changes), holding one of the
page's ``MAX_CONNECTIONS``. The listening socket now carries ``mesh.ROUTER_KEEPALIVE`` (its
give-up time the server's ``STALLED_AFTER``), and every connection it accepts inherits it:
read here from the kernel, on a real loopback connection. What it does to a machine that went
away is measured in ``scripts/bench_dead_link.py`` (way ``web``).
"""

from __future__ import annotations

import socket

import pytest
import zmq

from p2p_nertz.runtime.keepalive import keep_alive
from p2p_nertz.runtime.mesh import ROUTER_KEEPALIVE
from p2p_nertz.web.server import _listening

pytestmark = pytest.mark.skipif(
    not hasattr(socket, "TCP_USER_TIMEOUT"), reason="TCP_USER_TIMEOUT is Linux's"
)


def _accepted_options(listening: socket.socket) -> tuple[int, int, int, int]:
    """SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL and TCP_USER_TIMEOUT of a connection accepted
    on ``listening`` (from a client on this machine)."""
    with listening, socket.create_connection(listening.getsockname()):
        accepted, _ = listening.accept()
        with accepted:
            return (
                accepted.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
                accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
                accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
                accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT),
            )


MESH = (ROUTER_KEEPALIVE[zmq.TCP_KEEPALIVE_IDLE], ROUTER_KEEPALIVE[zmq.TCP_KEEPALIVE_INTVL])


def test_a_socket_given_the_keepalive_passes_it_to_each_connection_it_accepts() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    keep_alive(sock, 7_000)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    assert _accepted_options(sock) == (1, *MESH, 7_000)


def test_the_web_servers_connections_have_the_meshs_keepalive_and_its_own_give_up_time() -> None:
    assert _accepted_options(_listening("127.0.0.1", 0, 2.5)) == (1, *MESH, 2_500)
