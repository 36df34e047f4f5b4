"""A vote on proof carries its proof, and every fold refuses one that proves nothing
(docs/protocol.md §9.2, *a vote on proof carries its proof*; session 39).

Hand-built events folded by the game fold (``GameState``: the one fold the peer's two, the
spectator's, the audit's and the simulator's are): three members, seats 0 and 1 vote seat 2
out on proof of a fork at its event 2. Two votes that stand drop it; a vote whose proof is
missing, of another member, of another seq, badly signed, or two copies of one event, is
refused (``unproven_vote``) and counts for nothing. The wire's side: the body's schema and
the size of the largest vote on proof.
"""

from __future__ import annotations

import dataclasses

import pytest

from p2p_nertz.protocol.bodies import (
    PROOF_MESSAGE_MAX,
    VOTE_WINDOW,
    Beat,
    Drop,
    DropReason,
    Join,
    Leave,
    encode_body,
    parse_body,
)
from p2p_nertz.protocol.envelope import (
    KIND_DROP,
    KIND_JOIN,
    MAX_MESSAGE_SIZE,
    MAX_VOTE_SIZE,
    Carried,
    InvalidMessageError,
    Kind,
    decode_message,
    encode_message,
)
from p2p_nertz.protocol.evidence import vote_unproven
from p2p_nertz.protocol.fold_values import Event, RefusalCode
from p2p_nertz.protocol.proofs import VERSION_ASKS, Proofs
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import GameState
from tests.proof_helpers import fork_proof, key_of
from tests.test_folds_dropped_past_cut import _spec

TARGET, FORK = 2, 2
_E = DropReason.EQUIVOCATION


def _fold(spec: GameSpec, proofs: list[tuple[bytes, ...]], fork: int = FORK) -> GameState:
    """Everyone joins; seat ``i`` votes seat 2 out on proof ``proofs[i]`` of a fork at
    ``fork``, counting its join."""
    n = spec.seats
    state = GameState(spec)
    for s in range(n):
        state.apply(Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=(0,) * n)))
    for voter, proof in enumerate(proofs):
        body = Drop((1,) * n, TARGET, 1, _E, fork, (), proof=proof)
        state.apply(Event(voter, 2, 10 + voter, KIND_DROP, body))
    return state


def _refused(state: GameState) -> list[tuple[int, RefusalCode]]:
    return [(v.seat, v.code) for v in state.violations]


def test_two_votes_whose_proofs_stand_drop_the_member() -> None:
    spec = _spec(3)
    proof = fork_proof(spec, TARGET, FORK)
    state = _fold(spec, [proof, proof[::-1]])
    assert _refused(state) == []
    assert state.dropped == {TARGET: 1}


def _broken(wire: bytes) -> bytes:
    damaged = bytearray(wire)
    damaged[-1] ^= 1  # (the signature's last byte)
    return bytes(damaged)


def _badly_signed(proof: tuple[bytes, bytes]) -> tuple[bytes, bytes]:
    return (proof[0], _broken(proof[1]))


_BAD = {
    "none": lambda spec: (),
    "another member's": lambda spec: fork_proof(spec, 1, FORK),
    "another seq's": lambda spec: fork_proof(spec, TARGET, FORK + 1),
    "badly signed": lambda spec: _badly_signed(fork_proof(spec, TARGET, FORK)),
    "one event twice": lambda spec: (fork_proof(spec, TARGET, FORK)[0],) * 2,
}


@pytest.mark.parametrize("kind", list(_BAD))
def test_a_vote_whose_proof_proves_nothing_is_refused_and_drops_nobody(kind: str) -> None:
    spec = _spec(3)
    good = fork_proof(spec, TARGET, FORK)
    state = _fold(spec, [good, _BAD[kind](spec)])
    assert _refused(state) == [(1, RefusalCode.UNPROVEN_VOTE)]
    assert state.dropped == {}  # (one vote of three that counts: no drop)
    assert [voter for voter, _ in state.votes.get(TARGET, ())] == [0]  # (counted: seat 0's)


