"""The lobby in the page: the lobby's own view (:class:`~p2p_nertz.ui.lobby.LobbyView`) drawn
as a page, and the page's clicks and keys read back as the lobby's keys.

:class:`PageTerminal` has the methods of the terminal the lobby runs on (``cli.terminal``'s
``Terminal``: ``size``, ``paint``, ``read_keys``, ``wait_input``, ``resized``) and one more,
``show_lobby``: the lobby (``cli/lobby_app.py``: discovery, tables, seats, ready, bots, start)
hands it the view itself rather than the text screen made of it, and the page draws that view
as a page (a table of tables, the seats with their fingerprints and ready marks, the rules, a
form for bots). What the page sends back, a choice made with the pointer
(:class:`~p2p_nertz.web.model.LobbyPick`) or a key, becomes the keys the terminal's lobby would
take for it (:func:`pick_keys`): the same state (:func:`~p2p_nertz.ui.lobby.press_lobby`) decides
what happens and says why not, so the page holds no lobby logic of its own. When the game starts
the same server goes on with the table (its :attr:`app` is handed to
:func:`~p2p_nertz.web.table.run_web_table`), so the page follows from lobby to table.
"""

from __future__ import annotations

import json
from typing import Any

import trio

from p2p_nertz.protocol.spec import Deal
from p2p_nertz.ui.keys import ENTER, ESC
from p2p_nertz.ui.lobby import LobbyView, rules_text
from p2p_nertz.ui.screen import Screen
from p2p_nertz.web.model import LOBBY_ACTIONS, BadAction, KeyPress, LobbyPick, PageAction
from p2p_nertz.web.server import Page, ViewFeed, WebApp

__all__ = ["PageTerminal", "lobby_json", "pick_keys"]

SIZE = (100, 32)
"""The screen size the lobby is told (it lays out no text screen for the page)."""
_MAX_KEYS = 64  # keys waiting for the lobby: more is a flood, and is dropped


def lobby_json(view: LobbyView) -> dict[str, Any]:
    """The lobby's view as the page draws it.

    >>> from p2p_nertz.ui.lobby import Listing
    >>> page = lobby_json(LobbyView("ann", "ab12", (Listing("10.0.0.2:7000", "bo", "cd34", 1, 4),)))
    >>> page["listings"][0]["name"], page["listings"][0]["seats"], page["table"]
    ("bo's table", '1/4', None)
    """
    keys = view.keys
    table = view.table
    at = None if table is None else table.where
    listings = [
        {
            "n": i + 1,
            "where": item.where,
            "name": None if item.name is None else f"{item.name}'s table",
            "host": item.name,  # (the name alone: the page isolates it in the words above)
            "fingerprint": item.fingerprint or "",
            "seats": (
                f"{item.taken}/{item.capacity}"
                if item.taken is not None and item.capacity is not None
                else ""
            ),
            "full": item.taken is not None
            and item.capacity is not None
            and item.taken >= item.capacity,
            "found": item.found,
            # (the deal when it is not the default, as the terminal's list names it)
            "deal": None if item.deal is Deal.COMMIT else item.deal.value,
            "here": item.where == at,
        }
        for i, item in enumerate(view.listings)
    ]
    mine: dict[str, Any] | None = None
    if table is not None:
        host = next((s.name for s in table.seats if s.host), None)
        mine = {
            "where": table.where,
            "hosting": table.hosting,
            "host": host,
            "capacity": table.capacity,
            "ready": table.ready,
            "seats": [
                {
                    "seat": n,
                    "name": s.name,
                    "fingerprint": s.fingerprint,
                    "ready": s.ready,
                    "host": s.host,
                    "you": s.you,
                }
                for n, s in enumerate(table.seats)
            ],
            "rules": None if table.rules is None else rules_text(table.rules, table.deal),
            "blocker": table.blocker,
            "can_start": table.hosting and table.blocker is None,
        }
    return {
        "type": "lobby",
        "name": view.name,
        "fingerprint": view.fingerprint,
        "discovering": view.discovering,
        "listings": listings,
        "table": mine,
        "strategies": list(view.strategies),
        "bot": {
            "strategy": view.strategies[keys.strategy % len(view.strategies)]
            if view.strategies
            else None,
            "speed": keys.speed,
        },
        "status": keys.status,
        "refused": keys.line.refused,  # (as the keys or the lobby made it: not read from the words)
        "messages": list(view.news()),  # (not the status line's words again)
    }


