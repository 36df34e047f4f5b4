"""The rule book as the package ships it (``rules.md``, package data beside the rules engine;
docs/rules.md points there): ``nertz rules`` prints it, the page's server serves it."""

from __future__ import annotations

import re
import textwrap
from importlib import resources

from p2p_nertz.errors import NertzError

__all__ = ["RULE_BOOK", "UnknownTopic", "reflow", "rule_book", "rule_topic", "rule_topics"]

RULE_BOOK = ("p2p_nertz.rules", "rules.md")
"""Where the rule book ships: its package and its file name."""


def rule_book() -> str:
    """The rule book, as the installed package holds it."""
    package, name = RULE_BOOK
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


class UnknownTopic(NertzError):
    """No heading of the rule book holds the words asked for (:func:`rule_topic`)."""


def _sections(book: str) -> list[tuple[int, str, int, int]]:
    """Each heading below the title: its level (2 or 3), its words, and where its section
    (the heading and all under it, to the next heading of the same or a higher level) starts
    and ends in ``book``."""
    heads = [
        (len(m.group(1)), m.group(2).strip(), m.start())
        for m in re.finditer(r"^(#{2,3}) (.+)$", book, flags=re.MULTILINE)
    ]
    out = []
    for i, (level, title, start) in enumerate(heads):
        end = next((s for lv, _, s in heads[i + 1 :] if lv <= level), len(book))
        out.append((level, title, start, end))
    return out


def _topic_name(title: str) -> str:
    """A heading as a topic: lower case, without its sources' marks (``[001]``)."""
    return re.sub(r"\s*\[[\d, ]+\]", "", title).lower()


def rule_topics(book: str | None = None) -> list[str]:
    """The topics of the rule book: its headings (below the title), as :func:`rule_topic`
    finds them.

    >>> rule_topics()[:3]
    ['in one minute', 'the deal', 'playing']
    """
    return [
        _topic_name(title) for _, title, _, _ in _sections(rule_book() if book is None else book)
    ]


def rule_topic(words: str, book: str | None = None) -> str:
    """The sections of the rule book whose heading holds every one of ``words`` (case does
    not matter): ``"lake"`` is "The lake", ``"nerts"`` "The Nerts pile" and "Calling Nerts".
    A section within one already chosen is not repeated.

    >>> rule_topic("scoring").splitlines()[0]
    '## Scoring a round'

    Raises:
        UnknownTopic: no heading holds them all; its message lists the topics.
    """
    book = rule_book() if book is None else book
    wanted = words.lower().split()
    chosen: list[tuple[int, int]] = []
    for _, title, start, end in _sections(book):
        name = _topic_name(title)
        if wanted and all(w in name for w in wanted) and not any(s <= start < e for s, e in chosen):
            chosen.append((start, end))
    if not chosen:
        topics = "; ".join(rule_topics(book))
        raise UnknownTopic(
            f"the rule book has no topic {words!r}; its topics: {topics} (a word of one is "
            "enough: nertz rules lake)"
        )
    return "\n".join(book[s:e].rstrip("\n") + "\n" for s, e in chosen)


_ITEM = re.compile(r"(\s*)(- |\d+\. )")
"""A list item's first line: its indent and its mark."""


def reflow(book: str, width: int) -> str:
    """``book`` (the rule book, or some of its sections) with its paragraphs and list items
    wrapped again to ``width`` columns: the book is written ~96 wide, and an 80-column
    terminal cut a word in two on most lines of ``nertz rules``. Headings stay as they are;
    a table row too wide loses its cells' padding, and wraps under itself if it must. A
    book that fits is returned unchanged.

    >>> reflow("- a book\\n  of five words", 12).splitlines()
    ['- a book of', '  five words']
    """
    if all(len(line) <= width for line in book.splitlines()):
        return book
    out: list[str] = []
    block: list[str] = []  # a paragraph or a list item: its lines
    indent = ""  # the first line's prefix (a list item's mark)

    def flush() -> None:
        if block:
            words = " ".join(line.strip() for line in block)[len(indent.strip()) :].strip()
            out.extend(
                textwrap.wrap(
                    words,
                    max(width, len(indent) + 10),
                    initial_indent=indent,
                    subsequent_indent=" " * len(indent),
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
            block.clear()

    for line in book.split("\n"):
        item = _ITEM.match(line)
        if line.startswith("|") and len(line) > width:  # a row: no padding, words whole
            flush()
            row = re.sub(r"-{3,}", "---", re.sub(r" +\|", " |", line))
            out.extend(textwrap.wrap(row, width, subsequent_indent="  ", break_long_words=False))
        elif not line.strip() or line.startswith(("#", "|")):
            flush()
            out.append(line)
        elif item is not None:
            flush()
            indent = item.group(1) + item.group(2)
            block.append(line)
        else:
            if not block:
                indent = ""
            block.append(line)
    flush()
    return "\n".join(out)
