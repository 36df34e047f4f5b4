"""The game (RULES.md: the game) and the validated Rules of every variant."""

from __future__ import annotations

from typing import Any

import pytest
from helpers_rules import IDLE, script, table_from

from p2p_nertz.errors import InvalidRulesError, NertzError
from p2p_nertz.rules import (
    Game,
    GameResult,
    PlayerScore,
    RoundScore,
    RoundStatus,
    Rules,
    Termination,
)
from p2p_nertz.rules.game import MAX_EXTRA_ROUNDS


def play_rounds(game: Game, *rounds: tuple[int, ...]) -> Game:
    for scores in rounds:
        assert not game.over, f"the game ended before {scores}"
        game = game.record(scores)
    return game


# -- the game to a target -----------------------------------------------------------------


def test_game_plays_rounds_until_someone_reaches_the_target() -> None:
    game = Game(Rules(), players=3)
    game = play_rounds(game, (30, 20, 10), (40, 35, -4), (20, 10, 5))
    assert not game.over and game.result is None
    assert game.totals == (90, 65, 11)
    assert game.seats_next_round() == (0, 1, 2)
    game = game.record((9, 50, 0))
    assert game.over
    assert game.result == GameResult((1,), (99, 115, 11), Termination.TARGET)


def test_game_highest_total_wins_not_the_first_past_the_target() -> None:
    game = play_rounds(Game(Rules(target=50), players=2), (45, 40), (10, 30))
    assert game.result == GameResult((1,), (55, 70), Termination.TARGET)


def test_game_over_refuses_more_rounds() -> None:
    game = Game(Rules(target=10), players=2).record((12, 7))
    assert game.teams_next_round() == () and game.seats_next_round() == ()
    with pytest.raises(ValueError, match="game is over"):
        game.record((1, 1))


def test_game_refuses_scores_for_the_wrong_number_of_teams() -> None:
    with pytest.raises(ValueError, match="3 scores for 2 teams"):
        Game(Rules(), players=2).record((1, 2, 3))


def test_game_refuses_a_table_it_cannot_seat() -> None:
    with pytest.raises(InvalidRulesError):
        Game(Rules(), players=0)
    with pytest.raises(InvalidRulesError):
        Game(Rules(), players=9)
    with pytest.raises(InvalidRulesError):
        Game(Rules(pairs=True), players=5)


def test_game_records_a_round_score() -> None:
    table = table_from(
        "N: - | 1: 9C | 2: 8C | 3: 7C | 4: 6C", IDLE, rules=Rules(target=5, nerts_bonus=5)
    )
    table, _ = script(table, "0 X")
    game = Game(table.rules, players=2).record(table.score())
    assert game.history == ((5, -2),)
    assert game.result == GameResult((0,), (5, -2), Termination.TARGET)


def test_game_single_player_plays_to_the_target() -> None:
    game = play_rounds(Game(Rules(target=20), players=1), (8,), (-3,), (16,))
    assert game.result == GameResult((0,), (21,), Termination.TARGET)


# -- the tiebreak at the target -----------------------------------------------------------


def test_tiebreak_equal_totals_decided_by_the_last_round() -> None:
    game = play_rounds(Game(Rules(), players=3), (60, 80, 10), (50, 30, 5))
    assert game.totals == (110, 110, 15)
    assert game.result == GameResult((0,), (110, 110, 15), Termination.LAST_ROUND)


def test_tiebreak_extra_round_between_the_tied_teams_only() -> None:
    game = play_rounds(Game(Rules(), players=3), (60, 60, 90), (45, 45, 10))
    assert game.totals == (105, 105, 100)
    assert not game.over
    assert game.teams_next_round() == (0, 1)
    assert game.seats_next_round() == (0, 1)
    # Seat 2 sits the extra round out: whatever it would score is not counted.
    game = game.record((3, 8, 40))
    assert game.playing[-1] == (0, 1)
    assert game.history[-1] == (3, 8, 0)
    assert game.result == GameResult((1,), (108, 113, 100), Termination.EXTRA_ROUND)


