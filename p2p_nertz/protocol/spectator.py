"""A spectator: follows a game from the members' signed events without being in it.

Theory of operation
-------------------
A spectator is not in the roster, so it never sends anything a member would accept; members
started with ``--watcher ENDPOINT`` push it every event they log (their own and those they
receive). Being signed, the events need no trust in whoever relays them: :meth:`Spectator.feed`
decodes each message against the game id and the roster, checks its signature and body, and
keeps the feeds as a player's peer does, on the same :class:`~p2p_nertz.protocol.feeds.Feeds`:
each author's hash chain, anything early (its author's previous event, or part of its causal
past, not held yet) waiting its turn, and each event checked as the next link of its chain
(:meth:`Feeds.chain_problem`: its ``prev``, its own seq in its frontier, a time above every
event it says it holds). Duplicates are dropped; anything malformed or off the chain is counted
and ignored. A spectator asks for nothing (it cannot: it is not a member), so it repairs no
gap: members push it everything they log.

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

A spectator casts no vote and relays no proof (that is the members' work: the audit checks the
logs properly). It lives with a fork as a peer does before any vote settles it: two versions
of an event seen, it keeps the one it holds and caps the author's feed below the fork
(:meth:`Feeds.cap`), so that the events of members who hold the other version do not wait for
it for ever, and it keeps the other version too, so that an event naming it by id (or a vote
on proof naming it as taken) is judged from its time, as a member judges it from a proof
(docs/protocol.md §5.3, session 42); a beat that names another event than the one held is refused
(:meth:`Feeds.contradicts`).

Why the table waits is told as a player's peer tells it (docs/protocol.md §9.5, session 40):
the members held back, the drops the held votes decide that are not final here
(:func:`~p2p_nertz.protocol.finality.drops_waiting`, on the spectator's own bound), and the
members heard that owe the event their phase waits for
(:func:`~p2p_nertz.protocol.table_waits.events_owed`), each the players' own rule. To time
those, the spectator keeps when it last heard each member (its beats, its new events, on the
caller's clock: :meth:`feed`'s ``now``), when its final phase began and since when every
member still in has been heard, as ``Membership`` does for a peer. It keeps no stall records:
what finality alone waits for from a member (its events past a head it announced, its cover,
a relay) is a debt to a peer that asks, and a watcher asks for nothing and is owed nothing
(what it lacks may be a push dropped on a flood: no member's fault); the vote *withheld*
such a debt ends in is on the wire, and told (docs/protocol.md §9.5, session 41). Pure: the
clock is passed in, no I/O.
"""

from __future__ import annotations

from p2p_nertz.defaults import SUSPECT_AFTER
from p2p_nertz.protocol.bodies import Beat, DeckReveal, DeckWant, Want, parse_body
from p2p_nertz.protocol.envelope import (
    EnvelopeCache,
    InvalidMessageError,
    Message,
    decode_message,
)
from p2p_nertz.protocol.feeds import Feeds, Ready, Source
from p2p_nertz.protocol.finality import NO_SEAT, Finality, drops_waiting
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Event, GameState, Notice, Phase
from p2p_nertz.protocol.table_waits import events_owed
from p2p_nertz.protocol.unmet import DropPending, HeldBack, Owing, held_back
from p2p_nertz.rules import Pile, Table

__all__ = ["MAX_WAITING", "Spectator"]

MAX_WAITING = 4096
"""Events held per author ahead of its delivered feed."""


