"""The ``bad_share`` note: a ``deck_reveal`` whose share proves its sender wrong
(docs/shuffle.md §10.14, docs/log-format.md §5).

Theory of operation
-------------------
A move's turn-up shares travel in ``deck_reveal`` beats, never logged. A beat is signed, so one
that carries a member's own share whose equal-logs proof fails against the member's committed
key and the final deck proves that its sender signed a wrong share: nobody else can make its
signature, and the proof fails whoever checks it (it binds the round, the deal's attempt, the
member, the deck and the position). The receiver refuses the share (the position stays
waiting: the votes *withheld* follow if no right one comes) and keeps the beat, exactly as
received, in its log as a note named :data:`BAD_SHARE_NOTE`, once a sender and round, as it
keeps a proof of equivocation (a ``proof`` note). The audit verifies the note's signature and
its share's proof, and names the sender ``bad_share`` on it.

Only an own share in the round's decks whose proof fails is such proof (:func:`provably_wrong`):
a partial for a member the receiver's fold has not dropped yet, or a maker outside the round,
is refused but proves nothing the audit could check the same way.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from p2p_nertz.deck.shares import Share
from p2p_nertz.errors import chained
from p2p_nertz.protocol.bodies import DeckReveal, open_noted
from p2p_nertz.protocol.envelope import Kind, Message
from p2p_nertz.protocol.shuffle import DeckRound

__all__ = ["BAD_SHARE_NOTE", "BadShareNoteError", "provably_wrong", "read_note"]

#: The name of the note that keeps a ``deck_reveal`` proving its sender signed a wrong share.
BAD_SHARE_NOTE = "bad_share"


class BadShareNoteError(ValueError):
    """The data of a ``bad_share`` note is not a signed ``deck_reveal`` of the game."""


def provably_wrong(deck: DeckRound, share: Share) -> bool:
    """Whether ``share`` (its ``seat`` its maker's member index) is its maker's own share of a
    position of ``deck``'s dealt decks whose proof does not verify (module docstring)."""
    final = deck.final
    if final is None or share.of_seat != share.seat or share.seat >= len(deck.members):
        return False
    if share.deck >= len(final) or share.position >= deck.size:
        return False
    return not deck.right(share)


def read_note(
    data: bytes,
    *,
    game_id: bytes,
    roster: Collection[bytes],
    versions: Sequence[int],
    seats: int,
) -> tuple[Message, DeckReveal]:
    """The signed ``deck_reveal`` a ``bad_share`` note holds, its signature verified.

    Raises:
        BadShareNoteError: the bytes are not a signed ``deck_reveal`` of a member of this game
            (the reason says why). Nothing else.
    """
    try:
        message, body = open_noted(
            data, (Kind.DECK_REVEAL,), game_id=game_id, roster=roster, versions=versions,
            seats=seats,
        )  # fmt: skip
    except ValueError as exc:
        raise chained(BadShareNoteError(str(exc)), None)
    assert isinstance(body, DeckReveal)
    return message, body
