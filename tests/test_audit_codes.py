"""The audit reads a refusal of the fold by its code, never by its words.

Each cheat below is signed by its author's own key in the logs of a real game; the audit names
it. The same logs audited with every refusal of the fold reworded (the words are for people)
must give the same findings, but for the words they quote.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import pytest

from p2p_nertz.audit import Finding, FindingKind
from p2p_nertz.audit.fold import Fold
from p2p_nertz.protocol import state
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.rounds import RoundState
from p2p_nertz.protocol.state import Event, Notice, Refused, Violation
from p2p_nertz.rules import Card
from p2p_nertz.rules.tableau import Tableau
from tests.audit_helpers import Game, Logs, events_of, played, rewrite

K = FindingKind


def _illegal_move(game: Game, logs: Logs) -> None:
    move = events_of(logs, 1, game.spec, Kind.MOVE)[3]
    frontier, number, _, _ = move.body  # type: ignore[misc]
    rewrite(game, logs, 1, move.seq, lambda m: {"body": [frontier, number, "1:9>2", []]})


def _move_of_another_round(game: Game, logs: Logs) -> None:
    move = events_of(logs, 1, game.spec, Kind.MOVE)[4]
    frontier, number, text, shown = move.body  # type: ignore[misc]
    rewrite(game, logs, 1, move.seq, lambda m: {"body": [frontier, number + 1, text, shown]})


def _unavailable_card(game: Game, logs: Logs) -> None:
    claim = next(
        c
        for c in events_of(logs, 2, game.spec, Kind.CLAIM)
        if Card.parse(c.body[3]).rank < 13  # type: ignore[index]
    )
    frontier, number, text, card_text, reveals = claim.body  # type: ignore[misc]
    card = Card.parse(card_text)
    other = str(Card(rank=card.rank + 1, suit=card.suit))
    rewrite(game, logs, 2, claim.seq, lambda m: {"body": [frontier, number, text, other, reveals]})


def _stacked_deck(game: Game, logs: Logs) -> None:
    reveal = next(
        e
        for e in events_of(logs, 0, game.spec, Kind.REVEAL)
        if e.body[2] == 1  # type: ignore[index]
    )
    frontier, number, what, _ = reveal.body  # type: ignore[misc]
    rewrite(game, logs, 0, reveal.seq, lambda m: {"body": [frontier, number, what, b"\x42" * 32]})


def _dealt_cards_swapped(game: Game, logs: Logs) -> None:
    ready = events_of(logs, 1, game.spec, Kind.READY)[0]
    frontier, number, visible = ready.body  # type: ignore[misc]
    shown = list(visible)
    shown[1], shown[2] = shown[2], shown[1]
    rewrite(game, logs, 1, ready.seq, lambda m: {"body": [frontier, number, shown]})


def _stock_shown_reordered(game: Game, logs: Logs) -> None:
    turns = [
        (seat, e)
        for seat in range(game.spec.seats)
        for e in events_of(logs, seat, game.spec, Kind.MOVE)
        if e.body[2] == "S" and len(e.body[3]) == 3  # type: ignore[index]
    ]
    if not turns:
        pytest.fail("no stock turn to reorder")
    seat, event = turns[-1]
    frontier, number, text, shown = event.body  # type: ignore[misc]
    swapped = [shown[1], shown[0], shown[2]]
    rewrite(game, logs, seat, event.seq, lambda m: {"body": [frontier, number, text, swapped]})


def _wrong_result(game: Game, logs: Logs) -> None:
    result = events_of(logs, 2, game.spec, Kind.RESULT)[0]
    frontier, number, digest, scores = result.body  # type: ignore[misc]
    lie = [s + 10 if seat == 2 else s for seat, s in enumerate(scores)]
    rewrite(game, logs, 2, result.seq, lambda m: {"body": [frontier, number, digest, lie]})


CHEATS: dict[str, tuple[Callable[[Game, Logs], None], FindingKind]] = {
    "illegal_move": (_illegal_move, K.ILLEGAL_MOVE),
    "another_round": (_move_of_another_round, K.REFUSED),
    "unavailable_card": (_unavailable_card, K.UNAVAILABLE_CARD),
    "stacked_deck": (_stacked_deck, K.REVEAL_MISMATCH),
    "dealt_cards": (_dealt_cards_swapped, K.DECK_MISMATCH),
    "stock_shown": (_stock_shown_reordered, K.DECK_MISMATCH),
    "wrong_result": (_wrong_result, K.RESULT_MISMATCH),
}


def _reworded(reason: str) -> str:
    """Other words for a refusal, keeping its code (if the reason carries one)."""
    words = f"NO ENGLISH HERE {len(reason)}"
    code = getattr(reason, "code", None)
    reason_type = getattr(state, "Reason", None)
    return reason_type(code, words) if code is not None and reason_type is not None else words


@pytest.fixture
def reworded_fold(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every refusal the fold reports (by an event, or by the replay against the decks), in
    other words."""
    notice = Fold._notice  # (the audit's, interpreted on both builds: its fold's every notice)

    def notice_reworded(
        self: Fold, event: Event, n: Notice, rs: RoundState, before: Tableau | None
    ) -> None:
        if isinstance(n, Refused):
            n = Refused(dataclasses.replace(n.violation, reason=_reworded(n.violation.reason)))
        notice(self, event, n, rs, before)

    monkeypatch.setattr(Fold, "_notice", notice_reworded)
    yield


def _without_words(findings: tuple[Finding, ...]) -> list[Finding]:
    return [dataclasses.replace(f, detail="") for f in findings]


@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_audit_codes_rewording_the_folds_refusals_changes_no_finding(
    cheat: str, request: pytest.FixtureRequest
) -> None:
    game = played()
    make, expected = CHEATS[cheat]
    logs = game.copy()
    make(game, logs)
    plain = game.audit(logs)
    assert expected in {f.kind for f in plain.violations}, [str(f) for f in plain.violations]
    request.getfixturevalue("reworded_fold")
    reworded = game.audit(logs)
    # (The rewording did happen: the findings quoting the fold's words read otherwise.)
    assert any("NO ENGLISH HERE" in f.detail for f in reworded.violations)
    assert _without_words(reworded.violations) == _without_words(plain.violations)


def test_audit_codes_every_refusal_of_the_fold_carries_a_code() -> None:
    # A refusal made of words alone (an old value, or a test's) reads as the catch-all code.
    assert Violation(1, 4, Kind.MOVE, "some words").code is state.RefusalCode.INVALID
    reason = state.Reason(state.RefusalCode.CARD_NOT_THERE, "claims 5H from W1")
    violation = Violation(1, 4, Kind.CLAIM, reason)
    assert violation.code is state.RefusalCode.CARD_NOT_THERE
    # The words read, compare and print as before: the code rides along.
    assert violation == Violation(1, 4, Kind.CLAIM, "claims 5H from W1")
    assert str(violation) == "seat 1 event 4 (claim): claims 5H from W1"
    assert repr(reason) == repr("claims 5H from W1")
