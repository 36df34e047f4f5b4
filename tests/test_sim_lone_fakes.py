"""A lone fake that only a dropped sleeper's log holds: what no member still in took counts
nowhere (docs/audit.md, *What no member still in took*).

The shape of ``scripts/soak.py --sleeper-forks --players 6-8`` seed 49007
(tests/test_sim_big_tables.py), at 4 and 5 seats: a one-round game whose scores tie, so that a
tiebreak round follows that some members sit out. (At 3 seats until session 42: there the
sleeper is tied, and its drop now decides the tie and ends the game, docs/protocol.md §8.9; the
3-seat game still serves the fork before the vote, below.) A member falls asleep in it and is
voted out; a member sitting out, having voted, signs a Nerts call under its next seq and sends
it to the sleeper alone, then signs nothing more: its only event under that seq (no fork), in
the sleeper's log alone, not in its own. The members still in never hold it, and the audit of
every log must reach their state, naming the cheater from the log that holds it. Which logs are
given decides what the audit can tell: without the author's own log it cannot tell the fake
from an event a member still in took, and folds it; with the fake in the author's own log too,
the author said it sent it, and it counts.

And the fake the sleeper relayed before it slept (the others took it): it counts, as with
every peer.
"""

from __future__ import annotations

import functools

import pytest

from p2p_nertz.audit import AuditReport, FindingKind
from p2p_nertz.protocol.envelope import Message, decode_message
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Equivocation, Faults, Freeze, SimConfig, SimResult, run
from p2p_nertz.sim.invariants import audit_result, settled
from p2p_nertz.sim.logfiles import log_file, log_records

# (players, seed, sleeper, it sleeps from, cheater, its fake at): the seed's game ties in
# round 1 and the cheater sits the tiebreak out (3 seats: seat 0; 4: seats 0 and 3; 5: seats
# 0, 1 and 3); the sleeper sleeps past the game's end, and the cheater votes it out before
# it signs the fake.
SHAPES = {
    3: (0, 1, 20.0, 0, 27.0),
    4: (8, 0, 20.0, 3, 27.0),
    5: (23, 1, 17.0, 3, 24.0),
}


def _config(
    players: int, *, sleeps_at: float | None = None, forks_at: float | None = None
) -> SimConfig:
    """The game of ``SHAPES[players]`` (``sleeps_at``, ``forks_at``: the sleeper falls
    asleep, the cheater signs its fake, then instead)."""
    seed, sleeper, at, cheat, fork = SHAPES[players]
    at = at if sleeps_at is None else sleeps_at
    fork = fork if forks_at is None else forks_at
    faults = Faults(
        freezes=(Freeze(sleeper, at, 80.0),),
        equivocations=(Equivocation(cheat, fork, frozenset({sleeper})),),
    )
    rules = Rules(target=None, rounds=1)
    return SimConfig(players=players, seed=seed, rules=rules, faults=faults, peer=QUICK_TIMERS)


@functools.cache
def _played(players: int) -> SimResult:
    return run(_config(players))


def _feed(result: SimResult, owner: int, author: int) -> dict[int, tuple[Message, bytes]]:
    """The events of ``author`` that ``owner``'s log holds, by seq (with their bytes; of two
    versions, the first it logged)."""
    seats = {pid: s for s, pid in enumerate(result.spec.peer_ids)}
    held: dict[int, tuple[Message, bytes]] = {}
    for wire in result.logs[owner]:
        message = decode_message(
            wire, game_id=result.spec.game_id, roster=seats, cache=result.envelopes
        )
        if message.is_event and seats[message.author] == author:
            held.setdefault(message.seq, (message, wire))
    return held


def _lone_fake(result: SimResult, sleeper: int, cheat: int) -> tuple[Message, bytes]:
    """The cheater's event that only the sleeper's log holds (the shape under test: one,
    the last of its feed there, no other version of it in any log)."""
    others = [_feed(result, q, cheat) for q in range(result.config.players) if q != sleeper]
    slept = _feed(result, sleeper, cheat)
    lone = [m for seq, m in slept.items() if all(seq not in held for held in others)]
    assert len(lone) == 1 and lone[0][0].seq == max(slept)
    return lone[0]


def _audit(
    result: SimResult, seats: list[int], fake_in_own: tuple[Message, bytes] | None = None
) -> AuditReport:
    """The audit of the logs of ``seats`` (``fake_in_own``: also in its author's own log)."""
    spec = result.spec
    notes = result.notes or [[] for _ in result.logs]
    files = []
    for seat, log in enumerate(result.logs):
        wires = list(log)
        if fake_in_own is not None and spec.peer_ids[seat] == fake_in_own[0].author:
            wires.append(fake_in_own[1])
        records = log_records(spec, seat, wires, notes[seat], result.envelopes)
        files.append(log_file(spec, seat, records))
    return audit_result(result, files, seats=seats)


