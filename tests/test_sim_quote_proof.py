"""A liar's vote on proof quoting ahead (the fuzzer's ``quote_proof``, session 38), beside an
honest member crashed, at two to five players.

``quote_proof`` is ``quote_ahead`` (``tests/test_sim_quote_ahead.py``) told on proof: its own
copies' ids of the member heard last up to what it holds, one to three made-up ones past,
and a fork just past its count. No log holds a proof of it. Session 37 saw, at three players
with the first honest seat crashed for good, seed 0 name the crashed member
``unproven_drop`` (and its forfeit ``untraced_forfeit``), and seed 1 name an honest member
for an ``equivocation`` of its own event and never end. Traced in session 38
(docs/protocol.md §9.2, *a member proven to cheat*; §13):

* seed 1: the liar voted both other members out on proof, and each vote excepted its target
  from the other's drop (a member its voters all voted out is not needed), so the liar's word
  alone dropped them both, the honest one on a kept chain of made-up ids: its held view
  dropped itself, the game never ended, and the audit read its real event off the kept chain
  as a fork. The exception now needs a vote for another reason than proof, or a majority's;
* seed 0: the crashed member was dropped by the liar's vote on proof and an honest vote for
  silence, a majority: a drop that stands, the liar's vote named ``unproven_vote``; the audit
  named the crashed member wronged.

At two players the liar's vote on proof alone dropped the honest member (every member left
had voted): no fold could tell it from a true proof, which was not in the vote, and the game
never ended. Since session 39 a vote on proof carries its proof (docs/protocol.md §9.2), the
liar's proves nothing (``sim.liars._forged_proof``), and every fold refuses it. One round, the
quick timers: a game is a second or two of CPU.
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.sim.liar_games import LiarRun, game, simulate
from p2p_nertz.sim.liars import Lie
from p2p_nertz.sim.network import Crash

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)

#: How long the crashed member is down: for good, shorter than the suspicion timer (1 s,
#: QUICK_TIMERS), and longer than the drop timer (3 s) and the phase timeout (6 s).
_DOWN = {"for good": None, "short": 0.5, "long": 8.0}


def _play(seed: int, players: int, down: str | None) -> tuple[LiarRun, int, int | None]:
    """The fuzzer's game ``seed`` at ``players`` with one ``quote_proof`` liar and, unless
    ``down`` is ``None``, the first honest seat crashing a second after the liar starts
    lying, down as :data:`_DOWN` says: the run, the liar's seat and the crashed seat."""
    config, liars = game(seed, players=(players, players), lies=(Lie.QUOTE_PROOF,))
    (liar,) = liars
    victim = None
    if down is not None:
        victim = next(s for s in range(players) if s != liar.seat)
        crash = Crash(victim, max(liar.at, 1.0) + 1.0, restart_after=_DOWN[down])
        faults = dataclasses.replace(config.faults, crashes=(crash,))
        config = dataclasses.replace(config, faults=faults)
    return simulate(config, liars), liar.seat, victim


def _honest_findings(run: LiarRun, liar: int) -> list[str]:
    audit = run.result.audit
    assert audit is not None
    return [f"{f.kind.value} {f.seat}" for f in audit.errors if f.seat != liar]


@pytest.mark.parametrize(
    ("players", "seed", "down", "before"),
    [
        (3, 0, "for good", "the crashed member named unproven_drop and untraced_forfeit"),
        (3, 1, "for good", "an honest member named for a fork; never ended"),
        (3, 1, "short", "an honest member dropped itself in its held view; never ended"),
        (3, 1, "long", "an honest member named for a fork; never ended"),
        (4, 0, "for good", ""),  # (held before too: another member of the class)
        (5, 0, "for good", "the crashed member named unproven_drop and untraced_forfeit"),
    ],
)
def test_sim_quote_proof_beside_a_crash_names_the_liar_alone(
    players: int, seed: int, down: str, before: str
) -> None:
    run, liar, victim = _play(seed, players, down)
    assert run.told[liar] > 0
    problems = [v for v in run.result.violations if not v.endswith(f"dropped seat {victim}")]
    assert problems == [], before
    assert run.result.finished
    assert _honest_findings(run, liar) == [], before
    audit = run.result.audit
    assert audit is not None
    assert FindingKind.UNPROVEN_VOTE in {f.kind for f in audit.errors if f.seat == liar}
    for seat, peer in enumerate(run.result.peers):
        if peer is None or seat == liar:
            continue
        assert set(peer.final.dropped) <= {victim}, f"seat {seat} dropped {peer.final.dropped}"
        assert set(peer.tentative.dropped) <= {victim}


@pytest.mark.parametrize("seed", [0, 1])
def test_sim_quote_proof_at_two_players_drops_nobody_and_ends(seed: int) -> None:
    """At two players the liar's vote on proof alone dropped the honest member in its own
    fold (every member left had voted; no fold could check the proof, which the vote did not
    carry), and the game never ended (session 38: 37 of 40 seeds; both seeds here). A vote on
    proof now carries its proof, and the liar's proves nothing: every fold refuses it
    (``unproven_vote``), the honest member stays in, and the game ends."""
    run, liar, _ = _play(seed, 2, None)
    assert run.told[liar] > 0
    honest = 1 - liar
    peer = run.result.peers[honest]
    assert peer is not None
    assert honest not in peer.final.dropped and honest not in peer.tentative.dropped
    assert run.result.finished
    assert run.result.violations == []
    audit = run.result.audit
    assert audit is not None
    accused = {(f.seat, f.kind) for f in audit.errors if f.kind.accuses}
    assert accused == {(liar, FindingKind.UNPROVEN_VOTE)}
