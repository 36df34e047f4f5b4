"""When an honest member passes on the behalf of a player who plays nothing (docs/protocol.md
§8.7, *a pass on a member's behalf*; RULES.md: a player who plays nothing).

The rule is the table's (:meth:`Table.play <p2p_nertz.rules.Table.play>`, ``P@<seat>``): such a
pass counts only while every other active seat is stuck, and makes that seat stuck until it
plays a card. The fold cannot read a clock, so *when* to sign one is each member's choice, and
this is an honest member's: once its final fold has shown every active seat stuck but one
other, S, with S playing no card (one leaving its Nerts pile or waste, or kept in the lake),
for ``phase_timeout`` of its own clock, it signs ``P@S``, if its tentative fold agrees that the
pass would count now (again ``phase_timeout`` later only if that one did not count: a race). A
card of S's, or any seat unstuck, starts the wait again.

A liar whose own fold refused its deal never moves (§13: *a member that never passes*), and a
client may turn its stock for ever, legally: both held the round open for good before, with
every other member stuck. Nothing here is signed by a member that left or is out of play.

In turn-based play (session 33) the wait is for a turn: once our final fold has shown the
same turn of another seat S, with no move made since, for ``phase_timeout``, we pass S's turn
(the table's rule, ``rules.table._pass_turn_for``: S's turns are then skipped until it passes
itself). A member that never moves there, connected and beating, held the table for good.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from p2p_nertz.errors import IllegalMoveError
from p2p_nertz.protocol.bodies import Play
from p2p_nertz.protocol.fold_values import Phase
from p2p_nertz.rules import Move, MoveKind

if TYPE_CHECKING:
    from p2p_nertz.protocol.folds import Folds
    from p2p_nertz.protocol.membership import SilenceTimers
    from p2p_nertz.rules import Table

__all__ = ["PassWatch", "idle_seat"]

_Entry = tuple[int, Move, object, object, bool]
"""A round log's entry (``RoundState.log``): the seat, its move, and what the move showed."""


def idle_seat(table: Table, seat: int) -> int | None:
    """The one active seat other than ``seat`` that is not stuck, when every other active seat
    is (``seat`` among them, by its own pass): the seat a pass of ``seat``'s on its behalf
    would count for (``None`` if there is none). In turn-based play: the seat whose turn it
    is, if another."""
    if table.over or not table.active[seat] or seat in table.passed_for:
        return None
    if table.rules.turn_based:
        turn = table.turn
        return None if turn == seat or turn in table.passed_for else turn
    loose = [s for s, a in enumerate(table.active) if a and not table.stuck[s]]
    if len(loose) != 1 or loose[0] == seat:
        return None
    return loose[0]


def _wait_key(folds: Folds, seat: int) -> tuple[int, int, int, int, int] | None:
    """What :class:`PassWatch` waits on in our final fold (its ``key``): the round, the seat
    ``seat`` could pass for, and that seat's cards a card played changes; ``None``: none."""
    final = folds.final
    table = final.round.table
    if final.phase is not Phase.PLAY or table is None or seat in final.dropped:
        return None
    idle = idle_seat(table, seat)
    if idle is None:
        return None
    return (final.round.number, idle, *_played(table, idle, final.round.log))


def _played(table: Table, seat: int, log: Sequence[_Entry | None]) -> tuple[int, int, int]:
    """What a card ``seat`` plays changes: its Nerts pile, its stock and waste together, its
    cards in the lake (a stock turn or a rotation changes none). In turn-based play, the
    moves of the round's ``log`` instead (any but a Nerts call, a shout): any passes the turn."""
    if table.rules.turn_based:
        return sum(1 for e in log if e is not None and e[1].kind is not MoveKind.CALL), 0, 0
    t = table.tableaux[seat]
    lake = sum(1 for c in table.lake.cards() if c.owner == seat)
    return len(t.nerts), len(t.stock) + len(t.waste), lake


@dataclass(slots=True)
class PassWatch:
    """How long a seat has played nothing with everyone else stuck, in our final fold.

    Attributes:
        key: the round, the idle seat, and its cards that a card played changes (its Nerts
            pile, its stock and waste together, its cards in the lake); ``None``: no wait.
        since: when the wait for ``key`` began (our clock).
        signed: when we passed for it at ``key``, if we did: once more only another
            ``phase_timeout`` later, if that one did not count (a race, §8.5) and nothing
            else changed.
    """

    key: tuple[int, int, int, int, int] | None = None
    since: float = 0.0
    signed: float | None = None

    def due(
        self, now: float, seat: int, folds: Folds, timers: SilenceTimers, left: bool
    ) -> tuple[Play, ...]:
        """The pass to sign now on another seat's behalf, if one is due (module docstring), as
        ``seat`` with ``folds``, its frontier left to the signer; none once we ``left``."""
        if left:
            return ()
        found = self._due(now, folds, seat, timers.phase_timeout)
        return () if found is None else (found,)

    def wait(self, now: float, folds: Folds, seat: int, timeout: float) -> tuple[int, float] | None:
        """The seat that plays nothing, which ``seat`` could pass for (``P@S``) in our final
        fold, and the seconds until :meth:`due` may sign it (0: now; a person's table asks
        before it sends a typed ``P@S``, which the rules engine alone would take at once);
        ``None``: no seat to pass for now (the rules engine says why)."""
        key = _wait_key(folds, seat)
        if key is None:
            return None
        since = self.since if key == self.key else now  # (a new wait starts at the next tick)
        return key[1], max(0.0, since + timeout - now)

    def _due(self, now: float, folds: Folds, seat: int, timeout: float) -> Play | None:
        key = _wait_key(folds, seat)
        if key is None:
            self.key = None
            return None
        idle = key[1]
        if key != self.key:
            self.key, self.since, self.signed = key, now, None
            return None
        if now < (self.since if self.signed is None else self.signed) + timeout:
            return None
        # Our tentative fold holds more than the final one: the pass must count there too.
        # (Read only now: it is made again after any input that changed what we hold.)
        tentative = folds.tentative
        shown = tentative.round.table
        if tentative.round.number != key[0] or shown is None or idle_seat(shown, seat) != idle:
            return None
        if _played(shown, idle, tentative.round.log) != key[2:]:
            return None  # (it played a card, or moved on its turn, that is not final yet)
        move = Move.pass_for(idle)
        try:
            shown.play(seat, move, shown.clock)
        except IllegalMoveError:
            return None
        self.signed = now
        return Play((), key[0], move)
