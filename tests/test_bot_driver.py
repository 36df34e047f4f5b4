"""The bot driver shared by the node and the simulator: when a bot may move, playing its move
through a real peer core, and abandoning a game whose one other member has gone."""

from __future__ import annotations

from peer_helpers import PeerNetwork

from p2p_nertz.bots import BotDriver, Pacing
from p2p_nertz.bots.greedy import Greedy
from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.peer import Effect, PeerConfig, Send
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Move, MoveKind, Pile, Rules

NEVER = 1e9  # the network's own bots never move: only the driver under test does


def _driver(*, wait_for_deals: bool = True, practice: bool = False) -> BotDriver:
    return BotDriver(
        Greedy(Rng(b"driver")), Pacing(10), wait_for_deals=wait_for_deals, practice=practice
    )


class _WithheldReady(PeerNetwork):
    """Seat 1's ``ready`` never arrives: seat 0 has its deal, the other player not yet."""

    def send(self, seat: int, effect: Send) -> None:
        if seat == 1 and decode_message(effect.data).kind is Kind.READY:
            return
        super().send(seat, effect)


def _own_deal(net: PeerNetwork) -> bool:
    return 0 in net.peers[0].tentative.round.ready


def test_bot_driver_waits_for_every_deal_only_when_asked() -> None:
    net = _WithheldReady(2, seed=3, rules=Rules(target=None, rounds=1), move_every=NEVER)
    net.run(_own_deal)
    peer = net.peers[0]
    assert peer.tentative.phase is Phase.PLAY and 1 not in peer.tentative.round.ready
    assert _driver().choose(peer) is None  # the node's bots: the other has no deal yet
    assert isinstance(_driver(wait_for_deals=False).choose(peer), Move)  # the simulator's


def test_bot_driver_moves_once_every_player_has_its_deal() -> None:
    net = PeerNetwork(2, seed=3, rules=Rules(target=None, rounds=1), move_every=NEVER)
    net.run(lambda n: n.peers[0].tentative.round.ready == {0, 1})
    assert isinstance(_driver().choose(net.peers[0]), Move)


def test_bot_driver_does_not_move_before_the_deal() -> None:
    net = PeerNetwork(2, seed=3, rules=Rules(target=None, rounds=1), move_every=NEVER)
    assert _driver(wait_for_deals=False).choose(net.peers[0]) is None


def test_bot_driver_practice_waits_for_the_slowest_player() -> None:
    net = PeerNetwork(2, seed=3, rules=Rules(target=None, rounds=1), move_every=NEVER)
    net.run(lambda n: all(n.peers[s].tentative.round.ready == {0, 1} for s in (0, 1)))
    bot = _driver(practice=True)
    move = bot.choose(net.peers[0])
    assert move is not None
    net.play(0, move)
    assert bot.choose(net.peers[0]) is None  # one move ahead of the person at seat 1
    net.play(1, Move.turn())
    net.run(lambda n: n.peers[0].held(1) == n.peers[1].held(1))  # seat 0 sees the move
    assert bot.choose(net.peers[0]) is not None


def test_bot_driver_practice_waits_again_once_the_persons_pass_is_stale() -> None:
    # A newcomer said stuck with moves left; a bot's card in the lake made the pass stale (the
    # table asks to pass again), and the practice bots raced on to the end of the round.
    net = PeerNetwork(2, seed=3, rules=Rules(target=None, rounds=1), move_every=NEVER)
    net.run(lambda n: all(n.peers[s].tentative.round.ready == {0, 1} for s in (0, 1)))
    net.play(1, Move.parse("P"))  # the person at seat 1 passes
    net.run(lambda n: n.peers[0].held(1) == n.peers[1].held(1))
    bot, peer = _driver(practice=True), net.peers[0]
    for _ in range(200):  # the pass stands: the bot plays on, until its card stales the pass
        move = bot.choose(peer)
        assert move is not None and move.kind is not MoveKind.PASS, move
        _final(net, move)
        table = peer.tentative.table
        assert table is not None
        if not table.stuck[1]:
            break
    else:
        raise AssertionError("no card of the bot's reached the lake in 200 moves")
    assert move.target is Pile.LAKE, move  # stale by a lake card, not a rotation
    # The person is behind again: the bot makes no more moves than theirs (one: the pass).
    ahead = 0
    while (move := bot.choose(peer)) is not None and ahead < 10:
        _final(net, move)
        ahead += 1
    assert ahead <= 1 and bot.choose(peer) is None, ahead


def _final(net: PeerNetwork, move: Move) -> None:
    """Seat 0 plays ``move``; the network runs until every claim of it is decided."""
    net.play(0, move)
    net.run(lambda n: n.peers[0].final.table == n.peers[0].tentative.table)


def test_bot_driver_play_is_none_when_the_core_refuses() -> None:
    net = PeerNetwork(2, seed=3, rules=Rules(target=None, rounds=1), move_every=NEVER)
    peer = net.peers[0]
    held = peer.held(0)
    assert BotDriver.play(peer, Move.turn(), net.now) is None  # no table yet: a race lost
    assert peer.held(0) == held  # nothing signed


def _abandons(effects: list[Effect]) -> list[Drop]:
    drops = []
    for effect in effects:
        if isinstance(effect, Send):
            message = decode_message(effect.data)
            if message.kind is Kind.DROP:
                body = parse_body(message.kind, message.body, 2)
                assert isinstance(body, Drop)
                drops.append(body)
    return drops


def test_bot_driver_abandons_once_the_core_takes_it() -> None:
    config = PeerConfig(suspect_after=1.0, drop_after=2.0)
    net = PeerNetwork(2, seed=3, rules=Rules(target=None, rounds=1), config=config)
    net.run(lambda n: n.peers[0].tentative.phase is Phase.PLAY)
    net.silence(1)
    peer = net.peers[0]
    heard = net.now
    assert BotDriver.abandon(peer, heard) is None  # heard just now: the core refuses
    net.run(lambda n: n.now >= heard + 3.0)
    effects = BotDriver.abandon(peer, net.now)
    assert effects is not None
    (drop,) = _abandons(effects)
    assert drop.reason is DropReason.ABANDON and drop.seat == 1


def test_bot_driver_never_abandons_with_two_others_left() -> None:
    config = PeerConfig(suspect_after=1.0, drop_after=2.0)
    net = PeerNetwork(3, seed=3, rules=Rules(target=None, rounds=1), config=config)
    net.run(lambda n: n.peers[0].tentative.phase is Phase.PLAY)
    net.silence(1)
    net.silence(2)
    start = net.now
    net.run(lambda n: n.now >= start + 3.0)
    assert BotDriver.abandon(net.peers[0], net.now) is None
