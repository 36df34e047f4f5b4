"""Leaving: the others see a signed leave, and the last one out does not break the core."""

from __future__ import annotations

import pytest
from peer_helpers import PeerNetwork

from p2p_nertz.errors import LocalProtocolError
from p2p_nertz.protocol.bodies import Drop, DropReason, parse_body
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Effect, Peer, PeerConfig, Send
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.protocol.state import GameEnded, MemberDropped, Phase
from p2p_nertz.rules import NERTS_PILE_SIZE, Move, Rules, Termination


def _pair(deal: Deal = Deal.COMMIT) -> list[Peer]:
    ids = [Identity.generate(bytes([i + 1]) * 32) for i in range(2)]
    spec = GameSpec.create(
        [(i.peer_id, f"p{n}") for n, i in enumerate(ids)],
        Rules(target=None, rounds=1),
        b"x",
        deal=deal,
    )
    by_id = {i.peer_id: i for i in ids}
    return [Peer(by_id[pid], spec, 0.0) for pid in spec.peer_ids]


def _pump(peers: list[Peer], effects: list[Effect], source: int, now: float) -> None:
    queue = [(source, e) for e in effects]
    while queue:
        seat, effect = queue.pop(0)
        if isinstance(effect, Send):
            for other, peer in enumerate(peers):
                if other != seat:
                    queue += [(other, e) for e in peer.feed(effect.data, now)]


def _ticks(peers: list[Peer], start: float, count: int) -> None:
    for step in range(count):
        now = start + 0.3 * step
        for seat, peer in enumerate(peers):
            _pump(peers, peer.tick(now), seat, now)


def test_leave_is_seen_by_the_others_and_the_last_one_out_does_not_raise() -> None:
    peers = _pair()
    for seat, peer in enumerate(peers):
        _pump(peers, peer.start(0.0), seat, 0.0)
    _ticks(peers, 0.3, 4)
    _pump(peers, peers[0].leave(2.0), 0, 2.0)
    _ticks(peers, 2.4, 4)
    assert all(0 in p.final.dropped and 0 in p.final.left for p in peers)
    _pump(peers, peers[1].leave(4.0), 1, 4.0)
    _ticks(peers, 4.2, 6)  # used to raise ValueError: min() over no remaining member
    assert set(peers[1].final.dropped) == {0, 1}


def test_leave_of_a_shuffle_deal_of_two_ends_the_game_void_for_both() -> None:
    """docs/shuffle.md §8.4: nobody deals alone. One of two leaves during the deal: both
    peers end the game there, the round void (it waited for the leaver's stages for ever)."""
    peers = _pair(Deal.SHUFFLE)
    held: list[bytes] = []  # seat 0's stage, kept from seat 1: it cannot make its last stage

    def deliver(effects: list[Effect], source: int, now: float) -> None:
        queue = [(source, e) for e in effects]
        while queue:
            seat, effect = queue.pop(0)
            if not isinstance(effect, Send):
                continue
            stage = decode_message(effect.data).kind is Kind.DECK_STAGE
            for other, peer in enumerate(peers):
                if other == seat:
                    continue
                if stage and seat == 0:
                    held.append(effect.data)
                    continue
                queue += [(other, e) for e in peer.feed(effect.data, now)]

    for seat, peer in enumerate(peers):
        deliver(peer.start(0.0), seat, 0.0)
    assert held and all(p.tentative.phase is Phase.DEAL for p in peers)
    deliver(peers[1].leave(0.1), 1, 0.1)
    for data in held:  # (what seat 1 missed comes after its leave)
        _pump(peers, peers[1].feed(data, 0.2), 1, 0.2)
    _ticks(peers, 0.3, 6)
    for peer in peers:
        final = peer.final
        assert final.phase is Phase.OVER and 1 in final.left
        result = final.game.result
        assert result is not None and result.termination is Termination.ABANDONED
        assert final.game.history == ()


class _Withholder(Peer):
    """A member that stays connected but never reveals its nonce (a forfeit, DESIGN.md §5.2)."""

    def _act(self) -> None:
        if self._final.phase is not Phase.NONCE:
            super()._act()


