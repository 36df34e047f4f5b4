"""The picture of a round for the board: each player's cards to the lake over the round, the
races won and lost, and when each Nerts pile emptied.

Read from the final fold's log of the round (:attr:`RoundState.log`: the signed play events in
the agreed total order), so every player, spectator and replay draws the same picture: its
time axis is the order of the play events (the n-th play of the round), not anyone's clock.
Pure: a fold in, a value out.

>>> from p2p_nertz.rules import Card, Move
>>> ace = (0, Move.parse("N>L@0S"), Card.parse("AS"), (), False)
>>> two = (1, Move.parse("W>L@0S"), Card.parse("2S"), (), False)
>>> late = (0, Move.parse("1>L@0S"), Card.parse("2S"), (), True)
>>> pic = round_picture([ace, two, late], seats=2, nerts_size=13)
>>> pic.lake, pic.lost, pic.won
((((1, 1),), ((2, 1),)), ((3,), ()), ((), (3,)))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from p2p_nertz.protocol.state import GameState
from p2p_nertz.rules import Card, Move, MoveKind, Pile
from p2p_nertz.rules.config import NERTS_PILE_SIZE

__all__ = ["RoundPicture", "picture_of", "round_picture"]

LogEntry = tuple[int, Move, Card | None, tuple[Card, ...], bool] | None


@dataclass(frozen=True, slots=True)
class RoundPicture:
    """One round, per seat (see the module docstring).

    Attributes:
        plays: play events in the round (the length of the time axis).
        lake: per seat, ``(when, cards in the lake so far)`` at each card it kept there.
        lost: per seat, when each of its claims lost a race.
        won: per seat, when it won a race (another seat's claim lost to its card).
        emptied: per seat, when its Nerts pile emptied (``None``: it never did).
    """

    plays: int
    lake: tuple[tuple[tuple[int, int], ...], ...]
    lost: tuple[tuple[int, ...], ...]
    won: tuple[tuple[int, ...], ...]
    emptied: tuple[int | None, ...]

    def as_json(self) -> dict[str, Any]:
        """For the page."""
        return {
            "plays": self.plays,
            "lake": [[list(p) for p in points] for points in self.lake],
            "lost": [list(t) for t in self.lost],
            "won": [list(t) for t in self.won],
            "emptied": list(self.emptied),
        }


def round_picture(
    log: Sequence[LogEntry], *, seats: int, nerts_size: int = NERTS_PILE_SIZE
) -> RoundPicture:
    """The picture of a round from its log (see :class:`RoundPicture`).

    A kept lake card counts for its owner; a lost claim is a race lost by its author and won
    by the author of the last kept card on that foundation at that height (``won`` is then
    the seat the card there belongs to); a card leaving the Nerts pile (kept) counts toward
    emptying it.
    """
    count = [0] * seats
    lake: list[list[tuple[int, int]]] = [[] for _ in range(seats)]
    lost: list[list[int]] = [[] for _ in range(seats)]
    won: list[list[int]] = [[] for _ in range(seats)]
    nerts = [nerts_size] * seats
    emptied: list[int | None] = [None] * seats
    # Who holds each place of each foundation (the last kept card there), to name a winner.
    holder: dict[tuple[str, int], int] = {}
    when = 0
    for entry in log:
        if entry is None:  # an everyone-stuck rotation: not a play of anyone's
            continue
        when += 1
        seat, move, card, _, was_lost = entry
        if not 0 <= seat < seats:
            continue
        to_lake = move.is_lake and card is not None and move.foundation is not None
        if was_lost:
            if to_lake:
                assert card is not None
                lost[seat].append(when)
                winner = holder.get((str(move.foundation), card.rank))
                if winner is not None and 0 <= winner < seats:
                    won[winner].append(when)
            continue
        if to_lake:
            assert card is not None
            holder[(str(move.foundation), card.rank)] = seat
            count[seat] += 1
            lake[seat].append((when, count[seat]))
        if move.source is Pile.NERTS and move.kind in (MoveKind.CARD, MoveKind.SLIDE):
            nerts[seat] -= move.count or 1
            if nerts[seat] <= 0 and emptied[seat] is None:
                emptied[seat] = when
    return RoundPicture(
        plays=when,
        lake=tuple(tuple(p) for p in lake),
        lost=tuple(tuple(t) for t in lost),
        won=tuple(tuple(t) for t in won),
        emptied=tuple(emptied),
    )


def picture_of(final: GameState, number: int) -> RoundPicture | None:
    """The picture of round ``number`` of a final fold (``None``: no such round held)."""
    for rs in (*final.past_rounds, final.round):
        if rs.number == number:
            return round_picture(rs.log, seats=final.spec.seats)
    return None
