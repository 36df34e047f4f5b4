"""The curses front end: a terminal that paints a :class:`~p2p_nertz.ui.screen.Screen` and
reads keys without blocking, for the table (:mod:`cli.table`), the lobby (:mod:`cli.lobby_app`)
and ``nertz watch``.

How curses and trio share the process: everything runs on trio's thread. Keys are read with
curses in no-delay mode whenever trio reports standard input readable; a resize (SIGWINCH,
taken by a trio signal receiver) re-reads the terminal size; curses only sends what changed.
"""

from __future__ import annotations

import argparse
import contextlib
import curses
import locale
import os
import signal
import sys
import textwrap
from collections.abc import Iterator
from typing import Protocol

import trio

from cli.args import NEEDS_A_TERMINAL
from cli.plain import is_unicode, plain
from p2p_nertz.errors import NertzError
from p2p_nertz.ui import Screen, Style, render
from p2p_nertz.ui.keys import BACKSPACE, ENTER, ESC
from p2p_nertz.ui.render import MIN_HEIGHT, MIN_WIDTH
from p2p_nertz.ui.screen import Span
from p2p_nertz.ui.view import TableView

__all__ = [
    "TERMINAL_SIGNALS",
    "CursesTerminal",
    "Terminal",
    "TerminalFront",
    "open_curses",
    "symbols_ok",
]

TERMINAL_SIGNALS = (signal.SIGWINCH, signal.SIGCONT)
"""The signals after which a screen takes its terminal again (:meth:`Terminal.resized`): a
resize, and a continue. A program stopped from outside (``kill -STOP``, then ``fg``) got its
terminal back in the shell's modes: keys echoed and waited for Enter, nothing was redrawn.
(Ctrl-Z is curses's own: it gives the terminal back and takes it again itself.)"""


class Terminal(Protocol):
    """What the table needs from a terminal (curses in the product, a fake in unit tests)."""

    def size(self) -> tuple[int, int]:
        """``(width, height)`` now."""

    def paint(self, screen: Screen) -> None:
        """Show ``screen``."""

    def read_keys(self) -> list[str]:
        """The keys typed since the last call (names as :mod:`p2p_nertz.ui.keys` wants)."""

    async def wait_input(self) -> None:
        """Wait until a key may be there."""

    def resized(self) -> None:
        """The terminal was resized (SIGWINCH), or given back (SIGCONT: :data:`TERMINAL_SIGNALS`):
        take its size, and its modes, again."""


_ARROWS = {
    curses.KEY_UP: "UP",
    curses.KEY_DOWN: "DOWN",
    curses.KEY_LEFT: "LEFT",
    curses.KEY_RIGHT: "RIGHT",
}


_SPECIAL = {
    9: "\t",
    10: ENTER,
    13: ENTER,
    curses.KEY_ENTER: ENTER,
    27: ESC,
    127: BACKSPACE,
    8: BACKSPACE,
    curses.KEY_BACKSPACE: BACKSPACE,
}


#: The last letter of an arrow key's sequence (``ESC [ A``, or ``ESC O A`` in keypad mode).
_ARROW_ENDS = {"A": "UP", "B": "DOWN", "C": "RIGHT", "D": "LEFT"}


def keys_of(codes: list[str | int]) -> list[str]:
    """The keys in one read of curses's codes (``get_wch``'s: a character or a key code).

    A key's escape sequence that curses did not decode arrives as its characters: a terminal
    that sends ``ESC [ A`` for the up arrow where the terminfo entry says ``ESC O A`` (xterm's
    keypad mode: pexpect, some terminals and multiplexers). Read one by one, it was Esc, ``[``
    and ``a``, the abandon key (a newcomer's arrow asked to end the game). A sequence within
    one read is taken whole: an arrow is its key, any other (a function key) nothing.

    >>> keys_of(["\x1b", "[", "A", "a", "\x1b", "O", "D", "\x1b", "[", "1", "5", "~", "\x1b"])
    ['UP', 'a', 'LEFT', 'ESC']
    """
    out: list[str] = []
    at = 0
    while at < len(codes):
        code = codes[at]
        at += 1
        if code == "\x1b" and at < len(codes) and codes[at] in ("[", "O"):
            at, arrow = _sequence(codes, at)
            if arrow is not None:
                out.append(arrow)
            continue
        key = _key(code)
        if key is not None:
            out.append(key)
    return out


def _sequence(codes: list[str | int], at: int) -> tuple[int, str | None]:
    """The end of the escape sequence whose ``[`` or ``O`` is ``codes[at]``, and its arrow
    (``None``: another key's, or cut short)."""
    introducer = codes[at]
    at += 1
    while at < len(codes):  # (ECMA-48: parameters and intermediates, then a final byte)
        code = codes[at]
        at += 1
        if not isinstance(code, str) or len(code) != 1:
            return at - 1, None
        if introducer == "O" or "@" <= code <= "~":
            return at, _ARROW_ENDS.get(code)
    return at, None


