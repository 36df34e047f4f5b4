"""Tests of the game-log file format, its streaming decoder, and its crash-safe writer."""

from __future__ import annotations

import errno
import itertools
import os
import re
import stat
import sys
import threading
import tracemalloc
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p2p_nertz.errors import LogFormatError, NertzError
from p2p_nertz.logfile import (
    FORMAT_VERSION,
    MAGIC,
    MAX_PAYLOAD_SIZE,
    LogDecoder,
    LogHeader,
    LogStream,
    ProblemKind,
    Record,
    RecordKind,
    TailState,
    create_log,
    decode_record,
    encode_header,
    encode_log,
    encode_record,
    open_for_append,
    read_log,
)
from p2p_nertz.logfile.format import PREFIX_SIZE, checksum, encode_frame
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.nodelog import (
    RESERVE_AHEAD,
    NodeLog,
    decode_clock_note,
    encode_clock_note,
    session_notes,
)

ROOT = Path(__file__).resolve().parent.parent

HEADER = LogHeader(game_id=b"demo", peer_id=bytes(range(32)), created_at_ms=1_700_000_000_000)

# The example of docs/log-format.md §10, byte for byte.
GOLDEN_RECORDS = [Record.sent_event(b"hello"), Record.note("secret", b"\x2a")]
GOLDEN_HEX = (
    "4e4552545a4c4f470001000000504a2f8ee883a767616d655f6964c40464656d6fa7706565725f6964c420"
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1fad637265617465645f6174"
    "5f6d73cf0000018bcfe56800e39c8c2900000006c8277a290168656c6c6f8aac239d00000009589867b805"
    "067365637265742a2e18155c"
)

SMALL_RECORDS = [
    Record.note("secret", b"s3cr3t"),
    Record.sent_event(b"\x98\x01event-one"),
    Record.received_event(b"\x98\x01event-two"),
    Record.received_beat(b"\x93beat"),
    Record.sent_event(b"\x98\x01event-three"),
]

message_kinds = st.sampled_from(
    [
        RecordKind.SENT_EVENT,
        RecordKind.RECEIVED_EVENT,
        RecordKind.SENT_BEAT,
        RecordKind.RECEIVED_BEAT,
    ]
)
note_names = st.from_regex(r"\A[a-z0-9_.\-]{1,64}\Z")
records = st.one_of(
    st.builds(
        lambda kind, data: Record(kind=kind, data=data),
        message_kinds,
        st.binary(min_size=1, max_size=200),
    ),
    st.builds(Record.note, note_names, st.binary(max_size=200)),
)


def frame_offsets(header: LogHeader, recs: list[Record]) -> list[int]:
    """Return the offset of every record frame, plus the end of the file."""
    offsets = [len(encode_header(header))]
    for record in recs:
        offsets.append(offsets[-1] + len(encode_record(record)))
    return offsets


def decode_all(data: bytes, *, strict: bool = False) -> tuple[list[Record], LogStream]:
    stream = LogStream([data], strict=strict)
    return list(stream), stream


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def flip(data: bytes, bit: int) -> bytes:
    out = bytearray(data)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


