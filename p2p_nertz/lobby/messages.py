"""The lobby's wire messages: who is at the table, who is ready, and the game that starts.

The lobby runs before a game exists, so its messages cannot use the game envelope (which needs
the game id and roster). Each is a msgpack array followed by the sender's Ed25519 signature::

    wire      = payload signature                 signature: 64 bytes over DOMAIN + payload
    payload   = [3, kind, lobby_id, sender, challenge, body]
                                                  msgpack; sender: 32-byte public key
    DOMAIN    = b"p2p-nertz/v1/lobby\\0"

``challenge`` is the host's challenge for the connection the message is sent on (the host's
first frame, :func:`~p2p_nertz.lobby.framing.read_challenge`) in a guest's message, and empty
in the host's: the host takes a guest's message only on the connection whose challenge it
carries, so a message captured on one connection and replayed on another is refused
(``code`` ``"replayed"``; docs/lobby.md §3).

=========  ============  ====================================================================
kind       direction     body
=========  ============  ====================================================================
``hello``  guest → host  ``[name, endpoint, ready, table, version]``: "seat me; my game
                         endpoint; am I ready, and for which table; the game protocol I
                         speak" (``table``: the :func:`table_digest` of the table the guest
                         said ready for, or empty; sent again every second: a keep-alive,
                         and how ``ready`` changes)
``table``  host → guest  ``[rules, capacity, [[key, name, endpoint, ready], ...], version]``:
                         the table as it is now, host first, then guests in the order they
                         came; a fifth field, ``{"deal": "shuffle"}``, when the game's deal
                         is not the default (``commit``; docs/lobby.md §3)
``start``  host → guest  ``[spec, {key: endpoint}]``: the :class:`GameSpec` wire bytes and
                         every member's game endpoint; the game begins
``bye``    either        ``[reason]``: leaving the lobby (a guest), or closing it (the host)
``refuse`` host → guest  ``[reason]``: not seated (the table is full, the game started, ...)
=========  ============  ====================================================================

A guest that does not know the lobby id yet (it was given ``--peer host:port``) sends its first
``hello`` with 32 zero bytes; the host answers with its ``table``, which carries the real id.
Every decode failure is a :class:`LobbyMessageError` naming what is wrong (and, for the log's
flood summaries, a short :attr:`~LobbyMessageError.code` and the kind if it could be read).

Version 2 added ``table`` to ``hello``: a ``ready`` counts only for the table it names, so a
ready given for one roster is never counted for another (docs/lobby.md §4-5). Version 3
(session 23) added ``challenge``.

The deal (:class:`~p2p_nertz.protocol.spec.Deal`) came later, without a new version: a table of
the default deal is the fields it always was (the same digest), and one dealt by shuffle adds
its options as a last field, as the game spec does; a guest that does not know that field
refuses that table rather than take it for a commit game.

``version`` in ``hello`` and ``table`` (session 40) is the *game's* protocol version this
nertz speaks (:data:`~p2p_nertz.protocol.envelope.PROTOCOL_VERSION`, its one home; a shuffle
game speaks the version after it, ``SHARES_VERSION``): the host seats no guest of another
version and a guest leaves a table of another, each saying so in one line ("bot2 speaks
protocol version 7; this nertz speaks 9"), so mixed builds part before the game rather than
at its first message. A message without it (a nertz before session 40), or with one that is
not a version, is refused as malformed. It is not in the :func:`table_digest`: a table of
another version is never said ready for.
"""

from __future__ import annotations

import enum
import hashlib
import ipaddress
from dataclasses import dataclass
from typing import Any, Final

import msgpack  # type: ignore[import-untyped]

from p2p_nertz.errors import RemoteProtocolError
from p2p_nertz.protocol.envelope import PROTOCOL_VERSION
from p2p_nertz.protocol.identity import (
    SIGNATURE_SIZE,
    Identity,
    PeerId,
    is_valid_peer_id,
    key_fault,
    verify,
)
from p2p_nertz.protocol.names import NAME_RULE, name_fault
from p2p_nertz.protocol.spec import Deal

