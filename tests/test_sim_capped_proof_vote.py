"""A proof vote capped by a withheld vote: a termination stall (forced lost-tail scan seed
8067, four players; fixed in session 15).

rec14's scan forced a lost log tail on soak games (``--players 3-4``): the longest restarted
crash of each game loses 1 to 3 of its peer's own events at the restart (``lose_own``), lasting
0.5 to 4 times ``drop_after`` on a coin flip. :func:`_config` is that scan's config, inlined.
"""

from __future__ import annotations

import dataclasses

from p2p_nertz.rng import Rng
from p2p_nertz.sim import Crash, SimConfig, run


def _config(seed: int) -> SimConfig:
    """rec14's forced lost-tail scan (``--players 3-4``): the longest restarted crash (or a new
    one) loses 1 to 3 own events at the restart."""
    config = SimConfig.soak(seed, players=(3, 4))
    faults = config.faults
    assert all(c.restart_after is not None for c in faults.crashes)
    rng = Rng(seed + 77)
    crashes = list(faults.crashes)
    if crashes:
        i = max(range(len(crashes)), key=lambda k: crashes[k].restart_after or 0.0)
    else:
        crashes.append(Crash(rng.below(config.players), 1.0 + rng.random() * 20, 0.0))
        i = 0
    crash = crashes[i]
    assert crash.restart_after is not None
    length = crash.restart_after
    if rng.below(2):
        length = max(length, config.peer.drop_after * (0.5 + rng.random() * 3.5))
    crashes[i] = dataclasses.replace(
        crash, restart_after=length, cut_effects=None, lose_own=1 + rng.below(3)
    )
    faults = dataclasses.replace(faults, crashes=tuple(crashes))
    # (A healthy game of this size ends well within 200 s; the stall runs to the limit.)
    return dataclasses.replace(config, faults=faults, max_time=200.0)


def test_scan_seed_8067_the_cheater_is_dropped_and_no_vote_withheld_stalls_the_game() -> None:
    """Four players. Seat 2 (the cheater) forks at its seq 113: a Nerts call to seats 0 and 1,
    its real event (a withdrawal of its vote for silence on seat 3) to 2 and 3. Seat 0 crashed
    and restarted, its log short of its own event 117, and recovers it from the others (§9.6)
    until 43 s: heard all along (its wants), it announces nothing meanwhile.

    Before session 15, seat 1's stall scan (``Membership.stalls``) voted seat 0 out for
    *withholding* (its cover of what seat 1 held, count 117), and seat 3 too (count 122): seat
    3 had voted the cheater out on proof counting 109, and announced no more of it, but that
    vote was capped where seat 2's chain of seats 0 and 1 is folded (the cheater's vote on seat
    3 stands there, never withdrawn), so seat 1 counted seat 3's cover of the cheater as owed.
    Seat 0's proof vote on the cheater (event 118) was capped by seat 1's vote on seat 0
    (§9.2, *Caps*), and a cheater is dropped on the votes of every member left: never. Seat 1's
    votes stood for good (a vote *withheld* was never withdrawn), no majority formed, and
    every peer stayed in round 2's play until the limit. (Exempting proof votes from caps
    would not have ended it: seat 1's frozen announcements of seat 0's feed kept seat 0's
    event 118, and so the drop, from being final anywhere.)

    Now a member's vote, counted or capped, excuses it from covering the member it votes out
    (``Roster.stands``), and a vote *withheld* by the stall scan is withdrawn once the member
    gives what it owed (``Membership.relieved``). In this run seats 1, 2 and 3 all vote the
    recovering seat 0 out for withholding just before it recovers: a majority, so it is
    dropped at 117 and readmitted at the next round; the cheater is dropped on the votes of
    seats 1 and 3, and the game ends."""
    result = run(_config(8067))
    assert result.spec.seats == 4
    assert result.violations == []
    for peer in result.peers:
        assert peer is not None
        assert peer.tentative.dropped.get(2) == 109  # the cheater, below its fork
