"""What the final phase waits for from one member, and whether the held fold has it.

A member heard but not sending, within ``phase_timeout``, the event the final phase waits
for from it (a commit game's commit, nonce, secret, ``ready`` or result; a shuffle game's
key, next stage or secret) is voted out *withheld* (docs/protocol.md §9.2, docs/shuffle.md
§8.3). The vote, as any vote, freezes its voter's announcements of the member's feed, and
with them every peer's finality past its count: an event of the member delivered after the
vote is never final while the vote stands. Judged on the final fold alone, the vote then
stood for good, and so did those of the members that woke later and found the final fold
still waiting; every member's later events held back too, each member's final fold showed
the others owing, and votes that capped each other dropped nobody: the round waited for
ever (a shuffle game's key, :class:`~p2p_nertz.sim.cheats.DeckCheatKind` ``late_key``; the
same shape as soak seed 518's shares, docs/shuffle.md §10.12, §10.13).

So an event counts as withheld only while the *held* fold (every event delivered here: the
tentative fold) lacks it too, and a vote names the event it was cast for
(:class:`Awaited`): it is withdrawn once the held fold has it and the held votes have not
dropped the member (:meth:`Membership.withheld_relieved
<p2p_nertz.protocol.membership.Membership.withheld_relieved>`), as a vote on a share is.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

from p2p_nertz.protocol.state import GameState, Phase

__all__ = ["Awaited"]


class Awaited(NamedTuple):
    """The event the final phase ``phase`` of round ``number`` waited for from ``seat``
    (``context``: a shuffle game's deal, its attempt included; empty in a commit game). In a
    shuffle game's deal, ``stage`` is the (deck, stage) due from it: its other stages wait
    for another member's first (docs/shuffle.md §4.3)."""

    number: int
    phase: Phase
    context: bytes
    seat: int
    stage: tuple[int, int] | None = None

    @classmethod
    def of(cls, final: GameState, seat: int) -> Awaited:
        """What ``final``'s phase waits for from ``seat`` (one of the seats it waits for)."""
        rs = final.round
        deck = rs.deck
        stage = None
        if final.phase is Phase.DEAL and deck is not None:
            stage = _due(deck.stages.keys(), deck.member(seat), len(deck.members))
        return cls(rs.number, final.phase, b"" if deck is None else deck.context, seat, stage)

    def held_in(self, held: GameState) -> bool:
        """Whether the ``held`` fold owes this event no more: it holds it, or has left that
        phase of that round or deal behind. Not while the held votes drop the member: the
        wait is then theirs, not the event's."""
        if self.seat in held.dropped:
            return False
        rs = held.round
        deck = rs.deck
        if (rs.number, held.phase, b"" if deck is None else deck.context) != (
            self.number,
            self.phase,
            self.context,
        ):
            return True
        if self.stage is not None and deck is not None:
            return self.stage in deck.stages
        return self.seat not in held.waiting()


def _due(made: Collection[tuple[int, int]], member: int, members: int) -> tuple[int, int] | None:
    """The first (deck, stage) of ``member``'s that is not ``made`` (in stage order)."""
    for s in range(members):
        where = ((member - s) % members, s)
        if where not in made:
            return where
    return None
