"""The bot interface: a strategy chooses a move; a pacing says how fast a bot plays.

A :class:`Strategy` sees the table as a person at it does (:meth:`~p2p_nertz.rules.Table.face_up`:
the face-up cards of every tableau, its own included, and the lake perhaps a little out of date,
as a person's eyes are) and returns a move, or ``None`` to wait. It cannot read a face-down card,
its own Nerts pile and stock included: :meth:`Strategy.decide` hands it the face-up view, where
such a read raises :class:`~p2p_nertz.errors.FaceDownError`. Strategies may keep memory between
calls (how long since they last played a card, the cards they saw), so each seat gets its own
instance; they never read a clock or global randomness: chance comes from the
:class:`~p2p_nertz.rng.Rng` they are built with.

:class:`Pacing` turns a speed level 1–10 into delays between moves, for people playing against
bots of a chosen speed. It is a parameter of whoever schedules bots (the in-process match, the
simulator, a bot peer), never a sleep inside the engine.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from p2p_nertz.defaults import BOT_SPEEDS, STRATEGY_NAMES
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Move, MoveKind, Table

__all__ = ["SPEEDS", "STRATEGIES", "Pacing", "Strategy", "keeps_pace", "make_strategy", "register"]


class Strategy(abc.ABC):
    """A way of playing Nertz: one instance per seat per round.

    Subclasses implement :meth:`choose`. ``name`` is how the CLI and the match refer to them.
    """

    name: str = "?"

    def __init__(self, rng: Rng | None = None) -> None:
        self.rng = rng or Rng(0)

    @abc.abstractmethod
    def choose(self, table: Table, seat: int) -> Move | None:
        """The move ``seat`` makes now, or ``None`` to wait (stuck and waiting for others).

        ``table`` is the face-up view :meth:`decide` gives (:meth:`Table.face_up`).
        """

    def decide(self, table: Table, seat: int) -> Move | None:
        """The move ``seat`` makes now: :meth:`choose` on the face-up view of ``table``, kept
        to the turns of turn-based play.

        Whoever schedules a bot calls this with the table it holds; the strategy sees only
        :meth:`Table.face_up` of it (as a person does, issue 19). In simultaneous play it is
        :meth:`choose`. In turn-based play (RULES.md [001]) a bot out of turn only calls Nerts
        when it may (or passes, to take back its turns if they were passed for: RULES.md), and
        on its turn a strategy that would wait passes instead: the others wait for its move.
        """
        table = table.face_up()
        if not table.rules.turn_based:
            return self.choose(table, seat)
        if table.turn != seat:
            if table.can_call(seat):
                return Move.call()
            # Our turns were passed for (we were slow): a pass of our own takes them back.
            return Move.pass_() if seat in table.passed_for else None
        move = self.choose(table, seat)
        return Move.pass_() if move is None else move

    def new_round(self) -> None:  # noqa: B027 - optional hook, empty by default
        """Forget per-round memory (called before each round)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


STRATEGIES: dict[str, Callable[[Rng], Strategy]] = {}


def register(name: str) -> Callable[[type[Strategy]], type[Strategy]]:
    """Class decorator: make a strategy available by ``name`` to the CLI and the match."""

    if name not in STRATEGY_NAMES:  # (the commands list the names without importing bots)
        raise ValueError(f"{name!r} is not in p2p_nertz.defaults.STRATEGY_NAMES")

    def deco(cls: type[Strategy]) -> type[Strategy]:
        cls.name = name
        STRATEGIES[name] = cls
        return cls

    return deco


def make_strategy(name: str, rng: Rng) -> Strategy:
    """A new strategy instance by name.

    Raises:
        ValueError: for an unknown name (the message lists the known ones).
    """
    try:
        factory = STRATEGIES[name]
    except KeyError:
        known = ", ".join(sorted(STRATEGIES))
        raise ValueError(f"unknown strategy {name!r} (known: {known})") from None
    return factory(rng)


