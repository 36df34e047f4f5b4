"""What the table screen shows, as one immutable value built from a table or from a peer.

A :class:`TableView` holds everything the renderer needs and nothing else: the table as the
local peer sees it (tentative), which lake cards are still in the air, each player's link and
last action, the running totals, the announcements, the key state (a picked source, a command
being typed) and, between rounds, the end-of-round :class:`Board`. Tests build one straight from
the rules notation; the live app builds one from a :class:`~p2p_nertz.protocol.peer.Peer` with
:class:`~p2p_nertz.ui.tracker.Tracker`.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from p2p_nertz.bots.base import Pacing
from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.finality import KNOWN, VOTED
from p2p_nertz.protocol.names import skeleton
from p2p_nertz.protocol.reach import OutOfReach
from p2p_nertz.protocol.unmet import (
    DropEnd,
    DropPending,
    DropWaits,
    FeedHeld,
    HeldBack,
    HeldEnd,
    Owed,
    OwedEnd,
    Owing,
    SharesOwed,
    Unmet,
    UnmetEnd,
    VoteShort,
)
from p2p_nertz.rules import (
    Card,
    GameResult,
    Lake,
    Move,
    MoveKind,
    Pile,
    RoundScore,
    RoundStatus,
    Rules,
    Suit,
    Table,
    Termination,
)
from p2p_nertz.rules.cards import RANK_NAMES, is_unknown
from p2p_nertz.words import counted, plural

__all__ = [
    "drop_words",
    "feed_held_words",
    "held_words",
    "owed_notice_words",
    "owed_words",
    "waits_notice_words",
    "unmet_summary",
    "vote_short_words",
    "waits_summary",
    "NOT_UP",
    "PASS_GONE",
    "Board",
    "Gone",
    "Link",
    "Pace",
    "TableView",
    "card_text",
    "cards_up",
    "counted",
    "plural",
    "board_columns",
    "bots_hint",
    "decided_by",
    "distinct_names",
    "ended_words",
    "false_call_question",
    "how_to_play",
    "how_to_watch",
    "in_reach_words",
    "open_move_words",
    "out_of_reach_words",
    "page_status",
    "pass_gone_words",
    "passed_for_words",
    "stale_pass_words",
    "stuck_words",
    "pile_name",
    "play_words",
    "points_words",
    "pace_words",
    "reach_words",
    "YOUR_TURN",
]


YOUR_TURN = "your turn"
"""Whose turn it is when it is ours, in turn-based play (:meth:`TableView.turn_words`)."""

NOT_UP = "your cards are not up yet: they turn up once the others have answered the deal"
"""The status of a table key pressed while the deal's cards are still face down to us
(:func:`cards_up`): a move then was refused by the core in its own words."""


def cards_up(table: Table | None, seat: int | None) -> bool:
    """Whether ``seat``'s cards dealt face up show at ``table``: its Nerts pile's top and
    every work pile's cards. In a shuffle deal each is opened by the whole table's shares
    (docs/shuffle.md §10.14), which may arrive after play opens; until then they show ``??``.
    ``True`` with no table or no seat (nothing to wait for).

    >>> from p2p_nertz.rules import Rules, Table, Tableau
    >>> t = Tableau.parse("N: KS | 1: 2D | 2: 2H | 3: 4D | 4: 4H | S: - | W: -")
    >>> cards_up(Table.from_tableaux(Rules(), [t, t]), 0), cards_up(None, 0)
    (True, True)
    """
    if table is None or seat is None or not 0 <= seat < table.seats:
        return True
    tableau = table.tableaux[seat]
    shown = (*tableau.nerts[-1:], *(card for pile in tableau.work for card in pile))
    return not any(is_unknown(card) for card in shown)


class Link(enum.Enum):
    """How a player's connection looks from here (DESIGN.md §6)."""

    OK = "ok"
    SUSPECTED = "suspected"  #: silent past the suspicion timeout
    DROPPED = "dropped"  #: voted out by a majority
    REJOINING = "rejoining"  #: dropped, back, and plays again from the next round
    LEFT = "left"  #: signed a leave


@dataclass(frozen=True, slots=True)
class Gone:
    """The one other member left, gone silent: the abandon key is on offer (DESIGN.md §6).

    The peer core takes an abandon only once that member has been silent for its
    ``drop_after``; until then the key says how long is left instead of asking.

    Attributes:
        seat: its seat (from 0).
        name: its name.
        silent: seconds it has been silent (``0``: not known).
        wait: seconds of silence the core still wants before it takes an abandon (``0``: it
            takes one now).
        back: the names of the dropped players readmitted from the next round, whom the
            abandon shuts out too (:attr:`~p2p_nertz.protocol.local.AbandonAnswer.back`).

    >>> Gone(1, "Bob", silent=4.2, wait=25.8).waiting()
    'Bob has been silent 4 s; you can abandon in 26 s'
    >>> Gone(1, "Bob").waiting() is None
    True
    >>> Gone(1, "Bea").offer(), Gone(1, "Bea", wait=3.2, back=("Cy",)).offer()
    ('ends the game (Bea gone)', 'ends the game in 4 s (Bea silent) before Cy is back')
    >>> Gone(1, "Bea", back=("Cy", "Dee")).question()
    'end the game before Cy and Dee are back (Bea gone)? a or y ends it, other keys play on'
    """

    seat: int
    name: str
    silent: float = 0.0
    wait: float = 0.0
    back: tuple[str, ...] = ()

    def offer(self) -> str:
        """The abandon key's offer in the footer, after the key."""
        if self.wait > 0:
            text = f"ends the game in {math.ceil(self.wait)} s ({self.name} silent)"
        else:
            text = f"ends the game ({self.name} gone)"
        return text + self._before_back()

    def question(self) -> str:
        """What the abandon key asks before it ends the game."""
        if self.back:  # (shorter: the row has room for the names it adds)
            return (
                f"end the game{self._before_back()} ({self.name} gone)? a or y ends it, "
                "other keys play on"
            )
        return (
            f"{self.name} gone: end the game on the totals? a or y ends it, any other key plays on"
        )

    def _before_back(self) -> str:
        if not self.back:
            return ""
        who = " and ".join(
            [", ".join(self.back[:-1]), self.back[-1]] if len(self.back) > 1 else self.back
        )
        return f" before {who} {'is' if len(self.back) == 1 else 'are'} back"

    def waiting(self) -> str | None:
        """What to tell a player who presses the key too early; ``None``: it is not early."""
        if self.wait <= 0:
            return None
        return (
            f"{self.name} has been silent {math.floor(self.silent)} s; "
            f"you can abandon in {math.ceil(self.wait)} s"
        )


@dataclass(frozen=True, slots=True)
class Pace:
    """A person's pace over one round, for the board (docs/pace.md says how to read it).

    The counts are the player's signed events of the round as the final fold holds them; the
    length is the node's clock from the round's deal being final to its end being final.

    Attributes:
        moves: the player's moves in the round: cards moved, stock turns and rotations (not
            passes or calls: a stuck person may pass again and again while waiting).
        cards: their cards kept in the lake.
        seconds: the round's length.

    >>> pace = Pace(moves=36, cards=9, seconds=72.0)
    >>> pace.moves_per_minute, pace.cards_per_minute, pace.bot_speed
    (30.0, 7.5, 1)
    >>> Pace(moves=130, cards=20, seconds=60.0).bot_speed
    5
    """

    moves: int
    cards: int
    seconds: float

    @property
    def moves_per_minute(self) -> float:
        """Moves a minute (0 for a round of no length)."""
        return 60.0 * self.moves / self.seconds if self.seconds > 0 else 0.0

    @property
    def cards_per_minute(self) -> float:
        """Cards to the lake a minute (0 for a round of no length)."""
        return 60.0 * self.cards / self.seconds if self.seconds > 0 else 0.0

    @property
    def bot_speed(self) -> int:
        """The fastest bot speed level that moves no faster than this (at least 1): level
        ``n`` makes about ``24 n`` moves a minute (:class:`~p2p_nertz.bots.base.Pacing`)."""
        fitting = [
            n for n in range(1, 11) if 60_000 / Pacing(n).mean_delay_ms <= self.moves_per_minute
        ]
        return max(fitting, default=1)

    @property
    def bot_option(self) -> str:
        """The option to play the bots with next: ``--speed N`` (:attr:`bot_speed`), or
        ``--practice`` below level 1's pace, which still outpaces this person ("--speed 1"
        told a newcomer at 15 moves a minute to play the bots that had just beaten them).

        >>> Pace(moves=15, cards=2, seconds=60.0).bot_option
        '--practice'
        >>> Pace(moves=36, cards=9, seconds=72.0).bot_option
        '--speed 1'
        """
        if self.moves_per_minute < 60_000 / Pacing(1).mean_delay_ms:
            return "--practice"
        return f"--speed {self.bot_speed}"


