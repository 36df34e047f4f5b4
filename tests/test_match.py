"""The in-process match: bots play whole games on one lake, deterministically."""

from __future__ import annotations

import pytest
from helpers_rules import check_invariants

from p2p_nertz.errors import InvalidRulesError
from p2p_nertz.match import MatchResult, Player, RoundResult, play_match, play_round, round_decks
from p2p_nertz.rules import Card, Game, Move, RoundStatus, Rules, Table, Termination, new_deck


def assert_consistent(result: MatchResult, players: int) -> None:
    """The game adds up: every round ended properly, kept every card, and the totals are the
    sum of the rounds."""
    game = result.game
    assert game.over and game.result is not None
    assert len(result.rounds) == len(game.history)
    totals = [0] * game.teams
    for number, (rnd, recorded) in enumerate(zip(result.rounds, game.history, strict=True), 1):
        assert rnd.number == number
        assert rnd.table.status in (RoundStatus.NERTS, RoundStatus.BLOCKED)
        assert rnd.score == rnd.table.score()
        check_invariants(rnd.table)
        assert len(rnd.table.tableaux) == players
        for team, points in enumerate(recorded):
            totals[team] += points
    assert tuple(totals) == game.totals == game.result.totals
    best = max(totals)
    assert all(totals[w] == best for w in game.result.winners)


def replay(rules: Rules, seed: int, rnd: RoundResult, players: int) -> Table:
    """Replay a round's transcript on a freshly dealt table."""
    table = Table.deal(rules, round_decks(rules, seed, rnd.number, players))
    for line in rnd.transcript:
        lamport, seat, move = line.split()[:3]
        table, _ = table.play(int(seat), Move.parse(move), int(lamport))
    return table


def test_match_four_bots_play_to_100_and_have_a_result() -> None:
    result = play_match(Rules(), [Player()] * 4, seed=2024)
    assert_consistent(result, 4)
    game = result.game
    assert game.result is not None
    assert max(game.totals) >= 100
    assert game.result.termination in (
        Termination.TARGET,
        Termination.LAST_ROUND,
        Termination.EXTRA_ROUND,
        Termination.SHARED,
    )
    assert len(result.rounds) >= 2
    assert any(r.table.status is RoundStatus.NERTS for r in result.rounds)


@pytest.mark.parametrize("players", range(1, 9))
def test_match_seats_one_to_eight_players(players: int) -> None:
    result = play_match(Rules(), [Player()] * players, seed=players)
    assert_consistent(result, players)
    assert len(result.game.totals) == players


def test_match_refuses_a_table_it_cannot_seat() -> None:
    with pytest.raises(InvalidRulesError):
        play_match(Rules(), [], seed=1)
    with pytest.raises(InvalidRulesError):
        play_match(Rules(), [Player()] * 9, seed=1)
    with pytest.raises(InvalidRulesError):
        play_match(Rules(pairs=True), [Player()] * 3, seed=1)


def test_player_validates_speed_and_strategy() -> None:
    with pytest.raises(ValueError, match="speed"):
        Player(speed=0)
    with pytest.raises(ValueError, match="speed"):
        Player(speed=11)
    with pytest.raises(ValueError, match=r"unknown strategy 'nobody'.*greedy"):
        play_round(Rules(), [Player("nobody")], seed=1)


def test_match_mixed_speeds_fast_bots_move_sooner() -> None:
    players = [Player(speed=1), Player(speed=10), Player(speed=5)]
    rnd = play_round(Rules(), players, seed=11, record=True)
    times: list[list[int]] = [[], [], []]
    for line in rnd.transcript:
        lamport, seat = line.split()[:2]
        times[int(seat)].append(int(lamport))
    # The tenth move of each: speed 1 is about 2.5 s a move, speed 10 a quarter second.
    tenth = [t[9] for t in times]
    assert tenth[1] * 4 < tenth[0], tenth
    assert tenth[1] < tenth[2] < tenth[0], tenth
    assert min(len(t) for t in times) >= 10
    check_invariants(rnd.table)


def test_match_same_seed_same_game_byte_for_byte() -> None:
    rules = Rules(target=60, jokers=1)
    players = [Player(speed=3), Player(speed=7), Player(speed=5)]
    a = play_match(rules, players, seed=99, record=True)
    b = play_match(rules, players, seed=99, record=True)
    assert [r.transcript for r in a.rounds] == [r.transcript for r in b.rounds]
    assert [r.digest() for r in a.rounds] == [r.digest() for r in b.rounds]
    assert [str(r.table) for r in a.rounds] == [str(r.table) for r in b.rounds]
    assert a.game == b.game
    assert all(r.transcript for r in a.rounds)
    c = play_match(rules, players, seed=100, record=True)
    assert [r.digest() for r in c.rounds] != [r.digest() for r in a.rounds]
    assert a.rounds[0].transcript != c.rounds[0].transcript


