"""The game a set of peers agreed on in the lobby: roster, rules, and the id that binds them.

The convener proposes a :class:`GameSpec`; every member signs a ``join`` for its id (DESIGN.md
§5.1). The id is the SHA-256 of the spec's canonical msgpack form, so a join for one roster and
set of rules can never count for another, and a message from another game is refused by the
envelope codec before anything else looks at it.

Seats are the roster in the order of the peer ids' bytes: the same order as the ``author``
component of the total order of events ``(lamport, author, seq)``.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, TypeVar

import msgpack  # type: ignore[import-untyped]

from p2p_nertz.errors import InvalidRulesError, chained
from p2p_nertz.protocol.envelope import PROTOCOL_VERSION, SHARES_VERSION
from p2p_nertz.protocol.identity import PeerId, fingerprint, key_fault
from p2p_nertz.protocol.names import NAME_RULE, name_fault
from p2p_nertz.rules import Rules

__all__ = ["MAX_SPEC_SIZE", "SPEC_NOTE", "Deal", "GameSpec", "Member"]


class _Keyed(Protocol):
    @property
    def peer_id(self) -> PeerId: ...


_K = TypeVar("_K", bound=_Keyed)

_SPEC_DOMAIN = b"p2p-nertz/v1/spec\0"
MAX_SPEC_SIZE: Final = 16384
"""The largest game spec in wire form, in bytes (:meth:`GameSpec.to_wire`)."""

SPEC_NOTE: Final = "spec"
"""The name of the log note holding the game's :meth:`GameSpec.to_wire` bytes: the first record
of every log a node starts, so a log names its game's roster and rules by itself (the header's
game id is their hash, so the note cannot lie), and what an audit reads the game from
(docs/log-format.md §5). The node writes it, the audit and the simulator's logs use it."""


class Deal(enum.StrEnum):
    """How a game deals its decks: a game option, bound into the game id."""

    COMMIT = "commit"
    """Each member's deck from its committed secret and everyone's nonces (docs/protocol.md
    §8.2): nobody else reads it before the round ends, but its owner's machine can."""
    SHUFFLE = "shuffle"
    """Decks shuffled by every member and opened card by card by the whole table, nobody
    reading a face-down card, its owner included (docs/shuffle.md; protocol version 4)."""


@dataclass(frozen=True, slots=True)
class Member:
    """A player of the game: their peer id (Ed25519 public key) and display name."""

    peer_id: PeerId
    name: str

    @property
    def fingerprint(self) -> str:
        """The short fingerprint people compare."""
        return fingerprint(self.peer_id)


