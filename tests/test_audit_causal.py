"""What an event proves its author held (:mod:`p2p_nertz.protocol.causal`), and the audit's
withheld-answer rule on a dealer's move (docs/shuffle.md §6.3, §7.3; :meth:`AnswerWatch.play
<p2p_nertz.audit.answers.AnswerWatch.play>`): a move proves the answer withheld only where its
causal past proves the dealer's *final* fold held the complaint (every member held past it,
each announcing every member's events up to it), unanswered."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from p2p_nertz.audit.answers import AnswerWatch
from p2p_nertz.audit.collect import Collector
from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.deck.wire import DeckAnswer, DeckComplain
from p2p_nertz.protocol.bodies import DeckEvent, Drop, DropReason, Play
from p2p_nertz.protocol.causal import CausalPast
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.fold_values import Event
from p2p_nertz.protocol.roster import CountedIds
from p2p_nertz.protocol.shuffle import DeckRound
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Move

# -- the held vector -----------------------------------------------------------------------


def test_causal_past_holds_what_the_named_events_held_transitively() -> None:
    past = CausalPast(4)
    past.take(0, 1, 1, (0, 0, 0, 0))
    past.take(1, 1, 2, (1, 0, 0, 0))
    past.take(2, 1, 3, (0, 1, 0, 0))
    past.take(3, 1, 4, (0, 0, 1, 0))  # names seat 2's, which named seat 1's, which named 0's
    assert past.held(3, 1) == (1, 1, 1, 0)
    assert past.frontier(3, 1) == (0, 0, 1, 0)


def test_causal_past_keeps_what_its_own_earlier_events_held() -> None:
    past = CausalPast(3)
    past.take(0, 1, 1, (0, 0, 0))
    past.take(0, 2, 2, (1, 0, 0))
    past.take(1, 1, 3, (2, 0, 0))
    past.take(2, 1, 4, (0, 1, 0))
    past.take(2, 2, 5, (0, 1, 1))  # (its frontier's seat 0 entry is still 0)
    assert past.held(2, 2) == (2, 1, 1)


def test_causal_past_reads_no_held_vector_through_a_masked_feed() -> None:
    """Of a member dropped or forked a peer may deliver an event naming more than it holds
    (docs/protocol.md §6.2): its events' vectors are not read through, and its entry comes
    from the author's own frontiers only."""
    past = CausalPast(3, masked={1})
    past.take(0, 1, 1, (0, 0, 0))
    past.take(1, 1, 2, (1, 0, 0))
    past.take(2, 1, 3, (0, 1, 0))
    assert past.held(2, 1) == (0, 1, 0)
    past.take(0, 2, 4, (1, 1, 0))
    past.take(2, 2, 5, (2, 1, 0))  # seat 0's event 2 held seat 1's event 1: not read through
    assert past.held(2, 2) == (2, 1, 0)


def test_causal_past_fills_a_missing_event_with_a_lower_bound() -> None:
    past = CausalPast(2)
    past.take(0, 1, 1, (0, 0))
    past.take(1, 1, 2, (1, 0))
    past.take(1, 3, 6, (1, 2))  # (event 2 of seat 1 never taken)
    assert past.count(1) == 3
    assert past.held(1, 2) == (1, 0)
    assert past.held(1, 3) == (1, 2)
    past.take(1, 2, 4, (1, 1))  # out of its feed's turn: skipped
    assert past.frontier(1, 2) == (1, 0)
    assert past.up_to(1, 2) == 2 and past.up_to(1, 5) == 2 and past.up_to(1, 6) == 3


def test_causal_past_refuses_nothing_it_cannot_read() -> None:
    past = CausalPast(2)
    past.take(0, 1, 1, (0, 0, 0))  # (not this game's shape)
    assert past.count(0) == 0 and past.held(0, 1) is None and past.lamport(0, 1) is None


# -- a dealer's moves ------------------------------------------------------------------------

# Three members (seats 0, 1, 2). Seat 2 deals a box seat 0 complains of (seq 5, Lamport 10);
# the deal was dealt at Lamport 2. Every feed's events 1..3 are timed at or below 9.
_DEALER, _COMPLAINER = 2, 0
_MOVE = Move.parse("S")


