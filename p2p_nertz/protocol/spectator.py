"""A spectator: follows a game from the members' signed events without being in it.

Theory of operation
-------------------
A spectator is not in the roster, so it never sends anything a member would accept; members
started with ``--watcher ENDPOINT`` push it every event they log (their own and those they
receive). Being signed, the events need no trust in whoever relays them: :meth:`Spectator.feed`
decodes each message against the game id and the roster, checks its signature and body, and
keeps each author's feed as a hash chain (``seq`` from 1, ``prev`` the previous id; anything
early waits, duplicates are dropped, anything malformed is counted and ignored).

The spectator folds events with the players' own :class:`~p2p_nertz.protocol.folds.Folds` (the
one rule of which events count: cuts, readmitted members' gaps, capped votes), with no secrets:
every tableau is seen as its owner's moves reveal it.

Finality is the players' own (:class:`~p2p_nertz.protocol.finality.Finality`): members push
their beats and acks too, which say what each holds of every feed, and an event is final once
no member can still send an earlier one and every member is known to hold it. The members a
held drop leaves out are those a player's peer leaves out (:func:`~p2p_nertz.protocol.finality.
settle`). Without the beats nothing would be known to be held by all, and nothing final: a
spectator fed only events (a log) shows the tentative view. The final fold's notices (a lost
race, a rotation, a drop, a round scored) are what the screen announces.

A spectator casts no vote and proves no fork (that is the members' work: the audit checks the
logs properly); a beat that names another event than the one held is refused. Pure: no clock,
no I/O.
"""

from __future__ import annotations

from p2p_nertz.protocol.bodies import Beat, Want, parse_body
from p2p_nertz.protocol.envelope import (
    EnvelopeCache,
    InvalidMessageError,
    Message,
    decode_message,
)
from p2p_nertz.protocol.finality import NO_SEAT, Finality, event_beat, settle
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Event, GameState, Notice
from p2p_nertz.rules import Pile

__all__ = ["MAX_WAITING", "Spectator"]

MAX_WAITING = 4096
"""Events held per author ahead of its delivered feed."""


class Spectator:
    """One spectator's view of a game (see the module docstring).

    Args:
        spec: the game (its id and roster decide which messages are accepted).
    """

    def __init__(self, spec: GameSpec) -> None:
        self.spec = spec
        self._roster = frozenset(spec.peer_ids)
        self._seat_of = {pid: s for s, pid in enumerate(spec.peer_ids)}
        self._envelopes = EnvelopeCache()  # every member relays everything: verify once
        n = spec.seats
        self._feeds: list[list[Message]] = [[] for _ in range(n)]
        self._waiting: list[dict[int, Message]] = [{} for _ in range(n)]
        self._folds = Folds(GameState(spec))
        # The players' own finality, with no seat of ours: what each member has announced
        # holding (its beats) is what lets an event be final, as for them.
        self._finality = Finality(NO_SEAT, self._feeds)
        self._beat_clock = [0] * n  # the latest beat-class Lamport time seen from each member
        self._clock = 0  # the latest Lamport time seen
        self.rejected = 0
        """Messages refused (bad signature, another game, a malformed body, a broken chain)."""

    # -- the GameSource interface of the tracker -----------------------------------------------
    @property
    def final(self) -> GameState:
        """The fold of the final events."""
        return self._folds.final

    @property
    def tentative(self) -> GameState:
        """The fold of every event held (:attr:`Folds.tentative`)."""
        return self._folds.tentative

    @property
    def stable(self) -> int:
        """Events timed up to here are final."""
        return self._finality.stable

    def events(self, seat: int) -> list[Message]:
        """The delivered events of one member's feed."""
        return list(self._feeds[seat])

    def frozen_piles(self) -> set[Pile]:
        """A spectator has no piles."""
        return set()

    def held(self) -> int:
        """Events delivered, over every feed."""
        return sum(len(f) for f in self._feeds)

    # -- input ---------------------------------------------------------------------------------
    def feed(self, data: bytes) -> list[Notice]:
        """Take one message pushed by a member; the final fold's notices it led to.

        Never raises for anything in ``data``: a bad message is counted in :attr:`rejected`.
        """
        try:
            message = decode_message(
                data, game_id=self.spec.game_id, roster=self._roster, cache=self._envelopes
            )
        except InvalidMessageError:
            self.rejected += 1
            return []
        seat = self._seat_of[message.author]
        if not message.kind.is_event:
            return self._beat(seat, message)
        feed = self._feeds[seat]
        if message.seq <= len(feed) or message.seq in self._waiting[seat]:
            return []  # a duplicate (every member relays everything)
        if len(self._waiting[seat]) >= MAX_WAITING:
            self.rejected += 1
            return []
        self._waiting[seat][message.seq] = message
        self._deliver(seat)
        return self._advance()

    def _beat(self, seat: int, message: Message) -> list[Notice]:
        """A member's beat or ack: what it holds of every feed (cover), and that every event of
        its up to the announced head is timed at or below the beat's clock."""
        try:
            body = parse_body(message.kind, message.body, self.spec.seats)
        except ValueError:
            self.rejected += 1
            return []
        if not isinstance(body, Beat) or message.lamport <= self._beat_clock[seat]:
            return []  # a want, or an old beat
        feed = self._feeds[seat]
        if 0 < body.head_seq <= len(feed) and feed[body.head_seq - 1].id != body.head_id:
            self.rejected += 1  # it announces another event than ours: a forked author
            return []
        self._beat_clock[seat] = message.lamport
        self._clock = max(self._clock, message.lamport)
        self._finality.take_beat(seat, message.lamport, body)  # (forks are the members' to prove)
        return self._advance()

    def _deliver(self, seat: int) -> None:
        feed = self._feeds[seat]
        waiting = self._waiting[seat]
        n = self.spec.seats
        while len(feed) + 1 in waiting:
            message = waiting.pop(len(feed) + 1)
            prev = feed[-1].id if feed else None
            if message.prev != prev or (feed and message.lamport <= feed[-1].lamport):
                self.rejected += 1  # not the chain we hold: a forger or a forked author
                continue
            try:
                body = parse_body(message.kind, message.body, n)
            except ValueError:
                self.rejected += 1
                continue
            assert not isinstance(body, Beat | Want)
            feed.append(message)
            self._clock = max(self._clock, message.lamport)
            early = self._finality.delivered(seat, message)
            if early is not None:
                self._finality.take_beat(seat, *early)
            # Every event counts as an ack (§7.1; forks are the members' to prove).
            self._finality.take_beat(seat, message.lamport, event_beat(message, body))
            event = Event(seat, message.seq, message.lamport, message.kind, body, message.id)
            self._folds.add(event, self.stable)  # (one timed at or below it never counts)

    def _bound(self, excluded: dict[int, int], floor: int | None = None) -> int:
        """The stable time if the seats in ``excluded`` no longer play (:meth:`Finality.bounds`:
        a spectator casts no vote and sends nothing of its own)."""
        return self._finality.bounds(excluded, {}, 0, self._clock, floor=floor)

    def _advance(self) -> list[Notice]:
        tentative = self.tentative
        final = self.final
        # The members out of the bound and the stable time as a player's peer decides them
        # (Finality.settle), and the same events taken (Folds.advance).
        final.vote_caps = dict(tentative.vote_caps)
        excluded, stable = settle(final, tentative, self._feeds, self._bound, self.stable)
        if stable <= self.stable:
            return []
        self._finality.stable = stable
        _, notices = self._folds.advance(stable, excluded, tentative.gaps)
        return notices