def _folded(report: AuditReport, fake: Message, cheat: int) -> bool:
    """Whether the audit folded the fake: the fold refuses it (a Nerts call in a round its
    author sits out)."""
    return any(
        v.kind is FindingKind.REFUSED and v.seat == cheat and v.seq == fake.seq
        for v in report.violations
    )


# Not at 3 seats since session 42: there the sleeper is one of the two tied, and its drop
# decides the tie (docs/protocol.md §8.9): the game ends before the fake is signed.
@pytest.mark.parametrize("players", [4, 5])
def test_lone_fake_only_a_dropped_sleeper_holds_changes_no_digest(players: int) -> None:
    _, sleeper, _, cheat, _ = SHAPES[players]
    result = _played(players)
    fake, _ = _lone_fake(result, sleeper, cheat)
    finals = settled(result)
    assert len(finals) == players - 2  # every member but the cheater and the sleeper
    assert all(final.dropped.keys() == {sleeper} for final in finals)
    assert result.violations == []
    report = result.audit
    assert report is not None and report.finished
    assert report.digest == finals[0].digest()
    assert not _folded(report, fake, cheat)
    # The cheater is still named, from the sleeper's log: its own log lacks its event, and
    # the fake is timed below the clock its author announced (the sleeper's proof note).
    against = {v.kind for v in report.errors if v.seat == cheat}
    assert {FindingKind.GAP, FindingKind.CLOCK_BELOW_ACK} <= against
    assert [v for v in report.errors if v.seat != cheat] == []


def test_which_logs_are_given_decides_whether_the_fake_counts() -> None:
    _, sleeper, _, cheat, _ = SHAPES[4]  # (4 seats: at 3 the game ends before the fake)
    result = _played(4)
    lone = _lone_fake(result, sleeper, cheat)
    fake = lone[0]
    table = settled(result)[0].digest()
    honest = next(q for q in range(4) if q not in (sleeper, cheat))
    # The sleeper's log not given: the fake is not read at all.
    without = _audit(result, [cheat, honest])
    assert without.digest == table and not _folded(without, fake, cheat)
    # The author's own log and the sleeper's, the other member's missing: the author's log
    # says it never sent the fake, and no member still in holds it.
    assert _audit(result, [cheat, sleeper]).digest == table
    # The author's own log missing: nothing says the table did not take it; the audit folds
    # what the logs hold (and the fake, refused, names its author).
    unwitnessed = _audit(result, [sleeper, honest])
    assert _folded(unwitnessed, fake, cheat) and unwitnessed.digest != table
    # In the author's own log too: its word that it sent it, and it counts.
    logged = _audit(result, [cheat, sleeper, honest], fake_in_own=lone)
    assert _folded(logged, fake, cheat) and logged.digest != table


def test_fake_the_sleeper_relayed_before_it_slept_counts() -> None:
    """Seat 0 sleeps from 28 s, a second after the fake came (4 seats, seed 8): awake, it
    announced holding it, the others fetched it from it, and the cheater's vote on the
    sleeper, its real event under that seq, is its fork. The votes keep the fake's chain;
    every peer still in folds the fake, and so does the audit."""
    players, (_, sleeper, _, cheat, _) = 4, SHAPES[4]
    result = run(_config(players, sleeps_at=28.0))
    assert result.violations == []
    finals = settled(result)
    assert finals and all(final.dropped.keys() == {sleeper, cheat} for final in finals)
    report = result.audit
    assert report is not None and report.digest == finals[0].digest()
    honest = [q for q in range(players) if q not in (sleeper, cheat)]
    fakes = {_feed(result, q, cheat)[finals[0].dropped[cheat]][0].id for q in honest}
    assert len(fakes) == 1  # every member still in holds the same version
    refused = [v for v in report.errors if v.kind is FindingKind.REFUSED and v.seat == cheat]
    assert [v.event for v in refused] == ["nerts"]


def test_fork_whose_real_version_the_author_logged_counts() -> None:
    """The fake before the cheater's vote on the sleeper (3 seats, seed 0, at 22 s): its vote
    is its real event under the fake's seq, in its own log and the other member's; the fake
    is in the sleeper's log alone. The vote counts, for every peer still in and the audit."""
    _, sleeper, _, cheat, _ = SHAPES[3]
    result = run(_config(3, forks_at=22.0))
    assert result.violations == []
    finals = settled(result)
    assert finals and all(sleeper in final.dropped for final in finals)
    honest = next(q for q in range(3) if q not in (sleeper, cheat))
    own, taken, slept = (_feed(result, q, cheat) for q in (cheat, honest, sleeper))
    seq = max(own)
    # (The shape under test: the sleeper logged the fake first, the real event when it woke.)
    assert own[seq][0].id == taken[seq][0].id != slept[seq][0].id
    report = result.audit
    assert report is not None and report.digest == finals[0].digest()
    assert report.state is not None
    votes = report.state.roster.votes.get(sleeper, ())
    assert any(voter == cheat for voter, _ in votes)
    assert FindingKind.EQUIVOCATION in {v.kind for v in report.errors if v.seat == cheat}
