"""The two folds of a game: the final one, never rolled back, and the tentative one over it.

Theory of operation
-------------------
Events are folded in the protocol's total order ``(lamport, seat, seq)``. The *final* fold
(:attr:`Folds.final`) takes the events no member can still precede (finality says which: a
stable time) and is never rolled back. The *tentative* fold adds every held event not final yet
on top: what a player sees and plays on, recomputed from the final one when an event arrives
out of order (GGPO's rollback and replay, lazily: only when someone looks at it).

**Which events count** is decided here, for the peer and the spectator alike: none of a
member's events past its cut, even one before its drop in the order, nor one in the gap of a
member readmitted (§9.2, §9.8), nor a vote of a member signed past what a standing vote against
it counts (:meth:`GameState.standing_caps`), nor, in the final fold, one past the cut of a
member whose drop the held events decide (:meth:`Folds.advance`). A fold taking events one at a
time cannot know these before it reaches the drop, the readmission or the vote: when it counted
such an event, the tentative fold is made again with what it found, until that stops changing.

:class:`Folds` owns the final fold, the held events not final yet (in the total order) and the
tentative fold made from them (dropped when an event is added or forgotten; the final fold
itself while none is held, :meth:`Folds.shares_final`); it answers whether a late event can
never count (:meth:`Folds.never_counts`).
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Collection, Generator, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.envelope import KIND_CLAIM, KIND_DROP
from p2p_nertz.protocol.finality import decided, decided_at
from p2p_nertz.protocol.roster import (
    Cap,
    contradicts,
    freezes,
    frozen_below,
    gone_unheld_at,
    lasting_caps,
)
from p2p_nertz.protocol.state import Event, GameState, Notice, Phase

__all__ = [
    "Folds",
    "Passes",
    "Trial",
    "Unheld",
    "came_back",
    "cut_made",
    "cut_stands",
    "cycle_meet",
    "fresh_caps",
    "impose_cuts",
    "lifted_cuts",
    "readmitted_cuts",
    "refold",
]

#: How many times at most the tentative fold is made again (each time with more of what it
#: found; in the soaks it settles in one or two).
REFOLDS = 6
#: A seq no event reaches (:func:`after_gap`: a member never readmitted from its cut).
_NEVER = 1 << 63

Gaps = dict[int, tuple[tuple[int, int], ...]]
#: What one round of the tentative fold is folded with: cuts, gaps and caps.
Round = tuple[dict[int, int], Gaps, dict[int, Cap]]
#: What a fold is made with (:func:`refold`: a peer's :data:`Round`, an audit's pass's
#: inputs), and what it gives (a fold, a pass).
K = TypeVar("K")
R = TypeVar("R")


class Folds:
    """The final and the tentative fold of one view of a game.

    Args:
        final: the final fold to start from (a fresh :class:`GameState`).
        own: the seat whose view this is (its own proofs of forks never cap its votes), or
            ``None`` for a spectator.
    """

    def __init__(self, final: GameState, own: int | None = None) -> None:
        self.final = final
        self.own = own
        #: Held events not final yet, in the total order, and their keys.
        self.nonfinal: list[Event] = []
        self.keys: list[tuple[int, int, int]] = []
        #: seat -> the first seq it is proven to have forked at (its votes past it never
        #: count); the peer's membership fills it, a spectator has none.
        self.forked_at: dict[int, int] = {}
        #: What every event held says of the others' feeds (:class:`Unheld`).
        self.unheld = Unheld(final.spec.seats)
        self._tentative: GameState | None = final.copy()
        self._capped: dict[int, int] = {}  # (capped_drops, made with the tentative fold)
        self._uncut: dict[int, tuple[int, frozenset[int]]] = {}  # (uncut_drops, likewise)
        self._dated: dict[int, int] = {}  # (dated_drops, likewise)
        #: The rounds' passes over the held events, kept from one making of the tentative fold
        #: to the next (:class:`Passes`); its epoch moves whenever the final fold does.
        self.passes = Passes()

    # -- the held events --------------------------------------------------------------------
    def add(self, event: Event, stable: int) -> list[Notice]:
        """Hold one event newly delivered; the notices of an event final already (timed at or
        below ``stable``), which is never folded, but an abandoned game's end reads (§9.3)."""
        self._tentative = None
        self.unheld.note(event)
        if event.lamport > stable:
            key = event.key
            index = bisect.bisect(self.keys, key)
            self.nonfinal.insert(index, event)
            self.keys.insert(index, key)
            return []
        self.passes.epoch += 1  # (the final fold reads it)
        return self.final.observe(event)

    def never_counts(self, seat: int, seq: int, lamport: int) -> bool:
        """Whether a (late) event of a member dropped, or readmitted since, can never count in
        the final fold: it is held and relayed (its feed goes on through it), never folded."""
        final = self.final
        if not final.counts(seat, seq):
            return True
        gaps = final.gaps.get(seat)
        at = final.readmitted_at.get(seat)
        if not gaps or at is None:
            return False
        return seq >= gaps[-1][1] and lamport <= at

    def too_late(self, seat: int, seq: int, lamport: int, stable: int) -> bool:
        """Whether an event timed at or below ``stable`` (what is final) may still count: it
        is refused (the final fold is never rolled back, §6.2), and so is giving up a version
        of a fork for it (§9.4)."""
        return lamport <= stable and not self.never_counts(seat, seq, lamport)

    def keep_floor(self, seat: int, final_count: int) -> int:
        """The fewest events of ``seat``'s feed a switch to another chain may keep, of which
        ``final_count`` are final by their time: final events are on every chain that counts;
        final by their time but never counted (past a cut, in a readmitted member's gap) they
        may go."""
        floor = final_count
        final = self.final
        cut = final.dropped.get(seat)
        if cut is not None and floor > cut:
            floor = cut
        for lo, hi in final.gaps.get(seat, ()):
            if lo < floor < hi:
                floor = lo
        return floor

    def claim_waits(self, lamport: int) -> bool:
        """Whether a claim held here, not final and timed at or after ``lamport``, waits for
        everyone to announce holding what is timed there (a move then wants an ack at once).

        Acks make events final fast, and only claims race: a tableau move is acked at once
        only while such a claim waits. Other moves are announced by the next ack or beat; a
        claim of ours announces them at once (:meth:`Outbox.signed`). Acking every move made
        the acks grow with the square of the table and doubled the traffic, for no claim made
        final sooner (issue #4).
        """
        for event in reversed(self.nonfinal):  # by Lamport time, the latest first
            if event.lamport < lamport:
                return False
            if event.kind is KIND_CLAIM:
                return True
        return False

    def forget(self, seat: int, keep: int) -> None:
        """Give up the held events of ``seat`` past ``keep`` (another chain counts)."""
        kept = [e for e in self.nonfinal if not (e.seat == seat and e.seq > keep)]
        self.nonfinal = kept
        self.keys = [e.key for e in kept]
        self._tentative = None
        self.passes.epoch += 1

    # -- the tentative fold -----------------------------------------------------------------
    @property
    def tentative(self) -> GameState:
        """The final fold plus every held event not final, in order, as far as they count.

        While nothing is held and the final fold has the caps this fold would give it (no
        member proven to fork, or the caps taken from the last held view that had one), it
        *is* the final fold, not a copy of it (:meth:`shares_final`): it is then a view valid
        until the next event is added or the final fold moves on, which every reader takes
        again after an input (docs/latency.md, session 20). Nothing may change a fold it
        reads here."""
        if self._tentative is None:
            if not self.nonfinal and self.shares_final():
                self._tentative = self.final
                self._capped = {}
                self._uncut = {}
                self._dated = {}
            else:
                self.passes.turn()
                self._tentative = self._cut_unheld()
                self._capped = self._uncapped(self._tentative)
                self._uncut = self._uncapped_uncut(self._tentative)
        return self._tentative

    def over(self) -> bool:
        """Whether the tentative fold is over: every event of the game is held here."""
        return self.tentative.phase is Phase.OVER

    def shares_final(self) -> bool:
        """Whether the tentative fold, with nothing held, is the final fold itself: the fold
        :meth:`_cut_unheld` makes of no held event is a copy of the final fold that differs
        from it only in its caps (``with_forks`` of none: one round, whose next is ``None``
        with nothing counted or skipped, and each cut tried folds nothing, so every trial is
        that copy again), and :meth:`_uncapped` of it drops no one the final fold does not."""
        caps = self.final.vote_caps
        if not self.forked_at:
            return not caps
        return caps == st.with_forks({}, self.forked_at, own=self.own)

    @property
    def capped_drops(self) -> dict[int, int]:
        """The drops that only the caps of the tentative fold keep undecided (seat -> cut):
        a member that the tentative fold, folded once more with its own cuts and gaps and
        without the caps a withdrawal lifts (votes for silence or withheld), drops, and that
        neither it nor the final fold drops. Such a drop holds finality back as a decided
        one does (:func:`~p2p_nertz.protocol.finality.settle`).

        A capping vote is withdrawn when its member is heard or gives what it owed, and the
        withdrawal lifts the cap in the past too: the drop is then decided at its old place
        in the order, below events of the member past the cut that a peer may have made final
        meanwhile, which every fold from scratch cuts (chaos seed 603: seat 1's vote
        completing seat 2's drop at 31, capped by seat 0's vote on seat 1 until seat 0 heard
        seat 1 again; peer 1 made seat 2's claim at its seq 32 final in between)."""
        self.tentative  # noqa: B018 (made with it)
        return self._capped

    def _cut_unheld(self) -> GameState:
        """:meth:`_fold`'s fixed point, then each cut :meth:`Unheld.cuts` offers that the fold
        without the member's events past it makes (the member dropped there), imposed for
        good, in the order offered, until none is left (docs/protocol.md §9.2;
        :func:`impose_cuts`, the rule the audit's passes take too).

        A member's events that no other member ever announced holding can never be final
        (§7.1); once the votes without them drop the member, they count nowhere, and no
        decision may rest on them: a vote of a member cut off and gone for good, past the cut
        the others made final, would else drop a member in the past of what they decided
        (variants soak seed 5066). The cuts only grow, so this ends."""
        first: list[GameState] = []
        t = self._fold({}, {}, {}, first=first)

        def fold_with(cuts: dict[int, int]) -> Trial:
            trial = self._fold(cuts, {}, {}, imposed=cuts)
            return Trial(trial, trial, self.unheld)

        start = Trial(t, t, self.unheld)
        self._dated = {}
        return impose_cuts(fold_with, start, first[0].dropped.keys(), self.final, self._dated).fold

    @property
    def dated_drops(self) -> dict[int, int]:
        """Drops of the tentative fold decided no earlier than the votes that refused the
        drop decided first in their place (seat -> that time: :func:`decided_first`)."""
        self.tentative  # noqa: B018 (made with it)
        return self._dated

    @property
    def uncut_drops(self) -> dict[int, tuple[int, frozenset[int]]]:
        """The drops that only the caps of the tentative fold and its cuts not final yet keep
        undecided (seat -> its cut, and the members whose drops those cuts are): a member that
        the tentative fold, folded once more without those cuts and without the caps a
        withdrawal lifts, drops, and that neither it, the final fold nor :attr:`capped_drops`
        drops. Such a drop holds finality back as a decided one does, until every one of
        those other drops is final (:func:`~p2p_nertz.protocol.finality.settle`): then the
        fold that has them is the one that counts, and the cuts stand.

        The two members' cuts may each undo the other (a vote of each signed past the other's
        count), so the tentative fold is one of two fixed points, and the held withdrawals
        decide which: a withdrawal of a capping vote lifts its cap in the past, and a
        withdrawal before the tentative's drop, not held yet, undoes that drop. Folded with
        its own cuts, the round of :attr:`capped_drops` keeps the other drop undecided, and
        a peer made final an event of the other member past its cut (``scan_late_lift.py
        --pairs``, three players seed 1, seats 1 and 2's withdrawals held: peers 0 and 2,
        their held votes dropping seat 0 at 43, made seat 1's event 44 final; seat 1's
        withdrawal at 211, before that drop, came after and every view dropped seat 1 at 43;
        docs/protocol.md §9.2, §13)."""
        self.tentative  # noqa: B018 (made with it)
        return self._uncut

    def _loose(self, fixed: GameState) -> dict[int, Cap] | None:
        """The caps of the tentative fold ``fixed`` with each member's vote count only as far
        as votes on proof give it (:func:`~p2p_nertz.protocol.roster.lasting_caps`), or
        ``None`` where that takes no cap away."""
        caps = fixed.vote_caps
        if not caps:
            return None
        lasting = lasting_caps(fixed.roster)
        loose = {q: (lasting.get(q, _NEVER), *cap[1:]) for q, cap in caps.items()}
        return None if loose == caps else loose

    def _uncapped(self, fixed: GameState) -> dict[int, int]:
        """:attr:`capped_drops` of the tentative fold ``fixed``: one round more with its cuts
        and gaps and its caps, each member's vote count only as far as votes on proof give it
        (:meth:`_loose`); made only where that takes a cap away."""
        loose = self._loose(fixed)
        if loose is None:
            return {}
        final = self.final
        cuts = {q: c for q, c in fixed.dropped.items() if q not in final.dropped}
        gaps = {q: g for q, g in fixed.gaps.items() if final.gaps.get(q) != g}
        t, _ = self._round(cuts, gaps, loose, None)
        out = final.dropped.keys() | fixed.dropped.keys()
        return {q: c for q, c in t.dropped.items() if q not in out}

    def _uncapped_uncut(self, fixed: GameState) -> dict[int, tuple[int, frozenset[int]]]:
        """:attr:`uncut_drops` of the tentative fold ``fixed``: one round more with its gaps,
        without its cuts not final yet, and with its caps each member's vote count only as
        far as votes on proof give it, the members of those cuts' none (the lasting caps of
        a member dropped are its drop's); made only where such a cut is there."""
        final = self.final
        pending = frozenset(q for q in fixed.dropped if q not in final.dropped)
        if not pending:
            return {}
        lasting = lasting_caps(fixed.roster)
        loose = {
            q: (_NEVER if q in pending else lasting.get(q, _NEVER), *cap[1:])
            for q, cap in fixed.vote_caps.items()
        }
        gaps = {q: g for q, g in fixed.gaps.items() if final.gaps.get(q) != g}
        t, _ = self._round({}, gaps, loose, None)
        out = final.dropped.keys() | fixed.dropped.keys() | self._capped.keys()
        return {q: (c, pending) for q, c in t.dropped.items() if q not in out}

    def _fold(
        self,
        cuts: dict[int, int],
        gaps: Gaps,
        caps: dict[int, Cap],
        imposed: dict[int, int] | None = None,
        *,
        first: list[GameState] | None = None,
    ) -> GameState:
        """The final fold plus every held event not final, in order, skipping those past
        ``cuts`` and in ``gaps``, and the votes past ``caps`` (see the module docstring), then
        again with what that fold decided, until that stops changing (:func:`refold`, at most
        ``REFOLDS`` times more).

        Otherwise the held view could show what the final fold never will: a vote past its
        author's cut deciding a drop, or a round that a member's invalid moves kept from
        ending, and its readmission missing (soak seeds 236, 472). ``first``: gets the first
        round's fold (for :meth:`_cut_unheld`, from the round with no cuts, gaps or caps).
        """

        def round_(given: Round, last: bool) -> tuple[GameState, Round | None]:
            t, next_round = self._round(*given, imposed)
            if first is not None and not first:
                first.append(t)
            if last or not (t.dropped or t.gaps or t.votes):
                return t, None
            return t, next_round()

        # (The caps as the rounds fold with them, forks and all: what a cycle is made of.)
        caps = st.with_forks(caps, self.forked_at, own=self.own)
        return refold(round_, (cuts, gaps, caps), REFOLDS + 1, cycle_meet)[0]

    def _round(
        self,
        cuts: dict[int, int],
        gaps: Gaps,
        caps: dict[int, Cap],
        imposed: dict[int, int] | None,
    ) -> tuple[GameState, Callable[[], Round | None]]:
        """One round of :meth:`_fold`: the fold with ``cuts``, ``gaps`` and ``caps``, and
        what the next round is folded with (``None``: this one stands), to ask if need be."""
        final = self.final
        caps = st.with_forks(caps, self.forked_at, own=self.own)
        held = self.nonfinal
        forked = tuple(self.forked_at.items())
        key = (tuple(cuts.items()), tuple(gaps.items()), tuple(caps.items()), forked)
        made = self.passes.resume(key, final, held)
        if made is None:
            t = final.copy()
            # (Its events are not final: of a member proven to fork, it may count another
            # version than a voter holds, so from the fork on they are not what a vote's ids
            # are checked against, roster.unsigned_id.)
            t.counted_ids = final.counted_ids.copy(self.forked_at)
            done = 0
            counted: list[Event] = []
            skipped: list[Event] = []  # (by the cuts and gaps given, not the fold's own rules)
        else:
            t, done, counted, skipped = made
        t.vote_caps = caps
        back = final.gaps  # (readmissions final already: where a cut's member came back)
        for ev in held[done:] if done else held:
            if skips(ev, cuts, gaps, back):
                t.observe(ev)
                skipped.append(ev)
                continue
            if not t.counts(ev.seat, ev.seq) or unreadmitted(t, ev.seat, ev.seq, gaps.get(ev.seat)):
                t.observe(ev)
                continue
            t.apply(ev)
            counted.append(ev)
        self.passes.keep(key, final, held, t, counted=counted, skipped=skipped)

        def next_round() -> Round | None:
            # (Exactly what this fold decided: a cut kept from a fold that decided otherwise
            # would skip events that count.)
            new_cuts = {q: c for q, c in t.dropped.items() if q not in final.dropped}
            if imposed:
                new_cuts.update(imposed)  # (kept for good: _cut_unheld)
            new_gaps = {q: g for q, g in t.gaps.items() if final.gaps.get(q) != g}
            new_caps = st.with_forks(t.standing_caps(), self.forked_at, own=self.own)
            none = st.with_forks({}, self.forked_at, own=self.own)
            new_caps = fresh_caps(new_caps, gaps, new_gaps, none)
            # Wrong both ways: an event counted that what this fold decided skips, and one
            # skipped that it counts. (A member cut, then readmitted further on in the order:
            # the cut skipped its events after its rejoin request too, its votes among them,
            # until the fold that found the readmission made its gap known. Restored from its
            # log, a peer folds the whole game at once and met it: variants soak, plain seeds
            # 36 and 40.)
            wrong = any(
                skips(ev, new_cuts, new_gaps, back)
                or (ev.kind is KIND_DROP and isinstance(ev.body, Drop)
                    and st.capped(new_caps, ev.seat, ev.seq, ev.body))
                for ev in counted
            ) or any(not skips(ev, new_cuts, new_gaps, back) for ev in skipped)  # fmt: skip
            if not wrong or (new_cuts == cuts and new_gaps == gaps and new_caps == caps):
                return None
            return new_cuts, new_gaps, new_caps

        return t, next_round

    # -- the final fold ---------------------------------------------------------------------
    def admits(self, event: Event, excluded: dict[int, int], gaps: Gaps | None = None) -> bool:
        """Whether the final fold takes an event now final: not past the cut of a member
        dropped (``excluded``, which may be decided later in the order, §9.2), unless the member
        was readmitted since; and not in the gap of a member readmitted (``gaps``, as the held
        events decide them, also later in the order: a peer folding a whole game at once, as
        after a restart, learns a member's drop and its readmission together, §9.8)."""
        return self.counts(event.seat, event.seq, excluded, gaps)

    def counts(
        self, seat: int, seq: int, excluded: dict[int, int], gaps: Gaps | None = None
    ) -> bool:
        """Whether ``seat``'s event ``seq`` counts (:meth:`admits`, by seat and seq: the audit
        asks it of an event that needs one no log holds, ``audit.fold._holed``)."""
        final = self.final
        if not final.counts(seat, seq):
            return False
        if gaps:
            seat_gaps = gaps.get(seat)
            if seat_gaps and any(lo < seq < hi for lo, hi in seat_gaps):
                return False
            if seat_gaps and unreadmitted(final, seat, seq, seat_gaps):
                return False
        limit = excluded.get(seat)
        if limit is None or seq <= limit:
            return True
        # Excluded at its old cut, and readmitted in this very advance: its events from its
        # rejoin request on count again.
        readmitted = final.gaps.get(seat, ())
        if seat in final.dropped or not readmitted:
            return False
        cut, request = readmitted[-1]
        return cut == limit and seq >= request

    def advance(
        self, stable: int, excluded: dict[int, int], gaps: Gaps | None = None
    ) -> tuple[int, list[Notice]]:
        """Fold the held events timed up to ``stable`` into the final fold, as far as they
        count (:meth:`admits`); how many were taken, and the final fold's notices."""
        final = self.final
        notices: list[Notice] = []
        moved = 0
        for event in self.nonfinal:
            if event.lamport > stable:
                break
            moved += 1
            if not self.admits(event, excluded, gaps):
                self._tentative = None  # the tentative fold counted it; this one never will
                notices.extend(final.observe(event))
                continue
            notices.extend(final.apply(event))
        if moved:
            del self.nonfinal[:moved]
            del self.keys[:moved]
            self.passes.epoch += 1
        return moved, notices

    def finals(
        self, stable: int, excluded: dict[int, int], gaps: Gaps | None = None
    ) -> Generator[tuple[Event, bool], None, None]:
        """The held events timed up to ``stable``, in order, each with whether the final fold
        takes it (:meth:`admits`, asked as each comes): the same walk as :meth:`advance`,
        for a caller that folds each event itself, before taking the next, with
        ``final.apply`` if it counts and ``final.observe`` if not, and reports on each (the
        audit). The events walked are no longer held once the walk ends (or stops)."""
        moved = 0
        self.passes.epoch += 1  # (the caller folds each event into the final fold)
        try:
            for event in self.nonfinal:
                if event.lamport > stable:
                    break
                moved += 1
                counts = self.admits(event, excluded, gaps)
                if not counts:
                    self._tentative = None  # (as in advance)
                yield event, counts
        finally:
            self.passes.epoch += 1
            if moved:
                del self.nonfinal[:moved]
                del self.keys[:moved]


