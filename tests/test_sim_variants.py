"""The seeds the ``--variants`` soak found (issue 13): every rule variant drawn at random.

``scripts/soak.py --variants --seed N --games 1`` replays each; the rules it drew are written
out here, so that a change to how the soak draws them keeps these games as they were.
"""

from __future__ import annotations

import pytest

from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Rules
from p2p_nertz.sim import (
    QUICK_TIMERS,
    Crash,
    Faults,
    Partition,
    SimConfig,
    SimResult,
    run,
)
from p2p_nertz.sim.invariants import audit_alone, audit_result, forked_events, forks, settled
from p2p_nertz.sim.logfiles import log_files
from p2p_nertz.sim.probes import no_held_chains
from p2p_nertz.ui.controller import TableController
from p2p_nertz.ui.view import TableView
from tests.peer_helpers import restored as restored_peer


class _Screen:
    """A front end that keeps nothing (the table's state is read from the controller)."""

    def show(self, view: TableView) -> None:
        del view


#: 5 players; seat 0 crashes and restarts, seat 3 forks (a Nerts call to seat 1 alone, timed
#: below its real event, a vote against the sleeping seat 1), seat 1 sleeps 8 s.
SEED_893 = Rules(work_piles=6, target=None, rounds=1, rotate_alone=True, jokers=2)
#: 4 players; a partition, seat 2 crashes and restarts, seat 0 is drawn to fork (its fork is
#: lost in the network) and signs votes after the game's end that never leave it.
SEED_993 = Rules(
    draw=1,
    work_piles=6,
    nerts_bonus=10,
    nerts_card_penalty=1,
    target=None,
    rounds=1,
    rotate_alone=True,
    jokers=2,
)

#: 5 players; seat 1 is dropped, readmitted, forks to seat 4 and is dropped again; seat 0
#: crashes at 16.4 s and restarts 7.2 s later with its log's end lost (it recovers its feed).
SEED_693 = Rules(draw=1, work_piles=5, nerts_bonus=25, nerts_card_penalty=1, target=None, rounds=3)

#: 3 players; a partition {0} | {1, 2} from 1 s to 9.7 s; seat 2 crashes at 3.9 s for good.
SEED_98 = Rules(nerts_card_penalty=1, target=None, rounds=2, rotate_alone=True, jokers=2)


def _soak(seed: int, rules: Rules) -> SimConfig:
    return SimConfig.soak(seed, rules=lambda _players, _rounds: rules)


def test_variants_seed_893_the_audit_follows_the_chain_the_votes_quote() -> None:
    """The cheater's real event at its forked seq is the vote that completes the drop of the
    member holding the other version, which is timed first. The peers count that vote (§9.2:
    the other version was never final anywhere); the simulator's own observer (an outside fold
    of the union, before the audit was its one reader) folded the other version, never
    dropped the sleeper, and waited in the reveal for its secret. (The cheater, seat 3, forks
    at its seq 13, its real event there the vote on seat 1, as before session 30; its drop's
    cut is 31, not 24: seat 0, restarted from its log, now waits for a member's word before it
    signs past its head, docs/protocol.md §9.6, and the votes on seat 3 come later.)"""
    result = run(_soak(893, SEED_893))
    assert forks(result) == {3}
    # Every peer holds both drops; the sleeper's is final everywhere. (The cheater's may
    # still be on its way to final when the run stops: the game is over for everyone, on
    # the same result, and the sleeper, voted out, follows the chain that goes on at once.)
    held = {tuple(sorted(p.tentative.dropped.items())) for p in result.peers if p is not None}
    assert held <= {((1, 9), (3, 31)), ((1, 9),)}
    assert all(p.final.dropped.get(1) == 9 for p in result.peers if p is not None)
    assert result.violations == []  # (run() checked every invariant, the audit with it)
    # The audit of every log folds the same chain: the drops the peers hold, the state and
    # totals they reached, the fork named, no honest result refused and no game left
    # unfinished.
    report = audit_result(result)
    assert report.dropped == ((1, 9), (3, 31))
    finals = settled(result)
    assert finals
    assert {f.digest() for f in finals} == {report.digest}
    assert {f.game.totals for f in finals} == {report.totals}
    assert report.state is not None and report.state.violations == ()
    kinds = {v.kind for v in report.violations}
    assert FindingKind.EQUIVOCATION in kinds
    assert not kinds & {FindingKind.REFUSED, FindingKind.INCOMPLETE}
    # The chain the votes quote decides it alone: without the chain the logs of the members
    # still in hold (``ForkWatch.held_chain``, which reaches the same chain here), the same.
    with no_held_chains():
        voted = audit_result(result)
    assert (voted.dropped, voted.digest, voted.totals) == (
        report.dropped,
        report.digest,
        report.totals,
    )


