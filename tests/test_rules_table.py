"""One round at one table: everyone stuck, Nerts calls, pairs, jokers, scoring, legal moves."""

from __future__ import annotations

import pytest
from helpers_rules import (
    IDLE,
    assert_illegal,
    check_invariants,
    pile_is_valid,
    play,
    recount,
    script,
    table_from,
)

from p2p_nertz.errors import IllegalMoveError, InvalidRulesError
from p2p_nertz.rules import (
    NERTS_PILE_SIZE,
    Card,
    FoundationId,
    Move,
    Outcome,
    Pile,
    RoundStatus,
    Rules,
    Table,
    Tableau,
    format_cards,
    shuffled_deck,
)

EMPTY_NERTS = "N: - | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: 2D 3D | W: -"


# -- everyone stuck -----------------------------------------------------------------------


def test_everyone_stuck_rotates_only_when_every_active_player_passed() -> None:
    table = table_from(
        "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 2C 3C 4C | W: 5D 6D",
        "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9H | W: 10H JH",
    )
    table, (p0,) = script(table, "0 P")
    assert table.stuck == (True, False)
    assert not p0.rotated
    assert format_cards(table.tableaux[0].stock) == "2C 3C 4C"
    table, (p1,) = script(table, "1 P")
    assert p1.rotated and p1.ended is None
    assert table.stuck == (False, False)
    assert table.rotations == 1
    # The stock goes onto the waste, the waste is turned over, its top card to the bottom.
    assert format_cards(table.tableaux[0].stock) == "5D 2C 3C 4C 6D"
    assert format_cards(table.tableaux[1].stock) == "10H 9H JH"
    assert table.tableaux[0].waste == table.tableaux[1].waste == ()


def test_rotation_with_an_empty_stock_moves_the_old_top_to_the_bottom() -> None:
    table = table_from(
        "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: - | W: 2C 3C 4C 5C", rules=Rules()
    )
    table, (p,) = script(table, "0 P")
    assert p.rotated
    # Turned over, the waste is 5C 4C 3C 2C with 2C on top; the 2C goes to the bottom, so the
    # next turn shows a new group: 3C 4C 5C.
    assert format_cards(table.tableaux[0].stock) == "2C 5C 4C 3C"
    table, _ = script(table, "0 S")
    assert table.tableaux[0].top(Pile.WASTE) == Card.parse("5C")


def test_a_move_withdraws_stuck() -> None:
    table = table_from(IDLE, IDLE)
    table, _ = script(table, "0 P", "0 S")
    assert table.stuck == (False, False)
    table, (p,) = script(table, "1 P")
    assert not p.rotated
    assert table.stuck == (False, True)


def test_a_call_withdraws_stuck() -> None:
    table = table_from(IDLE, IDLE)
    table, _ = script(table, "0 P", "0 X")
    assert table.stuck == (False, False)


def test_inactive_seats_are_not_waited_for() -> None:
    table = table_from(IDLE, IDLE, IDLE, active=[True, False, True])
    table, (_, p) = script(table, "0 P", "2 P")
    assert p.rotated
    assert table.tableaux[1] == table_from(IDLE).tableaux[0]  # the inactive seat is untouched
    assert_illegal(table, 1, "S", "not playing this round")
    assert list(table.legal_moves(1)) == []


def test_blocked_round_after_a_whole_cycle_of_fruitless_rotations() -> None:
    # Nothing can play: red work cards, a King in each Nerts pile, red stock cards, no aces.
    table = table_from(IDLE, IDLE)
    assert {str(m) for m in table.legal_moves(0)} == {"S", "P", "X"}
    table, plays = script(table, "0 P", "1 P")
    assert plays[-1].rotated and table.status is RoundStatus.PLAYING
    table, _ = script(table, "0 S", "1 S")  # turning the stock plays nothing
    table, plays = script(table, "0 P", "1 P")
    # Two stock cards: two rotations are a whole cycle.
    assert plays[-1].rotated
    assert plays[-1].ended is RoundStatus.BLOCKED
    assert table.status is RoundStatus.BLOCKED and table.over
    assert list(table.legal_moves(0)) == []
    assert_illegal(table, 0, "S", "the round is over (blocked)")
    score = table.score()
    assert score.status is RoundStatus.BLOCKED
    assert [p.total for p in score.players] == [-2, -2]
    assert score.callers == ()


