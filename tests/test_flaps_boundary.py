"""A flap fault at a round's boundary: every peer and the audit find it at the same event, or
none does (docs/protocol.md §9.4, *too many flaps*, *at a round's end*).

The count is per round (:func:`p2p_nertz.protocol.flaps.withdrawn`, called by the game fold
for each withdrawal it reads, with the round its fold is in then). Two folds could count a
member's withdrawal past the limit in different rounds, one finding the fault and the other
not, only if one of these held:

1. they read the withdrawal on different sides of the event that ends the round. The fold
   reads events in the total order ``(lamport, seat, seq)``, not as they arrive, and a round
   ends at an event of that order: the one that makes its last result owed present (a result,
   or a drop of the last member that owed one). A peer that takes the round's end before the
   withdrawal, though the withdrawal is ordered first, folds them tentatively in the wrong
   order and again in the right one once the withdrawal is held: its final fold reads events
   only once none still to come can precede them (§7.1). So this holds for no two final
   folds, and the audit's fold, which folds in the same order once every feed has passed an
   event, reads them as the peers do;
2. they count a different set of the member's withdrawals: one counts a withdrawal the other
   does not, or one counts a withdrawal and the other a withdrawal of another feed. The fold
   counts only the withdrawals it folds, and of a member dropped or readmitted only those on
   the member's side of its cut and its readmission (``Roster.counts``, ``GameState.observe``);
   the cut and the readmission are the roster's, the same in every final fold (agreement),
   and no event past a cut is final anywhere before the drop (coverage, §7.1);
3. the round's end itself depends on the count: a fault bars the member's later votes, and a
   vote can drop a member and so end a round (its last result owed). A withdrawal is no vote
   against anyone, barring comes only after the fault, and the votes barred are signed after
   the withdrawal that passed the limit, so the end of the round in which the fault is
   counted is read after the fault in every fold, and the count before it never depends on
   it.

None holds, so no split. The tests build the orders that come nearest (:mod:`tests.
flap_boundary_helpers`: a flapper timed against the end of round 1, ``before`` flaps in its
play and the last ``after`` at the boundary), at 2, 3 and 4 players:

- the withdrawal past the limit ordered *before* the round's end and delivered to every other
  peer *after* it: the flapper signs it just after its own result, the others hold it back
  until their tentative fold has ended the round, and one member hears nothing for a while
  once it holds every reveal, so it signs the result that ends the round later in the order;
- the same with the table split in two groups for a while instead (a partition), the
  withdrawal then on either side of the round's end;
- the flapper's own result ends the round (it signs it last, once it holds every other one),
  with the withdrawal just before it (the fault) and just after it (the first of round 2);
- a flapper dropped in round 1 (asleep past ``drop_after``) and readmitted a round later,
  that flaps past the limit while it is out (none of which counts), then 16 or 17 times in
  the round it is back.

Each asserts the fault against :func:`~tests.flap_boundary_helpers.reference_fault` (worked
out from the signed events and the events that ended the rounds, not by the fold), that every
peer's final fold (the flapper's too), the audit of every log and the audit of each log alone
find that fault at that event or none, and that the invariants hold (the finals agree, every
honest member finishes, nobody honest is named). Each game runs under a second.
"""

from __future__ import annotations

import pytest

from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.flaps import FLAP_LIMIT
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, SimConfig, SimResult, check
from p2p_nertz.sim.cheats import VoteFlapper
from p2p_nertz.sim.invariants import audit_alone
from p2p_nertz.sim.logfiles import log_files
from p2p_nertz.sim.network import Freeze
from tests.flap_boundary_helpers import (
    BoundaryFlapper,
    BoundarySim,
    LateFlaps,
    When,
    reference_fault,
    round_ends,
    withdrawals,
)