def pace_words(pace: Pace, *, page: bool = False) -> str:
    """The board's line of the person's pace (docs/pace.md says how to read it): 80 columns
    at the terminal; ``page``: the browser's board, which has the room to say what the
    option is for. The time is the round's length, and says so: a newcomer read "(4:44)"
    after the lake and could not tell what it timed. "your 4:44 round" keeps the
    ``--practice`` line of a 19:59 round within 80 columns, where "(round 4:44)" did not.

    >>> pace_words(Pace(moves=36, cards=9, seconds=72.0))
    'your 1:12 round: 30 moves/min · 7.5 cards/min to the lake · bots: --speed 1'
    >>> pace_words(Pace(moves=15, cards=3, seconds=60.0), page=True)[-40:]
    'the lake · bots to play next: --practice'
    """
    minutes, seconds = divmod(round(pace.seconds), 60)
    bots = "bots to play next" if page else "bots"
    return (
        f"your {minutes}:{seconds:02d} round: {pace.moves_per_minute:.0f} moves/min · "
        f"{pace.cards_per_minute:.1f} cards/min to the lake · {bots}: {pace.bot_option}"
    )


@dataclass(frozen=True, slots=True)
class Board:
    """The end of a round: its scores, the game totals after it, and its final lake.

    Attributes:
        round: the round number.
        score: each player's round score (lake cards, Nerts cards left, bonus, penalties).
        totals: the game totals after this round, per team (per seat unless pairs).
        lake: the round's final lake (sorted back to owners on the board).
        result: the game's result if this round ended it.
        pace: the local player's pace over the round (``None``: a spectator, or its length
            is not known).
    """

    round: int
    score: RoundScore
    totals: tuple[int, ...]
    lake: Lake
    result: GameResult | None = None
    pace: Pace | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TableView:
    """Everything one screen of the table shows (see the module docstring).

    Attributes:
        table: the round's table as seen here (``None`` before the first deal).
        seat: the local player's seat; ``None`` for a spectator.
        names: each seat's name.
        rules: the game's rules.
        round: the round number.
        phase: the game's phase (``"play"``, ``"reveal"``…), for the header.
        totals: game totals per team (per seat unless pairs), before this round.
        stable: lake cards claimed at a Lamport time above this are in the air; ``None``:
            every card shown is final.
        frozen: the local piles frozen by a claim in the air.
        links: each seat's link state (all ``OK`` when empty).
        last: each seat's last action, in words (:func:`play_words`; empty when unknown).
        messages: announcements, oldest first (the screen shows the newest).
        status: the status line (what a key did, why a move was refused).
        refused: the status line says why something was not done (drawn as bad news), as
            the keys or the controller made it (:attr:`~p2p_nertz.ui.keys.Status.refused`),
            never read back from its words.
        selected: the source pile picked by a key, waiting for a destination.
        command: the command line being typed (``None`` when closed).
        board: the end-of-round board, shown instead of the table while set.
        help: show the help instead of the table.
        help_page: the help page: 0 the keys, 1 how to play.
        final: the game is over and the node has stopped (the board shows standings).
        abandon: the one other member left, gone, when the abandon key is on offer (it shows
            in the footer, with the seconds left while the core still waits, and the help);
            ``None``: it is not.
        provisional: the game's result may still change (an abandoned game whose other
            member has not been heard to agree yet, docs/protocol.md §9.3): the board says so.
        countdown: seconds until the next round starts by itself, while the board of the last
            one is up (``None``: no countdown; the next round waits for every person at the
            table to close the board, or for their countdown to end).
        alone: every other member has left or been dropped, in a game not over: the footer
            says so and that ``q`` leaves (at once: there is nobody to wait for).
        gone: the node stopped waiting because the table is gone (docs/protocol.md §9.9), in
            words for the footer ("the others have left"); ``q`` quits. ``None``: it is not.
        unfollowed: a spectator's: every member that pushed the game to it has gone, in a
            game not over, in words for the header ("Ann left: not followed here"); the
            status line says the rest (:func:`~p2p_nertz.ui.tracker.unfollowed_words`).
        waits: each vote to drop a member that has stood without a majority for a while
            (:class:`~p2p_nertz.protocol.unmet.UnmetSince`), in words (:func:`unmet_words`),
            then each member held back as long (its events wait for events that never came,
            :func:`held_words`, session 38): shown after the announcements, the newest, for
            as long as it stands.
        waits_line: the same in one row (:func:`waits_summary`), for a screen with no room
            for every row of :attr:`waits` (eight players at 80×24).
    """

    table: Table | None
    seat: int | None
    names: tuple[str, ...]
    rules: Rules
    round: int = 1
    phase: str = "play"
    totals: tuple[int, ...] = ()
    stable: int | None = None
    frozen: frozenset[Pile] = frozenset()
    links: tuple[Link, ...] = ()
    last: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()
    status: str = ""
    refused: bool = False
    selected: Pile | None = None
    command: str | None = None
    board: Board | None = None
    help: bool = False
    help_page: int = 0
    final: bool = False
    abandon: Gone | None = None
    provisional: bool = False
    countdown: int | None = None
    alone: bool = False
    gone: str | None = None
    unfollowed: str | None = None
    waits: tuple[str, ...] = ()
    waits_line: str = ""

    def name(self, seat: int) -> str:
        """``"2 Bob"``: the seat number and the name.

        Seats count from 0 on the screen as in the notation (``W>L@2H`` is seat 2's heart
        foundation) and in every message: one numbering (issue 15).
        """
        name = self.names[seat] if 0 <= seat < len(self.names) else "?"
        return f"{seat} {name}"

    def seat_name(self, seat: int) -> str:
        """``"Bob (seat 2)"``: a player named in a sentence (a winner, a caller, whose turn
        it is), where :meth:`name`'s column form would read as a number glued to a name.

        >>> from p2p_nertz.rules import Rules
        >>> TableView(table=None, seat=0, names=("you", "bot1"), rules=Rules()).seat_name(1)
        'bot1 (seat 1)'
        """
        name = self.names[seat] if 0 <= seat < len(self.names) else "?"
        return f"{name} (seat {seat})"

    def turn_words(self) -> str | None:
        """Whose turn it is, in turn-based play while the round is played (``None``: not
        then): :data:`YOUR_TURN`, or ``"turn: Bob (seat 2)"``. The header of both tables
        says it (the page's said nothing: a person waited on their own turn unawares)."""
        table = self.table
        if table is None or table.status is not RoundStatus.PLAYING or not table.rules.turn_based:
            return None
        return YOUR_TURN if table.turn == self.seat else f"turn: {self.seat_name(table.turn)}"

    def winner_name(self, winner: int) -> str:
        """A game's winner in words: a player (:meth:`seat_name`), or with pairs, ``"team
        1"`` (teams count from 1)."""
        return f"team {winner + 1}" if self.rules.pairs else self.seat_name(winner)

    def you(self) -> str:
        """Who the local player is, for the header: ``"you (seat 2)"``, or ``"you: Ann (seat
        2)"`` when the name is not "you" (``"spectator"`` for a spectator).

        >>> from p2p_nertz.rules import Rules
        >>> TableView(table=None, seat=1, names=("bot1", "you"), rules=Rules()).you()
        'you (seat 1)'
        >>> TableView(table=None, seat=0, names=("Ann", "bot1"), rules=Rules()).you()
        'you: Ann (seat 0)'
        """
        if self.seat is None:
            return "spectator"
        name = self.seat_name(self.seat)
        return name if name.startswith("you (") else f"you: {name}"

    def link(self, seat: int) -> Link:
        """The link state of ``seat``."""
        return self.links[seat] if seat < len(self.links) else Link.OK

    def total(self, seat: int) -> int:
        """The game total of ``seat``'s team so far."""
        team = self.rules.team_of(seat)
        return self.totals[team] if team < len(self.totals) else 0

    def in_air(self, lamport: int) -> bool:
        """Whether a lake card claimed at ``lamport`` is still in the air (not final)."""
        return self.stable is not None and lamport > self.stable

    def heading(self, *, brief: bool = False) -> str:
        """Where the game stands, for the header of both tables: the round (of how many, or
        the points the game goes to) and, in words, what is happening. A newcomer read
        "round 2 · commit" (the deal's protocol phase) and could not tell what it meant.
        ``brief``: without the game's length (of how many rounds, to how many points), nor
        "playing" while play is on.

        >>> from p2p_nertz.rules import Rules
        >>> TableView(table=None, seat=0, names=("you",), rules=Rules(rounds=3, target=None),
        ...           round=2, phase="commit").heading()
        'round 2 of 3 · dealing…'
        >>> TableView(table=None, seat=0, names=("you",), rules=Rules()).heading()
        'round 1 · game to 100 points · playing'

        A round past the last one breaks a tie (RULES.md; a newcomer read "round 2 of 1"):

        >>> TableView(table=None, seat=0, names=("you",), rules=Rules(rounds=1, target=None),
        ...           round=2, phase="play").heading()
        'round 2, extra: a tie to break · playing'
        """
        rules = self.rules
        board = self.board
        # While a round's board is up, the header is that round's ("round 2 · playing" over
        # round 1's scores, the next round waiting for the board to close, misled).
        number = self.round if board is None else board.round
        if brief:  # (a row short of room: the game's length is in the help)
            where = f"round {number}"
        elif rules.rounds is not None and number > rules.rounds:
            where = f"round {number}, extra: a tie to break"
        elif rules.rounds is not None:
            where = f"round {number} of {rules.rounds}"
        elif rules.target is not None:
            where = f"round {number} · game to {rules.target} points"
        else:
            where = f"round {number}"
        doing = _PHASE_WORDS.get(self.phase, self.phase)
        table = self.table
        if board is not None:
            doing = "game over" if board.result is not None else "round over"
        elif self.unfollowed is not None:  # (its play goes on unseen: not "playing" here)
            doing = self.unfollowed
        elif self.phase == "play" and table is not None and table.status is not RoundStatus.PLAYING:
            doing = _ROUND_OVER[table.status]
        elif brief and self.phase == "play":
            return where  # (whose turn it is follows: play is on)
        return f"{where} · {doing}"

    def news(self) -> tuple[str, ...]:
        """The announcements to show under the status line: all but the newest when the
        status line says the same words (the deal's "round 1 is dealt — go!" was said twice,
        one line above the other); then the votes waiting on a majority (:attr:`waits`), kept
        in sight while they stand (an announcement scrolls away)."""
        messages = self.messages
        if messages and self.status and messages[-1] == self.status:
            messages = messages[:-1]
        return messages + self.waits


