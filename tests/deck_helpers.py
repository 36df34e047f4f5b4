"""Helpers for the shuffle's tests: a round's members, a whole deal, the cards it opens."""

from __future__ import annotations

from collections.abc import Sequence

from nacl import bindings as sodium

from p2p_nertz.deck.deal import DealTranscript, run_deal
from p2p_nertz.deck.elgamal import Cipher
from p2p_nertz.deck.group import ORDER
from p2p_nertz.deck.keys import MemberKey, round_context
from p2p_nertz.deck.shares import make_share, open_card
from p2p_nertz.deck.vss import x25519_public, x25519_secret
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules.cards import Card, new_deck

GAME_ID = derive_seed("deck tests", "game")
CONTEXT = round_context(GAME_ID, 1)


def member_keys(n: int, seed: str | int = 0, context: bytes = CONTEXT) -> list[MemberKey]:
    """``n`` members' round keys, each from its own seed derived from ``seed``."""
    return [MemberKey.from_seed(derive_seed("member", seed, i), context) for i in range(n)]


def identity_seeds(n: int) -> list[bytes]:
    """The Ed25519 private seeds of ``n`` members' identities."""
    return [derive_seed("identity", i) for i in range(n)]


def box_keys(n: int) -> tuple[list[bytes], list[bytes]]:
    """The members' X25519 public keys (from their identities) and their secrets."""
    seeds = identity_seeds(n)
    publics = [x25519_public(sodium.crypto_sign_seed_keypair(s)[0]) for s in seeds]
    return publics, [x25519_secret(s) for s in seeds]


def deal(n: int, seed: str | int = 0, cards: Sequence[Card] | None = None) -> DealTranscript:
    """A whole deal of ``n`` members, every deck the same cards (52 unless given)."""
    deck = tuple(cards) if cards is not None else new_deck()
    return run_deal(member_keys(n, seed), [deck] * n)


def joint_secret(keys: Sequence[MemberKey]) -> int:
    """``x = Σ x_i``: what no member holds, for the tests' own decryption."""
    return sum(k.x for k in keys) % ORDER


def open_by_shares(keys: Sequence[MemberKey], deck: int, position: int, cipher: Cipher) -> Card:
    """Open one position as the table does: every member's share, combined."""
    shares = [make_share(k, seat, deck, position, cipher) for seat, k in enumerate(keys)]
    return open_card(cipher, [s.point for s in shares])