def _trio(config: PeerConfig) -> list[Peer]:
    ids = [Identity.generate(bytes([i + 7]) * 32) for i in range(3)]
    spec = GameSpec.create(
        [(i.peer_id, f"p{n}") for n, i in enumerate(ids)], Rules(target=None, rounds=1), b"w"
    )
    by_id = {i.peer_id: i for i in ids}
    kinds = [Peer, Peer, _Withholder]
    return [
        kind(by_id[pid], spec, 0.0, config) for kind, pid in zip(kinds, spec.peer_ids, strict=True)
    ]


def test_member_withholding_its_reveal_is_voted_out_and_the_round_goes_on() -> None:
    peers = _trio(PeerConfig(phase_timeout=5.0))
    for seat, peer in enumerate(peers):
        _pump(peers, peer.start(0.0), seat, 0.0)
    _ticks(peers, 0.3, 10)  # joins and commits are in; seat 2 sits on its nonce
    assert peers[0].final.phase is Phase.NONCE and peers[0].final.waiting() == {2}
    _ticks(peers, 3.3, 20)  # past the phase timeout: seats 0 and 1 vote seat 2 out
    for peer in peers[:2]:
        assert 2 in peer.final.dropped
        assert peer.final.phase is Phase.PLAY  # the deal goes on without it


def test_drop_majority_counts_the_current_roster() -> None:
    # After one leave in a three-player game, the two left can still drop a third... of two:
    # a strict majority of the current roster (2 members) is 2 votes.
    peers = _pair()
    state = peers[0].final
    assert state.majority == 2
    state.dropped[1] = 0
    assert state.majority == 1


def test_abandon_needs_one_silent_member_left() -> None:
    peers = _pair()
    for seat, peer in enumerate(peers):
        _pump(peers, peer.start(0.0), seat, 0.0)
    _ticks(peers, 0.3, 4)
    with pytest.raises(LocalProtocolError, match="silence"):
        peers[0].abandon(2.0)  # the other is right there
    assert peers[0].final.phase is not Phase.OVER
    # Seat 1 goes away for good; 40 s later (past drop_after) seat 0 ends the game, having
    # listened meanwhile, as a node's timer does (an abandon waits until it has, §9.3).
    for second in range(3, 42):
        peers[0].tick(float(second))
    effects = peers[0].abandon(41.0)
    (vote,) = [
        decode_message(e.data)
        for e in effects
        if isinstance(e, Send) and decode_message(e.data).kind is Kind.DROP
    ]
    body = parse_body(vote.kind, vote.body, 2)
    assert isinstance(body, Drop)
    assert (body.seat, body.reason, body.last_seq) == (1, DropReason.ABANDON, peers[0].held(1))
    state = peers[0].final
    assert state.phase is Phase.OVER and 1 in state.dropped
    assert state.game.result is not None
    assert state.game.result.termination is Termination.ABANDONED
    assert any(isinstance(e, MemberDropped) and e.seat == 1 for e in effects)
    assert any(isinstance(e, GameEnded) for e in effects)
    with pytest.raises(LocalProtocolError, match="over"):
        peers[0].abandon(42.0)
    # Seat 1 comes back: it learns the game was abandoned without it.
    _pump(peers, peers[0].tick(42.0), 0, 42.0)
    _ticks(peers, 42.3, 6)
    assert peers[1].final.phase is Phase.OVER and 1 in peers[1].final.dropped


def test_abandon_is_refused_with_more_than_one_other_member() -> None:
    peers = _trio(PeerConfig())
    for seat, peer in enumerate(peers):
        _pump(peers, peer.start(0.0), seat, 0.0)
    with pytest.raises(LocalProtocolError, match="exactly one other"):
        peers[0].abandon(100.0)


class _NoReady(Peer):
    """A member that stays connected through the deal but never publishes its ``ready``."""

    def _act(self) -> None:
        if self._final.phase is not Phase.PLAY:
            super()._act()


class _NoSecret(Peer):
    """A member that plays, but never reveals its secret (and is caught by nobody)."""

    def _act(self) -> None:
        if self._final.phase is not Phase.REVEAL:
            super()._act()


def _withholding_game(factory: type[Peer], seed: int) -> PeerNetwork:
    net = PeerNetwork(
        3,
        seed=seed,
        rules=Rules(target=None, rounds=1),
        config=PeerConfig(phase_timeout=5.0),
        factories={2: factory},
    )
    net.run_until_over(within=400.0)
    return net


