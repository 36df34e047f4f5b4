"""A member that withdraws its votes against one member too often commits a flap fault
(:mod:`p2p_nertz.protocol.flaps`, docs/protocol.md §9.4 *too many flaps*).

The rule's counting (``withdrawn``, ``barred``, ``check_vote``) on values; then the game fold
on events built by hand (``Folds``, as a peer holds them): a flapper's withdrawal past the
limit is found by the fold, its later votes count for nothing, the others' votes *flapping*
that name that withdrawal drop it, and a vote *flapping* that names no fault (a member within
the limit, or the wrong event) is refused, so a forged proof drops nobody. The wire form of the
vote. The simulator's flapper at 3 and 4 players (voted out by every other member, the game
goes on and finishes, every peer's fold and the audit of every log find the same fault, the
invariants hold and nobody honest is named) and at 2 (the other member abandons the game).
"""

from __future__ import annotations

import functools

import msgpack
import pytest

from p2p_nertz.audit.findings import FindingKind
from p2p_nertz.protocol.bodies import Drop, DropReason, Join, encode_body, parse_body
from p2p_nertz.protocol.envelope import KIND_DROP, Kind
from p2p_nertz.protocol.flaps import FLAP_LIMIT, Flaps, barred, check_vote, due, withdrawn
from p2p_nertz.protocol.fold_values import RefusalCode
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.membership import Membership, SilenceTimers
from p2p_nertz.protocol.state import Event, GameState
from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, Partition, SimConfig, SimResult, check, run
from p2p_nertz.sim.cheats import VoteFlapper
from tests.test_folds_dropped_past_cut import _drops, _spec

_S, _W, _F = DropReason.SILENT, DropReason.WITHDRAW, DropReason.FLAPPING


def _flaps(
    times: int, *, target: int = 0, round_number: int = 1, start: Flaps | None = None
) -> Flaps:
    """``times`` withdrawals of seat 2 against ``target`` (its events 2, 4, ...)."""
    flaps = start or Flaps()
    for i in range(times):
        flaps = withdrawn(flaps, 2, target, 2 + 2 * i, round_number)
    return flaps


def test_flaps_the_withdrawal_past_the_limit_is_the_fault_and_it_stays() -> None:
    within = _flaps(FLAP_LIMIT)
    assert within.faults == {}
    over = withdrawn(within, 2, 0, 99, 1)
    assert over.faults == {2: 99}
    assert within.faults == {}  # (a new value: the fold's copies share the old one)
    # Later withdrawals, and a new round, keep the first fault.
    assert withdrawn(over, 2, 0, 101, 1).faults == {2: 99}
    assert withdrawn(over, 2, 0, 101, 2).faults == {2: 99}


def test_flaps_are_counted_per_member_voted_and_per_round() -> None:
    # The limit against each of two members: no fault.
    both = _flaps(FLAP_LIMIT, target=1, start=_flaps(FLAP_LIMIT, target=0))
    assert both.faults == {}
    # The limit in one round and the limit again in the next: no fault.
    two_rounds = _flaps(FLAP_LIMIT, round_number=2, start=_flaps(FLAP_LIMIT, round_number=1))
    assert two_rounds.faults == {}
    assert _flaps(FLAP_LIMIT + 1, round_number=2).faults == {2: 2 + 2 * FLAP_LIMIT}


def test_flaps_bar_the_members_votes_signed_past_its_fault_only() -> None:
    flaps = _flaps(FLAP_LIMIT + 1)
    fault = flaps.faults[2]
    vote = Drop((), 1, 5, _S)
    assert not barred(flaps, 2, fault - 1, vote)  # (signed before it: counts)
    assert barred(flaps, 2, fault + 1, vote)
    assert barred(flaps, 2, fault + 1, Drop((), 1, 5, DropReason.WITHHELD))
    assert not barred(flaps, 2, fault + 1, Drop((), 1, 0, _W))  # (withdrawals are no votes)
    assert not barred(flaps, 1, fault + 1, vote)  # (another member's)


def test_flaps_a_vote_proves_only_the_fault_the_fold_found() -> None:
    flaps = _flaps(FLAP_LIMIT + 1)
    fault = flaps.faults[2]
    assert check_vote(flaps, Drop((), 2, fault, _F, fault)) is None
    assert check_vote(flaps, Drop((), 2, fault, _F, fault - 2)) is not None  # (another event)
    assert check_vote(_flaps(FLAP_LIMIT), Drop((), 2, fault, _F, fault)) is not None
    assert check_vote(flaps, Drop((), 1, fault, _F, fault)) is not None  # (another member)


def _wire(body: Drop) -> object:
    """``body`` as the envelope hands it to :func:`parse_body` (arrays as tuples)."""
    return msgpack.unpackb(msgpack.packb(encode_body(body)), use_list=False)


