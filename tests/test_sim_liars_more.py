"""The lie fuzzer's session-35 kinds (:data:`~p2p_nertz.sim.liars.MORE_LIES`, session 37's
``vote_past`` the last) and its liars lying at their join
(:func:`~p2p_nertz.sim.liar_games.game`'s ``join``).

Each new kind is a check of the peers' that no kind of :data:`~p2p_nertz.sim.liars.LIES`
reached; seed ``i`` plays ``MORE_LIES[i % len(MORE_LIES)]`` (``scripts/soak.py --liars
--more-lies``). One round each, the quick timers: under half a second of CPU a game.
"""

from __future__ import annotations

import pytest

from p2p_nertz.protocol.fold_values import RefusalCode
from p2p_nertz.protocol.state import Phase
from p2p_nertz.sim.liar_games import LiarRun, game, never_came, simulate
from p2p_nertz.sim.liars import LIES, MORE_LIES, Lie

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)


def _honest(run: LiarRun) -> list[int]:
    cheaters = run.result.config.faults.cheaters
    return [s for s, p in enumerate(run.result.peers) if p is not None and s not in cheaters]


#: What the honest folds refuse of each new kind's liar (``None``: nothing: the event counts
#: for nothing, or changes nothing, or is refused on the wire, which proves nothing, §9.4).
REFUSED: dict[Lie, RefusalCode | None] = {
    Lie.ROUND_WRONG: RefusalCode.WRONG_ROUND,
    Lie.DEAL_TWICE: RefusalCode.REPEATED,
    Lie.PLAY_EARLY: None,  # (a play before the table is dealt, or after the round: not counted)
    Lie.ABANDON_LIVE: RefusalCode.BAD_ABANDON,  # (seed 3: four players)
    Lie.REJOIN_LIVE: None,  # (a readmission of a member in readmits nobody)
    Lie.FLAP_FORGED: RefusalCode.UNPROVEN_FLAP,
    Lie.WITHDRAW_UNVOTED: None,  # (a withdrawal of no vote withdraws nothing)
    Lie.BEAT_HEAD_FORK: None,  # (the beat refused, `fork`: it names an id, not an event)
    Lie.VOTE_PAST: RefusalCode.VOTE_CONTRADICTS,  # (session 37: counting past its frontier)
}


@pytest.mark.parametrize("seed", range(len(MORE_LIES)))
def test_liars_more_every_new_kind_holds_the_invariants(seed: int) -> None:
    config, liars = game(seed, lies=MORE_LIES)
    (liar,) = liars
    assert liar.lie is MORE_LIES[seed]
    run = simulate(config, liars)
    assert run.result.violations == []
    assert run.result.finished
    assert run.told[liar.seat] > 0
    peers = [run.result.peers[s] for s in _honest(run)]
    refused = {v.code for p in peers if p is not None for v in p.final.violations}
    expected = REFUSED[liar.lie]
    assert refused == ({expected} if expected is not None else set())
    assert run.result.audit is not None
    named = {f.seat for f in run.result.audit.errors}
    assert named == ({liar.seat} if expected is not None else set())
    assert all(p is not None and not p.final.dropped for p in peers)


def test_liars_a_seq_skip_at_its_join_is_a_fork_the_audit_knows() -> None:
    """``--join`` at two players, ``seq_skip`` only, seed 5: the liar's join reaches the
    honest member only as a lie at seq 2 naming a made-up ``prev`` (every want answered with
    it), so the honest member never holds the liar's seq 1; the liar's own seq 2, a vote
    *withheld* on the honest member, proves the fork, and the honest member votes the liar out
    on proof, cutting it at 0. The audit of every log knew the fork only in one log's view (a
    proof note: the lie's chain never came): it tried the cut the liar's vote asked, dropping
    the honest member at 1, and kept it, reaching another state than the honest peer's."""
    config, liars = game(5, lies=(Lie.SEQ_SKIP,), join=True)
    ((liar_seat, honest_seat),) = [(liar.seat, 1 - liar.seat) for liar in liars]
    run = simulate(config, liars)
    assert run.result.violations == []
    honest = run.result.peers[honest_seat]
    assert honest is not None
    assert honest.final.dropped == {liar_seat: 0}
    report = run.result.audit
    assert report is not None
    assert report.dropped == ((liar_seat, 0),)
    assert report.digest == honest.final.digest()


