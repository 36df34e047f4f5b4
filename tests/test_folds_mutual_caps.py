"""Votes that cap each other: one fixed point for the tentative fold (docs/protocol.md §9.2,
§13).

A vote caps its target's votes signed past its count (``Roster.standing_caps``): its voter
announces no more of the target's feed, so none of them can be final while it stands. Where two
members' standing votes were each signed past the other's count (or three form a ring), the
fold that counts a vote lets it cap, the one that caps it leaves it out, and the tentative fold
alternated until its round limit (``folds.REFOLDS``), from where the final fold took other caps
and dropped otherwise. Folds built at random by hand (cut14's search, three players) found
these; each is folded as peers may hold it: every event, and none of the cut off member's
events past its cut. Every view must reach the same drops in its tentative and final folds.
"""

from __future__ import annotations

import pytest

from p2p_nertz.audit import auditor
from p2p_nertz.audit.auditor import _Known, _meet
from p2p_nertz.protocol.bodies import Drop, DropReason, Join
from p2p_nertz.protocol.envelope import KIND_DROP, KIND_JOIN
from p2p_nertz.protocol.folds import REFOLDS, Round, cycle_meet, refold
from p2p_nertz.protocol.state import Event
from p2p_nertz.sim import SimConfig, Simulation
from p2p_nertz.sim.invariants import audit_result
from tests.test_folds_dropped_past_cut import _drops, _folds, _spec

_S, _W = DropReason.SILENT, DropReason.WITHDRAW

#: (Lamport, seat, seq, reason, target, count, frontier, past the author's cut): three players,
#: every member's join at seq 1, then these drop events. Found by cut14's random search.
_Row = tuple[int, int, int, DropReason, int, int, tuple[int, ...], bool]
_CASES: dict[str, list[_Row]] = {
    # Seat 1's vote on 0 caps 0's votes; 2's vote on 1 (past 1's count of 2) caps 1's votes;
    # 0's vote on 2 caps 2's: a ring. The fold counting 2's vote dropped 2 tentatively, no one
    # finally.
    "search 120": [
        (11, 2, 2, _S, 1, 1, (1, 1, 0), True),
        (13, 1, 2, _S, 2, 1, (1, 0, 1), False),
        (15, 1, 3, _S, 0, 1, (1, 0, 1), False),
        (17, 0, 2, _S, 1, 3, (0, 3, 1), False),
        (18, 1, 4, _W, 2, 0, (1, 0, 1), False),
        (20, 0, 3, _S, 2, 1, (0, 3, 1), False),
    ],
    # Seats 0 and 2 vote each other out, each past the other's count (and 2 withdraws later);
    # 1's vote on 0 and 2's on 1 close a ring.
    "search2 738": [
        (12, 1, 2, _S, 0, 1, (1, 0, 1), False),
        (13, 0, 2, _S, 1, 2, (0, 2, 1), True),
        (15, 0, 3, _W, 2, 0, (0, 2, 1), True),
        (16, 0, 4, _S, 2, 1, (0, 2, 1), True),
        (17, 2, 2, _S, 0, 1, (1, 2, 0), False),
        (18, 2, 3, _S, 1, 1, (1, 2, 0), False),
        (19, 2, 4, _W, 0, 0, (1, 1, 0), False),
    ],
    # Seats 1 and 2 vote each other out, each past the other's count.
    "search2 126": [
        (12, 0, 2, _W, 1, 0, (0, 1, 1), False),
        (14, 0, 3, _S, 2, 1, (0, 1, 1), False),
        (15, 2, 2, _S, 1, 1, (3, 1, 0), True),
        (17, 2, 3, _S, 0, 3, (3, 1, 0), True),
        (19, 1, 2, _S, 2, 1, (3, 0, 1), False),
        (21, 1, 3, _S, 0, 2, (3, 0, 1), False),
        (23, 1, 4, _W, 2, 0, (2, 0, 1), False),
    ],
    "search2 1188": [
        (12, 0, 2, _W, 1, 0, (0, 1, 1), False),
        (13, 2, 2, _W, 1, 0, (2, 1, 0), True),
        (15, 2, 3, _S, 1, 1, (2, 1, 0), True),
        (17, 0, 3, _S, 2, 1, (0, 1, 1), False),
        (19, 2, 4, _S, 0, 3, (3, 1, 0), True),
        (21, 1, 2, _S, 2, 1, (3, 0, 1), False),
        (22, 1, 3, _S, 0, 2, (3, 0, 1), False),
        (24, 1, 4, _W, 2, 0, (2, 0, 1), False),
    ],
}


