"""A terminal screen as a value: rows of styled text spans, with no terminal behind it.

The renderer (:mod:`p2p_nertz.ui.render`) produces a :class:`Screen`; the curses front end
(``cli/terminal.py``) paints it, mapping each :class:`Style` to a colour pair or, in monochrome, to
bold / reverse / underline; tests read it as plain text with :meth:`Screen.text`.

>>> row = Row(20)
>>> row.add("5", Style.PLAIN).add("♥", Style.RED).pad_to(4).add("x", Style.BOLD)
Row(width=20, text='5♥  x')
>>> Screen(20, 2, (row.spans(),)).text().splitlines()[0]
'5♥  x'
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Row", "Screen", "Span", "Style"]


class Style(enum.Enum):
    """What a span of text is, for the front end to colour (or, in monochrome, to mark)."""

    PLAIN = "plain"
    DIM = "dim"  #: secondary text: labels, counts, rules
    BOLD = "bold"  #: headings, the player's own name
    RED = "red"  #: a red card (hearts, diamonds)
    BLACK = "black"  #: a black card (clubs, spades)
    KEY = "key"  #: a key to press
    SELECTED = "selected"  #: the source pile picked by a key
    PENDING = "pending"  #: a claim in the air (not final yet)
    GOOD = "good"  #: a link that is fine, points won
    WARN = "warn"  #: a suspected link, an announcement
    BAD = "bad"  #: a dropped player, a refusal, points lost


@dataclass(frozen=True, slots=True)
class Span:
    """A run of text in one style."""

    text: str
    style: Style = Style.PLAIN


@dataclass(frozen=True, slots=True)
class Screen:
    """A rendered screen: ``height`` rows of at most ``width`` columns each.

    Attributes:
        width: columns.
        height: rows.
        rows: each row's spans, left to right (missing rows are blank).
    """

    width: int
    height: int
    rows: tuple[tuple[Span, ...], ...]

    def line(self, index: int) -> str:
        """Row ``index`` as plain text, without trailing blanks."""
        if not 0 <= index < len(self.rows):
            return ""
        return "".join(s.text for s in self.rows[index]).rstrip()

    def text(self) -> str:
        """The whole screen as plain text, one line per row."""
        return "\n".join(self.line(i) for i in range(self.height))

    def find(self, fragment: str) -> int | None:
        """The first row containing ``fragment``, or ``None``."""
        for i in range(self.height):
            if fragment in self.line(i):
                return i
        return None

    def styles_of(self, fragment: str) -> set[Style]:
        """The styles of every span that contains ``fragment`` (for tests of marking)."""
        return {s.style for row in self.rows for s in row if fragment in s.text}


class Row:
    """A row being built: spans added left to right, clipped to ``width`` columns.

    Every character counts one column (card text uses single-width suit symbols).
    """

    __slots__ = ("_length", "_spans", "width")

    def __init__(self, width: int) -> None:
        self.width = width
        self._spans: list[Span] = []
        self._length = 0

    def __len__(self) -> int:
        return self._length

    def add(self, text: str, style: Style = Style.PLAIN) -> Row:
        """Append ``text`` (clipped at the right edge); returns the row for chaining."""
        room = self.width - self._length
        if room <= 0 or not text:
            return self
        text = text[:room]
        self._spans.append(Span(text, style))
        self._length += len(text)
        return self

    def pad_to(self, column: int, fill: str = " ", style: Style = Style.PLAIN) -> Row:
        """Fill with ``fill`` up to ``column`` (at least one blank if already there)."""
        if self._length < column:
            self.add(fill * (column - self._length), style)
        return self

    def spans(self) -> tuple[Span, ...]:
        """The finished row."""
        return tuple(self._spans)

    def __repr__(self) -> str:
        return f"Row(width={self.width}, text={''.join(s.text for s in self._spans)!r})"
