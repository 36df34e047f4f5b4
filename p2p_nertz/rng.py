"""A small seeded random number generator (SplitMix64) for bots, pacing and the match.

The rules engine and the protocol core never touch global randomness (DESIGN.md §1): whatever
needs chance takes one of these, built from a seed that was passed in. SplitMix64 is tiny,
fast in pure Python, and gives the same stream on every platform and Python version.

>>> a, b = Rng(7), Rng(7)
>>> [a.below(100) for _ in range(5)] == [b.below(100) for _ in range(5)]
True
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableSequence, Sequence
from typing import TypeVar

__all__ = ["Rng", "derive_seed"]

_MASK = (1 << 64) - 1
_T = TypeVar("_T")


def derive_seed(*parts: bytes | str | int) -> bytes:
    """A 32-byte seed derived from labelled parts: ``derive_seed(b"match", 7, "round", 2)``."""
    h = hashlib.sha256(b"p2p-nertz/seed")
    for part in parts:
        raw = part if isinstance(part, bytes) else str(part).encode()
        h.update(len(raw).to_bytes(4, "big") + raw)
    return h.digest()


class Rng:
    """SplitMix64: a deterministic stream of 64-bit integers from a seed."""

    __slots__ = ("_state",)

    def __init__(self, seed: int | bytes | str) -> None:
        if not isinstance(seed, int):
            seed = int.from_bytes(derive_seed(seed)[:8], "big")
        self._state = seed & _MASK

    def next64(self) -> int:
        """The next 64-bit value."""
        self._state = z = (self._state + 0x9E3779B97F4A7C15) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, bound: int) -> int:
        """A uniform integer in ``[0, bound)``."""
        if bound <= 0:
            raise ValueError(f"bound must be positive, not {bound}")
        limit = (1 << 64) - (1 << 64) % bound
        while True:
            value = self.next64()
            if value < limit:
                return value % bound

    def between(self, low: int, high: int) -> int:
        """A uniform integer in ``[low, high]``."""
        return low + self.below(high - low + 1)

    def random(self) -> float:
        """A float in ``[0, 1)``."""
        return (self.next64() >> 11) / (1 << 53)

    def choice(self, items: Sequence[_T]) -> _T:
        """One item, uniformly."""
        return items[self.below(len(items))]

    def shuffle(self, items: MutableSequence[_T]) -> None:
        """Shuffle in place (Fisher–Yates)."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def fork(self, label: str | int) -> Rng:
        """An independent stream derived from this one's next value and a label."""
        return Rng(derive_seed(self.next64(), label))