def _events(rows: list[_Row], *, past: bool) -> list[Event]:
    """The joins and the rows (without those past their author's cut unless ``past``)."""
    events = [Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=(0, 0, 0))) for s in range(3)]
    for lamport, seat, seq, reason, target, count, frontier, late in rows:
        if late and not past:
            continue
        body = Drop(frontier, target, count, reason)
        events.append(Event(seat, seq, lamport, KIND_DROP, body))
    return events


@pytest.mark.parametrize("case", sorted(_CASES))
def test_folds_votes_that_cap_each_other_settle_alike_in_every_view(case: str) -> None:
    """The tentative and the final fold drop alike, with and without the cut off member's
    events past its cut, and no one is dropped: every vote counted is capped by a vote that
    stands (whether that one counts or not)."""
    spec = _spec(3)
    rows = _CASES[case]
    for past in (True, False):
        events = _events(rows, past=past)
        assert _drops(spec, events) == {}
        tentative = _folds(spec, events).tentative  # (a fixed point: the caps it folded with)
        assert tentative.standing_caps() == tentative.vote_caps


def _mutual(
    players: int, voters: tuple[int, ...], *, held: bool, withdrawn: bool = False
) -> list[Event]:
    """Seats 0 and 1 vote each other out at once, each counting the other's join alone (so
    each vote is signed past the other's count); then each of ``voters`` votes seat 0 out,
    counting what it holds of it: both votes (``held``) or neither (they reached nobody
    else); then (``withdrawn``) seat 1 withdraws its vote."""
    zeros = (0,) * players
    events = [Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=zeros)) for s in range(players)]
    ones = (1,) * players
    events.append(Event(0, 2, 10, KIND_DROP, Drop((0, *ones[1:]), 1, 1, _S)))
    events.append(Event(1, 2, 10, KIND_DROP, Drop((1, 0, *ones[2:]), 0, 1, _S)))
    count = 2 if held else 1
    for lamport, voter in enumerate(voters, start=11):
        frontier = tuple(0 if q == voter else count if q < 2 else 1 for q in range(players))
        events.append(Event(voter, 2, lamport, KIND_DROP, Drop(frontier, 0, count, _S)))
    if withdrawn:
        events.append(Event(1, 3, 20, KIND_DROP, Drop((1, 0, *ones[2:]), 0, 0, _W)))
    return events


@pytest.mark.parametrize(
    ("players", "voters", "withdrawn", "expected"),
    [
        # Neither vote counts, and neither member is out: the two votes alone drop no one.
        (3, (), False, {}),
        # Seat 1's vote and the others' drop seat 0 at their count (the first round counts
        # every vote): its vote, a dropped member's, caps nothing, and seat 1's counts.
        (3, (2,), False, {0: 2}),
        (4, (2, 3), False, {0: 2}),
        (5, (2, 3, 4), False, {0: 2}),
        # Seat 1 withdraws, after seat 0's drop in the order: it changes nothing.
        (3, (2,), True, {0: 2}),
        (4, (2, 3), True, {0: 2}),
    ],
)
def test_folds_two_votes_that_cap_each_other_count_for_nothing_and_both_cap(
    players: int, voters: tuple[int, ...], withdrawn: bool, expected: dict[int, int]
) -> None:
    """Two members vote each other out, each past the other's count, and the others hold
    both votes: neither can be final while both stand (each voter froze what it announces
    of the other); once the others' votes drop one, its vote caps nothing and the other's
    counts. The tentative and the final fold agree."""
    spec = _spec(players)
    events = _mutual(players, voters, held=True, withdrawn=withdrawn)
    assert _drops(spec, events) == expected