#: What each phase of the game (``Phase``'s values) means to a player (:meth:`TableView.heading`).
_PHASE_WORDS = {
    "joining": "waiting for the players",
    "commit": "dealing…",
    "nonce": "dealing…",
    "key": "dealing…",
    "deal": "dealing…",
    "play": "playing",
    "reveal": "round over: counting",
    "open": "round over: counting",
    "result": "round over: counting",
    "over": "game over",
}
_ENDED = {RoundStatus.NERTS: "Nerts! was called", RoundStatus.BLOCKED: "nobody could play"}
_ROUND_OVER = {status: f"round over: {how}" for status, how in _ENDED.items()}


def ended_words(status: str) -> str:
    """How a round ended (a :class:`RoundStatus`'s value), in words: ``"Nerts! was called"``,
    ``"nobody could play"`` (as the header says it)."""
    return _ENDED.get(RoundStatus(status), status)


_LETTERS = {Suit.CLUBS: "C", Suit.DIAMONDS: "D", Suit.HEARTS: "H", Suit.SPADES: "S"}


def card_text(card: Card, *, symbols: bool = True) -> str:
    """A card for the screen: ``10♥`` (or ``10H`` without symbols); ``??`` face down.

    >>> card_text(Card.parse("10H")), card_text(Card.parse("QS"), symbols=False)
    ('10♥', 'QS')
    """
    if card.suit is None:
        return str(card)  # an undeclared joker (JK1) or a face-down card (??)
    text = RANK_NAMES[card.rank] + (card.suit.symbol if symbols else _LETTERS[card.suit])
    return f"J{card.joker}={text}" if card.joker else text


def pile_name(pile: Pile) -> str:
    """A pile in words: ``"waste"``, ``"Nerts pile"``, ``"work pile 3"``, ``"lake"``."""
    return _PILE_NAMES.get(pile) or f"work pile {int(pile)}"


_PILE_NAMES = {Pile.NERTS: "Nerts pile", Pile.WASTE: "waste", Pile.LAKE: "lake"}
"""The piles whose name is not their number (:func:`pile_name`)."""


_MOVES_OF_NO_CARD = {
    MoveKind.TURN: "turned the stock",
    MoveKind.ROTATE: "rotated the stock",
    MoveKind.PASS: "stuck",
    MoveKind.CALL: "Nerts!",
}
"""The moves that move no card, in words (:func:`play_words`)."""


def play_words(
    move: Move, card: Card | None = None, *, symbols: bool = True, false_call: bool = False
) -> str:
    """A move in words, for the status line and the players' last actions (the notation is
    for the ``:`` command line and the logs); ``card``: the card moved, when known (a claim's);
    ``false_call``: the move is a Nerts call the table took as false (cards left), said so (a
    newcomer's false call read "Nerts!" on their row, as a call that ended the round).

    >>> play_words(Move.parse("N>L"), Card.parse("7H"))
    '7♥ to the lake'
    >>> play_words(Move.parse("W>3")), play_words(Move.parse("S"))
    ('waste card onto work pile 3', 'turned the stock')
    >>> play_words(Move.parse("1:3>4"), Card.parse("9C"), symbols=False)
    '3 cards from 9C onto work pile 4'
    >>> play_words(Move.call()), play_words(Move.call(), false_call=True)
    ('Nerts!', 'false Nerts call')
    >>> play_words(Move.parse("P")), play_words(Move.parse("P@2"))
    ('stuck', 'passed for seat 2')
    """
    if false_call and move.kind is MoveKind.CALL:
        return "false Nerts call"
    if move.behalf is not None:  # (a pass on another's behalf: not "stuck" itself)
        return f"passed for seat {move.behalf}"
    if move.kind in _MOVES_OF_NO_CARD:
        return _MOVES_OF_NO_CARD[move.kind]
    source, target = move.source, move.target
    if card is not None:
        what = card_text(card, symbols=symbols)
        what = what if move.count <= 1 else f"{move.count} cards from {what}"
    elif source is Pile.NERTS:
        what = "Nerts card"
    elif source is Pile.WASTE:
        what = "waste card"
    elif source is not None and move.count > 1:
        what = f"{move.count} cards from {pile_name(source)}"
    else:
        what = "card from " + ("a pile" if source is None else pile_name(source))
    if target is None or target is Pile.LAKE:
        return f"{what} to the lake"
    where = "under" if move.kind is MoveKind.SLIDE else "onto"
    return f"{what} {where} {pile_name(target)}"


def decided_by(termination: Termination, rules: Rules) -> str:
    """How a game was decided, in a few words for its end, after "winner: NAME with N" (a
    newcomer read "winner: bot2 (rounds)" and could not tell what "rounds" meant).

    >>> decided_by(Termination.ROUNDS, Rules(rounds=1, target=None))
    'after 1 round'
    >>> decided_by(Termination.TARGET, Rules())
    '100 points reached'
    """
    if termination is Termination.ROUNDS:
        rounds = rules.rounds or 0
        return f"after {counted(rounds, 'round')}"
    return {
        Termination.TARGET: f"{rules.target} points reached",
        Termination.LAST_ROUND: "tied: the last round decided",
        Termination.EXTRA_ROUND: "tied: an extra round decided",
        Termination.ABSENCE: "tied: the others tied dropped out",
        Termination.SHARED: "tied: the win is shared",
        Termination.ABANDONED: "ended early",
    }[termination]


