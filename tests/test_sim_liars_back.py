"""Liars that lie from their return: restored from their log, or readmitted after a cut that
had them voted out (``liar_games.game(back=…)``, ``scripts/soak.py --liars --back``; session
36). A restored peer rebuilds its state from its log and a readmitted one asks to rejoin and is
readmitted (docs/protocol.md §9.6, §9.8): two more places where what a member signs is taken
on trust of a kind, beside its join (``join=True``, session 35).

Each seed below plays one lie (seed ``i`` plays ``LIES[i % len(LIES)]``), every liar lying at
every chance from its return on, on a noisy network; the invariants must hold as in
``tests/test_sim_liars.py``. The seeds are ones whose liar came back and lied (at two players a
liar cut off past ``drop_after`` is abandoned, not readmitted, and tells nothing).
"""

from __future__ import annotations

import pytest

from p2p_nertz.sim.invariants import outcomes
from p2p_nertz.sim.liar_games import RESTORE_AFTER, RETURNS, LiarRun, game, simulate

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)


def _play(seed: int, back: str, *, two: bool = False) -> LiarRun:
    config, liars = game(seed, two=two, back=back)
    return simulate(config, liars)


@pytest.mark.parametrize("back", RETURNS)
def test_liars_back_keeps_a_seeds_table_and_lies(back: str) -> None:
    # (The return's draws are the return's own: a seed replays the soak's other mixes' table.)
    for seed in range(8):
        plain, liars = game(seed, two=True)
        returning, lying = game(seed, two=True, back=back)
        assert returning.players == plain.players
        assert [(x.seat, x.lie, x.times) for x in lying] == [
            (x.seat, x.lie, x.times) for x in liars
        ]
        assert all(x.rate == 1.0 for x in lying)


def test_liars_back_is_one_of_the_returns() -> None:
    with pytest.raises(ValueError, match="restore"):
        game(1, back="elsewhere")


# Seeds whose liar is restored 0.5 s (under suspect_after), 2 s (under drop_after) and 6 s
# (past it: voted out, restored, readmitted) after its crash, at 2 to 4 players, and lies.
@pytest.mark.parametrize("seed", [0, 1, 2, 5, 6, 11, 12, 18, 29])
def test_liars_lying_from_a_restore_break_no_invariant(seed: int) -> None:
    run = _play(seed, "restore")
    assert run.result.crashes == 1
    assert sum(run.told.values()) > 0  # (it lied after it was restored: at=its restart)
    assert run.result.violations == []


def test_liars_the_restores_cover_every_length() -> None:
    lengths = set()
    for seed in (0, 1, 2, 5, 6, 11, 12, 18, 29):
        config, liars = game(seed, back="restore")
        (crash,) = config.faults.crashes
        lengths.add(crash.restart_after)
        assert liars[0].at == crash.at + (crash.restart_after or 0.0)
    assert lengths == set(RESTORE_AFTER)


# Seeds whose liar is cut off, voted out, heard again and readmitted at round 2, and lies.
@pytest.mark.parametrize("seed", [1, 2, 7, 9, 10, 12])
def test_liars_lying_from_a_readmission_break_no_invariant(seed: int) -> None:
    run = _play(seed, "readmit")
    assert "rejoin" in outcomes(run.result)
    assert sum(run.told.values()) > 0
    assert run.result.violations == []


@pytest.mark.parametrize("back", RETURNS)
@pytest.mark.parametrize("seed", [101, 102])
def test_liars_two_liars_coming_back_break_no_invariant(seed: int, back: str) -> None:
    run = _play(seed, back, two=True)
    assert run.result.violations == []
