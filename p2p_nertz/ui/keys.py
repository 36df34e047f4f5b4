"""The keyboard as a pure state machine: keys in, moves and other actions out.

:func:`press` takes the :class:`KeyState`, one key and the :class:`Context` (the table as the
player sees it, their seat, the frozen piles, whether the end-of-round board is up) and returns
the next state and the actions to carry out. It never plays anything itself and never raises:
an illegal move becomes a status line saying why, and changes nothing else.

Keys (names as the front end reports them: one character, or ``"ENTER"``, ``"ESC"``,
``"BACKSPACE"``):

* a **source** — ``n`` the Nerts top card, ``w`` the waste top card, ``1``–``6`` a work pile —
  then a **destination** — ``l`` or ``f`` the lake (onto the pile the card fits there), ``1``–``6``
  a work pile (a run moves whole, or slides under when that is the only way), or the source key
  again: straight to the lake;
* ``s`` or space turns the stock, ``p`` passes (stuck), ``r`` rotates alone (a rules variant),
  ``x`` calls Nerts (pressed twice when the Nerts pile is not empty: a false call costs points);
* ``a`` ends the game by an abandon (DESIGN.md §6), on offer once the one other member left
  has gone silent (:attr:`Context.abandon`); it asks first (``a`` again or ``y``); pressed while
  the peer core still waits for more silence it says how many seconds are left, and when it is
  not on offer it says why; either way it changes nothing;
* ``:`` or ``/`` opens a command line that takes one move in the notation (``N>L``, ``1:2>4``…),
  or the word ``abandon`` (as the ``a`` key);
* ``?`` or ``h`` help (pressed again: how to play; any other key closes it), ``Esc`` cancels,
  ``Enter`` closes the end-of-round board, ``q`` leaves (after a ``y``).

>>> from p2p_nertz.rules import Rules, Table, Tableau
>>> t = Tableau.parse("N: 4C AS | 1: QH | 2: JS | 3: 5D | 4: 8C | S: 2C 7H 9S | W: -")
>>> table = Table.from_tableaux(Rules(), [t, t])
>>> state, actions = press(KeyState(), "n", Context(table, 0))
>>> state.selected, actions
(Pile.NERTS, [])
>>> state, actions = press(state, "l", Context(table, 0))
>>> actions
[PlayMove(move=Move.parse('N>L'))]
>>> press(KeyState(), "2", Context(table, 0))[0].status
'J♠ picked: l to the lake, 1-4 onto a work pile, Esc cancels'
>>> press(press(KeyState(), "2", Context(table, 0))[0], "3", Context(table, 0))[0].status
'illegal: J♠ does not go on 5♦ (one rank lower, the other colour)'
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from p2p_nertz.errors import IllegalMoveError, NotationError
from p2p_nertz.protocol.local import AbandonAnswer, MoveAnswer, MoveRefusal, touches
from p2p_nertz.rules import Card, Move, MoveKind, Pile, Table
from p2p_nertz.rules.reasons import Illegality, Why, why_illegal
from p2p_nertz.ui.refusals import (
    HELD_BACK,
    NO_ABANDON,
    SPECTATOR,
    TURNING_OVER,
    in_the_air_words,
)
from p2p_nertz.ui.view import (
    NOT_UP,
    STUCK_WAITING,
    Gone,
    card_text,
    ended_words,
    false_call_question,
    open_move_words,
    pile_name,
    play_words,
    stuck_words,
)

__all__ = [
    "NO_ABANDON",
    "ILLEGAL_NOT_DEALT",
    "NOT_DEALT",
    "NOT_UP",
    "STUCK_WAITING",
    "Abandon",
    "Action",
    "Answer",
    "CloseBoard",
    "Context",
    "KeyState",
    "Leave",
    "PlayMove",
    "Status",
    "explain",
    "illegal_words",
    "no_key_words",
    "not_now",
    "once_dealt",
    "press",
    "resolve_pair",
]

ENTER = "ENTER"
ESC = "ESC"
BACKSPACE = "BACKSPACE"
_MAX_COMMAND = 24


class Confirm(enum.Enum):
    """A question the status line is asking."""

    CALL = "call"
    QUIT = "quit"
    ABANDON = "abandon"


@dataclass(frozen=True, slots=True)
class PlayMove:
    """Play this move (the front end hands it to the node)."""

    move: Move


@dataclass(frozen=True, slots=True)
class Leave:
    """Leave the game."""


@dataclass(frozen=True, slots=True)
class CloseBoard:
    """Close the end-of-round board."""


@dataclass(frozen=True, slots=True)
class Abandon:
    """End the game by an abandon (the front end calls the node's ``abandon``; the peer core
    has the last word and may still refuse, saying why)."""


Action = PlayMove | Leave | CloseBoard | Abandon

#: The status of a key pressed before the deal (:func:`once_dealt` clears it after).
NOT_DEALT = "not dealt yet"
ILLEGAL_NOT_DEALT = "illegal: the round is not dealt yet"


Answer = MoveAnswer | AbandonAnswer
"""A refusal a status line says: a move's (the core's :class:`MoveAnswer`, or the same answer
the keys gave before the core was asked), or an abandon's (the core's :class:`AbandonAnswer`)."""


@dataclass(frozen=True, slots=True)
class Status:
    """The status line: its words and, when they say a refusal, that refusal as a value.

    The two are one value so that they change together: a status line made of words alone
    carries no refusal, and a refusal is never left under words that no longer say it (the
    controller reads :attr:`refusal` to know what ends a wait: :mod:`~p2p_nertz.ui.waits`).
    Whether the words refuse is said by who makes them (:meth:`refusing`), never read back
    from them: the view keeps such a line and draws it as bad news
    (:func:`~p2p_nertz.ui.tracker.status_line`, :attr:`~p2p_nertz.ui.view.TableView.refused`).

    Attributes:
        words: what the status line says.
        refusal: the refusal the words say as a value, when the table follows it (what ends
            its wait); ``None``: none, or none that ends by itself.
        refused: the words say why something asked was not done (a key, a move, an abandon);
            always so with a ``refusal``.

    >>> Status.refusing("illegal: a pile onto itself").refused, Status("played 7♥").refused
    (True, False)
    """

    words: str = ""
    refusal: Answer | None = None
    refused: bool = False

    def __post_init__(self) -> None:
        if self.refusal is not None and not self.refused:  # (a refusal refuses)
            object.__setattr__(self, "refused", True)

    @classmethod
    def refusing(cls, words: str, refusal: Answer | None = None) -> Status:
        """A status line that says why something was not done (``refusal``: as a value)."""
        return cls(words, refusal, refused=True)


@dataclass(frozen=True, slots=True)
class KeyState:
    """What the keyboard is in the middle of.

    Attributes:
        selected: the source pile picked, waiting for a destination.
        command: the command line being typed (``None``: closed).
        line: the status line (:class:`Status`: set whole, its words and refusal together).
        help: the help screen is up.
        confirm: a question waiting for its answer key.
        help_page: which help page is up: 0 the keys, 1 how to play (``?`` again turns it).
    """

    selected: Pile | None = None
    command: str | None = None
    line: Status = Status()
    help: bool = False
    confirm: Confirm | None = None
    help_page: int = 0

    @property
    def status(self) -> str:
        """The status line's words."""
        return self.line.words

    @property
    def refusal(self) -> Answer | None:
        """The refusal the status line says, if it says one (:attr:`Status.refusal`)."""
        return self.line.refusal