def pick_keys(view: LobbyView, pick: LobbyPick) -> list[str]:
    """The lobby's keys that make a choice of the page (what a person would type for it).

    The picker, the help or a half-typed removal is closed first (``Esc``), so the keys mean
    at this moment what they always mean. A choice that means nothing now is passed on all the
    same where the lobby's keys say why (start while somebody is not ready, ready while not at
    a table); one the lobby cannot even be asked is refused here.

    >>> from p2p_nertz.ui.lobby import Listing
    >>> view = LobbyView("ann", "ab12", tuple(Listing(f"h:{p}") for p in range(7000, 7012)))
    >>> pick_keys(view, LobbyPick("join", where="h:7001"))
    ['2', 'ENTER']
    >>> pick_keys(view, LobbyPick("join", where="h:7010"))
    ['DOWN', 'DOWN', 'DOWN', 'DOWN', 'DOWN', 'DOWN', 'DOWN', 'DOWN', 'DOWN', 'DOWN', 'ENTER']
    >>> from p2p_nertz.ui.lobby import AtTable
    >>> at = LobbyView("ann", "ab12", table=AtTable("h:7000"), strategies=("greedy", "slow"))
    >>> pick_keys(at, LobbyPick("bot", strategy="slow", speed=10))
    ['b', 't', '0', 'ENTER']

    Raises:
        BadAction: the table to join is not (or no longer) listed; no such bot strategy.
    """
    keys = view.keys
    first = [ESC] if keys.help or keys.picking or keys.removing else []
    do = pick.do
    if do == "join":
        wheres = [item.where for item in view.listings]
        if pick.where not in wheres:
            raise BadAction(f"no table at {pick.where!r} in the list (any more)")
        index = wheres.index(pick.where)
        if index < 9:
            return [*first, str(index + 1), ENTER]
        cursor = min(keys.cursor, len(wheres) - 1)
        return [*first, *["DOWN"] * ((index - cursor) % len(wheres)), ENTER]
    if do == "ready":
        if view.table is not None and not view.table.hosting and view.table.ready == pick.ready:
            return first  # (already so: the key toggles)
        return [*first, "r"]
    if do == "bot":
        if view.table is None:
            return [*first, "b"]  # (the lobby says why not; the picker's keys would mean more)
        if pick.strategy not in view.strategies:
            raise BadAction(f"no bot strategy {pick.strategy!r}")
        turns = (view.strategies.index(pick.strategy) - keys.strategy) % len(view.strategies)
        return [*first, "b", *["t"] * turns, str(pick.speed % 10), ENTER]
    if do == "remove":
        if view.table is None or not view.table.hosting:
            return [*first, "x"]  # (the lobby says why not; a digit would select a table)
        return [*first, "x", str(pick.seat)]
    simple = {"create": "c", "start": "s", "leave": "l", "quit": "q"}
    return [*first, simple[do]]


class PageTerminal:
    """The page as the lobby's terminal (see the module docstring)."""

    def __init__(self) -> None:
        self.feed = ViewFeed()
        self.app = WebApp(Page(), self.feed, self.on_action, takes=LOBBY_ACTIONS)
        self.url: str | None = None  # (once served: ``nertz resume --web`` serves it again)
        self.view: LobbyView | None = None
        self._keys: list[str] = []
        self._input = trio.Event()

    def on_action(self, action: PageAction) -> None:
        """A key or a choice of the page (the server takes nothing else here:
        :data:`~p2p_nertz.web.model.LOBBY_ACTIONS`).

        Raises:
            BadAction: a choice the lobby cannot be asked (the page is told why).
        """
        if isinstance(action, KeyPress):
            keys = [action.key]
        elif not isinstance(action, LobbyPick):
            raise BadAction("a dragged card means nothing in the lobby")
        elif self.view is None:
            raise BadAction("the lobby is not shown yet: choose again in a moment")
        else:
            keys = pick_keys(self.view, action)
        if len(self._keys) + len(keys) <= _MAX_KEYS:
            self._keys += keys
            self._input.set()

    def show_lobby(self, view: LobbyView) -> None:
        """Draw the lobby: its view, to every page."""
        self.view = view
        self.feed.publish(json.dumps(lobby_json(view), ensure_ascii=False))

    def size(self) -> tuple[int, int]:
        return SIZE

    def paint(self, screen: Screen) -> None:
        """(The page draws the lobby's view, :meth:`show_lobby`, not its text screen.)"""

    def read_keys(self) -> list[str]:
        keys, self._keys = self._keys, []
        return keys

    async def wait_input(self) -> None:
        while not self._keys:
            self._input = trio.Event()
            await self._input.wait()

    def resized(self) -> None:
        """(The page's screen has one size.)"""
