"""The terminal table's pure parts: a view of the game, its rendering, and the keyboard.

Nothing here touches a terminal: :func:`~p2p_nertz.ui.render.render` turns a
:class:`~p2p_nertz.ui.view.TableView` into a :class:`~p2p_nertz.ui.screen.Screen` of styled
text, :func:`~p2p_nertz.ui.keys.press` turns keys into moves, and
:class:`~p2p_nertz.ui.tracker.Tracker` turns a peer's notices into announcements, and
:class:`~p2p_nertz.ui.controller.TableController` is the table itself for any front end (keys or
pointer actions in, requests for the node out). The curses front end is ``cli/terminal.py``
and ``cli/table.py``.
"""

from __future__ import annotations

from p2p_nertz.ui.controller import FrontEnd, TableController
from p2p_nertz.ui.keys import (
    Abandon,
    Action,
    CloseBoard,
    Context,
    KeyState,
    Leave,
    PlayMove,
    press,
)
from p2p_nertz.ui.render import ABANDON_HELP, KEY_HELP, render
from p2p_nertz.ui.screen import Row, Screen, Span, Style
from p2p_nertz.ui.tracker import Tracker
from p2p_nertz.ui.view import Board, Link, TableView, card_text

__all__ = [
    "ABANDON_HELP",
    "KEY_HELP",
    "Abandon",
    "Action",
    "Board",
    "CloseBoard",
    "Context",
    "FrontEnd",
    "KeyState",
    "Leave",
    "Link",
    "PlayMove",
    "Row",
    "Screen",
    "Span",
    "Style",
    "TableController",
    "TableView",
    "Tracker",
    "card_text",
    "press",
    "render",
]