def test_flaps_the_vote_on_the_wire_names_its_fault() -> None:
    ids = tuple(bytes([i]) * 8 for i in range(40))
    vote = Drop((3, 40, 5), 1, 40, _F, 38, ids, (b"a" * 8, ids[-1], b"c" * 8))
    parsed = parse_body(Kind.DROP, _wire(vote), 3)
    assert isinstance(parsed, Drop)
    assert (parsed.reason, parsed.fork_seq, parsed.last_seq) == (_F, 38, 40)
    unnamed = Drop((3, 40, 5), 1, 40, _F, 0, ids, vote.frontier_ids)
    with pytest.raises(ValueError, match="fork seq"):
        parse_body(Kind.DROP, _wire(unnamed), 3)


@pytest.mark.parametrize(("reason", "stands"), [(_F, True), (_S, False)])
def test_flaps_a_vote_flapping_read_back_from_the_log_stands(
    reason: DropReason, stands: bool
) -> None:
    """A peer restored from its log takes its vote *flapping* back as one that stands when
    the member is heard (one for silence is withdrawn then), and votes no second time."""
    membership = Membership(0, 3, 0.0, SilenceTimers(1.0, 3.0, 6.0, 64))
    membership.take_back((1, 1, 40), Drop((1, 1, 40), 2, 40, reason, 38 if stands else 0))
    assert membership.voted == {2: 40}
    assert (2 in membership.proven_seats) is stands
    assert due(Flaps(faults={2: 38}), 0, 3, {}, membership.voted) == []
    assert due(Flaps(faults={2: 38}), 0, 3, {}, {}) == [2]
    # Two members left (of two, or of three with one dropped): no vote.
    assert due(Flaps(faults={1: 38}), 0, 2, {}, {}) == []
    assert due(Flaps(faults={2: 38}), 0, 3, {1: 5}, {}) == []


# -- the game fold, on events built by hand ----------------------------------------------------
class _Table:
    """Three seats: each joined; seat 2 votes seat 0 out for silence and withdraws ``flaps``
    times; then the events :meth:`add` appends. Each frontier holds every event signed."""

    def __init__(self, flaps: int) -> None:
        self.seqs = [2, 2, 2]
        self.lamport = 10
        self.events = [Event(s, 1, 1 + s, Kind.JOIN, Join(frontier=(0, 0, 0))) for s in range(3)]
        self.withdrawals: list[int] = []
        for _ in range(flaps):
            self.add(2, Drop(self.held(), 0, 1, _S))
            self.withdrawals.append(self.add(2, Drop(self.held(), 0, 0, _W)))

    def held(self) -> tuple[int, ...]:
        return tuple(s - 1 for s in self.seqs)

    def add(self, seat: int, body: Drop) -> int:
        seq = self.seqs[seat]
        self.lamport += 1
        self.events.append(Event(seat, seq, self.lamport, KIND_DROP, body))
        self.seqs[seat] += 1
        return seq

    def vote(self, voter: int, target: int, reason: DropReason, fork: int = 0) -> None:
        last = self.seqs[target] - 1
        self.add(voter, Drop(self.held(), target, last, reason, fork))


def _tentative(table: _Table) -> GameState:
    folds = Folds(GameState(_spec(3)))
    for event in sorted(table.events, key=lambda e: e.key):
        folds.add(event, 0)
    return folds.tentative


def test_flaps_the_others_drop_a_flapper_on_the_withdrawal_past_the_limit() -> None:
    table = _Table(FLAP_LIMIT + 1)
    fault = table.withdrawals[-1]
    table.vote(0, 2, _F, fault)
    table.vote(1, 2, _F, fault)
    state = _tentative(table)
    assert state.flaps.faults == {2: fault}
    assert state.violations == ()
    assert _drops(_spec(3), table.events) == {2: table.seqs[2] - 1}


@pytest.mark.parametrize("reason", [_F, _S])
def test_flaps_a_flapper_voted_out_is_not_readmitted(reason: DropReason) -> None:
    """As a member dropped on proof of a fork: a readmission of it is refused (§9.8); one
    dropped for silence is readmitted."""
    table = _Table(FLAP_LIMIT + 1)
    fault = table.withdrawals[-1] if reason is _F else 0
    table.vote(0, 2, reason, fault)
    table.vote(1, 2, reason, fault)
    cut = table.seqs[2] - 1
    table.add(0, Drop(table.held(), 2, cut + 1, DropReason.REJOIN))
    state = _tentative(table)
    assert state.dropped == {2: cut}
    refused = [(v.seat, getattr(v.reason, "code", None)) for v in state.violations]
    assert refused == ([(0, RefusalCode.BAD_REJOIN)] if reason is _F else [])
    assert (2 in state.rejoining) is (reason is _S)


