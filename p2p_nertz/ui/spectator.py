"""A spectator: follows a game from the members' signed events without being in it.

Theory of operation
-------------------
A spectator is not in the roster, so it never sends anything a member would accept; members
started with ``--watcher ENDPOINT`` push it every event they log (their own and those they
receive). Being signed, the events need no trust in whoever relays them: :meth:`Spectator.feed`
decodes each message against the game id and the roster, checks its signature and body, and
keeps each author's feed as a hash chain (``seq`` from 1, ``prev`` the previous id; anything
early waits, duplicates are dropped, anything malformed is counted and ignored).

The spectator folds events in the protocol's total order ``(lamport, seat, seq)`` with the same
:class:`~p2p_nertz.protocol.state.GameState` as the players, with no secrets: every tableau is
seen as its owner's moves reveal it. Finality without beats: a feed is held contiguously, and
its Lamport times increase, so every event of member Q timed up to Q's latest held event is
here — and up to the clock of Q's latest beat once the feed reaches the head that beat
announces (members push their beats too); events up to the smallest such time over the
members still in the game are final and go
into the final fold (whose notices — a lost race, a rotation, a drop, a round scored — the
screen announces). The rest is folded on top, tentatively, as a player's view is.

A member that goes silent holds finality back until the others' drop votes reach it (the
tentative view goes on meanwhile); a beat's claims are taken as they come, which is all a
display needs (the audit checks the logs properly). Pure: no clock, no I/O.
"""

from __future__ import annotations

import bisect

from p2p_nertz.protocol.bodies import Beat, Want, parse_body
from p2p_nertz.protocol.envelope import EnvelopeCache, InvalidMessageError, Message, decode_message
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
        self._final = GameState(spec)
        self._nonfinal: list[Event] = []
        self._keys: list[tuple[int, int, int]] = []
        self._tentative: GameState | None = None
        self._announced = [(0, 0)] * n  # per member: its latest beat's (lamport, head seq)
        self.stable = 0
        self.rejected = 0
        """Messages refused (bad signature, another game, a malformed body, a broken chain)."""

    # -- the GameSource interface of the tracker -----------------------------------------------
    @property
    def final(self) -> GameState:
        """The fold of the final events."""
        return self._final

    @property
    def tentative(self) -> GameState:
        """The fold of every event held."""
        if self._tentative is None:
            state = self._final.copy()
            for event in self._nonfinal:
                cut = state.dropped.get(event.seat)
                if cut is None or event.seq <= cut:
                    state.apply(event)
            self._tentative = state
        return self._tentative

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
        """A member's beat: every event of its up to the announced head is timed at or below
        the beat's clock, which lets finality pass a member that has not moved for a while."""
        try:
            body = parse_body(message.kind, message.body, self.spec.seats)
        except ValueError:
            self.rejected += 1
            return []
        if not isinstance(body, Beat) or message.lamport <= self._announced[seat][0]:
            return []
        self._announced[seat] = (message.lamport, body.head_seq)
        return self._advance()

    def _known(self, seat: int) -> int:
        """Every event of ``seat`` timed up to this is held here."""
        feed = self._feeds[seat]
        known = feed[-1].lamport if feed else 0
        lamport, head = self._announced[seat]
        if head <= len(feed):
            known = max(known, lamport)
        return known

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
            event = Event(seat, message.seq, message.lamport, message.kind, body, message.id)
            index = bisect.bisect(self._keys, event.key)
            self._nonfinal.insert(index, event)
            self._keys.insert(index, event.key)
            self._tentative = None

    def _advance(self) -> list[Notice]:
        gone = self.tentative.dropped
        heads = [self._known(seat) for seat in range(self.spec.seats) if seat not in gone]
        stable = min(heads, default=0)
        if stable <= self.stable:
            return []
        self.stable = stable
        notices: list[Notice] = []
        moved = 0
        for event in self._nonfinal:
            if event.lamport > stable:
                break
            moved += 1
            cut = self._final.dropped.get(event.seat)
            if cut is None or event.seq <= cut:
                notices += self._final.apply(event)
        if moved:
            del self._nonfinal[:moved]
            del self._keys[:moved]
            self._tentative = None
        return notices
