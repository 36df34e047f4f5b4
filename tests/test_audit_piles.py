"""The audit on signed plays that name a work pile the rules do not have: a finding, no crash.

The notation has work piles 1 to 6 and a body's parser accepts them all; a game of four work
piles has no pile 5 or 6. A cheater can sign such a play with its own key: the audit must name
it like any illegal move (it once raised from the fold's bookkeeping for a claim).
"""

from __future__ import annotations

from p2p_nertz.audit import FindingKind
from p2p_nertz.protocol.envelope import Kind
from tests.audit_helpers import events_of, played, rewrite


def test_audit_claim_from_a_work_pile_the_rules_do_not_have_is_an_illegal_move() -> None:
    game = played()
    assert game.spec.rules.work_piles == 4
    logs = game.copy()
    claim = events_of(logs, 2, game.spec, Kind.CLAIM)[0]
    assert isinstance(claim.body, tuple)
    frontier, number, text, card, _ = claim.body
    assert isinstance(text, str)
    forged = f"6>L@{text.partition('@')[2]}"
    rewrite(game, logs, 2, claim.seq, lambda m: {"body": [frontier, number, forged, card, []]})

    report = game.audit(logs)

    illegal = [v for v in report.violations if v.kind is FindingKind.ILLEGAL_MOVE]
    assert illegal, [str(v) for v in report.violations]
    assert (illegal[0].seat, illegal[0].seq, illegal[0].move) == (2, claim.seq, forged)
    assert "no work pile 6" in illegal[0].detail
    assert report.exit_status == 1


def test_audit_move_from_a_work_pile_the_rules_do_not_have_is_an_illegal_move() -> None:
    game = played()
    logs = game.copy()
    move = events_of(logs, 1, game.spec, Kind.MOVE)[2]
    assert isinstance(move.body, tuple)
    frontier, number, _, _ = move.body
    rewrite(game, logs, 1, move.seq, lambda m: {"body": [frontier, number, "5>2", []]})

    report = game.audit(logs)

    illegal = [v for v in report.violations if v.kind is FindingKind.ILLEGAL_MOVE]
    assert illegal, [str(v) for v in report.violations]
    assert (illegal[0].seat, illegal[0].seq, illegal[0].move) == (1, move.seq, "5>2")
    assert report.exit_status == 1
