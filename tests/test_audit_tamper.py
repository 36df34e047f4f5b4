"""The tamper suite: real game logs, one kind of cheating or damage each, named exactly.

Every test builds the logs of a real game (real peer cores and signatures, on the simulator),
tampers with them as a cheater or an accident would, and asserts that the audit names the
fault: its kind, and the author, event or log it is about. A cheat the author signed is made
with the author's own key (a player cheating), so only the rules can catch it.
"""

from __future__ import annotations

import zlib

import pytest

from p2p_nertz.audit import Finding, FindingKind, Severity
from p2p_nertz.logfile import Record, RecordKind, encode_header, encode_record
from p2p_nertz.logfile.format import LogHeader
from p2p_nertz.protocol.envelope import Kind, decode_message, encode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.recovery import RECOVERED_NOTE, RECOVERING_NOTE
from p2p_nertz.protocol.state import secret_hash
from p2p_nertz.rules import Card, Move, Pile
from tests.audit_helpers import (
    Game,
    events_of,
    played,
    retimed_below_what_it_saw,
    rewrite,
    sign_like,
)

K = FindingKind


@pytest.fixture
def game() -> Game:
    return played()


def _only(report_violations: tuple[Finding, ...], kind: FindingKind) -> list[Finding]:
    return [v for v in report_violations if v.kind is kind]


def _event_index(log: list[Record], seat_id: bytes, seq: int) -> int:
    for i, record in enumerate(log):
        if record.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT):
            message = decode_message(record.data)
            if message.author == seat_id and message.seq == seq:
                return i
    raise AssertionError(f"no event {seq}")


def test_audit_tamper_untouched_logs_are_valid(game: Game) -> None:
    report = game.audit()
    assert report.valid, [str(v) for v in report.violations]
    assert report.exit_status == 0
    assert report.finished
    assert report.totals == game.result.peers[0].final.game.totals  # type: ignore[union-attr]


def test_audit_tamper_flipped_bit_is_damage_at_its_offset(game: Game) -> None:
    files = game.files()
    log = game.logs[1]
    index = len(log) // 2
    header = LogHeader(
        game_id=game.spec.game_id, peer_id=bytes(game.spec.peer_ids[1]), created_at_ms=0
    )
    offset = len(encode_header(header)) + sum(len(encode_record(r)) for r in log[:index])
    damaged = bytearray(files[1])
    damaged[offset + 8 + 20] ^= 0x10  # inside the record's payload
    files[1] = bytes(damaged)
    report = game.audit(files=files)
    damage = _only(report.violations, K.LOG_DAMAGE)
    assert [(v.log, v.offset) for v in damage] == [("p2.log", offset)]
    assert "checksum" in damage[0].detail
    # The event is still in the other logs, so the damaged log has a gap exactly there.
    message = decode_message(log[index].data)
    gaps = _only(report.violations, K.GAP)
    assert [(g.log, g.seat, g.seq) for g in gaps] == [
        ("p2.log", game.spec.seat_of(message.author), message.seq)
    ]
    assert report.exit_status == 1


def test_audit_tamper_flipped_bit_with_checksums_fixed_is_a_bad_signature(game: Game) -> None:
    logs = game.copy()
    index = len(logs[2]) // 2
    wire = bytearray(logs[2][index].data)
    wire[-5] ^= 0x01  # inside the signature; the frame's CRCs are recomputed on encoding
    logs[2][index] = Record(kind=logs[2][index].kind, data=bytes(wire))
    original = decode_message(game.logs[2][index].data)
    report = game.audit(logs)
    bad = _only(report.violations, K.BAD_SIGNATURE)
    assert len(bad) == 1
    assert (bad[0].log, bad[0].record, bad[0].seq, bad[0].lamport) == (
        "p3.log",
        index + 1,
        original.seq,
        original.lamport,
    )
    assert not _only(report.violations, K.LOG_DAMAGE)


def test_audit_tamper_dropped_event_is_a_gap_in_that_log(game: Game) -> None:
    logs = game.copy()
    seat0 = game.spec.peer_ids[0]
    index = _event_index(logs[1], seat0, 10)
    del logs[1][index]
    report = game.audit(logs)
    gaps = _only(report.violations, K.GAP)
    assert [(g.log, g.seat, g.seq, g.last_seq) for g in gaps] == [("p2.log", 0, 10, 10)]
    assert report.exit_status == 1


