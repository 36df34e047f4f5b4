"""Whom a real node's silence timer may vote out, aimed by a test (tests only; session 43).

A node's silence timer covers every other member alike. On a loaded machine (CI runs 8 xdist
workers on 2 cores; a rehearsal beside the helpers ran at a load of 30-40) an honest process
starves for seconds, a real silence, and a quick ``drop_after`` answers it by voting that
member out, or telling a vote short on it: the game then takes another path, a correct one,
than the one a test checks, and the test fails, or passes without its fault. A test whose
fault is a silence it makes itself (a process killed, or stopped with ``SIGSTOP``) needs the
timer quick for that member and for no other, and not before the test made the silence.

:class:`SilenceAim` does that on a real node's core, through the core's seam
(:attr:`Membership.silence_vote_at <p2p_nertz.protocol.membership.Membership>`, set to
``silence_vote_at_honest``): until the test aims it (:meth:`SilenceAim.at`, called from a
signal handler: the test's event), this node votes nobody out for silence; then it votes out
the members aimed at, each at the time the core's own timer says, and nobody else. A member
it voted out once is not voted out for silence again: heard again, the vote withdrawn, a
later stall of that process (a woken process on a loaded machine) is not the test's silence.

Abandons time a silence on the same seam (``Membership.gone_for`` asks it at ``now``; session
44): a member aimed at counts as gone when the core's timer says (its vote standing or not
cast yet), any other as heard at the question, so it is gone ``drop_after`` later, never
now. (Not ``inf`` there: ``now - inf`` made the abandon answer's seconds infinite, and the
table's ``math.floor``/``math.ceil`` of them raised ``OverflowError`` when it showed the
offer.) Suspicion, the notices, the table gone (three times ``drop_after``, a stop, not a
vote) and the phase timer are untouched: where one of those could answer a stall, a test
gives that timer a bound past the game (``--drop-after``, ``tests/timed_node.py``'s phase
timeout).

>>> from p2p_nertz.protocol.membership import Membership, SilenceTimers
>>> m = Membership(0, 3, 0.0, SilenceTimers(1.0, 3.0, 60.0, 8))
>>> aim = SilenceAim(m)
>>> m.silence_vote_at(1), m.silence_vote_at(2)  # not aimed yet: nobody
(inf, inf)
>>> aim.at({2})
>>> m.silence_vote_at(1), m.silence_vote_at(2)  # seat 2 on the core's timer, heard at 0
(inf, 3.0)
>>> for t in range(11):  # (the node's ticks: listening without a break)
...     m.listening.saw(float(t))
>>> m.gone_for(1, 10.0), m.gone_for(2, 10.0)  # an abandon: seat 1 counts as heard now
(-3.0, 7.0)
>>> m.voted[2] = 0  # (voted out) ...
>>> _ = m.silence_vote_at(1)
>>> m.gone_for(2, 10.0)  # (the vote standing: gone as the core's timer says)
7.0
>>> del m.voted[2]  # ... then heard again, the vote withdrawn
>>> m.silence_vote_at(2), m.gone_for(2, 10.0)  # never voted out for silence again
(inf, -3.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from p2p_nertz.protocol.listening import silence_vote_at
from p2p_nertz.protocol.membership import Membership

__all__ = ["SilenceAim"]


class SilenceAim:
    """The silence votes of ``membership``'s node, aimed at the members :meth:`at` names (none
    until then); installed on its seam when made.

    Args:
        membership: the node's core's membership (``Peer._membership``), right after the core
            is made.
    """

    def __init__(self, membership: Membership) -> None:
        self.membership = membership
        self.seats: frozenset[int] = frozenset()
        #: the members this node has voted out for silence while aimed at them (seen voted)
        self.cast: set[int] = set()
        self._honest = membership.silence_vote_at_honest
        membership.silence_vote_at = self.vote_at

    def at(self, seats: Iterable[int]) -> None:
        """Aim the silence votes at ``seats`` from now on (a signal handler's call: only a
        set is replaced, read at the core's next input)."""
        self.seats = frozenset(seats)

    def vote_at(self, q: int, now: float | None = None) -> float:
        """When ``q`` is voted out for silence: the core's time if aimed at and never voted
        out while aimed, else never. (The scan asks only for members it has not voted out:
        every call notes which of those aimed at stand voted now, before a withdrawal.)
        Asked at ``now`` (an abandon, ``Membership.gone_for``): the core's time while aimed
        at and not withdrawn, else as if ``q`` was heard at ``now`` (module docstring)."""
        m = self.membership
        voted = m.voted
        self.cast.update(s for s in self.seats if s in voted)
        if q in self.seats and (q not in self.cast or q in voted):
            return self._honest(q, now)
        if now is None:
            return math.inf
        return silence_vote_at(now, m.timers.drop_after, m.listening, now)
