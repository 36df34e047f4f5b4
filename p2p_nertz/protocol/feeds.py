"""Feeds: every member's chain of signed events, the events waiting for their causal past, and
gap repair.

Theory of operation
-------------------
Each author's events form a hash chain (seq from 1, ``prev`` = previous id). An event is
*delivered* once the author's previous event is, its ``prev`` matches, and every event in its
*frontier* (the seqs it says it holds of every feed) is held here; anything early waits in
:attr:`Feeds.pending`. A feed proven forked or cut by a drop is *capped*: an event's frontier
needs no more of it than the cap (the rest may never come). A dropped member's feed may have to
follow a *required* chain (the one a drop or a readmission quotes), giving up our copy where
it parts from it; the version given up is kept (the earliest, one a feed) as one half of a
proof should the other version come (:meth:`Feeds.given_up`, docs/protocol.md §9.4). Gaps are
repaired by asking any member that announced more (``want``), at most every ``want_interval``
per feed.

:class:`Feeds` owns that storage and returns values, in the manner of h11's
``ConnectionState``: :meth:`Feeds.admit` says what to make of an event received (a duplicate,
another version of one held, too many waiting); :meth:`Feeds.ready` walks the waiting events
whose turn has come and yields, one at a time, a :class:`Refusal`, a :class:`Parting` (our copy
of a required chain parts from it: give ours up) or a :class:`Ready` event, for the peer to
check against what only it knows (finality, proofs of lies) and deliver;
:meth:`Feeds.chain_problem` is the chain's own check of a ready event. The peer signs the wants
and sends what a want asks for; nothing here calls back into it. Where an event came from is a
:class:`Source`.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import gt
from typing import TypeVar

from p2p_nertz.protocol.bodies import (
    ID_PREFIX,
    NOT_EVENTS,
    Beat,
    Drop,
    DropReason,
    EventBody,
    Want,
    parse_body,
)
from p2p_nertz.protocol.envelope import Message
from p2p_nertz.protocol.identity import PeerId
from p2p_nertz.protocol.state import GameState, voted_chain
from p2p_nertz.slots import quick_init

N = TypeVar("N")  # (a node of :func:`deepest_first`)

__all__ = [
    "MAX_CLOCK_JUMP",
    "ChainCode",
    "Contradiction",
    "Feeds",
    "Followed",
    "LinkFault",
    "Parting",
    "Ready",
    "Refusal",
    "Source",
    "link_faults",
    "lies_about_time",
    "leaps",
    "matches",
    "may_name_other_version",
    "held_time",
    "deepest_first",
    "fetched_time",
    "named_by_id",
    "named_top",
    "timed_after",
    "taken_past",
    "took_time",
    "unknown_versions",
    "version_time",
]

MAX_CLOCK_JUMP = 1 << 32
"""How far past the latest event its frontier names an event may be timed (docs/protocol.md
§5.3): far past what an honest author's clock leads the events it announces by (``lead``,
2^16), and a bound on what one event adds, so that no liar exhausts the Lamport space (2^63)
in fewer than 2^31 events. It depends on the event and the events it names alone, never on
the receiver's clock: every member holding them gives it the same answer (session 39)."""


class Source(enum.Enum):
    """Where an event came from: what was checked already, and whether it must be logged."""

    #: Received from a member (or relayed): checked in full, logged as received.
    NETWORK = "network"
    #: Read back from our own log by ``Peer.restore``: its times were checked when it first
    #: came, and it is in the log already.
    LOG = "log"
    #: Signed here just now: the signer logged and sent it.
    LOCAL = "local"


