"""The drop decided first (``folds.decided_first``) is not a drop resting on a member's events
that its voters never held: once the other drop is decided, a strict majority of the others
stand voting the member out, one of them counting below the last of its membership events
the new drop is timed after (``roster.gone_unheld``; docs/protocol.md §9.2, *the drop decided
first*, session 42).

A fold there makes the other drop final without the member's own feed (``finality.lifted``:
voted gone), and the new drop could be final nowhere before those votes (their voter never
announced the event). Where no such majority stands after the decision, every view waits for
the member's feed up to there and takes the drop decided first, as before.

The membership events of three played games, by hand (the fold reads seqs, counts and
frontiers): the lie fuzzer's ``--two-liars --back readmit`` seed 264 (four players, refused),
``--late-withdrawals`` seed 220 (three players, taken). Seed 326's shapes (three players,
refused) are in ``tests/test_folds_unheld_below.py``.
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.bodies import Drop, DropReason
from p2p_nertz.protocol.finality import decided
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.roster import Roster, gone_unheld, voted_gone
from p2p_nertz.protocol.state import Event, GameState
from tests.test_folds_dropped_past_cut import _spec
from tests.test_folds_self_kept import Row, _events
from tests.test_folds_unheld_below import _SEED_326

_S, _W, _H = DropReason.SILENT, DropReason.WITHDRAW, DropReason.WITHHELD

#: Seed 264 (seat 2 ``stuck_random``, seat 1 ``claim_after_leave``): seat 2 votes seat 1 out
#: counting 10; seat 1, cut off, votes seat 2 out at 99 (its seq 15, past seat 1's cut at
#: 14); seats 0 and 3 vote seat 2 out (11) and seat 1 (14); seat 1 leaves at 113. Two fixed
#: points: seat 1 out at 14 (decided at 131, seats 3 and 0's withdrawals on seat 2 at 126-131
#: lifting the caps) and seat 2 out at 11 (at 107, decided at 113), which rests on seat 1's
#: vote at its seq 15 and leave at 20: seats 0 and 3, voting seat 1 out counting 14 at 115
#: and 117, never held them. Every live peer dropped seat 1 at 14.
_SEED_264: tuple[Row, ...] = (
    (2, 22, 93, (11, 10, 21, 11), 3, 11, _S),
    (2, 23, 94, (11, 10, 22, 11), 0, 11, _S),
    (2, 25, 96, (11, 10, 24, 11), 1, 10, _S),
    (1, 15, 99, (12, 14, 11, 14), 2, 11, _S),  # seat 1, cut off, past its cut (14)
    (1, 16, 102, (12, 15, 11, 14), 0, 12, _S),
    (1, 17, 103, (12, 16, 11, 14), 3, 14, _S),
    (0, 13, 107, (12, 14, 11, 19), 2, 11, _S),
    (2, 30, 107, (11, 10, 29, 11), 0, 0, _W),
    (3, 20, 107, (12, 14, 11, 19), 2, 11, _S),
    (1, 19, 112, (12, 18, 11, 14), 0, 0, _W),
    (1, 20, 113, (12, 19, 11, 14), None, None, None),  # seat 1 leaves
    (0, 14, 115, (13, 14, 11, 20), 1, 14, _S),  # seats 0 and 3 vote seat 1 out (14)
    (3, 21, 117, (14, 14, 11, 20), 1, 14, _S),
    (3, 22, 126, (14, 14, 11, 21), 2, 0, _W),
    (0, 15, 128, (14, 14, 11, 22), 2, 0, _W),
    (2, 32, 131, (11, 10, 31, 11), 3, 0, _W),
    (2, 33, 141, (11, 10, 32, 12), 1, 0, _W),
)

#: Seed 220: seat 2, cut off, votes seats 1 and 0 out (28); seats 1 and 0 vote seat 2 out
#: (27) and each other (32, 30). Two fixed points: seat 0 out at 32 (decided at 157, seat 2's
#: withdrawal on seat 1) and seat 1 out at 30 (at 144, decided at 152 by seat 0's withdrawal,
#: its seq 37, past 32). Seat 2 withdrew its vote on seat 0 at 151, so no majority stands
#: voting seat 0 out after 157: every view waits for seat 0's feed, holds seq 37, and takes
#: seat 1's drop, as the peers did. (Seat 0's events past 32 are announced first at 165,
#: after both decisions: a rule read from announcements parts the views before 165 from
#: those after, session 41.)
_SEED_220: tuple[Row, ...] = (
    (2, 34, 137, (28, 28, 33), 1, 28, _S),
    (2, 35, 138, (28, 28, 34), 0, 28, _S),
    (1, 32, 139, (32, 31, 27), 2, 27, _S),
    (0, 34, 140, (33, 30, 27), 2, 27, _S),
    (1, 33, 143, (32, 32, 27), 0, 32, _S),
    (0, 36, 144, (35, 30, 27), 1, 30, _S),
    (2, 37, 151, (28, 28, 36), 0, 0, _W),
    (0, 37, 152, (36, 30, 27), 2, 0, _W),
    (1, 34, 153, (32, 33, 27), 2, 0, _W),
    (2, 38, 157, (28, 28, 37), 1, 0, _W),
    (1, 35, 165, (37, 34, 38), 0, 0, _W),  # seat 0's events past 32 announced first
)


def _tentative(events: list[Event], seats: int) -> GameState:
    folds = Folds(GameState(_spec(seats)))
    for event in events:
        folds.add(event, 0)
    return folds.tentative


def _views(rows: tuple[Row, ...], seats: int, since: int) -> list[dict[int, int]]:
    """The drops of every view holding the events up to each of them timed from ``since``
    on (a peer folding what it holds at once, the audit of a set of logs), the last every
    event."""
    events = _events(rows, seats)
    return [
        dict(_tentative([e for e in events if e.lamport <= upto], seats).dropped)
        for upto in sorted({e.lamport for e in events if e.lamport >= since})
    ]


def _with_one_gone(rows: tuple[Row, ...]) -> tuple[Row, ...]:
    """``rows`` of n players at a table of n + 1, the last seat gone for good from the start:
    the others vote it out counting 5 (Lamport 50 on, each at its seq 10), and every frontier
    names its 5."""
    n = len(rows[0][3])
    votes = tuple((q, 10, 50 + q, (*(9,) * n, 5), n, 5, _S) for q in range(n))
    return votes + tuple((s, q, at, (*f, 5), t, c, r) for s, q, at, f, t, c, r in rows)


@pytest.mark.parametrize(("seats", "gone"), [(4, {}), (5, {4: 5})])
def test_folds_a_drop_resting_on_events_the_voters_never_held_is_not_decided_first(
    seats: int, gone: dict[int, int]
) -> None:
    """Seed 264: every view from the other drop's decision (131) on, the whole fold among
    them, drops seat 1 at 14 as the live peers did; seat 2's drop at 11, decided earlier but
    resting on seat 1's vote and leave past 14, is refused (it was taken before session 42,
    and the audit refused honest seat 3's moves). At five players with seat 4 dropped at the
    start the same (a majority of the four left)."""
    rows = _SEED_264 if seats == 4 else _with_one_gone(_SEED_264)
    views = _views(rows, seats, 131)
    assert len(views) == 2
    assert all(view == {**gone, 1: 14} for view in views)


def test_folds_a_drop_resting_on_events_every_view_waits_for_is_decided_first() -> None:
    """Seed 220: every view from the first drop's decision (152) on drops seat 1 at 30, the
    views before seat 0's events past 32 were announced (165) and those after alike."""
    views = _views(_SEED_220, 3, 152)
    assert len(views) == 4  # (152, 153, 157, 165)
    assert all(view == {1: 30} for view in views)


