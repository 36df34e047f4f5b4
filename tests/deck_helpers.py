"""Helpers for the shuffle's tests (and scripts/bench_deck.py): a round's members, a whole deal,
the cards it opens, the VSS dealings of a table and the shares they box."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from nacl import bindings as sodium

from p2p_nertz.deck.deal import DealTranscript, run_deal
from p2p_nertz.deck.elgamal import Cipher
from p2p_nertz.deck.group import ORDER
from p2p_nertz.deck.keys import MemberKey, round_context
from p2p_nertz.deck.shares import make_share, open_card
from p2p_nertz.deck.vss import Dealing, deal_shares, open_share, x25519_public, x25519_secret
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules.cards import Card, new_deck

if TYPE_CHECKING:
    from p2p_nertz.protocol.shuffle import DeckRound

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


class VssTable:
    """The VSS set-up of a table: the members' box keys (:func:`box_keys`) and the dealings of
    ``dealers`` (every member unless given), each boxing a share of its dealer's secret to every
    other member (docs/shuffle.md §6). A peer only ever deals its own and opens its own boxes;
    a test sees every member's side at once.

    >>> table = VssTable(member_keys(3, "doc"))
    >>> sorted(table.dealings), sorted(table.held_by(1)), sorted(table.held_of(0))
    ([0, 1, 2], [0, 2], [1, 2])
    """

    def __init__(self, keys: Sequence[MemberKey], dealers: Iterable[int] | None = None) -> None:
        self.keys = list(keys)
        self.publics, self.secrets = box_keys(len(self.keys))
        dealers = range(len(self.keys)) if dealers is None else dealers
        self.dealings = {i: deal_shares(self.keys[i], i, self.publics) for i in sorted(dealers)}

    def share(
        self, dealer: int, seat: int, *, dealing: Dealing | None = None, secret: bytes | None = None
    ) -> int:
        """Member ``seat``'s share of ``dealer``'s secret, its box opened and checked
        (:func:`~p2p_nertz.deck.vss.open_share`); ``dealing`` and ``secret`` stand in for the
        dealer's dealing and the seat's box secret, to try a forged one."""
        return open_share(
            self.dealings[dealer] if dealing is None else dealing,
            public=self.keys[dealer].public,
            dealer=dealer,
            seat=seat,
            members=len(self.keys),
            secret=self.secrets[seat] if secret is None else secret,
            context=self.keys[dealer].context,
        )

    def held_by(self, seat: int) -> dict[int, int]:
        """The shares member ``seat`` holds: one of each other dealer's secret, by dealer."""
        return {i: self.share(i, seat) for i in self.dealings if i != seat}

    def held_of(self, dealer: int, seats: Iterable[int] | None = None) -> dict[int, int]:
        """Each of ``seats``' share (every other member's unless given) of ``dealer``'s secret."""
        seats = range(len(self.keys)) if seats is None else seats
        return {j: self.share(dealer, j) for j in seats if j != dealer}


def walk_owed(deck: DeckRound, seat: int) -> list[tuple[int, int, int]]:
    """``deck.owed(seat)``'s slow twin: every position turned up walked, nothing kept (the
    round's code before session 25 kept its answers, :mod:`p2p_nertz.protocol.shuffle_owed`)."""
    i = deck.member(seat)
    out = []
    for w in deck.turned:
        held = deck.shares.get(w, {})
        if i not in held and (i in deck.gone or w not in deck.opened):
            out.append((i, *w))
        if w in deck.opened or not deck.gone:
            continue
        for m in sorted(deck.gone - held.keys()):
            if m != i and i not in deck.partials.get((*w, m), {}) and deck.holds(i, m):
                out.append((m, *w))
    return out


def walk_partials_owed(deck: DeckRound, where: tuple[int, int]) -> list[tuple[int, list[int]]]:
    """``deck.partials_owed(where)``'s slow twin, nothing kept (as :func:`walk_owed`)."""
    if where in deck.opened or not deck.gone:
        return []
    held = deck.shares.get(where, {})
    out = []
    for m in sorted(deck.gone - held.keys()):
        sent = deck.partials.get((*where, m), {})
        owing = [
            j
            for j in range(len(deck.members))
            if j not in deck.gone and j not in sent and deck.holds(j, m)
        ]
        if owing:
            out.append((m, owing))
    return out
