"""A person's pace on the round's board (issue 15; docs/pace.md says how to read it).

The figure is worked out from a real simulated game's final fold: the player's signed moves
of the round and its cards kept in the lake, over the round's length on the caller's clock.
"""

from __future__ import annotations

from dataclasses import replace

from p2p_nertz.protocol import state as st
from p2p_nertz.rules import MoveKind, Rules
from p2p_nertz.sim import SimConfig, run
from p2p_nertz.ui import Tracker, render
from p2p_nertz.ui.view import Pace, TableView
from p2p_nertz.web.model import view_json


def _finished_game() -> st.GameState:
    result = run(SimConfig(players=2, seed=4, rules=Rules(target=None, rounds=1)))
    assert result.finished and result.violations == []
    peer = next(p for p in result.peers if p is not None)
    return peer.final


def test_the_board_shows_the_players_pace_over_the_round_from_its_signed_moves() -> None:
    final = _finished_game()
    (number, _, _) = final.history[0]
    score = final.scores[0]
    rs = next(r for r in (*final.past_rounds, final.round) if r.number == number)
    paced = {MoveKind.TURN, MoveKind.CARD, MoveKind.SLIDE, MoveKind.ROTATE}
    moves = sum(1 for e in rs.log if e is not None and e[0] == 1 and e[1].kind in paced)
    passes = sum(1 for e in rs.log if e is not None and e[0] == 1 and e[1].kind is MoveKind.PASS)
    assert passes > 0  # (this game has passes, which the pace leaves out)
    cards = next(p.lake for p in score.players if p.seat == 1)
    assert moves > 0 and cards > 0

    tracker = Tracker(tuple(m.name for m in final.spec.members), seat=1, symbols=False)
    tracker.notice(st.PhaseChanged(st.Phase.PLAY, number), final, now=1000.0)
    tracker.notice(st.RoundEnded(number, score.status, 0, score.callers), final, now=1090.0)
    tracker.notice(st.RoundScored(number, score, final.game.totals), final, now=1091.0)

    board = tracker.board
    assert board is not None
    assert board.pace == Pace(moves=moves, cards=cards, seconds=90.0)
    assert board.pace.moves_per_minute == moves * 60 / 90
    assert board.pace.cards_per_minute == cards * 60 / 90

    view = TableView(
        table=final.round.table, seat=1, names=tracker.names, rules=final.rules, board=board
    )
    text = render(view, 80, 24, symbols=False).text()
    assert f"your 1:30 round: {moves * 60 / 90:.0f} moves/min" in text, text
    assert f"{cards * 60 / 90:.1f} cards/min to the lake · " in text, text
    assert f"bots: {board.pace.bot_option}" in text, text
    # The page's board says it too, and what the option is for.
    sent = view_json(view)["board"]["pace"]
    assert sent.startswith(f"your 1:30 round: {moves * 60 / 90:.0f} moves/min · "), sent
    assert sent.endswith(f" to the lake · bots to play next: {board.pace.bot_option}"), sent


def test_the_pace_line_says_its_time_is_the_rounds_and_fits_80_columns_whole() -> None:
    # A newcomer read "(4:44)" and could not tell what it timed; "(round 4:44)" pushed the
    # line of a slow player (--practice) past 80 columns, where the board cuts it. The
    # longest lines a person makes: a 19:59 round at level 1's pace less a move (--practice),
    # and at three-figure moves (--speed 10).
    final = _finished_game()
    (number, _, _) = final.history[0]
    tracker = Tracker(tuple(m.name for m in final.spec.members), seat=1, symbols=False)
    tracker.notice(st.PhaseChanged(st.Phase.PLAY, number), final, now=1000.0)
    score = final.scores[0]
    tracker.notice(st.RoundEnded(number, score.status, 0, score.callers), final, now=2199.0)
    tracker.notice(st.RoundScored(number, score, final.game.totals), final, now=2200.0)
    assert tracker.board is not None
    for pace in (Pace(moves=459, cards=239, seconds=1199.0), Pace(4796, 599, 1199.0)):
        board = replace(tracker.board, pace=pace)
        view = TableView(
            table=final.round.table, seat=1, names=tracker.names, rules=final.rules, board=board
        )
        lines = render(view, 80, 24, symbols=False).text().splitlines()
        line = next(x for x in lines if x.startswith("your 19:59 round: "))
        assert line.rstrip().endswith(f"bots: {pace.bot_option}"), line
        assert "cards/min to the lake · " in line, line
    assert Pace(moves=459, cards=239, seconds=1199.0).bot_option == "--practice"
    assert Pace(4796, 599, 1199.0).bot_option == "--speed 10"


def test_without_the_rounds_time_or_for_a_spectator_no_pace_is_shown() -> None:
    final = _finished_game()
    (number, _, _) = final.history[0]
    score = final.scores[0]
    names = tuple(m.name for m in final.spec.members)
    untimed = Tracker(names, seat=0)
    untimed.notice(st.RoundScored(number, score, final.game.totals), final)
    spectator = Tracker(names, seat=None)
    spectator.notice(st.PhaseChanged(st.Phase.PLAY, number), final, now=0.0)
    spectator.notice(st.RoundEnded(number, score.status, 0, score.callers), final, now=60.0)
    spectator.notice(st.RoundScored(number, score, final.game.totals), final, now=61.0)
    for tracker in (untimed, spectator):
        assert tracker.board is not None and tracker.board.pace is None
    view = TableView(table=None, seat=0, names=names, rules=final.rules, board=untimed.board)
    assert view_json(view)["board"]["pace"] is None


def test_the_bot_speed_to_pick_is_the_fastest_level_no_faster_than_the_person() -> None:
    # Level n: about 24 n moves a minute (Pacing: 2500/n ms a move).
    assert Pace(moves=23, cards=5, seconds=60.0).bot_speed == 1  # slower than level 1: still 1
    assert Pace(moves=24, cards=5, seconds=60.0).bot_speed == 1
    assert Pace(moves=47, cards=5, seconds=60.0).bot_speed == 1
    assert Pace(moves=48, cards=5, seconds=60.0).bot_speed == 2
    assert Pace(moves=500, cards=5, seconds=60.0).bot_speed == 10
    # Slower than level 1, the bots to play next are the ones that wait: --practice.
    assert Pace(moves=23, cards=5, seconds=60.0).bot_option == "--practice"
    assert Pace(moves=24, cards=5, seconds=60.0).bot_option == "--speed 1"
    assert Pace(moves=48, cards=5, seconds=60.0).bot_option == "--speed 2"
    assert Pace(moves=5, cards=1, seconds=0.0).moves_per_minute == 0.0
