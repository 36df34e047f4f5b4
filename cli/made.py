"""What a command made for a game before it refused, taken back: a refusal changes nothing.

``nertz demo`` and ``nertz play --bots`` make the game's directory (``--dir``, or
``nertz-logs/KIND-<id>``), write its spec there and start their bots, whose files go there
too, before the game begins. A refusal in that time (a full disk refusing the spec or a log,
a bot that cannot start) left the directory behind, empty or holding a spec no game was
played with (session 43: a refused ``demo --dir`` on a full disk). :class:`Made` notes, before
anything is made, what was there; :meth:`Made.take_back` removes what this run added.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Made"]


@dataclass(frozen=True, slots=True)
class Made:
    """The game directory ``workdir`` as a command found it: ``top``, the outermost directory
    on its way that was not there (``workdir`` itself, a parent of it, or ``None``: it was
    there), and the entries ``workdir`` already held."""

    workdir: Path
    top: Path | None
    there_before: frozenset[Path]

    @classmethod
    def before_making(cls, workdir: Path) -> Made:
        """Note what is there of ``workdir`` before it is made."""
        top = None
        for path in (workdir, *workdir.parents):
            if path.exists() or path == path.parent or path == Path():
                break
            top = path
        there = frozenset(workdir.iterdir()) if top is None and workdir.is_dir() else frozenset()
        return cls(workdir, top, there)

    def made_only(self, workdir: Path) -> Made:
        """The same, for ``workdir`` made whole by this run (a fresh ``KIND-<id>-N``, whose
        ``mkdir`` refuses one that is there): everything in it is this run's."""
        return Made(workdir, self.top or workdir, frozenset())

    def take_back(self) -> None:
        """Remove what this run made: ``workdir`` and the directories on its way it created
        (each only if empty then: another run may have made its own game beside this one's),
        or, ``workdir`` having been there, the entries it did not hold. Best effort: what
        cannot be removed stays (the refusal's own line says what went wrong)."""
        if not self.workdir.is_dir():
            return
        if self.top is None:
            for entry in self.workdir.iterdir():
                if entry not in self.there_before:
                    _remove(entry)
            return
        _remove(self.workdir)
        if self.top == self.workdir:
            return
        for parent in self.workdir.parents:
            try:
                os.rmdir(parent)
            except OSError:
                return
            if parent == self.top:
                return


def _remove(path: Path) -> None:
    """Remove the file or the directory tree ``path``, whatever is left of it."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()