def test_blocked_round_at_once_when_no_stock_is_left() -> None:
    table = table_from("N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: - | W: -")
    table, (p,) = script(table, "0 P")
    assert p.ended is RoundStatus.BLOCKED


def test_a_card_played_resets_the_rotation_count() -> None:
    table = table_from(IDLE, "N: KS | 1: 10C | 2: 2H | 3: 4D | 4: 4H | S: 9S 9H | W: -")
    table, _ = script(table, "0 P", "1 P", "1 S")
    assert table.rotations == 1  # turning the stock plays no card
    assert table.tableaux[1].top(Pile.WASTE) == Card.parse("9H")
    table, (p,) = script(table, "1 W>1")
    assert table.rotations == 0
    assert p.card == Card.parse("9H")


def test_work_pile_shuffles_do_not_reset_the_rotation_count() -> None:
    table = table_from(IDLE, "N: KS | 1: 10C | 2: 9H | 3: 4D | 4: 4H | S: 9S 9D | W: -")
    table, _ = script(table, "0 P", "1 P", "1 2>1")
    assert table.rotations == 1


def test_rotate_alone_is_refused_without_the_variant() -> None:
    table = table_from(IDLE, IDLE)
    table, _ = script(table, "0 P")
    assert_illegal(table, 0, "R", "rotate only when everyone is stuck")
    assert Move.rotate() not in table.legal_moves(0)


def test_rotate_alone_variant_needs_a_pass_first() -> None:
    rules = Rules(rotate_alone=True)
    table = table_from(
        "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H 10H | W: JH", IDLE, rules=rules
    )
    assert Move.rotate() not in table.legal_moves(0)
    assert_illegal(table, 0, "R", "(pass first)")
    table, _ = script(table, "0 P")
    assert Move.rotate() in table.legal_moves(0)
    other = table.tableaux[1]
    table, (p,) = script(table, "0 R")
    assert not p.rotated  # only this seat rotated
    assert format_cards(table.tableaux[0].stock) == "10H 9D 9H"  # only the top card moved
    assert format_cards(table.tableaux[0].waste) == "JH"
    assert table.tableaux[1] == other
    assert table.stuck == (False, False)
    assert Move.rotate() not in table.legal_moves(0)  # pass again before the next rotation


# -- calling Nerts ------------------------------------------------------------------------


def test_call_with_an_empty_nerts_pile_ends_the_round_at_t_star() -> None:
    table = table_from(EMPTY_NERTS, IDLE, rules=Rules(nerts_bonus=10))
    table, (p,) = script(table, "0 X @7")
    assert p.ended is RoundStatus.NERTS and not p.false_call
    assert table.status is RoundStatus.NERTS and table.over
    assert table.cut == 7
    assert table.callers == (0,)
    # Up to T* a card in the air still counts: the stock here, no pass, no call.
    assert list(table.legal_moves(1)) == [Move.turn()]
    score = table.score()
    assert [pl.bonus for pl in score.players] == [10, 0]
    assert [pl.total for pl in score.players] == [10, -2]
    assert score.callers == (0,)


def test_call_is_optional_play_may_go_on() -> None:
    table = table_from("N: - | 1: 9C | 2: 8C | 3: 7C | 4: 6C | W: 2S", IDLE, lake="0S: AS/0")
    assert table.can_call(0)
    assert Move.parse("W>L") in table.legal_moves(0)
    table, _ = script(table, "0 W>L", "0 X")
    assert table.score().players[0].total == 2


