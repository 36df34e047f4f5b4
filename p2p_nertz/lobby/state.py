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

Trusting nobody (docs/lobby.md §6):

* a guest's ``ready`` names the table it is given for (:func:`table_digest`); the host counts
  it only while the table is still that one, and a guest checks that a ``start`` is exactly a
  table it said ready for — so nobody signs a ``join`` for rules or players it was not shown;
* the host may make its table invite-only (a list of fingerprints), may remove a seat (the
  key is then refused for the rest of this lobby), and takes at most a few messages a second
  from each key and from all the keys not seated together (:class:`TokenBuckets`), before it
  checks a signature;
* the host seats no guest that speaks another game protocol version than its own, and a guest
  sits at no table of another (each message carries it: :mod:`p2p_nertz.lobby.messages`), each
  side saying so in one line, before any game is made (session 40).

Both machines take bytes and the time and return what to send; neither touches a socket, so
they are tested without any (and the runtime in :mod:`p2p_nertz.runtime.lobby` is thin).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final

from p2p_nertz.errors import InvalidRulesError, NertzError
from p2p_nertz.lobby.beacon import Beacon
from p2p_nertz.lobby.limits import TokenBuckets
from p2p_nertz.lobby.messages import (
    ANY_LOBBY,
    CHALLENGE_SIZE,
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
    table_digest,
)
from p2p_nertz.protocol.envelope import PROTOCOL_VERSION
from p2p_nertz.protocol.identity import Identity, PeerId, fingerprint
from p2p_nertz.protocol.listening import Listening, heard_at, silence_vote_at
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.rules import Rules

__all__ = [
    "GuestLobby",
    "HostLobby",
    "LobbyError",
    "Out",
    "Session",
    "StartRefusedError",
    "parse_invite",
]

GUEST_TIMEOUT: Final = 5.0
"""Seconds without a ``hello`` after which the host unseats a guest."""
LISTEN_GAP: Final = 2.0
"""The longest pause between two of the host's inputs (the runtime ticks every 0.5 s) that is
not the host's own stop; after a longer one the host listens this long before it unseats
anybody (:mod:`p2p_nertz.protocol.listening`: a stop of its own is no guest's silence)."""
KEY_RATE: Final = 5.0
"""Messages a second the host takes from one key (after a first burst of :data:`KEY_BURST`)."""
KEY_BURST: Final = 10
NEWCOMER_RATE: Final = 20.0
"""Messages a second the host takes from all the keys not seated, together (burst
:data:`NEWCOMER_BURST`): what bounds the signatures a crowd of throwaway keys makes it check."""
NEWCOMER_BURST: Final = 40


class LobbyError(NertzError):
    """The lobby cannot go on as asked: not everybody is ready, the table is full or closed,
    the host refused us, or the game it started is not the one we were shown."""


class StartRefusedError(LobbyError):
    """The host's ``start`` is not a table we said ready for (or came before any table, or the
    host changed the rules under a guest that stays ready): we join nothing, sign nothing."""


_FINGERPRINT = re.compile(r"[a-z2-7]{4}(-[a-z2-7]{4}){3}")
_HEX_KEY = re.compile(r"[0-9a-f]{64}")


def parse_invite(text: str) -> str:
    """The fingerprint an invite names: a fingerprint (``xxxx-xxxx-xxxx-xxxx``, as ``nertz
    keygen --show`` prints it) or a whole public key in hex.

    >>> parse_invite(" COPD-sqhg-jnkj-c4ra ")
    'copd-sqhg-jnkj-c4ra'

    Raises:
        ValueError: it is neither.
    """
    word = text.strip().lower()
    if _HEX_KEY.fullmatch(word):
        return fingerprint(bytes.fromhex(word))
    if not _FINGERPRINT.fullmatch(word):
        raise ValueError(f"not a fingerprint (xxxx-xxxx-xxxx-xxxx) nor a hex key: {text.strip()!r}")
    return word


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


