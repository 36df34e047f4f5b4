"""The audit checks the evidence behind every accusation: proof notes, votes and drops on proof
of cheating, forfeits (issue 13 §3; docs/audit.md, "Evidence").

Logs are real games' logs (tests/audit_helpers.py) with votes, notes and second versions
signed by hand with the members' own keys: the peers do not write ``proof`` notes yet, and
an accusation nobody can check is exactly what an honest peer never signs.
"""

from __future__ import annotations

import functools

import msgpack  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from p2p_nertz.audit import SPEC_NOTE, AuditReport, Finding, FindingKind
from p2p_nertz.logfile import Record, RecordKind
from p2p_nertz.protocol.bodies import ID_PREFIX, VOTE_WINDOW, Beat, Drop, DropReason, encode_body
from p2p_nertz.protocol.envelope import Kind, Message
from p2p_nertz.protocol.evidence import (
    PROOF_NOTE,
    InvalidProofError,
    ProofKind,
    ProofProblem,
    check_proof,
    encode_proof,
)
from p2p_nertz.protocol.peer import Record as LogEffect
from p2p_nertz.protocol.state import Phase
from p2p_nertz.rules import Rules
from tests.audit_helpers import Game, Logs, events_of, played, sign_like, vote
from tests.peer_helpers import PeerNetwork, PuppetPeer, sign

K = FindingKind
TARGET = 2  # the member accused in these tests
FORK = 5  # the seq its accusers name


@pytest.fixture
def game() -> Game:
    return played()


def _only(report: AuditReport, kind: FindingKind) -> list[Finding]:
    return [v for v in report.violations if v.kind is kind]


def _second_version(game: Game, logs: Logs, seat: int, seq: int) -> tuple[bytes, bytes]:
    """``seat``'s event ``seq`` as the logs hold it, and another version it signs."""
    original = events_of(logs, seat, game.spec)[seq - 1]
    other = sign_like(game.identities[seat], original, lamport=original.lamport + 1000)
    return original.wire, other


def _lie(game: Game, logs: Logs, seat: int, head: int) -> tuple[bytes, bytes]:
    """A beat of ``seat`` announcing ``head``, timed at its event ``head + 1``: a lie about
    time (the beat says nothing of its would come at or below its clock past ``head``)."""
    feed = events_of(logs, seat, game.spec)
    event: Message = feed[head]
    n = game.spec.seats
    beat = Beat(
        head,
        feed[head - 1].id,
        tuple(head if s == seat else 0 for s in range(n)),
        tuple(feed[head - 1].id[:8] if s == seat else b"" for s in range(n)),
    )
    wire = sign(
        game.identities[seat],
        game.spec,
        kind=Kind.BEAT,
        body=encode_body(beat),
        lamport=event.lamport,
    )
    return wire, event.wire


# -- proof notes ---------------------------------------------------------------------------------
def test_audit_evidence_proof_codec_checks_both_signatures_and_the_contradiction(
    game: Game,
) -> None:
    logs = game.copy()
    roster = game.spec.peer_ids
    first, second = _second_version(game, logs, TARGET, FORK)
    proof = check_proof(encode_proof(first, second), game_id=game.spec.game_id, roster=roster)
    assert (proof.kind, proof.seq, proof.span) == (ProofKind.EQUIVOCATION, FORK, (FORK, FORK))
    beat, event = _lie(game, logs, TARGET, 10)
    for pair in ((beat, event), (event, beat)):  # either order
        lie = check_proof(encode_proof(*pair), game_id=game.spec.game_id, roster=roster)
        assert (lie.kind, lie.seq, lie.head, lie.span) == (ProofKind.CLOCK_LIE, 11, 10, (11, 11))
    agreeing, _ = _lie(game, logs, TARGET, 11)  # a beat with head 11 and event 11: no lie
    other_author = events_of(logs, 0, game.spec)[FORK - 1].wire
    for pair in ((first, first), (first, other_author), (agreeing, event), (beat, beat)):
        with pytest.raises(InvalidProofError) as refused:
            check_proof(encode_proof(*pair), game_id=game.spec.game_id, roster=roster)
        assert refused.value.problem is ProofProblem.NO_CONTRADICTION, pair
    with pytest.raises(InvalidProofError) as stranger:  # a roster without the author
        check_proof(encode_proof(first, second), game_id=game.spec.game_id, roster=roster[:2])
    assert stranger.value.problem is ProofProblem.UNVERIFIED