@pytest.mark.parametrize(
    ("players", "voters", "withdrawn", "expected"),
    [
        (3, (), False, {}),
        (3, (2,), False, {0: 1}),
        (4, (2, 3), False, {0: 1}),
        (5, (2, 3, 4), False, {0: 1}),
        (3, (2,), True, {0: 1}),
        (4, (2, 3), True, {0: 1}),
    ],
)
def test_folds_votes_that_cap_each_other_held_by_nobody_else_cut_the_first_seat(
    players: int, voters: tuple[int, ...], withdrawn: bool, expected: dict[int, int]
) -> None:
    """The same votes, reached by nobody else: the events of each past the other's count are
    held by no other member, and the cuts tried (``Folds._cut_unheld``, in seat order) cut
    seat 0 at its count where the votes without its events past it drop it there (seat 1's
    vote then counts: seat 0's, past its cut, caps nothing). One answer, in every fold."""
    spec = _spec(players)
    events = _mutual(players, voters, held=False, withdrawn=withdrawn)
    assert _drops(spec, events) == expected


def test_folds_the_tentative_fold_is_a_fixed_point_where_the_drops_move_the_caps() -> None:
    """cut14's search, seed 2955: seat 2's votes past its cut drop seat 1 where they count,
    seat 1's drop lifts its vote's cap on seat 2, and seat 2's drop lifts the caps its votes
    set: the rounds go round a cycle of three (none of them a fixed point, though one is:
    no one out, seat 0 and 1's votes capped). Until session 15 they stopped at
    ``folds.REFOLDS`` with seat 2 out, the last round's standing votes capping otherwise than
    the caps it was folded with. The fold now takes the cycle's meet (``folds.cycle_meet``:
    the cuts every round of it made, every cap any had), that fixed point, in every view:
    with and without seat 2's events past its cut."""
    spec = _spec(3)
    rows: list[_Row] = [
        (12, 1, 2, _S, 2, 1, (1, 0, 1), False),
        (13, 0, 2, _S, 2, 1, (0, 2, 1), False),
        (15, 2, 2, _S, 0, 2, (2, 2, 0), True),
        (17, 0, 3, _S, 1, 1, (0, 2, 1), False),
        (19, 2, 3, _S, 1, 2, (2, 2, 0), True),
        (21, 0, 4, _W, 2, 0, (0, 1, 1), False),
        (22, 1, 3, _W, 2, 0, (4, 0, 1), False),
    ]
    for past in (True, False):
        events = _events(rows, past=past)
        assert _drops(spec, events) == {}
        tentative = _folds(spec, events).tentative
        assert tentative.standing_caps() == tentative.vote_caps


def _passes(decided: list[_Known], limit: int = 10) -> tuple[list[_Known], int]:
    """What each pass read with, the audit's passes deciding ``decided`` in turn (then
    nothing new), and how many were made (``refold`` with the audit's ``_meet``)."""
    read: list[_Known] = []

    def one(known: _Known, last: bool) -> tuple[None, _Known | None]:
        read.append(known)
        return None, decided[len(read) - 1] if len(read) <= len(decided) else None

    _, made = refold(one, _Known(), limit, _meet)
    return read, made


