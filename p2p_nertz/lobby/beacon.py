"""The discovery beacon: a small signed UDP datagram saying "a game is gathering here".

A host in the lobby broadcasts a beacon every second on the LAN it was told to use
(DESIGN.md §7; discovery is opt-in per address, never on by default). Whoever listens on the
beacon port learns the lobby's id, the host's key and name, the TCP port of its lobby, and how
many seats are taken; the host's IP address is the datagram's source. ``--peer host:port`` does
the same job where broadcast does not reach.

Layout (all integers big-endian)::

    offset  size  field
    0       4     magic  b"NRTZ"
    4       1     version (2: the lobby port speaks the lobby's own stream, not ZMTP)
    5       32    lobby id (random, chosen by the host)
    37      32    host key (Ed25519 public key)
    69      2     lobby TCP port (1..65535)
    71      1     seats taken (1..capacity)
    72      1     capacity (1..8)
    73      1     name length n (1..128 bytes of UTF-8, at most 32 characters)
    74      n     host name
    74+n    0|1   the deal, only when it is not the default ``commit``: 1 = shuffle
    74+n+d  64    Ed25519 signature by the host key over b"p2p-nertz/v1/beacon\\0" + bytes before it

Anything else — a short or long datagram, another magic or version, a bad field, a deal byte
that names the default or no deal, a signature that does not verify — is refused with
:class:`BeaconError`; a listener ignores it and goes on. The deal byte is optional so that a
table of the default deal sends the bytes it always did, heard by every listener; a listener
that predates it refuses a shuffle table's beacon (its length), as a guest that predates the
option refuses the table itself (docs/lobby.md §2, §3).

Version 2 (session 22) is version 1's bytes with another version byte: the lobby behind the
port is no longer ZeroMQ but the lobby's own stream (:mod:`p2p_nertz.lobby.framing`), which a
guest of version 1 cannot speak, so a listener of either version drops the other's beacons
instead of offering a table it cannot sit at.

>>> from p2p_nertz.protocol.identity import Identity
>>> host = Identity.generate(seed=bytes(32))
>>> beacon = Beacon(
...     lobby_id=bytes(32), host=host.peer_id, port=5670, name="Ann", taken=1, capacity=4
... )
>>> Beacon.decode(beacon.encode(host)) == beacon
True
>>> shuffle = Beacon(
...     lobby_id=bytes(32), host=host.peer_id, port=5670, name="Ann", taken=1, capacity=4,
...     deal=Deal.SHUFFLE,
... )
>>> len(shuffle.encode(host)) - len(beacon.encode(host)), Beacon.decode(shuffle.encode(host)).deal
(1, <Deal.SHUFFLE: 'shuffle'>)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

from p2p_nertz.defaults import BEACON_PORT
from p2p_nertz.errors import RemoteProtocolError
from p2p_nertz.protocol.identity import (
    SIGNATURE_SIZE,
    Identity,
    PeerId,
    fingerprint,
    is_valid_peer_id,
    verify,
)
from p2p_nertz.protocol.names import MAX_NAME, NAME_RULE, name_fault
from p2p_nertz.protocol.spec import Deal

__all__ = ["BEACON_PORT", "BEACON_VERSION", "MAGIC", "MAX_BEACON", "Beacon", "BeaconError"]

MAGIC: Final = b"NRTZ"
BEACON_VERSION: Final = 2
"""The beacon's version: 2 since the lobby left ZeroMQ for its own stream (session 22)."""

_DOMAIN: Final = b"p2p-nertz/v1/beacon\0"
_FIXED: Final = struct.Struct(">4sB32s32sHBBB")
MAX_NAME_BYTES: Final = 4 * MAX_NAME
#: The deal byte of a table not dealt by the default deal (docs/lobby.md §2).
_DEAL_CODES: Final = {Deal.SHUFFLE: 1}
_DEALS: Final = {code: deal for deal, code in _DEAL_CODES.items()}
MAX_BEACON: Final = _FIXED.size + MAX_NAME_BYTES + 1 + SIGNATURE_SIZE
"""The largest valid beacon, in bytes."""


