"""A table split with no majority on our side: the members out of reach, said once.

A drop needs a strict majority of the current roster (:attr:`Roster.majority
<p2p_nertz.protocol.roster.Roster.majority>`, docs/protocol.md §9.2). When the members this
peer suspects (silent past ``suspect_after``) leave it and the members it hears short of that
majority, nobody can be dropped from here: in a 2|2 split of four, each half votes the other
out and neither half's votes count, so the game stands still until the others come back or
someone leaves. Nothing on the wire says so; before this notice a player saw only "P3 is
silent" for each member across the split (scan26, session 26).

:class:`Reach` watches for that, at the end of every input, and yields one
:class:`OutOfReach` notice when it begins (again if the members out of reach change
meanwhile: in a 1|3 split the three are suspected one by one) and one when it is over (the
first of them heard again makes a majority, or the roster changed). A two-member table is left
out: there nobody can ever be dropped, and the abandon is on offer instead (§9.3).

A peer woken from a sleep (a break, :mod:`p2p_nertz.protocol.listening`) suspects every
member at its first input and clears each as it reads what waited for it: it says nothing new
out of reach until it has listened for ``suspect_after`` since it woke, as it votes nobody out
for silence before then (§9.2). Before session 27 a waker said "half the table is out of
reach" and "back" at one instant (soak seed 1, 2-4 players: seat 2 at 33.03 s). The end of a
notice given before the sleep is said as soon as it comes.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from p2p_nertz.protocol.roster import Roster

__all__ = ["OutOfReach", "Reach"]


@dataclass(frozen=True, slots=True)
class OutOfReach:
    """Notice: the members out of reach leave no majority here (``over`` false), or that is
    over (``over`` true).

    Attributes:
        seats: the members out of reach, in seat order (when it began: as they were then;
            when it is over: those of them heard again).
        members: how many members the roster had (to say "half" or "most" of the table).
        over: whether this says that it is over.
    """

    seats: tuple[int, ...]
    members: int
    over: bool = False


class Reach:
    """Whether the members this peer suspects leave it no majority, and whether it said so.

    >>> reach, roster = Reach(), Roster(4)
    >>> reach.check(roster, 0, {2, 3})
    OutOfReach(seats=(2, 3), members=4, over=False)
    >>> reach.check(roster, 0, {2, 3}) is None  # (once)
    True
    >>> reach.check(roster, 0, {1, 2, 3})
    OutOfReach(seats=(1, 2, 3), members=4, over=False)
    >>> reach.check(roster, 0, {1})
    OutOfReach(seats=(2, 3), members=4, over=True)
    >>> Reach().check(roster, 0, {3}) is None  # (three of four hear each other)
    True
    >>> reach.check(roster, 0, {2, 3})
    OutOfReach(seats=(2, 3), members=4, over=False)
    >>> reach.check(roster, 0, set())  # (everyone heard again: the break is said to be over)
    OutOfReach(seats=(2, 3), members=4, over=True)
    >>> reach.check(roster, 0, set()) is None  # (and nothing more while nobody is suspected)
    True
    """

    __slots__ = ("out",)

    def __init__(self) -> None:
        #: the members out of reach, as the notice that began it named them (empty: none)
        self.out: tuple[int, ...] = ()

    def check(
        self, roster: Roster, seat: int, suspected: Set[int], *, listened: bool = True
    ) -> OutOfReach | None:
        """The notice due now, if any: ``roster`` is the final fold's, ``seat`` ours,
        ``suspected`` the members suspected here; ``listened``: whether we have listened for
        ``suspect_after`` since the last break (if not, nothing new begins: module docstring).

        >>> reach = Reach()
        >>> reach.check(Roster(4), 0, {1, 2, 3}, listened=False) is None  # (just woken)
        True
        """
        if not suspected and not self.out:
            return None  # (asked after every input: nobody suspected, nobody out, no notice)
        members = roster.members()
        silent: tuple[int, ...] = ()
        if seat in members and len(members) > 2:
            silent = tuple(sorted(s for s in suspected if s in members and s != seat))
            if len(members) - len(silent) >= roster.majority:
                silent = ()
        if silent and not listened:
            return None  # (woken: what waited for us is being read)
        if silent and silent != self.out:  # (begun, or another member out of reach since)
            self.out = silent
            return OutOfReach(silent, len(members))
        if not silent and self.out:
            back = tuple(s for s in self.out if s in members and s not in suspected)
            self.out = ()
            return OutOfReach(back, len(members), over=True)
        return None