class ChainCode(enum.StrEnum):
    """Why the feeds (or the peer's checks of a feed) refused a message; the value is the short
    code of the peer's ``Rejected`` effect."""

    BROKEN_CHAIN = "broken_chain"
    """Not the next link of its author's chain: wrong ``prev``, a frontier that does not name
    the event before it, timed below what it says it holds or below what is final, or below a
    clock its author announced."""
    NOT_KEPT = "not_kept"
    """An event of a dropped (or readmitted) member that is not on the chain that counts."""
    TOO_FAR_AHEAD = "too_far_ahead"
    """Its author already has ``max_pending`` events waiting here."""
    NOT_OURS = "not_ours"
    """An event in our name that we never signed (our log holds every one we did)."""
    CLOCK_JUMP = "clock_jump"
    """Timed more than :data:`MAX_CLOCK_JUMP` past the events its frontier names."""
    FORK = "fork"
    """A beat announcing another event than the one we hold under its head."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """A waiting event refused (taken out of the waiting ones): the peer reports it."""

    code: ChainCode
    detail: str
    author: PeerId


@dataclass(frozen=True, slots=True)
class Parting:
    """Our copy of ``seat``'s feed parts from the required chain: give up its events after
    ``keep`` (the peer knows how much is final and may not go)."""

    seat: int
    keep: int


@dataclass(frozen=True, slots=True)
class Followed:
    """A required chain of ``seat`` is followed now: cap its feed at ``cap`` (the kept event),
    and give up our events after ``keep`` where ours parts from it (``None``: it does not)."""

    seat: int
    cap: int
    keep: int | None


@dataclass(frozen=True, slots=True)
class Contradiction:
    """A beat that the events of its author held (or next waiting) here contradict: ``event``
    is the event past its head timed at or below it (a lie about time: the two are proof; a
    waiting one is given up), or ``None``: the beat names another event as its head (a fork
    we cannot prove with it alone; the beat is refused)."""

    event: Message | None


@quick_init
@dataclass(frozen=True, slots=True)
class Ready:
    """A waiting event whose causal past is held, taken out of the waiting ones: the peer
    checks it (:meth:`Feeds.chain_problem` and its own checks) and delivers or refuses it."""

    seat: int
    message: Message
    body: EventBody
    source: Source


class Feeds:
    """The feeds of every seat of one game, as one member holds them.

    Args:
        seats: how many seats the game has.
        want_interval: least time between two gap requests for one feed.
        want_delay: how long a gap a beat reveals may stay open before it is asked for.
        max_want: events asked for, or sent back, for one gap request.
    """

    def __init__(
        self, seats: int, *, want_interval: float, want_delay: float, max_want: int
    ) -> None:
        n = seats
        self.n = n
        self.want_interval = want_interval
        self.want_delay = want_delay
        self.max_want = max_want
        #: Delivered events per seat, in seq order.
        self.feeds: list[list[Message]] = [[] for _ in range(n)]
        #: seat -> seq -> (message, body, where it came from): events waiting for their turn.
        self.pending: list[dict[int, tuple[Message, EventBody, Source]]] = [{} for _ in range(n)]
        self.redrain = False  # a cap or a truncation may let waiting events through
        # seat -> the most of its feed an event's frontier may need here (a forked feed: below
        # the fork; a dropped one: up to its cut): dependents never wait for the rest
        self.dep_cap: dict[int, int] = {}
        # seat -> {seq: id or id prefix}: the chain of a dropped member that counts (§9.4)
        self.required: dict[int, dict[int, bytes]] = {}
        self.kept_seen: dict[int, tuple[int, bytes]] = {}  # the kept chain ``required`` follows
        self.rejoin_seen: dict[int, dict[int, bytes]] = {}  # readmitted chains followed
        self.want_at = [0.0] * n  # when a feed's gap may next be asked for
        self.gaps: dict[int, tuple[float, int, PeerId]] = {}  # seat -> (due, upto, source)
        #: seat -> (first seq, source) of the last want for its feed (:meth:`gap`)
        self.asked: dict[int, tuple[int, PeerId]] = {}
        #: seat -> the next event of a member proven here to fork at our head, which follows
        #: the version we do not hold (refused: :meth:`going_on_from`)
        self.going_on: dict[int, tuple[Message, EventBody, Source]] = {}
        #: seat -> the earliest version of an event of that seat given up here (for the chain
        #: that counts) whose seq is not held again: one half of a proof (:meth:`given_up`)
        self.gone: dict[int, Message] = {}

    @classmethod
    def reader(cls, seats: int) -> Feeds:
        """The feeds of a reader that is no member (a spectator): it asks for nothing, so it
        has no gap repair to pace (:meth:`want`, :meth:`gap` are never called)."""
        return cls(seats, want_interval=0.0, want_delay=0.0, max_want=0)

    # -- taking events in -------------------------------------------------------------------
    def version(self, seat: int, seq: int) -> Message | None:
        """The event of ``seat`` held or waiting here under ``seq`` (a duplicate, or another
        version of it: a fork), if any."""
        if seq <= len(self.feeds[seat]):
            return self.feeds[seat][seq - 1]
        waiting = self.pending[seat].get(seq)
        return None if waiting is None else waiting[0]

    def given_up(self, seat: int, message: Message) -> Message | None:
        """The version of ``message``'s event that we held (delivered or waiting) and gave up
        for another chain, if it is another version: with ``message`` it proves a fork (§9.4,
        "A version given up"). Forgotten once an event of that seq comes (this one)."""
        gone = self.gone.get(seat)
        if gone is None or gone.seq != message.seq:
            return None
        del self.gone[seat]
        return gone if gone.id != message.id else None

    def _give_up(self, seat: int, message: Message) -> None:
        """Keep ``message``, an event of ``seat`` given up here, as one half of a proof to come
        (:meth:`given_up`): one per feed, the earliest one whose seq is not held again (the
        proof that matters most, :meth:`Membership.proven_fork` keeps the least seq)."""
        gone = self.gone.get(seat)
        if gone is None or message.seq < gone.seq or gone.seq <= len(self.feeds[seat]):
            self.gone[seat] = message

    def full(self, seat: int, max_pending: int) -> bool:
        """Whether ``seat`` has as many events waiting as it may."""
        return len(self.pending[seat]) >= max_pending

    def hold(self, seat: int, message: Message, body: EventBody, source: Source) -> None:
        """Let an event wait for its turn (:meth:`ready` delivers it when it comes)."""
        self.pending[seat][message.seq] = (message, body, source)

    def waiting(self, seat: int) -> bool:
        """Whether any event of ``seat`` waits here for its turn."""
        return bool(self.pending[seat])

    def waiting_next(self, seat: int) -> Message | None:
        """The event of ``seat`` after the last one held, if it is waiting here."""
        pending = self.pending[seat]
        if not pending:
            return None
        waiting = pending.get(len(self.feeds[seat]) + 1)
        return None if waiting is None else waiting[0]

    def contradiction(self, seat: int, lamport: int, beat: Beat) -> Contradiction | None:
        """What of ``seat``'s feed held (or next waiting) here a beat of it timed ``lamport``
        contradicts, if anything (see :class:`Contradiction`); a waiting event it contradicts
        is forgotten (refused with the proof)."""
        found = self.contradicts(seat, lamport, beat)
        event = found.event if found is not None else None
        if event is not None and event.seq > len(self.feeds[seat]):  # (the waiting one)
            del self.pending[seat][event.seq]
        return found

    def contradicts(self, seat: int, lamport: int, beat: Beat) -> Contradiction | None:
        """:meth:`contradiction`, changing nothing."""
        feed = self.feeds[seat]
        head = beat.head_seq
        if 0 < head <= len(feed) and feed[head - 1].id != beat.head_id:
            # The author signed a head that is not the event we hold: it forked.
            return Contradiction(None)
        if len(feed) > head and lies_about_time(lamport, head, head + 1, feed[head].lamport):
            # It announced clock L with head h, yet signed event h+1 at or below L: a lie about
            # time, which could rewrite what others already took as final. Proof: both.
            return Contradiction(feed[head])
        waiting = self.waiting_next(seat)
        if waiting is not None and lies_about_time(lamport, head, waiting.seq, waiting.lamport):
            # The same with the next event, come before the beat and waiting for its turn (one
            # further on is checked when its turn comes: Delivery.drain, check 1).
            return Contradiction(waiting)
        return None

    # -- causal delivery --------------------------------------------------------------------
    def ready(self) -> Iterator[Refusal | Parting | Ready]:
        """Every waiting event whose turn has come, in turn (see the classes yielded), until
        none is left. The caller acts on each before asking for the next: delivering one (an
        append to its feed) or giving up a feed's end (:meth:`truncate`) may let more through,
        and that is how this walk knows it made progress."""
        self.redrain = False
        progress = True
        while progress:
            progress = False
            for seat in range(self.n):
                pending = self.pending[seat]
                if not pending:
                    continue  # (most feeds, most times: nothing waits)
                feed = self.feeds[seat]
                required = self.required.get(seat)
                while pending:
                    nxt = pending.get(len(feed) + 1)
                    if nxt is None:
                        break
                    message, body, source = nxt
                    if required is not None and not matches(required, message.seq, message.id):
                        del pending[message.seq]
                        self._give_up(seat, message)
                        yield Refusal(
                            ChainCode.NOT_KEPT,
                            f"seat {seat} event {message.seq} is not on the chain its drop keeps",
                            message.author,
                        )
                        continue
                    if (
                        required is not None
                        and feed
                        and message.prev is not None
                        and message.prev != feed[-1].id
                        and message.seq in required
                    ):
                        # On the kept chain, but ours parts from it below: the kept event
                        # names its predecessor exactly. Give ours up and fetch that one.
                        required[message.seq - 1] = message.prev
                        before = len(feed)
                        yield Parting(seat, message.seq - 2)
                        if len(feed) < before:
                            progress = True
                            break
                    if self.past_missing(body.frontier):
                        break  # its causal past is not all here yet
                    del pending[message.seq]
                    before = len(feed)
                    yield Ready(seat, message, body, source)
                    if len(feed) > before:  # delivered (a refused event leaves it as it was)
                        progress = True

    def chain_problem(
        self,
        seat: int,
        message: Message,
        body: EventBody,
        source: Source,
        forked_at: dict[int, int],
        *,
        versions: Mapping[tuple[int, int], tuple[Message, ...]] | None = None,
    ) -> tuple[ChainCode, str] | None:
        """Why a ready event is not the next link of its author's chain, if it is not (with
        its code): it names another predecessor, its frontier names another event before it,
        or (received, not read back from our log) it is not timed above every event it says
        it holds, or more than :data:`MAX_CLOCK_JUMP` past them (a leap: of a forked feed, the
        version named by id, held or in a proof kept, ``versions``: :func:`version_time`)."""
        frontier, feed = body.frontier, self.feeds[seat]
        last = feed[-1].id if feed else None
        faults = link_faults(message.seq, message.prev, frontier[seat], last)
        if faults:
            if faults[0] is LinkFault.PREV:
                detail = f"event {message.seq} does not follow the author's event {len(feed)}"
            else:
                detail = f"event {message.seq} says it follows event {frontier[seat]}"
            return ChainCode.BROKEN_CHAIN, detail
        if source is Source.LOG:
            return None  # from our log: its times were checked when it first came
        clash = self.time_clash(message, frontier, forked_at)
        if clash is not None:
            return ChainCode.BROKEN_CHAIN, (
                f"Lamport time {message.lamport} is not above the events it has seen "
                f"(seat {clash[0]} event {clash[1]})"
            )
        feeds = self.feeds
        named = functools.partial(version_time, feeds, body.frontier_ids, versions or {})
        top, _ = named_top(functools.partial(held_time, feeds), seat, frontier, forked_at, named)
        took = took_time(feeds, versions or {}, body) if type(body) is Drop else None
        if leaps(message.lamport, top, body, took):
            # No honest author leads what it names by that much (§5.3); following it would
            # exhaust the clock. The same answer at every member holding what it names.
            return ChainCode.CLOCK_JUMP, (
                f"Lamport time {message.lamport} is far past the events it names ({top})"
            )
        return None

    def past_missing(self, frontier: tuple[int, ...]) -> bool:
        """Whether an event naming ``frontier`` must still wait for part of its causal past."""
        cap = self.dep_cap
        feeds = self.feeds
        if not cap:
            return any(map(gt, frontier, map(len, feeds)))  # (no cap: C loops)
        return any(min(frontier[q], cap.get(q, frontier[q])) > len(feeds[q]) for q in range(self.n))

    def cap(self, seat: int, upto: int) -> bool:
        """Let events be delivered once ``seat``'s feed is held up to ``upto``, whatever more of
        it their frontier names (a forked or dropped feed). Whether the cap was lowered."""
        if upto < self.dep_cap.get(seat, upto + 1):
            self.dep_cap[seat] = upto
            self.redrain = True
            return True
        return False

    def time_clash(
        self, message: Message, frontier: tuple[int, ...], forked_at: dict[int, int]
    ) -> tuple[int, int] | None:
        """The first (seat, seq) of the frontier held here timed at or above ``message``."""
        feeds = self.feeds
        lamport = message.lamport
        for q in range(self.n):
            acked = frontier[q]
            if not acked or acked > len(feeds[q]):
                continue  # nothing acked, or past a forked or dropped feed's cap: nothing here
            if forked_at and may_name_other_version(acked, forked_at.get(q, 0)):
                continue  # it may hold the other version of a proven fork: times differ
            if not timed_after(lamport, feeds[q][acked - 1].lamport):
                return q, acked
        return None

    def truncate(self, seat: int, keep: int) -> bool:
        """Give up ``seat``'s events after ``keep``; whether any went."""
        feed = self.feeds[seat]
        if keep >= len(feed):
            return False
        self._give_up(seat, feed[keep])
        del feed[keep:]
        self.redrain = True
        self.want_at[seat] = 0.0
        return True

    def going_on_from(
        self, seat: int, message: Message, body: EventBody, source: Source, fork: int | None
    ) -> bool:
        """Keep a refused event that is the next of ``seat``'s feed, proven here to fork at our
        head (``fork``: the first seq proven forked), and follows the other version; whether
        it is one (then :meth:`going_on_at` gives it back)."""
        feed = self.feeds[seat]
        held = len(feed)
        if not (held and message.seq == held + 1 and fork == held and message.prev != feed[-1].id):
            return False
        self.going_on[seat] = (message, body, source)
        return True

    def going_on_at(self, seat: int, fork: int | None) -> tuple[Message, EventBody, Source] | None:
        """The kept next event of ``seat``'s feed, forked at ``fork``, while our version is
        still the head here (else it is forgotten): the chain that goes on (§9.4, "Following
        the chain that goes on").

        A cheater sent one version to us alone while we slept, and the other to everyone;
        the members still in built on theirs, and voted us out while we slept, some with
        votes on that chain. Holding ours, we could never take the chain that goes on, nor
        the votes on it: we waited in the round for ever (session 9's scan of forks sent to
        a sleeper, 3 to 5 players). Ours was never final: the others never held it, so never
        covered it. The peer follows it only while votes against us are held (we may be out:
        then our own vote on the fork never counts, and only the chain that goes on can tell
        us), and before any vote or drop says which chain counts (then that one does,
        :meth:`follow_kept`, :meth:`follow_voted`): a member in the game keeps its version and
        votes, and the votes settle the fork for everyone."""
        going = self.going_on.get(seat)
        if going is None or fork is None or len(self.feeds[seat]) != fork:
            self.going_on.pop(seat, None)
            return None
        return going

    def switch_from(self, seat: int, fork: int, other: Message) -> None:
        """Follow ``other``, the version of ``seat``'s event ``fork`` that the chain going on
        is on: it is the one required (the caller then gives ours up)."""
        del self.going_on[seat]
        self.required[seat] = {fork: other.id[:ID_PREFIX]}

    def switched(
        self,
        seat: int,
        fork: int,
        going: tuple[Message, EventBody, Source],
        other: Message,
        body: EventBody,
    ) -> bool:
        """Whether our version of ``seat``'s event ``fork`` went (it may be final: then keep it,
        and the chain it is on); if so, the other version and the next event wait again."""
        if len(self.feeds[seat]) != fork - 1:
            del self.required[seat]
            return False
        # (From our log, the other version follows in it: we switched before, and logged it.)
        pending = self.pending[seat]
        pending[fork] = (other, body, going[2])
        pending.setdefault(going[0].seq, going)
        return True

    def follow(self, seat: int, required: dict[int, bytes]) -> int | None:
        """Drop the pending events of ``seat`` that are not on ``required`` (seq -> id prefix),
        and return the first held seq that is not on it (``None``: all are)."""
        feed = self.feeds[seat]
        held = len(feed)
        bad = [q for q in required if q <= held and not matches(required, q, feed[q - 1].id)]
        pending = self.pending[seat]
        for q in [q for q, (m, _, _) in pending.items() if not matches(required, q, m.id)]:
            self._give_up(seat, pending.pop(q)[0])
        return min(bad) if bad else None

    # -- the chain that counts --------------------------------------------------------------
    def follow_kept(self, state: GameState, own: int) -> list[Followed]:
        """Follow the chain a drop keeps (``state.kept_forks``, ``state.kept_ids``) of a member
        that forked (or any dropped member), other than ``own``: give up what waits off it,
        and say which feeds to cap at the kept event and where ours parts from it (§9.4).

        Ours was never final past the point where the chains part (the holders of the kept
        chain never announced ours, so it was never covered)."""
        followed = []
        for seat, kept in state.kept_forks.items():
            if seat == own or self.kept_seen.get(seat) == kept:
                continue
            followed.append(self._follow_chain(seat, kept, dict(state.kept_ids.get(seat, {}))))
        return followed

    def follow_voted(self, state: GameState, own: int, forked_at: dict[int, int]) -> list[Followed]:
        """Follow the chain the counted votes quote of a member proven here to fork, before its
        drop is decided here, where ours is the other version (§9.4).

        The drop may wait on an event of that chain: one of the member's own votes, against
        us, that a majority counted while we slept (soak seed 893: we never took the chain the
        drop keeps, so never the vote that dropped us, so never the drop that keeps it). Ours
        was never final past the fork: the voters hold another version and announce theirs.
        Our own vote, if it counts, quotes ours, and the chain then stops below the split
        (:func:`~p2p_nertz.protocol.state.vote_cut`): nothing to follow.
        """
        followed = []
        for seat, fork in forked_at.items():
            if seat == own:
                continue
            voted = voted_chain(state, seat, fork)
            if voted is None:
                continue
            cut, chain = voted
            if self.kept_seen.get(seat) == (cut, chain[cut]):
                continue
            feed = self.feeds[seat]
            if any(fork <= q <= len(feed) and not matches(chain, q, feed[q - 1].id) for q in chain):
                followed.append(self._follow_chain(seat, (cut, chain[cut]), chain))
        return followed

    def follow_rejoined(self, state: GameState, own: int) -> list[Parting]:
        """Follow the chain a readmission names (``state.rejoin_ids``) of the member it
        readmits (§9.8): give up what waits off it, and say where ours parts from it.

        The member may have forked while it was out (a version sent to us alone, its real
        event lost in a partition): the fork lies in its gap, where nothing counts, but we
        could never take its feed further, nor anything that follows from it (soak seed
        442). The readmission quotes the ids of the chain its author holds, up to the rejoin
        request: that chain is the one every member follows from then on."""
        partings = []
        for seat, quoted in state.rejoin_ids.items():
            if seat == own or self.rejoin_seen.get(seat) == quoted:
                continue
            self.rejoin_seen[seat] = quoted
            required = self.required.setdefault(seat, {})
            for q, prefix in quoted.items():
                required.setdefault(q, prefix)
            bad = self.follow(seat, quoted)
            if bad is not None:
                partings.append(Parting(seat, bad - 1))
        return partings

    def _follow_chain(
        self, seat: int, kept: tuple[int, bytes], required: dict[int, bytes]
    ) -> Followed:
        """Follow ``required`` (seq -> id prefix) of ``seat``'s feed, up to ``kept``."""
        self.kept_seen[seat] = kept
        self.required[seat] = required
        bad = self.follow(seat, required)
        return Followed(seat, kept[0], None if bad is None else bad - 1)

    def ids(self, seat: int, last: int, window: int) -> tuple[bytes, ...]:
        """The id prefixes a vote quotes: our copies of ``seat``'s last ``window`` events up
        to ``last``."""
        feed = self.feeds[seat]
        return tuple(m.id[:ID_PREFIX] for m in feed[max(0, last - window) : last])

    def uncap(self, seat: int) -> None:
        """``seat``'s feed counts in full again (a member readmitted)."""
        self.dep_cap.pop(seat, None)
        self.redrain = True

    # -- gap repair -------------------------------------------------------------------------
    def behind(
        self, seat: int, beat: Beat, ahead: Iterable[int], dropped: dict[int, int]
    ) -> list[tuple[int, int]]:
        """The gaps a sound beat of ``seat`` shows, as (feed, up to): the feeds it holds more
        of (``ahead``, no further than a final cut in ``dropped``: past it nothing counts),
        and its own feed up to its head."""
        feeds = self.feeds
        gaps = []
        for q in ahead:
            count = beat.held[q]
            upto = min(count, dropped.get(q, count))
            if upto > len(feeds[q]):
                gaps.append((q, upto))
        if beat.head_seq > len(feeds[seat]):
            gaps.append((seat, beat.head_seq))
        return gaps

    def fork_asks(
        self, forks: Iterable[tuple[int, int, int]], dropped: dict[int, int], now: float
    ) -> list[tuple[int, int, int]]:
        """Which of the forks a beat shows (feed, first, last seq to fetch) to ask for now: not
        of a member whose drop is final here (the chain that counts is settled: nothing more
        to prove), and at most every ``want_interval`` per feed."""
        asks = []
        for q, first, last in forks:
            if q not in dropped and now >= self.want_at[q]:
                self.want_at[q] = now + self.want_interval
                asks.append((q, first, last))
        return asks

    def gap(self, seat: int, upto: int, source: PeerId, now: float) -> bool:
        """``source`` holds ``seat``'s feed up to ``upto``. Whether to ask it now (no
        ``want_delay``); otherwise the gap is noted, and asked for once due (:meth:`due`).

        The gap is asked of whoever announced the most of the feed, unless that member was
        asked for the same next event already and it has not come: then of another announcer
        (``source``), up to the most announced. Otherwise a member that announces a head of
        its own past what it gives us (a liar that withholds an event from us alone, beating
        us its head, one past it or not) was asked again and again while the others, who
        hold the event and announce it too, never were: a peer at the game's end whose final
        fold waited for that event (another member announced holding it, so what its author
        said of its feed counted no further, ``Finality.bounds``) waited for good once the
        others stopped (docs/protocol.md §9.2, *an event past the end, withheld*)."""
        if self.want_delay <= 0:
            return True
        due, known, held = self.gaps.get(seat, (now + self.want_delay, 0, source))
        if upto > known:
            self.gaps[seat] = (due, upto, source)
        elif source != held and self.asked.get(seat) == (len(self.feeds[seat]) + 1, held):
            self.gaps[seat] = (due, known, source)
        return False

    def due(self, now: float) -> list[tuple[int, int, PeerId]]:
        """The gaps still open whose ``want_delay`` has passed: (seat, upto, source), taken."""
        asks = []
        for seat, (due, upto, source) in list(self.gaps.items()):
            if len(self.feeds[seat]) >= upto:
                del self.gaps[seat]  # it came
            elif now >= due:
                del self.gaps[seat]  # asked for now; a later beat reopens it if need be
                asks.append((seat, upto, source))
        return asks

    def want(self, seat: int, upto: int, source: PeerId, now: float) -> tuple[int, int] | None:
        """The seqs of ``seat`` to ask ``source`` for, up to ``upto`` (``None``: asked too
        recently, or all are here or waiting)."""
        if now < self.want_at[seat]:
            return None
        first = len(self.feeds[seat]) + 1
        # Skip what is already waiting in pending.
        while first in self.pending[seat] and first <= upto:
            first += 1
        if first > upto:
            return None
        self.want_at[seat] = now + self.want_interval
        self.asked[seat] = (len(self.feeds[seat]) + 1, source)
        return first, min(upto, first + self.max_want - 1)

    def answer(self, want: Want) -> list[Message]:
        """The events a ``want`` asks for that are held here (at most ``max_want``)."""
        feed = self.feeds[want.seat]
        last = min(want.last, len(feed), want.first + self.max_want - 1)
        return feed[want.first - 1 : last]