def _setup(
    *, answered: bool = False, masked: tuple[int, ...] = ()
) -> tuple[AnswerWatch, Collector, SimpleNamespace]:
    """The answer watch of the audit's fold over the deal (``masked``: members whose feeds
    the causal past reads from their authors' frontiers alone), the findings, the round."""
    spec = SimpleNamespace(
        members=[SimpleNamespace(name=f"p{s}", fingerprint=f"f{s}") for s in range(3)]
    )
    found = Collector(spec, {}, strict=False)  # type: ignore[arg-type]
    deck = DeckRound((0, 1, 2), b"context" + bytes([0]), 0)
    deck.complaints[(_DEALER, _COMPLAINER)] = 1 if answered else None
    rs = SimpleNamespace(number=1, deck=deck, forfeit=frozenset())
    past = CausalPast(3, masked)
    watch = AnswerWatch(found, past)
    for seat in range(3):
        for seq in range(1, 4):
            past.take(seat, seq, 3 * seq + seat - 2, (3,) * 3 if seq == 3 else (0,) * 3)
    dealt = Event(0, 3, 9, Kind.DECK_KEY, DeckEvent((2, 2, 2), None))  # type: ignore[arg-type]
    watch.after(dealt, rs, (Phase.KEY, Phase.DEAL), False)  # type: ignore[arg-type]
    rs.past = past
    return watch, found, rs


def _take(watch: AnswerWatch, rs: SimpleNamespace, event: Event) -> None:
    watch.walked(event, rs.number)
    if isinstance(event.body, Play):
        watch.play(event, rs, Phase.PLAY)  # type: ignore[arg-type]
    else:
        watch.before(event, rs)  # type: ignore[arg-type]
    watch.after(event, rs, (Phase.PLAY, Phase.PLAY), False)  # type: ignore[arg-type]


def _complaint(watch: AnswerWatch, rs: SimpleNamespace) -> None:
    body = DeckEvent((4, 3, 3), DeckComplain(1, _DEALER))
    _take(watch, rs, Event(_COMPLAINER, 5, 10, Kind.DECK_COMPLAIN, body))


def _play(seat: int, seq: int, lamport: int, frontier: tuple[int, ...]) -> Event:
    return Event(seat, seq, lamport, Kind.MOVE, Play(frontier, 1, _MOVE))


def _withheld(found: Collector) -> list[str | None]:
    return [f.event for f in found.violations if f.kind is FindingKind.WITHHELD_ANSWER]


def test_audit_answers_a_move_once_the_complaint_is_final_at_its_dealer_names_it() -> None:
    """Seat 1 (at 11) and seat 0 (at 12) hold the complaint and announce every member's
    events up to it: the dealer's move naming both proves its final fold held the complaint,
    and an honest dealer answers in the act that made it final, before any move."""
    watch, found, rs = _setup()
    _complaint(watch, rs)
    _take(watch, rs, _play(1, 4, 11, (5, 3, 3)))
    _take(watch, rs, _play(0, 6, 12, (5, 4, 3)))
    _take(watch, rs, _play(_DEALER, 4, 13, (6, 4, 3)))
    assert _withheld(found) == ["move"]
    (finding,) = found.violations
    assert finding.seat == _DEALER and finding.seq == 4


def test_audit_answers_a_move_holding_the_complaint_through_a_third_member_not_final() -> None:
    """The dealer holds the complaint only through seat 1's event, which does not announce
    the dealer's own event 3: its stable time may be below the complaint, its final fold
    without it. An honest dealer moves on, its answer to come; not named."""
    watch, found, rs = _setup()
    _complaint(watch, rs)
    _take(watch, rs, _play(1, 4, 11, (5, 3, 2)))
    _take(watch, rs, _play(_DEALER, 4, 13, (4, 4, 3)))
    assert rs.past.held(_DEALER, 4)[_COMPLAINER] == 5  # (held, through seat 1's event)
    assert _withheld(found) == []


