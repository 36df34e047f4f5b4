"""The proofs of cheating one member holds, and the forks it probes (docs/protocol.md §9.4).

Two signed messages of one author that contradict each other prove it cheated: two events
under one seq (a fork), or a beat and a later event whose clocks disagree (a lie about time).
:class:`Proofs` owns what this member keeps to find and show them: the beats kept to check
later events against, the proofs held (relayed with the events they concern when asked), the
first seq each member is proven to have forked at, and the forks others voted on that we hold
no proof of, which we ask everyone about. Its methods read that state and return decisions
(whether a pair of messages is a new proof, what goes with an answer to a want, which forks to
probe now). It is a part of :class:`~p2p_nertz.protocol.membership.Membership`, which holds it
as ``proof`` and shares its containers (``forked_at``, ``proofs``, ...) under the same names.
"""

from __future__ import annotations

import bisect
from collections.abc import Container, Iterator, Sequence

from p2p_nertz.protocol.bodies import fits
from p2p_nertz.protocol.envelope import Message
from p2p_nertz.protocol.feeds import Ready, lies_about_time, unknown_versions

__all__ = ["Proofs"]


class Proofs:
    """What one member knows of the others' cheating (see the module docstring).

    Args:
        seat: our own seat.
        seats: how many seats the game has.
        max_watch: how many beats of one member are kept at most.
    """

    def __init__(self, seat: int, seats: int, max_watch: int) -> None:
        n = seats
        self.seat = seat
        self.max_watch = max_watch
        # Per member, the beats that a later event of its could contradict (§9.4): (head seq,
        # Lamport time, beat) for heads at or above what we hold of its feed, each beat kept
        # only if no other kept one has a lower head and a time as high (it would catch every
        # lie this one catches), so heads and times both increase along the list.
        self.watch: list[list[tuple[int, int, Message]]] = [[] for _ in range(n)]
        self.proven: set[tuple[int, int]] = set()  # (seat, seq) of equivocations proven
        self.forked_at: dict[int, int] = {}  # seat -> the first seq it is proven to have forked
        self.probe_at = [0.0] * n  # when we may next ask everyone for a fork's proof
        self.unproven: dict[int, int] = {}  # seat -> fork seq others voted on, unproven here
        self.proofs: dict[tuple[int, int], bytes] = {}  # (seat, seq) -> the other version
        # (seat, seq) -> (beat, event): a lie about time, relayed with the event when asked
        self.lie_proofs: dict[tuple[int, int], tuple[bytes, bytes]] = {}
        # (seat, seq) -> the two messages of each proof found, as logged: what our vote on
        # it carries (docs/protocol.md §9.2, *a vote on proof carries its proof*)
        self.pairs: dict[tuple[int, int], tuple[Message, Message]] = {}
        # seat -> (seq, id prefix, asks left): a version of its event that an event refused
        # as a leap named by an id we neither hold nor keep in a proof (:meth:`ask_versions`)
        self.unknown: dict[int, tuple[int, bytes, int]] = {}
        # seat -> (fork seq, asks left): a vote deferred while we ask for the version below
        # (:meth:`parts_below`); asks -1 once spent and the vote given (:meth:`parted_votes`)
        self.parting: dict[int, tuple[int, int]] = {}

    # -- beats kept to catch a lie about time -----------------------------------------------
    def watch_beat(self, seat: int, message: Message, head: int, held: int) -> None:
        """Keep a sound beat of ``seat`` announcing ``head`` (we hold ``held`` of its feed) to
        check its later events against: one timed at or below it with a seq above ``head``
        proves a lie about time (§9.4)."""
        slot = self.watch_slot(seat, message.lamport, head, held)
        if slot is not None:
            self.watch[seat][slot[0] : slot[1]] = [(head, message.lamport, message)]

    def watch_slot(self, seat: int, lamport: int, head: int, held: int) -> tuple[int, int] | None:
        """The slice of the kept beats a beat timed ``lamport`` with ``head`` would replace
        (:meth:`watch_beat`; nothing changes here), or ``None`` if it would not be kept."""
        if head < held or seat in self.forked_at:
            return None  # checked against the event after its head already (Feeds.contradiction)
        watch = self.watch[seat]
        below = bisect.bisect_right(watch, head, key=_head)
        if below and watch[below - 1][1] >= lamport:
            return None  # a kept beat with a head as low and a time as high catches all it would
        start = bisect.bisect_left(watch, head, key=_head)
        end = start
        while end < len(watch) and watch[end][1] <= lamport:
            end += 1  # kept beats this one now catches every lie of (head as low, time higher)
        if start == end and len(watch) >= self.max_watch:
            return None  # bounded memory: a member announcing that many heads ahead is stalling
        return start, end

    def watched_lie(self, seat: int, message: Message) -> Message | None:
        """A kept beat of ``seat`` that the event ``message`` contradicts (a head below its seq,
        a time at or above its own), if any: the one with the highest such head."""
        watch = self.watch[seat]
        below = bisect.bisect_left(watch, message.seq, key=_head)
        if below:
            head, beat_lamport, beat = watch[below - 1]
            if lies_about_time(beat_lamport, head, message.seq, message.lamport):
                return beat
        return None

    def delivered(self, seat: int, seq: int) -> None:
        """Event ``seq`` of ``seat`` is held: the beats below it need no keeping."""
        watch = self.watch[seat]
        if watch and watch[0][0] < seq:
            # A beat below the head now held was checked against the event after its head
            # (Feeds.contradiction, or check 1 when that event came); later events are timed
            # above.
            del watch[: bisect.bisect_left(watch, seq, key=_head)]

    def proven_fork(self, seat: int, seq: int) -> None:
        """``seat`` is proven to have forked (or lied about time) at ``seq``."""
        self.forked_at[seat] = min(seq, self.forked_at.get(seat, seq))

    # -- proofs -----------------------------------------------------------------------------
    def clock_lie(self, seat: int, beat: Message, event: Message) -> bool:
        """A beat and a later event of ``seat`` that contradict each other's clocks (§9.4):
        whether that is a new proof (kept, to relay with the event when asked, and the feed
        forked from the event's seq on), which the caller relays and votes on."""
        if (seat, -event.seq) in self.proven or seat == self.seat:
            return False
        if self.forked_at.get(seat, event.seq + 1) <= event.seq:
            return False  # proven to cheat at or below this seq already: nothing more to prove
        self.proven.add((seat, -event.seq))
        self.lie_proofs[(seat, event.seq)] = (beat.wire, event.wire)
        self.found(seat, event.seq, beat, event)
        # As for a fork at that seq: what the event names of its author past it may never be
        # held here (we refused it), and nothing of it from there may count (§9.4).
        self.proven_fork(seat, event.seq)
        self.watch[seat].clear()
        return True

    def equivocation(self, seat: int, first: Message, second: Message) -> bool:
        """Two different signed events of ``seat`` under one seq: whether that is a new proof
        (kept: ``second`` is relayed with ``first`` when asked), which the caller relays and
        votes on."""
        if (seat, first.seq) in self.proven:
            return False  # already proven, relayed and voted on
        self.proven.add((seat, first.seq))
        self.proofs[(seat, first.seq)] = second.wire
        self.found(seat, first.seq, first, second)
        self.proven_fork(seat, first.seq)
        return True

    def found(self, seat: int, seq: int, first: Message, second: Message) -> None:
        """Keep the proof ``first``, ``second`` of ``seat``'s cheat at ``seq`` for our vote."""
        self.pairs.setdefault((seat, seq), (first, second))

    def carried(self, seat: int, fork_seq: int) -> tuple[bytes, ...]:
        """What our vote on ``seat``'s cheat at ``fork_seq`` carries: the two messages of the
        proof of it we hold (a lie about time proves the seqs from the beat's head on,
        :attr:`Proof.span <p2p_nertz.protocol.evidence.Proof.span>`), each without a carried
        part (:attr:`Message.signed_wire`: a fork of a vote on proof is proven by its two
        signed parts, session 41); ``()`` if we hold none. (Every signed part is within
        ``PROOF_MESSAGE_MAX``: ``fits`` is the schema's rule, asked before signing.)"""
        pair = self.pairs.get((seat, fork_seq))
        if pair is None:
            lies = [p for (q, seq), p in sorted(self.pairs.items()) if q == seat and seq > fork_seq]
            pair = next((p for p in lies if not p[0].is_event), None)
        proof = () if pair is None else (pair[0].signed_wire, pair[1].signed_wire)
        return proof if fits(proof) else ()

    def parts_below(self, seat: int, fork_seq: int, held: int) -> bool:
        """Whether the proof of ``seat``'s fork at ``fork_seq`` shows its branches parted below
        it: two versions naming different ``prev`` ids, so that the member signed two versions
        of ``fork_seq - 1`` too (docs/protocol.md §9.4, *a vote names where the branches
        part*, session 41). Then no vote at ``fork_seq``: what it would count and quote of the
        feed below may be our branch's, not the one every member counts. We ask everyone for
        that seq (:meth:`probes_due`); the other version, come, proves the fork there, and we
        vote on it (and so on down to the seq whose two versions name one ``prev``). Only if
        we hold ``fork_seq - 1`` (``held``: how much of the feed): else our vote quotes none
        of it (``--liars --two-liars --back readmit`` seed 186: deferred, every honest vote
        came late and the peers parted). And whatever the two versions name, while we probe
        a fork below ``fork_seq`` of an event we hold (session 42): our copy of it may be the
        other branch's."""
        pair = self.pairs.get((seat, fork_seq))
        if pair is None or not pair[0].is_event or not pair[1].is_event:
            return False
        if self.forked_at.get(seat, fork_seq) < fork_seq:
            return False  # (a lower fork proven here: its vote counts)
        # A fork below, of an event we hold, that we probe and hold no proof of (an event of
        # the member's naming another predecessor than our copy, Proofs.probe_refused; or a
        # vote of another member's): our copy there may be the other branch's, and our vote
        # would count and quote it (session 42, --lie deck_fork seed 5 at three: our copy of
        # event 3 was a version sent to us alone, the proof at 5 relayed; every fold refused
        # our vote, quoting it). We wait for that proof, and vote there.
        below = self.unproven.get(seat, fork_seq)
        doubted = below < fork_seq and below <= held
        if not doubted and (held < fork_seq - 1 or pair[0].prev == pair[1].prev):
            return False  # (where they part; or our vote, counting what we hold, quotes nothing
            # at fork_seq - 1)
        parting = self.parting.get(seat)
        if parting is None or parting[0] != fork_seq:
            self.parting[seat] = (fork_seq, VERSION_ASKS)
            self.unproven[seat] = min(fork_seq - 1, below)
            self.probe_at[seat] = 0.0  # (at the next liveness step)
            return True
        # A ``prev`` is the author's word: one naming no event (a liar's made-up id) has no
        # version to fetch. Asked for VERSION_ASKS times in vain, the vote is at fork_seq.
        return parting[1] > 0

    def parted_votes(self) -> list[tuple[int, int]]:
        """The votes :meth:`parts_below` deferred whose asks are spent, the version below
        never come: (seat, fork seq) each, due now (once)."""
        due = [(q, f) for q, (f, asks) in self.parting.items() if asks == 0]
        for q, f in due:
            self.parting[q] = (f, -1)
        return due

    def proofs_for(
        self, seat: int, first: int, last: int, sent: Sequence[Message]
    ) -> Iterator[bytes]:
        """What goes with the events ``sent`` in answer to a want of ``seat``'s ``first`` to
        ``last``: after each, the other version of it that proves a fork; then, for each lie
        about time in that range, the beat and the event (which we may not hold), so that the
        asker reaches the proof and votes too (§9.4)."""
        for message in sent:
            yield message.wire
            other = self.proofs.get((seat, message.seq))
            if other is not None:
                yield other  # with the proof of its fork
        for (liar, seq), (beat, event) in sorted(self.lie_proofs.items()):
            if liar == seat and first <= seq <= last:
                yield beat
                yield event

    # -- forks to probe --------------------------------------------------------------------
    def ask_versions(self, feeds: Sequence[Sequence[Message]], refused: Ready, at: float) -> None:
        """An event ``refused`` as a leap may name events by ids we neither hold nor keep in a
        proof (:func:`~p2p_nertz.protocol.feeds.unknown_versions`): ask everyone for them from
        ``at`` (:meth:`probes_due`). The answer, another version of an event of a forked feed,
        is kept as a proof's pair (:meth:`found`), and the event, fetched again, is judged
        from it (docs/protocol.md §5.3, *the leap bound*, session 41). One seq a feed (the
        latest named), :data:`VERSION_ASKS` asks in all: an event naming the same version
        again (fetched again, refused again) asks no more. So too the event a vote on proof
        says its author took (session 42)."""
        body = refused.body
        for q, seq, named in unknown_versions(
            feeds, refused.seat, body, self.forked_at, self.pairs
        ):
            if self.unknown.get(q, (0, b""))[:2] != (seq, named):
                self.unknown[q] = (seq, named, VERSION_ASKS)
                self.probe_at[q] = at

    def probes_due(
        self,
        now: float,
        dropped: dict[int, int],
        interval: float,
        voted: dict[int, int],
        rejoining: Container[int] = (),
    ) -> list[tuple[int, int]]:
        """The forks others voted on that we hold no proof of, to ask everyone about now:
        (seat, seq). One holding another version than ours sends the proof; a fork proven,
        voted on (``voted``: seat -> the seq of our vote), or of a member dropped is no longer
        probed, unless the member asks back (``rejoining``: whose rejoin request we hold):
        its readmission may wait on events of others that name its other branch, refused here
        until the proof comes (docs/protocol.md §9.4, session 41). And the versions named that
        we asked for (:meth:`ask_versions`), until known."""
        due = []
        for q, fork_seq in list(self.unproven.items()) if self.unproven else ():
            earlier = fork_seq < self.forked_at.get(q, 0)  # (its proof lets events in, §9.4)
            out = q not in rejoining and (q in dropped or (q in voted and not earlier))
            if (q, fork_seq) in self.proven or out:
                del self.unproven[q]
            elif now >= self.probe_at[q]:
                self.probe_at[q] = now + interval
                due.append((q, fork_seq))
                parting = self.parting.get(q)
                if parting is not None and parting[0] > fork_seq and parting[1] > 0:
                    self.parting[q] = (parting[0], parting[1] - 1)  # (parted_votes)
        for q, (seq, named, asks) in list(self.unknown.items()) if self.unknown else ():
            if any(m.id.startswith(named) for m in self.pairs.get((q, seq), ())):
                del self.unknown[q]  # (known now)
            elif asks and now >= self.probe_at[q] and (q, seq) not in due:
                self.unknown[q] = (seq, named, asks - 1)  # (none left: a made-up id, kept)
                self.probe_at[q] = now + interval
                due.append((q, seq))
        return due

    def probe_refused(
        self,
        seat: int,
        message: Message,
        clash: tuple[int, int] | None,
        *,
        held: int,
        head: bytes | None,
        at: float,
    ) -> None:
        """After an event of ``seat`` was refused for its chain: whether it shows a fork we
        hold no proof of, and if so probe it at ``at`` (not in answer to what may be garbage):
        the other version is the proof (§9.4). ``clash``: (seat, seq) of an event of another
        member it says it holds and is timed at or below our copy of (:meth:`Feeds.time_clash`);
        ``held``, ``head``: how much of ``seat``'s feed we hold, and the id of the last."""
        if clash is not None and clash[0] != seat and clash[0] != self.seat:
            # Timed at or below our copy of another member's event it says it holds: it may
            # hold another version of that event (a fork sent to us alone, timed higher). With
            # the proof, the fork's cap lets this event in when it comes again (soak seed 285:
            # the votes that dropped us were refused for good, so we never knew).
            q, seq = clash
            if q not in self.unproven and seq < self.forked_at.get(q, seq + 1):
                self.unproven[q] = seq
                self.probe_at[q] = at
        if (
            seat != self.seat
            and held
            and message.seq == held + 1
            and message.prev != head
            and seat not in self.unproven
        ):
            # Its author signed it after another version of our event ``held``: a fork we hold
            # no proof of yet (a version sent to us alone, the real one lost). Without the
            # proof we could never take this feed further (soak seed 442).
            self.unproven[seat] = held
            self.probe_at[seat] = at


#: How many times a version named and unknown here is asked for (:meth:`Proofs.ask_versions`,
#: and the version below a fork whose branches part: :meth:`Proofs.parts_below`).
VERSION_ASKS = 3


def _head(entry: tuple[int, int, Message]) -> int:
    """The head seq of a kept beat (Proofs.watch)."""
    return entry[0]
