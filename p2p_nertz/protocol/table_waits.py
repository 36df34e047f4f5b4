"""What a member's table waits on, and whether it waits in vain: the peer's answers.

The peer answers its front ends and its node who has been silent and for how long
(:meth:`TableWaits.silent_for`, :meth:`TableWaits.silent`), whether the one other member left
counts as gone for an abandon (:meth:`TableWaits.gone_for`), whether the whole table is gone
(:meth:`TableWaits.table_gone`, the rule in :mod:`~p2p_nertz.protocol.gone`), whether a member
whose game is over still owes the table a vote (:meth:`TableWaits.judging`: session 40), and on
whom the table waits: members held back (their events wait here for events nobody sent,
:func:`~p2p_nertz.protocol.unmet.held_back`) and members heard that owe what they alone can
give (:meth:`TableWaits.owing`: since session 39; a shuffle game's shares since session 40;
what a phase waits for, :func:`events_owed`, is a spectator's too since session 40), and the
drops the held votes decide that are not final yet, with what holds each back
(:meth:`TableWaits.drops_waiting`). Each answer
reads the parts that own the knowledge (``Membership``'s silence and stall records, the
feeds, the folds, the phase's timer, the chains' stable time) and decides nothing: this part
signs, votes and changes nothing. It was the peer's before session 39 (``Peer`` is at the
class limit); the peer delegates to it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Protocol

from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.gone import TableGone, heard_lately, table_gone
from p2p_nertz.protocol.membership import (
    WAITING_PHASES,
    Stall,
    heard_now,
    judging_at_end,
    silent_for,
    waits_for,
)
from p2p_nertz.protocol.phase_waits import Awaited
from p2p_nertz.protocol.state import GameState, Phase
from p2p_nertz.protocol.unmet import DropPending, HeldBack, Owing, SharesOwed, held_back

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from p2p_nertz.protocol.author import Author
    from p2p_nertz.protocol.envelope import Message
    from p2p_nertz.protocol.player import LocalPlayer

__all__ = ["GoneTimers", "TableWaits", "events_owed"]


def events_owed(final: GameState, tentative: GameState) -> dict[int, Awaited]:
    """The events the ``final`` phase waits for from each member itself (:func:`waits_for`)
    that the held fold ``tentative`` does not hold, seat -> :class:`Awaited`, in seat order
    (none outside :data:`WAITING_PHASES`): what a member heard owes of its phase. The one rule
    of a peer's :meth:`TableWaits.owing` and a spectator's (``Spectator.owing``, since session
    40); each times the wait on its own clock."""
    if final.phase not in WAITING_PHASES:
        return {}
    owed = {q: Awaited.of(final, q) for q in sorted(waits_for(final))}
    return {q: awaited for q, awaited in owed.items() if not awaited.held_in(tentative)}


class GoneTimers(Protocol):
    """What this part reads of the peer's configuration (``PeerConfig``), when it reads it."""

    @property
    def drop_after(self) -> float: ...
    @property
    def gone_after(self) -> float: ...


