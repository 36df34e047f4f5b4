"""Log files from a simulated game: the simulator keeps logs as lists of wire messages; this
writes them in the log file format, so tools and tests can audit them like real peers' logs.
(It lives with the simulator, which builds on the audit's format: the audit knows no simulator.)

Each log starts with a ``spec`` note (the game spec, docs/log-format.md §5), then the events in
the order the peer logged them: its own as *sent*, the others' as *received*, with the notes the
peer wrote among them (a ``proof`` of cheating) where it wrote them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from p2p_nertz.logfile.format import LogHeader, Record, encode_log
from p2p_nertz.protocol.envelope import EnvelopeCache, InvalidMessageError, decode_message
from p2p_nertz.protocol.peer import Note
from p2p_nertz.protocol.spec import SPEC_NOTE, GameSpec

if TYPE_CHECKING:
    # (The type only: the simulator's run imports the invariants, which import this.)
    from p2p_nertz.sim.network import SimResult

__all__ = ["log_file", "log_files", "log_records"]


def log_records(
    spec: GameSpec,
    seat: int,
    wires: list[bytes],
    notes: Sequence[tuple[int, Note]] = (),
    cache: EnvelopeCache | None = None,
) -> list[Record]:
    """The records of ``seat``'s log: the spec note, then every event it logged, with each
    note of ``notes`` (as :attr:`SimResult.notes` holds them) after the events before it.
    ``cache``: the codec memo that has seen the messages (:attr:`SimResult.envelopes`)."""
    own = spec.peer_ids[seat]
    records = [Record.note(SPEC_NOTE, spec.to_wire())]
    pending = list(notes)
    for index, wire in enumerate(wires):
        while pending and pending[0][0] <= index:
            records.append(Record.note(pending[0][1].name, pending.pop(0)[1].data))
        try:
            own_event = decode_message(wire, cache=cache).author == own
        except InvalidMessageError:
            own_event = False  # (bytes a test damaged: filed as received, for the audit to name)
        records.append(Record.sent_event(wire) if own_event else Record.received_event(wire))
    records.extend(Record.note(note.name, note.data) for _, note in pending)
    return records


def log_file(spec: GameSpec, seat: int, records: list[Record], created_at_ms: int = 0) -> bytes:
    """The bytes of ``seat``'s log file holding ``records``."""
    header = LogHeader(
        game_id=spec.game_id, peer_id=bytes(spec.peer_ids[seat]), created_at_ms=created_at_ms
    )
    return encode_log(header, records)


def log_files(result: SimResult, created_at_ms: int = 0) -> list[bytes]:
    """Every seat's log file, in seat order (deterministic: same run, same bytes)."""
    spec = result.spec
    notes = result.notes or [[] for _ in result.logs]
    return [
        log_file(
            spec,
            seat,
            log_records(spec, seat, wires, notes[seat], result.envelopes),
            created_at_ms,
        )
        for seat, wires in enumerate(result.logs)
    ]
