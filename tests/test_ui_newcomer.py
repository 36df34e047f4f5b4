"""What a newcomer reads at either table (session 26): the words of ui/view.py, as the terminal
draws them (``render``) and as the page is sent them (``view_json``).

Seen in a first game: "round 1 is dealt — go!" twice, one line above the other; a pass taken
with an ace on the waste and nothing said of it; "bot1 played to the lake after your pass"
and "bot2 …" alternating line after line; a header saying "round 2 · commit"; how to play
without slide-under, and in the page speaking of keys a pointer's player never pressed.
"""

from __future__ import annotations

from helpers_rules import IDLE, table_from
from test_ui_controller import Shown, _at_deal, _table

from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.peer import Suspected
from p2p_nertz.rules import Move, RoundStatus, Rules
from p2p_nertz.ui import PlayMove, TableView, Tracker, render
from p2p_nertz.ui.keys import STUCK_WAITING, Context, KeyState, press
from p2p_nertz.ui.tracker import (
    NOBODY_ANSWERS,
    PASS_GONE,
    PASS_ROTATED,
    WAITING_ON_YOU,
    status_line,
)
from p2p_nertz.ui.view import Board, bots_hint, counted, how_to_play, open_move_words, tie_words
from p2p_nertz.web.model import view_json

#: Seat 0's waste shows the A♥: a card move is open (to the lake), the pass is legal all the
#: same (RULES.md: stuck is "no legal move, or nobody wants to play").
ACE_ON_WASTE = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9C | W: 7S AH"


def test_the_deal_is_said_once_on_either_table() -> None:
    peer = _at_deal(1)
    front = Shown()
    table = _table(front, peer)
    table.notice(st.PhaseChanged(st.Phase.PLAY, 1), peer.final, 0.0)
    table.draw(peer, 0.0)
    view = front.views[-1]
    words = table.tracker.dealt(1)
    assert view.status == words and table.tracker.messages[-1] == words
    assert render(view).text().count(words) == 1  # the status line, not the news above it
    sent = view_json(view)
    assert sent["status"] == words and words not in sent["messages"]
    # Once a key has its own words, the deal is news like any other.
    table.press("s", peer, 1.0)
    table.draw(peer, 1.0)
    view = front.views[-1]
    assert view.status != words and view.news()[-1] == words
    assert render(view).text().count(words) == 1


def test_a_pass_with_a_card_move_open_is_taken_and_names_the_move() -> None:
    table = table_from(ACE_ON_WASTE, IDLE)
    state, actions = press(KeyState(), "p", Context(table, 0))
    assert actions == [PlayMove(Move.pass_())]  # not refused: the rules allow it
    assert state.status.startswith("stuck") and "A♥ to the lake" in state.status, state.status
    # With nothing but the stock left to play, the pass says only that it waits.
    idle = table_from(IDLE, IDLE)
    assert press(KeyState(), "p", Context(idle, 0))[0].status == STUCK_WAITING
    # Either words mark a pass: once it is stale, the status line says so.
    passed, _ = table.play(0, Move.pass_())
    assert status_line(passed, 0, state.status) == state.status  # the pass stands
    gone = status_line(table, 0, state.status)  # (not stuck: it no longer does)
    assert gone.startswith("a lake card ended your pass") and "A♥ to the lake" in gone, gone
    assert status_line(idle, 0, STUCK_WAITING) == PASS_GONE  # (nothing to name: pass again?)
    assert len(state.status) <= 80  # one row of the terminal


def _stale(tracker: Tracker, *by: int) -> None:
    for seat in by:
        tracker.notice(st.PassesStale(1, (0,), seat))


