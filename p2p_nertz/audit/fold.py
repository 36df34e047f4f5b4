"""The fold of one pass and what it finds: the game recomputed from the events delivered.

Delivered events are folded by the protocol's own fold
(:class:`~p2p_nertz.protocol.state.GameState`) in the total order ``(lamport, seat, seq)``, as
soon as no earlier event can still come: every feed's clock only grows, so an event is safe to
fold once every member's feed has reached its Lamport time (:meth:`Fold.ready`). Which events
count is the players' rule, :class:`~p2p_nertz.protocol.folds.Folds`, with the cuts, gaps and
capped votes of the last pass.

:class:`Fold` turns each event the fold refuses into a finding of a precise kind, by its
:class:`~p2p_nertz.protocol.state.RefusalCode` (the tables below: never its words), names false
Nerts calls (a notice: the rules penalise them rather than refuse them), replays every finished
round with every revealed deck when asked (``deep``), and keeps for the report and the evidence
what each round came to: its end, its scores, the signed results that match, the forfeits and
their causes, and the decisive events where two logs that finished differently part.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from p2p_nertz.audit.answers import AnswerWatch
from p2p_nertz.audit.collect import Collector
from p2p_nertz.audit.delivery import Feed
from p2p_nertz.audit.findings import Finding, FindingKind
from p2p_nertz.audit.report import FoldStep, RoundReport
from p2p_nertz.audit.share_notes import ShareNotes, withheld
from p2p_nertz.deck.check import Fault, FaultKind
from p2p_nertz.deck.wire import DeckKey, DeckOpen, DeckStage
from p2p_nertz.errors import IllegalMoveError
from p2p_nertz.protocol.bodies import (
    DeckEvent,
    Drop,
    DropReason,
    Play,
    Result,
    Reveal,
    RevealWhat,
)
from p2p_nertz.protocol.causal import CausalPast
from p2p_nertz.protocol.envelope import KIND_NERTS, Kind
from p2p_nertz.protocol.finality import rejoined, released
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.roster import Cap
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.protocol.state import (
    Event,
    GameEnded,
    GameState,
    MemberDropped,
    Notice,
    Phase,
    RefusalCode,
    Refused,
    RoundEnded,
    RoundScored,
    RoundState,
    Violation,
    nonce_hash,
    replay_round,
    secret_hash,
)
from p2p_nertz.rules import Card, Pile, RoundStatus, Tableau

__all__ = ["Fold"]

_EVERYTHING = 1 << 63  # a time above every event's

# What a refusal of the fold is, as a finding: the audit's one reading of a refusal, by its
# code (never its words, which are for people and may change). A move or a claim refused for a
# code not in _PLAY_FINDINGS broke a rule of play; any other event refused for a code not in
# _FINDINGS is out of place (out of its phase, a repeat, a wrong round).
_FINDINGS: dict[RefusalCode, FindingKind] = {
    RefusalCode.NONCE_MISMATCH: FindingKind.REVEAL_MISMATCH,
    RefusalCode.SECRET_MISMATCH: FindingKind.REVEAL_MISMATCH,
    RefusalCode.RESULT_MISMATCH: FindingKind.RESULT_MISMATCH,
    # The dealerless shuffle (docs/shuffle.md §7.3): each fault its own finding.
    RefusalCode.BAD_STAGE: FindingKind.BAD_SHUFFLE,
    RefusalCode.BAD_SHUFFLE: FindingKind.BAD_SHUFFLE,
    RefusalCode.BAD_SHARE: FindingKind.BAD_SHARE,
    RefusalCode.BAD_OPEN: FindingKind.BAD_SHARE,
    RefusalCode.BAD_DEALING: FindingKind.BAD_DEALING,
    RefusalCode.WRONG_SECRET: FindingKind.WRONG_SECRET,
    # A vote on proof whose carried proof proves nothing (session 39): its voter's lie.
    RefusalCode.UNPROVEN_VOTE: FindingKind.UNPROVEN_VOTE,
}
# The findings of a shuffle game whose seat forfeits the round (a cause that stands).
_FORFEITING = {
    FindingKind.BAD_SHUFFLE: "bad_shuffle",
    FindingKind.BAD_DEALING: "bad_dealing",
    FindingKind.WRONG_SECRET: "wrong_secret",
}
# The fault the checks after a shuffle round found, as the finding that names it.
_FAULT_FINDINGS = {
    FaultKind.BAD_STAGE: FindingKind.BAD_SHUFFLE,
    FaultKind.BAD_DEALING: FindingKind.BAD_DEALING,
    FaultKind.BAD_SHARE: FindingKind.BAD_SHARE,
    FaultKind.WRONG_SECRET: FindingKind.WRONG_SECRET,
}
_PLAY_FINDINGS: dict[RefusalCode, FindingKind] = {
    # Out of place, not against the rules of play: a late or early move.
    RefusalCode.WRONG_ROUND: FindingKind.REFUSED,
    RefusalCode.BEFORE_DEAL: FindingKind.REFUSED,
    RefusalCode.CARD_NOT_THERE: FindingKind.UNAVAILABLE_CARD,
    # A card shown that the seat's public tableau says cannot be there.
    RefusalCode.REVEAL_COUNT: FindingKind.DECK_MISMATCH,
    RefusalCode.REVEAL_REPEATED: FindingKind.DECK_MISMATCH,
    RefusalCode.REVEAL_WRONG: FindingKind.DECK_MISMATCH,
}
# The fold's replay of a seat's round against its deck (seq 0, when the last secret is in).
_REPLAY_CODES = frozenset(
    {
        RefusalCode.DECK_DEAL,
        RefusalCode.DECK_REVEAL,
        RefusalCode.DECK_CLAIM,
        RefusalCode.DECK_ILLEGAL,
    }
)
# The notices of an event that ended a round or the game or removed a member.
_DECIDING = (MemberDropped, RoundEnded, RoundScored, GameEnded)


class Fold:
    """The game folded from the events delivered, and the findings of the fold.

    Args:
        spec: the game.
        found: the pass's findings.
        cuts: seat -> the last seq that counts of a member dropped, from the last pass.
        gaps: seat -> ((cut, rejoin request), ...) of a member readmitted, from the last
            pass: its events strictly between never count (``GameState.counts``), even before
            the readmission in the order (as with a cut).
        caps: votes past a standing vote against their author never count.
        masked, forked: the seats dropped, readmitted or forked; forked (the last pass's).
        deep: replay every finished round with every revealed deck.
        on_fold: called with each event as it is folded (replays).
    """

    def __init__(
        self,
        spec: GameSpec,
        found: Collector,
        *,
        cuts: dict[int, int],
        gaps: dict[int, tuple[tuple[int, int], ...]],
        caps: dict[int, Cap],
        deep: bool,
        on_fold: Callable[[FoldStep], None] | None,
        masked: frozenset[int] = frozenset(),
        forked: frozenset[int] = frozenset(),
    ) -> None:
        self.found = found
        self.cuts = cuts
        self.gaps = gaps
        self.deep = deep
        self.on_fold = on_fold
        # The players' folds (protocol.folds): the events delivered and not folded yet are
        # held there, and which of them count is its rule (Folds.admits), the peer's.
        self.folds = Folds(GameState(spec))
        self.state = self.folds.final
        #: What the events decide, for the next pass: the state, or, where the end of the
        #: logs held events back (:meth:`finish`), the fold that went on with them.
        self.decided = self.state
        self.state.vote_caps = dict(caps)
        self.folded_key = (-1, -1, -1)
        # round number -> facts for the report
        self.ended: dict[int, RoundEnded] = {}
        self.scored: dict[int, RoundScored] = {}
        self.matched: dict[int, list[int]] = {}
        self.round_events: dict[int, int] = {}
        self.replayed: set[int] = set()
        self.secret_events: dict[tuple[int, int], Event] = {}
        # A shuffle game's signed proofs: (round, attempt, member) -> its deck_key, (round,
        # attempt, deck, stage) -> the deck_stage (the faults after the round name them).
        self.key_events: dict[tuple[int, int, int], Event] = {}
        self.stage_events: dict[tuple[int, int, int, int], Event] = {}
        self.answers = AnswerWatch(found, _causal_past(spec, masked | forked), forked)
        self.share_notes = ShareNotes(found)  # (the bad_share notes: audit/share_notes.py)
        # (round, seat) -> why the seat may forfeit that round; and every forfeit scored
        self.causes: dict[tuple[int, int], list[str]] = {}
        self.forfeits: list[tuple[int, int]] = []
        # The events whose fold ended a round or the game or removed a member, in fold order:
        # where two logs that finished differently part (views.parting).
        self.decisive: list[Event] = []

    # -- when to fold ----------------------------------------------------------------------
    def hold(self, event: Event) -> None:
        """An event delivered: held until no event still to come can precede it, then folded
        by :meth:`ready` (whether it counts is decided then). One timed below what was folded
        comes too late to count: read at once, as a peer reads an event timed at or below its
        stable time."""
        self.folds.add(event, self.folded_key[0] - 1)

    def ready(self, feeds: Sequence[Feed], *, ended: bool = False) -> None:
        """Fold every delivered event that no event still to come can precede (``feeds``:
        how far each feed has come; ``ended``: every log is read to its end)."""
        folds = self.folds
        held = folds.nonfinal
        if not held:
            return
        state = self.state
        # (A copy: the fold changes its dict in place, and a readmission takes a member out
        # of it, whose feed then holds the time back again.)
        dropped = state.roster.dropped
        if dropped or ended:
            dropped = dict(dropped)
            bound = self._bound(feeds, dropped, _EVERYTHING if ended else 0, ended=ended)
        else:  # the usual case: every feed counts
            dropped = {}
            # The least clock, by a loop over the few feeds: Python 3.11's min() parses its
            # keywords on every call (~6,000 instructions with a map, the loop ~2,000).
            bound = feeds[0].last_lamport if feeds else 0
            for feed in feeds:
                if feed.last_lamport < bound:  # noqa: PLR1730  (no min() call: above)
                    bound = feed.last_lamport
            if held[0].lamport > bound:
                return  # (the usual answer: the event delivered waits for the others)
        while held and held[0].lamport <= bound:
            walk = folds.finals(bound, self.cuts, self.gaps)
            try:
                for event, counts in walk:
                    self._final(event, counts)
                    if state.dropped != dropped:
                        # The time to fold up to changed: walk again, to the new one.
                        dropped = dict(state.dropped)
                        default = _EVERYTHING if ended else bound
                        bound = self._bound(feeds, dropped, default, ended=ended)
                        break
            finally:
                walk.close()
            held = folds.nonfinal

    def finish(self, feeds: Sequence[Feed]) -> None:
        """At the end of the pass: everything delivered is safe to fold, in the total order,
        but for what may follow an event that counts and that no log holds (of a member
        dropped, below its cut; of a member that forked, one that an event delivered named,
        :meth:`_bound`); then the round the game stopped in is replayed, if its decks are
        known, and the ``bad_share`` notes of that round checked.

        No feed brings anything more, but such an event counts, and those after it in the
        order may have been made after it: folded without it, an honest member's claim on a
        foundation it started reads as a cheat. Its peer never made them final either (a
        member dropped holds finality back until its events up to the cut are here,
        :func:`~p2p_nertz.protocol.finality.settle`): a sleeper that gave up a fake for the
        chain a drop kept, and never received that chain before the game ended without it
        (session 11's scan: its log alone blamed honest members)."""
        self.ready(feeds, ended=True)
        state = self.state
        if state.phase is Phase.OVER or state.round.secrets:
            self._replay(state.round)
        self.share_notes.scored(state.round)  # (a round never scored: its notes, now)
        if self.folds.nonfinal:
            self.decided = self._decide_rest()

    def _decide_rest(self) -> GameState:
        """The fold went on with the events :meth:`finish` held back, as a peer's tentative
        fold does over its final one: what they decide (the drops, their cuts and kept chains,
        the votes standing) is what the next pass reads the logs with, as the peer's finality
        waits on the drops its held votes decide. Nothing is reported of them."""
        rest = Folds(self.state.copy())
        rest.nonfinal, rest.keys = list(self.folds.nonfinal), list(self.folds.keys)
        for event, counts in rest.finals(_EVERYTHING, self.cuts, self.gaps):
            if not counts:
                rest.final.observe(event)
                continue
            try:
                rest.final.apply(event)
            except Exception:  # (a bug of the fold: _fold reports it, in the pass that folds it)
                continue
        return rest.final

    def _final(self, event: Event, counts: bool) -> None:
        """Fold one event no event still to come can precede: if it counts (``Folds.admits``:
        not past a cut, nor in a readmitted member's gap, as the last pass found them, nor
        past a drop this pass folded), else read it only (an abandoned game's end reads it)."""
        state = self.state
        self.answers.walked(event, state.round.number, state.counted_ids, state.spec)
        if counts:
            self._fold(event)
        else:
            self.state.observe(event)

    def _bound(
        self, feeds: Sequence[Feed], dropped: dict[int, int], default: int, *, ended: bool = False
    ) -> int:
        """The time up to which no event still to come can precede: the least clock of the
        feeds that may still bring an event that counts. Which members dropped hold it back
        no more is the peer's rule (:func:`~p2p_nertz.protocol.finality.released`,
        :func:`~p2p_nertz.protocol.finality.rejoined`): one whose events up to its cut are
        all here (those still count, however late the log holds them), unless the last pass
        found it readmitted from that cut (its events from its rejoin request on count again;
        when, this pass has not folded yet: from 0, so its whole feed holds the time back).
        ``--variants`` soak seed 693: a recovered log holds a readmitted member's events
        after what the fold had passed.

        ``ended``: every log is read to its end, and only a feed that lacks events that
        count holds the time back: of a member dropped, events up to its cut (by the cuts the
        last pass found too: its drop may come later in the order than the events it holds
        back); of another, events past its fork that an event delivered named
        (``Feed.named``: the log's peer proved the fork, and took events of the others that
        named the version it never held); of any, an event no log holds that events read
        need (:func:`_holed`)."""

        if ended:
            cuts = {**self.cuts, **dropped}
            out = released(cuts, feeds)
            folds, gaps = self.folds, self.gaps

            def counts(seat: int, seq: int) -> bool:
                # (Whether an event that needs one no log holds counts, as the fold decides
                # when it folds it: one past its author's cut holds nothing back.)
                return folds.counts(seat, seq, cuts, gaps)

            return min(
                (
                    f.last_lamport
                    for s, f in enumerate(feeds)
                    if s not in out and (s in cuts or _holed(f, counts))
                ),
                default=default,
            )

        def least(excluded: dict[int, int], floor: int | None = None) -> int:
            # (The stable time with the seats in ``excluded`` out, as finality.Bound: the
            # least clock of the other feeds.)
            return min(
                (f.last_lamport for s, f in enumerate(feeds) if s not in excluded),
                default=default,
            )

        out = released(dropped, feeds)
        gaps = self.gaps
        back = (
            {s: 0 for s, cut in out.items() if any(lo == cut for lo, _ in gaps.get(s, ()))}
            if gaps
            else {}
        )
        return rejoined(least(out), out, back, least)

    # -- one event -------------------------------------------------------------------------
    def _fold(self, event: Event) -> None:
        key = (event.lamport, event.seat, event.seq)  # event.key, without the property call
        if key <= self.folded_key:
            return
        self.folded_key = key
        state = self.state
        found = self.found
        if found.step:
            found.step = []
        body = event.body
        rs = state.round
        table = rs.table
        # The author's tableau and false calls before the event: a finding about a play
        # quotes them (read only then).
        before = None
        if table is not None and isinstance(body, Play):
            before = table.tableaux[event.seat]
        nerts_call = event.kind is KIND_NERTS
        before_calls = table.false_calls[event.seat] if nerts_call and table is not None else 0
        if before is not None:  # (a move in a round's play: the usual event)
            if rs.deck is not None:  # (only a shuffle game's dealers owe answers)
                self.answers.play(event, rs, state.phase)
        elif isinstance(body, Reveal) and body.what is RevealWhat.SECRET:
            self.secret_events[(body.round, event.seat)] = event
        elif isinstance(body, DeckEvent):
            self._deck_event(event, body, rs)
        elif isinstance(body, Drop):  # (a vote)
            self.answers.play(event, rs, state.phase)
        phase = state.phase
        try:
            notices = state.apply(event)
        except Exception as exc:  # a bug of the fold must not hide the rest of the audit
            found.add(
                Finding(
                    FindingKind.REFUSED,
                    f"the rules fold failed on this event ({type(exc).__name__}: {exc})",
                    **found.about(event),
                )
            )
            notices = []
        number = getattr(body, "round", None)
        if isinstance(number, int):
            self.round_events[number] = self.round_events.get(number, 0) + 1
        for notice in notices:
            self._notice(event, notice, rs, before)
        if rs.deck is not None:
            self.answers.after(event, rs, (phase, state.phase), _refused_itself(event, notices))
        if isinstance(body, Result) and not _refused_itself(event, notices):
            self.matched.setdefault(body.round, []).append(event.seat)
        if nerts_call:
            after = state.table
            if after is not None and after.false_calls[event.seat] > before_calls:
                found.add(_false_call(found, event, before, state.rules.false_call_penalty))
        if state.past_rounds:
            for finished in state.past_rounds:
                self._replay(finished)
            state.past_rounds = ()  # kept by the fold for replays; the audit is done with them
        if self.on_fold is not None:
            self.on_fold(FoldStep(event, tuple(notices), state, tuple(found.step)))

    def _deck_event(self, event: Event, body: DeckEvent, rs: RoundState) -> None:
        """Keep the shuffle events that prove a fault found after the round."""
        message = body.message
        deck = rs.deck
        if deck is None or event.seat not in deck.members:
            return
        self.answers.before(event, rs)
        self.answers.shares(event, rs)
        if isinstance(message, DeckOpen):
            self.secret_events[(message.round, event.seat)] = event
        elif isinstance(message, DeckKey):
            member = deck.member(event.seat)
            self.key_events[(message.round, message.attempt, member)] = event
        elif isinstance(message, DeckStage):
            where = (message.round, message.attempt, message.deck, message.stage)
            self.stage_events.setdefault(where, event)

    def _notice(self, event: Event, notice: Notice, rs: RoundState, before: Tableau | None) -> None:
        if isinstance(notice, _DECIDING) and (not self.decisive or self.decisive[-1] is not event):
            self.decisive.append(event)
        if isinstance(notice, Refused):
            self._refused(event, notice, rs, before)
        elif isinstance(notice, RoundEnded):
            self.ended[notice.round] = notice
        elif isinstance(notice, RoundScored):
            self.scored[notice.round] = notice
            if notice.round == rs.number:
                self.forfeits.extend((rs.number, seat) for seat in sorted(rs.forfeit))
                if rs.deck is not None:
                    withheld(self.found, rs, self.secret_events)
                    self.share_notes.scored(rs)
        elif isinstance(notice, MemberDropped) and rs.number:
            self.causes.setdefault((rs.number, notice.seat), []).append(
                self._drop_cause(event, notice)
            )

    def _drop_cause(self, event: Event, notice: MemberDropped) -> str:
        """Why a member was removed, as a forfeit's cause: ``left``, ``abandoned``,
        ``dropped``, or ``dropped_on_proof`` (its proof the votes' own, checked when folded)."""
        if notice.left:
            return "left"
        body = event.body
        if isinstance(body, Drop) and body.reason is DropReason.ABANDON:
            return "abandoned"
        votes = self.state.votes.get(notice.seat, ())
        if any(v.reason is DropReason.EQUIVOCATION for _, v in votes):
            return "dropped_on_proof"
        return "dropped"

    def _refused(
        self, event: Event, notice: Refused, rs: RoundState, before: Tableau | None
    ) -> None:
        violation = notice.violation
        reason = violation.reason
        code = violation.code
        found = self.found
        if _withdrawn_vote(event, violation):
            # (A vote folded before the member's event it quotes, refused at that event:
            # the finding is about the vote, §9.2.)
            self.answers.unsigned(event, rs.number)
            where = found.who(violation.seat)
            where.update(seq=violation.seq, event=violation.kind.name.lower())
            found.add(Finding(_FINDINGS.get(code, FindingKind.REFUSED), reason, **where))
            return
        if code in _REPLAY_CODES:
            # The replay of a seat's round against its deck, when the last secret came in.
            culprit = self.secret_events.get((rs.number, violation.seat))
            where = found.about(culprit) if culprit is not None else found.who(violation.seat)
            where.setdefault("round", rs.number)
            self.causes.setdefault((rs.number, violation.seat), []).append("deck_mismatch")
            found.add(Finding(FindingKind.DECK_MISMATCH, reason, **where))
            return
        if event.kind is Kind.MOVE or event.kind is Kind.CLAIM:
            kind = _PLAY_FINDINGS.get(code, FindingKind.ILLEGAL_MOVE)
        else:
            kind = _FINDINGS.get(code, FindingKind.REFUSED)
        if kind in _FORFEITING:
            self.causes.setdefault((rs.number, violation.seat), []).append(_FORFEITING[kind])
        if violation.seq == 0 and rs.deck is not None:
            self._shuffle_faults(violation.seat, reason, rs)
            return
        expected, found_ = self._quoted(kind, event, rs, before)
        found.add(Finding(kind, reason, expected=expected, found=found_, **found.about(event)))

    def _shuffle_faults(self, seat: int, reason: str, rs: RoundState) -> None:
        """The checks after a shuffle round found ``seat`` at fault (docs/shuffle.md §7.2):
        a finding for each of its faults, about the signed event that proves it (its stage,
        its dealing), which anyone re-runs with the secret its ``deck_open`` revealed."""
        deck = rs.deck
        assert deck is not None
        found = self.found
        member = deck.member(seat)
        opened = self.secret_events.get((rs.number, seat))
        proof = f"; its secret revealed at seq {opened.seq}" if opened is not None else ""
        faults = [f for f in deck.found if f.seat == member and f.kind in _FAULT_FINDINGS]
        for fault in faults:
            kind = _FAULT_FINDINGS[fault.kind]
            culprit = self._fault_event(fault, rs)
            where = found.about(culprit) if culprit is not None else found.who(seat)
            where.setdefault("round", rs.number)
            expected, found_ = _fault_quotes(fault)
            detail = f"{reason}{proof}"
            found.add(Finding(kind, detail, expected=expected, found=found_, **where))
        if not faults:  # (a refusal of the fold with no fault of deck.check: a bug)
            where = found.who(seat)
            where["round"] = rs.number
            found.add(Finding(FindingKind.REFUSED, reason, **where))

    def _fault_event(self, fault: Fault, rs: RoundState) -> Event | None:
        """The signed event a fault after the round is about: the stage or the dealing."""
        deck = rs.deck
        assert deck is not None
        if fault.kind is FaultKind.BAD_STAGE:
            return self.stage_events.get((rs.number, deck.attempt, fault.deck, fault.at))
        if fault.kind is FaultKind.BAD_DEALING:
            return self.key_events.get((rs.number, deck.attempt, fault.seat))
        return self.secret_events.get((rs.number, deck.members[fault.seat]))

    def _quoted(
        self, kind: FindingKind, event: Event, rs: RoundState, before: Tableau | None
    ) -> tuple[str | None, str | None]:
        """What a refused event's finding quotes, expected against found (and, of a reveal
        that does not match its commit, the forfeit's cause)."""
        body = event.body
        expected: str | None = None
        found: str | None = None
        if kind is FindingKind.REVEAL_MISMATCH:
            assert isinstance(body, Reveal)
            commit = rs.fair.commits.get(event.seat)
            if body.what is RevealWhat.NONCE:
                found = nonce_hash(body.value).hex()[:16]
                expected = commit.nonce_hash.hex()[:16] if commit else None
            else:
                found = secret_hash(body.value).hex()[:16]
                expected = commit.secret_hash.hex()[:16] if commit else None
            expected = f"H = {expected}" if expected else "a commit"
            found = f"H = {found}"
            self.causes.setdefault((body.round, event.seat), []).append("reveal_mismatch")
        elif kind is FindingKind.RESULT_MISMATCH:
            assert isinstance(body, Result)
            if rs.expected is not None:
                expected = str([p.total for p in rs.expected.players])
                if rs.digest is not None and body.digest != rs.digest:
                    expected += f" digest {rs.digest.hex()[:16]}"
            found = str(list(body.scores))
            if rs.digest is not None and body.digest != rs.digest:
                found += f" digest {body.digest.hex()[:16]}"
        elif kind is FindingKind.UNAVAILABLE_CARD:
            assert isinstance(body, Play)
            top = _top(before, body.move.source)
            expected = f"{top if top is not None else 'nothing'} at {body.move.source!r}"
            found = str(body.card)
        elif kind is FindingKind.ILLEGAL_MOVE:
            assert isinstance(body, Play)
            found = str(body.move)
        return expected, found

    def _replay(self, rs: RoundState) -> None:
        """Replay a finished round with every revealed deck (legality and conservation)."""
        if not self.deep or rs.number in self.replayed:
            return
        self.replayed.add(rs.number)
        found = self.found
        flagged = {
            v.seat
            for v in found.violations
            if v.kind is FindingKind.DECK_MISMATCH and v.round == rs.number
        }
        for problem in replay_round(self.state.rules, rs):
            seat = problem.seat
            if seat in flagged:
                continue  # the fold already named this seat's lie
            culprit = self.secret_events.get((rs.number, seat))
            where = found.about(culprit) if culprit is not None else found.who(seat)
            where.setdefault("round", rs.number)
            found.add(Finding(FindingKind.DECK_MISMATCH, str(problem), **where))

    # -- the end ---------------------------------------------------------------------------
    def incomplete(self) -> None:
        """Say so if the game did not finish."""
        state = self.state
        if state.phase is not Phase.OVER:
            members = self.found.spec.members
            names = ", ".join(members[s].name for s in sorted(state.waiting()))
            self.found.add(
                Finding(
                    FindingKind.INCOMPLETE,
                    f"the game did not finish: round {state.round.number}, "
                    f"{state.phase.value} phase" + (f", waiting for {names}" if names else ""),
                    round=state.round.number or None,
                )
            )

    def rounds(self) -> tuple[RoundReport, ...]:
        """Every round that ended or was scored, as the report gives it."""
        history = self.state.history
        rounds = []
        for number in sorted(set(self.ended) | set(self.scored)):
            ended = self.ended.get(number)
            scored = self.scored.get(number)
            digest = ""
            for n, d, _ in history:
                if n == number:
                    digest = d.hex()
            rounds.append(
                RoundReport(
                    number=number,
                    status=ended.status.value if ended else RoundStatus.PLAYING.value,
                    cut=ended.cut if ended and ended.status is RoundStatus.NERTS else None,
                    callers=ended.callers if ended else (),
                    scores=tuple(p.total if p.played else None for p in scored.score.players)
                    if scored
                    else (),
                    totals=scored.totals if scored else (),
                    digest=digest,
                    results=tuple(sorted(self.matched.get(number, ()))),
                    events=self.round_events.get(number, 0),
                )
            )
        return tuple(rounds)


def _holed(feed: Feed, counts: Callable[[int, int], bool]) -> bool:
    """Whether events read need an event of ``feed`` that no log holds: events of the feed
    past a hole (``pending``), one a frontier acknowledges (``waiting``), or one past its
    fork that a frontier names (``named``: the log's peer proved the fork, and took events of
    the others that named the version it never held), where the event that needs it can
    count (``counts(seat, seq)``). Events timed after the last one delivered may follow it,
    and no peer folded them without it (a peer delivers an event after its causal past):
    folded, an honest member's event that came after it reads as refused (a log alone that
    lost one record blamed the others' next events). The fold stops there; ``missing_event``
    says why. An event past its author's cut needs nothing: it counts for no peer, which
    holds it undelivered where its causal past never comes (a liar's frontier naming events
    nobody made, two-liar seed 2464: the audit stopped in play where every peer ended)."""
    if feed.pending:
        return True
    head = feed.head
    return any(
        counts(seat, seq) for waiting in feed.waiting.values() for seat, seq, *_ in waiting
    ) or any(f > head and counts(seat, seq) for f, seat, seq in feed.named)


def _causal_past(spec: GameSpec, masked: frozenset[int]) -> CausalPast | None:
    """What each event walked proves its author held, kept in a shuffle game alone: only a
    dealer's withheld answer reads it (``AnswerWatch``), and a commit game has none."""
    return CausalPast(spec.seats, masked) if spec.deal is Deal.SHUFFLE else None


def _fault_quotes(fault: Fault) -> tuple[str | None, str | None]:
    """What a finding of a fault after a shuffle round quotes, expected against found."""
    if fault.kind is FaultKind.BAD_STAGE:
        return (
            f"deck {fault.deck} stage {fault.at} as its shuffler's secret re-runs it",
            "another output",
        )
    if fault.kind is FaultKind.BAD_DEALING:
        return "the dealing its dealer's secret makes", "other boxes or commitments"
    return None, None


def _top(tableau: Tableau | None, pile: Pile | None) -> Card | None:
    """The card in play on ``pile`` of ``tableau``; ``None`` if there is none (or no such
    pile: a signed event may name a work pile the rules do not have)."""
    if tableau is None or pile is None:
        return None
    try:
        return tableau.top(pile)
    except IllegalMoveError:
        return None


def _false_call(found: Collector, event: Event, before: Tableau | None, penalty: int) -> Finding:
    """The notice of a false Nerts call: the caller, the cards left, what it cost (the rules
    allow the call; the scores recomputed carry its ``penalty``, and every signed result is
    checked against them)."""
    left = len(before.nerts) if before is not None else 0
    cards = f"{left} card{'s' if left != 1 else ''}"
    name = found.spec.members[event.seat].name
    return Finding(
        FindingKind.FALSE_NERTS,
        f"{name} called Nerts with {cards} left in their Nerts pile: a false call, which the "
        f"rules allow at a cost of {penalty} points and any Nerts bonus (the scores recomputed "
        "carry it)",
        expected="an empty Nerts pile",
        found=f"{cards} left",
        **found.about(event),
    )


def _refused_itself(event: Event, notices: Sequence[Notice]) -> bool:
    """Whether the fold refused ``event`` (not a vote it withdrew: a vote folded before the
    member's event it quotes is refused at that event, docs/protocol.md §9.2)."""
    return any(isinstance(n, Refused) and not _withdrawn_vote(event, n.violation) for n in notices)


def _withdrawn_vote(event: Event, violation: Violation) -> bool:
    """Whether ``violation``, noticed at ``event``, is the withdrawal of another member's vote
    that ``event`` belies (``vote_unsigned`` about another event), rather than a refusal of
    ``event`` or a finding a replay makes of another seat's round (a deck that does not deal
    what was played, found when the last secret comes: session 37, the tamper tests)."""
    return violation.code is RefusalCode.VOTE_UNSIGNED and (violation.seat, violation.seq) != (
        event.seat,
        event.seq,
    )