#: Room for a name in a player's cell on the table: ``view.name`` (seat, space, name) is cut
#: at 12 characters there, so a suffix that tells a name apart must fit in 10.
_NAME_ROOM = 10


def distinct_names(names: Sequence[str], local: int | None = None) -> tuple[str, ...]:
    """The names with repeats told apart: the second ``root`` becomes ``root (2)``.

    A name is a player's own choice, so no seat may be made to read as another, nor as the
    local player, whom every announcement calls "you" (``Tracker.name``): the local seat keeps
    its name first, then the others in seat order; a name already taken, "you" when there is
    a local seat, or one that looks the same (:func:`~p2p_nertz.protocol.names.skeleton`:
    ``You`` in another case, ``\u0410nn`` with a Cyrillic ``А``), gets the first suffix not
    taken either (a player who calls themselves ``Ann (2)`` pushes the second
    ``Ann`` to ``Ann (3)``). A name cut to fit the suffix into a player's cell keeps the
    suffix whole, so two seats never look the same on the table.

    >>> distinct_names(["root", "bot1", "root", "root"])
    ('root', 'bot1', 'root (2)', 'root (3)')
    >>> distinct_names(["Bartholomew", "Bartholomew"])
    ('Bartholomew', 'Bartho (2)')
    >>> distinct_names(["Ann", "you", "Ann (2)", "Ann"], local=0)
    ('Ann', 'you (2)', 'Ann (2)', 'Ann (3)')
    >>> distinct_names(["Ann", "\u0410nn", "\uff21nn"])[1:]
    ('\u0410nn (2)', '\uff21nn (3)')
    """
    taken: set[str] = set()
    out = list(names)
    first = [local] if local is not None and 0 <= local < len(names) else []
    for seat in first + [s for s in range(len(names)) if s not in first]:
        name, count = names[seat], 1
        while skeleton(shown := _with_count(name, count)) in taken:
            count += 1
        out[seat] = shown
        taken.add(skeleton(shown))
        if seat in first:
            taken.add(skeleton(_LOCAL_WORD))
    return tuple(out)


_LOCAL_WORD = "you"
"""What announcements call the local player (``Tracker.name``): no other seat reads so."""


def _with_count(name: str, count: int) -> str:
    """``name`` as the ``count``-th of its name (the first: as it is)."""
    if count == 1:
        return name
    suffix = f" ({count})"
    return name[: max(1, _NAME_ROOM - len(suffix))] + suffix


STUCK_WAITING = "stuck: waiting for the others (a move of yours takes your pass back)"
"""The status line after a pass (the view replaces it once the pass no longer stands)."""

_STUCK_OPEN = "stuck, waiting — but you could still play "


def stuck_words(open_move: str | None) -> str:
    """The status line after a pass; ``open_move``: a card move still open to the player, in
    words (:func:`play_words`). A pass is legal with moves left (RULES.md: everyone stuck,
    "no legal move, or nobody wants to play"), so it is taken, but a newcomer who passed with
    an ace on the waste was not told they had a move.

    >>> stuck_words(None)
    'stuck: waiting for the others (a move of yours takes your pass back)'
    >>> stuck_words("A♥ to the lake")
    'stuck, waiting — but you could still play A♥ to the lake'
    """
    return STUCK_WAITING if open_move is None else _STUCK_OPEN + open_move


def open_move_words(table: Table, seat: int, *, symbols: bool = True) -> str | None:
    """The first card move open to ``seat`` at ``table`` (``Table.card_moves``), in words
    (:func:`play_words`); ``None``: none (the stock may still turn)."""
    move = next(table.card_moves(seat), None)
    if move is None or move.source is None:
        return None
    pile = table.tableaux[seat].pile(move.source)
    card = pile[-move.count] if 0 < move.count <= len(pile) else None
    return play_words(move, card, symbols=symbols)


PASS_GONE = "your pass no longer stands (a lake card, or the stocks rotated): stuck again?"
"""The status line once the local player's pass is withdrawn by others and no card of theirs
moves (RULES.md: everyone stuck — a card kept in the lake after a pass makes it stale; a
rotation ends it)."""

_PASS_GONE_PLAY = "a lake card ended your pass: now you can play "


def pass_gone_words(open_move: str | None) -> str:
    """The status line once a lake card ended the player's pass: the card move it opened, if
    one is open (:func:`open_move_words`), else "stuck again?" (a newcomer read "stuck
    again?" and passed again with a card that now played).

    >>> pass_gone_words("8♠ to the lake")
    'a lake card ended your pass: now you can play 8♠ to the lake'
    """
    return PASS_GONE if open_move is None else _PASS_GONE_PLAY + open_move


_CALL_KEY = "x again to call anyway"
_CALL_BUTTON = "click “yes, call Nerts” to call anyway"
# (Turn-based play, turns passed for: the status line, the announcement, the keys' refusal.)
_BACK_KEY = ": p to take them back"
_BACK_BUTTON = ": click “stuck” (or p) to take them back"


def false_call_question(left: int, penalty: int) -> str:
    """The question a call with cards left in the Nerts pile asks first, at the terminal
    (the page says its button: :func:`page_status`).

    >>> false_call_question(3, 10)
    '3 cards left in your Nerts pile: x again to call anyway (false call: −10 pts)'
    >>> false_call_question(1, 5)[:35]
    '1 card left in your Nerts pile: x a'
    """
    # (In points, as the players' rows: "(false call: −5)" was a number without its unit.)
    cards = counted(left, "card")
    return f"{cards} left in your Nerts pile: {_CALL_KEY} (false call: −{penalty} pts)"


def page_status(status: str) -> str:
    """The status line (or an announcement) as the page shows it: a question names the
    page's button, not the terminal's key (the page's Nerts! button reads "yes, call Nerts"
    while it asks), and so does the way back of a player whose turns are skipped (a phone
    has no ``p``: its button is "stuck").

    >>> page_status(false_call_question(3, 10))[33:]
    'click “yes, call Nerts” to call anyway (false call: −10 pts)'
    >>> page_status("your turns are skipped: p to take them back")
    'your turns are skipped: click “stuck” (or p) to take them back'
    """
    return status.replace(_CALL_KEY, _CALL_BUTTON).replace(_BACK_KEY, _BACK_BUTTON)


def is_stuck_words(status: str) -> bool:
    """Whether ``status`` is the status line of a pass (:func:`stuck_words`)."""
    return status == STUCK_WAITING or status.startswith(_STUCK_OPEN)


def passed_for_words(name: str, by: str, *, turns: bool = False) -> str:
    """The announcement of a pass made on a player's behalf (RULES.md: a player who plays
    nothing): ``name`` played nothing while everyone else was stuck, ``by`` passed for them.

    >>> passed_for_words("Bea", "bot1")
    'Bea has played nothing for a while, everyone else stuck: bot1 passed for Bea'
    >>> passed_for_words("you", "Bea").split(": ")[1]
    'Bea passed for you (play a card to take it back)'

    ``turns``: in turn-based play, where it is the player's turn that stood still.

    >>> passed_for_words("Bea", "bot1", turns=True)
    'Bea did not move on their turn for a while: bot1 passed it (skipped until Bea is back)'
    """
    if turns:
        # Turn-based play: a turn that stood still (RULES.md: turn-based play).
        if name == "you":
            return (
                f"you did not move on your turn for a while: {by} passed your turn (your "
                "turns are skipped: p to take them back)"
            )
        return (
            f"{name} did not move on their turn for a while: {by} passed it (skipped until "
            f"{name} is back)"
        )
    if name == "you":
        return (
            f"you have played nothing for a while, everyone else stuck: {by} passed for you "
            "(play a card to take it back)"
        )
    return f"{name} has played nothing for a while, everyone else stuck: {by} passed for {name}"


