"""Asking for a turn-up's missing shares, and answering such asks (docs/shuffle.md §10.14):
the ``deck_want`` beat.

Theory of operation
-------------------
A member sends its share of a position turned up in a ``deck_reveal`` beat; beats are lost
where events are repaired, so a peer whose held (tentative) fold turned a position up and that,
``want_after`` later, still lacks a member's share of it (neither the fold nor its
:class:`~.share_store.ShareStore` holds it) asks everyone for it in a signed ``deck_want``
(``[round, [[member, deck, position], …]]``, at most 64 entries a beat). Any peer that holds the
share in its store answers the asker alone with a ``deck_reveal`` of it (24 shares a beat at
most, as a ``deck_shares`` event: 64 would not fit a frame): a share is checked
against its maker's key wherever it comes from, so a relay proves as much as its author.

Never a flood. A position is asked for at most :data:`WANT_ASKS` times: first ``want_after``
after its turn-up, then each time after twice the wait before (``2 × want_after`` after the
first ask, ``4 ×`` after the second …); an ask is dropped once the share is held (by the
fold or the store), once the position is no longer turned up in the held fold (a refold), and
with every other once the round leaves play (its phase is no longer one a share is sent in)
or another round is held.
We never ask for our own share (we make it), nor for a dropped member's (partials stand in,
and they travel in the feed). An answer goes to a given asker for a given share at most once
every ``want_after``.

Hiding. An answer holds only shares of positions turned up in the answerer's own fold (the
tentative or the final one): a share the store holds of a position not turned up there (a
member may send one early; the store keeps what is right) is never relayed, so no card is
opened by a want before its turn-up.

Pure but for the outbox it signs with; one :class:`ShareWants` per peer (on its
:class:`~.chains.Chains`), stepped at the end of every input (:meth:`ShareWants.step`), its
next ask a deadline of the peer (:attr:`ShareWants.due`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from p2p_nertz.deck.shares import Share
from p2p_nertz.deck.wire import MAX_OPENING
from p2p_nertz.protocol.bodies import DeckReveal, DeckWant
from p2p_nertz.protocol.effects import Send
from p2p_nertz.protocol.envelope import SHARES_VERSION, Kind
from p2p_nertz.protocol.share_beats import round_of
from p2p_nertz.protocol.shuffle import MAX_SHARES_EVENT, SHARING

if TYPE_CHECKING:
    from p2p_nertz.protocol.folds import Folds
    from p2p_nertz.protocol.identity import PeerId
    from p2p_nertz.protocol.outbox import Outbox
    from p2p_nertz.protocol.share_store import ShareStore

__all__ = ["WANT_ASKS", "ShareWants"]

#: How many times one position's missing shares are asked for, at most.
WANT_ASKS = 6

#: The least ``want_after`` (seconds): an ask is never due again at the time it is made.
MIN_WANT_AFTER = 0.001

_Where = tuple[int, int]


class ShareWants:
    """A peer's asks for missing turn-up shares and its answers to others' (module
    docstring)."""

    def __init__(self) -> None:
        #: when :meth:`step` next has an ask to make (``inf``: none waits)
        self.due = math.inf
        #: ``want_after``, as the last :meth:`step` was given it (answers are spaced by it;
        #: every input ends in a step, so only an answer before the first reads this one)
        self.after = MIN_WANT_AFTER
        #: shares asked for (entries of our ``deck_want`` beats) and sent in answers
        self.asked = 0
        self.answered = 0
        self._context: bytes | None = None
        self._turned: tuple[_Where, ...] = ()
        #: the positions of the round noted turned up (each is asked for from its first time)
        self._seen: set[_Where] = set()
        #: position -> (when it is next asked for, asks made)
        self._waiting: dict[_Where, tuple[float, int]] = {}
        #: (round context, asker, member, deck, position) -> when it may be answered again
        self._answers: dict[tuple[bytes, PeerId, int, int, int], float] = {}

    def _reset(self, context: bytes | None) -> None:
        self._context = context
        self._turned = ()
        self._seen.clear()
        self._waiting.clear()
        self._answers.clear()  # (an answer of an older round may go once more: no harm)
        self.due = math.inf

    def pause(self) -> None:
        """Ask for nothing now, and forget what waits (the positions turned up are noted
        again, from the next :meth:`step`)."""
        self._reset(None)

    # -- asking --------------------------------------------------------------------------------
    def step(
        self, folds: Folds, store: ShareStore, outbox: Outbox, now: float, after: float
    ) -> None:
        """At the end of an input: note the positions the held fold newly turned up, and ask
        (one broadcast ``deck_want`` per 64 shares, signed at our clock as it is) for the
        missing shares of those whose time has come."""
        if outbox.version < SHARES_VERSION:
            return  # (a commit game: no share beats; and the
            # held fold is not made for nothing at every input: tests/test_chains_held_drops.py)
        after = self.after = max(after, MIN_WANT_AFTER)
        held = folds.tentative
        deck = held.round.deck
        if deck is None or deck.final is None or held.phase not in SHARING:
            if self._context is not None:
                self._reset(None)
            return
        if deck.context != self._context:
            self._reset(deck.context)
        if deck.turned is not self._turned:
            self._turned = deck.turned
            seen = self._seen
            for where in deck.turned:
                if where not in seen:
                    seen.add(where)
                    if where not in deck.opened:
                        self._waiting[where] = (now + after, 0)
                        self.due = min(self.due, now + after)
        if now < self.due:
            return
        me = deck.member(folds.own) if folds.own in deck.members else None
        wanted: list[tuple[int, int, int]] = []
        for where, (at, asks) in list(self._waiting.items()):
            if at > now:
                continue
            lacking = [m for m in store.lacking(deck, where) if m != me]
            if not lacking or where not in deck.turned_set or asks >= WANT_ASKS:
                del self._waiting[where]  # (held, no longer turned up, or asked enough)
                continue
            wanted += [(m, *where) for m in lacking]
            self._waiting[where] = (now + after * 2 ** (asks + 1), asks + 1)
        self.due = min((at for at, _ in self._waiting.values()), default=math.inf)
        if not wanted:
            return
        number = held.round.number
        for k in range(0, len(wanted), MAX_OPENING):
            body = DeckWant(number, tuple(wanted[k : k + MAX_OPENING]))
            outbox.effects.append(Send(outbox.sign_beat(Kind.DECK_WANT, body, tick=False)))
        self.asked += len(wanted)

    # -- answering -----------------------------------------------------------------------------
    def answer(
        self,
        folds: Folds,
        store: ShareStore,
        outbox: Outbox,
        to: PeerId,
        want: DeckWant,
        *,
        now: float,
    ) -> None:
        """Answer ``to``'s ``want`` with a ``deck_reveal``, to it alone, of the shares asked
        for that our store holds, of positions turned up in our fold (module docstring,
        *Hiding*), each at most once every ``want_after`` to one asker (24 shares a beat);
        nothing where we hold none, or the round is not ours to check."""
        deck = round_of(folds, want.round)
        if deck is None:
            return
        turned = deck.turned_set
        other = folds.final.round.deck
        if other is not None and other.context == deck.context and other is not deck:
            turned = turned | other.turned_set
        found: list[Share] = []
        for member, d, p in want.wanted:
            key = (deck.context, to, member, d, p)
            if (d, p) not in turned or self._answers.get(key, -math.inf) > now:
                continue
            share = store.share(deck, (member, member, d, p))
            if share is not None:
                found.append(share)
                self._answers[key] = now + self.after
        for k in range(0, len(found), MAX_SHARES_EVENT):  # (a frame holds 24 at 8 seats)
            beat = DeckReveal(want.round, tuple(found[k : k + MAX_SHARES_EVENT]))
            outbox.effects.append(Send(outbox.sign_beat(Kind.DECK_REVEAL, beat, tick=False), to))
        self.answered += len(found)
