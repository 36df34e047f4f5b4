"""ElGamal under the joint key: the encrypted deck and one member's shuffle stage.

A card ``M`` is encrypted under the joint key ``X`` as ``(C1, C2) = (r·G, M + r·X)``; it opens
as ``M = C2 − x·C1`` with ``x = Σ x_i``, which nobody holds: each member contributes
``x_i·C1`` (a decryption share, :mod:`p2p_nertz.deck.shares`). A deck starts as the public
encryptions of its cards with randomness 1, ``(G, M + X)``, in the canonical order of
:func:`~p2p_nertz.rules.cards.new_deck` (randomness 0 would make ``C1`` the identity, which
libsodium refuses to multiply).

A **shuffle stage** permutes a deck and re-randomises every ciphertext::

    out[k] = (in[π(k)].C1 + r_k·G,  in[π(k)].C2 + r_k·X)

with ``π`` and every ``r_k`` derived from the member's round secret, the round and the deck
(:func:`stage_plan`), so anyone who knows the secret after the round re-runs the stage and
compares it, byte for byte. Whoever does not know ``π`` (and ``x``) cannot link ``out[k]`` to
``in[π(k)]``: that is DDH in the group.

>>> from p2p_nertz.deck.keys import MemberKey, round_context
>>> from p2p_nertz.rules.cards import new_deck
>>> key = MemberKey.from_seed(b"s", round_context(bytes(32), 1))
>>> deck = initial_deck(new_deck()[:4], key.public)
>>> len(deck), len(deck.to_bytes())
(4, 256)
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from p2p_nertz.deck.group import (
    BASE,
    ORDER,
    POINT_BYTES,
    DeckError,
    add,
    base_mul,
    card_of,
    card_point,
    check_point,
    hash_scalar,
    mul,
    scalar_bytes,
    sub,
)
from p2p_nertz.deck.ladder import multiples, valid_points
from p2p_nertz.rules.cards import Card

__all__ = [
    "CIPHER_BYTES",
    "MAX_DECK",
    "Cipher",
    "Deck",
    "StagePlan",
    "decrypt_with",
    "initial_deck",
    "reencrypt",
    "shuffle_stage",
    "stage_plan",
]

#: A ciphertext on the wire: ``C1 ‖ C2``.
CIPHER_BYTES = 2 * POINT_BYTES
#: The largest deck: 52 cards and two jokers.
MAX_DECK = 54

#: One ciphertext ``(C1, C2)``.
Cipher = tuple[bytes, bytes]


@dataclass(frozen=True, slots=True)
class Deck:
    """A deck of ciphertexts, position 0 first (the order of the deck it stands for).

    Build one with :func:`initial_deck`, :func:`shuffle_stage` or :meth:`from_bytes` (which
    checks every point); the constructor trusts its input.
    """

    ciphers: tuple[Cipher, ...]

    def __len__(self) -> int:
        return len(self.ciphers)

    def __getitem__(self, position: int) -> Cipher:
        return self.ciphers[position]

    def to_bytes(self) -> bytes:
        """The wire form: ``C1 ‖ C2`` of each position in order, 64 bytes each."""
        return b"".join(c1 + c2 for c1, c2 in self.ciphers)

    @classmethod
    def from_bytes(cls, raw: object, size: int) -> Deck:
        """A deck of ``size`` ciphertexts from its wire form; :class:`DeckError` if malformed."""
        if not isinstance(raw, bytes):
            raise DeckError(f"deck: expected bytes, got {type(raw).__name__}")
        if len(raw) != size * CIPHER_BYTES:
            raise DeckError(
                f"deck: expected {size} ciphertexts ({size * CIPHER_BYTES} bytes), got {len(raw)}"
            )
        return _decode(raw, size)


@functools.lru_cache(maxsize=256)
def _decode(raw: bytes, size: int) -> Deck:
    # Every point checked at once (valid_points: one X25519 ladder a point, where libsodium's
    # check multiplies by L); a point refused is named by libsodium's own check. Remembered:
    # the folds and the audit decode each stage several times (pure, and a Deck is immutable).
    points = [raw[at : at + POINT_BYTES] for at in range(0, size * CIPHER_BYTES, POINT_BYTES)]
    for k, ok in enumerate(valid_points(points)):
        if not ok:
            check_point(points[k], f"deck position {k // 2}, {'C2' if k % 2 else 'C1'}")
    return Deck(tuple(zip(points[::2], points[1::2], strict=True)))


def initial_deck(cards: Sequence[Card], joint: bytes) -> Deck:
    """The public encryptions, randomness 1, of ``cards`` in order: ``(G, M + X)`` each."""
    if not 1 <= len(cards) <= MAX_DECK or len(set(cards)) != len(cards):
        raise ValueError(f"a deck is 1..{MAX_DECK} distinct cards, not {len(cards)}")
    return _initial(tuple(cards), joint)


@functools.lru_cache(maxsize=64)
def _initial(cards: tuple[Card, ...], joint: bytes) -> Deck:
    # Remembered (pure, and a Deck is immutable): every member's duties, each fold's stage
    # check and the audit build the same decks of a round from the same joint key.
    return Deck(tuple((BASE, add(card_point(c), joint)) for c in cards))


def reencrypt(cipher: Cipher, r: int, joint: bytes) -> Cipher:
    """``cipher`` re-randomised by ``r``: the same card, unlinkable without ``r``."""
    c1, c2 = cipher
    return add(c1, base_mul(r)), add(c2, mul(r, joint))


@dataclass(frozen=True, slots=True)
class StagePlan:
    """What one member's stage does to one deck: ``out[k] = reencrypt(in[perm[k]], rand[k])``."""

    perm: tuple[int, ...]
    rand: tuple[int, ...]


