"""An honest member held back by a liar's gap is not voted out for the phase event it cannot give
(docs/protocol.md §9.2, *nobody is blamed for a debt of another's*, session 39; two liars at
five players, seed 158).

The liar withholds its result from everybody (its later beats announce a head nobody holds)
and, from its reveal on, its beats from one honest member X: X's final fold stays on the
liar's term short of the result phase, while the others, whose term on the liar its beats
raised, sign their results and wait for X's and the liar's. On main 718e657a the others voted
X out *withheld* with the liar at the phase's timeout (an honest member dropped: four
players), or the table waited for good (three and five). Now the liar's debt (its feed past
the head it announced) excuses X's result until it is settled: the liar is voted out, X
makes its drop final, signs its result, and the game ends with no honest member dropped.
"""

from __future__ import annotations

import dataclasses

import msgpack  # type: ignore[import-untyped]
import pytest

from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.sim import liar_games
from p2p_nertz.sim.invariants import check
from p2p_nertz.sim.liar_games import check_liars, game, marks
from p2p_nertz.sim.liars import Liar, Lie
from p2p_nertz.sim.network import SimConfig

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)


class _HeldBack(liar_games._Simulation):
    """The first liar (its own lie told never) withholds its result from every member, and
    its beats and acks from member ``x`` once it has sent its reveal."""

    def __init__(self, config: SimConfig, liars: tuple[Liar, ...], x: int) -> None:
        self.x, self.revealed = x, False
        self.withheld = 0  # (beats and acks kept from x)
        super().__init__(config, liars)

    def _push(self, at: float, kind: int, seat: int, data: bytes = b"") -> None:
        if kind == self.MESSAGE and data:
            payload = msgpack.unpackb(msgpack.unpackb(data)[0])  # (the sim's own peers' bytes)
            if bytes(payload[2]) == self.spec.peer_ids[self.liars[0].seat]:
                sent = Kind(payload[6])
                self.revealed = self.revealed or sent is Kind.REVEAL
                if sent is Kind.RESULT:
                    return
                if self.revealed and seat == self.x and sent in (Kind.BEAT, Kind.ACK):
                    self.withheld += 1
                    return
        super()._push(at, kind, seat, data)


@pytest.mark.parametrize(("players", "seed"), [(3, 0), (4, 0), (5, 0)])
def test_held_back_result_the_honest_member_held_back_is_not_dropped(
    players: int, seed: int
) -> None:
    config, liars = game(seed, players=(players, players), lies=(Lie.BEAT_AHEAD,))
    liars = tuple(dataclasses.replace(liar, times=0) for liar in liars)
    faults = dataclasses.replace(config.faults, deck_cheats=marks(liars))
    liar = liars[0].seat
    sim = _HeldBack(dataclasses.replace(config, faults=faults), liars, (liar + 1) % players)
    result = sim.run()
    if not sim.withheld:
        pytest.fail("no beat of the liar's was kept from the member")
    assert check(result) + check_liars(result) == []
    assert result.finished
    for peer in result.peers:
        if peer is not None and peer.seat != liar:
            assert list(peer.final.dropped) == [liar]
