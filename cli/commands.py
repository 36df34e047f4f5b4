"""The ``nertz`` commands, each with its one line of help: the one list `nertz --help`
(cli/main.py) and the parsers (cli/parsers.py) both read."""

from __future__ import annotations

__all__ = ["COMMANDS"]

#: Every command and its one-line help, in the order ``nertz --help`` lists them. ``nertz
#: --help`` shows these without importing the commands (tests check that they match the
#: parsers the commands add).
COMMANDS: tuple[tuple[str, str], ...] = (
    (
        "demo",
        "play a bots-only game of separate processes over ZeroMQ on this machine and print "
        "the scoreboard",
    ),
    ("node", "run one bot peer of a game over ZeroMQ until the game is over"),
    ("keygen", "make your key (your identity; others see its fingerprint)"),
    ("host", "host a table: others join, then the game starts"),
    ("join", "join a table (by --peer address or --discover on the LAN) and play"),
    ("bot", "a bot peer that joins a table and plays"),
    ("games", "list the tables open on a LAN"),
    ("resume", "continue a game from its log after a crash"),
    (
        "play",
        "play at the terminal or in a browser (--web): the LAN lobby, a quick game "
        "(--bots N), or a given game",
    ),
    ("watch", "follow a live game as a spectator (members push to you with --watcher)"),
    ("audit", "verify the signed logs of a game: signatures, feeds, deal, moves, lake, scores"),
    ("replay", "step through a game from its signed logs (--text: one line per event)"),
    (
        "rules",
        "print the rules of the game (how to play, the variants, where each rule comes from)",
    ),
    ("match", "play an in-process match of bots (no network) and print the scoreboard"),
)