@functools.cache
def _fuzzed() -> tuple[Game, list[bytes]]:
    """The game the proof fuzzer draws from, and its target's first six events (played when
    the test runs, not when every worker collects the module)."""
    game = played()
    return game, [m.wire for m in events_of(game.logs, TARGET, game.spec)[:6]]


#: One of the target's first six events (:func:`_fuzzed`).
_WIRE = hs.integers(0, 5).map(lambda k: _fuzzed()[1][k])


@settings(max_examples=200, deadline=None)
@given(
    hs.one_of(
        hs.binary(max_size=64),
        hs.lists(_WIRE | hs.binary(max_size=40), max_size=3).map(
            lambda items: msgpack.packb(items, use_bin_type=True)
        ),
        hs.tuples(_WIRE, hs.integers(0, 200), hs.integers(0, 255)).map(
            lambda t: encode_proof(t[0], t[0][: t[1]] + bytes([t[2]]) + t[0][t[1] + 1 :])
        ),
    )
)
def test_audit_evidence_proof_check_raises_only_its_own_error(data: bytes) -> None:
    spec = _fuzzed()[0].spec
    try:
        proof = check_proof(data, game_id=spec.game_id, roster=spec.peer_ids)
    except InvalidProofError as exc:
        assert exc.problem in ProofProblem
    else:  # only a real contradiction passes
        assert proof.first.id != proof.second.id


def test_audit_evidence_vote_whose_proof_proves_nothing_is_named(game: Game) -> None:
    """Since session 39 a vote on proof carries its proof, and the fold refuses one whose
    proof proves nothing (two events of different seqs): its voter is named, nobody drops."""
    logs = game.copy()
    vote(game, logs, 0, TARGET, fork_seq=FORK)
    report = game.audit(logs)
    unproven = _only(report, K.UNPROVEN_VOTE)
    assert [(v.seat, v.event) for v in unproven] == [(0, "drop")]
    assert "no_contradiction" in unproven[0].detail
    assert TARGET not in dict(report.dropped)
    assert not report.valid and report.exit_status == 1


def test_audit_evidence_vote_backed_by_a_proof_note_names_the_cheater(game: Game) -> None:
    logs = game.copy()
    first, second = _second_version(game, logs, TARGET, FORK)
    logs[0].append(Record.note(PROOF_NOTE, encode_proof(first, second)))
    vote(game, logs, 0, TARGET, fork_seq=FORK, proof=(first, second))
    report = game.audit(logs)
    assert not _only(report, K.UNPROVEN_VOTE)
    forks = _only(report, K.EQUIVOCATION)
    assert [(v.seat, v.seq, v.log) for v in forks] == [(TARGET, FORK, "p1.log")]


def test_audit_evidence_vote_backed_by_both_versions_in_the_events(game: Game) -> None:
    logs = game.copy()
    first, second = _second_version(game, logs, TARGET, FORK)
    logs[0].append(Record.received_event(second))
    vote(game, logs, 0, TARGET, fork_seq=FORK, proof=(first, second))
    report = game.audit(logs)
    assert not _only(report, K.UNPROVEN_VOTE)
    assert {(v.seat, v.seq) for v in _only(report, K.EQUIVOCATION)} == {(TARGET, FORK)}


def test_audit_evidence_vote_backed_by_a_lie_about_time_in_a_note(game: Game) -> None:
    logs = game.copy()
    beat, event = _lie(game, logs, TARGET, 10)
    logs[1].append(Record.note(PROOF_NOTE, encode_proof(beat, event)))
    vote(game, logs, 1, TARGET, fork_seq=11, proof=(beat, event))
    report = game.audit(logs)
    assert not _only(report, K.UNPROVEN_VOTE)
    lies = _only(report, K.CLOCK_BELOW_ACK)
    assert [(v.seat, v.seq, v.log) for v in lies] == [(TARGET, 11, "p2.log")]
    # The same vote at another seq than its proof covers is refused (its proof proves
    # nothing of event 20).
    logs = game.copy()
    logs[1].append(Record.note(PROOF_NOTE, encode_proof(beat, event)))
    vote(game, logs, 1, TARGET, fork_seq=20, proof=(beat, event))
    assert [v.seat for v in _only(game.audit(logs), K.UNPROVEN_VOTE)] == [1]