# -- the chain rules -------------------------------------------------------------------------
# One home for each: Feeds (so the peer and the spectator) and the audit's delivery
# (p2p_nertz.audit.delivery), which cannot keep its feeds here (docs/architecture.md), call them.


class LinkFault(enum.Enum):
    """How an event fails to be the next link of its author's chain (§5.1)."""

    #: Its ``prev`` does not name the id of the author's event before it.
    PREV = "prev"
    #: Its frontier does not name the author's own event before it (``seq - 1``).
    OWN_ACK = "own_ack"


_LINKED: tuple[LinkFault, ...] = ()
_FAULTS = {
    (False, True): (LinkFault.PREV,),
    (True, False): (LinkFault.OWN_ACK,),
    (False, False): (LinkFault.PREV, LinkFault.OWN_ACK),
}


def link_faults(
    seq: int, prev: bytes | None, own_ack: int, last_id: bytes | None
) -> tuple[LinkFault, ...]:
    """How event ``seq`` with ``prev``, whose frontier names ``own_ack`` of its author's own
    feed, fails to follow the author's event held before it (id ``last_id``, ``None`` before
    the first); empty: it is the next link.

    >>> link_faults(2, b"a", 1, b"a"), link_faults(2, b"b", 0, b"a")
    ((), (<LinkFault.PREV: 'prev'>, <LinkFault.OWN_ACK: 'own_ack'>))
    """
    linked = prev == last_id
    acked = own_ack == seq - 1
    return _LINKED if linked and acked else _FAULTS[linked, acked]


