"""Rendering the terminal table from tables written in the rules notation.

Every expectation is derived from the table given (its cards, counts and owners), so the tests
check that the screen shows the state, not that it matches a recorded picture.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from helpers_rules import table_from

from p2p_nertz.protocol import state as st
from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.peer import Suspected
from p2p_nertz.protocol.unmet import HeldBack, Unmet
from p2p_nertz.rules import (
    Card,
    Claim,
    FoundationId,
    Game,
    GameResult,
    Lake,
    Move,
    Outcome,
    Pile,
    PlayerScore,
    Resolution,
    RoundStatus,
    Rules,
    Table,
    Termination,
)
from p2p_nertz.rules.cards import RANK_NAMES
from p2p_nertz.ui import Board, Link, Screen, Style, TableView, Tracker, card_text, render
from p2p_nertz.ui.render import KEY_HELP
from p2p_nertz.ui.view import held_words, unmet_summary, unmet_words, waits_summary

ALICE = "N: 4C 9D KS | 1: QH JS 10H | 2: - | 3: 5D | 4: 8C | S: 2C 7H 9S 3D 4D 5S | W: 6H 10C JD QC"
BOB = "N: 4H KD | 1: QS | 2: 3C | 3: 5H | 4: 9C | S: - | W: 2D"
CAROL = "N: KH | 1: QC | 2: 3S | 3: 6H | 4: 9H | S: - | W: -"
LAKE = "0S: AS/0 2S/1 3S/0 4S/2@9; 1H: AH/1; 2C: AC/2 2C/2 3C/0; 0C: AC/0"
NAMES = ("Alice", "Bob", "Carol")


def make_table() -> Table:
    return table_from(ALICE, BOB, CAROL, lake=LAKE)


def view_of(table: Table, **changes: object) -> TableView:
    fields: dict[str, object] = {
        "table": table,
        "seat": 0,
        "names": NAMES[: table.seats],
        "rules": table.rules,
    }
    fields.update(changes)
    return TableView(**fields)  # type: ignore[arg-type]


def row_starting(screen: Screen, prefix: str) -> int | None:
    """The first row that starts with ``prefix``."""
    for i in range(screen.height):
        if screen.line(i).startswith(prefix):
            return i
    return None


def cards(table: Table, seat: int, pile: Pile, *, symbols: bool = True) -> str:
    return " ".join(card_text(c, symbols=symbols) for c in table.tableaux[seat].pile(pile))


def test_render_fills_exactly_the_screen_at_80x24_and_larger() -> None:
    table = make_table()
    for width, height in ((80, 24), (120, 40)):
        screen = render(view_of(table), width, height)
        assert len(screen.rows) == height
        assert all(sum(len(s.text) for s in row) <= width for row in screen.rows)


def test_render_shows_my_nerts_pile_stock_waste_and_whole_work_piles() -> None:
    table = make_table()
    me = table.tableaux[0]
    text = render(view_of(table)).text()
    nerts_row = next(line for line in text.splitlines() if line.startswith("[n]"))
    assert card_text(me.nerts[-1]) in nerts_row and f"{len(me.nerts)} left" in nerts_row
    assert f"stock {len(me.stock):2d}" in nerts_row
    fan = " ".join(card_text(c) for c in me.waste[-3:])
    assert f"waste {fan} ({len(me.waste)})" in nerts_row
    assert card_text(me.waste[0]) not in nerts_row.split("waste")[1]  # only the top three
    for pile in me.work_piles:
        shown = cards(table, 0, pile) or "-"
        assert f"[{int(pile)}] {shown}" in text.splitlines()


def test_render_groups_the_lake_by_suit_with_every_owner() -> None:
    table = make_table()
    screen = render(view_of(table))
    lake = table.lake
    for fid in lake:
        top = card_text(lake[fid][-1].card)
        owners = "".join(str(lc.owner) for lc in lake[fid])
        row = screen.find(f"{top} {owners}")
        assert row is not None, (fid, screen.text())
        # The foundation sits in its suit's column, under the suit's heading.
        column = screen.line(row).index(f"{top} {owners}")
        heading = screen.line(screen.find("clubs") or 0)
        assert heading.index(fid.suit.symbol) <= column < heading.index(fid.suit.symbol) + 20


def test_render_marks_a_claim_in_the_air_until_it_is_final() -> None:
    table = make_table()
    late = max(lc.lamport for lc in table.lake.cards())
    fid = FoundationId.parse("0S")
    top = card_text(table.lake[fid][-1].card)
    airborne = render(view_of(table, stable=late - 1))
    assert f"{top}*" in airborne.text()
    assert Style.PENDING in airborne.styles_of(top)
    final = render(view_of(table, stable=late))
    assert f"{top}*" not in final.text()
    assert Style.PENDING not in final.styles_of(top)


def test_render_shows_every_player_nerts_count_last_action_link_and_total() -> None:
    table = make_table()
    view = view_of(
        table,
        links=(Link.OK, Link.SUSPECTED, Link.DROPPED),
        last=("", "N>L 5♠", "S"),
        totals=(3, -4, 12),
    )
    screen = render(view)
    for seat in range(3):
        row = row_starting(screen, view.name(seat) + " ")
        assert row is not None
        line = screen.line(row)
        assert f"N {len(table.tableaux[seat].nerts):2d}" in line
        assert view.links[seat].value in line
        assert f"{view.totals[seat]:4d} pts" in line
        assert view.last[seat] in line
    assert Style.BAD in screen.styles_of("dropped")
    assert Style.WARN in screen.styles_of("suspected")


def test_render_shows_the_status_line_and_the_newest_announcements() -> None:
    table = make_table()
    messages = tuple(f"message {n}" for n in range(30))
    screen = render(view_of(table, messages=messages, status="illegal: nope", refused=True))
    assert screen.line(22) == "illegal: nope"
    assert Style.BAD in screen.styles_of("illegal: nope")
    assert "message 29" in screen.line(21)
    assert "message 0" not in screen.text()  # old ones scroll away


def test_an_announcement_longer_than_the_row_is_wrapped_at_its_words_not_cut() -> None:
    # A newcomer who left read "» you left the game — the game is over: bot1 wins with 0 on
    # the rounds scored (a": the row's edge cut the why.
    table = make_table()
    long = (
        "you left the game — the game is over: bot1 wins with 0 on the rounds scored "
        "(a player who leaves forfeits the game)"
    )
    for width in (80, 100):
        messages = ("an older one", "the one before", long)
        screen = render(view_of(table, messages=messages), width=width)
        lines = [line.rstrip() for line in screen.text().splitlines()]
        first = next(n for n, line in enumerate(lines) if line.startswith("» you left"))
        said = [lines[first]]
        while lines[first + len(said)].startswith("  ") and not said[-1].endswith("game)"):
            said.append(lines[first + len(said)])
        assert len(said) > 1 and all(len(line) <= width for line in said), said
        assert " ".join(line.strip() for line in said).removeprefix("» ") == long, said
        assert "» the one before" in lines[first - 1], lines  # (older ones above it, whole)


def test_render_letters_instead_of_suit_symbols() -> None:
    table = make_table()
    text = render(view_of(table), symbols=False).text()
    assert not set("♣♦♥♠") & set(text)
    assert cards(table, 0, Pile.W1, symbols=False) in text


def test_render_marks_the_picked_source_and_the_frozen_piles() -> None:
    table = make_table()
    screen = render(view_of(table, selected=Pile.WASTE, frozen=frozenset({Pile.W3})))
    assert ">w<" in screen.text() and "[w]" not in screen.text()
    assert Style.SELECTED in screen.styles_of(">w<")
    row = screen.find("[3]")
    assert row is not None and "in the air" in screen.line(row)


def test_render_the_command_line_replaces_the_key_hint() -> None:
    screen = render(view_of(make_table(), command="1:2>4"))
    assert screen.line(23).startswith("move> 1:2>4")


def test_render_the_key_hint_names_this_games_work_piles() -> None:
    # The table's four work piles: the footer said 1-6, and keys 5 and 6 only answer "no work
    # pile 5 in this game".
    table = make_table()
    assert len(table.tableaux[0].work) == 4
    footer = render(view_of(table)).line(23)
    assert footer.startswith("n w 1-4 pick, then l lake or 1-4 · "), footer
    footer = render(view_of(table, rules=replace(table.rules, work_piles=6))).line(23)
    assert footer.startswith("n w 1-6 pick, then l lake or 1-6 · "), footer


def test_render_the_footer_of_a_game_over_offers_no_play_keys() -> None:
    # Session 33's newcomer: the round's board closed at a game over, the footer still read
    # "n w 1-4 pick, then l lake … x Nerts", keys that do nothing now.
    footer = render(view_of(make_table(), phase="over")).line(23)
    assert footer == "q quits: the game is over · ? help", footer


def by_suit(cards: list[Card]) -> str:
    """Cards as the board lists a player's lake: the ranks by suit, ``♣ A 2  ♥ A``."""
    groups = itertools.groupby(cards, key=lambda c: c.suit)
    return (
        "  ".join(
            f"{suit.symbol} " + " ".join(RANK_NAMES[c.rank] for c in group)
            for suit, group in groups
            if suit is not None
        )
        or "-"
    )