def test_match_seed_may_be_bytes() -> None:
    a = play_round(Rules(), [Player()] * 2, seed=b"seed", record=True)
    b = play_round(Rules(), [Player()] * 2, seed=b"seed", record=True)
    assert a.digest() == b.digest()


def test_match_transcript_replays_to_the_same_table() -> None:
    rules = Rules(draw=1, work_piles=5)
    players = [Player(speed=4), Player(speed=9)]
    rnd = play_round(rules, players, seed=5, record=True)
    assert rnd.transcript
    assert rnd.actions == len(rnd.transcript) + rnd.fumbles
    table = replay(rules, 5, rnd, 2)
    assert table == rnd.table
    assert table.lake.digest() == rnd.table.lake.digest()


def test_match_transcript_records_races_and_the_end() -> None:
    rnd = play_round(Rules(), [Player(speed=10)] * 6, seed=3, record=True)
    lost = [line for line in rnd.transcript if line.endswith(" lost")]
    assert len(lost) == rnd.lost_races
    assert rnd.lost_races > 0  # six fast bots on one lake race for foundations
    last = rnd.transcript[-1]
    assert last.endswith(rnd.table.status.value)


def test_round_decks_are_seeded_per_round_and_seat() -> None:
    rules = Rules(jokers=2)
    decks = round_decks(rules, 7, 1, 3)
    assert decks == round_decks(rules, 7, 1, 3)
    assert len(set(decks)) == 3
    assert decks != round_decks(rules, 7, 2, 3)
    assert decks != round_decks(rules, 8, 1, 3)
    for deck in decks:
        assert sorted(deck, key=Card.sort_key) == list(new_deck(2))


def test_match_racing_demon_plays_the_fixed_rounds() -> None:
    rules = Rules(target=None, rounds=3)
    result = play_match(rules, [Player()] * 3, seed=4)
    assert_consistent(result, 3)
    assert result.game.result is not None
    if result.game.result.termination is Termination.ROUNDS:
        assert len(result.rounds) == 3
    else:  # a tie after three rounds: the tiebreak
        assert len(result.rounds) >= 3


def test_match_pairs_teams_score_together() -> None:
    rules = Rules(pairs=True, nerts_bonus=10, target=80)
    result = play_match(rules, [Player()] * 4, seed=12)
    assert_consistent(result, 4)
    assert len(result.game.totals) == 2
    for rnd in result.rounds:
        seat_totals = [p.total for p in rnd.score.players]
        assert rnd.score.team_totals == (
            seat_totals[0] + seat_totals[1],
            seat_totals[2] + seat_totals[3],
        )
        bonuses = [p.bonus for p in rnd.score.players]
        # The bonus once per calling team, however many partners called.
        assert sum(bonuses[0:2]) in (0, 10) and sum(bonuses[2:4]) in (0, 10)
        assert (sum(bonuses) > 0) == bool(rnd.score.callers)
    assert any(rnd.score.callers for rnd in result.rounds)


def test_match_with_every_variant_at_once() -> None:
    rules = Rules(
        draw=1,
        work_piles=6,
        nerts_bonus=5,
        nerts_card_penalty=1,
        target=50,
        false_call_penalty=3,
        rotate_alone=True,
        jokers=2,
    )
    result = play_match(rules, [Player(speed=s) for s in (2, 6, 10)], seed=21)
    assert_consistent(result, 3)


def test_match_on_round_sees_every_round_and_the_game_so_far() -> None:
    seen: list[tuple[int, Game]] = []
    result = play_match(
        Rules(target=50), [Player()] * 2, seed=6, on_round=lambda r, g: seen.append((r.number, g))
    )
    assert [n for n, _ in seen] == list(range(1, len(result.rounds) + 1))
    assert [len(g.history) for _, g in seen] == [n for n, _ in seen]
    assert seen[-1][1] == result.game


def test_play_round_seats_only_the_active_players() -> None:
    rnd = play_round(Rules(), [Player()] * 3, seed=8, active=[True, False, True], record=True)
    assert all(line.split()[1] != "1" for line in rnd.transcript)
    assert not rnd.score.players[1].played
    assert rnd.score.players[1].total == 0
    assert rnd.table.tableaux[1] == Table.deal(Rules(), round_decks(Rules(), 8, 1, 3)).tableaux[1]