def test_variants_seed_993_a_cheaters_events_nobody_made_final_are_not_a_loss() -> None:
    """Events a cheater signed after the game's end, which the run does not wait to spread
    (no honest peer made them final), are not lost events (DESIGN.md §8: what honest peers
    sent). (Protocol version 2's game at this seed plays otherwise: the seed stays as a game
    with long faults and a cheater, whose invariants hold, §13 "Seeds move with the rules".)"""
    result = run(_soak(993, SEED_993))
    assert result.violations == []  # (run() checked every invariant, the audit with it)


def _stuck_on_a_dead_voter(result: SimResult) -> None:
    """Seats 0 and 1 are alive; the held votes drop seat 0 but its drop is final nowhere (it
    needs seat 2's events, and seat 2 is gone for good); nobody finished."""
    assert result.peers[2] is None
    alive = [p for p in result.peers if p is not None]
    assert len(alive) == 2
    for p in alive:
        assert 0 in p.tentative.dropped and p.final.dropped == {}
        assert p.final.phase is not Phase.OVER


@pytest.mark.slow
def test_variants_seed_98_a_drop_only_a_dead_voter_can_make_final_is_a_game_that_cannot_end() -> (
    None
):
    """Version 1: seats 1 and 2 vote seat 0 out (2's vote its last event, 1's completing the
    drop), then 2 dies. Before dying, 2 may have signed a withdrawal, timed between the two
    votes, never sent: 0 and 1 cannot tell that game from this one, and the two end
    differently (§13). The
    game waits; the simulator counts it as one that cannot end, not as a termination fault."""
    result = run(_soak(98, SEED_98))
    # (Version 2's game at this seed: 2's vote is an ack of what it held, and the drop it
    # waited on is final; the seed stays as a game with long faults, §13.)
    assert result.violations == []  # (run() checked every invariant, the audit with it)


def test_sim_a_voter_that_dies_after_its_vote_leaves_a_drop_that_cannot_be_final() -> None:
    """The class of seed 98, smaller: 2 votes 0 out first (1, cut off from 0 earlier, heard
    0's last events later, relayed by 2), 1 completes the drop half a second later, and 2
    crashes for good in between, just after its vote. Nothing of 2 is known up to the drop:
    it is final nowhere, and 2 can be removed only by an abandon, which needs the final fold
    to have two members (§9.3). (Version 1's case, 2's own vote completing the drop before
    its beats announced what 1 signed before it, no longer arises: the vote is an ack.)"""
    partitions = (
        Partition(1.0, 1.3, (frozenset({0, 2}), frozenset({1}))),
        Partition(1.3, 9.7, (frozenset({0}), frozenset({1, 2}))),
    )
    faults = Faults(delay=0.01, jitter=0.003, partitions=partitions, crashes=(Crash(2, 4.2, None),))
    config = SimConfig(players=3, seed=1, faults=faults, peer=QUICK_TIMERS, max_time=60.0)
    result = run(config)
    _stuck_on_a_dead_voter(result)
    assert result.violations == []  # (run() checked every invariant, the audit with it)
    # The table says what the game waits for, not only that an abandon is refused.
    peer = result.peers[1]
    assert peer is not None
    why = peer.abandon_answer(result.time).why
    assert why is not None
    assert "(seat 0) out is final only with" in why and "(seat 2) comes back" in why
    # ... and the table's abandon key says it in a player's words (one answer, not a second
    # rule): who waits for whom, without the core's votes, finality and events.
    names = tuple(m.name for m in peer.spec.members)
    table = TableController(names, 1, _Screen())
    assert table.press("a", peer, result.time) == []
    status = table.keys.status
    assert status.startswith("cannot abandon: ") and status != f"cannot abandon: {why}"
    assert f"{names[0]}'s vote out waits on {names[2]}, who has gone: wait, or" in status
    assert not any(word in status for word in ("member", "final", "event", "seat"))


