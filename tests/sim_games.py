"""Simulated games the shuffle's tests share: the dealerless deal (``Deal.SHUFFLE``) with the
quick timers, at a seed whose game is short at its table size, under given faults."""

from __future__ import annotations

from p2p_nertz.audit import AuditReport
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, SimConfig, SimResult, run

SHORT_SEEDS = {2: 1, 3: 3, 4: 5}
"""A seed per table size whose games are short (CPU: 1 to 3 s a game at three and four)."""


def shuffled_game(
    players: int, faults: Faults, *, seed: int | None = None, rounds: int = 1
) -> tuple[SimResult, AuditReport]:
    """A shuffled game of ``players`` (at ``SHORT_SEEDS``' seed unless ``seed``), ``rounds``
    rounds, no target, under ``faults``; its result and the invariants' audit of every log."""
    result = run(
        SimConfig(
            players=players,
            seed=SHORT_SEEDS[players] if seed is None else seed,
            deal=Deal.SHUFFLE,
            rules=Rules(target=None, rounds=rounds),
            peer=QUICK_TIMERS,
            faults=faults,
            max_time=200.0,
        )
    )
    assert result.audit is not None  # (the invariants' audit of every log)
    return result, result.audit
