"""The node's log (runtime/nodelog.py): which effects are written and as what, and the point a
restart resumes from. Pure values; no sockets, no files."""

from __future__ import annotations

import math

from p2p_nertz.logfile import LogHeader, TailState
from p2p_nertz.logfile import Record as LogRecord
from p2p_nertz.logfile.store import Recovery
from p2p_nertz.protocol.debts import DEBT_NOTE
from p2p_nertz.protocol.peer import Note, Record, Recovered, Reserve, Send
from p2p_nertz.runtime.nodelog import (
    CLOCK_NOTE,
    ENDPOINTS_NOTE,
    QUICK_SYNCS,
    RECOVERED_NOTE,
    RECOVERING_NOTE,
    SyncPace,
    durable_record,
    encode_clock_note,
    read_session,
    recovery_unfinished,
    resume_point,
)

HEADER = LogHeader(game_id=bytes(16), peer_id=bytes(32), created_at_ms=0)


def recovery(*records: LogRecord, cut_bytes: int = 0) -> Recovery:
    return Recovery(
        header=HEADER, records=tuple(records), tail=TailState.CLEAN, cut_bytes=cut_bytes
    )


def test_durable_record_writes_events_clocks_proofs_and_the_end_of_a_recovery() -> None:
    assert durable_record(Record(b"ours", own=True)) == LogRecord.sent_event(b"ours")
    assert durable_record(Record(b"theirs", own=False)) == LogRecord.received_event(b"theirs")
    assert durable_record(Reserve(1000)) == encode_clock_note(1000)
    assert durable_record(Note("proof", b"two")) == LogRecord.note("proof", b"two")
    ended = durable_record(Recovered(first=3, head=7, holders=(1,)))
    assert ended == LogRecord.note(RECOVERED_NOTE, (3).to_bytes(8, "big") + (7).to_bytes(8, "big"))
    assert durable_record(Send(b"x")) is None


def test_a_fresh_log_resumes_nothing_unless_a_recovery_is_due() -> None:
    assert resume_point(recovery()) is None
    assert resume_point(recovery(), recover=True) == resume_point(recovery(cut_bytes=5))
    point = resume_point(recovery(LogRecord.note(RECOVERING_NOTE)))
    assert point is not None and point.recover and point.wires == []


def test_a_log_with_events_resumes_from_them_and_its_highest_clock() -> None:
    records = (
        LogRecord.sent_event(b"e1"),
        encode_clock_note(40),
        LogRecord.received_event(b"e2"),
        encode_clock_note(20),
        LogRecord.note(RECOVERING_NOTE),
        LogRecord.note(RECOVERED_NOTE, bytes(16)),
    )
    point = resume_point(recovery(*records))
    assert point is not None
    assert (point.wires, point.reserved, point.recover) == ([b"e1", b"e2"], 40, False)
    assert point.debts == []
    assert not recovery_unfinished(records)
    assert recovery_unfinished(records[:-1])


def test_a_log_resumes_with_the_beats_of_its_debt_notes_and_no_other_note() -> None:
    # (Why its votes on a claim were cast: docs/protocol.md §13, session 36.)
    records = (
        LogRecord.sent_event(b"e1"),
        LogRecord.note(DEBT_NOTE, b"beat 1"),
        LogRecord.note("proof", b"two"),
        LogRecord.received_event(b"e2"),
        LogRecord.note(DEBT_NOTE, b"beat 2"),
    )
    point = resume_point(recovery(*records))
    assert point is not None
    assert (point.wires, point.debts) == ([b"e1", b"e2"], [b"beat 1", b"beat 2"])


def test_read_session_finds_no_session_in_a_log_without_a_spec_note() -> None:
    records = [LogRecord.note(ENDPOINTS_NOTE, b"\x80"), LogRecord.note(CLOCK_NOTE, bytes(8))]
    assert read_session(records) is None


def test_syncs_move_to_a_thread_after_a_slow_one_and_back_after_a_run_of_quick_ones() -> None:
    pace = SyncPace(0.1)
    assert [pace.took(0.001) for _ in range(3)] == [False] * 3 and not pace.threaded
    assert pace.took(0.1) is False and not pace.threaded  # (not over it)
    assert pace.took(0.2) is True and pace.threaded
    assert pace.took(3.0) is False and pace.threaded  # (slow again: no move)
    quick = [pace.took(0.001) for _ in range(QUICK_SYNCS - 1)]
    assert quick == [False] * (QUICK_SYNCS - 1) and pace.threaded
    assert pace.took(0.05) is False and pace.threaded  # under slow_after, not quick: a new run
    assert [pace.took(0.001) for _ in range(QUICK_SYNCS - 1)] == [False] * (QUICK_SYNCS - 1)
    assert pace.took(0.001) is True and not pace.threaded  # the run complete: back
    assert SyncPace(math.inf).took(3600.0) is False  # (the default: never)


def test_the_first_sync_after_an_idle_gap_goes_to_a_thread_alone() -> None:
    pace = SyncPace(0.1, idle_after=5.0)
    pace.synced_at = 100.0
    assert not pace.beside(104.0) and not pace.beside(105.0)  # (not idle: not over it)
    assert pace.beside(105.5)  # idle: a disk that may be asleep
    pace.synced_at = 105.6  # (that sync, quick: the next go on trio's thread again)
    assert pace.took(0.001) is False and not pace.beside(105.7)
    assert pace.took(0.2) is True and pace.beside(105.7)  # (slow: threaded, idle or not)
    assert not SyncPace(0.1).beside(1e9)  # (the default: never)