@pytest.mark.slow
def test_variants_seed_693_a_recovered_log_audits_alone_to_what_its_peer_made_final() -> None:
    """Seat 0's log, cut and recovered, holds seat 1's events of the readmission late (after
    the events of others timed long after them). The audit of that log alone passed them:
    while its fold stepped over seat 1's readmission it still counted seat 1 as dropped (the
    fold changes its set of dropped members in place, and the audit compared the set with
    itself), so seat 1's events 19-31 came after the fold had gone by, never counted, and the
    round scored another way (an unavailable card, three results refused, a split with every
    other log). Alone, the log must score what its peer, and ``Peer.restore`` of it, did."""
    result = run(_soak(693, SEED_693))
    assert forks(result) == {1}
    assert [seat for seat, _ in result.lost_own] == [0]
    peer = result.peers[0]
    assert peer is not None and peer.final.phase is Phase.OVER
    restored = restored_peer(result, 0)
    assert restored.tentative.digest() == peer.final.digest()
    files = log_files(result)
    report = audit_alone(result, 0, files)
    # (Session 14: (-14, -26, 77, -8, 35) before the members answered seat 0's recovery wants
    # with wants of their own, §9.6, which moves the simulator's later draws.)
    assert report.totals == peer.final.game.totals == (-9, -31, 71, -1, 39)
    assert report.digest == peer.final.digest()
    # What stays is the cheater's own: its fork (and, in version 1's game, the false call on
    # its forked seq, which the version 2 game never counts).
    assert {v.seat for v in report.errors} == {1}
    assert FindingKind.EQUIVOCATION in {v.kind for v in report.errors}
    # So does every other honest log alone, as its peer made final.
    for seat, other in enumerate(result.peers):
        if seat in (0, 1) or other is None:
            continue
        alone = audit_alone(result, seat, files)
        assert alone.digest == other.final.digest() == peer.final.digest()
    assert result.violations == []  # (run() checked every invariant, the audit with it)


#: 3 players; a partition {2} | {0, 1} from 4.6 s to 8.7 s, seat 0 forks at 5.2 s (a Nerts
#: call to seat 1 alone), seat 1 crashes at 8.1 s for good, seat 2 sleeps 6.7 s from 9.8 s.
SEED_5066 = Rules(
    draw=1, work_piles=5, nerts_card_penalty=1, target=None, rounds=2, rotate_alone=True, jokers=1
)


def test_variants_seed_5066_a_dead_members_vote_past_its_cut_decides_nothing() -> None:
    """Seat 1, cut off with the cheater, holds its fork and votes it out (equivocation, its
    seq 25, timed 123), then seat 2 out (silent, seq 26, 137), and crashes for good: those
    events are in its log alone. Seats 0 and 2 vote seat 1 out (163, 167) and make its drop
    final at cut 23. The audit of every log holds seq 25 and 26: seat 1's vote, with seat 2
    voted out by the same voter (soak seed 224's rule), drops the cheater at 137 on its own,
    so seat 0's vote on seat 1 no longer counts and seat 1 stays in. Seat 2's later
    events then read as cheats. Without seat 1's seq 25 in its log, the audit agrees with the
    peers: the other fixed point. Unlike seed 2086, no peer can ever hold that vote (its
    author is dead), so the drop cannot wait for it. No other member ever announced holding
    seat 1's events past 23, so they decide nothing: the fold imposes the cut the votes name
    (``Folds._cut_unheld``, the audit's ``_cut_unheld``, §9.2).

    Since session 14 a member answers a want for the asker's own feed with its word (§9.6), which
    moves this seed's later draws: seat 1's votes now reach seat 2 before seat 1 dies, so the
    honest seat 2 is left with the cheater and a member gone for good, and waits (the case of
    soak seed 224). The shape above is kept, on folds built by hand, by
    ``tests/test_folds_unheld.py`` (``"none"``) and ``tests/test_folds_cut_unheld.py``; here the
    game must still hold every invariant, the cheater proven."""
    result = run(_soak(5066, SEED_5066))
    assert result.peers[1] is None
    assert forks(result) == {0}
    assert result.violations == []  # (run() checked every invariant, the audit with it)