def test_audit_tamper_dropped_event_alone_breaks_the_feed(game: Game) -> None:
    logs = game.copy()
    seat1 = game.spec.peer_ids[1]
    del logs[1][_event_index(logs[1], seat1, 20)]  # its own event, and only its log is given
    report = game.audit(files=[game.files(logs)[1]])
    missing = _only(report.violations, K.MISSING_EVENT)
    assert any(v.seat == 1 and v.seq == 20 for v in missing), [str(v) for v in missing]
    assert not report.valid


def test_audit_tamper_reordered_feed_is_named(game: Game) -> None:
    logs = game.copy()
    seat2 = game.spec.peer_ids[2]
    a = _event_index(logs[0], seat2, 12)
    b = _event_index(logs[0], seat2, 13)
    logs[0][a], logs[0][b] = logs[0][b], logs[0][a]
    report = game.audit(logs)
    reordered = _only(report.violations, K.REORDERED)
    assert [(v.log, v.seat, v.seq) for v in reordered] == [("p1.log", 2, 12)]
    # Merged with the other logs the game itself still verifies: only the file is wrong.
    assert {v.kind for v in report.errors} == {K.REORDERED}


def test_audit_tamper_claim_signed_outside_the_roster_is_an_unknown_author(game: Game) -> None:
    logs = game.copy()
    claim = events_of(logs, 0, game.spec, Kind.CLAIM)[0]
    outsider = Identity.generate(b"\x07" * 32)
    forged = sign_like(outsider, claim, seq=1, prev=None)
    logs[1].append(Record.received_event(forged))
    report = game.audit(logs)
    unknown = _only(report.violations, K.UNKNOWN_AUTHOR)
    assert len(unknown) == 1
    assert unknown[0].fingerprint == outsider.fingerprint
    assert unknown[0].event == "claim" and unknown[0].log == "p2.log"
    assert report.exit_status == 1


def test_audit_tamper_illegal_move_is_named_with_its_event(game: Game) -> None:
    logs = game.copy()
    move = events_of(logs, 1, game.spec, Kind.MOVE)[3]
    frontier, number, _, _ = move.body  # type: ignore[misc]
    rewrite(game, logs, 1, move.seq, lambda m: {"body": [frontier, number, "1:9>2", []]})
    report = game.audit(logs)
    illegal = _only(report.violations, K.ILLEGAL_MOVE)
    assert illegal, [str(v) for v in report.violations]
    assert (illegal[0].seat, illegal[0].seq, illegal[0].move) == (1, move.seq, "1:9>2")
    assert report.exit_status == 1


def test_audit_tamper_claim_of_an_unavailable_card_is_named(game: Game) -> None:
    logs = game.copy()
    claim = next(
        c
        for c in events_of(logs, 2, game.spec, Kind.CLAIM)
        if Card.parse(c.body[3]).rank < 13  # type: ignore[index]
    )
    frontier, number, text, card_text, reveals = claim.body  # type: ignore[misc]
    card = Card.parse(card_text)
    other = Card(rank=card.rank + 1, suit=card.suit)
    rewrite(
        game, logs, 2, claim.seq, lambda m: {"body": [frontier, number, text, str(other), reveals]}
    )
    report = game.audit(logs)
    unavailable = _only(report.violations, K.UNAVAILABLE_CARD)
    assert unavailable, [str(v) for v in report.violations]
    first = unavailable[0]
    assert (first.seat, first.seq, first.move, first.found) == (2, claim.seq, text, str(other))
    assert first.expected is not None and str(card) in first.expected


