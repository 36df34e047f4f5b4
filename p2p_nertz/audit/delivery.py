"""Every author's feed as the logs deliver it: the chain, the clocks, the forks.

Events are merged by id. Each author's feed must run from seq 1 with every ``prev`` the id of
the event before, its Lamport clock must increase, and every event must be timed above every
event its frontier acknowledges (an event acknowledged before it is delivered waits in the
feed's ``waiting``) and above the clock a logged beat announced with the head before it, and
never leap past the events it names (the peers' ``clock_jump``: an event that would leap past
those read so far waits, as at a peer, for the events it names, or the pass's end). Two
signed events with one author and seq are an equivocation. :class:`Delivery` checks all this
and hands each event delivered in order to the fold (:mod:`p2p_nertz.audit.fold`) as it
delivers it.

It also keeps what the next pass needs to settle a fork: the versions of each event of a
member seen to fork that each member's log holds (:meth:`ForkWatch.held_chain`) and, of one
log alone, the version its peer delivered last (:meth:`ForkWatch.followed_chain`); and what proves
cheating (two versions read, a lie about time), which :mod:`p2p_nertz.audit.evidence` weighs.

Per event a feed keeps 24 bytes: a 16-byte id prefix (:data:`PREFIX`) to recognise an
equivocation whenever the second version comes, and the Lamport time to check frontiers.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable

from p2p_nertz.audit.collect import Collector
from p2p_nertz.audit.findings import Finding, FindingKind
from p2p_nertz.audit.logs import Log
from p2p_nertz.protocol.bodies import (
    ID_PREFIX,
    NOT_EVENTS,
    Beat,
    Drop,
    DropReason,
    EventBody,
    parse_body,
)
from p2p_nertz.protocol.envelope import KIND_DROP, Kind, Message
from p2p_nertz.protocol.feeds import (
    MAX_CLOCK_JUMP,
    LinkFault,
    deepest_first,
    fetched_time,
    leaps,
    lies_about_time,
    link_faults,
    matches,
    may_name_other_version,
    named_by_id,
    named_top,
    timed_after,
)
from p2p_nertz.protocol.state import Event

__all__ = ["PREFIX", "Delivery", "Feed", "ForkWatch"]

PREFIX = 16  # bytes of each event id kept to recognise a second version of it
_Versions = dict[tuple[int, int, bytes], Message]  # (seat, seq, id prefix) -> a version read


class Feed:
    """What the audit keeps of one author's feed."""

    __slots__ = (
        "beats",
        "forked",
        "head",
        "lamports",
        "last_id",
        "last_lamport",
        "leapt",
        "named",
        "pending",
        "prefixes",
        "refused",
        "waiting",
    )

    def __init__(self) -> None:
        self.head = 0
        self.last_id: bytes | None = None
        self.last_lamport = 0
        self.lamports = array("Q")
        self.prefixes = bytearray()
        self.pending: dict[int, tuple[Message, EventBody, int]] = {}
        self.forked = 0  # the first seq where a second version was seen (0: none)
        # past its fork, what events delivered named of it (Fold.finish): (its seq named,
        # the naming event's seat and seq)
        self.named: list[tuple[int, int, int]] = []
        self.beats: dict[int, int] = {}  # announced head seq -> highest clock announced with it
        self.waiting: dict[int, list[tuple[int, int, int, Kind, bytes]]] = {}
        # The first seq a peer refuses for its link (its frontier does not hold the author's
        # own event before it, or it is timed at or below the author's event before it or an
        # event its frontier acknowledges, or leaps past the events it names: protocol.feeds'
        # chain rule), 0: none. No peer
        # delivers it or any event after it (they follow it), so none is folded (session 39).
        self.refused = 0
        # Its events delivered that leap past what they name (named ``clock_jump``, by seq):
        # no peer delivers one, so one lends an event naming it no time (session 43).
        self.leapt: set[int] = set()

    def time(self, seq: int) -> int | None:
        """The time its event ``seq``, delivered, lends an event naming it: its own, unless
        it leaps past what it names (:func:`~p2p_nertz.protocol.feeds.fetched_time`'s rule,
        as a peer judges a version it did not deliver; ``None``: not delivered, or a leap)."""
        if seq > self.head or seq in self.leapt:
            return None
        return self.lamports[seq - 1]

    def __len__(self) -> int:
        """How many of its events are delivered (seq 1 on): what the finality rule reads of
        a feed (:func:`~p2p_nertz.protocol.finality.released`)."""
        return self.head

    def prefix(self, seq: int) -> bytes:
        return bytes(self.prefixes[(seq - 1) * PREFIX : seq * PREFIX])


