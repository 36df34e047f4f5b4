"""The outbox of one member: its Lamport clock, its signing key, and the effects it has made.

:class:`Outbox` owns what a peer needs to speak: the clock (and how far it is durably
reserved), the time of the last message sent, the pending ack, the secrets of the fair deal
that its key derives, and the list of effects made since the peer last returned them. It
signs our events and beats and never decides *what* to sign: the peer (and the objects it
wires) decide, the outbox stamps the time, reserves the clock and queues the
:class:`~.effects.Record` and :class:`~.effects.Send` in order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from p2p_nertz.deck.keys import MemberKey
from p2p_nertz.deck.vss import x25519_secret
from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.bodies import (
    Beat,
    DeckReveal,
    DeckWant,
    EventBody,
    Want,
    encode_body,
    held_ids,
    kind_of,
)
from p2p_nertz.protocol.effects import Effect, Note, Record, Reserve, Send
from p2p_nertz.protocol.envelope import (
    PROTOCOL_VERSION,
    EnvelopeCache,
    Kind,
    Message,
    decode_message,
    encode_message,
)
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.recovery import Elsewhere
from p2p_nertz.protocol.shuffle import local_deck_key

__all__ = ["BEAT_LEAD", "Outbox"]

BEAT_LEAD = 1 << 16
"""How far above the latest event delivered here (ours included) a beat, an ack or a want may
move our clock (docs/protocol.md §5.3): at least this, and 8 ``clock_reserve`` (a restarted
member's first want, §9.6, is two reservations above its old clock, and the others' clocks
pass it by taking it in). Far below the clock-jump limit (2^32, §4.5), so that no beat-class
message can carry our clock where the others refuse what we sign next (§13, *the clock
split*)."""


class Outbox:
    """Our clock, our key and the effects queued for the runtime (the module docstring).

    Args:
        identity: our key.
        game_id: the game's id (worked out once, by the caller).
        peer_ids: the roster, in seat order (to decode our own messages).
        now: the current time (nothing was sent yet).
        beat_interval: an idle peer beats this often.
        ack_delay: acks for received events are coalesced over this window.
        clock_reserve: Lamport ticks reserved by each durable clock note.
        envelopes: the codec's memo of messages parsed and verified.
        version: the game's protocol version (:attr:`GameSpec.wire_version`), on every
            envelope signed.
    """

    def __init__(
        self,
        identity: Identity,
        game_id: bytes,
        peer_ids: tuple[PeerId, ...],
        now: float,
        *,
        beat_interval: float,
        ack_delay: float,
        clock_reserve: int,
        envelopes: EnvelopeCache,
        version: int = PROTOCOL_VERSION,
    ) -> None:
        self.identity = identity
        self.version = version
        self._game_id = game_id
        self._roster = frozenset(peer_ids)
        self._private = identity.to_bytes()
        self._envelopes = envelopes
        self.beat_interval = beat_interval
        self.ack_delay = ack_delay
        self.clock_reserve = clock_reserve
        #: Our Lamport clock: above every message we sent and every event we delivered and
        #: name; a beat-class message (or an event we do not name) taken in moves it up to
        #: :attr:`lead` above :attr:`events_top`.
        self.clock = 0
        #: The highest Lamport time of the events delivered here that we name, ours included.
        self.events_top = 0
        #: How far above :attr:`events_top` a beat-class message may move the clock.
        self.lead = max(BEAT_LEAD, 8 * clock_reserve)
        #: Events delivered far ahead, taken as beats until covered: (lamport, seat, seq).
        self.ahead: list[tuple[int, int, int]] = []
        #: The clock is durably reserved up to here (:meth:`reserve`).
        self.reserved = 0
        self.last_sent = now
        # What the peer calls to sign: the honest methods, or a simulated liar's in their place
        # (sim/liars.py; an attribute, which a compiled core lets it set, a method not).
        self.sign_event, self.sign_beat = self.sign_event_honest, self.sign_beat_honest
        #: When a coalesced ack is due (``None``: none is).
        self.ack_due: float | None = None
        #: The effects made since the peer last returned them, in order.
        self.effects: list[Effect] = []
        #: Where the input that learnt our feed goes on elsewhere stopped (:meth:`stop_here`).
        self.stop_mark: int | None = None

    # -- secrets of the fair deal -----------------------------------------------------------
    def secret(self, number: int) -> bytes:
        """Our secret of round ``number`` (derived from our key)."""
        return st.local_secret(self._private, self._game_id, number)

    def nonce(self, number: int) -> bytes:
        """Our nonce of round ``number`` (derived from our key)."""
        return st.local_nonce(self._private, self._game_id, number)

    def box_secret(self) -> bytes:
        """The X25519 secret of our identity: it opens the VSS shares boxed to us."""
        return x25519_secret(self._private)

    def deck_key(self, number: int, attempt: int) -> MemberKey:
        """Our round secret of a shuffle game's round ``number``, deal ``attempt`` (derived
        from our key)."""
        return local_deck_key(self._private, self._game_id, number, attempt)

    # -- the clock -----------------------------------------------------------------------------
    def take_event(self, lamport: int, named: bool = True, seat: int = -1, seq: int = 0) -> None:
        """An event timed ``lamport`` was delivered here (ours too): the clock passes it. One
        our frontier does not name (``named`` false: past our vote on its author, or past the
        cut of its drop, §5.1) is taken as a beat is (:meth:`take_beat`): what we sign next
        leaps from what it names alone (``MAX_CLOCK_JUMP``, §5.3), never from it. So is one
        of ``seat``'s (its event ``seq``) more than :attr:`lead` past our clock and the events
        we took, until every member still in announced holding it (:meth:`catch_up`)."""
        if not named:
            self.take_beat(lamport)
            return
        if seat >= 0 and lamport > max(self.clock, self.events_top + self.lead):
            self.take_beat(lamport)
            self.ahead.append((lamport, seat, seq))
            return
        self.events_top = max(self.events_top, lamport)
        self.clock = max(self.clock, lamport)

    def catch_up(self, covered: Callable[[int, int], bool | None]) -> None:
        """Take whole each event :meth:`take_event` took as a beat that ``covered`` says every
        member still in now announced holding (``None``: it never counts, past a cut)."""
        waiting = []
        for lamport, seat, seq in self.ahead:
            said = covered(seat, seq)
            if said:
                self.events_top = max(self.events_top, lamport)
                self.clock = max(self.clock, lamport)
            elif said is not None:
                waiting.append((lamport, seat, seq))
        self.ahead = waiting

    def take_beat(self, lamport: int) -> bool:
        """A new beat, ack or want timed ``lamport`` was taken in: the clock passes it, but
        never more than :attr:`lead` above the events delivered here (§5.3). Whether the
        clock moved. (Its author alone is bound by its time, as ``known``, §7.1: the cap
        keeps another member's beats from timing what we sign beyond what the others take.)"""
        time = min(lamport, self.events_top + self.lead)
        if time <= self.clock:
            return False
        self.clock = time
        return True

    # -- signing ----------------------------------------------------------------------------
    def reserve(self, clock: int) -> None:
        """Ask for a durable :class:`Reserve` before sending past a clock not reserved."""
        if clock > self.reserved:
            self.reserved = clock + self.clock_reserve
            self.effects.append(Reserve(self.reserved))

    def sign_event_honest(
        self, feeds: list[list[Message]], seat: int, body: EventBody, now: float | None
    ) -> tuple[Message, EventBody]:
        """Sign ``body`` as event ``seat``'s next event, timed above everything its frontier
        names; queue its record and its send. The message (decoded: the local event takes
        the remote path, DESIGN.md §1) and the body with its frontier, to deliver.

        The frontier names the id of each event it counts (:func:`~.bodies.held_ids`), so the
        event counts as an ack wherever it arrives (§7.2): it goes to every member, as an ack
        does, and announces all we hold, so it stands for an ack due now."""
        feed = feeds[seat]
        seq = len(feed) + 1
        frontier = list(body.frontier)
        frontier[seat] = seq - 1
        body = dataclasses.replace(
            body, frontier=tuple(frontier), frontier_ids=held_ids(feeds, frontier)
        )
        self.clock += 1
        for q, held in enumerate(frontier):
            if held:
                self.clock = max(self.clock, feeds[q][held - 1].lamport + 1)
        self.reserve(self.clock)
        wire = encode_message(
            self.identity,
            game_id=self._game_id,
            seq=seq,
            prev=feed[-1].id if feed else None,
            lamport=self.clock,
            kind=kind_of(body),
            body=encode_body(body),
            cache=self._envelopes,
            version=self.version,
        )
        message = decode_message(
            wire,
            game_id=self._game_id,
            roster=self._roster,
            cache=self._envelopes,
            version=self.version,
        )
        self.effects.append(Record(wire, own=True))
        self.effects.append(Send(wire))
        self.last_sent = now if now is not None else self.last_sent
        self.ack_due = None  # (the event announces what the ack would have)
        return message, body

    def sign_beat_honest(
        self, kind: Kind, body: Beat | Want | DeckReveal | DeckWant, *, tick: bool = True
    ) -> bytes:
        """Sign a beat, an ack, a want, a ``deck_reveal`` or a ``deck_want`` (seq 0: not in our
        feed), timed by our clock; ``tick=False``: at our clock as it is (a share beat is in no
        order, and a tick of its own would move the times of every event after it)."""
        self.clock += tick
        self.reserve(self.clock)
        return encode_message(
            self.identity,
            game_id=self._game_id,
            seq=0,
            prev=None,
            lamport=self.clock,
            kind=kind,
            body=encode_body(body),
            cache=self._envelopes,
            version=self.version,
        )

    def beat(
        self, kind: Kind, feeds: list[list[Message]], seat: int, held: tuple[int, ...], now: float
    ) -> None:
        """Send everyone a beat (or an ack) of ``kind``: our head in ``feeds[seat]``, and what
        we announce holding of every feed (``held``), with the id of the last of each."""
        feed = feeds[seat]
        head = feed[-1].id if feed else None
        ids = held_ids(feeds, held)
        self.effects.append(Send(self.sign_beat(kind, Beat(len(feed), head, held, ids))))
        self.spoke(now)

    def spoke(self, now: float) -> None:
        """A beat (or an ack, or the wants of a recovery) went to everyone: it announced all
        we hold, so no ack is due, and the next beat is one interval away."""
        self.last_sent = now
        self.ack_due = None

    # -- acks -------------------------------------------------------------------------------
    def beat_due(self, now: float) -> Kind | None:
        """What our time calls for now: an ack (one is due), a beat (idle for a beat
        interval), or nothing."""
        if self.ack_due is not None and now >= self.ack_due:
            return Kind.ACK
        if now >= self.last_sent + self.beat_interval:  # the deadline's own sum
            return Kind.BEAT
        return None

    def take(self) -> list[Effect]:
        """The effects queued since the last call, in order (the queue is emptied)."""
        out, self.effects = self.effects, []
        return out

    def stop_here(self) -> None:
        """Our feed goes on elsewhere (``recovery.Doubt``): nothing queued after this point of
        the input goes out or into the log (:meth:`take_to_stop`)."""
        self.stop_mark = len(self.effects)

    def take_to_stop(self, stop: Elsewhere) -> list[Effect]:
        """What the input queued before :meth:`stop_here`, then a ``recovering`` note and
        ``stop``; after that input, nothing, ever. (Our log ends short of our feed: the note
        says so, as of a recovery begun and not finished, so that a resume learns our feed
        from the others before it signs, and the audit reads the log's end as lost, not as
        events we sent unlogged: docs/protocol.md §9.6.)"""
        out, mark, self.stop_mark = self.take(), self.stop_mark, None
        return [] if mark is None else [*out[:mark], Note.recovering(), stop]
