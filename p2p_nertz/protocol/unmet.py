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
node's log, the same knowledge for both; :class:`UnmetTeller` turns that into notices, one
when such a vote has stood for the while (:class:`VoteShort`) and one when it no longer stands
short (its :class:`UnmetEnd`: the member dropped, the vote withdrawn, joined, the game over),
for the node's log and its ``--json`` lines (session 37). Nothing here signs, sends or changes
a fold.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.roster import standing_votes
from p2p_nertz.protocol.state import GameState, Phase

__all__ = ["UNMET_AFTER", "Unmet", "UnmetEnd", "UnmetSince", "UnmetTeller", "VoteShort", "unmet"]

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


class UnmetEnd(enum.Enum):
    """Why a vote told short of a majority (:class:`VoteShort`) no longer stands so."""

    DROPPED = "dropped"  #: a majority came: the member is out
    WITHDRAWN = "withdrawn"  #: fewer votes stand now (withdrawn, or their voters gone)
    JOINED = "joined"  #: more votes stand, still short (told anew once they stood a while)
    OVER = "over"  #: the game is over: nothing waits on the vote


@dataclass(frozen=True, slots=True)
class VoteShort:
    """Notice: the votes ``unmet`` have stood short of a majority for :data:`UNMET_AFTER`
    seconds (``ended`` ``None``), or no longer stand so (``ended``: why). Made by the node from
    its tentative fold (:class:`UnmetTeller`), not by the core: nothing on the wire.

    Attributes:
        unmet: the votes, as they stood when told.
        ended: ``None`` when told; why they no longer stand short, at their end.
    """

    unmet: Unmet
    ended: UnmetEnd | None = None


class UnmetTeller:
    """Which votes short of a majority begin to be told and which end (:meth:`check`), each
    once: a vote that stands :data:`UNMET_AFTER` seconds (:class:`UnmetSince`) is told, and
    its end is told when it no longer stands so, told anew if it stands again (or with other
    voters) for the while (``tests/test_ui_unmet.py``)."""

    def __init__(self, after: float = UNMET_AFTER) -> None:
        self.since = UnmetSince(after)
        self._told: dict[tuple[int, tuple[int, ...]], Unmet] = {}

    def check(self, state: GameState, now: float) -> list[VoteShort]:
        """The notices of ``state`` at ``now``: the ends of votes told before that no longer
        stand short (first), then the votes that have stood short for the while, not told."""
        standing = {(u.seat, u.voters): u for u in self.since.standing(state, now)}
        notices = [
            VoteShort(told, _why_ended(told, state))
            for key, told in sorted(self._told.items())
            if key not in standing
        ]
        notices += [VoteShort(u) for key, u in sorted(standing.items()) if key not in self._told]
        self._told = standing
        return notices


def _why_ended(told: Unmet, state: GameState) -> UnmetEnd:
    """Why the votes ``told`` no longer stand short of a majority in ``state``."""
    roster = state.roster
    if state.phase is Phase.OVER:
        return UnmetEnd.OVER
    ballots = standing_votes(roster).get(told.seat, ())
    voters = {voter for voter, _ in ballots}
    if told.seat in roster.dropped or len(voters) >= roster.majority:
        return UnmetEnd.DROPPED
    if voters > set(told.voters):
        return UnmetEnd.JOINED
    return UnmetEnd.WITHDRAWN