def test_audit_answers_a_move_without_every_member_past_the_complaint_names_nobody() -> None:
    """The dealer holds the complaint, but no event of seat 1 timed at or past it: something
    of seat 1's may still come before it (the stable time's first term). What the dealer held
    of seat 1 through seat 0's later event counts: naming that event, it is named."""
    watch, found, rs = _setup()
    _complaint(watch, rs)
    _take(watch, rs, _play(1, 4, 11, (5, 3, 3)))
    _take(watch, rs, _play(0, 6, 12, (5, 4, 3)))
    _take(watch, rs, _play(_DEALER, 4, 13, (5, 3, 3)))
    assert _withheld(found) == []
    _take(watch, rs, _play(_DEALER, 5, 14, (6, 3, 3)))  # (seat 0's event 6 held seat 1's 4)
    assert _withheld(found) == ["move"]


def test_audit_answers_a_move_after_the_answer_names_nobody() -> None:
    watch, found, rs = _setup(answered=True)
    _complaint(watch, rs)
    _take(watch, rs, _play(1, 4, 11, (5, 3, 3)))
    _take(watch, rs, _play(0, 6, 12, (5, 4, 3)))
    _take(watch, rs, _play(_DEALER, 4, 13, (6, 4, 3)))
    assert _withheld(found) == []


def test_audit_answers_a_move_holding_a_vote_that_drops_nobody_names_it() -> None:
    """A vote that drops nobody (seat 1's against the dealer: one voter of three) changes no
    term of the dealer's stable time: its voter's freeze is in its frontiers, which the
    coverage reads. The move proves the final fold as without it (until session 22 any vote
    in the round stopped the read)."""
    watch, found, rs = _setup()
    _complaint(watch, rs)
    vote = Drop((4, 3, 3), _DEALER, 3, DropReason.WITHHELD)
    watch.walked(Event(1, 4, 10, Kind.DROP, vote), 1)
    _take(watch, rs, _play(1, 5, 11, (5, 4, 3)))
    _take(watch, rs, _play(0, 6, 12, (5, 5, 3)))
    _take(watch, rs, _play(_DEALER, 4, 13, (6, 5, 3)))
    assert _withheld(found) == ["move"]


def test_audit_answers_a_move_holding_the_dealers_own_drop_names_nobody() -> None:
    """Seats 0 and 1 vote the dealer out (a strict majority of three): its held fold drops
    it, a drop not final holds its stable time back, and one final puts it out, answering
    nothing. Its move proves nothing; with seat 0's event a move instead of a vote, it
    does."""
    for second_vote in (False, True):
        watch, found, rs = _setup()
        _complaint(watch, rs)
        vote = Drop((4, 3, 3), _DEALER, 3, DropReason.WITHHELD)
        watch.walked(Event(1, 4, 10, Kind.DROP, vote), 1)
        _take(watch, rs, _play(1, 5, 11, (5, 4, 3)))
        if second_vote:
            vote = Drop((5, 5, 3), _DEALER, 3, DropReason.WITHHELD)
            watch.walked(Event(0, 6, 12, Kind.DROP, vote), 1)
        else:
            _take(watch, rs, _play(0, 6, 12, (5, 5, 3)))
        _take(watch, rs, _play(1, 6, 13, (6, 5, 3)))
        _take(watch, rs, _play(_DEALER, 4, 14, (6, 6, 3)))
        assert _withheld(found) == ([] if second_vote else ["move"]), second_vote


def test_audit_answers_a_move_past_the_dealers_own_vote_freeze_names_nobody() -> None:
    """The dealer voted seat 1 out counting 2 of its events, and holds seat 1's event 3
    (Lamport 8, before the complaint): having voted, it makes none of them final past its
    count (its own freeze, docs/protocol.md §7.1), so its stable time stays below 8 and its
    final fold without the complaint. Not named; the same move without the vote is."""
    for voted in (False, True):
        watch, found, rs = _setup()
        if voted:
            vote = Drop((3, 2, 3), 1, 2, DropReason.SILENT)
            watch.walked(Event(_DEALER, 4, 9, Kind.DROP, vote), 1)
        _complaint(watch, rs)
        _take(watch, rs, _play(1, 4, 11, (5, 3, 4)))
        _take(watch, rs, _play(0, 6, 12, (5, 4, 4)))
        _take(watch, rs, _play(_DEALER, 5, 13, (6, 4, 4)))
        assert rs.past.lamport(1, 3) == 8
        assert _withheld(found) == ([] if voted else ["move"]), voted


