"""Render a :class:`~p2p_nertz.ui.view.TableView` into a :class:`~p2p_nertz.ui.screen.Screen`.

Pure: no curses, no terminal. The layout fits 80×24 with up to four players and four work
piles, and uses any extra room (more lake rows, two columns of players):

====================  ========================================================================
header                round, phase, who you are, the help key
lake                  one column per suit; one foundation per row: the top card, then the
                      seat number of the owner of every card from the ace up (``5♠ 12132``);
                      ``*`` after the top card while a card of it is in the air (the lake's
                      heading says both, where it fits)
players               seat and name, Nerts cards left, waste top, stuck, last action, link
                      state (ok / suspected / dropped / left) and game total
your tableau          ``[n]`` Nerts top card and count, ``[s]`` stock count, ``[w]`` waste (top
                      three, fanned, the top one playable), ``[1]``… work piles (whole runs)
messages              the newest announcements (a lost race, a rotation, a drop, a Nerts call)
status                what the last key did or why a move was refused; the command line
keys                  a one-line reminder of the keys (when the one other member left has gone:
                      the abandon key first)
====================  ========================================================================

A spectator's view (``seat is None``) shows every tableau in two lines instead of one player's.
Between rounds the :class:`~p2p_nertz.ui.view.Board` replaces the table: the lake sorted back
to its owners, each player's +1s and −2s, bonus, penalties, the round and game totals.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from p2p_nertz.rules import SUITS, Card, Lake, Pile, PlayerScore, RoundStatus, Rules, Suit, Table
from p2p_nertz.rules.cards import RANK_NAMES
from p2p_nertz.ui.screen import Row, Screen, Span, Style
from p2p_nertz.ui.view import (
    YOUR_TURN,
    Board,
    Link,
    Pace,
    TableView,
    card_text,
    counted,
    decided_by,
    how_to_play,
    pace_words,
    points_words,
)

__all__ = [
    "ABANDON_HELP",
    "KEY_HELP",
    "MIN_HEIGHT",
    "MIN_WIDTH",
    "SPECTATOR_HELP",
    "how_to_play",
    "render",
]

MIN_WIDTH = 80
MIN_HEIGHT = 24

#: The lake's heading says what the digits after a card are (a newcomer read "2♦ 02" as a
#: count; only the help said it was each card's owner, from the ace up).
LAKE_NOTE = "· the digits after a card: its owners' seats, ace first · * in the air"

#: The header's turn (turn-based play): ours stands out.
_TURN_STYLE = {YOUR_TURN: Style.GOOD}

#: The narrowest foundation of a packed lake: a card (up to 3), the air mark and an owner.
_PACKED_MIN = 6

#: The keys, as the help screen lists them (the README shows the same table).
KEY_HELP: tuple[tuple[str, str], ...] = (
    ("n  w  1-6", "pick a card: the Nerts top, the waste top, a work pile"),
    ("then l (or f)", "…to the lake (onto the pile it fits there)"),
    ("then 1-6", "…onto that work pile (a run moves whole, or slides under)"),
    ("n n, w w, 3 3", "the same key twice: straight to the lake"),
    ("s  or  space", "turn the stock (three cards, or the waste back over)"),
    ("p", "pass: I am stuck (once all have passed, the stocks rotate)"),
    ("r", "rotate alone (with the rotate-alone rule, once stuck)"),
    ("x", "call Nerts (twice with cards left: a false call costs)"),
    (": or /", "type a move: N>L, W>3, 1:2>4, N>_2, W>L@0S, S, P, X"),
    ("Esc", "cancel the pick or the command line"),
    ("Enter", "close the end-of-round board"),
    ("?  or  h", "this help; again: how to play (any other key closes it)"),
    ("q", "leave the game (asks first); Ctrl-C leaves at once"),
)

#: A spectator's keys (``nertz watch``): it only watches, and ``q`` quits at once. Its help
#: listed the players' keys, picks and moves that only say "a spectator only watches", and
#: "q leave the game (asks first)".
SPECTATOR_HELP: tuple[tuple[str, str], ...] = (
    ("Enter", "close the end-of-round board"),
    ("?  or  h", "this help; again: how to play (any other key closes it)"),
    ("q", "stop watching (the game goes on without you); Ctrl-C too"),
)

#: The abandon key, listed in the help only while it is on offer (:attr:`TableView.abandon`).
ABANDON_HELP: tuple[str, str] = (
    "a",
    "abandon: end the game on the totals (your opponent has gone)",
)


def _hint(rules: Rules) -> str:
    """The footer's keys, with this game's work piles (4 by default: a footer saying 1-6 sent
    a newcomer to keys 5 and 6, "no work pile 5 in this game")."""
    piles = f"1-{rules.work_piles}"
    return (
        f"n w {piles} pick, then l lake or {piles} · s stock · p stuck · x Nerts · : move · ? · q"
    )


_LINK_STYLE = {
    Link.OK: Style.GOOD,
    Link.SUSPECTED: Style.WARN,
    Link.DROPPED: Style.BAD,
    Link.REJOINING: Style.WARN,
    Link.LEFT: Style.BAD,
}
_SUIT_NAMES = {
    Suit.CLUBS: "clubs",
    Suit.DIAMONDS: "diamonds",
    Suit.HEARTS: "hearts",
    Suit.SPADES: "spades",
}


def _fit(words: str, room: int) -> str:
    """A player's last action in ``room`` columns: "work pile" shortened to "pile" first, then
    cut with "…" ("card from work pile 3 onto work pile" lost its pile number at 80×24).

    >>> _fit("card from work pile 3 onto work pile 4", 30)
    'card from pile 3 onto pile 4'
    >>> _fit("3 cards from 10♥ onto work pile 4", 20)
    '3 cards from 10♥ on…'
    """
    if len(words) > room:
        words = words.replace("work pile", "pile")
    if len(words) > room:
        words = words[: max(0, room - 1)] + "…" if room > 0 else ""
    return words


def _notation(rules: Rules) -> tuple[str, ...]:
    """The moves' notation in brief, under the keys: what ``:`` takes, and what the players'
    rows show of each move (``N>_4``, ``3>1``). The keys page listed ``1:2>4`` and ``N>_2``
    without saying what they were, and neither ``?`` nor ``nertz rules`` said it elsewhere."""
    return (
        "  moves as written (typed, and in the players' rows): N Nerts pile, W waste,",
        f"  1-{rules.work_piles} work piles, L lake, S stock, P pass; 1:2>4 two cards of pile "
        "1 onto 4,",
        "  N>_2 under pile 2 (slide-under), W>L@0S onto seat 0's spades",
    )


def render(
    view: TableView,
    width: int = MIN_WIDTH,
    height: int = MIN_HEIGHT,
    *,
    symbols: bool = True,
) -> Screen:
    """Lay ``view`` out on a ``width`` × ``height`` screen (see the module docstring).

    Args:
        view: what to show.
        width: columns (at least :data:`MIN_WIDTH` for everything to fit).
        height: rows (at least :data:`MIN_HEIGHT`).
        symbols: suits as ``♣ ♦ ♥ ♠``; ``False`` for the letters ``C D H S``.
    """
    return _Painter(view, _Pen(width, symbols), height).screen()


_Rows = list[tuple[Span, ...]]
_Foundation = tuple[int, Card, str, bool]  # owner, top card, owner digits, in the air


class _Pen:
    """Rows of a screen's width, cards with suit symbols or letters: it knows nothing of the
    game, only how to draw its pieces."""

    def __init__(self, width: int, symbols: bool) -> None:
        self.width = width
        self.symbols = symbols

    def row(self) -> Row:
        return Row(self.width)

    def card(self, row: Row, card: Card, style: Style | None = None) -> None:
        text = card_text(card, symbols=self.symbols)
        if style is None:
            style = Style.DIM if card.suit is None else Style.RED if card.red else Style.BLACK
        row.add(text, style)

    def cards(self, row: Row, cards: Sequence[Card]) -> None:
        if not cards:
            row.add("-", Style.DIM)
        for i, c in enumerate(cards):
            if i:
                row.add(" ")
            self.card(row, c)

    def run(self, row: Row, cards: Sequence[Card]) -> None:
        """A work pile in short: its cards if two or fewer, else ``first…last``."""
        if not cards:
            row.add("-", Style.DIM)
        elif len(cards) <= 2:
            self.cards(row, cards)
        else:
            self.card(row, cards[0])
            row.add("…", Style.DIM)
            self.card(row, cards[-1])

    def foundation(self, row: Row, top: Card, owners: str, air: bool) -> None:
        """A foundation of the lake: its top card right-aligned in three columns, ``*`` while
        a card of it is in the air, then ``owners`` (as many digits as the caller fits)."""
        text = card_text(top, symbols=self.symbols)
        row.add(" " * (3 - len(text)))
        style = Style.PENDING if air else (Style.RED if top.red else Style.BLACK)
        row.add(text, style)
        row.add("*" if air else " ", Style.PENDING if air else Style.PLAIN)
        row.add(owners, Style.DIM)

    def rule(self, title: str, note: str = "") -> tuple[Span, ...]:
        """A heading across the screen; ``note`` (dim) after the title when it fits whole."""
        row = self.row()
        row.add("─ ", Style.DIM).add(title, Style.BOLD).add(" ", Style.DIM)
        if note and len(title) + len(note) + 6 <= self.width:
            row.add(note, Style.DIM).add(" ", Style.DIM)
        row.pad_to(self.width, "─", Style.DIM)
        return row.spans()

    def suit(self, suit: Suit) -> str:
        return suit.symbol if self.symbols else suit.value

    def message_row(self, text: str, style: Style = Style.WARN) -> tuple[Span, ...]:
        return self.row().add(text, style).spans()

    def messages(self, messages: Sequence[str], room: int) -> _Rows:
        """Exactly ``room`` rows: blanks, then the newest announcements (just above the status),
        one longer than the row wrapped at its words under its ``»``. Cut at the edge, a
        newcomer who left read "the game is over: bot1 wins with 0 on the rounds scored (a"
        and not why. The newest comes whole first; an older one that no longer fits whole is
        left out (the first rows of the newest, if it alone does not fit)."""
        if room <= 0:
            return []
        rows: _Rows = []
        for message in reversed(messages):
            lines = _wrap(message, self.width - 2)
            if rows and len(rows) + len(lines) > room:
                break
            head, *more = lines[:room]
            rows[:0] = [
                self.row().add("» ", Style.DIM).add(head, Style.WARN).spans(),
                *(self.row().add("  ").add(line, Style.WARN).spans() for line in more),
            ]
            if len(rows) >= room:
                break
        blanks: _Rows = [()] * (room - len(rows))
        return blanks + rows


class _Painter:
    """The whole screen: the header, the status and hint rows, and between them the table
    (:class:`_TablePainter`), the end-of-round board (:class:`_BoardPainter`) or the help."""

    def __init__(self, view: TableView, pen: _Pen, height: int) -> None:
        self.view = view
        self.pen = pen
        self.width = pen.width
        self.height = height

    def screen(self) -> Screen:
        view = self.view
        pen = self.pen
        top = [self.header()]
        bottom = [self.status(), self.hint()]
        room = self.height - len(top) - len(bottom)
        if view.help:
            body = self.help(room)
        elif view.board is not None:
            body = _BoardPainter(view, pen, view.board).rows(room)
        elif view.table is None:
            body = [pen.message_row("waiting for the deal…", Style.DIM)]
            body += pen.messages(_news(view, room - 1), room - 1)
        else:
            body = _TablePainter(view, pen, view.table).rows(room)
        body = body[:room]
        body += [()] * (room - len(body))
        return Screen(self.width, self.height, tuple(top + body + bottom))

    def header(self) -> tuple[Span, ...]:
        view = self.view
        row = self.pen.row()
        row.add("p2p-nertz", Style.BOLD)
        words = view.turn_words()
        turn = None if words is None else (f" · {words}", _TURN_STYLE.get(words, Style.PLAIN))
        right = view.you()
        right += "   ? help"
        # The game's length goes first when the row is short of room (a turn, a long name).
        heading = view.heading()
        if len(row) + 2 + len(heading) + len(turn[0] if turn else "") + 1 + len(right) > self.width:
            heading = view.heading(brief=True)
        row.add("  " + heading, Style.PLAIN)
        if turn is not None:
            row.add(*turn)
        row.pad_to(max(len(row) + 1, self.width - len(right)))
        row.add(right, Style.DIM)
        return row.spans()

    def hint(self) -> tuple[Span, ...]:
        view = self.view
        row = self.pen.row()
        if view.command is not None:
            row.add("move> ", Style.KEY).add(view.command, Style.BOLD).add("▏", Style.KEY)
            row.add("   Enter plays · Esc cancels", Style.DIM)
        elif view.seat is None:
            row.add("spectator · ? help · q quit", Style.DIM)
        elif view.gone is not None:
            row.add("q", Style.KEY).add(f" quits: {view.gone}", Style.WARN)
        elif view.phase == "over":  # (not the play keys, which do nothing now)
            row.add("q", Style.KEY).add(" quits: the game is over", Style.WARN)
            row.add(" · ? help", Style.DIM)
        elif view.alone:
            row.add("q", Style.KEY).add(" leaves: nobody else is left at the table", Style.WARN)
            row.add(" · ? help", Style.DIM)
        elif view.abandon is not None:
            row.add("a", Style.KEY).add(" " + view.abandon.offer(), Style.WARN)
            # The keys after it, whole: cut at the edge ("· p stu") they read as a fault.
            room = self.width - len(row) - len(" · ")
            keys = next(
                (k for k in (_hint(view.rules), "? help · q leaves", "? help") if len(k) <= room),
                "",
            )
            if keys:
                row.add(" · " + keys, Style.DIM)
        else:
            row.add(_hint(view.rules), Style.DIM)
        return row.spans()

    def status(self) -> tuple[Span, ...]:
        view = self.view
        row = self.pen.row()
        if view.status:
            row.add(view.status, Style.BAD if view.refused else Style.WARN)
        return row.spans()

    def help(self, room: int) -> _Rows:
        if self.view.help_page == 1:
            return self.how_to_play(room)
        rows = [self.pen.rule("keys  (? again: how to play)")]
        keys = KEY_HELP if self.view.abandon is None else (*KEY_HELP, ABANDON_HELP)
        if self.view.seat is None:
            keys = SPECTATOR_HELP
        # This game's work piles (the footer's, "n w 1-4"), not the most a game may have.
        piles = f"1-{self.view.rules.work_piles}"
        for key, what in keys:
            row = self.pen.row()
            row.add(f"  {key.replace('1-6', piles)}", Style.KEY).pad_to(18)
            for line in _wrap(what, self.width - 18):  # (80 columns: nothing cut)
                rows.append(row.add(line).spans())
                row = self.pen.row().pad_to(18)
        rows.append(())
        rows.append(
            self.pen.row()
            .add("  lake: top card, then each card's owner (seat) from the ace up; ", Style.DIM)
            .add("*", Style.PENDING)
            .add(" = in the air", Style.DIM)
            .spans()
        )
        rows += [self.pen.row().add(line, Style.DIM).spans() for line in _notation(self.view.rules)]
        return rows[:room]

    def how_to_play(self, room: int) -> _Rows:
        rows = [self.pen.rule("how to play  (? again: the keys)")]
        for line in how_to_play(self.view.rules, watcher=self.view.seat is None):
            row = self.pen.row()
            if line:
                row.add("  " + line)
            rows.append(row.spans())
        return rows[:room]


class _TablePainter:
    """A round in play: the lake, the players (or, for a spectator, every tableau), the
    person's own tableau and the newest announcements."""

    def __init__(self, view: TableView, pen: _Pen, table: Table) -> None:
        self.view = view
        self.pen = pen
        self.table = table
        self.width = pen.width

    def rows(self, room: int) -> _Rows:
        view = self.view
        pen = self.pen
        if view.seat is None:
            mine: _Rows = []
            players = self.all_tableaux()
        else:
            mine = self.tableau(view.seat)
            players = self.players()
        lake_rows = self.lake_rows(self.table.lake)
        fixed = 2 + 1 + len(players) + len(mine)  # lake rule + suit row, players rule
        want_messages = 2
        depth = max((len(c) for c in lake_rows), default=0)
        if depth + 1 > room - fixed - want_messages:
            want_messages = 0  # a full lake (8 players at 80×24) before the announcements
        lake_room = max(1, room - fixed - want_messages)
        lake = self.lake(lake_rows, lake_room)
        while view.waits and fixed - 1 + len(lake) >= room and lake_room > 1:
            # ... but not before the votes the table waits on: a row at least (:func:`_news`).
            lake_room -= 1
            lake = self.lake(lake_rows, lake_room)
        body = [pen.rule("lake", LAKE_NOTE), *lake]
        body += [pen.rule("players" if view.seat is not None else "tableaux"), *players]
        body += mine
        body += pen.messages(_news(view, room - len(body)), room - len(body))
        return body

    def lake_rows(self, lake: Lake) -> list[list[_Foundation]]:
        """Per suit, the foundations: (owner, top card, owner digits, in the air)."""
        columns: list[list[_Foundation]] = [[] for _ in SUITS]
        for fid in lake:
            cards = lake[fid]
            owners = "".join(str(lc.owner) for lc in cards)  # seats from 0, as the notation
            air = any(self.view.in_air(lc.lamport) for lc in cards)
            columns[SUITS.index(fid.suit)].append((fid.owner, cards[-1].card, owners, air))
        return columns

    def lake(self, columns: list[list[_Foundation]], room: int) -> _Rows:
        pen = self.pen
        cw = self.width // 4
        head = pen.row()
        for i, suit in enumerate(SUITS):
            head.pad_to(i * cw)
            style = Style.RED if suit.is_red else Style.BLACK
            head.add(pen.suit(suit), style).add(" " + _SUIT_NAMES[suit], Style.DIM)
            if columns[i]:  # ("♣ clubs 2" was a number without its unit)
                n = len(columns[i])
                head.add(f": {counted(n, 'pile')}", Style.DIM)
        rows = [head.spans()]
        depth = max((len(c) for c in columns), default=0)
        if depth == 0:
            rows.append(pen.row().add("  (empty: an ace starts a foundation)", Style.DIM).spans())
            return rows
        lines = max(1, room - 1)
        per = math.ceil(depth / lines)
        if per > 1 and cw // per >= _PACKED_MIN:
            # More foundations than rows: several side by side in each suit's column, each
            # with as many owner digits as fit (the first is the foundation's owner).
            return rows + self.packed_lake(columns, per, cw // per)
        shown = min(depth, lines)
        for r in range(shown):
            row = pen.row()
            for i, column in enumerate(columns):
                row.pad_to(i * cw)
                if r == shown - 1 and len(column) > shown:
                    row.add(f" +{len(column) - shown + 1} more", Style.DIM)
                    continue
                if r >= len(column):
                    continue
                _, top, owners, air = column[r]
                pen.foundation(row, top, owners[: cw - 6], air)
            rows.append(row.spans())
        return rows

    def packed_lake(self, columns: list[list[_Foundation]], per: int, width: int) -> _Rows:
        """The lake's foundations ``per`` to a row in each suit's column, ``width`` each."""
        cw = self.width // 4
        depth = max(len(c) for c in columns)
        rows = []
        for r in range(math.ceil(depth / per)):
            row = self.pen.row()
            for i, column in enumerate(columns):
                for k, (_, top, owners, air) in enumerate(column[r * per : (r + 1) * per]):
                    row.pad_to(i * cw + k * width)
                    # (a blank left between two)
                    self.pen.foundation(row, top, owners[: width - 5], air)
            rows.append(row.spans())
        return rows

    def player_cell(self, row: Row, seat: int, width: int) -> None:
        view = self.view
        table = self.table
        start = len(row)
        mine = seat == view.seat
        t = table.tableaux[seat]
        row.add(view.name(seat)[:12], Style.BOLD if mine else Style.PLAIN)
        row.pad_to(start + 13)
        row.add("N ", Style.DIM).add(f"{len(t.nerts):2d}", Style.BAD if t.nerts else Style.GOOD)
        row.add("  W ", Style.DIM)
        if t.waste:
            self.pen.card(row, t.waste[-1])
        else:
            row.add("-", Style.DIM)
        row.pad_to(start + 25)
        if not table.active[seat]:
            row.add("out   ", Style.DIM)
        elif seat in table.passed_for:  # (stuck by a pass on its behalf: RULES.md)
            row.add("passed ", Style.WARN)
        elif table.stuck[seat]:
            row.add("stuck ", Style.WARN)
        else:
            row.pad_to(start + 31)
        last = view.last[seat] if seat < len(view.last) else ""
        if last == "stuck" and table.stuck[seat]:
            last = ""
        link = view.link(seat)
        total = points_words(view.total(seat)).rjust(8)  # (the game's: scored at a round's end)
        tail = len(total) + 1 + len(link.value) + 1
        room = max(0, width - (len(row) - start) - tail)
        row.add(_fit(last, room), Style.DIM)
        row.pad_to(start + width - tail)
        row.add(link.value, _LINK_STYLE[link]).add(" ").add(total, Style.BOLD)

    def players(self) -> _Rows:
        table = self.table
        seats = list(range(table.seats))
        two = len(seats) > 4 and self.width >= 2 * 60
        rows = []
        if two:
            half = self.width // 2
            for i in range(0, len(seats), 2):
                row = self.pen.row()
                self.player_cell(row, seats[i], half - 1)
                if i + 1 < len(seats):
                    row.pad_to(half)
                    self.player_cell(row, seats[i + 1], half)
                rows.append(row.spans())
        else:
            for seat in seats:
                row = self.pen.row()
                self.player_cell(row, seat, self.width)
                rows.append(row.spans())
        return rows

    def key(self, row: Row, key: str, pile: Pile) -> None:
        view = self.view
        if view.selected is pile:
            row.add(f">{key}<", Style.SELECTED)
        else:
            row.add(f"[{key}]", Style.KEY)

    def tableau(self, seat: int) -> _Rows:
        view = self.view
        table = self.table
        t = table.tableaux[seat]
        rows = [self.pen.rule(view.you())]
        row = self.pen.row()
        self.key(row, "n", Pile.NERTS)
        row.add(" Nerts ", Style.DIM)
        if t.nerts:
            self.pen.card(row, t.nerts[-1])
            row.add(f"  {len(t.nerts)} left", Style.DIM)
        else:
            row.add("empty: call Nerts with x!", Style.GOOD)
        self.frozen(row, Pile.NERTS)
        row.pad_to(36)
        row.add("[s]", Style.KEY).add(f" stock {len(t.stock):2d}", Style.DIM)
        row.pad_to(51)
        self.key(row, "w", Pile.WASTE)
        row.add(" waste ", Style.DIM)
        if t.waste:
            fan = t.waste[-3:]
            for i, c in enumerate(fan):
                if i:
                    row.add(" ")
                self.pen.card(row, c)
            if len(t.waste) > 3:
                row.add(f" ({len(t.waste)})", Style.DIM)
        else:
            row.add("-", Style.DIM)
        self.frozen(row, Pile.WASTE)
        rows.append(row.spans())
        for pile in t.work_piles:
            row = self.pen.row()
            self.key(row, str(int(pile)), pile)
            row.add(" ")
            self.pen.cards(row, t.pile(pile))
            self.frozen(row, pile)
            rows.append(row.spans())
        return rows

    def frozen(self, row: Row, pile: Pile) -> None:
        if pile in self.view.frozen:
            row.add(" ⇡in the air" if self.pen.symbols else " ^in the air", Style.PENDING)

    def all_tableaux(self) -> _Rows:
        """A spectator's view: every seat in two rows (summary, then work piles)."""
        table = self.table
        rows = []
        for seat in range(table.seats):
            t = table.tableaux[seat]
            row = self.pen.row()
            self.player_cell(row, seat, self.width)
            rows.append(row.spans())
            row = self.pen.row()
            row.add("   N ", Style.DIM)
            if t.nerts:
                self.pen.card(row, t.nerts[-1])
            else:
                row.add("-", Style.DIM)
            row.add(f" S {len(t.stock)} ", Style.DIM)
            for pile in t.work_piles:
                row.add(f" {int(pile)}:", Style.DIM)
                self.pen.run(row, t.pile(pile))
            rows.append(row.spans())
        return rows


class _BoardPainter:
    """The end-of-round board: how the round ended, each player's score and cards in the lake,
    the person's pace, then the game's result or what comes next."""

    def __init__(self, view: TableView, pen: _Pen, board: Board) -> None:
        self.view = view
        self.pen = pen
        self.board = board
        self.width = pen.width

    def rows(self, room: int) -> _Rows:
        board = self.board
        rows = [self.pen.rule(f"round {board.round} over — {self.how()}")]
        by_owner: dict[int, list[Card]] = {}
        for lc in board.lake.cards():
            by_owner.setdefault(lc.owner, []).append(lc.card)
        for p in board.score.players:
            rows += self.player(p, sorted(by_owner.get(p.seat, []), key=Card.sort_key))
        # The person's pace, in the blank row before the end (the board keeps its height).
        rows.append(() if board.pace is None else self.pace_row(board.pace))
        rows += self.ending()
        rows += self.pen.messages(_news(self.view, room - len(rows)), room - len(rows))
        return rows

    def how(self) -> str:
        """How the round ended, for the board's title."""
        score = self.board.score
        if score.status is RoundStatus.NERTS:
            callers = ", ".join(self.view.seat_name(c) for c in score.callers)
            return f"Nerts! called by {callers}"
        if score.status is RoundStatus.BLOCKED:
            return "blocked: nobody could play"
        # Cut short by an abandon (docs/protocol.md §9.3): void, nobody scores it.
        return "void: the game was abandoned"

    def player(self, p: PlayerScore, lake: Sequence[Card]) -> _Rows:
        """A player's score row, then its cards in the ``lake`` (none if it sat out)."""
        view = self.view
        seat = p.seat
        row = self.pen.row()
        row.add(view.name(seat)[:14], Style.BOLD if seat == view.seat else Style.PLAIN)
        row.pad_to(15)
        if not p.played:
            row.add("sat this round out", Style.DIM)
            return [row.spans()]
        row.add(f"lake +{p.lake:<3d}", Style.GOOD)
        penalty = p.nerts_card_penalty * p.nerts_left
        minus = "−" if penalty else " "  # (an empty Nerts pile costs 0, not "−0")
        row.add(
            f" Nerts −{p.nerts_card_penalty}×{p.nerts_left:<2d}= {minus}{penalty:<3d}",
            Style.BAD if p.nerts_left else Style.DIM,
        )
        row.add(f" bonus +{p.bonus:<3d}", Style.GOOD if p.bonus else Style.DIM)
        if p.penalty:
            row.add(f" false call −{p.penalty}", Style.BAD)
        row.add(f" round {p.total:+4d}", Style.BOLD)
        totals = self.board.totals
        team = view.rules.team_of(seat)
        total = totals[team] if team < len(totals) else 0
        row.add(f"  game {total:4d}", Style.BOLD)
        return [row.spans(), *self.lake_list(lake)]

    def ending(self) -> _Rows:
        """The game's result (and leaving), or when the next round starts."""
        view = self.view
        pen = self.pen
        result = self.board.result
        if result is None and view.countdown is not None:
            return [
                pen.message_row(
                    f"next round in {view.countdown} s · Enter: ready now (it starts when "
                    "everyone is)",  # (one row at 80 columns)
                    Style.WARN,
                )
            ]
        if result is None:
            return [pen.message_row("Enter: back to the table (the next round)", Style.DIM)]
        winners = ", ".join(view.winner_name(w) for w in result.winners)
        rows = [
            pen.row()
            .add("game over — winner: ", Style.BOLD)
            .add(winners, Style.GOOD)
            .add(f" with {result.winning_total}", Style.BOLD)
            .add(f" ({decided_by(result.termination, view.rules)})", Style.DIM)
            .spans()
        ]
        if view.provisional:
            rows.append(
                pen.message_row(
                    "provisional: the other player has not been heard since; the rounds "
                    "both saw scored decide",
                    Style.BAD,
                )
            )
        rows.append(pen.message_row("q leaves", Style.DIM))
        return rows

    def pace_row(self, pace: Pace) -> tuple[Span, ...]:
        """``your 1:12 round: 30 moves/min · 7.5 cards/min to the lake · bots: --speed 1``
        (``bots: --practice`` below level 1's pace; one row at 80 columns; docs/pace.md says
        how to read it)."""
        head, moves, cards, bots = re.split(r"(?<=: )| · ", pace_words(pace), maxsplit=3)
        row = self.pen.row().add(head, Style.BOLD).add(moves, Style.GOOD)
        return row.add(f" · {cards}", Style.GOOD).add(f" · {bots}", Style.DIM).spans()

    def lake_list(self, cards: Sequence[Card]) -> _Rows:
        """A player's cards in the lake on the board: the ranks by suit, three or more in a
        row as a range (``♣ A-4 6  ♥ A``), wrapped under ``lake:`` where the row ends, never
        cut."""
        indent = 9
        line = self.pen.row().add("   lake: ", Style.DIM)
        if not cards:
            return [line.add("-", Style.DIM).spans()]
        groups: list[tuple[str, Style, list[str]]] = []
        for card in cards:
            if card.suit is None or card.joker:  # a joker: shown whole, as declared
                groups.append(("", Style.DIM, [card_text(card, symbols=self.pen.symbols)]))
                continue
            mark = self.pen.suit(card.suit)
            if not groups or groups[-1][0] != mark:
                groups.append((mark, Style.RED if card.red else Style.BLACK, []))
            groups[-1][2].append(str(card.rank))
        rows = []
        for mark, style, numbers in groups:
            ranks = _ranges([int(n) for n in numbers]) if mark else numbers
            words = [f"{mark} {ranks[0]}" if mark else ranks[0], *ranks[1:]]
            for i, word in enumerate(words):
                gap = 0 if len(line) == indent else (2 if i == 0 else 1)
                if len(line) + gap + len(word) > self.width and len(line) > indent:
                    rows.append(line.spans())
                    line = self.pen.row().pad_to(indent)
                    gap = 0
                line.add(" " * gap).add(word, style)
        rows.append(line.spans())
        return rows


def _news(view: TableView, room: int) -> tuple[str, ...]:
    """The announcements for ``room`` rows (:meth:`TableView.news`), the votes the table
    waits on last; where their rows do not all fit, their one-row summary
    (:attr:`TableView.waits_line`) instead: a person sees who is voted out and how many
    votes stand at every table size (session 37: at eight players at 80×24 the one row left
    showed only "no majority yet: …", the last of them)."""
    news = view.news()
    if not view.waits or len(view.waits) <= room or not view.waits_line:
        return news
    return (*news[: len(news) - len(view.waits)], view.waits_line)


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken at spaces where it can be.

    >>> _wrap("turn the stock (three cards)", 12)
    ['turn the', 'stock (three', 'cards)']
    """
    lines: list[str] = []
    line = ""
    for whole in text.split(" "):
        word = whole
        while len(word) > width > 0:  # a word longer than the line: cut it
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:width])
            word = word[width:]
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return lines


def _ranges(ranks: Sequence[int]) -> list[str]:
    """Sorted ranks as words, three or more consecutive ones as a range.

    >>> _ranges([1, 2, 3, 4, 6, 7, 9, 9, 10, 11, 12])
    ['A-4', '6', '7', '9', '9-Q']
    """
    runs: list[list[int]] = []
    for rank in ranks:
        if runs and rank == runs[-1][-1] + 1:
            runs[-1].append(rank)
        else:
            runs.append([rank])
    words = []
    for run in runs:
        if len(run) >= 3:
            words.append(f"{RANK_NAMES[run[0]]}-{RANK_NAMES[run[-1]]}")
        else:
            words += [RANK_NAMES[r] for r in run]
    return words
