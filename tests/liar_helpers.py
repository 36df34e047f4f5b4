"""A member gone rogue in time: :class:`Liar`, for the in-memory network and for real nodes.

It beats like any member; on request it signs its next event timed at the clock of a beat it
has just sent (a lie about time, docs/protocol.md §9.4), holds it back, takes it into its feed
later, and may keep it from anyone who asks (an event announced and never given, §9.2).
"""

from __future__ import annotations

from peer_helpers import PuppetPeer, forge

from p2p_nertz.errors import LocalProtocolError
from p2p_nertz.protocol.bodies import Beat, Play, Want, parse_body
from p2p_nertz.protocol.envelope import Kind, Message, decode_message
from p2p_nertz.protocol.feeds import Source
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.peer import Effect, PeerConfig, Record, Send
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rules import Move

__all__ = ["Liar"]


class Liar(PuppetPeer):
    """A member that lies about time, or announces an event it never lets anyone fetch.

    (It reaches into the peer's private beat, want and delivery paths: a test-only cheat.)
    """

    def __init__(
        self, identity: Identity, spec: GameSpec, now: float, config: PeerConfig | None = None
    ) -> None:
        super().__init__(identity, spec, now, config)
        self.lie_at_next_beat = False  # sign event h+1 at the next beat's clock
        self.hold_lying_beat = False  # and keep that beat back (the event may go out first)
        self.lying_beat: bytes | None = None  # the beat the lie contradicts
        self.beat_kind: Kind | None = None  # beats of this kind only (an ack that lies)
        self.beats_to: PeerId | None = None  # beats to this member only
        self.lie: Message | None = None  # the event timed below a clock it announced
        self.lie_beat = 0  # the Lamport time of the beat it contradicts
        self.adopt: bytes | None = None  # take this event of ours into our feed at next input
        self.withheld: set[bytes] = set()  # events of ours never sent, nor answered for
        self.paused = False  # its player makes no move (it signs nothing while it lies)

    def play(self, move: Move, now: float) -> list[Effect]:
        if self.paused:
            raise LocalProtocolError(f"{move}: the liar is busy lying")  # bots try later
        return super().play(move, now)

    def _beat(self, kind: Kind, now: float) -> None:
        super()._beat(self.beat_kind or kind, now)
        sent = self._outbox.effects[-1]
        assert isinstance(sent, Send)
        if self.beats_to is not None:
            self._outbox.effects[-1] = Send(sent.data, self.beats_to)
        if self.lie_at_next_beat:
            self.lie_at_next_beat = False
            self.lie_beat = self.clock  # this beat's time: "nothing of mine past h up to here"
            self.lying_beat = sent.data
            if self.hold_lying_beat:
                del self._outbox.effects[-1]
            round_ = self.tentative.round.number
            wire = forge(self, self.identity, Play((), round_, Move.pass_()), lamport=self.clock)
            self.lie = decode_message(wire)

    def _answer_want_honest(self, to: PeerId, want: Want) -> None:
        start = len(self._outbox.effects)
        super()._answer_want_honest(to, want)
        self._outbox.effects[start:] = [
            e
            for e in self._outbox.effects[start:]
            if not (isinstance(e, Send) and e.data in self.withheld)
        ]

    def _flush_honest(self, now: float) -> list[Effect]:
        if self.adopt is not None:
            wire, self.adopt = self.adopt, None
            message = decode_message(wire, game_id=self.game_id)
            body = parse_body(message.kind, message.body, self._n)
            assert not isinstance(body, Beat | Want)
            self._outbox.effects.append(Record(wire, own=True))
            self._deliver(self.seat, message, body, now, source=Source.LOCAL)
            if wire not in self.withheld:
                self._outbox.effects.append(Send(wire))  # the early order: the event goes out first
            self._outbox.ack_due = now  # then a beat with the new head
        return super()._flush_honest(now)