def stale_pass_words(names: Sequence[str], count: int) -> str:
    """One announcement for the lake cards that made the player's passes stale: who played
    them (the newest first) and how many, instead of one line each (they alternated between
    the bots, line after line, and a person read them as news). The status line says what to
    do (:data:`~p2p_nertz.ui.tracker.PASS_GONE`); this fits a row of the terminal.

    >>> stale_pass_words(["bot2", "bot1"], 5)
    'bot2 and bot1 played to the lake after your pass (×5): it no longer counts'
    """
    who = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    times = f" (×{count})" if count > 1 else ""
    return f"{who} played to the lake after your pass{times}: it no longer counts"


def bots_hint(*, practice: bool, speed: str, page: bool) -> str:
    """The first announcement of a quick game against bots (``nertz play --bots``): how fast
    they play and, at the terminal, the option that changes it. The page names no terminal
    command: a browser player has no terminal to type it in mid-game.

    >>> bots_hint(practice=True, speed="5", page=True)
    'practice: the bots wait for you — each makes a move only once you have made one'
    """
    if page:
        if practice:
            return "practice: the bots wait for you — each makes a move only once you have made one"
        return f"bots at speed {speed} of 10: they do not wait for you"
    if practice:
        return "practice: the bots wait for you · at their pace: nertz play --speed N (1-10)"
    return f"bots at speed {speed} of 10 · change: nertz play --speed N, or --practice"


def how_to_play(rules: Rules, *, pointer: bool = False, watcher: bool = False) -> list[str]:
    """The "how to play" help: the rules in brief, with this game's numbers (each line fits
    78 columns, the page 80×24; the whole rule book is ``nertz rules``, in the page a link to
    the rules its program serves); ``pointer``: the
    page's, played by mouse or finger: its way first (drag, click, the buttons), and keys
    only where the page's own help lists them. ``watcher``: a spectator's or a replay's,
    which plays nothing (:func:`how_to_watch`)."""
    if watcher:
        return how_to_watch(rules, pointer=pointer)
    piles = f"1-{rules.work_piles}"
    goal = (
        f"play {counted(rules.rounds, 'round')}; the highest total wins"
        if rules.rounds is not None
        else f"rounds go on until someone has {rules.target} points"
    )
    draw = f"{counted(rules.draw, 'card')} at a time"
    if pointer:
        first = [
            "Empty your Nerts pile first: then the Nerts! button ends the round.",
            "Aces go to the lake, where they start foundations; everyone builds every",
            "foundation up, in suit, to the King: drag a card there (or click it, then the lake).",
        ]
        slide, stock = "drop it on that pile", f"A click on the stock turns {draw}"
        stuck = "Stuck? The stuck button passes."
    else:
        first = [
            "Empty your Nerts pile [n] first: then x calls Nerts! and the round ends.",
            "Aces go to the lake, where they start foundations; everyone builds every",
            f"foundation up, in suit, to the King. Pick a card (n, w, {piles}), then l.",
        ]
        slide, stock = "pick it, then that pile", f"s turns the stock {draw}"
        stuck = "Stuck? p passes."
    # (The page draws each group of lines as a paragraph: it has room for more of them.)
    gap = [""] if pointer else []
    lines = [
        *first,
        *gap,
        "On your work piles build down in alternating colours (a red 6 on a black 7);",
        "a run moves whole, and an empty work pile takes any card.",
        "Slide-under: with a work pile empty, a card one higher than another pile's",
        f"bottom card (other colour) may slide under that pile: {slide}.",
        *gap,
        f"{stock} onto the waste; its top card{'' if pointer else ' [w]'} plays.",
        "",
        # (RULES.md: a round is scored as it ends: the rows' points are the game's, and a
        # newcomer's ace in round 1 added none there. Said, not a running count: the −2s
        # for the Nerts pile are known only at the end.)
        f"Scored at a round's end: +1 for each of your cards in the lake, "
        f"−{rules.nerts_card_penalty} for each",
        f"card left in your Nerts pile; {goal}.",
        "",
        # (RULES.md, everyone stuck: the stock re-formed first, as when it runs out; a
        # newcomer read only "the top card goes to the bottom" and looked for it there.)
        f"{stuck} When everyone has passed, each waste turns back over as the",
        "stock, and its top card goes to the bottom. Another's card in the lake after",
        "your pass makes it stale: the table says so, and you pass again.",
        "Two cards for one place: the first played stays, the other goes back.",
    ]
    call, rotate = ("Nerts!", "the rotate button") if pointer else ("x", "r")
    lines += ["", *_variant_lines(rules, call, f"once you have passed, {rotate} moves your")]
    # (The page serves the rule book itself, its link under this help: web/server.py.)
    book = "the rule book link below" if pointer else "nertz rules (or docs/rules.md)"
    lines.append(f"The whole rule book: {book}.")
    return lines


def _variant_lines(rules: Rules, call: str, rotate: str) -> list[str]:
    """This game's variants for the help (two at most: 80×24), in the words of the help's
    reader: ``call``, how Nerts is called; ``rotate``, the rotate-alone rule's start, up to
    "stock's top card to the bottom"."""
    variants = []
    if rules.turn_based:
        variants.append(f"turn-based: one move each, in seat order ({call} at any time)")
    if rules.rotate_alone:
        variants.append(f"{rotate} stock's top card to the bottom")
    if rules.jokers:
        variants.append("a joker is declared when it goes to the lake (: W>L=5H)")
    if rules.pairs:
        variants.append("pairs: partners score together; either empty Nerts pile calls")
    return [f"This game: {v}." for v in variants[:2]]


def how_to_watch(rules: Rules, *, pointer: bool = False) -> list[str]:
    """:func:`how_to_play` said to a watcher (``nertz watch``, ``watch --web``, ``replay
    --web``): what the players do, with this game's numbers, not "drag a card", "the stuck
    button passes", "your Nerts pile" to a person whose page or terminal plays nothing (a
    newcomer following the README's spectator read a player's instructions). The same
    lines fit 78 columns; ``pointer``: the page's, with a gap between its paragraphs.

    >>> how_to_watch(Rules())[0]
    'Each player races to empty their Nerts pile; a call of Nerts! ends the round.'
    """
    goal = (
        f"{counted(rules.rounds, 'round')} in all, the highest total wins"
        if rules.rounds is not None
        else f"rounds go on until someone has {rules.target} points"
    )
    gap = [""] if pointer else []
    lines = [
        "Each player races to empty their Nerts pile; a call of Nerts! ends the round.",
        "Aces go to the lake, where they start foundations; everyone builds every",
        "foundation up, in suit, to the King, onto anyone's: the lake is shared.",
        *gap,
        "On their own work piles they build down in alternating colours (a red 6 on a",
        "black 7); a run moves whole, and an empty work pile takes any card.",
        *gap,
        f"Each turns their stock {counted(rules.draw, 'card')} at a time onto their waste;"
        " its top card plays.",
        "",
        f"Scored at a round's end: +1 for each of a player's cards in the lake, "
        f"−{rules.nerts_card_penalty} for",
        f"each card left in their Nerts pile; {goal}.",
        "",
        "A player who is stuck passes; when everyone has passed, each waste turns",
        "back over as the stock, and its top card goes to the bottom.",
        "Two cards for one place: the first played stays, the other goes back.",
    ]
    lines += ["", *_variant_lines(rules, "Nerts!", "once passed, a player may put their")]
    book = "the rule book link below" if pointer else "nertz rules (or docs/rules.md)"
    return [*lines, f"The whole rule book: {book}."]


def points_words(total: int) -> str:
    """A player's game points in their row, at the terminal and on the page: the game's
    total, which grows only as each round is scored at its end (RULES.md, *Scoring a round*;
    :func:`how_to_play` says so), so an ace played in round 1 adds nothing to it yet.

    >>> points_words(12), points_words(-4)
    ('12 pts', '-4 pts')
    """
    return f"{total} pts"