def _key(code: str | int) -> str | None:
    """One code as the table's key name (``None``: no key of the table's)."""
    if isinstance(code, str):
        number = ord(code) if len(code) == 1 else -1
        if number in _SPECIAL:
            return _SPECIAL[number]
        if number == 3:
            return "CTRL-C"
        return code if code.isprintable() else None
    if code == curses.KEY_RESIZE:
        return "RESIZE"
    return _SPECIAL.get(code) or _ARROWS.get(code)


class CursesTerminal:
    """The curses front end: paints a :class:`Screen`, reads keys without blocking.

    Args:
        window: the curses screen.
        colour: use colours if the terminal has them (else bold/reverse/underline).
    """

    def __init__(self, window: curses.window, *, colour: bool = True) -> None:
        self.window = window
        codeset = locale.nl_langinfo(locale.CODESET)  # (curses's, set by open_curses)
        self._encoding = None if is_unicode(codeset) else codeset
        window.nodelay(True)
        window.keypad(True)
        self.attrs = _attributes(colour and curses.has_colors())
        self._width, self._height = self._measure()

    def _measure(self) -> tuple[int, int]:
        height, width = self.window.getmaxyx()
        return width, height

    def size(self) -> tuple[int, int]:
        return self._width, self._height

    def resized(self) -> None:
        try:
            columns, lines = os.get_terminal_size(sys.__stdout__.fileno())  # type: ignore[union-attr]
            foreground = os.tcgetpgrp(sys.__stdin__.fileno()) == os.getpgrp()  # type: ignore[union-attr]
        except (OSError, AttributeError, ValueError):
            return
        if foreground:  # (in the background, setting the modes would stop us again: SIGTTOU)
            with contextlib.suppress(curses.error):
                curses.reset_prog_mode()  # a shell that took the terminal back gave it its own
        curses.resizeterm(lines, columns)
        self.window.clear()
        self._width, self._height = self._measure()

    def paint(self, screen: Screen) -> None:
        if self._width < MIN_WIDTH or self._height < MIN_HEIGHT:
            screen = too_small(self._width, self._height)
        window = self.window
        window.erase()
        for y, row in enumerate(screen.rows[: self._height]):
            x = 0
            for span in row:
                text = span.text if self._encoding is None else plain(span.text, self._encoding)
                text = text[: max(0, self._width - x)]
                if y == self._height - 1 and x + len(text) >= self._width:
                    text = text[: self._width - x - 1]  # curses cannot write the last cell
                if text:
                    with contextlib.suppress(curses.error):
                        window.addstr(y, x, text, self.attrs[span.style])
                x += len(text)
        with contextlib.suppress(curses.error):
            window.move(self._height - 1, 0)
            window.refresh()  # (refused by a terminal that just hung up: cli/main.py)

    def read_keys(self) -> list[str]:
        codes: list[str | int] = []
        while True:
            try:
                codes.append(self.window.get_wch())
            except curses.error:
                break
        if curses.KEY_RESIZE in codes:
            self._width, self._height = self._measure()
        return keys_of(codes)

    async def wait_input(self) -> None:
        fd = sys.stdin.fileno()
        await trio.lowlevel.wait_readable(fd)
        if not os.isatty(fd):
            # The terminal hung up and the command plays on (SIGHUP ignored: ``nohup``; else
            # cli/main.py leaves the game): its end is "readable" for ever, and the keyboard
            # task spun on it, a core's worth while the game went on. No key comes again.
            await trio.sleep_forever()


def _attributes(colour: bool) -> dict[Style, int]:
    mono = {
        Style.PLAIN: curses.A_NORMAL,
        Style.DIM: curses.A_NORMAL,
        Style.BOLD: curses.A_BOLD,
        Style.RED: curses.A_BOLD,
        Style.BLACK: curses.A_NORMAL,
        Style.KEY: curses.A_BOLD,
        Style.SELECTED: curses.A_REVERSE,
        Style.PENDING: curses.A_UNDERLINE | curses.A_BOLD,
        Style.GOOD: curses.A_NORMAL,
        Style.WARN: curses.A_BOLD,
        Style.BAD: curses.A_BOLD | curses.A_UNDERLINE,
    }
    if not colour:
        return mono
    curses.start_color()
    with contextlib.suppress(curses.error):
        curses.use_default_colors()
    pairs = {
        Style.RED: (curses.COLOR_RED, 0),
        Style.KEY: (curses.COLOR_CYAN, 0),
        Style.PENDING: (curses.COLOR_MAGENTA, curses.A_BOLD | curses.A_UNDERLINE),
        Style.GOOD: (curses.COLOR_GREEN, 0),
        Style.WARN: (curses.COLOR_YELLOW, 0),
        Style.BAD: (curses.COLOR_RED, curses.A_BOLD),
        Style.DIM: (curses.COLOR_BLUE, 0),
    }
    attrs = dict(mono)
    for number, (style, (fg, extra)) in enumerate(pairs.items(), 1):
        try:
            curses.init_pair(number, fg, -1)
        except curses.error:
            curses.init_pair(number, fg, curses.COLOR_BLACK)
        attrs[style] = curses.color_pair(number) | extra
    attrs[Style.RED] |= curses.A_BOLD
    attrs[Style.BLACK] = curses.A_BOLD
    return attrs


