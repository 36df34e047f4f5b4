"""The lobby in the page: a text screen (the lobby's own :class:`~p2p_nertz.ui.screen.Screen`)
drawn by the page, and the page's keys read back.

:class:`PageTerminal` has the methods of the terminal the lobby runs on (``cli.terminal``'s
``Terminal``: ``size``, ``paint``, ``read_keys``, ``wait_input``, ``resized``), so the lobby
(``cli/lobby_app.py``: discovery, tables, seats, ready, bots, start) runs unchanged with the
page as its screen and keyboard; the page adds a button for each of the lobby's keys. When
the game starts the same server goes on with the table (its :attr:`app` is handed to
:func:`~p2p_nertz.web.table.run_web_table`), so the page follows from lobby to table.
"""

from __future__ import annotations

import json
from typing import Any

import trio

from p2p_nertz.ui.screen import Screen
from p2p_nertz.web.model import KeyPress, PageAction
from p2p_nertz.web.server import Page, ViewFeed, WebApp

__all__ = ["PageTerminal", "screen_json"]

SIZE = (100, 32)
"""The screen the lobby lays out for (columns, rows): the page draws it in a fixed font."""


def screen_json(screen: Screen) -> dict[str, Any]:
    """A text screen for the page: its rows of ``[text, style]`` spans.

    >>> from p2p_nertz.ui.screen import Span, Style
    >>> screen_json(Screen(10, 2, ((Span("lobby", Style.BOLD),),)))
    {'type': 'screen', 'rows': [[['lobby', 'bold']]]}
    """
    rows = [[[span.text, span.style.value] for span in row] for row in screen.rows]
    return {"type": "screen", "rows": rows}


class PageTerminal:
    """The page as the lobby's terminal (see the module docstring)."""

    def __init__(self) -> None:
        self.feed = ViewFeed()
        self.app = WebApp(Page(), self.feed, self.on_action)
        self._keys: list[str] = []
        self._input = trio.Event()

    def on_action(self, action: PageAction) -> None:
        """A key of the page (a drop means nothing in the lobby)."""
        if isinstance(action, KeyPress) and len(self._keys) < 64:
            self._keys.append(action.key)
            self._input.set()

    def size(self) -> tuple[int, int]:
        return SIZE

    def paint(self, screen: Screen) -> None:
        self.feed.publish(json.dumps(screen_json(screen), ensure_ascii=False))

    def read_keys(self) -> list[str]:
        keys, self._keys = self._keys, []
        return keys

    async def wait_input(self) -> None:
        while not self._keys:
            self._input = trio.Event()
            await self._input.wait()

    def resized(self) -> None:
        """(The page's screen has one size.)"""
