"""Counters on a rule of the core that a soak or a test wants to see fire, not guess at.

A rule that closes a rare fault is tested by hand-built folds; whether the simulator's games
ever reach it is another question, which only counting answers. :func:`count_lifted_cuts`
counts docs/protocol.md §9.2's *a withdrawal after the drop lifts no cap that decided it*
(``folds.lifted_cuts``), on the peer's side (``Folds._cut_lifted``, which the spectator
shares) and on the audit's (``audit.auditor._cut_unheld``), by wrapping the functions those
two call while the ``with`` block runs. ``rule=False`` takes the rule out instead (no cut is
ever offered), to show that a game needs it. Not for use outside tests and scripts: it
rebinds module attributes of the core for the block's length, in this process only.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from p2p_nertz.audit import auditor
from p2p_nertz.protocol import folds
from p2p_nertz.protocol.state import GameState

__all__ = ["LiftedCuts", "count_lifted_cuts"]


@dataclass(slots=True)
class LiftedCuts:
    """What the rule did while counted. ``asked``: calls of ``lifted_cuts`` (the peer's
    tentative folds and the audit's passes, each a fixed point with no cut of ``Unheld``
    left to try); ``offered``: cuts it offered; ``peer_kept``: cuts a peer's (or
    spectator's) tentative fold kept for good; ``audit_kept``: cuts an audit pass kept."""

    asked: int = 0
    offered: int = 0
    peer_kept: int = 0
    audit_kept: int = 0

    @property
    def fired(self) -> bool:
        """Whether some fold kept a cut the rule offered."""
        return self.peer_kept + self.audit_kept > 0

    def add(self, other: LiftedCuts) -> None:
        """Add ``other``'s counts to these (a soak's totals)."""
        self.asked += other.asked
        self.offered += other.offered
        self.peer_kept += other.peer_kept
        self.audit_kept += other.audit_kept


@contextmanager
def count_lifted_cuts(*, rule: bool = True) -> Iterator[LiftedCuts]:
    """Count the rule's offers and the cuts kept while the block runs (see the module
    docstring); with ``rule=False``, offer no cut at all (the rule taken out)."""
    counts = LiftedCuts()
    offer = folds.lifted_cuts
    peer_trial = folds.Folds._cut_lifted
    made = folds.cut_made  # (the audit asks it, by its own name, of a lifted cut's trial only)

    def lifted_cuts(
        fold: GameState,
        imposed: Collection[int],
        unheld: folds.Unheld | None = None,
        final: GameState | None = None,
    ) -> list[tuple[int, int]]:
        counts.asked += 1
        cuts = offer(fold, imposed, unheld, final) if rule else []
        counts.offered += len(cuts)
        return cuts

    def cut_lifted(self: folds.Folds, t: GameState, imposed: dict[int, int]) -> GameState | None:
        kept = peer_trial(self, t, imposed)
        counts.peer_kept += kept is not None
        return kept

    def audit_made(fold: GameState, seat: int, cut: int) -> bool:
        kept = made(fold, seat, cut)
        counts.audit_kept += kept
        return kept

    patches: list[tuple[object, str, object]] = [
        (folds, "lifted_cuts", lifted_cuts),
        (auditor, "lifted_cuts", lifted_cuts),
        (folds.Folds, "_cut_lifted", cut_lifted),
        (auditor, "cut_made", audit_made),
    ]
    saved = [(target, name, getattr(target, name)) for target, name, _ in patches]
    for target, name, value in patches:
        setattr(target, name, value)
    try:
        yield counts
    finally:
        for target, name, value in saved:
            setattr(target, name, value)
