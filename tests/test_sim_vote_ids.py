"""A liar's vote quoting ids it does not hold cuts no member below what is final (docs/protocol.md
§9.2, *a vote's ids are its voter's word*; §13, *Two liars at half the table*).

Simulated games of the lie fuzzer (:mod:`p2p_nertz.sim.liar_games`), the lie fixed: a vote for
silence counting a member's feed past what its voter holds, quoting made-up ids
(``vote_ahead``), or quoting one id changed (``vote_ids``). The liar's vote counts only once
the member is dropped, so each game here has one: an honest member that crashes for good (one
liar), or a liar dropped on proof or by the others (two liars). Before the rule, the drop cut
the member below events every honest peer had made final (at seq 0 or 1, below its join, or
below the wrong id): the game never ended there, or the audit of every log reached another
state. One round, the quick timers: about 0.3 to 0.6 s of CPU a game.
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.fold_values import RefusalCode
from p2p_nertz.sim.liar_games import LiarRun, game, simulate
from p2p_nertz.sim.liars import Lie
from p2p_nertz.sim.network import Crash

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)

_AHEAD, _IDS, _REUSE, _PAST = Lie.VOTE_AHEAD, Lie.VOTE_IDS, Lie.SEQ_REUSE, Lie.VOTE_PAST


def _with_crash(seed: int, players: int, lie: Lie) -> tuple[LiarRun, int]:
    """The fuzzer's game ``seed`` at ``players`` with one liar telling ``lie``, and the first
    honest seat crashing for good a second after the liar starts lying (at 2 s at the
    earliest): the others vote it out, the liar's vote among them."""
    config, liars = game(seed, players=(players, players), lies=(lie,))
    (liar,) = liars
    victim = next(s for s in range(players) if s != liar.seat)
    crash = Crash(victim, max(liar.at, 1.0) + 1.0, restart_after=None)
    faults = dataclasses.replace(config.faults, crashes=(crash,))
    return simulate(dataclasses.replace(config, faults=faults), liars), victim


@pytest.mark.parametrize(
    ("lie", "players", "seed", "before"),
    [
        (_AHEAD, 3, 1, "cut at 0, the game never ends"),
        (_AHEAD, 4, 5, "cut at 0, below its join: honest commits refused"),
        (_IDS, 3, 1, "cut at 14 (the wrong id at 15), the game never ends"),
        (_IDS, 4, 6, "cut at 1, the game never ends"),
    ],
)
def test_sim_vote_ids_one_liars_vote_on_a_crashed_member_cuts_it_where_the_honest_do(
    lie: Lie, players: int, seed: int, before: str
) -> None:
    run, victim = _with_crash(seed, players, lie)
    assert run.told[next(iter(run.told))] > 0
    # (The crashed member is honest: its drop is the one the liar checks must excuse.)
    assert [v for v in run.result.violations if not v.endswith(f"dropped seat {victim}")] == []
    assert run.result.finished, before
    cuts = {p.final.dropped.get(victim) for p in run.result.peers if p is not None}
    (cut,) = cuts  # (every peer still running drops it, at one cut)
    assert cut is not None and cut >= 1  # (its join, final everywhere, counts)


@pytest.mark.parametrize(
    ("players", "seed", "before"),
    [
        (3, 1, "cut at the liar's count, past all the member signed: the game never ends"),
        (4, 0, "the same at four players"),
        (5, 0, "the same at five, an honest majority of four"),
    ],
)
def test_sim_vote_ids_a_vote_counting_past_its_frontier_cuts_where_the_honest_do(
    players: int, seed: int, before: str
) -> None:
    """``vote_past`` (session 37): one liar quotes a member's own ids up to what it holds, its
    frontier naming that seq (nothing contradicts them), and counts one to three events
    past it with made-up ids. Beside an honest member crashed for good, its count was the
    highest and so the cut, on a chain no peer could fetch: the drop never final, the table
    waiting for good at every table size, an honest majority or not (docs/protocol.md §9.2).
    Every fold now refuses such a vote (``vote_contradicts``): the honest voters' count
    cuts, and the game ends."""
    run, victim = _with_crash(seed, players, _PAST)
    (liar,) = run.told
    assert run.told[liar] > 0
    assert [v for v in run.result.violations if not v.endswith(f"dropped seat {victim}")] == []
    assert run.result.finished, before
    honest = [p for s, p in enumerate(run.result.peers) if p is not None and s != liar]
    # The cut is the highest count of an honest vote on the member, read from the voters' own
    # feeds; the liar's vote on it refused in every honest fold.
    counts = [
        body.last_seq
        for p in honest
        for m in p.events(p.seat)
        if m.kind is Kind.DROP
        and isinstance(body := parse_body(m.kind, m.body, players), Drop)
        and body.seat == victim
        and body.reason in (DropReason.SILENT, DropReason.WITHHELD)
    ]
    assert counts
    assert {p.final.dropped.get(victim) for p in honest} == {max(counts)}
    for p in honest:
        assert (liar, RefusalCode.VOTE_CONTRADICTS) in {
            (v.seat, v.code) for v in p.final.violations
        }


@pytest.mark.parametrize(
    ("lies", "players", "seed", "pair", "before"),
    [
        # The soak's own game (--liars --two-liars --players 3-4; its seed 15, vote_ahead at
        # four players, is test_sim_liars.py's).
        (None, 4, 28, (Lie.FRONTIER_AHEAD, _IDS), "seat 2 cut at 14: the audit differed"),
        # Three players, the lies fixed.
        ((_AHEAD, _REUSE), 3, 2, (_AHEAD, _AHEAD), "the audit of every log differed"),
        ((_IDS, _REUSE), 3, 11, (_REUSE, _IDS), "the game never ended"),
    ],
)
def test_sim_vote_ids_two_liars_cut_nobody_below_what_is_final(
    lies: tuple[Lie, ...] | None,
    players: int,
    seed: int,
    pair: tuple[Lie, Lie],
    before: str,
) -> None:
    if lies is None:
        config, liars = game(seed, players=(3, 4), two=True)
    else:
        config, liars = game(seed, players=(players, players), two=True, lies=lies)
    assert (config.players, tuple(liar.lie for liar in liars)) == (players, pair)
    run = simulate(config, liars)
    assert run.result.violations == [], before
    assert run.result.finished
    # A vote that contradicted its own frontier was refused by every honest fold, and the
    # audit names its liar: nobody else.
    audit = run.result.audit
    assert audit is not None
    seats = {liar.seat for liar in liars}
    assert {f.seat for f in audit.errors} <= seats
    refused = {
        v.seat
        for p in run.result.peers
        if p is not None
        for v in p.final.violations
        if v.code is RefusalCode.VOTE_CONTRADICTS
    }
    assert refused <= {f.seat for f in audit.errors if f.kind is FindingKind.REFUSED}