def test_tiebreak_extra_rounds_repeat_while_still_tied() -> None:
    game = play_rounds(Game(Rules(target=10), players=2), (10, 10), (4, 4), (7, 7))
    assert not game.over and game.seats_next_round() == (0, 1)
    game = game.record((2, 6))
    assert game.result is not None
    assert game.result.winners == (1,)
    assert game.result.termination is Termination.EXTRA_ROUND


def test_tiebreak_shared_win_after_max_extra_rounds() -> None:
    game = play_rounds(Game(Rules(target=10), players=3), (12, 12, 0))
    for _ in range(MAX_EXTRA_ROUNDS - 1):
        game = game.record((5, 5, 0))
        assert not game.over
    game = game.record((5, 5, 0))
    assert len(game.history) == 1 + MAX_EXTRA_ROUNDS
    assert game.result == GameResult(
        (0, 1), (12 + 5 * MAX_EXTRA_ROUNDS, 12 + 5 * MAX_EXTRA_ROUNDS, 0), Termination.SHARED
    )


def test_tiebreak_nobody_left_to_play_the_extra_round_keeps_the_tie() -> None:
    """The tied players have all left the game: the win is shared, not a round with no seat."""
    game = play_rounds(Game(Rules(target=None, rounds=1), players=3), (5, 5, -3))
    assert game.teams_next_round() == (0, 1)
    shared = game.share_tie()
    assert shared.result == GameResult((0, 1), (5, 5, -3), Termination.SHARED)
    assert shared.history == game.history
    with pytest.raises(ValueError, match="no extra round"):
        shared.share_tie()
    with pytest.raises(ValueError, match="no extra round"):
        Game(Rules(target=None, rounds=1), players=3).share_tie()


def test_tiebreak_narrows_a_three_way_tie_step_by_step() -> None:
    game = play_rounds(Game(Rules(target=10), players=4), (10, 10, 10, 3))
    assert game.seats_next_round() == (0, 1, 2)
    game = game.record((6, 6, 1, 50))
    assert game.seats_next_round() == (0, 1)
    game = game.record((2, 1, 9, 9))
    assert game.result is not None and game.result.winners == (0,)
    assert game.history[-1] == (2, 1, 0, 0)


def test_tiebreak_in_pairs_seats_the_tied_teams() -> None:
    game = Game(Rules(pairs=True, target=20), players=6)
    assert game.teams == 3
    game = game.record((25, 25, 5))
    assert game.teams_next_round() == (0, 1)
    assert game.seats_next_round() == (0, 1, 2, 3)
    game = game.record((4, 3, 30))
    assert game.result == GameResult((0,), (29, 28, 5), Termination.EXTRA_ROUND)


# -- Racing Demon -------------------------------------------------------------------------


def test_racing_demon_plays_a_fixed_number_of_rounds() -> None:
    game = Game(Rules(target=None, rounds=3), players=2)
    game = play_rounds(game, (500, 0), (0, 1))  # no target: a big lead does not end it
    assert not game.over
    game = game.record((1, 2))
    assert game.result == GameResult((0,), (501, 3), Termination.ROUNDS)


def test_racing_demon_ties_use_the_same_tiebreak() -> None:
    game = Game(Rules(target=None, rounds=2), players=2)
    game = play_rounds(game, (10, 5), (3, 8))
    assert game.result == GameResult((1,), (13, 13), Termination.LAST_ROUND)
    game = play_rounds(Game(Rules(target=None, rounds=1), players=2), (4, 4))
    assert game.seats_next_round() == (0, 1)
    game = game.record((0, 1))
    assert game.result == GameResult((1,), (4, 5), Termination.EXTRA_ROUND)


# -- a tie-break round you did not play (rules.md: the game, a house rule; session 41) ------


