"""Real game logs to audit and the tools to tamper with them, for the audit tests.

:func:`played` runs a real in-process game on the simulator (real peer cores, real Ed25519
signatures) and returns each seat's log as records; tests change the records and audit them.
A cheat that its author signed is made with that seat's own identity: :func:`rewrite` re-signs
the author's event and every later event of its feed (each ``prev`` names the new ids), in
every log at once, exactly as a cheating peer would have sent them.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from p2p_nertz.audit import AuditReport, FindingKind, LogSource, audit
from p2p_nertz.logfile import Record, RecordKind
from p2p_nertz.protocol.bodies import (
    ID_PREFIX,
    VOTE_WINDOW,
    Drop,
    DropReason,
    EventBody,
    encode_body,
    held_ids,
    kind_of,
)
from p2p_nertz.protocol.envelope import (
    EnvelopeCache,
    Kind,
    Message,
    decode_message,
    encode_message,
)
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.rules import Rules
from p2p_nertz.sim import SimConfig, SimResult, Simulation
from p2p_nertz.sim.logfiles import log_file, log_records

__all__ = ["Game", "append_event", "events_of", "played", "rewrite", "sign_like", "vote"]

Logs = list[list[Record]]

#: The codec's memo for every log these tests build, tamper with and audit in a worker
#: (session 38): a message's bytes are parsed and verified once, not in each test's
#: ``played()``, ``events_of()`` and audit again (two fifths of the audit tests' CPU went to
#: verifying the same signatures). It answers as the work would: tampered bytes are other
#: bytes, parsed and verified afresh (:class:`~p2p_nertz.protocol.envelope.EnvelopeCache`).
CODEC = EnvelopeCache(1 << 17)


@dataclass
class Game:
    """A finished game: the spec, the identities in seat order, and each seat's log records."""

    spec: GameSpec
    identities: list[Identity]
    logs: Logs
    result: SimResult

    def copy(self) -> Logs:
        """A fresh copy of the logs to tamper with."""
        return [list(log) for log in self.logs]

    def files(self, logs: Logs | None = None) -> list[bytes]:
        """The log files' bytes."""
        logs = self.logs if logs is None else logs
        return [log_file(self.spec, seat, records) for seat, records in enumerate(logs)]

    def audit(
        self, logs: Logs | None = None, *, files: list[bytes] | None = None, **kw: Any
    ) -> AuditReport:
        """Audit these logs (records, or raw file bytes)."""
        blobs = self.files(logs) if files is None else files
        sources = [LogSource.from_bytes(f"p{i + 1}.log", b) for i, b in enumerate(blobs)]
        return audit(sources, envelopes=CODEC, **kw)


@functools.cache
def _run(players: int, seed: int, rounds: int, deal: Deal) -> SimResult:
    return Simulation(
        SimConfig(players=players, seed=seed, rules=Rules(target=None, rounds=rounds), deal=deal)
    ).run()


def played(players: int = 3, seed: int = 11, rounds: int = 1, deal: Deal = Deal.COMMIT) -> Game:
    """A finished game of bots (cached per arguments; the logs are copied for each caller);
    ``deal``: a shuffle game's (docs/shuffle.md)."""
    result = _run(players, seed, rounds, deal)
    spec = result.spec
    logs = [log_records(spec, seat, wires, cache=CODEC) for seat, wires in enumerate(result.logs)]
    return Game(spec, list(result.identities), logs, result)


def events_of(logs: Logs, seat: int, spec: GameSpec, kind: Kind | None = None) -> list[Message]:
    """The distinct events of ``seat`` in the logs, in seq order (optionally of one kind)."""
    found: dict[int, Message] = {}
    for log in logs:
        for record in log:
            if record.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT):
                message = decode_message(record.data, cache=CODEC)
                if message.author == spec.peer_ids[seat]:
                    found.setdefault(message.seq, message)
    events = [found[s] for s in sorted(found)]
    return [e for e in events if kind is None or e.kind is kind]


def retimed_below_what_it_saw(game: Game, logs: Logs, seat: int = 1) -> Message:
    """Re-time an event of ``seat`` that acknowledges another seat's event timed well above
    the author's previous event: timed just above that previous one, it claims to precede what
    it saw (a clock below an acknowledged event). The event as it was is returned."""
    feeds = [events_of(logs, s, game.spec) for s in range(game.spec.seats)]
    for prev, event in zip(feeds[seat], feeds[seat][1:], strict=False):
        frontier = event.body[0][0]  # type: ignore[index]  # (the seqs: [seqs, ids])
        seen = max(feeds[q][f - 1].lamport for q, f in enumerate(frontier) if q != seat and f)
        if seen > prev.lamport + 1:
            break
    else:
        raise AssertionError("no event to re-time")
    retimed = {"lamport": prev.lamport + 1}
    rewrite(game, logs, seat, event.seq, lambda m: retimed, follow=True)
    return event