def test_moves_at_t_star_still_count_later_ones_are_refused() -> None:
    table = table_from(
        EMPTY_NERTS,
        "N: KD 2S | 1: 9C | 2: 8C | 3: 7C | 4: 6C | W: 3S",
        lake="0S: AS/0",
    )
    table, _ = script(table, "0 X @5")
    # A card in the air at T* completes its move.
    table, (p,) = script(table, "1 N>L @5")
    assert p.resolution is not None and p.resolution.outcome is Outcome.KEPT
    assert table.lake.height(FoundationId.parse("0S")) == 2
    assert table.status is RoundStatus.NERTS
    # Anything later is refused, and changes nothing.
    assert_illegal(table, 1, "W>L", "the round is over (nerts)", lamport=6)
    table, (q,) = script(table, "1 S")  # default time after a call: T* itself
    assert q.lamport == 5
    assert_illegal(table, 1, "S", "the round is over", lamport=6)
    assert [pl.total for pl in table.score().players] == [1, -2 + 1]


def test_a_move_before_the_clock_is_refused() -> None:
    table = table_from(IDLE, IDLE)
    table, _ = script(table, "0 S @5")
    assert_illegal(table, 1, "S", "before the table's clock 5", lamport=4)


def test_a_simultaneous_second_caller_also_gets_the_bonus() -> None:
    table = table_from(EMPTY_NERTS, EMPTY_NERTS, IDLE, rules=Rules(nerts_bonus=25))
    table, plays = script(table, "1 X @9", "0 X @9")
    assert plays[0].ended is RoundStatus.NERTS
    assert table.callers == (1, 0)
    assert table.cut == 9
    assert [pl.bonus for pl in table.score().players] == [25, 25, 0]
    assert_illegal(table, 0, "X", "already called", lamport=9)
    assert_illegal(table, 2, "X", "the round is over", lamport=10)


@pytest.mark.parametrize(("penalty", "expected"), [(5, -5), (7, -7), (0, 0)])
def test_false_call_is_penalised_and_play_goes_on(penalty: int, expected: int) -> None:
    rules = Rules(false_call_penalty=penalty, nerts_bonus=10)
    table = table_from("N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: -", IDLE, rules=rules)
    table, (p,) = script(table, "0 X")
    assert p.false_call and p.ended is None
    assert table.status is RoundStatus.PLAYING
    assert table.false_calls == (1, 0)
    assert table.callers == ()
    table, _ = script(table, "0 S", "1 S")  # play goes on
    me = table.score().players[0]
    assert (me.penalty, me.bonus) == (-expected, 0)
    assert me.total == -2 + expected


def test_false_calls_add_up() -> None:
    table = table_from(IDLE, IDLE)
    table, _ = script(table, "0 X", "0 X", "1 S")
    assert table.false_calls == (2, 0)
    assert [pl.total for pl in table.score().players] == [-2 - 10, -2]


# -- pairs --------------------------------------------------------------------------------


def test_pairs_partner_with_an_empty_nerts_pile_lets_the_team_call() -> None:
    rules = Rules(pairs=True, nerts_bonus=10)
    table = table_from(EMPTY_NERTS, IDLE, IDLE, IDLE, rules=rules, lake="0S: AS/0")
    assert table.partner(1) == 0 and table.partner(2) == 3
    assert table.can_call(1) and table.can_call(0)
    assert not table.can_call(2) and not table.can_call(3)
    table, (p,) = script(table, "1 X")
    assert p.ended is RoundStatus.NERTS and not p.false_call
    score = table.score()
    assert score.teams == (0, 0, 1, 1)
    # Team 0: seat 0 has the ace (+1) and no Nerts cards; seat 1 has a King left (-2) and the
    # bonus, once for the team.
    assert [pl.total for pl in score.players] == [1, -2 + 10, -2, -2]
    assert score.team_totals == (1 - 2 + 10, -4)


def test_pairs_bonus_once_per_team_when_both_partners_call() -> None:
    rules = Rules(pairs=True, nerts_bonus=5)
    table = table_from(EMPTY_NERTS, EMPTY_NERTS, IDLE, IDLE, rules=rules)
    table, _ = script(table, "0 X @3", "1 X @3")
    score = table.score()
    assert sum(pl.bonus for pl in score.players) == 5
    assert score.team_totals == (5, -4)
    assert recount(table)[1] == list(score.team_totals)


