"""What a player's display name may be: the one rule the spec, the lobby and the CLI use.

A name is 1 to :data:`MAX_NAME` characters, every one printable in Python's sense
(:meth:`str.isprintable`: no control characters, no format characters such as the
bidirectional overrides U+202A–U+202E and U+2066–U+2069 or zero-width ones, no separators but
the ASCII space), and it neither starts nor ends with a space, so a name is never blank nor
padded with spaces nobody sees (docs/protocol.md §3.2). Printable is not yet visible: a few
letters and symbols are blank by design (the Hangul fillers, the blank Braille pattern, the
combining grapheme joiner: :data:`BLANKS`), and a combining mark draws on the character before
it, so a name may hold none of the blanks, may not start with a mark (it would sit on whatever
is printed before the name, or show nothing), and may not pile more than :data:`MAX_MARKS`
marks on one character (a "zalgo" name spills over the lines above and below it). Without
this, ``"Ann\u3164"`` read as a second Ann and ``"\u3164"`` as no name at all (session 30).

>>> name_fault("Ann") is None and name_fault("Ann Lee") is None
True
>>> name_fault("  Ann  ")
'a space at either end'
>>> name_fault("\\u202eAnn")
'a character that is not printable'

Two good names may still look alike: ``"\\u0410nn"`` (a Cyrillic А) beside ``"Ann"``.
:func:`skeleton` is what a name looks like (Unicode's UTS #39 "skeleton", for the letters that
pass for Latin ones), so the table can number the second of two names that look the same
(:func:`p2p_nertz.ui.view.distinct_names`) instead of refusing either (docs/protocol.md §3.2).
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["BLANKS", "LOOK_ALIKES", "MAX_MARKS", "MAX_NAME", "NAME_RULE", "name_fault", "skeleton"]

MAX_NAME: Final = 32
"""The most characters a name has (a UTF-8 name is then at most 128 bytes)."""

NAME_RULE: Final = (
    f"a name is 1 to {MAX_NAME} printable, visible characters, with no space at either end"
)
"""The rule in a person's words, for the error every front door gives a bad name."""


MAX_MARKS: Final = 3
"""The most combining marks in a row (on one character): a letter with a vowel and a tone
(Vietnamese, Thai) or with a dot, a vowel and a dagesh (Hebrew) is written so."""

BLANKS: Final = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")
"""Printable characters that show nothing: the combining grapheme joiner, the Hangul
fillers, the Khmer inherent vowels and the blank Braille pattern."""


def name_fault(value: object) -> str | None:
    """What is wrong with ``value`` as a player's name, or ``None`` for a good one.

    >>> [name_fault(n) for n in ("", " ", "n" * 33, "a\\tb", 7)]  # doctest: +NORMALIZE_WHITESPACE
    ['empty', 'a space at either end', 'longer than 32 characters',
     'a character that is not printable', 'not text']
    >>> [name_fault(n) for n in ("Ann\\u3164", "\\u0301Ann", "Zo" + "\\u0308" * 4)]
    ... # doctest: +NORMALIZE_WHITESPACE
    ['a character that shows nothing', 'a combining mark with no character under it',
     'more than 3 combining marks on one character']
    """
    if not isinstance(value, str):
        return "not text"
    if not value:
        return "empty"
    if len(value) > MAX_NAME:
        return f"longer than {MAX_NAME} characters"
    if not value.isprintable():
        return "a character that is not printable"
    if value[0] == " " or value[-1] == " ":
        return "a space at either end"
    if not BLANKS.isdisjoint(value):
        return "a character that shows nothing"
    if _is_mark(value[0]):
        return "a combining mark with no character under it"
    marks = 0
    for char in value:
        marks = marks + 1 if _is_mark(char) else 0
        if marks > MAX_MARKS:
            return f"more than {MAX_MARKS} combining marks on one character"
    return None


def _is_mark(char: str) -> bool:
    """Whether ``char`` is a combining mark (Unicode's categories Mn, Mc, Me)."""
    return unicodedata.category(char).startswith("M")


LOOK_ALIKES: Final = {
    # Cyrillic letters drawn as Latin ones (UTS #39 confusables.txt: the same skeleton).
    **dict(zip("АВСЕНІЈКМОРЅТХУҮԚԜӀ", "ABCEHIJKMOPSTXYYQWl", strict=True)),
    **dict(zip("асԁеһіјӏорԛѕԝхуүɡ", "acdehijlopqswxyyg", strict=True)),
    # Greek capitals and small letters drawn as Latin ones.
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHlKMNOPTYX", strict=True)),
    **dict(zip("αιονρ", "aiovp", strict=True)),
    # Latin among itself: a capital I, a one and a bar are an l; a zero is an O; a dotless i.
    **dict(zip("I1|0ı", "llOOi", strict=True)),
}
"""What each look-alike character is read as: the letters of other scripts (and the digits
and capitals of Latin's own) that UTS #39 gives the same skeleton as a Latin letter. A small
table of our own (the package that ships Unicode's whole table reads a data file when it is
imported, which this pure layer may not; names confused through other scripts are rare at a
card table and still told apart by their seat and colour)."""


def skeleton(name: str) -> str:
    """What ``name`` looks like: two names with one skeleton are read as one by a person.

    The name's compatibility form (NFKC: a full-width ``Ａ`` is an ``A``), each look-alike
    read as the letter it passes for (:data:`LOOK_ALIKES`, and ``rn`` as ``m``), in one case
    (a person reads ``ANN`` as ``Ann``), its marks composed (NFC).

    >>> skeleton("\\u0410nn") == skeleton("Ann") == skeleton("ＡＮＮ") == skeleton("ann")
    True
    >>> skeleton("Ivy") == skeleton("lvy"), skeleton("Zoë") == skeleton("Zoe")
    (True, False)
    """
    text = unicodedata.normalize("NFKC", name)
    text = "".join(LOOK_ALIKES.get(char, char) for char in text).replace("rn", "m")
    return unicodedata.normalize("NFC", text.casefold())