def test_audit_tamper_stacked_deck_reveal_does_not_match_commit(game: Game) -> None:
    logs = game.copy()
    reveal = next(
        e
        for e in events_of(logs, 0, game.spec, Kind.REVEAL)
        if e.body[2] == 1  # type: ignore[index]
    )
    frontier, number, what, _ = reveal.body  # type: ignore[misc]
    rewrite(game, logs, 0, reveal.seq, lambda m: {"body": [frontier, number, what, b"\x42" * 32]})
    report = game.audit(logs)
    stacked = _only(report.violations, K.REVEAL_MISMATCH)
    assert [(v.seat, v.seq, v.round) for v in stacked] == [(0, reveal.seq, number)]
    assert stacked[0].expected != stacked[0].found
    # The forfeit changes the scores, but the honest members signed their results on the
    # reveal they received (their frontier names it), not on this one the test put in every
    # log: they are not judged on it (never a result_mismatch of theirs), and say so.
    assert not [v for v in report.errors if v.kind.accuses and v.seat != 0]
    unjudged = _only(report.violations, K.MISSING_EVENT)
    assert {(v.seat, v.event) for v in unjudged} == {(1, "result"), (2, "result")}


def test_audit_tamper_dealt_cards_that_are_not_the_deck_are_a_deck_mismatch(game: Game) -> None:
    logs = game.copy()
    ready = events_of(logs, 1, game.spec, Kind.READY)[0]
    frontier, number, visible = ready.body  # type: ignore[misc]
    shown = list(visible)
    shown[1], shown[2] = shown[2], shown[1]  # two work piles swapped: not what the deck deals
    rewrite(game, logs, 1, ready.seq, lambda m: {"body": [frontier, number, shown]})
    report = game.audit(logs)
    # What the seat shows no longer follows from its deal: named at once, by seat 1's events.
    assert report.errors[0].seat == 1 and report.errors[0].round == number
    assert [v for v in _only(report.violations, K.DECK_MISMATCH) if v.seat == 1]


def test_audit_tamper_stock_cards_shown_against_what_was_seen_are_a_deck_mismatch(
    game: Game,
) -> None:
    # The last stock turn of a seat, its cards shown in another order than they lie.
    logs = game.copy()
    for seat in range(game.spec.seats):
        feed = events_of(logs, seat, game.spec)
        turns = [
            e
            for e in feed
            if e.kind is Kind.MOVE and e.body[2] == "S" and len(e.body[3]) == 3  # type: ignore[index]
        ]
        if turns:
            event = turns[-1]
            break
    else:
        pytest.fail("no stock turn to reorder")
    frontier, number, text, shown = event.body  # type: ignore[misc]
    swapped = [shown[1], shown[0], shown[2]]
    rewrite(game, logs, seat, event.seq, lambda m: {"body": [frontier, number, text, swapped]})
    report = game.audit(logs)
    lies = _only(report.violations, K.DECK_MISMATCH)
    assert [(v.seat, v.seq, v.move) for v in lies][:1] == [(seat, event.seq, "S")]


def test_audit_tamper_deck_that_is_not_the_secrets_is_a_deck_mismatch(game: Game) -> None:
    # A seat commits to and reveals another secret than the one its deck came from: the reveal
    # matches the commit, but the deck it gives does not deal what the seat played.
    logs = game.copy()
    other = b"\x24" * 32
    commit = events_of(logs, 2, game.spec, Kind.COMMIT)[0]
    c_frontier, c_round, _, nonce_h = commit.body  # type: ignore[misc]
    rewrite(
        game,
        logs,
        2,
        commit.seq,
        lambda m: {"body": [c_frontier, c_round, secret_hash(other), nonce_h]},
    )
    reveal = next(
        e
        for e in events_of(logs, 2, game.spec, Kind.REVEAL)
        if e.body[2] == 1  # type: ignore[index]
    )
    r_frontier, r_round, what, _ = reveal.body  # type: ignore[misc]
    rewrite(game, logs, 2, reveal.seq, lambda m: {"body": [r_frontier, r_round, what, other]})
    report = game.audit(logs)
    lies = _only(report.violations, K.DECK_MISMATCH)
    assert [(v.seat, v.seq, v.event, v.round) for v in lies] == [(2, reveal.seq, "reveal", 1)]
    assert "deck deals" in lies[0].detail
    assert not _only(report.violations, K.REVEAL_MISMATCH)


