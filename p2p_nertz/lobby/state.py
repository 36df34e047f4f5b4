"""The lobby as two sans-I/O state machines: the host's table and a guest's seat.

Theory of operation
-------------------
Convening (DESIGN.md §5.1) needs somebody to propose the roster; the *host* does, and only
until the game starts: after that it is a member like the others. The host keeps the table —
its own seat first, then each guest in the order they came — and answers every guest message
with the table as it now is (the guests send ``hello`` every second, so a lost answer is
repaired by the next one and a guest that stops sending is unseated after ``guest_timeout``).
When everybody is ready and the rules accept the number of players, the host fixes the
:class:`~p2p_nertz.protocol.spec.GameSpec` and sends ``start`` with every member's endpoint.

Nobody has to trust the host with anything that matters: a guest checks that the spec it
receives seats it, with the rules it was shown and the endpoint it gave, and the game itself
begins with every member signing a ``join`` for that spec's id. A host that lies in the lobby
can only fail to start a game.

Both machines take bytes and the time and return what to send; neither touches a socket, so
they are tested without any (and the runtime in :mod:`p2p_nertz.runtime.lobby` is thin).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from p2p_nertz.errors import InvalidRulesError, NertzError
from p2p_nertz.lobby.beacon import Beacon
from p2p_nertz.lobby.messages import (
    ANY_LOBBY,
    Bye,
    Hello,
    LobbyMessage,
    LobbyMessageError,
    Refuse,
    Seat,
    Start,
    TableView,
    check_endpoint,
    decode,
    encode,
)
from p2p_nertz.protocol.identity import Identity, PeerId, fingerprint
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rules import Rules

__all__ = ["GuestLobby", "HostLobby", "LobbyError", "Out", "Session"]

GUEST_TIMEOUT: Final = 5.0
"""Seconds without a ``hello`` after which the host unseats a guest."""


class LobbyError(NertzError):
    """The lobby cannot go on as asked: not everybody is ready, the table is full or closed,
    the host refused us, or the game it started is not the one we were shown."""


@dataclass(frozen=True, slots=True)
class Out:
    """A message to send: ``to`` one guest, or to every seated guest when ``to`` is ``None``."""

    to: PeerId | None
    data: bytes


@dataclass(frozen=True, slots=True)
class Session:
    """A started game, as a member needs it to run its node."""

    spec: GameSpec
    endpoints: dict[PeerId, str]

    @property
    def game_id(self) -> bytes:
        """The game id."""
        return self.spec.game_id


class HostLobby:
    """The host's table.

    Args:
        identity: the host's key.
        name: the host's display name.
        endpoint: the host's game endpoint (``tcp://IPv4:port``).
        rules: the rules of the game.
        lobby_id: 32 bytes naming this lobby (random; chosen by the caller).
        capacity: most players at the table, 1 to 8.
        guest_timeout: seconds of silence after which a guest is unseated.

    Raises:
        ValueError: a bad endpoint, id or capacity.
    """

    def __init__(
        self,
        identity: Identity,
        name: str,
        endpoint: str,
        rules: Rules,
        *,
        lobby_id: bytes,
        capacity: int = 8,
        guest_timeout: float = GUEST_TIMEOUT,
    ) -> None:
        if len(lobby_id) != 32 or lobby_id == ANY_LOBBY:
            raise ValueError("a lobby id is 32 bytes, not all zero")
        if not 1 <= capacity <= 8:
            raise ValueError(f"a table seats 1 to 8 players, not {capacity}")
        self.identity = identity
        self.lobby_id = lobby_id
        self.rules = rules
        self.capacity = capacity
        self.guest_timeout = guest_timeout
        self._host = Seat(identity.peer_id, name, check_endpoint(endpoint), True)
        self._guests: dict[PeerId, Seat] = {}
        self._heard: dict[PeerId, float] = {}
        self.started: Session | None = None
        self.closed = False
        self.log: list[str] = []
        """What happened at the table, one line each (who came, who left, refusals)."""

    # -- views -------------------------------------------------------------------------------
    @property
    def seats(self) -> tuple[Seat, ...]:
        """The host, then the guests in the order they came."""
        return (self._host, *self._guests.values())

    def view(self) -> TableView:
        """The table as guests see it."""
        return TableView(self.rules.to_dict(), self.capacity, self.seats)

    def beacon(self, port: int) -> Beacon:
        """The beacon announcing this table's lobby on TCP ``port``."""
        return Beacon(
            lobby_id=self.lobby_id,
            host=self.identity.peer_id,
            port=port,
            name=self._host.name,
            taken=min(len(self.seats), self.capacity),
            capacity=self.capacity,
        )

    def why_not_start(self) -> str | None:
        """Why the game cannot start now, or ``None`` if it can."""
        if self.started is not None:
            return "the game has already started"
        if self.closed:
            return "the lobby is closed"
        waiting = [s.name for s in self._guests.values() if not s.ready]
        if waiting:
            return f"waiting for {', '.join(waiting)} to be ready"
        try:
            self.rules.validate_players(len(self.seats))
        except InvalidRulesError as exc:
            return str(exc)
        return None

    # -- inputs ------------------------------------------------------------------------------
    def _send(self, to: PeerId | None, body: Hello | TableView | Start | Bye | Refuse) -> Out:
        return Out(to, encode(self.identity, self.lobby_id, body))

    def receive(self, data: bytes, now: float, *, sender: PeerId | None = None) -> list[Out]:
        """Take bytes from a guest; return what to send.

        Args:
            data: the bytes.
            now: the time, in seconds.
            sender: the key the transport says the bytes came from, if it knows; a message
                signed by another key is refused.

        Raises:
            LobbyMessageError: the bytes are not a valid lobby message for this table (the
                table is unchanged).
        """
        message = decode(data)
        if sender is not None and message.sender != sender:
            raise _foreign("signed by another key than the connection's")
        if message.lobby_id not in (self.lobby_id, ANY_LOBBY):
            raise _foreign("for another lobby")
        if message.sender == self.identity.peer_id:
            raise _foreign("signed with the host's own key")
        return self._take(message, now)

    def _take(self, message: LobbyMessage, now: float) -> list[Out]:
        who = message.sender
        body = message.body
        if isinstance(body, Bye):
            if who in self._guests and self.started is None:
                seat = self._guests.pop(who)
                self._heard.pop(who, None)
                self.log.append(f"{seat.name} ({fingerprint(who)}) left: {body.reason}")
                return [self._send(None, self.view())]
            return []
        if not isinstance(body, Hello):
            raise _foreign(f"a guest cannot send {type(body).__name__.lower()}")
        if self.started is not None:
            if who in self.started.endpoints:
                return [self._send(who, Start(self.started.spec.to_wire(), self.started.endpoints))]
            return [self._send(who, Refuse("the game has started"))]
        if self.closed:
            return [self._send(who, Refuse("the lobby is closed"))]
        seat = Seat(who, body.name, body.endpoint, body.ready)
        taken = {s.endpoint for s in self.seats if s.peer_id != who}
        if body.endpoint in taken:
            return [self._send(who, Refuse(f"endpoint {body.endpoint} is already taken"))]
        if who not in self._guests and len(self.seats) >= self.capacity:
            return [self._send(who, Refuse(f"the table is full ({self.capacity} players)"))]
        self._heard[who] = now
        if self._guests.get(who) == seat:
            return [self._send(who, self.view())]
        if who not in self._guests:
            self.log.append(f"{body.name} ({fingerprint(who)}) sat down")
        self._guests[who] = seat
        return [self._send(None, self.view())]

    def tick(self, now: float) -> list[Out]:
        """Unseat guests silent for ``guest_timeout``; return what to send."""
        if self.started is not None:
            return []
        gone = [p for p, t in self._heard.items() if now - t > self.guest_timeout]
        for who in gone:
            seat = self._guests.pop(who)
            del self._heard[who]
            self.log.append(f"{seat.name} ({fingerprint(who)}) timed out")
        return [self._send(None, self.view())] if gone else []

    def start(self, label: bytes) -> tuple[Session, list[Out]]:
        """Fix the game and tell every guest.

        Args:
            label: bytes that make this game distinct from another of the same people and
                rules (e.g. random, or the lobby id); at most 64.

        Raises:
            LobbyError: the game cannot start (see :meth:`why_not_start`).
        """
        reason = self.why_not_start()
        if reason is not None:
            raise LobbyError(f"cannot start: {reason}")
        seats = self.seats
        try:
            spec = GameSpec.create([(s.peer_id, s.name) for s in seats], self.rules, label)
        except InvalidRulesError as exc:
            raise LobbyError(f"cannot start: {exc}") from None
        session = Session(spec, {s.peer_id: s.endpoint for s in seats})
        self.started = session
        self.log.append(f"the game {spec.game_id.hex()[:16]} started with {len(seats)} players")
        return session, [self._send(None, Start(spec.to_wire(), session.endpoints))]

    def close(self, reason: str) -> list[Out]:
        """Close the lobby (nobody else will be seated); tell the guests."""
        self.closed = True
        return [self._send(None, Bye(reason))]