def board_columns(rules: Rules, score: RoundScore) -> tuple[tuple[str, str], ...]:
    """The page's end-of-round table: each column's name and its heading in words (a
    newcomer read "lake +16 · Nerts left −14 (7)" and guessed what they were: cards in the
    lake, cards left in the Nerts pile); the Nerts
    bonus only when this game has one, the false call only when the round had one.

    >>> from p2p_nertz.rules import RoundStatus
    >>> score = RoundScore((), (), RoundStatus.NERTS)
    >>> [heading for _, heading in board_columns(Rules(), score)]  # doctest: +NORMALIZE_WHITESPACE
    ['player', 'in the lake (+1 each)', 'left in Nerts (−2 each)', 'this round', 'game total']
    """
    columns = [
        ("player", "player"),
        ("lake", "in the lake (+1 each)"),
        ("Nerts left", f"left in Nerts (−{rules.nerts_card_penalty} each)"),
    ]
    if rules.nerts_bonus:
        columns.append(("bonus", f"Nerts bonus (+{rules.nerts_bonus})"))
    if any(p.penalty for p in score.players):
        columns.append(("false call", f"false call (−{rules.false_call_penalty})"))
    columns += [("round", "this round"), ("game", "game total")]
    return tuple(columns)


def silent_words(name: str, *, others: int) -> tuple[str, str]:
    """What the table says when a player goes silent (their program killed or crashed, their
    network gone): what happened, and what it does to the game (a newcomer read "bot1 is not
    answering" and waited, not knowing why the lake had stopped). ``others``: how many other
    members there are besides the local player (with one, nobody can drop them; the abandon
    is on offer instead, in the footer and the page's button).

    >>> silent_words("bot1", others=2)[1]
    'until bot1 answers or is dropped, cards put in the lake stay in the air'
    """
    what = f"{name} is not answering: their program stopped, or their network dropped"
    if others > 1:
        return what, f"until {name} answers or is dropped, cards put in the lake stay in the air"
    return what, f"until {name} answers, cards put in the lake stay in the air"


