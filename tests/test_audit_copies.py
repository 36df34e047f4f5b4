"""What each log holds of every feed, and the events only one log holds (issue 18).

The audit no longer counts the copies of each event as it reads them: at the end of a pass it
works out which events only one log holds from what each log holds of each feed (every seq
below the next it read, but its holes). These tests check that answer against a count of every
copy, on logs the audit reads and on random patterns of holes.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from p2p_nertz.audit import FindingKind, LogSource
from p2p_nertz.audit.collect import Collector
from p2p_nertz.audit.logs import Logs
from p2p_nertz.logfile import RecordKind
from p2p_nertz.protocol.envelope import decode_message
from tests.audit_helpers import Game, played


@pytest.fixture(scope="module")
def game() -> Game:
    return played(players=3, seed=11, rounds=1)


def _counted(
    held: dict[int, dict[int, set[int]]], logs: int
) -> dict[tuple[int, int], list[list[int]]]:
    """The slow twin: count every copy of every (seat, seq), then the runs one log alone holds."""
    singles: dict[tuple[int, int], list[list[int]]] = {}
    for seat, by_log in sorted(held.items()):
        copies = Counter(seq for index in range(logs) for seq in by_log.get(index, set()))
        for seq in sorted(copies):
            if copies[seq] != 1:
                continue
            (index,) = (i for i in range(logs) if seq in by_log.get(i, set()))
            ranges = singles.setdefault((seat, index), [])
            if ranges and ranges[-1][1] == seq - 1:
                ranges[-1][1] = seq
            else:
                ranges.append([seq, seq])
    return singles


class _Source:
    def __init__(self, name: str) -> None:
        self.name = name

    def open(self) -> Any:  # pragma: no cover - never opened here
        raise OSError("not a file")


@pytest.mark.parametrize("seed", range(40))
def test_logs_single_copies_match_a_count_of_every_copy(game: Game, seed: int) -> None:
    rng = random.Random(seed)
    spec = game.spec
    count = rng.randint(1, 4)
    roster = {pid: seat for seat, pid in enumerate(spec.peer_ids)}
    logs = Logs(
        spec,
        spec.game_id,
        [_Source(f"p{i}") for i in range(count)],
        Collector(spec, roster, strict=False),
    )
    held: dict[int, dict[int, set[int]]] = {seat: {} for seat in range(spec.seats)}
    for log in logs.logs:
        log.readable = rng.random() < 0.9
        if not log.readable:
            continue  # (a log set aside counts nothing)
        for seat in range(spec.seats):
            seqs = [s for s in range(1, rng.randint(0, 30) + 1) if rng.random() < 0.7]
            order = sorted(seqs)
            if order and rng.random() < 0.3:  # one seq read late (reordered)
                late = order.pop(rng.randrange(len(order)))
                order.append(late)
            for seq in order + order[: rng.randint(0, 2)]:  # and a few read twice
                logs.count(log, seat, seq)
            held[seat][log.index] = set(seqs)
    readable = sum(log.readable for log in logs.logs)
    expected = _counted(held, count) if readable > 1 else {}
    assert logs.singles() == expected


def _drop(records: list[Any], spec: Any, seat: int, seqs: set[int]) -> list[Any]:
    kept = []
    for record in records:
        if record.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT):
            message = decode_message(record.data)
            if message.author == spec.peer_ids[seat] and message.seq in seqs:
                continue
        kept.append(record)
    return kept


def test_audit_names_the_events_only_one_log_holds(game: Game) -> None:
    # Seat 0's events 5 to 7 and 9 only in log 2, seat 1's event 4 only in log 0: the others'
    # logs lack them (gaps), and each run is one finding on the log that holds it.
    logs = game.copy()
    spec = game.spec
    logs[0] = _drop(logs[0], spec, 0, {5, 6, 7, 9})
    logs[1] = _drop(logs[1], spec, 0, {5, 6, 7, 9})
    logs[1] = _drop(logs[1], spec, 1, {4})
    logs[2] = _drop(logs[2], spec, 1, {4})
    report = game.audit(logs)
    singles = [
        (v.log, v.seat, v.seq, v.last_seq)
        for v in report.violations
        if v.kind is FindingKind.SINGLE_COPY
    ]
    assert singles == [("p3.log", 0, 5, 7), ("p3.log", 0, 9, 9), ("p1.log", 1, 4, 4)]


def test_audit_of_logs_holding_the_same_events_names_no_single_copy(game: Game) -> None:
    sources = [LogSource.from_bytes(f"p{i + 1}.log", f) for i, f in enumerate(game.files())]
    from p2p_nertz.audit import audit

    report = audit(sources)
    assert report.valid
    assert not [v for v in report.violations if v.kind is FindingKind.SINGLE_COPY]
