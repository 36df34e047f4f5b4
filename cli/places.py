"""Where ``nertz`` keeps its files by default: the key, the key store, the games' logs.

Light (the standard library alone): the parsers show these places in their defaults and
their help (cli/parsers.py), before a command imports what reads or writes a key
(cli/keyfile.py, which re-exports them).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

__all__ = [
    "config_home",
    "default_key_path",
    "game_log_name",
    "kept_key_path",
    "on_its_own_line",
    "person_key_path",
    "self_command",
]


def config_home(kind: str, default: str) -> Path:
    """The directory of p2p-nertz's files of one kind: ``$NERTZ_HOME`` if set (all kinds in
    one), else ``$KIND/p2p-nertz`` (``XDG_CONFIG_HOME``, ``XDG_DATA_HOME``), else
    ``~/DEFAULT/p2p-nertz``."""
    override = os.environ.get("NERTZ_HOME")
    if override:
        return Path(override)
    base = os.environ.get(kind)
    return Path(base) / "p2p-nertz" if base else Path.home() / default / "p2p-nertz"


def default_key_path() -> Path:
    """Where ``nertz keygen`` writes the key unless told otherwise (``$NERTZ_HOME/key``, else
    ``$XDG_CONFIG_HOME/p2p-nertz/key``, else ``~/.config/p2p-nertz/key``)."""
    return config_home("XDG_CONFIG_HOME", ".config") / "key"


def kept_key_path(fingerprint: str) -> Path:
    """Where the key store keeps the key of this fingerprint: a bot's a command started
    (a key there, not ours, is a bot's: ``nertz resume`` names the bots it cannot start)."""
    return config_home("XDG_CONFIG_HOME", ".config") / "keys" / f"{fingerprint}.key"


def person_key_path(fingerprint: str) -> Path:
    """Where the key store keeps the key a quick game made for its person (``nertz play
    --bots``), apart from the bots' (session 36: a resume of a bot's log named the person
    among the bots not started)."""
    return config_home("XDG_CONFIG_HOME", ".config") / "keys" / "people" / f"{fingerprint}.key"


def game_log_name(game_id: bytes, fingerprint: str) -> str:
    """The name of a lobby game's log of one member in the log directory (``nertz host``,
    ``join``, ``bot``, the ``play`` lobby): the game's id (its first 16 hex digits) and the
    member's fingerprint, so one directory holds every game of every key."""
    return f"{game_id.hex()[:16]}-{fingerprint}.log"


def self_command() -> str:
    """How to run ``nertz`` again as this process was run: ``nertz`` when that is what was
    typed (the one on the PATH), its whole path when another was run (the README's
    ``.venv/bin/nertz demo``: the command a person knows, wherever they run it from), else
    this Python with ``-m cli``. The advice a command ends with (``demo``'s and ``play``'s
    "audit them: …") is written with it."""
    typed = Path(sys.argv[0])
    if typed.name == "nertz" and typed.is_file():
        found = shutil.which("nertz")  # (the shell gives the path it found as argv[0])
        if found is not None and Path(found).resolve() == typed.resolve():
            return "nertz"
        return shlex.quote(str(typed.absolute()))
    return f"{shlex.quote(sys.executable)} -m cli"


def on_its_own_line(label: str, text: str) -> str:
    """``label:`` and under it ``text``, a path or a command holding one, indented on a line
    of its own: how a command's last lines give a place ("signed log:", "audit it:"). After
    words on one line, a path wrapped at 80 columns mid-way (a newcomer's ``play`` ended
    with "... (game files in /home/ann/nertz-logs/pl" and "ay-…" on the next line); alone on
    its line, it starts at the left and is copied whole (the indent is the shell's blank).

    >>> print(on_its_own_line("audit it", "nertz audit 'a game'/*.log"))
    audit it:
      nertz audit 'a game'/*.log
    """
    return f"{label}:\n  {text}"
