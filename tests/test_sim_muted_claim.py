"""Two liars at four players: one claims a silent member's feed, the other is that member and
signs nothing (docs/protocol.md §13, *A claim on a silent member's feed*, session 36).

Liars seed 3185 (four players): seat 1 lies ``beat_ahead`` once, at 8.76 s, a beat holding 6
of seat 0's feed where every other peer holds 4; seat 0 lies ``ready_visible`` (its bot never
plays). Session 35 made the claimer owe those events: every other member votes it out
*withheld* after ``phase_timeout``, seat 0's core among them (its own feed claimed past its
head), and the votes of 0, 2 and 3 drop it. Here seat 0 is also muted from 9 s: it signs
nothing, no vote either, while its beats and acks go on (it is heard), as the simulator's
``mute_dealer`` does. The two honest members' votes are two of four, no majority: the table
waits, every honest peer's stable time held by seat 0's term (capped by the claim, §7.1) and
by their own votes' freezes. What must hold all the same: the honest peers agree with each
other and with the audit, nobody honest is cut, and the audit names the claimer.

A mute shorter than the timers ends as session 35's game (seat 0's vote comes once it may
sign again); a member that signs nothing at all, beats neither (its process gone past
``drop_after``), is voted out for silence by every member heard, the claimer's core among
them, and the claim on its feed is owed no more: the game ends. And a voter restored from its
log knows why its vote on the claimer was cast: its ``debt`` note is read back into the core
(``Debts.read_back``).
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import pytest

from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.logfile.store import open_for_append
from p2p_nertz.protocol.bodies import DropReason, EventBody
from p2p_nertz.protocol.debts import DEBT_NOTE
from p2p_nertz.protocol.effects import Effect, Note, Send
from p2p_nertz.protocol.finality import KNOWN
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rng import Rng
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.nodelog import resume_point
from p2p_nertz.sim import liar_games
from p2p_nertz.sim.liar_games import MAX_TIME, check, check_liars, game, marks
from p2p_nertz.sim.liars import Liar, Lie
from p2p_nertz.sim.logfiles import log_files
from p2p_nertz.sim.mixes import noisy
from p2p_nertz.sim.network import QUICK_TIMERS, Crash, SimConfig, SimResult
from tests.test_sim_blame import _votes

pytestmark = pytest.mark.timeout(300)  # (a hang guard, for a loaded machine)

#: When seat 0 stops signing: after the claim (8.76 s), before anyone votes on it.
MUTED_AT = 9.0

#: Where a game whose case is a voter restarted at 20 to 25 s stops: five ``phase_timeout``
#: and more past the restart, each timer of the restored core run out more than once, where
#: the waiting table plays on to :data:`MAX_TIME` otherwise (a game's CPU 2.7 -> 0.9 s; with
#: the restored core's read of its debt notes undone, or its phase wait taken before the
#: claim's, these games fail alike; session 42).
RESTART_MAX_TIME = 60.0


class _Muted(liar_games._Simulation):
    """Seed 3185's liars, seat 0 signing nothing from :data:`MUTED_AT` for ``length`` seconds
    (``None``: for good); its beats and acks go on. The game stops at ``max_time`` (its
    liars' game's :data:`MAX_TIME` unless given)."""

    def __init__(
        self,
        length: float | None,
        crashes: tuple[Crash, ...] = (),
        *,
        max_time: float | None = None,
    ) -> None:
        config, liars = game(3185, two=True, players=(3, 4))
        if max_time is not None:
            config = dataclasses.replace(config, max_time=max_time)
        assert [(liar.seat, liar.lie) for liar in liars] == [
            (1, Lie.BEAT_AHEAD),
            (0, Lie.READY_VISIBLE),
        ]
        faults = dataclasses.replace(config.faults, crashes=crashes)
        self.until = None if length is None else MUTED_AT + length
        #: (time, stall record) of seat 2's vote on seat 1, read at seat 2's inputs
        self.records: list[tuple[float, tuple[int, ...] | None]] = []
        super().__init__(dataclasses.replace(config, faults=faults, record_effects=True), liars)

    def _cheat(self, seat: int, peer: Peer | None, *, restarted: bool = False) -> None:
        super()._cheat(seat, peer, restarted=restarted)
        if seat != 0 or peer is None:
            return
        author = peer._author  # (the simulator's cheat reaches into the core on purpose)
        honest = author.emit
        until = self.until

        def emit(body: EventBody, now: float | None) -> None:
            if now is not None and now >= MUTED_AT and (until is None or now < until):
                return  # (signs nothing: no move, no vote)
            honest(body, now)

        author.emit = emit

    def _apply(self, seat: int, effects: list[Effect], now: float, cut: int | None = None) -> bool:
        peer = self.peers[seat]
        if seat == 2 and peer is not None:
            record = peer._author.membership.stall_votes.get(1)
            self.records.append((now, None if record is None else record[3]))
        return super()._apply(seat, effects, now, cut)


@functools.cache
def _muted_for_good() -> SimResult:
    """The game of seat 0 muted for good (:class:`_Muted`), played to :data:`MAX_TIME`: the
    table waiting and the node's log file of it read one game (session 42)."""
    return _Muted(None).run()


