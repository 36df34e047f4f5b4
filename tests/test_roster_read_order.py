"""The membership events a trial before a withdrawal reads are those before it in the game's
order, whatever order the fold read them in (``Roster.read``, ``roster.lifted_trials``;
docs/protocol.md §9.2).

A fold reads the events that count in the total order, but an event that does not count can
come late: final by its time when it arrives, a peer reads it at once (``Folds.add`` ->
``GameState.observe``), after events that follow it, a withdrawal among them. Here seat 2's
vote on seat 0 (Lamport 25) is read after seat 1's withdrawal of its own vote on seat 0
(Lamport 30): with it, the events before the withdrawal drop seat 0 at the count both votes
quote once seat 0's vote past that count is left out; without it, one vote drops no one.
"""

from __future__ import annotations

from p2p_nertz.protocol import roster as roster_module
from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.roster import Roster, lifted_trials

SEATS, COUNT, WITHDRAWN_AT = 3, 10, 30
_FRONTIER = (0,) * SEATS


def _vote(seat: int, reason: DropReason = DropReason.SILENT, count: int = COUNT) -> Drop:
    return Drop(_FRONTIER, seat, count, reason)


def _before_withdrawal(roster: Roster) -> None:
    roster.vote(1, 5, _vote(0), 20)  # seat 1 votes seat 0 out at COUNT
    roster.vote(0, COUNT + 2, _vote(2, count=3), 22)  # seat 0's vote, past COUNT


def _withdrawal(roster: Roster) -> None:
    roster.vote(1, 6, _vote(0, DropReason.WITHDRAW, 0), WITHDRAWN_AT)


def _late(roster: Roster) -> None:
    roster.read_uncounted(2, 7, _vote(0), 25)  # seat 2 votes seat 0 out at COUNT, read late


def _in_order() -> Roster:
    roster = Roster(SEATS)
    _before_withdrawal(roster)
    _late(roster)
    _withdrawal(roster)
    return roster


def test_roster_read_holds_the_events_in_the_games_order_whatever_order_they_came() -> None:
    late = Roster(SEATS)
    _before_withdrawal(late)
    _withdrawal(late)
    _late(late)
    assert late.read == _in_order().read
    assert late.read_keys == tuple(sorted(late.read_keys))
    assert [entry[:2] for entry in late.read] == [(1, 5), (0, COUNT + 2), (2, 7), (1, 6)]


def test_lifted_trials_read_an_event_read_late_before_the_withdrawal() -> None:
    in_order = _in_order()
    assert in_order.lifts[0]  # (the withdrawal lifted seat 1's cap on seat 0)
    assert lifted_trials(in_order, 0) == [(COUNT, WITHDRAWN_AT)]
    late = Roster(SEATS)
    _before_withdrawal(late)
    _withdrawal(late)
    # Asked before the late vote is read: one vote, no drop; the answer is kept.
    assert lifted_trials(late, 0) == []
    _late(late)
    # The kept answer read fewer events than are now before the withdrawal: made again.
    assert lifted_trials(late, 0) == lifted_trials(in_order, 0)
    fresh = late.copy()
    fresh.memo = roster_module._Memo()
    assert lifted_trials(fresh, 0) == lifted_trials(late, 0)


def test_lifted_trials_an_event_read_after_the_withdrawal_in_the_order_changes_nothing() -> None:
    roster = _in_order()
    kept = lifted_trials(roster, 0)
    # Seat 2's withdrawal, after seat 1's in the order: not among the events before it.
    roster.read_uncounted(2, 8, _vote(0, DropReason.WITHDRAW, 0), WITHDRAWN_AT + 5)
    assert lifted_trials(roster, 0) == kept == [(COUNT, WITHDRAWN_AT)]