def test_pairs_the_other_team_calling_is_a_false_call() -> None:
    rules = Rules(pairs=True)
    table = table_from(EMPTY_NERTS, IDLE, IDLE, IDLE, rules=rules)
    table, (p,) = script(table, "2 X")
    assert p.false_call
    assert table.score().team_totals == (-2, -4 - 5)


def test_pairs_needs_an_even_number_of_players() -> None:
    with pytest.raises(InvalidRulesError, match="even number"):
        table_from(IDLE, IDLE, IDLE, rules=Rules(pairs=True))


def test_no_partner_without_pairs() -> None:
    table = table_from(EMPTY_NERTS, IDLE)
    assert table.partner(1) is None
    assert not table.can_call(1)


# -- jokers -------------------------------------------------------------------------------

JOKERS = Rules(jokers=2)


def test_joker_declared_onto_the_lake_as_an_ace() -> None:
    table = table_from("N: JK1 | 1: 9C | 2: 8C | 3: 7C | 4: 6C", IDLE, rules=JOKERS)
    assert Move.parse("N>L@0S*1=AS") in table.legal_moves(0)
    table, (p,) = script(table, "0 N>L=AS")
    assert p.resolution is not None and p.resolution.outcome is Outcome.KEPT
    joker_foundation = FoundationId.parse("0S*1")
    assert str(table.lake) == "0S*1: JK1=AS/0"
    assert table.lake.height(joker_foundation) == 1
    assert table.score().players[0].lake == 1
    # Anyone builds on it like any foundation.
    table = Table.from_tableaux(
        JOKERS,
        [table.tableaux[0], table_from("N: 2S | 1: 9C | 2: 8C | 3: 7C | 4: 6C").tableaux[0]],
        table.lake,
    )
    table, _ = script(table, "1 N>L")
    assert str(table.lake) == "0S*1: JK1=AS/0 2S/1"


def test_joker_declared_onto_the_lake_as_the_next_card() -> None:
    table = table_from(
        IDLE, "N: KD | 1: 9C | 2: 8C | 3: 7C | 4: 6C | W: JK2", rules=JOKERS, lake="0H: AH/0 2H/0"
    )
    listed = {str(m) for m in table.legal_moves(1) if m.is_lake}
    assert "W>L@0H=3H" in listed
    assert Move.parse("W>L=3H") in table.legal_moves(1)
    before = table
    table, (p,) = script(table, "1 W>L=3H")
    assert str(table.lake) == "0H: AH/0 2H/0 JK2=3H/1"
    assert p.card == Card.parse("JK2")
    assert table.lake.targets(Card.parse("4H")) == (FoundationId.parse("0H"),)
    check_invariants(table, before)


def test_joker_to_the_lake_must_be_declared_and_fit() -> None:
    table = table_from("N: JK1 | 1: 9C | 2: 8C | 3: 7C | 4: 6C", rules=JOKERS, lake="0H: AH/0")
    assert_illegal(table, 0, "N>L", "declare the joker")
    assert_illegal(table, 0, "N>L=5H", "fits on no foundation")
    table_5h, (lost,) = script(table, "0 N>L@0H=5H")  # a claim at height h-2 loses
    assert lost.resolution is not None and lost.resolution.outcome is Outcome.LOST
    assert table_5h.tableaux == table.tableaux and table_5h.lake == table.lake
    assert_illegal(table, 0, "N>L@0H=2S", "cannot go on the HEARTS foundation")
    assert Move.parse("N>L=5H") not in table.legal_moves(0)
    # Only a joker is declared.
    plain = table_from("N: 2H | 1: 9C | 2: 8C | 3: 7C | 4: 6C", lake="0H: AH/0")
    assert_illegal(plain, 0, "N>L=2H", "nothing to declare")


def test_joker_on_a_work_pile_waits_undeclared() -> None:
    table = table_from("N: JK1 | 1: 9S | 2: 8C | 3: 7C | 4: 6C", rules=JOKERS)
    table, _ = script(table, "0 N>1")
    assert str(table.tableaux[0].work[0][-1]) == "JK1"
    assert pile_is_valid(table.tableaux[0].work[0])