def _foreign(what: str) -> LobbyMessageError:
    return LobbyMessageError(f"refused a lobby message {what}")


class GuestLobby:
    """A guest's seat at a host's table.

    Args:
        identity: the guest's key.
        name: its display name.
        endpoint: its game endpoint (``tcp://IPv4:port``).
        host: the host's key, if known (from a beacon); otherwise the first table's signer is
            taken as the host (the user sees its fingerprint).
        lobby_id: the lobby's id, if known (from a beacon).
        ready: whether to say ``ready`` from the start.
    """

    def __init__(
        self,
        identity: Identity,
        name: str,
        endpoint: str,
        *,
        host: PeerId | None = None,
        lobby_id: bytes = ANY_LOBBY,
        ready: bool = True,
    ) -> None:
        self.identity = identity
        self.name = name
        self.endpoint = check_endpoint(endpoint)
        self.host = host
        self.lobby_id = lobby_id
        self.ready = ready
        self.table: TableView | None = None
        self.session: Session | None = None

    def hello(self) -> bytes:
        """The ``hello`` to send now (and every second while waiting)."""
        return encode(self.identity, self.lobby_id, Hello(self.name, self.endpoint, self.ready))

    def bye(self, reason: str) -> bytes:
        """The ``bye`` to send when leaving the lobby."""
        return encode(self.identity, self.lobby_id, Bye(reason))

    def receive(self, data: bytes) -> TableView | Session | None:
        """Take bytes from the host: the new table, the started game, or ``None`` (ignored).

        Raises:
            LobbyMessageError: the bytes are not a valid message from this lobby's host.
            LobbyError: the host refused us or closed the lobby, or started a game that is
                not the one we were shown.
        """
        message = decode(data)
        if self.host is None:
            self.host = message.sender
        if message.sender != self.host:
            raise _foreign(f"from {fingerprint(message.sender)}, not the host")
        if self.lobby_id == ANY_LOBBY:
            self.lobby_id = message.lobby_id
        if message.lobby_id != self.lobby_id:
            raise _foreign("for another lobby")
        body = message.body
        match body:
            case TableView():
                if self.session is None:
                    self.table = body
                    return body
                return None
            case Start():
                if self.session is None:
                    self.session = self._check_start(body)
                return self.session
            case Refuse(reason):
                raise LobbyError(f"the host refused us: {reason}")
            case Bye(reason):
                if self.session is None:
                    raise LobbyError(f"the host closed the lobby: {reason}")
                return None
        raise _foreign(f"a host cannot send {type(body).__name__.lower()}")

    def _check_start(self, start: Start) -> Session:
        try:
            spec = GameSpec.from_wire(start.spec)
        except InvalidRulesError as exc:
            raise LobbyError(f"the host started a game with a bad spec: {exc}") from None
        own = self.identity.peer_id
        if own not in spec.peer_ids:
            raise LobbyError("the host started a game without us")
        if set(start.endpoints) != set(spec.peer_ids):
            raise LobbyError("the host's start lacks a member's endpoint")
        if start.endpoints[own] != self.endpoint:
            raise LobbyError(f"the host gave us endpoint {start.endpoints[own]}, not ours")
        if self.table is not None:
            if spec.rules.to_dict() != self.table.rules:
                raise LobbyError("the host started with other rules than it showed")
            shown = {s.peer_id for s in self.table.seats}
            if not set(spec.peer_ids) <= shown:
                raise LobbyError("the host started with a player it never showed")
        if self.host is not None and self.host not in spec.peer_ids:
            raise LobbyError("the host started a game it does not play in")
        return Session(spec, dict(start.endpoints))