def _roster(seats: int, rows: tuple[tuple[int, int, int, int, DropReason], ...]) -> Roster:
    """A roster that read ``rows`` (voter, Lamport, target, count, reason), in order."""
    roster = Roster(seats)
    roster.read = tuple(
        (voter, i + 2, Drop((0,) * seats, target, count, reason))
        for i, (voter, _, target, count, reason) in enumerate(rows)
    )
    roster.read_keys = tuple(
        (lamport, voter, i + 2) for i, (voter, lamport, _, _, _) in enumerate(rows)
    )
    return roster


@pytest.mark.parametrize("seats", [3, 4, 5])
def test_gone_unheld_asks_a_majority_standing_from_the_decision_on(seats: int) -> None:
    """A strict majority of the others (2 of 2, 2 of 3, 3 of 4) stand voting seat 0 out at
    some place from the decision on, one counting below the event: gone unheld; not where a
    withdrawal before the decision leaves no majority, nor where every standing vote counts
    the event, nor where the one counting below it is a member the new drop drops too
    (``keep``: its announcement is not needed)."""
    need = (seats - 1) // 2 + 1
    voters = list(range(1, need + 1))
    votes = tuple((q, 100 + q, 0, 9 if q == 1 else 12, _S) for q in voters)
    roster = _roster(seats, votes)
    assert gone_unheld(roster, 0, 50, 10, ())  # (standing at the end)
    assert gone_unheld(roster, 0, 200, 10, ())  # (a decision after the votes)
    assert not gone_unheld(roster, 0, 50, 9, ())  # (every vote counts the event 9)
    assert not gone_unheld(roster, 0, 50, 10, (1,))  # (the one counting below is dropped)
    # Voter 1 withdraws at 150: a majority stands from 100 + need to 150 alone.
    withdrawn = _roster(seats, (*votes, (1, 150, 0, 0, _W)))
    assert gone_unheld(withdrawn, 0, 120, 10, ())
    assert not gone_unheld(withdrawn, 0, 160, 10, ())
    # One voter short of a majority: never gone.
    assert not gone_unheld(_roster(seats, votes[:-1]), 0, 50, 10, ())