class Passes:
    """The passes of the tentative fold's rounds over the held events, kept from one making of
    the tentative fold to the next: a round with what an earlier one was folded with goes on
    from where that one stopped, folding only the events held since (session 40;
    docs/protocol.md §13, two liars, seed 171).

    A liar can make the table make its tentative fold again at every event: each making tries
    the same cuts (:func:`impose_cuts`), and each trial folded every held event again (two
    liars, readmit seed 171: 2,820 makings, 18,000 trials, ~6 M ``State.apply``). A pass is
    a function of the final fold it starts from, the held events it folds, in order, and the
    cuts, gaps and caps it is folded with, and of the members proven to fork (the ids it
    counts, :meth:`Folds._round`): nothing else. The key is the last three; the final fold is
    the same object and has not moved since (:attr:`epoch`, moved wherever :class:`Folds`
    moves it, and by :meth:`Folds.finals`' caller, which the epoch moves around), and the
    events the pass folded are the first ones held now, the very same objects (an event held
    since, earlier in the order, makes it fold again from the start). A pass kept is never
    changed: it is a tentative fold or a trial, which no reader changes
    (tests/test_folds_shared.py), and goes on from a copy.

    Bounded: only the passes of the last two makings are kept (:meth:`turn`).
    """

    __slots__ = ("_kept", "_last", "epoch")

    def __init__(self) -> None:
        #: Moves whenever the final fold does (the passes kept from before it never go on).
        self.epoch = 0
        self._kept: dict[tuple[object, ...], _Pass] = {}  # (this making's)
        self._last: dict[tuple[object, ...], _Pass] = {}  # (the making before)

    def turn(self) -> None:
        """A new making of the tentative fold: the passes of the one before the last go."""
        self._last, self._kept = self._kept, {}

    def resume(
        self, key: tuple[object, ...], final: GameState, held: Sequence[Event]
    ) -> tuple[GameState, int, list[Event], list[Event]] | None:
        """Where a pass with ``key`` from ``final`` over ``held`` can go on from: a copy of
        the fold of the first events held, how many, and those it counted and skipped (new
        lists); ``None`` if no pass kept is one of it."""
        kept = self._kept.get(key) or self._last.get(key)
        if kept is None or kept.final is not final or kept.epoch != self.epoch:
            return None
        events = kept.events
        if len(events) > len(held) or not all(map(operator.is_, held, events)):
            return None
        return kept.fold.copy(), len(events), list(kept.counted), list(kept.skipped)

    def keep(
        self,
        key: tuple[object, ...],
        final: GameState,
        held: Sequence[Event],
        fold: GameState,
        *,
        counted: list[Event],
        skipped: list[Event],
    ) -> None:
        """Keep the pass with ``key`` from ``final`` over ``held``: ``fold``, and the events
        it counted and skipped (never changed after)."""
        self._kept[key] = _Pass(final, self.epoch, tuple(held), fold, counted, skipped)


