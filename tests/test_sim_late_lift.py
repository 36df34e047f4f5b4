"""A member's withdrawal that reaches the others only after they announced what they hold up
to the withdrawal a drop rests on: session 19's open stall, built on purpose
(docs/protocol.md §7.4, §13 *a late lift*; :class:`~p2p_nertz.sim.schedules.LateLift`).

``scripts/soak.py --late-withdrawals --seed 85`` (three players) is the game: the held votes
drop seat 0 at 19 (Lamport 86) where seat 0's withdrawal on seat 2 (its event 47, Lamport
115) is not held, resting on withdrawals at 124 and 125 that lift the caps it needs, and drop
seat 1 at 18 (87) where it is. Played as the seed plays it, every peer holds that withdrawal
before it decides, and every peer drops seat 1. The schedule delays the member's withdrawals
at each receiver until a peer has made its drop final (at most 3 s), and then that peer's
announcements to each other peer until that peer holds them: an asynchronous network may do
both, and nothing is lost for good.

Session 19's rule (a drop that rests on a later withdrawal is final once the stable time
without the member reaches it, ``finality.decided_at``) let a peer exclude seat 0 once
seats 1 and 2 announced what they hold up to 125, all but the withdrawal at 115; a peer that
got the withdrawal before it made the same drop final folded the other drop, and either
ended the game on it (a split) or waited for good for a cover of seat 0's feed that no peer
with the drop final gives (§9.2, *a drop made final bounds every announcement of the
member*).

Session 22's rule (§7.4, *the member's own feed*; §9.2, *the drop decided first*): such a
drop is final only once the member's own feed is held up to the withdrawal too, while the
member is not voted gone (``finality.lifted``, ``roster.voted_gone``), and of the drops the
cuts tried make, where a drop rests on a later withdrawal, the fold takes the one decided
first (``folds.decided_first``). No peer then makes the member's drop final while its
withdrawals are held (the schedule's ``final_by`` stays ``None``, where it named a peer
before), and every peer and the audit end alike. The games run a few seconds each (a stalled
one, before the rule, to the simulator's time limit).
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.state import Phase
from p2p_nertz.sim import run
from p2p_nertz.sim.mixes import late_withdrawals
from p2p_nertz.sim.network import SimResult
from p2p_nertz.sim.schedules import LateLift

pytestmark = pytest.mark.slow  # (simulated games to their time limit)


def _play(
    seed: int, players: int, member: int, first: int | None, held: set[tuple[int, int]]
) -> tuple[LateLift, SimResult]:
    schedule = LateLift(member, first=first)
    result = run(late_withdrawals(seed, players=(players, players)), schedule)
    if result.spec.seats != players or schedule.held != held:
        pytest.fail(f"the race is no longer built: held {schedule.held}")
    return schedule, result


def _game_goes_on(result: SimResult) -> None:
    """The run finished and every check of DESIGN.md §8 holds (termination, agreement of the
    peers still in, no split between any two peers, the audit of every log)."""
    assert result.violations == []
    assert result.finished


def test_late_lift_seed_85_the_peers_do_not_part() -> None:
    """Seat 0's withdrawal at 115 held back. Before the rule peer 1 made seat 0's drop final
    first (at 10.97 s), and peers 0 and 2 then took the withdrawal and dropped seat 1 at 18:
    both groups finished, peer 1 with seats 0 and 2 out, peers 0 and 2 with seat 1 out."""
    schedule, result = _play(85, 3, 0, None, {(0, 47)})
    assert schedule.final_by is None, "a peer made the drop final while the withdrawal was held"
    _game_goes_on(result)


def test_late_lift_seed_85_the_member_left_out_finishes() -> None:
    """The same, peer 2 first. Before the rule peers 1 and 2 ended the game without seat 0,
    and seat 0, holding its own withdrawal, folded seat 1 out and waited for the others'
    cover of it for good (its stable time 66, in play, to the end of the run)."""
    schedule, result = _play(85, 3, 0, 2, {(0, 47)})
    assert schedule.final_by is None, "a peer made the drop final while the withdrawal was held"
    _game_goes_on(result)


#: One game of each way the mix's games failed before the rule, a table size: with the
#: member's own feed undone (``finality.lifted``'s term in the exclusion, in a scratch copy)
#: all of them, and seeds 34 (a stall, as 4) and 113 (parted, as 78), fail alike at once (a
#: peer makes the drop final while the withdrawal is held); with ``folds.decided_first``
#: undone none of them does. 34 and 113 (1.1 and 1.0 CPU-s) added nothing to their case
#: (dropped in session 43).
@pytest.mark.parametrize(
    ("seed", "players", "member", "held"),
    [
        (4, 3, 0, {(0, 49), (0, 50)}),  # before: a stall, every peer in play at the end
        (78, 3, 2, {(2, 39)}),  # before: peer 1 parted from peers 0 and 2
        (40, 4, 0, {(0, 49), (0, 50)}),  # four players; before: peer 2 waited in play
    ],
)
def test_late_lift_other_games(
    seed: int, players: int, member: int, held: set[tuple[int, int]]
) -> None:
    """The other games of the mix that the schedule made fail before the rule (three
    players, seeds 0-119; four and five players, seeds 0-99), each held on the member that
    some peer's held votes dropped on a later withdrawal, whichever peer is first."""
    schedule, result = _play(seed, players, member, None, held)
    assert schedule.final_by is None, "a peer made the drop final while the withdrawal was held"
    _game_goes_on(result)


