"""The local player's side of a peer: what it may do now, and when its ``ready`` is due.

:class:`LocalPlayer` owns the one thing the person at the table decides about the protocol, the
hold on the next round's ``ready`` (:attr:`~LocalPlayer.ready_through`), and answers what the
table asks before the player acts: the claims in the air and the piles they freeze, an
everyone-stuck rotation not yet final, whether a move may be made now (and as what:
:func:`~p2p_nertz.protocol.local.local_move`), whether the game may be abandoned. It reads the
folds, our clock and whether we left or recover from the parts of the peer, and returns values;
the :class:`~p2p_nertz.protocol.peer.Peer` signs what they call for and returns the effects.
"""

from __future__ import annotations

from collections.abc import Sequence

from p2p_nertz.errors import IllegalMoveError
from p2p_nertz.protocol.author import Author
from p2p_nertz.protocol.bodies import Play
from p2p_nertz.protocol.local import (
    AbandonAnswer,
    MoveAnswer,
    MoveRefusal,
    MoveRefused,
    abandon_answer,
    abandoned_by,
    claimed_piles,
    drop_pending,
    local_move,
    own_claims,
    rotation_pending,
)
from p2p_nertz.protocol.state import Event
from p2p_nertz.rules import Move, Pile, Rules

__all__ = ["LocalPlayer"]


class LocalPlayer:
    """The local player of seat ``seat`` (module docstring), over the parts of its peer.

    Args:
        seat: the local player's seat.
        rules: the game's rules.
        names: each seat's player, as the table shows them.
        author: what we sign and when (:class:`~p2p_nertz.protocol.author.Author`): the
            folds, our clock and membership are read through it.
    """

    def __init__(self, seat: int, rules: Rules, names: Sequence[str], author: Author) -> None:
        self.seat = seat
        self.rules = rules
        self.names = names
        self._author = author
        self._abandons: dict[bytes, int | None] = {}  # (abandoned_by's, of our feed)
        #: The last round whose ``ready`` the peer signs by itself (``None``: every round). A
        #: person's table holds the next round's ``ready`` while the player reads the board of
        #: the last one, then lets it go (:meth:`release`). Nothing on the wire changes: the
        #: ``ready`` only comes later, well within ``phase_timeout``. A shuffle game has no
        #: ``ready``: its round's deal starts with every member's key, held the same way.
        self.ready_through: int | None = None

    def release(self, number: int) -> bool:
        """Let the ``ready`` of round ``number`` (and of earlier rounds) go: whether that
        changed what is due (only while :attr:`ready_through` holds readies back)."""
        if self.ready_through is not None and number > self.ready_through:
            self.ready_through = number
            return True
        return False

    def pending_claims(self) -> list[Event]:
        """The local player's claims that are not final yet ("in the air")."""
        return own_claims(self._author.chains.folds.nonfinal, self.seat)

    def claimed_piles(self) -> set[Pile]:
        """The piles our claims in the air came from."""
        return claimed_piles(self.pending_claims())

    def frozen_piles(self) -> set[Pile]:
        """The piles the local player may not touch now: those a claim in the air came from,
        and the waste (with the stock) while an everyone-stuck rotation is not final."""
        piles = self.claimed_piles()
        if self.rotation_pending():
            piles.add(Pile.WASTE)
        return piles

    def rotation_pending(self) -> bool:
        """Whether the table shows an everyone-stuck rotation that is not final yet
        (:func:`~p2p_nertz.protocol.local.rotation_pending`)."""
        folds = self._author.chains.folds
        return rotation_pending(folds.tentative, folds.final)

    def drop_pending(self) -> bool:
        """Whether a move of the waste or the stock waits on a member's drop not decided yet
        (:func:`~p2p_nertz.protocol.local.drop_pending`; a table says when that is over)."""
        return drop_pending(self._author.chains.folds.tentative, self._undecided())

    def _undecided(self) -> set[int]:
        """The members whose drop only caps or the tentative fold's own cuts keep undecided."""
        folds = self._author.chains.folds
        return folds.capped_drops.keys() | folds.uncut_drops.keys()

    def catching_up(self) -> bool:
        """Whether a move is refused now as still getting our own moves back: restored in
        recovery, or (any restore) until a member has said what it holds of our feed, or while
        a doubt on it is open (docs/protocol.md §9.6; a table says when that is over)."""
        author = self._author
        return author.recovery is not None or author.held_back

    def move(self, move: Move) -> Play:
        """What ``move`` of the local player is, played now, as the body to sign (its frontier
        left to the signer): the move, the card a claim takes, the cards it turns up, the round
        (:func:`~p2p_nertz.protocol.local.local_move`); in a shuffle game, chosen on the held
        view, with the opening of the sealed cards it needs (:class:`~.share_beats.PeerShares`,
        docs/shuffle.md §10.14).

        Raises:
            IllegalMoveError: the move is illegal now.
            LocalProtocolError: we recover our own feed or left, the game is not in play, or
                a pile the move needs is frozen.
        """
        author = self._author
        if self.catching_up():
            raise MoveRefused(
                f"{move}: still recovering our own events from the others",
                MoveAnswer(MoveRefusal.RECOVERING),
            )
        if author.left:
            raise MoveRefused(f"{move}: we left the game", MoveAnswer(MoveRefusal.LEFT))
        folds = author.chains.folds
        tentative = folds.tentative
        shares = author.chains.shares
        move, card, reveals = local_move(
            tentative,
            folds.final,
            self.seat,
            move,
            frozen=self.claimed_piles(),
            clock=author.outbox.clock,
            rules=self.rules,
            held=shares.held_table(tentative.round),
            undecided=self._undecided(),
        )
        opens = shares.opening(tentative, self.seat, move)
        if opens is None:  # (a sealed card the held view does not show either)
            raise IllegalMoveError(f"{move}: a card it needs is not seen here yet")
        return Play((), tentative.round.number, move, card, reveals, opens=opens)

    def pass_for_wait(self, now: float) -> tuple[int, float] | None:
        """The seat the local player could pass for (``P@S``: a player who plays nothing,
        everyone else stuck) and the seconds until an honest member may (0: now), as
        :class:`~p2p_nertz.protocol.behalf.PassWatch` counts them; ``None``: no seat to pass
        for now."""
        author = self._author
        timeout = author.membership.timers.phase_timeout
        return author.duties.behalf.wait(now, author.chains.folds, self.seat, timeout)

    def abandon_answer(self, now: float) -> AbandonAnswer:
        """Whether an abandon would end the game now, and if not why: the one answer
        (:func:`~p2p_nertz.protocol.local.abandon_answer`) the table, the node and the
        simulator read."""
        author = self._author
        folds = author.chains.folds
        return abandon_answer(
            folds.final,
            folds.tentative,
            author.membership,
            now,
            names=self.names,
            recovering=author.recovery is not None or (author.held_back and not author.unheard),
            left=author.left,
            abandoned=abandoned_by(author.feeds[self.seat], len(self.names), self._abandons),
            unheard=author.unheard and author.recovery is None,
        )
