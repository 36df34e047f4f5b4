"""A dealer that withheld its answer to a complaint of its box, where its own events prove it.

A member whose VSS box from a dealer does not open complains (docs/shuffle.md §6.3), and the
dealer answers once its *final* fold holds the complaint: its duties put the answer before
every other shuffle event they ask of it (``Duties._deck_event``). Nothing in a log says when
a peer's final fold held an event, but some of the dealer's events are signed only once one
of its folds holds a given event, and with it every complaint that fold owes an answer to:

* its ``deck_stage`` of stage ``s > 0`` of a deck, once its held fold has the stage's input
  (stage ``s − 1`` of that deck, §4.3): from the final fold, a prefix of the total order,
  which then holds every event folded before the input; or from the held fold (every event
  delivered), only while that fold owes no answer. So a complaint folded before the input
  *and named by the stage's frontier* (its author held it when it signed) was held
  unanswered by whichever fold the stage came from;
* its ``deck_open``, once its final fold is in ``open``: it holds the event that ended play.

So where the dealer signed such an event of a round's deal attempt, and the complaint was
folded (accepted, of that attempt) before the event it waited for (the input, or the end of
play), and for a stage its frontier names the complaint, a fold of the dealer held the
complaint unanswered when it signed: an honest dealer would have answered first, in the same
act. Its feed proves the answer withheld, whatever the clocks said (the drop vote for it is a
judgement of time the logs do not hold). A complaint folded after that event, or one a
stage's frontier does not name, proves nothing: the dealer may have signed before its fold
held it, and is judged by the vote alone (§7.3).

One more event proves it by the frontier alone: the dealer's ``deck_shares``. An honest dealer
signs no share holding a complaint of its box that it has not answered (its shares wait while
its held fold owes the answer, ``Duties``), so shares whose frontier holds a complaint folded
and unanswered prove the answer withheld (:meth:`AnswerWatch.shares`). A complaint made once
play has begun comes after the dealer's last stage, and a dealer voted out before ``open``
signs no ``deck_open``: its shares are what is left to read.

A dealer's move, and its vote for silence, withholding or readmission, prove it by their
causal past (:meth:`AnswerWatch.play`): both are signed once the input before them (for a
vote, its own input) made final all it could, every answer owed signed first; an event whose
past proves the dealer's stable time past the complaint, with what the drop votes there do to
that time known (:func:`_drops_read`: none decided, or one member's drop decided, the member
then out of the time), was signed from a final fold holding it (docs/shuffle.md §7.3). A
dealer that signs nothing once it holds the complaint is named by no finding: the votes that
drop it are the proof, and the report lists the answers it owed (:attr:`AnswerWatch.owed`,
``AuditReport.drops``).

:class:`AnswerWatch` keeps what the rule needs while the audit folds: each complaint folded,
each stage folded, the event that ended each round's play, each drop vote walked, and the
complaints no answer followed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from p2p_nertz.audit.collect import Collector
from p2p_nertz.audit.findings import Finding, FindingKind
from p2p_nertz.deck.wire import DeckAnswer, DeckComplain, DeckOpen, DeckShares, DeckStage
from p2p_nertz.protocol.bodies import Beat, DeckEvent, Drop, DropReason, Play
from p2p_nertz.protocol.causal import CausalPast
from p2p_nertz.protocol.debts import owed_head, past_freeze
from p2p_nertz.protocol.envelope import KIND_DROP
from p2p_nertz.protocol.evidence import vote_unproven
from p2p_nertz.protocol.finality import frozen_claims, released, unannounced
from p2p_nertz.protocol.roster import CountedIds, contradicts, unsigned_id
from p2p_nertz.protocol.shuffle import DEALT
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Event, Phase, RoundState

__all__ = ["AnswerWatch"]

_Key = tuple[int, int, int]  # an event's place in the total order: (lamport, seat, seq)

#: The votes signed at the end of an input, once its finality is done and the answers it
#: asked are signed (``Author.liveness``, after ``Author.act``): a dealer's vote of these
#: proves what its final fold held, as a move does (:meth:`play`). A withdrawal may be signed
#: on the receive path, a vote on proof there or before ``act``, an abandon in ``act`` before
#: its answers: their past may hold what the final fold reaches only after them.
_READ_VOTES = (DropReason.SILENT, DropReason.WITHHELD, DropReason.REJOIN)
#: The votes that drop a member (not on proof: that drop waits for every member left).
_DROPPING = (DropReason.SILENT, DropReason.WITHHELD)

_NEVER = 1 << 62  # (no bound: later than any Lamport time)


class _Vote(NamedTuple):
    """A drop event walked (any reason), as :meth:`AnswerWatch.play` reads it."""

    seat: int
    seq: int
    lamport: int
    target: int
    reason: DropReason
    last_seq: int


class _Drops(NamedTuple):
    """What the drop votes in a dealer's event's causal past do to its stable time
    (:func:`_drops_read`): the member they drop (``out``, at most one), the time up to which
    they decide it (``decided``), and the most the dealer's own votes let it reach
    (``frozen``)."""

    out: frozenset[int]
    decided: int
    frozen: int


class AnswerWatch:
    """The withheld answers the dealers' own events prove (see the module docstring).

    Args:
        found: the pass's findings.
        past: what each event folded proves its author held (its causal past); ``None``:
            kept by nobody (a commit game: no dealer, no answer).
        forked: the seats proven to fork (the last pass's).
    """

    __slots__ = (
        "_complaints",
        "_dealt",
        "_debts",
        "_forked",
        "_found",
        "_named",
        "_past",
        "_play_ended",
        "_stages",
        "_taking",
        "_votes",
        "owed",
    )

    def __init__(
        self, found: Collector, past: CausalPast | None, forked: frozenset[int] = frozenset()
    ) -> None:
        self._found = found
        self._past = past if past is not None else CausalPast(0)
        self._taking = past is not None
        self._forked = forked
        #: (round, attempt) -> the Lamport time of the event that put its deal in a dealt phase
        self._dealt: dict[tuple[int, int], int] = {}
        #: round -> each drop event (of any reason) walked in it
        self._votes: dict[int, list[_Vote]] = {}
        #: (round, attempt, dealer's seat, complainer's seat) -> each complaint folded that no
        #: answer (right or wrong) followed, of the round's last attempt: what a dealer voted
        #: out owed (:attr:`AuditReport.drops <p2p_nertz.audit.report.AuditReport.drops>`)
        self.owed: dict[tuple[int, int, int, int], Event] = {}
        #: (round, attempt, dealer, complainer) -> the complaint, as folded (member indices)
        self._complaints: dict[tuple[int, int, int, int], Event] = {}
        #: (round, attempt, deck, stage) -> where the stage the fold took stands in the order
        self._stages: dict[tuple[int, int, int, int], _Key] = {}
        #: round -> where the event that ended its play stands in the order
        self._play_ended: dict[int, _Key] = {}
        #: each complaint named once, or answered (a wrong answer is ``bad_dealing``'s)
        self._named: set[tuple[int, int, int, int]] = set()
        #: the owner of a log -> each signed beat its ``debt`` notes keep: (its Lamport time,
        #: its author's seat, the beat) (:meth:`debt`)
        self._debts: dict[int, list[tuple[int, int, Beat]]] = {}

    def debt(self, owner: int, seat: int, lamport: int, beat: Beat) -> None:
        """A ``debt`` note of ``owner``'s log (its signature verified): ``seat``'s beat
        ``beat``, timed ``lamport``, that ``owner`` kept as a debt past a freeze
        (``protocol.debts``). While ``owner`` lacked the head it announced, its finality took
        that voter's word as said (:func:`_excluded`)."""
        self._debts.setdefault(owner, []).append((lamport, seat, beat))

    def before(self, event: Event, rs: RoundState) -> None:
        """``event`` is about to be folded in round ``rs``: if it is a dealer's event signed
        only once its final fold held an event folded after a complaint of its box, and no
        answer to that complaint was folded, name the answer withheld."""
        deck = rs.deck
        body = event.body
        if deck is None or not isinstance(body, DeckEvent) or event.seat not in deck.members:
            return
        message = body.message
        number, attempt = rs.number, deck.attempt
        held: tuple[int, ...] | None = None  # for a stage: what its author held (§5.1)
        if isinstance(message, DeckStage):
            if message.round != number or message.attempt != attempt or message.stage == 0:
                return
            waited = self._stages.get((number, attempt, message.deck, message.stage - 1))
            what = f"the input of its stage {message.stage} of deck {message.deck}"
            held = self._held(event)
        elif isinstance(message, DeckOpen):
            if message.round != number:
                return
            waited = self._play_ended.get(number)
            what = "the end of play"
        else:
            return
        if waited is None:
            return
        dealer = deck.member(event.seat)
        for complainer in deck.answers_owed(event.seat):
            where = (number, attempt, dealer, complainer)
            complaint = self._complaints.get(where)
            if complaint is None or complaint.key >= waited or where in self._named:
                continue
            if held is not None and held[complaint.seat] < complaint.seq:
                continue  # staged from a fold that had not delivered the complaint
            self._named.add(where)
            self._found.add(
                Finding(
                    FindingKind.WITHHELD_ANSWER,
                    f"signed this after its fold held {what} (lamport {waited[0]}), "
                    f"and with it the complaint of its box by seat {complaint.seat} "
                    f"(seq {complaint.seq}), which it never answered",
                    expected=f"deck_answer to member {complainer} before this event",
                    found="no answer",
                    **self._found.about(event),
                )
            )

    def shares(self, event: Event, rs: RoundState) -> None:
        """``event`` is about to be folded in round ``rs``: if it is a dealer's ``deck_shares``
        whose frontier holds a complaint of its box (folded, of this attempt) that it had not
        answered, name the answer withheld. A dealer signs no share holding a complaint before
        its answer (docs/shuffle.md §6.3; ``Duties``): whatever its fold says, its frontier is
        what it held."""
        deck = rs.deck
        body = event.body
        if deck is None or not isinstance(body, DeckEvent) or event.seat not in deck.members:
            return
        if not isinstance(body.message, DeckShares) or body.message.round != rs.number:
            return
        number, attempt = rs.number, deck.attempt
        dealer = deck.member(event.seat)
        for complainer in deck.answers_owed(event.seat):
            where = (number, attempt, dealer, complainer)
            complaint = self._complaints.get(where)
            if complaint is None or where in self._named:
                continue
            if self._held(event)[complaint.seat] < complaint.seq:
                continue  # (signed before it held the complaint)
            self._named.add(where)
            self._found.add(
                Finding(
                    FindingKind.WITHHELD_ANSWER,
                    f"signed these shares holding the complaint of its box by seat "
                    f"{complaint.seat} (seq {complaint.seq}), which it had not answered",
                    expected=f"deck_answer to member {complainer} before this event",
                    found="no answer",
                    **self._found.about(event),
                )
            )

    def after(
        self, event: Event, rs: RoundState, phases: tuple[Phase, Phase], refused: bool
    ) -> None:
        """``event`` was folded in round ``rs`` (``phases``: the game's phase before and after
        it; ``refused``: the fold refused it): note the complaints and stages taken, the
        answers signed (right or not), and the end of play."""
        deck = rs.deck
        if deck is None:
            return
        number = rs.number
        if phases == (Phase.PLAY, Phase.OPEN):
            self._play_ended.setdefault(number, event.key)
        if phases[1] in DEALT and phases[0] not in DEALT:
            self._dealt.setdefault((number, deck.attempt), event.lamport)
        owed = self.owed
        if owed and any(k[0] == number and k[1] < deck.attempt for k in owed):
            # (The deal restarted: a complaint of an earlier attempt's box asks nothing more.)
            self.owed = {k: e for k, e in owed.items() if k[0] != number or k[1] >= deck.attempt}
        body = event.body
        if not isinstance(body, DeckEvent) or event.seat not in deck.members:
            return
        message = body.message
        if getattr(message, "round", None) != number or getattr(message, "attempt", 0) != (
            deck.attempt
        ):
            return
        if isinstance(message, DeckAnswer):
            # Answered, if wrongly (refused: ``bad_dealing`` names it): nothing withheld.
            self._named.add((number, deck.attempt, deck.member(event.seat), message.recipient))
            if message.recipient < len(deck.members):
                recipient = deck.members[message.recipient]
                self.owed.pop((number, deck.attempt, event.seat, recipient), None)
        elif refused:
            return
        elif isinstance(message, DeckComplain):
            where = (number, deck.attempt, message.dealer, deck.member(event.seat))
            if where not in self._complaints and where not in self._named:
                dealer = deck.members[message.dealer]
                self.owed[(number, deck.attempt, dealer, event.seat)] = event
            self._complaints.setdefault(where, event)
        elif isinstance(message, DeckStage):
            where = (number, deck.attempt, message.deck, message.stage)
            self._stages.setdefault(where, event.key)

    def _held(self, event: Event) -> tuple[int, ...]:
        """What ``event``'s author held when it signed: its causal past (protocol.causal),
        or its frontier where the past was not taken."""
        held = self._past.held(event.seat, event.seq) if self._taking else None
        return held or event.body.frontier

    def walked(
        self,
        event: Event,
        number: int,
        counted: CountedIds | None = None,
        spec: GameSpec | None = None,
    ) -> None:
        """``event`` is walked in the total order, round ``number`` the game's (folded or
        not: past a cut, it is read only), after the events whose ids the fold ``counted``
        (``None``: none): take its causal past; note a drop event (of any reason) the fold
        does not refuse: what it does to the stable time of a dealer whose later event of
        the round holds it is read there (:meth:`play`, :func:`_drops_read`)."""
        if self._taking:
            self._past.take(event.seat, event.seq, event.lamport, event.body.frontier)
        body = event.body
        # (A vote that contradicts its own frontier, or quotes ids of events counted before
        # it that are not theirs, is no vote: every fold refuses it, §9.2.)
        if (
            event.kind is KIND_DROP
            and isinstance(body, Drop)
            and not contradicts(body)
            and (counted is None or not unsigned_id(body, counted))
            and (spec is None or not _unproven(body, spec))
        ):
            vote = _Vote(
                event.seat, event.seq, event.lamport, body.seat, body.reason, body.last_seq
            )
            self._votes.setdefault(number, []).append(vote)

    def unsigned(self, event: Event, number: int) -> None:
        """The fold withdrew, at ``event`` (round ``number``), a vote folded before it that
        quotes another id of it (§9.2, *a vote folded before the events it quotes*): read as
        a withdrawal by ``event``'s author, in the past of the dealers that hold ``event``
        (their folds withdrew it there too), which :func:`_drops_read` bounds nothing past."""
        vote = _Vote(event.seat, event.seq, event.lamport, event.seat, DropReason.WITHDRAW, 0)
        self._votes.setdefault(number, []).append(vote)

    def play(self, event: Event, rs: RoundState, phase: Phase) -> None:
        """``event``, a move or a vote about to be folded in round ``rs`` (the game in
        ``phase``): if its author is a dealer whose *final* fold, by what its causal past
        proves, held a complaint of its box it had not answered when it signed, name the
        answer withheld.

        A move is signed from an input of its own, after the input before it was done: the
        peer made final all it could then and signed what that fold asked, every answer owed
        first (``Author.act``). A vote for silence or withholding, and one to readmit, is signed
        at the end of an input (``Author.liveness``), once the input's finality is done and
        what it asked is signed: the same holds (a vote on proof, a withdrawal and an abandon
        are not read: the first two may be signed in the middle of an input, the last before
        the answers of its act). Its final fold held the complaint if its stable time (§7.1
        of protocol.md) had reached the complaint, and the dealt phase of its attempt: a
        lower bound of that time is read from the causal past, where every member still in
        is held past it (its ``known``) and every such member but the dealer announced, in
        its last event held, every such member's events up to it (the coverage). The bound is
        only sound with no fork and with what the drop votes in the past do to the stable
        time known (:func:`_drops_read`): none decided, and the dealer's own votes' freeze
        above the time; or one member's drop decided there, the member then out of every
        term once the bound reaches the drop's time. Nothing is read with a member proven to
        fork, nor with a member of the deal masked (dropped, readmitted) but the dealer and
        the member whose drop the past decides (docs/shuffle.md §7.3)."""
        deck = rs.deck
        dealer = event.seat
        body = event.body
        if (
            deck is None
            or phase not in DEALT
            or dealer not in deck.members
            or dealer in rs.forfeit
            or not self._taking
        ):
            return
        if not isinstance(body, Play) and not (
            isinstance(body, Drop) and body.reason in _READ_VOTES
        ):
            return
        number, attempt = rs.number, deck.attempt
        dealt = self._dealt.get((number, attempt))
        owed = deck.answers_owed(dealer)
        if dealt is None or not owed:
            return
        members = deck.members
        past = self._past
        if self._forked & set(members):
            return
        held = past.held(dealer, event.seq)
        if held is None:
            return
        votes = [
            v
            for v in self._votes.get(number, ())
            if held[v.seat] >= v.seq and (v.seat, v.seq) != (event.seat, event.seq)
        ]
        debts = [d for d in self._debts.get(dealer, ()) if d[0] < event.lamport]
        drops = _drops_read(votes, held, members, dealer, past, debts=debts)
        if drops is None or (past.masked & set(members)) - {dealer} - drops.out:
            return
        left = tuple(m for m in members if m not in drops.out)
        for complainer in owed:
            where = (number, attempt, deck.member(dealer), complainer)
            complaint = self._complaints.get(where)
            if complaint is None or where in self._named or held[complaint.seat] < complaint.seq:
                continue
            time = max(complaint.lamport, dealt, drops.decided)
            if time > drops.frozen or not self._final_at(held, left, dealer, time):
                continue
            self._named.add(where)
            self._name_played(event, complaint, where, time=time, out=drops.out)

    def _name_played(
        self,
        event: Event,
        complaint: Event,
        where: tuple[int, int, int, int],
        *,
        time: int,
        out: frozenset[int],
    ) -> None:
        """Name the answer to ``complaint`` (``where``: round, attempt, dealer, complainer)
        withheld on ``event``, the dealer's move or vote (:meth:`play`) whose causal past
        proves the dealer's stable time at ``time`` (the members ``out`` out of it)."""
        number, _, _, complainer = where
        what = "move" if isinstance(event.body, Play) else "vote"
        about = self._found.about(event)
        about.setdefault("round", number)  # (a vote names no round of its own)
        gone = "".join(f"; seat {x}'s drop decided in it" for x in sorted(out))
        self._found.add(
            Finding(
                FindingKind.WITHHELD_ANSWER,
                f"signed this {what} once its final fold held the complaint of its box by "
                f"seat {complaint.seat} (seq {complaint.seq}; every member's events past "
                f"lamport {time}, each announcing all before it, in its causal past{gone}), "
                "which it never answered",
                expected=f"deck_answer to member {complainer} before this event",
                found="no answer",
                **about,
            )
        )

    def _final_at(
        self, held: tuple[int, ...], members: tuple[int, ...], dealer: int, time: int
    ) -> bool:
        """Whether the causal past ``held`` of ``dealer``'s event proves its stable time at or
        above ``time`` with the members ``members`` (docs/protocol.md §7.1): it holds an event
        of each other member timed at or above it (``known``), and the last event it holds of
        each announced every member's events timed at or below it (the coverage)."""
        past = self._past
        below = {q: past.up_to(q, time) for q in members}
        for r in members:
            if r == dealer:
                continue
            last = held[r]
            lamport = past.lamport(r, last) if last else None
            if lamport is None or lamport < time:
                return False
            frontier = past.frontier(r, last)
            assert frontier is not None
            for q in members:
                if (last if q == r else frontier[q]) < below[q]:
                    return False
        return True


def _drops_read(
    votes: list[_Vote],
    held: tuple[int, ...],
    members: tuple[int, ...],
    dealer: int,
    past: CausalPast,
    *,
    debts: Sequence[tuple[int, int, Beat]] = (),
) -> _Drops | None:
    """What the drop events ``votes`` (of the round, in the causal past ``held`` of
    ``dealer``'s event, the event itself left out) do to the dealer's stable time when it
    signed (docs/protocol.md §7.1, §7.4, §9.2); ``None`` where it cannot be bounded.

    An honest dealer announces all it holds, so its held fold is the fold of ``held``: what
    the votes there decide is what its finality reads. Votes that drop nobody (fewer voters
    of any one member than a strict majority of the deal's members and it, the fewest that can
    drop it) change no term of the stable time but the dealer's own freeze: having voted a member
    out counting ``v`` of its events, it makes none after them final (``frozen``: the time of
    the member's event ``v + 1``, less one). Another voter's freeze is in its frontiers,
    which the coverage reads already.

    A member ``x`` (not the dealer; of the deal, or dropped during it, which restarted the
    deal without it) the votes drop is out of the stable time once the drop is final
    (``settle``): the dealer holds ``x``'s feed up to the cut (``held[x]``, the largest count
    of the votes), every member still in voted it out, so the dealer takes none of them to
    hold more of its feed than its vote counts, whatever a beat said (:func:`_excluded`),
    and the stable time without ``x`` reached the drop's time (``decided``: the latest of the
    votes, no earlier than the one that decided it). Read only where every vote
    of the past is for silence or withholding against ``x`` by a member of the deal: no
    withdrawal (which lifts caps, moving the decision later), no readmission, no abandon, no
    vote of ``x``'s or against a voter (a cap on the voters)."""
    voters: dict[int, set[int]] = {}
    for vote in votes:
        if vote.reason is DropReason.ABANDON:
            return None
        if vote.reason is not DropReason.WITHDRAW:
            voters.setdefault(vote.target, set()).add(vote.seat)
    # (A member still in, or one a drop in the deal took out of this attempt's members: the
    # votes came from a roster of the members and it.)
    decided = [t for t, by in voters.items() if len(by) >= len({*members, t}) // 2 + 1]
    if not decided:
        frozen = _NEVER
        for vote in votes:
            if vote.seat == dealer and vote.reason is not DropReason.WITHDRAW:
                after = past.lamport(vote.target, vote.last_seq + 1)
                if after is not None:
                    frozen = min(frozen, after - 1)
        return _Drops(frozenset(), 0, frozen)
    if len(decided) > 1:
        return None
    (x,) = decided
    if x == dealer:
        return None
    if any(v.target != x or v.reason not in _DROPPING or v.seat not in members for v in votes):
        return None
    if not _excluded(x, votes, held, members, dealer, debts=debts):
        return None
    return _Drops(frozenset({x}), max(v.lamport for v in votes), _NEVER)


def _excluded(
    x: int,
    votes: list[_Vote],
    held: tuple[int, ...],
    members: tuple[int, ...],
    dealer: int,
    *,
    debts: Sequence[tuple[int, int, Beat]],
) -> bool:
    """Whether the dealer, holding the causal past ``held``, excludes ``x`` (voted out by
    ``votes``) once the time without it reaches them, whatever beats it took: it holds ``x``'s
    feed up to the cut (``finality.released``), and every event of ``x`` a member still in
    announced holding (``finality.unannounced``), a member's word taken no further than its
    vote against ``x`` counts (``finality.frozen_claims``, the freeze its receiver enforces,
    docs/protocol.md §9.2). Beats are not logged: a member that did not vote may have
    announced anything, and only a voter's word is bounded. (The dealer bounds it where it
    holds the voter's feed up to the last head the voter announced: trusted here, as no log
    holds that head, docs/shuffle.md §11.) Unless the dealer's log keeps, as a ``debt`` note
    timed before the event (``debts``: (Lamport time, author, beat)), a voter's signed beat
    announcing ``x``'s feed past its vote (``debts.past_freeze``) and a head of its own feed
    past what the event's past holds of it (``debts.owed_head``): the dealer then lacked that
    head and took the voter's word as said, as ``Finality._said`` does, and may have waited
    for an event of ``x`` nobody gave it. The voter broke its freeze, not the dealer."""
    counts: dict[int, int] = {}
    for vote in votes:
        counts[vote.seat] = max(counts.get(vote.seat, 0), vote.last_seq)
    cut = {x: max(counts.values())}
    n = len(held)
    feeds = [range(h) for h in held]
    frozen = {
        r: count
        for r, count in counts.items()
        if not any(
            a == r and owed_head(r, beat) > held[r] and past_freeze(r, beat, {x: counts})
            for _, a, beat in debts
        )
    }
    said = frozen_claims([(0 if r == dealer else _NEVER,) * n for r in range(n)], {x: frozen})
    out = {r for r in range(n) if r not in members}
    return bool(released(cut, feeds)) and bool(unannounced(cut, feeds, said, out))


def _unproven(body: Drop, spec: GameSpec) -> bool:
    """Whether every fold refuses the vote ``body`` for its proof (``unproven_vote``)."""
    unproven = vote_unproven(body, game_id=spec.game_id, roster=spec.peer_ids, seats=spec.seats)
    return bool(unproven)
