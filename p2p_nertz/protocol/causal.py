"""What an event proves its author held: the causal past of its frontier (docs/protocol.md §6.2).

Theory of operation
-------------------
An event's frontier (§5.1) names what its author announced holding when it signed. Causal
delivery (§6.2) says more: a peer delivers an event only once it holds every event that event's
frontier names, so the author of an event held, besides what its own frontier names, everything
the events it names held in turn, transitively (its own previous event among them). The
*held vector* of an event is that: the component-wise maximum of its frontier and the held
vectors of the events its frontier names. Holding a feed is contiguous, so one count per feed
says it all; and the held vector of a feed's event is at least its previous event's (it names
it), so an event adds to its previous event's vector only the held vectors of the feeds its
frontier moved on.

The rule has an exception, the same as delivery's: of a member proven to fork, or dropped (a
cut), or readmitted (a gap), a peer may deliver an event naming more of that member's feed than
it holds (§6.2, §9.4). Those feeds are *masked*: a masked feed's entry of an event's held vector
comes from its author's own frontiers only (its own chain's), and no held vector is taken
through an event of a masked feed. What is left is a lower bound of what the author held,
never more: a count short of the truth only makes a reader prove less.

:class:`CausalPast` keeps, per event taken, its held vector, its frontier and its Lamport time
(``8N + 8`` bytes at ``N`` seats), in arrays per feed. Events are taken in any order that
puts each event after those its frontier names and after its feed's earlier events (the
total order does); an event taken out of its feed's turn is skipped, a feed's missing events
are filled with its last vector (a lower bound again).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable

__all__ = ["CausalPast"]


class CausalPast:
    """Per event taken, what its author held (see the module docstring).

    Args:
        seats: how many seats the game has.
        masked: the seats whose feeds are not read through (forked, dropped, readmitted).

    >>> past = CausalPast(3)
    >>> past.take(0, 1, 5, (0, 0, 0))
    >>> past.take(1, 1, 6, (1, 0, 0))
    >>> past.take(2, 1, 7, (0, 1, 0))  # seat 2 names seat 1's event, which named seat 0's
    >>> past.held(2, 1)
    (1, 1, 0)
    """

    __slots__ = ("_frontiers", "_held", "_lamports", "masked", "seats")

    def __init__(self, seats: int, masked: Iterable[int] = ()) -> None:
        self.seats = seats
        self.masked = frozenset(masked)
        self._held = [array("I") for _ in range(seats)]
        self._frontiers = [array("I") for _ in range(seats)]
        self._lamports = [array("Q") for _ in range(seats)]

    def count(self, seat: int) -> int:
        """How many of ``seat``'s events are taken (or filled)."""
        return len(self._lamports[seat])

    def take(self, seat: int, seq: int, lamport: int, frontier: tuple[int, ...]) -> None:
        """Take ``seat``'s event ``seq`` (at ``lamport``, with ``frontier``)."""
        n = self.seats
        lamports = self._lamports[seat]
        have = len(lamports)
        if seq <= have or len(frontier) != n:
            return  # (taken already, or not of this game's shape)
        held_rows = self._held
        held = held_rows[seat]
        frontiers = self._frontiers[seat]
        if have:
            last = have - 1
            vector = list(held[last * n : have * n])
            before = frontiers[last * n : have * n]
        else:
            vector = [0] * n
            before = array("I", bytes(4 * n))
        while have < seq - 1:  # (a missing event of the feed: its last vector, a lower bound)
            held.extend(vector)
            frontiers.extend(before)
            lamports.append(lamports[-1] if lamports else 0)
            have += 1
        masked = self.masked
        for q in range(n):
            f = frontier[q]
            vector[q] = max(vector[q], f)
            if q == seat or f <= before[q] or q in masked:
                continue  # (what its previous event named is in its vector already)
            taken = len(self._lamports[q])
            if taken == 0:
                continue
            at = (min(f, taken) - 1) * n
            row = held_rows[q][at : at + n]
            if not masked:
                vector = list(map(max, vector, row))  # (in C: the usual case)
                continue
            for r in range(n):
                if row[r] > vector[r] and r not in masked:
                    vector[r] = row[r]
        held.extend(vector)
        frontiers.extend(frontier)
        lamports.append(lamport)

    def held(self, seat: int, seq: int) -> tuple[int, ...] | None:
        """The held vector of ``seat``'s event ``seq`` (``None``: not taken)."""
        if not 1 <= seq <= len(self._lamports[seat]):
            return None
        n = self.seats
        return tuple(self._held[seat][(seq - 1) * n : seq * n])

    def frontier(self, seat: int, seq: int) -> tuple[int, ...] | None:
        """The frontier of ``seat``'s event ``seq`` as taken (``None``: not taken)."""
        if not 1 <= seq <= len(self._lamports[seat]):
            return None
        n = self.seats
        return tuple(self._frontiers[seat][(seq - 1) * n : seq * n])

    def lamport(self, seat: int, seq: int) -> int | None:
        """The Lamport time of ``seat``'s event ``seq`` (``None``: not taken)."""
        lamports = self._lamports[seat]
        return lamports[seq - 1] if 1 <= seq <= len(lamports) else None

    def up_to(self, seat: int, lamport: int) -> int:
        """How many of ``seat``'s events taken are timed at or below ``lamport`` (its clock
        increases along its feed)."""
        return bisect_right(self._lamports[seat], lamport)