def once_dealt(state: KeyState) -> KeyState:
    """The key state once the round is dealt: a status that says it is not is out of date
    (a key pressed before the deal must not leave "not dealt yet" on the status line).

    >>> [once_dealt(KeyState(line=Status(said))).status for said in (NOT_DEALT, "hi")]
    ['', 'hi']
    """
    if state.status in (NOT_DEALT, ILLEGAL_NOT_DEALT):
        return replace(state, line=Status())
    return state


@dataclass(frozen=True, slots=True)
class Context:
    """What a key acts on.

    Attributes:
        table: the table as the player sees it (``None`` before the deal).
        seat: the player's seat (``None``: a spectator, who can only read and quit).
        frozen: the player's piles frozen by a claim in the air.
        board: the end-of-round board is up.
        symbols: suit symbols in messages (else letters).
        abandon: the one other member left, gone, when the abandon key is on offer (it may
            still say to wait: :attr:`Gone.wait`); else why not, in words
            (:meth:`~p2p_nertz.ui.tracker.Tracker.may_abandon` works it out).
        alone: every other member has gone (:meth:`~p2p_nertz.ui.tracker.Tracker.alone`):
            ``q`` leaves without asking.
        up: the player's dealt cards show (:func:`~p2p_nertz.ui.view.cards_up`); until
            then a table key only says :data:`~p2p_nertz.ui.view.NOT_UP`.
        held_back: the others' votes put the player out for now (the core's own rule,
            :func:`~p2p_nertz.protocol.local.own_held_back`): a move waits, and the table it
            shows has the player out.
        rotating: the stocks turn over (everyone stuck) and that is not final yet: the
            waste in ``frozen`` is frozen by that (:data:`TURNING_OVER`), not by a claim.
        answer: the core's answer to an abandon now, which ``abandon`` was worked out from
            (``None``: none asked); the abandon key's refusal carries it (:func:`not_now`).
    """

    table: Table | None
    seat: int | None
    frozen: frozenset[Pile] = field(default_factory=frozenset)
    board: bool = False
    symbols: bool = True
    abandon: Gone | str = NO_ABANDON
    alone: bool = False
    up: bool = True
    held_back: bool = False
    rotating: bool = False
    answer: AbandonAnswer | None = None


