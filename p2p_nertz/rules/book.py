"""The rule book as the package ships it (``rules.md``, package data beside the rules engine;
docs/rules.md points there): ``nertz rules`` prints it, the page's server serves it."""

from __future__ import annotations

from importlib import resources

__all__ = ["RULE_BOOK", "rule_book"]

RULE_BOOK = ("p2p_nertz.rules", "rules.md")
"""Where the rule book ships: its package and its file name."""


def rule_book() -> str:
    """The rule book, as the installed package holds it."""
    package, name = RULE_BOOK
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")
