"""A simulation watched: a spectator of every member, held to where the honest members end.

A member started with ``--watcher`` pushes its watchers every event it logs and every message
it sends to all (:func:`~p2p_nertz.sim.network.pushed`). :class:`Watched` feeds a
:class:`~p2p_nertz.protocol.spectator.Spectator` exactly that, as each member's effects are
carried out, at their time (where asked: it costs ~30% more CPU a game, a fold of every event).
:meth:`Watched.watched_end` then plays the nodes' linger (:data:`~p2p_nertz.defaults.LINGER`:
a member left alone at the end acks the last events only then, session 40) once the other
checks have read the peers at the end, and holds the watcher to
:func:`~p2p_nertz.sim.invariants.watcher_ends` (session 41). The liar fuzzer always asks
(``scripts/soak.py --liars``), the other mixes with ``--watch``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2p_nertz.defaults import LINGER
from p2p_nertz.protocol.spectator import Spectator
from p2p_nertz.sim.invariants import check, settled, watcher_ends
from p2p_nertz.sim.network import SimConfig, Simulation, pushed

if TYPE_CHECKING:
    from p2p_nertz.protocol.peer import Effect
    from p2p_nertz.sim.network import Schedule, SimResult

__all__ = ["Watched", "run"]


class Watched(Simulation):
    """A simulation with, if ``watch``, a watcher of every member (the module docstring)."""

    def __init__(
        self, config: SimConfig, schedule: Schedule | None = None, *, watch: bool = False
    ) -> None:
        self.watcher: Spectator | None = None  # (effects may be carried out while built)
        super().__init__(config, schedule)
        if watch:
            self.watcher = Spectator(self.spec)

    def _apply(self, seat: int, effects: list[Effect], now: float, cut: int | None = None) -> bool:
        alive = super()._apply(seat, effects, now, cut)
        if self.watcher is None:
            return alive
        for effect in effects if cut is None else effects[:cut]:
            wire = pushed(effect)
            if wire is not None:
                self.watcher.feed(wire, now)
        return alive

    def watched_end(self, result: SimResult) -> list[str]:
        """After :meth:`run` and the checks that read its peers: the nodes' linger played,
        what the watcher's end breaks of :func:`watcher_ends` (nothing if not watched)."""
        if self.watcher is None:
            return []
        ends = [final.digest() for final in settled(result)]
        self.play_on(result.time + LINGER)
        return watcher_ends(self.watcher.final, ends)


def run(config: SimConfig, *, watch: bool = False) -> SimResult:
    """:func:`~p2p_nertz.sim.network.run` with, if ``watch``, the watcher's check too."""
    sim = Watched(config, watch=watch)
    result = sim.run()
    result.violations = check(result) + sim.watched_end(result)
    return result
