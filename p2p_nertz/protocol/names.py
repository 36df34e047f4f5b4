"""What a player's display name may be: the one rule the spec, the lobby and the CLI use.

A name is 1 to :data:`MAX_NAME` characters, every one printable in Python's sense
(:meth:`str.isprintable`: no control characters, no format characters such as the
bidirectional overrides U+202A–U+202E and U+2066–U+2069 or zero-width ones, no separators but
the ASCII space), and it neither starts nor ends with a space, so a name is never blank nor
padded with spaces nobody sees (docs/protocol.md §3.2).

>>> name_fault("Ann") is None and name_fault("Ann Lee") is None
True
>>> name_fault("  Ann  ")
'a space at either end'
>>> name_fault("\\u202eAnn")
'a character that is not printable'
"""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_NAME", "NAME_RULE", "name_fault"]

MAX_NAME: Final = 32
"""The most characters a name has (a UTF-8 name is then at most 128 bytes)."""

NAME_RULE: Final = f"a name is 1 to {MAX_NAME} printable characters, with no space at either end"
"""The rule in a person's words, for the error every front door gives a bad name."""


def name_fault(value: object) -> str | None:
    """What is wrong with ``value`` as a player's name, or ``None`` for a good one.

    >>> [name_fault(n) for n in ("", " ", "n" * 33, "a\\tb", 7)]  # doctest: +NORMALIZE_WHITESPACE
    ['empty', 'a space at either end', 'longer than 32 characters',
     'a character that is not printable', 'not text']
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
    return None
