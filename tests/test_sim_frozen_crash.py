"""A frontier lie beside a member gone for good (docs/protocol.md §9.2, *nobody is blamed
while a member is silent*; §13, session 37).

One liar names in its frontier an event nobody signed (``frontier_ahead``): every honest peer
holds its feed back from there (causal delivery), and with it the stable time. The first
honest seat crashes a second after the liar starts. §9.2 blames a member whose term holds
finality back only while every member still in is heard, and the crashed member stayed in
until its drop was final, which waited for that very stable time: the table waited for good,
an honest majority or not. A member the held votes drop (a majority of the standing votes,
decided) is now out for the blame rule, as for finality once decided (§7.4): the honest
majority votes the liar out *withheld*, and the game ends. Crashes shorter and longer than the
timers (the quick ones: suspect 1 s, drop 3 s, phase 6 s) end too. Without an honest majority
(three and four players: one or two honest running) no end is promised (§9.3), and no honest
member is dropped. One round, the quick timers: a few seconds of CPU a game; where an honest
majority ends it, the round is on six work piles (``SHORT_ROUND``, about half the moves; the
liar lies and the member crashes in play, asserted; session 42: the three majority games
still fail with the blame rule undone, the crash-length games pass with it undone on four
piles and six alike; the notes of what happened before the rule are of four piles' games).
"""

from __future__ import annotations

import dataclasses

import pytest
from cli_helpers import SHORT_ROUND

from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.rules import Rules
from p2p_nertz.sim.liar_games import LiarRun, game, simulate
from p2p_nertz.sim.liars import Lie
from p2p_nertz.sim.network import Crash

pytestmark = pytest.mark.timeout(600)  # (a hang guard, for a loaded machine)


def _game(
    seed: int, players: int, restart_after: float | None, rules: Rules | None = None
) -> tuple[LiarRun, int, int]:
    """The fuzzer's game ``seed`` at ``players``, one ``frontier_ahead`` liar, the first
    honest seat crashing a second after the liar starts (at 2 s at the earliest), restarting
    ``restart_after`` later or never: the run, the liar's seat and the crashed one's."""
    config, liars = game(seed, players=(players, players), lies=(Lie.FRONTIER_AHEAD,))
    (liar,) = liars
    victim = next(s for s in range(players) if s != liar.seat)
    crash = Crash(victim, max(liar.at, 1.0) + 1.0, restart_after=restart_after)
    faults = dataclasses.replace(config.faults, crashes=(crash,))
    config = dataclasses.replace(config, faults=faults, rules=rules or config.rules)
    return simulate(config, liars), liar.seat, victim


def _withheld_votes(run: LiarRun, voter: int, target: int) -> int:
    """How many votes *withheld* on ``target`` the peer ``voter`` signed."""
    peer = run.result.peers[voter]
    assert peer is not None
    players = len(run.result.peers)
    return sum(
        1
        for m in peer.events(voter)
        if m.kind is Kind.DROP
        and isinstance(body := parse_body(m.kind, m.body, players), Drop)
        and body.seat == target
        and body.reason is DropReason.WITHHELD
    )


@pytest.mark.parametrize(
    ("seed", "before"),
    [
        (0, "the honest three drop seat 0 at 26 by their votes; stable time stays at 163"),
        (1, "frozen the same"),
        (2, "ended before too: the rule must not break it"),
    ],
)
def test_sim_frozen_crash_an_honest_majority_votes_the_liar_out_beside_a_member_gone(
    seed: int, before: str
) -> None:
    run, liar, victim = _game(seed, 5, None, SHORT_ROUND)
    result = run.result
    assert run.told[liar] > 0 and result.crashes == 1  # (the case is built)
    assert [v for v in result.violations if not v.endswith(f"dropped seat {victim}")] == []
    assert result.finished, before
    honest = [s for s, p in enumerate(result.peers) if p is not None and s != liar]
    assert len(honest) == 3  # (the crashed member never comes back)
    # Every honest peer drops both, each at one cut; the honest voted the liar out withheld.
    for gone in (liar, victim):
        cuts = {result.peers[s].final.dropped.get(gone) for s in honest}  # type: ignore[union-attr]
        (cut,) = cuts
        assert cut is not None
    assert all(_withheld_votes(run, s, liar) > 0 for s in honest)


@pytest.mark.parametrize("restart_after", [0.5, 2.0, 5.0, 10.0])
@pytest.mark.parametrize(("players", "seed"), [(5, 0), (5, 1), (4, 0)])
def test_sim_frozen_crash_a_crash_shorter_or_longer_than_the_timers_ends_too(
    players: int, seed: int, restart_after: float
) -> None:
    """Back before suspicion (0.5 s), before a vote for silence (2 s), after one but before
    the phase wait (5 s), after it (10 s): the liar is voted out and the game ends, at four
    players too (three honest running once the member is back). The member that came back
    is dropped only where it was silent past ``drop_after`` (one round: no readmission)."""
    run, liar, victim = _game(seed, players, restart_after, SHORT_ROUND)
    result = run.result
    assert run.told[liar] > 0 and result.crashes == 1  # (the case is built)
    drop_after = game(seed, players=(players, players))[0].peer.drop_after  # (quick: 3 s)
    allowed = f"dropped seat {victim}" if restart_after > drop_after else None
    assert [v for v in result.violations if allowed is None or not v.endswith(allowed)] == []
    assert result.finished
    for s, peer in enumerate(result.peers):
        assert peer is not None
        if s != liar:
            assert liar in peer.final.dropped
            assert [q for q in peer.final.dropped if q != liar] in ([], [victim])


@pytest.mark.parametrize(("players", "seed"), [(3, 0), (3, 1), (4, 0), (4, 2)])
def test_sim_frozen_crash_without_an_honest_majority_no_honest_member_is_dropped(
    players: int, seed: int
) -> None:
    """One or two honest members running of three or four: the liar's vote on the crashed
    member is held back with its feed, the honest votes are no majority, and no end is
    promised (§9.3): the table waits. But no honest member running drops another, nor is
    dropped by the liar's votes *withheld* at an honest peer."""
    run, liar, _ = _game(seed, players, None)
    result = run.result
    assert [v for v in result.violations if not v.startswith(("freeze:", "termination:"))] == []
    honest = [s for s, p in enumerate(result.peers) if p is not None and s != liar]
    for s in honest:
        dropped = result.peers[s].final.dropped  # type: ignore[union-attr]
        assert not any(q in dropped for q in honest)
