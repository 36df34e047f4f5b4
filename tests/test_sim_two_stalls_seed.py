"""Two games that never ended, played again (docs/protocol.md §13, session 44: *a leap
waited on a dropped member's cover*, *a vote in a readmitted member's gap*).

``scripts/soak.py --liars --two-liars --back readmit --players 3-4`` seed 256 (four players):
the honest seats 0 and 2 stayed in play for ever, seat 3's drop never final
(tests/test_finality_uncovering.py); ``scripts/soak.py --late-withdrawals --players 3-5`` seed
223 (five players): seat 1 stayed in ``commit`` for ever (tests/test_roster_read_after_readmit
.py). Each now ends with no violation, termination included.
"""

from __future__ import annotations

from p2p_nertz.protocol.spec import Deal
from p2p_nertz.sim.liar_games import game as liar_game
from p2p_nertz.sim.liar_games import simulate as liar_simulate
from p2p_nertz.sim.liars import LIES
from p2p_nertz.sim.mixes import late_withdrawals
from p2p_nertz.sim.watching import run


def test_two_liars_readmitted_seed_256_ends() -> None:
    config, liars = liar_game(
        256, players=(3, 4), two=True, lies=LIES, back="readmit", deal=Deal.COMMIT
    )
    assert config.players == 4
    result = liar_simulate(config, liars).result
    assert result.violations == []
    assert result.finished
    honest = [p for seat, p in enumerate(result.peers) if seat not in config.faults.cheaters]
    assert all(p is not None and p.final.phase.value == "over" for p in honest)
    assert all(3 in p.final.dropped for p in honest if p is not None)


def test_late_withdrawals_seed_223_ends() -> None:
    config = late_withdrawals(223)
    assert config.players == 5
    result = run(config)
    assert result.violations == []
    assert result.finished
    assert all(p is not None and p.final.phase.value == "over" for p in result.peers)
