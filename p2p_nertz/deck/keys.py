"""A member's secret for one round, and everything derived from it.

Each member of a round holds one scalar ``x_i`` (its *round secret*). Everything it does in the
shuffle is derived from it: its key ``X_i = x_i·G``, the permutation and re-randomisation of each
of its shuffle stages, the coefficients of its VSS polynomial, the key its VSS shares are
boxed with, the nonces of its proofs. Publishing ``X_i`` (with a proof of knowledge) before the
deal commits the member to all of it, and revealing ``x_i`` after the round lets everyone re-run
all of it (docs/shuffle.md §3.1). The reference peer derives ``x_i`` from its identity key, as
it does its secrets of the fair deal, so that a restart knows it without storing it.

A derivation always binds the round's *context* (:func:`round_context`: the game id and the
round), so a secret reused by mistake in another round derives different values.

>>> ctx = round_context(bytes(32), 1)
>>> MemberKey.from_seed(b"seed", ctx) == MemberKey.from_seed(b"seed", ctx)
True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from p2p_nertz.deck.group import (
    DeckError,
    add,
    base_mul,
    check_point,
    hash_scalar,
    scalar_bytes,
)
from p2p_nertz.deck.proofs import Proof, prove_key, verify_key

__all__ = ["MemberKey", "joint_key", "round_context", "seat_context", "verify_member_key"]

MAX_ROUND = 10_000


def round_context(game_id: bytes, round_no: int, attempt: int = 0) -> bytes:
    """What every derivation and proof of a round binds: ``game_id ‖ u32(round) ‖ u8(attempt)``.

    ``attempt`` counts the deals of the round restarted because a member dropped before the
    deal was over (docs/shuffle.md §8.4): each restart derives new secrets.
    """
    if len(game_id) != 32:
        raise ValueError(f"a game id is 32 bytes, not {len(game_id)}")
    if not 1 <= round_no <= MAX_ROUND:
        raise ValueError(f"a round is 1..{MAX_ROUND}, not {round_no}")
    if not 0 <= attempt <= 255:
        raise ValueError(f"a deal's attempt is 0..255, not {attempt}")
    return game_id + round_no.to_bytes(4, "big") + bytes([attempt])


def seat_context(context: bytes, seat: int, *more: int) -> bytes:
    """``context ‖ u8(seat) ‖ u8/u16 of each further index`` (a deck, a position)."""
    return context + bytes([seat]) + b"".join(i.to_bytes(2, "big") for i in more)


@dataclass(frozen=True, slots=True, repr=False)
class MemberKey:
    """One member's round secret ``x`` and its public key ``X = x·G``.

    Attributes:
        x: the round secret, a non-zero scalar.
        public: ``X = x·G``.
        context: the round's context (:func:`round_context`).
    """

    x: int
    context: bytes
    public: bytes = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "public", base_mul(self.x))

    @classmethod
    def from_seed(cls, seed: bytes, context: bytes) -> MemberKey:
        """The member's key derived from a private seed: ``x = H("key", seed, context)``."""
        return cls(x=hash_scalar("key", seed, context), context=context)

    @property
    def secret_bytes(self) -> bytes:
        """``x`` as 32 bytes: what the member reveals after the round, and derives from."""
        return scalar_bytes(self.x)

    def proof(self, seat: int) -> Proof:
        """The proof of knowledge of ``x`` that goes with ``X`` (for this seat)."""
        return prove_key(self.x, seat_context(self.context, seat))

    def __repr__(self) -> str:
        return f"MemberKey(public={self.public.hex()[:16]}…)"


def verify_member_key(key: bytes, proof: Proof, context: bytes, seat: int) -> None:
    """Check a member's published key and its proof; :class:`DeckError` if either is bad."""
    check_point(key, f"key of seat {seat}")
    if not verify_key(key, proof, seat_context(context, seat)):
        raise DeckError(f"key of seat {seat}: the proof of knowledge does not verify")


def joint_key(keys: Iterable[bytes]) -> bytes:
    """The joint key ``X = Σ X_i`` of the members' keys (at least one)."""
    total: bytes | None = None
    for key in keys:
        total = key if total is None else add(total, key)
    if total is None:
        raise ValueError("a joint key needs at least one member's key")
    return check_point(total, "joint key")