_SOURCES = {"n": Pile.NERTS, "w": Pile.WASTE} | {str(i): Pile(i) for i in range(1, 7)}


def press(state: KeyState, key: str, ctx: Context) -> tuple[KeyState, list[Action]]:
    """Handle one key (see the module docstring); never raises."""
    if state.help:
        if key in ("?", "h", "H"):  # the other page: the keys, or how to play
            return replace(state, help_page=1 - state.help_page), []
        return replace(state, help=False, help_page=0, line=Status()), []
    if state.command is not None:
        return _command_key(state, key, ctx)
    if state.confirm is not None:
        return _answer(state.confirm, key, ctx)
    k = key.lower() if len(key) == 1 else key
    if k in ("?", "h"):
        return replace(state, help=True), []
    if k == "q":
        if ctx.alone:  # (nobody is left to play with: nothing to confirm)
            return KeyState(line=Status("leaving the game…")), [Leave()]
        return KeyState(
            confirm=Confirm.QUIT, line=Status("leave the game? y leaves, any key stays")
        ), []
    if k in (ESC, BACKSPACE):  # (Backspace said "no key 'BACKSPACE' here" of a pick undone)
        return KeyState(), []
    if k == "a":
        return _abandon(state, ctx)
    if ctx.board:
        if k in (ENTER, " "):
            return KeyState(), [CloseBoard()]
        return replace(state, line=Status("Enter: back to the table")), []
    if ctx.seat is None:
        return replace(state, line=Status.refusing(f"{SPECTATOR} (q quits)")), []
    return _table_key(state, k, key, ctx)


def _answer(confirm: Confirm, key: str, ctx: Context) -> tuple[KeyState, list[Action]]:
    """A key answering the question ``confirm`` asked: yes does it, any other key does not."""
    if confirm is Confirm.QUIT:
        if key.lower() == "y":
            return KeyState(line=Status("leaving the game…")), [Leave()]
        return KeyState(line=Status("staying")), []
    if confirm is Confirm.CALL:
        if key.lower() == "x":
            return KeyState(line=Status("false call: Nerts! (with cards left)")), [
                PlayMove(Move.call())
            ]
        return KeyState(line=Status("no call")), []
    if key.lower() in ("a", "y"):  # Confirm.ABANDON
        why = not_now(ctx)  # the other came back meanwhile, say
        if why is not None:
            return KeyState(line=why), []
        return KeyState(line=Status("abandoning the game…")), [Abandon()]
    return KeyState(line=Status("the game goes on (no abandon)")), []


