"""Left alone (docs/protocol.md §9.3, *Left alone*): a game in which a leave leaves one member
in is over, decided by the fold from the events alone, as an abandon ends it: the round in
progress void unless every result of it is in, the totals of the rounds scored deciding.

Pure tests on a fake clock (the in-memory network of cores, :class:`PeerNetwork`), the audit
of their logs, and the terminal's words. The real processes are in
``tests/test_cli_left_alone.py``; the three-player case (one dropped, one leaves) in
``tests/test_table_gone.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from peer_helpers import PeerNetwork, log_sources

from p2p_nertz.audit import audit
from p2p_nertz.audit.replay import Replay, load
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.peer import PeerConfig, Send
from p2p_nertz.protocol.state import GameState, Phase
from p2p_nertz.rules import Rules, Termination
from p2p_nertz.ui import TableController, TableView, render

QUICK = PeerConfig(suspect_after=1.0, drop_after=3.0, phase_timeout=6.0)


def _leave(net: PeerNetwork, seat: int) -> None:
    for effect in net.peers[seat].leave(net.now):
        if isinstance(effect, Send):
            net.send(seat, effect)


def _round_two(phase: Phase) -> Callable[[PeerNetwork], bool]:
    """Both members' final folds are in round 2, in ``phase``."""

    def reached(net: PeerNetwork) -> bool:
        return all(p.final.round.number == 2 and p.final.phase is phase for p in net.peers)

    return reached


def _left_in(when: Callable[[PeerNetwork], bool], seed: int = 3) -> tuple[PeerNetwork, GameState]:
    """A game of two over three rounds; seat 1 leaves once ``when`` holds. Returns the network
    once both folds are over, and seat 0's final fold as it was just before the leave."""
    net = PeerNetwork(2, seed=seed, rules=Rules(target=None, rounds=3), config=QUICK)
    net.run(when, within=120.0)
    before = net.peers[0].final.copy()
    _leave(net, 1)
    net.run(lambda n: all(p.final.phase is Phase.OVER for p in n.peers), within=30.0)
    return net, before


def _ends_on_the_rounds_scored(net: PeerNetwork, before: GameState) -> None:
    """Both folds end the game at the leave, on the rounds ``before`` had scored."""
    scored = len(before.game.history)
    for peer in net.peers:
        final = peer.final
        result = final.game.result
        assert result is not None and result.termination is Termination.ABANDONED
        assert final.left_alone == 1 and 1 in final.left
        assert len(final.game.history) == scored
        assert result.totals == before.game.totals
        assert result.winners == (0,)  # (never the leaver: it forfeits the game)
    assert net.peers[0].final.game == net.peers[1].final.game
    assert net.peers[0].table_gone(net.now + 10 * QUICK.gone_after) is None


def test_left_alone_in_play_ends_the_game_on_the_rounds_scored() -> None:
    # Round 2 in play: it is void (nobody scores it, the leaver forfeits nothing); round 1's
    # totals decide, the one left never plays on alone nor stops with no result.
    net, before = _left_in(_round_two(Phase.PLAY))
    assert len(before.game.history) == 1 and before.game.result is None
    _ends_on_the_rounds_scored(net, before)
    assert net.peers[0].final.round.number == 2  # (the void round was never scored)


@pytest.mark.parametrize("phase", [Phase.COMMIT, Phase.NONCE])
def test_left_alone_in_the_deal_ends_the_game_on_the_rounds_scored(phase: Phase) -> None:
    # Between rounds (round 2's commits not all in) and in its deal (the nonces): the same.
    net, before = _left_in(_round_two(phase))
    assert len(before.game.history) == 1
    _ends_on_the_rounds_scored(net, before)


def test_left_alone_after_the_last_result_changes_nothing() -> None:
    # The game already over: the leave changes neither the result nor how it ended.
    net = PeerNetwork(2, seed=3, rules=Rules(target=None, rounds=1), config=QUICK)
    net.run_until_over()
    net.run(lambda n: all(p.final.phase is Phase.OVER for p in n.peers), within=30.0)
    before = net.peers[0].final.game
    assert before.result is not None and before.result.termination is Termination.ROUNDS
    _leave(net, 1)
    net.run(lambda n: 1 in n.peers[0].tentative.left, within=30.0)
    for peer in net.peers:
        assert peer.final.game == before and peer.final.left_alone is None


def test_left_alone_the_audit_finds_the_game_valid_with_its_result() -> None:
    # Every peer's log folds to the same end: the audit, which folds them together, says the
    # game is finished, valid, with the totals of the rounds scored and the winners.
    net, before = _left_in(_round_two(Phase.PLAY))
    sources = log_sources(net)
    report = audit(sources)
    assert report.valid, report.violations
    assert report.finished
    assert report.totals == before.game.totals
    result = net.peers[0].final.game.result
    assert result is not None and report.winners == result.winners
    assert report.state is not None and report.state.left_alone == 1
    # The replay, the same fold step by step, says where and how it ended.
    replay = load(sources)
    assert isinstance(replay, Replay)
    (end,) = [step for step in replay.steps if any("game over" in n for n in step.notes)]
    assert (end.event.kind is Kind.LEAVE and end is replay.steps[-1]) or end.event.seat == 1
    assert end.notes[-1] == (
        "game over: p1 left, forfeiting the game; the round void, winner(s) p0 on the rounds scored"
    )