__all__ = [
    "ANY_LOBBY",
    "CHALLENGE_SIZE",
    "Bye",
    "Hello",
    "LobbyMessage",
    "LobbyMessageError",
    "Refuse",
    "Seat",
    "Start",
    "TableView",
    "check_endpoint",
    "decode",
    "encode",
    "signed_by",
    "table_digest",
]

VERSION: Final = 3
ANY_LOBBY: Final = bytes(32)
"""The lobby id of a first ``hello`` sent to an address (the id is not known yet)."""
MAX_MESSAGE: Final = 32768
CHALLENGE_SIZE: Final = 32
"""Bytes of the host's challenge for a connection (its first frame there, docs/lobby.md §3)."""
_DOMAIN: Final = b"p2p-nertz/v1/lobby\0"
_TABLE_DOMAIN: Final = b"p2p-nertz/v1/lobby-table\0"
DIGEST_SIZE: Final = 32


class LobbyMessageError(RemoteProtocolError, ValueError):
    """Bytes received in the lobby are not a valid, signed lobby message (or not one this
    side takes).

    Attributes:
        code: what is wrong, for counting (``"malformed"``, ``"forged"``, ``"foreign"``,
            ``"out of place"``, ``"rate-limited"``, ...); the message says it in words.
        kind: the message's kind (``"hello"``, ...) if it could be read, else ``None``.
    """

    def __init__(self, message: str, *, code: str = "malformed", kind: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.kind = kind


def shown(value: object) -> str:
    """``value`` as an error says it: its ``repr``, cut short past 60 characters. What a
    stranger sends is repeated in the host's log (the first drop of each kind): a name or an
    endpoint of 30,000 characters must not make a line of 30,000.

    >>> shown("Ann"), shown("x" * 5000)[-24:]
    ("'Ann'", 'xxxxx… (5002 characters)')
    """
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:56]}… ({len(text)} characters)"


def check_endpoint(endpoint: str) -> str:
    """``endpoint`` if it is ``tcp://IPv4:port`` with a usable address and port.

    >>> check_endpoint("tcp://10.0.0.2:5555")
    'tcp://10.0.0.2:5555'

    Raises:
        ValueError: anything else (a name, a wildcard, port 0, another transport).
    """
    if not endpoint.startswith("tcp://"):
        raise ValueError(f"a game endpoint is tcp://IPv4:port, not {shown(endpoint)}")
    host, _, port = endpoint[6:].rpartition(":")
    try:
        address = ipaddress.IPv4Address(host)
        number = int(port)
    except ValueError:
        raise ValueError(f"a game endpoint is tcp://IPv4:port, not {shown(endpoint)}") from None
    if address.is_unspecified or address.is_multicast or not 1 <= number <= 65535:
        raise ValueError(f"not a reachable endpoint: {shown(endpoint)}")
    return endpoint


def _name(value: object) -> str:
    fault = name_fault(value)
    if fault is not None or not isinstance(value, str):  # (the second for the type checker)
        raise ValueError(f"{NAME_RULE} ({fault}): {shown(value)}")
    return value


@dataclass(frozen=True, slots=True)
class Hello:
    """A guest asks for a seat (or says it is still there, or changes ``ready``)."""

    name: str
    endpoint: str
    ready: bool
    table: bytes = b""
    """The :func:`table_digest` of the table ``ready`` is given for (empty: none yet)."""
    version: int = PROTOCOL_VERSION
    """The game protocol version the guest speaks (the host seats only its own)."""


@dataclass(frozen=True, slots=True)
class Seat:
    """One player at the table."""

    peer_id: PeerId
    name: str
    endpoint: str
    ready: bool