def test_audit_tamper_false_nerts_call_is_named(game: Game) -> None:
    logs = game.copy()
    move = events_of(logs, 0, game.spec, Kind.MOVE)[2]  # early: its Nerts pile is full
    frontier, number, _, _ = move.body  # type: ignore[misc]
    rewrite(game, logs, 0, move.seq, lambda m: {"kind": Kind.NERTS, "body": [frontier, number]})
    report = game.audit(logs)
    false = _only(report.violations, K.FALSE_NERTS)
    assert [(v.seat, v.seq, v.event) for v in false][:1] == [(0, move.seq, "nerts")]
    assert false[0].found is not None and "left" in false[0].found
    # A notice (the rules allow the call, at a cost), naming the caller and the cost; the
    # results its peers signed never applied that cost: those are the errors.
    assert false[0].severity is Severity.NOTICE
    name = game.spec.members[0].name
    assert false[0].detail.startswith(f"{name} called Nerts with ")
    assert f"a cost of {game.spec.rules.false_call_penalty} points" in false[0].detail
    assert not report.valid  # (the feed after it, signed again, no longer replays)


def test_audit_tamper_nerts_call_after_the_cut_is_no_false_call(game: Game) -> None:
    # A call with cards left that the rules do not take (here: signed after T*, when the
    # round is over) costs nothing and is no false call: the notice is for calls they take.
    logs = game.copy()
    (first,) = game.audit(logs).rounds
    assert first.status == "nerts" and first.cut is not None
    seat = next(s for s in range(game.spec.seats) if s not in first.callers)
    late = next(m for m in events_of(logs, seat, game.spec) if m.lamport > first.cut)
    frontier = late.body[0]  # type: ignore[index]
    rewrite(game, logs, seat, late.seq, lambda m: {"kind": Kind.NERTS, "body": [frontier, 1]})
    report = game.audit(logs)
    assert not _only(report.violations, K.FALSE_NERTS)
    assert not report.valid  # (its reveal is gone: the feed no longer replays)


def test_audit_tamper_equivocation_is_named(game: Game) -> None:
    logs = game.copy()
    event = events_of(logs, 1, game.spec, Kind.MOVE)[5]
    frontier, number, _, _ = event.body  # type: ignore[misc]
    fork = sign_like(
        game.identities[1], event, kind=Kind.STUCK, body=[frontier, number]
    )  # the same seq and prev, another event: a fork
    logs[2].append(Record.received_event(fork))
    report = game.audit(logs)
    forks = _only(report.violations, K.EQUIVOCATION)
    assert [(v.seat, v.seq, v.log) for v in forks] == [(1, event.seq, "p3.log")]
    assert forks[0].expected != forks[0].found


def test_audit_tamper_result_with_wrong_scores_is_named(game: Game) -> None:
    logs = game.copy()
    result = events_of(logs, 2, game.spec, Kind.RESULT)[0]
    frontier, number, digest, scores = result.body  # type: ignore[misc]
    lie = [s + 10 if seat == 2 else s for seat, s in enumerate(scores)]
    rewrite(game, logs, 2, result.seq, lambda m: {"body": [frontier, number, digest, lie]})
    report = game.audit(logs)
    wrong = _only(report.violations, K.RESULT_MISMATCH)
    assert [(v.seat, v.seq, v.round) for v in wrong] == [(2, result.seq, number)]
    assert wrong[0].expected == str(list(scores)) and wrong[0].found == str(lie)


def test_audit_tamper_broken_prev_link_is_named(game: Game) -> None:
    logs = game.copy()
    event = events_of(logs, 0, game.spec)[30]
    rewrite(game, logs, 0, event.seq, lambda m: {"prev": bytes(32)}, follow=True)
    report = game.audit(logs)
    broken = _only(report.violations, K.BROKEN_CHAIN)
    assert [(v.seat, v.seq) for v in broken] == [(0, event.seq)]
    assert broken[0].found == "00" * 8


def test_audit_tamper_clock_below_an_acknowledged_event_is_named(game: Game) -> None:
    logs = game.copy()
    event = retimed_below_what_it_saw(game, logs)
    report = game.audit(logs)
    early = _only(report.violations, K.CLOCK_BELOW_ACK)
    assert early and (early[0].seat, early[0].seq) == (1, event.seq)