def test_stale_passes_are_one_line_its_players_newest_first_with_a_count() -> None:
    tracker = Tracker(("you", "bot1", "bot2"), seat=0)
    tracker.notice(st.PhaseChanged(st.Phase.PLAY, 1))
    _stale(tracker, 1)
    assert tracker.messages[-1].startswith("bot1 played to the lake after your pass: ")
    _stale(tracker, 2, 1, 2)
    tracker.notice(st.Rotated(1))
    _stale(tracker, 1)
    stale = [m for m in tracker.messages if "after your pass" in m]
    assert len(stale) == 1, tracker.messages
    assert tracker.messages[-1] == stale[0]  # moved to the newest place, after the rotation
    assert stale[0] == "bot1 and bot2 played to the lake after your pass (×5): it no longer counts"
    # Another player's pass made stale is not ours: not said.
    tracker.notice(st.PassesStale(1, (2,), 1))
    assert tracker.messages[-1] == stale[0]
    # A new round starts the count again; the last round's line stays where it was.
    tracker.notice(st.PhaseChanged(st.Phase.PLAY, 2))
    _stale(tracker, 2)
    assert tracker.messages[-1].startswith("bot2 played to the lake after your pass: ")
    assert stale[0] in tracker.messages


def _view(**fields: object) -> TableView:
    base: dict[str, object] = {"table": None, "seat": 0, "names": ("you", "bot1")}
    base.update(fields)
    base.setdefault("rules", Rules())
    return TableView(**base)  # type: ignore[arg-type]


def test_the_header_says_where_the_game_stands_in_words() -> None:
    dealing = _view(rules=Rules(rounds=3, target=None), round=2, phase="commit")
    for view, words in (
        (dealing, "round 2 of 3 · dealing…"),
        (_view(phase="nonce"), "round 1 · game to 100 points · dealing…"),
        (_view(phase="reveal"), "round over: counting"),
        (_view(phase="over"), "game over"),
    ):
        assert words in view.heading(), view.heading()
        if view.phase != "over":  # (the protocol's word is not the person's)
            assert view.phase not in view.heading(), view.heading()
        assert view_json(view)["heading"] == view.heading()  # the page's header
    nerts = table_from("N: - | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: -", IDLE)
    called, _ = nerts.play(0, Move.call())
    assert called.status is RoundStatus.NERTS
    # Round 1's board over round 2's table: the header is round 1's.
    board = Board(1, called.score(), (0, 0), called.lake)
    over = _view(table=table_from(IDLE, IDLE), round=2, phase="play", board=board)
    assert over.heading() == "round 1 · game to 100 points · round over"
    ended = _view(table=called)
    assert ended.heading() == "round 1 · game to 100 points · round over: Nerts! was called"
    header = render(ended).line(0)  # (80 columns: the game's length gives way)
    assert "round 1 · round over: Nerts! was called" in header, header
    assert " · nerts" not in header


def test_how_to_play_explains_slide_under_and_the_page_speaks_of_the_pointer_first() -> None:
    rules = Rules()
    keys = " ".join(how_to_play(rules))
    pointer = " ".join(how_to_play(rules, pointer=True))
    for text in (keys, pointer):
        assert "Slide-under: with a work pile empty, a card one higher than another" in text
        assert "may slide under that pile" in text
    assert "pick it, then that pile" in keys and "Pick a card (n, w, 1-4), then l." in keys
    # The page: drag and click, the buttons; no key named in its how to play.
    assert "drag a card there (or click it, then the lake)" in pointer
    assert "drop it on that pile" in pointer
    assert "the Nerts! button" in pointer and "The stuck button passes" in pointer
    for key in ("x calls", "p passes", "(n, w", "then l", "[n]", "[w]", "s turns"):
        assert key not in pointer, key
    variant = " ".join(how_to_play(Rules(rotate_alone=True), pointer=True))
    assert "the rotate button moves" in variant and " r moves" not in variant


def test_how_to_play_says_the_waste_turns_back_before_the_top_card_goes_under() -> None:
    # RULES.md, everyone stuck: the stock is re-formed first (its waste turned back over), then
    # its top card goes to the bottom; the page said only the second half.
    for pointer in (False, True):
        text = " ".join(how_to_play(Rules(), pointer=pointer))
        turned = text.index("each waste turns back over as the stock")
        assert turned < text.index("its top card goes to the bottom"), text