def timed_after(lamport: int, acked: int) -> bool:
    """Whether an event timed ``lamport`` is timed after one it follows or acknowledges, timed
    ``acked``: Lamport clocks strictly increase along every causal link (DESIGN.md §3).

    >>> timed_after(5, 4), timed_after(5, 5)
    (True, False)
    """
    return lamport > acked


def named_top(
    time_of: Callable[[int, int], int | None],
    seat: int,
    frontier: tuple[int, ...],
    forked_at: Mapping[int, int],
    version_time: Callable[[int, int], int | None] | None = None,
) -> tuple[int, bool]:
    """The latest Lamport time of the events ``frontier`` (of an event of ``seat``) names
    that are held (``time_of(q, f)``: the time of ``q``'s event ``f``, ``None`` where it is
    not held): its author's own previous event, and each other named event held, but one of
    a feed proven forked (``forked_at``: seat -> first seq seen forked) that may be the other
    version, unless ``version_time(q, f)`` gives the time of the very version the frontier
    names by id (the audit's, which may read both; a peer's, of the version it holds or a
    proof it keeps, since session 40: ``None`` where it has neither); and whether a
    named event is not held (past a feed's cap at a peer; not read yet by the audit). What
    an event leaps from
    (:func:`leaps`): the peer's rule (:meth:`Feeds.chain_problem`) and the audit's
    (``audit.delivery``) alike.

    >>> times = {(0, 1): 10, (1, 1): 30, (2, 1): 20}.get  # (seat, seq): time, where held
    >>> named_top(lambda q, f: times((q, f)), 0, (1, 1, 1), {})
    (30, False)
    >>> named_top(lambda q, f: times((q, f)), 0, (1, 1, 2), {})  # seat 2's event 2: not held
    (30, True)
    >>> named_top(lambda q, f: times((q, f)), 0, (1, 1, 0), {1: 1})  # seat 1 forked from 1
    (10, False)
    """
    own = frontier[seat]
    top = (time_of(seat, own) or 0) if own else 0
    unheld = False
    for q, acked in enumerate(frontier):
        if not acked or q == seat:
            continue
        if forked_at and may_name_other_version(acked, forked_at.get(q, 0)):
            if version_time is None:
                continue  # (it may hold the other version: its time is not known here)
            time = version_time(q, acked)
        else:
            time = time_of(q, acked)
        if time is None:
            unheld = True
        elif time > top:
            top = time
    return top, unheld