def test_folds_the_audits_passes_take_a_cycles_meet_as_the_peers_rounds_do() -> None:
    """Seed 2955's rounds, as the audit's passes read with them (``_Known``): the pass after
    the one that repeats what an earlier pass read with reads with ``folds.cycle_meet``'s
    answer, the fixed point the peer's rounds take; and only once. The passes and the peer's
    rounds go by one rule (``folds.refold``)."""
    never = 1 << 63
    first = _Known()
    a = _Known(cuts={2: 1}, caps={1: (1, never, (), ())})
    b = _Known(caps={1: (1, never, (), ())})
    c = _Known(cuts={1: 2}, caps={0: (2, never, (), ())})
    read, made = _passes([a, b, c, a])
    assert read[:4] == [first, a, b, c] and made == 5
    meet = read[4]
    caps = {0: (2, never, (), ()), 1: (1, never, (), ())}
    assert (meet.cuts, meet.gaps, meet.caps) == ({}, {}, caps)
    rounds = [(k.cuts, k.gaps, k.caps) for k in (first, a, b, c)]
    assert cycle_meet(rounds, (a.cuts, a.gaps, a.caps)) == (meet.cuts, meet.gaps, meet.caps)
    # One meet: the passes after it that go back into the cycle read with what they decided.
    read, made = _passes([a, b, c, a, a, b])
    assert read[4] == meet and read[5:] == [a, b] and made == 7
    # The bound: no more passes than the limit, the last one's decision not read with.
    read, made = _passes([a, b, c, a, a, b], limit=3)
    assert read == [first, a, b] and made == 3


def test_folds_the_peers_rounds_take_a_cycles_meet_by_the_same_rule() -> None:
    """The peer's tentative fold goes round seed 2955's cycle by the same driver
    (``folds.refold``, with ``folds.cycle_meet`` as the meet); a fold that decides what it
    was made with stands at once."""
    never = 1 << 63
    empty: Round = ({}, {}, {})
    a: Round = ({2: 1}, {}, {1: (1, never, (), ())})
    b: Round = ({}, {}, {1: (1, never, (), ())})
    c: Round = ({1: 2}, {}, {0: (2, never, (), ())})
    decided = [a, b, c, a]
    read: list[Round] = []

    def one(given: Round, last: bool) -> tuple[None, Round | None]:
        read.append(given)
        return None, decided[len(read) - 1] if len(read) <= len(decided) else None

    assert refold(one, empty, REFOLDS + 1, cycle_meet) == (None, 5)
    assert read[4] == ({}, {}, {0: (2, never, (), ()), 1: (1, never, (), ())})
    assert refold(lambda given, last: (given, None), a, REFOLDS + 1, cycle_meet) == (a, 1)


def test_folds_a_fold_that_decides_what_it_was_made_with_stands() -> None:
    """A fold that says what the next is made with, and says just what it was made with, is a
    fixed point: made again it would make the same (``folds.refold``). The audit's passes said
    so by comparing what they decided with what they read with, and a pass with a cut imposed
    that its fold did not make read the logs again with the same, to the bound (soak seed 10:
    7 passes of every log where 4 do, below)."""
    read: list[int] = []

    def same(known: int, last: bool) -> tuple[int, int | None]:
        read.append(known)
        return known, known

    assert refold(same, 3, 10, lambda seen, new: None) == (3, 1)
    assert read == [3]


def test_folds_the_audit_reads_no_log_twice_with_the_same_cuts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Soak game 10 (3 players; a cut tried that the passes do not make): no pass of the
    audit's reads the logs with what the pass before it read with."""
    repeats: list[_Known] = []

    def watched(fold, start, limit, meet):  # type: ignore[no-untyped-def]
        read: list[_Known] = []

        def one(known: _Known, last: bool):  # type: ignore[no-untyped-def]
            if read and read[-1] == known:
                repeats.append(known)
            read.append(known)
            return fold(known, last)

        return refold(one, start, limit, meet)

    monkeypatch.setattr(auditor, "refold", watched)
    result = Simulation(SimConfig.soak(10, players=(2, 8))).run()
    report = audit_result(result)
    assert repeats == []
    assert report.passes == 4 and dict(report.dropped) == {0: 39, 2: 21}
