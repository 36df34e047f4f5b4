"""One bot at a table: when it may move, which move, and playing it through its peer core.

The runtime's node (:class:`~p2p_nertz.runtime.node.PeerNode`, on a trio clock) and the
simulator (:class:`~p2p_nertz.sim.network.Simulation`, on its event queue) both run bots. They
differ only in how they wait (a ``trio.sleep``, an event pushed on the queue); everything a
bot decides is here, once: :meth:`BotDriver.delay` paces it, :meth:`BotDriver.choose` says
whether it may move now and which move, :meth:`BotDriver.play` plays it (a move the core
refuses is a lost race, not an error), and :meth:`BotDriver.abandon` ends a game whose one
other member has gone. Pure: no clock, no randomness but the ``rng`` passed in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2p_nertz.bots.base import Pacing, Strategy, keeps_pace
from p2p_nertz.errors import IllegalMoveError, LocalProtocolError
from p2p_nertz.protocol.state import Phase

if TYPE_CHECKING:
    from p2p_nertz.protocol.peer import Effect, Peer
    from p2p_nertz.rng import Rng
    from p2p_nertz.rules import Move

__all__ = ["BotDriver"]


class BotDriver:
    """Drives one seat's bot through its peer core (see the module docstring).

    Args:
        strategy: what the bot plays.
        pacing: how fast it plays.
        practice: it waits for the slowest other player: it makes a move only while it has
            made no more this round than every other player still playing
            (:func:`~p2p_nertz.bots.keeps_pace`), so that a person learning the keys sets the
            pace (``nertz play --practice``).
        wait_for_deals: it plays a round only once every player still in it has its deal (a
            ``ready``): a person may read the last round's board meanwhile (the node's
            ``hold_ready``). The simulator's bots play from their own deal on.
    """

    def __init__(
        self,
        strategy: Strategy,
        pacing: Pacing,
        *,
        practice: bool = False,
        wait_for_deals: bool = True,
    ) -> None:
        self.strategy = strategy
        self.pacing = pacing
        self.practice = practice
        self.wait_for_deals = wait_for_deals
        self._round = 0  # the round the strategy was last told of (Strategy.new_round)

    def delay(self, rng: Rng) -> float:
        """Seconds to wait before the bot's next look at the table (its pace, jittered)."""
        return self.pacing.delay_ms(rng) / 1000

    def choose(self, peer: Peer) -> Move | None:
        """The move the bot makes now on the peer's tentative view, or ``None`` (not now)."""
        tentative = peer.tentative
        view = tentative.table
        seat = peer.seat
        if (
            view is None
            or tentative.phase is not Phase.PLAY
            or seat not in tentative.round.ready
            or view.over
        ):
            return None
        if self.wait_for_deals:
            waiting = tentative.round.playing - tentative.round.ready
            if waiting - tentative.dropped.keys() - tentative.left:
                return None  # nobody plays a round before every player has its deal
        if self.practice and not keeps_pace(
            [None if e is None else (e[0], e[1].kind) for e in tentative.round.log],
            seat,
            tentative.round.playing,
            standing=[s for s in tentative.round.playing if view.stuck[s]],
        ):
            return None  # practice: the others (the person) have not caught up yet
        if tentative.round.number != self._round:
            self._round = tentative.round.number
            self.strategy.new_round()
        # (a shuffle game: the held view, with the cards the peer's share store opens)
        held = peer.view
        return self.strategy.decide(held if held is not None else view, seat)

    @staticmethod
    def play(peer: Peer, move: Move, now: float) -> list[Effect] | None:
        """Play ``move`` (from :meth:`choose`); its effects, or ``None`` if the core refuses it
        (the table moved on since the bot looked: a race lost, nothing to report)."""
        try:
            return peer.play(move, now)
        except (IllegalMoveError, LocalProtocolError):
            return None

    @staticmethod
    def abandon(peer: Peer, now: float) -> list[Effect] | None:
        """End the game by an abandon if the core takes one now; its effects, else ``None``.

        A bot does not wait forever for an opponent who has gone: with two members nobody can
        be voted out, so it ends the game (scored by totals) once the core would take it
        (:meth:`~p2p_nertz.protocol.peer.Peer.abandon_answer` says nothing against it).
        """
        if peer.abandon_answer(now).why is not None:
            return None
        return peer.abandon(now)
