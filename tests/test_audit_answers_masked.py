"""A dealer's move read with a member masked: the member's drop decided in the move's causal
past (docs/shuffle.md §7.3, §11; :func:`p2p_nertz.audit.answers._drops_read`).

Three members (seats 0, 1, 2). Seat 2 deals a box seat 0 complains of (seq 4, Lamport 10);
the deal was dealt at Lamport 2; every feed's events 1..3 are timed at or below 9. Seat 1
falls silent after its event 3 and is masked (the audit's last pass dropped it): its feed is
read from each author's own frontiers only. Seats 0 and 2 vote it out counting 3 events, a
strict majority of three: once the dealer's past holds both votes, seat 1 is out of its stable
time as soon as the time without it reaches the votes, and a move of the dealer's whose past
proves that time past the complaint proves its final fold held it.
"""

from __future__ import annotations

from types import SimpleNamespace

from p2p_nertz.audit.answers import AnswerWatch
from p2p_nertz.audit.collect import Collector
from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.deck.wire import DeckAnswer, DeckComplain
from p2p_nertz.protocol.bodies import DeckEvent, Drop, DropReason, EventBody, Play
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.fold_values import Event
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Move
from tests.test_audit_causal import _setup as _dealt

_DEALER, _SILENT, _COMPLAINER = 2, 1, 0
_MOVE = Move.parse("S")


def _setup(masked: tuple[int, ...] = (_SILENT,)) -> tuple[AnswerWatch, Collector, SimpleNamespace]:
    """The deal of ``tests/test_audit_causal.py``'s dealer cases, ``masked`` read from its
    authors' frontiers alone, and the complaint taken."""
    watch, found, rs = _dealt(masked=masked)
    complaint = DeckEvent((3, 3, 3), DeckComplain(1, _DEALER))
    _take(watch, rs, Event(_COMPLAINER, 4, 10, Kind.DECK_COMPLAIN, complaint))
    return watch, found, rs


def _take(watch: AnswerWatch, rs: SimpleNamespace, event: Event) -> None:
    """Walk ``event`` and fold it, as ``audit.fold.Fold`` does."""
    watch.walked(event, rs.number)
    if isinstance(event.body, (Play, Drop)):
        watch.play(event, rs, Phase.PLAY)  # type: ignore[arg-type]
    else:
        watch.before(event, rs)  # type: ignore[arg-type]
    watch.after(event, rs, (Phase.PLAY, Phase.PLAY), False)  # type: ignore[arg-type]


def _event(seat: int, seq: int, lamport: int, body: EventBody) -> Event:
    kind = Kind.DROP if isinstance(body, Drop) else Kind.MOVE
    return Event(seat, seq, lamport, kind, body)


def _vote(frontier: tuple[int, ...], last: int = 3) -> Drop:
    return Drop(frontier, _SILENT, last, DropReason.SILENT)


def _play(frontier: tuple[int, ...]) -> Play:
    return Play(frontier, 1, _MOVE)


def _withheld(found: Collector) -> list[tuple[str | None, int | None]]:
    return [(f.event, f.seq) for f in found.violations if f.kind is FindingKind.WITHHELD_ANSWER]


def _both_vote(
    watch: AnswerWatch, rs: SimpleNamespace, *, seat0: EventBody | None = None, last: int = 3
) -> None:
    """Seat 0 votes seat 1 out (or signs ``seat0`` instead), then the dealer does, then seat
    0 signs a move announcing the dealer's vote."""
    _take(watch, rs, _event(0, 5, 11, seat0 if seat0 is not None else _vote((4, 3, 3), last)))
    _take(watch, rs, _event(_DEALER, 4, 12, _vote((5, 3, 3))))
    _take(watch, rs, _event(0, 6, 13, _play((5, 3, 4))))