def test_at_two_members_a_lone_forged_vote_on_proof_drops_nobody() -> None:
    """Session 38's open fault: at two members the vote of the one left is every vote; a
    forged one dropped the honest member, and the game never ended."""
    spec = _spec(2)
    target = 1
    state = GameState(spec)
    for s in range(2):
        state.apply(Event(s, 1, 1 + s, KIND_JOIN, Join(frontier=(0, 0))))
    forged = fork_proof(spec, 0, FORK)  # (a true fork, of the voter's own feed)
    body = Drop((1, 1), target, 1, _E, FORK, (), proof=forged)
    state.apply(Event(0, 2, 10, KIND_DROP, body))
    assert _refused(state) == [(0, RefusalCode.UNPROVEN_VOTE)]
    assert state.dropped == {}
    true = dataclasses.replace(body, proof=fork_proof(spec, target, FORK))
    state.apply(Event(0, 3, 11, KIND_DROP, true))
    assert state.dropped == {target: 1}  # (a true proof drops the cheater, as before)


def _clock_lie(spec: GameSpec, head: int) -> tuple[bytes, bytes]:
    """A beat of seat 2 announcing ``head``, and its event ``head + 1`` timed as the beat: a
    lie about time, proving its events ``head + 1`` on (``Proof.span``)."""
    key, n = key_of(spec, TARGET), spec.seats
    event = fork_proof(spec, TARGET, head + 1)[0]
    beat = Beat(
        head,
        bytes(32),
        tuple(head if s == TARGET else 0 for s in range(n)),
        tuple(b"\0" * 8 if s == TARGET else b"" for s in range(n)),
    )
    wire = encode_message(
        key,
        game_id=spec.game_id,
        seq=0,
        prev=None,
        lamport=decode_message(event).lamport,
        kind=Kind.BEAT,
        body=encode_body(beat),
        version=spec.wire_version,
    )
    return wire, event


def test_a_clock_lies_proof_stands_for_the_seqs_it_proves_only() -> None:
    spec = _spec(3)
    lie = _clock_lie(spec, 1)  # (head 1: proves the events from 2 on, Proof.span)
    vote = Drop((1, 1, 1), TARGET, 1, _E, FORK, (), proof=lie)
    assert vote_unproven(vote, game_id=spec.game_id, roster=spec.peer_ids, seats=3) == ""
    state = _fold(spec, [lie, lie])
    assert _refused(state) == []
    assert state.dropped == {TARGET: 1}
    # A lie about time at event 2 proves nothing of event 1 (its fork seq below the span).
    below = dataclasses.replace(vote, fork_seq=1)
    assert "not of event 1" in vote_unproven(
        below, game_id=spec.game_id, roster=spec.peer_ids, seats=3
    )


def test_a_vote_on_proof_without_its_proof_field_is_a_bad_body() -> None:
    n = 3
    frontier = [[1] * n, [b"\0" * 8] * n]
    six = [frontier, TARGET, 1, int(_E), FORK, [b"\1" * 8]]
    seven = [*six, [0, b""]]  # (what its author took past what it counts: nothing, session 42)
    with pytest.raises(ValueError, match="a vote on proof's body"):
        parse_body(Kind.DROP, _tuples(six), n)
    with pytest.raises(ValueError, match="a vote on proof's body"):  # (a session-41 vote's)
        parse_body(Kind.DROP, (*_tuples(six), Carried((b"\2", b"\3"))), n)  # type: ignore[misc]
    with pytest.raises(ValueError, match="carries its proof"):
        parse_body(Kind.DROP, _tuples([*seven, []]), n)
    big = b"\2" * (PROOF_MESSAGE_MAX + 1)
    with pytest.raises(ValueError, match=f"at most {PROOF_MESSAGE_MAX} bytes"):
        parse_body(Kind.DROP, (*_tuples(seven), Carried((big, b"\3"))), n)  # type: ignore[misc]
    # The proof is carried beside the payload (session 41): one signed inline is refused.
    with pytest.raises(ValueError, match="beside its payload, not signed inline"):
        parse_body(Kind.DROP, _tuples([*seven, [b"\2", b"\3"]]), n)
    # ...and a vote for another reason carries none.
    silent = [frontier, TARGET, 1, int(DropReason.SILENT), 0, [b"\1" * 8], [b"a", b"b"]]
    with pytest.raises(ValueError, match="a drop body"):
        parse_body(Kind.DROP, _tuples(silent), n)


