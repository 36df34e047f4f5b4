"""The lake: shared foundations, claims on them, and the one resolver that decides races.

Theory of operation
-------------------
Every card that goes to the lake is a :class:`Claim`: "my card, from this pile of mine, goes on
this foundation at this height, at this (Lamport) time". The lake is a pure fold of claims taken
in their total order ``(lamport, seat, seq)`` (DESIGN.md §3–§4):

* an ace starts its own foundation, named by its owner and suit, so aces never conflict;
* any other claim is **kept** if the foundation's height is ``rank - 1``;
* it is also kept if the foundation is already at ``rank`` and the card(s) at that height were
  claimed at the *same* Lamport time: a **true tie**, both cards stay and both score
  (RULES.md: simultaneous plays);
* otherwise it is **lost**: the card goes back where it came from (the caller does that).

The in-process match feeds claims in the order of play; the network protocol feeds them in
Lamport order once they are final. Both use :meth:`Lake.apply`, so they cannot disagree.

>>> lake = Lake()
>>> lake, r = lake.apply(Claim.parse("0:N:AS@1"))
>>> lake, r = lake.apply(Claim.parse("1:W:2S>0S@5"))
>>> lake, tie = lake.apply(Claim.parse("2:3:2S>0S@5"))
>>> lake, late = lake.apply(Claim.parse("3:N:2S>0S@6"))
>>> r.outcome, tie.outcome, late.outcome
(<Outcome.KEPT: 'kept'>, <Outcome.TIED: 'tied'>, <Outcome.LOST: 'lost'>)
>>> print(lake)
0S: AS/0 2S/1 2S/2
"""

from __future__ import annotations

import enum
import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from p2p_nertz.errors import NotationError, chained
from p2p_nertz.rules.blank import Blank
from p2p_nertz.rules.cards import Card, card_code
from p2p_nertz.rules.moves import PILE_NERTS, PILE_WASTE, FoundationId, Pile
from p2p_nertz.slots import quick_init

__all__ = ["Claim", "Lake", "LakeCard", "Outcome", "Resolution", "needs", "resolve"]


def needs(card: Card) -> Card | None:
    """The card a foundation must show on top for ``card`` to go on it: the same suit, one
    rank lower (height ``rank - 1``); ``None`` for an ace (it starts its own foundation) or
    an undeclared joker.

    >>> str(needs(Card.parse("5H"))), needs(Card.parse("AS"))
    ('4H', None)
    """
    if card.suit is None or card.rank == 1:
        return None
    return Card(card.rank - 1, card.suit)


