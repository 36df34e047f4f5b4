"""Turning a card up: decryption shares, their proofs, and the card they open.

To open position ``p`` of deck ``d`` (ciphertext ``(C1, C2)``), every member ``j`` publishes its
**decryption share** ``D_j = x_j·C1`` with a Chaum–Pedersen proof that ``log_G X_j = log_C1 D_j``
(:func:`make_share`). Anyone holding every share computes the card::

    M = C2 − Σ_j D_j        (a card point, or the deck was tampered with)

A share whose proof fails is refused at once (:func:`verify_share`): its signed event proves the
author's fault, and nobody can steer the card by sending the last share. A member that has
dropped cannot send its share; the members left make one for it from their VSS shares of its
secret (:mod:`p2p_nertz.deck.vss`).

>>> from p2p_nertz.deck.keys import MemberKey, round_context
>>> from p2p_nertz.deck.elgamal import initial_deck
>>> from p2p_nertz.rules.cards import Card
>>> ctx = round_context(bytes(32), 1)
>>> keys = [MemberKey.from_seed(bytes([i]), ctx) for i in range(2)]
>>> from p2p_nertz.deck.keys import joint_key
>>> deck = initial_deck([Card.parse("QS")], joint_key(k.public for k in keys))
>>> shares = [make_share(k, seat, 0, 0, deck[0]) for seat, k in enumerate(keys)]
>>> open_card(deck[0], [s.point for s in shares])
Card.parse('QS')
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from p2p_nertz.deck.elgamal import Cipher
from p2p_nertz.deck.group import DeckError, add, card_of, check_point, sub
from p2p_nertz.deck.keys import MemberKey, seat_context
from p2p_nertz.deck.proofs import Proof, prove_equal, verify_equal
from p2p_nertz.rules.cards import Card

__all__ = [
    "Share",
    "combine",
    "make_share",
    "open_card",
    "share_context",
    "share_holds",
    "verify_share",
]


@dataclass(frozen=True, slots=True)
class Share:
    """A decryption share of one position, made by ``seat`` for the secret of ``of_seat``.

    ``of_seat == seat`` for a member's own share ``x_j·C1``; otherwise it is a *partial* share
    ``σ·C1`` of a dropped member's secret (:mod:`p2p_nertz.deck.vss`).
    """

    seat: int
    of_seat: int
    deck: int
    position: int
    point: bytes
    proof: Proof


def share_context(context: bytes, seat: int, of_seat: int, deck: int, position: int) -> bytes:
    """What a share's proof binds: the round, who made it, whose secret, the deck, the position."""
    return seat_context(context, seat, of_seat, deck, position)


def make_share(key: MemberKey, seat: int, deck: int, position: int, cipher: Cipher) -> Share:
    """Member ``seat``'s share of ``cipher`` (deck ``deck``, position ``position``), proven."""
    ctx = share_context(key.context, seat, seat, deck, position)
    point, proof = prove_equal(key.x, cipher[0], ctx, key.public)
    return Share(seat, seat, deck, position, point, proof)


def verify_share(share: Share, key: bytes, cipher: Cipher, context: bytes) -> None:
    """Check ``share`` against the public key it must match; :class:`DeckError` if it does not.

    ``key`` is ``X_j`` for a member's own share, or the public value of the VSS share it used
    (:func:`p2p_nertz.deck.vss.share_key`) for a partial share.
    """
    check_point(share.point, f"share of seat {share.seat}")
    ctx = share_context(context, share.seat, share.of_seat, share.deck, share.position)
    if not verify_equal(key, cipher[0], share.point, share.proof, ctx):
        raise DeckError(
            f"share of seat {share.seat} for seat {share.of_seat}, deck {share.deck} "
            f"position {share.position}: the proof does not verify"
        )


@functools.lru_cache(maxsize=2048)
def share_holds(share: Share, key: bytes, cipher: Cipher, context: bytes) -> bool:
    """Whether ``share`` passes :func:`verify_share` against ``key``, ``cipher`` and
    ``context``: a function of those values alone (every field of the share, and the key's,
    the ciphertext's and the round's bytes: the cache's key), so the answer is kept for the
    process, the last 2,048 (a few hundred kilobytes). Every peer of a simulated game checks
    the shares the others already checked, each in its own round (~4% of a shuffle game's
    CPU); a node, one peer, asks once per share and round (the round's memo) and pays a
    hash."""
    try:
        verify_share(share, key, cipher, context)
    except DeckError:
        return False
    return True


def combine(points: Iterable[bytes]) -> bytes:
    """``Σ D_j``: the shares of every member's secret, added."""
    total: bytes | None = None
    for point in points:
        total = point if total is None else add(total, point)
    if total is None:
        raise ValueError("no share to combine")
    return total


def open_card(cipher: Cipher, points: Iterable[bytes]) -> Card:
    """The card under ``cipher`` given one share for each member; :class:`DeckError` if none.

    Raises:
        DeckError: if ``C2 − Σ D_j`` is no card's point: a share is missing or wrong, or the
            deck was tampered with (the checks of docs/shuffle.md §6 say whose fault).
    """
    card = _opened(cipher[1], tuple(points))
    if card is None:
        raise DeckError("the shares do not open this position to a card")
    return card


@functools.lru_cache(maxsize=8192)
def _opened(c2: bytes, points: tuple[bytes, ...]) -> Card | None:
    """``card_of(C2 − Σ D_j)``, kept: a peer's held view opens every card its share store
    holds again at each look (``ShareStore.held_table``), from the same bytes each time (a
    share is one value, §3.3), so the answer is a function of its arguments."""
    return card_of(sub(c2, combine(points)))
