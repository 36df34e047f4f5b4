"""Votes that stand without a majority: who is voted out, why, by whom, of how many needed.

A vote to drop a member (for silence, for withholding, on proof) drops it once a strict
majority of the roster has cast one (DESIGN.md §6). Most of the time the others' votes follow
within moments, each on its own clock; but some never come, and no rule can safely count
fewer (docs/protocol.md §9.2, §13 *A claim on a silent member's feed*: two liars at four
players, the honest two's votes two of four). The table then waits, correctly, and a person
must be told why: :func:`unmet` reads, from a fold, the votes standing against each member
still in (the roster's, counted or capped: :func:`~p2p_nertz.protocol.roster.standing_votes`)
and the majority they fall short of; :class:`UnmetSince` says which have stood so for longer
than a short while (:data:`UNMET_AFTER`), for the front ends (``ui/view.py``'s words) and the
node's log, the same knowledge for both; :class:`UnmetTeller` turns that into notices, one
when such a vote has stood for the while (:class:`VoteShort`) and one when it no longer stands
short (its :class:`UnmetEnd`: the member dropped, the vote withdrawn, joined, the game over),
for the node's log and its ``--json`` lines (session 37). Nothing here signs, sends or changes
a fold.

The votes are not the only wait a person cannot see (session 38): a member whose events name,
in their frontier, events this peer does not hold (and nobody sends: a liar's frontier past
what was signed, docs/protocol.md §13 *A frontier lie beside a member gone for good*), or
whose feed has a gap nobody fills, is **held back**: its events wait here, its votes with
them, and the stable time waits on it. :func:`held_back` reads that from the feeds
(:class:`HeldBack`: whose, and the events they wait for); :class:`UnmetSince` times it as it
times the votes (its member's feed not advancing here for :data:`UNMET_AFTER`), and
:class:`UnmetTeller` tells it (:class:`FeedHeld`) and its end (:class:`HeldEnd`). At three
and four players with such a liar and a member crashed for good, the honest votes on the
crashed member are short because the liar's own vote is held back with its feed: the table
says both, the votes and on whom they wait. This module is the one home of *why the table
waits*: the terminal table, the page, ``nertz watch`` and the node's lines read it; *no
majority here* (``protocol/reach.py``), a member silent (``Suspected``) and the abandon's
offer (``Gone``) are said where they are found (docs/protocol.md §9.5, *Why a table waits*).

A member may also be heard, its events all delivered, and still hold the table up by what it
alone can give and does not (session 39): its own events up to the head it announced, its word
that it holds the events held here (its cover), the events of a third member it said it holds,
or the event the final phase waits for from it (its ``ready``, commit, nonce, secret, result, a
shuffle game's key or stage), or a shuffle game's shares of its round's deal
(:class:`SharesOwed`: its own of a position turned up, its partials for a member dropped, its
answer to a complaint of its box; session 40: before, told only by its vote). The peer votes
it out *withheld* after ``phase_timeout`` (60 s, docs/protocol.md §9.2); before it the table
said nothing. :class:`Owing` is what it owes and
since when without progress (read from ``Membership``'s stall records and the phase's wait by
:class:`~p2p_nertz.protocol.table_waits.TableWaits`); :class:`UnmetSince` keeps those that have
waited :data:`UNMET_AFTER` and :class:`UnmetTeller` tells each (:class:`Owed`) and its end
(:class:`OwedEnd`), once. So for a drop the held votes decide that is not final
(:class:`DropPending`: what holds the stable time back below the time that decides it, read by
the peer's chains): told on its own (:class:`DropWaits`, :class:`DropEnd`), not only through
the member it waits on.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, NamedTuple, Protocol

from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.roster import standing_votes
from p2p_nertz.protocol.state import GameState, Phase

if TYPE_CHECKING:
    from collections.abc import Callable

    from p2p_nertz.protocol.feeds import Feeds
    from p2p_nertz.protocol.phase_waits import Awaited

__all__ = [
    "UNMET_AFTER",
    "DropEnd",
    "DropPending",
    "DropWaits",
    "FeedHeld",
    "HeldBack",
    "HeldEnd",
    "Owed",
    "OwedEnd",
    "Owing",
    "SharesOwed",
    "Unmet",
    "UnmetEnd",
    "UnmetSince",
    "UnmetTeller",
    "VoteShort",
    "WaitSource",
    "held_back",
    "unmet",
]

#: Seconds a vote stands short of a majority before it is told: the others vote on their own
#: clocks after the same timers, so their votes come a beat or two apart; a line that came and
#: went as each vote joined would say nothing true.
UNMET_AFTER: Final = 5.0


@dataclass(frozen=True, slots=True)
class Unmet:
    """The votes standing against ``seat``, short of a majority.

    Attributes:
        seat: the member voted out.
        reasons: why, each reason its voters gave, in the order of :class:`DropReason`.
        voters: the members whose votes stand, in seat order.
        majority: the votes needed to drop it (a strict majority of the roster).
        members: the members in the game (the roster's size, the dropped not counted).
    """

    seat: int
    reasons: tuple[DropReason, ...]
    voters: tuple[int, ...]
    majority: int
    members: int


def unmet(state: GameState) -> tuple[Unmet, ...]:
    """The members of ``state``'s roster with votes standing against them (not withdrawn, by
    members still in) that are fewer than a majority, in seat order (none once the game is
    over: nothing waits on them then)."""
    if state.phase is Phase.OVER:
        return ()
    roster = state.roster
    majority, members = roster.majority, len(roster.members())
    found = []
    for seat, ballots in standing_votes(roster).items():
        voters = tuple(sorted({voter for voter, _ in ballots}))
        if seat in roster.dropped or len(voters) >= majority:
            continue
        reasons = tuple(sorted({vote.reason for _, vote in ballots}))
        found.append(Unmet(seat, reasons, voters, majority, members))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class HeldBack:
    """The events of member ``seat`` wait here for events this peer does not hold.

    Attributes:
        seat: the member held back.
        held: how many of its events are held (delivered) here: its feed waits past them.
        waits: the events they wait for, ``(feed's seat, first seq, last seq)`` each, in seat
            order: of other feeds, those its next event names in its frontier; of its own
            feed, the gap before the next one held.
    """

    seat: int
    held: int
    waits: tuple[tuple[int, int, int], ...]


def held_back(store: Feeds, state: GameState) -> tuple[HeldBack, ...]:
    """The members of ``state`` (the tentative fold) whose events wait in ``store`` for events
    not held, in seat order (:class:`HeldBack`; none once the game is over, nor for a member
    dropped: its feed counts no more past the cut). Most are gaps that gap repair fills within
    a round trip; :class:`UnmetSince` keeps those that stay."""
    if state.phase is Phase.OVER:
        return ()
    feeds, dropped, found = store.feeds, state.dropped, []
    for seat, pending in enumerate(store.pending):
        if not pending or seat in dropped:
            continue
        held = len(feeds[seat])
        following = pending.get(held + 1)
        if following is None:  # (a gap in its own feed: the next event held is later)
            waits: tuple[tuple[int, int, int], ...] = ((seat, held + 1, min(pending) - 1),)
        else:  # (its next event names events not held: causal delivery holds it)
            frontier = following[1].frontier
            waits = tuple(
                (r, len(feeds[r]) + 1, upto)
                for r, upto in enumerate(frontier)
                if r != seat and upto > len(feeds[r])
            )
        if waits:
            found.append(HeldBack(seat, held, waits))
    return tuple(found)


class SharesOwed(NamedTuple):
    """What of its round's deal a member owes (a shuffle game, docs/shuffle.md §10.4, §6.3,
    §6.4): round ``number``; how many positions turned up it owes its own share of, how many
    it owes a partial share of for a member dropped, how many complaints of its box it has
    not answered (:meth:`~p2p_nertz.protocol.share_waits.ShareWaits.owing`)."""

    number: int
    own: int = 0
    partials: int = 0
    answers: int = 0


@dataclass(frozen=True, slots=True)
class Owing:
    """Member ``seat``, heard and not held back, owes what it alone can give, since ``since``
    (the caller's clock) without progress: the table waits on it (the module docstring).

    Attributes:
        seat: the member that owes.
        since: since when it has owed this, no part of it given (a stall record's time, or
            when the final phase began to wait on it, every member heard).
        events: its own events it announced and that are not held here, ``(first, last)``;
            ``None``: none owed.
        cover: ``(feed's seat, seq)`` each: the events held here it has not said it holds.
        relays: ``(feed's seat, first, last)`` each: a third member's events it said it holds
            and that are not held here.
        event: the event the final phase waits for from it (``None``: none).
        shares: what of its round's deal it owes (``None``: nothing; a row of its own, since
            its oldest item was owed, every member heard).
    """

    seat: int
    since: float
    events: tuple[int, int] | None = None
    cover: tuple[tuple[int, int], ...] = ()
    relays: tuple[tuple[int, int, int], ...] = ()
    event: Awaited | None = None
    shares: SharesOwed | None = None


@dataclass(frozen=True, slots=True)
class DropPending:
    """The drop of member ``seat``, decided by the held votes, not final here.

    Attributes:
        seat: the member the held votes drop.
        on: what holds it back, a term of the stable time (``Finality.bounds``):
            ``(-1, q)`` what is known of q's feed, ``(-2, q)`` our own vote on q, ``(r, q)``
            r's word on q's feed; ``None``: events not held here (its member's, or
            announced).
    """

    seat: int
    on: tuple[int, int] | None


class WaitSource(Protocol):
    """What :meth:`UnmetTeller.tell` reads of a peer (or a spectator) to tell why it waits."""

    @property
    def tentative(self) -> GameState: ...

    def held_back(self) -> tuple[HeldBack, ...]: ...

    def owing(self, now: float) -> tuple[Owing, ...]: ...

    def silent(self, now: float) -> frozenset[int]: ...

    def drops_waiting(self) -> tuple[DropPending, ...]: ...

    def gave(self, owing: Owing) -> bool: ...


class UnmetSince:
    """Since when each vote found short of a majority has stood so (per member voted out and
    its voters: a vote that joins, or is withdrawn, starts the wait again), and which have for
    :data:`UNMET_AFTER` seconds or more; the same for the members held back (:meth:`held`,
    per member and how much of its feed is held: a feed that advances starts it again);
    ``now`` is the caller's clock."""

    def __init__(self, after: float = UNMET_AFTER) -> None:
        self.after = after
        self._since: dict[tuple[int, tuple[int, ...]], float] = {}
        self._held_since: dict[tuple[int, int], float] = {}
        self._drop_since: dict[int, float] = {}

    def standing(self, state: GameState, now: float) -> tuple[Unmet, ...]:
        """The votes of ``state`` that stand without a majority, those that have for long."""
        found = unmet(state)
        since = {(u.seat, u.voters): self._since.get((u.seat, u.voters), now) for u in found}
        self._since = since
        return tuple(u for u in found if now - since[(u.seat, u.voters)] >= self.after)

    def held(self, found: tuple[HeldBack, ...], now: float) -> tuple[HeldBack, ...]:
        """The members held back (``found``: :func:`held_back` now), those that have been for
        long, their feed not advancing here meanwhile."""
        since = {(h.seat, h.held): self._held_since.get((h.seat, h.held), now) for h in found}
        self._held_since = since
        return tuple(h for h in found if now - since[(h.seat, h.held)] >= self.after)

    def pending(self, found: tuple[DropPending, ...], now: float) -> tuple[DropPending, ...]:
        """The drops decided and not final (``found``: the peer's :meth:`drops_waiting` now),
        those that have been for long (per member dropped: the term a drop waits on may
        change meanwhile, the wait is the drop's)."""
        since = {d.seat: self._drop_since.get(d.seat, now) for d in found}
        self._drop_since = since
        return tuple(d for d in found if now - since[d.seat] >= self.after)

    def owed(self, found: tuple[Owing, ...], now: float) -> tuple[Owing, ...]:
        """The members that owe (``found``: the peer's :meth:`owing` now), those that have
        for long, nothing of it given meanwhile (each :class:`Owing` says since when)."""
        return tuple(o for o in found if now - o.since >= self.after)


class UnmetEnd(enum.Enum):
    """Why a vote told short of a majority (:class:`VoteShort`) no longer stands so."""

    DROPPED = "dropped"  #: a majority came: the member is out
    WITHDRAWN = "withdrawn"  #: fewer votes stand now (withdrawn, or their voters gone)
    JOINED = "joined"  #: more votes stand, still short (told anew once they stood a while)
    OVER = "over"  #: the game is over: nothing waits on the vote


@dataclass(frozen=True, slots=True)
class VoteShort:
    """Notice: the votes ``unmet`` have stood short of a majority for :data:`UNMET_AFTER`
    seconds (``ended`` ``None``), or no longer stand so (``ended``: why). Made by the node from
    its tentative fold (:class:`UnmetTeller`), not by the core: nothing on the wire.

    Attributes:
        unmet: the votes, as they stood when told.
        ended: ``None`` when told; why they no longer stand short, at their end.
    """

    unmet: Unmet
    ended: UnmetEnd | None = None


class HeldEnd(enum.Enum):
    """Why a member told held back (:class:`FeedHeld`) no longer is."""

    CAME = "came"  #: its feed advanced here: what it waited for came (or is waited no more)
    DROPPED = "dropped"  #: the member is out: its feed counts no more past the cut
    OVER = "over"  #: the game is over: nothing waits on it


@dataclass(frozen=True, slots=True)
class FeedHeld:
    """Notice: the member ``held`` names has been held back for :data:`UNMET_AFTER` seconds
    (``ended`` ``None``), or no longer is (``ended``: why). Made by the node from its feeds
    (:class:`UnmetTeller`), as :class:`VoteShort` is: nothing on the wire.

    Attributes:
        held: the member and what its events wait for, as when told.
        ended: ``None`` when told; why it is held back no more, at its end.
    """

    held: HeldBack
    ended: HeldEnd | None = None


class OwedEnd(enum.Enum):
    """Why a member told owing (:class:`Owed`) no longer is."""

    GIVEN = "given"  #: all it was told owing came (the source's ``gave``: its own events)
    HELD = "held"  #: its later events came and wait on what it owed: told held back now
    SILENT = "silent"  #: it is silent now: the silence timers take it (``Suspected``)
    DROPPED = "dropped"  #: the member is out: it owes nothing
    OVER = "over"  #: the game is over: nothing waits on it
    #: it still owes it, and the wait is timed anew (session 43): another member went silent
    #: (:attr:`Owed.others`; the waits count once every member is heard again:
    #: ``Membership.blame_from``), or it owes us events first, or it gave a part
    ANEW = "anew"
    #: the phase it owed an event of is over here without it (a round ended in play, its
    #: ``ready`` never sent): the table waits for it no more (session 43)
    PASSED = "passed"


@dataclass(frozen=True, slots=True)
class Owed:
    """Notice: the member ``owing`` names has owed it for :data:`UNMET_AFTER` seconds, no
    part given (``ended`` ``None``), or no longer does (``ended``: why). Made by the node
    (:class:`UnmetTeller`), as :class:`FeedHeld` is: nothing on the wire.

    Attributes:
        owing: the member and what it owes, as when told.
        ended: ``None`` when told; why it owes it no more, at its end.
        others: at an end :attr:`OwedEnd.ANEW`, the other members (still in) silent then,
            whose silence times the wait anew, in seat order.
    """

    owing: Owing
    ended: OwedEnd | None = None
    others: tuple[int, ...] = ()


class DropEnd(enum.Enum):
    """Why a drop told decided and not final (:class:`DropWaits`) no longer waits so."""

    FINAL = "final"  #: the drop is final here
    UNDONE = "undone"  #: the held votes no longer drop the member (a withdrawal, a readmission)
    OVER = "over"  #: the game is over: nothing waits on it


@dataclass(frozen=True, slots=True)
class DropWaits:
    """Notice: the drop ``pending`` names has waited, decided and not final, for
    :data:`UNMET_AFTER` seconds (``ended`` ``None``; the term it waited on then), or no longer
    does (``ended``: why). Made by the node (:class:`UnmetTeller`): nothing on the wire.

    Attributes:
        pending: the drop and what it waits on, as when told.
        ended: ``None`` when told; why it waits so no more, at its end.
    """

    pending: DropPending
    ended: DropEnd | None = None


class UnmetTeller:
    """Which votes short of a majority begin to be told and which end (:meth:`check`), each
    once: a vote that stands :data:`UNMET_AFTER` seconds (:class:`UnmetSince`) is told, and
    its end is told when it no longer stands so, told anew if it stands again (or with other
    voters) for the while (``tests/test_ui_unmet.py``); the same for a member held back
    (:class:`FeedHeld`, ``tests/test_ui_table_waits.py``)."""

    def __init__(self, after: float = UNMET_AFTER) -> None:
        self.since = UnmetSince(after)
        self._told: dict[tuple[int, tuple[int, ...]], Unmet] = {}
        self._told_held: dict[int, HeldBack] = {}
        self._told_owed: dict[tuple[int, bool, bool], Owing] = {}
        self._told_drops: dict[int, DropPending] = {}
        #: when the next wait found at the last :meth:`tell`, not told, will have lasted the
        #: while (inf: none): a node tells its waits then, not at its next timer's tick
        #: (session 43), and their ends after its inputs
        self.due = math.inf

    def tell(self, source: WaitSource, now: float) -> list[VoteShort | FeedHeld | Owed | DropWaits]:
        """The notices of ``source`` (the node's peer) at ``now`` (:meth:`check`, then the
        drops decided and not final: :meth:`drops`)."""
        owing, silent = source.owing(now), source.silent(now)
        notices: list[VoteShort | FeedHeld | Owed | DropWaits] = []
        notices += self.check(
            source.tentative, now, source.held_back(), owing, silent, gave=source.gave
        )
        notices += self.drops(source.tentative, now, source.drops_waiting())
        self.due = self._next_due(owing)
        return notices

    def _next_due(self, owing: tuple[Owing, ...]) -> float:
        """When the first wait found and not told yet (``owing``: found now) will have
        lasted the while (:attr:`due`)."""
        since = self.since
        told_held = self._told_held
        starts = [t for key, t in since._since.items() if key not in self._told]
        starts += [
            t
            for (seat, held), t in since._held_since.items()
            if seat not in told_held or told_held[seat].held != held
        ]
        starts += [t for seat, t in since._drop_since.items() if seat not in self._told_drops]
        told_owed = self._told_owed
        for o in owing:
            told = told_owed.get((o.seat, o.event is not None, o.shares is not None))
            if told is None or told.since != o.since:
                starts.append(o.since)
        return min(starts, default=math.inf) + since.after

    def drops(
        self, state: GameState, now: float, found: tuple[DropPending, ...]
    ) -> list[DropWaits]:
        """The notices of the drops decided and not final (``found`` now): the ends of those
        told that no longer wait (first), then those that waited the while, not told, each
        with the term it waits on then (a term that changes later is not told again: the
        table's row shows the current one)."""
        waiting = {d.seat: d for d in self.since.pending(found, now)}
        told = self._told_drops
        notices = [
            DropWaits(d, _why_drop_ended(d, state))
            for seat, d in sorted(told.items())
            if seat not in waiting
        ]
        notices += [DropWaits(d) for seat, d in sorted(waiting.items()) if seat not in told]
        self._told_drops = {seat: told.get(seat, d) for seat, d in waiting.items()}
        return notices

    def check(
        self,
        state: GameState,
        now: float,
        held: tuple[HeldBack, ...] = (),
        owing: tuple[Owing, ...] = (),
        silent: frozenset[int] = frozenset(),
        *,
        gave: Callable[[Owing], bool] = lambda owing: False,
    ) -> list[VoteShort | FeedHeld | Owed]:
        """The notices of ``state`` at ``now``: the ends of votes told before that no longer
        stand short (first), then the votes that have stood short for the while, not told;
        then the same for the members ``held`` back (:func:`held_back` now), then for the
        members ``owing`` (the peer's :meth:`owing` now: an end when what was told is owed no
        more, or changed; ``silent``: the members silent now, whose wait is the silence
        timers'; ``gave``: whether a member gave all an :class:`Owing` says, the source's
        :meth:`WaitSource.gave`; by default nothing is known given)."""
        standing = {(u.seat, u.voters): u for u in self.since.standing(state, now)}
        notices: list[VoteShort | FeedHeld | Owed] = [
            VoteShort(told, _why_ended(told, state))
            for key, told in sorted(self._told.items())
            if key not in standing
        ]
        notices += [VoteShort(u) for key, u in sorted(standing.items()) if key not in self._told]
        self._told = standing
        waiting = {h.seat: h for h in self.since.held(held, now)}
        told_held = self._told_held
        notices += [
            FeedHeld(told, _why_held_ended(told, state))
            for seat, told in sorted(told_held.items())
            if seat not in waiting or waiting[seat].held != told.held
        ]
        notices += [
            FeedHeld(h)
            for seat, h in sorted(waiting.items())
            if seat not in told_held or told_held[seat].held != h.held
        ]
        self._told_held = waiting
        # One wait is one member's, of one kind (its phase event, its shares, or what finality
        # waits for), since one time: what it still owes may shrink meanwhile (a part given),
        # told once.
        owed = {
            (o.seat, o.event is not None, o.shares is not None): o
            for o in self.since.owed(owing, now)
        }
        told_owed = self._told_owed
        notices += [
            Owed(told, *_why_owed_ended(told, state, silent, held, gave))
            for key, told in sorted(told_owed.items())
            if key not in owed or owed[key].since != told.since
        ]
        fresh = {
            key: o
            for key, o in sorted(owed.items())
            if key not in told_owed or told_owed[key].since != o.since
        }
        notices += [Owed(o) for o in fresh.values()]
        self._told_owed = {key: fresh.get(key) or told_owed[key] for key in owed}
        return notices


def _why_drop_ended(told: DropPending, state: GameState) -> DropEnd:
    """Why the drop ``told`` waits no more in ``state`` (the held fold)."""
    if state.phase is Phase.OVER:
        return DropEnd.OVER
    return DropEnd.FINAL if told.seat in state.dropped else DropEnd.UNDONE


def _why_owed_ended(
    told: Owing,
    state: GameState,
    silent: frozenset[int],
    held: tuple[HeldBack, ...],
    gave: Callable[[Owing], bool],
) -> tuple[OwedEnd, tuple[int, ...]]:
    """Why the wait on the member ``told`` owing ends in ``state`` (``silent``: the members
    silent now; ``held``: those held back now; ``gave``: whether it gave all ``told`` says),
    and at :attr:`OwedEnd.ANEW` the others silent now. Each why is said only when true: a
    person is never told a member sent what it did not (session 43: a phase event's wait
    timed anew by another member's silence was told *given*)."""
    if state.phase is Phase.OVER:
        return OwedEnd.OVER, ()
    if told.seat in state.dropped:
        return OwedEnd.DROPPED, ()
    if told.seat in silent:
        return OwedEnd.SILENT, ()
    if any(h.seat == told.seat for h in held):
        return OwedEnd.HELD, ()
    if gave(told):
        return OwedEnd.GIVEN, ()
    if told.event is not None and told.event.held_in(state):
        return OwedEnd.PASSED, ()  # (its phase over without it: a round ended in play)
    return OwedEnd.ANEW, tuple(sorted(silent.difference(state.dropped)))


def _why_held_ended(told: HeldBack, state: GameState) -> HeldEnd:
    """Why the member ``told`` held back is not so in ``state``."""
    if state.phase is Phase.OVER:
        return HeldEnd.OVER
    if told.seat in state.dropped:
        return HeldEnd.DROPPED
    return HeldEnd.CAME


def _why_ended(told: Unmet, state: GameState) -> UnmetEnd:
    """Why the votes ``told`` no longer stand short of a majority in ``state``."""
    roster = state.roster
    if state.phase is Phase.OVER:
        return UnmetEnd.OVER
    ballots = standing_votes(roster).get(told.seat, ())
    voters = {voter for voter, _ in ballots}
    if told.seat in roster.dropped or len(voters) >= roster.majority:
        return UnmetEnd.DROPPED
    if voters > set(told.voters):
        return UnmetEnd.JOINED
    return UnmetEnd.WITHDRAWN
