"""Since when the peer has listened without a break, and what a break holds back
(docs/protocol.md §9.1, §9.2).

Theory of operation
-------------------
The peer reads no clock: the runtime calls it at least every ``beat_interval`` (a tick, a
message, a move). A pause between two inputs longer than ``suspect_after`` is a **break**: the
process was stopped (``SIGSTOP``, a laptop lid, a long pause of the runtime), and what the
others sent meanwhile waits in its socket, unread. :class:`Listening` keeps since when the peer
has run without one, from its inputs' times alone.

Two rules read it. The table is gone (:mod:`p2p_nertz.protocol.gone`) only after a silence
counted while we listened. And a member is **voted out for silence** (§9.2) only once we have
also listened for ``suspect_after`` since the last break (:func:`silence_vote_at`): a peer
that wakes has heard nobody for as long as it slept, before it reads what waited for it, and
it reads that backlog a message or a burst at a time. Without the rule, the scan after its
first input voted out every member it had not read yet, each vote withdrawn as that member's
messages came in, and where the others had voted a member out and withdrawn, the waker that
had not read the withdrawals yet completed the drop (four players, seed 2, seat 0 asleep from
5.85 s: the culprit of ``tests/test_sim_shuffle_cheats.py``'s late answer dropped though it
had answered). Within ``suspect_after`` of listening the backlog is read (a socket holds a
bounded number of messages, read in well under a second; the simulator hands them all over on
waking), and every live member has been heard: what it sent while we slept, or its beats
since. A member still unheard then is silent, and is voted out at once if its own timer has
run out. So a member dead for good is voted out ``drop_after`` after it was last heard, or
``suspect_after`` after the waker woke, whichever is later; a waker that never catches up (a
flood it cannot read within the bound) votes at that time all the same.
"""

from __future__ import annotations

__all__ = ["Listening", "heard_at", "silence_vote_at"]


class Listening:
    """Since when the peer has been running without a break (module docstring).

    Args:
        now: the time the peer starts (or is restored).
        gap: the longest pause between two inputs that is not a break (``suspect_after``).
    """

    __slots__ = ("gap", "last", "since")

    def __init__(self, now: float, gap: float) -> None:
        self.gap = gap
        self.since = now
        self.last = now

    def since_at(self, now: float) -> float:
        """Since when we have listened, asked at ``now``: ``now`` itself if no input came
        for longer than the gap. A question is a call too: the runtime may ask on waking,
        before the peer has read anything (the end of an input begun before a ``SIGSTOP``)."""
        return now if now - self.last > self.gap else self.since

    def saw(self, now: float) -> None:
        """An input at ``now`` (a message, a tick, a move): after a break, we listen anew."""
        if now - self.last > self.gap:
            self.since = now
        self.last = max(self.last, now)


def heard_at(ears: Listening | None, now: float, gap: float) -> Listening:
    """An input at ``now`` of a process that began listening at its first one (``ears``:
    ``None`` before it; a lobby has no clock of its own before its first input): its
    :class:`Listening`, made then with ``gap``."""
    if ears is None:
        ears = Listening(now, gap)
    ears.saw(now)
    return ears


def silence_vote_at(
    heard: float, drop_after: float, listening: Listening, now: float | None = None
) -> float:
    """When a member last heard at ``heard`` is voted out for silence: ``drop_after`` later,
    and not before we have listened for the gap (``suspect_after``) since the last break
    (module docstring). The peer's scan and its next deadline read this one sum, and so does
    an abandon (:meth:`~p2p_nertz.protocol.membership.Membership.gone_for`), asked at ``now``
    (a question may come before the first input after a break, :meth:`Listening.since_at`):
    a node whose own disk held it for longer than ``drop_after`` (a sync of seconds) abandoned
    the other on waking, before it read what the other had sent meanwhile (session 29).

    >>> ears = Listening(0.0, gap=5.0)
    >>> silence_vote_at(2.0, 30.0, ears)  # no break: the timer alone
    32.0
    >>> ears.saw(100.0)  # woken from a sleep of 100 s: nothing read yet
    >>> silence_vote_at(2.0, 30.0, ears)  # the backlog first
    105.0
    >>> silence_vote_at(2.0, 30.0, ears, now=200.0)  # asked on waking again, before an input
    205.0
    """
    since = listening.since if now is None else listening.since_at(now)
    return max(heard + drop_after, since + listening.gap)