@dataclass(frozen=True, slots=True)
class _Pass:
    """One pass :class:`Passes` keeps."""

    final: GameState
    epoch: int
    events: tuple[Event, ...]
    fold: GameState
    counted: list[Event]
    skipped: list[Event]


def refold(
    fold: Callable[[K, bool], tuple[R, K | None]],
    start: K,
    limit: int,
    meet: Callable[[Sequence[K], K], K | None],
) -> tuple[R, int]:
    """The iteration rule of a fold that cannot know what counts before it has folded (the
    module docstring), one home for the peer's tentative fold (:meth:`Folds._fold`, over its
    held events) and the audit's passes (``audit.auditor._settled``, over the logs): fold
    with ``start``, then with what each fold decided, until one decides nothing new.

    ``fold(known, last)`` folds with ``known`` and returns what it made and what the next
    fold is made with, ``None`` if nothing (it stands: what it was made with is what it
    decided); the next equal to ``known`` stands too (the fold made again with it would make
    the same). ``last``: it is the ``limit``-th, and its result stands whatever it decided
    (so it need not work out the next). Where the next is what a fold before was made with,
    the folds would go round that cycle for ever: the next is ``meet(seen, next)`` instead
    (:func:`cycle_meet`; ``seen``: what every fold so far was made with, in order), once; from
    there the folds go on as they go, to the limit. Returns the last fold's result and how
    many folds were made.

    >>> def halve(n, last):  # a fold "decides" n // 2; 0 stands
    ...     return n, (n // 2 or None)
    >>> refold(halve, 12, 10, lambda seen, new: None)
    (1, 4)
    >>> refold(halve, 12, 2, lambda seen, new: None)
    (6, 2)
    >>> def swap(n, last):  # 1 -> 2 -> 1: a cycle, whose meet is 0, which stands
    ...     return n, {1: 2, 2: 1}.get(n)
    >>> refold(swap, 1, 10, lambda seen, new: 0 if new in seen else None)
    (0, 3)
    """
    seen: list[K] | None = []
    known = start
    made = 0
    while True:
        made += 1
        result, after = fold(known, made >= limit)
        if after is None or after == known or made >= limit:
            return result, made
        if seen is not None:
            seen.append(known)
            met = meet(seen, after)
            if met is not None:
                after, seen = met, None  # (one meet)
        known = after