def _table_key(state: KeyState, k: str, key: str, ctx: Context) -> tuple[KeyState, list[Action]]:
    """A key of a seated player at the table: a move, a pick, the command line (``k``: the
    key lowered, if one character)."""
    assert ctx.seat is not None
    if k in (":", "/"):
        return KeyState(command=""), []
    if not ctx.up and k != ENTER:
        return KeyState(line=Status.refusing(NOT_UP)), []
    if k in ("s", " "):
        return _play(ctx, Move.turn())
    if k == "p":
        return _play(ctx, Move.pass_(), done=_stuck(ctx))
    if k == "r":
        return _play(ctx, Move.rotate())
    if k == "x":
        table = ctx.table
        if table is not None and not table.can_call(ctx.seat):
            left = len(table.tableaux[ctx.seat].nerts)
            return KeyState(
                confirm=Confirm.CALL,
                line=Status(false_call_question(left, table.rules.false_call_penalty)),
            ), []
        return _play(ctx, Move.call())
    if k in ("l", "f"):
        if state.selected is None:
            piles = ctx.table.rules.work_piles if ctx.table is not None else 6
            return replace(state, line=Status.refusing(f"pick a card first: n, w or 1-{piles}")), []
        return _play(ctx, Move.to_lake(state.selected))
    pile = _SOURCES.get(k)
    if pile is not None:
        if state.selected is None or (not pile.is_work and pile is not state.selected):
            return _pick(ctx, pile)
        if pile is state.selected:
            return _play(ctx, Move.to_lake(pile))
        move = resolve_pair(ctx, state.selected, pile)
        if isinstance(move, str):
            return KeyState(line=Status.refusing(move)), []
        return _play(ctx, move)
    if k == ENTER:
        return replace(state, line=Status()), []
    return replace(state, line=Status.refusing(no_key_words(key))), []


def no_key_words(key: str) -> str:
    """What a key that does nothing here says, at the table and in the lobby alike.

    >>> no_key_words("z")
    "no key 'z' here (? for help)"
    """
    return f"no key {key!r} here (? for help)"


def _abandon(state: KeyState, ctx: Context) -> tuple[KeyState, list[Action]]:
    """The abandon key: ask first when the core would take it, else say why not or how long
    is left (nothing changes)."""
    if ctx.seat is None:
        return replace(state, line=Status.refusing(f"{SPECTATOR} (q quits)")), []
    why = not_now(ctx)  # not on offer, or the core still wants more silence: ask nothing
    if why is not None:
        return replace(state, line=why), []
    assert not isinstance(ctx.abandon, str)
    return KeyState(confirm=Confirm.ABANDON, line=Status(ctx.abandon.question())), []


def not_now(ctx: Context) -> Status | None:
    """Why the abandon key does not end the game now (``None``: it may): what it says, with
    the core's answer it said it from (:attr:`Context.answer`: what ends its wait)."""
    if isinstance(ctx.abandon, str):
        return Status.refusing(f"cannot abandon: {ctx.abandon}", ctx.answer)
    waiting = ctx.abandon.waiting()
    return None if waiting is None else Status.refusing(waiting, ctx.answer)


def _pick(ctx: Context, pile: Pile) -> tuple[KeyState, list[Action]]:
    table = ctx.table
    seat = ctx.seat
    if table is None or seat is None:
        return KeyState(line=Status.refusing(NOT_DEALT)), []
    tableau = table.tableaux[seat]
    if pile.is_work and pile > len(tableau.work):
        return KeyState(line=Status.refusing(f"no work pile {int(pile)} in this game")), []
    card = tableau.top(pile)
    if card is None:
        return KeyState(line=Status.refusing(f"illegal: the {pile_name(pile)} is empty")), []
    if pile in ctx.frozen:
        return KeyState(line=_frozen(pile, ctx)), []
    piles = len(tableau.work)
    text = card_text(card, symbols=ctx.symbols)
    return KeyState(
        selected=pile,
        line=Status(f"{text} picked: l to the lake, 1-{piles} onto a work pile, Esc cancels"),
    ), []


