"""When the table is gone: a member that hears nobody still in the game stops waiting
(docs/protocol.md §9.9).

Theory of operation
-------------------
A member asleep (``SIGSTOP``, a laptop lid) past the others' ``drop_after`` is voted out; the
others finish the game and go home. When it wakes nobody is left: nothing it can send will
ever be answered, and without a rule it waits for ever. The others' silence is all it can see:
a member still in that hears us answers every message with its beats (§7.2), so silence also
says that we cannot be heard. Silence alone does not tell an empty table from a partition
with us alone on our side, so the answer is never an event: the member signs nothing, ends
nothing for the others, and only **stops waiting**, saying why. Its log is as it was, a valid
log; run again on it (``nertz resume``), it takes the game up where it stopped (and rejoins,
§9.8, if the others are still playing).

:func:`table_gone` is the rule, the one answer the node, the table and the simulator read
(:meth:`Peer.table_gone <p2p_nertz.protocol.peer.Peer.table_gone>`): the game is not over in
our final fold, and every other member still in by it (we may be out by the held votes) has
been silent for the bound while we listened; never where we are the only member still in
(:func:`alone_in_game`: nobody to wait for, the game ours to finish). The bound is
``gone_after``, three times ``drop_after``: the wait the reference node already gives a member
gone to come back before it stops on a provisional result (§9.3), longer than any silence after
which a vote or an abandon acts (so an abandon, which ends a game of two properly, always comes
first), and than any partition the protocol heals without a drop. Where every event of the game
is here (the tentative fold is over) only the others' acks are missing, and ``drop_after`` of
silence is enough, as the node already judged before this rule.

*While we listened*: silence is counted from when we were last heard from a member, or from
when we began to run without a break (:class:`~p2p_nertz.protocol.listening.Listening`,
which the silence votes read too), whichever is later. A process
stopped for a minute has heard nobody for a minute when it wakes, before it reads what waited
in its sockets; a gap in its own inputs (the runtime calls the peer at least every
``beat_interval``) longer than ``suspect_after`` starts the count again.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from p2p_nertz.protocol.effects import Note
from p2p_nertz.protocol.listening import Listening
from p2p_nertz.protocol.local import AbandonAnswer
from p2p_nertz.protocol.state import GameState, Phase

__all__ = [
    "GONE_AFTER_DROPS",
    "GoneReason",
    "Listening",
    "TableGone",
    "heard_lately",
    "table_gone",
]

GONE_AFTER_DROPS = 3
"""``gone_after`` in units of ``drop_after`` (:attr:`PeerConfig.gone_after
<p2p_nertz.protocol.peer.PeerConfig.gone_after>`)."""


class GoneReason(enum.Enum):
    """Why the table is gone for us (:class:`TableGone`)."""

    #: We are out by our own fold (voted out while away), and no member still in answers,
    #: our rejoin request included: the game went on without us.
    DROPPED = "dropped"
    #: We are still in, and no other member still in has been heard: they left, or we cannot
    #: reach them.
    SILENT = "silent"
    #: No member has told this process what it holds of our feed since it started, so it
    #: signed nothing past its join (``Author.unheard``): our key may play elsewhere, or
    #: nobody else came (docs/protocol.md §9.6, *a second machine that hears nobody*).
    UNHEARD = "unheard"


@dataclass(frozen=True, slots=True)
class TableGone:
    """The table is gone: the member stops waiting (:func:`table_gone`).

    Attributes:
        reason: why, as a code.
        silent: seconds we have listened and heard none of the members still in.
        bound: the silence the rule waited for (``gone_after``, or ``drop_after`` once the
            game's end is on our table).
        seats: the other members still in by our fold, whom we waited for (from 0).
        ended: every event of the game is here (our tentative fold is over): only the
            others' acks are missing.
        why: the answer in words, for a person (names and seats as the table shows them).
    """

    reason: GoneReason
    silent: float
    bound: float
    seats: tuple[int, ...]
    ended: bool
    why: str

    @property
    def notes(self) -> tuple[Note, ...]:
        """What the log says last as the member stops (the runtime and the simulator write
        these): a ``recovering`` note where it stops :attr:`GoneReason.UNHEARD`, knowing
        nothing of our feed past what its log holds, which our key may have signed on
        elsewhere (a second machine, a log begun again or restored from an older copy): a
        resume learns the feed from the others first, and the audit reads the log's end as
        lost, a notice, not as our own events unlogged (docs/protocol.md §9.6). Nothing else:
        a member that heard a word on our feed knows its log holds what we signed."""
        return (Note.recovering(),) if self.reason is GoneReason.UNHEARD else ()


def heard_lately(
    final: GameState,
    heard: Sequence[float],
    listening: Listening,
    now: float,
    *,
    seat: int,
    drop_after: float,
) -> bool:
    """Whether the table is surely not gone for ``seat`` at ``now`` (:func:`table_gone`'s
    first answer, the one the runtime gets after nearly every input): the game is over here,
    we have not listened for ``drop_after``, or a member still in by the final fold was heard
    within it. ``False``: :func:`table_gone` looks further. (``now`` less the latest time
    heard is the least of ``now`` less each, floats too: one member heard within
    ``drop_after`` answers as the latest would.)"""
    if final.phase is Phase.OVER or now - listening.since_at(now) < drop_after:
        return True
    dropped = final.dropped
    return any(
        now - at < drop_after for q, at in enumerate(heard) if q != seat and q not in dropped
    )


def table_gone(
    final: GameState,
    tentative: Callable[[], GameState],
    heard: Sequence[float],
    listening: Listening,
    now: float,
    *,
    seat: int,
    drop_after: float,
    gone_after: float,
    names: Sequence[str],
    abandon: Callable[[], AbandonAnswer],
    unheard: bool = False,
) -> TableGone | None:
    """Whether the table is gone for ``seat`` at ``now`` (module docstring); ``None``: not.

    ``unheard``: no member has told us what it holds of our feed since we started, and we
    signed nothing past our join (``Author.unheard``): nothing we may sign (an abandon, a
    vote) comes first, so ``drop_after`` of silence is the bound, the wait after which we
    would have abandoned or voted (:attr:`GoneReason.UNHEARD`).

    ``tentative`` gives the tentative fold (read only once the silence is long: whether the
    game's end is here, whether we are out); ``heard`` is when each member was last heard
    (:attr:`Membership.heard`), ``abandon`` the core's abandon answer (asked last: an abandon
    on offer ends a game of two properly, so the table is not gone then). The caller leaves out a
    member recovering its own feed (§9.6 has its own end, ``recovery_hopeless``) or gone
    already.

    >>> from p2p_nertz.protocol.identity import Identity
    >>> from p2p_nertz.protocol.spec import GameSpec
    >>> from p2p_nertz.rules import Rules
    >>> keys = [Identity.generate(bytes([i + 1]) * 32).peer_id for i in range(3)]
    >>> spec = GameSpec.create(list(zip(keys, "ABC")), Rules(target=None, rounds=1), b"doc")
    >>> state = GameState(spec)
    >>> ears = Listening(0.0, gap=5.0)
    >>> for t in range(101):  # the runtime's ticks: listening without a break
    ...     ears.saw(float(t))
    >>> ask = dict(seat=0, drop_after=30.0, gone_after=90.0, names="ABC",
    ...            abandon=lambda: AbandonAnswer("no"))
    >>> held = lambda: state
    >>> table_gone(state, held, [0.0, 0.0, 10.0], ears, 99.0, **ask) is None  # C heard at 10
    True
    >>> table_gone(state, held, [0.0, 0.0, 10.0], ears, 100.0, **ask).reason.value
    'silent'
    """
    if heard_lately(final, heard, listening, now, seat=seat, drop_after=drop_after):
        return None
    since = listening.since_at(now)
    # Still in by the final fold: a member only the held votes put out, that talks, is not
    # silence (and the final fold is at hand: the tentative one is read only past this).
    everyone = [q for q in range(len(heard)) if q != seat]
    others = tuple(q for q in everyone if q not in final.dropped)
    if alone_in_game(final, seat):
        return None  # (the game is ours to finish, and the fold ends it: nothing to wait for)
    if not others:
        # Nobody else still in: a member voted out that talks may be asking to rejoin, which
        # only we can grant (§9.8); one that left cannot come back.
        others = tuple(q for q in everyone if q not in final.left)
    last = max([since, *(heard[q] for q in others)])
    silent = now - last
    if silent < drop_after:
        return None
    held = tentative()
    ended = held.phase is Phase.OVER
    if unheard:
        # (A copy of a log that holds the game's end, resumed after everyone went home: the
        # person learns the game is over, as the log has it, not that it never began.)
        why = _why(GoneReason.UNHEARD, ended, silent, others, names, held=held)
        return TableGone(GoneReason.UNHEARD, silent, drop_after, others, ended, why)
    bound = drop_after if ended else gone_after
    if silent < bound:
        return None
    if not ended and abandon().why is None:
        return None  # an abandon ends the game (§9.3): the table offers it, a bot signs it
    reason = GoneReason.DROPPED if seat in held.dropped else GoneReason.SILENT
    why = _why(reason, ended, silent, others, names)
    return TableGone(reason, silent, bound, others, ended, why)


def alone_in_game(final: GameState, seat: int) -> bool:
    """Whether ``seat`` is the only member still in by the final fold, in a game it plays on
    alone (docs/protocol.md §9.9, *alone in the game*): every other member voted out (at two
    players, the other one on proof, §9.4) or gone. The table is not gone for it: the round
    in progress waits for nobody else, so it plays it out (a member dropped in it forfeits it,
    §8.9), and no round starts with one member in (the fold ends the game there,
    ``GameState._new_round``). A member voted out for silence may still ask to rejoin (§9.8):
    it is readmitted at that next round, as ever. The same in a game of the dealerless
    shuffle, whose face-down cards need every deck member's shares (docs/shuffle.md §6.4): a
    round in play that nobody left can open ends blocked at once, and a deal of two that
    loses a member ends the game (nobody deals alone, ``state._undealt``)."""
    members = final.roster.members()
    return members == {seat} and final.phase is not Phase.OVER


def _why(
    reason: GoneReason,
    ended: bool,
    silent: float,
    others: Sequence[int],
    names: Sequence[str],
    *,
    held: GameState | None = None,
) -> str:
    """The answer for a person (names and seats as the table shows them; ``held``: the
    tentative fold, whose score an unheard stop at a game's end says)."""
    quiet = f"nobody still in the game has been heard for {silent:.0f} s"
    if reason is GoneReason.UNHEARD and ended and held is not None:
        totals = "  ".join(f"{names[s]} {t}" for s, t in enumerate(held.game.totals))
        return (
            f"heard nobody at this table in {silent:.0f} s, so this node signed nothing new: "
            f"the game is over as this log has it (the score: {totals}), and the others have "
            "gone home"
        )
    if reason is GoneReason.UNHEARD:
        return (
            f"heard nobody at this table in {silent:.0f} s, so this node signed nothing new: "
            "another nertz may be playing as you (your key on another machine, or this log an "
            "older copy of yours), or the others never came or have gone home"
        )
    if reason is GoneReason.DROPPED:
        went = "and ended" if ended else "on"
        return f"you were voted out while away; the game went {went} without you ({quiet})"
    each = [f"{names[q]} (seat {q})" for q in others]
    who = ", ".join(each[:-1]) + " and " + each[-1] if len(each) > 1 else "".join(each)
    who = who or "the others"
    if ended:
        return f"the game is over on the table; {who} left before it was final here ({quiet})"
    if not others:
        return f"the others have left the game ({quiet})"
    return f"the others have left: {who} cannot be reached ({quiet})"