def test_joker_on_a_work_pile_is_fixed_by_the_card_played_on_it() -> None:
    table = table_from("N: 7C | 1: 9S JK1 | 2: 8C | 3: 2C | 4: 6C", rules=JOKERS)
    listed = {str(m) for m in table.legal_moves(0)}
    # The joker must fit on the 9S (a red 8) and take the 7C: the red eights.
    assert {"N>1=8D", "N>1=8H"} <= listed
    assert "N>1" not in listed
    err = assert_illegal(table, 0, "N>1", "say what the joker on pile 1 becomes")
    assert "=8D or =8H" in str(err)
    assert_illegal(table, 0, "N>1=8S", "say what the joker")
    table, _ = script(table, "0 N>1=8H")
    assert format_cards(table.tableaux[0].work[0]) == "9S JK1=8H 7C"
    # Fixed: it is an eight of hearts from now on.
    table2 = table_from("N: 7D | 1: 9S JK1=8H | 2: 8C | 3: 2C | 4: 6C", rules=JOKERS)
    assert_illegal(table2, 0, "N>1", "7D does not fit on JK1=8H")


def test_joker_slid_under_a_pile() -> None:
    table = table_from("N: JK1 | 1: 7S 6H | 2: - | 3: 2C | 4: 6C", rules=JOKERS)
    listed = {str(m) for m in table.legal_moves(0)}
    assert {"N>_1=8D", "N>_1=8H"} <= listed
    assert_illegal(table, 0, "N>_1", "say what the joker becomes")
    table, _ = script(table, "0 N>_1=8D")
    assert format_cards(table.tableaux[0].work[0]) == "JK1=8D 7S 6H"


def test_joker_run_slid_under_must_fit_both_ways() -> None:
    # The joker on the 9S must be a red 8; slid under a 5H it would have to be a black 6.
    table = table_from("N: 4C | 1: 9S JK1 | 2: 5H | 3: - | 4: 8C", rules=JOKERS)
    listed = {str(m) for m in table.legal_moves(0)}
    assert not any(m.startswith("1:2>_2") for m in listed), listed
    assert_illegal(table, 0, "1:2>_2=6S", "cannot be slid under 5H")
    # Under a black 7 it fits both ways: 9S, a red 8, 7C.
    table = table_from("N: 4C | 1: 9S JK1 | 2: 7C | 3: - | 4: 8C", rules=JOKERS)
    assert {"1:2>_2=8D", "1:2>_2=8H"} <= {str(m) for m in table.legal_moves(0)}
    table, _ = script(table, "0 1:2>_2=8D")
    assert format_cards(table.tableaux[0].work[1]) == "9S JK1=8D 7C"


def test_jokers_in_a_dealt_table_are_conserved() -> None:
    table = Table.deal(JOKERS, [shuffled_deck(b"j0", 2), shuffled_deck(b"j1", 2)])
    check_invariants(table)


# -- scoring ------------------------------------------------------------------------------


@pytest.mark.parametrize("bonus", [0, 5, 10, 25])
def test_score_bonus_for_the_caller(bonus: int) -> None:
    table = table_from(EMPTY_NERTS, IDLE, rules=Rules(nerts_bonus=bonus))
    table, _ = script(table, "0 X")
    assert table.score().players[0].total == bonus


@pytest.mark.parametrize(("penalty", "expected"), [(2, -2 * 3 + 2), (1, -1 * 3 + 2)])
def test_score_counts_lake_cards_and_nerts_cards(penalty: int, expected: int) -> None:
    rules = Rules(nerts_card_penalty=penalty)
    table = table_from(
        "N: 5D 9H 4C | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: 2D 3D | W: 10D",
        "N: KS | 1: 2S | 2: 2H | 3: 4D | 4: 4H | S: - | W: -",
        rules=rules,
        lake="0S: AS/0 2S/1 3S/0; 1H: AH/1",
    )
    score = table.score()
    me = score.players[0]
    assert (me.lake, me.nerts_left, me.nerts_card_penalty) == (2, 3, penalty)
    assert me.total == expected
    # Stock, waste and work piles score nothing.
    assert score.players[1].total == 2 - penalty
    assert str(score) == f"playing 0:{expected:+d} 1:{2 - penalty:+d}"