class Spectator:
    """One spectator's view of a game (see the module docstring).

    Args:
        spec: the game (its id and roster decide which messages are accepted).
        suspect_after: seconds without a word from a member before it counts as silent here
            (the members' own default: they beat a few times a second).
    """

    def __init__(self, spec: GameSpec, *, suspect_after: float = SUSPECT_AFTER) -> None:
        self.spec = spec
        self._roster = frozenset(spec.peer_ids)
        self._seat_of = {pid: s for s, pid in enumerate(spec.peer_ids)}
        self._envelopes = EnvelopeCache()  # every member relays everything: verify once
        n = spec.seats
        self._store = Feeds.reader(n)
        self._feeds = self._store.feeds  # (delivered events per seat: the store's lists)
        self._forked_at: dict[int, int] = {}  # seat -> the first seq seen in two versions
        # (seat, seq) -> the version held and the first other one seen: what an event naming
        # the other version by id leaps from (a peer's proof pairs, §5.3; session 42)
        self._versions: dict[tuple[int, int], tuple[Message, Message]] = {}
        self._folds = Folds(GameState(spec))
        # The players' own finality, with no seat of ours: what each member has announced
        # holding (its beats) is what lets an event be final, as for them.
        self._finality = Finality(NO_SEAT, self._feeds)
        self._beat_clock = [0] * n  # the latest beat-class Lamport time seen from each member
        self._clock = 0  # the latest Lamport time seen
        # When each member was last heard here (its beats, its new events), on the caller's
        # clock (None: never, or fed without a time); when the final phase began; since when
        # every member still in has been heard within ``suspect_after`` (None: one is silent).
        self.suspect_after = suspect_after
        self._heard: list[float | None] = [None] * n
        self._phase: tuple[Phase, int] | None = None
        self._phase_since = 0.0
        self._all_heard_since: float | None = None
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
    def view(self) -> Table | None:
        """The table as drawn: the tentative fold's (a watcher holds no share store)."""
        return self._folds.tentative.table

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

    def held_back(self) -> tuple[HeldBack, ...]:
        """The members whose events wait here for events not pushed (:func:`held_back`)."""
        return held_back(self._store, self.tentative)

    def owing(self, now: float) -> tuple[Owing, ...]:
        """The members heard, not held back, that owe the event the final phase waits for
        from them (:func:`~p2p_nertz.protocol.table_waits.events_owed`, a peer's rule), each
        since the phase began or every member still in was heard, whichever is later (as
        ``Membership.blame_from`` times a peer's). None while a member still in is silent
        (the silence timers' wait, not a debt), and once the game is over. What a peer's
        stall records add (a member's events, cover, relays) is not told here (the module
        docstring)."""
        final, tentative = self.final, self.tentative
        since = self._all_heard_since
        if since is None or Phase.OVER in (final.phase, tentative.phase):
            return ()
        out = final.dropped.keys() | tentative.dropped.keys()
        if any(q not in out for q in self.silent(now)):
            return ()
        held = {h.seat for h in self.held_back()}  # (told as held back: one row a member)
        blame = max(since, self._phase_since)
        return tuple(
            Owing(q, blame, event=awaited)
            for q, awaited in events_owed(final, tentative).items()
            if q not in out and q not in held
        )

    def silent(self, now: float) -> frozenset[int]:
        """The members not heard here for ``suspect_after`` (none before the first message
        fed with a time: a log read has no clock)."""
        if self._all_heard_since is None and all(h is None for h in self._heard):
            return frozenset()
        limit = now - self.suspect_after
        return frozenset(q for q, h in enumerate(self._heard) if h is None or h <= limit)

    def drops_waiting(self) -> tuple[DropPending, ...]:
        """The drops the held votes decide that are not final here, each with what holds it
        back (:func:`~p2p_nertz.protocol.finality.drops_waiting` on the spectator's bound: a
        member's events or word, never a vote of its own), in seat order; none once the game
        is over."""
        if Phase.OVER in (self.final.phase, self.tentative.phase):
            return ()
        waiting = drops_waiting(self._folds, self._bound, self._finality)
        return tuple(DropPending(q, on) for q, on in waiting.items())

    def held(self) -> int:
        """Events delivered, over every feed."""
        return sum(len(f) for f in self._feeds)

    # -- input ---------------------------------------------------------------------------------
    def feed(self, data: bytes, now: float | None = None) -> list[Notice]:
        """Take one message pushed by a member; the final fold's notices it led to. ``now``:
        the caller's clock, for the waits (:meth:`owing`); ``None`` (a log read): untimed.

        Never raises for anything in ``data``: a bad message is counted in :attr:`rejected`.
        """
        notices = self._take(data, now)
        if now is not None:
            self._timed(now)
        return notices

    def _timed(self, now: float) -> None:
        """After an input at ``now``: note when the final phase began, and whether every
        member still in is heard (as a peer's ``Author.liveness`` and
        ``Membership.track_silence`` do)."""
        final = self.final
        phase = (final.phase, final.round.number)
        if phase != self._phase:
            self._phase, self._phase_since = phase, now
        out = final.dropped.keys() | self.tentative.dropped.keys()
        if any(q not in out for q in self.silent(now)):
            self._all_heard_since = None
        elif self._all_heard_since is None:
            self._all_heard_since = now

    def _take(self, data: bytes, now: float | None) -> list[Notice]:
        try:
            message = decode_message(
                data,
                game_id=self.spec.game_id,
                roster=self._roster,
                cache=self._envelopes,
                version=self.spec.wire_version,
            )
        except InvalidMessageError:
            self.rejected += 1
            return []
        seat = self._seat_of[message.author]
        try:
            body = parse_body(message.kind, message.body, self.spec.seats)
        except ValueError:
            self.rejected += 1
            return []
        if isinstance(body, Want | DeckReveal | DeckWant):
            return []  # (a member's gap request, a turn-up's shares: nothing for a watcher)
        if isinstance(body, Beat):
            if now is not None:
                self._heard[seat] = now  # (a beat is pushed by its author alone)
            return self._beat(seat, message, body)
        store = self._store
        held = store.version(seat, message.seq)
        if held is not None:
            if held.id != message.id:
                self._versions.setdefault((seat, message.seq), (held, message))
                self._forked(seat, message.seq)
            return []  # a duplicate (every member relays everything), or the other version
        if store.full(seat, MAX_WAITING):
            self.rejected += 1
            return []
        store.hold(seat, message, body, Source.NETWORK)
        if now is not None:
            self._heard[seat] = now  # (a new event of its: it spoke, directly or by relay)
        self._drain()
        return self._advance()

    def _beat(self, seat: int, message: Message, body: Beat) -> list[Notice]:
        """A member's beat or ack: what it holds of every feed (cover), and that every event of
        its up to the announced head is timed at or below the beat's clock."""
        if message.lamport <= self._beat_clock[seat]:
            return []  # an old beat
        wrong = self._store.contradicts(seat, message.lamport, body)
        if wrong is not None and wrong.event is None:
            self.rejected += 1  # it announces another event than ours: a forked author
            return []
        self._beat_clock[seat] = message.lamport
        self._clock = max(self._clock, message.lamport)
        self._finality.take_beat(seat, message.lamport, body)  # (forks are the members' to prove)
        return self._advance()

    def _forked(self, seat: int, seq: int) -> None:
        """Two signed versions of ``seat``'s event ``seq`` seen: keep the one held, and let
        the events of members who hold the other wait for no more of its feed than below the
        fork (a peer's :meth:`Feeds.cap` on a proof, §9.4 "Living with a fork")."""
        first = self._forked_at.get(seat)
        if first is None or seq < first:
            self._forked_at[seat] = seq
            self._store.cap(seat, seq - 1)
            self._drain()

    def _drain(self) -> None:
        """Deliver every waiting event whose turn has come (:meth:`Feeds.ready`), each checked
        as the next link of its author's chain (:meth:`Feeds.chain_problem`)."""
        store = self._store
        for step in store.ready():
            if type(step) is not Ready:
                # (A Refusal or a Parting: only off a required chain, which a watcher, voting
                # on nothing, never follows.)
                self.rejected += 1
                continue
            seat, message, body = step.seat, step.message, step.body
            forked, versions = self._forked_at, self._versions
            if store.chain_problem(seat, message, body, step.source, forked, versions=versions):
                self.rejected += 1  # not the chain we hold: a forger or a forked author
                continue
            self._feeds[seat].append(message)
            self._clock = max(self._clock, message.lamport)
            # Taken as a peer takes it (its author's early beat, the event as an ack, §7.1);
            # a watcher asks for nothing, and forks are the members' to prove.
            self._finality.take_event(seat, message, body)
            event = Event(seat, message.seq, message.lamport, message.kind, body, message.id)
            self._folds.add(event, self.stable)  # (one timed at or below it never counts)

    def _bound(self, excluded: dict[int, int], floor: int | None = None) -> int:
        """The stable time if the seats in ``excluded`` no longer play (:meth:`Finality.bounds`:
        a spectator casts no vote and sends nothing of its own)."""
        return self._finality.bounds(excluded, {}, 0, self._clock, floor=floor)

    def _advance(self) -> list[Notice]:
        # The final fold moved on as a player's peer moves it (Finality.advance: the members
        # out of the bound and the stable time by settle, the events taken by Folds.advance).
        return self._finality.advance(self._folds, self.tentative, self._bound, self._forked_at)[1]
