"""The deterministic network simulator: N peer cores, bots, faults, and the invariants of
DESIGN.md §8 checked after every run."""

from __future__ import annotations

from p2p_nertz.sim.cheats import DeckCheat, DeckCheatKind
from p2p_nertz.sim.invariants import audit_alone, audit_logs, audit_result, check
from p2p_nertz.sim.network import (
    QUICK_TIMERS,
    Crash,
    Equivocation,
    Faults,
    Freeze,
    Partition,
    SimConfig,
    SimResult,
    Simulation,
    run,
)

__all__ = [
    "Crash",
    "DeckCheat",
    "DeckCheatKind",
    "Equivocation",
    "Faults",
    "Freeze",
    "Partition",
    "QUICK_TIMERS",
    "SimConfig",
    "SimResult",
    "Simulation",
    "audit_alone",
    "audit_logs",
    "audit_result",
    "check",
    "run",
]