def test_render_the_end_of_round_board_sorts_the_lake_back_to_owners() -> None:
    table = make_table()
    rules = Rules(nerts_bonus=10)
    table = table_from(ALICE, BOB, CAROL, lake=LAKE, rules=rules)
    table, _ = table.play(0, Move.parse("S"))
    score = table.score()
    game = Game(rules, 3).record(score)
    board = Board(1, score, game.totals, table.lake)
    view = view_of(table, board=board, rules=rules)
    screen = render(view)
    text = screen.text()
    assert "round 1 over" in text
    for p in score.players:
        row = row_starting(screen, view.name(p.seat) + " ")
        assert row is not None, text
        line = screen.line(row)
        assert f"lake +{p.lake}" in line
        assert f"−{p.nerts_card_penalty}×{p.nerts_left}" in line
        assert f"round {p.total:+4d}" in line and f"game {game.totals[p.seat]:4d}" in line
        owned = sorted(
            (lc.card for lc in table.lake.cards() if lc.owner == p.seat), key=Card.sort_key
        )
        assert screen.line(row + 1) == "   lake: " + by_suit(owned)
    assert "Enter: back to the table" in text


def test_render_the_board_names_the_caller_bonus_and_the_winner() -> None:
    rules = Rules(nerts_bonus=10, target=None, rounds=1)
    table = table_from("N: - | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D | W: -", BOB, rules=rules)
    table, _ = table.play(0, Move.call())
    assert table.status is RoundStatus.NERTS
    score = table.score()
    game = Game(rules, 2).record(score)
    assert game.result is not None
    view = view_of(table, rules=rules, board=Board(1, score, game.totals, table.lake, game.result))
    text = render(view).text()
    # Named in words, the seat after the name (not "0 Alice": a number glued to a name).
    assert "Nerts! called by Alice (seat 0)" in text
    assert f"bonus +{rules.nerts_bonus}" in text
    w = game.result.winners[0]
    assert f"game over — winner: {NAMES[w]} (seat {w}) with {max(game.result.totals)}" in text
    assert "you: Alice (seat 0)" in render(view).line(0)


