"""The core's refusals in a player's words: the front ends' one home for them (an abandon's,
a move's).

The protocol core says why it refuses something in its own terms (a *member*, a *drop* that is
not *final*, *events*), for logs and errors, and gives the reason as a code
(:class:`~p2p_nertz.protocol.abandonment.Refusal`). A person at the table knows players,
moves and leaving, so the terminal and the browser (one controller, the same status line) say
it with these words, short enough for the terminal's one status row (80 columns). A newcomer
pressing ``a`` with two bots read "an abandon needs exactly one other member left (2 are)",
and did not know what a member was, nor why.

>>> from p2p_nertz.protocol.abandonment import Refusal
>>> from p2p_nertz.protocol.local import AbandonAnswer
>>> names = ["you", "bot1", "bot2"].__getitem__
>>> abandon_words(AbandonAnswer("(core)", refusal=Refusal.OTHERS, others=(1, 2)), names)
'2 others are still playing (only when one other is left)'

A move the core refuses now, though the rules allow it, is said the same way: the core's
``"the others' votes put us out for now (our moves from event 41 on are uncounted here)"``
is, at the table:

>>> move_words(MoveAnswer(MoveRefusal.HELD_BACK), names, str)
'you are out for now: the others voted you out; you can come back next round'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from p2p_nertz.protocol.abandonment import Refusal
from p2p_nertz.protocol.local import AbandonAnswer, MoveAnswer, MoveRefusal
from p2p_nertz.rules import Card, Pile
from p2p_nertz.ui.view import pile_name

__all__ = [
    "ABANDON_NOW",
    "BACK_IN",
    "CATCHING_UP",
    "CAUGHT_UP",
    "HELD_BACK",
    "NO_ABANDON",
    "SPECTATOR",
    "STOCKS_FREE",
    "TURNING_OVER",
    "abandon_words",
    "decided_words",
    "in_the_air_words",
    "landed_words",
    "move_words",
    "pass_for_early_words",
    "still_answering_words",
]

NO_ABANDON = "only when one other player is left, and has gone"
"""Why the game cannot be abandoned, when the front end has said nothing else."""


def abandon_words(answer: AbandonAnswer, name: Callable[[int], str]) -> str:
    """Why the core refuses an abandon, said to the player (``name``: a seat's name as the
    table shows it); the core's own words when it gave no code (a test's fake core)."""
    refusal = answer.refusal
    if refusal is None or answer.why is None:
        return answer.why or NO_ABANDON
    if refusal in _ABANDON_WORDS:
        return _ABANDON_WORDS[refusal]
    if refusal is Refusal.HELD_BACK and answer.others:
        # (The vote out waits on the gone one's last moves: the game goes on if it comes back.)
        gone = name(answer.others[0])
        voted = _names(answer.pending, name)
        return f"{voted}'s vote out waits on {gone}, who has gone: wait, or leave (q)"
    if refusal is Refusal.HEARD and answer.partner is not None:
        # (As the key says while it is on offer: Gone.waiting.)
        wait = math.ceil(answer.wait)
        return f"{name(answer.partner)} was heard lately; you can abandon in {wait} s"
    return _others(answer, name)


CATCHING_UP = "still getting your own moves back from the others"
"""Why nothing of the player's is taken yet after a resume: the others have not said what
they hold of the player's own moves (docs/protocol.md §9.6; a round trip, seconds)."""

CAUGHT_UP = "your own moves are back: play on"
"""What the status line says instead of :data:`CATCHING_UP` once that is over (a move or an
abandon refused meanwhile is taken now: the person makes it again)."""

_ABANDON_WORDS = {
    Refusal.OVER: "the game is already over",
    Refusal.OUT: "you are out of the game",
    Refusal.LEFT: "you left the game",
    Refusal.RECOVERING: CATCHING_UP,
    Refusal.ABANDONED: "you abandoned already: the game ends once that is settled",
    Refusal.UNHEARD: "nobody at the table has answered you yet",
}
"""An abandon's refusals that name nothing: the same words whatever the answer."""

SPECTATOR = "a spectator only watches"
"""Why a spectator cannot abandon (nor move)."""


def still_answering_words(name: str) -> str:
    """Why the one other player left cannot be abandoned yet: it still answers (it is not
    suspected, and the core's wait is not over)."""
    return f"{name} is still answering (an abandon needs them gone)"


TURNING_OVER = "everyone was stuck and the stocks turn over: wait until they have"
"""Why no move of the player's waste or stock is taken while an everyone-stuck rotation is
not final (the keys say it before the core is asked, the core's refusal after)."""

HELD_BACK = "you are out for now: the others voted you out; you can come back next round"
"""Why no move of the player's is taken while the others' votes put them out."""

_MOVE_WORDS = {
    MoveRefusal.NOT_IN_PLAY: "the round is not being played now: wait for the deal",
    MoveRefusal.NOT_DEALT: "your cards are not dealt yet: wait for the deal",
    MoveRefusal.HELD_BACK: HELD_BACK,
    MoveRefusal.ROTATING: TURNING_OVER,
    MoveRefusal.RECOVERING: CATCHING_UP,
    MoveRefusal.LEFT: "you left the game",
}
"""A move's refusals that name nothing: the same words whatever the move."""