def held_time(feeds: Sequence[Sequence[Message]], q: int, seq: int) -> int | None:
    """The Lamport time of ``q``'s event ``seq`` held in ``feeds`` (``None``: not held)."""
    feed = feeds[q]
    return feed[seq - 1].lamport if seq <= len(feed) else None


def version_time(
    feeds: Sequence[Sequence[Message]],
    ids: tuple[bytes, ...],
    versions: Mapping[tuple[int, int], tuple[Message, ...]],
    q: int,
    seq: int,
) -> int | None:
    """The Lamport time of the version of ``q``'s event ``seq`` that ``ids`` (an event's
    ``frontier_ids``) names, held (``feeds``) or kept in a proof (``versions``: (seat, seq) ->
    its two messages, ``Proofs.pairs``); ``None``: not known here (an event of the other branch
    past the fork, or past a cap). A peer's ``version_time`` for :func:`named_top` (§5.3)."""
    named = ids[q] if ids else b""
    if not named:
        return None
    return _named_version(feeds, versions, q, seq, named)


def _named_version(
    feeds: Sequence[Sequence[Message]],
    versions: Mapping[tuple[int, int], tuple[Message, ...]],
    q: int,
    seq: int,
    named: bytes,
    *,
    judged: dict[bytes, int | None] | None = None,
) -> int | None:
    """The time of ``q``'s event ``seq`` whose id starts with ``named``, held (delivered:
    judged as it came) or in a proof, judged by what it names first (:func:`fetched_time`;
    ``judged``: the versions judged so far in this call, by id)."""
    if seq <= len(feeds[q]) and feeds[q][seq - 1].id.startswith(named):
        return feeds[q][seq - 1].lamport
    version = _kept_version(versions, q, seq, named)
    if version is None:
        return None
    if judged is None:  # (the first call: what it names judged first, deepest first)
        judged = {}
        for s, below in deepest_first(
            (q, version), lambda n: _kept_below(feeds, versions, n), lambda n: n[1].id, judged
        ):
            _named_version(feeds, versions, s, below.seq, below.id, judged=judged)
    if version.id not in judged:
        judged[version.id] = None  # (a version naming itself, down a chain, is not known)
        judged[version.id] = _judged(feeds, versions, q, version, judged)
    return judged[version.id]


