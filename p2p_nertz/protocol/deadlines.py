"""When membership's timers next have something to do: the rule, and its quick answer.

:func:`deadlines` is the rule: every deadline of :class:`Membership
<p2p_nertz.protocol.membership.Membership>`'s timers (the phase's wait for a withholding
member, each member's suspicion or drop for silence, each stall). The peer asks for the
earliest of them, and of its own (a beat, an ack, a gap to ask for), after every input
(:meth:`Author.next_deadline <p2p_nertz.protocol.author.Author.next_deadline>`, for the
node's and the simulator's next tick); walking every member's timers for it was most of that
call (docs/latency.md, session 17).

:func:`earliest` answers it without walking what cannot come first: given a deadline already
known (``before``: the next beat is never more than ``beat_interval`` away), a term at or after
it cannot change the least. The members' silence timers are read only when the
longest-unheard member's nearest one is before it (a float sum does not decrease when a term
grows, so that one bounds them all), the phase's wait, which reads whom the final fold waits
for, only when its time is before it, and the stalls only when the oldest one's timer runs
out before it. Nothing is kept between calls, so nothing can go stale: the answer is
:func:`deadlines`' least (or ``before``), the same float, and the tests compare the two
after every input of simulated games.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

from p2p_nertz.protocol.membership import WAITING_PHASES, Membership, waits_for

if TYPE_CHECKING:
    from p2p_nertz.protocol.state import GameState

__all__ = ["deadlines", "earliest"]


def deadlines(membership: Membership, final: GameState, since: float) -> Iterator[float]:
    """When the timers of ``membership`` next have something to do, with the final fold in
    its phase since ``since``: the phase's wait for a withholding member, each member's
    suspicion or drop for silence, each stall. A member that is out casts no vote
    (:meth:`Membership.vote`): no deadline waits for one."""
    phase = _phase_due(membership, final, since, math.inf)
    if phase is not None:
        yield phase
    yield from _silence_due(membership, final)
    yield from _stalls_due(membership, final)


def earliest(membership: Membership, final: GameState, since: float, before: float) -> float:
    """The least of ``before`` and every one of :func:`deadlines` (the same float), reading
    only the timers that may come before it (module docstring)."""
    m = membership
    timers = m.timers
    least = before
    phase = _phase_due(m, final, since, least)
    if phase is not None:
        least = phase
    # (Each silence deadline is a member's time heard plus one of two timers: none is before
    # the earliest time heard plus the shorter timer. No other member: inf, none.)
    if m.least_heard + min(timers.suspect_after, timers.drop_after) < least:
        least = min((least, *_silence_due(m, final)))
    stall = m.stall
    # (A stall's deadline is never before its start plus the timer: nor before the oldest's.)
    if stall and min(stall.values())[0] + timers.phase_timeout < least:
        least = min((least, *_stalls_due(m, final)))
    return least


def _phase_due(m: Membership, final: GameState, since: float, before: float) -> float | None:
    """The phase's wait for a withholding member, if it runs out before ``before`` (whom the
    final fold waits for is read only then)."""
    if m.seat in final.dropped:
        return None
    blame_from = m.blame_from(since)
    if blame_from is None:
        return None
    due = blame_from + m.timers.phase_timeout
    if due >= before or final.phase not in WAITING_PHASES:
        return None
    # (A silent member is the silence timers', as Membership.withholding reads it: after an
    # input, one unheard for suspect_after is suspected.)
    if any(
        q != m.seat
        and q not in m.voted
        and q not in m.held_waits
        and q not in m.suspected
        and not m.debtors.excuse(q)
        for q in waits_for(final)
    ):
        return due
    return None


def _silence_due(m: Membership, final: GameState) -> Iterator[float]:
    """Each member's suspicion, or drop for silence, still to come."""
    out = m.seat in final.dropped
    for q in range(m.n):
        if q == m.seat or q in final.dropped:
            continue
        if q not in m.suspected:
            yield m.suspect_at(q)
        elif q not in m.voted and not out:
            yield m.silence_vote_at(q)


def _stalls_due(m: Membership, final: GameState) -> Iterator[float]:
    """Each stall's timer (none while we are out: our votes would not count)."""
    if m.seat in final.dropped:
        return
    for q, (stalled, *_) in m.stall.items():
        if q not in m.voted:
            yield max(stalled + m.timers.phase_timeout, m.stall_scan_at)
