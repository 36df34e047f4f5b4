"""Who is in the game, as the fold decides it: votes, drops and their cuts, leaves, rejoins.

Theory of operation
-------------------
:class:`Roster` is the membership part of :class:`~p2p_nertz.protocol.state.GameState`'s
fold (DESIGN.md §6, docs/protocol.md §9): the votes counted against each member, the members
dropped (each with its *cut*, the last of its events that counts, and the chain of it that
counts), the members that left, the members readmitted and the gaps of their feeds that never
count, and the caps the caller folds with (:meth:`Roster.standing_caps`, :func:`with_forks`).

It owns that state and returns values; the game fold asks it and acts on the answers: which
members a vote drops (:meth:`Roster.settle`, in the order they drop), which members come back
at a round's start (:meth:`Roster.readmit`), whether an event still counts
(:meth:`Roster.counts`). What a member's going does to the round being played (its tableau out,
an everyone-stuck rotation) is the round's, and what an abandon does to the game's end is the
game's: neither is here.

A drop is what the votes decide without the member's events past its cut
(:meth:`Roster._decided`): none of them counts once it is dropped there, and a peer that holds
its feed only up to the cut makes the drop final without them. So the roster keeps its
membership events since the game's start or the last readmission (:attr:`Roster.ops`) and,
where the member has some past the cut, folds them again without those
(:meth:`Roster._without`): a fold that holds them and one that does not decide alike.

Not to be confused with :class:`~p2p_nertz.protocol.membership.Membership`, the peer's own
liveness bookkeeping (who is silent, what to vote): the roster is what the *events* decided,
the same in every fold of the same events.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterator, Mapping, Sequence

from p2p_nertz.protocol.bodies import ID_PREFIX, Drop, DropReason
from p2p_nertz.protocol.fold_values import RefusalCode, Refuse
from p2p_nertz.rules.blank import Blank

__all__ = [
    "Cap",
    "CountedIds",
    "Roster",
    "capped",
    "contradicts",
    "decided_before_lifts",
    "drop_lifts",
    "freezes",
    "frozen_at",
    "frozen_below",
    "gone_unheld",
    "gone_unheld_at",
    "lasting_caps",
    "lifted_trials",
    "named_within_cuts",
    "standing_votes",
    "vote_cut",
    "voted_gone",
    "unsigned_id",
    "voted_past_cut",
    "with_forks",
    "withdraw_unsigned",
]

_C = RefusalCode

#: What caps one member's events (:meth:`Roster.standing_caps`, :func:`capped`): the seq
#: above which its votes never count, the seq above which no abandon of its counts, and the
#: ranges ``(lo, hi)`` of seqs strictly between which its votes never count, whatever stands
#: now (the caps a readmission lifted, :attr:`Roster.past_caps`, and the votes a drop does not
#: revive, :func:`_unrevived`); and ``(voter, count, seq)`` where one voter alone quotes the
#: lowest count, in its event ``seq``: a vote against that voter counting that event is capped
#: at ``count`` instead, the next lowest (a vote never caps a vote against its own voter that
#: answers it, :meth:`Roster.standing_caps`).
Cap = tuple[int, int, tuple[tuple[int, int], ...], tuple[tuple[int, int, int], ...]]
#: An event's place in the game's order, ``(lamport, seat, seq)`` (:attr:`Roster.read_keys`).
Key = tuple[int, int, int]


class Roster(Blank):
    """The members of one game fold (module docstring). Mutable for speed, as the fold is;
    :meth:`copy` is cheap and independent.

    Args:
        seats: how many seats the game has.
    """

    __slots__ = (
        "drop_at",
        "drop_ops",
        "dropped",
        "ends",
        "frozen",
        "gaps",
        "kept_forks",
        "kept_ids",
        "left",
        "lifts",
        "memo",
        "ops",
        "origin",
        "past_caps",
        "read",
        "read_keys",
        "readmitted_at",
        "rejoin_ids",
        "rejoining",
        "seats",
        "uncounted",
        "vote_caps",
        "votes",
    )

    def __init__(self, seats: int) -> None:
        self.seats = seats
        self.dropped: dict[int, int] = {}  # seat -> cut (its last counted seq)
        self.drop_at: dict[int, int] = {}  # seat -> Lamport time its drop was decided
        #: seat -> how many of :attr:`ops` came up to its drop (what :func:`_unrevived` reads)
        self.drop_ops: dict[int, int] = {}
        self.left: frozenset[int] = frozenset()
        #: seat -> (cut, id prefix): the chain of a dropped member that counts, named by the
        #: id of its event at the cut (an id names the whole chain before it)
        self.kept_forks: dict[int, tuple[int, bytes]] = {}
        #: seat -> {seq: id prefix}: more of that chain, as the deciding vote quoted it
        self.kept_ids: dict[int, dict[int, bytes]] = {}
        #: seat -> {seq: id prefix}: the chain of a member readmitted, up to its rejoin
        #: request, as the readmission quoted it (every member follows it from then on)
        self.rejoin_ids: dict[int, dict[int, bytes]] = {}
        #: seat -> seq of its rejoin request: a dropped member readmitted at the next round
        self.rejoining: dict[int, int] = {}
        #: seat -> Lamport time of the event that readmitted it (its first round back began)
        self.readmitted_at: dict[int, int] = {}
        #: seat -> ((cut, request), ...): its events strictly between never count
        self.gaps: dict[int, tuple[tuple[int, int], ...]] = {}
        # target -> (voter, vote) in fold order
        self.votes: dict[int, tuple[tuple[int, Drop], ...]] = {}
        #: target -> (voter, vote): the votes against it that never count (capped by a vote
        #: standing against their voter) and stand: they cap all the same (see
        #: :meth:`standing_caps`)
        self.frozen: dict[int, tuple[tuple[int, Drop], ...]] = {}
        #: The membership events counted since :attr:`origin`, in fold order: ``(seat, seq,
        #: vote)`` for a vote or a withdrawal (against a member dropped already too) or an
        #: abandon, ``(seat, seq, None)`` for a leave. What :meth:`settle` folds again without
        #: a member's events past a cut (:meth:`_without`).
        self.ops: tuple[tuple[int, int, Drop | None], ...] = ()
        self.ends: dict[int, int] = {}  # seat -> its last seq in ops (_decided)
        #: Every membership event read since :attr:`origin`, counted or not, in the game's
        #: order (:func:`lifted_trials`), and the order key ``(lamport, seat, seq)`` of each
        #: (:func:`_read`)
        self.read: tuple[tuple[int, int, Drop | None], ...] = ()
        self.read_keys: tuple[tuple[int, int, int], ...] = ()
        #: The roster the :attr:`ops` start from: ``None`` at the game's start; a copy of
        #: this one, without ops, after each readmission (:meth:`readmit`). Never changed.
        self.origin: Roster | None = None
        #: seat -> (the seq above which its votes against a member do not count, from the
        #: standing votes against it (see :meth:`standing_caps`); the seq above which no
        #: abandon of its counts (see :func:`with_forks`)). Given by the caller, like the cuts.
        self.vote_caps: dict[int, Cap] = {}
        #: target -> (count, Lamport time, voter, index in :attr:`ops`, seq) of each withdrawal
        #: of a vote against it that caps (:meth:`standing_caps`), made while it and the voter
        #: were in (:meth:`before_lift`)
        self.lifts: dict[int, tuple[tuple[int, int, int, int, int], ...]] = {}
        #: seat -> the least seq of its read (observe) that does not count (see saw_cut)
        self.uncounted: dict[int, int] = {}
        #: seat -> ((count, request), ...): its votes strictly between never count (readmit)
        self.past_caps: dict[int, tuple[tuple[int, int], ...]] = {}
        self.memo = _Memo()  # (what its folds of the membership events keep: shared by copies)

    def copy(self) -> Roster:
        """An independent copy (the fold's :meth:`~p2p_nertz.protocol.state.GameState.copy`)."""
        new = Roster.__new__(Roster)
        new.seats = self.seats
        new.dropped = dict(self.dropped)
        new.drop_at = dict(self.drop_at)
        new.drop_ops = dict(self.drop_ops)
        new.left = self.left
        new.kept_forks = dict(self.kept_forks)
        new.kept_ids = dict(self.kept_ids)
        new.rejoin_ids = dict(self.rejoin_ids)
        new.rejoining = dict(self.rejoining)
        new.readmitted_at = dict(self.readmitted_at)
        new.gaps = dict(self.gaps)
        new.votes = dict(self.votes)
        new.frozen = dict(self.frozen)
        new.ops = self.ops
        new.ends = dict(self.ends)
        new.read, new.read_keys = self.read, self.read_keys
        new.origin = self.origin
        new.vote_caps = dict(self.vote_caps)
        new.lifts = dict(self.lifts)
        new.uncounted = dict(self.uncounted)
        new.past_caps = dict(self.past_caps)
        new.memo = self.memo  # (shared: each entry checked against ops before any use)
        return new

    # -- queries --------------------------------------------------------------------------
    @property
    def majority(self) -> int:
        """Votes needed to drop a member: a strict majority of the current roster (the
        members neither dropped nor gone), DESIGN.md §6."""
        return (self.seats - len(self.dropped)) // 2 + 1

    def counts(self, seat: int, seq: int) -> bool:
        """Whether ``seat``'s event ``seq`` can still count (:meth:`GameState.counts
        <p2p_nertz.protocol.state.GameState.counts>`)."""
        cut = self.dropped.get(seat)
        if cut is not None and seq > cut:
            return False
        gaps = self.gaps.get(seat)
        return not gaps or not any(lo < seq < hi for lo, hi in gaps)

    def members(self) -> set[int]:
        """The seats neither dropped nor gone."""
        return set(range(self.seats)) - set(self.dropped)

    def standing_caps(self) -> dict[int, Cap]:
        """For each member with votes against it standing (not withdrawn, by members still
        in, counted or capped): the lowest count those votes quote, past which its votes never
        count, and, if one of them is on proof of a fork at seq ``f``, ``f − 1``, past which no
        abandon of its counts (see :func:`with_forks`); and, for every member readmitted, the
        ranges its readmissions keep (:attr:`past_caps`), whether or not votes stand now.

        A voter announces no more of a member's feed than its vote counts (§9.2), so while the
        vote stands no event of the member past that count can be final anywhere (finality
        needs every member to announce it). Such an event must not decide anything either: a
        vote of a member cut off from the others, signed during a partition and read only
        once it heals, would otherwise drop someone in the past of what the others made final
        without it (soak seed 472). The caller folds again with these caps, as with the cuts.

        A vote that does not count, capped itself, caps all the same: its voter froze its
        announcements when it signed it, whether the vote counts or not. Two votes that cap
        each other (each signed past the other's count) then both count for nothing and both
        cap, in every round of the fold; had a capped vote capped nothing, a round with both
        caps would count neither, the next both, and the rounds alternate (docs/protocol.md
        §13). A vote of a member dropped caps nothing (its announcements are not waited for).
        """
        return _caps(self)

    def stands(self, voter: int, target: int) -> bool:
        """Whether ``voter`` has a vote against ``target`` standing, counted or capped: either
        way it froze what ``voter`` announces of ``target``'s feed (§9.2)."""
        ballots = (*self.votes.get(target, ()), *self.frozen.get(target, ()))
        return any(v == voter for v, _ in ballots)

    def voted_chain(self, seat: int, fork: int) -> tuple[int, dict[int, bytes]] | None:
        """:func:`~p2p_nertz.protocol.state.voted_chain`: the chain the counted votes quote of
        ``seat``, proven to have forked at ``fork``, while its drop is not decided."""
        if seat in self.dropped:
            return None
        dropped = self.dropped
        ballots = tuple(b for voter, b in self.votes.get(seat, ()) if voter not in dropped)
        if not ballots:
            return None
        cut, chain = vote_cut(ballots)
        if cut < fork or cut not in chain:
            return None
        return cut, chain

    def saw_cut(self, seat: int, frontier: tuple[int, ...], of: int | None = None) -> bool:
        """Whether an event of ``seat`` with this frontier holds events of a member past the
        cut a drop made: its author saw cards on the lake that count nowhere now (a fork sent
        to a member asleep cut the forker below its fork, and with it the foundations it had
        started, which the others had built on: found by session 9's scan, 2 and 4 players):
        past a drop folded, or an event read that did not count, or past the fork of a member
        known to have forked. ``of``: of that member only (a stage on a cut one, session 40)."""
        skip = {seat} if of is None else {q for q in range(len(frontier)) if q != of} | {seat}
        if any(frontier[q] > cut for q, cut in self.dropped.items() if q not in skip):
            return True
        # (A cut the fold has not reached yet in the order: the events past it were read, and
        # did not count, before this one. Only the signed frontier says what its author held:
        # a vote against the member is no proof of holding its events past the cut, or a
        # voter's move on a sealed card escaped its finding, docs/shuffle.md §9.)
        if any(q not in skip and frontier[q] >= first for q, first in self.uncounted.items()):
            return True
        # (A member known to fork whose drop this fold has not reached yet: the cap below its
        # fork, with_forks, is what its drop will cut at most.)
        return any(frontier[q] > cap[1] for q, cap in self.vote_caps.items() if q not in skip)

    # -- what the events decide -------------------------------------------------------------
    def read_uncounted(self, seat: int, seq: int, body: object = None, lamport: int = 0) -> None:
        """An event of ``seat`` was read that does not count (the fold's ``observe``)."""
        if isinstance(body, Drop) and body.reason in _AGAINST:
            _read(self, (seat, seq, body), lamport)
        if seq < self.uncounted.get(seat, seq + 1):
            self.uncounted[seat] = seq

    def vote(self, voter: int, seq: int, body: Drop, lamport: int = 0) -> bool:
        """Count ``voter``'s vote (its event ``seq``, at ``lamport``) against ``body.seat``,
        or its withdrawal; whether a new vote was counted (then :meth:`settle` may drop
        someone). A withdrawal of a vote that caps is noted in :attr:`lifts`.

        Against a member dropped already, it changes nothing here, but is kept in
        :attr:`ops`: without the events of another member past a cut, that drop may come
        later, by this vote (:meth:`_without`)."""
        target = body.seat
        _add(self, (voter, seq, body), lamport)
        if target in self.dropped:
            return False
        votes = self.votes.get(target, ())
        if body.reason is DropReason.WITHDRAW:
            if voter not in self.dropped:
                ballots = (*votes, *self.frozen.get(target, ()))
                at = len(self.ops) - 1  # (where this withdrawal is in ops)
                lifted = [
                    (v.last_seq, lamport, voter, at, seq)
                    for q, v in ballots
                    if q == voter and v.reason in _CAPPED
                ]
                self.lifts[target] = (*self.lifts.get(target, ()), *lifted)
            self.votes[target] = tuple(v for v in votes if v[0] != voter)
            self._thaw(voter, target)
            return False
        if any(v[0] == voter for v in votes):
            return False  # one vote per voter
        self.votes[target] = (*votes, (voter, body))
        return True

    def freeze(self, voter: int, body: Drop, seq: int = 0, lamport: int = 0) -> None:
        """``voter``'s vote ``body`` (its event ``seq``, at ``lamport``) never counts (capped:
        :func:`capped`), but stands until withdrawn, and caps the member it votes out
        (:meth:`standing_caps`)."""
        _read(self, (voter, seq, body), lamport)
        if body.reason not in _CAPPED or body.seat == voter or body.seat in self.dropped:
            return
        frozen = self.frozen.get(body.seat, ())
        voted = (*self.votes.get(body.seat, ()), *frozen)
        if not any(v[0] == voter for v in voted):  # (one vote per voter)
            self.frozen[body.seat] = (*frozen, (voter, body))

    def _thaw(self, voter: int, target: int) -> None:
        """``voter`` withdrew its vote on ``target``: a capped one no longer caps either."""
        frozen = self.frozen.get(target)
        if frozen:
            self.frozen[target] = tuple(v for v in frozen if v[0] != voter)

    def settle(self, lamport: int, *, plain: bool = False) -> list[tuple[int, int]]:
        """Drop every member that a strict majority of the current roster has voted out, at
        Lamport time ``lamport``; the ``(seat, cut)`` of each, in the order they dropped.

        Votes of members dropped since do not count; one drop shrinks the roster, which may
        complete another (a partition's minority side), so this repeats until nothing moves.
        ``plain``: by the votes alone, without asking whether the drop stands without the
        member's events past its cut (:meth:`_decided`; the fold :meth:`_without` makes).
        """
        removed: list[tuple[int, int]] = []
        changed = True
        while changed:
            changed = False
            for target in sorted(self.votes):
                if target in self.dropped:
                    continue
                counted = tuple(
                    (voter, v) for voter, v in self.votes[target] if voter not in self.dropped
                )
                decided = self._decided(target, counted, plain=plain)
                if decided is None:
                    continue
                cut, chain = decided
                self.drop_at[target] = lamport
                self._keep(target, cut, chain)
                self.remove(target, cut, left=False)
                removed.append((target, cut))
                changed = True
        return removed if plain or not self.left else [*removed, *_undo_leaves(self, lamport)]

    def _decided(
        self, target: int, counted: tuple[tuple[int, Drop], ...], *, plain: bool
    ) -> tuple[int, dict[int, bytes]] | None:
        """The cut and the kept chain of ``target`` if the ``counted`` votes drop it now."""
        ballots = tuple(v for _, v in counted)
        if not ballots:
            return None
        # A member proven to cheat is dropped on the votes of every member left: their
        # counts and chains together say where the chains part (see vote_cut). Except
        # members that every one of those voters has voted out (gone silent, or proven to
        # have forked: _voted_out_by): else a cheater and a member that died would hold
        # each other in the game for ever (the honest one cannot take the cheater's vote on
        # the dead one, whose chain it does not follow: soak seed 224), and so would two
        # cheaters that never vote beside one honest member.
        if any(v.reason is DropReason.EQUIVOCATION for v in ballots):
            voters = {voter for voter, _ in counted}
            needed = [
                q
                for q in range(self.seats)
                if q != target
                and q not in self.dropped
                and (q in voters or not _voted_out_by(self, q, voters))
            ]
            return vote_cut(ballots) if voters.issuperset(needed) else None
        if plain:  # (the votes alone: no cut to work out without a majority)
            return vote_cut(ballots) if len(ballots) >= self.majority else None
        cut, chain = vote_cut(ballots)
        last = self.ends.get(target, 0)
        if last <= cut:
            return (cut, chain) if len(ballots) >= self.majority else None
        # The member's events past a cut count nowhere once it is dropped there, even before
        # its drop in the order (§9.2), and a peer that holds its feed only up to the cut
        # makes the drop final without them (finality.settle). So a drop is what the votes
        # decide without those events, one rule for a fold that holds them and one that does
        # not: no drop if it needs a drop that a vote of the member past the cut decided
        # (soak seed 53: each drop would undo the other); a drop if the votes decide it
        # without them, whatever they say (soak seed 2086: the member's vote, past the cut
        # and held by none of the majority, completed an earlier drop that the majority's
        # own votes decided a moment later, and kept it in). The cuts tried: this one, then
        # those of the other votes against it (of voters such a vote may have dropped). And
        # only where every drop made so far stands in that fold too: one that needed the
        # member's events past the cut cannot be taken back here (its member's events since
        # were left out of this fold), and the fold again with the cuts would not settle
        # (soak seed 2449; docs/protocol.md §13).
        counts = sorted({v.last_seq for _, v in self.votes[target]} - {cut})
        for tried in (cut, *counts):
            if tried >= last:
                break  # (no event of it past there: the votes as they are, above)
            alone = self._without(target, tried)
            if alone.dropped.get(target) == tried and alone.dropped.keys() >= self.dropped.keys():
                return tried, alone.kept_ids.get(target, chain if tried == cut else {})
        return None

    def _without(self, seat: int, cut: int) -> Roster:
        """This roster's :attr:`ops` folded again from :attr:`origin` without ``seat``'s
        events past ``cut``, nor those of each member dropped already past its own cut (each
        drop decided by the votes alone: ``settle(plain=True)``).

        A member dropped already counts for nothing past its cut, even where its events came
        before its drop in the order (§9.2): left in, its vote past that cut would decide
        this drop, and this drop the member's (variants soak seed 5468: seat 3's vote on seat
        1, past seat 3's cut, completed seat 1's drop, which then kept seat 1's vote on seat
        3, past seat 1's cut, deciding seat 3's; the fold made again with both cuts dropped
        neither, and the folds alternated)."""
        return _without_kept(self, {**self.dropped, seat: cut})

    def _replay(
        self,
        ops: tuple[tuple[int, int, Drop | None], ...],
        cuts: dict[int, int],
        caps: dict[int, Cap],
        *,
        plain: bool,
        start: Roster | None = None,
    ) -> Roster:
        """``ops`` folded again from :attr:`origin` (or on from ``start``, the fold of the
        events before them), without each member's events past its ``cuts``, nor its votes past
        ``caps`` (:func:`capped`); each drop by the votes alone (``plain``) or as :meth:`settle`
        decides it."""
        roster = start or (self.origin.copy() if self.origin is not None else Roster(self.seats))
        roster.vote_caps, roster.memo = caps, (start.memo if start else _Memo())
        for author, seq, body in ops:
            limit = cuts.get(author)
            if limit is not None and seq > limit:
                continue
            if body is not None and caps and capped(caps, author, seq, body):
                roster.freeze(author, body, seq)
                continue
            if body is None:
                if author in roster.dropped:
                    continue  # (out already in this fold: its leave is past its cut)
                roster.leave(author, seq, 0)
            elif body.reason is DropReason.ABANDON:
                if body.seat in roster.dropped or roster.members() != {author, body.seat}:
                    continue  # (an abandon that does not count in this fold)
                roster.abandon(author, seq, 0, body)
                continue
            elif not roster.vote(author, seq, body) and body.seat not in roster.left:
                continue  # (a vote on a member that left may undo its leave: _undo_leaves)
            roster.settle(0, plain=plain)
        return roster

    def before_lift(self, seat: int) -> int | None:
        """The cut at which the membership events before a withdrawal of a vote that capped
        ``seat`` (:attr:`lifts`; the earliest such that drops it) drop it, with the cuts and
        caps those events decide (folded again until they stop changing, a few times at
        most); ``None`` if none of them drops it, or settles.

        A peer that held those events and not the withdrawals could make that drop final:
        the member's events past its cut are not waited for once it is out (§7.1). The
        withdrawals after it lift the caps in every fold that holds them, and the member's
        capped votes then decide otherwise, in the past of what that peer made final
        (docs/protocol.md §9.2, *a withdrawal after the drop*)."""
        return _first_lift_cut(self, seat)

    def _keep(self, target: int, cut: int, chain: dict[int, bytes]) -> None:
        """Keep the chain of ``target`` that its drop's votes quote, if it reaches the cut."""
        if cut in chain:
            self.kept_ids[target] = chain
            self.kept_forks[target] = (cut, chain[cut])

    def abandon(self, author: int, seq: int, lamport: int, body: Drop) -> int:
        """The last two members, one gone: ``author``'s abandon removes ``body.seat`` at its
        vote's count (:meth:`GameState._abandon <p2p_nertz.protocol.state.GameState>`); the
        cut.

        Raises:
            Refuse: other members than the author and the absent one are left.
        """
        if self.members() != {author, body.seat}:
            raise Refuse(
                _C.BAD_ABANDON,
                "an abandon needs exactly two members left: its author and the absent",
            )
        target = body.seat
        _add(self, (author, seq, body), lamport)
        self.drop_at[target] = lamport
        cut, chain = vote_cut((body,))
        self._keep(target, cut, chain)
        self.remove(target, cut, left=False)
        return cut

    def leave(self, seat: int, seq: int, lamport: int) -> None:
        """``seat`` left with its event ``seq``: that is its cut."""
        _add(self, (seat, seq, None), lamport)
        self.drop_at[seat] = lamport
        self.remove(seat, seq, left=True)

    def remove(self, seat: int, cut: int, *, left: bool) -> None:
        """``seat`` is out: nothing of it past ``cut`` counts."""
        self.dropped[seat] = cut
        self.drop_ops[seat] = len(self.ops)
        if left:
            self.left |= {seat}

    def rejoin(self, body: Drop, *, over: bool) -> None:
        """A member readmits a dropped one that asked to rejoin (its ``join`` at seq
        ``last_seq``): it plays again from the next round (DESIGN.md §6).

        The request itself does not count (nothing of a dropped member does, and nobody waits
        for its events): a member that holds it vouches for it, in an event that counts. A
        member that left, or was dropped on proof of cheating, cannot come back. ``over``:
        the game is over (no next round to rejoin).

        Raises:
            Refuse: the member cannot come back.
        """
        target = body.seat
        if target in self.rejoining or target not in self.dropped:
            return  # another member readmitted it first, or it is back already
        if target in self.left:
            raise Refuse(_C.BAD_REJOIN, f"seat {target} left the game: it cannot rejoin")
        if any(v.reason in _PROVEN for _, v in self.votes.get(target, ())):
            raise Refuse(_C.BAD_REJOIN, f"seat {target} was dropped for cheating: it cannot rejoin")
        if body.last_seq <= self.dropped[target]:
            raise Refuse(_C.BAD_REJOIN, f"seat {target}'s rejoin request must come after its cut")
        if over:
            # No next round to rejoin. Not a fault: a member sponsors the request once its
            # final fold has the member dropped, and the last result, timed just before, may
            # still be on its way to it (soak seed 185).
            return
        self.rejoining[target] = body.last_seq
        first = body.last_seq - len(body.ids) + 1
        self.rejoin_ids[target] = {first + i: prefix for i, prefix in enumerate(body.ids)}

    def readmit(self, lamport: int) -> list[int]:
        """At a round's start (Lamport time ``lamport``): the members asking to rejoin are
        members again; which, in seat order (the caps lifted: :func:`_past_caps`)."""
        back = []
        for seat, request in sorted(self.rejoining.items()):
            self.past_caps = _past_caps(self, seat, request)
            cut = self.dropped.pop(seat)
            self.drop_ops.pop(seat, None)
            self.gaps[seat] = (*self.gaps.get(seat, ()), (cut, request))
            self.readmitted_at[seat] = lamport
            self.votes.pop(seat, None)
            self.frozen.pop(seat, None)
            # Its votes cast while it was out never count (nor cap).
            for target, ballots in list(self.votes.items()):
                self.votes[target] = tuple(b for b in ballots if b[0] != seat)
            for target, ballots in list(self.frozen.items()):
                self.frozen[target] = tuple(b for b in ballots if b[0] != seat)
            back.append(seat)
        self.rejoining = {}
        if back:
            # (What :meth:`_without` folds again starts here: a readmission resets the votes.)
            self.lifts = {}
            self.ops, self.read, self.read_keys, self.ends = (), (), (), {}
            self.drop_ops = {}  # (its indices were of the ops folded into the origin)
            self.origin = None
            self.origin = self.copy()
        return back


def _voted_out_by(roster: Roster, seat: int, voters: set[int]) -> bool:
    """Whether every one of ``voters`` has a standing vote against ``seat``, for any reason
    (:meth:`Roster._decided`: such a member is not needed for a drop on proof).

    A member every voter voted out for silence is one gone (else a cheater and a member that
    died hold each other in the game for ever: soak seed 224); one voted out on proof has
    forked, and its word is no more needed than its vote: since session 39 a vote on proof
    counts only with the two signed versions that prove the fork (``state._refuse_vote``,
    ``evidence.vote_unproven``), so a lone voter's votes on proof against every other member
    drop them all only if each of them did fork (two proven cheaters at three players, the
    honest member's votes alone). Sessions 38 to 40 asked a strict majority of the votes on
    proof, when the fold could not check a proof and one liar's made-up proofs dropped every
    other member on its word (``--lie quote_proof``, three players beside a crash, seed 1:
    now refused, ``unproven_vote``); session 41 relaxed it (docs/protocol.md §9.2)."""
    standing = {voter for voter, _ in roster.votes.get(seat, ())}
    return bool(voters) and voters <= standing


def _undo_leaves(roster: Roster, lamport: int) -> list[tuple[int, int]]:
    """:meth:`Roster.settle`'s last step: each member that left whose drop the votes decide
    at a count below its leave, without its events from there on (:meth:`Roster._without`), is
    dropped there instead, at ``lamport``, and has not left (it may be readmitted, §9.8, and
    forfeits only the round, §8.9); the ``(seat, cut)`` of each, in seat order.

    A leave signed where nobody hears it (its author cut off, its clock behind the others')
    may come before, in the order, the votes that drop its author for silence counting none
    of its events from the leave on. Those events count nowhere once it is dropped there, even
    before its drop in the order (docs/protocol.md §9.2, §9.3), the leave among them: a peer
    that holds the member's feed only up to the cut makes the drop final without them, and
    the leave, read later, never counts there (finality waits for no member past its cut). A
    fold that read the leave first (the audit's first pass, a tentative fold) must decide
    alike: one rule, here, for every fold (the lie fuzzer's ``claim_after_leave`` after a
    readmission, two-liar seed 56 and one-liar seed 297: the peers cut the leaver at the
    votes' count, the audit at its leave; session 37). Where the votes do not drop the
    member without its leave (too few of them: a voter held the leave and voted nothing),
    the leave stands where it falls in the order."""
    undone = []
    for target in sorted(roster.left):
        leave = roster.dropped[target]
        counts = {
            body.last_seq
            for author, _, body in roster.ops
            if body is not None and author != target and body.seat == target
            and body.reason in _DROPPING and body.last_seq < leave
        }  # fmt: skip
        for tried in sorted(counts):
            alone = roster._without(target, tried)
            if alone.dropped.get(target) == tried and alone.dropped.keys() >= roster.dropped.keys():
                roster.left -= {target}
                roster.drop_at[target] = lamport
                roster._keep(target, tried, alone.kept_ids.get(target, {}))
                roster.remove(target, tried, left=False)
                undone.append((target, tried))
                break
    return undone


def _past_caps(roster: Roster, seat: int, request: int) -> dict[int, tuple[tuple[int, int], ...]]:
    """:attr:`Roster.past_caps` once ``seat`` is readmitted at its rejoin request ``request``.

    A readmission lifts the caps of the votes that dropped the member the way a withdrawal
    after the drop does (:meth:`Roster.before_lift`): not in the past of the drop. The
    member's votes signed past the lowest count of the votes standing against it, up to its
    cut, never counted while those stood, and the peers made final without them what they
    would have decided; they never count, readmitted or not (:func:`capped`). Its votes from
    its rejoin request on are not capped by the old votes (docs/protocol.md §9.2, *a
    readmission*). Shuffle soak seed 517, four players: seat 3's vote on seat 2, signed past
    the count (31) of the votes standing against it and before its cut (40), counted in
    every audit, whose folds held the caps of the end, after the readmission, and its passes
    cycled and never reached the peers' game."""
    past = roster.past_caps
    ballots = (*roster.votes.get(seat, ()), *roster.frozen.get(seat, ()))
    counts = [v.last_seq for q, v in ballots if q not in roster.dropped and v.reason in _CAPPED]
    if counts and min(counts) < roster.dropped[seat]:
        return {**past, seat: (*past.get(seat, ()), (min(counts), request))}
    return past


def _replayed(
    memo: _Memo,
    origin: Roster | None,
    seats: int,
    ops: tuple[tuple[int, int, Drop | None], ...],
    tried: tuple[tuple[int, int], ...] = (),
) -> tuple[tuple[int, int], ...]:
    """The drops ``ops`` (from ``origin``) decide with the cuts and caps they decide
    (:meth:`Roster.before_lift`), or none if those do not settle: folded with the cuts
    ``tried``, then again with the cuts and caps each fold decided, until they stop changing
    (a few times at most). Each fold goes on from the one ``memo`` keeps for the same cuts
    and caps (:func:`_fold_on`): the events before a withdrawal change seldom, and the
    tentative fold asks again at every event (seed 14017 took 56 s of CPU when each was
    folded from nothing, 6 s before the rule)."""
    cuts: dict[int, int] = dict(tried)
    caps: dict[int, Cap] = {}
    for _ in range(_REPLAYS):
        roster = _fold_on(memo, origin, seats, ops, cuts=cuts, caps=caps)
        new_cuts, new_caps = {**roster.dropped, **dict(tried)}, roster.standing_caps()
        if (new_cuts, new_caps) == (cuts, caps):
            return tuple(sorted(roster.dropped.items()))
        cuts, caps = new_cuts, new_caps
    return ()


def _fold_on(
    memo: _Memo,
    origin: Roster | None,
    seats: int,
    ops: tuple[tuple[int, int, Drop | None], ...],
    *,
    cuts: dict[int, int],
    caps: dict[int, Cap],
    plain: bool = False,
) -> Roster:
    """``ops`` folded from ``origin`` without each member's events past its ``cuts`` nor its
    votes past ``caps``, each drop by the votes alone (``plain``) or as :meth:`Roster.settle`
    decides it (:meth:`Roster._replay`); on from the latest fold ``memo`` keeps for the same
    cuts, caps and ``plain`` whose ops are the first of ``ops`` (:class:`_Spine`): the fold of
    one op after another is the fold of the ops. Asked for the events before each withdrawal
    in turn (:meth:`Roster.before_lift`, :func:`lifted_trials`), or after each vote of a
    replay (:meth:`Roster._without`), each fold goes on from one before it, and a member that
    flaps costs the others a fold of the events since its last flap, not since the game's
    start (docs/protocol.md §9.2, *a member that flaps*; ``scripts/bench_flap.py``)."""
    key = (plain, tuple(sorted(cuts.items())), tuple(sorted(caps.items())))
    spine = memo.folds.get(key)
    if spine is None or spine.origin is not origin:
        if len(memo.folds) >= _REPLAYS_KEPT:
            memo.folds.clear()
        spine = memo.folds[key] = _Spine(origin)
    same = _common(spine.ops, ops)
    done, last = spine.before(same)
    if last is None:
        start = Roster(seats)
        start.origin = origin
        roster = start._replay(ops, cuts, caps, plain=plain)
    elif done == len(ops):
        return last
    else:
        roster = last._replay(ops[done:], cuts, caps, plain=plain, start=last.copy())
    spine.keep(ops, roster, same)
    return roster


class _Spine:
    """The folds :func:`_fold_on` keeps for one key: of the first ``n`` of :attr:`ops` for
    each ``(n, fold)`` of :attr:`kept` (ascending ``n``, at most :data:`_SPINE_KEPT`), all
    from :attr:`origin`. A fold asked of other ops keeps those of the ops both begin with."""

    __slots__ = ("kept", "ops", "origin")

    def __init__(self, origin: Roster | None) -> None:
        self.origin = origin
        self.ops: tuple[tuple[int, int, Drop | None], ...] = ()
        self.kept: list[tuple[int, Roster]] = []

    def before(self, same: int) -> tuple[int, Roster | None]:
        """The latest fold kept of ops whose first ``same`` are those of :attr:`ops`
        (:func:`_common`): ``(n, fold)``, ``(0, None)`` if none."""
        for n, fold in reversed(self.kept):
            if n <= same:
                return n, fold
        return 0, None

    def keep(self, ops: tuple[tuple[int, int, Drop | None], ...], fold: Roster, same: int) -> None:
        """Keep ``fold``, of ``ops``, whose first ``same`` are those of :attr:`ops`: on this
        spine if they are the first of :attr:`ops`, else as its new end (the folds kept past
        where the two part are let go)."""
        n, kept = len(ops), self.kept
        if same < len(self.ops) and same < n:
            kept = [k for k in kept if k[0] <= same]
        if same < n:
            self.ops = ops
        if kept and kept[-1][0] >= n:  # (a fold of fewer ops than the last kept)
            kept = sorted([*(k for k in kept if k[0] != n), (n, fold)], key=lambda k: k[0])
        else:
            kept.append((n, fold))
        self.kept = kept if len(kept) <= _SPINE_KEPT else [*kept[:-1:2], kept[-1]]


def _common(a: tuple[object, ...], b: tuple[object, ...]) -> int:
    """How many first elements ``a`` and ``b`` have in common (a few comparisons of slices,
    each in C: the ops a fold is asked of mostly begin with those of the fold before)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # (a[:lo] == b[:lo], a[:hi] != b[:hi])
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def lifted_trials(roster: Roster, seat: int) -> list[tuple[int, int]]:
    """``(count, time)``, in the order of the withdrawals: for each withdrawal (at Lamport
    ``time``) of a vote that capped ``seat`` (:attr:`Roster.lifts`), the first count of a
    vote against ``seat`` at which every membership event read before it in the game's order,
    counted or not (:attr:`Roster.read`, :func:`_before`), drops ``seat`` with its events past
    that count left out, and with the cuts and caps those events then decide
    (``folds.lifted_cuts`` asks who announced ``seat``'s events past the count before
    ``time``).

    The roster's own events (:attr:`Roster.ops`, what :meth:`Roster.before_lift` folds) leave
    out what the fold's cuts and caps skip: where two members voted each other out, each past
    the other's count, the fold that drops one of them holds none of that member's later
    votes, and the other's drop, which a peer without the other's late events made final
    before the withdrawal, is in none of its folds (docs/protocol.md §13, *two drops each
    resting on the other's late vote*)."""
    lifts = roster.lifts.get(seat, ())
    if not lifts:
        return []
    last = _answers(roster.memo, lifts[-1])
    # (The events before each withdrawal are the first of those before the last: a late event
    # read since, before the last in the order, makes the trials again; one after, not.)
    read = roster.read[: _before(roster, lifts[-1])]
    if last.trials is None or last.read != read:
        found: dict[tuple[int, int], int | None] = {}
        for lift in lifts:
            events = read[: _before(roster, lift)]
            key = (lift[1], len(events))
            if key in found:
                continue  # (the same events read before it: the same trial)
            own = _answers(roster.memo, lift)
            if own.trial == _UNASKED or own.trial_read != events:
                own.trial = _found(roster, seat, events, trial=True)
                own.trial_read = events
            found[key] = own.trial
        last.trials = tuple(
            (count, lamport) for (lamport, _), count in sorted(found.items()) if count is not None
        )
        last.read = read
    return list(last.trials)


def _before(roster: Roster, lift: tuple[int, int, int, int, int]) -> int:
    """How many of :attr:`Roster.read` come before the withdrawal ``lift`` in the game's order
    (``(lamport, seat, seq)``: the withdrawal's own time, voter and seq)."""
    return bisect.bisect_left(roster.read_keys, (lift[1], lift[2], lift[4]))


def _without_kept(roster: Roster, cuts: dict[int, int]) -> Roster:
    """:meth:`Roster._without`: ``roster``'s ops folded again from its origin with ``cuts``
    (``settle(plain=True)``), on from a fold of the ops before (:func:`_fold_on`). Asked
    after each vote of a replay (``settle``), each fold again of every op made a replay's
    cost grow with the square of its ops (a vote flapper's, ``scripts/bench_flap.py``)."""
    return _fold_on(
        roster.memo, roster.origin, roster.seats, roster.ops, cuts=cuts, caps={}, plain=True
    )


def _first_lift_cut(roster: Roster, seat: int) -> int | None:
    """:meth:`Roster.before_lift`, its answers kept per lift (:attr:`_Memo.answers`)."""
    lifts = roster.lifts.get(seat, ())
    if not lifts:
        return None
    memo = roster.memo
    last = _answers(memo, lifts[-1])
    if last.first == _UNASKED:
        # (The withdrawals' places in ops only grow: the first lift is the first end.)
        last.first = None
        for lift in lifts:
            own = _answers(memo, lift)
            if own.before == _UNASKED:
                own.before = _found(roster, seat, roster.ops[: lift[3]], trial=False)
            if own.before is not None:
                last.first = own.before
                break
    return last.first


def drop_lifts(roster: Roster, seat: int) -> list[int]:
    """The times of the drops after ``seat``'s that lift a cap its drop rests on: a member
    ``q`` dropped later (``drop_at``) whose vote on a voter ``v`` against ``seat``, never
    withdrawn up to ``q``'s cut, counts less of ``v``'s feed than ``v``'s vote on ``seat``.

    A vote of a member dropped caps nothing (:meth:`Roster.standing_caps`), so a drop lifts
    its member's caps in the past as a withdrawal does (:attr:`Roster.lifts`): a vote it
    capped may then count before that drop and decide ``seat``'s, which rests on the later
    drop (docs/protocol.md §9.2, *A drop lifts its member's caps*; session 38, lie fuzzer
    readmit seed 186: seat 1's drop at Lamport 123 counted seat 2's vote, capped by the
    vote of seat 0 on seat 2, which stood until seat 0's drop on proof at 257; peers that
    held the events up to 256 only had made seat 0's drop at 118 final instead).
    """
    at = roster.drop_at.get(seat, 0)
    against = {
        author: seq
        for author, seq, body in roster.ops
        if body is not None and body.seat == seat and body.reason in _CAPPED and author != seat
    }
    out: list[int] = []
    for q, when in roster.drop_at.items():
        cut = roster.dropped.get(q)
        if q == seat or when <= at or cut is None:
            continue
        standing: dict[int, int] = {}
        for author, seq, body in roster.ops:
            if author != q or seq > cut or body is None or body.seat == q:
                continue
            if body.reason is DropReason.WITHDRAW:
                standing.pop(body.seat, None)
            elif body.reason in _CAPPED:
                standing.setdefault(body.seat, body.last_seq)
        if any(against.get(v, 0) > count for v, count in standing.items()):
            out.append(when)
    return out


def decided_before_lifts(roster: Roster, seat: int, cut: int, at: int) -> int | None:
    """The time up to which the membership events decide ``seat``'s drop at ``cut`` (made at
    ``at``), read against the withdrawals after it of votes that capped another member
    (:attr:`Roster.lifts`): ``at`` where the ops before the first of them drop ``seat``
    there, else the time of the last withdrawal before the first whose ops do; ``None``
    where none does (the drop rests on every one of them)."""
    later = sorted(
        (lift for t, made in roster.lifts.items() if t != seat for lift in made if lift[1] > at),
        key=lambda lift: lift[3],
    )
    prior = at
    for lift in later:
        drops = dict(_replayed(roster.memo, roster.origin, roster.seats, roster.ops[: lift[3]]))
        if drops.get(seat) == cut:
            return prior
        prior = lift[1]
    return None if later else at


def _found(
    roster: Roster, seat: int, events: tuple[tuple[int, int, Drop | None], ...], *, trial: bool
) -> int | None:
    """What the membership events before a withdrawal answer for ``seat``: the cut at which
    ``events`` (the ops before it) drop it (:meth:`Roster.before_lift`), or with ``trial``
    the first count that drops it where ``events`` are those read before it (:func:`_trial`).
    Kept by what they read (:attr:`_Memo.found`): a fold made again makes its withdrawals
    again, as new lifts whose answers it has not kept, of the same events before them."""
    memo = roster.memo
    key = (trial, seat, len(events))
    kept = memo.found.get(key)
    if kept is not None and kept[0] is roster.origin and kept[1] == events:
        return kept[2]
    if trial:
        answer = _trial(roster, seat, events)
    else:
        answer = dict(_replayed(memo, roster.origin, roster.seats, events)).get(seat)
    if len(memo.found) >= _ANSWERS_KEPT:
        memo.found.clear()
    memo.found[key] = (roster.origin, events, answer)
    return answer


def _trial(roster: Roster, seat: int, read: tuple[tuple[int, int, Drop | None], ...]) -> int | None:
    """:func:`lifted_trials` for one withdrawal, the membership events ``read`` before it:
    the first count that drops ``seat`` there, or ``None``."""
    last = max((seq for author, seq, _ in read if author == seat), default=0)
    counts = {
        body.last_seq
        for author, _, body in read
        if body is not None and body.seat == seat and author != seat
        and body.reason in _CAPPED and body.last_seq < last
    }  # fmt: skip
    for count in sorted(counts):
        tried = ((seat, count),)
        drops = _replayed(roster.memo, roster.origin, roster.seats, read, tried)
        if dict(drops).get(seat) == count:
            return count
    return None


class _Memo:
    """What the folds of one roster and its copies keep of the folds of membership events
    they made, to go on from or answer again (a peer's final fold shares one with every
    tentative fold and trial made from it; each fold from nothing, an audit's pass among
    them, has its own). Each entry names what it folded and serves only a fold of that, or
    of more after it, so none changes an answer; each is bounded (emptied once full, the
    folds then made again if asked). Held by the fold, not by the process: no fold reads
    another's (docs/protocol.md §9.2, *a member that flaps*).

    Attributes:
        folds: (plain, cuts, caps) -> the folds :func:`_fold_on` made with them (for
            :func:`_replayed` and :func:`_without_kept`).
        answers: a lift's id (an entry of :attr:`Roster.lifts`) -> what
            :meth:`Roster.before_lift` and :func:`lifted_trials` answered for it.
        found: (trial, seat, how many events) -> the events and what :func:`_found`
            answered for them.
    """

    __slots__ = ("answers", "folds", "found")

    def __init__(self) -> None:
        self.folds: dict[tuple[bool, tuple[tuple[int, int], ...], tuple[object, ...]], _Spine]
        self.folds = {}
        self.answers: dict[int, _Answers] = {}
        self.found: dict[tuple[bool, int, int], _Found] = {}


#: How many lifts' answers a :class:`_Memo` keeps at most. What a lift's answers read (the
#: membership events before it, the lifts of its member before it) is fixed once the lift is
#: made, and every copy of the roster holds the same lift object (a fold made again makes its
#: own): keyed by the object (held by the answers, so that its id is not reused), not its
#: value, so that two folds whose lifts are equal but whose events before them differ never
#: share an answer. Without them a member that votes a member out and withdraws, over and
#: over, made each input of every peer fold all its withdrawals again.
_ANSWERS_KEPT = 1 << 15
#: An answer of :func:`_found`: the origin and the events it read, and the answer.
_Found = tuple["Roster | None", tuple[tuple[int, int, "Drop | None"], ...], "int | None"]
_UNASKED = -1  # (an answer not worked out yet: a cut or a count is never negative)


class _Answers:
    """What :meth:`Roster.before_lift` and :func:`lifted_trials` answered for one lift
    (:attr:`_Memo.answers`): ``first``, the first cut over the lifts of its member up to it;
    ``before``, its own; ``trials``, the trials up to it, of the events ``read`` before it;
    ``trial``, its own, of the events ``trial_read``. The events read before a withdrawal grow
    when one is read late (:func:`_read`): the trials are made again then."""

    __slots__ = ("before", "first", "lift", "read", "trial", "trial_read", "trials")

    def __init__(self, lift: tuple[int, int, int, int, int]) -> None:
        self.lift = lift  # (held: its id is not reused while the answers are kept)
        self.first: int | None = _UNASKED
        self.before: int | None = _UNASKED
        self.trials: tuple[tuple[int, int], ...] | None = None
        self.trial: int | None = _UNASKED
        self.read: tuple[tuple[int, int, Drop | None], ...] = ()
        self.trial_read: tuple[tuple[int, int, Drop | None], ...] = ()


def _answers(memo: _Memo, lift: tuple[int, int, int, int, int]) -> _Answers:
    """The answers ``memo`` keeps for ``lift``, made empty if none are."""
    answers = memo.answers.get(id(lift))
    if answers is None or answers.lift is not lift:
        if len(memo.answers) >= _ANSWERS_KEPT:
            memo.answers.clear()
        answers = memo.answers[id(lift)] = _Answers(lift)
    return answers


def _add(roster: Roster, op: tuple[int, int, Drop | None], lamport: int) -> None:
    """A membership event counted (at ``lamport``): in :attr:`Roster.ops` and
    :attr:`Roster.read`, and its seq in :attr:`Roster.ends` (what :meth:`Roster._decided`
    asks, without a pass over ops)."""
    roster.ops = (*roster.ops, op)
    _read(roster, op, lamport)
    if op[1] > roster.ends.get(op[0], 0):
        roster.ends[op[0]] = op[1]


def _read(roster: Roster, op: tuple[int, int, Drop | None], lamport: int) -> None:
    """A membership event read (at ``lamport``), counted or not: in :attr:`Roster.read` at its
    place in the game's order, ``(lamport, seat, seq)``, the fold's. The fold reads the events
    that count in that order, but one that does not count may be read late: final by its time
    when it comes (``Folds.add``), it is read after events that follow it, a withdrawal among
    them, and the trial of the events before that withdrawal (:func:`lifted_trials`) must hold
    it, as a fold that read every event in order does (docs/protocol.md §13, *the events read
    before a withdrawal*). A replay's events (:meth:`Roster._replay`) are untimed (0), and its
    :attr:`Roster.read` is never asked.

    Nor one timed before the last readmission (:meth:`Roster.readmit`), read after it: what
    :attr:`Roster.read` holds starts there, as the votes before it are the ballots', and such
    an event, counted, would have been read before the reset. Kept, a vote in a readmitted
    member's gap (its events between the cut and the rejoin, which never count) stood in
    :func:`freezes` for good at the peers that read it late: their cover of the vote's target
    frozen at its count, the stable time without another member never reached that member's
    drop, and one member waited in ``commit`` for ever (``soak.py --late-withdrawals`` seed
    223, docs/protocol.md §13)."""
    if roster.readmitted_at and 0 < lamport < max(roster.readmitted_at.values()):
        return  # (an untimed event, 0, is a replay's or a caller's that reads in order)
    key = (lamport, op[0], op[1])
    keys = roster.read_keys
    if not keys or key >= keys[-1]:  # (the usual case: read in order)
        roster.read, roster.read_keys = (*roster.read, op), (*keys, key)
        return
    at = bisect.bisect_right(keys, key)
    read = roster.read
    roster.read = (*read[:at], op, *read[at:])
    roster.read_keys = (*keys[:at], key, *keys[at:])


def lasting_caps(roster: Roster) -> dict[int, int]:
    """The part of :meth:`Roster.standing_caps` that no withdrawal lifts: for each member
    with votes on proof standing against it (by members still in), and each member dropped
    with votes of any reason standing against it (:meth:`Roster.vote` takes no withdrawal
    against a member out), the lowest count they quote. A vote for silence is withdrawn
    when its member is heard, one *withheld* when it gives what it owed (§9.2), lifting its
    cap in the past too; a vote on proof stands, and
    the member's drop cuts it at or below that count, so its votes capped there never count
    (``Folds.capped_drops``: the drops that only the other caps keep undecided)."""
    caps: dict[int, int] = {}
    for target, standing in _standing(roster):
        out = target in roster.dropped  # (no withdrawal lifts a vote against it: Roster.vote)
        counts = [v.last_seq for v in standing if out or v.reason is DropReason.EQUIVOCATION]
        if counts:
            caps[target] = min(counts)
    return caps


def _standing_ballots(roster: Roster) -> Iterator[tuple[int, tuple[tuple[int, Drop], ...]]]:
    """Each member with votes against it that cap (:meth:`Roster.standing_caps`), by members
    still in, not withdrawn: ``(target, ((voter, vote), ...))`` in seat order. A member dropped
    keeps them until it is readmitted (which keeps their range, :func:`_past_caps`): its votes
    past their lowest count were never final while they stood, and no withdrawal after the drop
    lifts them (docs/protocol.md §9.2, *a drop lifts no cap of the member*; shuffle soak seed
    41001). The one reading of which votes stand: the caps (:func:`_standing`) and what a
    person is told (:func:`standing_votes`) both take it."""
    dropped = roster.dropped
    for target in sorted(roster.votes.keys() | roster.frozen.keys()):
        ballots = (*roster.votes.get(target, ()), *roster.frozen.get(target, ()))
        standing = tuple(b for b in ballots if b[0] not in dropped and b[1].reason in _CAPPED)
        if standing:
            yield target, standing


def _standing(roster: Roster) -> Iterator[tuple[int, list[Drop]]]:
    """:func:`_standing_ballots` without the voters: what the caps read."""
    for target, ballots in _standing_ballots(roster):
        yield target, [v for _, v in ballots]


def _caps(roster: Roster) -> dict[int, Cap]:
    """:meth:`Roster.standing_caps`."""
    past_caps = _unrevived(roster, roster.past_caps) if roster.drop_ops else roster.past_caps
    caps: dict[int, Cap] = {q: (_NEVER, _NEVER, past, ()) for q, past in sorted(past_caps.items())}
    for target, ballots in _standing_ballots(roster):
        standing = [v for _, v in ballots]
        forks = [v.fork_seq - 1 for v in standing if v.reason is DropReason.EQUIVOCATION]
        low, past = min(v.last_seq for v in standing), past_caps.get(target, ())
        exempt = _exempt(roster, ballots, low)
        caps[target] = (low, min(forks, default=_NEVER), past, exempt)
    return caps


def _exempt(
    roster: Roster, ballots: tuple[tuple[int, Drop], ...], low: int
) -> tuple[tuple[int, int, int], ...]:
    """The exemption of :data:`Cap`: ``((voter, count, seq),)`` where one voter alone of the
    standing ``ballots`` quotes the lowest count ``low``, in its event ``seq`` of
    ``roster``'s membership events, ``count`` the lowest of the others' (none: no cap); else
    none. It exempts only a vote that counts that voter's vote (signed after holding it): two
    votes each signed past the other's count (cut off from each other) both count for nothing
    and both cap, in every round, as before (:meth:`Roster.standing_caps`)."""
    lowest = [(voter, v) for voter, v in ballots if v.last_seq == low]
    if len(lowest) != 1:
        return ()
    voter, vote = lowest[0]
    seq = next((q for a, q, body in roster.read if a == voter and body is vote), None)
    if seq is None:
        return ()
    others = [v.last_seq for q, v in ballots if q != voter]
    return ((voter, min(others, default=_NEVER), seq),)


def _unrevived(
    roster: Roster, past: dict[int, tuple[tuple[int, int], ...]]
) -> dict[int, tuple[tuple[int, int], ...]]:
    """``past`` (:attr:`Roster.past_caps`) with, for each member ``q`` that a member ``r``
    dropped since stood voting out at count ``c``, a range capping each vote of ``q`` past
    ``c`` (on a member other than ``r``) that ``q`` withdrew before ``r``'s drop.

    A vote of a member dropped caps nothing (:meth:`Roster.standing_caps`): its drop lifts
    its caps in the past, as a withdrawal does, and the votes they capped count from their
    time. Not one its own voter withdrew before that drop: it never counted anywhere while
    capped, and at the lift no voter stands behind it. Revived, it decided a drop in the
    past that its voter had taken back, and that drop could undo the one that lifted the cap
    (docs/protocol.md §9.2, *a vote never caps a vote against its voter*, session 39: seat
    1's vote for silence on seat 0, crashed, capped by the liar's vote on seat 1 and
    withdrawn when seat 0 came back, revived by the liar's drop, dropped seat 0 in the past,
    whose vote then no longer dropped the liar)."""
    out = dict(past)
    for r, at in sorted(roster.drop_ops.items()):
        if r not in roster.dropped:
            continue
        for q in sorted(roster.votes.keys() | roster.frozen.keys()):
            ballots = (*roster.votes.get(q, ()), *roster.frozen.get(q, ()))
            counts = [v.last_seq for voter, v in ballots if voter == r and v.reason in _CAPPED]
            if not counts or q == r:
                continue
            last = roster.dropped.get(q, _NEVER)  # (past its own cut nothing of it counts)
            withdrawn = {
                (body.seat, seq)
                for author, seq, body in roster.ops[:at]
                if author == q and body is not None and body.reason is DropReason.WITHDRAW
            }
            ranges = [
                (seq - 1, seq + 1)
                for author, seq, body in roster.read
                if author == q
                and body is not None
                and body.reason in _CAPPED
                and body.seat != r
                and counts[0] < seq <= last
                and any(x == body.seat and w > seq for x, w in withdrawn)
            ]
            if ranges:
                out[q] = tuple(sorted({*out.get(q, ()), *ranges}))
    return out


def standing_votes(roster: Roster) -> dict[int, tuple[tuple[int, Drop], ...]]:
    """Each member with votes against it standing (:func:`_standing_ballots`: not withdrawn,
    by members still in, counted or capped), with each vote's voter, in seat order: what
    ``protocol/unmet.py`` tells a person when they stand short of a majority."""
    return dict(_standing_ballots(roster))


def freezes(roster: Roster, seat: int) -> dict[int, int]:
    """Each member still in by ``roster`` with a vote against ``seat`` (for silence, withholding
    or proof) that it has not withdrawn since, in the membership events read, and the count
    that vote quotes: its announcements of ``seat``'s feed are frozen there (§9.2), and no
    receiver takes one past it (``finality.frozen_claims``). Votes cast before the last
    readmission are read from the ballots; those cast or withdrawn since, whether they counted
    or not (against a member dropped already too), from :attr:`Roster.read`."""
    ballots = (*roster.votes.get(seat, ()), *roster.frozen.get(seat, ()))
    last: dict[int, int | None] = {voter: v.last_seq for voter, v in ballots if v.reason in _CAPPED}
    for author, _, body in roster.read:
        if body is None or body.seat != seat or author == seat:
            continue
        last[author] = frozen_at(last.get(author), body)
    return {
        voter: count
        for voter, count in last.items()
        if count is not None and voter not in roster.dropped
    }


def frozen_at(count: int | None, body: Drop) -> int | None:
    """The count at which a voter's announcements of ``body.seat``'s feed are frozen after its
    drop event ``body``, ``count`` before it (``None``: not frozen): a vote for silence,
    withholding or proof freezes them at its count, a withdrawal lifts the freeze, any other
    drop event leaves it as it was (§9.2, *the freeze*; :func:`freezes`). A second vote while
    one stands leaves it too: the roster keeps one vote a voter, the first (:meth:`Roster.vote`),
    and a drop on proof cuts at its count, so a freeze the second one raised would let events
    past that cut be final (an honest member never votes twice; a liar did, soak
    ``--two-liars`` seed 14, docs/protocol.md §9.2, *a second vote*)."""
    if body.reason is DropReason.WITHDRAW:
        return None
    return body.last_seq if body.reason in _CAPPED and count is None else count


def frozen_below(roster: Roster, seat: int, cut: int) -> bool:
    """Whether a member still in by ``roster`` has a vote against ``seat`` counting no more
    than ``cut`` that it has not withdrawn since (:func:`freezes`): its announcements of
    ``seat``'s feed are frozen at or below the cut (§9.2; ``folds.cut_stands``)."""
    return any(count <= cut for count in freezes(roster, seat).values())


def voted_past_cut(roster: Roster, seat: int, frontier: tuple[int, ...], q: int, key: Key) -> bool:
    """Whether an event of ``seat`` (its order key ``key``, its signed ``frontier``) may rest
    on events of member ``q`` past the cut a drop made, though its frontier does not show it
    (:meth:`Roster.saw_cut` reads the frontier alone): ``q`` is cut (dropped, or its events
    read past a count not counted), ``seat`` announces ``q``'s feed up to the cut or past it,
    and its latest membership event on ``q`` before this one is a vote counting exactly what
    it announces. A voter announces no more of the member than its vote counts
    (``Membership.frontier``), and its tentative fold may keep the member in and show it the
    member's later cards (its vote capped, and the cap lifted only by a withdrawal that
    reaches it later, §9.2): a claim on them, once the lift dropped the member there, is a
    race lost to the cut, not a cheat (``--late-withdrawals`` seed 93, seat 2's withdrawals
    held: docs/protocol.md §13, *the voter's claim on a cut foundation*)."""
    cut = roster.dropped.get(q)
    if cut is None and q in roster.uncounted:
        cut = roster.uncounted[q] - 1
    if cut is None or q == seat or frontier[q] < cut:
        return False
    last = None
    for author, _, body in roster.read[: bisect.bisect_left(roster.read_keys, key)]:
        if author == seat and body is not None and body.seat == q:
            last = body
    return last is not None and last.reason in _CAPPED and last.last_seq == frontier[q]


def named_within_cuts(held: Sequence[int], dropped: Mapping[int, int], seat: int) -> list[int]:
    """What an event of ``seat`` holding ``held`` of each feed (by seat) can name in its
    frontier where ``dropped`` (seat -> cut) drops members: none of a dropped member's events
    past its cut, which count nowhere (docs/protocol.md §9.2). One rule read two ways: what
    we announce (``membership._announced``, our final fold's cuts), and how far a vote's
    frontier can ask its target's signed word to reach (``unjoined.unjoined``, the held
    fold's cuts: *a vote withheld that never ends*). ``seat``'s own feed is never capped."""
    named = list(held)
    for q, cut in dropped.items():
        if q != seat:
            named[q] = min(named[q], cut)
    return named


def voted_gone(roster: Roster, seat: int, upto: int | None = None) -> bool:
    """Whether a strict majority of the other members still in by ``roster`` stand voting
    ``seat`` out in the membership events read (:attr:`Roster.read`): each one's latest event
    on ``seat`` is a vote against it (for silence, withholding or proof), not a withdrawal.
    A member gone for good is voted out again, once the others' timers run out, and nobody
    hears it to withdraw: the wait on its own feed (``finality.lifted``) then ends. ``upto``:
    of the events timed up to there alone (the stable time reached: every member still in
    announced them, so none withdraws its vote without them; session 43)."""
    others = [q for q in range(roster.seats) if q != seat and q not in roster.dropped]
    last: dict[int, bool] = {}
    for (author, _, body), (lamport, _, _) in zip(roster.read, roster.read_keys, strict=True):
        if upto is not None and lamport > upto:
            break  # (read in the game's order)
        if body is not None and body.seat == seat and author != seat:
            last[author] = body.reason in _CAPPED
    return sum(last.get(q, False) for q in others) >= len(others) // 2 + 1


def gone_unheld(roster: Roster, seat: int, at: int, past: int, keep: Collection[int]) -> bool:
    """Whether, at some place of the game's order from Lamport ``at`` on, a strict majority of
    the other members still in by ``roster`` stand voting ``seat`` out in the membership
    events read (:func:`voted_gone` there), one of them not in ``keep`` counting below
    ``past``: a fold there may make ``seat``'s drop final without its own feed
    (``finality.lifted``), and that voter never announced ``seat``'s event ``past`` (a voter
    announces no more than its vote counts), so no event of ``seat`` from ``past`` on was
    final anywhere before, nor is while that vote stands (§7.1). The test of
    ``folds.decided_first`` (docs/protocol.md §9.2, *the drop decided first*, session 42).

    >>> from p2p_nertz.protocol.bodies import Drop, DropReason as R
    >>> r = Roster(3)
    >>> r.read = ((1, 9, Drop((9, 9, 9), 0, 4, R.SILENT)), (2, 9, Drop((4, 9, 9), 0, 4, R.SILENT)))
    >>> r.read_keys = ((20, 1, 9), (30, 2, 9))
    >>> gone_unheld(r, 0, 25, 5, ()), gone_unheld(r, 0, 25, 4, ()), gone_unheld(r, 0, 35, 5, ())
    (True, False, True)
    """
    return gone_unheld_at(roster, seat, at, past, keep) is not None


def gone_unheld_at(
    roster: Roster, seat: int, at: int, past: int, keep: Collection[int]
) -> int | None:
    """:func:`gone_unheld`'s place: the Lamport time of the latest of the votes standing at
    the first such place (a drop the rule keeps is decided no earlier,
    ``finality._given_up``: the stable time reaches it only once every member still in
    announced those votes, session 43), or ``None``."""
    others = [q for q in range(roster.seats) if q != seat and q not in roster.dropped]
    need = len(others) // 2 + 1
    last: dict[int, tuple[int, Drop]] = {}
    for (author, _, body), (lamport, _, _) in zip(roster.read, roster.read_keys, strict=True):
        if body is None or body.seat != seat or author == seat:
            continue
        if lamport >= at:
            place = _unheld_gone(last, others, need, past, keep)
            if place is not None:
                return place  # (standing just before this event, from ``at`` on)
        last[author] = (lamport, body)
    return _unheld_gone(last, others, need, past, keep)


def _unheld_gone(
    last: dict[int, tuple[int, Drop]],
    others: list[int],
    need: int,
    past: int,
    keep: Collection[int],
) -> int | None:
    """:func:`gone_unheld_at` at one place of the order (``last``: each member's latest
    membership event on the member so far, with its time): the latest time of the votes
    standing, or ``None``."""
    standing = [q for q in others if q in last and last[q][1].reason in _CAPPED]
    if len(standing) < need or all(last[q][1].last_seq >= past for q in standing if q not in keep):
        return None
    return max(last[q][0] for q in standing)


def capped(caps: dict[int, Cap], seat: int, seq: int, body: Drop) -> bool:
    """Whether ``seat``'s ``drop`` event ``seq`` never counts under ``caps`` (the one home of
    the rule; :attr:`GameState.vote_caps <p2p_nertz.protocol.state.GameState.vote_caps>`).

    A vote for silence, withholding or proof signed past what a standing vote against its
    author counts: that voter never announces it, so no peer can have made it final
    (:meth:`Roster.standing_caps`); or in one of the ranges a readmission of its author
    lifted such caps over (:meth:`Roster.readmit`). An abandon signed on a forked chain
    (:func:`with_forks`).
    """
    cap = caps.get(seat)
    if cap is None:
        return False
    if body.reason is DropReason.ABANDON:
        return seq > cap[1]
    if body.reason not in _CAPPED:
        return False
    low = cap[0]
    for voter, count, signed in cap[3]:
        if voter == body.seat and body.last_seq >= signed:  # (an answer to it: standing_caps)
            low = max(low, count)
    return seq > low or any(lo < seq < hi for lo, hi in cap[2])


def with_forks(
    caps: dict[int, Cap], forks: dict[int, int], *, own: int | None = None
) -> dict[int, Cap]:
    """``caps`` (:meth:`Roster.standing_caps`) with the members known to have forked: two
    signed versions of seat ``q``'s event ``forks[q]`` are held. No abandon of its from there
    on counts: a member that forked does not get to end the game alone. Otherwise it could
    abandon the member that proved the fork, on its forked chain, in the order before that
    member's vote, and end the game in the past of what the honest members decided (soak seed
    685). Its other events, votes included, count as the drop's kept chain says (§9.2).
    ``own``: the caller's seat, never capped (a peer that finds its own feed forked only
    reports it, §9.4)."""
    out = dict(caps)
    for seat, first in forks.items():
        if seat == own or first < 1:
            continue
        votes, events, past, exempt = out.get(seat, (_NEVER, _NEVER, (), ()))
        out[seat] = (votes, min(events, first - 1), past, exempt)
    return out


def contradicts(body: Drop) -> bool:
    """Whether a vote against a member contradicts itself: at the seq of the member's feed
    that its own frontier names (what its voter announces holding, in the same signed event),
    it quotes another id than the frontier does; or, a vote whose count may set the cut (for
    silence, withholding, a flap fault: the highest count cuts), it counts past that seq (the
    one home of the rule; the fold refuses such a vote, ``vote_contradicts``, and it counts
    for nothing, docs/protocol.md §9.2, *a vote's ids are its voter's word*).

    An honest voter reads both from the same copies as it signs, so they never differ: its
    frontier's seq is its count, or, on proof, below it at the cut its final fold made of a
    member dropped before the proof came (it announces nothing past a cut), or above it (the
    same). A voter that counts events it does not hold, quoting ids it made up, says so here:
    its frontier names the event it holds at that seq, and the ids it quotes there do not
    (``scripts/soak.py --liars --two-liars`` seed 15: seat 3 counted 29 of seat 1's events,
    its frontier 28; every quoted id was wrong); or, holding none of the member's feed or
    quoting its own ids up to what it holds, its frontier stops below its count (session 37:
    ``--two-liars --join`` seeds 379 and 532, a ``vote_ahead`` liar counting 2 of a member's
    feed, its frontier naming 0). Such a count, the highest, would cut the member where no
    peer can fetch its events up to the cut: the drop never final, the table waiting for
    good, at any table size. A vote on proof counting past its frontier is not refused: the
    lowest count cuts a member proven to cheat (§9.2), and an honest one may (above).

    >>> ids = (b"a" * 8, b"b" * 8, b"c" * 8)  # (seat 1's events 1 to 3, as quoted)
    >>> def vote(held: int, named: bytes, reason: DropReason = DropReason.SILENT) -> Drop:
    ...     return Drop((5, held), 1, 3, reason, 0, ids, (b"", named))  # (seat 0's, holding held)
    >>> contradicts(vote(3, b"c" * 8)), contradicts(vote(4, b"d" * 8))
    (False, False)
    >>> contradicts(vote(3, b"z" * 8)), contradicts(vote(2, b"b" * 8)), contradicts(vote(0, b""))
    (True, True, True)
    >>> contradicts(vote(2, b"b" * 8, DropReason.EQUIVOCATION))
    False
    """
    seat = body.seat
    if body.reason not in _CAPPED or seat >= len(body.frontier_ids):
        return False
    named = body.frontier[seat]
    if body.last_seq > named and body.reason is not DropReason.EQUIVOCATION:
        return True
    quoted = body.id_at(named)
    return bool(quoted) and quoted != body.frontier_ids[seat]


class CountedIds(Blank):
    """The id prefix of each event of each member that a fold counted, in the order it counted
    them (the member's own signed word on its feed, for :func:`unsigned_id`).

    A fold counts a member's events in seq order, so each seat's record only grows; copies
    share it (a fold's :meth:`~p2p_nertz.protocol.state.GameState.copy` is taken for every
    tentative fold) and each reads its own length of it, copying it only when it adds to
    a record another copy has added to since (copy on write).

    Args:
        seats: how many seats the game has.

    >>> ids = CountedIds(2)
    >>> ids.add(1, 1, b"a" * 8), ids.add(1, 2, b"b" * 8), ids.add(1, 2, b"y" * 8)
    (True, True, False)
    >>> other = ids.copy(); _ = other.add(1, 3, b"c" * 8), ids.add(1, 3, b"z" * 8)
    >>> ids.at(1, 3), other.at(1, 3), ids.at(1, 4), ids.at(0, 1)
    (b'zzzzzzzz', b'cccccccc', b'', b'')
    """

    __slots__ = ("forked", "ids", "seqs", "sizes")

    def __init__(self, seats: int) -> None:
        self.seqs: list[list[int]] = [[] for _ in range(seats)]
        self.ids: list[list[bytes]] = [[] for _ in range(seats)]
        self.sizes = [0] * seats
        #: seat -> the first seq of it proven forked, past which this copy adds nothing
        #: (:meth:`copy`'s ``forked``)
        self.forked: dict[int, int] = {}

    def copy(self, forked: dict[int, int] | None = None) -> CountedIds:
        """An independent copy. ``forked`` (seat -> the first seq proven in two versions):
        the copy adds none of those members' events from there on (a tentative fold, whose
        events are not final: it may hold the other version than a voter, §9.2)."""
        new = CountedIds.__new__(CountedIds)
        new.seqs, new.ids, new.sizes = list(self.seqs), list(self.ids), list(self.sizes)
        new.forked = dict(forked) if forked is not None else self.forked
        return new

    def __reduce__(self) -> tuple[object, tuple[tuple[tuple[tuple[int, bytes], ...], ...]]]:
        # Pickled as its value, the ids counted: not what other copies added to the record
        # it shares, nor ``forked``, which only says what a tentative fold adds, not what it
        # holds (tests/test_folds_shared.py pickles folds to compare them).
        return (_counted, (tuple(self.items(s) for s in range(len(self.sizes))),))

    def items(self, seat: int) -> tuple[tuple[int, bytes], ...]:
        """``(seq, id prefix)`` of each of ``seat``'s events counted, in order."""
        size = self.sizes[seat]
        return tuple(zip(self.seqs[seat][:size], self.ids[seat][:size], strict=True))

    def add(self, seat: int, seq: int, prefix: bytes) -> bool:
        """``seat``'s event ``seq``, with the id ``prefix``, is counted; whether it was new."""
        if seat >= len(self.sizes) or seq >= self.forked.get(seat, seq + 1):
            return False
        size, seqs = self.sizes[seat], self.seqs[seat]
        if size and seqs[size - 1] >= seq:
            return False  # (a seq counted already: the first stays, and the record in order)
        if len(seqs) != size:  # (another copy added to the shared record: copy it first)
            self.seqs[seat] = seqs = seqs[:size]
            self.ids[seat] = self.ids[seat][:size]
        seqs.append(seq)
        self.ids[seat].append(prefix[:ID_PREFIX])
        self.sizes[seat] = size + 1
        return True

    def at(self, seat: int, seq: int) -> bytes:
        """The id prefix of ``seat``'s event ``seq`` counted (empty if none is)."""
        if seat >= len(self.sizes):
            return b""
        size = self.sizes[seat]
        i = bisect.bisect_left(self.seqs[seat], seq, 0, size)
        return self.ids[seat][i] if i < size and self.seqs[seat][i] == seq else b""


def _counted(items: tuple[tuple[tuple[int, bytes], ...], ...]) -> CountedIds:
    """A :class:`CountedIds` holding ``items`` (per seat, as :meth:`CountedIds.items`)."""
    out = CountedIds(len(items))
    for seat, pairs in enumerate(items):
        for seq, prefix in pairs:
            out.add(seat, seq, prefix)
    return out


def unsigned_id(body: Drop, counted: CountedIds) -> int:
    """The first seq at which a vote against a member quotes another id than the member's
    event the fold counted there, ``0`` if none (the one home of the rule; the fold refuses
    such a vote, ``vote_unsigned``, and it counts for nothing, docs/protocol.md §9.2,
    *a vote's ids are its voter's word*).

    An id the vote quotes is its voter's word; the member's event counted at that seq is the
    member's own signed word, and in the final fold it is final: every member still in
    announced holding it, ids and all (§7.1), so an honest voter quotes that very id there
    (it never swaps a copy it holds). A vote quoting another one counts a chain of the member
    that is no chain of its signed events: ids made up for events it does not hold (the
    fuzzer's ``vote_ahead``, counting past its frontier, and ``vote_ids``). A tentative fold
    checks against the final fold's ids and its own, but none of a member's events from a
    fork proven there (:meth:`CountedIds.copy`): it may hold the other version than a voter.

    >>> ids = CountedIds(2)
    >>> for seq in (1, 2): _ = ids.add(1, seq, bytes([48 + seq]) * 8)
    >>> def vote(*quoted: bytes) -> Drop:  # (seat 0's vote on seat 1, counting 3)
    ...     return Drop((3, 0), 1, 3, DropReason.SILENT, 0, tuple(q * 8 for q in quoted))
    >>> unsigned_id(vote(b"1", b"2", b"3"), ids), unsigned_id(vote(b"1", b"x", b"3"), ids)
    (0, 2)
    """
    if body.reason not in _CAPPED or not body.ids:
        return 0
    seat = body.seat
    first = body.last_seq - len(body.ids) + 1
    for seq, prefix in enumerate(body.ids[: max(0, _weighed(body) - first + 1)], first):
        held = counted.at(seat, seq)
        if held and held != prefix:
            return seq
    return 0


def _weighed(body: Drop) -> int:
    """The last seq at which the ids a vote quotes are weighed against the member's events
    (:func:`unsigned_id`, :func:`withdraw_unsigned`). A vote on proof of a fork at
    ``fork_seq`` says the member signed two versions there: from there on it quotes the one
    it holds, which may be the other than the one counted, neither final anywhere (the audit
    names such a vote not backed by proof)."""
    return body.fork_seq - 1 if body.reason is DropReason.EQUIVOCATION else body.last_seq


def withdraw_unsigned(
    roster: Roster, seat: int, seq: int, prefix: bytes, lamport: int
) -> list[tuple[int, int]]:
    """``seat``'s event ``seq``, with the id ``prefix``, is counted (at ``lamport``): withdraw
    each vote against ``seat`` standing (counted or capped, of a member still in) that quotes
    another id at ``seq``, as if its voter had withdrawn it there; ``(voter, seq of the
    vote)`` of each, in seat order (the one home of the rule: docs/protocol.md §9.2, *a vote
    folded before the events it quotes*, session 37).

    :func:`unsigned_id` weighs a vote against the member's events counted before it; this
    weighs it against those counted after it, at the place of each in the order. A vote
    folded before the member's events it quotes counts events its voter does not hold: an
    honest voter quotes only copies it holds, and holding an event raises its clock past the
    event's, so every event its vote quotes comes before the vote in the order and was
    weighed by :func:`unsigned_id` already. What such a vote quotes there is made up; left
    standing, it reads against the honest votes quoting the member's events as chains that
    part (:func:`vote_cut`), and cuts the member below events every honest peer made final.
    Withdrawn at the member's event (an op of :attr:`Roster.ops`, so that every replay of
    the membership events takes it, as it takes the voter's own withdrawal; the voter could
    have withdrawn there itself), it is the same in every fold that counts that event.

    >>> roster = Roster(3)
    >>> ids = (b"1" * 8, b"2" * 8, b"x" * 8, b"y" * 8)  # (seat 2 holds 2 of seat 1's events)
    >>> made_up = Drop((0, 2, 0), 1, 4, DropReason.EQUIVOCATION, 5, ids)  # (on proof, §9.2)
    >>> roster.vote(2, 5, made_up, 10)
    True
    >>> withdraw_unsigned(roster, 1, 3, b"3" * 8, 11), roster.votes[1]
    ([(2, 5)], ())
    """
    ballots = (*roster.votes.get(seat, ()), *roster.frozen.get(seat, ()))
    wrong = sorted(
        {
            voter: body
            for voter, body in ballots
            if voter not in roster.dropped
            and body.reason in _CAPPED
            and seq <= _weighed(body)
            and body.id_at(seq) not in (b"", prefix[:ID_PREFIX])
        }.items()
    )
    out = []
    for voter, body in wrong:
        at = next((s for q, s, b in reversed(roster.read) if q == voter and b is body), 0)
        # (Read after every membership event of the voter read so far, as its own withdrawal
        # there would be: a second vote it signed while this one stood, never counted, froze
        # nothing more, and the withdrawal lifts the freeze after it too, freezes; keyed
        # before that vote, the freeze of the second stood for good: --lie quote_ahead seed 92.)
        last = max((s for q, s, _ in roster.read if q == voter), default=at)
        roster.vote(voter, last, Drop((), seat, 0, DropReason.WITHDRAW), lamport)
        out.append((voter, at))
    return out


def vote_cut(votes: tuple[Drop, ...]) -> tuple[int, dict[int, bytes]]:
    """The last counted seq of a member voted out, and the chain that counts (seq -> id).

    Every event of the member that is final anywhere is at or below every voter's
    ``last_seq``, and every voter holds the same chain up to it: finality needs every member
    to have announced holding it, with ids (docs/protocol.md §7.1), and a voter never counts
    less than it announced or made final. So any voter's count is a safe cut.

    For a member that only fell silent, the cut is the highest count (DESIGN.md §6: nothing
    anyone holds is lost). For a member proven to cheat (a vote on proof of equivocation, or two
    votes whose chains part, :func:`_parting`), the votes of every member left are counted,
    and the cut is the lowest count, lowered below the first seq where two chains part: up to
    there every voter holds the same chain, so nobody has to take an event it never held (a
    cheater can time one below what a peer already made final). Ids that differ where the
    chains do not part are one voter's word against another's, not a fork: they lower
    nothing, and the chain kept leaves those seqs out (§9.2, *a vote's ids are its voter's
    word*).
    """
    split, disputed = _parting(votes)
    proven = split is not None or any(v.reason is DropReason.EQUIVOCATION for v in votes)
    counts = [v.last_seq for v in votes]
    cut = min(counts) if proven else max(counts)
    if split is not None:
        cut = min(cut, split - 1)
    if not proven:
        chosen = next(v for v in votes if v.last_seq == cut)
        first = cut - len(chosen.ids) + 1
        chain = {first + i: prefix for i, prefix in enumerate(chosen.ids)}
    else:
        chain = {}
        for v in votes:
            first = v.last_seq - len(v.ids) + 1
            for seq, prefix in enumerate(v.ids, first):
                if seq <= cut:
                    chain.setdefault(seq, prefix)
    for seq in disputed:
        chain.pop(seq, None)
    return cut, chain


def _parting(votes: tuple[Drop, ...]) -> tuple[int | None, set[int]]:
    """Where the chains two of ``votes`` quote part (the lowest such seq, or ``None``), and
    the seqs where two quote different ids though their chains do not part there.

    An id names its whole chain (each event hashes the one before), so two chains that part
    at seq ``f`` differ at every seq from ``f`` on: two votes quoting different ids at the
    highest seq both quote count different chains, which part at the first seq of the run of
    differences that ends there. Ids that differ below a seq where the two agree again are
    no fork: one of the two votes quotes, there, an id of no chain its voter holds.

    >>> def vote(*ids: bytes) -> Drop:  # (a vote on seat 1 counting 3, quoting ``ids``)
    ...     return Drop((), 1, 3, DropReason.SILENT, 0, tuple(i * 8 for i in ids))
    >>> a, b, c = vote(b"1", b"2", b"3"), vote(b"1", b"x", b"3"), vote(b"1", b"y", b"z")
    >>> _parting((a, b)), _parting((a, c)), _parting((a, b, c))
    ((None, {2}), (2, set()), (2, {2}))
    """
    split: int | None = None
    disputed: set[int] = set()
    for i, a in enumerate(votes):
        a_first = a.last_seq - len(a.ids) + 1
        for b in votes[i + 1 :]:
            b_first = b.last_seq - len(b.ids) + 1
            lo, hi = max(a_first, b_first), min(a.last_seq, b.last_seq)
            if lo > hi:
                continue
            ours = a.ids[lo - a_first : hi - a_first + 1]
            theirs = b.ids[lo - b_first : hi - b_first + 1]
            if ours == theirs:
                continue
            pairs = zip(ours, theirs, strict=True)
            differ = [seq for seq, (x, y) in enumerate(pairs, lo) if x != y]
            if ours[-1] == theirs[-1]:
                disputed.update(differ)
                continue
            start = hi  # (the first seq of the run of differences that ends at hi)
            while start > lo and ours[start - 1 - lo] != theirs[start - 1 - lo]:
                start -= 1
            disputed.update(seq for seq in differ if seq < start)
            split = start if split is None else min(split, start)
    return split, disputed


#: The votes against a member that freeze what their voter announces of its feed (§9.2),
#: and so, standing, cap the member's own votes of these kinds (Roster.standing_caps).
#: Withdrawals, abandons and readmissions are not votes against anyone's feed.
_CAPPED = frozenset(
    {DropReason.SILENT, DropReason.WITHHELD, DropReason.EQUIVOCATION, DropReason.FLAPPING}
)
#: The votes on a fault the member's own signed messages prove: a member dropped on them
#: does not come back (§9.4, §9.8).
_PROVEN = frozenset({DropReason.EQUIVOCATION, DropReason.FLAPPING})
#: What :attr:`Roster.read` keeps of the membership events that do not count.
_AGAINST = _CAPPED | {DropReason.WITHDRAW, DropReason.ABANDON}
#: The membership events that remove their member at a count (:func:`_undo_leaves`).
_DROPPING = _CAPPED | {DropReason.ABANDON}
_NEVER = 1 << 63  # (no cap)
_REPLAYS_KEPT = 64  # (how many spines of different cuts and caps a roster's copies keep)
_SPINE_KEPT = 64  # (how many folds a spine keeps: past it, every other one is let go)
_REPLAYS = 6  # (how many times at most Roster.before_lift folds its events again)
