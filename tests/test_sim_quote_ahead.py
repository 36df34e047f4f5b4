"""A liar's vote for silence quoting ahead, at two, three and four players: refused when
folded, for counting past its own frontier (docs/protocol.md §9.2, *a vote's ids are its
voter's word*; ``roster.contradicts``, ``vote_contradicts``), before it can stand until the
member's events belie it.

Simulated games of the lie fuzzer (:mod:`p2p_nertz.sim.liar_games`), the lie fixed to session
37's ``quote_ahead``: a vote for silence counting one to three of a member's events past what
its liar holds, quoting its own copies' ids up to there and made-up ids past them, its
frontier naming what it holds. At three and four players an honest member crashes for good
a second after the liar starts lying, so that the votes drop someone. Before session 37 the
made-up ids stood and read against the honest votes as chains that part: the game never
ended, or the audit of every log reached another state; at two players the honest member
ended the game without the liar. Session 37 wrote two rules that each close it: the vote's
count past its frontier (join37, the first to meet it, in every fold: these games), and the
withdrawal of a vote at the member's event that belies it (quote37,
``roster.withdraw_unsigned``), which delivery lets only a vote on proof reach (its count may
pass its frontier; any vote is timed after every event its frontier names, §6.2): that rule
is tested on hand-built events in ``tests/test_roster_vote_ids.py``. One round, the quick
timers: a game is a second or two of CPU.
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
    there (the lie, not a later vote quoting ids counted)."""
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
    votes quoting ahead when it folded them (and nothing else), as the audit of every log
    does."""
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
        assert {(v.seat, v.code) for v in refused} == {(liar, RefusalCode.VOTE_CONTRADICTS)}
        # At least one of them quoted ahead (past its frontier, with made-up ids the member's
        # events later belie), refused when folded.
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
def test_sim_quote_ahead_a_vote_quoting_ahead_is_refused_when_folded(
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
    table until it ended the game without the liar. Refused, the round plays out."""
    run, liar, _ = _play(seed, 2, crash=False)
    _check(run, liar, None)
    assert all(p.final.dropped == {} for p in run.result.peers if p is not None), before


def test_sim_quote_ahead_two_votes_quoting_ahead_freeze_nothing() -> None:
    """``scripts/soak.py --liars --lie quote_ahead`` seed 92 (three players, no crash): the liar
    votes seat 1 out quoting ahead (its event 7), and again (its event 8). Taken, the votes
    froze the liar's announcements of seat 1 (the withdrawal at seat 1's event 6, read
    before the second vote, left its freeze standing for good: the game never ended;
    ``tests/test_roster_vote_ids.py`` has that order on values). Both refused when folded,
    nothing freezes."""
    config, liars = game(92, players=(2, 4), lies=QUOTE_LIES)
    run = simulate(config, liars)
    (liar,) = liars
    _check(run, liar.seat, None)
    for peer in run.result.peers:
        assert peer is not None
        assert freezes(peer.final.roster, 1) == {}
