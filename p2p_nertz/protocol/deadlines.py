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
    m = membership
    timers = m.timers
    out = m.seat in final.dropped
    blame_from = m.blame_from(since)
    if (
        not out
        and blame_from is not None
        and final.phase in WAITING_PHASES
        and any(
            q != m.seat and q not in m.voted and q not in m.held_waits for q in waits_for(final)
        )
    ):
        yield blame_from + timers.phase_timeout
    for q in range(m.n):
        if q == m.seat or q in final.dropped:
            continue
        if q not in m.suspected:
            yield m.heard[q] + timers.suspect_after
        elif q not in m.voted and not out:
            yield m.heard[q] + timers.drop_after
    for q, (stalled, _, _) in m.stall.items():
        if q not in m.voted and not out:
            yield max(stalled + timers.phase_timeout, m.stall_scan_at)


def earliest(membership: Membership, final: GameState, since: float, before: float) -> float:
    """The least of ``before`` and every one of :func:`deadlines` (the same float), reading
    only the timers that may come before it (module docstring)."""
    m = membership
    timers = m.timers
    seat = m.seat
    dropped = final.dropped
    out = seat in dropped
    voted = m.voted
    least = before
    if not out:
        blame_from = m.blame_from(since)
        if (
            blame_from is not None
            and blame_from + timers.phase_timeout < least
            and final.phase in WAITING_PHASES
            and any(
                q != seat and q not in voted and q not in m.held_waits for q in waits_for(final)
            )
        ):
            least = blame_from + timers.phase_timeout
    heard = m.heard
    others = heard[:seat] + heard[seat + 1 :]
    # (Each silence deadline is a member's time heard plus one of two timers: none is before
    # the earliest time heard plus the shorter timer.)
    if others and min(others) + min(timers.suspect_after, timers.drop_after) < least:
        suspected = m.suspected
        for q in range(m.n):
            if q == seat or q in dropped:
                continue
            if q not in suspected:
                due = heard[q] + timers.suspect_after
            elif q not in voted and not out:
                due = heard[q] + timers.drop_after
            else:
                continue
            least = min(least, due)
    stall = m.stall
    # (A stall's deadline is never before its start plus the timer: nor before the oldest's.)
    if stall and not out and min(stall.values())[0] + timers.phase_timeout < least:
        for q, (stalled, _, _) in stall.items():
            if q not in voted:
                due = max(stalled + timers.phase_timeout, m.stall_scan_at)
                least = min(least, due)
    return least