@dataclass(frozen=True, slots=True)
class GameSpec:
    """A proposed game: its members in seat order, its rules, and a label the convener chose.

    Build with :meth:`create`, which sorts the roster into seat order and validates it.

    Attributes:
        members: the roster, in seat order (by peer id bytes).
        rules: the rules of the game.
        label: free bytes that make two games of the same people and rules distinct (the
            convener picks them, e.g. from a clock or randomness *outside* the core).
        deal: how the decks are dealt (:class:`Deal`; docs/shuffle.md §10.6).
    """

    members: tuple[Member, ...]
    rules: Rules
    label: bytes
    deal: Deal = Deal.COMMIT
    #: :attr:`game_id`, once asked (a function of the fields above, which never change).
    _id: bytes | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def create(
        cls,
        members: Sequence[tuple[bytes, str]],
        rules: Rules,
        label: bytes,
        *,
        deal: object = Deal.COMMIT,
    ) -> GameSpec:
        """A spec for these ``(peer id, name)`` pairs, in seat order.

        Raises:
            InvalidRulesError: a bad or repeated peer id, a bad name, a roster the rules do
                not allow, or a ``deal`` that is no :class:`Deal` (checked here, alike on both
                builds: typed ``object``).
        """
        ids = [m[0] for m in members]
        if len(set(ids)) != len(ids):
            raise InvalidRulesError("a peer appears twice in the roster")
        roster = []
        for peer_id, name in sorted(members, key=lambda m: m[0]):
            fault = key_fault(peer_id)  # docs/protocol.md §3.1: only keys of full order
            if fault is not None:
                shown = peer_id.hex() if isinstance(peer_id, bytes) else repr(peer_id)
                raise InvalidRulesError(
                    f"a roster key is not a usable Ed25519 key ({fault}): {shown}"
                )
            fault = name_fault(name)  # docs/protocol.md §3.2: the one rule for names
            if fault is not None:
                raise InvalidRulesError(f"{NAME_RULE} ({fault}): {name!r:.80}")
            roster.append(Member(PeerId(peer_id), name))
        rules.validate_players(len(roster))
        if len(label) > 64:
            raise InvalidRulesError("the game label is at most 64 bytes")
        if not isinstance(deal, Deal):
            raise InvalidRulesError(f"unknown deal {deal!r} (commit or shuffle)")
        return cls(tuple(roster), rules, bytes(label), deal)

    @property
    def seats(self) -> int:
        """Number of seats."""
        return len(self.members)

    @property
    def wire_version(self) -> int:
        """The protocol version of every envelope of this game: 10 in a game of the shuffle, 9
        in one dealt by commit and reveal (docs/shuffle.md §10.6, §10.14; session 39, the vote
        on proof; session 41, its larger ``drop``; session 42, what its author took). A peer
        of the game refuses the other versions (``bad_version``)."""
        return SHARES_VERSION if self.deal is Deal.SHUFFLE else PROTOCOL_VERSION

    @property
    def read_versions(self) -> tuple[int, ...]:
        """The protocol versions the audit and the replay read in this game's logs: its
        :attr:`wire_version` only. The versions of earlier sessions (2, 3, 4: a vote on proof
        without its proof; 5, 6: a ``drop`` of at most 4,096 bytes; 7, 8: a vote on proof
        naming nothing its author took) are not read (docs/protocol.md §4.1)."""
        return (self.wire_version,)

    @property
    def peer_ids(self) -> tuple[PeerId, ...]:
        """The peer ids in seat order."""
        return tuple(m.peer_id for m in self.members)

    def in_seat_order(self, keyed: Sequence[_K]) -> list[_K]:
        """``keyed`` (identities, say: anything with a ``peer_id``, one per member) in seat
        order (the spec sorts the roster by key).

        Raises:
            KeyError: a member has none in ``keyed``.
        """
        by_id = {k.peer_id: k for k in keyed}
        return [by_id[pid] for pid in self.peer_ids]

    def seat_of(self, peer_id: bytes) -> int:
        """The seat of a member.

        Raises:
            KeyError: not a member.
        """
        for seat, m in enumerate(self.members):
            if m.peer_id == peer_id:
                return seat
        raise KeyError(fingerprint(peer_id))

    def to_wire(self) -> bytes:
        """The canonical msgpack form (what the game id hashes). The options of the game that
        are not the default follow as a fifth field, a map (``{"deal": "shuffle"}``): a game
        with every default has the four fields it always had, and the same id."""
        fields = [
            1,
            [[m.peer_id, m.name] for m in self.members],
            self.rules.to_dict(),
            self.label,
        ]
        if self.deal is not Deal.COMMIT:
            fields.append({"deal": self.deal.value})
        packed: bytes = msgpack.packb(fields, use_bin_type=True)
        return packed

    @classmethod
    def from_wire(cls, data: bytes) -> GameSpec:
        """Parse :meth:`to_wire` output.

        Raises:
            InvalidRulesError: the bytes are not a valid spec.
        """
        if len(data) > MAX_SPEC_SIZE:
            raise InvalidRulesError("a game spec is at most 16 KiB")
        try:
            fields = msgpack.unpackb(data, raw=False, strict_map_key=True)
        except Exception:
            # (In words: the decoder's own message, "unpack(b) received extra data", says
            # nothing to a person holding the wrong file.)
            raise chained(
                InvalidRulesError(
                    "its bytes are not a game spec at all (a spec is the game.spec file that "
                    "`nertz play --bots` and `nertz demo` write beside the logs; a lobby game "
                    "writes none, its logs begin with it)"
                ),
                None,
            )
        if not isinstance(fields, list) or len(fields) not in (4, 5):
            raise InvalidRulesError(
                "it is not a game spec: a spec holds four fields (version, roster, rules, label)"
                " and its options"
            )
        try:
            version, roster, rules, label, *options = fields
            if version != 1:
                raise InvalidRulesError(f"unknown game spec version {version!r}")
            members = [(bytes(p), str(n)) for p, n in roster]
            deal = Deal.COMMIT
            if options:
                extra = dict(options[0])
                if set(extra) != {"deal"} or extra["deal"] not in {d.value for d in Deal}:
                    raise InvalidRulesError(f"unknown game options {options[0]!r}")
                deal = Deal(extra["deal"])
            spec = cls.create(members, Rules.from_dict(dict(rules)), bytes(label), deal=deal)
        except InvalidRulesError:
            raise
        except Exception as exc:
            raise chained(InvalidRulesError(f"not a game spec: {exc}"), None)
        if spec.to_wire() != data:
            raise InvalidRulesError("the game spec is not in canonical form")
        return spec

    @property
    def game_id(self) -> bytes:
        """SHA-256 of the domain tag and :meth:`to_wire`: the id every message carries.

        Worked out once a spec: every log's every message is checked against it (the
        simulator's fork check asked it per message, ~3% of a simulated game's CPU; session 41).
        """
        if self._id is None:
            object.__setattr__(self, "_id", hashlib.sha256(_SPEC_DOMAIN + self.to_wire()).digest())
        assert self._id is not None
        return self._id

    def describe(self) -> dict[str, Any]:
        """A JSON-friendly summary (for status output and the audit report)."""
        return {
            "game_id": self.game_id.hex(),
            "players": [{"name": m.name, "fingerprint": m.fingerprint} for m in self.members],
            "rules": self.rules.to_dict(),
            "deal": self.deal.value,
        }
