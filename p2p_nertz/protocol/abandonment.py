"""How a game abandoned by its last members ends (DESIGN.md §6, docs/protocol.md §9.3).

Theory of operation
-------------------
With two members left, one gone, the other signs an ``abandon``: the game ends on the rounds
**scored in every abandon's view**. The two sides of a partition may each abandon the other,
each on what it holds, and the results of the last round may have reached one side and not the
other; so each abandon counts the rounds whose every result its frontier holds, and the game
counts the fewest of all the abandons known (the other side's too, read even past its cut).
Whatever each side does alone, the union of their events gives one result.

:class:`Abandonment` owns what that needs: every abandon known with the frontier it was
signed at, what each member held at its latest event (its frontier), the rounds recorded and
the results that scored them, and the game as recorded when the abandon came. It answers which
game the abandon leaves (:meth:`Abandonment.counted`) and whether that may still change
(:meth:`Abandonment.provisional`); :class:`~p2p_nertz.protocol.state.GameState` removes the
absent member (its roster) and ends the game (its phases).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from p2p_nertz.rules import Game
from p2p_nertz.rules.blank import Blank

__all__ = ["Abandonment", "NoPartner", "Refusal"]


class Refusal(enum.Enum):
    """Why the core takes no abandon now, as a code
    (:attr:`~p2p_nertz.protocol.local.AbandonAnswer.refusal`): each front end says it in its
    own words (a person knows a player, not a member); the core's words are for logs and
    errors."""

    OVER = "over"  #: the game is over
    OUT = "out"  #: the member asking is out of the game
    OTHERS = "others"  #: not exactly one other member is left (``others`` says who is)
    HELD_BACK = "held back"  #: left with a gone member, the drops of the rest not final (§13)
    RECOVERING = "recovering"  #: still recovering its own events after a restart (§9.6)
    LEFT = "left"  #: it left the game
    ABANDONED = "abandoned"  #: it abandoned already: the game ends once that is final
    HEARD = "heard"  #: the one other member was heard too lately to count as gone
    UNHEARD = "unheard"  #: no member has answered since it started (§9.6: it signs nothing)


@dataclass(frozen=True, slots=True)
class NoPartner:
    """Why an abandon by a member has nobody to end the game with
    (:func:`~p2p_nertz.protocol.state.abandon_partner`); ``str()`` gives the core's words.

    Attributes:
        refusal: :attr:`Refusal.OVER`, :attr:`Refusal.OUT` or :attr:`Refusal.OTHERS`.
        others: the other members still in by the final fold (for ``OTHERS``).
        pending: those of ``others`` whose drop only the held events decide (not final yet).
    """

    refusal: Refusal
    others: tuple[int, ...] = ()
    pending: tuple[int, ...] = ()

    def __str__(self) -> str:
        if self.refusal is Refusal.OVER:
            return "the game is already over"
        if self.refusal is Refusal.OUT:
            return "you are out of the game"
        pending = "; a drop is not final yet" if len(self.others) - len(self.pending) == 1 else ""
        return f"an abandon needs exactly one other member left ({len(self.others)} are{pending})"


class Abandonment(Blank):
    """The abandons of a game fold and what they saw (module docstring). Mutable for speed,
    as the fold is; :meth:`copy` is cheap and independent."""

    __slots__ = ("abandoned", "abandons", "before", "frontiers", "result_events")

    def __init__(self) -> None:
        #: seat -> (seq, frontier) of its latest event folded or observed: what it held then.
        self.frontiers: dict[int, tuple[int, tuple[int, ...]]] = {}
        #: (author, target) -> the frontier of the author's first abandon of the target,
        #: counted or observed (§9.3: the game counts the rounds every abandon saw scored).
        self.abandons: dict[tuple[int, int], tuple[int, ...]] = {}
        #: (author, absent) of the abandon that ended the game, if one did.
        self.abandoned: tuple[int, int] | None = None
        #: The game as recorded when the abandon came (the totals count a prefix of it).
        self.before: Game | None = None
        #: Per round recorded, the (seat, seq) of its results (what made it scored).
        self.result_events: tuple[tuple[tuple[int, int], ...], ...] = ()

    def copy(self) -> Abandonment:
        """An independent copy."""
        new = Abandonment.__new__(Abandonment)
        new.frontiers = dict(self.frontiers)
        new.abandons = dict(self.abandons)
        new.abandoned = self.abandoned
        new.before = self.before
        new.result_events = self.result_events
        return new

    def heard(self, seat: int, seq: int, frontier: tuple[int, ...]) -> None:
        """``seat``'s event ``seq``, folded or observed, held ``frontier``."""
        latest = self.frontiers.get(seat)
        if latest is None or latest[0] < seq:
            self.frontiers[seat] = (seq, frontier)

    def scored(self, results: tuple[tuple[int, int], ...]) -> None:
        """A round was recorded, scored by these results (seat, seq)."""
        self.result_events += (results,)

    def read(self, author: int, target: int, frontier: tuple[int, ...]) -> bool:
        """An abandon of ``target`` by ``author`` was read that does not count (its author is
        past its cut); whether it is news to a game already abandoned (the rounds it counts
        may be fewer: :meth:`counted` again)."""
        if (author, target) in self.abandons:
            return False
        self.abandons[(author, target)] = frontier
        return self.abandoned is not None

    def start(self, author: int, absent: int, frontier: tuple[int, ...], game: Game) -> None:
        """``author``'s abandon of ``absent``, signed at ``frontier``, ends ``game``."""
        self.abandons.setdefault((author, absent), frontier)
        self.abandoned = (author, absent)
        self.before = game

    def provisional(self, game: Game) -> bool:
        """Whether ``game``, ended by an abandon, may still change (:attr:`GameState.provisional
        <p2p_nertz.protocol.state.GameState.provisional>`)."""
        if self.abandoned is None:
            return False
        author, absent = self.abandoned
        if (absent, author) in self.abandons:
            return False
        counted = len(game.history)
        if not counted:
            return False  # no round to disagree on
        seen = self.frontiers.get(absent)
        return seen is None or not _covers(seen[1], self.result_events[counted - 1])

    def counted(self, game: Game) -> tuple[Game, bool]:
        """The game the abandons leave: the rounds every known abandon of the last two members
        saw scored (§9.3), and whether that is another game than ``game``, the one now."""
        assert self.abandoned is not None and self.before is not None
        author, absent = self.abandoned
        full = self.before
        counted = len(full.history)
        for (voter, target), frontier in self.abandons.items():
            if {voter, target} == {author, absent}:
                counted = min(counted, self._rounds_seen(frontier))
        if counted == len(full.history) and full.result is not None:
            # A normal end that every abandon saw.
            ended = full
        else:
            ended = full.ended_early(counted)
        if game.result == ended.result and len(game.history) == counted:
            return game, False
        return ended, True

    def _rounds_seen(self, frontier: tuple[int, ...]) -> int:
        """How many rounds, from the first, an event with this frontier saw scored."""
        seen = 0
        for results in self.result_events:
            if not _covers(frontier, results):
                break
            seen += 1
        return seen


def _covers(frontier: tuple[int, ...], events: tuple[tuple[int, int], ...]) -> bool:
    """Whether a frontier holds every one of these (seat, seq) events."""
    return all(frontier[seat] >= seq for seat, seq in events)