def deepest_first(
    root: N, below: Callable[[N], Iterable[N]], key: Callable[[N], bytes], done: Container[bytes]
) -> list[N]:
    """``root`` and what it names down a chain (``below``), each after everything below it
    and once (``key``; ``done``: judged already, left out): the order to judge kept versions
    in, so that judging one meets only versions judged (a chain of versions as long as a
    liar likes is no deeper a call than one link: session 42). The members' and the audit's.

    >>> chain = {3: [2], 2: [1], 1: []}
    >>> deepest_first(3, chain.__getitem__, lambda n: bytes([n]), set())
    [1, 2, 3]
    >>> len(deepest_first(5000, lambda n: [n - 1] if n else [], lambda n: n.to_bytes(2), ()))
    5001
    """
    order: list[N] = []
    seen = {key(root)}
    stack: list[tuple[N, Iterator[N]]] = [(root, iter(below(root)))]
    while stack:
        node, rest = stack[-1]
        for child in rest:
            k = key(child)
            if k not in seen and k not in done:
                seen.add(k)
                stack.append((child, iter(below(child))))
                break
        else:
            stack.pop()
            order.append(node)
    return order


def _kept_below(
    feeds: Sequence[Sequence[Message]],
    versions: Mapping[tuple[int, int], tuple[Message, ...]],
    node: tuple[int, Message],
) -> Iterator[tuple[int, Message]]:
    """The versions kept in a proof, not held, that ``node``'s version (seat, message) names."""
    seat, version = node
    body = _version_body(version, len(feeds))
    for q, seq, named in named_by_id(body, seat) if body is not None else ():
        if not (seq <= len(feeds[q]) and feeds[q][seq - 1].id.startswith(named)):
            kept = _kept_version(versions, q, seq, named)
            if kept is not None:
                yield q, kept


