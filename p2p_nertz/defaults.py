"""The values a command shows and checks before it imports anything heavy (cli/parsers.py
parses every command's arguments with no bot, runtime or lobby code loaded: a mistyped argument
is refused in ~0.08 s of CPU, not ~0.4). Each is defined here once; the bots, the peer's
configuration and the lobby's beacon take theirs from here.
"""

from __future__ import annotations

from typing import Final

__all__ = ["BEACON_PORT", "BOT_SPEEDS", "DROP_AFTER", "STRATEGY_NAMES", "SUSPECT_AFTER"]

STRATEGY_NAMES: Final = ("greedy", "lookahead")
"""The bots' strategies by name, sorted (each registered under its name by
:func:`p2p_nertz.bots.base.register`, which refuses any other)."""

BOT_SPEEDS: Final = range(1, 11)
"""A bot's speed levels (:class:`p2p_nertz.bots.base.Pacing`): 1, a beginner, to 10, a fast
expert (the commands' ``--speed`` takes these)."""

SUSPECT_AFTER: Final = 5.0
"""Seconds of silence before a member is suspected, by default
(:class:`p2p_nertz.protocol.peer.PeerConfig`, ``--suspect-after``)."""

DROP_AFTER: Final = 30.0
"""Seconds of silence before a member is voted out (or, one other left, abandoned), by
default (:class:`p2p_nertz.protocol.peer.PeerConfig`, ``--drop-after``)."""

BEACON_PORT: Final = 47474
"""The UDP port the lobby's discovery beacons go to unless told otherwise
(:mod:`p2p_nertz.lobby.beacon`)."""