def move_words(answer: MoveAnswer, name: Callable[[int], str], card: Callable[[Card], str]) -> str:
    """Why the core refuses a move now, said to the player (``name``: a seat's name as the
    table shows it; ``card``: a card as it shows it)."""
    refusal = answer.refusal
    if refusal in _MOVE_WORDS:
        return _MOVE_WORDS[refusal]
    if refusal is MoveRefusal.IN_THE_AIR and answer.pile is not None:
        return in_the_air_words(answer.pile)
    if refusal is MoveRefusal.SLIDE and answer.pile is not None:
        pile = pile_name(answer.pile)
        return f"{pile} is empty only if its claim wins: wait for it, then slide under"
    if refusal is MoveRefusal.DROP_PENDING and answer.seats:
        has = "has" if len(answer.seats) == 1 else "have"
        return f"wait: the table is deciding whether {_names(answer.seats, name)} {has} gone"
    if refusal is MoveRefusal.LOST and answer.card is not None:
        who = name(answer.seats[0]) if answer.seats else "another player"
        return f"{card(answer.card)} no longer fits: {who} got there first"
    return _MOVE_FALLBACK[refusal]


def pass_for_early_words(name: str, wait: float) -> str:
    """Why a pass on ``name``'s behalf (``P@S``, typed) is refused ``wait`` seconds before
    it may be made: the rules engine alone would take it once everyone else has passed, but
    a player is passed for only after a minute without a card (RULES.md: a player who plays
    nothing; :meth:`~p2p_nertz.protocol.behalf.PassWatch.wait` counts it). The table has no
    clock: the core says how long is left.

    >>> pass_for_early_words("Bea", 47.2)
    'not yet: a pass for Bea counts after a minute without a card; in 48 s (the game makes it)'
    """
    return (
        f"not yet: a pass for {name} counts after a minute without a card; "
        f"in {math.ceil(wait)} s (the game makes it)"
    )


def in_the_air_words(pile: Pile) -> str:
    """Why a move of ``pile`` waits: a card from it is in the air (the keys say it before
    the core is asked, the core's refusal after)."""
    return f"a card from the {pile_name(pile)} is in the air: wait for its claim"


_MOVE_FALLBACK = {
    MoveRefusal.IN_THE_AIR: "a card is in the air: wait for its claim",
    MoveRefusal.SLIDE: "a work pile is empty only if its claim wins: wait for it",
    MoveRefusal.DROP_PENDING: "wait: the table is deciding whether a player has gone",
    MoveRefusal.LOST: "the card no longer fits: another player got there first",
}
"""The words of the refusals that name something, when the answer does not say what."""


def _others(answer: AbandonAnswer, name: Callable[[int], str]) -> str:
    """Not exactly one other player left: how many are, and who is being voted out."""
    left = len(answer.others)
    if left == 0:
        return "you are the only player left: nobody to abandon"
    playing = "1 other is" if left == 1 else f"{left} others are"
    if answer.pending:  # (one status row: the rule is implied, the wait is what to know)
        return f"{playing} still playing (wait: {_names(answer.pending, name)} being voted out)"
    return f"{playing} still playing (only when one other is left)"


def _names(seats: Sequence[int], name: Callable[[int], str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    said = [name(seat) for seat in seats]
    return said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"


# -- a wait over: what the status line says once a refusal's wait has ended (ui/waits.py) ------

STOCKS_FREE = "your stock and waste are free again: play on"
"""Said over a move's refusal while the stocks turn over (everyone stuck) once that is final
(or undone: an event held late came before the last pass; the messages say which)."""

BACK_IN = "the others' votes are withdrawn: you can play again"
"""Said over :data:`HELD_BACK` once the others' votes no longer put the player out in the
round (withdrawn; the next round's deal says its own words)."""

ABANDON_NOW = "you can abandon now (a)"
"""Said over an abandon's refusal that waited (on a silence, a vote) once the core takes one."""


def landed_words(pile: Pile | None) -> str:
    """Said over a refusal that waited on a card in the air (``pile``: where it came from,
    or the empty work pile a slide-under needs) once its claim is decided, won or lost.

    >>> landed_words(Pile.WASTE)
    'the card from the waste is no longer in the air: play on'
    """
    if pile is None:
        return "your cards are no longer in the air: play on"
    return f"the card from the {pile_name(pile)} is no longer in the air: play on"


def decided_words(seats: Sequence[int], name: Callable[[int], str]) -> str:
    """Said over a refusal that waited on the table deciding whether ``seats`` have gone
    (:data:`MoveRefusal.DROP_PENDING`) once it has.

    >>> decided_words((1,), ["you", "bot1"].__getitem__)
    'the table has decided whether bot1 has gone: play on'
    """
    if not seats:
        return "the table has decided whether a player has gone: play on"
    has = "has" if len(seats) == 1 else "have"
    return f"the table has decided whether {_names(seats, name)} {has} gone: play on"