def test_counts_are_said_in_words_not_with_a_parenthesised_s() -> None:
    table = table_from(IDLE, IDLE)
    state, _ = press(KeyState(), "x", Context(table, 0))
    assert state.status.startswith("1 card left in your Nerts pile: "), state.status  # (KS)
    assert [counted(n, "round") for n in (0, 1, 2)] == ["0 rounds", "1 round", "2 rounds"]


def test_the_bots_hint_names_a_terminal_command_only_at_the_terminal() -> None:
    for practice in (True, False):
        page = bots_hint(practice=practice, speed="5", page=True)
        terminal = bots_hint(practice=practice, speed="5", page=False)
        assert "nertz" not in page and "--" not in page, page
        assert "nertz play --speed N" in terminal
        assert len(terminal) <= 78  # one row of the terminal, after its "» "
    assert "wait for you" in bots_hint(practice=True, speed="5", page=True)
    assert "speed 5 of 10" in bots_hint(practice=False, speed="5", page=True)


def test_a_silent_player_is_said_to_have_stopped_and_what_it_does_to_the_game() -> None:
    # A bot killed -9 read "bot1 is not answering", and the lake stopped without a word why.
    for names, dropped in ((("you", "bot1", "bot2"), True), (("you", "bot1"), False)):
        tracker = Tracker(names, seat=0)
        tracker.notice(Suspected(1, True))
        what, then = tracker.messages[-2:]
        assert what == "bot1 is not answering: their program stopped, or their network dropped"
        assert then.startswith("until bot1 answers") and then.endswith("stay in the air")
        assert ("or is dropped" in then) == dropped  # (two players: nobody can drop them)
        assert all(len(line) <= 78 for line in (what, then))  # a row of the terminal
    tracker = Tracker(("you", "bot1", "bot2"), seat=0)
    tracker.notice(st.MemberDropped(1, 3, False))
    assert tracker.messages[-1] == (
        "bot1 was dropped (silent too long): the game goes on without them"
    )


def test_a_players_last_action_keeps_its_pile_numbers_at_80_columns() -> None:
    # "card from work pile 3 onto work pile" (its pile cut off) in a bot's row.
    table = table_from(IDLE, IDLE)
    long = "card from work pile 3 onto work pile 4"
    view = _view(table=table, names=("you", "bot1"), last=("", long))
    row = next(line for line in render(view, 80, 24).text().splitlines() if "bot1" in line)
    assert "card from pile 3 onto pile 4" in row, row
    assert row.rstrip().endswith("ok    0 pts"), row


def test_everyone_silent_at_once_asks_after_our_own_network() -> None:
    tracker = Tracker(("you", "bot1", "bot2"), seat=0)
    tracker.notice(Suspected(1, True))
    assert NOBODY_ANSWERS not in tracker.messages  # one of two: theirs, likelier
    tracker.notice(Suspected(2, True))
    assert tracker.messages[-1] == NOBODY_ANSWERS
    assert len("» " + NOBODY_ANSWERS) <= 80
    # With one other member, either network could be down: nothing is guessed.
    alone = Tracker(("you", "bot1"), seat=0)
    alone.notice(Suspected(1, True))
    assert NOBODY_ANSWERS not in alone.messages


def test_the_keys_help_names_this_games_work_piles() -> None:
    # The footer said "n w 1-4", the help "1-6": keys 5 and 6 are refused in a game of four.
    six = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | 5: 5C | 6: 6C | S: 9D 9H | W: -"
    for piles, tableau in ((4, IDLE), (6, six)):
        rules = Rules(work_piles=piles)
        view = _view(table=table_from(tableau, tableau), rules=rules, help=True)
        text = render(view, 80, 24).text()
        assert f"n  w  1-{piles}" in text and f"then 1-{piles}" in text, text
        assert piles == 6 or "1-6" not in text, text


