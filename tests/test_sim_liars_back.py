"""Liars that lie from their return: restored from their log, or readmitted after a cut that
had them voted out (``liar_games.game(back=…)``, ``scripts/soak.py --liars --back``; session
36). A restored peer rebuilds its state from its log and a readmitted one asks to rejoin and is
readmitted (docs/protocol.md §9.6, §9.8): two more places where what a member signs is taken
on trust of a kind, beside its join (``join=True``, session 35).

Each seed below plays one lie (seed ``i`` plays ``LIES[i % len(LIES)]``), every liar lying at
every chance from its return on, on a noisy network; the invariants must hold as in
``tests/test_sim_liars.py``. The seeds are ones whose liar came back and lied (at two players a
liar cut off past ``drop_after`` is abandoned, not readmitted, and tells nothing).
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.audit import FindingKind
from p2p_nertz.protocol.bodies import parse_body
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.protocol.fold_values import Event, RefusalCode
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import GameState
from p2p_nertz.sim.invariants import outcomes, settled
from p2p_nertz.sim.liar_games import RESTORE_AFTER, RETURNS, LiarRun, game, simulate
from p2p_nertz.sim.liars import Lie

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)


def _play(seed: int, back: str, *, two: bool = False) -> LiarRun:
    config, liars = game(seed, two=two, back=back)
    return simulate(config, liars)


@pytest.mark.parametrize("back", RETURNS)
def test_liars_back_keeps_a_seeds_table_and_lies(back: str) -> None:
    # (The return's draws are the return's own: a seed replays the soak's other mixes' table.)
    for seed in range(8):
        plain, liars = game(seed, two=True)
        returning, lying = game(seed, two=True, back=back)
        assert returning.players == plain.players
        assert [(x.seat, x.lie, x.times) for x in lying] == [
            (x.seat, x.lie, x.times) for x in liars
        ]
        assert all(x.rate == 1.0 for x in lying)


def test_liars_back_is_one_of_the_returns() -> None:
    with pytest.raises(ValueError, match="restore"):
        game(1, back="elsewhere")


# Seeds whose liar is restored 0.5 s (under suspect_after), 2 s (under drop_after) and 6 s
# (past it: voted out, restored, readmitted) after its crash, at 2 to 4 players, and lies.
@pytest.mark.parametrize("seed", [0, 1, 2, 5, 6, 11, 12, 18, 29])
def test_liars_lying_from_a_restore_break_no_invariant(seed: int) -> None:
    run = _play(seed, "restore")
    assert run.result.crashes == 1
    assert sum(run.told.values()) > 0  # (it lied after it was restored: at=its restart)
    assert run.result.violations == []


def test_liars_the_restores_cover_every_length() -> None:
    lengths = set()
    for seed in (0, 1, 2, 5, 6, 11, 12, 18, 29):
        config, liars = game(seed, back="restore")
        (crash,) = config.faults.crashes
        lengths.add(crash.restart_after)
        assert liars[0].at == crash.at + (crash.restart_after or 0.0)
    assert lengths == set(RESTORE_AFTER)


# Seeds whose liar is cut off, voted out, heard again and readmitted at round 2, and lies.
@pytest.mark.parametrize("seed", [1, 2, 7, 9, 10, 12])
def test_liars_lying_from_a_readmission_break_no_invariant(seed: int) -> None:
    run = _play(seed, "readmit")
    assert "rejoin" in outcomes(run.result)
    assert sum(run.told.values()) > 0
    assert run.result.violations == []


@pytest.mark.parametrize("back", RETURNS)
@pytest.mark.parametrize("seed", [101, 102])
def test_liars_two_liars_coming_back_break_no_invariant(seed: int, back: str) -> None:
    run = _play(seed, back, two=True)
    assert run.result.violations == []


def _play_readmit(seed: int, two: bool) -> LiarRun:
    config, liars = game(seed, two=two, back="readmit", players=(3, 4) if two else (2, 4))
    return simulate(config, liars)


# Seeds whose liar, cut off, signed a second join before it learned of its drop (before the
# votes that cut it, in the total order) and was readmitted at it, its rejoin request: the
# peers' final folds never counted it, the audit's counted it and refused it as a second
# join, until both read one rule (folds.unreadmitted, docs/protocol.md §9.8; session 36).
# One liar, and seed 16 with two (the other liar's vote_twice beside it). One seed a table
# size: 212 at three players, 156 at four (0.6 and 1.0 CPU-s); 240 (three) and 268 (four)
# are left to the scans: with folds.unreadmitted undone the four part alike, each audit
# refusing the join (bad_join) and reaching another state (session 41).
@pytest.mark.parametrize(("seed", "two"), [(156, False), (212, False), (16, True)])
def test_liars_a_join_before_the_drop_readmitted_at_leaves_the_audit_with_the_peers(
    seed: int, two: bool
) -> None:
    run = _play_readmit(seed, two)
    assert "rejoin" in outcomes(run.result)
    assert sum(run.told.values()) > 0
    assert run.result.violations == []
    report = run.result.audit
    assert report is not None
    assert all(v.code is not RefusalCode.BAD_JOIN for v in report.state.violations)


# Seeds whose claim_after_leave liar, cut off and voted out for silence, left before it
# learned of its drop: its leave came before the votes that cut it in the total order, past
# their count. The peers, holding its feed only up to the cut, made the drop final without
# the leave, which never counted; the audit read the leave first, had the liar out at it (its
# claims up to there in the lake, the votes on a member gone) and reached another lake, or
# (seed 56, two liars: seat 0 cut off in turn and readmitted) refused the honest members'
# moves on it. One rule now (roster._undo_leaves, docs/protocol.md §9.3; session 37): a leave
# past the cut of votes that drop its author without it never counts. With two liars, the
# other liar's lie told too, and left out.
@pytest.mark.parametrize(
    ("seed", "two", "quiet"), [(297, False, None), (56, True, None), (56, True, 0)]
)
def test_liars_a_leave_before_the_drop_past_its_cut_leaves_the_audit_with_the_peers(
    seed: int, two: bool, quiet: int | None
) -> None:
    config, liars = game(seed, two=two, back="readmit", players=(3, 4) if two else (2, 4))
    if quiet is not None:
        liars = tuple(
            dataclasses.replace(liar, times=0) if i == quiet else liar
            for i, liar in enumerate(liars)
        )
    run = simulate(config, liars)
    assert run.result.violations == []
    (leaver,) = [x.seat for x in liars if x.lie is Lie.CLAIM_AFTER_LEAVE]
    assert run.told[leaver] > 0
    honest = [p for p in run.result.peers if p is not None and p.seat not in config.faults.cheaters]
    (cut,) = {p.final.dropped[leaver] for p in honest}
    (drop_at,) = {p.final.drop_at[leaver] for p in honest}
    assert all(leaver not in p.final.roster.left for p in honest)
    # (The case: the liar's leave, past the cut, before the votes that made it.)
    (leave,) = [m for m in honest[0].events(leaver) if m.kind is Kind.LEAVE]
    assert leave.seq > cut and leave.lamport < drop_at
    report = run.result.audit
    assert report is not None
    assert report.state.dropped[leaver] == cut and leaver not in report.state.roster.left


# Two liars, both telling claim_after_leave (``soak.py --liars --lie claim_after_leave``):
# cut off in turn, the cuts overlapping, one liar's vote past the cut the others give it
# completes the other's drop, and that drop undoes its own (§9.2, the soak seed 53 class).
# The peers, holding neither vote past a cut, drop the leaver at the count; the audit's
# first pass read the leaver's vote first, dropped the other liar by it, and its leave then
# kept it out of the cuts tried for events nobody still in holds (``Unheld.cuts``: a member
# out, by a leave too). A member that left is tried as well now (its leave past the count
# is one of those events); seed 2: seat 3 cut at 13 by the peers, left at 46 by the audit.
# Seeds 2 and 13 part on main; 8 parted with the leave's rule (roster._undo_leaves) alone.
# (Seed 19, three players, the two liars a majority, parts on main and here alike: §13.)
# Seeds 8 and 13 here (0.9 and 2.8 CPU-s); seed 2 (5.1 CPU-s), at four players as they are,
# parts as 13 does with both of folds.py's "a member that left is tried" guards undone (the
# audit refuses the honest members' round-2 events and reaches another state; session 41):
# the scans play it.
@pytest.mark.parametrize("seed", [8, 13])
def test_liars_two_leavers_the_cut_of_one_that_left_is_tried(seed: int) -> None:
    config, liars = game(
        seed, two=True, back="readmit", players=(3, 4), lies=(Lie.CLAIM_AFTER_LEAVE,)
    )
    run = simulate(config, liars)
    assert sum(run.told.values()) > 0
    assert run.result.violations == []


def test_liars_two_leavers_a_log_without_the_lift_says_its_leaves_end_is_provisional() -> None:
    # Seed 75, three players, both liars leaving: seat 2 leaves (seq 18, at 65) past the
    # count (9) of the votes of seat 0 (at 70) and seat 1 (72) on it; seat 0's vote counts
    # only once seat 1 withdraws its vote on seat 0 (seq 25, at 104), which capped it (§9.2,
    # a withdrawal lifts its cap in the past too). The peers and the audit of every log undo
    # the leave (seat 2 dropped at 9, seat 0's leave at 106 then ending the game, seat 2 among
    # the winners); seat 0's log, without the withdrawal, keeps it (seat 2 left, not a
    # winner). That log's view ends the game by seat 0's own leave, which no member still in
    # announced holding: provisional, as seat 0's table said (state.leave_unannounced, the
    # audit's form of leave_pending; session 39), so the two views are a provisional split
    # (a notice, the union decides), no longer a split result.
    config, liars = game(
        75, two=True, back="readmit", players=(3, 4), lies=(Lie.CLAIM_AFTER_LEAVE,)
    )
    run = simulate(config, liars)
    assert run.result.violations == []
    report = run.result.audit
    assert report is not None
    kinds = {v.kind for v in report.violations}
    assert FindingKind.SPLIT_RESULT not in kinds
    assert FindingKind.PROVISIONAL_SPLIT in kinds


def _play_one_liar(seed: int, two: bool, lying: int | None) -> LiarRun:
    """The readmit game of ``seed``, with only liar ``lying`` lying (the other's lie left
    out), or every liar if ``None``."""
    config, liars = game(seed, two=two, back="readmit", players=(3, 4) if two else (2, 4))
    if lying is not None:
        quiet = [dataclasses.replace(liar, times=0) for liar in liars]
        quiet[lying] = liars[lying]
        liars = tuple(quiet)
    return simulate(config, liars)


# Seed 33 (two liars at three players; seat 1 lies, move_card, after its readmission): its
# moves refused, the readmitted liar voted seats 0 and 2 out *withheld* (its seqs 80 and 81,
# counting their feeds to 157 and 145), and they voted it out counting 81 (their seqs 161 and
# 149, past those counts). The peers' folds dropped it at 81; the audit capped both votes by
# the liar's own, kept it in and refused its rejoin request (82) as a second join: its
# passes had taken the caps of the liar's votes before they found its readmission. A round
# that finds a readmission anew folds next from no caps, as the peers' tentative fold does
# (folds.fresh_caps, docs/protocol.md §9.2; session 37). With the other liar's lie too.
@pytest.mark.parametrize(("seed", "two", "lying"), [(33, True, 0), (33, True, None)])
def test_liars_a_readmitted_liar_voting_every_member_out_is_voted_out_in_the_audit_too(
    seed: int, two: bool, lying: int | None
) -> None:
    run = _play_one_liar(seed, two, lying)
    assert "rejoin" in outcomes(run.result)
    assert run.told[1] > 0
    assert run.result.violations == []
    report = run.result.audit
    assert report is not None and report.state is not None
    peers = settled(run.result)
    assert peers and all(1 in final.dropped for final in peers)
    assert report.state.dropped == peers[0].dropped
    # (And a peer's own events folded whole, as after a restore from its log: the same.)
    for seat, peer in enumerate(run.result.peers):
        if peer is not None and seat != 1 and peer.final in peers:
            assert _folded_whole(peer).dropped == peer.final.dropped
    assert all(v.code is not RefusalCode.BAD_JOIN for v in report.state.violations)


def _folded_whole(peer: Peer, upto: int | None = None) -> GameState:
    """The tentative fold of every event ``peer`` holds (timed up to ``upto``, if given),
    from a fresh final fold: the game its log folded at once gives (a peer restored from
    it; the audit's view of it)."""
    spec = peer.final.spec
    events = [
        Event(q, m.seq, m.lamport, m.kind, parse_body(m.kind, m.body, spec.seats), m.id)
        for q in range(spec.seats)
        for m in peer.events(q)
        if upto is None or m.lamport <= upto
    ]
    folds = Folds(GameState(spec))
    for event in sorted(events, key=lambda e: e.key):
        folds.add(event, 0)
    return folds.tentative


# Seeds 186 (seq_skip; seat 0's lie alone does it) and 196 (frontier_ahead with beat_head, the
# two together), four players, both liars cut off at once: the honest peers parted (a split).
# Seat 0 votes seats 1 to 3 out and seat 1 seats 0, 2 and 3, each vote capping the others'
# votes on its author; the drops have two fixed points, seat 0 out at 14 (decided at 118, its
# capping votes lifted by seat 1's withdrawals at 194) and seat 1 out at 16 (at 123), whose
# votes count only once seat 0's drop, on proof of the fork its lie made, lifts the cap of
# seat 0's vote on seat 2 (a member dropped caps nothing) at 257. A peer holding the events
# up to 256 made seat 0's drop at 118 final; one holding the votes on proof too took the
# other point, its drop of seat 1 dated 172 (the withdrawals), not 257: the drop decided
# first was not the one tried. Now a later drop that lifts a cap a drop rests on dates it
# (roster.drop_lifts in finality.decided_at), and a member dropped at one count is tried at
# an earlier count of the votes against it (folds.earlier_drops; docs/protocol.md §9.2,
# session 38). Seed 186 alone here (session 43): with either of those two rules undone it
# fails and 196 passes (each checked in a scratch copy), so 196 (2.9 CPU-s) guards neither.
@pytest.mark.parametrize(("seed", "lying"), [(186, 0)])
def test_liars_a_drop_resting_on_a_later_drop_leaves_the_honest_peers_together(
    seed: int, lying: int | None
) -> None:
    run = _play_one_liar(seed, True, lying)
    assert sum(run.told.values()) > 0
    assert run.result.violations == []
    peers = settled(run.result)
    assert len(peers) >= 2 and all(final.dropped == peers[0].dropped for final in peers)
    # (Monotone: the events up to the other point's deciding vote drop as every event does.)
    _, liars = game(seed, two=True, back="readmit", players=(3, 4))
    liar_seats = {liar.seat for liar in liars}
    honest = [p for p in run.result.peers if p is not None and p.seat not in liar_seats]
    assert len(honest) == 2
    for peer in honest:
        whole = _folded_whole(peer)
        for seat, cut in whole.dropped.items():
            at = whole.drop_at[seat]
            assert _folded_whole(peer, upto=at).dropped.get(seat) in (cut, None)


# Seeds 28 and 112 (frontier_ahead; two liars at four players, the liar's lie alone does it):
# the readmitted liar signs an event whose frontier names its own seq (seat 0's seq 21 in
# 112, seat 2's seq 22 in 28), which every peer refuses for its link, and so every later
# event of its feed: only the liar's own log holds them, among them withdrawals of its votes
# (112: on seats 3 and 2 at Lamport 123 and 127). The peers drop the liar (112: at 8); the
# audit of every log folded those events, and a trial of the drops read the withdrawals and
# dropped an honest member instead (112: seat 2 at 10; 28: seat 3 at 16), refusing its moves.
# The audit now folds no event a peer refuses for its link, nor any after it in its feed
# (audit/delivery.py, Feed.refused; docs/protocol.md §13; session 39). Seed 112 alone here
# (~5 s; 28, the same class, ~30 s: the scans).
@pytest.mark.parametrize(("seed", "two", "lying"), [(112, True, 0)])
def test_liars_a_refused_link_after_a_readmission_leaves_the_audit_with_the_peers(
    seed: int, two: bool, lying: int
) -> None:
    run = _play_one_liar(seed, two, lying)
    assert run.told[lying] > 0
    assert run.result.violations == []
    report = run.result.audit
    assert report is not None and report.state is not None
    peers = settled(run.result)
    # (The liar alone dropped, by every peer alike and by the audit of every log.)
    assert peers and all(final.dropped == peers[0].dropped for final in peers)
    assert set(peers[0].dropped) == {lying}
    assert report.state.dropped == peers[0].dropped


def test_liars_two_fixed_points_beside_a_leave_leave_the_audit_with_the_peers() -> None:
    # Seed 264 (two liars at four players: seat 2 stuck_random, seat 1 claim_after_leave;
    # either lie alone passes; ~5 s of CPU). Seat 2 votes seat 1 out at 96 (counting 10);
    # seat 1, cut off, votes seat 2 out at 99 (counting 11, its seq 15, past seat 2's count:
    # capped), then seats 0 and 3 vote seat 2 out at 107 (11) and seat 1 out at 115 and 117
    # (14); seat 1 leaves at 113 (its seq 20) and seat 2 withdraws its vote on seat 1 at 141.
    # Two fixed points: seat 1 out at 14 (its vote past its cut never counts, seat 2 stays,
    # seat 2's vote completes the drop at 117, seat 1's leave undone) and seat 2 out at 11
    # at 107 (its vote past its cut never counts, seat 1's counts; seat 1 then out by its
    # leave at 113). Every live peer made the first final at 117 (its final fold had seat
    # 2's vote capping seat 1's when the votes on seat 2 came); every fold of the whole logs
    # at once (the audit, of all logs or of any three; an honest peer's own events folded
    # whole) takes the second, and refuses honest seat 3's moves from its seq 21 (Lamport
    # 195). Not fixed in session 39: the trial of a late lift (folds.lifted_cuts) does not
    # read it, since no withdrawal lifts a cap in the whole fold's point. Traced in session
    # 40: the whole fold imposes Unheld's cut of seat 1 at 14 too, then folds.decided_first
    # replaces it with seat 2's drop at 11 (timed 113, against 131 for seat 1's, the
    # withdrawals at 126-131 that uncap seat 2's vote), a drop that counts seat 1's vote at
    # its seq 15, past the cut, held by nobody else. Refusing such a candidate for who
    # announced those events split --late-withdrawals seed 220 (session 41). Closed in
    # session 42: seats 0 and 3, voting seat 1 out counting 14, stand as a majority from
    # seat 1's drop's decision (131) on, so seat 2's drop, resting on seat 1's events past
    # 14, is not the drop decided first (roster.gone_unheld; docs/protocol.md §9.2).
    config, liars = game(264, two=True, back="readmit", players=(3, 4))
    run = simulate(config, liars)
    assert run.result.violations == []