@pytest.mark.parametrize("penalty", [1, 2])
def test_forfeit_score_is_a_full_nerts_pile_and_no_lake_card(penalty: int) -> None:
    rules = Rules(nerts_card_penalty=penalty, false_call_penalty=5)
    table = table_from(
        "N: 5D 9H 4C | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: 2D 3D | W: 10D",
        "N: KS | 1: 2S | 2: 2H | 3: 4D | 4: 4H | S: - | W: -",
        rules=rules,
        lake="0S: AS/0 2S/1 3S/0; 1H: AH/1",
    )
    table, _ = script(table, "0 X")  # a false call: three cards are left
    forfeit = table.forfeit_score(0)
    assert (forfeit.lake, forfeit.nerts_left, forfeit.bonus) == (0, NERTS_PILE_SIZE, 0)
    # What it cannot win back by forfeiting: its false calls still cost it.
    assert forfeit.total == -penalty * NERTS_PILE_SIZE - 5
    assert table.forfeit_score(1).total == -penalty * NERTS_PILE_SIZE
    assert forfeit.total < table.score().players[0].total


def test_score_of_a_seat_sitting_out() -> None:
    table = table_from(IDLE, IDLE, active=[False, True])
    score = table.score()
    assert not score.players[0].played and score.players[0].total == 0
    assert score.players[1].total == -2
    assert str(score) == "playing 1:-2"


# -- legal moves --------------------------------------------------------------------------

POSITIONS = [
    ("N: 2C 8H | 1: 7S 6H | 2: - | 3: 9S 8D | 4: 10H | S: 3H 4S 5C | W: 9C 2S", "0S: AS/0"),
    ("N: JK1 | 1: 9S JK2 | 2: 7C | 3: - | 4: 8C | W: 2H", "0H: AH/0; 1S: AS/1 2S/1"),
    ("N: AS | 1: KD | 2: QC | 3: JH | 4: 10S | 5: 9D | 6: - | S: 2C | W: 3C 4C", ""),
    ("N: 8H | 1: JK2 | 2: - | 3: 2C | 4: 6C | S: 9S | W: JK1", "1C: AC/1"),
]


@pytest.mark.parametrize(("tableau", "lake"), POSITIONS)
def test_legal_moves_every_listed_move_plays(tableau: str, lake: str) -> None:
    piles = tableau.count(":") - 1 - ("S:" in tableau) - ("W:" in tableau)
    rules = Rules(jokers=2, work_piles=piles)
    table = table_from(
        tableau,
        IDLE.replace("| 4: 4H", "| 4: 4H" + " | 5: 5S | 6: 5C" * (piles == 6)),
        rules=rules,
        lake=lake,
    )
    moves = list(table.legal_moves(0))
    assert len(moves) == table.legal_moves(0).count() == len(set(moves))
    for move in moves:
        assert move in table.legal_moves(0)
        after, p = table.play(0, move)
        assert p.move == move
        if p.resolution is not None:
            assert p.resolution.kept
        check_invariants(after, table)


def test_legal_moves_in_accepts_a_lake_move_with_no_foundation() -> None:
    table = table_from("N: AS | 1: 9C 2H | 2: 8C | 3: 7C | 4: 6C | W: 5D", lake="1H: AH/1")
    legal = table.legal_moves(0)
    assert Move.parse("N>L") in legal
    assert Move.parse("1>L") in legal
    assert Move.parse("1>L@1H") in legal
    assert Move.parse("1>L@0H") not in legal
    assert Move.parse("W>L") not in legal
    assert "N>L" not in legal  # only moves are members
    assert bool(legal)
    assert "N>L@0S" in repr(legal)


def test_legal_moves_lists_call_pass_and_turn() -> None:
    table = table_from(IDLE)
    assert [str(m) for m in table.legal_moves(0)] == ["S", "P", "X"]


def test_legal_moves_is_empty_once_the_round_is_blocked() -> None:
    blocked = table_from("N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: - | W: -")
    blocked, _ = script(blocked, "0 P")
    assert blocked.status is RoundStatus.BLOCKED
    assert not blocked.legal_moves(0)
    assert len(blocked.legal_moves(0)) == 0


