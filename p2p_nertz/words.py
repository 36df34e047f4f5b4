"""Words for people shared by every command and screen: counts with their nouns.

A module of its own, importing nothing: ``nertz demo`` and the node's last lines say "after
1 round", "2 winners" without importing the screens (``p2p_nertz.ui.view`` brings the peer
core: 66 modules, a third of a demo's start). The screens re-export it.
"""

from __future__ import annotations

__all__ = ["counted", "plural"]


def counted(count: int, noun: str) -> str:
    """``count`` ``noun``, the noun plural but for one: words for people, not "13 card(s)"
    (a newcomer read "after 0 round(s)"). Nouns of this program only: an ``s`` makes them
    plural.

    >>> counted(1, "card"), counted(13, "card"), counted(0, "round")
    ('1 card', '13 cards', '0 rounds')
    """
    return f"{count} {plural(count, noun)}"


def plural(count: int, noun: str) -> str:
    """``noun`` as it goes with ``count`` (:func:`counted` without the number: "winners: Ann,
    Bob", "winner: Ann").

    >>> plural(1, "winner"), plural(2, "winner")
    ('winner', 'winners')
    """
    return noun if count == 1 else f"{noun}s"
