"""A bounded memo that forgets its oldest entry first, at a constant cost per entry.

The way such memos were written here, ``del memo[next(iter(memo))]`` before each insert once
full, costs more with every insert: a dict keeps its deleted entries' slots at the front of its
table until it grows again, and a fresh iterator walks over every one of them. A full memo of
16,384 entries took ~3.6 µs an insert this way in the steady state (docs/latency.md, session
26). :class:`Fifo` keeps the order of its keys beside the dict instead, from the moment it is
first full: a lookup is a dict's, an insert once full drops the oldest key in O(1).

Pure: no I/O. What it keeps is what a memo may keep: losing an entry costs the work again,
never a different answer.
"""

from __future__ import annotations

from collections import deque
from typing import TypeVar

__all__ = ["Fifo"]

_Key = TypeVar("_Key")
_Value = TypeVar("_Value")


class Fifo(dict[_Key, _Value]):
    """A dict of at most ``size`` keys: :meth:`keep` drops the oldest first (the first kept).

    Read it as a dict (``in``, ``get``, ``[]``, ``len``); add to it only with :meth:`keep`, and
    empty it with :meth:`clear` (other changes would leave its order behind).

    >>> memo = Fifo(2)
    >>> for key in "abc":
    ...     memo.keep(key, key.upper())
    >>> memo
    {'b': 'B', 'c': 'C'}
    >>> memo.keep("b", "b")  # a key kept again keeps its place in the order
    >>> memo.keep("d", "D")
    >>> memo
    {'c': 'C', 'd': 'D'}

    Raises:
        ValueError: ``size`` is below 1.
    """

    __slots__ = ("_order", "size")

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a memo keeps at least one entry, not {size}")
        super().__init__()
        self.size = size
        self._order: deque[_Key] = deque()

    def keep(self, key: _Key, value: _Value) -> None:
        """Remember ``value`` for ``key``, forgetting the oldest key if that makes one too
        many."""
        held = len(self)
        self[key] = value
        if held >= self.size and len(self) > held:  # (full, and a new key: one lookup)
            order = self._order
            if order:
                order.append(key)
            else:
                # First full: the order is the dict's own, the new key last. Until then it
                # is not kept at all (a memo that never fills pays nothing for it).
                order.extend(self)
            del self[order.popleft()]

    def clear(self) -> None:
        """Forget everything."""
        super().clear()
        self._order.clear()
