"""Convening a game on the LAN (DESIGN.md §5.1, §7): the discovery beacon and the lobby.

- :mod:`p2p_nertz.lobby.beacon` — the signed UDP beacon that says a table is open.
- :mod:`p2p_nertz.lobby.messages` — the lobby's signed messages (hello, table, start, ...).
- :mod:`p2p_nertz.lobby.state` — the host's table and a guest's seat, sans-I/O.

The runtime that puts them on sockets is :mod:`p2p_nertz.runtime.lobby`.
"""

from __future__ import annotations

from p2p_nertz.lobby.beacon import BEACON_PORT, Beacon, BeaconError
from p2p_nertz.lobby.messages import LobbyMessageError, Seat, TableView
from p2p_nertz.lobby.state import GuestLobby, HostLobby, LobbyError, Session

__all__ = [
    "BEACON_PORT",
    "Beacon",
    "BeaconError",
    "GuestLobby",
    "HostLobby",
    "LobbyError",
    "LobbyMessageError",
    "Seat",
    "Session",
    "TableView",
]