def _play(
    players: int,
    cheat: BoundaryFlapper,
    *,
    rounds: int = 2,
    schedule: LateFlaps | None = None,
    freezes: tuple[Freeze, ...] = (),
    seed: int = 1,
) -> tuple[BoundarySim, SimResult]:
    # (The VoteFlapper of no flaps signs nothing: it makes the seat a cheater to the checks.)
    marker = VoteFlapper(cheat.seat, cheat.target, 0)
    config = SimConfig(
        players=players,
        seed=seed,
        rules=Rules(target=None, rounds=rounds),
        faults=Faults(delay=0.005, jitter=0.002, deck_cheats=(marker,), freezes=freezes),
        peer=QUICK_TIMERS,
        max_time=120.0,
    )
    sim = BoundarySim(config, cheat, schedule)
    result = sim.run()
    result.violations = check(result)
    return sim, result


def _found_alike(result: SimResult, cheat: BoundaryFlapper, fault: int | None) -> None:
    """Every peer's final fold, the audit of every log and the audit of each log alone find
    the flapper at ``fault`` (its event) or at no fault; the invariants hold."""
    assert result.finished
    assert result.violations == []
    expected = {} if fault is None else {cheat.seat: fault}
    for seat, peer in enumerate(result.peers):
        assert peer is not None
        assert peer.final.flaps.faults == expected, f"peer {seat}"
    report = result.audit
    assert report is not None and report.state is not None
    assert report.state.flaps.faults == expected
    named = [(f.seat, f.seq) for f in report.errors if f.kind is FindingKind.FLAP_FAULT]
    assert named == list(expected.items())
    files = log_files(result)
    for seat in range(len(files)):
        alone = audit_alone(result, seat, files)
        assert alone.state is not None
        assert alone.state.flaps.faults == expected, f"the audit of peer {seat}'s log alone"
    if fault is not None and result.spec.seats > 2:
        # The others voted it out on that fault (with two, nobody votes: flaps.due).
        for seat, peer in enumerate(result.peers):
            assert peer is not None
            if seat != cheat.seat:
                assert cheat.seat in peer.final.dropped
                reasons = {v.reason for _, v in peer.final.votes.get(cheat.seat, ())}
                assert reasons == {DropReason.FLAPPING}


def _reference(result: SimResult, cheat: BoundaryFlapper) -> int | None:
    honest = next(p for s, p in enumerate(result.peers) if p is not None and s != cheat.seat)
    final = honest.final
    keys = withdrawals(result, cheat.seat, cheat.target)
    ends = round_ends(result, final)
    out = None
    if cheat.seat in final.gaps:
        ((cut, _),) = final.gaps[cheat.seat]
        rounds = (*final.past_rounds, final.round)
        back = next(r for r in rounds if cheat.seat in r.seats and r.number > 1)
        out = (cut, ends[back.number - 2])  # (its round back began as the one before ended)
    return reference_fault(keys, ends, out)


def _alike(case: tuple[int, int, BoundaryFlapper, LateFlaps | None]) -> None:
    """The check of every test here on any game: ``(seed, players, cheat, schedule)`` played
    for two rounds, the fault found alike and the reference's (``scripts/scan_flap_boundary.py``
    runs it on other seeds, where the race each test builds may not be built)."""
    seed, players, cheat, schedule = case
    _, result = _play(players, cheat, schedule=schedule, seed=seed)
    _found_alike(result, cheat, _reference(result, cheat))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_flaps_boundary_a_withdrawal_ordered_before_the_end_and_delivered_after_it(
    players: int,
) -> None:
    """Seat 0 flaps 16 times in round 1's play, then once more just after its own result;
    every other peer takes that withdrawal only once its tentative fold has ended round 1,
    and seat 1, deaf for 0.5 s from when it holds every reveal, signs the result that ends
    the round after the withdrawal in the order: the withdrawal is the fault, in round 1."""
    cheat = BoundaryFlapper(0, 1, FLAP_LIMIT, 1, When.AFTER_OWN_RESULT)
    schedule = LateFlaps(deaf=1)
    sim, result = _play(players, cheat, schedule=schedule)
    (flapping,) = sim.flapping
    (last,) = flapping.withdrawals
    final = result.peers[1].final  # type: ignore[union-attr]
    end = round_ends(result, final)[0]
    key = withdrawals(result, 0, 1)[-1]
    if not (key < end and key[2] == last):
        pytest.fail(f"the race is no longer built: withdrawal {key}, round 1 ended at {end}")
    if schedule.late != {(seat, last) for seat in range(1, players)}:
        pytest.fail(f"the race is no longer built: taken after the round's end {schedule.late}")
    fault = _reference(result, cheat)
    assert fault == last
    _found_alike(result, cheat, fault)