def _kept_version(
    versions: Mapping[tuple[int, int], tuple[Message, ...]], q: int, seq: int, named: bytes
) -> Message | None:
    """``q``'s event ``seq`` whose id starts with ``named``, kept in a proof (``None``: not)."""
    for version in versions.get((q, seq), ()):
        if version.is_event and version.seq == seq and version.id.startswith(named):
            return version
    return None


def _version_body(version: Message, seats: int) -> EventBody | None:
    """A kept version's event body (``None``: none; a proof's versions parsed when kept)."""
    try:
        body = parse_body(version.kind, version.body, seats)
    except (ValueError, TypeError):
        return None
    return None if isinstance(body, NOT_EVENTS) else body


def named_by_id(body: EventBody, seat: int) -> Iterator[tuple[int, int, bytes]]:
    """The events ``seat``'s ``body`` names by id, (seat, seq, id prefix): its frontier's, and
    what a vote on proof took (§5.3, session 42). The members' and the audit's."""
    ids = body.frontier_ids
    for q, acked in enumerate(body.frontier):
        if acked and ids and ids[q]:
            yield q, acked, ids[q]
    if type(body) is Drop and body.took_seq and body.reason is DropReason.EQUIVOCATION:
        yield body.seat, body.took_seq, body.took_id


def _judged(
    feeds: Sequence[Sequence[Message]],
    versions: Mapping[tuple[int, int], tuple[Message, ...]],
    seat: int,
    version: Message,
    judged: dict[bytes, int | None],
) -> int | None:
    """The time ``seat``'s ``version`` kept in a proof counts at: :func:`fetched_time` of
    the events it names, each held or (by id) in a proof, judged alike."""
    body = _version_body(version, len(feeds))
    if body is None:
        return None
    ids = body.frontier_ids

    def time_of(q: int, f: int) -> int | None:
        if ids and ids[q]:
            return _named_version(feeds, versions, q, f, ids[q], judged=judged)
        return held_time(feeds, q, f) if f <= len(feeds[q]) else None

    top, unheld = named_top(time_of, seat, body.frontier, {})
    took = None
    if type(body) is Drop and body.took_seq and body.reason is DropReason.EQUIVOCATION:
        took = _named_version(
            feeds, versions, body.seat, body.took_seq, body.took_id, judged=judged
        )
    return fetched_time(version.lamport, top, unheld, body, took)


def _missing(
    feeds: Sequence[Sequence[Message]],
    versions: Mapping[tuple[int, int], tuple[Message, ...]],
    name: tuple[int, int, bytes],
    seen: set[bytes],
) -> list[tuple[int, int, bytes]]:
    """The events named (``name``: seat, seq, id prefix) neither held nor kept in a proof,
    down the versions kept that name them: what judging ``name``'s version needs fetched."""
    missing: list[tuple[int, int, bytes]] = []
    names = [name]  # (a stack: down a chain as long as a liar likes, no deeper a call)
    while names:
        q, seq, named = names.pop()
        if seq <= len(feeds[q]) and feeds[q][seq - 1].id.startswith(named):
            continue
        version = _kept_version(versions, q, seq, named)
        if version is None:
            missing.append((q, seq, named))
        elif version.id not in seen:
            seen.add(version.id)
            body = _version_body(version, len(feeds))
            names += reversed(list(named_by_id(body, q))) if body is not None else ()
    return missing


def fetched_time(
    lamport: int, top: int, unheld: bool, body: EventBody | None = None, took: int | None = None
) -> int | None:
    """The time a version fetched (a frontier's named version, session 41; the event a vote
    says it took, session 42), never delivered here, counts at when an event naming it is
    judged: its own ``lamport``, if it leaps by no more than the bound past the latest event
    *it* names, timed ``top`` (:func:`named_top`, ``unheld``: one of them not known here;
    ``body`` and ``took`` as for :func:`leaps`); else ``None``, as a version not known (a
    version no member would deliver lends no event its leap; one naming what is not known
    yet waits for it). The members' rule (``_named_version``) and the audit's
    (``audit.delivery``) alike (docs/protocol.md §5.3, *a version fetched*, session 42).

    >>> fetched_time(5, 3, False), fetched_time(5 + MAX_CLOCK_JUMP, 3, False)
    (5, None)
    >>> fetched_time(5 + MAX_CLOCK_JUMP, 3, True)  # (what it names may be later: not known)
    """
    if leaps(lamport, top, body, took):
        return None
    return lamport


