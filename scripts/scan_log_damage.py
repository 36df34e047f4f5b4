#!/usr/bin/env python3
"""Sweep accidental damage over every member's log of real games, and say whom the audit blames.

The audit's worst failure is to name an honest member. This scan takes the logs of real games
(the simulator's: real peer cores, real Ed25519 signatures; 2, 3 and 4 players, the commit deal
and ``--deal shuffle``), damages ONE member's log at a time in every way an accident can (or a
dense, seeded sample of the positions), audits every log of the game and that log alone (as
``nertz audit`` allows), and classifies each report by the worst thing it says:

- ``valid``: no finding; ``notice``: notices only;
- ``log``: errors that name the damaged log as a file (damage, a gap, a misfiled record ...);
- ``victim``: an error naming a member wronged (a drop or a forfeit without a cause that
  stands: the voters are named by their own ``unproven_vote``);
- ``owner``: an error accusing the damaged log's owner of a cheat (the file is the owner's,
  but nothing it signed is wrong: the damage was not its signature's);
- ``other log``: an error naming another, undamaged, log as a file;
- ``OTHER``: an error accusing ANOTHER member of a cheat (the bad case: an honest member
  blamed for damage to someone else's file);
- ``CRASH``: an exception or a hang (more than ``--timeout`` seconds).

Damage families (``FAMILIES``): ``cut`` a truncation at every byte of the last ``--tail``
frames (every ``--cut-step``-th) and a seeded sample elsewhere; ``flip`` one seeded bit
flipped in a frame; ``zeros`` a frame's bytes zeroed where they are (a disk block lost);
``pad`` a block of zero bytes after the file's end (a crash that kept the file's new size
and lost what was written there); ``drop``, ``dup``, ``move`` a frame dropped, duplicated,
moved (to a seeded place); ``older`` the log replaced by an older copy of itself (a prefix
ending at a frame boundary: a backup restored); ``swap`` two members' logs swapped in name;
``foreign`` the member's log of another game (same keys, other rules); ``missing`` the log
left out; ``twice`` the log given twice. The frame families take every ``--every``-th frame
and each of the last ``--tail``.

A dishonest member's edits of its own log, with its own key (``EDITS``): ``forge`` a received
event of another changed (it cannot sign it again); ``retime`` one of its own events re-signed
timed just after its event before, its feed re-signed after it; ``unack`` one re-signed
acknowledging no more than its event before (it claims it had not received what it had);
``backdate`` both (a consistent lie: it moved first); ``accuse`` a vote to drop another member
on proof of cheating that nothing proves, appended as its next event. For these ``owner``
(the editor named) is the right answer.

Each case is one (game, log, family, position, mode); the mode ``alone`` audits the damaged
log by itself (``missing`` and ``twice`` have no such mode: they are about the set of logs).
Prints a table (family by class) and the first cases of each bad class (``OTHER``, ``CRASH``,
``other log``; ``-v``: all) with their findings, to reproduce with ``--case ID``.
Deterministic for a ``--seed``. Slow (each case is an audit): not part of the suite;
``tests/test_audit_damage.py`` holds its smallest telling cases.

    python scripts/scan_log_damage.py [--players 2-4] [--deals commit,shuffle] [--seed 11]
        [--tail 2] [--sample 24] [--every 1] [--cut-step 1] [--families cut,...]
        [--workers 2]
        [--case ID] [-v]
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import random
import signal
import struct
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scanning import span

from p2p_nertz.audit import AuditReport, Finding, FindingKind, LogSource, Severity, audit
from p2p_nertz.logfile import Record, RecordKind, decode_record, encode_log
from p2p_nertz.logfile.format import MAGIC, LogHeader
from p2p_nertz.protocol.bodies import (
    ID_PREFIX,
    NOT_EVENTS,
    VOTE_WINDOW,
    Drop,
    DropReason,
    encode_body,
    held_ids,
    kind_of,
    parse_body,
)
from p2p_nertz.protocol.envelope import Message, decode_message, encode_message
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.rules import Rules
from p2p_nertz.sim import SimConfig, SimResult, Simulation
from p2p_nertz.sim.logfiles import log_files

K = FindingKind

FAMILIES = (
    "cut", "flip", "zeros", "pad", "drop", "dup", "move", "older", "swap", "foreign", "missing",
    "twice",
)  # fmt: skip
#: Zero bytes ``pad`` appends: a file system block (a crash that kept a file's new size and
#: lost its data leaves zeros there).
PAD = 4096
#: A dishonest member's edits of its own log, with its own key (module docstring).
EDITS = ("forge", "retime", "unack", "backdate", "accuse")
CLASSES = ("valid", "notice", "log", "victim", "owner", "other log", "OTHER", "CRASH")

PREFIX = len(MAGIC) + 2


@dataclasses.dataclass(frozen=True)
class GameLogs:
    """One game's log files (seat order) and each member's log of another game (same keys)."""

    name: str
    files: tuple[bytes, ...]
    foreign: tuple[bytes, ...]
    spec: GameSpec
    identities: tuple[Identity, ...]


@functools.cache
def game(players: int, deal: str, seed: int) -> GameLogs:
    def play(rounds: int) -> SimResult:
        config = SimConfig(
            players=players, seed=seed, rules=Rules(target=None, rounds=rounds), deal=Deal(deal)
        )
        return Simulation(config).run()

    # (Same seed, same keys; another rule, another game id: the member's log of another game.)
    one, two = play(1), play(2)
    return GameLogs(
        f"{players}p-{deal}",
        tuple(log_files(one)),
        tuple(log_files(two)),
        one.spec,
        tuple(one.identities),
    )


def records(blob: bytes) -> list[Record]:
    """The records of an undamaged log file (the header frame left out)."""
    return [decode_record(blob[start + 8 : end - 4]) for start, end in frames(blob)[1:]]


def own_events(blob: bytes, author: bytes) -> list[tuple[int, Message]]:
    """The author's events in a log: (record index, message), in the log's order."""
    out = []
    for i, record in enumerate(records(blob)):
        if record.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT):
            message = decode_message(record.data)
            if message.author == author:
                out.append((i, message))
    return out


def edited(g: GameLogs, seat: int, family: str, position: int) -> bytes | None:
    """Seat ``seat``'s log as it edited it, with its own key (``None``: no such edit there).

    ``forge``: a received event of another member changed (its signature kept: it cannot make
    the other's); ``retime``: its own event ``position`` re-signed timed just after its event
    before, and every later event of its feed re-signed on it (a consistent, false chain);
    ``unack``: its own event re-signed acknowledging no more than its event before did (it
    claims it had not received what it had), the chain re-signed; ``backdate``: both (timed
    early, and acknowledging only what it had then: a consistent lie); ``accuse``: a vote to drop
    another member on proof of cheating that nothing proves, appended as its next event."""
    spec, me = g.spec, g.identities[seat]
    blob = g.files[seat]
    recs = records(blob)
    mine = own_events(blob, me.peer_id)
    if family == "forge":
        others = [
            i
            for i, r in enumerate(recs)
            if r.kind is RecordKind.RECEIVED_EVENT and decode_message(r.data).author != me.peer_id
        ]
        if position >= len(others):
            return None
        i = others[position]
        data = bytearray(recs[i].data)
        data[-1] ^= 0x01  # a bit of the signature (the last 64 bytes): as if the body changed
        recs[i] = Record(kind=recs[i].kind, data=bytes(data))
    elif family in ("retime", "unack", "backdate"):
        if not 1 <= position < len(mine):
            return None
        new: dict[bytes, bytes] = {}
        prev_id: bytes | None = mine[position - 1][1].id
        before = mine[position - 1][1]
        for _, message in mine[position:]:
            changes: dict[str, Any] = {}
            if message.seq == mine[position][1].seq:
                if family in ("retime", "backdate"):
                    if message.lamport <= before.lamport + 1:
                        return None
                    changes["lamport"] = before.lamport + 1
                if family in ("unack", "backdate"):
                    old = parse_body(message.kind, message.body, spec.seats)
                    was = parse_body(before.kind, before.body, spec.seats)
                    assert not isinstance(old, NOT_EVENTS) and not isinstance(was, NOT_EVENTS)
                    frontier = list(was.frontier)
                    ids = list(was.frontier_ids)
                    frontier[seat], ids[seat] = before.seq, before.id[:ID_PREFIX]
                    if tuple(frontier) == old.frontier:
                        return None
                    changes["body"] = encode_body(
                        dataclasses.replace(old, frontier=tuple(frontier), frontier_ids=tuple(ids))
                    )
            wire = encode_message(
                me,
                game_id=message.game_id,
                seq=message.seq,
                prev=prev_id,
                lamport=changes.get("lamport", message.lamport),
                kind=message.kind,
                body=changes.get("body", message.body),
                version=message.version,
            )
            new[message.id] = wire
            prev_id = decode_message(wire).id
        for i, record in enumerate(recs):
            if record.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT):
                replaced = new.get(decode_message(record.data).id)
                if replaced is not None:
                    recs[i] = Record(kind=record.kind, data=replaced)
    elif family == "accuse":
        target = (seat + 1 + position) % spec.seats
        if position >= spec.seats - 1:
            return None
        events = [
            decode_message(r.data)
            for r in recs
            if r.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT)
        ]
        feeds: list[list[Message]] = [[] for _ in range(spec.seats)]
        for m in events:
            q = spec.seat_of(m.author)
            if len(feeds[q]) < m.seq:
                feeds[q].append(m)
        heads = tuple(len(f) for f in feeds)
        window = feeds[target][-VOTE_WINDOW:]
        body = Drop(
            heads,
            target,
            heads[target],
            DropReason.EQUIVOCATION,
            max(1, heads[target] - 1),
            tuple(m.id[:ID_PREFIX] for m in window),
            frontier_ids=held_ids(feeds, heads),
        )
        last = feeds[seat][-1]
        wire = encode_message(
            me,
            game_id=spec.game_id,
            seq=last.seq + 1,
            prev=last.id,
            lamport=max(m.lamport for m in events) + 1,
            kind=kind_of(body),
            body=encode_body(body),
            version=last.version,
        )
        recs.append(Record.sent_event(wire))
    header = LogHeader(game_id=spec.game_id, peer_id=bytes(spec.peer_ids[seat]), created_at_ms=0)
    return encode_log(header, recs)


def frames(blob: bytes) -> list[tuple[int, int]]:
    """Every frame's (start, end) in a log file, the header frame first."""
    out: list[tuple[int, int]] = []
    at = PREFIX
    while at + 4 <= len(blob):
        (length,) = struct.unpack_from(">I", blob, at)
        end = at + 12 + length
        if end > len(blob):
            break
        out.append((at, end))
        at = end
    return out


@dataclasses.dataclass(frozen=True)
class Case:
    """One damage: ``family`` at ``position`` of seat ``seat``'s log of ``game`` (``mode``
    ``all``: audited with every log; ``alone``: by itself)."""

    players: int
    deal: str
    seat: int
    family: str
    position: int
    mode: str
    seed: int

    @property
    def ident(self) -> str:
        return (
            f"{self.players}:{self.deal}:{self.seat}:{self.family}:{self.position}:"
            f"{self.mode}:{self.seed}"
        )

    @staticmethod
    def parse(text: str) -> Case:
        p, d, s, f, pos, m, seed = text.split(":")
        return Case(int(p), d, int(s), f, int(pos), m, int(seed))


def positions(
    blob: bytes,
    family: str,
    rng: random.Random,
    *,
    tail: int,
    sample: int,
    every: int,
    step: int = 1,
) -> list[int]:
    """The positions a family is tried at in one log (byte offsets, or frame indexes: every
    ``every``-th frame, and each of the last ``tail`` frames)."""
    spans = frames(blob)
    n = len(spans)
    if family == "cut":  # every (``step``-th) byte of the last frames, a sample of the others
        start = spans[max(1, n - tail)][0]
        before = rng.sample(range(PREFIX, start), min(sample, start - PREFIX))
        return sorted(before) + list(range(start, len(blob), step))
    last = range(max(0, n - tail), n)
    if family in ("flip", "zeros", "drop", "dup", "move"):  # every frame (the header's too)
        return sorted({*range(0, n, every), *last})
    if family == "older":  # every frame boundary: a backup taken after that frame
        return sorted({*range(1, n, every), *last} - {0})
    if family in (
        "forge",
        "retime",
        "unack",
        "backdate",
    ):  # (edits that do not apply there are skipped)
        return list(range(0, n, every))
    if family == "accuse":
        return list(range(8))
    return [0]


def damaged(case: Case) -> tuple[list[tuple[str, bytes]], set[str], set[int]]:
    """The logs to audit, the names of the damaged files and the seats owning them."""
    g = game(case.players, case.deal, case.seed)
    files = list(g.files)
    blob = files[case.seat]
    spans = frames(blob)
    rng = random.Random(f"{case.ident}")
    pos = case.position
    names = [f"p{i + 1}.log" for i in range(len(files))]
    owners = {case.seat}
    if case.family == "cut":
        blob = blob[:pos]
    elif case.family == "flip":
        start, end = spans[pos]
        byte = rng.randrange(start, end)
        blob = blob[:byte] + bytes([blob[byte] ^ (1 << rng.randrange(8))]) + blob[byte + 1 :]
    elif case.family == "zeros":
        start, end = spans[pos]
        blob = blob[:start] + bytes(end - start) + blob[end:]
    elif case.family == "pad":
        blob += bytes(PAD)
    elif case.family == "drop":
        start, end = spans[pos]
        blob = blob[:start] + blob[end:]
    elif case.family == "dup":
        start, end = spans[pos]
        blob = blob[:end] + blob[start:end] + blob[end:]
    elif case.family == "move":
        start, end = spans[pos]
        frame, rest = blob[start:end], blob[:start] + blob[end:]
        cuts = [s for s, _ in frames(rest)] + [len(rest)]
        to = rng.choice([c for c in cuts if c != start] or cuts)
        blob = rest[:to] + frame + rest[to:]
    elif case.family == "older":
        blob = blob[: spans[pos][1]]
    elif case.family == "foreign":
        blob = g.foreign[case.seat]
    elif case.family in EDITS:
        blob = edited(g, case.seat, case.family, pos) or blob
    files[case.seat] = blob
    logs = list(zip(names, files, strict=True))
    damaged_names = {names[case.seat]}
    if case.family == "swap":
        other = (case.seat + 1) % len(files)
        logs[case.seat], logs[other] = (names[case.seat], files[other]), (names[other], blob)
        damaged_names.add(names[other])
        owners.add(other)
    elif case.family == "missing":
        del logs[case.seat]
        damaged_names = set()
    elif case.family == "twice":
        logs.append((f"copy-of-{names[case.seat]}", blob))
        damaged_names.add(f"copy-of-{names[case.seat]}")
    if case.mode == "alone":
        logs = [(n, b) for n, b in logs if n in damaged_names]
    return logs, damaged_names, owners


#: Kinds that name a member wronged, not one blamed: a forfeit with no cause that stands.
VICTIM_KINDS = frozenset({K.UNTRACED_FORFEIT})


def blame(finding: Finding, damaged_names: set[str], owners: set[int]) -> str:
    """The class of one error finding (``CLASSES``)."""
    if finding.kind in VICTIM_KINDS:
        return "victim"
    if not finding.kind.accuses:  # (the files: FindingKind.accuses)
        if finding.log is None or finding.log in damaged_names:
            return "log"
        return "other log"
    if finding.seat is None or finding.seat in owners:
        return "owner"
    return "OTHER"


def classify(report: AuditReport, damaged_names: set[str], owners: set[int]) -> str:
    if not report.violations:
        return "valid"
    errors = [v for v in report.violations if v.severity is Severity.ERROR]
    if not errors:
        return "notice"
    found = {blame(v, damaged_names, owners) for v in errors}
    return max(found, key=CLASSES.index)


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Hang


def run_case(case: Case, timeout: int = 60) -> tuple[Case, str, list[str]]:
    """Audit one damaged case: its class and the error findings' lines (``skip``: an edit
    that does not apply at that position)."""
    if case.family in EDITS:
        g = game(case.players, case.deal, case.seed)
        if edited(g, case.seat, case.family, case.position) is None:
            return case, "skip", []
    logs, names, owners = damaged(case)
    sources = [LogSource.from_bytes(name, blob) for name, blob in logs]
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        report = audit(sources)
    except _Hang:
        return case, "CRASH", [f"hang: more than {timeout} s"]
    except Exception as exc:
        return case, "CRASH", [f"{type(exc).__name__}: {exc}", traceback.format_exc()]
    finally:
        signal.alarm(0)
    kind = classify(report, names, owners)
    errors = [v for v in report.violations if v.severity is Severity.ERROR]
    ranked = sorted(errors, key=lambda v: -CLASSES.index(blame(v, names, owners)))
    return case, kind, [f"[{blame(v, names, owners)}] {v}" for v in ranked]


def cases(args: argparse.Namespace) -> Iterator[Case]:
    for players in span(args.players):
        for deal in args.deals:
            g = game(players, deal, args.seed)
            for seat in range(players):
                rng = random.Random(f"{args.seed}:{players}:{deal}:{seat}")
                for family in args.families:
                    at = positions(
                        g.files[seat],
                        family,
                        rng,
                        tail=args.tail,
                        sample=args.sample,
                        every=args.every,
                        step=args.cut_step,
                    )
                    modes = ("all",) if family in ("missing", "twice") else ("all", "alone")
                    for position in at:
                        for mode in modes:
                            yield Case(players, deal, seat, family, position, mode, args.seed)


def _run(case: Case) -> tuple[Case, str, list[str]]:
    return run_case(case)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", default="2-4", help="table sizes, N or N-M")
    parser.add_argument("--deals", default="commit,shuffle", type=lambda s: s.split(","))
    parser.add_argument("--seed", type=int, default=11, help="the games' seed and the sample's")
    parser.add_argument("--tail", type=int, default=2, help="frames cut at every byte")
    parser.add_argument("--sample", type=int, default=24, help="other cut positions per log")
    parser.add_argument("--every", type=int, default=1, help="frames tried: every N-th")
    parser.add_argument("--cut-step", type=int, default=1, help="cuts in the last frames")
    parser.add_argument(
        "--families", default=",".join(FAMILIES + EDITS), type=lambda s: s.split(",")
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--case", help="run one case (its id, as printed) and print its report")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every bad case")
    args = parser.parse_args(argv)
    if args.case:
        case = Case.parse(args.case)
        _, kind, lines = run_case(case)
        print(kind)
        print("\n".join(lines))
        return 0
    todo = list(cases(args))
    began = time.monotonic()
    table: Counter[tuple[str, str]] = Counter()
    bad: list[tuple[Case, str, list[str]]] = []
    with ProcessPoolExecutor(args.workers) as pool:
        for done, (case, kind, lines) in enumerate(pool.map(_run, todo, chunksize=16), 1):
            if done % 500 == 0:
                print(f"{done}/{len(todo)}", file=sys.stderr, flush=True)
            if kind == "skip":
                continue
            table[(case.family, kind)] += 1
            if kind in ("OTHER", "CRASH", "other log"):
                bad.append((case, kind, lines))
    print(
        f"{len(todo)} cases, players {args.players}, deals {','.join(args.deals)}, seed "
        f"{args.seed}, {time.monotonic() - began:.0f} s"
    )
    print(f"{'family':<9}" + "".join(f"{c:>11}" for c in CLASSES))
    for family in args.families:
        row = [table[(family, c)] for c in CLASSES]
        print(f"{family:<9}" + "".join(f"{n:>11}" for n in row))
    total = [sum(table[(f, c)] for f in args.families) for c in CLASSES]
    print(f"{'total':<9}" + "".join(f"{n:>11}" for n in total))
    shown: Counter[tuple[str, str, str]] = Counter()
    for case, kind, lines in bad:
        key = (case.family, kind, case.mode)
        shown[key] += 1
        if args.verbose or shown[key] <= 3:
            print(f"\n{kind} {case.ident}")
            for line in lines[:6]:
                print(f"  {line}")
    return 1 if any(kind in ("OTHER", "CRASH") for _, kind, _ in bad) else 0


if __name__ == "__main__":
    sys.exit(main())