def test_render_and_the_page_name_a_pairs_game_s_winner_alike() -> None:
    # (The page once said "winner: 0" for a team: its number, not words.)
    from p2p_nertz.web.model import view_json

    rules = Rules(pairs=True, target=None, rounds=1)
    caller = "N: - | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D | W: -"
    table = table_from(caller, BOB, BOB, BOB, rules=rules)
    table, _ = table.play(0, Move.call())
    score = table.score()
    game = Game(rules, 4).record(score)
    assert game.result is not None and game.result.winners == (0,)
    board = Board(1, score, game.totals, table.lake, game.result)
    view = TableView(
        table=table, seat=0, names=("Ann", "Bob", "Cy", "Dee"), rules=rules, board=board
    )
    assert "game over — winner: team 1 with " in render(view).text()
    assert view_json(view)["board"]["result"]["winners"] == ["team 1"]


def test_render_and_the_page_say_a_tie_won_by_playing_the_extra_round() -> None:
    # rules.md: the game (session 41): Bob, voted out before the extra round, sat it out;
    # Alice, playing it alone to blocked with Nerts cards left, won it by playing it.
    from p2p_nertz.web.model import view_json

    rules = Rules(target=None, rounds=1)
    table = table_from(BOB, BOB, rules=rules)
    game = Game(rules, 2).record((4, 4))
    score = table.score()
    bob = PlayerScore(1, 0, 0, rules.nerts_card_penalty, played=False)  # (as Table.score)
    score = replace(score, players=(score.players[0], bob), status=RoundStatus.BLOCKED)
    game = game.record(score)
    assert game.result is not None and game.result.termination is Termination.ABSENCE
    board = Board(2, score, game.totals, table.lake, game.result)
    view = view_of(table, rules=rules, board=board)
    line = f"game over — winner: Alice (seat 0) with {game.totals[0]}"
    assert f"{line} (tied: the others tied dropped out)" in render(view).text()
    assert game.totals[0] < game.totals[1]  # (below the total of the member who sat it out)
    assert view_json(view)["board"]["result"]["decided"] == "tied: the others tied dropped out"


