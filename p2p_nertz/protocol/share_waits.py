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

A member owes an item only while the *held* fold (every event delivered here: the tentative
fold) lacks it too, not the final fold alone. A vote against any member freezes its voter's
announcements, and with them every peer's finality past that member's count, so an answer or
a share delivered after the vote may never be final while the vote stands. Judged on the
final fold, every member then owed every share turned up since, and each voted the others
out, votes that capped each other and dropped nobody (soak seed 518, docs/shuffle.md
§10.12). So a vote names the items it was cast for (:attr:`ShareWaits.items`), and is
withdrawn once the held fold has every one of them (:meth:`ShareWaits.still_owes`,
:meth:`Membership.withheld_relieved
<p2p_nertz.protocol.membership.Membership.withheld_relieved>`), as a stall vote is once the
member gave what it owed (docs/protocol.md §9.2).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from p2p_nertz.protocol.share_store import ShareStore
from p2p_nertz.protocol.shuffle import DEALT, SHARING, DeckRound
from p2p_nertz.protocol.state import GameState

__all__ = ["Owed", "ShareWaits"]


class Owed(NamedTuple):
    """One item a member owes in one deal (``deal``: round number, context): an answer to
    the complaint ``at`` (dealer, complainer) when ``of`` is ``None``; else its share of
    position ``at`` (deck, position), its own (``of`` is the member) or its partial for the
    member dropped ``of``. Members are member indices of that deal."""

    deal: tuple[int, bytes]
    member: int
    at: tuple[int, int]
    of: int | None

    def held_in(self, held: GameState, store: ShareStore | None = None) -> bool:
        """Whether the ``held`` fold owes this item no more: it holds it, or its peer's
        ``store`` holds the member's own share (docs/shuffle.md §10.14: a move's turn-up
        shares travel as beats), or it has no use for it (the position opened, the member
        gone, the deal left: a later round, or the deal restarted)."""
        rs = held.round
        deck = rs.deck
        if deck is None or held.phase not in DEALT or (rs.number, deck.context) != self.deal:
            return True
        if self.of is None:
            return deck.complaints.get(self.at, 0) is not None
        if held.phase not in SHARING or self.at in deck.opened:
            return True
        if self.of == self.member:
            m = self.member
            return (
                m in deck.gone
                or m in deck.shares.get(self.at, {})
                or (store is not None and store.has(deck, (m, m, *self.at)))
            )
        return not any(m == self.of and self.member in by for m, by in deck.partials_owed(self.at))