@pytest.fixture
def no_sync(monkeypatch: pytest.MonkeyPatch) -> None:
    """Skip syncing to disk in tests about content, not durability, to keep them fast."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    monkeypatch.setattr(os, "fdatasync", lambda fd: None, raising=False)


# --- values -----------------------------------------------------------------------------------


def test_record_repr_pastes_back() -> None:
    for record in SMALL_RECORDS:
        assert eval(repr(record)) == record


@pytest.mark.parametrize(
    "make",
    [
        lambda: Record.sent_event(b""),
        lambda: Record.note("", b"x"),
        lambda: Record.note("Secret", b"x"),
        lambda: Record.note("x" * 65, b"x"),
        lambda: Record(kind=RecordKind.SENT_EVENT, data=b"x", name="n"),
        lambda: Record(kind=1, data=b"x"),  # type: ignore[arg-type]
        lambda: Record.sent_event(bytearray(b"x")),  # type: ignore[arg-type]
        lambda: Record.sent_event(bytes(MAX_PAYLOAD_SIZE)),
        lambda: LogHeader(game_id=b"", peer_id=bytes(32), created_at_ms=0),
        lambda: LogHeader(game_id=b"g", peer_id=bytes(31), created_at_ms=0),
        lambda: LogHeader(game_id=b"g", peer_id=bytes(32), created_at_ms=-1),
        lambda: LogHeader(game_id=b"g", peer_id=bytes(32), created_at_ms=True),
    ],
)
def test_values_reject_what_the_format_cannot_hold(make: object) -> None:
    with pytest.raises(LogFormatError):
        make()  # type: ignore[operator]


def test_largest_record_fits() -> None:
    record = Record.sent_event(bytes(MAX_PAYLOAD_SIZE - 1))
    out, stream = decode_all(encode_log(HEADER, [record]))
    assert out == [record]
    assert stream.summary().ok


def test_log_format_error_is_a_nertz_value_error() -> None:
    assert issubclass(LogFormatError, NertzError)
    assert issubclass(LogFormatError, ValueError)


# --- golden bytes and the specification -------------------------------------------------------


def test_golden_log_bytes_match_the_spec() -> None:
    blob = encode_log(HEADER, GOLDEN_RECORDS)
    assert blob.hex() == GOLDEN_HEX
    spec = (ROOT / "docs" / "log-format.md").read_text()
    dump = re.search(r"```\n(00000000 .*?)```", spec, re.DOTALL)
    assert dump is not None
    spec_hex = "".join(line[10:].replace(" ", "") for line in dump.group(1).splitlines())
    assert spec_hex == GOLDEN_HEX
    assert blob.startswith(MAGIC + FORMAT_VERSION.to_bytes(2, "big"))


def test_golden_log_decodes() -> None:
    out, stream = decode_all(bytes.fromhex(GOLDEN_HEX))
    assert out == GOLDEN_RECORDS
    summary = stream.summary()
    assert summary.header == HEADER
    assert summary.ok and summary.good_end == summary.size == 141


def test_decode_record_rejects_bad_payloads() -> None:
    for payload in [b"", b"\x00abc", b"\x06abc", b"\x01", b"\x05", b"\x05\x05ab", b"\x05\x01\xff"]:
        with pytest.raises(LogFormatError):
            decode_record(payload)


# --- round trips ------------------------------------------------------------------------------


@given(st.lists(records, max_size=30), st.lists(st.integers(min_value=0), max_size=20))
def test_decoder_round_trip_in_any_chunking(recs: list[Record], cuts: list[int]) -> None:
    blob = encode_log(HEADER, recs)
    decoder = LogDecoder()
    out = [r for chunk in chunked(blob, cuts) for r in decoder.feed(chunk)]
    summary = decoder.close()
    assert out == recs
    assert summary.ok and summary.records == len(recs) and summary.header == HEADER


@settings(
    max_examples=40,
    deadline=None,
    # no_sync patches os for the whole test, the same for every example: that is intended.
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(records, max_size=20), st.integers(min_value=0, max_value=20), st.data())
def test_writer_reader_round_trip(
    tmp_path_factory: pytest.TempPathFactory,
    no_sync: None,
    recs: list[Record],
    split: int,
    data: st.DataObject,
) -> None:
    path = tmp_path_factory.mktemp("rt") / "peer.nlog"
    with create_log(path, HEADER) as writer:
        for record in recs[:split]:
            writer.append(record)
        writer.append_many(recs[split:])
        assert writer.size == path.stat().st_size
    chunk_size = data.draw(st.integers(min_value=1, max_value=300))
    with read_log(path, chunk_size=chunk_size) as reader:
        assert list(reader) == recs
        assert reader.header == HEADER
        assert reader.summary().ok
    writer, recovery = open_for_append(path)
    with writer:
        assert list(recovery.records) == recs
        assert recovery.tail is TailState.CLEAN and recovery.cut_bytes == 0


# --- torn tails -------------------------------------------------------------------------------


def test_torn_tail_at_every_offset_is_cut_and_complete_records_kept(
    tmp_path: Path, no_sync: None
) -> None:
    blob = encode_log(HEADER, SMALL_RECORDS)
    offsets = frame_offsets(HEADER, SMALL_RECORDS)
    extra = Record.sent_event(b"after restart")
    for cut in range(offsets[0], len(blob) + 1):
        path = tmp_path / f"cut{cut}.nlog"
        path.write_bytes(blob[:cut])
        complete = sum(1 for end in offsets[1:] if end <= cut)
        good_end = offsets[complete]
        writer, recovery = open_for_append(path)
        with writer:
            assert list(recovery.records) == SMALL_RECORDS[:complete], cut
            assert recovery.tail is (TailState.CLEAN if cut == good_end else TailState.TORN)
            assert recovery.cut_bytes == cut - good_end
            assert path.stat().st_size == good_end == writer.size
            writer.append(extra)
        with read_log(path) as reader:
            assert list(reader) == [*SMALL_RECORDS[:complete], extra]
            assert reader.summary().ok


def test_torn_tail_is_reported_by_reader_without_problem() -> None:
    blob = encode_log(HEADER, SMALL_RECORDS)
    offsets = frame_offsets(HEADER, SMALL_RECORDS)
    for cut in range(offsets[0], len(blob)):
        for strict in (False, True):
            out, stream = decode_all(blob[:cut], strict=strict)
            summary = stream.summary()
            assert summary.problems == ()
            assert summary.tail is (TailState.CLEAN if cut in offsets else TailState.TORN)
            assert summary.good_end == max(o for o in offsets if o <= cut)
            assert len(out) == summary.records
            # (a head cut after its first bytes is zeros too: a frame cut short, not padding)
            assert not summary.zero_tail
            if summary.tail is TailState.TORN:
                assert summary.torn_words().startswith("the log ends inside a frame: ")


@pytest.mark.parametrize("zeros", [1, 7, 8, 100, 70_000])
def test_zero_filled_tail_is_torn(tmp_path: Path, zeros: int, no_sync: None) -> None:
    # What a file system that persisted the size but not the data leaves after a power cut.
    blob = encode_log(HEADER, SMALL_RECORDS)
    for strict in (False, True):
        out, stream = decode_all(blob + bytes(zeros), strict=strict)
        assert out == SMALL_RECORDS
        assert stream.summary().tail is TailState.TORN
        assert stream.summary().problems == ()
        # Zeros where a whole frame head should be are padding, and said so; fewer are what a
        # frame cut in its head leaves too (a length's first bytes are zero).
        assert stream.summary().zero_tail is (zeros >= 8)
        if zeros >= 8:
            words = f"the log ends in {zeros} zero bytes after the last whole record (padding"
            assert stream.summary().torn_words().startswith(words)
    path = tmp_path / "z.nlog"
    path.write_bytes(blob + bytes(zeros))
    writer, recovery = open_for_append(path)
    writer.close()
    assert list(recovery.records) == SMALL_RECORDS
    assert recovery.tail is TailState.TORN and recovery.cut_bytes == zeros
    assert path.read_bytes() == blob


def test_complete_last_frame_failing_its_checksum_is_not_torn() -> None:
    # Zeros that complete the last frame's declared length make a frame that fails its check:
    # the reader cannot tell an unfinished write from a sent frame that rotted (spec §7.3).
    blob = encode_log(HEADER, SMALL_RECORDS)
    _, stream = decode_all(blob[:-5] + bytes(4))
    assert stream.summary().tail is TailState.TORN
    _, stream = decode_all(blob[:-5] + bytes(5))
    summary = stream.summary()
    assert summary.tail is TailState.CORRUPT
    assert [p.kind for p in summary.problems] == [ProblemKind.BAD_CHECKSUM]


def test_zeros_in_the_middle_are_damage() -> None:
    blob = encode_log(HEADER, SMALL_RECORDS)
    at = frame_offsets(HEADER, SMALL_RECORDS)[2]
    damaged = blob[:at] + bytes(50) + blob[at:]
    out, stream = decode_all(damaged)
    assert out == SMALL_RECORDS
    (problem,) = stream.summary().problems
    assert (problem.kind, problem.offset, problem.length) == (ProblemKind.BAD_FRAME, at, 50)
    with pytest.raises(LogFormatError) as info:
        decode_all(damaged, strict=True)
    assert info.value.offset == at


# --- damage in the middle ---------------------------------------------------------------------


def test_flipped_bit_in_any_frame_is_reported_and_the_rest_read() -> None:
    blob = encode_log(HEADER, SMALL_RECORDS)
    offsets = frame_offsets(HEADER, SMALL_RECORDS)
    for bit in range(offsets[0] * 8, len(blob) * 8):
        frame = max(k for k, o in enumerate(offsets) if o <= bit // 8)
        out, stream = decode_all(flip(blob, bit))
        assert out == SMALL_RECORDS[:frame] + SMALL_RECORDS[frame + 1 :], bit
        summary = stream.summary()
        (problem,) = summary.problems
        assert problem.offset == offsets[frame], bit
        assert problem.kind in (ProblemKind.BAD_FRAME, ProblemKind.BAD_CHECKSUM)
        assert summary.tail is (TailState.CORRUPT if frame == len(offsets) - 2 else TailState.CLEAN)


def test_strict_mode_stops_at_the_first_flipped_bit_after_the_records_before_it() -> None:
    blob = encode_log(HEADER, SMALL_RECORDS)
    offsets = frame_offsets(HEADER, SMALL_RECORDS)
    for bit in range(offsets[0] * 8, len(blob) * 8, 3):
        frame = max(k for k, o in enumerate(offsets) if o <= bit // 8)
        out: list[Record] = []
        with pytest.raises(LogFormatError) as info:
            out.extend(LogStream([flip(blob, bit)], strict=True))
        assert info.value.offset == offsets[frame], bit
        assert out == SMALL_RECORDS[:frame]


def test_several_damaged_frames_are_all_reported_in_order() -> None:
    blob = encode_log(HEADER, SMALL_RECORDS)
    offsets = frame_offsets(HEADER, SMALL_RECORDS)
    damaged = flip(flip(blob, offsets[1] * 8 + 2), (offsets[3] + 9) * 8)  # a length, a payload
    out, stream = decode_all(damaged)
    assert out == [SMALL_RECORDS[0], SMALL_RECORDS[2], SMALL_RECORDS[4]]
    kinds = [(p.kind, p.offset) for p in stream.summary().problems]
    assert kinds == [(ProblemKind.BAD_FRAME, offsets[1]), (ProblemKind.BAD_CHECKSUM, offsets[3])]


def test_intact_frame_with_invalid_record_is_a_bad_record() -> None:
    blob = encode_header(HEADER) + encode_frame(b"\x09nope") + encode_record(SMALL_RECORDS[0])
    out, stream = decode_all(blob)
    assert out == SMALL_RECORDS[:1]
    (problem,) = stream.summary().problems
    assert problem.kind is ProblemKind.BAD_RECORD and problem.offset == len(encode_header(HEADER))


def test_impossible_length_is_a_bad_frame() -> None:
    length = (MAX_PAYLOAD_SIZE + 1).to_bytes(4, "big")
    fake = length + checksum(length).to_bytes(4, "big") + b"junk"
    blob = encode_header(HEADER) + fake + encode_record(SMALL_RECORDS[0])
    out, stream = decode_all(blob)
    assert out == SMALL_RECORDS[:1]
    (problem,) = stream.summary().problems
    assert problem.kind is ProblemKind.BAD_FRAME and problem.length == len(fake)


def test_damage_then_torn_tail_is_a_corrupt_tail() -> None:
    blob = encode_log(HEADER, SMALL_RECORDS)
    offsets = frame_offsets(HEADER, SMALL_RECORDS)
    damaged = flip(blob, offsets[3] * 8 + 30)[:-3]
    out, stream = decode_all(damaged)
    assert out == SMALL_RECORDS[:3]
    summary = stream.summary()
    assert summary.tail is TailState.CORRUPT
    assert [p.offset for p in summary.problems] == [offsets[3]]


# --- not a log at all -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"", ProblemKind.NOT_A_LOG),
        (b"NERTZ", ProblemKind.NOT_A_LOG),
        (b"NERTZLOG\x00", ProblemKind.NOT_A_LOG),
        (b"\x89PNG\r\n\x1a\n" + bytes(100), ProblemKind.NOT_A_LOG),
        (bytes(range(256)) * 10, ProblemKind.NOT_A_LOG),
        (b"nertzlog" + encode_log(HEADER, SMALL_RECORDS)[8:], ProblemKind.NOT_A_LOG),
        (
            MAGIC + b"\x00\x02" + encode_log(HEADER, [])[PREFIX_SIZE:],
            ProblemKind.UNSUPPORTED_VERSION,
        ),
        (MAGIC + b"\x00\x01", ProblemKind.BAD_HEADER),
        (encode_log(HEADER, [])[:-1], ProblemKind.BAD_HEADER),
        (MAGIC + b"\x00\x01" + bytes(40), ProblemKind.BAD_HEADER),
        (MAGIC + b"\x00\x01" + encode_frame(b"\x93\x01\x02\x03"), ProblemKind.BAD_HEADER),
        (MAGIC + b"\x00\x01" + encode_frame(b"\xc1"), ProblemKind.BAD_HEADER),
        (MAGIC + b"\x00\x01" + encode_frame(b"\x81\xa7game_id\xc4\x01g"), ProblemKind.BAD_HEADER),
        (flip(encode_log(HEADER, SMALL_RECORDS), 8 * 40), ProblemKind.BAD_HEADER),
    ],
)
def test_unreadable_files_give_one_fatal_problem(
    tmp_path: Path, data: bytes, kind: ProblemKind
) -> None:
    path = tmp_path / "bad.nlog"
    path.write_bytes(data)
    with read_log(path) as reader:
        assert list(reader) == []
        summary = reader.summary()
    (problem,) = summary.problems
    assert problem.kind is kind and problem.fatal
    assert summary.fatal is problem and summary.header is None
    assert summary.tail is TailState.CORRUPT and summary.size == len(data)
    with read_log(path, strict=True) as reader, pytest.raises(LogFormatError, match=kind.value):
        list(reader)
    with pytest.raises(LogFormatError) as refused:  # (in the words every command uses)
        open_for_append(path)
    assert str(refused.value) == f"{path}: {problem.words}"


def test_garbage_fails_on_the_first_chunk() -> None:
    consumed = 0

    def chunks() -> Iterator[bytes]:
        nonlocal consumed
        for _ in range(1000):
            consumed += 1
            yield b"garbage " * 8

    stream = LogStream(chunks())
    assert list(stream) == []
    assert stream.problems[0].kind is ProblemKind.NOT_A_LOG
    assert consumed == 1000  # the lenient reader drains its input, but decodes nothing more
    with pytest.raises(LogFormatError):
        list(LogStream(chunks(), strict=True))
    assert consumed == 1001  # strict stops at once


# --- fuzzing: the decoder never raises in lenient mode, and chunking never matters -------------


@settings(max_examples=200)
@given(
    st.one_of(
        st.binary(max_size=400),
        st.builds(
            lambda recs, edits: _mutate(encode_log(HEADER, recs), edits),
            st.lists(records, max_size=6),
            st.lists(st.tuples(st.integers(0), st.integers(0, 255), st.integers(0, 3)), max_size=6),
        ),
    ),
    st.lists(st.integers(min_value=0), max_size=10),
)
def test_decoder_survives_any_bytes_in_any_chunking(data: bytes, cuts: list[int]) -> None:
    whole, stream = decode_all(data)
    summary = stream.summary()
    decoder = LogDecoder()
    pieces = [r for chunk in chunked(data, cuts) for r in decoder.feed(chunk)]
    assert pieces == whole
    assert decoder.close() == summary
    assert summary.size == len(data)
    assert summary.good_end <= summary.size
    try:
        strict_out = list(LogStream(chunked(data, cuts), strict=True))
    except LogFormatError as exc:
        assert exc.offset == summary.problems[0].offset
    else:
        assert strict_out == whole and not summary.problems


def _mutate(blob: bytes, edits: list[tuple[int, int, int]]) -> bytes:
    out = bytearray(blob)
    for position, value, op in edits:
        if not out:
            break
        at = position % len(out)
        if op == 0:
            out[at] = value
        elif op == 1:
            del out[at:]
        elif op == 2:
            out[at:at] = bytes([value]) * (value % 20 + 1)
        else:
            del out[at : at + value % 20 + 1]
    return bytes(out)


# --- streaming in bounded memory ----------------------------------------------------------------


def test_stream_yields_records_before_consuming_all_chunks() -> None:
    blob = encode_log(HEADER, [Record.sent_event(b"%06d" % i) for i in range(2000)])
    consumed = 0

    def chunks() -> Iterator[bytes]:
        nonlocal consumed
        for at in range(0, len(blob), 1000):
            consumed += 1
            yield blob[at : at + 1000]

    total = -(-len(blob) // 1000)
    stream = LogStream(chunks())
    first = next(iter(stream))
    assert first == Record.sent_event(b"000000")
    assert consumed == 1
    rest = list(stream)
    assert len(rest) == 1999 and consumed == total
    assert stream.summary().ok


def test_read_log_of_100k_records_streams_in_bounded_memory(tmp_path: Path, no_sync: None) -> None:
    path = tmp_path / "big.nlog"
    count = 100_000
    with create_log(path, HEADER) as writer:
        writer.append_many(Record.received_event(b"ev%08d" % i) for i in range(count))
    size = path.stat().st_size
    seen = 0
    try:
        with read_log(path) as reader:
            for record in reader:
                last = record
                seen += 1
                if seen % 20_000 == 0:
                    # The file is read as records are consumed, at most one 64 KiB chunk ahead.
                    assert abs(reader.bytes_read - size * seen / count) <= 64 * 1024 + 100
                if seen == count - 5_000:
                    tracemalloc.start()  # tracing is slow: trace the last 5,000 records only
            _, peak = tracemalloc.get_traced_memory()
            summary = reader.summary()
    finally:
        tracemalloc.stop()
    assert seen == count and summary.ok and summary.size == size > 2_000_000
    assert last == Record.received_event(b"ev%08d" % (count - 1))
    # A chunk, the buffer and one chunk's decoded records: nowhere near the file's 2.3 MB.
    assert 0 < peak < 640 * 1024, peak


def test_read_log_reads_the_file_in_chunks(tmp_path: Path) -> None:
    path = tmp_path / "log.nlog"
    path.write_bytes(encode_log(HEADER, [Record.sent_event(bytes(100))] * 100))
    with read_log(path, chunk_size=512) as reader:
        iterator = iter(reader)
        next(iterator)
        assert reader.bytes_read <= 1024  # only what the first record needed was read
        assert len(list(iterator)) == 99


# --- durability -------------------------------------------------------------------------------


def test_append_syncs_the_written_frame_before_returning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "log.nlog"
    writer = create_log(path, HEADER)
    events: list[tuple[str, int]] = []
    real_write = os.write

    def spy_write(fd: int, data: bytes) -> int:
        events.append(("write", len(data)))
        return real_write(fd, data)

    def spy_sync(fd: int) -> None:
        events.append(("sync", os.fstat(fd).st_size))  # what is on file when syncing

    monkeypatch.setattr(os, "write", spy_write)
    monkeypatch.setattr(os, "fsync", spy_sync)
    monkeypatch.setattr(os, "fdatasync", spy_sync, raising=False)
    with writer:
        for record in SMALL_RECORDS[:3]:
            before = writer.size
            frame = len(encode_record(record))
            events.clear()
            writer.append(record)
            events.append(("returned", writer.size))
            assert events == [
                ("write", frame),
                ("sync", before + frame),
                ("returned", before + frame),
            ]


def test_append_many_writes_once_and_syncs_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = create_log(tmp_path / "log.nlog", HEADER)
    syncs: list[int] = []
    monkeypatch.setattr(os, "fsync", syncs.append)
    monkeypatch.setattr(os, "fdatasync", syncs.append, raising=False)
    with writer:
        writer.append_many(SMALL_RECORDS)
        assert len(syncs) == 1
        writer.append_many([])
        assert len(syncs) == 1
    with read_log(writer.path) as reader:
        assert list(reader) == SMALL_RECORDS


def test_append_many_without_sync_writes_and_a_later_sync_covers_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = create_log(tmp_path / "log.nlog", HEADER)
    syncs: list[int] = []
    monkeypatch.setattr(os, "fsync", syncs.append)
    monkeypatch.setattr(os, "fdatasync", syncs.append, raising=False)
    with writer:
        writer.append_many(SMALL_RECORDS[:2], sync=False)
        assert syncs == []  # written for the OS to keep, without waiting for the disk
        size = writer.size
        assert size == os.stat(writer.path).st_size
        writer.append(SMALL_RECORDS[2])
        assert len(syncs) == 1  # one sync makes the earlier unsynced frames durable too
    with read_log(writer.path) as reader:
        assert list(reader) == SMALL_RECORDS[:3]


def test_create_log_syncs_before_the_file_appears(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "log.nlog"
    seen: list[bool] = []
    monkeypatch.setattr(os, "fsync", lambda fd: seen.append(path.exists()))
    create_log(path, HEADER).close()
    assert seen[0] is False  # the header was synced in the temporary file, before the link
    assert [p.name for p in tmp_path.iterdir()] == ["log.nlog"]
    assert path.read_bytes() == encode_header(HEADER)


def test_failed_write_cuts_the_partial_frame_and_stops_the_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "log.nlog"
    writer = create_log(path, HEADER)
    writer.append(SMALL_RECORDS[0])
    size = writer.size
    real_write = os.write

    def disk_full(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data)[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", disk_full)
    with pytest.raises(OSError, match="No space"):
        writer.append(SMALL_RECORDS[1])
    monkeypatch.undo()
    assert path.stat().st_size == size
    with pytest.raises(OSError, match="failed earlier"):
        writer.append(SMALL_RECORDS[1])
    writer.close()
    writer, recovery = open_for_append(path)
    with writer:
        assert list(recovery.records) == SMALL_RECORDS[:1]
        assert recovery.tail is TailState.CLEAN


def test_closed_writer_refuses_appends(tmp_path: Path) -> None:
    writer = create_log(tmp_path / "log.nlog", HEADER)
    writer.close()
    writer.close()
    with pytest.raises(ValueError, match="closed"):
        writer.append(SMALL_RECORDS[0])


# --- creating and reopening -------------------------------------------------------------------


def test_create_log_is_private_and_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "log.nlog"
    create_log(path, HEADER).close()
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0
    with pytest.raises(FileExistsError):
        create_log(path, HEADER)


def test_open_for_append_creates_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "log.nlog"
    with pytest.raises(FileNotFoundError):
        open_for_append(path)
    writer, recovery = open_for_append(path, create_with=HEADER)
    with writer:
        assert recovery.records == () and recovery.header == HEADER
        writer.append(SMALL_RECORDS[0])
    writer, recovery = open_for_append(path, create_with=HEADER)
    with writer:
        assert recovery.records == (SMALL_RECORDS[0],)


def test_open_for_append_refuses_another_games_log(tmp_path: Path) -> None:
    path = tmp_path / "log.nlog"
    create_log(path, HEADER).close()
    other = LogHeader(game_id=b"other", peer_id=HEADER.peer_id, created_at_ms=0)
    with pytest.raises(LogFormatError, match="not of game"):
        open_for_append(path, create_with=other)


@pytest.mark.skipif(os.name != "posix", reason="flock is POSIX")
def test_second_writer_is_refused_while_the_first_is_open(tmp_path: Path) -> None:
    path = tmp_path / "log.nlog"
    with create_log(path, HEADER), pytest.raises(BlockingIOError, match="in use") as refused:
        open_for_append(path)
    if sys.platform == "linux":  # (/proc/locks names the holder: this process)
        assert f"(pid {os.getpid()})" in str(refused.value)
    writer, _ = open_for_append(path)
    writer.close()


def test_open_for_append_refuses_damage_before_the_last_good_record(
    tmp_path: Path, no_sync: None
) -> None:
    blob = encode_log(HEADER, SMALL_RECORDS)
    offsets = frame_offsets(HEADER, SMALL_RECORDS)
    path = tmp_path / "log.nlog"
    path.write_bytes(flip(blob, offsets[2] * 8 + 77))
    for cut in (False, True):
        with pytest.raises(LogFormatError, match="before the last good record") as info:
            open_for_append(path, cut_damaged_tail=cut)
        assert info.value.offset == offsets[2]
    assert path.read_bytes() == flip(blob, offsets[2] * 8 + 77)  # untouched


def test_open_for_append_cuts_a_corrupt_tail_only_when_asked(tmp_path: Path, no_sync: None) -> None:
    blob = encode_log(HEADER, SMALL_RECORDS)
    offsets = frame_offsets(HEADER, SMALL_RECORDS)
    path = tmp_path / "log.nlog"
    damaged = flip(blob, len(blob) * 8 - 3)  # the last frame's checksum
    path.write_bytes(damaged)
    with pytest.raises(LogFormatError, match="cut_damaged_tail") as info:
        open_for_append(path)
    assert info.value.offset == offsets[-2]
    assert path.read_bytes() == damaged
    writer, recovery = open_for_append(path, cut_damaged_tail=True)
    with writer:
        assert list(recovery.records) == SMALL_RECORDS[:-1]
        assert recovery.tail is TailState.CORRUPT
        assert recovery.cut_bytes == len(blob) - offsets[-2]
        assert [p.kind for p in recovery.problems] == [ProblemKind.BAD_CHECKSUM]
    assert path.read_bytes() == blob[: offsets[-2]]


def test_records_written_before_and_after_recovery_read_back_in_order(
    tmp_path: Path, no_sync: None
) -> None:
    path = tmp_path / "log.nlog"
    with create_log(path, HEADER) as writer:
        writer.append_many(SMALL_RECORDS[:3])
    with path.open("ab") as raw:
        raw.write(encode_record(SMALL_RECORDS[3])[:-2])  # a crash in mid-append
    writer, recovery = open_for_append(path)
    with writer:
        assert recovery.tail is TailState.TORN and len(recovery.records) == 3
        writer.append(SMALL_RECORDS[4])
    with read_log(path) as reader:
        assert [*reader] == [*SMALL_RECORDS[:3], SMALL_RECORDS[4]]


def test_open_for_append_of_another_games_log_names_both_games_in_hex(tmp_path: Path) -> None:
    path = tmp_path / "peer.log"
    create_log(path, HEADER).close()
    other = LogHeader(game_id=b"another", peer_id=bytes(range(32)), created_at_ms=0)
    with pytest.raises(LogFormatError) as caught:
        open_for_append(path, create_with=other)
    message = str(caught.value)
    assert HEADER.game_id.hex() in message and other.game_id.hex() in message
    assert "b'" not in message  # ids in hex, not Python bytes reprs


def test_writer_whose_log_is_removed_writes_it_again_under_its_name(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    writer = create_log(path, HEADER)
    writer.append(Record.note("one", b"1"))
    assert writer.named()
    path.unlink()
    assert not writer.named()
    writer.name_again()
    assert writer.named()
    writer.append(Record.note("two", b"2"))
    writer.close()
    with read_log(path, strict=True) as reader:
        assert [r.name for r in reader] == ["one", "two"]


def test_writer_whose_log_is_replaced_leaves_the_other_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    writer = create_log(path, HEADER)
    (tmp_path / "other").write_bytes(b"not a log")
    os.replace(tmp_path / "other", path)
    assert not writer.named()
    with pytest.raises(FileExistsError):
        writer.name_again()
    writer.close()
    assert path.read_bytes() == b"not a log"


def test_a_node_log_is_created_by_its_first_write_whole_with_two_syncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a missing log created it (the header's file synced, then its directory), the
    session notes were a sync of their own, the join another: four syncs before the node's
    first message, which on a slow disk outlasted the drop timer (session 28)."""
    ann, bob = (Identity.generate(derive_seed(b"test-nodelog-new", n)) for n in range(2))
    spec = GameSpec.create([(ann.peer_id, "Ann"), (bob.peer_id, "Bob")], Rules(), b"nodelog")
    path = tmp_path / "ann.log"
    syncs: list[bool] = []  # whether the log had its name at each sync
    monkeypatch.setattr(os, "fsync", lambda fd: syncs.append(path.exists()))
    monkeypatch.setattr(os, "fdatasync", lambda fd: syncs.append(path.exists()), raising=False)
    log = NodeLog(path)
    opened = log.open(spec, ann.peer_id)
    assert opened.records == () and not path.exists() and syncs == []
    notes = session_notes(spec, {ann.peer_id: "tcp://127.0.0.1:1", bob.peer_id: "tcp://b:2"})
    log.hold(notes)
    join, clock = Record.sent_event(b"join"), encode_clock_note(5)
    trio.run(log.write, [join])
    assert syncs == [False, True]  # the whole file before its link, then its directory
    trio.run(log.write, [clock])
    assert len(syncs) == 3  # an append, as before: one sync
    log.close()
    again = NodeLog(path)
    assert again.open(spec, ann.peer_id).records == (*notes, join, clock)
    again.close()