def extra_round(game: Game, totals: tuple[int, ...], *, absent: tuple[int, ...] = ()) -> RoundScore:
    """The round score a table gives: ``totals`` per seat, the seats ``absent`` and the seats
    not due (outside the tie) not dealt in (``played=False``, 0), as ``Table.score`` has it."""
    due = set(game.seats_next_round())
    players = []
    for seat, total in enumerate(totals):
        if seat in absent or seat not in due:
            players.append(PlayerScore(seat, 0, 0, 2, played=False))
        else:  # (a round score of any sign: the lake's +1s, a false call's penalty)
            players.append(PlayerScore(seat, max(total, 0), 0, 2, penalty=max(-total, 0)))
    teams = tuple(game.rules.team_of(s) for s in range(game.players))
    return RoundScore(tuple(players), teams, RoundStatus.BLOCKED)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_tiebreak_a_member_voted_out_before_the_extra_round_loses_it(players: int) -> None:
    # four40's real games: the liar voted out before the extra round scored 0 there and won
    # it over the honest member playing alone to blocked with Nerts cards left; or tied it
    # again. Now whoever played it wins, whatever it scored.
    tied = play_rounds(
        Game(Rules(target=None, rounds=1), players=players), (9, 9) + (1,) * (players - 2)
    )
    assert tied.teams_next_round() == (0, 1)
    for alone in (-14, 0, 3):
        game = tied.record(extra_round(tied, (alone, 0) + (0,) * (players - 2), absent=(1,)))
        assert game.playing[-1] == (0,)
        assert game.result == GameResult((0,), game.totals, Termination.ABSENCE)
        assert game.totals[:2] == (9 + alone, 9)
        assert game.result.winning_total == 9 + alone


def test_tiebreak_a_member_dealt_in_then_gone_forfeits_the_extra_round_and_loses_it() -> None:
    # Dropped after the deal (gone silent, or caught): it forfeits the round, −26; the one
    # who played it out wins even below that (false calls), at every table size from two.
    for players in (2, 3, 4):
        tied = play_rounds(Game(Rules(target=10), players=players), (12, 12) + (3,) * (players - 2))
        scores = extra_round(tied, (-30, -26) + (0,) * (players - 2))
        game = tied.record(scores, forfeit=(1,))
        assert game.result == GameResult(
            (0,), (-18, -14, *(3,) * (players - 2)), Termination.ABSENCE
        )
        # Without the forfeit both played it out: the better score wins, as ever.
        assert tied.record(scores).result == GameResult(
            (1,), (-18, -14, *(3,) * (players - 2)), Termination.EXTRA_ROUND
        )


def test_tiebreak_a_member_voted_out_and_readmitted_for_the_extra_round_plays_it() -> None:
    # Readmitted at the round's start (docs/protocol.md §9.8), dealt in: it plays the round
    # and the scores decide; voted out again in it (forfeit) or before its deal, it loses.
    tied = play_rounds(Game(Rules(target=None, rounds=1), players=3), (7, 7, 2))
    back = tied.record(extra_round(tied, (-4, 5, 0)))
    assert back.result == GameResult((1,), (3, 12, 2), Termination.EXTRA_ROUND)
    again = tied.record(extra_round(tied, (-4, 5, 0)), forfeit=(1,))
    assert again.result == GameResult((0,), (3, 12, 2), Termination.ABSENCE)


def test_tiebreak_nobody_played_the_extra_round_the_scores_decide_as_ever() -> None:
    tied = play_rounds(Game(Rules(target=10), players=3), (11, 11, 0))
    # Both absent: 0 and 0, tied still; the next extra round is between the same two.
    game = tied.record(extra_round(tied, (0, 0, 0), absent=(0, 1)))
    assert game.playing[-1] == () and not game.over and game.teams_next_round() == (0, 1)
    # Both forfeiting: the better forfeit (fewer false calls) wins, as before the rule.
    game = tied.record(extra_round(tied, (-26, -31, 0)), forfeit=(0, 1))
    assert game.result == GameResult((0,), (-15, -20, 0), Termination.EXTRA_ROUND)
    # Absent at 0 against a forfeit: neither played; the 0 wins.
    game = tied.record(extra_round(tied, (-26, 0, 0), absent=(1,)), forfeit=(0,))
    assert game.result == GameResult((1,), (-15, 11, 0), Termination.EXTRA_ROUND)


