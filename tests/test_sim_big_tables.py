"""Soak games at the table sizes the suite's other games rarely reach: six and eight seats.

Tables hold 1 to 8 seats, but the seeded games of tests/test_sim.py are of 2 or 3 players
and ``scripts/soak.py`` defaults to 2-5. These are two seeds of ``scripts/soak.py --players
6-8`` (session 24's scan; the soak's draw, :meth:`SimConfig.soak`, quick timers), each with a
member voted out during a fault and readmitted in a later round: every honest peer still in
must agree, and the audit of every log reach their state, with errors against the cheater
only. Replay either with ``scripts/soak.py --players 6-8 --seed N --games 1 -v``.

And a game of ``scripts/soak.py --sleeper-forks --players 6-8`` (seed 49007) that failed
until session 25: a fake no real event follows, held by a dropped sleeper alone, was refused
by the audit of every log and by no peer (docs/audit.md, *What no member still in took*;
the same shape at 3 to 5 seats: tests/test_sim_lone_fakes.py).
"""

from __future__ import annotations

import pytest

from p2p_nertz.audit import FindingKind
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Equivocation, Faults, Freeze, SimConfig, run
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


def test_lone_fake_held_by_a_dropped_sleeper_changes_no_digest() -> None:
    """Round 1 ends with seats 4 and 6 tied, and round 2 is their tiebreak: seat 7 sits it
    out, and in it signs a Nerts call under its next seq (41) to seat 1 alone, asleep from
    7.6 s to 33.7 s. Sitting out, it signs no other event: no fork, the fake is the only seq
    41, in the sleeper's log alone (the cheater's own lacks it). The sleeper is voted out before it
    wakes and the game ends; the members still in never hold seq 41 and agree. The audit of
    every log delivered it and refused it (a move in round 2 before the cheater's deal), and
    the refusal entered its state's digest: the audit reached another state than every peer.
    (``ForkWatch.held_chain``, audit/delivery.py, counts the version the members still in
    hold only for an event signed in two versions.) Now it reads the fake and never folds it:
    no member still in took it (``Logs.taken``); the cheater is named all the same, its own
    log lacking its event and the fake timed below the clock it had announced."""
    faults = Faults(
        freezes=(Freeze(1, 7.6, 26.1),),
        equivocations=(Equivocation(7, 12.037, frozenset({1})),),
    )
    config = SimConfig(
        players=8, seed=49007, rules=Rules(target=None, rounds=1), faults=faults, peer=QUICK_TIMERS
    )
    result = run(config)
    finals = settled(result)
    assert len(finals) == 6  # every member but the cheater and the sleeper, which is out
    assert all(final.dropped.keys() == {1} for final in finals)
    assert len(result.logs[1]) and result.audit is not None
    assert result.violations == []
    report = result.audit
    assert report.digest == finals[0].digest()
    assert not [v for v in report.errors if v.kind is FindingKind.REFUSED]
    assert {FindingKind.GAP, FindingKind.CLOCK_BELOW_ACK} <= {
        v.kind for v in report.errors if v.seat == 7
    }