@dataclass(frozen=True, slots=True)
class Trial:
    """A fold made with some cuts imposed, as :func:`impose_cuts` reads it.

    Not generic (its ``result`` ``Any``): compiled (mypyc), a generic slotted dataclass fails
    at import, and so does a field annotated ``object`` (mypyc looks the name up in the
    module's globals: ``KeyError: 'object'``; docs/latency.md, session 42).

    Attributes:
        result: what the caller made it from: an audit's pass (a peer's is ``fold`` itself).
        fold: the game it decided.
        unheld: what its events said of the feeds (:class:`Unheld`).
        stopped: no more may be tried from it (an audit that stops at its first error).
    """

    result: Any
    fold: GameState
    unheld: Unheld
    stopped: bool = False


def impose_cuts(
    fold_with: Callable[[dict[int, int]], Trial],
    start: Trial,
    uncapped: Collection[int],
    final: GameState | None = None,
    dated: dict[int, int] | None = None,
) -> Trial:
    """The cuts imposed for good over a fixed point (``start``), in the order tried: the one
    rule of :meth:`Folds._cut_unheld` and the audit's passes (``audit.auditor._cut_unheld``).

    Each cut :meth:`Unheld.cuts` offers is tried (``fold_with``: the fixed point with it
    imposed, those imposed before too) and kept if it stands (:func:`cut_stands`): the first
    that does is kept and the offers are made again from that fold. Where that fold drops
    the member below the cut offered, the cut is imposed at its drop instead, and kept if the
    fold with it makes it (:func:`cut_made`; session 41). When none is left, each
    cut :func:`lifted_cuts` offers (a drop decided before the withdrawals that lift its caps)
    is tried the same way, kept if the fold makes it (:func:`cut_made`). When none of those
    is left either, each cut :func:`readmitted_cuts` offers (a member the events readmit from
    a cut the fold never made) is tried, kept if the fold with it readmits the member from
    there (:func:`came_back`); and last each cut :func:`self_kept_cuts` offers (a member kept
    in by its own votes' caps), kept if :func:`frozen_cut`. The cuts only grow, so this
    ends. ``uncapped``: the members
    the fold with no cuts, gaps or caps drops (:meth:`Unheld.cuts`); ``final``: the peer's
    final fold (what no member dropped there announces counts), ``None`` where every fold is
    whole (the audit's: each trial's own); ``dated``: gets :func:`decided_first`'s dates
    over the trial returned.
    Returns the last trial kept (``start`` if none).
    """
    imposed: dict[int, int] = {}
    trial = start
    seen: list[dict[int, int]] = []  # (the cuts decided_first chose: each once, so this ends)
    while not trial.stopped:
        if dated is not None:
            dated.clear()  # (the refusals over the trial returned alone)
        earliest = decided_first(fold_with, trial, imposed, dated)
        if earliest is not None and earliest[0] not in seen:
            imposed, trial = earliest
            seen.append(imposed)
            continue
        for seat, cut, stands in _offers(trial, imposed, uncapped, final):
            cuts = {**imposed, seat: cut}
            tried = fold_with(cuts)
            if stands(tried.fold):
                # (A drop below an Unheld cut keeps it, made where the fold drops the member:
                # imposed at the cut offered, its events between the two would count
                # wherever they come before the drop in the order; two-liar readmit seed 125.)
                lower = tried.fold.dropped.get(seat, cut)
                if lower < cut:
                    cuts = {**imposed, seat: lower}
                    tried = fold_with(cuts)
                    if not cut_made(tried.fold, seat, lower):
                        continue
                imposed, trial = cuts, tried
                break
        else:
            return trial
    return trial


