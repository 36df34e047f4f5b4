"""A member's events past a vote's count decide nothing once the votes without them drop it
there (``Folds._cut_unheld``, ``Unheld``, docs/protocol.md §9.2), whoever else held them.

Each case is built by hand on :class:`Folds`: the events the members still alive hold (the
dying member's last events, signed while it was cut off, are in its own log alone) and every
event (the union of every log: an observer, the audit, a peer restored from all the logs).
Both folds must reach the same drops. Filler events are withdrawals of no vote (a drop event
that changes nothing): what matters of them is their frontier.
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason, Join
from p2p_nertz.protocol.envelope import KIND_DROP, KIND_JOIN
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Event, GameState
from p2p_nertz.rules import Rules

_S, _E, _W = DropReason.SILENT, DropReason.EQUIVOCATION, DropReason.WITHDRAW


def _spec(players: int) -> GameSpec:
    ids = [Identity.generate(bytes([i + 1]) * 32).peer_id for i in range(players)]
    return GameSpec.create([(pid, f"p{i}") for i, pid in enumerate(ids)], Rules(), b"unheld")


def _joins(players: int) -> list[Event]:
    return [
        Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=(0,) * players), bytes([s, 1]) * 8)
        for s in range(players)
    ]


def _event(
    seat: int,
    seq: int,
    lamport: int,
    frontier: tuple[int, ...],
    target: int,
    *,
    last_seq: int = 0,
    reason: DropReason = _W,
    fork_seq: int = 0,
) -> Event:
    """``seat``'s event ``seq``: a vote against ``target`` (a withdrawal of none by default:
    a filler event that says what its author holds)."""
    body = Drop(frontier, target, last_seq, reason, fork_seq)
    return Event(seat, seq, lamport, KIND_DROP, body, bytes([seat, seq]) * 8)


def _dropped(spec: GameSpec, events: list[Event]) -> dict[int, int]:
    """The drops (seat -> cut) of the tentative fold holding ``events``, none final."""
    folds = Folds(GameState(spec))
    for event in sorted(events, key=lambda e: e.key):
        folds.add(event, 0)
    return dict(sorted(folds.tentative.dropped.items()))


def _five_seats(announcer: str) -> tuple[list[Event], int]:
    """5 seats: seat 0 forked (to seat 1), seat 1 (the dying member) signs its event 3 and
    seat 2 holds it; then seat 1, cut off, votes seat 0 out on proof and every other member
    out for silence (its events 4 to 7) and dies, seat 2 dies too. Seats 0, 3 and 4 vote
    seat 1 out counting 2 (a majority of five) and seat 2 out. ``announcer``: how seat 2 says
    it holds seat 1's event 3 (``"none"``: it never does; ``"frontier"``: an event of its
    own that the others hold; ``"vote"``: its own vote on seat 1 counting 3, read after the
    others dropped seat 1). The events, and the last seq of seat 1's the survivors hold."""
    events = _joins(5)
    heard = 3 if announcer != "none" else 2
    events += [
        _event(1, 2, 10, (1, 1, 1, 1, 1), 2),  # held by everyone
        _event(1, 3, 11, (1, 2, 1, 1, 1), 2),  # held by seat 2 alone
        _event(2, 2, 12, (1, heard, 1, 1, 1), 3),
        # Seat 1, cut off: in its log alone.
        _event(1, 4, 20, (1, 3, 2, 1, 1), 0, last_seq=1, reason=_E, fork_seq=1),
        _event(1, 5, 21, (1, 4, 2, 1, 1), 2, last_seq=2, reason=_S),
        _event(1, 6, 22, (1, 5, 2, 1, 1), 3, last_seq=1, reason=_S),
        _event(1, 7, 23, (1, 6, 2, 1, 1), 4, last_seq=1, reason=_S),
        # The others: seat 1 out at 2 (seat 4's vote decides it), then seat 2.
        _event(0, 2, 30, (1, 2, 2, 1, 1), 1, last_seq=2, reason=_S),
        _event(3, 2, 30, (1, 2, 2, 1, 1), 1, last_seq=2, reason=_S),
        _event(0, 3, 31, (2, 2, 2, 2, 1), 2, last_seq=2, reason=_S),
        _event(3, 3, 31, (2, 2, 2, 2, 1), 2, last_seq=2, reason=_S),
        _event(4, 2, 32, (3, 2, 2, 3, 1), 1, last_seq=2, reason=_S),
        _event(4, 3, 33, (3, 2, 2, 3, 2), 2, last_seq=2, reason=_S),
    ]
    if announcer == "vote":
        events[7] = _event(2, 2, 40, (1, 3, 1, 1, 1), 1, last_seq=3, reason=_S)
    return events, 3 if announcer != "none" else 2


@pytest.mark.parametrize("announcer", ["none", "frontier", "vote"])
def test_folds_a_dead_members_votes_past_the_cut_decide_nothing_whoever_held_them(
    announcer: str,
) -> None:
    """The dying member's proof vote, with every other member voted out by it, would drop
    the forked seat 0 on its own (soak seed 224's rule) before the others drop seat 1: seat
    0's vote on seat 1 would no longer count and seat 1 would stay in, where the survivors,
    who never get those votes, drop it at 2. Session 12 imposed the cut only where no other
    member announced holding seat 1's events past it (``"none"``, variants soak seed 5066);
    announced in an event of seat 2, which died too (``"frontier"``), the union of the logs
    kept seat 1 in and dropped seat 0: two games. An event past the cut can be final nowhere
    while a voter whose count is the cut is a member (it never announces more, §7.1, §9.2),
    whoever else holds it: the cut is imposed where no member still in announced them (seat 2
    is dropped too), and every fold reaches the survivors' drops. (``"vote"``: seat 2's
    vote, counting 3, read after the drop: the standing votes' caps already kept seat 1's
    votes past 2 from counting.)"""
    spec = _spec(5)
    events, held = _five_seats(announcer)
    survivors = _dropped(spec, [e for e in events if not (e.seat == 1 and e.seq > held)])
    assert survivors[1] == 2 and 0 not in survivors
    assert _dropped(spec, events) == survivors


def test_folds_a_member_heard_with_a_vote_short_of_a_majority_is_not_cut() -> None:
    """A cut is imposed only where the votes without the events past it drop the member
    there: one vote against a member that keeps talking (its events past the count held by
    everyone) cuts nothing."""
    spec = _spec(3)
    events = [
        *_joins(3),
        _event(0, 2, 10, (1, 1, 1), 1, last_seq=1, reason=_S),
        _event(1, 2, 11, (1, 1, 1), 2),
        _event(1, 3, 12, (2, 2, 1), 2),
        _event(2, 2, 13, (2, 3, 1), 0),
    ]
    assert _dropped(spec, events) == {}