class ShareWaits:
    """When the final fold turned up each position of the current deal, dropped each member
    and held each complaint (see the module docstring)."""

    def __init__(self) -> None:
        self._deal: tuple[int, bytes] | None = None  # (round, context): the deal noted
        self._since: list[float] = []  # per position turned up, in fold order: when
        self._open = 0  # positions before this one are all opened (nothing owed of them)
        #: positions (by index in fold order) that owe nothing while ``_reads`` holds
        self._settled: set[int] = set()
        self._reads: tuple[object, ...] = ()  # (what could make a settled position owe again)
        self._gone: dict[int, float] = {}  # member dropped -> when (its partials owed since)
        self._complained: dict[tuple[int, int], float] = {}  # (dealer, complainer) -> when
        #: game seat -> what it owed past its time at the last :meth:`late`
        self.items: dict[int, list[Owed]] = {}

    def late(
        self,
        now: float,
        final: GameState,
        held: GameState,
        timeout: float,
        heard: float,
        *,
        store: ShareStore | None = None,
    ) -> list[int]:
        """The members (game seats) that owe a share (their own, or a partial for a member
        dropped) of a position the final fold turned up, or an answer to a complaint it holds,
        more than ``timeout`` ago, every member having been heard since ``heard``, and that
        the ``held`` fold (the tentative one) and this peer's ``store`` lack too (module
        docstring); none gone (those are opened for) and none that is dropped. In seat order;
        what each owes in :attr:`items`."""
        self.items = {}
        rs = final.round
        deck = rs.deck
        if deck is None or final.phase not in DEALT:
            return []
        deal = (rs.number, deck.context)
        if deal != self._deal:
            self._deal, self._since, self._open = deal, [], 0
            self._gone, self._complained, self._settled = {}, {}, set()
        for key in deck.unanswered():
            self._complained.setdefault(key, now)
        if deck.final is not None and final.phase in SHARING:
            self._note(now, deck, store)
        owed = self._owed(deck, final, held, now=now, timeout=timeout, heard=heard, store=store)
        self.items = {seat: [item for item, _ in items] for seat, items in owed.items()}
        return sorted(self.items)

    def owing(
        self, final: GameState, held: GameState, heard: float, *, store: ShareStore | None = None
    ) -> dict[int, tuple[float, list[Owed]]]:
        """What :meth:`late` would find owed with no ``timeout``, of what it last noted (it
        notes nothing: the times are the votes'): game seat -> since when it has owed, every
        member heard since ``heard`` (its oldest item's), and what (the table's notice of a
        member owing its shares, docs/protocol.md §9.5, session 40)."""
        rs = final.round
        deck = rs.deck
        if deck is None or final.phase not in DEALT or (rs.number, deck.context) != self._deal:
            return {}
        owed = self._owed(deck, final, held, now=math.inf, timeout=0.0, heard=heard, store=store)
        return {
            seat: (min(start for _, start in items), [item for item, _ in items])
            for seat, items in owed.items()
        }

    def _owed(
        self,
        deck: DeckRound,
        final: GameState,
        held: GameState,
        *,
        now: float,
        timeout: float,
        heard: float,
        store: ShareStore | None,
    ) -> dict[int, list[tuple[Owed, float]]]:
        """Per game seat, the items owed more than ``timeout`` before ``now`` of what is
        noted, each with since when (every member heard since ``heard``): :meth:`late`'s and
        :meth:`owing`'s one walk."""
        assert self._deal is not None
        late: list[tuple[Owed, float]] = []
        for key in deck.unanswered():
            since = self._complained.get(key)
            if since is not None and max(since, heard) + timeout <= now:
                late.append((Owed(self._deal, key[0], key, None), max(since, heard)))
        if deck.final is not None and final.phase in SHARING:
            self._shares(now, deck, timeout, heard, late, store=store)
        dropped = final.dropped
        found: dict[int, list[tuple[Owed, float]]] = {}
        for item, since in late:
            seat = deck.members[item.member]
            if item.member in deck.gone or seat in dropped or item.held_in(held, store):
                continue
            found.setdefault(seat, []).append((item, since))
        return found

    def _note(self, now: float, deck: DeckRound, store: ShareStore | None) -> None:
        """Note the positions turned up and the members gone since the last call, at ``now``,
        and pass the positions opened (or whose every own share is held)."""
        turned = deck.turned
        since = self._since
        if len(since) < len(turned):
            since.extend([now] * (len(turned) - len(since)))
        for m in deck.gone:
            if m not in self._gone:
                self._gone[m] = now
                self._open = 0  # (partials for it owed of the positions the store opens)
        opened = deck.opened
        members = len(deck.members)
        while self._open < len(turned) and (
            turned[self._open] in opened
            or (not deck.gone and _stored(deck, store, turned[self._open], members))
        ):
            self._open += 1

    def _shares(
        self,
        now: float,
        deck: DeckRound,
        timeout: float,
        heard: float,
        late: list[tuple[Owed, float]],
        *,
        store: ShareStore | None,
    ) -> None:
        """Add to ``late`` the shares owed past their time, each with since when."""
        assert self._deal is not None
        deal = self._deal
        turned = deck.turned
        since = self._since
        opened = deck.opened
        members = len(deck.members)
        # A position that owes nothing now owes nothing later while the round's members
        # gone, complaints and keys and the store stay: the final fold and the store only
        # gain shares and openings within a deal, so what is lacking only shrinks, and so do
        # the partials owed (``DeckRound.partials_owed``: those read the members gone and
        # who holds a VSS share, which the complaints and the keys decide). Walking such
        # positions again at every input was most of this wait's CPU (a member gone, its
        # positions turned up by moves never opened in a fold: 10% of the frozen-beat tests).
        reads = (deck.gone, len(deck.keys), tuple(deck.complaints.items()), store)
        if reads != self._reads:
            self._reads, self._settled = reads, set()
        settled = self._settled
        for k in range(self._open, len(since)):
            if k in settled:
                continue
            start = max(since[k], heard)
            if start + timeout > now:
                break  # (noted in fold order: the later ones are younger)
            where = turned[k]
            if where in opened:
                settled.add(k)
                continue
            if store is None:
                held = deck.shares.get(where, {})
                lacking = [m for m in range(members) if m not in held]
            else:
                # (A share the store holds is held_in, and a member gone owes none: leaving
                # them out here spares an item each, for every member at every position in
                # flight at every input: half of seed 49013's CPU at 8 players.)
                lacking = store.lacking(deck, where)
            partials = deck.partials_owed(where)
            if not lacking and not partials:
                settled.add(k)
                continue
            late.extend((Owed(deal, m, where, m), start) for m in lacking)
            for m, owing in partials:
                gone = self._gone.get(m)  # (None: not noted yet, as :meth:`owing` may find)
                begun = start if gone is None else max(start, gone)
                if gone is not None and begun + timeout <= now:
                    late.extend((Owed(deal, j, where, m), begun) for j in owing)


def _stored(
    deck: DeckRound, store: ShareStore | None, where: tuple[int, int], members: int
) -> bool:
    """Whether every member's own share of ``where`` is in the fold ``deck`` or the ``store``
    (nothing is owed of it while no member is gone: a position a move turned up and nobody
    played is never opened in a fold, docs/shuffle.md §10.14)."""
    held = deck.shares.get(where, {})
    if len(held) == members:
        return True
    return store is not None and (
        store.whole(deck, where)
        or all(m in held or store.has(deck, (m, m, *where)) for m in range(members))
    )