def require_terminal() -> None:
    """Refuse, in one line, a screen without a terminal (a command piped, or run by a
    script): said before anything starts (``nertz watch`` printed where members push, then
    failed).

    Raises:
        NertzError: standard input or output is not a terminal.
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise NertzError(NEEDS_A_TERMINAL)


@contextlib.contextmanager
def open_curses(*, colour: bool = True) -> Iterator[CursesTerminal]:
    """Take over the terminal with curses (cbreak: Ctrl-C still signals) and give it back.

    Raises:
        NertzError: standard input or output is not a terminal.
    """
    require_terminal()
    colour = colour and not os.environ.get("NO_COLOR")  # (no-color.org: set and not empty)
    locale.setlocale(locale.LC_ALL, "")
    window = curses.initscr()
    try:
        curses.noecho()
        curses.cbreak()
        with contextlib.suppress(curses.error):
            curses.curs_set(0)
        with contextlib.suppress(AttributeError, curses.error):
            curses.set_escdelay(25)
        yield CursesTerminal(window, colour=colour)
    finally:
        _clear_last_line(window)
        # (each step on its own: a terminal that hung up, SIGHUP, refuses them all, and the
        # command ends as SIGTERM would have it, cli/main.py)
        with contextlib.suppress(curses.error):
            window.keypad(False)
        for step in (curses.nocbreak, curses.echo, curses.endwin):
            with contextlib.suppress(curses.error):
                step()


def _clear_last_line(window: curses.window) -> None:
    """Blank the screen's last line, where curses leaves the cursor when it ends: what the
    command prints then (the scores, where the log is, why it stopped) starts on a line of
    its own. A terminal with an alternate screen (xterm's) shows the screen from before the
    table instead, and this changes nothing there; one without (the Linux console, screen and
    tmux with it off, TERM=vt100) kept the table, and the first line printed overwrote the
    start of the footer, its end left showing after it ("after 1 round(s): you 12  bot1 -3
    · s stock · p stuck · …")."""
    with contextlib.suppress(curses.error):
        height, _ = window.getmaxyx()
        window.move(height - 1, 0)
        window.clrtoeol()
        window.refresh()


def too_small(width: int, height: int) -> Screen:
    """What a terminal smaller than the screens' 80×24 shows instead of a table cut short
    (your own tableau, at the bottom, would be the first thing lost): its size and what to do.
    The program goes on meanwhile, and its keys still work; a resize redraws."""
    words = (
        f"This terminal is {width}×{height}; p2p-nertz needs {MIN_WIDTH}×{MIN_HEIGHT}. "
        "Make it larger: the game goes on meanwhile and the keys still work."
    )
    lines = textwrap.wrap(words, max(1, width - 1))[: max(1, height - 1)]
    rows = tuple(
        (Span(line, Style.BAD if n == 0 else Style.PLAIN),) for n, line in enumerate(lines)
    )
    return Screen(width, height, rows)


def symbols_ok(args: argparse.Namespace) -> bool:
    if args.ascii:
        return False
    locale.setlocale(locale.LC_ALL, "")
    # (the C library's codeset, which curses writes in: Python's own encoding is UTF-8 in a
    # C locale (UTF-8 mode), and the suits were dropped from the cards: "A  10A")
    return is_unicode(locale.nl_langinfo(locale.CODESET))


class TerminalFront:
    """The table's front end on a :class:`Terminal` (:class:`~p2p_nertz.ui.controller.FrontEnd`):
    renders each view to the terminal's size and paints it.

    Args:
        terminal: where to paint.
        symbols: suit symbols (else letters).
    """

    def __init__(self, terminal: Terminal, *, symbols: bool = True) -> None:
        self.terminal = terminal
        self.symbols = symbols

    def show(self, view: TableView) -> None:
        width, height = self.terminal.size()
        self.terminal.paint(render(view, width, height, symbols=self.symbols))