def resolve_pair(ctx: Context, source: Pile, target: Pile) -> Move | str:
    """The move a source key then a work-pile key means, or why there is none.

    A run from a work pile moves whole where it fits; onto an empty pile it leaves the base
    card behind (moving a whole pile to an empty one changes nothing); when only a slide-under
    fits (RULES.md: slide-under), it slides.
    """
    table = ctx.table
    seat = ctx.seat
    if table is None or seat is None:
        return NOT_DEALT
    tableau = table.tableaux[seat]
    if target > len(tableau.work):
        return f"no work pile {int(target)} in this game"
    moves = [
        m
        for m in table.legal_moves(seat)
        if m.source is source and m.target is target and m.plays_card
    ]
    cards = [m for m in moves if m.kind is MoveKind.CARD and m.declare is None]
    if cards:
        pile = tableau.pile(source)
        dest = tableau.pile(target)
        if not dest and source.is_work and len(pile) > 1:
            shorter = [m for m in cards if m.count < len(pile)]
            if shorter:
                cards = shorter
        return max(cards, key=lambda m: m.count)
    slides = [m for m in moves if m.kind is MoveKind.SLIDE and m.declare is None]
    if slides:
        return max(slides, key=lambda m: m.count)
    if moves:
        return moves[0]  # a joker's declaration: the first one the engine offers
    return explain(ctx, Move.to_pile(source, target))


def explain(ctx: Context, move: Move) -> str:
    """Why ``move`` is illegal now, in words, starting with ``"illegal: "``: the engine's
    reason (:func:`~p2p_nertz.rules.reasons.why_illegal`), worded."""
    table = ctx.table
    seat = ctx.seat
    if table is None or seat is None:
        return ILLEGAL_NOT_DEALT
    reason = why_illegal(table, seat, move)
    if reason is None or reason.why is Why.OTHER:
        return f"illegal: {move}"
    return illegal_words(reason, seat, symbols=ctx.symbols)


def illegal_words(reason: Illegality, seat: int | None, *, symbols: bool = True) -> str:
    """The engine's ``reason`` a move of ``seat`` is illegal, in the player's words, starting
    with ``"illegal: "``.

    >>> from p2p_nertz.rules import Card
    >>> illegal_words(Illegality(Why.NO_FOUNDATION, Card.parse("9H"), needs=Card.parse("8H")), 0)
    'illegal: 9♥ fits on no foundation (it needs an 8♥ on top)'
    """
    return "illegal: " + _ILLEGAL[reason.why](reason, seat, symbols)


def _card(card: Card | None, symbols: bool) -> str:
    assert card is not None
    return card_text(card, symbols=symbols)


def _no_foundation(r: Illegality, seat: int | None, symbols: bool) -> str:
    card = _card(r.card, symbols)
    if r.needs is None:
        return f"{card} cannot go to the lake now"
    article = "an" if r.needs.rank in (1, 8) else "a"  # an A♦, an 8♣; a 2♦, a J♠
    return f"{card} fits on no foundation (it needs {article} {_card(r.needs, symbols)} on top)"


def _no_fit(r: Illegality, seat: int | None, symbols: bool) -> str:
    assert r.pile is not None
    onto = _card(r.onto, symbols)
    if r.count > 1:  # a run dragged, or typed with its count (3:1>2)
        first, last = _card(r.card, symbols), _card(r.run[-1], symbols)
        return f"{first}…{last} does not go on {onto} ({first}: one rank lower, the other colour)"
    if r.pile.is_work and len(r.run) > 1:
        first, last = _card(r.run[0], symbols), _card(r.run[-1], symbols)
        return f"no part of work pile {int(r.pile)} ({first}…{last}) goes on {onto}"
    return f"{_card(r.card, symbols)} does not go on {onto} (one rank lower, the other colour)"


def _too_few(r: Illegality, seat: int | None, symbols: bool) -> str:
    assert r.pile is not None
    held = f"{r.held} card" + ("" if r.held == 1 else "s")
    return f"the {pile_name(r.pile)} holds {held}, not {r.count}"


def _not_all_stuck(r: Illegality, seat: int | None, symbols: bool) -> str:
    # (One status row of 80 columns: the pass for a seat named as it is typed, P@2.)
    who = "you have not passed" if r.seat == seat else f"seat {r.seat} has not passed"
    return f"{who}: P@{r.behalf} counts only once every other player is stuck"


def _not_playing(r: Illegality, seat: int | None, symbols: bool) -> str:
    return (
        "you are not playing this round"
        if r.seat == seat
        else (f"seat {r.seat} is not playing this round")
    )