@dataclass(frozen=True, slots=True, repr=False)
class Claim:
    """A card played to the lake, with when and from where.

    Attributes:
        seat: the seat of the player whose card it is.
        card: the card, as it plays (a joker is declared).
        source: the pile it came from (Nerts, waste or a work pile): where it returns if lost.
        foundation: the foundation it goes on; for an ace, the foundation it starts.
        lamport: the Lamport time of the claim; equal times on one height are a true tie.
        seq: the position of the claim's event in its author's feed (orders a peer's own
            claims; 0 where there is no feed, as in the in-process match).
    """

    seat: int
    card: Card
    source: Pile
    foundation: FoundationId
    lamport: int = 0
    seq: int = 0

    def __post_init__(self) -> None:
        card = self.card
        if card.suit is None:
            raise ValueError(f"a joker must be declared before it goes to the lake: {card}")
        if card.suit is not self.foundation.suit:
            raise ValueError(f"{card} cannot go on the {self.foundation.suit.name} foundation")
        if card.rank == 1 and self.foundation != FoundationId(self.seat, card.suit, card.joker):
            raise ValueError(f"the ace {card} of seat {self.seat} starts its own foundation")
        if not (self.source is PILE_NERTS or self.source is PILE_WASTE or self.source.is_work):
            raise ValueError("a card goes to the lake from the Nerts pile, waste or a work pile")

    @property
    def height(self) -> int:
        """The foundation height this claim takes (the card's rank)."""
        return self.card.rank

    def order_key(self) -> tuple[int, int, int]:
        """The total order of claims: ``(lamport, seat, seq)`` (DESIGN.md §3)."""
        return (self.lamport, self.seat, self.seq)

    def __str__(self) -> str:
        text = f"{self.seat}:{self.source}:{self.card}"
        if self.card.rank != 1 or self.foundation.joker:
            text += f">{self.foundation}"
        return text + f"@{self.lamport}" + (f"#{self.seq}" if self.seq else "")

    def __repr__(self) -> str:
        return f"Claim.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Claim:
        """Parse ``<seat>:<source>:<card>[><foundation>]@<lamport>[#<seq>]``.

        ``1:W:5S>0S@12`` is seat 1's five of spades from the waste onto seat 0's spade
        foundation at Lamport time 12. An ace names no foundation: it starts its own.

        Raises:
            NotationError: if ``text`` is not a claim.
        """
        m = _CLAIM_RE.fullmatch(text.strip())
        if not m:
            raise NotationError(
                f"not a claim: {text!r} (expected seat:source:card>foundation@lamport, "
                "e.g. 1:W:5S>0S@12)"
            )
        seat = int(m["seat"])
        source_text = m["src"].upper()
        source = (
            Pile.NERTS
            if source_text == "N"
            else (Pile.WASTE if source_text == "W" else Pile(int(source_text)))
        )
        card = Card.parse(m["card"])
        if card.suit is None:
            raise NotationError(f"not a claim: {text!r} (a joker must be declared, e.g. JK1=5H)")
        if m["found"]:
            foundation = FoundationId.parse(m["found"])
        elif card.rank == 1:
            foundation = FoundationId(seat, card.suit, card.joker)
        else:
            raise NotationError(f"not a claim: {text!r} (only an ace may omit its foundation)")
        try:
            return cls(seat, card, source, foundation, int(m["lamport"]), int(m["seq"] or 0))
        except ValueError as exc:
            raise chained(NotationError(f"not a claim: {text!r} ({exc})"), None)


_CLAIM_RE = re.compile(
    r"(?P<seat>\d):(?P<src>[NWnw1-6]):(?P<card>[^>@]+)(?:>(?P<found>[^@]+))?"
    r"@(?P<lamport>\d+)(?:#(?P<seq>\d+))?"
)


@quick_init  # one a claim kept, in the fold of every peer and of the audit
@dataclass(frozen=True, slots=True, repr=False)
class LakeCard:
    """A card in the lake: the card, its owner's seat, and the Lamport time it was claimed."""

    card: Card
    owner: int
    lamport: int = 0

    def __str__(self) -> str:
        return f"{self.card}/{self.owner}"

    def __repr__(self) -> str:
        return f"LakeCard(Card.parse({str(self.card)!r}), {self.owner}, {self.lamport})"


class Outcome(enum.Enum):
    """What became of a claim."""

    KEPT = "kept"  #: the card is on the foundation
    TIED = "tied"  #: a true tie: the card is on the foundation beside an equal-time card
    LOST = "lost"  #: someone was earlier: the card returns to its source


# Plain constants of the members read on hot paths (why: p2p_nertz/rules/moves.py).
OUTCOME_KEPT = Outcome.KEPT
OUTCOME_TIED = Outcome.TIED
OUTCOME_LOST = Outcome.LOST


@quick_init  # one a claim
@dataclass(frozen=True, slots=True)
class Resolution:
    """The result of one claim.

    Attributes:
        claim: the claim.
        outcome: kept, tied or lost.
        winner: for a lost race, the seat whose card holds that height (``None`` when the
            claim lost because the foundation was not there or not at ``height - 1``).
    """

    claim: Claim
    outcome: Outcome
    winner: int | None = None

    @property
    def kept(self) -> bool:
        """Whether the card stays in the lake (kept or tied)."""
        return self.outcome is not OUTCOME_LOST