def _and(names: Sequence[str]) -> str:
    """Names in a sentence: "P3", "P3 and P4", "P2, P3 and P4"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def out_of_reach_words(names: Sequence[str], *, members: int) -> tuple[str, str]:
    """What the table says when the members out of reach leave no majority on our side (a
    2|2 split of four: nobody can be dropped, and the game stands still; before, a player saw
    only "P3 is silent" for each, :class:`~p2p_nertz.protocol.reach.OutOfReach`): who, and
    what it does to the game, each a row of the terminal. ``members``: the roster's size, to
    say half or most of the table.

    >>> out_of_reach_words(["P3", "P4"], members=4)  # doctest: +NORMALIZE_WHITESPACE
    ('half the table is out of reach: P3, P4',
     'nobody can be dropped without a majority: wait for them, or leave the game')
    >>> out_of_reach_words(["P2", "P3", "P4"], members=5)[0]
    'most of the table is out of reach: P2, P3, P4'
    """
    part = "half the table" if 2 * len(names) == members else "most of the table"
    return (
        f"{part} is out of reach: {', '.join(names)}",
        "nobody can be dropped without a majority: wait for them, or leave the game",
    )


def in_reach_words(names: Sequence[str]) -> str:
    """What the table says when that is over: who came back (none: the roster changed).

    >>> in_reach_words(["P3", "P4"])
    'P3 and P4 are back: the table has a majority again'
    >>> in_reach_words(["P3"])
    'P3 is back: the table has a majority again'
    >>> in_reach_words([])
    'the table has a majority again'
    """
    again = "the table has a majority again"
    if not names:
        return again
    return f"{_and(names)} {'is' if len(names) == 1 else 'are'} back: {again}"


def reach_words(notice: OutOfReach, name: Callable[[int], str]) -> tuple[str, ...]:
    """The words of an :class:`~p2p_nertz.protocol.reach.OutOfReach` notice, each seat named by
    ``name``, a row of the terminal each (every front end says the same; a node's output
    joins them on one line)."""
    names = [name(s) for s in notice.seats]
    if notice.over:
        return (in_reach_words(names),)
    return out_of_reach_words(names, members=notice.members)


def tie_words(whose_card: str) -> str:
    """A true tie in the lake, in words: "bot2's 8♠ tied: both cards stay" left a newcomer
    asking what had tied with what (how to play says only that the first card played stays).

    >>> tie_words("bot2's 8♠")
    "bot2's 8♠ tied with another card for one place: both stay"
    """
    return f"{whose_card} tied with another card for one place: both stay"


#: Why a member is voted out, in a few words (:func:`unmet_words`).
_WHY = {
    DropReason.SILENT: "silent",
    DropReason.WITHHELD: "holding the game up",
    DropReason.EQUIVOCATION: "caught cheating",
    DropReason.FLAPPING: "in and out too often",
}


def unmet_words(
    standing: Sequence[Unmet], name: Callable[[int], str], local: int | None = None
) -> tuple[str, ...]:
    """The votes to drop a member that stand without a majority, in words, a row of the
    terminal each: who is voted out, by whom, why, and how many votes of how many are needed,
    one row for the members voted out by the same voters for the same reasons, those the local
    seat cast last (nearest the foot, where the terminal keeps its newest rows), each in 80
    columns for names of a few letters; then that the table waits for the rest. Two
    liars at four players leave the honest two's votes two of four, and the table waits for
    good (docs/protocol.md §13): every member heard, nothing said why. ``name``: each seat's
    name (``"you"`` for the local seat). None: nothing stands. At two members the vote
    missing is its target's own, which never comes: the abandon is on offer instead (§9.3).

    >>> from p2p_nertz.protocol.unmet import Unmet
    >>> names = ["bot1", "bot2", "you", "bot4"]
    >>> unmet_words([Unmet(1, (DropReason.WITHHELD,), (2, 3), 3, 4),
    ...              Unmet(2, (DropReason.WITHHELD,), (1,), 3, 4),
    ...              Unmet(3, (DropReason.WITHHELD,), (1,), 3, 4)], names.__getitem__, 2)
    ... # doctest: +NORMALIZE_WHITESPACE
    ('you and bot4 voted out by bot2 (holding the game up): 1 of 3 votes',
     'bot2 voted out by you and bot4 (holding the game up): 2 of 3 votes',
     'no majority yet: the table waits for the votes still needed to drop')
    >>> unmet_words([Unmet(2, (DropReason.SILENT,), (0,), 2, 2)], names.__getitem__)
    ... # doctest: +NORMALIZE_WHITESPACE
    ('you voted out by bot1 (silent): 1 of 2 votes',
     'nobody can be dropped from two: wait for them, or end the game')
    """
    groups: dict[tuple[tuple[int, ...], tuple[DropReason, ...], int], list[int]] = {}
    for u in standing:
        groups.setdefault((u.voters, u.reasons, u.majority), []).append(u.seat)
    rows = []
    for (voters, reasons, majority), seats in sorted(
        groups.items(), key=lambda group: (local in group[0][0], group[0])
    ):
        who = [name(seat) for seat in seats]
        why = ", ".join(_WHY.get(reason, reason.name.lower()) for reason in reasons)
        by = _and([name(seat) for seat in voters])
        rows.append(f"{_and(who)} voted out by {by} ({why}): {len(voters)} of {majority} votes")
    if rows and all(u.members == 2 for u in standing):  # (the other vote is its target's)
        rows.append("nobody can be dropped from two: wait for them, or end the game")
    elif rows:
        rows.append("no majority yet: the table waits for the votes still needed to drop")
    return tuple(rows)


def unmet_summary(standing: Sequence[Unmet], name: Callable[[int], str], width: int = 78) -> str:
    """The votes of :func:`unmet_words` in one row of at most ``width`` columns (80, less the
    mark of an announcement), for a screen
    with no room for theirs (eight players at 80×24, session 37: the terminal showed only the
    last, "no majority yet: …", and not who): each member voted out with its votes of those
    needed, then that the table waits; the count alone where the names do not fit. Empty:
    nothing stands.

    >>> from p2p_nertz.protocol.unmet import Unmet
    >>> names = ["bot1", "bot2", "you", "bot4"].__getitem__
    >>> unmet_summary([Unmet(1, (DropReason.WITHHELD,), (2, 3), 3, 4),
    ...                Unmet(3, (DropReason.SILENT,), (1,), 3, 4)], names)
    'no majority yet: bot2 2 of 3 votes, bot4 1 of 3: the table waits'
    >>> unmet_summary([Unmet(2, (DropReason.SILENT,), (0,), 2, 2)], names)
    'you: 1 of 2 votes; nobody can be dropped from two: wait, or end the game'
    >>> unmet_summary([Unmet(s, (DropReason.SILENT,), (0,), 3, 4) for s in (1, 2, 3)],
    ...               lambda s: f"a-long-name-{s}", width=72)
    'no majority yet: a-long-name-1 1 of 3 votes, +2 more: the table waits'
    """
    if not standing:
        return ""
    if all(u.members == 2 for u in standing):  # (the other vote is its target's: one stands)
        u = standing[0]
        tail = "nobody can be dropped from two: wait, or end the game"
        line = f"{name(u.seat)}: {len(u.voters)} of {u.majority} votes; {tail}"
        return line if len(line) <= width else f"a vote stands; {tail}"
    votes = [f"{name(u.seat)} {len(u.voters)} of {u.majority}" for u in standing]
    votes[0] += " votes"
    for shown in range(len(votes), 0, -1):  # (as many as fit, then how many more)
        more = len(votes) - shown
        who = ", ".join(votes[:shown]) + (f", +{more} more" if more else "")
        line = f"no majority yet: {who}: the table waits"
        if len(line) <= width:
            return line
    return f"no majority yet to drop {counted(len(standing), 'member')}: the table waits"


def vote_short_words(notice: VoteShort, name: Callable[[int], str]) -> tuple[str, ...]:
    """The words of a :class:`~p2p_nertz.protocol.unmet.VoteShort` notice (a node's line, its
    ``--json`` event's ``words``): when told, the table's rows for it (:func:`unmet_words`);
    at its end, why it no longer stands short.

    >>> vote = Unmet(1, (DropReason.SILENT,), (0,), 2, 3)
    >>> names = ["Ann", "Bob", "Cy"].__getitem__
    >>> vote_short_words(VoteShort(vote), names)  # doctest: +NORMALIZE_WHITESPACE
    ('Bob voted out by Ann (silent): 1 of 2 votes',
     'no majority yet: the table waits for the votes still needed to drop')
    >>> vote_short_words(VoteShort(vote, UnmetEnd.WITHDRAWN), names)
    ('the vote to drop Bob is withdrawn',)
    """
    if notice.ended is None:
        return unmet_words([notice.unmet], name)
    who = name(notice.unmet.seat)
    return (_UNMET_ENDS[notice.ended].format(who=who),)


_UNMET_ENDS = {
    UnmetEnd.DROPPED: "{who} is dropped: the votes reached a majority",
    UnmetEnd.WITHDRAWN: "the vote to drop {who} is withdrawn",
    UnmetEnd.JOINED: "more votes to drop {who} stand, still short of a majority",
    UnmetEnd.OVER: "the game is over: the vote to drop {who} no longer waits",
}


def _whose(name: str) -> str:
    """A name's possessive ("your" for the local seat's "you")."""
    return "your" if name == "you" else f"{name}'s"


def _seqs(first: int, last: int) -> str:
    return f"#{first}" if first == last else f"#{first}-{last}"


def held_words(held: Sequence[HeldBack], name: Callable[[int], str]) -> tuple[str, ...]:
    """The members held back (:class:`~p2p_nertz.protocol.unmet.HeldBack`: their events wait
    here for events that never came), a row each: that the table waits on the member, and for
    which events. A liar's frontier naming events nobody signed holds its feed back, its vote
    with it, and the stable time (docs/protocol.md §13, *A frontier lie beside a member gone
    for good*): before session 38 the table said only the votes short, not on whom they
    waited. ``name``: each seat's name (``"you"`` for the local seat).

    >>> from p2p_nertz.protocol.unmet import HeldBack
    >>> names = ["bot1", "you", "bot3"].__getitem__
    >>> held_words([HeldBack(2, 15, ((0, 13, 15),))], names)
    ("the table waits on bot3: its events name bot1's #13-15, which never came",)
    >>> held_words([HeldBack(2, 15, ((0, 13, 13), (1, 20, 21)))], names)
    ("the table waits on bot3: its events name bot1's #13 and your #20-21, which never came",)
    >>> held_words([HeldBack(0, 11, ((0, 12, 14),))], names)
    ('the table waits on bot1: its events #12-14 never came',)
    """
    rows = []
    for h in held:
        who = name(h.seat)
        own = [_seqs(first, last) for feed, first, last in h.waits if feed == h.seat]
        if own:
            rows.append(f"the table waits on {who}: its events {own[0]} never came")
            continue
        what = _and([f"{_whose(name(feed))} {_seqs(a, b)}" for feed, a, b in h.waits])
        rows.append(f"the table waits on {who}: its events name {what}, which never came")
    return tuple(rows)


#: The event a phase waits for from each member, as a person names it (:func:`owed_words`).
_PHASE_EVENTS = {
    "commit": "commit",
    "nonce": "nonce",
    "play": "ready",
    "reveal": "secret",
    "open": "secret",
    "result": "result",
    "key": "key",
    "deal": "deal stage",
}


def owed_words(owed: Sequence[Owing], name: Callable[[int], str]) -> tuple[str, ...]:
    """The members heard that owe what they alone can give
    (:class:`~p2p_nertz.protocol.unmet.Owing`), a row each: that the table waits on the
    member, heard, and for what: its own events, its word that it holds events held here, a
    third member's events it said it holds, the event the phase waits for, a shuffle game's
    shares (session 40). Before session 39 the table said nothing of it until the vote
    *withheld*, after ``phase_timeout`` (60 s).

    >>> from p2p_nertz.protocol.phase_waits import Awaited
    >>> from p2p_nertz.protocol.state import Phase
    >>> names = ["bot1", "you", "bot3"].__getitem__
    >>> owed_words([Owing(2, 0.0, event=Awaited(2, Phase.PLAY, b"", 2))], names)
    ('the table waits on bot3, heard but not sending its ready of round 2',)
    >>> print(*owed_words([Owing(2, 0.0, cover=((0, 12), (1, 20)))], names))
    the table waits on bot3, heard but not sending its word that it holds bot1's #12 and your #20
    >>> print(*owed_words([Owing(0, 0.0, (31, 40), relays=((2, 13, 14),))], names))
    ... # doctest: +NORMALIZE_WHITESPACE
    the table waits on bot1, heard but not sending its events #31-40
    and bot3's #13-14, which it said it holds
    >>> owed_words([Owing(2, 0.0, shares=SharesOwed(2, own=3))], names)
    ('the table waits on bot3, heard but not sending its shares of round 2',)
    >>> print(*owed_words([Owing(0, 0.0, shares=SharesOwed(1, partials=1, answers=1))], names))
    ... # doctest: +NORMALIZE_WHITESPACE
    the table waits on bot1, heard but not sending its shares for a member dropped
    and its answer to a complaint of its box, of round 1
    """
    rows = []
    for o in owed:
        parts = []
        if o.events is not None:
            parts.append(f"its events {_seqs(*o.events)}")
        if o.cover:
            held = _and([f"{_whose(name(r))} #{seq}" for r, seq in o.cover])
            parts.append(f"its word that it holds {held}")
        if o.relays:
            relays = _and([f"{_whose(name(r))} {_seqs(a, b)}" for r, a, b in o.relays])
            parts.append(f"{relays}, which it said it holds")
        if o.event is not None:
            noun = _PHASE_EVENTS.get(o.event.phase.value, o.event.phase.value)
            parts.append(f"its {noun} of round {o.event.number}")
        if o.shares is not None:
            parts.append(_shares_words(o.shares))
        what = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
        rows.append(f"the table waits on {name(o.seat)}, heard but not sending {what}")
    return tuple(rows)


def _shares_words(shares: SharesOwed) -> str:
    """What of its round's deal a member owes, as :func:`owed_words` says it."""
    what = [
        words
        for count, words in (
            (shares.own, "its shares"),
            (shares.partials, "its shares for a member dropped"),
            (shares.answers, "its answer to a complaint of its box"),
        )
        if count
    ]
    joined = _and(what)
    return f"{joined}{',' if len(what) > 1 else ''} of round {shares.number}"