@pytest.mark.parametrize("provisional", [False, True])
def test_render_an_abandoned_game_says_whether_its_result_is_provisional(
    provisional: bool,
) -> None:
    # docs/protocol.md §9.3: the round in progress is void; a side that cannot know what the
    # other saw says its result may still change.
    rules = Rules(target=None, rounds=3)
    table = table_from("N: - | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D | W: -", BOB, rules=rules)
    void = table.score()
    result = GameResult((0, 1), (0, 0), Termination.ABANDONED)
    board = Board(1, void, (0, 0), table.lake, result)
    text = render(view_of(table, rules=rules, board=board, provisional=provisional)).text()
    assert "void: the game was abandoned" in text
    assert "(ended early)" in text
    assert ("provisional:" in text) is provisional


def test_render_a_spectator_sees_every_tableau() -> None:
    table = make_table()
    screen = render(view_of(table, seat=None))
    assert "spectator" in screen.line(0)
    assert screen.find("[n]") is None  # nobody's keys
    for seat, t in enumerate(table.tableaux):
        row = row_starting(screen, f"{seat} {NAMES[seat]}")
        assert row is not None
        detail = screen.line(row + 1)
        assert f"S {len(t.stock)}" in detail
        for pile in t.work_piles:
            run = t.pile(pile)
            if not run:
                assert f"{int(pile)}:-" in detail
            else:  # a long run shows its ends: first…last
                assert f"{int(pile)}:{card_text(run[0])}" in detail
                assert card_text(run[-1]) in detail.split(f"{int(pile)}:", 1)[1]


def test_render_help_lists_every_key() -> None:
    text = render(view_of(make_table(), help=True)).text()
    for key, _ in KEY_HELP:
        assert key.replace("1-6", "1-4") in text  # (this game's four work piles)


def test_render_before_the_deal_says_so() -> None:
    view = TableView(table=None, seat=0, names=NAMES, rules=Rules(), messages=("hello",))
    text = render(view).text()
    assert "waiting for the deal" in text and "hello" in text


def test_render_many_players_fit_80x24() -> None:
    idle = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: -"
    table = table_from(*([idle] * 6))
    view = TableView(table=table, seat=0, names=tuple(f"P{n}" for n in range(6)), rules=table.rules)
    screen = render(view)
    assert screen.find("[4]") is not None and screen.find("5 P5") is not None


# -- the tracker: notices become announcements ------------------------------------------------
def lost(seat: int, card: str, source: Pile, winner: int | None) -> st.ClaimDecided:
    claim = Claim(seat, Card.parse(card), source, FoundationId.parse("1S"), 7)
    return st.ClaimDecided(Resolution(claim, Outcome.LOST, winner), 1)


@pytest.mark.parametrize(
    ("source", "where"),
    [(Pile.WASTE, "back to waste"), (Pile.NERTS, "back to the Nerts pile"), (Pile.W3, "pile 3")],
)
def test_tracker_announces_my_lost_race_with_the_winner(source: Pile, where: str) -> None:
    tracker = Tracker(NAMES, seat=0)
    tracker.notice(lost(0, "5S", source, 1))
    assert tracker.messages[-1].startswith(f"5♠ lost to {NAMES[1]} — ")
    assert where in tracker.messages[-1]


def test_tracker_counts_repeats_and_ignores_others_lost_races() -> None:
    tracker = Tracker(NAMES, seat=0)
    tracker.notice(lost(2, "5S", Pile.WASTE, 1))
    assert tracker.messages == []
    for _ in range(3):
        tracker.notice(st.Rotated(1))
    assert len(tracker.messages) == 1 and tracker.messages[0].endswith("(×3)")


def test_tracker_follows_links_drops_and_calls() -> None:
    tracker = Tracker(NAMES, seat=0)
    tracker.notice(Suspected(1, True))
    assert tracker.suspected == {1} and NAMES[1] in tracker.messages[-1]
    tracker.notice(Suspected(1, False))
    assert tracker.suspected == set() and "back" in tracker.messages[-1]
    tracker.notice(st.MemberDropped(2, 5, True))
    assert f"{NAMES[2]} left the game" in tracker.messages[-1]
    tracker.notice(st.RoundEnded(1, RoundStatus.NERTS, 40, (1,)))
    assert f"Nerts! called by {NAMES[1]}" in tracker.messages[-1]


def test_tracker_keeps_the_board_until_closed() -> None:
    table = make_table()
    score = table.score()
    tracker = Tracker(NAMES, seat=0)
    tracker.notice(st.RoundScored(1, score, (1, 2, 3)))
    assert tracker.board is not None and tracker.board.totals == (1, 2, 3)
    assert tracker.board.lake == Lake()  # no peer given: no lake to sort
    tracker.close_board()
    assert tracker.board is None