def test_liars_a_join_refused_is_a_member_heard_that_never_joins() -> None:
    """``--join`` seed 60, two players, ``lamport_leap``: the liar's join is timed 2^33 past
    what it names (nothing), and the honest member refuses it and all that follows it (a
    clock jump, §4.5, §5.3 *the leap bound*): it holds nothing of the liar's feed. Until
    session 39 the liar's beats, timed as far ahead, were refused too (the bound was the
    receiver's clock), the liar was a member that never came and the honest node stopped
    unheard (§9.9). A beat's time now binds its author alone: the liar is heard, its feed
    never delivered, and the honest member abandons it at two players (§9.3): the game over,
    the liar out at its cut 0, nothing of it counted."""
    config, liars = game(60, join=True)
    assert [liar.lie for liar in liars] == [LIES[60 % len(LIES)]] == [Lie.LAMPORT_LEAP]
    run = simulate(config, liars)
    assert run.result.violations == []
    assert not never_came(run.result.peers, config.faults.cheaters)
    (honest,) = [run.result.peers[s] for s in _honest(run)]
    assert honest is not None and not honest.events(liars[0].seat)
    assert run.result.finished and honest.final.phase is Phase.OVER
    assert honest.final.dropped == {liars[0].seat: 0}
    assert run.result.gone == []


@pytest.mark.parametrize(
    ("seed", "lie"), [(222, Lie.WANT_MISSING), (301, Lie.BEAT_AHEAD)], ids=["want", "beat"]
)
def test_liars_a_claim_past_a_members_head_at_its_join_holds_it_back_once(
    seed: int, lie: Lie
) -> None:
    """``--join`` seed 222, four players, ``want_missing`` at seat 3: its one want, at the
    start, asks seat 0's events 4 on, past seat 0's head (its join). A want is a member's word
    that it holds our feed up to where it asks: seat 0 doubts its own feed (§9.6, *our feed
    claimed past our head*) and signs nothing for ``suspect_after`` (1 s), as it must, while
    the joins become final and its commit falls due. The doubt ended and nothing signed the
    commit: what a doubt held back waited for the next step of finality, which the others,
    waiting on that commit, never made; it came at ``phase_timeout`` (6 s), after every other
    member's vote *withheld* on seat 0, and the honest seat was dropped at its join. Now what
    fell due meanwhile is signed as the doubt ends, as at a recovery's end. Seed 301 (three
    players, ``beat_ahead`` at seat 2): a beat at the start holding more of seat 1's feed than
    seat 1 signed, the same doubt, the same drop."""
    config, liars = game(seed, join=True)
    assert [liar.lie for liar in liars] == [lie]
    run = simulate(config, liars)
    assert run.result.violations == []
    assert run.result.finished
    assert all(not p.final.dropped for p in run.result.peers if p is not None)


