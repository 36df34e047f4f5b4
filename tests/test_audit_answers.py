"""The audit's withheld-answer rule on a dealer's stage (docs/shuffle.md §6.3, §7.3;
:mod:`p2p_nertz.audit.answers`): a stage proves its dealer held a complaint of its box
unanswered only where the complaint was folded before the stage's input *and* the stage's
frontier names it. A stage may come from its author's held fold (every event delivered), not
only from its final fold; the held fold is used only while it owes no answer, so a complaint
the frontier does not name proves nothing."""

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


def _watch() -> tuple[AnswerWatch, Collector, SimpleNamespace]:
    spec = SimpleNamespace(
        members=[SimpleNamespace(name=f"p{s}", fingerprint=f"f{s}") for s in range(3)]
    )
    found = Collector(spec, {}, strict=False)  # type: ignore[arg-type]
    rs = SimpleNamespace(number=1, deck=_deck())
    watch = AnswerWatch(found)
    complaint = _event(_COMPLAINER, *_COMPLAINT, Kind.DECK_COMPLAIN, DeckComplain(1, _DEALER))
    watch.after(complaint, rs, (Phase.DEAL, Phase.DEAL), False)  # type: ignore[arg-type]
    return watch, found, rs


def _stage_input(lamport: int) -> Event:
    return _event(1, 4, lamport, Kind.DECK_STAGE, DeckStage(1, 1, 0, _EMPTY), held=5)


def _dealer_stage(held: int, lamport: int = 13) -> Event:
    return _event(_DEALER, 4, lamport, Kind.DECK_STAGE, DeckStage(1, 1, 1, _EMPTY), held=held)


def _named(watch: AnswerWatch, found: Collector, rs: SimpleNamespace, *events: Event) -> bool:
    """Fold ``events`` through the watch; whether it named a withheld answer."""
    for event in events:
        watch.before(event, rs)  # type: ignore[arg-type]
        watch.after(event, rs, (Phase.DEAL, Phase.DEAL), False)  # type: ignore[arg-type]
    return any(f.kind is FindingKind.WITHHELD_ANSWER for f in found.violations)


def test_audit_answers_a_stage_holding_the_complaint_unanswered_names_its_dealer() -> None:
    watch, found, rs = _watch()
    assert _named(watch, found, rs, _stage_input(12), _dealer_stage(held=_COMPLAINT[0]))
    (finding,) = found.violations
    assert finding.seat == _DEALER and finding.event == "deck_stage"


@pytest.mark.parametrize("held", [0, _COMPLAINT[0] - 1])
def test_audit_answers_a_stage_whose_frontier_lacks_the_complaint_names_nobody(
    held: int,
) -> None:
    """The dealer staged from a fold that had not delivered the complaint (a held input
    delivered before it, though the complaint is ordered first): an honest dealer."""
    watch, found, rs = _watch()
    assert not _named(watch, found, rs, _stage_input(12), _dealer_stage(held=held))


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
