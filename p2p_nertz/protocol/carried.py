"""The carried part of a ``drop`` as a decoded body holds it (:class:`Carried`): left
interpreted.

This module is not compiled with the core (mypyc refuses a subclass of ``tuple``: "Inheriting
from most builtin types is unimplemented"), so that ``protocol/envelope.py``, which
re-exports :class:`Carried`, and every other module of ``protocol/`` can be
(docs/latency.md, session 42).
"""

from __future__ import annotations

__all__ = ["Carried"]


class Carried(tuple):  # type: ignore[type-arg]
    """An array a ``drop`` carries beside its signed payload (:mod:`~p2p_nertz.protocol.envelope`'s
    docstring, *the carried part*): in a body given to
    :func:`~p2p_nertz.protocol.envelope.encode_message`, its last element, which is signed as
    its digest; in a decoded body, the same place. A tuple, told from an array signed inline
    by its type."""

    __slots__ = ()
