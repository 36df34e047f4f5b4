"""A peer's turn-up shares outside the feed, wired (docs/shuffle.md §10.14): its
:class:`~.share_store.ShareStore` fed by ``deck_reveal`` beats and by its own shares, its own
shares sent as a beat, and what its player sees and carries.

Theory of operation
-------------------
A member's own shares of a move's turn-up travel in signed ``deck_reveal`` beats alone
(:meth:`Duties.reveals <p2p_nertz.protocol.duties.Duties.reveals>`, sent by
:meth:`PeerShares.send`), queued *before* the records of the same input, so that they leave
without waiting for the log's sync (a share is one value, re-made the same after a restart: it
needs no record), and kept in the store. The deal's face-up shares and the partials for a
member dropped are still signed and logged as a ``deck_shares`` event; :meth:`PeerShares.reveal`
also sends its own among them as a beat. A ``deck_reveal`` received is offered to the
store against the round the tentative fold holds (:meth:`PeerShares.take`): the right shares
are kept, the wrong ones handed back for the receive path to refuse; one of another round, or
of a round whose deal the fold has not finished, is not checkable here and changes nothing. One
whose member's own share's proof fails is kept in the log as a ``bad_share`` note, once a sender
and round (:meth:`PeerShares.note_due`, :mod:`~.share_notes`).

The local player chooses on the *held view* (:meth:`PeerShares.held_table`: the tentative
table with the store's openings in place of its sealed cards, valid until the next input), and
a move that takes or builds on a card sealed in its author's fold carries the store's opening
(:meth:`ShareStore.opening`): the fold opens the card when it takes the move, and the move no
longer waits for the others' ``deck_shares`` to be folded.

Pure but for the outbox it signs with; one per peer (its :class:`~.chains.Chains`).
"""

from __future__ import annotations

from p2p_nertz.deck.shares import Share
from p2p_nertz.deck.wire import DeckShares
from p2p_nertz.protocol.bodies import DeckEvent, DeckReveal, EventBody
from p2p_nertz.protocol.effects import Reserve, Send
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.outbox import Outbox
from p2p_nertz.protocol.rounds import RoundState
from p2p_nertz.protocol.share_notes import provably_wrong
from p2p_nertz.protocol.share_store import ShareStore
from p2p_nertz.protocol.shuffle import DeckRound
from p2p_nertz.protocol.state import GameState
from p2p_nertz.rules import Move, Table

__all__ = ["BAD_SHARE", "PeerShares", "round_of"]

#: The refusal of a ``deck_reveal`` entry whose share is not right (its proof fails, its maker
#: or the member it stands in for is not one the round allows).
BAD_SHARE = "bad_share"


def _round_of(folds: Folds, number: int) -> DeckRound | None:
    """The deck round ``number`` of the tentative fold (else the final's), its deal over; else
    ``None`` (nothing of it can be checked here)."""
    for state in (folds.tentative, folds.final):
        rs = state.round
        if rs.number == number and rs.deck is not None and rs.deck.final is not None:
            return rs.deck
    return None


def round_of(folds: Folds, number: int) -> DeckRound | None:
    """The deck round ``number`` that a share beat of it is checked against here: the
    tentative fold's (else the final's), its deal over; ``None``: none can be."""
    return _round_of(folds, number)