class Delivery:
    """Every author's feed: the events delivered, checked, and handed on to be folded.

    Args:
        found: the pass's findings.
        forks: of a member dropped or proven to fork, the chain that counts (seq -> id
            prefix), from the last pass: the other version of an event there is the fork's
            losing side.
        watch: the members the last pass saw fork, from their first forked seq.
        hold: where each event delivered in order goes at once (:meth:`Fold.hold
            <p2p_nertz.audit.fold.Fold.hold>`), as the findings go to ``found``.
        one_log: the pass reads one log alone (its peer's view).
        kinds: keep the kind of each event delivered (a log's own view, for
            :mod:`p2p_nertz.audit.views`).
        taken: seat -> the last seq of its feed the table took, from the last pass
            (:meth:`Logs.taken <p2p_nertz.audit.logs.Logs.taken>`): its events past it are
            delivered and checked, never handed to ``hold``.
    """

    def __init__(
        self,
        found: Collector,
        forks: dict[int, dict[int, bytes]],
        watch: dict[int, int],
        hold: Callable[[Event], object],
        *,
        one_log: bool,
        kinds: bool = False,
        taken: dict[int, int] | None = None,
    ) -> None:
        self.found = found
        self.hold = hold
        self.taken = taken or {}
        self.members = found.spec.members
        self.seats = seats = found.spec.seats
        self.forks = forks
        self.feeds = [Feed() for _ in range(seats)]
        for seat, first in watch.items():
            # Known to fork from the last pass (or its proof notes, for one log): events that
            # name more of its feed wait for no more than the fork, as a peer's do (§9.4,
            # "Living with a fork"); else a log whose peer held the other version named the
            # members who held this one for events no log holds.
            self.feeds[seat].forked = first
        # seat -> the first seq at which the last pass saw it fork: from there on, which
        # member's log holds which version of each of its events (ForkWatch.saw)
        self.watch = dict(watch)
        self.watched = ForkWatch(one_log=one_log)
        # What proves cheating (weighed by the evidence): (seat, seq) -> the id prefixes of the
        # signed versions of a forked event read; the losing versions of a kept fork; and
        # (seat, head, seq) from logged beats its events contradict.
        self.versions: dict[tuple[int, int], set[bytes]] = {}
        self.unseen_forks: set[tuple[int, int]] = set()
        # The finding of each event read off a kept chain whose version no log read yet:
        # named at the end of the pass only if that version was read (:meth:`missing`).
        self.unseen_findings: dict[tuple[int, int, bytes], tuple[Finding, bytes]] = {}
        self.lies: list[tuple[int, int, int]] = []
        self.accusations: list[Event] = []  # delivered votes on proof of cheating
        # Events whose frontier names a version of another feed's event that the logs read
        # do not hold: (seat, seq, lamport, kind, other seat, its seq, the id prefix named).
        self.conflicts: list[tuple[int, int, int, Kind, int, int, bytes]] = []
        # Per feed, the kind of each event delivered: only for a log's own view.
        self.kinds: list[bytearray] | None = [bytearray() for _ in range(seats)] if kinds else None
        # seat -> the seats whose next event would leap past the events it names read so far
        # and waits for more of that seat's feed (:meth:`_leap_waits`); ``settled``: the pass
        # is read whole, what is not read never comes.
        self.leap_waits: dict[int, set[int]] = {}
        self.settled = False
        # (seat, seq, id prefix named in frontiers) -> a version read and not delivered (the
        # other side of a fork): an event naming it leaps from its time (:func:`_read_time`)
        self.version_times: _Versions = {}

    # -- events ----------------------------------------------------------------------------
    def receive(self, message: Message, seat: int, log: Log) -> bool:
        """An event read from ``log``: deliver it and every event that waited for it, each
        handed to ``hold`` as it is delivered; whether it was delivered or now waits (False:
        a copy of one delivered, another version of one, a body that does not parse)."""
        seq = message.seq
        watch = self.watch
        if watch and seq >= watch.get(seat, seq + 1):
            self.watched.saw(message, seat, log)
        feed = self.feeds[seat]
        if (
            seq <= feed.head
            and feed.prefixes[(seq - 1) * PREFIX : seq * PREFIX] == message.id[:PREFIX]
        ):
            return False  # another copy of an event delivered already (its id has the prefix kept)
        try:
            body = parse_body(message.kind, message.body, self.seats)
        except ValueError as exc:
            self.found.once(
                ("body", message.id),
                Finding(
                    FindingKind.BAD_BODY,
                    f"the signed body does not follow its schema: {exc}",
                    log=log.name,
                    record=log.count,
                    **self.found.about_message(message),
                ),
            )
            return False
        assert not isinstance(body, NOT_EVENTS)
        return self._take(message, body, seat, log)

    def _take(self, message: Message, body: EventBody, seat: int, log: Log) -> bool:
        feed = self.feeds[seat]
        seq = message.seq
        if seq <= feed.head:
            known = feed.prefix(seq)
            if known != message.id[:PREFIX]:
                self._equivocation(message, seat, known, log, seen=True)
            return False
        pending = feed.pending
        waiting = pending.get(seq) if pending else None
        if waiting is not None:
            if waiting[0].id != message.id:
                self._equivocation(message, seat, waiting[0].id[:PREFIX], log, seen=True)
            return False
        kept = self.forks.get(seat) if self.forks else None
        if kept is not None and not matches(kept, seq, message.id):
            # The drop kept the chain its votes quote, and the other version: this one is the
            # fork's losing side, at the cut or below it (soak seed 893: a fork 20 events below
            # the cut, read first in its losing version, broke the feed).
            self._equivocation(message, seat, kept[seq], log, seen=False)
            return False
        if seq == feed.head + 1 and not self._leap_waits(seat, message, body):
            self._deliver(seat, message, body)  # the usual case: the next event of the feed
        else:
            pending[seq] = (message, body, log.index)
        if pending:
            self._drain(seat)
        return True

    def _drain(self, seat: int) -> None:
        """Deliver the events of ``seat`` waiting for the one before them, in order, up to one
        that still waits for the events it names (:meth:`_leap_waits`)."""
        feed = self.feeds[seat]
        pending = feed.pending
        while pending and feed.head + 1 in pending:
            msg, parsed, _ = pending[feed.head + 1]
            if self._leap_waits(seat, msg, parsed):
                return
            del pending[feed.head + 1]
            self._deliver(seat, msg, parsed)

    def _leap_waits(self, seat: int, message: Message, body: EventBody) -> bool:
        """Whether the next event of ``seat`` would leap past the events it names read so far
        (:func:`~p2p_nertz.protocol.feeds.leaps`) while one of them is not read yet: a peer
        judges it when its causal past is held (``Feeds.chain_problem``), so it waits, here,
        for more of the feeds it names (or the pass's end), its feed's later events with it."""
        if self.settled or not leaps(message.lamport, self.feeds[seat].last_lamport):
            return False  # (the usual case: not past its own previous event by the bound)
        top, unheld = _named_top(self.feeds, self.version_times, seat, body)
        took = _took_time(self.feeds, self.version_times, body)
        unheld = unheld or (took is None and type(body) is Drop and body.took_seq > 0)
        if not (unheld and leaps(message.lamport, top, body, took)):
            return False
        for q in range(self.seats):
            if q != seat:
                self.leap_waits.setdefault(q, set()).add(seat)
        return True

    def _deliver(self, seat: int, message: Message, body: EventBody) -> None:
        """Deliver the next event of ``seat``'s feed, and hand it to ``hold`` if its clock
        increases along the feed (else it is read, never folded)."""
        feed = self.feeds[seat]
        seq = message.seq
        lamport = message.lamport
        event = Event(seat, seq, lamport, message.kind, body, message.id)
        frontier = body.frontier
        # The chain rules are protocol.feeds' (the peer's and the spectator's too).
        faults = link_faults(seq, message.prev, frontier[seat], feed.last_id)
        in_order = timed_after(lamport, feed.last_lamport)
        if faults or not in_order:
            self._broken(feed, event, message.prev, faults)  # (a call only when wrong)
        refused = LinkFault.OWN_ACK in faults or not in_order
        if leaps(lamport, feed.last_lamport):  # (else it is no leap: its own event is named)
            top = _named_top(self.feeds, self.version_times, seat, body)[0]
            took = _took_time(self.feeds, self.version_times, body)
            if fetched_time(lamport, top, False, body, took) is None:  # (a leap: lends nothing)
                self._leap(event, top)
                feed.leapt.add(seq)
                refused = True
        feeds = self.feeds
        for q, f in enumerate(frontier):
            if q == seat or f == 0:
                continue
            other = feeds[q]
            if other.forked and may_name_other_version(f, other.forked):
                # It may acknowledge the other version of a fork: times differ. (And the log
                # may never hold what it names: Fold.finish then folds nothing after it.)
                other.named.append((f, seat, seq))
                continue
            if f <= other.head:
                if not timed_after(lamport, other.lamports[f - 1]):
                    self._below_ack(event, q, f, other.lamports[f - 1])
                    refused = True
                ids = body.frontier_ids
                if ids and not other.prefixes.startswith(ids[q], (f - 1) * PREFIX):
                    self._unheld(event, q, f, ids[q])
            else:
                other.waiting.setdefault(f, []).append(
                    (seat, seq, lamport, message.kind, message.id)
                )
        feed.head = seq
        feed.last_id = message.id
        if in_order:  # (a clock that did not increase leaves the feed's clock as it was)
            feed.last_lamport = lamport
        feed.lamports.append(lamport)
        feed.prefixes += message.id[:PREFIX]
        if feed.waiting:  # (empty but when an event came before one it acknowledges)
            for w_seat, w_seq, w_lamport, w_kind, w_id in feed.waiting.pop(seq, ()):
                if not timed_after(w_lamport, lamport):
                    waiting = Event(w_seat, w_seq, w_lamport, w_kind, body, w_id)
                    self._below_ack(waiting, seat, seq, lamport, named=False)
        if feed.beats:  # (empty but when beats were logged)
            announced = feed.beats.pop(seq - 1, None)
            if announced is not None and lies_about_time(announced, seq - 1, seq, lamport):
                self._clock_lie(seat, seq, lamport, announced)
        if self.kinds is not None:
            self.kinds[seat].append(message.kind)
        if message.kind is KIND_DROP:
            assert isinstance(body, Drop)
            if body.reason is DropReason.EQUIVOCATION:
                self.accusations.append(event)
        if refused and not feed.refused:
            feed.refused = seq
        if in_order and not feed.refused and not (self.taken and seq > self.taken.get(seat, seq)):
            # Held until no event still to come can precede it; whether it counts is decided
            # when it is folded (Fold.ready). (One timed below what was folded comes too late
            # to count: read at once, as a peer reads an event timed at or below its stable
            # time; so each is held before the next is delivered.) One the table never took
            # (past ``taken``) no peer still in held: never folded, nor read by the fold.
            self.hold(event)
        if self.leap_waits and seat in self.leap_waits:
            for waiting_seat in sorted(self.leap_waits.pop(seat)):
                self._drain(waiting_seat)

    def _unheld(self, event: Event, q: int, f: int, named: bytes) -> None:
        """``event`` names a version of ``q``'s event ``f`` that is not the one read: its
        author held another (a fork seen, as a peer reads it, docs/protocol.md §9.4), or a
        log's holder re-signed its own feed (:meth:`unjudged`)."""
        self.conflicts.append((event.seat, event.seq, event.lamport, event.kind, q, f, named))
        self.found.unsure.setdefault(event.seat, event.seq)

    def unjudged(self) -> None:
        """At the end of the pass: a member's events from the first that names a version of
        another's event that no log holds (none that a log brought after all: the other
        version of a fork) were made on a history the logs do not hold. The fold read them
        on the logs' version, so what it accuses them of is not theirs to answer: those
        findings are left out, and one ``missing_event`` says why. (A member's log alone,
        its own claims re-timed and its feed re-signed with its own key: the honest other's
        signed result read as a ``result_mismatch``; with the others' logs the editor's
        versions are an equivocation.)"""
        first: dict[int, tuple[int, int, Kind, int, int, bytes]] = {}
        for seat, seq, lamport, kind, q, f, named in self.conflicts:
            if seat in first or any(v.startswith(named) for v in self.versions.get((q, f), ())):
                continue
            first[seat] = (seq, lamport, kind, q, f, named)
        found = self.found
        deferred, found.deferred = found.deferred, []
        found.unsure = {}
        left: dict[int, int] = {}

        def judged(v: Finding) -> bool:
            who, seq = v.seat, v.seq
            if who is None or who not in first or seq is None or seq < first[who][0]:
                return True
            if not v.kind.accuses:
                return True
            left[who] = left.get(who, 0) + 1
            return False

        found.violations[:] = [v for v in found.violations if judged(v)]
        again = [v for v in deferred if judged(v)]
        for seat, count in sorted(left.items()):
            seq, lamport, kind, q, f, named = first[seat]
            found.add(
                Finding(
                    FindingKind.MISSING_EVENT,
                    f"its frontier names a version of {self.members[q].name}'s event {f} that "
                    "no log holds: its events from this one on were made after events the "
                    f"logs do not hold, and the {count} finding(s) against them are left out",
                    expected=f"event {named.hex()}…",
                    found=f"event {self.feeds[q].prefix(f).hex()[: 2 * len(named)]}…",
                    seq=seq,
                    lamport=lamport,
                    event=kind.name.lower(),
                    **found.who(seat),
                )
            )
        for v in again:  # (strict mode's: the first stops the pass)
            found.add(v)

    def _broken(
        self, feed: Feed, event: Event, prev: bytes | None, faults: tuple[LinkFault, ...]
    ) -> None:
        """What is wrong with an event's link to its feed (``faults``): its ``prev`` does not
        name the event before it, nor its frontier its own, or its clock does not increase
        along the feed (then it is never folded)."""
        seq = event.seq
        if LinkFault.PREV in faults:
            self.found.add(
                Finding(
                    FindingKind.BROKEN_CHAIN,
                    f"prev does not name the author's event {seq - 1}",
                    expected=(feed.last_id or b"").hex()[:16] or "nil",
                    found=(prev or b"").hex()[:16] or "nil",
                    **self.found.about(event),
                )
            )
        frontier = event.body.frontier
        if LinkFault.OWN_ACK in faults:
            self.found.add(
                Finding(
                    FindingKind.BROKEN_CHAIN,
                    "its frontier does not hold the author's own previous event",
                    expected=str(seq - 1),
                    found=str(frontier[event.seat]),
                    **self.found.about(event),
                )
            )
        if not timed_after(event.lamport, feed.last_lamport):
            self.found.add(
                Finding(
                    FindingKind.LAMPORT_ORDER,
                    "the author's clock does not increase along its feed",
                    expected=f"lamport > {feed.last_lamport}",
                    found=str(event.lamport),
                    **self.found.about(event),
                )
            )

    def _leap(self, event: Event, top: int) -> None:
        """``event`` leaps past the events it names, the latest timed ``top``: every peer
        refuses it (``clock_jump``), and so what follows it in its feed."""
        self.found.add(
            Finding(
                FindingKind.CLOCK_JUMP,
                f"timed more than 2^32 past the latest event its frontier names (lamport {top})",
                expected=f"lamport <= {top + 1 + MAX_CLOCK_JUMP}",
                found=str(event.lamport),
                **self.found.about(event),
            )
        )

    def _below_ack(self, event: Event, q: int, f: int, lamport: int, *, named: bool = True) -> None:
        found = self.found
        where = found.about(event) if named else {**found.who(event.seat), "seq": event.seq}
        where.setdefault("lamport", event.lamport)
        where.setdefault("event", event.kind.name.lower())
        found.add(
            Finding(
                FindingKind.CLOCK_BELOW_ACK,
                f"timed at or below {self.members[q].name}'s event {f} (lamport {lamport}), "
                "which its frontier acknowledges",
                expected=f"lamport > {lamport}",
                found=str(event.lamport),
                **where,
            )
        )

    # -- beats -----------------------------------------------------------------------------
    def beat(self, message: Message, seat: int) -> None:
        """A logged beat: its clock must not lie about the author's later events."""
        try:
            beat = parse_body(message.kind, message.body, self.seats)
        except ValueError:
            return  # beats carry no game state; a bad one proves little
        if not isinstance(beat, Beat):
            return
        feed = self.feeds[seat]
        after = beat.head_seq + 1
        if after <= feed.head:
            if lies_about_time(message.lamport, beat.head_seq, after, feed.lamports[after - 1]):
                self._clock_lie(seat, after, feed.lamports[after - 1], message.lamport)
        else:
            feed.beats[beat.head_seq] = max(feed.beats.get(beat.head_seq, 0), message.lamport)

    def _clock_lie(self, seat: int, seq: int, lamport: int, announced: int) -> None:
        self.lies.append((seat, seq - 1, seq))
        self.found.once(
            ("beat", seat, seq),
            Finding(
                FindingKind.CLOCK_BELOW_ACK,
                f"timed {lamport}, at or below the clock {announced} its author announced "
                f"before it (a beat with head {seq - 1})",
                seq=seq,
                lamport=lamport,
                expected=f"lamport > {announced}",
                found=str(lamport),
                **self.found.who(seat),
            ),
        )

    # -- forks -----------------------------------------------------------------------------
    def _equivocation(
        self, message: Message, seat: int, other: bytes, log: Log, *, seen: bool
    ) -> None:
        """Two versions of ``seat``'s event: ``other`` is the prefix of the one read first
        (``seen``) or, for a fork a drop settled, the kept one the votes quote."""
        feed = self.feeds[seat]
        feed.forked = min(feed.forked or message.seq, message.seq)
        self.version_times[(seat, message.seq, message.id[:ID_PREFIX])] = message
        if self.leap_waits and seat in self.leap_waits:  # (an event naming it may wait)
            for waiting_seat in sorted(self.leap_waits.pop(seat)):
                self._drain(waiting_seat)
        versions = self.versions.setdefault((seat, message.seq), set())
        versions.add(message.id[:PREFIX])
        finding = Finding(
            FindingKind.EQUIVOCATION,
            f"two different signed events with seq {message.seq}: the author forked its feed",
            log=log.name,
            record=log.count,
            expected=f"event {other.hex()[:16]}…",
            found=f"event {message.id.hex()[:16]}…",
            **self.found.about_message(message),
        )
        if seen:
            versions.add(other)
            self.found.once(("fork", seat, message.seq, message.id), finding)
        else:
            # The kept version is the votes' word, proof only once read (see proven): a vote
            # on proof may quote an id its member never signed, and the drop keep it (at two
            # members the voter's vote alone drops the other, session 38): named at the end
            # of the pass if a log holds it, never on the votes' word alone.
            self.unseen_forks.add((seat, message.seq))
            self.unseen_findings.setdefault((seat, message.seq, message.id), (finding, other))

    def forked(self) -> dict[int, int]:
        """The members seen to fork, from their first forked seq (the watched ones included)."""
        return {seat: feed.forked for seat, feed in enumerate(self.feeds) if feed.forked}

    def proven(self) -> dict[int, list[tuple[int, int]]]:
        """Per seat, the seq ranges at which the events read prove it cheated: two signed
        versions of an event, or a logged beat its event contradicts (once every log is read:
        the kept version of a fork a drop settled counts once read)."""
        proven: dict[int, list[tuple[int, int]]] = {}
        for seat, seq in self.unseen_forks:
            feed = self.feeds[seat]
            if seq <= feed.head:  # the kept version was read after all
                self.versions[(seat, seq)].add(feed.prefix(seq))
        for (seat, seq), ids in self.versions.items():
            if len(ids) > 1:
                proven.setdefault(seat, []).append((seq, seq))
        for seat, head, seq in self.lies:
            proven.setdefault(seat, []).append((head + 1, seq))
        return proven

    # -- the end ---------------------------------------------------------------------------
    def missing(self) -> None:
        """At the end of the pass: the events no log holds that others need (the next of a
        feed with events waiting after it, or one a frontier acknowledges)."""
        # What is not read now never comes: an event that waited for more of the events it
        # names is judged on those read, as a peer judges one naming a feed past its cap.
        self.settled = True
        for seat in range(self.seats):
            self._drain(seat)
        self.leap_waits.clear()
        found = self.found
        for (seat, seq, wire_id), (finding, kept) in self.unseen_findings.items():
            feed = self.feeds[seat]
            if seq <= feed.head and feed.prefix(seq) == kept:  # (the kept version was read)
                found.once(("fork", seat, seq, wire_id), finding)
        for seat, feed in enumerate(self.feeds):
            if feed.pending:
                seqs = sorted(feed.pending)
                found.add(
                    Finding(
                        FindingKind.MISSING_EVENT,
                        f"no log holds event {feed.head + 1} of this feed, so its events "
                        f"{seqs[0]}-{seqs[-1]} cannot be verified or counted",
                        seq=feed.head + 1,
                        **found.who(seat),
                    )
                )
            for f, waiting in sorted(feed.waiting.items()):
                for w_seat, w_seq, w_lamport, w_kind, _ in waiting:
                    found.add(
                        Finding(
                            FindingKind.MISSING_EVENT,
                            f"its frontier acknowledges {self.members[seat].name}'s "
                            f"event {f}, which no log holds",
                            seq=w_seq,
                            lamport=w_lamport,
                            event=w_kind.name.lower(),
                            **found.who(w_seat),
                        )
                    )

    def heads(self) -> list[int]:
        """Per seat, the last seq delivered."""
        return [feed.head for feed in self.feeds]