def sign_like(identity: Identity, message: Message, *, prev: Any = ..., **changes: Any) -> bytes:
    """``message`` signed again by ``identity`` with some fields changed (kind, lamport, body)."""
    return encode_message(
        identity,
        game_id=changes.get("game_id", message.game_id),
        seq=changes.get("seq", message.seq),
        prev=message.prev if prev is ... else prev,
        lamport=changes.get("lamport", message.lamport),
        kind=changes.get("kind", message.kind),
        body=changes.get("body", message.body),
        version=message.version,
    )


def rewrite(
    game: Game,
    logs: Logs,
    seat: int,
    seq: int,
    change: Callable[[Message], dict[str, Any]],
    *,
    follow: bool = True,
) -> bytes:
    """Replace ``seat``'s event ``seq`` in every log by a version its author signs.

    ``change`` gives the fields to change (``kind``, ``lamport``, ``body``, ``prev``). With
    ``follow``, every later event of the feed is signed again so that each ``prev`` names the
    new id: a consistent forgery by the seat's own key. Returns the new event's wire.
    """
    identity = game.identities[seat]
    feed = events_of(logs, seat, game.spec)
    new: dict[bytes, bytes] = {}
    prev_id: bytes | None = None
    for message in feed:
        if message.seq < seq:
            continue
        if message.seq == seq:
            wire = sign_like(identity, message, **change(message))
        elif follow:
            wire = sign_like(identity, message, prev=prev_id)
        else:
            break
        new[message.id] = wire
        prev_id = decode_message(wire, cache=CODEC).id
    for log in logs:
        for i, record in enumerate(log):
            if record.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT):
                replaced = new.get(decode_message(record.data, cache=CODEC).id)
                if replaced is not None:
                    log[i] = Record(kind=record.kind, data=replaced)
    return next(iter(new.values()))


def kinds(report: AuditReport) -> set[FindingKind]:
    """The kinds of violation in a report."""
    return {v.kind for v in report.violations}


def append_event(game: Game, logs: Logs, seat: int, body: EventBody, *, to: Any = None) -> bytes:
    """Sign ``body`` as ``seat``'s next event after everything in the logs, and append it to
    the logs ``to`` (indexes; default all): its own log files it as sent, the others as
    received. Its frontier holds every feed as the logs hold it, its clock is above them all.
    Returns the wire."""
    heads = [len(events_of(logs, s, game.spec)) for s in range(game.spec.seats)]
    last = max(m.lamport for s in range(game.spec.seats) for m in events_of(logs, s, game.spec))
    feed = events_of(logs, seat, game.spec)
    feeds = [events_of(logs, s, game.spec) for s in range(game.spec.seats)]
    body = dataclasses.replace(body, frontier=tuple(heads), frontier_ids=held_ids(feeds, heads))
    wire = encode_message(
        game.identities[seat],
        game_id=game.spec.game_id,
        seq=heads[seat] + 1,
        prev=feed[-1].id if feed else None,
        lamport=last + 1,
        kind=kind_of(body),
        body=encode_body(body),
    )
    for index in range(len(logs)) if to is None else to:
        own = index == seat
        logs[index].append(Record.sent_event(wire) if own else Record.received_event(wire))
    return wire


def vote(
    game: Game,
    logs: Logs,
    voter: int,
    target: int,
    *,
    fork_seq: int,
    to: Any = None,
    proof: tuple[bytes, bytes] | None = None,
) -> bytes:
    """``voter``'s signed vote to drop ``target`` on proof of cheating at ``fork_seq``, counting
    the whole of its feed the logs hold, appended to the logs (see :func:`append_event`). It
    carries ``proof``; by default a pair that proves nothing (two of the target's events of
    different seqs): an accusation nobody can check, which every fold refuses (session 39)."""
    feed = events_of(logs, target, game.spec)
    window = feed[max(0, len(feed) - VOTE_WINDOW) :]
    body = Drop(
        (0,) * game.spec.seats,
        target,
        len(feed),
        DropReason.EQUIVOCATION,
        fork_seq,
        tuple(m.id[:ID_PREFIX] for m in window),
        proof=(feed[0].wire, feed[1].wire) if proof is None else proof,
    )
    return append_event(game, logs, voter, body, to=to)