def _withheld_on(result: SimResult, target: int) -> set[int]:
    return {voter for voter, seat in _votes(result, DropReason.WITHHELD) if seat == target}


@pytest.mark.parametrize("length", [14.0, None], ids=["past-phase_timeout", "for-good"])
def test_muted_claim_two_liars_at_four_the_table_waits_the_honest_agree(
    length: float | None,
) -> None:
    # Measured: the honest stable times stop at 229 and 230 (seat 0's term, capped at its
    # 4th event by the claim), as before session 35's mend; the votes of seats 2 and 3 on
    # the claimer stand, two of four, and nothing else is ever signed against anyone. (Muted
    # past its own vote's time, seat 0's core counts the vote it never signed as cast.)
    result = _muted_for_good() if length is None else _Muted(length).run()
    assert not result.finished  # (no majority: two liars at half the table, §9.2)
    assert result.time >= MAX_TIME
    assert check(result) + check_liars(result) == []  # (agreement; nobody honest cut)
    assert _withheld_on(result, 1) == {2, 3}
    assert _votes(result, DropReason.SILENT) == []
    for seat in (2, 3):
        peer = result.peers[seat]
        assert peer is not None
        assert peer.final.phase is Phase.PLAY
        assert peer.final.dropped == {}
        assert peer.held(0) == 4
        assert peer._finality.claimed_most[0] == 6  # (the claim stands: capped, §7.1)
        assert peer._finality.holder == (KNOWN, 0)
    audit = result.audit
    assert audit is not None
    assert {f.seat for f in audit.errors} == {1}
    assert (FindingKind.UNGIVEN_CLAIM, 1) in {(f.kind, f.seat) for f in audit.errors}


@pytest.mark.parametrize("length", [0.5, 2.0, 5.0], ids=["0.5s", "2s", "5s"])
def test_muted_claim_a_mute_shorter_than_phase_timeout_ends_the_claimer_out(
    length: float,
) -> None:
    # Seat 0 signs again before its own vote on the claimer falls due (phase_timeout after
    # its doubt): it votes, and the votes of 0, 2 and 3 drop seat 1.
    result = _Muted(length).run()
    assert check(result) + check_liars(result) == []
    assert result.finished
    assert result.time < MAX_TIME / 2
    assert _withheld_on(result, 1) == {0, 2, 3}
    for seat in (0, 2, 3):
        peer = result.peers[seat]
        assert peer is not None
        assert peer.final.phase is Phase.OVER
        assert set(peer.final.dropped) == {1}


@pytest.mark.parametrize(
    "down", [0.5, 2.0, 5.0, None], ids=["0.5s", "2s", "past-drop_after", "for-good"]
)
def test_muted_claim_a_member_signing_nothing_at_all_ends_the_game(down: float | None) -> None:
    # Seat 0 beats neither: its process dies at 9 s, restarted after ``down`` (or never).
    # Back within drop_after, it votes the claimer out with the honest two; gone longer, it is
    # voted out for silence by every member that hears the others (the claimer's core too:
    # three of four), and the claim on its feed is owed no more (a member out of the game).
    config, liars = game(3185, two=True, players=(3, 4))
    crash = Crash(0, MUTED_AT, down)
    faults = dataclasses.replace(config.faults, crashes=(crash,))
    result = liar_games._Simulation(dataclasses.replace(config, faults=faults), liars).run()
    assert check(result) + check_liars(result) == []
    assert result.finished
    silenced = {voter for voter, seat in _votes(result, DropReason.SILENT) if seat == 0}
    back = down is not None and down < QUICK_TIMERS.drop_after
    assert silenced == (set() if back else {1, 2, 3})
    if back:
        assert _withheld_on(result, 1) == {0, 2, 3}
    for seat in (2, 3):
        peer = result.peers[seat]
        assert peer is not None
        assert peer.final.phase is Phase.OVER
        assert set(peer.final.dropped) == ({1} if back else {0})


