"""The values a command shows and checks before it imports anything heavy (cli/parsers.py
parses every command's arguments with no bot, runtime or lobby code loaded: a mistyped argument
is refused in ~0.08 s of CPU, not ~0.4). Each is defined here once; the bots, the peer's
configuration and the lobby's beacon take theirs from here.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "BEACON_PORT",
    "BOTS_ONLY_SPEED",
    "BOT_CMD_SPEED",
    "BOT_SPEEDS",
    "DROP_AFTER",
    "LINGER",
    "PLAY_BOT_SPEED",
    "STRATEGY_NAMES",
    "SUSPECT_AFTER",
    "TABLE_BOT_SPEED",
]

STRATEGY_NAMES: Final = ("greedy", "lookahead")
"""The bots' strategies by name, sorted (each registered under its name by
:func:`p2p_nertz.bots.base.register`, which refuses any other)."""

BOT_SPEEDS: Final = range(1, 11)
"""A bot's speed levels (:class:`p2p_nertz.bots.base.Pacing`): 1, a beginner, to 10, a fast
expert (the commands' ``--speed`` takes these)."""

# The bots' default speed differs by the door they come in by, each for a reason (docs/pace.md
# has the levels measured against a person's pace; every door takes ``--speed`` or the like):

PLAY_BOT_SPEED: Final = 1
"""``nertz play --bots N``: a person's first game, alone against bots. Level 1 (24 moves a
minute) is a person's pace at the keys, so that a newcomer can win a round (docs/pace.md)."""

TABLE_BOT_SPEED: Final = 5
"""A bot added to a table of people: ``nertz host --bots N`` and the lobby's ``b`` (text and
page). Level 5 is a quick player's pace: people who gathered at a table know the game, and a
bot at full speed takes the lake before anyone has read it (before session 30 ``host --bots``
gave 10, and a newcomer following README's ``nertz host --players 3 --bots 1`` met full-speed
bots; the lobby's ``b`` gave 5)."""

BOT_CMD_SPEED: Final = TABLE_BOT_SPEED
"""``nertz bot``: a person starts one to have an opponent at a table, theirs (``nertz host``
and a bot against themselves) or another's. That is the table's bot by another door, and a
person expects what ``host --bots`` and the lobby's ``b`` give: a quick player they can follow,
not one that has played its cards before they read the deal (until session 31 it gave 10, as
a bot playing a person's seat does)."""

BOTS_ONLY_SPEED: Final = 10
"""Where no person plays at the keys: ``nertz demo`` (bots watched, or a test's game), ``nertz
node`` (a peer of a game fixed elsewhere) and ``nertz join/host/resume --bot`` (a bot playing
your seat for you, against whoever is there: it plays as well and as fast as it can). ``nertz
match`` gives 5: it plays in simulated time, where the level changes each bot's delays, not how
long the command takes."""

SUSPECT_AFTER: Final = 5.0
"""Seconds of silence before a member is suspected, by default
(:class:`p2p_nertz.protocol.peer.PeerConfig`, ``--suspect-after``)."""

DROP_AFTER: Final = 30.0
"""Seconds of silence before a member is voted out (or, one other left, abandoned), by
default (:class:`p2p_nertz.protocol.peer.PeerConfig`, ``--drop-after``)."""

BEACON_PORT: Final = 47474
"""The UDP port the lobby's discovery beacons go to unless told otherwise
(:mod:`p2p_nertz.lobby.beacon`)."""

LINGER: Final = 1.0
"""Seconds a node keeps answering once it is done, before it closes (``runtime/node.py``): its
acks of the last events let the others, and its watchers, make their end final (a member of
two that ends on the other's last event needs nothing more, and acks it only then). The
simulator plays it out for what a watcher receives (``Simulation.run``'s ``linger``)."""