def test_audit_answers_an_answer_signed_names_nobody_later() -> None:
    watch, found, rs = _setup()
    _complaint(watch, rs)
    answer = DeckEvent((5, 3, 3), DeckAnswer(1, _COMPLAINER, 1))
    _take(watch, rs, Event(_DEALER, 4, 11, Kind.DECK_ANSWER, answer))
    _take(watch, rs, _play(1, 4, 12, (5, 3, 4)))
    _take(watch, rs, _play(0, 6, 13, (5, 4, 4)))
    _take(watch, rs, _play(_DEALER, 5, 14, (6, 4, 4)))
    assert _withheld(found) == []


# -- a dealer's votes ------------------------------------------------------------------------


def _vote(
    seat: int, seq: int, lamport: int, frontier: tuple[int, ...], reason: DropReason
) -> Event:
    body = Drop(frontier, _COMPLAINER, 5, reason)
    return Event(seat, seq, lamport, Kind.DROP, body)


def _take_vote(watch: AnswerWatch, rs: SimpleNamespace, event: Event) -> None:
    watch.walked(event, rs.number)
    watch.play(event, rs, Phase.PLAY)  # type: ignore[arg-type]
    watch.after(event, rs, (Phase.PLAY, Phase.PLAY), False)  # type: ignore[arg-type]


@pytest.mark.parametrize("reason", [DropReason.WITHHELD, DropReason.SILENT, DropReason.REJOIN])
def test_audit_answers_a_vote_once_the_complaint_is_final_at_its_dealer_names_it(
    reason: DropReason,
) -> None:
    """A vote for silence, withholding or readmission is signed at the end of an input, once
    its finality is done and what the final fold asked is signed (``Author.liveness``, after
    ``Author.act``): a dealer that signs only votes (here against its complainer) is named on
    the first whose causal past proves its final fold held the complaint, though the vote is
    the round's first."""
    watch, found, rs = _setup()
    _complaint(watch, rs)
    _take(watch, rs, _play(1, 4, 11, (5, 3, 3)))
    _take(watch, rs, _play(0, 6, 12, (5, 4, 3)))
    _take_vote(watch, rs, _vote(_DEALER, 4, 13, (6, 4, 3), reason))
    assert _withheld(found) == ["drop"]
    (finding,) = found.violations
    assert finding.seat == _DEALER and finding.seq == 4 and finding.round == 1


def test_audit_answers_a_vote_signed_mid_input_is_not_read() -> None:
    """A withdrawal and a vote on proof may be signed in the middle of an input, before its
    finality is done (the receive path asks for them; a proof vote on a member readmitted,
    before ``Author.act``); an abandon before the answers of its act: their past proves
    nothing of the final fold, and an honest dealer's answer may follow them."""
    for reason in (DropReason.WITHDRAW, DropReason.EQUIVOCATION, DropReason.ABANDON):
        watch, found, rs = _setup()
        _complaint(watch, rs)
        _take(watch, rs, _play(1, 4, 11, (5, 3, 3)))
        _take(watch, rs, _play(0, 6, 12, (5, 4, 3)))
        _take_vote(watch, rs, _vote(_DEALER, 4, 13, (6, 4, 3), reason))
        assert _withheld(found) == [], reason


