"""A watcher beside a ``brink_fork`` or ``brink_branch`` liar ends where the members end
(docs/protocol.md §9.5, §5.3; found in session 42, closed in session 42).

``scripts/soak.py --liars --lie brink_fork --players 3-5``: the honest members ended the game
alike and the audit agreed, but a watcher of every member (fed what their nodes push it)
stayed in play, round 1, after the nodes' linger, in 10 of seeds 0-23; so too beside
``brink_branch`` (12 of seeds 0-29 at 2-5 players; 18 of 0-49). It refused the honest events
that name the other version of a forked event, which a member judges from its proof's pair
and a watcher, keeping no proof, could not. The watcher now keeps the first other version of
each forked event it is pushed and judges an event naming it from its time
(``Spectator._versions``). Seeds 18 (``brink_fork``) and 0 and 8 (``brink_branch``) stalled
so on main at session 41's end; kept here: the cheapest of each lie (13 and 0; 18 and 8 fail
alike without the fix, checked). The scans after it: ``brink_fork`` 3-5 0-23 clean,
``brink_branch`` 2-5 0-29 one game left (seed 29, §13: a watcher holding the losing branch).
"""

from __future__ import annotations

import pytest

from p2p_nertz.sim.liar_games import game, simulate
from p2p_nertz.sim.liars import Lie

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)


@pytest.mark.parametrize(
    ("seed", "lie"),
    [(13, Lie.BRINK_FORK), (0, Lie.BRINK_BRANCH)],
)
def test_a_watcher_beside_a_brink_liar_ends_where_the_members_end(seed: int, lie: Lie) -> None:
    config, liars = game(seed, players=(3, 5), lies=(lie,))
    run = simulate(config, liars, watch=True)
    # The liar told its lie: the watcher had a fork to follow, not a game that never reached it.
    assert all(run.told[liar.seat] > 0 for liar in liars)
    assert run.result.violations == []
