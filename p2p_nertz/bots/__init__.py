"""Bots: strategies that play Nertz, the pacing that makes them play like people, and the
driver that plays one through its peer core (for the node and the simulator alike).

>>> sorted(STRATEGIES)[:1]
['greedy']
"""

from __future__ import annotations

from p2p_nertz.bots import greedy as _greedy  # noqa: F401  (registers "greedy")
from p2p_nertz.bots import lookahead as _lookahead  # noqa: F401  (registers "lookahead")
from p2p_nertz.bots.base import (
    STRATEGIES,
    Pacing,
    Strategy,
    keeps_pace,
    make_strategy,
    register,
)
from p2p_nertz.bots.driver import BotDriver

__all__ = [
    "STRATEGIES",
    "BotDriver",
    "Pacing",
    "Strategy",
    "keeps_pace",
    "make_strategy",
    "register",
]
