"""The audit's withheld-answer rule on a dealer's stage (docs/shuffle.md §6.3, §7.3;
:mod:`p2p_nertz.audit.answers`): a stage proves its dealer held a complaint of its box
unanswered only where the complaint was folded before the stage's input *and* the stage's
causal past holds it (its frontier, or what the events its frontier names held in turn,
:mod:`p2p_nertz.protocol.causal`). A stage may come from its author's held fold (every event
delivered), not only from its final fold; the held fold is used only while it owes no
answer, so a complaint outside the stage's causal past proves nothing."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from p2p_nertz.audit.answers import AnswerWatch
from p2p_nertz.audit.collect import Collector
from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.deck.elgamal import Deck
from p2p_nertz.deck.wire import DeckAnswer, DeckComplain, DeckStage
from p2p_nertz.protocol.bodies import DeckEvent
from p2p_nertz.protocol.causal import CausalPast
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.fold_values import Event
from p2p_nertz.protocol.shuffle import DeckRound
from p2p_nertz.protocol.state import Phase

# Three members (seats 0, 1, 2). Seat 2 deals a box seat 0 complains of (seq 5, Lamport 10);
# seat 1 makes stage 0 of deck 1 (Lamport 12), the input of seat 2's stage 1 of deck 1.
_DEALER, _COMPLAINER = 2, 0
_COMPLAINT = (5, 10)  # seq, Lamport
_EMPTY = Deck(())


def _deck() -> DeckRound:
    deck = DeckRound((0, 1, 2), b"context" + bytes([0]), 0)
    deck.complaints[(_DEALER, _COMPLAINER)] = None
    return deck


def _event(seat: int, seq: int, lamport: int, kind: Kind, message: Any, *, held: int = 0) -> Event:
    """An event of ``seat`` whose frontier holds ``held`` events of seat 0 (the complainer)
    and every earlier event of the others."""
    frontier = (held, 4, 3)
    return Event(seat, seq, lamport, kind, DeckEvent(frontier, message))


_PAST: dict[int, CausalPast] = {}  # (each watch's causal past, by the watch's id)


def _watch(masked: tuple[int, ...] = ()) -> tuple[AnswerWatch, Collector, SimpleNamespace]:
    spec = SimpleNamespace(
        members=[SimpleNamespace(name=f"p{s}", fingerprint=f"f{s}") for s in range(3)]
    )
    found = Collector(spec, {}, strict=False)  # type: ignore[arg-type]
    rs = SimpleNamespace(number=1, deck=_deck())
    past = CausalPast(3, masked)
    watch = AnswerWatch(found, past)
    _PAST[id(watch)] = past
    complaint = _event(_COMPLAINER, *_COMPLAINT, Kind.DECK_COMPLAIN, DeckComplain(1, _DEALER))
    past.take(complaint.seat, complaint.seq, complaint.lamport, complaint.body.frontier)
    watch.after(complaint, rs, (Phase.DEAL, Phase.DEAL), False)  # type: ignore[arg-type]
    return watch, found, rs


def _stage_input(lamport: int, held: int = 5) -> Event:
    return _event(1, 4, lamport, Kind.DECK_STAGE, DeckStage(1, 1, 0, _EMPTY), held=held)


def _dealer_stage(held: int, lamport: int = 13) -> Event:
    return _event(_DEALER, 4, lamport, Kind.DECK_STAGE, DeckStage(1, 1, 1, _EMPTY), held=held)


def _named(watch: AnswerWatch, found: Collector, rs: SimpleNamespace, *events: Event) -> bool:
    """Fold ``events`` through the watch; whether it named a withheld answer."""
    past = _PAST[id(watch)]
    for event in events:
        past.take(event.seat, event.seq, event.lamport, event.body.frontier)
        watch.before(event, rs)  # type: ignore[arg-type]
        watch.after(event, rs, (Phase.DEAL, Phase.DEAL), False)  # type: ignore[arg-type]
    return any(f.kind is FindingKind.WITHHELD_ANSWER for f in found.violations)


def test_audit_answers_a_stage_holding_the_complaint_unanswered_names_its_dealer() -> None:
    watch, found, rs = _watch()
    assert _named(watch, found, rs, _stage_input(12), _dealer_stage(held=_COMPLAINT[0]))
    (finding,) = found.violations
    assert finding.seat == _DEALER and finding.event == "deck_stage"


@pytest.mark.parametrize("held", [0, _COMPLAINT[0] - 1])
def test_audit_answers_a_stage_whose_causal_past_lacks_the_complaint_names_nobody(
    held: int,
) -> None:
    """The dealer staged from a fold that had not delivered the complaint (a held input
    delivered before it, though the complaint is ordered first, and the input's author did
    not hold it either): an honest dealer."""
    watch, found, rs = _watch()
    early = _stage_input(12, held=held)
    assert not _named(watch, found, rs, early, _dealer_stage(held=held))


@pytest.mark.parametrize("held", [0, _COMPLAINT[0] - 1])
def test_audit_answers_a_stage_whose_input_held_the_complaint_names_its_dealer(
    held: int,
) -> None:
    """The stage's frontier names less of the complainer than the input it names held: its
    dealer delivered that input only once it held the complaint too (causal delivery), so
    announcing less does not take the stage out of the rule (docs/shuffle.md §11, session 19)."""
    watch, found, rs = _watch()
    assert _named(watch, found, rs, _stage_input(12), _dealer_stage(held=held))
    (finding,) = found.violations
    assert finding.seat == _DEALER and finding.event == "deck_stage"


def test_audit_answers_a_stage_reading_through_a_dropped_member_names_nobody() -> None:
    """Of a member dropped (or forked), a peer may deliver an event naming more of its feed
    than it holds (docs/protocol.md §6.2): the input's author is masked, and what it held is
    not read through."""
    watch, found, rs = _watch(masked=(1,))
    assert not _named(watch, found, rs, _stage_input(12), _dealer_stage(held=0))


def test_audit_answers_a_complaint_folded_after_the_input_proves_nothing() -> None:
    """Held by the frontier, but ordered after the input: a final fold holding the input
    need not hold the complaint (as before stages from a held input)."""
    watch, found, rs = _watch()
    early_input = _stage_input(_COMPLAINT[1] - 1)
    assert not _named(watch, found, rs, early_input, _dealer_stage(held=_COMPLAINT[0]))


def test_audit_answers_an_answer_before_the_stage_names_nobody() -> None:
    watch, found, rs = _watch()
    rs.deck.complaints[(_DEALER, _COMPLAINER)] = 1  # (the fold took the answer)
    answer = _event(_DEALER, 3, 11, Kind.DECK_ANSWER, DeckAnswer(1, _COMPLAINER, 1), held=5)
    stage = _dealer_stage(held=_COMPLAINT[0])
    assert not _named(watch, found, rs, answer, _stage_input(12), stage)
