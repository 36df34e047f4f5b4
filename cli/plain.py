"""Text for a terminal that is not UTF-8 (``LANG=C``, ``en_US.ISO-8859-1``,
``PYTHONIOENCODING=ascii``): what it cannot show is written in plain letters, not dropped,
not a traceback (``UnicodeEncodeError`` at the first dash of ``nertz rules``).

One table for the printed lines (``nertz`` sets it on stdout and stderr, cli/main.py) and the
curses screens (cli/terminal.py).

>>> plain("A♥ — 10♠ · 80×24", "ascii")
'AH -- 10S . 80x24'
"""

from __future__ import annotations

import codecs
import unicodedata

__all__ = ["PLAIN_ERRORS", "is_unicode", "plain"]

#: What a character the terminal cannot show is written as instead: the rule book's dashes,
#: the suits, the arrows. Any other is its letters without their accents (``é``: ``e``), or
#: ``?``.
_PLAIN = {
    "—": "--", "–": "-", "−": "-", "…": "...", "·": ".", "×": "x", "→": "->", "←": "<-",
    "♥": "H", "♦": "D", "♣": "C", "♠": "S", "“": '"', "”": '"', "‘": "'", "’": "'",
    "±": "+/-", "≥": ">=", "≤": "<=", "•": "*", "✓": "ok", "✗": "x", "»": ">>", "«": "<<",
}  # fmt: skip

PLAIN_ERRORS = "nertz-plain"
"""The name of the encoding error handler that writes :data:`_PLAIN`'s words."""


def _plain(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    said = []
    for char in error.object[error.start : error.end]:
        bare = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
        said.append(_PLAIN.get(char) or bare or "?")
    return "".join(said), error.end


codecs.register_error(PLAIN_ERRORS, _plain)


def is_unicode(encoding: str | None) -> bool:
    """Whether ``encoding`` (a codec's or the C library's name for it) is one of Unicode's."""
    return (encoding or "").lower().replace("-", "").replace("_", "").startswith("utf")


def plain(text: str, encoding: str) -> str:
    """``text`` as a terminal of ``encoding`` can show it."""
    return text.encode(encoding, PLAIN_ERRORS).decode(encoding)
