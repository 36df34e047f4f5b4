"""A member that runs one other member's clock ahead with beats splits no table
(docs/protocol.md §5.3, §13 *the clock split*; ``Outbox.take_beat``).

The last seat sends seat 0, and only it, a beat after every input in which it sends anything,
each timed just under the clock-jump limit (2^32, §4.5) above the last. Before session 24's
fix seat 0 took each beat's time into its clock, so the others refused all it signed next as
``clock_jump``: the honest members stopped in different states. Now a beat moves a clock at
most ``Outbox.lead`` above the events delivered there: seat 0's events stay within reach of
every member, every honest member ends the game alike, and the audit names no honest member.
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.effects import Rejected
from p2p_nertz.protocol.feeds import MAX_CLOCK_JUMP
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, SimConfig
from p2p_nertz.sim.cheats import beat_alone
from p2p_nertz.sim.invariants import check
from p2p_nertz.sim.network import Simulation

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)

VICTIM = 0


def _split_clock(peer: Peer, victim: Peer) -> list[int]:
    """Make ``peer`` (a simulated member) follow every input that sends anything with a beat
    to ``victim`` alone, sound against its feed, timed ``MAX_CLOCK_JUMP - 1`` above the
    victim's clock (or its own, or its last such beat: each is new there and as far ahead as
    the victim takes): a test-only cheat (``sim.cheats.beat_alone``). Its own clock is not
    moved, so its own messages go on as an honest member's. The beats' times."""
    outbox = peer._outbox

    def time(sent: list[int]) -> int:
        return max([outbox.clock, victim.clock, *sent]) + MAX_CLOCK_JUMP - 1

    return beat_alone(peer, victim, time)


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 3), (4, 1)])
def test_sim_clock_split_beats_to_one_member_split_no_table(players: int, seed: int) -> None:
    attacker = players - 1
    config = SimConfig(
        players=players,
        seed=seed,
        rules=Rules(target=None, rounds=1),
        peer=QUICK_TIMERS,
        record_effects=True,
        max_time=200.0,
    )
    sim = Simulation(config)
    liar, pumped = sim.peers[attacker], sim.peers[VICTIM]
    assert liar is not None and pumped is not None
    sent = _split_clock(liar, pumped)
    result = sim.run()
    result.violations = check(result)
    # The case is built: the attacker sent beats far ahead, many jumps' worth in all.
    assert len(sent) > 2 and sent[-1] > 2 * MAX_CLOCK_JUMP
    victim = result.peers[VICTIM]
    assert victim is not None
    # The victim's clock stayed within reach of the events it holds, far below the beats.
    assert victim.clock < MAX_CLOCK_JUMP
    # No member but the victim (to which alone the beats went) refused a message as a clock
    # jump: nothing the victim signed was too far ahead.
    jumps = [
        seat
        for _, seat, e in result.effects
        if seat not in (VICTIM, attacker) and isinstance(e, Rejected) and e.reason == "clock_jump"
    ]
    assert jumps == []
    # Every honest member ended the game, alike (the invariants compare their final states);
    # what the invariants find is the attacker's lie about time alone: its events after a
    # far-ahead beat are timed below it (the audit names it; only its beats were ahead).
    assert result.finished
    assert all(v.startswith("validity: clock_below_ack") for v in result.violations)
    report = result.audit
    assert report is not None
    # The audit names the attacker alone, and nobody else is dropped.
    for finding in (*report.errors, *report.violations):
        assert finding.seat == attacker, finding
    assert all(d.seat == attacker for d in report.drops)