def test_the_status_line_says_when_everyone_else_is_stuck_and_waits_for_us() -> None:
    table = table_from(IDLE, IDLE, IDLE)
    bob, _ = table.play(1, Move.pass_())
    both, _ = bob.play(2, Move.pass_())
    dealt = "round 1 is dealt — go!"
    assert status_line(bob, 0, dealt) == dealt  # one of two: the round is not waiting on us
    assert status_line(both, 0, dealt) == WAITING_ON_YOU
    assert status_line(both, 0, "turned the stock") == WAITING_ON_YOU
    assert len(WAITING_ON_YOU) <= 80
    # An answer to a key stays: its reason, its question, its pick (as the keys made them).
    for said, refused in (
        ("illegal: 4♦ does not go on 10♣ (one rank lower, the other colour)", True),
        ("leave the game? y leaves, any key stays", False),
        ("13 cards left in your Nerts pile: x again to call anyway (false call: −5 pts)", False),
        ("K♠ picked: l to the lake, 1-4 onto a work pile, Esc cancels", False),
    ):
        assert status_line(both, 0, said, refused=refused, asking=not refused) == said
    # Once we pass too, everyone is stuck: our own words again.
    mine, _ = both.play(0, Move.pass_())
    assert status_line(mine, 0, STUCK_WAITING) != WAITING_ON_YOU


def test_a_pass_ended_by_a_rotation_says_to_look_at_the_new_cards() -> None:
    # "stuck again?" after the stocks rotated had a newcomer pass before looking.
    table = table_from(IDLE, IDLE)
    passed, _ = table.play(0, Move.pass_())
    tracker = Tracker(("you", "bot1"), seat=0)
    words = STUCK_WAITING
    assert status_line(table, 0, words) == PASS_GONE
    tracker.notice(st.Rotated(1))
    assert status_line(table, 0, words, rotated=tracker.rotated) == PASS_ROTATED
    assert status_line(passed, 0, words, rotated=tracker.rotated) == words  # it stands
    tracker.notice(st.PassesStale(1, (0,), 1))  # then a lake card: that is what ended it
    assert status_line(table, 0, words, rotated=tracker.rotated) == PASS_GONE


def test_a_tie_in_the_lake_says_what_tied_with_what() -> None:
    words = tie_words("bot2's 8♠")
    assert words.startswith("bot2's 8♠ tied with another card for one place")
    assert words.endswith("both stay") and len("» " + tie_words("your 10♥")) <= 80


def test_the_header_keeps_whose_turn_and_who_you_are_in_80_columns() -> None:
    rules = Rules(turn_based=True)
    table = table_from(IDLE, IDLE, rules=rules)
    for seat in (0, 1):
        view = _view(table=table, seat=seat, names=("Alexander", "bot1"), rules=rules)
        header = render(view, 80, 24).line(0)
        assert header.endswith("   ? help") and view.you() in header, header
        assert ("your turn" if seat == 0 else "turn: Alexander (seat 0)") in header, header
        assert header.startswith("p2p-nertz  round 1"), header


def test_the_page_links_the_rule_book_and_the_terminal_names_its_command() -> None:
    # The page's help ended with "nertz rules", a command a browser player has nowhere to type.
    rules = Rules()
    assert how_to_play(rules)[-1] == "The whole rule book: nertz rules (or docs/rules.md)."
    page = how_to_play(rules, pointer=True)
    assert "nertz rules" not in " ".join(page) and "rule book link below" in page[-1], page[-1]


def test_the_pages_false_call_question_names_its_button_the_terminals_its_key() -> None:
    table = table_from(ACE_ON_WASTE, IDLE)
    state, actions = press(KeyState(), "x", Context(table, 0))
    assert actions == []  # asked first: cards are left
    view = _view(table=table, status=state.status)
    assert "x again to call anyway" in render(view).text()
    sent = view_json(view)["status"]
    assert "click “yes, call Nerts” to call anyway" in sent and "x again" not in sent, sent
    left, penalty = len(table.tableaux[0].nerts), table.rules.false_call_penalty
    assert sent.startswith(f"{counted(left, 'card')} left in your Nerts pile"), sent
    assert f"(false call: −{penalty} pts)" in sent, sent


