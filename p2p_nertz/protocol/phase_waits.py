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

Nor is a member blamed for its phase event while another member owes this peer events it does
not hold (:class:`Debtors`, docs/protocol.md §9.2, *nobody is blamed for a debt of
another's*, session 39): the member's own fold may wait on those very events. A liar's beat
announcing a head it never gives held one honest member's finality short of its result (it
had missed the liar's last true beat), while the others, which had it, made theirs final;
at the phase's timeout they voted the honest member out *withheld* before its vote on the
liar reached them, three of five (two liars at five players, seed 158). The debtor is the
stall timers' (:meth:`Membership.stalls <p2p_nertz.protocol.membership.Membership.stalls>`),
and the phase's wait on the others counts again from when its debt is settled: given, or its
drop final here.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import NamedTuple

from p2p_nertz.protocol.state import GameState, Phase

__all__ = ["Awaited", "Debtors"]


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

    def sent_in(self, held: GameState) -> bool:
        """Whether the ``held`` fold holds this event itself, the member's own (its round's
        record of the phase names it), not only has left the phase behind (:meth:`held_in`:
        a round may end in play without a member's ``ready``). A later round: not known here,
        ``False``. What a wait told ends *given* on (``TableWaits.gave``, session 43)."""
        rs, deck, seat = held.round, held.round.deck, self.seat
        if (rs.number, b"" if deck is None else deck.context) != (self.number, self.context):
            return False
        if self.stage is not None:
            return deck is not None and self.stage in deck.stages
        done: Collection[int]
        if self.phase is Phase.JOINING:
            done = held.joined
        elif self.phase is Phase.COMMIT:
            done = rs.fair.commits.keys()
        elif self.phase is Phase.NONCE:
            done = rs.fair.nonces.keys()
        elif self.phase is Phase.PLAY:
            done = rs.ready
        elif self.phase in (Phase.REVEAL, Phase.OPEN):
            done = rs.secrets.keys()
        elif self.phase is Phase.RESULT:
            done = rs.results
        elif self.phase is Phase.KEY and deck is not None:
            return deck.member(seat) in deck.keys
        else:
            return self.held_in(held)
        return seat in done


def _due(made: Collection[tuple[int, int]], member: int, members: int) -> tuple[int, int] | None:
    """The first (deck, stage) of ``member``'s that is not ``made`` (in stage order)."""
    for s in range(members):
        where = ((member - s) % members, s)
        if where not in made:
            return where
    return None


class Debtors:
    """The members that owe this peer events it does not hold (their own feed past a head they
    announced, or a third member's feed they announced holding past ours: a stall record's
    feed or relay targets), unmet for half a ``phase_timeout`` (a younger record is an event
    in flight, as :func:`~p2p_nertz.protocol.membership._ours` reads it), and when such a debt
    last ended (module docstring). Kept by :meth:`scan` at each of the phase wait's reads."""

    __slots__ = ("owing", "settled_at")

    def __init__(self) -> None:
        self.owing: frozenset[int] = frozenset()
        #: when a debt last ended (given, or its member's record gone with its drop)
        self.settled_at = -math.inf

    def scan(
        self,
        stall: Mapping[int, tuple[float, int, tuple[int, ...], tuple[int, ...]]],
        since: float,
        now: float,
    ) -> None:
        """Read the stall records (``Membership.stall``) at ``now``: a record unmet since
        ``since`` or before that waits for events not held here makes its member a debtor."""
        owing = frozenset(
            q for q, (at, feed, _, relay) in stall.items() if at <= since and (feed or any(relay))
        )
        if self.owing - owing:
            self.settled_at = now
        self.owing = owing

    def excuse(self, seat: int) -> bool:
        """Whether ``seat``'s phase event is not blamed now: another member is a debtor."""
        return bool(self.owing - {seat})
