"""A real node whose game is over stays while it owes the table a vote, and no longer
(docs/protocol.md §9.2, session 40).

Session 39 made a member whose game is over still vote out *withheld*, after ``phase_timeout``,
a member that claims its own feed past its head (two liars at five players, seed 3: that vote
was the one the majority lacked; ``tests/test_sim_claim_over.py``). The simulator never stops
a peer; a real node stopped once its game was over and its last event final
(``runtime/node.py``'s ending), before ``phase_timeout``: the vote never came, the other
honest members, capped on its feed, never ended, and once it fell silent they voted it out
*silent* (an honest member dropped). Now the node stays while :meth:`Peer.judging` says it
owes that vote, then waits for the others to hold it as for any last event.

Real :class:`~p2p_nertz.runtime.node.PeerNode` on tcp://127.0.0.1 in one trio run, each with
its own log file (:func:`~p2p_nertz.testing.liar_nodes.play`); the last seat is a liar whose
beats claim an honest member's feed one event past its result, made to reach that member
before its game is over there (:func:`tests.claim_over_helpers.claim_on_arrival`), and which
never goes home.
Each game 7-15 s of wall (load 30) and under 2 s of CPU.

No load can drop an honest member (session 42; ``tests/test_node_liars.py`` says why): the
honest nodes' only timer that votes within a game is the quick one *withheld*, which the claim
calls for (:data:`~p2p_nertz.testing.liar_nodes.WITHHELD_ONLY`), the liar's timers vote nobody
out (:data:`~p2p_nertz.testing.liar_nodes.NO_TIMED_VOTES`) and no bot abandons a game of two,
so only the liar can have a majority against it; the honest games have no timer that votes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest
import trio

from p2p_nertz.logfile import Recovery
from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.peer import Effect, Peer
from p2p_nertz.protocol.state import Phase
from p2p_nertz.sim.liars import Liar, Lie
from p2p_nertz.testing.games import bot_game
from p2p_nertz.testing.liar_nodes import (
    LABEL,
    NO_TIMED_VOTES,
    WITHHELD_ONLY,
    LiarNode,
    RealLiarRun,
    check,
    play,
)
from tests.claim_over_helpers import claim_on_arrival

pytestmark = [pytest.mark.slow, pytest.mark.timeout(200)]


class _ClaimNode(LiarNode):
    """The liar: its core tells nothing of its own (``times=0``), its beats claim a member's
    feed past its result (:func:`claim_on_arrival`), and it never stops by itself."""

    claims: list[int]
    made: ClassVar[list[_ClaimNode]] = []  # (the liars of the game played last)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.claims = []
        _ClaimNode.made.append(self)

    def _make_peer(self, recovery: Recovery) -> list[Effect]:
        effects = super()._make_peer(recovery)
        claim_on_arrival(self.peer, self.claims)
        self._ending.check = lambda peer, now: None  # type: ignore[method-assign]
        return effects


def _play(players: int, tmp_path: Path, *, liar: bool, grace: float = 3.0) -> RealLiarRun:
    """Game 0 of ``players`` bots (one round), the last seat the liar if ``liar`` (the honest
    nodes' timer *withheld* the quick one, the liar's voting nobody out, no bot abandoning);
    without a liar, no timer votes within the game."""
    identities, spec = bot_game(LABEL, players, 0)
    _ClaimNode.made.clear()
    liars = [Liar(players - 1, Lie.BEAT_AHEAD, at=1.0, times=0, rate=1.0, seed=0)] if liar else []
    return trio.run(
        lambda: play(
            spec,
            identities,
            liars,
            tmp_path,
            config=WITHHELD_ONLY if liar else NO_TIMED_VOTES,
            liar_config=NO_TIMED_VOTES,
            liar_node=_ClaimNode,
            grace=grace,
            abandon=False,
        )
    )


def _votes_after_result(peer: Peer, players: int) -> list[tuple[int, DropReason]]:
    """The votes ``peer`` signed after its (last) result, as (seat, reason)."""
    own = peer.events(peer.seat)
    ended = max(i for i, e in enumerate(own) if e.kind is Kind.RESULT)
    bodies = [parse_body(e.kind, e.body, players) for e in own[ended + 1 :]]
    return [(b.seat, b.reason) for b in bodies if isinstance(b, Drop)]


def test_node_claim_over_the_member_over_stays_and_casts_its_vote(tmp_path: Path) -> None:
    # (Three players: at four the liar's round-1 score often ties an honest member's, and the
    # tiebreak's extra rounds, one played alone by the member tied, outlast the bound under
    # load; no freeze: docs/protocol.md §13, test_sim_claim_over.py's tie.)
    players = 3
    run = _play(players, tmp_path, liar=True)
    liar = players - 1
    assert run.told == {liar: 0}  # (the fuzzer's lie: never told; this claim is the lie)
    problems, holding = check(run)
    assert problems == []  # (without the node staying: the member claimed "honest dropped")
    assert holding == ()
    assert run.finished
    (node,) = _ClaimNode.made
    assert node.claims, "the liar never claimed (no result came first in the total order)"
    claimed = run.peers[node.claims[0]]
    assert claimed is not None and claimed.final.phase is Phase.OVER
    # The member claimed voted the liar out after its own result, and the vote counted.
    assert (liar, DropReason.WITHHELD) in _votes_after_result(claimed, players)
    honest = [p for s, p in enumerate(run.peers) if s != liar]
    assert all(p is not None and liar in p.final.dropped for p in honest)


@pytest.mark.parametrize("players", [2, 3])
def test_node_claim_over_an_honest_game_ends_once_every_last_event_is_final(
    players: int, tmp_path: Path
) -> None:
    # ``grace`` past the hang bound: a node waiting for it (or for a vote it does not owe)
    # would not end within ``play``'s bound, and the run would not be finished.
    run = _play(players, tmp_path, liar=False, grace=10 * 60.0)
    assert check(run) == ([], ())
    assert run.finished
    for seat, peer in enumerate(run.peers):
        assert peer is not None and peer.final.phase is Phase.OVER
        own = peer.events(seat)
        assert own[-1].lamport <= peer.stable  # (what it stopped for: its last event final)