@dataclass(frozen=True, slots=True)
class TableView:
    """The host's table: the rules (as :meth:`Rules.to_dict`), capacity, the seats, and how
    the game will be dealt."""

    rules: dict[str, Any]
    capacity: int
    seats: tuple[Seat, ...]
    deal: Deal = Deal.COMMIT
    version: int = PROTOCOL_VERSION
    """The game protocol version the host speaks (a guest sits only at its own)."""


def _options(deal: Deal) -> list[dict[str, str]]:
    """A table's options as they follow its fields: none for the default deal (the bytes and
    digest a table always had), else ``[{"deal": value}]`` (as GameSpec.to_wire's)."""
    return [] if deal is Deal.COMMIT else [{"deal": deal.value}]


MAX_VERSION: Final = 255
"""The largest game protocol version a lobby message may name (the envelope's is one byte)."""


def _version(value: object) -> int:
    """``value`` if it is a game protocol version (an integer 1 to :data:`MAX_VERSION`)."""
    if type(value) is not int or not 1 <= value <= MAX_VERSION:
        raise ValueError(f"a protocol version is an integer 1 to {MAX_VERSION}, not {shown(value)}")
    return value


_NO_VERSION: Final = "it carries no protocol version (a nertz before session 40)"


def _parse_options(options: list[Any]) -> Deal:
    match options:
        case []:
            return Deal.COMMIT
        case [{"deal": str() as deal, **others}] if not others and deal != Deal.COMMIT:
            # (The default is never written: a second spelling of one table would have
            # another digest.)
            if deal in {d.value for d in Deal}:
                return Deal(deal)
    raise ValueError(f"unknown table options {shown(options)}")


def table_digest(lobby_id: bytes, view: TableView) -> bytes:
    """What a guest says ready *for*: SHA-256 over the lobby, the rules, the capacity and every
    seat's key, name and endpoint in seat order, and the deal if it is not the default —
    everything a ``start`` must match — but not
    the ready flags (which change as guests say ready, without changing the game).

    >>> from dataclasses import replace
    >>> ann = Seat(PeerId(bytes(32)), "Ann", "tcp://10.0.0.5:5601", True)
    >>> table = TableView({}, 4, (ann,))
    >>> digest = table_digest(bytes(32), table)
    >>> digest == table_digest(bytes(32), TableView({}, 4, (replace(ann, ready=False),)))
    True
    >>> digest == table_digest(bytes(32), TableView({"draw": 1}, 4, (ann,)))
    False
    >>> digest == table_digest(bytes(32), TableView({}, 4, (ann,), Deal.SHUFFLE))
    False
    """
    # Sorted rule items: two dicts with the same rules in another order are the same table.
    canonical = [
        lobby_id,
        sorted([k, v] for k, v in view.rules.items()),
        view.capacity,
        [[bytes(s.peer_id), s.name, s.endpoint] for s in view.seats],
        *_options(view.deal),
    ]
    packed: bytes = msgpack.packb(canonical, use_bin_type=True)
    return hashlib.sha256(_TABLE_DOMAIN + packed).digest()


@dataclass(frozen=True, slots=True)
class Start:
    """The game begins: its spec (wire bytes) and every member's game endpoint."""

    spec: bytes
    endpoints: dict[PeerId, str]


@dataclass(frozen=True, slots=True)
class Bye:
    """Leaving (a guest) or closing (the host) the lobby."""

    reason: str


@dataclass(frozen=True, slots=True)
class Refuse:
    """The host will not seat this guest."""

    reason: str


Body = Hello | TableView | Start | Bye | Refuse


class _Kind(enum.Enum):
    HELLO = "hello"
    TABLE = "table"
    START = "start"
    BYE = "bye"
    REFUSE = "refuse"


_KIND_NAMES: Final = frozenset(k.value for k in _Kind)