def test_audit_answers_masked_a_move_once_the_drop_is_decided_names_the_dealer() -> None:
    """The dealer's vote holds only seat 0's: no drop decided, seat 1's term (its last event
    at 8) below the complaint, not named. Its move holds both votes and seat 0's move at 13,
    which announces every event of seats 0 and 2 up to 12: named on the move."""
    watch, found, rs = _setup()
    _both_vote(watch, rs)
    assert _withheld(found) == []
    _take(watch, rs, _event(_DEALER, 5, 14, _play((6, 3, 4))))
    assert _withheld(found) == [("move", 5)]
    (finding,) = found.violations
    assert finding.seat == _DEALER and "seat 1's drop decided" in finding.detail


def test_audit_answers_masked_an_answered_dealer_is_never_named() -> None:
    """The dealer answered before its vote: nothing withheld, whatever its move proves."""
    watch, found, rs = _setup()
    _take(watch, rs, _event(0, 5, 11, _vote((4, 3, 3))))
    answer = DeckEvent((5, 3, 3), DeckAnswer(1, _COMPLAINER, 1))
    _take(watch, rs, Event(_DEALER, 4, 12, Kind.DECK_ANSWER, answer))
    _take(watch, rs, _event(_DEALER, 5, 13, _vote((5, 3, 4))))
    _take(watch, rs, _event(0, 6, 14, _play((5, 3, 5))))
    _take(watch, rs, _event(_DEALER, 6, 15, _play((6, 3, 5))))
    assert _withheld(found) == []


def test_audit_answers_masked_a_drop_not_decided_reads_nothing() -> None:
    """Seat 0 signs a move, not a vote: the dealer's vote alone is no majority, seat 1 is
    still in its stable time (and masked): nothing is read."""
    watch, found, rs = _setup()
    _both_vote(watch, rs, seat0=_play((4, 3, 3)))
    _take(watch, rs, _event(_DEALER, 5, 14, _play((6, 3, 4))))
    assert _withheld(found) == []


def test_audit_answers_masked_a_cut_the_dealer_may_not_hold_reads_nothing() -> None:
    """Seat 0's vote counts 4 events of seat 1, the dealer's frontiers only 3: the cut is 4,
    and nothing shows the dealer held seat 1's event 4 (of a masked feed, only its own
    frontiers say): until it does, the drop is not final there, and seat 1 holds its stable
    time back."""
    watch, found, rs = _setup()
    _both_vote(watch, rs, last=4)
    _take(watch, rs, _event(_DEALER, 5, 14, _play((6, 3, 4))))
    assert _withheld(found) == []


def test_audit_answers_masked_a_withdrawal_in_the_past_reads_nothing() -> None:
    """A withdrawal lifts caps in the past, and may move a drop's decision later than its
    votes (``finality.decided_at``): with one in the dealer's past, nothing is read. With a
    move of seat 0's in its place, the dealer is named."""
    for withdrawn in (False, True):
        watch, found, rs = _setup()
        _both_vote(watch, rs)
        if withdrawn:
            _take(watch, rs, _event(0, 7, 14, Drop((6, 3, 4), _SILENT, 0, DropReason.WITHDRAW)))
        else:
            _take(watch, rs, _event(0, 7, 14, _play((6, 3, 4))))
        _take(watch, rs, _event(_DEALER, 5, 15, _play((7, 3, 4))))
        assert _withheld(found) == ([] if withdrawn else [("move", 5)]), withdrawn


def test_audit_answers_masked_a_member_masked_without_a_drop_in_the_round_reads_nothing() -> None:
    """Seat 1 masked (dropped in an earlier round and readmitted, say: a peer may have
    delivered an event naming more of its feed than it held) and no vote of this round: its
    entry is not read through, and nothing decides it out, so nothing is read. Unmasked, the
    same events name the dealer."""
    for masked in ((_SILENT,), ()):
        watch, found, rs = _setup(masked)
        _take(watch, rs, _event(1, 4, 11, _play((4, 3, 3))))
        _take(watch, rs, _event(0, 5, 12, _play((4, 4, 3))))
        _take(watch, rs, _event(_DEALER, 4, 13, _play((5, 4, 3))))
        assert _withheld(found) == ([] if masked else [("move", 4)]), masked