def test_audit_tamper_a_torn_tail_is_a_notice_not_a_verdict(game: Game) -> None:
    # A writer that died mid-append leaves a torn last frame: the record in it was never sent
    # (durable before send) or is another member's event that other logs hold, so the torn
    # bytes hide nothing. The audit names the tail, and the game stays valid.
    files = game.files()
    cut = len(files[0]) - 7  # inside the last frame
    files[0] = files[0][:cut]
    report = game.audit(files=files)
    truncated = _only(report.violations, K.TRUNCATED)
    assert [v.log for v in truncated] == ["p1.log"]
    assert truncated[0].offset is not None and truncated[0].offset < cut
    assert truncated[0].severity is Severity.NOTICE
    assert not report.errors
    assert report.exit_status == 0


def test_audit_tamper_a_log_cut_mid_game_is_invalid_by_its_gap(game: Game) -> None:
    # Cut inside a frame half-way: the torn tail itself is a notice, but the log now lacks
    # events of its own peer that the other logs hold, which no crash can do (its peer signed
    # and sent them after the cut): a gap, an error.
    files = game.files()
    cut = len(files[0]) // 2
    files[0] = files[0][:cut]
    report = game.audit(files=files)
    assert [v.log for v in _only(report.violations, K.TRUNCATED)] == ["p1.log"]
    gaps = _only(report.errors, K.GAP)
    assert gaps and {g.log for g in gaps} == {"p1.log"}
    assert report.exit_status == 1


def test_audit_tamper_file_cut_inside_its_header_is_unreadable(game: Game) -> None:
    files = game.files()
    files[1] = files[1][:30]
    report = game.audit(files=files)
    assert [v.log for v in _only(report.violations, K.UNREADABLE)] == ["p2.log"]
    assert report.exit_status == 2
    assert report.logs[1].readable is False and report.logs[0].readable


def test_audit_tamper_garbage_file_is_unreadable(game: Game) -> None:
    files = game.files()
    files.append(bytes((i * 37 + 11) % 256 for i in range(5000)))
    report = game.audit(files=files)
    unreadable = _only(report.violations, K.UNREADABLE)
    assert [v.log for v in unreadable] == ["p4.log"]
    assert unreadable[0].detail.startswith("not a p2p-nertz game log: ")
    assert report.exit_status == 2


def test_audit_tamper_log_of_another_game_is_set_aside(game: Game) -> None:
    other = played(players=2, seed=5)
    files = [*game.files(), other.files()[0]]
    report = game.audit(files=files)
    assert [v.log for v in _only(report.violations, K.WRONG_LOG)] == ["p4.log"]
    assert {v.kind for v in report.errors} == {K.WRONG_LOG}


def test_audit_tamper_event_signed_for_another_game_is_named(game: Game) -> None:
    logs = game.copy()
    event = events_of(logs, 0, game.spec, Kind.MOVE)[0]
    replayed = sign_like(game.identities[0], event, game_id=bytes(32))
    logs[1].append(Record.received_event(replayed))
    report = game.audit(logs)
    assert [(v.kind, v.seq, v.log) for v in report.errors] == [(K.WRONG_GAME, event.seq, "p2.log")]


def test_audit_tamper_strict_stops_at_the_first_error(game: Game) -> None:
    logs = game.copy()
    seat0 = game.spec.peer_ids[0]
    del logs[1][_event_index(logs[1], seat0, 10)]
    del logs[2][_event_index(logs[2], seat0, 11)]
    lenient = game.audit(logs)
    strict = game.audit(logs, strict=True)
    assert len(lenient.errors) >= 2
    assert strict.stopped and len(strict.errors) == 1
    assert strict.errors[0].severity is Severity.ERROR


def test_audit_tamper_forged_bytes_never_raise(game: Game) -> None:
    # Envelope-shaped junk in every position of a record: reported, never a traceback.
    logs = game.copy()
    identity = game.identities[0]
    junk = [
        b"\x92\xc4\x01x\xc4\x01y",
        b"\xc1" * 40,
        encode_message(
            identity,
            game_id=game.spec.game_id,
            seq=0,
            prev=None,
            lamport=5,
            kind=Kind.BEAT,
            body=[1, None, [0, 0, 0], [b"", b"", b""]],
        ),
        zlib.compress(b"garbage"),
    ]
    for data in junk:
        logs[0].append(Record.received_event(data))
    report = game.audit(logs)
    assert report.exit_status == 1
    assert {v.kind for v in report.errors} <= {K.MALFORMED, K.MISFILED}


