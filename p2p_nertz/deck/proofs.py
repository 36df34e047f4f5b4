"""Two zero-knowledge proofs of one discrete log, made non-interactive with Fiat–Shamir.

- :func:`prove_key` / :func:`verify_key`: Schnorr's proof that the author knows ``x`` with
  ``X = x·G``. A member's round key comes with one, so that nobody can publish a *rogue key*
  (``X_n = Y − Σ X_i``, whose log it does not know, to make the joint key one it does).
- :func:`prove_equal` / :func:`verify_equal`: Chaum–Pedersen's proof that
  ``log_G(X) = log_P(D)`` (``D = x·P``): a decryption share ``x_j·C1`` is the one its author's
  key gives, so a wrong share is refused the moment it arrives, with its signed event as proof.

Both bind a ``context`` (the round, the seat, the position: docs/shuffle.md §3.4) into the
challenge, so a proof cannot be replayed elsewhere. Nonces are derived from the secret and the
statement (as Ed25519's are), so the same inputs give the same proof, byte for byte, and no
randomness is needed. A proof is two scalars, 64 bytes: the challenge ``c`` and the answer ``s``.

>>> x = 12345
>>> c, s = prove_key(x, b"ctx")
>>> verify_key(base_mul(x), (c, s), b"ctx"), verify_key(base_mul(x), (c, s), b"other")
(True, False)
"""

from __future__ import annotations

import functools

from p2p_nertz.deck.group import (
    BASE,
    ORDER,
    DeckError,
    base_mul,
    hash_scalar,
    mul,
    scalar_bytes,
    sub,
)

__all__ = ["Proof", "prove_equal", "prove_key", "verify_equal", "verify_key"]

#: A proof: the challenge ``c`` and the answer ``s = k + c·x``, both scalars.
Proof = tuple[int, int]


def prove_key(x: int, context: bytes) -> Proof:
    """Schnorr's proof of knowledge of ``x`` for ``X = x·G``, bound to ``context``."""
    key = base_mul(x)
    k = hash_scalar("key-nonce", scalar_bytes(x), context)
    c = hash_scalar("key-proof", context, key, base_mul(k))
    return c, (k + c * x) % ORDER


def verify_key(key: bytes, proof: Proof, context: bytes) -> bool:
    """Whether ``proof`` shows knowledge of the log of ``key`` (a valid point), for ``context``."""
    c, s = proof
    try:
        commitment = sub(base_mul(s), mul(c, key))
    except DeckError:
        return False
    return hash_scalar("key-proof", context, key, commitment) == c


@functools.lru_cache(maxsize=8192)
def prove_equal(
    x: int, point: bytes, context: bytes, public: bytes | None = None
) -> tuple[bytes, Proof]:
    """``D = x·point`` and Chaum–Pedersen's proof that ``log_G(x·G) = log_point(D)``;
    ``public``, if given, must be ``x·G`` (a member's key, known: a base multiplication
    spared), and the proof is the same, byte for byte.

    Remembered (pure: the nonce is a hash of the inputs, so the same inputs give the same
    proof): the simulated games of one seed deal the same decks with the same keys until
    their faults part, and each made every share again at three scalar multiplications
    (session 40)."""
    share = mul(x, point)
    k = hash_scalar("equal-nonce", scalar_bytes(x), point, context)
    key = base_mul(x) if public is None else public
    c = _challenge(context, key, point, share, base_mul(k), mul(k, point))
    proof = (c, (k + c * x) % ORDER)
    _proven(key, point, share, proof, context)
    return share, proof


#: The statements a proof was made for in this process, ``(key, point, share, proof,
#: context)``, the oldest first: :func:`verify_equal` answers them without its four scalar
#: multiplications (session 41).
PROVEN: dict[tuple[bytes, bytes, bytes, Proof, bytes], None] = {}
PROVEN_LIMIT = 8192


def _proven(key: bytes, point: bytes, share: bytes, proof: Proof, context: bytes) -> None:
    """Note a statement :func:`prove_equal` proved. It verifies: ``s·G − c·X = k·G`` and
    ``s·P − c·D = k·P`` for ``X = x·G`` and ``D = x·P`` (the proof's completeness; ``public``
    is ``x·G`` by :func:`prove_equal`'s contract, :class:`~p2p_nertz.deck.keys.MemberKey`'s
    ``public`` by construction). The simulator's members share one process: every share one
    of them made, another checked again (11% of a shuffle game's CPU)."""
    if len(PROVEN) >= PROVEN_LIMIT:
        del PROVEN[next(iter(PROVEN))]
    PROVEN[(key, point, share, proof, context)] = None


@functools.lru_cache(maxsize=8192)
def verify_equal(key: bytes, point: bytes, share: bytes, proof: Proof, context: bytes) -> bool:
    """Whether ``proof`` shows ``log_G(key) = log_point(share)`` (all three valid points).

    Remembered (pure: the same inputs give the same answer): a share is checked by the
    tentative and the final fold of every member that takes it, and again by the audit, at four
    scalar multiplications a check. A statement this process proved (:data:`PROVEN`) verifies
    without them (``tests/test_deck.py`` checks each such answer against the multiplications).
    """
    if (key, point, share, proof, context) in PROVEN:
        return True
    return _verified(key, point, share, proof, context)


def _verified(key: bytes, point: bytes, share: bytes, proof: Proof, context: bytes) -> bool:
    """:func:`verify_equal` by its four scalar multiplications."""
    c, s = proof
    try:
        a = sub(base_mul(s), mul(c, key))
        b = sub(mul(s, point), mul(c, share))
    except DeckError:
        return False
    return _challenge(context, key, point, share, a, b) == c


def _challenge(context: bytes, *points: bytes) -> int:
    # The statement (G, X, P, D) and the commitments (A, B), in that order.
    return hash_scalar("equal-proof", context, BASE, *points)
