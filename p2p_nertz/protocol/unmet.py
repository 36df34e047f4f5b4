"""Votes that stand without a majority: who is voted out, why, by whom, of how many needed.

A vote to drop a member (for silence, for withholding, on proof) drops it once a strict
majority of the roster has cast one (DESIGN.md §6). Most of the time the others' votes follow
within moments, each on its own clock; but some never come, and no rule can safely count
fewer (docs/protocol.md §9.2, §13 *A claim on a silent member's feed*: two liars at four
players, the honest two's votes two of four). The table then waits, correctly, and a person
must be told why: :func:`unmet` reads, from a fold, the votes standing against each member
still in (the roster's, counted or capped: :func:`~p2p_nertz.protocol.roster.standing_votes`)
and the majority they fall short of; :class:`UnmetSince` says which have stood so for longer
than a short while (:data:`UNMET_AFTER`), for the front ends (``ui/view.py``'s words) and the
node's log, the same knowledge for both. Nothing here signs, sends or changes a fold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.roster import standing_votes
from p2p_nertz.protocol.state import GameState, Phase

__all__ = ["UNMET_AFTER", "Unmet", "UnmetSince", "unmet"]

#: Seconds a vote stands short of a majority before it is told: the others vote on their own
#: clocks after the same timers, so their votes come a beat or two apart; a line that came and
#: went as each vote joined would say nothing true.
UNMET_AFTER: Final = 5.0


@dataclass(frozen=True, slots=True)
class Unmet:
    """The votes standing against ``seat``, short of a majority.

    Attributes:
        seat: the member voted out.
        reasons: why, each reason its voters gave, in the order of :class:`DropReason`.
        voters: the members whose votes stand, in seat order.
        majority: the votes needed to drop it (a strict majority of the roster).
        members: the members in the game (the roster's size, the dropped not counted).
    """

    seat: int
    reasons: tuple[DropReason, ...]
    voters: tuple[int, ...]
    majority: int
    members: int


def unmet(state: GameState) -> tuple[Unmet, ...]:
    """The members of ``state``'s roster with votes standing against them (not withdrawn, by
    members still in) that are fewer than a majority, in seat order (none once the game is
    over: nothing waits on them then)."""
    if state.phase is Phase.OVER:
        return ()
    roster = state.roster
    majority, members = roster.majority, len(roster.members())
    found = []
    for seat, ballots in standing_votes(roster).items():
        voters = tuple(sorted({voter for voter, _ in ballots}))
        if seat in roster.dropped or len(voters) >= majority:
            continue
        reasons = tuple(sorted({vote.reason for _, vote in ballots}))
        found.append(Unmet(seat, reasons, voters, majority, members))
    return tuple(found)


class UnmetSince:
    """Since when each vote found short of a majority has stood so (per member voted out and
    its voters: a vote that joins, or is withdrawn, starts the wait again), and which have for
    :data:`UNMET_AFTER` seconds or more; ``now`` is the caller's clock."""

    def __init__(self, after: float = UNMET_AFTER) -> None:
        self.after = after
        self._since: dict[tuple[int, tuple[int, ...]], float] = {}

    def standing(self, state: GameState, now: float) -> tuple[Unmet, ...]:
        """The votes of ``state`` that stand without a majority, those that have for long."""
        found = unmet(state)
        since = {(u.seat, u.voters): self._since.get((u.seat, u.voters), now) for u in found}
        self._since = since
        return tuple(u for u in found if now - since[(u.seat, u.voters)] >= self.after)