_KIND_OF: Final[dict[type, _Kind]] = {
    Hello: _Kind.HELLO,
    TableView: _Kind.TABLE,
    Start: _Kind.START,
    Bye: _Kind.BYE,
    Refuse: _Kind.REFUSE,
}


@dataclass(frozen=True, slots=True)
class LobbyMessage:
    """A verified lobby message: which lobby, who signed it, what it says, and the host's
    challenge it answers (empty in the host's own messages)."""

    lobby_id: bytes
    sender: PeerId
    body: Body
    challenge: bytes = b""


def _body_fields(body: Body) -> list[Any]:
    match body:
        case Hello(name, endpoint, ready, table, version):
            return [name, endpoint, ready, table, version]
        case TableView(rules, capacity, seats, deal, version):
            seat_fields = [[s.peer_id, s.name, s.endpoint, s.ready] for s in seats]
            return [rules, capacity, seat_fields, version, *_options(deal)]
        case Start(spec, endpoints):
            return [spec, {bytes(k): v for k, v in sorted(endpoints.items())}]
        case Bye(reason) | Refuse(reason):
            return [reason]
    raise TypeError(f"not a lobby message body: {body!r}")  # pragma: no cover


def encode(identity: Identity, lobby_id: bytes, body: Body, challenge: bytes = b"") -> bytes:
    """Sign ``body`` for ``lobby_id`` as ``identity``, answering the host's ``challenge`` (a
    guest's message; empty in the host's).

    Raises:
        ValueError: ``challenge`` is neither empty nor a challenge's size.
    """
    if len(challenge) not in (0, CHALLENGE_SIZE):
        raise ValueError(f"a challenge is {CHALLENGE_SIZE} bytes or none, not {len(challenge)}")
    kind = _KIND_OF[type(body)].value
    payload: bytes = msgpack.packb(
        [VERSION, kind, lobby_id, identity.peer_id, challenge, _body_fields(body)],
        use_bin_type=True,
    )
    return payload + identity.sign(_DOMAIN + payload)


def _key(value: object, whose: str = "a seat's") -> PeerId:
    # A key that may join the roster: the whole check (docs/protocol.md §3.1), not the cheap one.
    if not isinstance(value, bytes):
        raise ValueError(f"{whose} key is not bytes")
    fault = key_fault(value)
    if fault is not None:
        raise ValueError(f"{whose} key is not a usable Ed25519 key ({fault})")
    return PeerId(value)


def _parse_body(kind: _Kind, fields: list[Any]) -> Body:
    match kind, fields:
        case _Kind.HELLO, [name, str() as endpoint, bool() as ready, bytes() as table, version]:
            if len(table) not in (0, DIGEST_SIZE):
                raise ValueError(f"a table digest is {DIGEST_SIZE} bytes or none")
            return Hello(_name(name), check_endpoint(endpoint), ready, table, _version(version))
        case _Kind.HELLO, [_, _, _, _]:
            raise ValueError(_NO_VERSION)
        case _Kind.TABLE, [dict() as rules, int() as capacity, list() as seats, *rest]:
            if not rest or isinstance(rest[0], dict):
                raise ValueError(_NO_VERSION)
            version = _version(rest[0])
            deal = _parse_options(rest[1:])
            if not 1 <= capacity <= 8 or not 1 <= len(seats) <= capacity:
                raise ValueError(f"{len(seats)} seats at a table for {capacity}")
            parsed = []
            for seat in seats:
                match seat:
                    case [key, name, str() as endpoint, bool() as ready]:
                        parsed.append(Seat(_key(key), _name(name), check_endpoint(endpoint), ready))
                    case _:
                        raise ValueError(f"not a seat: {shown(seat)}")
            if len({s.peer_id for s in parsed}) != len(parsed):
                raise ValueError("a key is seated twice")
            return TableView(rules, capacity, tuple(parsed), deal, version)
        case _Kind.START, [bytes() as spec, dict() as endpoints]:
            book = {_key(k): check_endpoint(v) for k, v in endpoints.items() if isinstance(v, str)}
            if len(book) != len(endpoints):
                raise ValueError("an endpoint is not a string")
            return Start(spec, book)
        case _Kind.BYE, [str() as reason]:
            return Bye(reason[:200])
        case _Kind.REFUSE, [str() as reason]:
            return Refuse(reason[:200])
    raise ValueError(f"bad {kind.value} fields")


