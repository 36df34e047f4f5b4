"""A member voted out twice over a vote for silence of its own that never ends does not come back.

Theory of operation
-------------------
A member R that votes out for silence a member Q the others hear, and never withdraws, owes
the cover of Q's later events, and the others vote it out *withheld* once ``phase_timeout``
passes without it (docs/protocol.md §9.2, *a vote for silence that never ends*). A vote
*withheld* is no proof of cheating, so R may rejoin at the next round (§9.8); its votes are
cleared by the readmission (``Roster.readmit``), and it votes Q out again, and the next round
waits another ``phase_timeout`` before Q's events are final (a liar that rejoins every round:
``tests/test_sim_stall_rejoin.py``). So the fold bars the second time:

- a drop is a **stall over a vote for silence** when a vote *withheld* is among the votes
  standing on the member dropped, and a vote for silence of its own stands on a member still
  in (:func:`stalled`, read from the roster when the readmission is folded: the ballots on a
  member dropped, and its own, stand until it is readmitted);
- a member readmitted once after such a drop (``GameState.stalled``) and dropped so again is
  not readmitted: its readmission is refused, ``bad_rejoin``, as one of a member dropped for
  cheating (:func:`rejoin`); it asks for none and nobody sponsors one (:func:`barred`,
  ``Duties``).

Everything it reads is in signed events every member holds and folds in one order: the votes
and the readmissions. So every peer, and the audit (which folds the logs with the same game
fold), bars the same member at the same readmission. A drop for silence alone (a crash, a
partition: nobody hears it, nobody votes *withheld*) and a drop *withheld* with no vote for
silence of its own standing (a phase event or a cover owed for another reason) are not
stalls: the rule asks the same kind of stall twice.

Why no honest member is barred. An honest voter behind a failed link hears Q again by Q's
events relayed by any member (§9.1) and withdraws within a beat interval and two round trips
(§9.2), far within ``phase_timeout``; and a member it hears hands Q's beats on to it (§9.2,
*Handed on in play*). Only a member cut off from every member that relays Q is left with
its vote, and that member is in a partition's minority, voted out for silence (nobody hears
it), not *withheld*. To be barred an honest member would have to be voted out *withheld*
while such a vote of its own stood, twice in one game: two failures of every path from Q,
each lasting ``phase_timeout`` while it heard the others. The cost where it happens anyway: it
watches the rest of the game, its totals carried on as any dropped member's (§9.8); the table
agrees on it, as on every drop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.fold_values import RefusalCode, Refuse

if TYPE_CHECKING:
    from p2p_nertz.protocol.roster import Roster

__all__ = ["barred", "rejoin", "stalled"]


def stalled(roster: Roster, seat: int) -> bool:
    """Whether ``seat``, dropped by ``roster``, was dropped in a stall over a vote for silence
    of its own: a vote *withheld* stands on it, and its vote for silence on a member still in
    stands (each counted or capped)."""
    if seat not in roster.dropped:
        return False
    against = (*roster.votes.get(seat, ()), *roster.frozen.get(seat, ()))
    if not any(v.reason is DropReason.WITHHELD for _, v in against):
        return False
    for target in sorted(roster.votes.keys() | roster.frozen.keys()):
        if target == seat or target in roster.dropped:
            continue
        ballots = (*roster.votes.get(target, ()), *roster.frozen.get(target, ()))
        if any(voter == seat and v.reason is DropReason.SILENT for voter, v in ballots):
            return True
    return False


def barred(roster: Roster, once: frozenset[int], seat: int) -> bool:
    """Whether ``seat`` may not be readmitted: it was readmitted once after a stall over a
    vote for silence of its own (``once``: ``GameState.stalled``) and is dropped so again."""
    return seat in once and stalled(roster, seat)


def rejoin(roster: Roster, once: frozenset[int], body: Drop, *, over: bool) -> frozenset[int]:
    """The game fold's readmission ``body`` (``Roster.rejoin``), unless it is barred; the
    members readmitted after a stall so far (``once``), with this one if it is such.

    Raises:
        Refuse: the member cannot come back (``bad_rejoin``).
    """
    target = body.seat
    stall = target not in roster.rejoining and stalled(roster, target)
    if stall and target in once:
        raise Refuse(
            RefusalCode.BAD_REJOIN,
            f"seat {target} was voted out withheld twice over a vote for silence of its own"
            " that never ended: it cannot rejoin",
        )
    roster.rejoin(body, over=over)
    if stall and target in roster.rejoining:
        return once | {target}
    return once
