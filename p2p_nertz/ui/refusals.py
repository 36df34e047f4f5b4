"""The core's refusals in a player's words: the front ends' one home for them.

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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from p2p_nertz.protocol.abandonment import Refusal
from p2p_nertz.protocol.local import AbandonAnswer

__all__ = ["NO_ABANDON", "abandon_words"]

NO_ABANDON = "only when one other player is left, and has gone"
"""Why the game cannot be abandoned, when the front end has said nothing else."""


def abandon_words(answer: AbandonAnswer, name: Callable[[int], str]) -> str:
    """Why the core refuses an abandon, said to the player (``name``: a seat's name as the
    table shows it); the core's own words when it gave no code (a test's fake core)."""
    refusal = answer.refusal
    if refusal is None or answer.why is None:
        return answer.why or NO_ABANDON
    if refusal is Refusal.OVER:
        return "the game is already over"
    if refusal is Refusal.OUT:
        return "you are out of the game"
    if refusal is Refusal.LEFT:
        return "you left the game"
    if refusal is Refusal.RECOVERING:
        return "still getting your own moves back from the others"
    if refusal is Refusal.ABANDONED:
        return "you abandoned already: the game ends once that is settled"
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