@pytest.mark.parametrize("down", [0.5, 5.0], ids=["under-suspect_after", "past-drop_after"])
def test_muted_claim_a_voter_restored_from_its_log_knows_why_it_voted(down: float) -> None:
    # Seat 2 votes the claimer out withheld at 14.76 s, relaying the lying beat and keeping it
    # in its log as a debt note; its process dies at 20 s and is restored from its log. Before
    # session 36 the restored core did not read the note: its vote stood without a cause (no
    # stall record, so never withdrawn were the claim paid), seat 0's term no longer capped
    # by the claim, the beat no longer relayed. Now the note's beat is taken back first.
    crash = Crash(2, 20.0, down)
    sim = _Muted(None, crashes=(crash,), max_time=RESTART_MAX_TIME)
    result = sim.run()
    assert check(result) + check_liars(result) == []
    restart = crash.at + down
    before = [record for t, record in sim.records if 15.0 < t < crash.at]
    after = [record for t, record in sim.records if t > restart + 1.0]
    assert before and after
    assert all(record is not None and record[0] == 6 for record in before + after)
    # (Not withdrawn on waking: its final fold, restored, lags, and once read the vote as
    # cast on a phase event the claimer had long signed, withdrew it and voted again.)
    assert (2, 1) not in _votes(result, DropReason.WITHDRAW)
    restored = result.peers[2]
    assert restored is not None
    assert restored._finality.claimed_most[0] == 6
    assert 1 in restored._author.membership.voted
    notes = [note.data for _, note in result.notes[2] if note.name == DEBT_NOTE]
    assert len(notes) == 1  # (read back as noted: not kept a second time)
    relayed = [
        t
        for t, seat, e in result.effects
        if seat == 2 and isinstance(e, Send) and e.data == notes[0] and t > restart
    ]
    assert relayed  # (the claim's beat goes on with the vote, as before the restart)
    assert not any(
        isinstance(e, Note) and e.name == DEBT_NOTE and t > restart
        for t, seat, e in result.effects
        if seat == 2
    )


def test_muted_claim_a_node_log_file_restores_the_claim_its_vote_was_cast_on(
    tmp_path: Path,
) -> None:
    # The node's path: seat 2's log written as a file, opened as `nertz node --log` opens it
    # (open_for_append, resume_point), the peer restored with the beats of its debt notes.
    result = _muted_for_good()
    path = tmp_path / "seat2.log"
    path.write_bytes(log_files(result)[2])
    writer, found = open_for_append(path, create=False)
    writer.close()
    point = resume_point(found)
    assert point is not None
    assert len(point.debts) == 1
    spec, config = result.spec, result.config.peer
    identity = result.identities[2]
    peer, _ = Peer.restore(
        identity, spec, point.wires, 200.0, config, reserved=point.reserved, debts=point.debts
    )
    bare, _ = Peer.restore(identity, spec, point.wires, 200.0, config, reserved=point.reserved)
    assert peer._finality.claimed_most[0] == 6  # (seat 0's term capped again, §7.1)
    assert bare._finality.claimed_most[0] == 4  # (the notes are what carry the claim)
    frontier = peer._author.membership.withheld_back[1]
    assert frontier[0] == 4  # (our vote held 4 of seat 0's feed)
    debts = peer._delivery.debts
    assert debts.stall(1, frontier, 200.0) == (200.0, 0, (0, 0, 0, 0), (6, 0, 0, 0))
    assert bare._delivery.debts.stall(1, frontier, 200.0) is None


class _IdleFrom4(liar_games._Simulation):
    """Seat 0's player stops at 4 s (its core beats, votes and signs its phase events)."""

    def _bot(
        self, seat: int, peer: Peer, now: float, crash_plan: dict[tuple[int, float], Crash]
    ) -> None:
        if seat != 0 or now < 4.0:
            super()._bot(seat, peer, now, crash_plan)


@pytest.mark.parametrize("down", [0.3, 2.0], ids=["under-suspect_after", "under-drop_after"])
def test_muted_claim_at_three_players_a_voter_restored_between_the_votes_ends_alike(
    down: float,
) -> None:
    # Three players: seat 1 claims seat 0's feed past its head once (5 s), seat 0's player
    # idle from 4 s. Seat 2 votes it out withheld at 11.6 s, keeping the claim's beat as a
    # debt note; seat 0 at 12.4 s. Seat 2's process dies at 11.8 s, between the two votes,
    # and is restored from its log: its vote, read back with its cause, stands, and the two
    # votes drop the claimer, as without the restart.
    seed = 4
    liars = (Liar(1, Lie.BEAT_AHEAD, at=5.0, times=1, rate=1.0, seed=seed),)
    faults = noisy(Rng(seed), deck_cheats=marks(liars))
    faults = dataclasses.replace(faults, crashes=(Crash(2, 11.8, down),))
    rules = Rules(target=None, rounds=1)
    config = SimConfig(
        players=3, seed=seed, rules=rules, faults=faults, peer=QUICK_TIMERS, max_time=MAX_TIME
    )
    result = _IdleFrom4(config, liars).run()
    assert check(result) + check_liars(result) == []
    assert result.finished
    assert len([n for _, n in result.notes[2] if n.name == DEBT_NOTE]) == 1
    assert _withheld_on(result, 1) == {0, 2}
    assert (2, 1) not in _votes(result, DropReason.WITHDRAW)
    assert all(p is not None and set(p.final.dropped) == {1} for p in result.peers)