SPEEDS = BOT_SPEEDS
"""A bot's speed levels (:class:`Pacing`): :data:`p2p_nertz.defaults.BOT_SPEEDS`."""


@dataclass(frozen=True, slots=True)
class Pacing:
    """How fast a bot plays: a speed level from 1 (a beginner) to 10 (a fast expert).

    Level ``n`` makes about ``0.4 * n`` moves a second (level 10: 4 a second, a quick human),
    each delay jittered ±25 %, and sees the lake ``reaction_ms`` late (people need time to
    notice another player's card).

    >>> Pacing(5).mean_delay_ms
    500
    >>> Pacing(11)
    Traceback (most recent call last):
      ...
    ValueError: speed must be 1..10, not 11
    """

    speed: int = 5

    def __post_init__(self) -> None:
        if type(self.speed) is not int or self.speed not in SPEEDS:
            raise ValueError(f"speed must be {SPEEDS[0]}..{SPEEDS[-1]}, not {self.speed}")

    @property
    def mean_delay_ms(self) -> int:
        """Average milliseconds between two moves."""
        return 2500 // self.speed

    @property
    def reaction_ms(self) -> int:
        """How late the bot sees the lake, in milliseconds."""
        return 150 + 600 // self.speed

    def delay_ms(self, rng: Rng) -> int:
        """The delay before the next move: the mean, jittered ±25 % by ``rng``."""
        mean = self.mean_delay_ms
        return max(1, mean + rng.between(-mean // 4, mean // 4))


def keeps_pace(
    played: Sequence[tuple[int, MoveKind] | None],
    seat: int,
    playing: Collection[int],
    standing: Collection[int] | None = None,
) -> bool:
    """Whether a practice bot at ``seat`` may move now: it waits for the slowest other player.

    The bot may move while it has made no more moves this round than every other playing seat
    that could still move (a seat whose last move is a pass waits for the others, so it does
    not hold the bot up: the bot must be free to pass too, or everyone would wait forever).
    A person who turns the stock three times to find a card lets the bot make three moves: the
    bots keep the person's pace, counted in moves (``nertz play --practice``).

    A pass waits only while it stands: once another seat puts a card in the lake after it, it
    is stale (the table's stuck marks, :mod:`p2p_nertz.rules.table`) and that seat holds the
    bot up again. Before, a person who said stuck let the bots race on to the end of the round
    while the table asked them to pass again (a newcomer's first game, session 25).

    Args:
        played: the round's moves in order, ``(seat, kind)``; ``None`` for a rotation.
        seat: the bot's seat.
        playing: the seats playing this round.
        standing: the seats whose pass stands (the table's ``stuck``); ``None``: every seat
            whose last move is a pass.

    >>> log = [(0, MoveKind.TURN), (1, MoveKind.CARD)]
    >>> keeps_pace(log, 1, {0, 1}), keeps_pace(log, 0, {0, 1})
    (True, True)
    >>> keeps_pace(log + [(1, MoveKind.TURN)], 1, {0, 1})
    False
    >>> keeps_pace(log + [(1, MoveKind.TURN), (0, MoveKind.PASS)], 1, {0, 1})
    True
    >>> ahead = log + [(1, MoveKind.TURN), (0, MoveKind.PASS), (1, MoveKind.CARD)]
    >>> keeps_pace(ahead, 1, {0, 1}, standing={0}), keeps_pace(ahead, 1, {0, 1}, standing=())
    (True, False)
    """
    counts = dict.fromkeys(playing, 0)
    last: dict[int, MoveKind] = {}
    for entry in played:
        if entry is None:
            last.clear()  # a rotation: everyone plays on
            continue
        who, kind = entry
        counts[who] = counts.get(who, 0) + 1
        last[who] = kind
    waiting = (
        set(standing)
        if standing is not None
        else {s for s, k in last.items() if k is MoveKind.PASS}
    )
    others = [n for s, n in counts.items() if s != seat and s not in waiting]
    return not others or counts.get(seat, 0) <= min(others)