def _seed_326_withdrawn() -> tuple[Row, ...]:
    """Seed 326's shape with the liar's log ending at its withdrawal (seat 0's seq 19, at 89),
    seat 1's vote *withheld* at 200 signed holding seat 2's feed to 22 (not seat 2's vote
    *withheld* at 196, still on its way), and seat 1's withdrawal of it at 220, once seat 0's
    event 19 reached it (what seat 0 owed: an honest voter withdraws a vote *withheld* then,
    while its held fold does not drop the member, ``Membership.withheld_relieved``)."""
    rows = [
        (1, 22, 200, (18, 21, 22), 0, 18, _H) if (r[0], r[1]) == (1, 22) else r
        for r in _SEED_326
        if r[0] != 0 or r[1] <= 19
    ]
    return (*rows, (1, 23, 220, (19, 22, 22), 0, 0, _W))


@pytest.mark.parametrize(("seats", "gone"), [(3, {}), (4, {3: 5})])
def test_folds_views_of_the_withdrawn_shape_part_until_the_majority_is_announced(
    seats: int, gone: dict[int, int]
) -> None:
    """Seed 326's shape withdrawn (session 43), each view an honest member's. Seat 1's view
    before its withdrawal (seat 0's event 19 held, not seat 2's vote at 196) does not drop
    seat 0, so its withdrawal is one an honest voter signs (``Membership.withheld_relieved``
    asks that). Seat 2's view from 200 (both votes standing, seat 0 held to 18) drops seat 0
    at 16, decided at 111, voted gone. Seat 1's view from 220 (19 and its withdrawal, not
    seat 2's vote) finds no majority standing after 111 and takes seat 2's drop at 10,
    decided at 89, resting on 19; so does the union (the withdrawal lifts seat 1's cap on 19
    in the past). No rule over the events a view holds parts them: seat 2's view must not make
    its drop final before seat 1 announced seat 2's vote, after which seat 2 holds seat 1's
    withdrawal too (``tests/test_finality_voted_gone.py``, docs/protocol.md §13). At four
    players with seat 3 dropped at the start the same."""
    rows = _seed_326_withdrawn()
    seat_2 = tuple(r for r in rows if r[2] <= 200 and (r[0] != 0 or r[1] <= 18))
    seat_1 = tuple(r for r in rows if (r[0], r[1]) != (2, 23))
    before = tuple(r for r in seat_1 if r[2] < 220)
    if gone:
        rows, seat_2, seat_1, before = (_with_one_gone(r) for r in (rows, seat_2, seat_1, before))
    view_2 = _tentative(_events(seat_2, seats), seats)
    view_1 = _tentative(_events(seat_1, seats), seats)
    assert 0 not in _tentative(_events(before, seats), seats).dropped
    assert dict(view_2.dropped) == {**gone, 0: 16} and decided(view_2, 0) == 111
    assert voted_gone(view_2.roster, 0)
    assert dict(view_1.dropped) == {**gone, 2: 10} and decided(view_1, 2) == 89
    assert not voted_gone(view_1.roster, 0)
    assert dict(_tentative(_events(rows, seats), seats).dropped) == {**gone, 2: 10}
