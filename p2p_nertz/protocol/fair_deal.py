"""The fair deal of a commit game (DESIGN.md §5.2): each seat commits to a secret and a nonce,
reveals the nonce once every commit is in, and the secret once the round is over.

``R = H(nonces)`` is known only when every nonce is, so no seat can choose its secret against
the others'; each seat's deck is ``shuffle(H(secret, R, round))``, which the secret revealed
after the round lets everyone replay. :class:`FairDeal` owns a round's commits, nonces and
``R``, and checks each nonce and secret against its commit; the round
(:class:`~p2p_nertz.protocol.rounds.RoundState`) holds it and decides what a mismatch costs
(the round forfeited). The functions are the deal's hashes, the one home of each.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field

from p2p_nertz.protocol.bodies import Commit
from p2p_nertz.protocol.fold_values import RefusalCode, Refuse
from p2p_nertz.rules import Card, shuffled_deck

__all__ = [
    "FairDeal",
    "deck_seed",
    "local_nonce",
    "local_secret",
    "nonce_hash",
    "round_randomness",
    "secret_hash",
]


# -- the fair deal's hashes (DESIGN.md §5.2) --------------------------------------------------
def secret_hash(secret: bytes) -> bytes:
    """The commitment to a round secret."""
    return hashlib.sha256(b"p2p-nertz/v1/secret\0" + secret).digest()


def nonce_hash(nonce: bytes) -> bytes:
    """The commitment to a round nonce."""
    return hashlib.sha256(b"p2p-nertz/v1/nonce\0" + nonce).digest()


def round_randomness(nonces: list[bytes]) -> bytes:
    """``R = H(all nonces)``, in seat order."""
    return hashlib.sha256(b"p2p-nertz/v1/R\0" + b"".join(nonces)).digest()


def deck_seed(secret: bytes, randomness: bytes, number: int) -> bytes:
    """The seed of a seat's deck for a round: ``H(secret, R, round)``."""
    return hashlib.sha256(
        b"p2p-nertz/v1/deck\0" + secret + randomness + number.to_bytes(4, "big")
    ).digest()


def local_secret(private_key: bytes, game_id: bytes, number: int) -> bytes:
    """A seat's secret for a round, derived from its private key (so a restart knows it)."""
    return hmac.new(
        private_key, b"secret\0" + game_id + number.to_bytes(4, "big"), "sha256"
    ).digest()


def local_nonce(private_key: bytes, game_id: bytes, number: int) -> bytes:
    """A seat's nonce for a round, derived from its private key."""
    return hmac.new(
        private_key, b"nonce\0" + game_id + number.to_bytes(4, "big"), "sha256"
    ).digest()


@dataclass(slots=True)
class FairDeal:
    """A round's commits, nonces and ``R`` (module docstring). The caller checks the phase;
    :meth:`copy` copies the dicts."""

    commits: dict[int, Commit] = field(default_factory=dict)
    nonces: dict[int, bytes] = field(default_factory=dict)
    #: ``R``, once every nonce of the seats dealt in is here (:meth:`draw`)
    randomness: bytes | None = None

    def copy(self) -> FairDeal:
        """An independent copy."""
        return FairDeal(dict(self.commits), dict(self.nonces), self.randomness)

    def take_commit(self, seat: int, body: Commit) -> None:
        """``seat`` commits to its secret and nonce for this round."""
        if seat in self.commits:
            raise Refuse(RefusalCode.REPEATED, f"a second commit for round {body.round}")
        self.commits[seat] = body

    def take_nonce(self, seat: int, nonce: bytes) -> bool:
        """``seat`` reveals its nonce: whether it matches its commit (only then is it kept);
        raise for a second one."""
        commit = self.commits.get(seat)
        if seat in self.nonces:
            raise Refuse(RefusalCode.REPEATED, "a second nonce")
        if commit is None or nonce_hash(nonce) != commit.nonce_hash:
            return False
        self.nonces[seat] = nonce
        return True

    def secret_matches(self, seat: int, secret: bytes) -> bool:
        """Whether ``secret`` is the one ``seat`` committed to (not a stacked deck)."""
        commit = self.commits.get(seat)
        return commit is not None and secret_hash(secret) == commit.secret_hash

    def draw(self, playing: list[int]) -> None:
        """Every nonce of the seats ``playing`` (in seat order) is in: ``R``."""
        self.randomness = round_randomness([self.nonces[s] for s in playing])

    def deck(self, secret: bytes, number: int, jokers: int) -> tuple[Card, ...]:
        """The deck that ``secret`` deals in round ``number`` (``R`` drawn)."""
        assert self.randomness is not None
        return shuffled_deck(deck_seed(secret, self.randomness, number), jokers)