def _named_top(
    feeds: list[Feed],
    version_times: _Versions,
    seat: int,
    body: EventBody,
    judged: dict[bytes, int | None] | None = None,
) -> tuple[int, bool]:
    """The latest time of the events ``body``'s frontier (of ``seat``) names, read so far, and
    whether one is not (protocol.feeds' rule, the peers': :func:`~p2p_nertz.protocol.feeds.
    named_top`). Of a feed seen to fork, the version its frontier names by id, read here
    (``version_times``: the other side of a fork, :func:`_read_time`): a peer that proved the
    fork may not know which it names, and one that had not, judging it, counted the version
    it held (§13)."""
    ids = body.frontier_ids
    judged = {} if judged is None else judged

    def time_of(q: int, f: int) -> int | None:
        return feeds[q].time(f)

    def version_time(q: int, f: int) -> int | None:
        return _time_named(feeds, version_times, (q, f, ids[q] if ids else b""), judged)

    forked = {q: feed.forked for q, feed in enumerate(feeds) if feed.forked}
    return named_top(time_of, seat, body.frontier, forked, version_time)


def _took_time(
    feeds: list[Feed],
    version_times: _Versions,
    body: EventBody,
    judged: dict[bytes, int | None] | None = None,
) -> int | None:
    """The time of the event a vote on proof says its author took past what it counts, read
    here (delivered, or the other side of a fork), as a peer's :func:`~p2p_nertz.protocol.
    feeds.took_time` (§5.3, session 42); ``None``: none named, or not read (yet)."""
    if type(body) is not Drop or not body.took_seq or body.reason is not DropReason.EQUIVOCATION:
        return None
    key = (body.seat, body.took_seq, body.took_id)
    return _time_named(feeds, version_times, key, {} if judged is None else judged)


