"""The pair terms of the stability bound, one a feed (:meth:`Finality._pair_terms`), are the
walk pair by pair's: the same least term and the same holder.

A feed's times do not decrease along it, so of the pairs on one feed the member holding the
least gives the least term; the holder named is the first pair the walk (members, then feeds,
in order; strictly below) would keep, ties across feeds included (Lamport times of different
authors are often equal). Whatever the feeds, what each member holds, the members left and the
bound given.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from hypothesis import given
from hypothesis import strategies as hs

from p2p_nertz.protocol.finality import Finality


def _walk(
    finality: Finality, members: list[int], bound: int, holder: tuple[int, int] | None
) -> tuple[int, tuple[int, int] | None]:
    """The slow twin: every pair of members, in order."""
    feeds = cast(Any, finality)._feeds
    for r in members:
        if r == finality.seat:
            continue
        for q in members:
            h = finality.held_by[r][q]
            if h < len(feeds[q]):
                term = feeds[q][h].lamport - 1
                if term < bound:
                    bound, holder = term, (r, q)
    return bound, holder


@hs.composite
def _view(draw: hs.DrawFn) -> tuple[Finality, list[int], int, tuple[int, int] | None]:
    n = draw(hs.integers(1, 6))
    seat = draw(hs.integers(-1, n - 1))  # (-1: a spectator's view, NO_SEAT)
    feeds = []
    for _ in range(n):
        # Times that do not decrease along a feed, few values: ties within and across feeds.
        steps = draw(hs.lists(hs.integers(0, 2), max_size=6))
        times = [1 + sum(steps[: i + 1]) for i in range(len(steps))]
        feeds.append([SimpleNamespace(lamport=t) for t in times])
    finality = Finality(seat, cast(Any, feeds))
    finality.held_by = [
        tuple(draw(hs.integers(0, len(feeds[q]) + 1)) for q in range(n)) for _ in range(n)
    ]
    members = sorted(draw(hs.sets(hs.integers(0, n - 1))))
    bound = draw(hs.integers(0, 14))
    holder = draw(hs.none() | hs.just((-1, 0)))
    return finality, members, bound, holder


@given(_view())
def test_pair_terms_one_a_feed_are_the_walks(
    view: tuple[Finality, list[int], int, tuple[int, int] | None],
) -> None:
    finality, members, bound, holder = view
    assert finality._pair_terms(members, bound, holder) == _walk(finality, members, bound, holder)


def test_pair_terms_name_the_first_pair_of_equal_terms() -> None:
    feeds = [[SimpleNamespace(lamport=t) for t in times] for times in ([3, 5], [2, 5], [5, 6])]
    finality = Finality(0, cast(Any, feeds))
    finality.held_by = [(2, 2, 2), (2, 2, 0), (1, 1, 2)]
    # Seat 1 holds none of feed 2 (term 4); seat 2 holds 1 of feeds 0 and 1 (term 4 each):
    # the walk, members first, keeps seat 1's, though its feed comes later.
    assert finality._pair_terms([0, 1, 2], 10, None) == (4, (1, 2))
    assert finality._pair_terms([0, 2], 10, None) == (4, (2, 0))  # (without seat 1)
    assert finality._pair_terms([0, 1, 2], 4, (-1, 0)) == (4, (-1, 0))  # (none below: kept)