def decided_first(
    fold_with: Callable[[dict[int, int]], Trial],
    trial: Trial,
    imposed: dict[int, int],
    dated: dict[int, int] | None = None,
) -> tuple[dict[int, int], Trial] | None:
    """Of the cuts :func:`earlier_drops` offers over ``trial``, the one whose fold (with it
    imposed) makes a drop decided earliest before the drops it undoes
    (:func:`decided_earlier`): the cuts and that fold, or ``None``. ``dated`` gets, for each
    drop of ``trial`` that a refused one would have undone, the time of the votes the refusal
    read (:func:`_rests_unannounced`): it is decided no earlier (``finality.settle``)."""
    fold = trial.fold
    best: tuple[int, dict[int, int], Trial] | None = None
    drop_at = fold.drop_at
    resting = {q for q in fold.dropped if decided_at(fold, q) > drop_at.get(q, 0)}
    kept = {q: c for q, c in imposed.items() if q not in resting}
    for seat, cut in earlier_drops(fold, kept):
        cuts = {**kept, seat: cut}
        tried = fold_with(cuts)
        if not decided_earlier(fold, seat, cut, tried.fold):
            continue
        refused = _rests_unannounced(fold, seat, tried.fold)
        if refused is not None:
            if dated is not None:
                q, place = refused
                dated[q] = max(dated.get(q, 0), place)
            continue
        at = decided_at(tried.fold, seat)
        if best is None or at < best[0]:
            best = (at, cuts, tried)
    return None if best is None else (best[1], best[2])


def _rests_unannounced(before: GameState, seat: int, fold: GameState) -> tuple[int, int] | None:
    """Whether the drop of ``seat`` that ``fold`` makes in place of a drop of ``before``
    rests on events of that member past its cut there that no view making that drop final
    ever needed: ``before``'s member, once its drop is decided, is voted out by a strict
    majority counting below the last of its membership events timed up to the new drop's
    decision (:func:`~p2p_nertz.protocol.roster.gone_unheld`). A fold there makes the old
    drop final without the member's own feed (``finality.lifted``), and the new one could be
    final nowhere before: the voter counting below that event never announced it (§7.1).
    Every fold of every set of events holding those votes refuses it alike (two-liar readmit
    seed 264; seed 326 with the liar's log ending at its withdrawal; docs/protocol.md §9.2,
    *the drop decided first*, session 42). Where no such majority stands after the old
    drop's decision, every view waits for the member's feed up to there, holds those events,
    and takes the new drop (``--late-withdrawals`` seed 220). Only events the new fold counts
    are read: not those of a member it drops at a lower count (two-liar readmit seed 186:
    seat 0 at 14 in place of its drop on proof at 25). The member and the time of the votes
    of that majority (:func:`~p2p_nertz.protocol.roster.gone_unheld_at`), or ``None``: a
    view that makes the old drop final before every member still in announced them could
    meet a voter's withdrawal signed without them, and the new drop made final there
    (session 43, seed 326's shape withdrawn; docs/protocol.md §13)."""
    at = decided_at(fold, seat)
    for q, cut in before.dropped.items():
        if cut_made(fold, q, cut):
            continue
        upto = fold.dropped.get(q, _NEVER)  # (dropped lower there: its events past count not)
        late = [
            s
            for (author, s, _), (lamport, _, _) in zip(
                fold.roster.read, fold.roster.read_keys, strict=True
            )
            if author == q and cut < s <= upto and lamport <= at
        ]
        if not late:
            continue
        place = gone_unheld_at(before.roster, q, decided(before, q), max(late), fold.dropped.keys())
        if place is not None:
            return q, place
    return None


def _offers(
    trial: Trial, imposed: dict[int, int], uncapped: Collection[int], final: GameState | None
) -> Iterator[tuple[int, int, Callable[[GameState], bool]]]:
    """The cuts :func:`impose_cuts` tries over ``trial``, in order, each with what the fold
    with it imposed must show to keep it: ``Unheld``'s (:func:`cut_stands`), then, only if
    none of those is kept, :func:`lifted_cuts`' (:func:`cut_made`), then
    :func:`readmitted_cuts`' (:func:`came_back`), then :func:`self_kept_cuts`'
    (:func:`frozen_cut`). Lazy: each kind is asked for only once the
    kinds before it are spent."""
    fold, unheld = trial.fold, trial.unheld
    base = fold if final is None else final
    for seat, cut in unheld.cuts(fold, base, imposed, uncapped):
        yield seat, cut, partial(_stood, final, unheld, seat, cut)
    for seat, cut in lifted_cuts(fold, imposed, unheld, base):
        yield seat, cut, partial(cut_made, seat=seat, cut=cut)
    for seat, cut in readmitted_cuts(fold, base, unheld, imposed):
        yield seat, cut, partial(came_back, seat=seat, cut=cut)
    for seat, cut in self_kept_cuts(fold, base, imposed):
        yield seat, cut, partial(frozen_cut, seat=seat, cut=cut)


def _stood(final: GameState | None, unheld: Unheld, seat: int, cut: int, made: GameState) -> bool:
    """:func:`cut_stands` of an ``Unheld`` cut, over the fold ``made`` with it imposed."""
    return cut_stands(made, made if final is None else final, unheld, seat, cut)


def cycle_meet(seen: Sequence[Round], new: Round) -> Round | None:
    """Where the rounds of a fold go round a cycle, what to fold with next: the *meet* of the
    cycle. ``seen``: what each round so far was folded with (cuts, gaps, caps), in order;
    ``new``: what the last one decided. ``None`` unless ``new`` is one of ``seen`` (the rounds
    from it would repeat the cycle for ever, none of them a fixed point).

    The meet keeps only the cuts and gaps every round of the cycle decided, and every cap
    any of them had (the lowest count of each member's, every range a readmission left).
    Caps hang on the drops (a member dropped caps nothing, and has no cap) and the drops on
    the caps and cuts, so a cycle lifts caps with the drops they did not prevent and drops
    with the caps they lifted (cut14's search seed 2955, three players: three rounds, none a
    fixed point). The meet
    counts the fewest votes of the cycle, and a fold counting fewer votes drops fewer
    members: if it is a fixed point, it is the one dropping fewest of those the cycle
    passes near; a member kept in is waited for, while a member dropped wrongly loses
    events that count. The peer's tentative fold (:meth:`Folds._fold`) and the audit's
    passes (``audit.auditor._settled``) take the meet alike (docs/protocol.md §9.2). A fold
    whose rounds settled never meets a cycle: the rule changes only folds that went on to
    the round limit.

    >>> a = ({2: 1}, {}, {1: (1, 9, (), ())})
    >>> b = ({}, {}, {1: (1, 9, (), ())})
    >>> c = ({1: 2}, {}, {0: (2, 9, (), ())})
    >>> cycle_meet([({}, {}, {}), a, b], c) is None
    True
    >>> cycle_meet([({}, {}, {}), a, b, c], a)
    ({}, {}, {0: (2, 9, (), ()), 1: (1, 9, (), ())})
    """
    if new not in seen:
        return None
    cycle = list(seen[list(seen).index(new) :])
    first_cuts, first_gaps, _ = cycle[0]
    cuts = {q: c for q, c in first_cuts.items() if all(r[0].get(q) == c for r in cycle)}
    gaps = {q: g for q, g in first_gaps.items() if all(r[1].get(q) == g for r in cycle)}
    caps: dict[int, Cap] = {}
    for _, _, round_caps in cycle:
        for q, cap in round_caps.items():
            old = caps.get(q)
            if old is None:
                caps[q] = cap
                continue
            # (An exemption stands where every round that capped the member had it.)
            exempt = tuple(sorted({*old[3]} & {*cap[3]}))
            past = tuple(sorted({*old[2], *cap[2]}))
            caps[q] = (min(old[0], cap[0]), min(old[1], cap[1]), past, exempt)
    return cuts, gaps, dict(sorted(caps.items()))