def test_soak_seed_11030_a_fork_past_the_cut_blames_the_cheater_alone() -> None:
    """5 players; seat 2 asleep 0.7-10.6 s and dropped at cut 5 meanwhile, forks its seq 6 to
    seat 0 alone (a Nerts call). Until session 22 its real seq 6 was a vote for silence it
    signed on the first message it read on waking, while it still counted itself in; it was
    readmitted with a gap (5, 14), seat 0 gave its copy up for the chain the readmission
    quoted and proved the fork when the real seq 6 came (``Feeds.given_up``, §9.4; that
    class is ``tests/test_sim_given_up_forks.py``'s, re-found there at 5 players). A waker
    now votes nobody out before it has listened (§9.2, *a member woken from a sleep*): seat 2
    reads its drop first, signs its real seq 6 past its cut, and stays out. The fork is
    still in seat 0's log, every honest peer ends the same, and the audit of every log, and of
    each log alone, blames seat 2 alone."""
    result = run(SimConfig.soak(11030))
    assert forked_events(result) == {(2, 6)}
    honest = [p for p in result.peers if p is not None and p.seat != 2]
    assert {tuple(p.final.dropped.items()) for p in honest} == {((2, 5),)}
    assert len({p.final.digest() for p in honest}) == 1
    assert result.violations == []  # (run() checked every invariant, the audit with it)
    files = log_files(result)
    report = audit_result(result, files)
    assert report.dropped == ((2, 5),)
    assert {v.seat for v in report.errors} == {2}
    assert FindingKind.EQUIVOCATION in {v.kind for v in report.errors}
    for seat in range(len(files)):
        alone = audit_alone(result, seat, files)
        peer = result.peers[seat]
        assert {v.seat for v in alone.errors} <= {2}, seat
        assert peer is None or seat == 2 or alone.digest == peer.final.digest(), seat


#: 5 players; seat 0 forks at 5.0 s (its seq 23, to seats 2 and 4 alone), seat 3 sleeps from
#: 5.0 s to 11.7 s, a partition {0, 1, 3} | {2, 4} from 7.6 s to 15.9 s.
SEED_5468 = Rules(draw=1, work_piles=5, nerts_bonus=25, target=None, rounds=1, jokers=1)


def test_variants_seed_5468_a_cut_and_the_caps_of_another_fixed_point() -> None:
    """Found by session 13's soak (``--variants`` seeds 5400-5499). Seat 3, back from its
    sleep on the side of the cheater, signs votes on seats 0, 1 and 2 (its seq 23-25, all
    logs) and withdraws the one on seat 1 and votes seat 0 out on proof (seq 28, 29: in the
    logs of seats 0, 1 and 3 alone). Seats 1, 2 and 4 vote seat 3 out counting 22 (Lamport
    210), then seats 2 and 4 vote seat 1 out counting 26 (230). Seats 0, 1 and 3 drop seat 3
    there (and the cheater with it). Seats 2 and 4 folded a drop of seat 1 at 26 too: the
    roster's fold without seat 1's events past 26 (``Roster._without``) kept seat 3's vote on
    seat 1 (seq 24), past seat 3's cut, and with it seat 1 was out, and seat 3 with it. But
    seat 3's drop needs seat 1's vote on it (seq 27), past seat 1's cut: the fold made again
    with both cuts dropped neither, the folds alternated, and the last of them (both drops)
    let the stable time pass both members' events as if they were out, where the final fold,
    skipping them, dropped no one. Seat 3 was never dropped there, its later events too late
    for ever, and the game never ended. A member dropped already counts for nothing past its
    cut in that roster's fold either (§9.2): seat 1's drop needs seat 3's vote past its cut,
    so it is no drop, and every peer drops seats 0 and 3 at 22.
    (``tests/test_folds_dropped_past_cut.py``: the class.)"""
    result = run(_soak(5468, SEED_5468))
    assert forks(result) == {0}
    assert result.violations == []  # (run() checked every invariant, the audit with it)
    alive = [p for p in result.peers if p is not None]
    assert len(alive) == 5
    assert {tuple(sorted(p.final.dropped.items())) for p in alive} == {((0, 22), (3, 22))}
    honest = [p for seat, p in enumerate(alive) if seat not in (0, 3)]
    assert all(p.final.phase is Phase.OVER for p in honest)
    assert len({p.final.digest() for p in honest}) == 1
    assert result.audit is not None  # (the audit of every log run() made)
    assert result.audit.digest == honest[0].final.digest()
