"""An extra round one tied player is left to play is decided there (rules.md: the game, a
house rule; docs/protocol.md §8.9; session 42).

A tied team none of whose players plays the extra round out loses the tie to every tied team
that does (session 41), so once only one tied team can still play it (the others voted out
before its deal or during it), the tie is decided: the fold ends the game there
(``Game.unopposed``), the round void, for every peer, the watcher and the audit alike. Before,
the member left played the round out alone for a result known already.

Fault-free games that tie after round 1 (greedy bots, one round), one tied member taken out of
the extra round by a hand-placed fault: a crash for good in play (three and four players), an
equivocation in play (two players, where only a proof drops a member), a freeze from the
moment its result is signed to past the drop (three players: voted out before the deal, it
wakes to the game's end). Each fails without the rule: the extra round is played out and
recorded (simulated ends 45.6-118.8 s then, 28.1-78.8 s now). ~0.2-0.7 CPU-s each.
"""

from __future__ import annotations

import pytest

from p2p_nertz.audit import LogSource
from p2p_nertz.audit.replay import Replay, load
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Termination
from p2p_nertz.sim import Faults, SimConfig, SimResult
from p2p_nertz.sim.invariants import audit_logs, log_files
from p2p_nertz.sim.network import Crash, Equivocation, Freeze
from p2p_nertz.sim.network import run as run_recorded
from p2p_nertz.sim.watching import run
from p2p_nertz.ui import TableController, TableView, render

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)

# The games (players, seed): (2, 16), (3, 0), (4, 8), fault-free, tie after round 1 (seats 0
# and 1 at two, 1 and 2 else), the extra round dealt at simulated 25.2 s (two) and 18.9 s;
# with the shuffle (3, 2): seats 1 and 2, round 1's results at 19.14 s.


def _play(
    players: int, seed: int, faults: Faults, *, out: int, tied: int, deal: Deal = Deal.COMMIT
) -> SimResult:
    """Play the tied game ``seed`` with ``faults`` taking seat ``out`` out of the extra round;
    check that seat ``tied`` won the tie there, with the round void, for everyone alike (the
    watcher too)."""
    config = SimConfig(players=players, seed=seed, faults=faults, deal=deal)
    result = run(config, watch=True)
    assert result.violations == []
    assert result.finished
    peers = [p for s, p in enumerate(result.peers) if p is not None and s != out]
    assert len(peers) == players - 1
    for peer in peers:
        final = peer.final
        first = final.game.history[0]
        if not first[out] == first[tied] == max(first):
            pytest.fail(f"round 1 no longer ties {out} and {tied}: {first} (pick another seed)")
        assert final.phase is Phase.OVER and final.unopposed and out in final.dropped
        assert final.round.number == 2 and {out, tied} <= final.round.seats
        assert final.game.result is not None and final.game.result.winners == (tied,)
        assert final.game.result.termination is Termination.ABSENCE
        # The extra round is void: not recorded, nobody's total moves, no second result.
        assert final.game.history == (first,) and final.game.result.totals == first
        assert len([e for e in peer.events(tied) if e.kind is Kind.RESULT]) == 1
        assert final.violations == ()
    # The audit of every log reaches the same end, by the same fold.
    audited = audit_logs(result).state
    assert audited is not None and audited.unopposed
    assert audited.game.result == peers[0].final.game.result
    assert {p.final.digest() for p in peers} == {audited.digest()}
    return result


@pytest.mark.parametrize(
    ("players", "seed", "faults", "out", "tied"),
    [
        # A crash for good 6 s into the extra round: voted out silent, the other tied wins.
        (3, 0, Faults(crashes=(Crash(2, 25.0, None),)), 2, 1),
        (4, 8, Faults(crashes=(Crash(2, 25.0, None),)), 2, 1),
        # Two players: a fork 3 s into the extra round, voted out on proof by the other.
        (2, 16, Faults(equivocations=(Equivocation(1, 28.0, frozenset({0})),)), 1, 0),
    ],
    ids=["three-crash", "four-crash", "two-fork"],
)
def test_tiebreak_unopposed_a_tied_member_voted_out_in_the_extra_round_ends_the_game(
    players: int, seed: int, faults: Faults, out: int, tied: int
) -> None:
    _play(players, seed, faults, out=out, tied=tied)


def test_tiebreak_unopposed_a_tied_member_voted_out_before_the_deal_wakes_to_the_end() -> None:
    # Seat 2 sleeps from just after its round-1 result for 60 s: voted out withholding its
    # commit, before the deal; the tie is decided there. Waking, it ends where the others
    # end (on main it stayed in its result phase, the others playing the round out).
    faults = Faults(freezes=(Freeze(2, 18.835, 60.0),))
    result = _play(3, 0, faults, out=2, tied=1)
    asleep = result.peers[2]
    assert asleep is not None and asleep.final.phase is Phase.OVER
    assert asleep.final.round.playing == frozenset()  # (never dealt)
    assert asleep.final.digest() == result.peers[1].final.digest()  # type: ignore[union-attr]


def test_tiebreak_unopposed_a_shuffle_deal_of_the_two_tied_losing_one() -> None:
    # The dealerless shuffle (docs/shuffle.md §8.4): the extra round's deal is the two tied
    # members'; seat 1 sleeps from just after its round-1 result, voted out before its stages,
    # and a deal of two losing one ends the game (`_undealt`, `_end_unplayable`): the tie is
    # the one left's, as in a commit game (before this, a tie shared, `abandoned`).
    faults = Faults(freezes=(Freeze(1, 19.145, 60.0),))
    _play(3, 2, faults, out=1, tied=2, deal=Deal.SHUFFLE)


class _Shown:
    def __init__(self) -> None:
        self.views: list[TableView] = []

    def show(self, view: TableView) -> None:
        self.views.append(view)


def test_tiebreak_unopposed_the_end_says_why_the_tie_is_won() -> None:
    # The person left in the tie reads why the game ended mid-round (terminal; the page and
    # `nertz match` show the same `decided_by` words), and the audit's replay says it too.
    faults = Faults(equivocations=(Equivocation(1, 28.0, frozenset({0})),))
    result = run_recorded(SimConfig(players=2, seed=16, faults=faults, record_effects=True))
    peer = result.peers[0]
    assert peer is not None and peer.final.unopposed
    front = _Shown()
    table = TableController(("Ann", "Bea"), 0, front, symbols=False)
    for now, seat, effect in result.effects:
        if seat == 0:
            table.notice(effect, peer.final, now)
    said = [m for m in table.tracker.messages if "the tie" in m]
    assert said == [
        "you win the tie: the other tied players are out of the extra round (voted out, or "
        "forfeiting it) — the game is over"
    ], table.tracker.messages
    table.draw(peer, result.time)
    text = render(front.views[-1]).text()
    total = peer.final.game.history[0][0]
    line = f"game over — winner: Ann (seat 0) with {total} (tied: the others tied dropped out)"
    assert line in text, text
    sources = [LogSource.from_bytes(f"p{s + 1}.log", d) for s, d in enumerate(log_files(result))]
    replay = load(sources)
    assert isinstance(replay, Replay)
    (end,) = [step for step in replay.steps if any("game over" in n for n in step.notes)]
    assert end.event.kind is Kind.DROP and end.event.seat == 0
    winner = peer.final.spec.members[0].name
    assert end.notes[-1] == (
        f"game over: {winner} wins the tie, the other tied players out of the extra round; the "
        "round void"
    )