class TableWaits:
    """The peer's answers on what its table waits on (see the module docstring).

    Args:
        author: the peer's author (its membership, chains, feeds, timers and phase timer).
        player: the local player (its names; the abandon's answer).
        config: the peer's configuration as it is when called (one may be set later).
    """

    def __init__(
        self, author: Author, player: LocalPlayer, config: Callable[[], GoneTimers]
    ) -> None:
        self._author = author
        self._player = player
        self._config = config

    def silent_for(self, now: float) -> float:
        """Seconds since a member still in (one dropped may talk on) was heard, even by relay."""
        author = self._author
        return silent_for(author.membership, now, author.chains.folds.tentative.dropped)

    def silent(self, now: float) -> frozenset[int]:
        """The other members silent now (suspected, or unheard for ``suspect_after``)."""
        m = self._author.membership
        return frozenset(q for q in range(m.n) if q != m.seat and not heard_now(m, q, now))

    def gone_for(self, now: float) -> float | None:
        """How long the one other member left has counted as gone for an abandon (§9.2, §9.3:
        ``Membership.gone_for``); negative: how much longer before it does. ``None``: no
        abandon is possible now (:func:`~p2p_nertz.protocol.state.abandon_partner`)."""
        author = self._author
        partner = st.abandon_partner(author.final, author.chains.folds.tentative, author.seat)
        return None if not isinstance(partner, int) else author.membership.gone_for(partner, now)

    def table_gone(self, now: float) -> TableGone | None:
        """Whether the table is gone (:func:`~p2p_nertz.protocol.gone.table_gone`, §9.9; the
        runtime then stops, signing nothing); ``None`` recovering, left, or if we may abandon."""
        author = self._author
        config = self._config()
        final, membership, drop_after = author.final, author.membership, config.drop_after
        heard, listening = membership.heard, membership.listening
        if heard_lately(final, heard, listening, now, seat=author.seat, drop_after=drop_after):
            return None  # (asked after every input: the answer then, without the rest)
        if author.recovery is not None or author.left:
            return None
        return table_gone(
            final,
            lambda: author.chains.folds.tentative,
            heard,
            listening,
            now,
            seat=author.seat,
            drop_after=drop_after,
            gone_after=config.gone_after,
            names=self._player.names,
            abandon=lambda: self._player.abandon_answer(now),
            unheard=author.unheard,
        )

    def judging(self) -> bool:
        """Whether we, our game over, still owe the table a judgement: a vote *withheld* not
        cast yet on a member claiming our own feed past its head
        (:func:`~p2p_nertz.protocol.membership.judging_at_end`; the node stays for it)."""
        author = self._author
        claimed = author.finality.claimed
        return judging_at_end(author.membership, author.final, author.feeds, claimed)

    def held_back(self) -> tuple[HeldBack, ...]:
        """The members whose events wait here for events not held (:func:`held_back`)."""
        author = self._author
        return held_back(author.store, author.chains.folds.tentative)

    def owing(self, now: float) -> tuple[Owing, ...]:
        """The members heard, not held back, that owe what they alone can give (an
        :class:`~p2p_nertz.protocol.unmet.Owing` each, in seat order; a member may owe two:
        what finality waits for, and the event the final phase waits for): what ``Membership``
        votes out *withheld* after ``phase_timeout`` (§9.2), read from its stall records (its
        feed, its cover, its relays, since the record's time) and from the final phase's wait
        (since the phase began, every member heard: ``Membership.blame_from``). None while we
        recover, doubt our feed, have left or are out, and once the game is over."""
        author = self._author
        m, final, tentative = author.membership, author.final, author.chains.folds.tentative
        out = final.dropped.keys() | tentative.dropped.keys()
        if (
            Phase.OVER in (final.phase, tentative.phase)
            or author.recovery is not None
            or author.held_back
            or author.left
            or m.seat in out
        ):
            return ()
        held = {h.seat for h in self.held_back()}  # (told as held back: one row a member)
        blame = m.blame_from(author.phase_since)
        waited = events_owed(final, tentative) if blame is not None else {}
        shares = self._shares(now)
        found = []
        for q in range(m.n):
            if q == m.seat or q in out or q in held or not heard_now(m, q, now):
                continue
            record = m.stall.get(q)
            stalled = None if record is None else self._stalled(q, record)
            if stalled is not None:
                found.append(stalled)
            if q in waited:
                assert blame is not None  # (waited is empty otherwise)
                found.append(Owing(q, blame, event=waited[q]))
            if q in shares:
                found.append(shares[q])
        return tuple(found)

    def gave(self, owing: Owing) -> bool:
        """Whether member ``owing.seat`` has given all that ``owing`` (told before) says it
        owed: its events up to the last told, its word that it holds each feed up to the seq
        told, each third member's events it said it holds, the phase's event (its own, held
        in the held fold: ``Awaited.sent_in``), and its shares of that round. The teller
        ends a wait *given* only then (session 43): the wait for a phase event is timed anew
        when another member is silent, and a stall record is cleared, the event or the
        events still owed."""
        author = self._author
        q, feeds, tentative = owing.seat, author.feeds, author.chains.folds.tentative
        if owing.event is not None and not owing.event.sent_in(tentative):
            return False
        if owing.events is not None and len(feeds[q]) < owing.events[1]:
            return False
        held_by = author.finality.held_by[q]
        if any(held_by[r] < seq for r, seq in owing.cover):
            return False
        if any(len(feeds[r]) < last for r, _, last in owing.relays):
            return False
        if owing.shares is None:
            return True
        m, store = author.membership, author.chains.shares.store
        owed = m.share_waits.owing(author.final, tentative, -math.inf, store=store).get(q)
        return owed is None or owed[1][0].deal[0] != owing.shares.number

    def _shares(self, now: float) -> dict[int, Owing]:
        """The members that owe shares of the round's deal (a shuffle game), each a row: what
        ``Membership`` votes out *withheld* after ``phase_timeout`` (its ``withheld_shares``,
        the same items and times, and none blamed while another member owes us events),
        told here from the first (:meth:`ShareWaits.owing`)."""
        author = self._author
        m, final = author.membership, author.final
        heard = m.blame_from(-math.inf)
        if final.round.deck is None or heard is None:
            return {}
        store = author.chains.shares.store
        owed = m.share_waits.owing(final, author.chains.folds.tentative, heard, store=store)
        rows = {}
        for q, (since, items) in owed.items():
            if q == m.seat or m.debtors.excuse(q):
                continue
            own = sum(1 for i in items if i.of == i.member)
            answers = sum(1 for i in items if i.of is None)
            number = items[0].deal[0]
            shares = SharesOwed(number, own, len(items) - own - answers, answers)
            rows[q] = Owing(q, since, shares=shares)
        return rows

    def drops_waiting(self) -> tuple[DropPending, ...]:
        """The drops the held votes decide that are not final here, each with what holds it
        back (:meth:`Chains.drops_waiting <p2p_nertz.protocol.chains.Chains.drops_waiting>`),
        in seat order; none once the game is over."""
        chains = self._author.chains
        if Phase.OVER in (chains.folds.final.phase, chains.folds.tentative.phase):
            return ()
        return tuple(DropPending(q, on) for q, on in chains.drops_waiting().items())

    def _stalled(self, q: int, record: Stall) -> Owing | None:
        """What member ``q``'s stall ``record`` says it owes and still does (``None``: it gave
        it all since; the next scan drops or renews the record)."""
        author = self._author
        feeds: Sequence[Sequence[Message]] = author.feeds
        since, feed, cover, relay = record
        held_by = author.finality.held_by[q]
        events = (len(feeds[q]) + 1, feed) if feed > len(feeds[q]) else None
        owed = tuple((r, c) for r, c in enumerate(cover) if c and held_by[r] < c)
        relays = tuple((r, len(feeds[r]) + 1, t) for r, t in enumerate(relay) if t > len(feeds[r]))
        if events is None and not owed and not relays:
            return None
        return Owing(q, since, events, owed, relays)
