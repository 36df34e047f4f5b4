"""The rule cases of issue 15, as scenarios written in the notation (RULES.md, updated).

Each one failed on the engine before the fix: rotate alone, the everyone-stuck rotation, a
stale pass, a card slid under a lone joker, and the library's answers (a whole table's
notation, a claim at height h-2, the moves left after a Nerts call, a seat with no card move).
"""

from __future__ import annotations

import pytest
from helpers_rules import IDLE, assert_illegal, check_invariants, script, table_from

from p2p_nertz.errors import NotationError
from p2p_nertz.rules import (
    Claim,
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

# The example: a seat that can play nothing but its stock and waste.
STOCK_AND_WASTE = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H 6D | W: 6H 8D"


# -- rotate alone -------------------------------------------------------------------------


def test_rotate_alone_moves_only_the_top_card_of_the_stock_to_the_bottom() -> None:
    table = table_from(STOCK_AND_WASTE, IDLE, rules=Rules(rotate_alone=True))
    table, (_, rotated) = script(table, "0 P", "0 R")
    assert not rotated.rotated  # nobody else's stock moved
    assert str(table.tableaux[0]).endswith("S: 6D 9D 9H | W: 6H 8D")
    assert table.tableaux[1] == Tableau.parse(IDLE)


def test_rotate_alone_needs_two_cards_in_the_stock() -> None:
    rules = Rules(rotate_alone=True)
    table = table_from(
        "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D | W: 6H 8D", IDLE, rules=rules
    )
    table, _ = script(table, "0 P")
    assert Move.rotate() not in table.legal_moves(0)
    assert_illegal(table, 0, "R", "turn it (S) instead")


# -- everyone stuck -----------------------------------------------------------------------


def test_everyone_stuck_puts_the_stock_on_the_waste_turns_it_over_then_top_to_bottom() -> None:
    table = table_from(STOCK_AND_WASTE, IDLE)
    table, (_, last) = script(table, "0 P", "1 P")
    assert last.rotated
    # 6D 9H 9D go onto the waste in the order turned (6D first): 6H 8D 6D 9H 9D; turned
    # over, the stock is 9D 9H 6D 8D 6H (6H on top); the 6H goes to the bottom.
    assert str(table.tableaux[0]).endswith("S: 6H 9D 9H 6D 8D | W: -")
    assert format_cards(table.tableaux[1].stock) == "9H 9D"


def test_everyone_stuck_keeps_the_cycle_order_but_for_the_card_moved() -> None:
    # Turning one card at a time shows the cycle: before the rotation 6D 9H 9D 6H 8D (the
    # stock, then the waste turned over); after it the same cycle from 8D, with 6H last.
    rules = Rules(draw=1)
    table = table_from(STOCK_AND_WASTE, IDLE, rules=rules)
    table, _ = script(table, "0 P", "1 P")
    shown = []
    for _ in range(5):
        table, _ = script(table, "0 S")
        top = table.tableaux[0].top(Pile.WASTE)
        assert top is not None
        shown.append(str(top))
    assert shown == ["8D", "6D", "9H", "9D", "6H"]


# -- a stale pass -------------------------------------------------------------------------

# Seat 1 can play its 2S to the lake on seat 0's ace of spades.
TWO_OF_SPADES = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: 2S"


def test_a_pass_before_another_seats_lake_card_no_longer_counts() -> None:
    table = table_from(IDLE, TWO_OF_SPADES, lake="0S: AS/0")
    table, (_, played, passed) = script(table, "0 P", "1 W>L", "1 P")
    assert played.unstuck == (0,)  # seat 0 is told its pass no longer counts
    assert not passed.rotated
    assert table.stuck == (False, True)
    assert format_cards(table.tableaux[0].stock) == "9D 9H"  # nothing rotated
    table, (again,) = script(table, "0 P")  # passing again makes everyone stuck
    assert again.rotated


def test_a_lost_lake_card_leaves_the_passes_standing() -> None:
    # Seat 2's 2S is kept, then seat 0 passes; seat 1's 2S comes later and loses its race:
    # the lake did not change, so it unblocks nobody and seat 0's pass stands.
    table = table_from(
        IDLE,
        TWO_OF_SPADES,
        "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: 2S",
        lake="0S: AS/0",
    )
    table, plays = script(table, "2 W>L @1", "0 P @2", "1 W>L@0S @3")
    assert plays[2].resolution is not None and plays[2].resolution.outcome is Outcome.LOST
    assert plays[2].unstuck == ()
    assert table.stuck == (True, False, False)


def test_a_pass_after_the_lake_card_counts() -> None:
    table = table_from(IDLE, TWO_OF_SPADES, lake="0S: AS/0")
    table, plays = script(table, "1 W>L", "0 P", "1 P")
    assert plays[-1].rotated


# -- slide-under onto a lone joker --------------------------------------------------------

JOKERS = Rules(jokers=2)


def test_a_card_slid_under_a_lone_joker_leaves_it_undeclared() -> None:
    table = table_from("N: 8H | 1: JK2 | 2: - | 3: 2C | 4: 6C", rules=JOKERS)
    listed = {str(m) for m in table.legal_moves(0)}
    assert "N>_1" in listed
    assert not any(m.startswith("N>_1=") for m in listed), listed
    slid, _ = script(table, "0 N>_1")
    assert format_cards(slid.tableaux[0].work[0]) == "8H JK2"
    assert_illegal(table, 0, "N>_1=7S", "no joker is fixed")
    # Exactly as its two-move equivalent: the card into the space, the joker onto it.
    two_moves, _ = script(table, "0 N>2", "0 1>2")
    assert two_moves.tableaux[0].work[1] == slid.tableaux[0].work[0]
    check_invariants(slid, before=table)


def test_nothing_slides_under_a_lone_joker_from_an_ace() -> None:
    table = table_from("N: AH | 1: JK2 | 2: - | 3: 2C | 4: 6C", rules=JOKERS)
    assert "N>_1" not in {str(m) for m in table.legal_moves(0)}
    assert_illegal(table, 0, "N>_1", "nothing goes below an ace")


# -- the library --------------------------------------------------------------------------


def test_a_whole_table_reads_back_from_its_notation() -> None:
    rules = Rules(rotate_alone=True, draw=1, jokers=1, rounds=3, target=None)
    table = Table.deal(rules, [shuffled_deck(s, 1) for s in (b"a", b"b", b"c")])
    assert Table.parse(str(table)) == table
    table, _ = script(table, "0 P", "1 P", "2 X")  # two stuck flags, a false call
    table = table.with_active(1, False)
    assert Table.parse(str(table)) == table
    text = str(table)
    assert "0> stuck N:" in text and "1> out N:" in text and "2> false=1 N:" in text


def test_a_table_after_rotations_and_a_nerts_call_reads_back() -> None:
    table = table_from(
        "N: - | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: 2D 3D | W: 5D",
        TWO_OF_SPADES,
        lake="0S: AS/0@1",
    )
    table, _ = script(table, "1 X @2", "0 P @2", "1 W>L @3", "1 P @4", "0 X @6")
    assert table.stuck == (False, True) and table.false_calls == (0, 1)
    assert table.status is RoundStatus.NERTS and table.cut == 6
    assert Table.parse(str(table)) == table
    blocked, _ = script(table_from(IDLE, IDLE), "0 P", "1 P")
    assert blocked.rotations == 1
    assert "rotations=1" in str(blocked)
    assert Table.parse(str(blocked)) == blocked


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "no text"),
        ("over clock=3", "starts with playing"),
        ("playing clock=x", "not a number"),
        ("playing speed=3", "not a table counter"),
        (f"playing clock=0\n1> {IDLE}", "expected 0>"),
        (f"playing clock=0\n0> {IDLE}\nL> 0S: 2S/0", "cannot follow on foundation 0S"),
        (f"playing clock=0 | rules: work_piles=9\n0> {IDLE}", "work_piles must be 4, 5 or 6"),
        ("playing clock=0", "no seat"),
    ],
)
def test_a_table_notation_that_is_not_one_says_why(text: str, fragment: str) -> None:
    with pytest.raises(NotationError, match=fragment.replace("(", r"\(")):
        Table.parse(text)