def _tuples(value: object) -> object:
    """A body as msgpack decodes it (arrays as tuples)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def test_the_largest_vote_on_proof_fits_a_message() -> None:
    """Eight seats, every seq and clock at its widest (what its author took too, session 42),
    64 quoted ids, and a proof of two messages of :data:`PROOF_MESSAGE_MAX` bytes each:
    within ``MAX_VOTE_SIZE`` (a drop's
    limit, session 40), and it reads back as it was signed."""
    spec = _spec(8)
    key = key_of(spec, 0)
    wide = (1 << 63) - 1
    proof = (b"\xaa" * PROOF_MESSAGE_MAX, b"\xbb" * PROOF_MESSAGE_MAX)
    body = Drop(
        tuple(wide - (q == TARGET) for q in range(8)),  # (what it took lies past it)
        TARGET,
        wide,
        _E,
        wide,
        tuple(bytes([i]) * 8 for i in range(VOTE_WINDOW)),
        frontier_ids=(b"\xcc" * 8,) * 8,
        proof=proof,
        took_seq=wide,
        took_id=b"\xee" * 8,
    )
    wire = encode_message(
        key,
        game_id=spec.game_id,
        seq=wide,
        prev=b"\xdd" * 32,
        lamport=wide,
        kind=Kind.DROP,
        body=encode_body(body),
        version=spec.wire_version,
    )
    assert MAX_MESSAGE_SIZE < len(wire) <= MAX_VOTE_SIZE
    message = decode_message(wire, game_id=spec.game_id, roster=spec.peer_ids)
    assert parse_body(message.kind, message.body, 8) == body
    # Its signed part, what a proof of a fork of it carries (session 41), is a message's size.
    assert len(message.signed_wire) <= PROOF_MESSAGE_MAX < len(message.wire)


def test_a_fork_of_a_vote_on_proof_is_carried_by_its_signed_parts() -> None:
    """A fork of a drop whose proof makes it ~8 KB (two versions could not fit one vote until
    session 41: docs/protocol.md §13, *a fork too large to vote on*): the proof our vote
    carries is the two versions' signed parts (``Message.signed_wire``, within
    ``PROOF_MESSAGE_MAX``), which prove the fork in every fold (``vote_unproven``), and a vote
    carrying them is a message. A drop's signed part alone is no event: refused in a feed."""
    spec = _spec(3)
    key = key_of(spec, TARGET)
    versions = []
    for lamport in (7, 8):  # (the same vote signed at two clocks: a fork of it)
        vote = Drop((1,) * 3, 0, 1, _E, 1, (b"\1" * 8,), (b"",) * 3, proof=(b"\5" * 4000,) * 2)
        wire = encode_message(
            key,
            game_id=spec.game_id,
            seq=FORK,
            prev=bytes(32),
            lamport=lamport,
            kind=Kind.DROP,
            body=encode_body(vote),
            version=spec.wire_version,
        )
        versions.append(decode_message(wire, game_id=spec.game_id, roster=spec.peer_ids))
    first, second = versions
    assert len(first.wire) > PROOF_MESSAGE_MAX
    proofs = Proofs(0, 3, 8)
    assert proofs.equivocation(TARGET, first, second)
    carried = proofs.carried(TARGET, FORK)
    assert carried == (first.signed_wire, second.signed_wire)
    assert all(len(w) <= PROOF_MESSAGE_MAX for w in carried)
    ours = Drop((1,) * 3, TARGET, 1, _E, FORK, (b"\1" * 8,), (b"",) * 3, proof=carried)
    assert not vote_unproven(ours, game_id=spec.game_id, roster=spec.peer_ids, seats=3)
    wire = encode_message(
        key_of(spec, 0),
        game_id=spec.game_id,
        seq=2,
        prev=bytes(32),
        lamport=9,
        kind=Kind.DROP,
        body=encode_body(ours),
        version=spec.wire_version,
    )
    assert len(wire) <= MAX_MESSAGE_SIZE
    for part in carried:
        with pytest.raises(InvalidMessageError, match="does not carry it") as refused:
            decode_message(part, game_id=spec.game_id, roster=spec.peer_ids)
        assert refused.value.evidence is None  # (anyone can strip one: it blames nobody)


