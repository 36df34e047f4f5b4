"""A player's log resumed on two machines at once, in the simulator (docs/protocol.md §9.6, *two
copies resumed at once*; :mod:`p2p_nertz.sim.twins`, ``Twin.resume``).

Seat 1's machine dies in play; a copy of its log is resumed on a second machine a second later
(its bot plays), and the first machine comes back and resumes too: at once, a second later, or
after ``drop_after``. The others send to the seat's endpoint, the first machine's: the copy
hears nobody. Before session 30 a process restored from a log holding more of its feed than
its join signed at once: the copy's bot played under seqs the first process used too, its
beats were timed above events it never heard of, and past ``drop_after`` it abandoned the other
(two players) or voted the members out: at once the honest seat was dropped for equivocation
(the audit's *clock_below_ack* and *equivocation*), a second later at 3 players for *withheld*
(at 2 the copy abandoned the other), after ``drop_after`` for silence at 3 and with a fork
proven at 2. Now a restored process, like a new one, signs nothing past its head
until a member has said what it holds of our feed: the copy signs nothing, sends wants, and
stops unheard at ``drop_after``; the first process plays on.
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.gone import GoneReason
from p2p_nertz.sim import Faults, SimConfig
from p2p_nertz.sim.invariants import audit_result, check
from p2p_nertz.sim.logfiles import log_file, log_files, log_records
from p2p_nertz.sim.network import QUICK_TIMERS, Crash, Simulation
from p2p_nertz.sim.twins import Twin

SEAT = 1  # the seat whose log is resumed twice
DIES, COPY = 6.0, 7.0  # its machine dies in play; the copy is resumed a second later
DROP_AFTER = QUICK_TIMERS.drop_after


@pytest.mark.parametrize("players", [2, 3])
@pytest.mark.parametrize("later", [0.0, 1.0, DROP_AFTER + 1.0], ids=["at-once", "1s", "drop"])
def test_sim_a_copy_of_a_log_resumed_elsewhere_stops_unheard_without_forking(
    players: int, later: float
) -> None:
    twin = Twin(SEAT, COPY, resume=True, plays=True)  # hears nobody: deaf_for None
    crash = Crash(SEAT, DIES, restart_after=COPY - DIES + later)  # the first machine back
    config = SimConfig(
        players=players,
        seed=1,
        faults=Faults(twins=(twin,), crashes=(crash,)),
        peer=QUICK_TIMERS,
        max_time=300.0,
    )
    sim = Simulation(config)
    sim.run()
    result = sim.result
    # The first process played on: the game ended alike, no problem, nobody dropped.
    assert result.finished
    assert check(result) == []
    assert result.audit is not None and result.audit.drops == ()
    assert result.elsewhere == []
    # The copy signed nothing and logged nothing new: its log is the copy it was resumed from,
    # which the first process's log begins with too.
    (copy_log,) = sim.twins.logs
    assert copy_log == result.logs[SEAT][: len(copy_log)]
    other = sim.peers[0]
    assert other is not None
    feed = [event.wire for event in other.events(SEAT)]
    assert len(feed) > len(set(feed) & set(copy_log)) > 1  # (the first process played on)
    # It heard nobody for drop_after and stopped, its table gone for it (status 5 on a node).
    ((end),) = sim.twins.ends
    assert (end.how, end.detail) == ("gone", GoneReason.UNHEARD.value)
    assert end.at >= COPY + DROP_AFTER
    spec = result.spec
    copy_file = log_file(spec, SEAT, log_records(spec, SEAT, copy_log, (), result.envelopes))
    files = [*log_files(result), copy_file]
    report = audit_result(result, files)
    assert report.valid and report.errors == ()