class BeaconError(RemoteProtocolError, ValueError):
    """A datagram on the beacon port is not a valid, signed beacon."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Beacon:
    """What a beacon announces (see the module docstring for the bytes).

    Raises:
        ValueError: a field out of range (on construction).
    """

    lobby_id: bytes
    host: PeerId
    port: int
    name: str
    taken: int
    capacity: int
    deal: Deal = Deal.COMMIT

    def __post_init__(self) -> None:
        if len(self.lobby_id) != 32:
            raise ValueError(f"a lobby id is 32 bytes, not {len(self.lobby_id)}")
        if not is_valid_peer_id(self.host):
            raise ValueError("the host key is not a usable Ed25519 public key")
        if not 1 <= self.port <= 65535:
            raise ValueError(f"not a TCP port: {self.port}")
        if not 1 <= self.capacity <= 8 or not 1 <= self.taken <= self.capacity:
            raise ValueError(f"seats taken {self.taken} of {self.capacity}: out of range")
        fault = name_fault(self.name)  # (so at most 4 * MAX_NAME = MAX_NAME_BYTES of UTF-8)
        if fault is not None:
            raise ValueError(f"{NAME_RULE} ({fault}): {self.name!r:.80}")

    @property
    def fingerprint(self) -> str:
        """The host's short fingerprint."""
        return fingerprint(self.host)

    def _body(self) -> bytes:
        name = self.name.encode()
        return (
            _FIXED.pack(
                MAGIC,
                BEACON_VERSION,
                self.lobby_id,
                self.host,
                self.port,
                self.taken,
                self.capacity,
                len(name),
            )
            + name
            + (bytes([_DEAL_CODES[self.deal]]) if self.deal is not Deal.COMMIT else b"")
        )

    def encode(self, identity: Identity) -> bytes:
        """The signed datagram.

        Raises:
            ValueError: ``identity`` is not the beacon's host.
        """
        if identity.peer_id != self.host:
            raise ValueError("a beacon is signed by its host")
        body = self._body()
        return body + identity.sign(_DOMAIN + body)

    @classmethod
    def decode(cls, data: bytes) -> Beacon:
        """Parse and verify a datagram.

        Raises:
            BeaconError: not a valid beacon (the message says why).
        """
        if len(data) < _FIXED.size + 1 + SIGNATURE_SIZE:
            raise BeaconError(f"too short for a beacon: {len(data)} bytes")
        if len(data) > MAX_BEACON:
            raise BeaconError(f"too long for a beacon: {len(data)} bytes")
        magic, version, lobby_id, host, port, taken, capacity, size = _FIXED.unpack_from(data)
        if magic != MAGIC:
            raise BeaconError(f"not a p2p-nertz beacon (magic {magic!r})")
        if version != BEACON_VERSION:
            raise BeaconError(
                f"beacon version {version} is not supported (this is {BEACON_VERSION})"
            )
        named = _FIXED.size + size
        if len(data) not in (named + SIGNATURE_SIZE, named + 1 + SIGNATURE_SIZE):
            raise BeaconError(
                f"a beacon with a {size}-byte name is {named + SIGNATURE_SIZE} bytes "
                f"(one more with a deal), not {len(data)}"
            )
        end = len(data) - SIGNATURE_SIZE
        deal = Deal.COMMIT
        if end > named:
            deal_code = data[named]
            if deal_code not in _DEALS:
                raise BeaconError(f"bad beacon field: no deal {deal_code} (1 is shuffle)")
            deal = _DEALS[deal_code]
        try:
            name = data[_FIXED.size : named].decode()
            beacon = cls(
                lobby_id=lobby_id,
                host=PeerId(host),
                port=port,
                name=name,
                taken=taken,
                capacity=capacity,
                deal=deal,
            )
        except ValueError as exc:  # UnicodeDecodeError is a ValueError
            raise BeaconError(f"bad beacon field: {exc}") from None
        if not verify(host, data[end:], _DOMAIN + data[:end]):
            raise BeaconError(f"the beacon's signature does not verify (host {beacon.fingerprint})")
        return beacon