LOW, HIGH = 3, 4  # (a fork begun at 3, proven first at 4)


def _version(spec: GameSpec, seq: int, prev: bytes, lamport: int) -> bytes:
    """A signed event ``seq`` of the target naming ``prev``."""
    body = encode_body(Leave((0,) * spec.seats, (b"",) * spec.seats))
    key = key_of(spec, TARGET)
    return encode_message(
        key,
        game_id=spec.game_id,
        seq=seq,
        prev=prev,
        lamport=lamport,
        kind=Kind.LEAVE,
        body=body,
        version=spec.wire_version,
    )


def test_a_proof_whose_versions_name_two_prevs_is_voted_on_where_the_branches_part() -> None:
    """Two versions of ``HIGH`` naming different ``prev`` ids show the branches parted below
    (session 41, ``--lie brink_branch`` seed 1 at four players): no vote at ``HIGH``, which
    would count and quote our branch's event below, but a probe of ``LOW``; the two
    versions there, naming one ``prev``, are the fork voted on (docs/protocol.md §9.4)."""
    spec = _spec(3)
    proofs = Proofs(0, 3, 8)
    low = [decode_message(_version(spec, LOW, bytes(32), 10 + i)) for i in range(2)]
    high = [decode_message(_version(spec, HIGH, m.id, 20 + i)) for i, m in enumerate(low)]
    assert proofs.equivocation(TARGET, high[0], high[1])
    assert not proofs.parts_below(TARGET, HIGH, LOW - 1)  # (holding none of LOW: no quote)
    assert proofs.parts_below(TARGET, HIGH, HIGH)
    assert proofs.probes_due(1.0, {}, 5.0, {}) == [(TARGET, LOW)]
    assert proofs.equivocation(TARGET, low[0], low[1])
    assert proofs.forked_at == {TARGET: LOW}
    assert not proofs.parts_below(TARGET, LOW, HIGH)
    assert proofs.probes_due(9.0, {}, 5.0, {}) == []  # (proven: probed no more)
    assert len(proofs.carried(TARGET, LOW)) == 2
    assert proofs.parted_votes() == []


def test_a_prev_naming_no_event_defers_the_vote_on_proof_for_a_few_asks_only() -> None:
    """A ``prev`` is its author's word: a liar's two versions of ``HIGH`` may name a made-up
    id below, a version nobody can send (``--liars --two-liars --back readmit`` seed 186).
    The vote waits :data:`VERSION_ASKS` asks for it, then is due at ``HIGH``."""
    spec = _spec(3)
    proofs = Proofs(0, 3, 8)
    low = decode_message(_version(spec, LOW, bytes(32), 10))
    high = [
        decode_message(_version(spec, HIGH, prev, 20 + i))
        for i, prev in enumerate((low.id, b"\1" * 32))
    ]
    assert proofs.equivocation(TARGET, high[0], high[1]) and proofs.parts_below(TARGET, HIGH, HIGH)
    for ask in range(VERSION_ASKS):
        assert proofs.parted_votes() == [] and proofs.parts_below(TARGET, HIGH, HIGH)
        assert proofs.probes_due(10.0 * ask, {}, 5.0, {}) == [(TARGET, LOW)]
    assert not proofs.parts_below(TARGET, HIGH, HIGH)
    assert proofs.parted_votes() == [(TARGET, HIGH)] and proofs.parted_votes() == []


def test_a_fork_of_a_member_asking_back_is_probed_though_it_is_dropped_here() -> None:
    """A probe of a member dropped in our final fold, or voted out by us, is dropped, unless
    we hold its rejoin request: its readmission may wait on events naming its other branch,
    refused here until the proof comes (session 41, ``--lie brink_branch --back readmit``
    seed 8 at three players: a member honest, dropped, no end)."""
    proofs = Proofs(0, 3, 8)
    proofs.unproven[TARGET] = HIGH
    dropped, voted = {TARGET: LOW}, {TARGET: LOW}
    assert proofs.probes_due(1.0, dropped, 5.0, voted, {TARGET: HIGH}) == [(TARGET, HIGH)]
    assert proofs.probes_due(9.0, dropped, 5.0, {}) == [] and proofs.unproven == {}