def test_a_pass_says_in_words_what_a_move_takes_back() -> None:
    # "(any move withdraws)": a newcomer asked what a move withdraws.
    table = table_from(IDLE, IDLE)
    status = press(KeyState(), "p", Context(table, 0))[0].status
    assert status == STUCK_WAITING and "a move of yours takes your pass back" in status
    assert "withdraws" not in status and len(status) <= 80


def test_a_pass_ended_by_a_lake_card_names_a_card_that_plays_now() -> None:
    # "stuck again?" after a lake card had a newcomer pass again with a card that now played.
    table = table_from(ACE_ON_WASTE, IDLE)
    tracker = Tracker(("you", "bot1"), seat=0)
    tracker.notice(st.PassesStale(1, (0,), 1))
    said = status_line(table, 0, STUCK_WAITING, rotated=tracker.rotated)
    assert said.endswith("now you can play " + str(open_move_words(table, 0))), said
    assert "A♥ to the lake" in said and "stuck again" not in said and len(said) <= 80, said
    letters = status_line(table, 0, STUCK_WAITING, symbols=False)
    assert letters.endswith("AH to the lake"), letters  # (--ascii: as the rest of the table)


def test_the_lake_heading_counts_each_suit_s_piles_in_words() -> None:
    # "♦ diamonds 2": a newcomer read the 2 as a card, a score or a seat.
    table = table_from(IDLE, IDLE, lake="0D: AD/0 2D/1; 1D: AD/1; 1C: AC/1")
    text = render(_view(table=table, names=("you", "bot1"))).text()
    heading = next(line for line in text.splitlines() if "clubs" in line)
    assert "♣ clubs: 1 pile " in heading and "♦ diamonds: 2 piles " in heading, heading
    assert heading.rstrip().endswith("♠ spades"), heading  # (an empty suit: no count)
    assert "2♦ 01" in text and "A♣ 1" in text  # each pile's top, then its cards' owners


def test_the_board_says_an_empty_nerts_pile_cost_nothing_not_minus_nothing() -> None:
    # A first game won by calling Nerts: the board read "Nerts −2×0 = −0" for the caller.
    nerts = table_from("N: - | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: -", IDLE)
    called, _ = nerts.play(0, Move.call())
    board = Board(1, called.score(), (0, -2), called.lake)
    text = render(_view(table=called, board=board)).text()
    rows = [line for line in text.splitlines() if " Nerts −2×" in line]
    assert len(rows) == 2 and "=  0 " in rows[0] and "−0" not in rows[0], rows
    assert "= −2 " in rows[1], rows  # (seat 1's King left in its Nerts pile)


def test_the_rows_points_are_the_games_said_alike_and_the_help_says_when_a_round_scores() -> None:
    # A newcomer played an ace in round 1 and their row still said "0 pts". RULES.md scores a
    # round at its end (the -2 for each card left in the Nerts pile is known only then): the
    # rows show the game's total, in one set of words at the terminal and on the page, and
    # the help of both says when a round is scored.
    from p2p_nertz.rules import Pile
    from p2p_nertz.ui.view import points_words

    table = table_from("N: KS AS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: -", IDLE)
    played, _ = table.play(0, Move.to_lake(Pile.NERTS))
    assert played.score().players[0].lake == 1  # (the ace is in the lake: +1 at the round's end)
    view = _view(table=played, totals=(12, -4))
    rows = render(view, 80, 24).text().splitlines()
    page = view_json(view)["players"]
    for seat, total in enumerate((12, -4)):
        row = next(line for line in rows if line.startswith(f"{seat} ") and "pts" in line)
        assert row.rstrip().endswith(f" {points_words(total)}"), row
        assert page[seat]["points"] == points_words(total) == f"{total} pts"
    for pointer in (False, True):
        text = " ".join(how_to_play(Rules(), pointer=pointer))
        assert "Scored at a round's end: +1 for each of your cards in the lake" in text, text
