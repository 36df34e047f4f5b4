"""A proof vote capped by a withheld vote: a termination stall (forced lost-tail scan seed
8067, four players; open, a strict xfail).

rec14's scan forced a lost log tail on soak games (``--players 3-4``): the longest restarted
crash of each game loses 1 to 3 of its peer's own events at the restart (``lose_own``), lasting
0.5 to 4 times ``drop_after`` on a coin flip. :func:`_config` is that scan's config, inlined.
"""

from __future__ import annotations

import dataclasses

import pytest

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


@pytest.mark.xfail(
    strict=True,
    reason="open: a withheld vote caps the proof vote the drop of a cheater needs (seed 8067)",
)
def test_scan_seed_8067_a_proof_vote_past_a_withheld_votes_count_still_drops_the_cheater() -> None:
    """Four players. Seat 2 (the cheater) forks at its seq 113: a Nerts call to seats 0 and 1,
    its real event (a withdrawal) to 2 and 3. Seat 0 crashed and restarted, its log short of
    its own event 117 (recovered from the others: no peer is still recovering at the end).

    Seats 1 and 3 vote seat 2 out on proof (counts 113 and 109). Seat 1 then votes seat 0 out
    for *withholding* (count 117, Lamport 2194), and seat 0 votes seat 2 out on proof as its
    event 118 (Lamport 2196). Seat 1's vote caps seat 0's votes past 117 (§9.2 "Caps",
    ``Roster.standing_caps``): every peer's tentative fold has ``vote_caps[0] == (117, ∞)``
    and holds seat 0's proof vote frozen (``Roster.frozen[2]``). A cheater is dropped on the
    votes of every member left, so seat 2 never is; seat 1's vote on seat 0 never reaches a
    majority (the cheater's own vote on seat 0 is on its forked chain, held by seats 2 and 3
    alone) and is never withdrawn. Every peer's final fold stays in round 2's play (every
    seat ready, stable time 633 to 636: seat 2's chain past the fork is held in two versions),
    the tentative one in reveal: ``termination`` fails with the phases ``play`` at the limit
    (1224 s in the scan, 200 s here).

    Where to look: whether a withheld vote should cap at all (its target is heard, and the
    frozen announcements a cap stands for are about silence), or whether a proof vote (reason
    *equivocation*, with the two signed versions) should be exempt from caps, as a member's
    own proofs are (``with_forks(..., own=...)``); and why seat 1 votes at all: seat 0's
    ``ready`` is final everywhere; the vote is the stall scan's (``Membership.stalls``, in
    ``Author.liveness``, at 43.08 s, with its vote on seat 3; seat 2 follows on seat 0 at
    43.33 s): a member that keeps talking while finality waits for it. Such a vote is in
    ``proven_seats`` and is not withdrawn when heard, while what finality waits for is the
    cheater's chain past its fork, which seat 0 holds in the version seat 1 holds too."""
    result = run(_config(8067))
    assert result.spec.seats == 4
    assert result.violations == []