def test_a_claim_at_height_h_minus_2_gets_one_answer() -> None:
    # Seat 1's 3S on seat 0's spades at the ace: the 2S it was built on lost its race.
    table = table_from(
        IDLE, "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: 3S", lake="0S: AS/0"
    )
    after, (p,) = script(table, "1 W>L@0S")
    claim = Claim.parse("1:W:3S>0S@1")
    lake, resolution = table.lake.apply(claim)
    assert p.resolution == resolution
    assert resolution.outcome is Outcome.LOST
    assert after.lake == lake == table.lake
    assert after.tableaux == table.tableaux  # the card stays where it was


def test_legal_moves_after_a_nerts_call_lists_what_may_still_be_played_up_to_t_star() -> None:
    caller = "N: - | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: 2D 3D | W: -"
    table = table_from(caller, TWO_OF_SPADES, caller, lake="0S: AS/0")
    table, _ = script(table, "0 X @5")
    assert table.status is RoundStatus.NERTS
    assert {str(m) for m in table.legal_moves(1)} == {"W>L@0S", "S"}
    assert {str(m) for m in table.legal_moves(2)} == {"S", "X"}  # a simultaneous call
    assert "X" not in {str(m) for m in table.legal_moves(0)}  # it has called
    for seat in (1, 2):
        for move in table.legal_moves(seat):
            _, play = table.play(seat, move)
            assert play.lamport == 5
    assert_illegal(table, 1, "W>L@0S", "the round is over (nerts)", lamport=6)