def waiting_for(seats: Sequence[Seat], rules: Rules, *, players: int | None = None) -> str | None:
    """What a table waits for before its game can start, in words, or ``None`` if nothing
    (then it waits for the host to start it). Shown on the host's and the guests' screens and
    in ``nertz host``/``join``'s ``table`` lines (issue 15: "the lobby says what it waits for").

    Args:
        seats: the table's seats, the host first (always ready).
        rules: the table's rules (pairs needs an even number, at least 4).
        players: the number the host starts at (``nertz host --players``), if it said one;
            else the fewest the rules let play together (2; 4 in pairs).

    >>> ann, dee = (Seat(PeerId(bytes([n]) * 32), name, "tcp://10.0.0.5:5601", False)
    ...             for n, name in ((1, "Ann"), (2, "Dee")))
    >>> waiting_for([ann], Rules(), players=3)
    'waiting for 2 more seats'
    >>> waiting_for([ann, dee], Rules())
    'waiting for Dee to be ready'
    >>> waiting_for([ann, replace(dee, ready=True)], Rules(pairs=True))
    'waiting for 2 more seats'
    >>> waiting_for([ann, replace(dee, ready=True)], Rules()) is None
    True
    """
    if players is None:
        players = 4 if rules.pairs else 2
        if rules.pairs and len(seats) > players and len(seats) % 2:
            players = len(seats) + 1
    missing = players - len(seats)
    wanted = []
    if missing > 0:
        wanted.append(f"{missing} more seat{'s' if missing > 1 else ''}")
    unready = [s.name for s in seats[1:] if not s.ready]
    if unready:
        wanted.append(f"{_names(unready)} to be ready")
    return "waiting for " + " and ".join(wanted) if wanted else None