def test_late_lift_seed_85_the_audit_reads_the_peers_game() -> None:
    """Seat 2's withdrawals (25, 26) held back instead: every peer ends with seat 1 out at
    18 (a peer restored from its log too), and so does the audit of every log. It read
    seat 0 out at 19 before (session 20): seat 0's votes and withdrawals past its cut came
    in the logs after seat 2's withdrawal on seat 1 (Lamport 122), its feed no longer
    holding the fold back, and read after it they were missing from the trial of seat 1's
    cut that ``lifted_cuts`` asks, which every peer, holding them in order, made. The fold
    now reads the membership events in the game's order however late they come
    (``Roster.read``; docs/protocol.md §9.2)."""
    schedule = LateLift(2)
    result = run(late_withdrawals(85, players=(3, 3)), schedule)
    if schedule.held != {(2, 25), (2, 26)}:
        pytest.fail(f"the race is no longer built: held {schedule.held}")
    still_in = [p for s, p in enumerate(result.peers) if p and s not in p.final.dropped]
    if len(still_in) != 2 or {p.final.phase for p in still_in} != {Phase.OVER}:
        pytest.fail("the peers still in no longer end the game")
    if len({p.final.digest() for p in still_in}) != 1:
        pytest.fail("the peers still in part: the case is another one")
    assert result.audit is not None and result.audit.state is not None
    assert result.audit.state.dropped == still_in[0].final.dropped == {1: 18}
    _game_goes_on(result)


@pytest.mark.parametrize("seed", [93, 220])
def test_late_withdrawals_unscheduled_end_alike(seed: int) -> None:
    """``--late-withdrawals`` three players, seeds 93 and 220, as the seed plays them (no
    schedule): every invariant holds. Each has two fixed points whose choice a withdrawal
    signed after a view made its choice final moves, and each was broken by a mend of the
    late lift tried and not kept (§13): session 20's wait on the member's own feed (93: peer
    0 waited in play for good; 220: a split), and session 21's *drop decided first* with a
    guard on who announced the events it rests on (220: a split)."""
    result = run(late_withdrawals(seed, players=(3, 3)))
    assert result.spec.seats == 3
    _game_goes_on(result)


def test_late_lift_seed_76_a_drop_decided_before_the_withdrawals_stands() -> None:
    """``scan_late_lift.py``'s seed 76, seat 0's withdrawal 42 (Lamport 183) held: peer 1
    makes seat 0's drop at 35 (at 178) final without it, as the events before any later
    withdrawal decide it (no wait is asked). Peer 2, holding the withdrawal, which lifts a
    cap in the past, has the other fixed point too: seat 2 out at 33 (at 179, decided at
    183). Read against ``decided_at`` alone (208, the latest withdrawal after it), seat 0's
    drop looked decided later, peer 2 took seat 2's, dropped itself, and every peer waited
    in play; the drop a fold undoes is decided where the events before the withdrawals after
    it already make it (``roster.decided_before_lifts``), and every peer drops seat 0."""
    schedule, result = _play(76, 3, 0, None, {(0, 42)})
    assert schedule.final_by is not None, "no peer made the drop final while it was held"
    _game_goes_on(result)