@pytest.mark.parametrize("flaps", [FLAP_LIMIT, FLAP_LIMIT + 1])
def test_flaps_a_vote_naming_no_fault_is_refused_and_drops_nobody(flaps: int) -> None:
    """Within the limit, votes naming its last withdrawal prove nothing; past it, votes naming
    an earlier withdrawal than the one past the limit prove nothing either."""
    table = _Table(flaps)
    named = table.withdrawals[FLAP_LIMIT - 1]  # (the last within the limit)
    table.vote(0, 2, _F, named)
    table.vote(1, 2, _F, named)
    state = _tentative(table)
    assert state.dropped == {}
    refused = [(v.seat, getattr(v.reason, "code", None)) for v in state.violations]
    assert refused == [(0, RefusalCode.UNPROVEN_FLAP), (1, RefusalCode.UNPROVEN_FLAP)]


@pytest.mark.parametrize(("flaps", "dropped"), [(FLAP_LIMIT, True), (FLAP_LIMIT + 1, False)])
def test_flaps_the_flappers_vote_past_its_fault_counts_for_nothing(
    flaps: int, dropped: bool
) -> None:
    """Seat 2 then votes seat 1 out, and so does seat 0: a majority of three, unless seat 2
    is at a flap fault (then its vote counts nothing, and seat 1 stays)."""
    table = _Table(flaps)
    table.vote(2, 1, _S)
    table.vote(0, 1, _S)
    assert (1 in _drops(_spec(3), table.events)) is dropped


# -- the simulator's flapper --------------------------------------------------------------------
_PARTITIONS = {
    2: (),
    3: (Partition(1.0, 6.0, (frozenset({0, 1}), frozenset({1, 2}))),),
    4: (Partition(1.0, 6.0, (frozenset({0, 1}), frozenset({2, 3}))),),
}


@functools.cache
def _game(players: int, flaps: int) -> SimResult:
    cheater = players - 1
    faults = Faults(
        delay=0.005,
        jitter=0.002,
        partitions=_PARTITIONS[players],
        deck_cheats=(VoteFlapper(cheater, 0, flaps, 0.005, 0.5),),
    )
    config = SimConfig(
        players=players,
        seed=1,
        rules=Rules(target=None, rounds=1),
        faults=faults,
        peer=QUICK_TIMERS,
        max_time=120.0,
    )
    return run(config)


@pytest.mark.parametrize("players", [3, 4])
def test_flaps_the_simulators_flapper_is_voted_out_and_the_game_goes_on(players: int) -> None:
    result = _game(players, 60)
    cheater = players - 1
    assert result.finished
    assert check(result) == []  # (the invariants: no honest member named, the audit agrees)
    faults = set()
    for seat, peer in enumerate(result.peers):
        assert peer is not None
        if seat == cheater:
            continue
        final = peer.final
        faults.add(tuple(final.flaps.faults.items()))
        assert cheater in final.dropped
        voters = {v for v, vote in final.votes.get(cheater, ()) if vote.reason is _F}
        assert voters == set(range(players)) - {cheater}
        # Its flaps stopped counting at the fault: far fewer were read than it would sign.
        read = [b for a, _, b in final.roster.read if a == cheater and b is not None]
        assert len(read) < 2 * 60
    assert len(faults) == 1
    ((found,),) = faults
    assert found[0] == cheater
    assert result.audit is not None
    named = [f for f in result.audit.errors if f.kind is FindingKind.FLAP_FAULT]
    assert [(f.seat, f.seq) for f in named] == [found]
    assert {d.seat: d.reasons for d in result.audit.drops}[cheater] == ("flapping",)


def test_flaps_at_two_players_the_flappers_votes_count_for_nothing_and_the_game_goes_on() -> None:
    """Two members: no majority drops one of two, and a vote *flapping*, which stands, would
    freeze the other's announcements of the flapper's feed and the game with them. So nobody
    votes; past its fault, the flapper's votes against the other count for nothing (its last
    one, standing, is frozen: read, never counted), and the game finishes with both in."""
    result = _game(2, 60)
    assert result.finished
    assert check(result) == []
    for peer in result.peers:
        assert peer is not None
        final = peer.final
        fault = final.flaps.faults[1]
        assert final.dropped == {}
        assert all(v.reason is not _F for _, _, v in final.roster.read if v is not None)
        late = [s for a, s, b in final.roster.read if a == 1 and b is not None and b.reason is _S]
        assert late and max(late) > fault  # (it voted past its fault: those did not count)
        assert all(voter != 1 for voter, _ in final.votes.get(0, ()))
