"""A real-node liar game is frozen when its honest folds stand still, not when it is long
(:func:`p2p_nertz.testing.liar_nodes.play`'s watch, session 41).

On a loaded machine a liar voted out in the lobby left the honest members a game of two that
played 40 to 120 s, its folds moving all along, and the whole-game bound of 120 s called it a
freeze. The watch ends a game once no honest fold has moved for ``still`` seconds, and never a
game that moves. Stand-in nodes (the watch reads only their cores' feeds and phase) on trio's
mock clock: no sockets, no sleeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import trio
import trio.testing

from p2p_nertz.protocol.state import Phase
from p2p_nertz.runtime.node import PeerNode
from p2p_nertz.testing.liar_nodes import STILL, _watch


@dataclass
class _Core:
    """What the watch reads of a core: its feeds and its tentative phase."""

    seats: int = 2
    held: list[list[object]] = field(default_factory=lambda: [[], []])
    tentative: Any = field(default_factory=lambda: SimpleNamespace(phase=Phase.PLAY))

    @property
    def spec(self) -> Any:
        return SimpleNamespace(seats=self.seats)

    def events(self, seat: int) -> list[object]:
        return self.held[seat]


def _watched(moving: bool, seconds: float) -> tuple[bool, float]:
    """Watch two cores for ``seconds`` at most (one signing an event every 5 s if
    ``moving``): whether the watch ended the game, and when."""
    cores = [_Core(), _Core()]
    nodes = cast(list[PeerNode], [SimpleNamespace(_peer=core) for core in cores])
    progress: list[tuple[float, tuple[object, ...]]] = []

    async def main() -> tuple[bool, float]:
        start = trio.current_time()

        async def sign() -> None:
            while moving:
                await trio.sleep(5.0)
                cores[0].held[0].append(object())

        with trio.move_on_after(seconds):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(sign)
                nursery.start_soon(_watch, nodes, start, progress, STILL, nursery.cancel_scope)
            return True, trio.current_time() - start
        return False, trio.current_time() - start

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_liar_nodes_still_a_game_that_stands_still_is_frozen_after_the_bound() -> None:
    ended, at = _watched(moving=False, seconds=10 * STILL)
    assert ended
    assert STILL <= at < STILL + 2.0


def test_liar_nodes_still_a_long_game_that_moves_is_never_frozen() -> None:
    ended, at = _watched(moving=True, seconds=10 * STILL)
    assert not ended
    assert at == 10 * STILL