@pytest.mark.parametrize("problem", ["malformed", "unverified", "no_contradiction"])
def test_audit_evidence_proof_note_that_proves_nothing_is_named(game: Game, problem: str) -> None:
    logs = game.copy()
    feed = events_of(logs, TARGET, game.spec)
    if problem == "malformed":
        data = b"\x93\x01\x02\x03"
    elif problem == "unverified":
        first, second = _second_version(game, logs, TARGET, FORK)
        damaged = bytearray(second)
        damaged[-3] ^= 0x01  # inside the signature
        data = encode_proof(first, bytes(damaged))
    else:
        data = encode_proof(feed[3].wire, feed[4].wire)  # two good events, seqs 4 and 5
    logs[2].append(Record.note(PROOF_NOTE, data))
    report = game.audit(logs)
    bad = _only(report, K.BAD_PROOF)
    assert [(v.log, v.found) for v in bad] == [("p3.log", problem)]
    assert bad[0].record == len(logs[2])  # the last record (counted from 1)
    assert not _only(report, K.EQUIVOCATION)  # it proves nothing against anyone


# -- drops and forfeits ----------------------------------------------------------------------------
def test_audit_evidence_accusations_whose_proofs_prove_nothing_drop_nobody(game: Game) -> None:
    """Two of three vote a member out on proofs that prove nothing: before session 39 the
    member was dropped on their word (named ``unproven_drop``, a finding gone since session 40:
    it can no longer fire); the fold now refuses both."""
    logs = game.copy()
    vote(game, logs, 0, TARGET, fork_seq=FORK)
    vote(game, logs, 1, TARGET, fork_seq=FORK)
    report = game.audit(logs)
    assert TARGET not in dict(report.dropped)
    assert not _only(report, K.UNTRACED_FORFEIT)
    assert sorted(v.seat for v in _only(report, K.UNPROVEN_VOTE)) == [0, 1]
    # With the proof carried, the same drop stands.
    logs = game.copy()
    first, second = _second_version(game, logs, TARGET, FORK)
    vote(game, logs, 0, TARGET, fork_seq=FORK, proof=(first, second))
    vote(game, logs, 1, TARGET, fork_seq=FORK, proof=(second, first))
    report = game.audit(logs)
    assert TARGET in dict(report.dropped)
    assert not {K.UNTRACED_FORFEIT, K.UNPROVEN_VOTE} & {v.kind for v in report.violations}


def _accused_mid_round() -> tuple[PeerNetwork, Logs]:
    """Three members; seats 0 and 1 (puppets) vote seat 2 out for a fork it never made, in
    the middle of the round; everyone plays on to the end. Each seat's log, as it wrote it."""
    net = PeerNetwork(
        3,
        seed=5,
        rules=Rules(target=None, rounds=1),
        factories={0: PuppetPeer, 1: PuppetPeer},
    )
    net.run(lambda n: all(len(p.final.round.log) > 10 for p in n.peers))
    for voter in (0, 1):
        feed = net.peers[voter].events(TARGET)
        ids = tuple(m.id[:ID_PREFIX] for m in feed[-VOTE_WINDOW:])
        nothing = (feed[0].wire, feed[1].wire)  # (two events of different seqs)
        body = Drop((0,) * 3, TARGET, len(feed), DropReason.EQUIVOCATION, FORK, ids, proof=nothing)
        net.emit(voter, body)
    net.run_until_over()
    logs: Logs = []
    for seat in range(3):
        records = [Record.note(SPEC_NOTE, net.spec.to_wire())]
        for effect in net.effects[seat]:
            if isinstance(effect, LogEffect):
                kind = RecordKind.SENT_EVENT if effect.own else RecordKind.RECEIVED_EVENT
                records.append(Record(kind=kind, data=effect.data))
        logs.append(records)
    return net, logs


def test_audit_evidence_an_unproven_accusation_mid_round_drops_nobody() -> None:
    """Two of three peers vote the third out on proofs that prove nothing, mid-round: before
    session 39 it was dropped and forfeited the round (``untraced_forfeit``,
    ``unproven_drop``); every fold refuses the votes now, and the round is played out."""
    net, logs = _accused_mid_round()
    assert all(p.final.phase is Phase.OVER for p in net.peers)
    assert all(TARGET not in p.final.dropped for p in net.peers)
    game = Game(net.spec, net.identities, logs, None)  # type: ignore[arg-type]
    report = game.audit(logs)
    assert not _only(report, K.UNTRACED_FORFEIT)
    assert sorted(v.seat for v in _only(report, K.UNPROVEN_VOTE)) == [0, 1]
