"""The :class:`Rules` of a game: every variant of RULES.md as one validated value.

>>> Rules()
Rules()
>>> Rules(draw=1, work_piles=5, nerts_bonus=10)
Rules(draw=1, work_piles=5, nerts_bonus=10)
>>> Rules(target=None, rounds=5).racing_demon
True
>>> Rules(work_piles=9)
Traceback (most recent call last):
  ...
p2p_nertz.errors.InvalidRulesError: work_piles must be 4, 5 or 6, not 9
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from p2p_nertz.errors import InvalidRulesError

__all__ = ["LIMITS", "MAX_SEATS", "NERTS_PILE_SIZE", "Rules"]

#: Cards dealt to the Nerts pile (RULES.md: deal) — 12 face down and the 13th face up.
NERTS_PILE_SIZE = 13

#: The most players a table seats.
MAX_SEATS = 8

#: The lowest and the highest value of each numeric rule that is not a short list of choices
#: (the commands' ``--target``, ``--rounds`` and ``--false-call-penalty`` take these).
LIMITS: dict[str, tuple[int, int]] = {
    "target": (1, 10_000),
    "rounds": (1, 1000),
    "false_call_penalty": (0, 100),
}


#: The on/off variants (every other field is a number).
_FLAGS = frozenset({"rotate_alone", "pairs", "turn_based"})


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Rules:
    """The rules of one game; the defaults are RULES.md's defaults.

    Attributes:
        draw: cards turned from the stock at a time: 3 (default) or 1 (RULES.md: stock).
        work_piles: 4 (default), 5 or 6 work piles (Pounce).
        nerts_bonus: bonus for a valid Nerts call: 0 (default), 5, 10 or 25.
        nerts_card_penalty: points lost per card left in a Nerts pile: 2 (default) or 1.
        target: play rounds until someone reaches this total (default 100); ``None`` with
            ``rounds`` for Racing Demon.
        rounds: play exactly this many rounds (Racing Demon); ``None`` with ``target``.
        false_call_penalty: points lost for calling Nerts with cards left (default 5); the
            caller also gets no bonus.
        rotate_alone: a stuck player may rotate their stock alone instead of waiting for
            everyone to be stuck (RULES.md: everyone stuck, variant).
        pairs: two-player teams (seats 0+1, 2+3, ...) score together, and a partner's empty
            Nerts pile lets the team call.
        jokers: jokers added to each deck: 0 (default), 1 or 2.
        turn_based: one move per turn in seat order instead of simultaneous play (RULES.md:
            further variants [001]; a Nerts call is no move and may come at any time).
    """

    draw: int = 3
    work_piles: int = 4
    nerts_bonus: int = 0
    nerts_card_penalty: int = 2
    target: int | None = 100
    rounds: int | None = None
    false_call_penalty: int = 5
    rotate_alone: bool = False
    pairs: bool = False
    jokers: int = 0
    turn_based: bool = False

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            expected: type = bool if f.name in _FLAGS else int
            if value is None and f.name in ("target", "rounds"):
                continue
            # bool is an int subclass: refuse True where a number is meant, and 1 for a flag.
            if type(value) is not expected:
                raise InvalidRulesError(
                    f"{f.name} must be {expected.__name__}, not {type(value).__name__} {value!r}"
                )
        if self.draw not in (1, 3):
            raise InvalidRulesError(f"draw must be 1 or 3, not {self.draw}")
        if self.work_piles not in (4, 5, 6):
            raise InvalidRulesError(f"work_piles must be 4, 5 or 6, not {self.work_piles}")
        if self.nerts_bonus not in (0, 5, 10, 25):
            raise InvalidRulesError(f"nerts_bonus must be 0, 5, 10 or 25, not {self.nerts_bonus}")
        if self.nerts_card_penalty not in (1, 2):
            raise InvalidRulesError(
                f"nerts_card_penalty must be 1 or 2, not {self.nerts_card_penalty}"
            )
        if (self.target is None) == (self.rounds is None):
            raise InvalidRulesError(
                "give exactly one of target (play to a score) and rounds (Racing Demon), "
                f"not target={self.target} rounds={self.rounds}"
            )
        for name, (low, high) in LIMITS.items():
            value = getattr(self, name)
            if value is not None and not low <= value <= high:
                raise InvalidRulesError(f"{name} must be {low}..{high}, not {value}")
        if self.jokers not in (0, 1, 2):
            raise InvalidRulesError(f"jokers must be 0, 1 or 2, not {self.jokers}")

    @property
    def racing_demon(self) -> bool:
        """Whether the game is a fixed number of rounds rather than a race to a target."""
        return self.rounds is not None

    @property
    def deck_size(self) -> int:
        """Cards in each player's deck."""
        return 52 + self.jokers

    @property
    def stock_size(self) -> int:
        """Cards in the stock after the deal."""
        return self.deck_size - NERTS_PILE_SIZE - self.work_piles

    def validate_players(self, players: int) -> None:
        """Check that ``players`` seats can play under these rules.

        Raises:
            InvalidRulesError: fewer than 1 or more than 8 players, or pairs without two full
                teams.
        """
        if not 1 <= players <= MAX_SEATS:
            raise InvalidRulesError(f"a table seats 1 to {MAX_SEATS} players, not {players}")
        if self.pairs and (players % 2 or players < 4):
            raise InvalidRulesError(
                f"pairs needs an even number of players, at least 4 (two against two), "
                f"not {players}"
            )

    def team_of(self, seat: int) -> int:
        """The team (scoring unit) of a seat: the seat itself, or ``seat // 2`` in pairs."""
        return seat // 2 if self.pairs else seat

    def to_dict(self) -> dict[str, Any]:
        """The rules as a plain dict of the fields that differ from the defaults."""
        default = _DEFAULT
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) != getattr(default, f.name)
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Build rules from a dict such as :meth:`to_dict` returns.

        Raises:
            InvalidRulesError: on an unknown field or an invalid value.
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidRulesError(f"unknown rules field(s): {', '.join(unknown)}")
        values = dict(data)
        if "rounds" in values and values["rounds"] is not None and "target" not in values:
            values["target"] = None
        return cls(**values)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items())
        return f"Rules({args})"


_DEFAULT = Rules()
