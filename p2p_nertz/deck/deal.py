"""The pipelined deal: N decks through N members in N stages.

Every member owns a deck (deck ``d`` is seat-order member ``d``'s). Each deck must pass through
every member once; done one deck after another that is N² stages, but pipelined every member
works at every stage, each on a different deck::

    at stage s (0 ≤ s < N), member i shuffles deck (i − s) mod N

so deck ``d`` starts at its owner (stage 0: member ``d``) and goes on to member ``d + 1``,
``d + 2``, … (mod N); after stage ``N − 1`` every deck has been through every member, and the
deal took N stages, each one network hop (docs/shuffle.md §4). Member ``d − 1`` is the last to
shuffle deck ``d``.

>>> schedule(3)
((0, 1, 2), (2, 0, 1), (1, 2, 0))
>>> [deck_at(stage=s, member=0, members=3) for s in range(3)]
[0, 2, 1]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from p2p_nertz.deck.elgamal import Deck, initial_deck, shuffle_stage
from p2p_nertz.deck.keys import MemberKey, joint_key
from p2p_nertz.rules.cards import Card

__all__ = [
    "MAX_MEMBERS",
    "DealTranscript",
    "deck_at",
    "member_at",
    "run_deal",
    "run_stage",
    "schedule",
]

MAX_MEMBERS = 8


def _members(members: int) -> int:
    if not 1 <= members <= MAX_MEMBERS:
        raise ValueError(f"a deal has 1..{MAX_MEMBERS} members, not {members}")
    return members


def deck_at(*, stage: int, member: int, members: int) -> int:
    """The deck ``member`` shuffles at ``stage``: ``(member − stage) mod members``."""
    _members(members)
    if not (0 <= stage < members and 0 <= member < members):
        raise ValueError(f"no stage {stage} of member {member} in a deal of {members}")
    return (member - stage) % members


def member_at(*, stage: int, deck: int, members: int) -> int:
    """The member that shuffles ``deck`` at ``stage``: ``(deck + stage) mod members``."""
    _members(members)
    if not (0 <= stage < members and 0 <= deck < members):
        raise ValueError(f"no stage {stage} of deck {deck} in a deal of {members}")
    return (deck + stage) % members


def schedule(members: int) -> tuple[tuple[int, ...], ...]:
    """For each stage, the deck each member shuffles (indexed by member)."""
    n = _members(members)
    return tuple(tuple((i - s) % n for i in range(n)) for s in range(n))


@dataclass(frozen=True, slots=True)
class DealTranscript:
    """Every deck after every stage of a deal: what the members published, in order.

    Attributes:
        joint: the joint key the decks are encrypted under.
        initial: deck ``d`` before any stage (the public encryptions of its cards).
        stages: ``stages[s][d]`` is deck ``d`` after stage ``s``.
    """

    joint: bytes
    initial: tuple[Deck, ...]
    stages: tuple[tuple[Deck, ...], ...]

    @property
    def final(self) -> tuple[Deck, ...]:
        """The shuffled decks, deck ``d`` at index ``d``."""
        return self.stages[-1]


def run_stage(
    keys: Sequence[MemberKey], stage: int, decks: Sequence[Deck], joint: bytes, *, wire: bool
) -> tuple[Deck, ...]:
    """Stage ``stage`` of the deal: each member shuffles the deck it holds at that stage.

    With ``wire``, each deck goes through its wire form and back (every point checked), as a
    member receiving it from the one before would.
    """
    n = len(keys)
    out: list[Deck | None] = [None] * n
    for member, key in enumerate(keys):
        d = deck_at(stage=stage, member=member, members=n)
        source = Deck.from_bytes(decks[d].to_bytes(), len(decks[d])) if wire else decks[d]
        out[d] = shuffle_stage(key.x, key.context, d, source, joint)
    return tuple(deck for deck in out if deck is not None)


def run_deal(
    keys: Sequence[MemberKey], decks: Sequence[Sequence[Card]], *, wire: bool = False
) -> DealTranscript:
    """The whole deal, in memory: member ``i`` holds ``keys[i]``, deck ``d`` is ``decks[d]``."""
    n = _members(len(keys))
    if len(decks) != n:
        raise ValueError(f"a deal of {n} members deals {n} decks, not {len(decks)}")
    joint = joint_key(k.public for k in keys)
    current = tuple(initial_deck(cards, joint) for cards in decks)
    initial = current
    stages = []
    for s in range(n):
        current = run_stage(keys, s, current, joint, wire=wire)
        stages.append(current)
    return DealTranscript(joint=joint, initial=initial, stages=tuple(stages))
