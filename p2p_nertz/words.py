"""Words for people shared by every command and screen: counts with their nouns.

A module of its own, importing nothing: ``nertz demo`` and the node's last lines say "after
1 round", "2 winners" without importing the screens (``p2p_nertz.ui.view`` brings the peer
core: 66 modules, a third of a demo's start). The screens re-export it.
"""

from __future__ import annotations

__all__ = ["counted", "plural", "seat_named"]


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


def seat_named(stem: str, seat: int) -> str:
    """The name a command gives the player it seats at ``seat`` (``nertz demo``'s ``P2``,
    ``nertz play --bots``'s ``bot2``): the stem and the seat's number as every screen shows
    it, from 0 (issue 15: the notation's ``W>L@2H`` is seat 2's hearts, the players' rows and
    the audit's roster count so). The one rule for what a person reads where a seat and a
    name both show: a number in a name is its seat. Named from 1, ``P1`` was seat 0: the
    audit read "0. P1" and a replay "P1 claim W>L@0H", one player under two numbers; named
    in the order of their keys, not their seats, the bots sat "0 bot2 / 1 you / 2 bot1".
    Logs and the wire keep seats as they are; only the names chosen here follow them
    (a person's own name, a lobby's, is theirs).

    >>> [seat_named("P", seat) for seat in range(3)]
    ['P0', 'P1', 'P2']
    """
    return f"{stem}{seat}"
