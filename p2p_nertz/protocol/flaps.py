"""A member that flaps its votes too often has committed a fault its own feed proves.

Theory of operation
-------------------
A member may vote another out and withdraw the vote (docs/protocol.md §9.2): a vote for
silence is withdrawn when the member is heard again, one *withheld* when it gives what it
owed. Each such *flap* costs every other peer folds of the membership events before it
(§9.2, *a member that flaps*), and a member that flaps hundreds of times freezes a table
(``scripts/bench_flap.py``). So the protocol bounds them: a member that signs more than
:data:`FLAP_LIMIT` withdrawals of its votes against one member in one round has committed a
**flap fault** at its withdrawal that passes the limit (§9.4, *too many flaps*).

Why no honest member reaches it. An honest member withdraws a vote only after it signed one
(one vote per voter and member), and it votes for silence only once it has heard nothing of
the member for ``drop_after`` (30 s), for withholding only after ``phase_timeout`` (30 s) of
the member owing the same thing. So each flap on one member costs an honest voter at least
30 s of the round in which that member was silent to it, or withheld: :data:`FLAP_LIMIT`
(16) of them in one round is eight minutes of a link that fails and comes back every 30 s,
within one round of Nertz (a few minutes). The rule is a limit, not a proof of intent: a peer
whose link to one member is that unsteady for that long is voted out as a cheater is (it
holds up the table as one does). The simulator's timers are shorter (``QUICK_TIMERS``), so
its soak is the check that the fault mixes never reach it (``tests/test_flaps.py``).

Why it is a proof. The withdrawals are events of the faulty member's own feed, signed and
chained: any peer that holds its feed up to the withdrawal that passes the limit, and folds
the events before it, counts the same withdrawals in the same rounds (the round is the fold's
at each event, the same in every fold of the same events, since a withdrawal counts nothing
that moves a round). So the fault is found by the fold itself (:func:`withdrawn`, called for
every withdrawal the game fold reads), by every peer and by ``nertz audit`` alike, and needs
no proof note: the events are in every log.

At a round's end. The round a withdrawal counts in is the one the fold is in when it reads
it, in the total order, not when it arrives: a round ends at an event of that order (the one
that leaves no result owed), and a withdrawal ordered before it counts in the round it ends,
at every peer, even one that took the round's end first (its final fold reads nothing while
an event still to come can precede it). Two final folds could count one withdrawal in
different rounds only if they read it on different sides of that event (they do not: one
order), counted different withdrawals of the member (they do not: a member's cut and its
readmission are the roster's, and none of its events past a cut is final before its drop), or
if the count moved the round's end (it does not: a fault bars only votes signed after it).
``tests/test_flaps_boundary.py`` builds the nearest orders (docs/protocol.md §9.4, *at a
round's end*).

What follows (docs/protocol.md §9.4):

- the faulty member's votes against anyone signed past its fault never count
  (:func:`barred`; they freeze and cap as a capped vote does: its voter froze its
  announcements when it signed them);
- every other member still in votes it out once, reason *flapping*, naming the withdrawal
  (``fork_seq``) that passed the limit (:func:`due`); such a vote stands when the member is
  heard, as one *withheld* or on proof does (with two members left, nobody votes: no
  majority drops one of two, and the standing vote would freeze the game);
- a vote *flapping* that names a withdrawal at which the fold finds no fault of that member
  is a violation (:func:`check_vote`): a forged proof is none;
- the votes drop it by a majority, as votes for silence do (its feed is one chain: the
  highest count is a safe cut);
- the audit names it (``flap_fault`` finding, docs/audit.md).

:class:`Flaps` is immutable; the game fold holds one (``GameState.flaps``) and replaces it
(its copies share it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.fold_values import RefusalCode, Refuse

if TYPE_CHECKING:
    from p2p_nertz.protocol.state import GameState

__all__ = ["FLAP_LIMIT", "Flaps", "barred", "check_vote", "due", "flapped", "withdrawn"]

#: The withdrawals of votes against one member a member may sign in one round; the next is
#: a flap fault (module docstring).
FLAP_LIMIT = 16

#: The votes a flap fault bars: every vote against a member (a withdrawal, an abandon and a
#: readmission are not votes against anyone).
_BARRED = frozenset(
    {DropReason.SILENT, DropReason.WITHHELD, DropReason.EQUIVOCATION, DropReason.FLAPPING}
)


@dataclass(frozen=True, slots=True)
class Flaps:
    """What the fold has counted of the members' withdrawals (module docstring).

    ``round``: the round whose withdrawals ``counts`` holds, per ``(voter, target)``;
    ``faults``: per member at fault, the seq of its withdrawal that passed the limit;
    ``peaks``: per member, the most withdrawals against one member it signed in one round (a
    figure: how near the limit honest members come, ``scripts/soak.py``)."""

    round: int = 0
    counts: dict[tuple[int, int], int] = field(default_factory=dict)
    faults: dict[int, int] = field(default_factory=dict)
    peaks: dict[int, int] = field(default_factory=dict)


def flapped(state: GameState, voter: int, seq: int, body: Drop) -> bool:
    """The game fold's one call (``GameState._drop``), for each membership event ``body`` of
    ``voter`` (its event ``seq``) that counts, read in the fold's round: count it in
    ``state.flaps`` if it is a withdrawal, refuse it if it is a vote *flapping* that proves
    nothing (:func:`check_vote`), and say whether it is a vote past ``voter``'s flap fault,
    which never counts (:func:`barred`)."""
    if body.reason is DropReason.WITHDRAW:
        state.flaps = withdrawn(state.flaps, voter, body.seat, seq, state.round.number)
        return False
    if body.reason is DropReason.FLAPPING and body.seat not in state.dropped:
        problem = check_vote(state.flaps, body)
        if problem is not None:
            raise Refuse(RefusalCode.UNPROVEN_FLAP, problem)
    return barred(state.flaps, voter, seq, body)


def withdrawn(flaps: Flaps, voter: int, target: int, seq: int, round_number: int) -> Flaps:
    """``flaps`` once ``voter``'s withdrawal ``seq`` of its vote against ``target``, folded in
    round ``round_number``, is counted (a new value; ``flaps`` is left as it is)."""
    counts = dict(flaps.counts) if round_number == flaps.round else {}
    key = (voter, target)
    counts[key] = counts.get(key, 0) + 1
    faults, peaks = flaps.faults, flaps.peaks
    if counts[key] > FLAP_LIMIT and voter not in faults:
        faults = {**faults, voter: seq}
    if counts[key] > peaks.get(voter, 0):
        peaks = {**peaks, voter: counts[key]}
    return Flaps(round_number, counts, faults, peaks)


def barred(flaps: Flaps, voter: int, seq: int, body: Drop) -> bool:
    """Whether ``voter``'s event ``seq``, the vote ``body``, never counts: a vote against a
    member signed past ``voter``'s flap fault."""
    fault = flaps.faults.get(voter)
    return fault is not None and seq > fault and body.reason in _BARRED


def check_vote(flaps: Flaps, body: Drop) -> str | None:
    """Why the vote *flapping* ``body`` proves nothing (``None``: it names the member's flap
    fault, as the fold found it)."""
    fault = flaps.faults.get(body.seat)
    if fault != body.fork_seq:
        found = "none" if fault is None else f"its withdrawal {fault}"
        return f"a vote on a flap fault at event {body.fork_seq}; the fold finds {found}"
    return None


def due(
    flaps: Flaps, seat: int, seats: int, dropped: dict[int, int], voted: dict[int, int]
) -> list[int]:
    """The members ``seat`` owes a vote *flapping* now, in seat order: at fault in its final
    fold, still in, not itself, and not voted out by it already (a vote for silence standing
    is withdrawn when the member is heard; this one follows it). None while two members or
    fewer are left: no majority can drop one of two, and the vote, which stands, would freeze
    our announcements of its feed, and with them the game (the flapper's later votes count for
    nothing all the same)."""
    if seat in dropped or seats - len(dropped) <= 2:
        return []
    return [q for q in sorted(flaps.faults) if q != seat and q not in dropped and q not in voted]