def _unsaid(r: Illegality, seat: int | None, symbols: bool) -> str:
    # (A typed move names the joker's card in the notation, ``=5H``: the keys pick it.)
    said = " or ".join(f"={c}" for c in r.options)
    return f"say what the joker becomes: type the move with {said} at its end"


def _slide_no_fit(r: Illegality, seat: int | None, symbols: bool) -> str:
    card, onto = _card(r.card, symbols), _card(r.onto, symbols)
    assert r.card is not None
    if r.card.rank == 1 and r.card.suit is not None:
        return f"nothing goes on an ace: {card} cannot be slid under {onto}"
    if r.card.suit is None:
        return f"the joker cannot be slid under {onto}: it could be no card above it"
    return f"{card} cannot be slid under {onto} (one rank higher, the other colour)"


_Words = Callable[[Illegality, "int | None", bool], str]

#: The words of each reason a move is illegal (every :class:`Why` has some).
_ILLEGAL: dict[Why, _Words] = {
    Why.ROUND_OVER: lambda r, s, y: f"the round is over: {ended_words(r.status)}",
    Why.NOT_PLAYING: _not_playing,
    Why.TURNS_PASSED: lambda r, s, y: (
        "your turns are passed for you (you did not move): p to take them back"
    ),
    Why.NOT_YOUR_TURN: lambda r, s, y: (
        "not your turn yet (turn-based play: the header says whose it is)"
    ),
    Why.STOCK_EMPTY: lambda r, s, y: "the stock and the waste are both empty",
    Why.ROTATE_SHORT: lambda r, s, y: "rotating alone needs two cards in the stock (s turns it)",
    Why.ROTATE_NOT_STUCK: lambda r, s, y: "rotate alone once you are stuck (p first)",
    Why.ROTATE_NOT_ALL: lambda r, s, y: "stocks rotate by themselves when everyone is stuck (p)",
    Why.NO_WORK_PILE: lambda r, s, y: f"there is no work pile {int(r.pile or 0)}",
    Why.EMPTY: lambda r, s, y: f"the {pile_name(r.pile or Pile.NERTS)} is empty",
    Why.NO_FOUNDATION: _no_foundation,
    Why.UNDECLARED: lambda r, s, y: f"{_card(r.card, y)} cannot go to the lake now",
    Why.ONTO_ITSELF: lambda r, s, y: "a pile onto itself",
    Why.TOO_FEW: _too_few,
    Why.NO_FIT: _no_fit,
    Why.PASS_SELF: lambda r, s, y: "a seat passes for itself with P",
    Why.STUCK_BY_PASS: lambda r, s, y: (
        f"seat {r.seat} is stuck by a pass on its behalf: it must pass itself first"
    ),
    Why.NOT_ALL_STUCK: _not_all_stuck,
    Why.NOT_THEIR_TURN: lambda r, s, y: (
        f"it is seat {r.seat}'s turn: P@{r.behalf} counts only on its turn (turn-based play)"
    ),
    Why.NO_JOKER: lambda r, s, y: "this move fixes no joker: type it without the =…",
    Why.JOKER_UNSAID: _unsaid,
    Why.JOKER_NO_FIT: lambda r, s, y: (
        f"{_card(r.card, y)} does not go on the joker of {pile_name(r.pile or Pile.NERTS)}, "
        "whatever it becomes"
    ),
    Why.JOKER_UNDER_JOKER: lambda r, s, y: "a joker cannot be slid under a joker",
    Why.SLIDE_EMPTY: lambda r, s, y: (
        f"{pile_name(r.pile or Pile.NERTS)} is empty: move the cards into it, not under it"
    ),
    Why.SLIDE_NO_SPACE: lambda r, s, y: "a slide-under needs an empty work pile to pass through",
    Why.SLIDE_NO_FIT: _slide_no_fit,
    Why.FACE_DOWN: lambda r, s, y: (
        f"the {pile_name(r.pile or Pile.NERTS)} shows no card turned up yet"
    ),
    Why.OTHER: lambda r, s, y: "the rules do not allow it now",
}