def fresh_caps(
    caps: dict[int, Cap], read: Gaps, found: Gaps, none: dict[int, Cap]
) -> dict[int, Cap]:
    """The caps the next round of a fold is folded with (the peer's tentative fold, the
    audit's passes): the ``caps`` the round decided, or ``none`` (no caps but the forks',
    :func:`~p2p_nertz.protocol.roster.with_forks` of none) where the round ``found`` a
    readmission's gap it was not folded with (``read``), as a peer's tentative fold begins
    from no caps, at every event, over a final fold that has the readmission already.

    A round without the gap read the member's events after its rejoin request as if it had
    never been cut, and the votes standing at its end may be ones that the fold with the
    readmission drops with their voter: a liar readmitted that voted every other member out
    *withheld*, each of them then voting it out past its count of their feed, capped every
    vote against it. Folded on with those caps, the fold of every event at once (the audit;
    a peer's own log folded whole) kept the liar in, where the live peers, holding the
    readmission final when the votes came, dropped it: two fixed points of the same events,
    one chosen by the order the fold learned them in (lie fuzzer, ``--two-liars --back
    readmit`` seed 33; docs/protocol.md §9.2, *The drops as a fixed point*, session 37).
    From no caps the fold finds the drop first, as the live peers did, and the caps of the
    liar's votes go with it (a member dropped caps nothing). The ranges a readmission keeps
    (``Roster.past_caps``, the third item of a cap) stay: they are the readmission's own,
    found with it (shuffle soak seed 517: without them a vote of the member's below its
    rejoin request counted).
    """
    if found == read:
        return caps
    out = dict(none)
    for q, cap in caps.items():
        if cap[2]:
            votes, events, _, exempt = out.get(q, (_NEVER, _NEVER, (), ()))
            out[q] = (votes, events, cap[2], exempt)
    return out


def skips(event: Event, cuts: dict[int, int], gaps: Gaps, back: Gaps | None = None) -> bool:
    """Whether the tentative fold skips ``event`` for the ``cuts`` and ``gaps`` it was given:
    past its author's cut (up to its rejoin request, if it was readmitted there), or in one
    of its author's gaps. ``back``: the gaps of the final fold (readmissions final already).

    A cut may be at a count the member was readmitted from long ago, final already (so not
    among ``gaps``, which are what the fold found anew): :class:`Unheld` offers it when no
    member still in announced the member's later events, as when the member itself is the
    last one left, having just abandoned the other (chaos demo, seed 14). Its events from its
    rejoin request on count: without ``back``, every one of them not final yet was skipped,
    its own abandon among them, which it then signed again and again (§9.3)."""
    seat_gaps = gaps.get(event.seat)
    cut = cuts.get(event.seat)
    if cut is not None:
        came_back = after_gap(seat_gaps, cut)
        if back and came_back == _NEVER:
            came_back = after_gap(back.get(event.seat), cut)
        if cut < event.seq < came_back:
            return True
    return any(lo < event.seq < hi for lo, hi in seat_gaps or ())


def cut_made(fold: GameState, seat: int, cut: int) -> bool:
    """Whether ``fold`` dropped ``seat`` at ``cut``: it is out there, or it was and has been
    readmitted since (a gap from ``cut``, §9.8), whether or not dropped again later.

    The test of a cut :class:`Unheld` offers (:meth:`Folds._cut_unheld`, and the audit's
    passes): a member cut there and back in the game by the same events was cut there all
    the same. A peer decides the cut while the member is gone, and its final fold makes it;
    a fold of every event at once (the audit, a peer restored from its log) meets the
    readmission too, and taking it for "not dropped there" kept the cut from it: the votes
    past the cut then counted, dropped another member, and refused the rejoin request as a
    second ``join`` (soak seed 8227).
    """
    return fold.dropped.get(seat) == cut or any(lo == cut for lo, _ in fold.gaps.get(seat, ()))


def cut_stands(fold: GameState, final: GameState, unheld: Unheld, seat: int, cut: int) -> bool:
    """Whether a cut :class:`Unheld` offered is kept, ``fold`` being the fold with it imposed
    (the one test of :meth:`Folds._cut_unheld` and the audit's passes): ``fold`` dropped
    ``seat`` there (:func:`cut_made`) or at a lower count, and no member still in by ``fold``
    announced holding its events past the cut (:meth:`Unheld.held_past`).

    A drop at a lower count keeps the cut too: the votes without the member's events past
    the cut drop it, and those events, past both counts, count nowhere either way (session
    41; lie fuzzer ``--two-liars --back readmit`` seed 326, three players: liar seat 0
    skipped a seq on the wire, so the peers held its feed to 18 and dropped it at 16, and
    its withdrawal at its seq 19, in its own log alone, moved every fold of a set of logs
    with that log to the other fixed point, seat 2 out at 10; its cut at 18, the count of
    the last votes on it, was offered and refused for the drop at 16).

    The offer reads who is still in from the fold *without* the cut, and imposing it can keep
    in a member that fold dropped: its announcement of the events past the cut then counts
    (§9.2, *events nobody else holds*). Soak seed 14017 (six players): seat 4, on seat 1's
    side of a partition, held seat 1's events past 15 and said so; the fold without a cut
    dropped seat 4, so seat 1's cut at 15 was offered, and the fold with it kept seat 4 in
    and dropped seat 1. Peers that held an event announcing the same of seat 0, still in
    either way, were offered no cut and dropped seat 4: two groups made final different drops
    at Lamport 228 and 231, and ended in different rounds.

    A member readmitted from the cut since (a gap from it, §9.8) is held again by the others
    past its rejoin request, which says nothing of the gap: the cut stands (soak seed 8227).

    And a member still in by ``fold`` must have a vote against ``seat`` counting no more than
    the cut that it never withdrew (:func:`~p2p_nertz.protocol.roster.frozen_below`): that
    voter is why no event past the cut is final anywhere (it announces none of them, §9.2,
    *whoever else held them*). A voter that withdrew announces them again, in beats too,
    which no log keeps: where every such voter withdrew, a peer may have made them final,
    and the drops resting on them (``--variants`` soak seed 686: seats 0 and 3 withdrew
    their votes on seat 1, counting 59, and seat 2 its own, counting 55; seat 2 alone
    imposed seat 1's cut at 59 and made seat 1's drop final, the three others, holding their
    beats, made seat 2's drop at 54 final).
    """
    if not (cut_made(fold, seat, cut) or fold.dropped.get(seat, _NEVER) < cut):
        return False
    if any(lo == cut for lo, _ in fold.gaps.get(seat, ())):
        return True
    return not unheld.held_past(fold, final, seat, cut) and frozen_below(fold.roster, seat, cut)