def test_tiebreak_three_tied_the_absent_one_out_the_two_who_played_go_on() -> None:
    tied = play_rounds(Game(Rules(target=10), players=4), (10, 10, 10, 3))
    assert tied.teams_next_round() == (0, 1, 2)
    # Seat 2 absent at 0, the two who played tied below it: they play the next one alone.
    game = tied.record(extra_round(tied, (-2, -2, 0, 0), absent=(2,)))
    assert not game.over and game.teams_next_round() == (0, 1)
    assert game.seats_next_round() == (0, 1)
    game = game.record(extra_round(game, (4, 1, 0, 0)))
    assert game.result == GameResult((0,), (12, 9, 10, 3), Termination.EXTRA_ROUND)
    # Only one of the three played: it wins at once, the others' scores aside.
    game = tied.record(extra_round(tied, (0, -6, 0, 0), absent=(0, 2)))
    assert game.result == GameResult((1,), (10, 4, 10, 3), Termination.ABSENCE)


def test_tiebreak_a_tie_with_a_member_who_left_and_one_voted_out() -> None:
    # The leaver forfeits the game, out at once (rules.md: leaving the game); the member
    # voted out stays in the running but loses the extra round to the one who played it.
    tied = play_rounds(Game(Rules(target=20), players=3), (21, 21, 21))
    game = tied.leave(0)
    assert not game.over and game.teams_next_round() == (1, 2)
    game = game.record(extra_round(game, (0, 0, -8), absent=(1,)))
    assert game.result == GameResult((2,), (21, 21, 13), Termination.ABSENCE)
    # Left and voted out alone in the tie: the one voted out wins, no round played.
    assert play_rounds(Game(Rules(target=20), players=3), (21, 21, 3)).leave(0).result == (
        GameResult((1,), (21, 21, 3), Termination.TARGET)
    )


def test_tiebreak_in_pairs_one_partner_playing_is_enough() -> None:
    tied = play_rounds(Game(Rules(pairs=True, target=20), players=4), (25, 25))
    assert tied.seats_next_round() == (0, 1, 2, 3)
    # Seat 0 voted out, seat 1 plays for team 0: both teams played, the scores decide.
    game = tied.record(extra_round(tied, (0, 6, 3, 2), absent=(0,)))
    assert game.playing[-1] == (0, 1)
    assert game.result == GameResult((0,), (31, 30), Termination.EXTRA_ROUND)
    # Seat 1 forfeits, seat 0 plays: still played.
    game = tied.record(extra_round(tied, (1, -26, 3, 2)), forfeit=(1,))
    assert game.result == GameResult((1,), (0, 30), Termination.EXTRA_ROUND)
    # Both partners of team 1 voted out (or one out, one forfeiting): team 0 wins it.
    for absent, forfeit in (((2, 3), ()), ((2,), (3,))):
        game = tied.record(extra_round(tied, (-9, -4, 0, -26), absent=absent), forfeit=forfeit)
        assert game.result is not None and game.result.winners == (0,)
        assert game.result.termination is Termination.ABSENCE


def test_tiebreak_racing_demon_a_tie_broken_the_same_way() -> None:
    tied = play_rounds(Game(Rules(target=None, rounds=2), players=3), (5, 5, 0), (4, 4, 2))
    assert tied.teams_next_round() == (0, 1)
    game = tied.record(extra_round(tied, (0, -3, 0), absent=(0,)))
    assert game.result == GameResult((1,), (9, 6, 2), Termination.ABSENCE)


def test_tiebreak_the_shared_end_comes_only_after_extra_rounds_both_played() -> None:
    tied = play_rounds(Game(Rules(target=10), players=2), (12, 12))
    game = tied
    for _ in range(MAX_EXTRA_ROUNDS):
        assert not game.over
        game = game.record(extra_round(game, (-2, -2)))
    assert game.result == GameResult((0, 1), (2, 2), Termination.SHARED)
    # Tied in every extra round but the last, where one was voted out: the other wins it.
    game = tied
    for _ in range(MAX_EXTRA_ROUNDS - 1):
        game = game.record(extra_round(game, (-2, -2)))
    game = game.record(extra_round(game, (-2, 0), absent=(1,)))
    assert game.result == GameResult((0,), (2, 4), Termination.ABSENCE)
    # Nobody played any of them: shared as before.
    game = tied
    for _ in range(MAX_EXTRA_ROUNDS):
        game = game.record(extra_round(game, (0, 0), absent=(0, 1)))
    assert game.result == GameResult((0, 1), (12, 12), Termination.SHARED)