def test_audit_tamper_move_notation_in_the_report(game: Game) -> None:
    # Violations about play events name the move in the notation, which parses back.
    logs = game.copy()
    move = events_of(logs, 1, game.spec, Kind.MOVE)[3]
    frontier, number, _, _ = move.body  # type: ignore[misc]
    rewrite(game, logs, 1, move.seq, lambda m: {"body": [frontier, number, "N>_2", []]})
    report = game.audit(logs)
    named = [v for v in report.errors if v.seq == move.seq and v.seat == 1]
    assert named and named[0].move is not None
    assert str(Move.parse(named[0].move)) == named[0].move
    assert Move.parse(named[0].move).source is Pile.NERTS


@pytest.mark.parametrize(
    "notes",
    [(), (RECOVERING_NOTE,), (RECOVERING_NOTE, RECOVERED_NOTE)],
    ids=["none", "open", "done"],
)
def test_audit_tamper_own_events_lost_with_the_log_end_are_a_gap_unless_recovery_is_open(
    game: Game, notes: tuple[str, ...]
) -> None:
    # Chaos seed 126 (two real processes): a log whose end the disk lost, resumed, its recovery
    # given up (the other member had gone home). Its `recovering` note says so: the lost own
    # events are a notice then. Without the note, or with the recovery over, they are a gap.
    logs = game.copy()
    seat1 = game.spec.peer_ids[1]
    own = [i for i, r in enumerate(logs[1]) if r.kind is RecordKind.SENT_EVENT]
    last = decode_message(logs[1][own[-1]].data).seq
    cut = own[-3]  # its last three own events lost, and everything after them
    lost = decode_message(logs[1][cut].data)
    assert lost.author == seat1
    logs[1] = logs[1][:cut] + [Record.note(name, b"") for name in notes]
    report = game.audit(logs)
    gaps = [(v.log, v.seat, v.seq, v.last_seq) for v in _only(report.violations, K.GAP)]
    ends = [
        (v.seq, v.last_seq)
        for v in _only(report.violations, K.LOG_ENDS_EARLY)
        if v.log == "p2.log" and v.seat == 1
    ]
    if notes == (RECOVERING_NOTE,):
        assert gaps == [] and ends == [(lost.seq, last)]
        assert report.valid
    else:
        assert gaps == [("p2.log", 1, lost.seq, last)] and ends == []
        assert report.exit_status == 1


@pytest.mark.parametrize("cheat", ["hole", "fork"])
def test_audit_tamper_a_recovering_note_excuses_the_lost_end_alone(game: Game, cheat: str) -> None:
    # Since session 30 a node that stops because its key signed past its head elsewhere (its
    # log lost or cut, a second process) ends its log with a `recovering` note: its own events
    # past the end are a notice then. The note hides nothing else: a hole inside what the log
    # holds of its own feed is still a gap, and a fork of an event it lacks, held elsewhere,
    # is still an equivocation.
    logs = game.copy()
    own = [i for i, r in enumerate(logs[1]) if r.kind is RecordKind.SENT_EVENT]
    cut = own[-3]
    lost = decode_message(logs[1][cut].data)
    kept = logs[1][:cut]
    if cheat == "hole":
        hole = decode_message(kept[own[2]].data).seq
        del kept[own[2]]
    else:
        fork = sign_like(game.identities[1], lost, lamport=lost.lamport + 1)
        logs[2].append(Record.received_event(fork))
    logs[1] = [*kept, Record.note(RECOVERING_NOTE, b"")]
    report = game.audit(logs)
    assert report.exit_status == 1
    ends = [(v.log, v.seat, v.seq) for v in _only(report.violations, K.LOG_ENDS_EARLY)]
    assert ("p2.log", 1, lost.seq) in ends  # (the lost end itself: a notice)
    if cheat == "hole":
        gaps = [(v.log, v.seat, v.seq, v.last_seq) for v in _only(report.errors, K.GAP)]
        assert gaps == [("p2.log", 1, hole, hole)]
    else:
        forks = [(v.seat, v.seq) for v in _only(report.errors, K.EQUIVOCATION)]
        assert forks == [(1, lost.seq)]
