"""How long what a shuffle game's round waits for from one member has waited.

A member heard but not sending, within ``phase_timeout``, what it owes the table is voted out
*withheld*, and the members left open its shares for it (docs/shuffle.md §10.4, §6.4): its
share of a position turned up in the final fold, its partial share of such a position for a
member dropped since, or its answer to a complaint of its box (§6.3). :class:`ShareWaits`
notes when this peer's final fold turned each position up (the final fold only grows: its
positions turned up, in fold order, are a list that only lengthens within one deal of a
round), when it first held each member dropped and each complaint, and says who owes
something past its time. *What* a member owes is the fold's (:class:`DeckRound
<p2p_nertz.protocol.shuffle.DeckRound>`: ``owed``, ``partials_owed``, ``unanswered``); the
time is this peer's alone, as every liveness timer's is.
"""

from __future__ import annotations

from p2p_nertz.protocol.shuffle import DEALT, SHARING, DeckRound
from p2p_nertz.protocol.state import GameState

__all__ = ["ShareWaits"]


class ShareWaits:
    """When the final fold turned up each position of the current deal, dropped each member
    and held each complaint (see the module docstring)."""

    def __init__(self) -> None:
        self._deal: tuple[int, bytes] | None = None  # (round, context): the deal noted
        self._since: list[float] = []  # per position turned up, in fold order: when
        self._open = 0  # positions before this one are all opened (nothing owed of them)
        self._gone: dict[int, float] = {}  # member dropped -> when (its partials owed since)
        self._complained: dict[tuple[int, int], float] = {}  # (dealer, complainer) -> when

    def late(self, now: float, final: GameState, timeout: float, heard: float) -> list[int]:
        """The members (game seats) that owe a share (their own, or a partial for a member
        dropped) of a position turned up, or an answer to a complaint, more than ``timeout``
        ago, every member having been heard since ``heard``; none gone (those are opened for)
        and none that is dropped. In seat order."""
        rs = final.round
        deck = rs.deck
        if deck is None or final.phase not in DEALT:
            return []
        deal = (rs.number, deck.context)
        if deal != self._deal:
            self._deal, self._since, self._open = deal, [], 0
            self._gone, self._complained = {}, {}
        late: set[int] = set()
        for key in deck.unanswered():
            since = self._complained.setdefault(key, now)
            if max(since, heard) + timeout <= now:
                late.add(key[0])
        if deck.final is not None and final.phase in SHARING:
            self._shares(now, deck, timeout, heard, late)
        return sorted(
            deck.members[m]
            for m in late
            if m not in deck.gone and deck.members[m] not in final.dropped
        )

    def _shares(
        self, now: float, deck: DeckRound, timeout: float, heard: float, late: set[int]
    ) -> None:
        """Add to ``late`` the members (indices) owing a share past its time."""
        turned = deck.turned
        since = self._since
        if len(since) < len(turned):
            since.extend([now] * (len(turned) - len(since)))
        for m in deck.gone:
            self._gone.setdefault(m, now)
        opened = deck.opened
        while self._open < len(turned) and turned[self._open] in opened:
            self._open += 1
        members = len(deck.members)
        for k in range(self._open, len(turned)):
            start = max(since[k], heard)
            if start + timeout > now:
                break  # (noted in fold order: the later ones are younger)
            where = turned[k]
            if where in opened:
                continue
            held = deck.shares.get(where, {})
            late.update(m for m in range(members) if m not in held and m not in deck.gone)
            for m, owing in deck.partials_owed(where):
                if max(start, self._gone[m]) + timeout <= now:
                    late.update(owing)