def test_audit_answers_a_vote_the_dealer_does_not_hold_does_not_hide_its_move() -> None:
    """A drop vote holds back the stable time of the peers that hold it: one walked before
    the dealer's move but outside its causal past (seat 1's vote, signed after the events the
    dealer holds of it) did not hold the dealer's final fold back. Its next move, holding the
    vote, proves nothing."""
    watch, found, rs = _setup()
    _complaint(watch, rs)
    _take(watch, rs, _play(1, 4, 11, (5, 3, 3)))
    _take(watch, rs, _play(0, 6, 12, (5, 4, 3)))
    vote = Drop((6, 4, 3), _DEALER, 3, DropReason.WITHHELD)
    watch.walked(Event(1, 5, 13, Kind.DROP, vote), 1)
    assert rs.past.held(1, 5)[1] == 4
    _take(watch, rs, _play(_DEALER, 4, 14, (6, 4, 3)))
    assert _withheld(found) == ["move"]


def test_audit_answers_a_move_holding_a_vote_it_would_not_count_names_it() -> None:
    """The dealer's next move holds seat 1's vote against it, which drops nobody: read as
    without it (session 20 read nothing there)."""
    watch, found, rs = _setup()
    _complaint(watch, rs)
    _take(watch, rs, _play(1, 4, 11, (5, 3, 3)))
    _take(watch, rs, _play(0, 6, 12, (5, 4, 3)))
    vote = Drop((6, 4, 3), _DEALER, 3, DropReason.WITHHELD)
    watch.walked(Event(1, 5, 13, Kind.DROP, vote), 1)
    _take(watch, rs, _play(_DEALER, 4, 14, (6, 5, 3)))
    assert _withheld(found) == ["move"]


# -- what a dealer owed ----------------------------------------------------------------------


def test_audit_answers_owed_keeps_each_complaint_no_answer_followed() -> None:
    """What the report lists a dealer out as owing (``AuditReport.drops``): the complaint,
    until an answer (right or wrong) is folded."""
    watch, _, rs = _setup()
    _complaint(watch, rs)
    assert list(watch.owed) == [(1, 0, _DEALER, _COMPLAINER)]
    answer = DeckEvent((5, 3, 3), DeckAnswer(1, _COMPLAINER, 1))
    _take(watch, rs, Event(_DEALER, 4, 11, Kind.DECK_ANSWER, answer))
    assert watch.owed == {}


def test_audit_answers_owed_forgets_a_complaint_of_an_attempt_restarted() -> None:
    """A deal restarted (attempt 1) asks nothing more of attempt 0's boxes."""
    watch, _, rs = _setup()
    _complaint(watch, rs)
    rs.deck = DeckRound((0, 1, 2), b"context" + bytes([1]), 1)
    _take(watch, rs, _play(1, 4, 11, (5, 3, 3)))
    assert watch.owed == {}


def test_audit_answers_a_vote_the_fold_refuses_for_its_ids_drops_nobody() -> None:
    """As the test before, seat 0's vote the second of the majority, quoting the dealer's
    events 1 to 3: with the ids the fold counted, it drops the dealer (the move proves
    nothing); with the id at 3 made up, the fold refuses it (``vote_unsigned``,
    docs/protocol.md §9.2) and the walk reads it as no vote: the move proves the final fold
    held the complaint, and names the answer withheld."""
    counted = CountedIds(3)
    for seq in (1, 2, 3):
        counted.add(_DEALER, seq, bytes([48 + seq]) * 8)
    for made_up in (False, True):
        watch, found, rs = _setup()
        _complaint(watch, rs)
        vote = Drop((4, 3, 3), _DEALER, 3, DropReason.WITHHELD)
        watch.walked(Event(1, 4, 10, Kind.DROP, vote), 1, counted)
        _take(watch, rs, _play(1, 5, 11, (5, 4, 3)))
        ids = (b"1" * 8, b"2" * 8, b"x" * 8 if made_up else b"3" * 8)
        vote = Drop((5, 5, 3), _DEALER, 3, DropReason.WITHHELD, 0, ids)
        watch.walked(Event(0, 6, 12, Kind.DROP, vote), 1, counted)
        _take(watch, rs, _play(1, 6, 13, (6, 5, 3)))
        _take(watch, rs, _play(_DEALER, 4, 14, (6, 6, 3)))
        assert _withheld(found) == (["move"] if made_up else []), made_up
