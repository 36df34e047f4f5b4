"""The browser table's wire: a :class:`~p2p_nertz.ui.view.TableView` as JSON, and what the page
may send back.

Pure (no I/O): the server (:mod:`p2p_nertz.web.server`) sends :func:`view_json` of each view and
hands each message of the page to :func:`parse_action`. The page draws what it is given and
decides nothing: every card, pile and count comes from here, and everything it sends is a key
(as the terminal's, :mod:`p2p_nertz.ui.keys`) or a drop (a source pile, the piles it was let
go near, nearest first, and how many cards of a work pile were grabbed), which the table
controller turns into a move or a reason; in the lobby, a choice made with the pointer
(:class:`LobbyPick`), which the lobby turns into its own keys.

Piles are named by their keys: ``n`` the Nerts pile, ``w`` the waste, ``1``-``6`` the work
piles, ``l`` the lake, ``s`` the stock (a click on it is the ``s`` key).

>>> parse_action('{"type": "drop", "from": "n", "to": ["3", "l"], "id": 7}')
Drop(source='n', targets=('3', 'l'), id=7, count=0)
>>> parse_action('{"type": "key", "key": "ENTER"}')
KeyPress(key='ENTER')
>>> parse_action('{"type": "drop", "from": "q", "to": []}')
Traceback (most recent call last):
...
p2p_nertz.web.model.BadAction: a drop's source is one of n, w, 1-6, not 'q'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from p2p_nertz.defaults import TABLE_BOT_SPEED
from p2p_nertz.errors import NertzError
from p2p_nertz.rules import Card, Lake, Pile, Table, Tableau, is_unknown
from p2p_nertz.ui.view import (
    Board,
    TableView,
    board_columns,
    card_text,
    decided_by,
    how_to_play,
    pace_words,
    page_status,
    points_words,
)

__all__ = [
    "ALL_ACTIONS",
    "KEYS_ONLY",
    "LOBBY_ACTIONS",
    "TABLE_ACTIONS",
    "BadAction",
    "Drop",
    "KeyPress",
    "LobbyPick",
    "PageAction",
    "not_taken",
    "card_json",
    "parse_action",
    "view_json",
]

MESSAGES = 8
"""Announcements sent with each view (the newest; the page shows them as a list)."""

_SOURCES = ("n", "w", "1", "2", "3", "4", "5", "6")
_TARGETS = (*_SOURCES, "l")
#: Keys the page may send: the terminal's keys (one printable character) and these names.
_NAMED_KEYS = frozenset({"ENTER", "ESC", "BACKSPACE", "UP", "DOWN", "LEFT", "RIGHT"})
_MAX_TEXT = 4096  # a message longer than this is not one the page sends


class BadAction(NertzError):
    """A message from the page that is not an action (it is answered, and changes nothing)."""


@dataclass(frozen=True, slots=True)
class KeyPress:
    """A key, as the terminal's table takes it."""

    key: str


@dataclass(frozen=True, slots=True)
class Drop:
    """A card (or the run above it) dragged from ``source`` and let go near ``targets``.

    Attributes:
        source: the pile it was picked from (its key).
        targets: the piles it was let go near, the nearest first (aim assist: the nearest
            one that fits wins).
        id: the page's number for the drop, echoed with the next view (the page times the
            drop to its answer with it).
        count: the run grabbed from a work pile, in cards from its top (the card picked and
            those above it; 0: not said, the keys choose).
    """

    source: str
    targets: tuple[str, ...]
    id: int = 0
    count: int = 0


@dataclass(frozen=True, slots=True)
class LobbyPick:
    """A choice made with the pointer on the lobby's page (the lobby turns it into its keys,
    :func:`p2p_nertz.web.terminal.pick_keys`).

    Attributes:
        do: one of :data:`LOBBY_PICKS`.
        where: the table to join (its address, as listed).
        ready: ``ready``: the mark wanted.
        strategy: ``bot``: the bot's strategy.
        speed: ``bot``: its speed, 1 to 10.
        seat: ``remove``: the guest's seat, 1 to 7.
    """

    do: str
    where: str = ""
    ready: bool = True
    strategy: str = ""
    speed: int = TABLE_BOT_SPEED
    seat: int = 0


#: What the lobby's page may ask for.
LOBBY_PICKS = ("create", "join", "ready", "bot", "start", "remove", "leave", "quit")

PageAction = KeyPress | Drop | LobbyPick

#: What each page takes (:attr:`~p2p_nertz.web.server.WebApp.takes`): the table keys and
#: drops, the lobby keys and its choices, a replay or a spectator's page keys only.
ALL_ACTIONS: tuple[type[PageAction], ...] = (KeyPress, Drop, LobbyPick)
TABLE_ACTIONS: tuple[type[PageAction], ...] = (KeyPress, Drop)
LOBBY_ACTIONS: tuple[type[PageAction], ...] = (KeyPress, LobbyPick)
KEYS_ONLY: tuple[type[PageAction], ...] = (KeyPress,)
_ACTION_WORDS = {KeyPress: "a key", Drop: "a dragged card", LobbyPick: "a lobby choice"}