def test_tracker_says_a_round_dealt_under_the_board_waits_for_it_to_close() -> None:
    # Round 2 is dealt while round 1's board is still up before the player (its ready held):
    # "go!" under "next round in 30 s" sent them looking for a table not theirs yet.
    tracker = Tracker(NAMES, seat=0)
    tracker.notice(st.PhaseChanged(st.Phase.PLAY, 1))
    assert tracker.messages[-1] == "round 1 is dealt — go!"
    tracker.notice(st.RoundScored(1, make_table().score(), (1, 2, 3)))
    tracker.notice(st.PhaseChanged(st.Phase.PLAY, 2))
    assert tracker.messages[-1] == (
        "round 2 is dealt — it starts once everyone has closed the board (Enter)"
    )
    spectator = Tracker(NAMES)  # (nobody waits for a spectator's board)
    spectator.notice(st.RoundScored(1, make_table().score(), (1, 2, 3)))
    spectator.notice(st.PhaseChanged(st.Phase.PLAY, 2))
    assert spectator.messages[-1] == "round 2 is dealt: play is on"  # ("go!" to nobody)


# -- the votes the table waits on, at every table size -------------------------------------------
def _standing(players: int) -> list[Unmet]:
    """Votes short of a majority at a table of ``players``: two at three or more (one by two
    members, one by one), the one vote at two (the other is its target's)."""
    majority = players // 2 + 1
    if players == 2:
        return [Unmet(1, (DropReason.SILENT,), (0,), majority, players)]
    return [
        Unmet(1, (DropReason.WITHHELD,), (0, 2), majority, players),
        Unmet(2, (DropReason.SILENT,), (1,), majority, players),
    ]


@pytest.mark.parametrize("held", [False, True], ids=["votes", "held-back"])
@pytest.mark.parametrize("work_piles", [4, 6])
@pytest.mark.parametrize("seat", [0, None], ids=["player", "spectator"])
@pytest.mark.parametrize("players", range(2, 9))
def test_render_the_votes_the_table_waits_on_have_room_at_every_table_size(
    players: int, seat: int | None, work_piles: int, held: bool
) -> None:
    # Session 36's terminal, at eight players at 80×24, showed only the last of these rows
    # ("no majority yet: …"), not who is voted out: the full lake (every player's four aces)
    # took the rest. Each row, or their one-row summary, whole, and the table as before.
    idle = "N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: 9D 9H | W: -"
    if work_piles == 6:
        idle = idle.replace("| S:", "| 5: 5D | 6: 5H | S:")
    rules = Rules(work_piles=work_piles)
    lake = "; ".join(f"{s}{suit}: A{suit}/{s}" for s in range(players) for suit in "CDHS")
    table = table_from(*([idle] * players), lake=lake, rules=rules)
    names = tuple(f"player{n}" for n in range(players))
    standing = _standing(players)
    # (session 38: a member held back too, under the votes: its events wait for others')
    back = (HeldBack(players - 1, 9, ((0, 10, 12),)),) if held else ()
    waits = unmet_words(standing, names.__getitem__, seat) + held_words(back, names.__getitem__)
    line = waits_summary(standing, back, names.__getitem__)
    # (short names: whole; beside a member held back, named, the votes may be counted)
    voted = all(names[u.seat] in line for u in standing)
    assert voted or (held and (f"{len(standing)} members" in line or "vote short" in line))
    assert all(names[h.seat] in line for h in back), line
    plain = TableView(table=table, seat=seat, names=names, rules=rules, messages=("a race",))
    view = replace(plain, waits=waits, waits_line=line)
    for shown in (view, replace(view, table=None)):  # at the table, and before the deal
        text = render(shown, 80, 24).text()
        rows = [r for r in text.splitlines() if r.startswith("» ")]
        assert [r[2:] for r in rows[-len(waits) :]] == list(waits) or rows[-1][2:] == line, text
    # The table keeps all it showed without them: its lake, every player, the tableau.
    text, before = render(view, 80, 24).text(), render(plain, 80, 24).text()
    for n in range(players):
        assert any(r.startswith(f"{n} player{n}") for r in text.splitlines()), text
    if seat is not None:
        assert f"[{work_piles}]" in text
    lake_rows = [r for r in before.splitlines() if "A♣ 0" in r or " more" in r]
    assert (
        sum(r.count("A♣") for r in lake_rows) <= sum(r.count("A♣") for r in text.splitlines())
        or "more" in before
    ), text


def test_render_the_votes_summary_row_names_the_count_where_names_do_not_fit() -> None:
    standing = _standing(8)
    long = ("x" * 30,) * 8
    line = unmet_summary(standing, long.__getitem__)
    assert len(line) <= 78 and "2 members" in line