def test_the_table_says_when_a_seat_has_no_card_move() -> None:
    table = table_from(IDLE, TWO_OF_SPADES, lake="0S: AS/0")
    assert not table.has_card_move(0)  # only the stock and the pass are left
    assert table.has_card_move(1)
    # Moving a whole pile into an empty one trades one space for another: no card move.
    lone = table_from("N: - | 1: 2D | 2: - | 3: 4D | 4: 4H | S: 9D | W: -")
    assert Move.parse("1>2") in lone.legal_moves(0)
    assert not lone.has_card_move(0)


# -- turn-based play [001] ----------------------------------------------------------------

TURNS = Rules(turn_based=True)


def test_turn_based_play_is_one_move_per_turn_in_seat_order() -> None:
    table = table_from(IDLE, IDLE, IDLE, rules=TURNS)
    assert table.turn == 0
    assert_illegal(table, 1, "S", "it is seat 0's turn, not seat 1's")
    assert [str(m) for m in table.legal_moves(1)] == ["X"]  # out of turn: only a call
    table, _ = script(table, "0 S")
    assert table.turn == 1
    assert_illegal(table, 0, "S", "it is seat 1's turn")
    table, _ = script(table, "1 S", "2 S")
    assert table.turn == 0  # round the table


def test_turn_based_a_call_is_no_move_and_comes_at_any_time() -> None:
    caller = "N: - | 1: 9C | 2: 8C | 3: 7C | 4: 6C | S: 2D 3D | W: -"
    table = table_from(IDLE, IDLE, caller, rules=TURNS)
    false, (p,) = script(table, "1 X")  # a false call out of turn: penalised, the turn stays
    assert p.false_call and false.turn == 0 and false.false_calls == (0, 1, 0)
    called, (q,) = script(table, "2 X @4")
    assert q.ended is RoundStatus.NERTS and called.cut == 4
    # Up to T* the seat on turn may still make its move, and nobody else.
    assert [str(m) for m in called.legal_moves(0)] == ["S"]
    assert list(called.legal_moves(1)) == []
    after, (r,) = script(called, "0 S")
    assert r.lamport == 4 and after.turn == 1


def test_turn_based_everyone_stuck_is_a_whole_round_of_passes() -> None:
    table = table_from(IDLE, TWO_OF_SPADES, rules=TURNS, lake="0S: AS/0")
    table, plays = script(table, "0 P", "1 W>L", "0 P", "1 P")
    assert plays[1].unstuck == (0,)  # the lake card after seat 0's first pass made it stale
    assert plays[-1].rotated and table.turn == 0


def test_turn_based_a_seat_gone_on_its_turn_hands_it_on() -> None:
    table = table_from(IDLE, IDLE, IDLE, rules=TURNS)
    table, _ = script(table, "0 S")
    table = table.with_active(1, False)
    assert table.turn == 2
    table, _ = script(table, "2 S")
    assert table.turn == 0  # seat 1 is skipped
    first_out = table_from(IDLE, IDLE, rules=TURNS, active=[False, True])
    assert first_out.turn == 1


def test_turn_based_table_notation_names_the_turn() -> None:
    table = table_from(IDLE, IDLE, IDLE, rules=TURNS)
    table, _ = script(table, "0 S")
    assert "turn=1" in str(table).splitlines()[0]
    assert Table.parse(str(table)) == table
    with pytest.raises(NotationError, match="turn= is a seat"):
        Table.parse(str(table).replace("turn=1", "turn=7"))