def test_tiebreak_regulation_rounds_do_not_ask_who_played() -> None:
    # A member voted out of a regular round scores 0 there and its total counts as it
    # stands (rules.md: leaving the game): only an extra round asks who played it.
    game = Game(Rules(target=None, rounds=1), players=2)
    game = game.record(extra_round(game, (-3, 0), absent=(1,)))
    assert game.result == GameResult((1,), (-3, 0), Termination.ROUNDS)


# -- a tie-break round decided before its end (rules.md: the game; session 42) ------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_tiebreak_unopposed_one_tied_member_left_to_play_wins_at_once(players: int) -> None:
    # The others tied voted out before the deal or during the round (or forfeiting it): the
    # one left able to play it out has won the tie there, the round void (not recorded).
    rest = (1,) * (players - 2)
    tied = play_rounds(Game(Rules(target=None, rounds=1), players=players), (9, 9, *rest))
    others = tuple(range(2, players))  # (not tied: they sit the round out, whatever they do)
    for able in ((0, *others), (0,)):
        game = tied.unopposed(able)
        assert game.result == GameResult((0,), (9, 9, *rest), Termination.ABSENCE)
        assert game.history == tied.history and game.playing == tied.playing
        assert game.result.winning_total == 9
    # Both still able: nothing decided; nobody able: nothing decided here either (a round
    # nobody can play keeps the tie, `share_tie`; all forfeiting, the scores decide).
    assert tied.unopposed(range(players)) == tied
    assert tied.unopposed(others) == tied and tied.unopposed(()) == tied


def test_tiebreak_unopposed_decides_nothing_outside_an_extra_round() -> None:
    # Regulation rounds: a member voted out scores 0 there and the game goes on.
    game = Game(Rules(target=50), players=3).record((10, 10, 3))
    assert game.tied == () and game.unopposed((0,)) == game
    # Over already: unchanged.
    over = Game(Rules(target=10), players=2).record((12, 3))
    assert over.unopposed((1,)) == over


def test_tiebreak_unopposed_three_tied_one_out_the_two_able_go_on() -> None:
    tied = play_rounds(Game(Rules(target=10), players=4), (10, 10, 10, 3))
    assert tied.tied == (0, 1, 2)
    assert tied.unopposed((0, 1, 3)) == tied  # (two tied teams still able: they play)
    game = tied.unopposed((2, 3))
    assert game.result == GameResult((2,), (10, 10, 10, 3), Termination.ABSENCE)


def test_tiebreak_unopposed_in_pairs_one_partner_able_is_enough() -> None:
    tied = play_rounds(Game(Rules(pairs=True, target=20), players=4), (25, 25))
    assert tied.tied == (0, 1)
    assert tied.unopposed((1, 2)) == tied  # (one partner of each team)
    game = tied.unopposed((0, 1))  # (both partners of team 1 out)
    assert game.result == GameResult((0,), (25, 25), Termination.ABSENCE)


def test_tiebreak_unopposed_in_a_later_extra_round_and_after_a_leave() -> None:
    # Tied again after an extra round both played: the next one is decided the same way.
    tied = play_rounds(Game(Rules(target=10), players=3), (12, 12, 0), (2, 2, 0))
    assert tied.tied == (0, 1) and len(tied.history) == 2
    game = tied.unopposed((1, 2))
    assert game.result == GameResult((1,), (14, 14, 0), Termination.ABSENCE)
    # A tied member who left is out of contention (rules.md: leaving the game): the leave
    # decides it already, as ever; three tied, one left, one voted out: the third wins.
    three = play_rounds(Game(Rules(target=10), players=4), (11, 11, 11, 2))
    left = three.leave(0)
    assert left.tied == (1, 2)
    assert left.unopposed((1, 3)).result == GameResult((1,), (11, 11, 11, 2), Termination.ABSENCE)


# -- Rules --------------------------------------------------------------------------------


