"""A peer whose log lost events it had signed and sent never equivocates (issue 13, section 4).

A log can lose its end: a torn last frame that had been sent, a disk or a backup that lost the
last frames, a damaged tail cut on request. The peer is then restored in recovery
(``Peer.restore(recover=True)``, the simulator's ``Crash.lose_own``): it learns its own feed's
head from the others and takes its events back before it signs anything (docs/protocol.md
§9.6). Each scenario checks that the game finishes, that no log holds two versions of one of
its events, that its final log holds its whole feed, and every invariant of DESIGN.md §8.
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.protocol.bodies import Beat, parse_body
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.peer import PeerConfig, Record, Recovered, Send
from p2p_nertz.rules import Rules
from p2p_nertz.sim import Crash, Faults, Partition, SimConfig, SimResult, Simulation
from p2p_nertz.sim.invariants import check, forks

QUICK_DROP = PeerConfig(suspect_after=1.0, drop_after=3.0)


def _run(config: SimConfig) -> SimResult:
    result = Simulation(config).run()
    result.violations = check(result)
    return result


def _assert_recovered(result: SimResult, seat: int) -> Recovered:
    """The game finished with every invariant, nobody forked, and ``seat``'s log (after it
    lost its end) holds its whole feed, each event once; return its recovery notice."""
    assert result.lost_own, "the crash lost nothing: the scenario tests nothing"
    assert result.finished
    assert result.violations == []
    assert forks(result) == set()
    peer = result.peers[seat]
    assert peer is not None and not peer.recovering
    own = result.identities[seat].peer_id
    logged = [decode_message(w) for w in result.logs[seat]]
    mine = sorted(m.seq for m in logged if m.author == own)
    assert mine == list(range(1, peer.held(seat) + 1))
    for other in result.peers:
        if other is not None:
            assert [m.id for m in other.events(seat)] == [m.id for m in peer.events(seat)][
                : other.held(seat)
            ]
    notices = [e for _, s, e in result.effects if s == seat and isinstance(e, Recovered)]
    assert len(notices) == 1
    return notices[0]


def _lost(result: SimResult) -> list[tuple[int, Kind]]:
    (_, wires), *_ = result.lost_own
    return [(m.seq, m.kind) for m in map(decode_message, wires)]


def _config(
    players: int,
    *crashes: Crash,
    seed: int,
    faults: Faults | None = None,
    rules: Rules | None = None,
    peer: PeerConfig | None = None,
) -> SimConfig:
    return SimConfig(
        players=players,
        seed=seed,
        faults=faults or Faults(crashes=crashes),
        rules=rules or Rules(target=None, rounds=1),
        peer=peer or PeerConfig(),
        record_effects=True,
        max_time=300.0,
    )


def test_recovery_takes_back_a_lost_last_event_at_two_players() -> None:
    # The torn last frame: the event it held had been sent; the tail is cut on restart.
    result = _run(_config(2, Crash(0, 5.0, 1.0, lose_own=1), seed=1))
    ((seq, kind),) = _lost(result)
    assert kind is Kind.MOVE  # (seed 1's game at 5 s: seat 0 is turning its stock)
    notice = _assert_recovered(result, 0)
    assert (notice.first, notice.head, notice.holders) == (seq - 1, seq, (1,))


@pytest.mark.parametrize(
    ("players", "seat", "lose", "seed"),
    [(3, 0, 3, 1), (4, 3, 4, 4), (2, 1, 6, 4)],
    ids=["3-players", "4-players", "2-players"],
)
def test_recovery_takes_back_several_lost_events_cut_at_a_frame_boundary(
    players: int, seat: int, lose: int, seed: int
) -> None:
    # A disk (or a backup) that lost the last frames whole: no torn tail, the log looks clean.
    result = _run(_config(players, Crash(seat, 5.0, 0.5, lose_own=lose), seed=seed))
    lost = _lost(result)
    assert len(lost) == lose and any(kind is Kind.CLAIM for _, kind in lost)
    notice = _assert_recovered(result, seat)
    assert notice.head - notice.first == lose


@pytest.mark.parametrize(
    ("at", "players", "lose", "kinds"),
    [
        (0.012, 2, 1, [Kind.COMMIT]),
        (0.05, 3, 2, [Kind.REVEAL, Kind.READY]),
        (0.02, 3, 2, [Kind.JOIN, Kind.COMMIT]),
    ],
    ids=["commit", "nonce-and-ready", "join-and-commit"],
)
def test_recovery_takes_back_lost_phase_events(
    at: float, players: int, lose: int, kinds: list[Kind]
) -> None:
    seat = 0 if players == 2 else 1
    result = _run(_config(players, Crash(seat, at, 1.0, lose_own=lose), seed=1))
    assert [kind for _, kind in _lost(result)] == kinds
    _assert_recovered(result, seat)


def test_recovery_takes_back_a_lost_result() -> None:
    rules = Rules(target=None, rounds=2)
    # The instant just after seat 0 signs its round-1 result (the game of seed 1 as the rules
    # play it; a change of the rules moves it).
    result = _run(_config(2, Crash(0, 30.13, 1.0, lose_own=1), seed=1, rules=rules))
    assert [kind for _, kind in _lost(result)] == [Kind.RESULT]
    _assert_recovered(result, 0)
    peer = result.peers[0]
    assert peer is not None and len(peer.final.history) == 2


def test_recovery_takes_back_a_lost_drop_vote() -> None:
    # Seat 2 goes for good; seat 0 votes it out, then loses the vote with its log's end.
    crashes = (Crash(2, 3.0, None), Crash(0, 5.86, 1.0, lose_own=1))
    result = _run(_config(3, *crashes, seed=3, peer=QUICK_DROP))
    assert _lost(result) == [(27, Kind.DROP)]
    _assert_recovered(result, 0)
    assert all(2 in p.final.dropped for p in result.peers if p is not None)


def test_recovery_when_only_some_members_got_the_lost_events() -> None:
    # Seat 2 is cut off while seat 0 sends its last events, then seat 0 loses them: only
    # seat 1 holds them when seat 0 comes back.
    split = Partition(4.8, 5.5, (frozenset({0, 1}), frozenset({2})))
    faults = Faults(partitions=(split,), crashes=(Crash(0, 5.0, 1.0, lose_own=2),))
    result = _run(_config(3, faults=faults, seed=1))
    assert [kind for _, kind in _lost(result)] == [Kind.CLAIM, Kind.MOVE]
    notice = _assert_recovered(result, 0)
    assert notice.head == notice.first + 2


def test_recovery_when_nobody_got_the_lost_events_signs_their_seqs_anew() -> None:
    # Seat 0 is cut off from everyone while it sends its last events, which nobody ever
    # holds: every member announces less than it had signed, and it goes on from there.
    split = Partition(4.5, 5.5, (frozenset({0}), frozenset({1, 2})))
    faults = Faults(partitions=(split,), crashes=(Crash(0, 5.0, 1.0, lose_own=1),))
    result = _run(_config(3, faults=faults, seed=1))
    assert _lost(result) == [(23, Kind.CLAIM)]
    notice = _assert_recovered(result, 0)
    assert (notice.first, notice.head, notice.holders) == (22, 22, ())
    peer = result.peers[0]
    assert peer is not None and peer.held(0) > 23  # seq 23 signed anew: nobody had the first


def test_a_recovering_peer_signs_nothing_and_beats_not_until_it_has_recovered() -> None:
    result = _run(_config(3, Crash(0, 5.0, 1.0, lose_own=3), seed=1))
    _assert_recovered(result, 0)
    own = result.identities[0].peer_id
    restarted = next(t for t, s, e in result.effects if s == 0 and t >= 6.0)
    recovered = next(t for t, s, e in result.effects if s == 0 and isinstance(e, Recovered))
    assert restarted < recovered
    lost = {decode_message(w).id for _, wires in result.lost_own for w in wires}
    during = [e for t, s, e in result.effects if s == 0 and restarted <= t < recovered]
    wants = 0
    for effect in during:
        if isinstance(effect, Record) and effect.own:
            assert decode_message(effect.data).id in lost  # taken back, never signed anew
        if isinstance(effect, Send):
            message = decode_message(effect.data)
            if message.author == own and not message.is_event:
                assert message.kind is Kind.WANT
                wants += 1
    assert wants >= 1
    beats = [
        decode_message(e.data)
        for t, s, e in result.effects
        if s == 0 and t >= recovered and isinstance(e, Send)
    ]
    first_beat = next(m for m in beats if m.kind is Kind.BEAT)
    body = parse_body(first_beat.kind, first_beat.body, 3)
    assert isinstance(body, Beat)
    peer = result.peers[0]
    assert peer is not None
    assert body.head_seq >= max(decode_message(w).seq for _, ws in result.lost_own for w in ws)


def test_a_clean_restart_does_not_wait() -> None:
    # A log that lost nothing (a conforming writer, no cut tail) restarts as before: no
    # recovery, its first beat at once.
    result = _run(_config(3, Crash(0, 5.0, 1.0), seed=1))
    assert result.finished and result.violations == []
    assert not any(isinstance(e, Recovered) for _, _, e in result.effects)


def test_a_peer_killed_while_recovering_recovers_again_at_its_next_restart() -> None:
    # The first restart cannot finish (seat 0 is cut off from everyone): killed again, its log
    # looks whole, yet it still lacks what it lost; the log says a recovery is under way.
    split = Partition(5.9, 8.0, (frozenset({0}), frozenset({1, 2})))
    crashes = (Crash(0, 5.0, 1.0, lose_own=2), Crash(0, 7.0, 1.0))
    result = _run(_config(3, faults=Faults(partitions=(split,), crashes=crashes), seed=1))
    assert result.crashes == 2
    notice = _assert_recovered(result, 0)
    assert notice.head == notice.first + 2


def test_a_recovering_peer_alone_waits_and_signs_nothing() -> None:
    # Two players: seat 0 loses the end of its log, and seat 1 is gone for good. Seat 1 may
    # hold events of seat 0's that seat 0 lost, so seat 0 can sign neither an abandon nor
    # anything else: it waits, and its runtime stops once that is hopeless.
    crashes = (Crash(1, 4.9, None), Crash(0, 5.0, 1.0, lose_own=1))
    config = _config(2, *crashes, seed=1, peer=QUICK_DROP)
    result = Simulation(dataclasses.replace(config, max_time=30.0)).run()
    peer = result.peers[0]
    assert peer is not None and peer.recovering and peer.awaiting() == (1,)
    assert peer.recovery_hopeless(result.time)
    (_, lost), *_ = result.lost_own
    assert peer.held(0) == decode_message(lost[0]).seq - 1  # nothing signed since the restart


@pytest.mark.parametrize(
    ("players", "crashes"),
    [
        (3, (Crash(0, 5.0, 1.0, lose_own=1), Crash(1, 5.2, 1.0, lose_own=2))),
        (2, (Crash(0, 5.0, 1.0, lose_own=2), Crash(1, 5.1, 0.5, lose_own=1))),
    ],
    ids=["two-of-three", "both-of-two"],
)
def test_peers_recovering_at_once_take_each_others_wants_as_announcements(
    players: int, crashes: tuple[Crash, ...]
) -> None:
    # Neither may beat; each one's wants, one per feed, say what it holds.
    result = _run(_config(players, *crashes, seed=1))
    assert result.finished and result.violations == [] and forks(result) == set()
    assert len(result.lost_own) == 2
    for seat in (0, 1):
        peer = result.peers[seat]
        assert peer is not None and not peer.recovering
        notices = [e for _, s, e in result.effects if s == seat and isinstance(e, Recovered)]
        assert len(notices) == 1


def test_soak_seed_8215_recovery_after_an_abandon_signs_no_seq_the_other_holds() -> None:
    """``--players 2-2`` soak seed 8215 (session 13): seat 0's log loses its last two events
    (seq 6 and 7, two moves seat 1 holds) in a crash at 0.8 s; it restarts in recovery at
    7.0 s, during a partition {0} | {1} (2.3 s to 8.2 s). Seat 1 has voted seat 0 out (its
    seq 4, counting 3) and abandoned it (seq 5, counting 3): from its vote on, it announces
    no more of seat 0's feed than 3 (§9.2), though it holds all seven. Its beats cannot say
    what it holds of seat 0's feed; its answer to seat 0's recovery want, a want of its own
    for the rest, says 7 (§9.6). Seat 0 took that frozen announcement for what seat 1 holds,
    ended at its own head 5 and signed its seq 6 anew (its abandon of seat 1): a fork by an
    honest peer. Now it takes 6 and 7 back first, and abandons at its seq 8."""
    config = dataclasses.replace(SimConfig.soak(8215, players=(2, 2)), record_effects=True)
    result = _run(config)
    notice = _assert_recovered(result, 0)
    assert notice == Recovered(5, 7, (1,))
    assert _lost(result) == [(6, Kind.MOVE), (7, Kind.MOVE)]
    peer = result.peers[0]
    assert peer is not None and peer.final.abandoned is not None


def test_an_abandoner_gone_for_good_leaves_the_recovery_hopeless_and_nothing_signed() -> None:
    # Seed 8215, but seat 1 dies for good at 8.4 s, after the partition heals: seat 0 holds
    # its vote and its abandon (so it is out), not yet its word on what it holds of seat 0's
    # feed (and not the two lost events). Seat 0 must not sign: its runtime stops once seat 1
    # has been silent for drop_after (`nertz resume` says so), with nothing signed.
    soak = SimConfig.soak(8215, players=(2, 2))
    restart = next(c for c in soak.faults.crashes if c.lose_own)
    faults = dataclasses.replace(soak.faults, crashes=(restart, Crash(1, 8.4, None)))
    result = Simulation(dataclasses.replace(soak, faults=faults, max_time=30.0)).run()
    assert forks(result) == set()
    peer = result.peers[0]
    assert peer is not None and peer.recovering and peer.awaiting() == (1,)
    assert 0 in peer.final.dropped  # (abandoned: its game is over)
    assert not peer.recovery_hopeless(8.4 + QUICK_DROP.drop_after - 0.01)
    assert peer.recovery_hopeless(8.4 + QUICK_DROP.drop_after + 0.1)  # (its last in flight)
    assert peer.held(0) == 5  # nothing signed since the restart


def test_a_cheater_dropped_on_proof_that_holds_the_lost_events_is_asked_for_its_word() -> None:
    """``--players 3-4`` soak seed 8154 with seat 2's restart losing its last two events
    (session 14's scan of the class): seat 0, a cheater dropped on proof, received them; seat
    1, the one member left, did not. Taking seat 1's word alone, seat 2 signed their seqs
    anew, which seat 0's log proves forked. A member out of the game that is heard during the
    recovery is waited for, for ``drop_after`` at most, until its word says it holds no more
    of our feed than we do (§9.6): seat 2 takes both events back from it first."""
    soak = SimConfig.soak(8154, players=(3, 4))
    first, second = soak.faults.crashes
    lost = dataclasses.replace(second, restart_after=11.51809625529835, lose_own=2)
    faults = dataclasses.replace(soak.faults, crashes=(first, lost))
    result = _run(dataclasses.replace(soak, faults=faults, record_effects=True))
    assert result.config.faults.cheaters == {0}
    assert forks(result) == {0}  # (the cheater's own fork, nobody else's)
    assert result.violations == []
    (notice,) = [e for _, s, e in result.effects if s == 2 and isinstance(e, Recovered)]
    assert (notice.head - notice.first, notice.holders) == (2, (0, 1))
