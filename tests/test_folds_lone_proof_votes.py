"""Votes on proof that except each other's members (docs/protocol.md §9.2, *a member proven
to cheat*; session 38, rebuilt on real forks and relaxed in session 41).

A member proven to cheat is dropped on the votes of every member left, except members its
voters all voted out: for silence (soak seed 224's rule), or on proof. Sessions 38 to 40
asked a strict majority for the votes on proof: the fold could not check a proof then, and
one voter's made-up proofs against every other member excepted each from the other's drop
and dropped them all on its word alone (``quote_proof``, three players, seed 1). Since
session 39 a vote on proof counts only with the two signed versions of the fork, so a
member voted out on proof did fork, whoever voted: two proven cheaters beside one honest
member are dropped by its votes alone (they waited for good before session 41), and a
member some voter has not voted out is still needed.

Every table here is real: each member's feed is signed messages chained by id, decoded and
folded as a peer delivers them (``Folds``: tentative and final, ``finality.settle``). A
member proven to cheat signed two versions of its event 5 (the fork), one of them in its
feed; each vote on it counts its events up to 4, quotes their ids and carries the two signed
versions, which every fold checks (``evidence.vote_unproven``): no vote here is refused, so
each verdict stands on the proofs behind it.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import pytest

from p2p_nertz.protocol.bodies import (
    ID_PREFIX,
    Drop,
    DropReason,
    EventBody,
    Join,
    encode_body,
    held_ids,
    kind_of,
    parse_body,
)
from p2p_nertz.protocol.envelope import Message, decode_message, encode_message
from p2p_nertz.protocol.fold_values import Event
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import GameState
from tests.proof_helpers import key_of
from tests.test_folds_dropped_past_cut import _capped, _drops, _spec

_E, _S, _W = DropReason.EQUIVOCATION, DropReason.SILENT, DropReason.WITHDRAW
FORK = 5  # (the seq each cheater signs twice; its votes count the four before)


class _Table:
    """Each member's feed, signed and chained: every event holds all the others' feeds as
    far as they go (its frontier, with their ids), at a Lamport time past all of them."""

    def __init__(self, spec: GameSpec) -> None:
        self.spec = spec
        self.keys = [key_of(spec, s) for s in range(spec.seats)]
        self.feeds: list[list[Message]] = [[] for _ in range(spec.seats)]
        self.events: list[Event] = []
        self.lamport = 10
        self.proofs: dict[int, tuple[bytes, bytes]] = {}
        self.forked: dict[int, Message] = {}  # (each cheater's version of FORK in its feed)

    def _signed(self, seat: int, body: EventBody, lamport: int) -> tuple[bytes, Message]:
        frontier = tuple(len(feed) for feed in self.feeds)
        body = dataclasses.replace(
            body, frontier=frontier, frontier_ids=held_ids(self.feeds, frontier)
        )
        feed = self.feeds[seat]
        wire = encode_message(
            self.keys[seat],
            game_id=self.spec.game_id,
            seq=len(feed) + 1,
            prev=feed[-1].id if feed else None,
            lamport=lamport,
            kind=kind_of(body),
            body=encode_body(body),
            version=self.spec.wire_version,
        )
        message = decode_message(wire, game_id=self.spec.game_id, roster=self.spec.peer_ids)
        return wire, message

    def _hold(self, seat: int, message: Message) -> None:
        body = cast(EventBody, parse_body(message.kind, message.body, self.spec.seats))
        self.feeds[seat].append(message)
        self.events.append(
            Event(seat, message.seq, message.lamport, message.kind, body, message.id)
        )

    def add(self, seat: int, body: EventBody) -> None:
        self.lamport += 1
        self._hold(seat, self._signed(seat, body, self.lamport)[1])

    def fork(self, seat: int) -> None:
        """``seat`` signs its event :data:`FORK` twice; the first goes into its feed once
        the votes are in (:meth:`done`), both into every vote on it."""
        assert len(self.feeds[seat]) == FORK - 1
        self.lamport += 2
        (wire, one), (other_wire, other) = (
            self._signed(seat, Drop((), (seat + 1) % self.spec.seats, 0, _W), self.lamport - i)
            for i in (1, 0)
        )
        assert one.seq == other.seq == FORK and one.id != other.id
        self.forked[seat] = one
        self.proofs[seat] = (wire, other_wire)

    def vote(self, voter: int, target: int, reason: DropReason) -> None:
        """``voter`` votes ``target`` out counting its four events, quoting their ids; on
        proof, of its fork at :data:`FORK`, carrying the two versions."""
        last = FORK - 1
        ids = tuple(m.id[:ID_PREFIX] for m in self.feeds[target][:last])
        if reason is _E:
            body = Drop((), target, last, _E, FORK, ids, proof=self.proofs[target])
        else:
            body = Drop((), target, last, reason, 0, ids)
        self.add(voter, body)

    def done(self) -> list[Event]:
        """The events, each cheater's version of its fork among them (timed as signed)."""
        for seat, message in sorted(self.forked.items()):
            self._hold(seat, message)
        return self.events


