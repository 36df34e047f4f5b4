"""Two liars acting together (session 42's ``fetched_leap``, ``scripts/soak.py --liars
--two-liars --lie fetched_leap``): one signs again an event it logged, 2^33 past what it
names, and shows that version only in answer to a want; the other names it by id in an
event timed one above it. Every honest member refuses the event as a leap, asks for the
version named, and is shown it; until session 42 that version counted at its own time and
every honest clock took the leap (the audit then named the honest members' next events
``clock_jump``). A version fetched now counts only once judged by the bound from what it
names (docs/protocol.md §5.3, *a version fetched*; ``feeds.fetched_time``).

Two liars need three seats to leave an honest member; at three the liars are a majority.
"""

from __future__ import annotations

import pytest

from p2p_nertz.sim.liar_games import game, simulate
from p2p_nertz.sim.liars import EDGE_LIES, FORK_LIES, LIES, MORE_LIES, PACT_LIES, Lie

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)


def test_fetched_leap_is_a_pact_lie_no_soak_seed_draws_but_by_name() -> None:
    assert Lie.FETCHED_LEAP in PACT_LIES
    assert all(Lie.FETCHED_LEAP not in x for x in (LIES, MORE_LIES, EDGE_LIES, FORK_LIES))
    _, liars = game(0, players=(3, 3), two=True, lies=(Lie.FETCHED_LEAP,))
    assert [x.lie for x in liars] == [Lie.FETCHED_LEAP] * 2
    assert liars[0].pact is liars[1].pact is not None  # (one pact: they act together)


@pytest.mark.parametrize(("seed", "players"), [(0, 3), (0, 4)])
def test_fetched_leap_no_honest_clock_takes_a_version_no_member_would_deliver(
    seed: int, players: int
) -> None:
    # ~1-2 CPU-s each. The lie is told (the namer named the forker's version), and the game
    # holds every invariant: without the mend the honest members' next events leap (three
    # violations at each).
    config, liars = game(seed, players=(players, players), two=True, lies=(Lie.FETCHED_LEAP,))
    run = simulate(config, liars)
    pact = liars[0].pact
    assert pact is not None and pact.named and pact.far is not None
    assert run.result.violations == []
