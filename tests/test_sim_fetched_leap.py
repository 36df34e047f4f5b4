"""Two liars acting together (session 42's ``fetched_leap``, ``scripts/soak.py --liars
--two-liars --lie fetched_leap``): one signs again an event it logged, 2^33 past what it
names, and shows that version only in answer to a want; the other names it by id in an
event timed one above it. Every honest member refuses the event as a leap, asks for the
version named, and is shown it; until session 42 that version counted at its own time and
every honest clock took the leap (the audit then named the honest members' next events
``clock_jump``). A version fetched now counts only once judged by the bound from what it
names (docs/protocol.md §5.3, *a version fetched*; ``feeds.fetched_time``).

Who the signed facts convict (session 43): the forker, whose version leaps past what it
names and forks its feed (each a proof anyone can check), and the namer, whose event names a
version no member would deliver and so leaps past what it names by the same rule: the members
refuse the namer's event as ``clock_jump`` and vote the forker out on the fork, and every
audit names the same two, whichever version of the fork it delivered. Until session 43 the
audit of a log holding ``far`` delivered it (a log alone follows the version read last),
named the forker's version ``clock_jump`` and judged the namer's event from ``far``'s time:
the namer named by the members, not by the audit of its own log.

Two liars need three seats to leave an honest member; at three the liars are a majority.
"""

from __future__ import annotations

import pytest

from p2p_nertz.audit import FindingKind, LogSource, audit
from p2p_nertz.sim.liar_games import game, judge_liars, simulate, standing_leaps
from p2p_nertz.sim.liars import EDGE_LIES, FORK_LIES, LIES, MORE_LIES, PACT_LIES, Lie
from p2p_nertz.sim.logfiles import log_files

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
    # ~1.5-3 CPU-s each. The lie is told (the namer named the forker's version), and the
    # game holds every invariant: without session 42's mend the honest members' next events
    # leap (three violations at each); without session 43's, the audit of the namer's log
    # names no leap of the namer (``leaps_named_alone``: "split blame").
    config, liars = game(seed, players=(players, players), two=True, lies=(Lie.FETCHED_LEAP,))
    run = simulate(config, liars)
    pact = liars[0].pact
    assert pact is not None and pact.named and pact.far is not None
    assert run.result.violations == []
    # One verdict from the same signed facts: every honest member refused the namer's event
    # as a leap, and the audit of every log and that of the namer's own log (which holds
    # ``far`` before it) name the namer's leap and the forker's fork, and no one else.
    result, forker = run.result, pact.forker
    namer = next(x.seat for x in liars if x.seat != forker)
    honest = [s for s in range(players) if s not in (forker, namer)]
    # (Each refusal names the namer's event, and stands: none took it later, session 44.)
    assert {(s, namer) for s in honest} <= standing_leaps(result.peers, result.jumps)
    assert all(seq is not None and event_id for s, q, seq, event_id in result.jumps if q == namer)
    files = log_files(result)
    alone = audit([LogSource.from_bytes("namer.log", files[namer])])
    for report in (result.audit, alone):
        assert report is not None
        found = {(f.seat, f.kind) for f in report.errors}
        assert (namer, FindingKind.CLOCK_JUMP) in found
        assert (forker, FindingKind.EQUIVOCATION) in found
        assert {seat for seat, _ in found} == {forker, namer}
    # And the fuzzer's check says so of a report that names the forker alone (an honest
    # member's log, which never logged the namer's refused event).
    theirs = audit([LogSource.from_bytes("honest.log", files[honest[0]])])
    assert {f.seat for f in theirs.errors} == {forker}
    assert judge_liars(
        [None] * players,
        config.faults.cheaters,
        finished=True,
        time=result.time,
        report=theirs,
        forked=set(),
        jumps=result.jumps,
    ) == [
        f"split blame: an honest peer refused seat {namer}'s event as a leap and the audit "
        "names no leap of it (clock_jump)"
    ]
