"""A base for the mutable values whose copies skip ``__init__`` (:class:`Blank`).

The fold and its parts (``GameState``, ``Roster``, ``CountedIds``, ``Abandonment``) and the
lake are copied at every input or claim: each copy makes its instance with ``Cls.__new__(Cls)``,
no ``__init__`` run (that would build every attribute only to replace it), and sets each
attribute by name (tests/test_copies.py checks each list against its class). Interpreted,
``object.__new__`` does that for any class; compiled with mypyc, a class without a ``__new__``
of its own runs ``__init__`` in it ("missing required argument"), and ``object.__new__`` of a
compiled class is refused. A ``__new__`` of their own, here once, serves both builds
(docs/latency.md, session 42).

>>> class Pair(Blank):
...     def __init__(self, a: int) -> None:
...         self.a = a
>>> hasattr(Pair.__new__(Pair), "a"), Pair(1).a
(False, 1)
"""

from __future__ import annotations

from typing import Self

__all__ = ["Blank"]


class Blank:
    """A class whose ``Cls.__new__(Cls)`` is a blank instance, on both builds (module
    docstring). ``Cls(...)`` runs ``__init__`` as usual."""

    __slots__ = ()

    def __new__(cls, *args: object, **kwargs: object) -> Self:
        return super().__new__(cls)