@pytest.mark.parametrize(
    ("factory", "seed", "forfeits"),
    [
        pytest.param(_Withholder, 1, False, id="nonce-before-the-deal"),
        pytest.param(_NoReady, 2, True, id="ready-during-play"),
        pytest.param(_NoSecret, 4, True, id="secret-after-play"),  # 3 ties: an extra round
    ],
)
def test_member_withholding_is_voted_out_and_forfeits_once_dealt(
    factory: type[Peer], seed: int, forfeits: bool
) -> None:
    net = _withholding_game(factory, seed)
    for peer in net.peers[:2]:
        state = peer.final
        assert 2 in state.dropped
        votes = [vote for voter, vote in state.votes.get(2, ()) if voter != 2]
        assert votes and all(v.reason is DropReason.WITHHELD for v in votes)
        (score,) = state.scores
        withholder = score.players[2]
        if forfeits:
            # Dealt in, then gone: scored as a forfeit, never better than being caught.
            assert withholder.total == -NERTS_PILE_SIZE * state.rules.nerts_card_penalty
            assert 2 in state.round.forfeit
        else:
            assert withholder.total == 0 and not withholder.played  # never dealt
    assert net.peers[0].final.history == net.peers[1].final.history


def _left_at(players: int, inputs: int) -> tuple[Peer, list[str]]:
    """Seat 0 of a ``players`` game takes ``inputs`` inputs, the others' messages to it held
    back and released one at a time, then leaves; what it held back then arrives, the others
    go silent for good (frozen), and seat 0's timers run well past the liveness timers."""
    ids = [Identity.generate(bytes([i + 40]) * 32) for i in range(players)]
    spec = GameSpec.create(
        [(i.peer_id, f"p{n}") for n, i in enumerate(ids)], Rules(target=None, rounds=1), b"l"
    )
    by_id = {i.peer_id: i for i in ids}
    peers = [Peer(by_id[pid], spec, 0.0) for pid in spec.peer_ids]
    to_leaver: list[bytes] = []

    def send(seat: int, effects: list[Effect], now: float) -> None:
        for effect in effects:
            if not isinstance(effect, Send):
                continue
            if seat != 0:
                to_leaver.append(effect.data)
            for other in range(1, players):
                if other != seat:
                    send(other, peers[other].feed(effect.data, now), now)

    for seat, peer in enumerate(peers):
        send(seat, peer.start(0.0), 0.0)
    now = 0.0
    for _ in range(inputs):
        now += 0.01
        if to_leaver:
            send(0, peers[0].feed(to_leaver.pop(0), now), now)
        else:
            for seat, peer in enumerate(peers):
                send(seat, peer.tick(now), now)
    leaver = peers[0]
    leaver.leave(now)
    for data in to_leaver:
        leaver.feed(data, now)
    for step in range(1, 60):
        leaver.tick(now + 0.8 * step)  # past drop_after (30 s): the silent are due a vote
    return leaver, [m.kind.name for m in leaver.events(0)]


@pytest.mark.parametrize("players", [2, 3])
def test_a_member_that_left_signs_nothing_more(players: int) -> None:
    """Its leave is the last event of its feed, wherever in the deal it left: the phase
    events the others' late messages make due, and the votes the others' silence calls for,
    are not signed (they would count nowhere; the node's SIGTERM test saw a reveal after the
    leave). Before the fix, seat 0 of two signed a commit, a reveal or a ready after it."""
    phases = set()
    for inputs in range(0, 40):
        leaver, kinds = _left_at(players, inputs)
        assert kinds[-1] == "LEAVE", (inputs, kinds)
        assert kinds.count("LEAVE") == 1
        phases.add(tuple(kinds[:-1]))
        with pytest.raises(LocalProtocolError, match="left the game"):
            leaver.play(Move.turn(), 100.0)
        assert leaver.abandon_answer(100.0).why == "we left the game"
    assert len(phases) >= 4  # it left before joining, after it, after its commit, its reveal


@pytest.mark.parametrize("players", [2, 3])
def test_a_member_that_left_has_no_timer_always_due(players: int) -> None:
    """The others silent past their drop: a member in the game would vote, one that left
    votes no more, so no vote's deadline is its to wait for. Before the fix the silence's
    deadline stayed in the past for ever and a node that left ticked without pause until
    it stopped (a simulated network spun on it)."""
    for inputs in (0, 10, 25):
        leaver, _ = _left_at(players, inputs)
        now = 100.0
        for _ in range(20):
            leaver.tick(now)
            due = leaver.next_deadline()
            assert due is not None and due > now, (inputs, now, due)
            now = due