def _names(names: Sequence[str]) -> str:
    """``"Bob"``, ``"Bob and Cy"``, ``"Bob, Cy and Dee"``."""
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


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
        invited: if given, the table is invite-only: only these fingerprints (see
            :func:`parse_invite`) are seated; anybody else is refused with a reason.
        deal: how the game will be dealt (shown with the rules; docs/lobby.md §3).
        version: the game protocol version this host speaks (a guest of another is not
            seated); another than this build's only in tests.

    Raises:
        ValueError: a bad endpoint, id, capacity or invite.
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
        invited: Iterable[str] | None = None,
        deal: Deal = Deal.COMMIT,
        version: int = PROTOCOL_VERSION,
    ) -> None:
        if len(lobby_id) != 32 or lobby_id == ANY_LOBBY:
            raise ValueError("a lobby id is 32 bytes, not all zero")
        if not 1 <= capacity <= 8:
            raise ValueError(f"a table seats 1 to 8 players, not {capacity}")
        self.identity = identity
        self.lobby_id = lobby_id
        self.rules = rules
        self.deal = Deal(deal)
        self.version = version
        self._told_version: set[PeerId] = set()  # (one line each in the log, not one a second)
        self.capacity = capacity
        self.guest_timeout = guest_timeout
        self._host = Seat(identity.peer_id, name, check_endpoint(endpoint), True)
        self._guests: dict[PeerId, Hello] = {}
        self._heard: dict[PeerId, float] = {}
        # Since when we have listened without a break (made at the first input: no clock here).
        self._ears: Listening | None = None
        self.invited: set[str] | None = (
            None if invited is None else {parse_invite(i) for i in invited}
        )
        """The fingerprints that may sit, or ``None``: anybody may (docs/lobby.md §6)."""
        self.removed: set[PeerId] = set()
        """Keys the host removed: refused for the rest of this lobby (unless invited again)."""
        self._per_key = TokenBuckets(rate=KEY_RATE, burst=KEY_BURST)
        self._newcomers = TokenBuckets(rate=NEWCOMER_RATE, burst=NEWCOMER_BURST, max_keys=1)
        self.started: Session | None = None
        self.closed = False
        self.log: list[str] = []
        """What happened at the table, one line each (who came, who left, who was removed)."""
        self.refusals: list[tuple[PeerId, str, str]] = []
        """Hellos refused since the caller last emptied this: ``(key, code, reason)``; the
        runtime counts them (a crowd of strangers must not write a line each)."""

    # -- views -------------------------------------------------------------------------------
    @property
    def seats(self) -> tuple[Seat, ...]:
        """The host, then the guests in the order they came; a guest is ready only if its
        last ``hello`` said ready for the table as it is now."""
        unready = self._unready_view()
        digest = table_digest(self.lobby_id, unready)
        return (
            self._host,
            *(
                replace(seat, ready=hello.ready and hello.table == digest)
                for seat, hello in zip(unready.seats[1:], self._guests.values(), strict=True)
            ),
        )

    def _unready_view(self) -> TableView:
        guests = (Seat(p, h.name, h.endpoint, False) for p, h in self._guests.items())
        return TableView(
            self.rules.to_dict(), self.capacity, (self._host, *guests), self.deal, self.version
        )

    def digest(self) -> bytes:
        """The :func:`table_digest` of the table now: what a guest's ``ready`` must name."""
        return table_digest(self.lobby_id, self._unready_view())

    def view(self) -> TableView:
        """The table as guests see it."""
        return TableView(self.rules.to_dict(), self.capacity, self.seats, self.deal, self.version)

    def beacon(self, port: int) -> Beacon:
        """The beacon announcing this table's lobby on TCP ``port``."""
        return Beacon(
            lobby_id=self.lobby_id,
            host=self.identity.peer_id,
            port=port,
            name=self._host.name,
            taken=min(len(self.seats), self.capacity),
            capacity=self.capacity,
            deal=self.deal,
        )

    def why_not_start(self) -> str | None:
        """Why the game cannot start now, or ``None`` if it can."""
        if self.started is not None:
            return "the game has already started"
        if self.closed:
            return "the lobby is closed"
        waiting = [s.name for s in self.seats[1:] if not s.ready]
        if waiting:
            return f"waiting for {_names(waiting)} to be ready"
        try:
            self.rules.validate_players(len(self.seats))
        except InvalidRulesError as exc:
            return str(exc)
        return None

    # -- inputs ------------------------------------------------------------------------------
    def _send(self, to: PeerId | None, body: Hello | TableView | Start | Bye | Refuse) -> Out:
        return Out(to, encode(self.identity, self.lobby_id, body))

    def receive(
        self, data: bytes, now: float, *, challenge: bytes, sender: PeerId | None = None
    ) -> list[Out]:
        """Take bytes from a guest; return what to send.

        Args:
            data: the bytes.
            now: the time, in seconds.
            challenge: the challenge the host sent on the connection the bytes came on; a
                message that answers another (one replayed from another connection) is refused
                before it spends its signer's rate (docs/lobby.md §3).
            sender: the key the transport says the bytes came from, if it knows; a message
                signed by another key is refused.

        Raises:
            ValueError: ``challenge`` is not a challenge (a caller's mistake).
            LobbyMessageError: the bytes are not a valid lobby message for this table and
                connection (``code`` ``"replayed"``: it answers another challenge), or the
                sender is over its rate (``code`` ``"rate-limited"``; checked before the
                signature when the transport names the sender); the table is unchanged.
        """
        if len(challenge) != CHALLENGE_SIZE:
            raise ValueError(f"a connection's challenge is {CHALLENGE_SIZE} bytes")
        self._saw(now)
        if sender is not None:
            self._admit(sender, now)
        message = decode(data)
        if message.challenge != challenge:
            raise _foreign("that answers another connection's challenge", code="replayed")
        if sender is not None and message.sender != sender:
            raise _foreign("signed by another key than the connection's", code="forged")
        if sender is None:
            self._admit(message.sender, now)
        if message.lobby_id not in (self.lobby_id, ANY_LOBBY):
            raise _foreign("for another lobby")
        if message.sender == self.identity.peer_id:
            # Only the host's key signs so: a second nertz of the host's own player, most
            # often a friend on the same machine and account, whose `nertz join` took the
            # same default key. Dropped unanswered, it waited at "connecting…" for ever while
            # the host read "forged" (session 44): it is told why, and what to do.
            if not isinstance(message.body, Hello):
                raise _foreign("signed with the host's own key", code="forged")
            return [self._refuse(message.sender, "own key", OWN_KEY)]
        return self._take(message, now)

    def _admit(self, who: PeerId, now: float) -> None:
        """Spend a token of ``who``'s, and of the newcomers' if it is not seated."""
        if not self._per_key.allow(who, now):
            raise LobbyMessageError(
                f"{fingerprint(who)} sends more than {KEY_RATE:g} messages a second",
                code="rate-limited",
            )
        members = self.started.endpoints if self.started is not None else self._guests
        if who not in members and not self._newcomers.allow(b"", now):
            raise LobbyMessageError(
                f"keys not seated send more than {NEWCOMER_RATE:g} messages a second",
                code="rate-limited",
            )

    def _take(self, message: LobbyMessage, now: float) -> list[Out]:
        who = message.sender
        body = message.body
        if isinstance(body, Bye):
            if who in self._guests and self.started is None:
                hello = self._guests.pop(who)
                self._heard.pop(who, None)
                self.log.append(f"{hello.name} ({fingerprint(who)}) left: {body.reason}")
                return [self._send(None, self.view())]
            if self.started is not None and who in self.started.endpoints:
                # A member that refused the start says why: the host's person should know.
                self.log.append(f"{fingerprint(who)} did not join the game: {body.reason}")
            return []
        if not isinstance(body, Hello):
            raise _foreign(
                f"a guest cannot send {type(body).__name__.lower()}", code="out of place"
            )
        if self.started is not None:
            if who in self.started.endpoints:
                return [self._send(who, Start(self.started.spec.to_wire(), self.started.endpoints))]
            return [self._refuse(who, "started", "the game has started")]
        if self.closed:
            return [self._refuse(who, "closed", "the lobby is closed")]
        if body.version != self.version:
            if who not in self._told_version:  # (the person hosting is told once)
                self._told_version.add(who)
                self.log.append(
                    f"{body.name} ({fingerprint(who)}) speaks protocol version {body.version}; "
                    f"this nertz speaks {self.version}: not seated"
                )
            reason = f"this table speaks protocol version {self.version}; {body.name} speaks "
            return [self._refuse(who, "other version", f"{reason}{body.version}")]
        if who in self.removed:
            return [self._refuse(who, "removed", "the host removed you from this table")]
        if self.invited is not None and fingerprint(who) not in self.invited:
            return [
                self._refuse(
                    who,
                    "not invited",
                    f"this table is invite-only and {fingerprint(who)} is not invited",
                )
            ]
        taken = {s.endpoint for s in self.seats if s.peer_id != who}
        if body.endpoint in taken:
            return [
                self._refuse(who, "endpoint taken", f"endpoint {body.endpoint} is already taken")
            ]
        if who not in self._guests and len(self.seats) >= self.capacity:
            return [self._refuse(who, "full", f"the table is full ({self.capacity} players)")]
        self._heard[who] = now
        before = self.seats
        if who not in self._guests:
            self.log.append(f"{body.name} ({fingerprint(who)}) sat down")
        self._guests[who] = body
        if self.seats == before:
            return [self._send(who, self.view())]
        return [self._send(None, self.view())]

    def _refuse(self, who: PeerId, code: str, reason: str) -> Out:
        self.refusals.append((who, code, reason))
        return self._send(who, Refuse(reason))

    def remove(self, who: PeerId, reason: str = "removed by the host") -> list[Out]:
        """Unseat ``who`` and refuse it for the rest of this lobby (unless invited
        again with :meth:`invite`); it is told, the others see the table without it.

        Raises:
            LobbyError: the game has started, or ``who`` is not a guest at this table.
        """
        if self.started is not None:
            raise LobbyError("the game has started: nobody can be removed any more")
        hello = self._guests.pop(who, None)
        if hello is None:
            raise LobbyError(f"{fingerprint(who)} is not a guest at this table")
        self._heard.pop(who, None)
        self.removed.add(who)
        self.log.append(f"{hello.name} ({fingerprint(who)}) was removed: {reason}")
        return [
            self._send(who, Refuse(f"the host removed you from this table: {reason}")),
            self._send(None, self.view()),
        ]

    def invite(self, text: str) -> str:
        """Let the key with this fingerprint (see :func:`parse_invite`) sit: add it to the
        invite list (if the table has one) and lift a removal; return the fingerprint.

        Raises:
            ValueError: ``text`` is not a fingerprint.
        """
        wanted = parse_invite(text)
        if self.invited is not None:
            self.invited.add(wanted)
        self.removed = {p for p in self.removed if fingerprint(p) != wanted}
        return wanted

    def _saw(self, now: float) -> Listening:
        self._ears = heard_at(self._ears, now, LISTEN_GAP)
        return self._ears

    def tick(self, now: float) -> list[Out]:
        """Unseat guests silent for ``guest_timeout``; return what to send.

        A silence is counted only while the host listened (:func:`silence_vote_at`): woken
        from a stop of its own (``SIGSTOP``, a lid, a loaded machine) longer than
        :data:`LISTEN_GAP`, the host first reads the hellos that waited for it (a live
        guest says one every second) rather than unseat every guest for its own stop.
        """
        if self.started is not None:
            return []
        ears = self._saw(now)
        gone = [
            p for p, t in self._heard.items() if now > silence_vote_at(t, self.guest_timeout, ears)
        ]
        for who in gone:
            hello = self._guests.pop(who)
            del self._heard[who]
            self.log.append(f"{hello.name} ({fingerprint(who)}) timed out")
        return [self._send(None, self.view())] if gone else []

    def start(self, label: bytes | None = None) -> tuple[Session, list[Out]]:
        """Fix the game and tell every guest.

        Args:
            label: bytes that make this game distinct from another of the same people and
                rules; at most 64. The lobby id by default, and guests take no other
                (:class:`GuestLobby`): only a test passes another, to play a lying host.

        Raises:
            LobbyError: the game cannot start (see :meth:`why_not_start`).
        """
        reason = self.why_not_start()
        if reason is not None:
            raise LobbyError(f"cannot start: {reason}")
        seats = self.seats
        try:
            members = [(s.peer_id, s.name) for s in seats]
            label = self.lobby_id if label is None else label
            spec = GameSpec.create(members, self.rules, label, deal=self.deal)
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