def _time_named(
    feeds: list[Feed],
    version_times: _Versions,
    key: tuple[int, int, bytes],
    judged: dict[bytes, int | None],
) -> int | None:
    """The time of the version of an event named by id (``key``: seat, seq, id prefix):
    delivered here, or read as the other side of a fork (:func:`_read_time`)."""
    q, f, named = key
    feed = feeds[q]
    if named and f <= feed.head and feed.prefixes.startswith(named, (f - 1) * PREFIX):
        return feed.time(f)  # (delivered: a leap lends nothing, as a version read, below)
    return _read_time(feeds, version_times, key, judged) if named else None


def _read_time(
    feeds: list[Feed],
    version_times: _Versions,
    key: tuple[int, int, bytes],
    judged: dict[bytes, int | None],
) -> int | None:
    """The time a version read and not delivered (``key``: seat, seq, id prefix) counts at:
    :func:`~p2p_nertz.protocol.feeds.fetched_time`, judged by what it names, as a peer judges
    a version it fetched (§5.3, *a version fetched*, session 42); ``None``: not read, or it
    leaps past what it names (``judged``: the versions judged so far, by id)."""
    message = version_times.get(key)
    if message is None:
        return None
    if message.id not in judged:  # (what it names judged first, deepest first: no deep call)
        for below in deepest_first(
            key,
            lambda k: _read_below(feeds, version_times, k),
            lambda k: _id(version_times, k),
            judged,
        )[:-1]:
            _read_time(feeds, version_times, below, judged)
    if message.id not in judged:
        judged[message.id] = None  # (a chain naming itself is not known)
        body = parse_body(message.kind, message.body, len(feeds))  # (parsed when read)
        assert not isinstance(body, NOT_EVENTS)
        ids = body.frontier_ids

        def time_of(q: int, f: int) -> int | None:  # (every entry by id: its own branch too)
            if ids and ids[q]:
                return _time_named(feeds, version_times, (q, f, ids[q]), judged)
            return feeds[q].time(f)

        top, unheld = named_top(time_of, key[0], body.frontier, {})
        took = _took_time(feeds, version_times, body, judged)
        judged[message.id] = fetched_time(message.lamport, top, unheld, body, took)
    return judged[message.id]