@pytest.mark.parametrize(
    ("players", "groups", "before"),
    [(3, ({0}, {1, 2}), False), (4, ({0, 1}, {2, 3}), True)],
)
def test_flaps_boundary_a_partition_at_the_round_end(
    players: int, groups: tuple[set[int], ...], before: bool
) -> None:
    """As above, with no member deaf: the table is split in ``groups`` for 0.5 s from when
    seat 0 signs its 17th withdrawal, just after its own result. At three players, seat 0
    alone, the others' results end the round before the withdrawal in the order (no fault);
    at four, two against two, the other side's results come after it (the fault, in round
    1). Either way every other peer took the withdrawal after its tentative fold had ended
    the round."""
    cheat = BoundaryFlapper(0, 1, FLAP_LIMIT, 1, When.AFTER_OWN_RESULT)
    schedule = LateFlaps(split=tuple(frozenset(g) for g in groups))
    sim, result = _play(players, cheat, schedule=schedule)
    (flapping,) = sim.flapping
    (last,) = flapping.withdrawals
    end = round_ends(result, result.peers[1].final)[0]  # type: ignore[union-attr]
    key = withdrawals(result, 0, 1)[-1]
    built = key[2] == last and (key < end) is before
    if not built or schedule.late != {(seat, last) for seat in range(1, players)}:
        pytest.fail(f"the race is no longer built: {key}, ended at {end}, late {schedule.late}")
    fault = _reference(result, cheat)
    assert fault == (last if before else None)
    _found_alike(result, cheat, fault)


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("when", [When.BEFORE_OWN_END, When.AFTER_OWN_END])
def test_flaps_boundary_the_flappers_own_result_ends_the_round(players: int, when: When) -> None:
    """The flapper (the last seat) flaps 16 times in round 1's play and signs its result
    last, once it holds every other one: its result ends round 1 in every fold. Its 17th
    withdrawal just before that result is the fault; just after it, the first of round 2,
    no fault."""
    seat = players - 1
    cheat = BoundaryFlapper(seat, 0, FLAP_LIMIT, 1, when)
    sim, result = _play(players, cheat)
    (flapping,) = sim.flapping
    (last,) = flapping.withdrawals
    final = result.peers[0].final  # type: ignore[union-attr]
    end = round_ends(result, final)[0]
    # (Just before: its vote, the withdrawal, its result; just after: the result, its vote,
    # the withdrawal.)
    if end[1] != seat or last - end[2] != (-1 if when is When.BEFORE_OWN_END else 2):
        pytest.fail(f"the race is no longer built: round 1 ended at {end}, the 17th at {last}")
    fault = _reference(result, cheat)
    assert fault == (last if when is When.BEFORE_OWN_END else None)
    _found_alike(result, cheat, fault)


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("after", [FLAP_LIMIT, FLAP_LIMIT + 1])
def test_flaps_boundary_a_flapper_readmitted_counts_from_its_round_back(
    players: int, after: int
) -> None:
    """The flapper flaps 10 times in round 1's play, sleeps 3.5 s and is dropped for silence,
    flaps 17 times while out (past its cut: none counts), is readmitted at a round's start,
    then flaps ``after`` times at once: a fault at the 17th of its round back, none at 16."""
    seat = players - 1
    cheat = BoundaryFlapper(seat, 0, 10, after, When.ROUND_TWO, out=FLAP_LIMIT + 1)
    sim, result = _play(players, cheat, rounds=3, freezes=(Freeze(seat, 1.5, 3.5),))
    (flapping,) = sim.flapping
    final = result.peers[0].final  # type: ignore[union-attr]
    if seat not in final.readmitted_at or len(flapping.out) != FLAP_LIMIT + 1:
        pytest.fail(f"the case is no longer built: readmitted {final.readmitted_at}")
    fault = _reference(result, cheat)
    assert fault == (flapping.withdrawals[-1] if after > FLAP_LIMIT else None)
    _found_alike(result, cheat, fault)
    assert max(final.flaps.peaks.values()) == min(after, FLAP_LIMIT + 1)