def test_left_alone_the_terminal_says_who_left_and_the_result() -> None:
    net, _ = _left_in(_round_two(Phase.PLAY))
    peer = net.peers[0]
    front = _Shown()
    table = TableController(("Ann", "Bea"), 0, front, symbols=False)
    for effect in net.effects[0]:
        table.notice(effect, peer.final, net.now)
    result = peer.final.game.result
    assert result is not None
    assert result.winners == (0,)
    said = [m for m in table.tracker.messages if "left the game" in m]
    assert said == [
        f"Bea left the game — the game is over: you win with {result.totals[0]} on the rounds "
        "scored (a player who leaves forfeits the game)"
    ], table.tracker.messages
    table.draw(peer, net.now)
    text = render(front.views[-1], width=100).text()
    assert "game over — winner:" in text and "(ended early)" in text, text


class _Shown:
    def __init__(self) -> None:
        self.views: list[TableView] = []

    def show(self, view: TableView) -> None:
        self.views.append(view)


# -- the leaver forfeits the game (rules.md: leaving the game) --------------------------------


def _in_play(players: int, rules: Rules, seed: int = 3) -> PeerNetwork:
    """A game of ``players`` whose round 1 is in play at every member."""
    net = PeerNetwork(players, seed=seed, rules=rules, config=QUICK)
    net.run(lambda n: all(p.final.phase is Phase.PLAY for p in n.peers), within=120.0)
    return net


def _over(net: PeerNetwork, seats: range | list[int]) -> list[GameState]:
    """The final folds of ``seats`` once each is over, all of them agreeing on the game."""
    net.run(lambda n: all(n.peers[s].final.phase is Phase.OVER for s in seats), within=120.0)
    finals = [net.peers[s].final for s in seats]
    assert len({repr(f.game) for f in finals}) == 1
    return finals


def test_leaver_ahead_at_two_players_does_not_win() -> None:
    # Round 1 scored, the leader leaves in round 2: the one who stayed wins, behind or not
    # (lone32's end named the leader, or both at a tie: "you and bot1 win with 0").
    net = PeerNetwork(2, seed=3, rules=Rules(target=None, rounds=3), config=QUICK)
    net.run(_round_two(Phase.PLAY), within=120.0)
    totals = net.peers[0].final.game.totals
    leader = 0 if totals[0] >= totals[1] else 1
    _leave(net, leader)
    for final in _over(net, range(2)):
        result = final.game.result
        assert result is not None and result.termination is Termination.ABANDONED
        assert result.winners == (1 - leader,) and result.totals == totals
        assert final.game.out == (leader,) and final.left_alone == leader
    report = audit(log_sources(net))
    assert report.valid and report.finished and report.winners == (1 - leader,)


@pytest.mark.parametrize("players", [3, 4])
def test_leaver_everyone_but_one_left_the_last_one_wins(players: int) -> None:
    # Round 1 in play, no round scored (every total 0): the players leave one after the
    # other; the game goes on while two are in, and ends at the last leave but one with the
    # one left the only winner (lone32's end shared the tie with every leaver).
    net = _in_play(players, Rules(target=None, rounds=1))
    last = players - 1
    for seat in range(last):
        _leave(net, seat)
        net.run(lambda n, s=seat: all(s in p.final.left for p in n.peers[s + 1 :]), within=60.0)
    (final, *_) = _over(net, [last])
    result = final.game.result
    assert result is not None and result.winners == (last,) and result.totals == (0,) * players
    assert final.left_alone == last - 1 and final.game.out == tuple(range(last))
    report = audit(log_sources(net))
    assert report.valid and report.winners == (last,)


def test_leaver_in_pairs_ends_the_game_for_the_other_team() -> None:
    # Two against two, one player leaves: its team forfeits the game, so one team is left
    # in contention and the game is over (the round void), the other team the winner.
    net = _in_play(4, Rules(pairs=True, target=None, rounds=1))
    _leave(net, 1)
    for final in _over(net, [0, 2, 3]):
        result = final.game.result
        assert result is not None and result.winners == (1,)
        assert result.termination is Termination.ABANDONED and final.left_alone == 1


def test_leaver_frozen_total_still_highest_at_three_players_does_not_win() -> None:
    # Racing Demon of two rounds, three players: the leader after round 1 leaves before
    # round 2's deal (it scores nothing more), the other two play round 2 out; the leaver's
    # total is still the highest at the end (seed 2), yet the best of the others wins.
    net = PeerNetwork(3, seed=2, rules=Rules(target=None, rounds=2), config=QUICK)
    net.run(_round_two(Phase.COMMIT), within=120.0)
    totals = net.peers[0].final.game.totals
    leader = max(range(3), key=lambda s: totals[s])
    _leave(net, leader)
    stayed = [s for s in range(3) if s != leader]
    for final in _over(net, stayed):
        result = final.game.result
        assert result is not None and result.termination is Termination.ROUNDS
        assert final.left_alone is None and final.game.out == (leader,)
        assert result.totals[leader] == totals[leader] == max(result.totals)
        best = max(result.totals[s] for s in stayed)
        assert result.winners == tuple(s for s in stayed if result.totals[s] == best)
    report = audit(log_sources(net))
    assert report.valid and report.finished and report.winners == result.winners