def _frozen(pile: Pile, ctx: Context) -> Status:
    """Why a move of ``pile`` waits: the core's refusal, said before the core is asked."""
    if pile is Pile.WASTE and ctx.rotating:  # (the core's order: a claim's first, then this)
        return Status.refusing(
            f"illegal: {TURNING_OVER}", MoveAnswer(MoveRefusal.ROTATING, pile=pile)
        )
    refusal = MoveAnswer(MoveRefusal.IN_THE_AIR, pile=pile)
    return Status.refusing(f"illegal: {in_the_air_words(pile)}", refusal)


def _play(ctx: Context, move: Move, done: str = "") -> tuple[KeyState, list[Action]]:
    """Check ``move`` against the table; a :class:`PlayMove`, or a status saying why not."""
    table = ctx.table
    seat = ctx.seat
    if table is None or seat is None:
        return KeyState(line=Status.refusing(ILLEGAL_NOT_DEALT)), []
    if ctx.held_back:  # (the core's refusal, said before it is asked: not "not playing")
        return KeyState(line=Status.refusing(HELD_BACK, MoveAnswer(MoveRefusal.HELD_BACK))), []
    if not ctx.up:
        return KeyState(line=Status.refusing(NOT_UP)), []
    frozen = touches(move) & ctx.frozen  # (the core's own rule: protocol.local)
    if frozen:
        return KeyState(line=_frozen(min(frozen), ctx)), []
    if move.behalf is not None and not table.over:
        # A pass on another's behalf (``P@S``) is no legal move the table lists: the rules
        # engine says whether it counts now, and why not ("illegal: P@2" said nothing). Too
        # early by the clock is the controller's to say (it asks the core).
        try:
            table.play(seat, move, table.clock)
        except IllegalMoveError as exc:  # (the engine's reason, worded)
            why = exc.reason or Illegality(Why.OTHER)
            return KeyState(line=Status.refusing(illegal_words(why, seat, symbols=ctx.symbols))), []
        return KeyState(line=Status(done or _played(ctx, table, move))), [PlayMove(move)]
    # Over, the table still lists what counts up to T* (moves in the air): not a key's move.
    if table.over or move not in table.legal_moves(seat):
        return KeyState(line=Status.refusing(explain(ctx, move))), []
    return KeyState(line=Status(done or _played(ctx, table, move))), [PlayMove(move)]


def _stuck(ctx: Context) -> str:
    """The status line of a pass: it says so when a card could still move (the pass is
    taken all the same: RULES.md lets a player pass who does not want to play)."""
    table, seat = ctx.table, ctx.seat
    if table is None or seat is None:
        return STUCK_WAITING
    return stuck_words(open_move_words(table, seat, symbols=ctx.symbols))


def _played(ctx: Context, table: Table, move: Move) -> str:
    """The status after a move is sent: what was played, in words ("played 7♥ to the
    lake", "turned the stock"), not its notation."""
    if move.kind is MoveKind.CALL:
        return "called Nerts!"
    if move.source is None or ctx.seat is None:
        return play_words(move)
    pile = table.tableaux[ctx.seat].pile(move.source)
    card = pile[-move.count] if 0 < move.count <= len(pile) else None
    return "played " + play_words(move, card, symbols=ctx.symbols)


def _command_key(state: KeyState, key: str, ctx: Context) -> tuple[KeyState, list[Action]]:
    text = state.command or ""
    if key == ESC:
        return KeyState(), []
    if key == BACKSPACE:
        return replace(state, command=text[:-1]), []
    if key == ENTER:
        if not text.strip():
            return KeyState(), []
        if text.strip().lower() == "abandon":
            return _abandon(KeyState(), ctx)
        try:
            move = Move.parse(text)
        except NotationError as exc:
            why = exc.hint or str(exc)
            return KeyState(line=Status.refusing(f"not a move: {text!r} — {why}")), []
        if ctx.seat is None:
            return KeyState(line=Status.refusing(SPECTATOR)), []
        if move.kind is MoveKind.CALL:  # typed `X` asks first, as the key does (false call)
            return _table_key(KeyState(), "x", "x", ctx)
        return _play(ctx, move)
    if len(key) == 1 and key.isprintable() and len(text) < _MAX_COMMAND:
        return replace(state, command=text + key), []
    return state, []
