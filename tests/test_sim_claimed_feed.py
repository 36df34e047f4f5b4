"""A claim on a silent member's feed no longer stops the table (docs/protocol.md §9.2, §13).

One member's beat (``beat_ahead``) announces holding more of a member's feed than exists. §7.1
caps that member's term at its last event held while any member claims more, so while it signs
nothing the honest peers' stable time stands still, no timer running: liars seed 3185 (four
players) was held 126 s of a 150 s game, and with the member's player idle for good (it never
plays again: nothing it signs fills the claim) the table stopped for good. The claimer now owes
those events (``Membership.stalls``), is voted out *withheld* after ``phase_timeout`` by every
member it owes them to (the idle member's core too: it is claimed to have signed events it
never signed), the lying beat relayed with each vote and kept as a ``debt`` note, which the
audit reads against every log (``ungiven_claim``). And an honest member is never voted out
so: partitions shorter and longer than the timers at two and four players, where members
announce, once healed, feeds the others lack, end with no vote *withheld*.
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Rules
from p2p_nertz.sim import Faults, Partition, SimConfig, liar_games, run
from p2p_nertz.sim.liar_games import MAX_TIME, check, check_liars, game, marks
from p2p_nertz.sim.network import Crash
from tests.test_sim_blame import QUICK, _votes

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)


class _Idle(liar_games._Simulation):
    """Seat 0's player never moves (its core beats, votes and signs its phase events)."""

    def _bot(
        self, seat: int, peer: Peer, now: float, crash_plan: dict[tuple[int, float], Crash]
    ) -> None:
        if seat != 0:
            super()._bot(seat, peer, now, crash_plan)


def test_claimed_feed_of_a_member_that_never_plays_again_the_claimer_out_the_game_ends() -> None:
    # Seed 3185's beat_ahead liar alone (seat 1, once, at 8.76 s: seat 0's feed at 6, where it
    # holds 4); seat 0 honest, its player idle for good. Before: every peer in play at 150 s,
    # seat 0's feed at 4 everywhere, the honest stable times at 229 and 230.
    config, liars = game(3185, two=True, players=(3, 4))
    liars = liars[:1]
    assert [(liar.seat, str(liar.lie)) for liar in liars] == [(1, "beat_ahead")]
    faults = dataclasses.replace(config.faults, deck_cheats=marks(liars))
    sim = _Idle(dataclasses.replace(config, faults=faults), liars)
    result = sim.run()
    assert check(result) + check_liars(result) == []
    assert result.finished
    assert result.time < MAX_TIME / 2  # (simulated seconds: a drop and a phase wait or two)
    for seat in (0, 2, 3):
        final = result.peers[seat].final
        assert final.phase is Phase.OVER
        assert set(final.dropped) == {1}
    voters = {voter for voter, target in _votes(result, DropReason.WITHHELD) if target == 1}
    assert voters == {0, 2, 3}  # (the idle member's core among them)
    audit = result.audit
    assert audit is not None
    assert {(f.kind, f.seat) for f in audit.errors} == {(FindingKind.UNGIVEN_CLAIM, 1)}


@pytest.mark.parametrize(("players", "side"), [(2, {0}), (4, {0, 1})], ids=["2:1|1", "4:2|2"])
@pytest.mark.parametrize("length", [2.0, 14.0], ids=["under-drop_after", "past-phase_timeout"])
def test_claimed_feed_a_healed_partition_on_a_lossy_slow_network_accuses_nobody(
    players: int, side: set[int], length: float
) -> None:
    # Once healed, each side's beats and events announce feeds the other lacks, the answers to
    # its wants slowed and lost at times (50 ms each way, 1 message in 10 lost): owed at a
    # stall scan (55 to 153 such records a game at four players) and given within the timer.
    # Past the timers, a member silent is voted out for silence, if ever, not for withholding.
    groups = (frozenset(side), frozenset(set(range(players)) - side))
    partition = Partition(5.0, 5.0 + length, groups)
    faults = Faults(delay=0.05, jitter=0.05, loss=0.1, partitions=(partition,))
    rules = Rules(target=None, rounds=1)
    result = run(SimConfig(players=players, rules=rules, seed=7, faults=faults, peer=QUICK))
    assert result.violations == []
    assert result.finished
    assert _votes(result, DropReason.WITHHELD) == []