def not_taken(action: PageAction, takes: tuple[type[PageAction], ...]) -> str:
    """Why a page's message is refused: its kind is not one this page takes now.

    >>> not_taken(LobbyPick("ready"), TABLE_ACTIONS)
    'a lobby choice means nothing on this page now (it takes a key or a dragged card)'
    """
    wanted = " or ".join(_ACTION_WORDS[kind] for kind in takes)
    return f"{_ACTION_WORDS[type(action)]} means nothing on this page now (it takes {wanted})"


def parse_action(text: str | bytes) -> PageAction:
    """One message of the page, checked.

    Raises:
        BadAction: it is not JSON, or not a key or a drop as the page sends them.
    """
    if len(text) > _MAX_TEXT:
        raise BadAction("message too long")
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        raise BadAction("not JSON") from None
    if not isinstance(data, dict):
        raise BadAction("not an object")
    kind = data.get("type")
    if kind == "key":
        key = data.get("key")
        if not isinstance(key, str) or not (
            key in _NAMED_KEYS or (len(key) == 1 and key.isprintable())
        ):
            raise BadAction(f"not a key: {key!r}")
        return KeyPress(key)
    if kind == "drop":
        source, targets, number = data.get("from"), data.get("to"), data.get("id", 0)
        if source not in _SOURCES:
            raise BadAction(f"a drop's source is one of n, w, 1-6, not {source!r}")
        if not isinstance(targets, list) or not all(t in _TARGETS for t in targets):
            raise BadAction("a drop's targets are a list of n, w, 1-6 and l")
        if not _whole(number):
            raise BadAction("a drop's id is a number")
        count = data.get("count", 0)
        if not _whole(count) or not 0 <= count <= 52:
            raise BadAction("a drop's count is the cards grabbed, 0 to 52")
        return Drop(source, tuple(targets[:8]), number, count)
    if kind == "lobby":
        return _lobby_pick(data)
    raise BadAction(f"no action {kind!r}")


def _lobby_pick(data: dict[str, Any]) -> LobbyPick:
    """A lobby message of the page, checked (see :class:`LobbyPick`).

    >>> _lobby_pick({"do": "bot", "strategy": "greedy", "speed": 10})
    LobbyPick(do='bot', where='', ready=True, strategy='greedy', speed=10, seat=0)
    >>> _lobby_pick({"do": "remove", "seat": 9})
    Traceback (most recent call last):
    ...
    p2p_nertz.web.model.BadAction: a guest's seat is 1 to 7
    """
    do = data.get("do")
    if do not in LOBBY_PICKS:
        raise BadAction(f"no lobby choice {do!r}")
    where, ready = data.get("where", ""), data.get("ready", True)
    strategy, speed, seat = (
        data.get("strategy", ""),
        data.get("speed", TABLE_BOT_SPEED),
        data.get("seat", 0),
    )
    if not isinstance(where, str) or not isinstance(strategy, str) or len(where + strategy) > 80:
        raise BadAction("a table's address and a strategy are short texts")
    if not isinstance(ready, bool):
        raise BadAction("ready is true or false")
    if not _whole(speed) or not 1 <= speed <= 10:
        raise BadAction("a bot's speed is 1 to 10")
    if not _whole(seat) or (do == "remove" and not 1 <= seat <= 7):
        raise BadAction("a guest's seat is 1 to 7")
    return LobbyPick(do, where, ready, strategy, speed, seat)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def view_json(view: TableView, *, symbols: bool = True, ack: int | None = None) -> dict[str, Any]:
    """The view as the page draws it (see the module docstring); ``ack``: the last drop the
    controller took (the page's id for it)."""
    table = view.table
    seats = len(view.names)
    players = [
        {
            "seat": seat,
            "name": view.seat_name(seat),
            "link": view.link(seat).value,
            "points": points_words(view.total(seat)),  # (the game's: the terminal's words)
            "last": view.last[seat] if seat < len(view.last) else "",
            "tableau": _tableau(table.tableaux[seat], symbols) if table is not None else None,
            "stuck": table is not None and table.stuck[seat],
            "passed": table is not None and seat in table.passed_for,
            "active": table is None or table.active[seat],
        }
        for seat in range(seats)
    ]
    return {
        "type": "view",
        "seat": view.seat,
        "round": view.round,
        "phase": view.phase,
        "heading": view.heading(),
        "turn": view.turn_words(),  # (turn-based play: whose turn it is, else None)
        "players": players,
        "names": list(view.names),  # (each name alone: the page isolates those in its words)
        "lake": _lake(table, view, symbols),
        "frozen": sorted(_key(p) for p in view.frozen),
        "selected": None if view.selected is None else _key(view.selected),
        "status": page_status(view.status),  # (a question names the page's button)
        "refused": view.refused,  # (as the keys made it: not read back from the words)
        "command": view.command,
        "messages": [page_status(m) for m in view.news()[-MESSAGES:]],
        "board": None if view.board is None else _board(view, view.board, symbols),
        "countdown": view.countdown,
        "final": view.final,
        "alone": view.alone,
        "gone": view.gone,
        "abandon": None if view.abandon is None else view.abandon.name,
        "work_piles": view.rules.work_piles,
        "rotate_alone": view.rules.rotate_alone,
        # The page's help: the rules in brief with this game's numbers, as the terminal's.
        "how_to_play": how_to_play(view.rules, pointer=True, watcher=view.seat is None),
        "ack": ack,
    }