def self_kept_cuts(
    fold: GameState, final: GameState, imposed: Collection[int]
) -> list[tuple[int, int]]:
    """The cuts to try, ``(seat, cut)`` in seat order then count, for members still in by
    ``fold`` and ``final`` (or out by a leave in ``fold`` alone; not in ``imposed``) that
    signed a vote against a member ``fold`` caps, past the count of a vote standing against
    them (:func:`~p2p_nertz.protocol.roster.freezes`): each such count. The fold with one
    imposed is kept where it drops the member there and a vote against it stands at or below
    the cut (:func:`frozen_cut`), whoever announced holding the events past it.

    Such a member may be kept in by its own votes alone: past the count they never count,
    but they cap (a vote caps whether it counts or not, §9.2), and the caps can keep the
    votes against it from dropping it. A peer that folds the events in the order they came
    may have dropped it there before those caps came into its fold; a fold of every event at
    once (the audit, a peer's own log folded whole) kept it in, and the cut :class:`Unheld`
    offers was refused where another member still in announced holding the member's events
    past it. That announcement says nothing final: the frozen voter still in announced none
    of them, so none is final anywhere (§7.1, §9.2 *whoever else held them*), and imposing
    the cut changes no decision made final (docs/protocol.md §9.2, *a member kept in by its
    own votes*, session 40; lie fuzzer ``--two-liars --back readmit`` seed 13)."""
    caps = fold.vote_caps
    if not caps:
        return []
    roster = fold.roster
    left = fold.left if final is fold else fold.left.difference(final.dropped)
    gone = fold.dropped.keys() | final.dropped.keys()
    last: dict[int, int] = {}  # seat -> its last vote against a member the fold caps
    for author, seq, body in roster.read:
        if (
            body is not None
            and body.reason in _AGAINST
            and body.seat in caps
            and body.seat != author
            and seq > last.get(author, 0)
        ):
            last[author] = seq
    out: list[tuple[int, int]] = []
    for seat in sorted(last):
        if (seat in gone and seat not in left) or seat in imposed:
            continue
        counts = sorted(set(freezes(roster, seat).values()))
        out.extend((seat, c) for c in counts if c < last[seat])
    return out


def frozen_cut(fold: GameState, seat: int, cut: int) -> bool:
    """Whether a cut :func:`self_kept_cuts` offered is kept, ``fold`` being the fold with it
    imposed: ``fold`` dropped ``seat`` there (:func:`cut_made`) and a member still in by
    ``fold`` has a vote against it counting no more than the cut, never withdrawn
    (:func:`~p2p_nertz.protocol.roster.frozen_below`)."""
    return cut_made(fold, seat, cut) and frozen_below(fold.roster, seat, cut)


def lifted_cuts(
    fold: GameState,
    imposed: Collection[int],
    unheld: Unheld | None = None,
    final: GameState | None = None,
) -> list[tuple[int, int]]:
    """The cuts to try, ``(seat, cut)`` in seat order, for members still in by ``fold`` (a
    fixed point; not in ``imposed``) whose votes against them that capped were withdrawn
    since: each cut at which the events before the first such withdrawal drop the member
    (``Roster.before_lift``). The fold with one imposed that drops the member there
    (:func:`cut_made`) is kept for good (:func:`impose_cuts`: the peer's and the audit's).

    Tried only where the member has a counted vote past the lowest count of those votes (one
    the caps held back), which keeps the trials rare; ``Roster.before_lift`` folds the
    membership events alone, not the game.

    Where those events do not drop the member, every membership event read before such a
    withdrawal, counted or not, is tried without the member's events past the count of each
    vote against it (``roster.lifted_trials``): a peer that held neither the withdrawal nor
    those events could make that drop final, if no member (other than those the final fold
    dropped) had announced holding them before the withdrawal (``unheld``, :meth:`Unheld.before`:
    one that had, the peer waited for). Two members voting each other out, each past the
    other's count, a third withdrawing its vote on one of them after the other's drop: the
    fold holding every event dropped the first, in the past of what peers without its late
    votes made final (soak ``--late-withdrawals`` seed 11; docs/protocol.md §13).
    """
    roster = fold.roster
    out: list[tuple[int, int]] = []
    for seat, lifts in sorted(roster.lifts.items()):
        if seat in roster.dropped or seat in imposed or not lifts:
            continue
        count = min(lift[0] for lift in lifts)
        if not any(
            author == seat and seq > count and body is not None and body.reason in _AGAINST
            for author, seq, body in roster.ops
        ):
            continue
        cut = roster.before_lift(seat)
        if cut is None and unheld is not None:
            gone = final.dropped.keys() if final is not None else ()
            cut = next(
                (
                    c
                    for c, at in st.lifted_trials(roster, seat)
                    if not unheld.before(seat, c, at, gone)
                ),
                None,
            )
        if cut is not None:
            out.append((seat, cut))
    return out


def earlier_drops(fold: GameState, imposed: Collection[int]) -> list[tuple[int, int]]:
    """Where ``fold`` drops a member on a withdrawal timed after the drop
    (``finality.decided_at`` later than ``drop_at``): the cuts to try, ``(seat, cut)`` in
    seat order then count, of every other member still in (not in ``imposed``) at each
    count of a vote read against it, and of every member the fold dropped (not one that
    left: its leave is undone by votes only as ``roster._undo_leaves`` says) at each lower
    count (session 38: a member dropped later on proof, at a higher count, may have been the
    drop decided first at a lower one; lie fuzzer readmit seed 186). Kept where the fold with
    it imposed makes that drop and it is decided before the drops it undoes
    (:func:`decided_earlier`)."""
    roster = fold.roster
    if not any(decided_at(fold, q) > at for q, at in roster.drop_at.items() if q in roster.dropped):
        return []
    counts: dict[int, set[int]] = {}
    for author, _, body in roster.read:
        if body is not None and body.reason in _AGAINST and body.seat != author:
            counts.setdefault(body.seat, set()).add(body.last_seq)
    dropped = roster.dropped
    return [
        (seat, c)
        for seat in sorted(counts)
        if seat not in imposed
        for c in sorted(counts[seat])
        if seat not in dropped or (c < dropped[seat] and seat not in roster.left)
    ]


def decided_earlier(before: GameState, seat: int, cut: int, fold: GameState) -> bool:
    """Whether ``fold`` (``before`` with ``seat``'s cut imposed) drops ``seat`` at ``cut``
    in place of a drop of ``before``, decided (``finality.decided_at``) before every drop of
    ``before`` it undoes: of two fixed points of the same events, the drop decided first
    (docs/protocol.md §7.4, §13 *a late lift*)."""
    if not cut_made(fold, seat, cut):
        return False
    undone = [q for q in before.dropped if not cut_made(fold, q, before.dropped[q])]
    if not undone:
        return False
    return decided_at(fold, seat) < min(decided(before, q) for q in undone)


def readmitted_cuts(
    fold: GameState, final: GameState, unheld: Unheld, imposed: Collection[int]
) -> list[tuple[int, int]]:
    """The cuts to try, ``(seat, cut)`` in seat order, then request, then count from the
    highest, for members still in by ``fold`` (and ``final``; not in ``imposed``) that a
    readmission read (a ``drop`` *rejoin*, §9.8) brings back at a rejoin request that no gap
    of ``fold`` or ``final`` ends at: each count of a vote against the member below that
    request (and not below the end of a gap of it before the request). The fold with one
    imposed that readmits the member from there (:func:`came_back`) is kept for good
    (:func:`impose_cuts`: the peer's and the audit's).

    A readmission is signed by a member whose final fold has the member dropped, and the
    gap it leaves (the cut to the request) is the events that never count. The members'
    announcements past the cut that :class:`Unheld` reads come after the readmission (the
    voters unfreeze them once it is final, and the request is among what they announce),
    and say nothing of the gap; a fold of every event at once (the audit, a peer restored
    from its log) reads them all the same, so :meth:`Unheld.cuts` no longer offers the cut
    that a live peer imposed before them. Soak seed 16034 (four players): seats 1 and 3
    capped each other's votes (seat 3's vote on seat 1, in its gap, and seat 1's on seat 3,
    past the count seat 3's vote quotes), and the peers, offered seat 3's cut at 74 while
    nobody still in announced more, dropped it there and readmitted it at its request (76);
    every audit kept the caps, left seat 3 in, refused its request as a second ``join``,
    and reported honest members' moves as cheats.
    """
    out: list[tuple[int, int]] = []
    for seat in sorted(unheld.rejoins):
        if seat in imposed or seat in fold.dropped or seat in final.dropped:
            continue
        gaps = fold.gaps.get(seat, ()) + final.gaps.get(seat, ())
        counts = sorted(unheld.counts.get(seat, ()), reverse=True)
        for request in sorted(unheld.rejoins[seat]):
            if any(hi == request for _, hi in gaps):
                continue
            back = max((hi for _, hi in gaps if hi < request), default=0)
            out.extend((seat, c) for c in counts if back <= c < request)
    return out


