"""One process per player and game on a machine: a lock named by the game and the player's key.

Two processes playing as one player in one game (the same key, two logs: a second terminal, a
``nertz node`` started again while the first still runs, ``nertz resume`` of a copy of the
log) each sign their own events under the same seqs. Every other member holds both versions:
proof that the player forked its feed (docs/protocol.md §9.4). The honest, confused person is
dropped as a cheater and the audit says *equivocation* (session 28: a second node of seat 1
started after the table's fifth card, on 127.0.0.1, 3 players). The log's own lock
(:mod:`p2p_nertz.logfile.store`, "One writer") stops a second process on the *same* log file
only. So a node takes this lock before it connects or opens its log, and a second process of
the same player and game on the machine is refused at once, having signed and sent nothing.

The lock is an abstract Unix socket (Linux): bound, its name is the lock; it is freed when the
process ends, killed or not, and leaves no file behind. Its names are per network namespace,
which is what "a machine" is for the peers (a lab of namespaces is a LAN of machines). Elsewhere
it is an exclusive ``flock`` on a file in the temporary directory (freed at the process's end
too). Two machines are not covered: nothing local can see the other one (docs/protocol.md §9.6,
"Two processes of one player").

The name is made from a signature of the player's key over the game's id (deterministic,
never sent): only the key's holder can compute it. A name made from public values alone (the
game's id and the player's public key, both in every log and beacon) could be bound first by
any other user of the machine, who would then keep the player out of its own game.

A harness that runs many games of the same keys and game at once on one machine (a test suite
on several workers) gives each its own scope: :data:`SCOPE_ENV` in the environment of each
game's processes, a word that goes into the lock's name.
"""

from __future__ import annotations

import errno
import hashlib
import os
import socket
import sys
import tempfile
from pathlib import Path

from p2p_nertz.protocol.identity import Identity

if sys.platform != "win32":
    import fcntl

__all__ = ["SCOPE_ENV", "PlayerLock", "lock_name"]

SCOPE_ENV = "NERTZ_LOCK_SCOPE"
"""The environment variable whose value scopes the lock (unset: the machine)."""


LOCK_WORD = b"p2p-nertz player lock v1\0"
"""What the player's key signs to name its lock (no protocol message starts so)."""


def lock_name(game_id: bytes, identity: Identity, scope: str = "") -> str:
    """The lock's name for ``identity`` in game ``game_id`` within ``scope`` (short: abstract
    socket names are limited to 107 bytes). It needs the secret key: nobody else can name it.

    >>> ann, bob = Identity.from_bytes(bytes(32)), Identity.from_bytes(bytes([1]) * 32)
    >>> lock_name(b"game", ann) == lock_name(b"game", ann) != lock_name(b"game", bob)
    True
    >>> lock_name(b"game", ann) != lock_name(b"game2", ann)
    True
    >>> len(lock_name(b"game", ann))
    49
    """
    hashed = hashlib.sha256(identity.sign(LOCK_WORD + game_id))
    hashed.update(scope.encode("utf-8", "surrogateescape"))
    digest = hashed.hexdigest()
    return f"p2p-nertz-player-{digest[:32]}"


class PlayerLock:
    """The lock of one player in one game on this machine; taken by :meth:`acquire`.

    Args:
        game_id: the game's id.
        identity: the player's key (its secret names the lock).
        who: how an error names the player ("P2 (seat 1)").
    """

    def __init__(self, game_id: bytes, identity: Identity, who: str) -> None:
        self.name = lock_name(game_id, identity, os.environ.get(SCOPE_ENV, ""))
        self.who = who
        self._sock: socket.socket | None = None
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this process holds the lock."""
        return self._sock is not None or self._fd is not None

    def acquire(self) -> None:
        """Take the lock (idempotent).

        Raises:
            BlockingIOError: another process on this machine plays this player in this game
                (the message says so in words, and what to do).
        """
        if self.held:
            return
        if sys.platform.startswith("linux"):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.bind("\0" + self.name)
            except OSError as exc:
                sock.close()
                if exc.errno != errno.EADDRINUSE:
                    raise
                raise self._taken() from None
            self._sock = sock
            return
        if sys.platform == "win32":  # (no flock: the log's own lock is all there is)
            return
        path = Path(tempfile.gettempdir()) / f".{self.name}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise self._taken() from None
        self._fd = fd

    def _taken(self) -> BlockingIOError:
        return BlockingIOError(
            errno.EWOULDBLOCK,
            f"another process on this machine is already playing as {self.who} in this game. "
            "Two processes of one player sign two different events under one number, which "
            "every other member takes as proof of cheating: this one stopped before signing "
            "anything. Let the other play on (once it has ended, resume from its log)",
        )

    def release(self) -> None:
        """Give the lock up (idempotent)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