class Lake(Blank):
    """The foundations of one round: an immutable value; :meth:`apply` returns a new lake.

    Each foundation is the tuple of :class:`LakeCard` in the order they were laid; its height
    is the rank of its top card; after a true tie two cards share the top height.
    """

    __slots__ = ("_foundations", "_open")

    _foundations: dict[FoundationId, tuple[LakeCard, ...]]
    # Card.code of the next card -> the foundations that take it, in order.
    _open: dict[int, tuple[FoundationId, ...]]

    def __init__(
        self, foundations: Mapping[FoundationId, Iterable[LakeCard]] | None = None
    ) -> None:
        found: dict[FoundationId, tuple[LakeCard, ...]] = {}
        for fid, cards in dict(foundations or {}).items():
            pile = tuple(cards)
            if not pile:
                continue
            for lc in pile:
                if lc.card.suit is not fid.suit:
                    raise ValueError(f"{lc.card} is not of foundation {fid}'s suit")
            found[fid] = pile
        self._foundations = found
        self._open = {}
        for fid in sorted(found, key=FoundationId.sort_key):
            h = found[fid][-1].card.rank
            if h < 13:
                key = card_code(fid.suit, h + 1)
                self._open[key] = (*self._open.get(key, ()), fid)

    # -- queries --------------------------------------------------------------------------
    def height(self, foundation: FoundationId) -> int:
        """The height of a foundation (0 if it has not been started)."""
        pile = self._foundations.get(foundation)
        return pile[-1].card.rank if pile else 0

    def __getitem__(self, foundation: FoundationId) -> tuple[LakeCard, ...]:
        return self._foundations.get(foundation, ())

    def __contains__(self, foundation: object) -> bool:
        return foundation in self._foundations

    def __iter__(self) -> Iterator[FoundationId]:
        """The foundations in their total order (owner, suit, joker)."""
        return iter(sorted(self._foundations, key=FoundationId.sort_key))

    def __len__(self) -> int:
        return len(self._foundations)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Lake):
            return NotImplemented
        return self._foundations == other._foundations

    def __hash__(self) -> int:
        return hash(self.digest())

    def targets(self, card: Card) -> tuple[FoundationId, ...]:
        """The foundations that ``card`` fits on now (height ``rank - 1``), in order.

        A declared card only; for an ace the answer is empty (an ace starts its own).
        """
        return self._open.get(card.code, ()) if card.code else ()

    def open_foundations(self) -> Iterator[tuple[FoundationId, int]]:
        """Every foundation not yet at the King, with its height, in order."""
        for fid in self:
            h = self.height(fid)
            if h < 13:
                yield fid, h

    def cards(self) -> Iterator[LakeCard]:
        """Every card in the lake, foundation by foundation in order."""
        for fid in self:
            yield from self._foundations[fid]

    def count_by_owner(self) -> dict[int, int]:
        """How many cards each seat has in the lake (seats with none are absent)."""
        counts: dict[int, int] = {}
        for pile in self._foundations.values():
            for lc in pile:
                counts[lc.owner] = counts.get(lc.owner, 0) + 1
        return counts

    def completed(self) -> tuple[FoundationId, ...]:
        """Foundations built to the King (set aside, still scoring — RULES.md: lake)."""
        return tuple(fid for fid in self if self.height(fid) == 13)

    # -- the resolver ---------------------------------------------------------------------
    def apply(self, claim: Claim) -> tuple[Lake, Resolution]:
        """Resolve one claim, the next in total order: earliest wins, true ties kept.

        Returns the new lake (this one unchanged if the claim lost) and the resolution.
        """
        fid = claim.foundation
        rank = claim.card.rank
        pile = self._foundations.get(fid)
        height = pile[-1].card.rank if pile else 0
        if height == rank - 1:
            outcome = OUTCOME_KEPT
        elif pile and height == rank and pile[-1].lamport == claim.lamport:
            outcome = OUTCOME_TIED
        else:
            winner = pile[-1].owner if pile and height >= rank else None
            if pile and height > rank:
                # Someone took this height earlier and the foundation grew since.
                winner = next(lc.owner for lc in pile if lc.card.rank == rank)
            return self, Resolution(claim, OUTCOME_LOST, winner)
        new = Lake.__new__(Lake)
        new._foundations = dict(self._foundations)
        new._foundations[fid] = (*(pile or ()), LakeCard(claim.card, claim.seat, claim.lamport))
        if outcome is OUTCOME_KEPT:
            new._open = dict(self._open)
            # The card is of the foundation's suit (a Claim checks it): its code is the key
            # of its own height, card_code(fid.suit, rank), without the suit lookups.
            code = claim.card.code
            if rank > 1:
                old_key = code
                remaining = tuple(f for f in new._open[old_key] if f != fid)
                if remaining:
                    new._open[old_key] = remaining
                else:
                    del new._open[old_key]
            if rank < 13:
                key = code + 1
                others = new._open.get(key)
                new._open[key] = (
                    (fid,)
                    if others is None  # the usual case: no other foundation takes that card
                    else tuple(sorted((*others, fid), key=FoundationId.sort_key))
                )
        else:
            new._open = self._open
        return new, Resolution(claim, outcome)

    # -- identity and notation ------------------------------------------------------------
    def digest(self) -> bytes:
        """SHA-256 of the lake's canonical notation: equal lakes have equal digests."""
        return hashlib.sha256(b"p2p-nertz/lake\0" + self._canonical().encode()).digest()

    def _canonical(self) -> str:
        return ";".join(
            f"{fid}:" + ",".join(f"{lc.card}/{lc.owner}@{lc.lamport}" for lc in self[fid])
            for fid in self
        )

    def __str__(self) -> str:
        """One line per foundation: ``0S: AS/0 2S/1`` (card/owner), in order."""
        return "\n".join(f"{fid}: " + " ".join(str(lc) for lc in self[fid]) for fid in self)

    def __repr__(self) -> str:
        text = "; ".join(
            f"{fid}: " + " ".join(f"{lc.card}/{lc.owner}@{lc.lamport}" for lc in self[fid])
            for fid in self
        )
        return f"Lake.parse({text!r})"

    @classmethod
    def parse(cls, text: str) -> Lake:
        """Parse foundations separated by newlines or ``;``: ``0S: AS/0 2S/1@4 3S/0``.

        Each card is ``card/owner`` with an optional ``@lamport`` (default 0).

        Raises:
            NotationError: if ``text`` is not a lake.
        """
        found: dict[FoundationId, list[LakeCard]] = {}
        for part in re.split(r"[;\n]", text):
            if not part.strip():
                continue
            head, sep, body = part.partition(":")
            if not sep:
                raise NotationError(f"not a foundation line: {part.strip()!r} (e.g. 0S: AS/0 2S/1)")
            fid = FoundationId.parse(head)
            if fid in found:
                raise NotationError(f"foundation {fid} appears twice")
            cards: list[LakeCard] = []
            for word in body.split():
                m = re.fullmatch(r"([^/]+)/(\d)(?:@(\d+))?", word)
                if not m:
                    raise NotationError(
                        f"not a lake card: {word!r} (expected card/owner, e.g. 2S/1)"
                    )
                c = Card.parse(m[1])
                if c.suit is not fid.suit:
                    raise NotationError(f"{c} cannot be on foundation {fid}")
                expected = cards[-1].card.rank + 1 if cards else 1
                tie = bool(cards) and c.rank == cards[-1].card.rank > 1  # aces never tie
                if c.rank != expected and not tie:
                    raise NotationError(f"{c} cannot follow on foundation {fid}")
                cards.append(LakeCard(c, int(m[2]), int(m[3] or 0)))
            if not cards:
                raise NotationError(f"foundation {fid} has no cards")
            first = cards[0]
            if first.card.rank != 1 or first.owner != fid.owner or first.card.joker != fid.joker:
                raise NotationError(f"foundation {fid} must start with its owner's ace")
            found[fid] = cards
        return cls(found)


def resolve(claims: Iterable[Claim], lake: Lake | None = None) -> tuple[Lake, list[Resolution]]:
    """Resolve claims in their total order ``(lamport, seat, seq)``: the lake they make.

    Whatever order the claims arrive in, the result is the same.

    >>> claims = [Claim.parse("1:N:2H>0H@3"), Claim.parse("0:W:AH@1"), Claim.parse("2:1:2H>0H@2")]
    >>> final, results = resolve(claims)
    >>> print(final)
    0H: AH/0 2H/2
    >>> [r.outcome.value for r in results]
    ['kept', 'kept', 'lost']
    """
    current = Lake() if lake is None else lake
    results = []
    for claim in sorted(claims, key=Claim.order_key):
        current, resolution = current.apply(claim)
        results.append(resolution)
    return current, results