def taken_past(feed: Sequence[Message], counted: int) -> tuple[int, bytes]:
    """What a vote on proof counting ``counted`` of a member's ``feed`` (as its author holds
    it) says its author's clock took past that (``Drop.took_seq``, ``took_id``): the last
    event held, by seq and id prefix, if past it; else ``(0, b"")`` (§5.3, session 42)."""
    return (len(feed), feed[-1].id[:ID_PREFIX]) if len(feed) > counted else (0, b"")


def took_time(
    feeds: Sequence[Sequence[Message]],
    versions: Mapping[tuple[int, int], tuple[Message, ...]],
    body: EventBody,
) -> int | None:
    """The Lamport time of the event a vote on proof says its author took past what it
    counts (``Drop.took_seq``, ``took_id``), held here or kept in a proof (``versions``, as
    :func:`version_time`); ``None``: none named, or not known here (asked for:
    :func:`unknown_versions`). What :func:`leaps` lets the vote lead from (§5.3, session
    42)."""
    if type(body) is not Drop or not body.took_seq or body.reason is not DropReason.EQUIVOCATION:
        return None
    return _named_version(feeds, versions, body.seat, body.took_seq, body.took_id)


def unknown_versions(
    feeds: Sequence[Sequence[Message]],
    seat: int,
    body: EventBody,
    forked_at: Mapping[int, int],
    versions: Mapping[tuple[int, int], tuple[Message, ...]],
) -> list[tuple[int, int, bytes]]:
    """The events (seat, seq, id prefix) that ``body``'s frontier (of an event of ``seat``)
    names by an id whose version is neither held here nor kept in a proof (``versions``): of a
    feed proven forked, past the fork (the other branch: :func:`named_top` counts nothing of
    it), or held under another id (a fork not proven here yet: counted at the version held);
    and the event a vote on proof says its author took (:func:`took_time`, session 42). Of
    a version kept but not judged yet (:func:`fetched_time`), those it names, down the
    chain (session 42). An event refused as a leap was judged without them: a peer asks for
    them, and judges it again, fetched again, from what it learns (``Proofs.ask_versions``;
    §5.3, session 41)."""
    ids = body.frontier_ids
    unknown: list[tuple[int, int, bytes]] = []
    seen: set[bytes] = set()
    for q, acked in enumerate(body.frontier):
        if not acked or q == seat or not ids or not ids[q]:
            continue
        if acked > len(feeds[q]) and not may_name_other_version(acked, forked_at.get(q, 0)):
            continue  # (past a cap, never forked here: no version to ask for)
        if version_time(feeds, ids, versions, q, acked) is None:
            unknown += _missing(feeds, versions, (q, acked, ids[q]), seen)
    if type(body) is Drop and body.took_seq and took_time(feeds, versions, body) is None:
        unknown += _missing(feeds, versions, (body.seat, body.took_seq, body.took_id), seen)
    return unknown


def leaps(lamport: int, top: int, body: EventBody | None = None, took: int | None = None) -> bool:
    """Whether an event timed ``lamport`` leaps past the events it names, the latest timed
    ``top`` (:func:`named_top`): by more than :data:`MAX_CLOCK_JUMP` past ``top + 1``, which
    no honest author's event does (docs/protocol.md §5.3, *the leap bound*). Every member and
    the audit refuse such an event (``clock_jump``). A vote on proof (``body``: an
    equivocation drop) may lead by the bound once more: it counts its member's feed below
    the fork, whose version its author may hold and have taken whole into its clock, timed
    up to the bound past what the vote names (session 40); or from ``took``, if later: the
    time of the event it says its author took past what it counts (:func:`took_time`, as
    this receiver knows it), which its author's clock took whole, however many events past
    the fork it took (session 42).

    >>> leaps(1 + 1 + MAX_CLOCK_JUMP, 1), leaps(1 + 2 + MAX_CLOCK_JUMP, 1)
    (False, True)
    >>> vote = Drop((1, 0), 1, 0, DropReason.EQUIVOCATION, 1)
    >>> leaps(2 * (1 + MAX_CLOCK_JUMP) + 1, 1, vote), leaps(2 * (1 + MAX_CLOCK_JUMP) + 2, 1, vote)
    (False, True)
    >>> took = 3 * (1 + MAX_CLOCK_JUMP)  # (two brinks past the first: what it took, known)
    >>> [leaps(took + more + MAX_CLOCK_JUMP, 1, vote, took) for more in (1, 2)]
    [False, True]
    """
    if type(body) is Drop and body.reason is DropReason.EQUIVOCATION:
        top += 1 + MAX_CLOCK_JUMP  # (the fork's version it held, named by no frontier)
        if took is not None and took > top:
            top = took  # (the latest event it took past what it counts, §5.3)
    return lamport > top + 1 + MAX_CLOCK_JUMP


def may_name_other_version(acked: int, forked_from: int) -> bool:
    """Whether an acknowledgement of ``acked`` events of a feed seen to fork from seq
    ``forked_from`` (``0``: not seen to fork) may name the other version of the fork: then its
    time is not compared with the version held (the versions' times differ, §9.4 "Living with
    a fork").

    >>> may_name_other_version(3, 3), may_name_other_version(2, 3), may_name_other_version(9, 0)
    (True, False, False)
    """
    return 0 < forked_from <= acked


def lies_about_time(beat_lamport: int, head: int, seq: int, lamport: int) -> bool:
    """Whether its author's event ``seq`` timed ``lamport`` contradicts a beat of its timed
    ``beat_lamport`` announcing head ``head``: a beat says that nothing of its author past its
    head comes at or below its clock (§7.2, §9.4). The two signed messages prove a lie.

    >>> lies_about_time(10, 4, 5, 10), lies_about_time(10, 4, 5, 11), lies_about_time(10, 5, 5, 3)
    (True, False, False)
    """
    return seq > head and lamport <= beat_lamport


def matches(required: dict[int, bytes], seq: int, message_id: bytes) -> bool:
    """Whether an event id is the one (or has the prefix) ``required`` names at ``seq``."""
    want = required.get(seq)
    return want is None or message_id[: len(want)] == want
