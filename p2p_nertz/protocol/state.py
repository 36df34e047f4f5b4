"""The game as a deterministic fold over events in their total order.

Theory of operation
-------------------
Every peer holds some set of signed events. :class:`GameState` folds them, one at a time, in
the total order ``(lamport, seat, seq)`` (DESIGN.md §3): the same events in the same order give
the same state on every machine, whatever order the bytes arrived in. The peer keeps two folds:
the *final* one over the events it knows to be stable (never rolled back), and a *tentative* one,
recomputed from the final state whenever an event arrives out of order (GGPO's rollback).

The fold drives the whole game (DESIGN.md §5):

``joining`` every member's first event is a ``join``;
``commit`` each seat of the round commits ``H(secret)`` and ``H(nonce)``;
``nonce`` once all commits are in, each reveals its nonce; ``R = H(nonces)``;
``play`` each seat publishes its dealt face-up cards (``ready``) and plays: moves, claims,
    stuck, Nerts. Tableaux of other seats are followed with their hidden cards as
    :data:`~p2p_nertz.rules.cards.HIDDEN`, filled in as moves reveal them;
``reveal`` the round is over (Nerts at ``T*``, or blocked); each reveals its secret, and
    every seat's moves are replayed against the deck the secret gives: every revealed card
    must be the card the deck says;
``result`` each seat publishes the lake digest and the scores, which must be the fold's own;
``over`` the game has a result.

An event that is well signed and well formed but wrong *here* (an illegal move, a card its
owner does not have where it says, a reveal that does not match its commit) changes nothing and
is recorded as a :class:`Violation`, the same on every peer. A seat whose deal cannot be
verified (a stacked or withheld deck) forfeits the round: it scores as if its whole Nerts pile
were left and it had no card in the lake.

The parts of the fold, each owning its state (:meth:`GameState.copy` copies each):

- :class:`GameState` (here): the phase machine from round to round, the game's record, and
  how an abandoned game ends (§9.3);
- :class:`~p2p_nertz.protocol.round_events.RoundEvents`: a round's events but play (the
  commits, nonces, deals shown and secrets of the fair deal, the shuffle's events, the
  results), checked against the phase and handed to the round; it holds the local seat and its
  secrets, and is shared by every copy;
- :class:`~p2p_nertz.protocol.rounds.RoundState` (``GameState.round``): the round being
  played: its fair deal, its play, its replay against the decks and its score;
- :class:`~p2p_nertz.protocol.roster.Roster` (``GameState.roster``): who is in the game:
  votes, drops and their cuts, leaves, rejoins (its state reads as attributes of the fold too:
  ``dropped``, ``votes``, ...);
- :mod:`~p2p_nertz.protocol.fold_values`: the values they share (events in; notices,
  refusals out).

Every name of those modules that other code uses is importable from here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from p2p_nertz.deck.keys import round_context
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol import flaps, second_stall
from p2p_nertz.protocol.abandonment import Abandonment, NoPartner, Refusal
from p2p_nertz.protocol.bodies import (
    Drop,
    DropReason,
    Join,
    Leave,
)
from p2p_nertz.protocol.envelope import KIND_DROP, KIND_JOIN, Kind
from p2p_nertz.protocol.evidence import vote_unproven
from p2p_nertz.protocol.fold_values import (
    PHASE_OVER,
    PHASE_PLAY,
    ClaimDecided,
    Event,
    GameEnded,
    MemberDropped,
    MemberRejoined,
    Notice,
    PassedFor,
    PassesStale,
    Phase,
    PhaseChanged,
    Reason,
    RefusalCode,
    Refuse,
    Refused,
    Rotated,
    RoundEnded,
    RoundScored,
    Violation,
)
from p2p_nertz.protocol.roster import (
    Cap,
    CountedIds,
    Roster,
    capped,
    contradicts,
    decided_before_lifts,
    drop_lifts,
    freezes,
    frozen_at,
    frozen_below,
    gone_unheld,
    gone_unheld_at,
    lasting_caps,
    lifted_trials,
    named_within_cuts,
    standing_votes,
    unsigned_id,
    vote_cut,
    voted_gone,
    voted_past_cut,
    with_forks,
    withdraw_unsigned,
)
from p2p_nertz.protocol.round_events import RoundEvents
from p2p_nertz.protocol.rounds import (
    DeckProblem,
    RoundState,
    deck_seed,
    local_nonce,
    local_secret,
    nonce_hash,
    replay_round,
    replay_seat,
    round_randomness,
    seat_deck,
    secret_hash,
)
from p2p_nertz.protocol.shuffle import DeckRound
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.rules import Game, RoundScore, Table
from p2p_nertz.rules.blank import Blank

__all__ = [
    "ClaimDecided",
    "DeckProblem",
    "Event",
    "GameEnded",
    "GameState",
    "MemberDropped",
    "MemberRejoined",
    "Notice",
    "PassedFor",
    "PassesStale",
    "Phase",
    "PhaseChanged",
    "Reason",
    "RefusalCode",
    "Refused",
    "Roster",
    "Rotated",
    "RoundEnded",
    "RoundScored",
    "RoundState",
    "Violation",
    "abandon_partner",
    "leave_pending",
    "leave_unannounced",
    "capped",
    "decided_before_lifts",
    "drop_lifts",
    "deck_seed",
    "freezes",
    "frozen_at",
    "frozen_below",
    "gone_unheld",
    "gone_unheld_at",
    "lasting_caps",
    "lifted_trials",
    "named_within_cuts",
    "local_nonce",
    "local_secret",
    "nonce_hash",
    "replay_round",
    "replay_seat",
    "round_randomness",
    "seat_deck",
    "secret_hash",
    "standing_votes",
    "vote_cut",
    "voted_gone",
    "voted_past_cut",
    "voted_chain",
    "with_forks",
]

_C = RefusalCode  # (short: every refusal in this module names one)


class GameState(Blank):
    """The fold (module docstring) of ``spec``'s game. Mutable for speed; :meth:`copy` is cheap
    and independent. ``seat``: the local peer's seat, if it plays; ``secrets``: for it, a
    function giving its secret for a round (its own deck is then followed with every card
    known); ``None`` for a spectator or the audit."""

    def __init__(
        self,
        spec: GameSpec,
        *,
        seat: int | None = None,
        secrets: Callable[[int], bytes] | None = None,
    ) -> None:
        self.spec = spec
        self.rules = spec.rules
        #: the round's events but play (commit, reveal, ready, shuffle, result) are its
        self._round_events = RoundEvents(spec.rules, seat, secrets)
        n = spec.seats
        #: who is in the game (votes, drops, cuts, rejoins): see the properties below
        self.roster = Roster(n)
        #: the id of every event counted, per member: what a vote's ids are checked against
        self.counted_ids = CountedIds(n)
        self.joined: frozenset[int] = frozenset()
        self.ended_at: int | None = None  # the Lamport time of the event that ended the game
        self._lamport = 0  # the Lamport time of the event being folded
        self._event = (0, 0)  # its (seat, seq)
        self.phase = Phase.JOINING
        self.round = RoundState(0, frozenset(range(n)))
        self.game = Game(spec.rules, n)
        self.violations: tuple[Violation, ...] = ()
        self.scores: tuple[RoundScore, ...] = ()
        #: Every finished round: (number, lake digest, scores), in order.
        self.history: tuple[tuple[int, bytes, tuple[int, ...]], ...] = ()
        #: The rounds before the current one, kept for replays and audits.
        self.past_rounds: tuple[RoundState, ...] = ()
        #: what an abandon needs to end the game (§9.3): every abandon known, what it saw
        self.abandonment = Abandonment()
        self.flaps = flaps.Flaps()  # the withdrawals counted, the flap faults (flaps.py)
        self.stalled: frozenset[int] = frozenset()  # readmitted after a stall (second_stall.py)
        #: the member whose leave left one member in and so ended the game (§9.3), if one did
        self.left_alone: int | None = None
        #: in an extra round, the seats still able to play it out, as last checked (§8.9)
        self.able: frozenset[int] | None = None
        self.unopposed = False  #: whether the game ended so (:func:`_unopposed`)

    def copy(self) -> GameState:
        """An independent copy (the peer's tentative fold starts from its final one)."""
        new = GameState.__new__(GameState)  # (each attribute, __init__'s order: rules/blank.py)
        new.spec, new.rules, new._round_events = self.spec, self.rules, self._round_events
        new.roster, new.counted_ids = self.roster.copy(), self.counted_ids.copy()
        new.joined, new.ended_at, new._lamport = self.joined, self.ended_at, self._lamport
        new._event, new.phase, new.round = self._event, self.phase, self.round.copy()
        new.game, new.violations, new.scores = self.game, self.violations, self.scores
        new.history, new.past_rounds = self.history, self.past_rounds
        new.abandonment, new.flaps = self.abandonment.copy(), self.flaps
        new.stalled, new.left_alone, new.able = self.stalled, self.left_alone, self.able
        new.unopposed = self.unopposed
        return new

    # -- the roster's state, read as the fold's (Roster documents each) --------------------
    @property
    def dropped(self) -> dict[int, int]:
        """seat -> cut (its last counted seq) of each member dropped or gone."""
        return self.roster.dropped

    @dropped.setter
    def dropped(self, value: dict[int, int]) -> None:
        self.roster.dropped = value

    @property
    def drop_at(self) -> dict[int, int]:
        """seat -> the Lamport time its drop was decided."""
        return self.roster.drop_at

    @property
    def left(self) -> frozenset[int]:
        """The members that left the game."""
        return self.roster.left

    @property
    def kept_forks(self) -> dict[int, tuple[int, bytes]]:
        """seat -> (cut, id prefix): the chain of a dropped member that counts."""
        return self.roster.kept_forks

    @property
    def kept_ids(self) -> dict[int, dict[int, bytes]]:
        """seat -> {seq: id prefix}: more of that chain, as the deciding vote quoted it."""
        return self.roster.kept_ids

    @property
    def rejoin_ids(self) -> dict[int, dict[int, bytes]]:
        """seat -> {seq: id prefix}: the chain of a readmitted member, up to its request."""
        return self.roster.rejoin_ids

    @property
    def rejoining(self) -> dict[int, int]:
        """seat -> seq of its rejoin request: readmitted at the next round."""
        return self.roster.rejoining

    @property
    def readmitted_at(self) -> dict[int, int]:
        """seat -> the Lamport time of the event that readmitted it."""
        return self.roster.readmitted_at

    @property
    def gaps(self) -> dict[int, tuple[tuple[int, int], ...]]:
        """seat -> ((cut, request), ...): its events strictly between never count."""
        return self.roster.gaps

    @property
    def votes(self) -> dict[int, tuple[tuple[int, Drop], ...]]:
        """target -> (voter, vote) counted, in fold order."""
        return self.roster.votes

    @property
    def vote_caps(self) -> dict[int, Cap]:
        """The caps the caller folds with (:meth:`standing_caps`, :func:`with_forks`)."""
        return self.roster.vote_caps

    @vote_caps.setter
    def vote_caps(self, value: dict[int, Cap]) -> None:
        self.roster.vote_caps = value

    @property
    def abandons(self) -> dict[tuple[int, int], tuple[int, ...]]:
        """(author, target) -> the frontier of the author's first abandon of the target."""
        return self.abandonment.abandons

    @property
    def abandoned(self) -> tuple[int, int] | None:
        """(author, absent) of the abandon that ended the game, if one did."""
        return self.abandonment.abandoned

    def standing_caps(self) -> dict[int, Cap]:
        """:meth:`Roster.standing_caps`: what the votes standing cap."""
        return self.roster.standing_caps()

    # -- queries --------------------------------------------------------------------------
    @property
    def table(self) -> Table | None:
        """The current round's table (``None`` before the deal)."""
        return self.round.table

    @property
    def majority(self) -> int:
        """Votes needed to drop a member: a strict majority of the current roster (the
        members neither dropped nor gone), DESIGN.md §6."""
        return self.roster.majority

    def counts(self, seat: int, seq: int) -> bool:
        """Whether ``seat``'s event ``seq`` can still count: not past the cut of a member
        dropped now, nor between the cut and the rejoin request of one readmitted since (its
        events in order after the drop and before the readmission count neither: the fold
        ignores them). The roster's rule (:meth:`Roster.counts
        <p2p_nertz.protocol.roster.Roster.counts>`)."""
        return self.roster.counts(seat, seq)

    def waiting(self) -> frozenset[int]:
        """The seats whose event the current phase waits for."""
        rs = self.round
        dropped = self.roster.dropped
        out = set(dropped) | rs.forfeit
        if self.phase is Phase.JOINING:
            return frozenset(range(self.spec.seats)) - self.joined - set(dropped)
        if self.phase is Phase.COMMIT:
            return frozenset(rs.seats - set(rs.fair.commits) - out)
        if self.phase is Phase.NONCE:
            return frozenset(rs.seats - set(rs.fair.nonces) - out)
        if self.phase is Phase.PLAY:
            return frozenset(rs.seats - rs.ready - out)
        if self.phase is Phase.REVEAL or self.phase is Phase.OPEN:
            return frozenset(rs.seats - set(rs.secrets) - out)
        if self.phase is Phase.KEY or self.phase is Phase.DEAL:
            deck = rs.deck
            assert deck is not None
            n = len(deck.members)
            if self.phase is Phase.KEY:
                done = {deck.members[i] for i in deck.keys}
            else:
                made = deck.stages.keys()
                done = {deck.members[i] for i in range(n) if _stages_of(deck, i) <= made}
            return frozenset(rs.seats - done - out)
        if self.phase is Phase.RESULT:
            return frozenset(rs.seats - rs.results - out)
        return frozenset()

    @property
    def provisional(self) -> bool:
        """Whether the game's result may still change: an abandoned game (§9.3) whose absent
        member may not have seen every round it counts scored.

        The result of an abandoned game counts the rounds *every* abandon saw scored. It is
        settled once the absent member's own abandon is here (both views are in), or once an
        event of the absent member shows it held every result of the last round counted (any
        abandon it signs later sees that round too). Until then it is provisional: the two
        sides of a partition cannot know what the other saw (the two generals), and the union of
        their logs decides. A game that ended otherwise is never provisional.
        """
        return self.abandonment.provisional(self.game)

    def digest(self) -> str:
        """A hash of everything the fold decided (for agreement and determinism checks).

        For a game ended by an abandon, only its outcome: the rounds it counts and the result.
        The two sides of a partition each removed the other at their own count, and each
        table shows its own side's moves of the void round (§9.3); what they agree on is the
        result.
        """
        h = hashlib.sha256()
        if self.abandoned is not None:
            counted = len(self.game.history)
            h.update(f"abandoned|{self.history[:counted]}|{self.game!r}".encode())
            return h.hexdigest()
        # Drops decided once the game was over change nothing of it (voters that had not seen
        # its end yet: soak seed 2370); the member dropped may never learn of them.
        ended = self.ended_at
        dropped = sorted(
            (q, cut)
            for q, cut in self.roster.dropped.items()
            if ended is None or self.roster.drop_at.get(q, 0) <= ended
        )
        h.update(f"{self.phase.value}|{self.round.number}|{dropped}".encode())
        h.update(repr(self.game.history).encode())
        # Which events were refused, not the reasons' text: an author's own fold can name its
        # hidden cards there, where the others' folds show them face down.
        h.update("|".join(f"{v.seat},{v.seq},{v.kind.value}" for v in self.violations).encode())
        table = self.round.table
        if table is not None:
            # Only what every peer knows: the lake, and how big each hidden pile is.
            h.update(table.lake.digest())
            h.update(f"{table.status.value}|{table.cut}|{table.callers}".encode())
            h.update(f"{table.false_calls}".encode())
            for t in table.tableaux:
                h.update(f"{len(t.nerts)},{len(t.stock)},{len(t.waste)};".encode())
        return h.hexdigest()

    # -- the fold -------------------------------------------------------------------------
    def apply(self, event: Event) -> list[Notice]:
        """Fold one event (the next in total order); return what it made happen."""
        seat = event.seat
        if seat in self.roster.dropped:
            # After a drop or a leave, nothing more of this seat counts (but an abandoned
            # game's end reads it, §9.3).
            return self.observe(event)
        if (self.left_alone is not None or self.unopposed) and _void_after_end(self, event):
            return []  # (the game ended with its round void: it counts nowhere, no fault)
        frontier = event.body.frontier
        self.abandonment.heard(seat, event.seq, frontier)
        notices: list[Notice] = []
        if event.id and self.counted_ids.add(seat, event.seq, event.id):
            _withdraw_unsigned(self, event, notices)  # (votes folded before it quote it)
        self._lamport = event.lamport
        self._event = (event.seat, event.seq)
        try:
            if event.kind is not KIND_JOIN and seat not in self.joined:
                raise Refuse(_C.NOT_JOINED, "an event before the author's join")
            handler = _HANDLERS[event.kind]
            handler(self, event, notices)
        except (Refuse, NertzError, ValueError) as refused:
            # Anything wrong with a signed event is the author's fault, the same on every peer.
            reason = (
                refused.reason
                if isinstance(refused, Refuse)
                else Reason(RefusalCode.INVALID, str(refused))
            )
            violation = Violation(seat, event.seq, event.kind, reason)
            self.violations += (violation,)
            notices.append(Refused(violation))
            self._advance(notices)  # a refusal may still settle a phase (a forfeit)
            return notices
        self._advance(notices)
        return notices

    def observe(self, event: Event) -> list[Notice]:
        """Read an event that does not count (its author is past its cut, or dropped).

        Nothing it says is folded; only what an abandoned game's end needs (§9.3): what its
        author held when it signed it (its frontier), and whether it is its author's own
        abandon. Both only ever settle the result or lower the rounds it counts, whatever the
        order they are read in. Callers that skip an event for its author's cut pass it here.
        """
        body = event.body
        seat = event.seat
        self.roster.read_uncounted(seat, event.seq, body, event.lamport)
        self.abandonment.heard(seat, event.seq, body.frontier)
        if (
            isinstance(body, Drop)
            and body.reason is DropReason.ABANDON
            and self.abandonment.read(seat, body.seat, body.frontier)
        ):
            notices: list[Notice] = []
            self._end_abandoned(notices)
            return notices
        return []

    # -- the events of the round ----------------------------------------------------------
    def _join(self, event: Event, notices: list[Notice]) -> None:
        if not isinstance(event.body, Join) or event.seq != 1:
            raise Refuse(_C.BAD_JOIN, "a join must be the author's first event")
        self.joined |= {event.seat}

    def _round_event(self, event: Event, notices: list[Notice]) -> None:
        self._round_events.take(event, self.phase, self.round, self.roster)

    def _play(self, event: Event, notices: list[Notice]) -> None:
        if self.round.play(event, self.rules, self.roster, notices):
            self._set_phase(self._after_play, notices)

    @property
    def _after_play(self) -> Phase:
        """The phase that follows play: the secrets revealed (commit) or opened (shuffle)."""
        return Phase.REVEAL if self.round.deck is None else Phase.OPEN

    # -- who is in the game (the roster decides; the round and the game follow) -----------
    def _drop(self, event: Event, notices: list[Notice]) -> None:
        body = event.body
        assert isinstance(body, Drop)
        roster = self.roster
        target = body.seat
        _refuse_vote(event.seat, body, self.counted_ids, self.spec)
        if roster.vote_caps and capped(roster.vote_caps, event.seat, event.seq, body):
            roster.freeze(event.seat, body, event.seq, event.lamport)  # (counts not, caps)
            return
        if flaps.flapped(self, event.seat, event.seq, body):
            roster.freeze(event.seat, body, event.seq, event.lamport)  # (past its flap fault)
            return
        if body.reason is DropReason.REJOIN:
            over = self.phase is Phase.OVER
            self.stalled = second_stall.rejoin(roster, self.stalled, body, over=over)
        elif target in roster.dropped:
            if body.reason is not DropReason.ABANDON or target in roster.left:
                # It changes nothing here, but the roster keeps it: without another member's
                # events past a cut, this vote may complete a drop that then drops that
                # member (Roster._decided), or undo a leave past it (roster._undo_leaves).
                roster.vote(event.seat, event.seq, body, event.lamport)
                self._settle_drops(event.lamport, notices)
        elif body.reason is DropReason.ABANDON:
            self._abandon(event, body, notices)
        elif roster.vote(event.seat, event.seq, body, event.lamport):
            self._settle_drops(event.lamport, notices)

    def _settle_drops(self, lamport: int, notices: list[Notice]) -> None:
        """Drop every member that a strict majority of the current roster has voted out
        (:meth:`Roster.settle`), in the order the roster drops them."""
        for target, cut in self.roster.settle(lamport):
            self._gone(target, cut, left=False, notices=notices)

    def _gone(
        self, seat: int, cut: int, *, left: bool, notices: list[Notice], abandoned: bool = False
    ) -> None:
        """``seat``, just removed from the roster at ``cut`` (``left``: by its leave;
        ``abandoned``: by the one left's abandon, which ends the game itself), leaves the
        round's table (a shuffle game's deal not over yet starts again without it, or ends:
        :func:`_undealt`)."""
        _undealt(self, seat, left=left, abandoned=abandoned, notices=notices)
        if self.round.take_out(
            seat,
            playing=self.phase is Phase.PLAY,
            lamport=self._lamport,
            by=self._event,
            notices=notices,
        ):
            self._set_phase(self._after_play, notices)
        notices.append(MemberDropped(seat, cut, left))

    def _abandon(self, event: Event, body: Drop, notices: list[Notice]) -> None:
        """The last two members, one gone: the other ends the game (DESIGN.md §6, §9.3).

        Nobody can be dropped from two (a majority of two is two votes), so the one left signs
        an ``abandon``. The absent member is removed at the vote's count, as by a drop, and the
        game ends on the rounds **scored in every abandon's view**: the round in progress (not
        yet scored by every result) is void, nobody scores it and nobody forfeits it.

        Why void, and why every view: the two sides of a partition may each abandon the other,
        each on what it holds. Had the absent member forfeited the round in progress, each side
        would give the other the forfeit and both would win. With the round void, both sides
        count the same rounds, except that the results of the last round may have reached one
        side and not the other: each abandon therefore counts the rounds whose every result its
        frontier holds, and the game counts the fewest of all the abandons known (the other
        side's, read by :meth:`observe` even past its cut). Whatever each side does alone, the
        union of their events gives one result; :attr:`provisional` says when a side cannot be
        sure of it yet.

        A normal end that one side holds and the other does not yet (the last result in the
        air) is abandoned the same way: the abandon removes the absent member, so that finality
        can go on, and the game counts what every abandon saw.
        """
        target = body.seat
        cut = self.roster.abandon(event.seat, event.seq, event.lamport, body)
        over = self.phase is Phase.OVER
        self._gone(target, cut, left=False, abandoned=True, notices=notices)
        self.abandonment.start(event.seat, target, body.frontier, self.game)
        if not over:
            self._set_phase(Phase.OVER, notices)
        self._end_abandoned(notices, announce=not over)

    def _end_abandoned(self, notices: list[Notice], *, announce: bool = False) -> None:
        """Count the rounds every known abandon of the last two members saw scored (§9.3)."""
        game, changed = self.abandonment.counted(self.game)
        if changed or announce:
            self.game = game
            assert game.result is not None
            notices.append(GameEnded(game.result))

    def _set_phase(self, phase: Phase, notices: list[Notice]) -> None:
        self.phase = phase
        if phase is PHASE_OVER and self.ended_at is None:
            self.ended_at = self._lamport
        notices.append(PhaseChanged(phase, self.round.number))

    def _advance(self, notices: list[Notice]) -> None:
        """Move through every phase whose wait is over."""
        while self.phase is not PHASE_OVER:
            if self.able is not None and _unopposed(self, None, notices):
                return
            phase = self.phase
            if phase is PHASE_PLAY:
                # Play goes on until Nerts or a blocked round, whoever is waited for: asked
                # first, this spares every move of the round the sets waiting() builds.
                return
            if self.waiting():
                return
            if phase is Phase.JOINING:
                self._new_round(notices)
            elif phase is Phase.COMMIT:
                self._set_phase(Phase.NONCE, notices)
            elif phase is Phase.NONCE:
                self._deal(notices)
            elif phase is Phase.REVEAL or phase is Phase.OPEN:
                self._verify_and_score(notices)
            elif phase is Phase.KEY:
                self._set_phase(Phase.DEAL, notices)
            elif phase is Phase.DEAL:
                assert self.round.deck is not None
                if not self.round.deck.dealt:
                    # A member dropped before its stages: the deal restarts with the members
                    # left (docs/shuffle.md §8.4), not wired yet (§10.8).
                    return
                self.round.deal_sealed(self.rules, self.spec.seats)
                self._set_phase(Phase.PLAY, notices)
            elif phase is Phase.RESULT:
                self._record(notices)

    def _new_round(self, notices: list[Notice]) -> None:
        if self.roster.rejoining:
            for seat in self.roster.readmit(self._lamport):
                notices.append(MemberRejoined(seat, self.round.number + 1))
        teams = set(self.game.teams_next_round())
        seats = frozenset(
            s
            for s in range(self.spec.seats)
            if self.rules.team_of(s) in teams and s not in self.roster.dropped
        )
        if _unopposed(self, seats, notices):
            return
        if not seats or (self.round.number and len(self.roster.members()) <= 1):
            _end_unplayable(self, seats, notices)
            return
        if self.round.number:
            self.past_rounds += (self.round,)
        number = self.round.number + 1
        self.round = RoundState(number, seats)
        if self.spec.deal is Deal.SHUFFLE:
            members = tuple(sorted(seats))
            context = round_context(self.spec.game_id, number)
            self.round.deck = DeckRound(members, context, self.rules.jokers, self.spec.peer_ids)
            self._set_phase(Phase.KEY, notices)
        else:
            self._set_phase(Phase.COMMIT, notices)

    def _deal(self, notices: list[Notice]) -> None:
        self.round.deal(self.rules, self.spec.seats, self.roster.dropped)
        self._set_phase(Phase.PLAY, notices)

    def _verify_and_score(self, notices: list[Notice]) -> None:
        """Every secret is in: replay each seat against its deck, then score
        (:meth:`RoundState.score`); a seat caught lying is refused its whole round (seq 0)."""
        kind = Kind.REVEAL if self.round.deck is None else Kind.DECK_OPEN
        for seat, problem in self.round.score(self.rules, self.roster.dropped):
            violation = Violation(seat, 0, kind, problem)
            self.violations += (violation,)
            notices.append(Refused(violation))
        self._set_phase(Phase.RESULT, notices)

    def _record(self, notices: list[Notice]) -> None:
        rs = self.round
        assert rs.expected is not None
        self.abandonment.scored(rs.result_seqs)
        self.game = self.game.record(rs.expected, forfeit=rs.forfeit)
        self.scores += (rs.expected,)
        assert rs.digest is not None
        self.history += ((rs.number, rs.digest, tuple(p.total for p in rs.expected.players)),)
        notices.append(RoundScored(rs.number, rs.expected, self.game.totals))
        if self.game.result is not None:
            self._set_phase(Phase.OVER, notices)
            notices.append(GameEnded(self.game.result))
        else:
            self._new_round(notices)


def _void_after_end(state: GameState, event: Event) -> bool:
    """Whether ``event``, folded after the game ended with its round void, counts nowhere and
    is no fault: most of it was signed before its author knew of the end, concurrent with the
    event that ended it (a real node's nonce, session 32).

    After a leave that left one member alone (§9.3): all but what :func:`_read_left_alone`
    reads. After an extra round won unopposed (§8.9, :func:`_unopposed`): the round's events
    and moves; votes and leaves are read as after any end.
    """
    if state.left_alone is not None:
        return not _read_left_alone(event, state.left_alone)
    return event.kind is not KIND_DROP and event.kind is not Kind.LEAVE


def _read_left_alone(event: Event, leaver: int) -> bool:
    """Whether ``event`` is read after a leave that left its author alone (§9.3, *Left
    alone*): a leave, the last one out being out, or an abandon of the leaver, which may cut
    it below its leave (its author, cut off, never held it): the leave then never counts, and
    the abandon ends the game (§9.3, *A leave past the cut*; ``roster._undo_leaves``)."""
    body = event.body
    if event.kind is Kind.LEAVE:
        return True
    return isinstance(body, Drop) and body.reason is DropReason.ABANDON and body.seat == leaver


def _refuse_vote(seat: int, body: Drop, counted: CountedIds, spec: GameSpec) -> None:
    """Refuse ``seat``'s vote ``body`` if no fold counts it: a vote on its own author, a vote
    on proof whose proof does not prove it (§9.2, *a vote on proof carries its proof*), or one
    quoting another id of the target's feed than its own frontier names, or counting past
    it, or quoting another id than the target's event counted there (§9.2, *a vote's ids
    are its voter's word*)."""
    target = body.seat
    if target == seat:
        raise Refuse(_C.SELF_VOTE, "a vote to drop oneself")
    if body.reason is DropReason.EQUIVOCATION:
        unproven = vote_unproven(body, game_id=spec.game_id, roster=spec.peer_ids, seats=spec.seats)
        if unproven:
            raise Refuse(
                _C.UNPROVEN_VOTE,
                f"a vote on proof against seat {target} that proves nothing: {unproven}",
            )
    if contradicts(body):
        named = body.frontier[target]
        quoted = body.id_at(named)
        raise Refuse(
            _C.VOTE_CONTRADICTS,
            f"a vote quoting another id of seat {target}'s event {named} "
            "than its own frontier names"
            if quoted and quoted != body.frontier_ids[target]
            else f"a vote counting {body.last_seq} of seat {target}'s feed, past the "
            f"{named} its own frontier names",
        )
    unsigned = unsigned_id(body, counted)
    if unsigned:
        raise Refuse(
            _C.VOTE_UNSIGNED,
            f"a vote quoting another id of seat {target}'s event {unsigned} than the event counted",
        )


def _withdraw_unsigned(state: GameState, event: Event, notices: list[Notice]) -> None:
    """``event`` is counted: each vote against its author folded before it that quotes another
    id at its seq is withdrawn here and refused (``vote_unsigned``; :func:`withdraw_unsigned
    <p2p_nertz.protocol.roster.withdraw_unsigned>`, the one home of the rule, §9.2)."""
    seat, seq, roster = event.seat, event.seq, state.roster
    if seat not in roster.votes and seat not in roster.frozen:
        return  # (the usual case: no vote against its author)
    for voter, at in withdraw_unsigned(state.roster, seat, seq, event.id, event.lamport):
        reason = Reason(
            _C.VOTE_UNSIGNED,
            f"a vote quoting another id of seat {seat}'s event {seq} than the event counted "
            "after it (withdrawn there)",
        )
        violation = Violation(voter, at, KIND_DROP, reason)
        state.violations += (violation,)
        notices.append(Refused(violation))


def _leave(state: GameState, event: Event, notices: list[Notice]) -> None:
    """``event``'s author leaves the game at its own seq (§9.3)."""
    assert isinstance(event.body, Leave)
    if state.phase is not Phase.OVER:
        # A player who leaves forfeits the game (rules.md: leaving the game; §9.3): its team
        # is out of contention from here, whatever its total (after the end, a leave changes
        # nothing).
        state.game = state.game.leave(state.rules.team_of(event.seat))
    state.roster.leave(event.seat, event.seq, event.lamport)
    state._gone(event.seat, event.seq, left=True, notices=notices)
    state._settle_drops(event.lamport, notices)
    if state.phase is not Phase.OVER and (
        len(state.roster.members()) <= 1
        or len(state.game.contenders) <= 1
        or state.game.result is not None
    ):
        _end_left_alone(state, event.seat, notices)


def _end_left_alone(state: GameState, seat: int, notices: list[Notice]) -> None:
    """``seat``'s leave left one member in (or none), or one team in contention (in pairs),
    or decided an extra round due: the game is over (§9.3, *Left alone*).

    It ends as an abandon ends it, decided by the leave alone, with no further signature:
    the round in progress, unless every result of it is in (then it is recorded already),
    is **void**, the leaver's round forfeit (§8.9) with it; the game ends on the totals of
    the rounds scored, the highest total **among the teams in contention** winning (the
    leaver forfeits the game, :meth:`Game.leave <p2p_nertz.rules.Game.leave>`), a tie shared
    (:meth:`Game.ended_early <p2p_nertz.rules.Game.ended_early>`); an extra round the leave
    decided ends as the game's tiebreak has it. A member dropped earlier that may rejoin at
    the next round (§9.8) does not keep the game open: the one left cannot be made to wait
    for someone who may never come.

    Why void and not the round's forfeit: the forfeit is a score in a round the others play
    out, and nobody plays this one out; the leaver loses the game instead.
    """
    game = state.game
    state.game = game if game.result is not None else game.ended_early()
    state.left_alone = seat
    state._set_phase(Phase.OVER, notices)
    assert state.game.result is not None
    notices.append(GameEnded(state.game.result))


def _unopposed(state: GameState, seats: frozenset[int] | None, notices: list[Notice]) -> bool:
    """Whether one tied team is left able to play the extra round out, so that it has won the
    tie there (§8.9; the rule: :meth:`Game.unopposed <p2p_nertz.rules.Game.unopposed>`): then
    the game is over. ``seats``: those of a round about to start (the round's seats left
    otherwise, less the members dropped and the seats forfeiting it, checked when they shrink).

    The round is void: not started, or not played on and never scored. Its events later in
    the order were signed before their authors knew (concurrent with the drop that decided
    it: a nonce, a ``ready``, a move): they count nowhere and are no fault
    (:meth:`GameState.apply`), as after a leave that leaves one member in (§9.3); votes and
    leaves are read as after any end.
    """
    rs = state.round
    if seats is None:
        seats = rs.seats.difference(rs.forfeit, state.roster.dropped)  # (a frozenset: not - keys)
        if seats == state.able:
            return False  # (the usual case: nobody left the round since the last event)
    game = state.game.unopposed(seats)
    state.able = seats if game.tied else None
    if not game.over:
        return False
    state.game = game
    state.unopposed = True
    state._set_phase(Phase.OVER, notices)
    assert game.result is not None
    notices.append(GameEnded(game.result))
    return True


def _end_unplayable(state: GameState, seats: frozenset[int], notices: list[Notice]) -> None:
    """A round is due that nobody can play: the game is over.

    With no ``seats``: an extra round between tied teams none of whose players is still in;
    the tie is kept (soak seed 1777: a round with no seat waited forever). Otherwise one
    member is still in (§9.3, *Alone in the game*): every other voted out (at two players,
    the other one on proof, §9.4) and none asking to rejoin. The game ends on the totals of
    the rounds scored, the last one included (the one left played it out, a member dropped
    in it forfeiting it, §8.9), the highest total winning, a tie shared: nobody plays a
    round alone. But an extra round the one left is tied for, it has won (:func:`_unopposed`:
    also where a shuffle game's deal of two tied members loses one, :func:`_undealt`).
    """
    if seats and _unopposed(state, seats, notices):
        return
    state.game = state.game.share_tie() if not seats else state.game.ended_early()
    state._set_phase(Phase.OVER, notices)
    assert state.game.result is not None
    notices.append(GameEnded(state.game.result))


def _undealt(
    state: GameState, seat: int, *, left: bool, abandoned: bool, notices: list[Notice]
) -> None:
    """``seat`` is gone before the shuffle game's deal is over (docs/shuffle.md §8.4): from
    three members the deal starts again without it, under the next attempt; from two nobody
    deals alone: if it left, the one left ends the game as an abandon does, the round void
    (§9.3, *Left alone*); if it was voted out (on proof, the only drop from two, §9.4), the
    one left is alone in the game with a round nobody can deal, and the game ends there as
    where no round can start with one member in (:func:`_end_unplayable`, §9.3, *Alone in
    the game*: the round void, the totals of the rounds scored); an abandon ends the game
    itself (:meth:`GameState._abandon`)."""
    rs = state.round
    deck = rs.deck
    if deck is None or deck.final is not None or seat not in deck.members:
        return
    if len(deck.members) > 2:
        context = round_context(state.spec.game_id, rs.number, deck.attempt + 1)
        rs.deck = deck.restarted(seat, context)
        state._set_phase(Phase.KEY, notices)
    elif state.phase is Phase.OVER or abandoned:
        return
    elif left:
        _end_left_alone(state, seat, notices)
    else:
        _end_unplayable(state, frozenset(deck.members) - {seat}, notices)


def leave_pending(final: GameState, tentative: GameState, seat: int) -> bool:
    """Whether ``seat``'s own ``leave`` is held and not final: the held events have it out
    by its leave, the final fold not (docs/protocol.md §9.3, *A leave past the cut*).

    Until every member still in is known to hold the leave, a vote (or, of the last two, an
    abandon) signed without it may still drop the member below it, later in the order: the
    leave then never counts, the member forfeits the round it was dropped in and not the
    game, and at two players the game ends as the abandon ends it, not as the leave does
    (finality waits for that cover: ``Finality.leaves_unheld``). So what the leaver's own
    table says of its leave (the game's end, at two players: ``left_alone``) is provisional
    until then (DESIGN.md §6); the node, the table and ``nertz resume`` say so. The one
    rule they read.
    """
    return seat in tentative.roster.left and seat not in final.roster.left


def leave_unannounced(state: GameState, seat: int, announced: Sequence[Sequence[int]]) -> bool:
    """Whether ``seat`` left by ``state`` and a member still in is not known to hold its
    feed up to its leave (``announced[r][q]``: the most of ``q``'s feed ``r``'s events read
    announce holding): :func:`leave_pending` where no final fold is at hand, the audit's
    view of the leaver's own log (a fold of every event it holds at once).

    Until the others hold the leave, a vote signed without it may drop the leaver below it
    and the leave never counts (§9.3, *A leave past the cut*): what that log alone says of
    the game's end is provisional, as the leaver's own table said (two liars of three,
    both leaving, readmit seed 75: the log of a leaver that lacked a withdrawal of a vote
    capping a vote against the other leaver kept that leave's end; session 39).
    """
    cut = state.dropped.get(seat)
    if seat not in state.roster.left or cut is None:
        return False
    out = state.dropped
    return any(held[seat] < cut for r, held in enumerate(announced) if r != seat and r not in out)


def abandon_partner(final: GameState, tentative: GameState, seat: int) -> int | NoPartner:
    """The member an abandon by ``seat`` would end the game with (§9.3), or why there is none
    (a code, the core's words its ``str()``): the one place that says who may abandon whom,
    for the peer, the table, the node and the simulator.

    Exactly one other member must be left by the *final* fold. A drop that only the held
    events decide may be undone by what the absent member signed unseen, earlier in the
    order: it may have withdrawn its vote before the vote that completed the drop (soak seed
    1315), or voted, with another, the abandoning member out first (soak seed 1520). The
    abandon would then not be one in the order every peer folds.
    """
    if final.phase is Phase.OVER:
        # (A game over only on the table, its last result not yet acknowledged by the other,
        # can still be abandoned: it ends on what both saw.)
        return NoPartner(Refusal.OVER)
    if seat in tentative.dropped or seat in final.dropped:
        return NoPartner(Refusal.OUT)
    members = [q for q in range(final.spec.seats) if q not in final.dropped]
    others = tuple(q for q in members if q != seat)
    if len(others) != 1:
        pending = tuple(q for q in others if q in tentative.dropped)
        return NoPartner(Refusal.OTHERS, others, pending)
    return others[0]


def voted_chain(state: GameState, seat: int, fork: int) -> tuple[int, dict[int, bytes]] | None:
    """The chain the counted votes quote of ``seat``, proven to have forked at ``fork``, while
    its drop is not decided: ``(cut, seq -> id prefix)`` if it reaches past the fork, else
    ``None`` (the one home of the rule, §9.2; the peer follows it, the audit folds it).

    The drop may wait on an event of that chain: one of the member's own votes, that a majority
    counted (soak seed 893: a peer holding the other version never took the vote that dropped
    it, so never the drop that keeps the chain; and the simulator's observer of then, which
    folded the other version, never counted that vote either, variants seed 893). The other
    version was never final anywhere past the fork: the voters hold theirs and announce it. A
    vote quoting the other version makes :func:`vote_cut` stop below the split: nothing to
    follow then.
    """
    return state.roster.voted_chain(seat, fork)


_HANDLERS: dict[Kind, Callable[[GameState, Event, list[Notice]], None]] = {
    Kind.JOIN: GameState._join,
    Kind.COMMIT: GameState._round_event,
    Kind.REVEAL: GameState._round_event,
    Kind.READY: GameState._round_event,
    Kind.MOVE: GameState._play,
    Kind.CLAIM: GameState._play,
    Kind.STUCK: GameState._play,
    Kind.NERTS: GameState._play,
    Kind.RESULT: GameState._round_event,
    Kind.DROP: GameState._drop,
    Kind.LEAVE: _leave,
    Kind.DECK_KEY: GameState._round_event,
    Kind.DECK_STAGE: GameState._round_event,
    Kind.DECK_SHARES: GameState._round_event,
    Kind.DECK_OPEN: GameState._round_event,
    Kind.DECK_COMPLAIN: GameState._round_event,
    Kind.DECK_ANSWER: GameState._round_event,
}


def _stages_of(deck: DeckRound, member: int) -> set[tuple[int, int]]:
    """The (deck, stage) pairs ``member`` makes: deck ``(member − s) mod N`` at stage ``s``."""
    n = len(deck.members)
    return {((member - st) % n, st) for st in range(n)}
