"""The bounded memo of the codec's and the audit's caches (p2p_nertz/fifo.py)."""

from __future__ import annotations

import pytest

from p2p_nertz.fifo import Fifo


def test_fifo_keeps_the_newest_and_drops_the_oldest_first() -> None:
    memo: Fifo[int, str] = Fifo(3)
    for key in range(10):
        memo.keep(key, str(key))
        assert len(memo) == min(key + 1, 3)
    assert list(memo.items()) == [(7, "7"), (8, "8"), (9, "9")]


def test_fifo_a_key_kept_again_is_one_entry_in_its_first_place() -> None:
    # Kept twice, a key must not be dropped twice: the second drop would take a newer key.
    memo: Fifo[str, int] = Fifo(2)
    memo.keep("a", 1)
    memo.keep("a", 2)
    memo.keep("b", 3)
    assert memo == {"a": 2, "b": 3}
    memo.keep("c", 4)  # "a" is the oldest
    assert memo == {"b": 3, "c": 4}
    memo.keep("d", 5)
    memo.keep("e", 6)
    assert memo == {"d": 5, "e": 6}


def test_fifo_cleared_starts_afresh() -> None:
    memo: Fifo[str, int] = Fifo(2)
    memo.keep("a", 1)
    memo.keep("b", 2)
    memo.clear()
    memo.keep("b", 3)
    memo.keep("c", 4)
    memo.keep("d", 5)
    assert memo == {"c": 4, "d": 5}


def test_fifo_needs_room_for_one() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Fifo(0)
