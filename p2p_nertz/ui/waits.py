"""Refusals that say to wait, and what ends each wait: the table says when it is over.

A refusal's words stay on the status line until the next key (:mod:`~p2p_nertz.ui.keys`). Most
say what is wrong for good ("the card no longer fits"), but some say to wait for something
that ends by itself: a card in the air until its claim is decided, the stocks turning over
until the rotation is final, a vote on a player's drop, the player's own moves coming back
after a resume, the silence an abandon needs. Once that is over the words are no longer true,
and a person (or a test) who read them waits on: session 32's CI read "still getting your own
moves back" for 60 s after they were back. So the status line carries the refusal it says
as a value (:class:`~p2p_nertz.ui.keys.Status`: the core's, or the keys' said before the core
is asked), :func:`status_wait` reads from it what ends its wait (a :data:`Wait`), never from
its words, and once that has ended the table says so instead, with what to do now
(:data:`~p2p_nertz.ui.refusals.CAUGHT_UP`, ``landed_words``, ...): the
:class:`~p2p_nertz.ui.controller.TableController` asks on each view, for the terminal and the
browser alike. A line is set whole, so words that replace a refusal carry none (or their
own): a status replaced by an unrelated one never keeps the old refusal's wait.

Refusals that end with the deal (not dealt yet, the round not in play) are not here: the
deal's own words replace them (:meth:`TableController._deal_seen`), as the game's end does an
abandon already made (``the game is over``).
"""

from __future__ import annotations

from collections.abc import Callable

from p2p_nertz.protocol.abandonment import Refusal
from p2p_nertz.protocol.local import AbandonAnswer, MoveAnswer, MoveRefusal, own_held_back
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.rules import Pile
from p2p_nertz.ui.keys import Status
from p2p_nertz.ui.refusals import (
    ABANDON_NOW,
    BACK_IN,
    CAUGHT_UP,
    STOCKS_FREE,
    abandon_words,
    decided_words,
    landed_words,
)

__all__ = ["Wait", "status_wait"]

Name = Callable[[int], str]

Wait = Callable[[Peer, float], str | None]
"""A refusal's wait (module docstring): given the peer and the time, the status line's words
once the wait is over; ``None`` while it lasts."""


def status_wait(line: Status, seat: int, name: Name) -> Wait | None:
    """The wait the refusal a status line says stands for, if it says one that ends by itself
    (``seat``: the player's; ``name``: a seat's name as the table shows it)."""
    refusal = line.refusal
    if isinstance(refusal, MoveAnswer):
        return _move_wait(refusal, seat, name)
    if isinstance(refusal, AbandonAnswer):
        return _abandon_wait(refusal, name)
    return None


def _move_wait(answer: MoveAnswer, seat: int, name: Name) -> Wait | None:
    """The wait a move's refusal stands for, if it ends by itself."""
    refusal = answer.refusal
    if refusal is MoveRefusal.RECOVERING:
        return lambda peer, _: None if peer.player.catching_up() else CAUGHT_UP
    if refusal is MoveRefusal.ROTATING:  # (the waste, the stock's: frozen until it is final)
        return _free(Pile.WASTE, STOCKS_FREE)
    if refusal in (MoveRefusal.IN_THE_AIR, MoveRefusal.SLIDE):
        return _free(answer.pile, landed_words(answer.pile))
    if refusal is MoveRefusal.DROP_PENDING:
        decided = decided_words(answer.seats, name)
        return lambda peer, _: None if peer.player.drop_pending() else decided
    if refusal is MoveRefusal.HELD_BACK:

        def votes_withdrawn(peer: Peer, _: float) -> str | None:
            table = peer.view  # (dropped in the end: out for the round, as the words say)
            if table is None or not table.active[seat]:
                return None
            back = own_held_back(peer.tentative, peer.final, seat)
            return None if back is not None else BACK_IN

        return votes_withdrawn
    return None


def _free(pile: Pile | None, then: str) -> Wait:
    """The words ``then`` once ``pile`` is no longer frozen (a claim in the air, a rotation:
    :meth:`~p2p_nertz.protocol.player.LocalPlayer.frozen_piles`; ``None``: no pile is)."""

    def free(peer: Peer, _: float) -> str | None:
        frozen = peer.frozen_piles()
        return None if (pile in frozen if pile is not None else frozen) else then

    return free


_ABANDON_WAITS = frozenset({Refusal.HEARD, Refusal.HELD_BACK, Refusal.OTHERS})
"""An abandon's refusals that wait on the others (a silence long enough, a vote on a drop)."""


def _abandon_wait(answer: AbandonAnswer, name: Name) -> Wait | None:
    """The wait an abandon's refusal (the core's, or the key's before it asked) stands for,
    if it ends by itself: once the core would take an abandon the table says so
    (:data:`ABANDON_NOW`), or why not now if the refusal changed (a vote decided)."""
    refusal = answer.refusal
    if refusal in (Refusal.RECOVERING, Refusal.UNHEARD):  # (the others' word: a round trip)
        return lambda peer, _: None if peer.player.catching_up() else CAUGHT_UP
    if refusal not in _ABANDON_WAITS or (refusal is Refusal.OTHERS and not answer.pending):
        return None  # ("2 others are still playing": no wait, only a rule)
    standing = _standing(answer)

    def settled(peer: Peer, now: float) -> str | None:
        answer = peer.abandon_answer(now)
        if answer.why is None:
            return ABANDON_NOW
        if _standing(answer) == standing:
            return None
        return f"cannot abandon: {abandon_words(answer, name)}"

    return settled


def _standing(answer: AbandonAnswer) -> tuple[object, ...]:
    """What an abandon's refusal is about, without the seconds that pass while it stands."""
    return (answer.refusal, answer.partner, answer.others, answer.pending)