def came_back(fold: GameState, seat: int, cut: int) -> bool:
    """Whether ``fold`` readmitted ``seat`` from ``cut`` (a gap from it, §9.8): the test of
    a cut :func:`readmitted_cuts` offers."""
    return any(lo == cut for lo, _ in fold.gaps.get(seat, ()))


def unreadmitted(
    fold: GameState, seat: int, seq: int, gaps: tuple[tuple[int, int], ...] | None
) -> bool:
    """Whether ``seat``'s event ``seq`` is at or past the rejoin request of a readmission
    (``gaps``: the member's gaps, as the held events decide them) that ``fold`` has not made
    yet at this point of the order: such an event never counts here (§9.8). The request
    itself is never folded, and what the member signs from it on counts from its
    readmission on in the total order (time ``T``); before it, the member is out from its
    cut, whether the votes that cut it come before the event in the order or after it (a
    member that signed a ``join`` past its cut before it learned of its drop, and was
    readmitted at it: lie fuzzer, readmit seeds 156 and 16). The rule of the peer's final
    fold (:meth:`Folds.counts`), its tentative one and the audit's (which folds with the
    gaps a pass found, its cuts not among its ``cuts`` any more), and of
    :meth:`Folds.never_counts` (an event timed at or below ``T``)."""
    if not gaps:
        return False
    made = fold.gaps.get(seat, ())
    return any(hi <= seq and (lo, hi) not in made for lo, hi in gaps)


def after_gap(gaps: tuple[tuple[int, int], ...] | None, cut: int) -> int:
    """The first seq that counts again after ``cut``: the rejoin request of the gap that starts
    there, if the member was readmitted, else never."""
    for lo, hi in gaps or ():
        if lo == cut:
            return hi
    return _NEVER


class Unheld:
    """What the events say of each member's feed that no other member still in holds: the
    last seq of it read, the highest each other member announced holding (a frontier), and
    the counts the votes against it quote. The one home of the rule of
    :meth:`Folds._cut_unheld` (the audit's passes ask it too).

    Args:
        seats: how many seats the game has.
    """

    __slots__ = ("announced", "counts", "last", "rejoins", "times")

    def __init__(self, seats: int) -> None:
        #: ``announced[a][q]``: the highest seq of ``q``'s feed that ``a`` announced holding.
        self.announced = [[0] * seats for _ in range(seats)]
        self.last = [0] * seats
        self.counts: dict[int, set[int]] = {}  # seat -> the counts of the votes against it
        #: seat -> the rejoin requests (seqs) the readmissions read name (:func:`readmitted_cuts`)
        self.rejoins: dict[int, set[int]] = {}
        #: ``times[a]``: (Lamport time, frontier) of each of ``a``'s events read
        self.times: list[list[tuple[int, tuple[int, ...]]]] = [[] for _ in range(seats)]

    def note(self, event: Event) -> None:
        """An event read (held, final or not)."""
        seat = event.seat
        # (No max() call: Python 3.11's parses its keywords, ~2,000 instructions a call.)
        if event.seq > self.last[seat]:  # noqa: PLR1730
            self.last[seat] = event.seq
        body = event.body
        if event.kind is KIND_DROP and isinstance(body, Drop):
            # (A vote refused for its ids against the member's, roster.unsigned_id and
            # withdraw_unsigned, needs a fold to tell: its count is one more cut tried, which
            # the fold, refusing it, imposes only where the other votes decide it, §9.2.)
            if body.reason in _AGAINST and not contradicts(body):  # (refused: no count)
                self.counts.setdefault(body.seat, set()).add(body.last_seq)
            elif body.reason is DropReason.REJOIN:
                self.rejoins.setdefault(body.seat, set()).add(body.last_seq)
        frontier = getattr(body, "frontier", None)
        if frontier:
            self.times[seat].append((event.lamport, frontier))
            announced = self.announced[seat]
            for q, seq in enumerate(frontier[: len(announced)]):
                if q != seat and seq > announced[q]:
                    announced[q] = seq

    def held_past(self, fold: GameState, final: GameState, seat: int, cut: int) -> bool:
        """Whether a member other than ``seat``, dropped neither in ``fold`` nor in
        ``final``, announced holding ``seat``'s events past ``cut``."""
        gone = fold.dropped.keys() | final.dropped.keys()
        return any(
            a[seat] > cut for q, a in enumerate(self.announced) if q != seat and q not in gone
        )

    def before(self, seat: int, cut: int, lamport: int, gone: Collection[int] = ()) -> bool:
        """Whether a member other than ``seat`` and ``gone`` announced holding ``seat``'s
        events past ``cut`` in an event timed before ``lamport``."""
        return any(
            f[seat] > cut
            for q, times in enumerate(self.times)
            if q != seat and q not in gone
            for at, f in times
            if at < lamport
        )

    def cuts(
        self,
        fold: GameState,
        final: GameState,
        imposed: dict[int, int],
        uncapped: Collection[int] = (),
    ) -> list[tuple[int, int]]:
        """The cuts to try, in order (seat, then count): of each member neither dropped in
        ``fold`` or ``final`` (but by a leave in ``fold`` alone) nor cut already (``imposed``),
        the count of each vote read against it at or above what any other member not dropped
        (in ``fold`` or ``final``) announced holding of it, and below the last of its events
        read (it has events past there that no member still in says it holds).

        Whoever announced those events, none of them is final anywhere where the votes
        without them drop the member at the count (a voter counting no more than the cut is
        a member, and never announced more: §7.1, §9.2); the trials are bounded to members
        whose events past the count no member still in announced, which keeps them rare (a
        trial for every vote against a member doubled the simulator's CPU).

        ``uncapped``: the members dropped in the fold of the same events with no cuts, gaps
        or caps; what they announced does not bound the trials either. A capped vote caps
        (:meth:`Roster.standing_caps`): the votes of a member cut off, past its count and
        against every member left, cap the votes that drop it, and the fixed point drops no
        one, not even a member that announced those events and died too; its announcement
        kept the cut from being tried, where the fold with no caps drops it
        (tests/test_folds_unheld.py, ``frontier``)."""
        counts = self.counts
        gone = fold.dropped.keys() | final.dropped.keys()
        silent = gone | set(uncapped)
        # (A member that left, its leave not final, is tried too: its leave, past a count, is
        # one of its events past it, which never count where the votes drop it there: §9.3,
        # *A leave past the cut*; two-liar readmit seed 2 with claim_after_leave alone.)
        left = fold.left if final is fold else fold.left.difference(final.dropped)
        out: list[tuple[int, int]] = []
        for seat in sorted(counts):
            if (seat in gone and seat not in left) or seat in imposed:
                continue
            low = max(
                (a[seat] for q, a in enumerate(self.announced) if q != seat and q not in silent),
                default=0,
            )
            high = self.last[seat]
            out.extend((seat, c) for c in sorted(counts[seat]) if low <= c < high)
        return out


#: The votes that may drop a member (not withdrawals, abandons, readmissions).
_AGAINST = frozenset(
    {DropReason.SILENT, DropReason.WITHHELD, DropReason.EQUIVOCATION, DropReason.FLAPPING}
)