class PeerShares:
    """One peer's share store, wired (module docstring)."""

    def __init__(self) -> None:
        self.store = ShareStore()
        #: Shares of ours sent in ``deck_reveal`` beats, and moves that carried an opening.
        self.revealed = 0
        self.carried = 0
        #: (sender, round) of each ``bad_share`` note written (once each: share_notes.py)
        self.noted: set[tuple[int, int]] = set()
        #: the round :meth:`held_table` last answered for and its answer, kept until the
        #: peer's input ends (:meth:`changed`): a bot reads the held view to choose, and its
        #: move reads it again, with no input between
        self._held: tuple[RoundState, Table | None] | None = None

    def changed(self) -> None:
        """An input of the peer ended: what :meth:`held_table` answered may not hold."""
        self._held = None

    def _keep_only(self, folds: Folds) -> None:
        """Forget the rounds neither fold holds (a store grows by a round at most)."""
        keep = {s.round.deck.context for s in (folds.final, folds.tentative) if s.round.deck}
        self.store.forget(keep)

    def take(self, folds: Folds, beat: DeckReveal) -> list[Share]:
        """Offer a received ``deck_reveal``'s shares to the store; the wrong ones (``[]`` where
        the round cannot be checked here: nothing is kept, nothing refused)."""
        deck = _round_of(folds, beat.round)
        if deck is None:
            return []
        self._keep_only(folds)
        return self.store.offer(deck, beat.shares)

    def note_due(self, folds: Folds, seat: int, beat: DeckReveal, wrong: list[Share]) -> bool:
        """Whether ``seat``'s ``beat``, whose ``wrong`` shares were refused, is to be kept in
        our log as a ``bad_share`` note: one of them proves its sender wrong
        (:func:`~.share_notes.provably_wrong`), and no note of that sender and round is
        written yet."""
        deck = _round_of(folds, beat.round)
        key = (seat, beat.round)
        if deck is None or key in self.noted:
            return False
        if not any(provably_wrong(deck, share) for share in wrong):
            return False
        self.noted.add(key)
        return True

    def reveal(self, outbox: Outbox, folds: Folds, body: EventBody) -> None:
        """Where ``body`` is a ``deck_shares`` of ours about to be signed, keep our own shares
        of it and send them to everyone in one signed ``deck_reveal`` (queued now: before the
        event's record). Partials for a member dropped stay in the feed alone (a receiver
        that does not hold the drop would not take them)."""
        if not isinstance(body, DeckEvent) or not isinstance(body.message, DeckShares):
            return  # (and so in a commit game, which has no deck events)
        message = body.message
        own = tuple(s for s in message.shares if s.of_seat == s.seat == message.seat)
        if own:
            self.send(outbox, folds, DeckReveal(message.round, own))

    def send(self, outbox: Outbox, folds: Folds, beat: DeckReveal) -> None:
        """Keep our own shares of ``beat`` and send it to everyone, signed, ahead of the
        records this input queued (:meth:`reveal`; :meth:`Duties.reveals
        <p2p_nertz.protocol.duties.Duties.reveals>`: the shares of a move's turn-up, which
        travel in this beat alone)."""
        deck = _round_of(folds, beat.round)
        if deck is None:
            return
        self._keep_only(folds)
        self.store.offer(deck, beat.shares)  # (made from our secret: right, from the memo)
        queued = outbox.effects
        # Ahead of the records this input queued (the event just received, ours about to be
        # signed): the beat needs none of them durable. Not ahead of a Reserve, which every
        # message timed past the clock it reserves must follow (sign_beat adds its own).
        at = max((k + 1 for k, e in enumerate(queued) if isinstance(e, Reserve)), default=0)
        mark = len(queued)
        wire = outbox.sign_beat(Kind.DECK_REVEAL, beat, tick=False)
        added = [*queued[mark:], Send(wire)]  # (a Reserve of the beat's own, if any, first)
        del queued[mark:]
        queued[at:at] = added
        self.revealed += len(beat.shares)

    def held_table(self, rs: RoundState) -> Table | None:
        """The table of ``rs`` as its peer's player sees it: with the store's openings of the
        positions turned up and sealed (:meth:`ShareStore.held_table`), ``rs``'s own where the
        store opens nothing more. A copy, valid until the peer's next input."""
        kept = self._held
        if kept is not None and kept[0] is rs:
            return kept[1]
        table = self.store.held_table(rs)
        self._held = (rs, table)
        return table

    def opening(self, tentative: GameState, seat: int, move: Move) -> tuple[Share, ...] | None:
        """What ``seat``'s ``move``, chosen on the held view, carries (:meth:`ShareStore.opening`
        on the tentative round): ``()`` for none; ``None`` while a card it needs is not seen."""
        opens = self.store.opening(tentative.round, seat, move)
        if opens:
            self.carried += 1
        return opens