def signed_by(data: bytes) -> PeerId | None:
    """The ``sender`` field of a lobby message, without checking anything else (the signature
    included): for a transport that learns who sent bytes :func:`decode` already took.

    >>> ann = Identity.generate(seed=bytes(32))
    >>> signed_by(encode(ann, ANY_LOBBY, Bye("gone"))) == ann.peer_id, signed_by(b"junk")
    (True, None)
    """
    try:
        fields = msgpack.unpackb(data[:-SIGNATURE_SIZE], raw=False, strict_map_key=False)
    except Exception:
        return None
    if isinstance(fields, list) and len(fields) == 6 and isinstance(fields[3], bytes):
        return PeerId(fields[3])
    return None


def decode(data: bytes) -> LobbyMessage:
    """Parse and verify a lobby message.

    Raises:
        LobbyMessageError: it is not one (the message says why).
    """
    if len(data) > MAX_MESSAGE:
        raise LobbyMessageError(
            f"a lobby message is at most {MAX_MESSAGE} bytes, not {len(data)}", code="oversized"
        )
    if len(data) <= SIGNATURE_SIZE:
        raise LobbyMessageError(f"too short for a lobby message: {len(data)} bytes")
    payload, signature = data[:-SIGNATURE_SIZE], data[-SIGNATURE_SIZE:]
    try:
        fields = msgpack.unpackb(payload, raw=False, strict_map_key=False)
    except Exception as exc:
        raise LobbyMessageError(f"not msgpack: {exc}") from None
    match fields:
        case [
            int() as version,
            str() as kind_name,
            bytes() as lobby_id,
            bytes() as sender,
            bytes() as challenge,
            list() as body,
        ]:
            pass
        case [int() as version, *_] if version != VERSION:
            raise LobbyMessageError(
                f"lobby message version {version} is not supported "
                f"(this p2p-nertz speaks {VERSION})",
                code="other version",
            )
        case _:
            raise LobbyMessageError(
                "not a lobby message: [version, kind, lobby, sender, challenge, body]"
            )
    # The kind, for the flood summaries, only if it is one of ours (never an attacker's text).
    known = kind_name if kind_name in _KIND_NAMES else None
    if version != VERSION:
        raise LobbyMessageError(
            f"lobby message version {version} is not supported (this p2p-nertz speaks {VERSION})",
            code="other version",
            kind=known,
        )
    if len(lobby_id) != 32:
        raise LobbyMessageError(f"a lobby id is 32 bytes, not {len(lobby_id)}", kind=known)
    if len(challenge) not in (0, CHALLENGE_SIZE):
        raise LobbyMessageError(f"a challenge is {CHALLENGE_SIZE} bytes or none", kind=known)
    if not is_valid_peer_id(sender):
        raise LobbyMessageError("the sender is not a usable public key", kind=known)
    if not verify(sender, signature, _DOMAIN + payload):
        raise LobbyMessageError("the signature does not verify", code="forged", kind=known)
    if known is None:
        raise LobbyMessageError(f"no lobby message is of kind {shown(kind_name)}")
    try:
        kind = _Kind(kind_name)
        # The sender may be seated: the whole key check, after the signature (which a
        # stranger has to pay for) since it costs more than the signature's.
        body_ = _parse_body(kind, body)
        return LobbyMessage(lobby_id, _key(sender, "the sender's"), body_, challenge)
    except ValueError as exc:
        raise LobbyMessageError(f"bad {shown(kind_name)} message: {exc}", kind=known) from None
