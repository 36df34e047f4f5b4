"""``nertz node`` whose core tells one frontier lie on a signal (tests only; session 38).

    python tests/aimed_liar_node.py VICTIM -- PYTHON -m cli node ARGS...

Runs ``nertz node ARGS`` with its node a :class:`~p2p_nertz.testing.liar_nodes.LiarNode`
lying ``frontier_ahead`` once (``tests/test_node_held_back.py``): from the first ``SIGUSR1``
on, its next event names, in its frontier, two events of the member named ``VICTIM`` past
those it holds (the simulator's lie, aimed at that member's feed rather than a seat drawn at
random). The test sends the signal once it has killed ``VICTIM``: nobody ever signs them, so
the others hold the liar's events back from then on, its vote with them. Its silence votes
are aimed (:class:`~p2p_nertz.testing.silences.SilenceAim`; session 43): nobody before the
signal, then ``VICTIM`` alone, so its vote on ``VICTIM`` comes after its lie is armed (on the
quick timer, a loaded machine could delay the signal past the vote, and Ann took the vote,
not held back, for the drop's second) and a stall of another process draws no vote of its.
"""

from __future__ import annotations

import dataclasses
import math
import signal
import sys
from typing import Any

import cli.node_cmd
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.sim.liars import Liar, Lie
from p2p_nertz.testing.liar_nodes import LiarNode
from p2p_nertz.testing.silences import SilenceAim


class _Aimed:
    """The liar's draws, aimed: the feed to lie about is ``seat`` (a draw below the number of
    ``seats``), each other draw its least but one, and every chance taken."""

    def __init__(self, seat: int, seats: int) -> None:
        self.seat, self.seats = seat, seats

    def below(self, n: int) -> int:
        return self.seat if n == self.seats else min(1, n - 1)

    def random(self) -> float:
        return 0.0


def main() -> int:
    victim, argv = sys.argv[1], sys.argv[sys.argv.index("--") + 4 :]  # (past PYTHON -m cli)
    armed: list[Liar] = []
    aims: list[tuple[SilenceAim, int]] = []

    class _Node(LiarNode):
        def _liar_now(self) -> Liar:
            liar = dataclasses.replace(self.liar, at=math.inf)  # (until the signal)
            armed.append(liar)
            return liar

        def _make_peer(self, recovery: Any) -> Any:
            effects = super()._make_peer(recovery)
            assert self.state is not None
            names = [m.name for m in self.spec.members]
            self.state.rng = _Aimed(names.index(victim), len(names))  # type: ignore[assignment]
            aims.append((SilenceAim(self.peer._membership), names.index(victim)))
            return effects

    def node(identity: Identity, spec: GameSpec, log_path: Any, **kwargs: Any) -> LiarNode:
        seat = spec.seat_of(identity.peer_id)
        liar = Liar(seat, Lie.FRONTIER_AHEAD, at=math.inf, times=1, rate=1.0)
        return _Node(identity, spec, log_path, liar=liar, **kwargs)

    def arm(signum: int, frame: object) -> None:
        for liar in armed:
            object.__setattr__(liar, "at", 0.0)  # (a frozen value, changed on purpose)
        for silences, seat in aims:
            silences.at({seat})

    signal.signal(signal.SIGUSR1, arm)
    cli.node_cmd.PeerNode = node  # type: ignore[assignment,misc]
    from cli.main import main as nertz

    return nertz(argv)


if __name__ == "__main__":
    sys.exit(main())