OWN_KEY = (
    "this key is the host's own (one player cannot sit twice); a second player on this "
    "machine needs a key of their own: nertz keygen --key FILE, then join with --key FILE"
)
"""Why a ``hello`` signed with the host's own key is refused (a friend on the same machine
and account: ``nertz join`` took the default key, the host's)."""


def _foreign(what: str, *, code: str = "foreign") -> LobbyMessageError:
    return LobbyMessageError(f"refused a lobby message {what}", code=code)


class GuestLobby:
    """A guest's seat at a host's table.

    The guest says ready *for a table*: its ``hello`` names the :func:`table_digest` of the
    table it was shown, and it takes a ``start`` only if that is exactly one of the last tables it
    said ready for (the same rules, the same players with the same names and endpoints, labelled
    with this lobby's id). When the table changes, a guest that ``stay_ready`` accepts the new
    one if its rules are the first ones shown (a bot: it is shown, and prints, every table);
    any other (a person) is not ready any more until it says so again.

    Args:
        identity: the guest's key.
        name: its display name.
        endpoint: its game endpoint (``tcp://IPv4:port``).
        host: the host's key, if known (from a beacon); otherwise the first table's signer is
            taken as the host (the user sees its fingerprint).
        lobby_id: the lobby's id, if known (from a beacon).
        ready: whether to say ``ready`` from the start (for the first table shown).
        stay_ready: stay ready when the players at the table change (a bot, or ``nertz
            join``: nobody could say it again); such a guest takes only the rules it was first
            shown, and leaves if the host shows others.
        version: the game protocol version this guest speaks (it leaves a table of another);
            another than this build's only in tests.
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
        stay_ready: bool = False,
        version: int = PROTOCOL_VERSION,
    ) -> None:
        self.identity = identity
        self.version = version
        self.name = name
        self.endpoint = check_endpoint(endpoint)
        self.host = host
        self.lobby_id = lobby_id
        self.ready = ready
        self.stay_ready = stay_ready
        self.table: TableView | None = None
        self.session: Session | None = None
        self._ready_for: dict[bytes, TableView] = {}  # digest -> a table we said ready for
        self._said: tuple[bool, bytes] | None = None
        self.resets = 0
        """How many times a changed table made us not ready (a person must say it again)."""
        self.challenge = b""
        """The host's challenge on the connection we send on now (docs/lobby.md §3): the
        transport sets it from each new connection's first frame; every message we sign
        carries it."""

    @property
    def accepted(self) -> TableView | None:
        """The table we last said ready for (``None``: not ready for any)."""
        return next(reversed(self._ready_for.values()), None)

    def _digest(self, view: TableView) -> bytes:
        return table_digest(self.lobby_id, view)

    def hello(self) -> bytes:
        """The ``hello`` to send now (and every second while waiting)."""
        if self.ready and self.table is not None:
            for_table = self._digest(self.table)
            self._ready_for.pop(for_table, None)  # (now the latest)
            self._ready_for[for_table] = self.table
            while len(self._ready_for) > _READY_KEPT:
                del self._ready_for[next(iter(self._ready_for))]
        else:
            self._ready_for.clear()
            for_table = b""
        self._said = (self.ready, for_table)
        body = Hello(self.name, self.endpoint, self.ready, for_table, self.version)
        return encode(self.identity, self.lobby_id, body, self.challenge)

    def hello_due(self) -> bool:
        """Whether the host has not heard what we now say (ready or not, and for which table):
        a ``hello`` should go now rather than at the next keep-alive."""
        if self._said is None:
            return True
        now = self._digest(self.table) if self.ready and self.table is not None else b""
        return self._said != (self.ready, now)

    def bye(self, reason: str) -> bytes:
        """The ``bye`` to send when leaving the lobby."""
        return encode(self.identity, self.lobby_id, Bye(reason), self.challenge)

    def receive(self, data: bytes) -> TableView | Session | None:
        """Take bytes from the host: the new table, the started game, or ``None`` (ignored).

        Raises:
            LobbyMessageError: the bytes are not a valid message from this lobby's host.
            StartRefusedError: the host started a game that is not a table we said ready for,
                or changed the rules of a guest that stays ready (we join nothing).
            LobbyError: the host refused us or closed the lobby, or speaks another version
                of the lobby's messages (it can say nothing we read: we stop at once rather
                than wait for its silence to time out), or shows a table of another game
                protocol version (we could play no game of it).
        """
        try:
            message = decode(data)
        except LobbyMessageError as exc:
            if exc.code == "other version":
                raise LobbyError(
                    f"the host speaks another lobby: {exc}; upgrade the older side"
                ) from None
            raise
        if self.host is None:
            self.host = message.sender
        if message.sender != self.host:
            raise _foreign(f"from {fingerprint(message.sender)}, not the host", code="forged")
        if self.lobby_id == ANY_LOBBY:
            self.lobby_id = message.lobby_id
        if message.lobby_id != self.lobby_id:
            raise _foreign("for another lobby")
        body = message.body
        match body:
            case TableView():
                if body.version != self.version:
                    raise LobbyError(
                        f"{body.seats[0].name} speaks protocol version {body.version}; "
                        f"this nertz speaks {self.version}: not joined"
                    )
                if self.session is None:
                    self._shown(body)
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
        raise _foreign(f"a host cannot send {type(body).__name__.lower()}", code="out of place")

    def _shown(self, view: TableView) -> None:
        """A new table. A ready counts only for the tables it named (docs/lobby.md §6): a
        guest that stays ready says so for this one with its next ``hello``; a person who said
        ready for another table is not ready any more."""
        if self.stay_ready and self.table is not None:
            # Nobody is there to read new rules and say ready again: the rules a guest that
            # stays ready sat down for are the ones it plays, or none (the honest host never
            # changes them); the deal likewise.
            if view.rules != self.table.rules:
                raise StartRefusedError("the host changed the rules after it showed them")
            if view.deal != self.table.deal:
                raise StartRefusedError(
                    f"the host changed the deal after it showed it ({self.table.deal} "
                    f"to {view.deal})"
                )
        self.table = view
        if not self.stay_ready and self._ready_for and self._digest(view) not in self._ready_for:
            self.ready = False
            self._ready_for.clear()
            self.resets += 1

    def _check_start(self, start: Start) -> Session:
        if self.table is None:
            raise StartRefusedError("the host started a game before it showed us any table")
        if not self._ready_for:
            raise StartRefusedError("the host started a game we had not said ready for")
        try:
            spec = GameSpec.from_wire(start.spec)
        except InvalidRulesError as exc:
            raise StartRefusedError(f"the host started a game with a bad spec: {exc}") from None
        own = self.identity.peer_id
        if own not in spec.peer_ids:
            raise StartRefusedError("the host started a game without us")
        if start.endpoints.get(own, self.endpoint) != self.endpoint:
            raise StartRefusedError(f"the host gave us endpoint {start.endpoints[own]}, not ours")
        if spec.label != self.lobby_id:
            raise StartRefusedError("the host started a game labelled for another lobby")
        if self.host not in spec.peer_ids:
            raise StartRefusedError("the host started a game it does not play in")
        # The start must be one of the tables we said ready for (the latest, unless the host
        # went back to an earlier one before it heard us): say what differs from the latest.
        reasons = [_unlike(spec, start, view) for view in reversed(self._ready_for.values())]
        if None not in reasons:
            raise StartRefusedError(f"the host started with {reasons[0]} than it showed")
        return Session(spec, dict(start.endpoints))


_READY_KEPT: Final = 8
"""Tables a guest remembers saying ready for (a host may go back to one before it hears us)."""


def _unlike(spec: GameSpec, start: Start, view: TableView) -> str | None:
    """How the started game differs from a table shown (``None``: it is that table)."""
    if spec.rules.to_dict() != view.rules:
        return "other rules"
    if spec.deal != view.deal:
        return "another deal"
    if {(m.peer_id, m.name) for m in spec.members} != {(s.peer_id, s.name) for s in view.seats}:
        return "other players"
    if start.endpoints != {s.peer_id: s.endpoint for s in view.seats}:
        return "other endpoints"
    return None
