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
        best = max(result.totals)
        assert result.winners == tuple(s for s, t in enumerate(result.totals) if t == best)
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
    assert end.notes[-1].startswith("game over: p1 left, one member in; the round void")


def test_left_alone_the_terminal_says_who_left_and_the_result() -> None:
    net, _ = _left_in(_round_two(Phase.PLAY))
    peer = net.peers[0]
    front = _Shown()
    table = TableController(("Ann", "Bea"), 0, front, symbols=False)
    for effect in net.effects[0]:
        table.notice(effect, peer.final, net.now)
    result = peer.final.game.result
    assert result is not None
    who = " and ".join("you" if s == 0 else "Bea" for s in result.winners)
    verb = "wins" if who == "Bea" else "win"
    said = [m for m in table.tracker.messages if "left the game" in m]
    assert said == [
        f"Bea left the game — the game is over: {who} {verb} with {max(result.totals)} "
        "on the rounds scored"
    ], table.tracker.messages
    table.draw(peer, net.now)
    text = render(front.views[-1], width=100).text()
    assert "game over — winner:" in text and "(ended early)" in text, text


class _Shown:
    def __init__(self) -> None:
        self.views: list[TableView] = []

    def show(self, view: TableView) -> None:
        self.views.append(view)
