"""Whose is a connection from this machine: the user owning the client's end of a TCP socket.

Why: the page's token is in the URL, and a URL is seen by more than the player. Until session
31 the browser was started with it on its command line (``firefox URL``, ``xdg-open URL``),
which every user of the machine can read (``ps``, ``/proc/PID/cmdline``; it is now started
on a private file that holds the URL, ``cli/page_file.py``, and this is a second wall); with
it, another user's process could open the live connection (it may send any ``Host`` and
``Origin`` it likes: only a browser cannot) and see the player's cards and play for them. So
the page refuses a live connection whose client socket is on this machine and belongs to
another user, whatever it knows (:meth:`p2p_nertz.web.server.WebApp`).

How: Linux lists every TCP socket of the network namespace in ``/proc/net/tcp`` (IPv4; the
page binds IPv4 only), each with its local and remote address and its owner's uid. The client's
socket is the row whose local address is the client's and whose remote address is the
server's. Read only for a connection that already showed the token, the page's host and
origin, so a stranger cannot make the server read the table in a loop.

Where it cannot tell: a client on another machine (``--web-bind`` on the LAN: no row here;
the token is then all that guards the page, as ``nertz play --web-bind`` warns), and a system
without ``/proc/net/tcp`` (macOS, Windows: the token alone, as before).
"""

from __future__ import annotations

import socket
import struct
from pathlib import Path
from typing import Final

__all__ = ["TCP_TABLE", "client_owner", "parse_address"]

TCP_TABLE: Final = Path("/proc/net/tcp")
"""Linux's table of the IPv4 TCP sockets of this network namespace."""


_TIME_WAIT: Final = "06"
"""The state of a socket closed and waiting out its last packets (owned by nobody: uid 0)."""


def parse_address(text: str) -> tuple[str, int]:
    """An address of ``/proc/net/tcp`` (``0100007F:1F90``: the IPv4 address as the kernel's
    32-bit word in hex, in this machine's byte order, then the port in hex) as ``(host, port)``.

    Raises:
        ValueError: the text is not such an address.
    """
    word, _, port = text.partition(":")
    try:
        return socket.inet_ntoa(struct.pack("=I", int(word, 16))), int(port, 16)
    except struct.error as exc:  # (a word of more than 32 bits: an IPv6 table's)
        raise ValueError(f"not an IPv4 address of the TCP table: {text!r}") from exc


def client_owner(
    client: tuple[str, int], server: tuple[str, int], table: Path = TCP_TABLE
) -> int | None:
    """The uid owning the client's end of the connection ``client`` → ``server`` if that end
    is on this machine; ``None`` if it is not (or this system keeps no such table)."""
    try:
        lines = table.read_text(encoding="ascii", errors="replace").splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) < 8 or fields[3] == _TIME_WAIT:  # (a closed socket's: the kernel's)
            continue
        try:
            local, remote, uid = parse_address(fields[1]), parse_address(fields[2]), int(fields[7])
        except ValueError:
            continue
        if local == client and remote == server:
            return uid
    return None
