"""The checks after the round, once every member has revealed its round secret.

With ``x_j`` known, everything member ``j`` published is a function of public values and ``x_j``,
so each check re-makes it and compares (docs/shuffle.md §6.2):

- its key: ``X_j = x_j·G`` (:data:`FaultKind.WRONG_SECRET`);
- each of its stages, re-run from the deck it received (the previous stage's published output,
  or the public initial deck): the published output must equal the re-run byte for byte
  (:data:`FaultKind.BAD_STAGE`: a card substituted, dropped or duplicated, a permutation or a
  randomness not the seed's);
- each decryption share it made: ``D = x_j·C1`` (:data:`FaultKind.BAD_SHARE`);
- its VSS dealing, re-made (:data:`FaultKind.BAD_DEALING`).

A member whose secret is not revealed (nor rebuilt from the VSS shares of the members left) is
:data:`FaultKind.UNREVEALED`: its stages cannot be checked. Each fault names the member at
fault: a stage's output is its shuffler's alone, whatever its input was.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from p2p_nertz.deck.deal import DealTranscript, member_at
from p2p_nertz.deck.elgamal import initial_deck, shuffle_stage
from p2p_nertz.deck.group import ORDER, base_mul, mul
from p2p_nertz.deck.keys import MemberKey
from p2p_nertz.deck.shares import Share
from p2p_nertz.deck.vss import Dealing, deal_shares
from p2p_nertz.rules.cards import Card

__all__ = ["Fault", "FaultKind", "check_dealings", "check_keys", "check_shares", "check_stages"]


class FaultKind(enum.Enum):
    """What a member did wrong, as the audit names it."""

    WRONG_SECRET = "wrong_secret"
    UNREVEALED = "unrevealed"
    BAD_STAGE = "bad_stage"
    BAD_SHARE = "bad_share"
    BAD_DEALING = "bad_dealing"


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault found: its kind, the seat at fault, and where (deck, stage or position)."""

    kind: FaultKind
    seat: int
    deck: int = -1
    at: int = -1

    def __str__(self) -> str:
        where = f" deck {self.deck}" if self.deck >= 0 else ""
        where += f" at {self.at}" if self.at >= 0 else ""
        return f"{self.kind.value}: seat {self.seat}{where}"


def check_keys(publics: Sequence[bytes], secrets: Mapping[int, int]) -> list[Fault]:
    """Each revealed secret against its key; a member with no secret is unrevealed."""
    faults = []
    for seat, public in enumerate(publics):
        x = secrets.get(seat)
        if x is None:
            faults.append(Fault(FaultKind.UNREVEALED, seat))
        elif not 0 < x < ORDER or base_mul(x) != public:
            faults.append(Fault(FaultKind.WRONG_SECRET, seat))
    return faults


def check_stages(
    transcript: DealTranscript,
    decks: Sequence[Sequence[Card]],
    secrets: Mapping[int, int],
    context: bytes,
) -> list[Fault]:
    """Re-run every stage whose shuffler's secret is known; a fault for each that differs."""
    n = len(transcript.stages)
    faults = []
    for d in range(n):
        source = initial_deck(decks[d], transcript.joint)
        for s in range(n):
            member = member_at(stage=s, deck=d, members=n)
            published = transcript.stages[s][d]
            x = secrets.get(member)
            if x is not None:
                again = shuffle_stage(x, context, d, source, transcript.joint)
                if again != published:
                    faults.append(Fault(FaultKind.BAD_STAGE, member, deck=d, at=s))
            source = published
    return faults


def check_shares(
    shares: Iterable[Share],
    final: Sequence[Sequence[tuple[bytes, bytes]]],
    secrets: Mapping[int, int],
) -> list[Fault]:
    """Each member's own share against ``x_j·C1`` of the final deck's position."""
    faults = []
    for share in shares:
        x = secrets.get(share.seat)
        if share.of_seat != share.seat or x is None:
            continue  # partial shares are checked by their proofs as they come
        c1 = final[share.deck][share.position][0]
        if mul(x, c1) != share.point:
            faults.append(
                Fault(FaultKind.BAD_SHARE, share.seat, deck=share.deck, at=share.position)
            )
    return faults


def check_dealings(
    dealings: Mapping[int, Dealing],
    secrets: Mapping[int, int],
    recipients: Sequence[bytes],
    context: bytes,
) -> list[Fault]:
    """Each VSS dealing against the one its dealer's revealed secret makes."""
    faults = []
    for seat in sorted(dealings):
        x = secrets.get(seat)
        if x is None:
            continue
        if deal_shares(MemberKey(x=x, context=context), seat, recipients) != dealings[seat]:
            faults.append(Fault(FaultKind.BAD_DEALING, seat))
    return faults