def test_rules_defaults_are_the_rules_md_defaults() -> None:
    r = Rules()
    assert (r.draw, r.work_piles, r.nerts_bonus, r.nerts_card_penalty) == (3, 4, 0, 2)
    assert (r.target, r.rounds, r.false_call_penalty) == (100, None, 5)
    assert (r.rotate_alone, r.pairs, r.jokers) == (False, False, 0)
    assert not r.racing_demon
    assert (r.deck_size, r.stock_size) == (52, 35)
    assert repr(r) == "Rules()"
    assert r.to_dict() == {}


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"draw": 2}, "draw must be 1 or 3"),
        ({"draw": True}, "draw must be int, not bool"),
        ({"draw": 3.0}, "draw must be int, not float"),
        ({"work_piles": 3}, "work_piles must be 4, 5 or 6"),
        ({"work_piles": 7}, "work_piles must be 4, 5 or 6"),
        ({"work_piles": "5"}, "work_piles must be int, not str"),
        ({"nerts_bonus": 15}, "nerts_bonus must be 0, 5, 10 or 25"),
        ({"nerts_bonus": False}, "nerts_bonus must be int, not bool"),
        ({"nerts_card_penalty": 3}, "nerts_card_penalty must be 1 or 2"),
        ({"nerts_card_penalty": 0}, "nerts_card_penalty must be 1 or 2"),
        ({"target": 0}, "target must be 1..10000"),
        ({"target": 10_001}, "target must be 1..10000"),
        ({"target": True}, "target must be int, not bool"),
        ({"target": None}, "give exactly one of target"),
        ({"rounds": 3}, "give exactly one of target"),
        ({"target": None, "rounds": 0}, "rounds must be 1..1000"),
        ({"target": None, "rounds": 1001}, "rounds must be 1..1000"),
        ({"false_call_penalty": -1}, "false_call_penalty must be 0..100"),
        ({"false_call_penalty": 101}, "false_call_penalty must be 0..100"),
        ({"rotate_alone": 1}, "rotate_alone must be bool, not int"),
        ({"pairs": "yes"}, "pairs must be bool, not str"),
        ({"jokers": 3}, "jokers must be 0, 1 or 2"),
        ({"jokers": True}, "jokers must be int, not bool"),
    ],
)
def test_rules_validation_refuses_bad_values(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(InvalidRulesError) as info:
        Rules(**kwargs)
    assert isinstance(info.value, ValueError) and isinstance(info.value, NertzError)
    assert fragment in str(info.value), str(info.value)


def test_rules_are_keyword_only_and_frozen() -> None:
    with pytest.raises(TypeError):
        Rules(1)  # type: ignore[misc]
    r = Rules()
    with pytest.raises(AttributeError):
        r.draw = 1  # type: ignore[misc]


EXAMPLES = [
    Rules(),
    Rules(draw=1, work_piles=5, nerts_bonus=10),
    Rules(target=None, rounds=5),
    Rules(target=50, nerts_card_penalty=1, false_call_penalty=0),
    Rules(rotate_alone=True, pairs=True, jokers=2, work_piles=6, nerts_bonus=25),
]


@pytest.mark.parametrize("rules", EXAMPLES, ids=repr)
def test_rules_to_dict_from_dict_round_trip(rules: Rules) -> None:
    data = rules.to_dict()
    assert Rules.from_dict(data) == rules
    assert all(getattr(rules, k) == v for k, v in data.items())
    assert all(getattr(Rules(), k) != v for k, v in data.items())


@pytest.mark.parametrize("rules", EXAMPLES, ids=repr)
def test_rules_repr_pastes_back(rules: Rules) -> None:
    assert eval(repr(rules), {"Rules": Rules}) == rules


def test_rules_from_dict_rounds_alone_means_racing_demon() -> None:
    r = Rules.from_dict({"rounds": 4})
    assert r.racing_demon and r.target is None and r.rounds == 4


def test_rules_from_dict_refuses_unknown_fields_and_bad_values() -> None:
    with pytest.raises(InvalidRulesError, match=r"unknown rules field.*colour, speed"):
        Rules.from_dict({"speed": 3, "colour": "red"})
    with pytest.raises(InvalidRulesError, match="draw must be 1 or 3"):
        Rules.from_dict({"draw": 2})


@pytest.mark.parametrize(
    ("kwargs", "deck", "stock"),
    [({}, 52, 35), ({"work_piles": 6}, 52, 33), ({"jokers": 2, "work_piles": 5}, 54, 36)],
)
def test_rules_deck_and_stock_sizes(kwargs: dict[str, Any], deck: int, stock: int) -> None:
    r = Rules(**kwargs)
    assert (r.deck_size, r.stock_size) == (deck, stock)


def test_rules_seats_and_teams() -> None:
    Rules().validate_players(1)
    Rules().validate_players(8)
    for n in (0, 9):
        with pytest.raises(InvalidRulesError, match="1 to 8"):
            Rules().validate_players(n)
    with pytest.raises(InvalidRulesError, match="even number"):
        Rules(pairs=True).validate_players(3)
    with pytest.raises(InvalidRulesError, match="two against two"):
        Rules(pairs=True).validate_players(2)
    assert [Rules().team_of(s) for s in range(4)] == [0, 1, 2, 3]
    assert [Rules(pairs=True).team_of(s) for s in range(6)] == [0, 0, 1, 1, 2, 2]


# -- a player who leaves forfeits the game (rules.md: leaving the game) -------------------


def test_leaver_forfeits_an_ended_early_game_at_two_players_even_when_ahead() -> None:
    # At 0-0 and far ahead alike: the one who stayed wins, never the one who walked out.
    fresh = Game(Rules(), players=2)
    assert fresh.leave(1).ended_early().result == GameResult((0,), (0, 0), Termination.ABANDONED)
    ahead = play_rounds(fresh, (40, 3))
    assert ahead.ended_early().result == GameResult((0,), (40, 3), Termination.ABANDONED)
    assert ahead.leave(0).ended_early().result == GameResult((1,), (40, 3), Termination.ABANDONED)


def test_leaver_frozen_total_still_highest_at_three_and_four_players_does_not_win() -> None:
    # Racing Demon: the others play on after the leave; the leaver's total is frozen (it
    # scores nothing more) and still the highest at the end, yet the best of the others wins.
    for players in (3, 4):
        game = play_rounds(Game(Rules(target=None, rounds=2), players=players), (60,) * players)
        game = game.leave(0)
        assert not game.over and game.contenders == tuple(range(1, players))
        game = game.record((0, -2) + (-6,) * (players - 2))
        assert game.result is not None and game.result.winners == (1,)
        assert game.result.totals[:2] == (60, 58) and max(game.result.totals) == 60
        assert game.result.winning_total == 58  # (the table's words: "winner: … with 58")
        assert game.result.termination is Termination.ROUNDS
    # To a target: tied on totals with a player who left, the other wins at once.
    tied = play_rounds(Game(Rules(target=10), players=3), (12, 12, 1))
    assert tied.teams_next_round() == (0, 1)
    assert tied.leave(1).result == GameResult((0,), (12, 12, 1), Termination.TARGET)


def test_leaver_everyone_but_one_left_the_last_one_wins() -> None:
    for players in (2, 3, 4):
        game = play_rounds(Game(Rules(), players=players), tuple(range(50, 50 - players, -1)))
        for seat in range(players - 1):
            game = game.leave(seat)
        last = players - 1
        assert game.contenders == (last,)
        result = game.ended_early().result
        assert result is not None and result.winners == (last,)
        assert result.totals[last] < max(result.totals)


def test_leaver_in_pairs_forfeits_for_the_team_and_a_dropped_member_stays_in() -> None:
    game = play_rounds(Game(Rules(pairs=True), players=4), (30, 10))
    assert game.leave(0).contenders == (1,)
    assert game.leave(0).ended_early().result == GameResult((1,), (30, 10), Termination.ABANDONED)
    # Nobody left (an abandon, a member dropped: it did not choose): the highest total wins.
    assert game.ended_early().result == GameResult((0,), (30, 10), Termination.ABANDONED)


def test_leaver_after_the_game_is_over_changes_nothing() -> None:
    over = play_rounds(Game(Rules(target=10), players=2), (12, 3))
    assert over.result is not None
    assert over.leave(0) == over and over.leave(0).out == ()
