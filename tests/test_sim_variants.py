"""The seeds the ``--variants`` soak found (issue 13): every rule variant drawn at random.

``scripts/soak.py --variants --seed N --games 1`` replays each; the rules it drew are written
out here, so that a change to how the soak draws them keeps these games as they were.
"""

from __future__ import annotations

from p2p_nertz.rules import Rules
from p2p_nertz.sim import SimConfig, check, observe, run
from p2p_nertz.sim.invariants import forks

#: 5 players; seat 0 crashes and restarts, seat 3 forks (a Nerts call to seat 1 alone, timed
#: below its real event, a vote against the sleeping seat 1), seat 1 sleeps 8 s.
SEED_893 = Rules(work_piles=6, target=None, rounds=1, rotate_alone=True, jokers=2)
#: 4 players; a partition, seat 2 crashes and restarts, seat 0 is drawn to fork (its fork is
#: lost in the network) and signs votes after the game's end that never leave it.
SEED_993 = Rules(
    draw=1,
    work_piles=6,
    nerts_bonus=10,
    nerts_card_penalty=1,
    target=None,
    rounds=1,
    rotate_alone=True,
    jokers=2,
)


def _soak(seed: int, rules: Rules) -> SimConfig:
    return SimConfig.soak(seed, rules=lambda _players, _rounds: rules)


def test_variants_seed_893_the_observer_follows_the_chain_the_votes_quote() -> None:
    """The cheater's real event at its forked seq is the vote that completes the drop of the
    member holding the other version, which is timed first. The peers count that vote (§9.2:
    the other version was never final anywhere); the observer folded the other version, never
    dropped the sleeper, and waited in the reveal for its secret."""
    result = run(_soak(893, SEED_893))
    assert forks(result) == {3}
    observer = observe(result)
    finals = {tuple(sorted(p.final.dropped.items())) for p in result.peers if p is not None}
    assert finals == {((1, 9), (3, 23))}
    assert observer.dropped == {1: 9, 3: 23}
    assert observer.violations == ()
    assert check(result) == []


def test_variants_seed_993_a_cheaters_events_nobody_made_final_are_not_a_loss() -> None:
    """Events a cheater signed after the game's end, which the run does not wait to spread
    (no honest peer made them final), are not lost events (DESIGN.md §8: what honest peers
    sent)."""
    result = run(_soak(993, SEED_993))
    cheater = result.peers[0]
    assert cheater is not None
    others = [p for p in result.peers[1:] if p is not None]
    assert all(p.held(0) < cheater.held(0) for p in others)  # the game that found the fault
    assert all(m.lamport > p.stable for p in others for m in cheater.events(0)[p.held(0) :])
    assert check(result) == []