def stage_plan(secret: int, context: bytes, deck: int, size: int) -> StagePlan:
    """The permutation and randomness of a member's stage on deck ``deck`` (docs/shuffle.md §3.3).

    ``π`` is Fisher–Yates driven by ``SHAKE-256("p2p-nertz/v3/stage\\0" ‖ x ‖ context ‖
    u8(deck))``, two bytes big-endian per draw with rejection, as the fair deal's shuffle
    (protocol.md §8.2); ``r_k = H("stage-r", x, context, u8(deck), u8(k))``.
    """
    if not 1 <= size <= MAX_DECK:
        raise ValueError(f"a deck is 1..{MAX_DECK} cards, not {size}")
    x = scalar_bytes(secret)
    seed = b"p2p-nertz/v3/stage\0" + x + context + bytes([deck])
    stream = hashlib.shake_256(seed).digest(4 * size)
    pos = 0
    perm = list(range(size))
    for i in range(size - 1, 0, -1):
        bound = i + 1
        limit = 65536 - 65536 % bound
        while True:
            if pos + 2 > len(stream):
                stream += hashlib.shake_256(stream).digest(256)
            value = int.from_bytes(stream[pos : pos + 2], "big")
            pos += 2
            if value < limit:
                break
        j = value % bound
        perm[i], perm[j] = perm[j], perm[i]
    rand = tuple(hash_scalar("stage-r", x, context, bytes([deck, k])) for k in range(size))
    return StagePlan(tuple(perm), rand)


@functools.lru_cache(maxsize=256)
def shuffle_stage(secret: int, context: bytes, deck: int, source: Deck, joint: bytes) -> Deck:
    """One member's stage on deck number ``deck``: permute and re-randomise ``source``.

    Remembered (pure, and a :class:`Deck` is immutable): once the secrets are open, every
    fold that scores the round runs every stage again (:func:`p2p_nertz.deck.check.check_stages`),
    two scalar multiplications a card.
    """
    plan = stage_plan(secret, context, deck, len(source))
    ciphers = source.ciphers
    # r_k·X for every k at once through the ladder (the joint key is fixed: no check of it at
    # every multiplication), r_k·G by libsodium's fixed-base table. Where C1 is G (stage 0,
    # the public initial deck) C1 + r·G is (r + 1)·G: one addition less.
    masks = multiples(joint).of(plan.rand)
    out = []
    for p, r, mask in zip(plan.perm, plan.rand, masks, strict=True):
        c1, c2 = ciphers[p]
        if c1 == BASE and (r + 1) % ORDER:
            out.append((base_mul(r + 1), add(c2, mask)))
        else:
            out.append((add(c1, base_mul(r)), add(c2, mask)))
    return Deck(tuple(out))


def decrypt_with(secret: int, cipher: Cipher) -> Card | None:
    """The card under ``cipher`` for whoever holds the whole joint secret (tests, the audit)."""
    c1, c2 = cipher
    return card_of(sub(c2, mul(secret, c1)))