def _id(version_times: _Versions, key: tuple[int, int, bytes]) -> bytes:
    return version_times[key].id


def _read_below(
    feeds: list[Feed], version_times: _Versions, key: tuple[int, int, bytes]
) -> list[tuple[int, int, bytes]]:
    """The versions read and not delivered that ``key``'s version names (:func:`_read_time`
    judges them first)."""
    message = version_times[key]
    body = parse_body(message.kind, message.body, len(feeds))
    if isinstance(body, NOT_EVENTS):
        return []
    below = []
    for q, f, prefix in named_by_id(body, key[0]):
        feed = feeds[q]
        delivered = f <= feed.head and feed.prefixes.startswith(prefix, (f - 1) * PREFIX)
        if not delivered and (q, f, prefix) in version_times:
            below.append((q, f, prefix))
    return below


class ForkWatch:
    """Of each member the last pass saw fork, from its fork on: which member's log holds which
    version of each of its events and, of one log alone, which its peer delivered last. The
    next pass follows the chain that counts by them (``auditor._kept_chains``).

    Args:
        one_log: the pass reads one log alone (its peer's view).
    """

    __slots__ = ("followed", "holders", "one_log")

    def __init__(self, *, one_log: bool) -> None:
        self.one_log = one_log
        # (seat, seq) -> prefix -> the owners of the logs holding that version (held_chain)
        self.holders: dict[tuple[int, int], dict[bytes, set[int]]] = {}
        # (seat, seq) -> the version of that event one log's peer delivered last (followed_chain)
        self.followed: dict[tuple[int, int], bytes] = {}

    def saw(self, message: Message, seat: int, log: Log) -> None:
        """Every copy of an event of a member the last pass saw fork, from its fork on: which
        member's log holds which version (and, of one log, which its peer delivered last)."""
        seq = message.seq
        if log.owner is not None and log.owner != seat:
            held = self.holders.setdefault((seat, seq), {})
            held.setdefault(message.id[:PREFIX], set()).add(log.owner)
            if self.one_log:  # the version its peer delivered last
                self.followed[(seat, seq)] = message.id[:PREFIX]

    def followed_chain(self, seat: int) -> dict[int, bytes] | None:
        """Of one log alone: the chain of ``seat`` its peer followed last, seq -> id prefix,
        where the log holds two versions of one of its events (a log holds the events its
        peer delivered, in order: a peer that gave up one version for the other, for the
        chain a drop keeps or the votes quote, or the chain that goes on,
        ``Chains.follow_continued``, delivered the other after it); ``None`` otherwise."""
        chain = {seq: prefix for (author, seq), prefix in self.followed.items() if author == seat}
        switched = any(
            len(held) > 1 for (author, _), held in self.holders.items() if author == seat
        )
        return chain if switched and chain else None

    def held_chain(self, seat: int, dropped: dict[int, int]) -> dict[int, bytes] | None:
        """The chain of ``seat``, watched since it forked, that the logs of the members still
        in (not in ``dropped``) hold, seq -> id prefix; ``None`` if none holds any or two of
        them hold different versions of one event (then the votes settle it:
        :func:`~p2p_nertz.protocol.state.voted_chain`). A log that holds both versions of an
        event does not count for it.

        A fork no vote settled was never seen by a member still in: had one held both
        versions, it would have proven the fork and voted. The version the members still in
        hold is the one that was final among them, whatever its time; the other reached only
        members dropped since (a fake sent to a member asleep, then dropped, and timed before
        the real event: read first in Lamport order, the audit of every log followed it and
        scored another game than every peer's)."""
        chain: dict[int, bytes] = {}
        for (author, seq), held in self.holders.items():
            if author != seat:
                continue
            # (A log holding both versions says nothing of which counts: its peer proved the
            # fork, and followed one by the votes or the chain that goes on. Counting it made
            # the audit of every log follow the fake while the sleeper was not dropped, and
            # never drop it, since the fake kept the cheater's vote against it from counting.)
            both = set.intersection(*held.values()) if len(held) > 1 else set()
            kept = [
                prefix for prefix, owners in held.items() if not owners - both <= dropped.keys()
            ]
            if len(kept) > 1:
                return None
            if kept:
                chain[seq] = kept[0]
        return chain or None
