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
(:meth:`Feeds.contradicts`). Once the held events say which chain counts (a drop's kept
chain, the chain the counted votes quote, a readmission's), it follows that chain by the
players' own rule (:func:`~p2p_nertz.protocol.chains.follow_chains`): what is off it is given
up, never below what is final, and its finality is held below a version of the fork it does
not hold, as a peer's. A peer fetches the chain that counts; a watcher, which asks for
nothing, holds it again from what it was pushed: it keeps every version of a forked event,
every event pushed off the chain it held and every event it gave up (at most
:data:`MAX_WAITING` a member), and takes the chain again from them (docs/protocol.md §9.4,
session 42; until then it kept the branch it held, and ended on another state than the
members: §13).

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
from p2p_nertz.protocol.bodies import NOT_EVENTS, Beat, DeckReveal, DeckWant, Want, parse_body
from p2p_nertz.protocol.chains import follow_chains, truncate_feed
from p2p_nertz.protocol.envelope import (
    EnvelopeCache,
    InvalidMessageError,
    Message,
    decode_message,
)
from p2p_nertz.protocol.feeds import Feeds, Parting, Ready, Source, matches
from p2p_nertz.protocol.finality import NO_SEAT, Finality, drops_waiting
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Event, GameState, Notice, Phase
from p2p_nertz.protocol.table_waits import events_owed
from p2p_nertz.protocol.unmet import DropPending, HeldBack, Owing, held_back
from p2p_nertz.rules import Pile, Table

__all__ = ["MAX_WAITING", "Spectator"]

MAX_WAITING = 4096
"""Events held per author ahead of its delivered feed, and versions of its events kept."""


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
        # (seat, seq) -> the versions seen of a forked event, of an event pushed off the
        # chain held and of one given up for another chain: what an event naming one by id
        # leaps from (a peer's proof pairs, §5.3), and the chain a drop keeps is held again
        # from (a peer fetches it, §9.4; session 42). At most MAX_WAITING a member.
        self._versions: dict[tuple[int, int], tuple[Message, ...]] = {}
        self._kept = [0] * n  # (versions kept of each member)
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

    def gave(self, owing: Owing) -> bool:
        """Whether a member gave the phase event it was told owing (its own, held in the held
        fold: ``Awaited.sent_in``, as a peer's ``TableWaits.gave``); a spectator tells no
        other owing."""
        return owing.event is not None and owing.event.sent_in(self.tentative)

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
            if held.id == message.id:
                return []  # a duplicate (every member relays everything)
            self._keep(held)
            self._keep(message)
            self._forked(seat, message.seq)
            if seat not in store.required:
                return []
            self._hold_kept(seat)  # (it may be the version a chain that counts requires)
            self._drain()
            return self._advance()
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

    def _keep(self, message: Message) -> None:
        """Keep ``message`` among the versions of its event (:attr:`_versions`), once."""
        seat = self._seat_of[message.author]
        key = (seat, message.seq)
        have = self._versions.get(key, ())
        if self._kept[seat] < MAX_WAITING and all(m.id != message.id for m in have):
            self._versions[key] = (*have, message)
            self._kept[seat] += 1

    def _hold_kept(self, seat: int) -> None:
        """Hold again, from the versions kept, the chain ``seat``'s feed must follow past what
        is delivered (:attr:`Feeds.required`: a drop's kept chain, a readmission's): the
        version it names at each seq it names, else the one that follows the last taken. A
        peer fetches that chain from the members (gap repair); a watcher is pushed it, and may
        have been pushed it while it held the other branch, when it refused it."""
        store = self._store
        required = store.required.get(seat)
        if required is None:
            return
        feed = self._feeds[seat]
        last = feed[-1].id if feed else None
        seq = len(feed) + 1
        while True:
            waiting = store.version(seat, seq)
            kept = self._versions.get((seat, seq), ())
            options = (waiting, *kept) if waiting is not None else kept
            on = [m for m in options if matches(required, seq, m.id)]
            if seq not in required:
                on = [m for m in on if m.prev == last]
            if not on:
                return
            take = on[0]
            if take is not waiting:
                if waiting is not None:
                    self._keep(waiting)
                body = parse_body(take.kind, take.body, self.spec.seats)
                assert not isinstance(body, NOT_EVENTS)  # (kept as an event: parsed so before)
                store.hold(seat, take, body, Source.NETWORK)
            last, seq = take.id, seq + 1

    def _drain(self) -> None:
        """Deliver every waiting event whose turn has come (:meth:`Feeds.ready`), each checked
        as the next link of its author's chain (:meth:`Feeds.chain_problem`); where the chain
        held parts from one that counts, give it up and hold that one (:meth:`_hold_kept`)."""
        store = self._store
        for step in store.ready():
            if type(step) is Parting:
                self._give_up(step.seat, step.keep)
                self._hold_kept(step.seat)
                continue
            if type(step) is not Ready:
                self.rejected += 1  # (a Refusal: off the chain a drop or readmission keeps)
                continue
            seat, message, body = step.seat, step.message, step.body
            forked, versions = self._forked_at, self._versions
            if store.chain_problem(seat, message, body, step.source, forked, versions=versions):
                self.rejected += 1  # not the chain we hold: a forger or a forked author
                feed = self._feeds[seat]
                if message.prev != (feed[-1].id if feed else None):
                    self._keep(message)  # (another branch: it may be the one that counts)
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
        forks = self._unheld_forks() if self._forked_at else None
        return self._finality.bounds(excluded, {}, 0, self._clock, floor=floor, forks=forks)

    def _unheld_forks(self) -> dict[int, int]:
        """Seat -> the Lamport time of the earliest version of its first forked event that its
        feed here does not hold (:meth:`Finality.bounds`' ``forks``, as a peer's from its
        proof): that version may be the one that counts, and held again once followed
        (:meth:`_follow`) it must not be timed at or below what is final here."""
        out: dict[int, int] = {}
        for q, fork in self._forked_at.items():
            feed = self._feeds[q]
            held = feed[fork - 1].id if len(feed) >= fork else None
            times = [m.lamport for m in self._versions.get((q, fork), ()) if m.id != held]
            if times:
                out[q] = min(times)
        return out

    def _give_up(self, seat: int, keep: int) -> None:
        """Give up ``seat``'s events after ``keep`` as a peer does (:func:`truncate_feed`),
        keeping them as versions."""
        for message in truncate_feed(self._store, self._folds, self._finality, seat, keep):
            self._keep(message)

    def _follow(self) -> GameState:
        """Follow the chains that count as a player's peer does (:func:`follow_chains`: a
        drop's kept chain, the chain the votes quote, a readmission's), holding each again
        from the versions kept (:meth:`_hold_kept`); the held view after it.

        Until session 42 a watcher holding the branch of a forked member that its drop does
        not keep folded that branch up to the cut, and ended on another state than the
        members (docs/protocol.md §13, ``soak.py --liars --lie brink_branch`` seed 29)."""
        tentative = self.tentative
        if not (tentative.kept_forks or tentative.rejoin_ids or self._forked_at):
            return tentative
        store = self._store
        required = {q: dict(r) for q, r in store.required.items()}
        folds, finality = self._folds, self._finality
        tentative, gone = follow_chains(
            tentative, store, folds, finality, own=NO_SEAT, forked_at=self._forked_at
        )
        for message in gone:
            self._keep(message)
        changed = {q for q, r in store.required.items() if required.get(q) != r}
        changed.update(self._seat_of[m.author] for m in gone)
        if not changed:
            return tentative
        for q in sorted(changed):
            self._hold_kept(q)
        self._drain()
        return self.tentative

    def _advance(self) -> list[Notice]:
        # The chains that count followed, the final fold moved on as a player's peer moves it
        # (Finality.advance: the members out of the bound and the stable time by settle, the
        # events taken by Folds.advance).
        tentative = self._follow()
        return self._finality.advance(self._folds, tentative, self._bound, self._forked_at)[1]
