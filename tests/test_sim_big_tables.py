"""Soak games at the table sizes the suite's other games rarely reach: six and eight seats.

Tables hold 1 to 8 seats, but the seeded games of tests/test_sim.py are of 2 or 3 players
and ``scripts/soak.py`` defaults to 2-5. These are two seeds of ``scripts/soak.py --players
6-8`` (session 24's scan; the soak's draw, :meth:`SimConfig.soak`, quick timers), each with a
member voted out during a fault and readmitted in a later round: every honest peer still in
must agree, and the audit of every log reach their state, with errors against the cheater
only. Replay either with ``scripts/soak.py --players 6-8 --seed N --games 1 -v``.
"""

from __future__ import annotations

import pytest

from p2p_nertz.sim import SimConfig, run
from p2p_nertz.sim.invariants import outcomes, settled


@pytest.mark.parametrize(
    ("seed", "players", "rounds"),
    [
        # 8 seats, 3 rounds: a partition, a crash, an equivocating member.
        pytest.param(49032, 8, 3, id="8-seats"),
        # 6 seats, 2 rounds: two partitions, a crash, a member asleep.
        pytest.param(49036, 6, 2, id="6-seats"),
    ],
)
def test_big_table_soak_game_holds_every_invariant(seed: int, players: int, rounds: int) -> None:
    config = SimConfig.soak(seed, players=(6, 8))
    assert (config.players, config.rules.rounds) == (players, rounds)  # (the case under test)
    result = run(config)
    assert result.violations == []
    assert {"drop", "rejoin"} <= outcomes(result)
    finals = settled(result)
    cheaters = config.faults.cheaters
    still_in = [
        seat
        for seat, p in enumerate(result.peers)
        if p is not None and seat not in cheaters and seat not in p.final.dropped
    ]
    assert finals and len(finals) == len(still_in)  # every honest peer still in finished
    report = result.audit
    assert report is not None and report.finished
    assert [str(v) for v in report.errors if v.seat not in cheaters] == []
    for final in finals:
        assert final.digest() == report.digest
        assert final.game.totals == report.totals
        assert dict(report.dropped) == final.dropped