def _syncs_beside(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[list[int], list[int], Callable[[int], Awaitable[None]]]:
    """A disk whose syncs in a worker thread end only once the task beside them ran (a slow
    disk's, a waking one's), and such a task: the threads the syncs ran on, the reservations
    the task was given, the task."""
    main, beside, synced, seen = threading.get_ident(), threading.Event(), [], []

    def sync(fd: int) -> None:
        synced.append(threading.get_ident())
        if synced[-1] != main:  # (on trio's thread no task runs beside it: no wait)
            assert beside.wait(60), "the task beside the sync never ran"

    monkeypatch.setattr(os, "fsync", sync)
    monkeypatch.setattr(os, "fdatasync", sync, raising=False)

    async def meanwhile(reserved: int) -> None:
        seen.append(reserved)
        beside.set()
        await trio.sleep_forever()  # (cancelled once the sync is done)

    return synced, seen, meanwhile


def test_a_node_log_s_first_sync_after_an_idle_gap_goes_to_a_thread_and_the_next_do_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first slow sync blocked trio's thread (only the next went to a worker thread), and
    a disk asleep after an idle gap makes the first sync slow: the first after ``idle_after``
    without one goes to a worker thread, ``meanwhile`` beside it, and only that one (session
    30: a quick one leaves the next on trio's thread, the fast path)."""
    ann, bob = (Identity.generate(derive_seed(b"test-nodelog-idle", n)) for n in range(2))
    spec = GameSpec.create([(ann.peer_id, "Ann"), (bob.peer_id, "Bob")], Rules(), b"nodelog")
    log = NodeLog(tmp_path / "ann.log", slow_after=1.0, idle_after=5.0)
    log.open(spec, ann.peer_id)
    trio.run(log.write, [encode_clock_note(1000), Record.sent_event(b"join")])
    main = threading.get_ident()
    synced, seen, meanwhile = _syncs_beside(monkeypatch)
    trio.run(log.write, [Record.sent_event(b"move")], meanwhile)
    assert synced == [main] and seen == []  # (no gap: on trio's thread, nothing beside)
    log.pace.synced_at -= 10.0  # (the last sync, 10 s ago: the disk idle since)
    trio.run(log.write, [Record.sent_event(b"after a gap")], meanwhile)
    assert len(synced) == 2 and synced[1] != main and seen == [1000]
    assert not log.pace.threaded  # (a quick sync: the next stay on trio's thread)
    trio.run(log.write, [Record.sent_event(b"next")], meanwhile)
    assert synced[2:] == [main] and seen == [1000]
    log.close()


def test_a_node_log_on_a_slow_disk_syncs_in_a_thread_with_the_node_going_on_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync that blocked trio's thread for seconds stopped the node (no beat, nothing
    received): once one was slow, the next go to a worker thread, ``meanwhile`` running beside
    each until it is durable, with the clock reserved durably before it (session 29)."""
    ann, bob = (Identity.generate(derive_seed(b"test-nodelog-slow", n)) for n in range(2))
    spec = GameSpec.create([(ann.peer_id, "Ann"), (bob.peer_id, "Bob")], Rules(), b"nodelog")
    path = tmp_path / "ann.log"
    log = NodeLog(path, slow_after=0.0)  # (every sync takes longer than no time)
    log.open(spec, ann.peer_id)
    trio.run(log.write, [encode_clock_note(1000), Record.sent_event(b"join")])
    assert log.pace.threaded and log.reserved == 1000  # (the creation was on trio's thread)
    # The sync waits for the task beside it: it is durable only after that task ran.
    main = threading.get_ident()
    synced, seen, meanwhile = _syncs_beside(monkeypatch)

    ours = [encode_clock_note(2000), Record.sent_event(b"move")]
    trio.run(log.write, ours, meanwhile)
    assert seen == [1000] and synced and main not in synced
    assert log.reserved == 2000 + RESERVE_AHEAD  # (reserved ahead, for the next write's task)
    # A received event alone is not synced: no thread, nothing beside it.
    trio.run(log.write, [Record.received_event(b"theirs")], meanwhile)
    assert seen == [1000]

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    monkeypatch.setattr(os, "fdatasync", full, raising=False)
    with pytest.raises(OSError, match="No space left"):  # (itself, not in a group)
        trio.run(log.write, [Record.sent_event(b"next")], meanwhile)
    log.close()
    with read_log(path) as reader:
        records = list(reader)
    clocks = [c for c in map(decode_clock_note, records) if c is not None]
    assert clocks == [1000, 2000 + RESERVE_AHEAD]
    assert [r.data for r in records if r.kind is RecordKind.SENT_EVENT] == [b"join", b"move"]


def test_open_for_append_refuses_another_players_log_of_the_game_in_words(tmp_path: Path) -> None:
    """A copy of another member's log given as ours (the right game, another seat's key): said
    so, not as the log of "game X by peer Y, not of game X by peer Z"; nothing written."""
    path = tmp_path / "log.nlog"
    create_log(path, HEADER).close()
    size = path.stat().st_size
    ours = LogHeader(game_id=HEADER.game_id, peer_id=b"\x07" * 32, created_at_ms=0)
    with pytest.raises(LogFormatError, match="is another player's log of this game") as refused:
        open_for_append(path, create_with=ours)
    assert "not this key's" in str(refused.value) and "not of game" not in str(refused.value)
    assert path.stat().st_size == size
