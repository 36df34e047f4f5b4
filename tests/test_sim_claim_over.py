"""A claim on the feed of a member whose game is over no longer stops the table (docs/protocol.md
§9.2, session 39; two liars at five players, seed 3).

A liar's beats announce holding the feed of the first honest member whose final fold is over,
one event past its last (its result), while another honest member is not over yet. §7.1 caps
the member's term at its last event held at every other peer while the claim stands, so the
honest members not over cannot make their own results final; they vote the liar out
*withheld* (it owes those events), but the member over, which judged nothing more, never did:
at three and four players with one liar its vote is the one the majority lacks, and the table
waited for good. Now it votes too, and the game ends with no honest member dropped.
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.sim import liar_games
from p2p_nertz.sim.invariants import check
from p2p_nertz.sim.liar_games import check_liars, game, marks
from p2p_nertz.sim.liars import Lie
from tests.claim_over_helpers import claim_past_result

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)


class _ClaimOver(liar_games._Simulation):
    """The liar (told nothing by its own lie) acks the result of the first honest member whose
    result it holds, then claims in each beat that member's feed one event past it
    (:func:`claim_over_helpers.claim_past_result`)."""

    told: list[int]  # (the member claimed, at each lying beat)

    def _cheat(self, seat: int, peer: Peer | None, *, restarted: bool = False) -> None:
        super()._cheat(seat, peer, restarted=restarted)
        if peer is None or seat != self.liars[0].seat:
            return
        self.told = []
        claim_past_result(peer, self.told)


@pytest.mark.parametrize(("players", "seed"), [(3, 6), (4, 2)])
def test_claim_over_the_member_over_votes_the_game_ends(players: int, seed: int) -> None:
    config, liars = game(seed, players=(players, players), lies=(Lie.BEAT_AHEAD,))
    liars = tuple(dataclasses.replace(liar, times=0) for liar in liars)
    faults = dataclasses.replace(config.faults, deck_cheats=marks(liars))
    sim = _ClaimOver(dataclasses.replace(config, faults=faults), liars)
    result = sim.run()
    if not sim.told:
        pytest.fail("the claim is no longer made (every honest member over at once)")
    assert check(result) + check_liars(result) == []
    assert result.finished
    # The member claimed voted the liar out after its own result: the vote the others lacked.
    claimed, liar = sim.told[0], liars[0].seat
    peer = result.peers[claimed]
    assert peer is not None
    own = peer.events(claimed)
    ended = max(i for i, e in enumerate(own) if e.kind is Kind.RESULT)
    votes = [parse_body(e.kind, e.body, players) for e in own[ended + 1 :] if e.kind is Kind.DROP]
    assert [(v.seat, v.reason) for v in votes if isinstance(v, Drop)] == [
        (liar, DropReason.WITHHELD)
    ]
    assert liar in peer.final.dropped
