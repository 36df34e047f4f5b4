"""The local player's moves while a claim of theirs is in the air (docs/protocol.md §7.3).

A claim's card is in the lake on the player's table only until the claim is decided: if another
player's claim for the same place comes earlier in the total order, the card goes back to its
pile. A move the player makes meanwhile must be legal whether the claim wins or loses, or the
player's own peer signs a move every member's fold refuses. Touching the claim's pile is
refused; so is a slide-under that needs the claim's pile empty (its only empty work pile).

Soak seed 353 found the slide-under: a claim from a work pile holding one card, then a
slide-under played on that empty pile's account, then the claim lost to a concurrent one.

The scenarios are bot-played networks of real peers (``peer_helpers.PeerNetwork``), stopped at
a moment found by looking: one seat can claim the only card of a work pile, and a slide-under
becomes legal on its table once that pile is empty; another seat, behind it in Lamport time,
can claim a card of the same rank and suit for the same place.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pytest
from peer_helpers import PeerNetwork

from p2p_nertz.bots.base import Strategy
from p2p_nertz.bots.greedy import Greedy
from p2p_nertz.errors import IllegalMoveError, LocalProtocolError
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.state import GameState, Phase, Violation
from p2p_nertz.rng import Rng, derive_seed
from p2p_nertz.rules import FoundationId, Move, Pile, Rules, Table, Tableau

ONE_ROUND = Rules(target=None, rounds=1)
SEED = 9


class Pausable(Strategy):
    """The greedy bot, which a test can stop (``paused``: it waits)."""

    def __init__(self, rng: Rng) -> None:
        super().__init__(rng)
        self.inner = Greedy(rng)
        self.paused = False

    def choose(self, table: Table, seat: int) -> Move | None:
        return None if self.paused else self.inner.choose(table, seat)

    def new_round(self) -> None:
        self.inner.new_round()


@dataclass(frozen=True)
class Race:
    """A claim that a slide-under would count on, and a rival claim that beats it."""

    claimer: int
    pile: Pile  # the claimer's work pile holding one card, which fits ``foundation``
    foundation: FoundationId
    slide: Move  # legal on the claimer's table once ``pile`` is empty, not before
    rival: int  # behind the claimer in Lamport time: its claim comes first in the order
    rival_source: Pile  # its pile topped by a card of the same rank and suit


def _slides(tableau: Tableau, rules: Rules) -> list[Move]:
    moves = []
    for source in (Pile.NERTS, Pile.WASTE, *tableau.work_piles):
        for target in tableau.work_piles:
            if source == target:
                continue
            move = Move.slide(source, target)
            try:
                tableau.apply(move, rules)
            except IllegalMoveError:
                continue
            moves.append(move)
    return moves


def _top(tableau: Tableau, pile: Pile) -> object:
    cards = tableau.nerts if pile is Pile.NERTS else tableau.waste
    if pile.is_work:
        cards = tableau.work[pile - 1]
    return cards[-1] if cards else None


def _race(net: PeerNetwork) -> Race | None:
    """A moment of the game where a :class:`Race` can be played, if this is one."""
    for a, claimer in enumerate(net.peers):
        state = claimer.tentative
        table = state.table
        if state.phase is not Phase.PLAY or table is None or a not in state.round.ready:
            continue
        tableau = table.tableaux[a]
        if claimer.player.pending_claims() or tableau.has_empty_work_pile():
            continue
        for pile in tableau.work_piles:
            (card, *more) = tableau.work[pile - 1]
            if more or card.rank == 1 or card.suit is None:
                continue
            _, emptied = tableau.take(pile)
            slides = [m for m in _slides(emptied, ONE_ROUND) if pile not in (m.source, m.target)]
            for foundation in table.lake.targets(card):
                for b, rival in enumerate(net.peers):
                    view = rival.tentative.table
                    if b == a or rival.clock >= claimer.clock or view is None or not slides:
                        continue
                    if view.lake.height(foundation) != card.rank - 1:
                        continue
                    theirs = view.tableaux[b]
                    for source in (Pile.NERTS, Pile.WASTE, *theirs.work_piles):
                        if _top(theirs, source) == card and source not in rival.frozen_piles():
                            return Race(a, pile, foundation, slides[0], b, source)
    return None


def _bots() -> dict[int, Strategy]:
    return {s: Pausable(Rng(derive_seed("peer-network/bot", SEED, s))) for s in range(3)}


@functools.cache
def _race_at() -> tuple[int, Race]:
    """The step of the game at which a race can first be played, and the race: looked for
    once (reading the tables after every step is most of the module's CPU)."""
    net = PeerNetwork(3, seed=SEED, rules=ONE_ROUND, strategies=_bots())
    net.run(lambda n: _race(n) is not None)
    race = _race(net)
    assert race is not None
    return net.steps, race


def _network() -> tuple[PeerNetwork, Race]:
    """The game played (the same seed, the same steps) up to the race, its bots paused."""
    steps, race = _race_at()
    bots = _bots()
    net = PeerNetwork(3, seed=SEED, rules=ONE_ROUND, strategies=bots)
    net.run(lambda n: n.steps >= steps)
    assert _race(net) == race  # (the same moment: the game is deterministic)
    for bot in bots.values():
        assert isinstance(bot, Pausable)
        bot.paused = True  # the test plays from here on
    return net, race


def _claim_in_the_air(net: PeerNetwork, race: Race) -> None:
    """The claimer claims its pile's only card; its table shows the pile empty and allows the
    slide-under, yet the peer refuses it while the claim is in the air."""
    a = race.claimer
    net.play(a, Move.to_lake(race.pile, race.foundation))
    peer = net.peers[a]
    assert [e.seat for e in peer.player.pending_claims()] == [a]
    view = peer.view
    assert view is not None
    view.tableaux[a].apply(race.slide, ONE_ROUND)  # the table alone would allow it
    held = peer.held(a)
    with pytest.raises(LocalProtocolError, match="in the air"):
        net.play(a, race.slide)
    assert peer.held(a) == held  # nothing signed


def test_a_slide_under_waits_while_the_pile_it_needs_empty_is_in_the_air() -> None:
    net, race = _network()
    a = race.claimer
    # The rival's claim for the same place comes first in the total order (an earlier clock),
    # and reaches the claimer only after it claimed.
    net.play(race.rival, Move.to_lake(race.rival_source, race.foundation))
    _claim_in_the_air(net, race)
    peer = net.peers[a]
    net.run(lambda n: not peer.player.pending_claims())
    # The claim lost: the card is back, and the slide-under would have been a move every
    # member's fold refuses (the honest player's own violation, as in soak seed 353).
    final = peer.final.table
    assert final is not None
    assert final.tableaux[a].work[race.pile - 1]
    with pytest.raises(IllegalMoveError, match="needs an empty work pile"):
        final.tableaux[a].apply(race.slide, ONE_ROUND)
    net.run(lambda n: all(p.held(a) == peer.held(a) for p in n.peers))
    assert all(p.tentative.violations == () for p in net.peers)


def test_a_slide_under_is_allowed_once_the_claim_that_emptied_the_pile_is_won() -> None:
    net, race = _network()
    a = race.claimer
    _claim_in_the_air(net, race)  # no rival claim: it wins
    peer = net.peers[a]
    net.run(lambda n: not peer.player.pending_claims())
    final = peer.final.table
    assert final is not None and not final.tableaux[a].work[race.pile - 1]
    held = peer.held(a)
    net.play(a, race.slide)
    (event,) = peer.events(a)[held:]
    assert event.kind is Kind.MOVE
    net.run(lambda n: all(p.held(a) == peer.held(a) for p in n.peers))
    net.run(lambda n: all(p.stable >= event.lamport for p in n.peers))
    assert all(p.final.violations == () for p in net.peers)


def test_the_state_digest_hashes_which_events_were_refused_not_why() -> None:
    # An author's own fold words a refusal with its real cards, the others' with face-down
    # ones: the peers must still agree on the state.
    spec = PeerNetwork(2, seed=9).peers[0].spec
    author, other = GameState(spec), GameState(spec)
    author.violations += (Violation(1, 40, Kind.MOVE, "slide-under: N: JC KS 8S"),)
    other.violations += (Violation(1, 40, Kind.MOVE, "slide-under: N: ?? ?? ??"),)
    assert author.digest() == other.digest()
    other.violations = (Violation(1, 41, Kind.MOVE, "slide-under: N: ?? ?? ??"),)
    assert author.digest() != other.digest()
