"""What comes in: a message opened (decoded, verified, parsed) before it changes anything.

:class:`Inbox` owns what a member needs to read the wire: the game's id and roster, the
codec's memo of messages already verified, the seat of each author, the latest beat taken from
each member, and how many messages were refused. :meth:`Inbox.open` returns either the
message with its seat and its body, or the :class:`~.effects.Rejected` that says why it is
refused; it changes nothing else, and raises nothing for anything a peer sent.
"""

from __future__ import annotations

from p2p_nertz.protocol.bodies import Beat, DeckReveal, DeckWant, EventBody, Want, parse_body
from p2p_nertz.protocol.effects import Rejected
from p2p_nertz.protocol.envelope import (
    PROTOCOL_VERSION,
    EnvelopeCache,
    InvalidMessageError,
    Message,
    RejectReason,
    decode_message,
    decode_unverified,
    peek_beat,
)
from p2p_nertz.protocol.identity import PeerId

__all__ = ["Inbox"]


class Inbox:
    """The reading side of one member (the module docstring).

    Args:
        game_id: the game's id (:attr:`GameSpec.game_id`, a hash: worked out once, by the
            caller).
        peer_ids: the roster, in seat order.
        envelopes: the codec's memo of messages parsed and verified.
        version: the game's protocol version (:attr:`GameSpec.wire_version`): a message of
            the other is refused (``bad_version``).
    """

    def __init__(
        self,
        game_id: bytes,
        peer_ids: tuple[PeerId, ...],
        envelopes: EnvelopeCache,
        version: int = PROTOCOL_VERSION,
    ) -> None:
        self.game_id = game_id
        self.version = version
        self.roster = frozenset(peer_ids)
        self.envelopes = envelopes
        self.n = len(peer_ids)
        self.seat_of = {pid: s for s, pid in enumerate(peer_ids)}
        #: The latest beat-class Lamport time taken from each member.
        self.beat_clock = [0] * self.n
        #: How many messages were refused (each one a :class:`Rejected` effect).
        self.rejected = 0
        #: How many old beats were dropped unverified, proving nothing (:meth:`old_beat`).
        self.unverified = 0

    def decode(self, wire: bytes) -> Message:
        """Decode and verify a message of this game (one already verified: from the memo).

        Raises:
            InvalidMessageError: ``wire`` is not a well-formed message of this game, signed
                by a member.
        """
        return decode_message(
            wire,
            game_id=self.game_id,
            roster=self.roster,
            cache=self.envelopes,
            version=self.version,
        )

    def open(
        self, data: bytes
    ) -> Rejected | tuple[int, Message, EventBody | Beat | Want | DeckReveal | DeckWant]:
        """The author's seat, the message and its body; or why it is refused (garbage, a
        body that does not follow its kind's schema). Nothing here depends on what this
        member holds or on its clock: an event's time is checked against the events it names
        when its turn comes (``Feeds.chain_problem``, a leap: ``clock_jump``), and a beat's
        binds its author alone (docs/protocol.md §5.3, session 39)."""
        try:
            message = decode_message(
                data,
                game_id=self.game_id,
                roster=self.roster,
                cache=self.envelopes,
                version=self.version,
            )
        except InvalidMessageError as exc:
            return Rejected(exc.reason.value, exc.detail)
        seat = self.seat_of[message.author]
        try:
            body = parse_body(message.kind, message.body, self.n)
        except ValueError as refused:  # (not ``exc``: compiled, one name is one type, above's)
            return Rejected(RejectReason.BAD_BODY.value, str(refused), message.author)
        return seat, message, body

    def old_beat(self, data: bytes) -> tuple[int, Message, Beat] | None:
        """A beat or ack of a member, older than one of its already taken (a Lamport time at
        or below it), read without verifying its signature; ``None`` for anything else (to be
        opened as usual). Such a beat changes nothing unless it proves something (§7.2): the
        caller verifies it, by :meth:`open`, only then."""
        hint = peek_beat(data)
        if hint is None:
            return None
        seat = self.seat_of.get(PeerId(hint[0]))
        if seat is None or hint[1] > self.beat_clock[seat]:
            return None
        try:
            message = decode_unverified(
                data,
                game_id=self.game_id,
                roster=self.roster,
                cache=self.envelopes,
                version=self.version,
            )
            body = parse_body(message.kind, message.body, self.n)
        except (InvalidMessageError, ValueError):
            return None  # (opened as usual: refused, with the reason)
        if type(body) is not Beat or message.lamport > self.beat_clock[seat]:
            return None
        return seat, message, body

    @staticmethod
    def latest_first(burst: list[bytes]) -> list[tuple[bytes, bool]]:
        """A burst in its order, except that a beat or ack of a member that a later one of its
        (a higher Lamport time) follows in the burst comes right after that one, marked
        ``True``: taken first, the later one makes it old, and an old beat need be verified
        only if it proves something (:meth:`old_beat`)."""
        if len(burst) < 2:
            return [(data, False) for data in burst]  # (the usual burst, of one: nothing to peek)
        hints = [peek_beat(data) for data in burst]
        latest: dict[bytes, tuple[int, int]] = {}  # author -> (lamport, index) of its latest
        for index, hint in enumerate(hints):
            if hint is not None and hint[1] > latest.get(hint[0], (-1, 0))[0]:
                latest[hint[0]] = (hint[1], index)
        if len(latest) == sum(h is not None for h in hints):
            return [(data, False) for data in burst]  # (at most one beat per member)
        deferred: dict[bytes, list[tuple[bytes, bool]]] = {}
        out: list[tuple[bytes, bool]] = []
        for index, data in enumerate(burst):
            hint = hints[index]
            if hint is None:
                out.append((data, False))
                continue
            top = latest[hint[0]][1]
            if index < top:
                deferred.setdefault(hint[0], []).append((data, True))
            else:
                out.append((data, index != top))
                if index == top:
                    out.extend(deferred.pop(hint[0], ()))
        return out

    def new_beat(self, seat: int, lamport: int) -> bool:
        """Whether a beat (or an ack, or a want) of ``seat`` timed ``lamport`` is newer than
        any taken before (then it is taken): an old one was replayed, or overtaken in the
        network, and says nothing new."""
        if lamport <= self.beat_clock[seat]:
            return False
        self.beat_clock[seat] = lamport
        return True