def owed_notice_words(notice: Owed, name: Callable[[int], str]) -> tuple[str, ...]:
    """The words of an :class:`~p2p_nertz.protocol.unmet.Owed` notice (a node's line, its
    ``--json`` event's ``words``): when told, the table's row (:func:`owed_words`); at its
    end, why the member owes it no more.

    >>> from p2p_nertz.protocol.phase_waits import Awaited
    >>> from p2p_nertz.protocol.state import Phase
    >>> owing = Owing(2, 0.0, event=Awaited(1, Phase.RESULT, b"", 2))
    >>> names = ["Ann", "Bob", "Cy"].__getitem__
    >>> owed_notice_words(Owed(owing), names)
    ('the table waits on Cy, heard but not sending its result of round 1',)
    >>> owed_notice_words(Owed(owing, OwedEnd.SILENT), names)
    ('Cy is silent now: the table waits on its silence instead',)
    >>> owed_notice_words(Owed(owing, OwedEnd.ANEW, (1,)), names)
    ('the table waits anew on Cy, who still owes it: Bob went silent',)
    """
    if notice.ended is None:
        return owed_words([notice.owing], name)
    text = _OWED_ENDS[notice.ended].format(who=name(notice.owing.seat))
    if notice.others:  # (whose silence times the wait anew: OwedEnd.ANEW)
        text += f": {_and([name(s) for s in notice.others])} went silent"
    return (text,)


_OWED_ENDS = {
    OwedEnd.GIVEN: "{who} sent what the table waited for",
    OwedEnd.SILENT: "{who} is silent now: the table waits on its silence instead",
    OwedEnd.HELD: "{who} is held back now: its later events wait on what it owed",
    OwedEnd.DROPPED: "{who} is dropped: the table waits on it no more",
    OwedEnd.OVER: "the game is over: nothing waits on {who}",
    OwedEnd.ANEW: "the table waits anew on {who}, who still owes it",
    OwedEnd.PASSED: "the table waits on {who} no more: that phase is over without it",
}


def drop_words(drops: Sequence[DropPending], name: Callable[[int], str]) -> tuple[str, ...]:
    """The drops the held votes decide that are not final here
    (:class:`~p2p_nertz.protocol.unmet.DropPending`), a row each, with what holds it back: a
    member's events (what is known of its feed), a member's word on a feed (what it is known
    to hold), our own vote's count, or events not held here. Before session 39 such a drop
    was told only through the member it waits on (held back, silent).

    >>> names = ["bot1", "you", "bot3"].__getitem__
    >>> drop_words([DropPending(0, (KNOWN, 2))], names)
    ("bot1's drop is decided, not final: it waits on bot3's events",)
    >>> drop_words([DropPending(0, (2, 1))], names)
    ("bot1's drop is decided, not final: it waits on bot3's word on your events",)
    >>> drop_words([DropPending(2, None)], names)
    ("bot3's drop is decided, not final: it waits on events not held here",)
    """
    rows = []
    for d in drops:
        if d.on is None:
            what = "events not held here"
        elif d.on[0] == KNOWN:
            what = f"{_whose(name(d.on[1]))} events"
        elif d.on[0] == VOTED:
            what = f"your vote on {name(d.on[1])}"
        else:
            what = f"{_whose(name(d.on[0]))} word on {_whose(name(d.on[1]))} events"
        rows.append(f"{_whose(name(d.seat))} drop is decided, not final: it waits on {what}")
    return tuple(rows)


_DROP_ENDS = {
    DropEnd.FINAL: "{whose} drop is final",
    DropEnd.UNDONE: "the votes no longer drop {who}",
    DropEnd.OVER: "the game is over: nothing waits on {whose} drop",
}


def waits_notice_words(notice: Owed | DropWaits, name: Callable[[int], str]) -> tuple[str, ...]:
    """The words of an :class:`~p2p_nertz.protocol.unmet.Owed` or
    :class:`~p2p_nertz.protocol.unmet.DropWaits` notice (a node's line, its ``--json``
    event's ``words``): when told, the table's row; at its end, why.

    >>> names = ["Ann", "Bob", "Cy"].__getitem__
    >>> waits_notice_words(DropWaits(DropPending(1, (KNOWN, 2)), DropEnd.FINAL), names)
    ("Bob's drop is final",)
    """
    if isinstance(notice, Owed):
        return owed_notice_words(notice, name)
    if notice.ended is None:
        return drop_words([notice.pending], name)
    who = name(notice.pending.seat)
    return (_DROP_ENDS[notice.ended].format(who=who, whose=_whose(who)),)


def waits_summary(
    standing: Sequence[Unmet],
    held: Sequence[HeldBack],
    name: Callable[[int], str],
    width: int = 78,
    *,
    owed: Sequence[Owing] = (),
    drops: Sequence[DropPending] = (),
) -> str:
    """The rows of :attr:`TableView.waits` in one row of at most ``width`` columns: the votes
    (:func:`unmet_summary`, shortened to leave room), then the members held back
    (:func:`held_words`), those ``owed`` (:func:`owed_words`) and the ``drops`` not final
    (:func:`drop_words`), named; the counts alone where that does not fit. Empty: nothing
    waits.

    >>> from p2p_nertz.protocol.unmet import HeldBack
    >>> names = ["bot1", "you", "bot3"].__getitem__
    >>> waits_summary([Unmet(0, (DropReason.SILENT,), (1,), 2, 3)],
    ...               [HeldBack(2, 15, ((0, 13, 15),))], names)
    'no majority yet: bot1 1 of 2 votes: the table waits; bot3 held back'
    >>> waits_summary([Unmet(0, (DropReason.SILENT,), (1,), 2, 2)],
    ...               [HeldBack(0, 15, ((1, 13, 15),))], names)
    'the table waits: 1 vote short of a majority; bot1 held back'
    >>> waits_summary([], [HeldBack(2, 15, ((0, 13, 15),))], names)
    "the table waits on bot3: its events name bot1's #13-15, which never came"
    >>> waits_summary([], [HeldBack(2, 15, ((0, 13, 15),))], names,
    ...               owed=[Owing(0, 0.0, (5, 9), ((2, 14),))])
    'the table waits: bot3 held back; bot1 heard, not sending'
    """
    if not held and not owed and not drops:
        return unmet_summary(standing, name, width)
    who = _and([name(h.seat) for h in held]) if held else ""
    tails = [f"{who} held back"] if held else []
    if owed:
        tails.append(f"{_and(list(dict.fromkeys(name(o.seat) for o in owed)))} heard, not sending")
    if drops:
        tails.append(f"{_and([name(d.seat) for d in drops])}: drop not final")
    if not standing:
        rows = (*held_words(held, name), *owed_words(owed, name), *drop_words(drops, name))
        if len(rows) == 1 and len(rows[0]) <= width:
            return rows[0]
        if not owed and not drops:
            return f"the table waits on {who}: held back"
        return f"the table waits: {'; '.join(tails)}"
    tail = "; " + "; ".join(tails)
    votes = unmet_summary(standing, name, width - len(tail))
    if len(votes) + len(tail) <= width and not all(u.members == 2 for u in standing):
        return votes + tail
    line = f"the table waits: {counted(len(standing), 'vote')} short of a majority{tail}"
    return line if len(line) <= width else unmet_summary(standing, name, width)


def feed_held_words(notice: FeedHeld, name: Callable[[int], str]) -> tuple[str, ...]:
    """The words of a :class:`~p2p_nertz.protocol.unmet.FeedHeld` notice (a node's line, its
    ``--json`` event's ``words``): when told, the table's row for it (:func:`held_words`); at
    its end, why it is held back no more.

    >>> from p2p_nertz.protocol.unmet import HeldBack
    >>> held = HeldBack(2, 15, ((0, 13, 15),))
    >>> names = ["Ann", "Bob", "Cy"].__getitem__
    >>> feed_held_words(FeedHeld(held), names)
    ("the table waits on Cy: its events name Ann's #13-15, which never came",)
    >>> feed_held_words(FeedHeld(held, HeldEnd.DROPPED), names)
    ('Cy is dropped: the table waits on its events no more',)
    """
    if notice.ended is None:
        return held_words([notice.held], name)
    return (_HELD_ENDS[notice.ended].format(who=name(notice.held.seat)),)


_HELD_ENDS = {
    HeldEnd.CAME: "{who}'s events go on: the table waits on them no more",
    HeldEnd.DROPPED: "{who} is dropped: the table waits on its events no more",
    HeldEnd.OVER: "the game is over: nothing waits on {who}'s events",
}
