"""Simulated shuffle games with a cheater (docs/shuffle.md §7.4, :mod:`p2p_nertz.sim.cheats`):
the honest peers catch it where the protocol allows (on arrival, by the vote for a withheld
share, or after the round), every invariant holds for them, and the audit of the logs names
the culprit. One game per cheat at two and three players (the sweep is ``scripts/soak.py
--deal shuffle --deck-cheats``)."""

from __future__ import annotations

import functools

import pytest

from p2p_nertz.audit import AuditReport, FindingKind
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import GameState, Phase, RefusalCode
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, SimConfig, SimResult, run
from p2p_nertz.sim.cheats import DeckCheat, DeckCheatKind
from p2p_nertz.sim.network import Crash

K = FindingKind
C = DeckCheatKind


#: a seed per table size whose games are short (CPU: 2.7 to 5.5 s a game at three players)
_SEEDS = {2: 1, 3: 3}


@functools.cache
def _game(
    players: int, kind: DeckCheatKind, crash: float | None = None
) -> tuple[SimResult, AuditReport]:
    """One game with the last seat cheating; ``crash``: seat 0 dies then, for ever."""
    culprit = players - 1
    crashes = () if crash is None else (Crash(0, crash, restart_after=None),)
    result = run(
        SimConfig(
            players=players,
            seed=_SEEDS[players],
            deal=Deal.SHUFFLE,
            rules=Rules(target=None, rounds=1),
            peer=QUICK_TIMERS,
            faults=Faults(deck_cheats=(DeckCheat(culprit, kind),), crashes=crashes),
            max_time=200.0,
        )
    )
    assert result.audit is not None  # (the invariants' audit of every log)
    return result, result.audit


def _honest(result: SimResult) -> list[GameState]:
    """The final folds of the honest peers still running (a crashed peer has none)."""
    culprit = result.spec.seats - 1
    return [p.final for p in result.peers if p is not None and p.seat != culprit]


def _culprits(report: AuditReport, kind: FindingKind) -> set[int | None]:
    return {f.seat for f in report.errors if f.kind is kind}


@pytest.mark.parametrize("players", [2, 3])
def test_sim_shuffle_cheats_a_substituted_card_is_caught_after_the_round(players: int) -> None:
    result, report = _game(players, C.SUBSTITUTE)
    culprit = players - 1
    assert result.finished and result.violations == []
    for final in _honest(result):
        # The checks after the round re-run its stage: it forfeits the round (§7.4).
        rs = final.past_rounds[-1] if final.past_rounds else final.round
        assert culprit in rs.forfeit
        codes = {(v.seat, v.code) for v in final.violations}
        assert codes == {(culprit, RefusalCode.BAD_SHUFFLE)}
    assert _culprits(report, K.BAD_SHUFFLE) == {culprit}
    assert {f.seat for f in report.errors} == {culprit}


@pytest.mark.parametrize("players", [2, 3])
def test_sim_shuffle_cheats_a_bad_share_is_refused_and_its_author_voted_out(players: int) -> None:
    result, report = _game(players, C.BAD_SHARE)
    culprit = players - 1
    assert result.finished and result.violations == []
    for final in _honest(result):
        assert {(v.seat, v.code) for v in final.violations} == {(culprit, RefusalCode.BAD_SHARE)}
        # Its share never comes right: voted out withheld (three members: dropped, its shares
        # opened for it; two: the one left abandons).
        assert culprit in final.dropped
    assert _culprits(report, K.BAD_SHARE) == {culprit}
    assert {f.seat for f in report.errors} == {culprit}


@pytest.mark.parametrize("players", [2, 3])
def test_sim_shuffle_cheats_a_withheld_share_is_voted_out(players: int) -> None:
    result, report = _game(players, C.WITHHOLD)
    culprit = players - 1
    assert result.finished and result.violations == []
    for final in _honest(result):
        assert culprit in final.dropped
        if players == 2:
            assert final.abandoned is not None  # (the round void)
            continue
        # The members left opened its shares for it (§6.4), and it forfeits the round.
        rs = final.round
        deck = rs.deck
        assert deck is not None and culprit in rs.forfeit
        assert set(deck.opened) == set(deck.turned) and None not in deck.opened.values()
    assert culprit in {seat for seat, _ in report.dropped}
    assert not report.errors


def _clean(result: SimResult, report: AuditReport) -> None:
    """With two members there is no VSS dealing: no box to spoil, no partial to withhold. The
    cheat has nothing to act on, and the game is an honest one."""
    assert result.finished and result.violations == []
    for final in _honest(result):
        assert not final.dropped and final.abandoned is None and not final.violations
    assert not report.errors and not report.dropped


@pytest.mark.parametrize("players", [2, 3])
def test_sim_shuffle_cheats_a_withheld_answer_to_a_complaint_is_voted_out(players: int) -> None:
    """docs/shuffle.md §6.3: the culprit boxes garbage to seat 0, which complains, and never
    answers: voted out *withheld* ``phase_timeout`` after the complaint, it forfeits the round.
    Its secret cannot be rebuilt (seat 0 holds no share of it), so the audit lists the drop,
    with its votes, and names no fault (the logs hold no times)."""
    result, report = _game(players, C.WITHHOLD_ANSWER)
    if players == 2:
        _clean(result, report)
        return
    culprit = players - 1
    assert result.finished and result.violations == []
    for final in _honest(result):
        assert culprit in final.dropped and not final.violations
        rs = final.past_rounds[-1] if final.past_rounds else final.round
        deck = rs.deck
        assert deck is not None and deck.unanswered() == [(deck.member(culprit), 0)]
        assert culprit in rs.forfeit
    assert culprit in {seat for seat, _ in report.dropped}
    assert not report.errors


@pytest.mark.parametrize(("players", "crash"), [(2, None), (3, 1.0), (3, 4.0)])
def test_sim_shuffle_cheats_a_withheld_partial_share_is_voted_out(
    players: int, crash: float | None
) -> None:
    """docs/shuffle.md §6.4: seat 0 dies for ever mid-round and is dropped; the culprit sends
    none of its partial shares for it, which the positions seat 0 had not shared need (with
    three members both left must send theirs). Voted out *withheld*: with two members left the
    vote makes it count as gone, and the one left abandons (the round void)."""
    result, report = _game(players, C.WITHHOLD_PARTIAL, crash)
    if players == 2:
        _clean(result, report)
        return
    culprit = players - 1
    assert result.finished and result.violations == []
    (final,) = _honest(result)
    assert 0 in final.dropped and culprit in final.dropped
    assert final.abandoned is not None and final.phase is Phase.OVER
    assert {seat for seat, _ in report.dropped} == {0, culprit}
    assert not report.errors