@pytest.mark.parametrize(
    ("seat", "move", "fragment", "lamport"),
    [
        (0, "N>1", "does not fit", None),
        (0, "W>L", "fits on no foundation", None),
        (0, "N>L@0S", "cannot go on", None),
        (0, "W>L@0D", "does not fit on foundation 0D", None),
        (0, "R", "rotate only", None),
        (0, "S", "before the table's clock", 2),
        (5, "S", "no seat 5", None),
        (0, "5>L", "no work pile 5", None),
        (0, "N>_1", "needs an empty work pile", None),
    ],
)
def test_table_play_never_changes_the_table_on_illegal_move(
    seat: int, move: str, fragment: str, lamport: int | None
) -> None:
    table = table_from(
        "N: 6D | 1: 7H | 2: 2C | 3: 3C | 4: 4C | S: 5S | W: 9D", IDLE, lake="0S: AS/0"
    )
    table, _ = script(table, "1 S @3")
    snapshot = (str(table), repr(table), table)
    assert_illegal(table, seat, move, fragment, lamport)
    assert (str(table), repr(table), table) == snapshot


def test_table_play_defaults_the_lamport_time_to_the_clock_plus_one() -> None:
    table = table_from(IDLE, IDLE)
    table, p = play(table, 0, "S")
    assert p.lamport == table.clock == 1
    table, p = play(table, 1, "S", 10)
    assert table.clock == 10
    table, p = play(table, 0, "S", 10)  # the same time is allowed: simultaneous moves
    assert p.lamport == 10


def test_play_reports_the_card_moved() -> None:
    table = table_from("N: 2C 8H | 1: 7S 6H | 2: - | 3: 9S 8D | 4: 10H")
    _, p = play(table, 0, "1:2>2")
    assert p.card == Card.parse("7S")
    _, p = play(table, 0, "P")
    assert p.card is None


def test_table_from_checks_the_work_pile_count() -> None:
    with pytest.raises(IllegalMoveError, match="5 work piles"):
        table_from(IDLE, rules=Rules(work_piles=5))
    with pytest.raises(ValueError, match="active"):
        table_from(IDLE, active=[True, True])


def test_table_str_shows_every_tableau_and_the_lake() -> None:
    table = table_from(IDLE, IDLE, lake="0S: AS/0")
    assert str(table).splitlines() == ["playing clock=0", f"0> {IDLE}", f"1> {IDLE}", "L> 0S: AS/0"]


# -- a move played on the cards it shows (the fold's reveals) -------------------------------

FACE_DOWN = "N: ?? 3H | 1: 2D | 2: - | 3: 4D | 4: 4C | S: ?? ?? ?? ?? | W: -"
FILLED_IN = "N: 5S 3H | 1: 2D | 2: - | 3: 4D | 4: 4C | S: ?? 9C 8H 7S | W: -"


@pytest.mark.parametrize(
    "move", ["S", "N>2", "N>_4", "N>L", "N>L@0H", "N>L@1H", "N>L@2H", "1>4", "P", "X", "W>_2", "R"]
)
def test_play_on_the_cards_a_move_shows_is_play_on_the_table_with_them(move: str) -> None:
    # The fold fills in the cards a move turns up (its event's reveals) and plays the move on
    # them without making the table in between: the same next table and play, or the same
    # refusal, as on that table; and a refusal changes nothing.
    lake = "0H: AH/0 2H/1; 1H: AH/1 2H/1 3H/1"  # 3H kept on 0H, lost on 1H; no 2H
    table = table_from(FACE_DOWN, IDLE, lake=lake)
    shown = Tableau.parse(FILLED_IN)
    with_them = table.with_tableau(0, shown)
    try:
        expected = with_them.play(0, Move.parse(move), 3)
    except IllegalMoveError as exc:
        with pytest.raises(IllegalMoveError) as refused:
            table.play(0, Move.parse(move), 3, shown=shown)
        assert str(refused.value) == str(exc)
        assert table == table_from(FACE_DOWN, IDLE, lake=lake)
        return
    assert table.play(0, Move.parse(move), 3, shown=shown) == expected