def _key(pile: Pile) -> str:
    """A pile as the page names it: its notation (``N``, ``W``, ``L``, ``3``), in lower case."""
    return str(pile).lower()


def card_json(card: Card, *, symbols: bool = True) -> dict[str, Any] | None:
    """One face-up card: its code, rank and suit to draw, its colour and its text (``None``:
    a card not known here, drawn face down: hidden, or sealed in a shuffle game until the
    table opens it).

    >>> card_json(Card.parse("10H"))
    {'code': '10H', 'rank': '10', 'suit': 'H', 'red': True, 'text': '10♥'}
    >>> from p2p_nertz.rules import sealed
    >>> card_json(Card.parse("??")) is None, card_json(sealed(51)) is None
    (True, True)
    """
    if is_unknown(card):
        return None
    text = card_text(card, symbols=symbols)
    if card.suit is None:  # an undeclared joker
        return {"code": str(card), "rank": "★", "suit": "", "red": False, "text": text}
    rank = text.split("=")[-1][:-1]  # the suit is the last character (a joker: J1=10♥)
    return {
        "code": str(card),
        "rank": ("★" if card.joker else "") + rank,
        "suit": card.suit.value,
        "red": card.suit.is_red,
        "text": text,
    }


def _tableau(tableau: Tableau, symbols: bool) -> dict[str, Any]:
    nerts = tableau.nerts
    return {
        "nerts": {
            "count": len(nerts),
            "top": card_json(nerts[-1], symbols=symbols) if nerts else None,
        },
        "work": [[card_json(c, symbols=symbols) for c in pile] for pile in tableau.work],
        "stock": len(tableau.stock),
        "waste": {
            "count": len(tableau.waste),
            # The last three, as a stock turned three at a time shows them fanned.
            "top": [card_json(c, symbols=symbols) for c in tableau.waste[-3:]],
        },
    }


def _lake(table: Table | None, view: TableView, symbols: bool) -> list[dict[str, Any]]:
    if table is None:
        return []
    return _foundations(table.lake, view, symbols)


def _foundations(lake: Lake, view: TableView | None, symbols: bool) -> list[dict[str, Any]]:
    out = []
    for fid in lake:
        cards = lake[fid]
        top = cards[-1]
        out.append(
            {
                "id": str(fid),
                "owner": fid.owner,
                "height": len(cards),
                "top": card_json(top.card, symbols=symbols),
                "top_owner": top.owner,
                # In the air: claimed above the stable time, so a race may still undo it.
                "air": view is not None and view.in_air(top.lamport),
            }
        )
    return out


def _board(view: TableView, board: Board, symbols: bool) -> dict[str, Any]:
    score = board.score
    rules = view.rules
    by_owner: dict[int, list[Card]] = {}
    for lc in board.lake.cards():
        by_owner.setdefault(lc.owner, []).append(lc.card)
    rows = []
    for p in score.players:
        team = rules.team_of(p.seat)
        rows.append(
            {
                "seat": p.seat,
                "name": view.seat_name(p.seat),
                "played": p.played,
                "lake": p.lake,
                "nerts_left": p.nerts_left,
                "nerts_penalty": p.nerts_card_penalty * p.nerts_left,
                "bonus": p.bonus,
                "false_call": p.penalty,
                "round": p.total,
                "game": board.totals[team] if team < len(board.totals) else 0,
                "cards": [
                    card_json(c, symbols=symbols)
                    for c in sorted(by_owner.get(p.seat, []), key=Card.sort_key)
                ],
            }
        )
    result = board.result
    columns = board_columns(rules, score)
    return {
        "round": board.round,
        "status": score.status.value,
        "callers": [view.seat_name(c) for c in score.callers],
        "rows": rows,
        "columns": [name for name, _ in columns],
        "headings": [heading for _, heading in columns],
        "result": None
        if result is None
        else {
            "winners": [view.winner_name(w) for w in result.winners],
            "teams": list(result.winners),
            "termination": result.termination.value,
            "decided": decided_by(result.termination, view.rules),
            "top": result.winning_total,
        },
        "provisional": view.provisional,
        "pace": None if board.pace is None else pace_words(board.pace, page=True),
    }
