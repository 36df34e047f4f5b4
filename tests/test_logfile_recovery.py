"""A cut tail leaves a durable ``recovering`` note in its place (docs/log-format.md §7.3).

The runtime passes ``cut_note`` to :func:`open_for_append`: a log whose tail had to be cut may
have lost an event its peer sent, and the peer recovers its own feed from the others before
it signs (docs/protocol.md §9.6). The note must survive any crash during that recovery, so it
is written over the tail and synced before the cut.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from p2p_nertz.logfile import LogHeader, Record, TailState, open_for_append, read_log
from p2p_nertz.logfile.format import encode_record

HEADER = LogHeader(game_id=b"demo", peer_id=bytes(range(32)), created_at_ms=1_700_000_000_000)
NOTE = "recovering"


def _log(path: Path, records: list[Record]) -> int:
    writer, _ = open_for_append(path, create_with=HEADER)
    with writer:
        writer.append_many(records)
        return writer.size


def _records(path: Path) -> tuple[list[Record], TailState]:
    with read_log(path) as reader:
        records = list(reader)
        return records, reader.summary().tail


@pytest.mark.parametrize(
    "tail",
    [encode_record(Record.sent_event(b"lost"))[:-3], b"\x00\x00\x00", bytes(40)],
    ids=["torn-frame", "short", "zeros"],
)
def test_a_cut_tail_is_replaced_by_the_note(tmp_path: Path, tail: bytes) -> None:
    path = tmp_path / "a.log"
    events = [Record.sent_event(b"one"), Record.sent_event(b"two")]
    good = _log(path, events)
    with path.open("ab") as f:
        f.write(tail)
    writer, recovery = open_for_append(path, cut_note=NOTE)
    with writer:
        assert recovery.cut and recovery.good_end == good
        assert recovery.records == tuple(events)  # what was read: the note is new
        note = Record.note(NOTE, good.to_bytes(8, "big"))
        assert writer.size == good + len(encode_record(note)) == path.stat().st_size
        writer.append(Record.sent_event(b"three"))
    records, state = _records(path)
    assert records == [*events, note, Record.sent_event(b"three")]
    assert state is TailState.CLEAN


def test_a_clean_log_gets_no_note(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    good = _log(path, [Record.sent_event(b"one")])
    writer, recovery = open_for_append(path, cut_note=NOTE)
    writer.close()
    assert not recovery.cut and path.stat().st_size == good


def test_a_damaged_tail_cut_on_request_is_replaced_by_the_note(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    good = _log(path, [Record.sent_event(b"one")])
    with path.open("ab") as f:
        f.write(b"\x07" * 30)  # not a frame, not zeros: damage
    writer, recovery = open_for_append(path, cut_damaged_tail=True, cut_note=NOTE)
    writer.close()
    assert recovery.tail is TailState.CORRUPT and recovery.cut
    records, state = _records(path)
    assert records[-1] == Record.note(NOTE, good.to_bytes(8, "big"))
    assert state is TailState.CLEAN


def test_a_crash_between_the_note_and_the_cut_leaves_the_note_and_a_torn_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The note is durable before the file is cut; a crash in between leaves the rest of the
    # old tail as zeros (torn, cut silently next time), never a whole-looking log without it.
    path = tmp_path / "a.log"
    good = _log(path, [Record.sent_event(b"one")])
    with path.open("ab") as f:
        f.write(encode_record(Record.sent_event(b"x" * 64))[:-10])  # a long torn frame

    def crash(fd: int, length: int) -> None:
        raise OSError("killed before the cut")

    monkeypatch.setattr(os, "ftruncate", crash)
    with pytest.raises(OSError, match="killed"):
        open_for_append(path, cut_note=NOTE)
    monkeypatch.undo()
    records, state = _records(path)
    assert records[-1] == Record.note(NOTE, good.to_bytes(8, "big"))
    assert state is TailState.TORN
    writer, recovery = open_for_append(path, cut_note=NOTE)
    writer.close()
    assert recovery.tail is TailState.TORN
    records, state = _records(path)
    assert [r.name for r in records if r.name] == [NOTE, NOTE] and state is TailState.CLEAN
