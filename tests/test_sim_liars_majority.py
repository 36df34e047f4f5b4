"""Two liars of three: what the one honest member is owed where the liars are a majority
(``liar_games.liars_majority``; docs/protocol.md §9.3, §13; session 38).

With fewer than a strict majority of the members honest nothing can be decided safely: the
fuzzer promises no end there, nor that the audit of every log (the liars' among them) reaches
the honest member's state. It still checks what the honest member is owed: never forked,
never refused or dropped by an honest fold (but by the liars' votes alone), named by no audit,
of every log or of its own log alone. ``scripts/soak.py --liars --two-liars --players 3-4
--back readmit --lie claim_after_leave``, seeds 19, 23, 76, 156, 161, 164, 171 and 197 (at
three players) failed on the union's agreement alone, and hold every owed check.
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.state import Phase
from p2p_nertz.sim.liar_games import game, liars_majority, simulate
from p2p_nertz.sim.liars import Lie

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)


@pytest.mark.parametrize(
    ("players", "liars", "majority"),
    [(3, 2, True), (5, 3, True), (4, 2, False), (2, 1, False), (3, 1, False), (5, 2, False)],
)
def test_liars_majority_is_a_strict_majority_of_the_table(
    players: int, liars: int, majority: bool
) -> None:
    assert liars_majority(players, frozenset(range(liars))) is majority


def test_two_liars_of_three_the_honest_member_gets_what_it_is_owed() -> None:
    # Seed 19: seats 0 and 2 lie (claim_after_leave after a readmission); both leave, and
    # the union drops one of them below its leave (a second fixed point of the caps).
    config, liars = game(
        19, players=(3, 4), two=True, lies=(Lie("claim_after_leave"),), back="readmit"
    )
    assert config.players == 3 and liars_majority(config.players, config.faults.cheaters)
    run = simulate(config, liars)
    assert run.result.violations == []
    cheaters = config.faults.cheaters
    (honest,) = [s for s in range(config.players) if s not in cheaters]
    peer = run.result.peers[honest]
    assert peer is not None and peer.final.phase is Phase.OVER
    assert honest not in peer.final.dropped and not peer.provisional
    report = run.result.audit
    assert report is not None and not [f for f in report.errors if f.seat not in cheaters]
    result = peer.final.game.result
    assert result is not None and honest in result.winners