def _table(players: int, cheaters: tuple[int, ...], votes: list[tuple[int, int]]) -> list[Event]:
    """Every seat joins and signs three no-op events; each of ``cheaters`` forks at its
    event 5; then each ``(voter, target)`` in turn: on proof against a cheater, for silence
    against any other member."""
    table = _Table(_spec(players))
    zeros = (0,) * players
    for s in range(players):
        table.add(s, Join(frontier=zeros))
    for _ in range(3):
        for s in range(players):
            table.add(s, Drop((), (s + 1) % players, 0, _W))
    for seat in cheaters:
        table.fork(seat)
    for voter, target in votes:
        table.vote(voter, target, _E if target in cheaters else _S)
    return table.done()


def _verdict(players: int, events: list[Event]) -> dict[int, int]:
    """The drops every fold of ``events`` makes (:func:`_drops`: the tentative fold, and the
    final fold once all is final), no vote refused."""
    spec = _spec(players)
    folds = _capped(spec, events)
    for state in (folds.tentative, folds.final):
        assert isinstance(state, GameState)
        assert state.violations == (), [str(v) for v in state.violations]
    return _drops(spec, events)


@pytest.mark.parametrize("players", [3, 4, 5])
def test_folds_one_voters_votes_on_proof_against_every_other_member_drop_them_all(
    players: int,
) -> None:
    """Seat 0 votes every other member out on proof, each proven to have forked: each is
    excepted from the others' drops (its fork proven), and seat 0's votes alone drop them
    all; at three players, two proven cheaters that never vote beside one honest member.
    Sessions 38 to 40 dropped none (one voter is no majority): the table waited for good."""
    others = tuple(range(1, players))
    events = _table(players, others, [(0, q) for q in others])
    assert _verdict(players, events) == dict.fromkeys(others, 4)


def test_folds_a_lone_proof_vote_beside_a_member_voted_out_for_silence_still_drops() -> None:
    """Soak seed 224's rule, kept: three players, the cheater's one voter voted the third
    member out for silence; that member is not needed, and the cheater is dropped."""
    events = _table(3, (2,), [(1, 0), (1, 2)])
    assert _verdict(3, events) == {2: 4}


def test_folds_a_majoritys_votes_on_proof_against_two_cheaters_drop_both() -> None:
    """Five players, seats 3 and 4 each proven by seats 0 to 2, voting on neither: the
    honest majority's votes on proof except each cheater from the other's drop."""
    events = _table(5, (3, 4), [(v, q) for q in (3, 4) for v in (0, 1, 2)])
    assert _verdict(5, events) == {3: 4, 4: 4}


def test_folds_half_the_tables_votes_on_proof_against_the_other_half_drop_both() -> None:
    """Four players, seats 0 and 1 voting seats 2 and 3 out on proof: two of four, no strict
    majority, but each of 2 and 3 proven to have forked is excepted from the other's drop,
    and both are dropped (sessions 38 to 40: neither, and two honest members and two proven
    cheaters that never vote waited for good)."""
    events = _table(4, (2, 3), [(v, q) for q in (2, 3) for v in (0, 1)])
    assert _verdict(4, events) == {2: 4, 3: 4}


@pytest.mark.parametrize("players", [3, 4, 5])
def test_folds_votes_on_proof_never_except_a_member_not_proven(players: int) -> None:
    """The exception asks a standing vote of every voter: seat 0 proves seat 1's fork and
    votes on nobody else; every other member is honest and silent on it, so each is needed
    and seat 1 stays in, as does every honest member (no vote against one)."""
    events = _table(players, (1,), [(0, 1)])
    assert _verdict(players, events) == {}


def test_folds_a_cheater_proven_by_some_of_the_voters_only_is_still_needed() -> None:
    """Four players, seats 2 and 3 proven to have forked. Seat 0 votes on both: seat 1, on
    neither, is needed for each drop, and nobody is dropped. Seat 1 votes on seat 2 too:
    seat 3 is needed for seat 2's drop (seat 1 has not voted it out), and nobody is dropped.
    Seat 1 votes on seat 3 as well: both are."""
    one = _table(4, (2, 3), [(0, 2), (0, 3)])
    assert _verdict(4, one) == {}
    two = _table(4, (2, 3), [(0, 2), (0, 3), (1, 2)])
    assert _verdict(4, two) == {}
    three = _table(4, (2, 3), [(0, 2), (0, 3), (1, 2), (1, 3)])
    assert _verdict(4, three) == {2: 4, 3: 4}
