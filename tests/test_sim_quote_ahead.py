"""A liar's vote folded before the member's events it quotes is withdrawn at the first of them
whose id it contradicts (docs/protocol.md §9.2, *a vote folded before the events it quotes*;
``roster.withdraw_unsigned``), at two, three and four players.

Simulated games of the lie fuzzer (:mod:`p2p_nertz.sim.liar_games`), the lie fixed to session
37's ``quote_ahead``: a vote for silence counting one to three of a member's events past what
its liar holds, quoting its own copies' ids up to there (nothing a fold refuses when it folds
the vote) and made-up ids past them. The member signs those events later, and the fold
counts them after the vote. At three and four players an honest member crashes for good a
second after the liar starts lying, so that the votes drop someone. Before the rule the
made-up ids stood and read against the honest votes as chains that part: the game never
ended, or the audit of every log reached another state; at two players the honest member
ended the game without the liar. One round, the quick timers: a game is a second or two
of CPU.
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.protocol.bodies import Drop, parse_body
from p2p_nertz.protocol.fold_values import RefusalCode
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.roster import freezes
from p2p_nertz.sim.liar_games import LiarRun, game, simulate
from p2p_nertz.sim.liars import QUOTE_LIES, Lie
from p2p_nertz.sim.network import Crash

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)


def _play(seed: int, players: int, *, crash: bool) -> tuple[LiarRun, int, int | None]:
    """The fuzzer's game ``seed`` at ``players`` with one ``quote_ahead`` liar (and, with
    ``crash``, the first honest seat crashing for good a second after the liar starts lying):
    the run, the liar's seat and the crashed seat."""
    config, liars = game(seed, players=(players, players), lies=(Lie.QUOTE_AHEAD,))
    (liar,) = liars
    victim = None
    if crash:
        victim = next(s for s in range(players) if s != liar.seat)
        down = Crash(victim, max(liar.at, 1.0) + 1.0, restart_after=None)
        config = dataclasses.replace(
            config, faults=dataclasses.replace(config.faults, crashes=(down,))
        )
    return simulate(config, liars), liar.seat, victim


def _quoted_ahead(peer: Peer, liar: int, seq: int) -> bool:
    """Whether the liar's event ``seq``, as ``peer`` holds it, is a vote quoting its target's
    events as ``peer`` holds them up to what the vote's frontier names, and another id past
    there: folded before the target's events it quotes (the rule's case), not after."""
    message = peer.events(liar)[seq - 1]
    body = parse_body(message.kind, message.body, peer.spec.seats)
    assert isinstance(body, Drop)
    target, held = body.seat, body.frontier[body.seat]
    ids = [m.id[:8] for m in peer.events(target)]
    first = body.last_seq - len(body.ids) + 1
    quoted = dict(enumerate(body.ids, first))
    below = all(quoted[s] == ids[s - 1] for s in quoted if s <= held)
    past = any(s <= len(ids) and quoted[s] != ids[s - 1] for s in quoted if s > held)
    return body.last_seq > held and below and past


def _check(run: LiarRun, liar: int, victim: int | None) -> None:
    """The run holds every invariant, and every honest peer's final fold refused the liar's
    votes quoting ahead (and nothing else), as the audit of every log does."""
    assert run.told[liar] > 0
    problems = run.result.violations
    assert [v for v in problems if not v.endswith(f"dropped seat {victim}")] == []
    assert run.result.finished
    audit = run.result.audit
    assert audit is not None
    assert {f.seat for f in audit.errors} == {liar}
    named = {f.seq for f in audit.errors if f.kind is FindingKind.REFUSED}
    for seat, peer in enumerate(run.result.peers):
        if peer is None or seat == liar:
            continue
        refused = peer.final.violations
        assert refused, "the lie never met the member's events it quoted"
        assert {(v.seat, v.code) for v in refused} == {(liar, RefusalCode.VOTE_UNSIGNED)}
        # At least one of them quoted ahead and was withdrawn when the member's event came
        # (the others, if any, were refused when folded: a later lie quoting ids counted).
        ahead = {v.seq for v in refused if _quoted_ahead(peer, liar, v.seq)}
        assert ahead and ahead <= named


@pytest.mark.parametrize(
    ("players", "seed", "before"),
    [
        (3, 0, "the audit of every log reached another state"),
        (3, 1, "not finished at 150 s"),
        (4, 0, "not finished at 150 s"),
        (4, 4, "the audit of every log reached another state"),
    ],
)
def test_sim_quote_ahead_a_vote_folded_before_the_events_it_quotes_is_withdrawn(
    players: int, seed: int, before: str
) -> None:
    run, liar, victim = _play(seed, players, crash=True)
    _check(run, liar, victim)
    assert victim is not None
    cuts = {p.final.dropped.get(victim) for p in run.result.peers if p is not None}
    (cut,) = cuts  # (every peer still running drops it, at one cut)
    assert cut is not None, before


@pytest.mark.parametrize(("seed", "before"), [(0, "dropped at 55"), (3, "dropped at 46")])
def test_sim_quote_ahead_at_two_players_the_table_plays_on_with_the_liar(
    seed: int, before: str
) -> None:
    """Nobody can be dropped from two; the liar's standing vote held the honest member's
    table until it ended the game without the liar. Withdrawn, the round plays out."""
    run, liar, _ = _play(seed, 2, crash=False)
    _check(run, liar, None)
    assert all(p.final.dropped == {} for p in run.result.peers if p is not None), before


def test_sim_quote_ahead_a_second_vote_signed_while_the_first_stood_freezes_nothing_after() -> None:
    """``scripts/soak.py --liars --quote-ahead`` seed 92 (three players, no crash): the liar
    votes seat 1 out quoting ahead (its event 7), and again (its event 8, never counted: its
    first stands) before seat 1's event 6 belies both. The withdrawal at that event was read
    before the second vote (keyed at the first's seq), whose freeze of the liar's
    announcements of seat 1 then stood for good: no event of seat 1 past 8 was final
    anywhere, and the game never ended. Read after it, as the liar's own withdrawal there
    would be, it lifts both."""
    config, liars = game(92, players=(2, 4), lies=QUOTE_LIES)
    run = simulate(config, liars)
    (liar,) = liars
    _check(run, liar.seat, None)
    for peer in run.result.peers:
        assert peer is not None
        assert freezes(peer.final.roster, 1) == {}
