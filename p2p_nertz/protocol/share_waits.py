"""How long each position turned up in a shuffle game has waited for its shares.

A member heard but not sending its share of a position turned up in the final fold within
``phase_timeout`` is voted out *withheld*, and the members left open its shares for it
(docs/shuffle.md §10.4, §6.4). :class:`ShareWaits` notes when this peer's final fold turned
each position up (the final fold only grows: its positions turned up, in fold order, are a
list that only lengthens within one deal of a round) and says who owes a share past its time.
Which shares a member owes is the fold's (:meth:`DeckRound.owed
<p2p_nertz.protocol.shuffle.DeckRound.owed>`, :attr:`~p2p_nertz.protocol.shuffle.DeckRound.opened`);
the time is this peer's alone, as every liveness timer's is.
"""

from __future__ import annotations

from p2p_nertz.protocol.state import GameState, Phase

__all__ = ["ShareWaits"]

_SHARING = (Phase.PLAY, Phase.OPEN)  # the phases shares are owed in


class ShareWaits:
    """When the final fold turned up each position of the current deal (see the module
    docstring)."""

    def __init__(self) -> None:
        self._deal: tuple[int, bytes] | None = None  # (round, context): the deal noted
        self._since: list[float] = []  # per position turned up, in fold order: when
        self._open = 0  # positions before this one are all opened (nothing owed of them)

    def late(self, now: float, final: GameState, timeout: float, heard: float) -> list[int]:
        """The members (game seats) that owe their share of a position turned up more than
        ``timeout`` ago, every member having been heard since ``heard``; none gone (those
        are opened for) and none that is dropped. In seat order."""
        rs = final.round
        deck = rs.deck
        if deck is None or deck.final is None or final.phase not in _SHARING:
            return []
        deal = (rs.number, deck.context)
        if deal != self._deal:
            self._deal, self._since, self._open = deal, [], 0
        turned = deck.turned
        since = self._since
        if len(since) < len(turned):
            since.extend([now] * (len(turned) - len(since)))
        opened = deck.opened
        while self._open < len(turned) and turned[self._open] in opened:
            self._open += 1
        late: set[int] = set()
        members = len(deck.members)
        for k in range(self._open, len(turned)):
            if max(since[k], heard) + timeout > now:
                break  # (noted in fold order: the later ones are younger)
            where = turned[k]
            if where in opened:
                continue
            held = deck.shares.get(where, {})
            late.update(m for m in range(members) if m not in held and m not in deck.gone)
            if len(late) + len(deck.gone) >= members:
                break
        return sorted(deck.members[m] for m in late if deck.members[m] not in final.dropped)