@pytest.mark.parametrize(
    ("seed", "liars_at"),
    [
        (15, [(3, Lie.VOTE_AHEAD), (1, Lie.SEQ_REUSE)]),
        (295, [(2, Lie.VOTE_AHEAD), (0, Lie.SEQ_REUSE)]),
    ],
)
def test_liars_a_vote_at_its_join_quoting_ids_it_does_not_hold_is_refused(
    seed: int, liars_at: list[tuple[int, Lie]]
) -> None:
    """``--join --two-liars --players 3-4`` seeds 15 (the session-32 seed 15 of two liars,
    lying from their joins) and 295: the ``seq_reuse`` liar signs a second seq 1 and is voted
    out on proof by the honest members, each counting 1, its join (final at each) quoted; the
    ``vote_ahead`` liar, holding nothing of its feed (its frontier names 0, so the vote
    contradicts nothing), votes it out for silence counting past 1 with made-up ids. Until
    session 36 the ids parted from the honest voters' at seq 1, where the member did fork,
    and every fold cut it at 0, below its join: the audit's game never began where the honest
    peers played it out. Session 36: every fold refused that vote (its id at 1 is not the
    member's event counted there, ``roster.unsigned_id``); since session 37 it is refused
    first for counting past its own frontier (``roster.contradicts``: the seeds 379 and 532
    below), and the audit names its author; the member is cut at 1, its join kept, and the
    audit reaches the honest peers' state."""
    config, liars = game(seed, players=(3, 4), two=True, join=True)
    assert [(liar.seat, liar.lie) for liar in liars] == liars_at
    (ahead, _), (forker, _) = liars_at
    run = simulate(config, liars)
    assert run.result.violations == []
    assert run.result.finished
    honest = [run.result.peers[s] for s in _honest(run)]
    for peer in honest:
        assert peer is not None
        assert peer.final.dropped.get(forker) == 1
        refused = {(v.seat, v.code) for v in peer.final.violations}
        assert (ahead, RefusalCode.VOTE_CONTRADICTS) in refused
    report = run.result.audit
    assert report is not None
    assert (forker, 1) in report.dropped
    assert ahead in {f.seat for f in report.errors}
    assert all(report.digest == p.final.digest() for p in honest if p is not None)


@pytest.mark.parametrize(
    ("seed", "liars_at"),
    [
        (379, [(2, Lie.VOTE_AHEAD), (1, Lie.FRONTIER_AHEAD)]),
        (532, [(2, Lie.FRONTIER_AHEAD), (1, Lie.VOTE_AHEAD)]),
    ],
)
def test_liars_two_liars_at_the_join_a_vote_past_its_frontier_sets_no_cut(
    seed: int, liars_at: list[tuple[int, Lie]]
) -> None:
    """``--join --two-liars --players 3-4`` seeds 379 and 532 (four players, the two liars
    each way round; session 36's scan, the same on session 35's main): the
    ``frontier_ahead`` liar's join names an event of another member that nobody signed, so it
    never reaches anyone, and the honest two vote it out *withheld*, each counting 0 of its
    feed; the ``vote_ahead`` liar, holding none of it either (its frontier names 0), had
    voted it out for silence counting 1 to 3 with made-up ids. Those three votes are a
    majority of four: the member dropped, cut at the highest count, on the made-up chain. No
    peer could fetch events that were never signed, so the drop was never final and the
    honest members stayed in joining for good (150 s, saying nothing). Every fold now refuses
    a vote for silence or withholding that counts past its own frontier (``vote_contradicts``,
    ``roster.contradicts``): the cut is 0, the game is played out by the three members left
    (two honest of three, a majority), the audit names both liars and reaches the honest
    peers' state."""
    config, liars = game(seed, players=(3, 4), two=True, join=True)
    assert (config.players, [(liar.seat, liar.lie) for liar in liars]) == (4, liars_at)
    ahead = next(seat for seat, lie in liars_at if lie is Lie.VOTE_AHEAD)
    silent = next(seat for seat, lie in liars_at if lie is Lie.FRONTIER_AHEAD)
    run = simulate(config, liars)
    assert run.result.violations == []
    assert run.result.finished
    honest = [run.result.peers[s] for s in _honest(run)]
    assert len(honest) == 2
    for peer in honest:
        assert peer is not None
        assert peer.final.phase is Phase.OVER
        assert peer.final.dropped == {silent: 0}
        assert {(v.seat, v.code) for v in peer.final.violations} == {
            (ahead, RefusalCode.VOTE_CONTRADICTS)
        }
    report = run.result.audit
    assert report is not None
    assert {f.seat for f in report.errors} == {ahead, silent}
    assert all(report.digest == p.final.digest() for p in honest if p is not None)
