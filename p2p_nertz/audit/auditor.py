"""The audit: stream any subset of one game's peer logs, verify everything, name every fault.

Theory of operation
-------------------
The audit is a spectator that joins after the game, with no secret and no trust in any file.
It reads every log as a stream of records (:mod:`p2p_nertz.logfile`), several logs at once,
always taking the next record from the log whose last event has the smallest Lamport time, so
the logs are read side by side in (roughly) game order and the state it keeps stays small.

Every event goes through four layers, each adding the checks the one below cannot make:

1. **The files.** Damage (a bad frame, a checksum, a torn tail) is reported with its offset by
   the log reader; a log of another game or of a stranger is set aside.
2. **The envelope.** :func:`~p2p_nertz.protocol.envelope.decode_message` checks the form, the
   protocol version, the game id, the author against the roster, and the Ed25519 signature over
   the bytes stored; the body is parsed by its kind's schema.
3. **The feeds.** Events are merged by id. Each author's feed must run from seq 1 with every
   ``prev`` the id of the event before, its Lamport clock must increase, and every event must be
   timed above every event its frontier acknowledges. Two signed events with one author and seq
   are an equivocation. Per log, the audit also follows what each log holds of each feed: a log
   that lacks events others hold has a *gap*; an event only one log holds is noted.
4. **The game.** Delivered events are folded by the protocol's own fold
   (:class:`~p2p_nertz.protocol.state.GameState`) in the total order ``(lamport, seat, seq)``,
   as soon as no earlier event can still come: every feed's clock only grows, so an event is
   safe to fold once every member's feed has reached its Lamport time. The fold checks the fair
   deal (reveals against commits, ``R``, every deck dealt from its secret), every move and claim
   against the tableaux, the lake (earliest claim wins, true ties kept), the Nerts calls and
   ``T*``, and every signed result against the recomputed scores. The audit turns each event the
   fold refuses into a :class:`~p2p_nertz.audit.findings.Finding` of a precise kind, names
   false Nerts calls (which the rules penalise rather than refuse), and replays every finished
   round with every revealed deck (:func:`~p2p_nertz.protocol.state.replay_round`): each move
   legal with the real cards, each card conserved.

**Which events count** is the players' rule, :class:`~p2p_nertz.protocol.folds.Folds`: the
events delivered wait in its held list until no event still to come can precede them, and
:meth:`~p2p_nertz.protocol.folds.Folds.finals` says of each, as it is folded, whether it counts
(:meth:`~p2p_nertz.protocol.folds.Folds.admits`, as a peer's final fold asks). A member voted
out (or gone) stops counting after its *cut*, which only the fold knows, and the votes may come
after events past the cut (a readmission, after the events of the gap it leaves). A peer learns
them from the events it holds not final yet; the audit, which keeps no events, reads the logs
again with the cuts, gaps and capped votes of the last pass known, until they no longer change;
only the last pass reports. A game without drops is read once.

**Evidence.** An accusation must be proven by the logs (docs/audit.md, "Evidence"): while
reading, the audit collects what proves cheating (two versions of one event, a logged beat an
event contradicts, ``proof`` notes verified by :func:`~p2p_nertz.protocol.evidence.check_proof`)
and what needs proof (votes on proof of cheating, drops on them, forfeits and their causes);
at the end of the pass it matches them.

**Each side.** The union is one game, but each log is its own peer's view. When the logs
differ, each is also folded alone (:func:`_view`, the same passes over that log only), and two
views that scored a round, or ended the game, differently are a split (:meth:`_Pass.compare`;
what weighs how much is decided by :func:`_split_kind` alone). When every log holds every
event, every view is the union's game, and nothing more is read.

Memory: the records themselves are never kept. Per event the audit keeps 24 bytes (a 16-byte id
prefix to recognise an equivocation whenever the second version comes, and the Lamport time to
check frontiers), plus what the fold keeps of the current round; events wait in a small buffer
only until every feed has caught up with them.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import operator
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import msgpack  # type: ignore[import-untyped]

from p2p_nertz.audit.findings import Finding, FindingKind, Severity
from p2p_nertz.errors import IllegalMoveError, InvalidRulesError, NertzError
from p2p_nertz.logfile.format import (
    RECORD_NOTE,
    RECORD_RECEIVED_EVENT,
    RECORD_SENT_EVENT,
    LogHeader,
    LogStream,
    LogSummary,
    Record,
    RecordKind,
    TailState,
)
from p2p_nertz.protocol.bodies import (
    Beat,
    Commit,
    Drop,
    DropReason,
    EventBody,
    Play,
    Ready,
    Result,
    Reveal,
    RevealWhat,
    Want,
    parse_body,
)
from p2p_nertz.protocol.envelope import (
    KIND_DROP,
    KIND_NERTS,
    EnvelopeCache,
    InvalidMessageError,
    Kind,
    Message,
    RejectReason,
    decode_message,
    verify_batch,
)
from p2p_nertz.protocol.evidence import (
    PROOF_NOTE,
    InvalidProofError,
    Proof,
    ProofKind,
    check_proof,
)
from p2p_nertz.protocol.folds import Folds
from p2p_nertz.protocol.identity import fingerprint
from p2p_nertz.protocol.spec import SPEC_NOTE, GameSpec
from p2p_nertz.protocol.state import (
    Event,
    GameEnded,
    GameState,
    MemberDropped,
    Notice,
    Phase,
    RefusalCode,
    Refused,
    RoundEnded,
    RoundScored,
    RoundState,
    nonce_hash,
    replay_round,
    secret_hash,
    voted_chain,
    with_forks,
)
from p2p_nertz.rules import Card, GameResult, MoveKind, Pile, RoundStatus, Tableau

__all__ = [
    "SPEC_NOTE",
    "AuditReport",
    "FoldStep",
    "LogInfo",
    "LogSource",
    "RecordStream",
    "RoundReport",
    "audit",
    "event_text",
]

_PREFIX = 16  # bytes of each event id kept to recognise a second version of it
_SETTLE_BATCH = 64  # events of a feed whose copies are counted together (see _count_copy)
_AHEAD = 128  # records read ahead, whose messages are verified as a batch (_Pass._read_ahead)
_RECENT = 1024  # messages kept by their bytes to recognise the next copies (see _Pass.recent)
_LAST_LAMPORT = operator.attrgetter("last_lamport")
_EVERYTHING = 1 << 63  # a time above every event's


class RecordStream(Protocol):
    """What the audit reads: a :class:`~p2p_nertz.logfile.LogStream` or a ``read_log`` reader."""

    @property
    def header(self) -> LogHeader | None:
        """The log's header, once read."""

    def __iter__(self) -> Iterator[Record]:
        """The records, once."""

    def summary(self) -> LogSummary:
        """How reading went (after the records)."""


@dataclass(frozen=True, slots=True)
class LogSource:
    """One log to audit: a name for reports and a way to open it (once per pass).

    Attributes:
        name: how reports name the log (its path, usually).
        open: returns a fresh stream of its records; may raise ``OSError``.
    """

    name: str
    open: Callable[[], RecordStream]

    @classmethod
    def from_bytes(cls, name: str, data: bytes, chunk: int = 65536) -> LogSource:
        """A log held in memory (tests, tools), read in chunks like a file."""

        def chunks() -> Iterator[memoryview]:
            view = memoryview(data)
            for start in range(0, len(view), chunk):
                yield view[start : start + chunk]

        return cls(name, lambda: LogStream(chunks()))

    @classmethod
    def from_path(cls, path: Any) -> LogSource:
        """A log file on disk, streamed by :func:`~p2p_nertz.logfile.read_log`."""
        from p2p_nertz.logfile.store import read_log  # the only file access, at open time

        return cls(str(path), lambda: read_log(path))


@dataclass(frozen=True, slots=True)
class LogInfo:
    """What one log holds."""

    name: str
    peer: str | None
    seat: int | None
    records: int
    events: int
    readable: bool


@dataclass(frozen=True, slots=True)
class RoundReport:
    """One round as the audit recomputed it.

    Attributes:
        number: the round.
        status: ``nerts`` or ``blocked`` (or ``playing`` if it never ended).
        cut: ``T*``, the Lamport time of the first valid Nerts call, if any.
        callers: the seats whose call counts (a tie keeps several).
        scores: the recomputed score of each seat (``None``: did not play the round).
        totals: the game totals after the round (empty if the round was not scored).
        digest: the lake digest, hex (empty if not scored).
        results: the seats whose signed result matches.
        events: the events folded in this round.
    """

    number: int
    status: str
    cut: int | None
    callers: tuple[int, ...]
    scores: tuple[int | None, ...]
    totals: tuple[int, ...]
    digest: str
    results: tuple[int, ...]
    events: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {
            "round": self.number,
            "status": self.status,
            "t_star": self.cut,
            "callers": list(self.callers),
            "scores": list(self.scores),
            "totals": list(self.totals),
            "digest": self.digest,
            "results_matching": list(self.results),
            "events": self.events,
        }


@dataclass(frozen=True, slots=True)
class AuditReport:
    """Everything an audit found.

    Attributes:
        spec: the game (``None`` if no log could be tied to one).
        logs: what each log holds, in the order given.
        violations: every finding, errors and notices, in the order found.
        rounds: the rounds recomputed, in order.
        events: distinct events in the logs.
        finished: whether the game ended (every round scored, a winner).
        totals: the game totals recomputed.
        winners: the winning seats (teams with pairs), empty if not finished.
        dropped: members voted out or gone, with the last seq that counts.
        passes: how many times the logs were read.
        stopped: ``--strict``: the audit stopped at its first error.
        digest: the digest of the fold's final state (:meth:`GameState.digest
            <p2p_nertz.protocol.state.GameState.digest>`): equal to that of every peer that
            finished the game the logs hold (the simulator's agreement check). Not in
            :meth:`to_dict`.
    """

    spec: GameSpec | None
    logs: tuple[LogInfo, ...]
    violations: tuple[Finding, ...]
    rounds: tuple[RoundReport, ...] = ()
    events: int = 0
    finished: bool = False
    totals: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()
    dropped: tuple[tuple[int, int], ...] = ()
    passes: int = 0
    stopped: bool = False
    digest: str = ""

    @property
    def errors(self) -> tuple[Finding, ...]:
        """The findings that make the game invalid."""
        return tuple(v for v in self.violations if v.severity is Severity.ERROR)

    @property
    def unreadable(self) -> bool:
        """Whether some input could not be read at all (or no game spec was found)."""
        return self.spec is None or any(v.kind is FindingKind.UNREADABLE for v in self.violations)

    @property
    def valid(self) -> bool:
        """Whether the logs prove a fair game: readable and without a single error."""
        return not self.unreadable and not self.errors

    @property
    def verdict(self) -> str:
        """One word for people: ``valid``, ``invalid`` or ``unreadable``."""
        if self.unreadable:
            return "unreadable"
        return "valid" if self.valid else "invalid"

    @property
    def exit_status(self) -> int:
        """0 valid, 1 violations found, 2 unreadable input (the ``nertz audit`` contract)."""
        if self.unreadable:
            return 2
        return 0 if self.valid else 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form of the whole report."""
        spec = self.spec
        return {
            "verdict": self.verdict,
            "valid": self.valid,
            "game_id": spec.game_id.hex() if spec else None,
            "players": [
                {"seat": s, "name": m.name, "fingerprint": m.fingerprint}
                for s, m in enumerate(spec.members)
            ]
            if spec
            else [],
            "rules": spec.rules.to_dict() if spec else None,
            "logs": [
                {
                    "name": i.name,
                    "peer": i.peer,
                    "seat": i.seat,
                    "records": i.records,
                    "events": i.events,
                    "readable": i.readable,
                }
                for i in self.logs
            ],
            "events": self.events,
            "rounds": [r.to_dict() for r in self.rounds],
            "finished": self.finished,
            "totals": list(self.totals),
            "winners": list(self.winners),
            "dropped": [{"seat": s, "cut": c} for s, c in self.dropped],
            "errors": len(self.errors),
            "notices": len(self.violations) - len(self.errors),
            "violations": [v.to_dict() for v in self.violations],
            "stopped_at_first": self.stopped,
        }


@dataclass(frozen=True, slots=True)
class FoldStep:
    """One event folded, for replays: the event, what the fold said, and the state after it.

    ``state`` is the live fold: copy it (``state.copy()``) to keep it.
    """

    event: Event
    notices: tuple[Notice, ...]
    state: GameState
    violations: tuple[Finding, ...]


def audit(
    sources: Sequence[LogSource],
    *,
    spec: GameSpec | None = None,
    candidates: Sequence[GameSpec] = (),
    strict: bool = False,
    deep: bool = False,
    on_fold: Callable[[FoldStep], None] | None = None,
) -> AuditReport:
    """Audit the logs of one game (any subset of its peers' logs).

    Args:
        sources: the logs.
        spec: the game, if known from elsewhere (``--spec``); otherwise it is read from a
            ``spec`` note in the logs. Either way it must hash to the logs' game id (a log of
            another game is reported, not read).
        candidates: specs to try when the logs carry none (a ``game.spec`` file found next
            to them): the first whose id is a log's game id is used.
        strict: stop at the first error instead of collecting every finding.
        deep: also replay every finished round with every revealed deck through the rules
            engine alone, checking card conservation after every move. The fold already
            replays each seat against its deck (what cheating would break); this re-checks
            the engine itself, at about twice the cost.
        on_fold: called with each event of the final pass as it is folded (replays).

    Returns:
        The report; :attr:`AuditReport.exit_status` is the command's exit status. Nothing in
        the input makes this raise.
    """
    opened: dict[int, _Opened] = {}
    # The codec's memo for every pass over these logs: a message is parsed and verified once.
    envelopes = EnvelopeCache()
    try:
        found, setup = _find_spec(sources, spec, candidates, opened)
        if found is None:
            return AuditReport(None, tuple(_unread(sources)), tuple(setup))
        run, passes = _settled(
            found, sources, strict=strict, deep=deep, opened=opened, envelopes=envelopes
        )
    finally:
        for stream, _ in opened.values():
            _close(stream)
    if on_fold is not None:
        cuts, forks, caps = dict(run.cuts), dict(run.forks), dict(run.caps)
        run = _Pass(
            found,
            sources,
            cuts,
            forks,
            strict=strict,
            deep=deep,
            on_fold=on_fold,
            caps=caps,
            envelopes=envelopes,
            gaps=dict(run.gaps),
        )
        run.run()
    if not run.stopped and run.may_split():
        # Each peer's own view, folded from its log alone: two that finished differently are
        # a split (DESIGN.md §6), which the union alone cannot show.
        views = [
            _view(found, source, envelopes) for source, log in zip(sources, run.logs, strict=True)
        ]
        run.compare(views)
    return run.report(setup, passes)


def _settled(
    spec: GameSpec,
    sources: Sequence[LogSource],
    *,
    strict: bool,
    deep: bool,
    opened: dict[int, _Opened] | None = None,
    view: bool = False,
    envelopes: EnvelopeCache | None = None,
) -> tuple[_Pass, int]:
    """Read the logs until the cuts the fold decides no longer change (module docstring);
    the last pass, and how many were made. ``view``: one log alone, as its peer saw the game
    (:func:`_view`; the kinds of events are kept)."""
    cuts: dict[int, int] = {}
    # A member dropped: the chain of it that counts, seq -> id prefix (GameState.kept_ids).
    forks: dict[int, dict[int, bytes]] = {}
    caps: dict[
        int, tuple[int, int]
    ] = {}  # votes past a standing vote against their author never count
    # A member readmitted: its events between its cut and its rejoin request never count.
    gaps: dict[int, tuple[tuple[int, int], ...]] = {}
    watch: dict[int, int] = {}  # the members seen to fork, from their first forked seq
    passes = 0
    envelopes = envelopes if envelopes is not None else EnvelopeCache()
    while True:
        passes += 1
        last = passes >= spec.seats + 2
        run = _Pass(
            spec,
            sources,
            cuts,
            forks,
            strict=strict,
            deep=deep,
            on_fold=None,
            caps=caps,
            envelopes=envelopes,
            gaps=gaps,
            watch=watch,
        )
        if view:
            run.kinds = [bytearray() for _ in range(spec.seats)]
        if opened is not None:
            run.opened, opened = opened, None  # the first pass reads on from the spec's look
        run.run()
        forked = {seat: feed.forked for seat, feed in enumerate(run.feeds) if feed.forked}
        own: int | None = None
        if view or len(run.logs) == 1:
            # One log alone is its peer's view: the peer also knew the forks it proved itself
            # and logged as proof notes (a lie about time, whose two versions no log holds),
            # and never capped itself (soak seed 685: the audit counted a forked member's
            # abandon that the log's peer did not, and named a split that was not). (Audited
            # alone too, not only to compare it with others: the forker's cards that its peer
            # saw past the fork and that a claim went on, a race lost to the cut, else read
            # as a claim on a foundation that never was: session 9's scan.)
            own = run.logs[0].owner
            for proof, _, _ in run.proofs:
                seat = run.roster[proof.author]
                forked[seat] = min(forked.get(seat, proof.seq), proof.seq)
        standing = with_forks(run.state.standing_caps(), forked, own=own)
        kept = _kept_chains(run, forked, own)
        settled = (
            run.state.dropped == cuts
            and kept == forks
            and standing == caps
            and run.state.gaps == gaps
            and forked.keys() <= watch.keys()
        )
        if settled or last or run.stopped:
            return run, passes
        cuts = dict(run.state.dropped)
        forks = kept
        caps = standing
        gaps = dict(run.state.gaps)
        watch = {seat: min(first, watch.get(seat, first)) for seat, first in forked.items()}


def _kept_chains(
    run: _Pass, forked: dict[int, int], own: int | None = None
) -> dict[int, dict[int, bytes]]:
    """The chain of each dropped member the next pass takes (the kept ids, seq -> id prefix)
    and, of a member proven to fork and not dropped yet, the chain its counted votes quote
    (:func:`voted_chain`, §9.2): the other version was never final anywhere (``--variants``
    soak seed 893: read first, it kept the cheater's vote that dropped its holder from
    counting, and the game read as unfinished); of one proven to fork whose fork no vote
    settled, the chain the logs of the members still in hold (:meth:`_Pass.held_chain`); of
    one log alone (``own``: its peer's seat) whose peer gave up one version for the other,
    the chain it followed last (:meth:`_Pass.followed_chain`)."""
    state = run.state
    kept = dict(state.kept_ids)
    for seat, first in forked.items():
        voted = voted_chain(state, seat, first)
        if voted is not None:
            kept[seat] = voted[1]
            continue
        chain = run.followed_chain(seat) if own is not None else None
        if chain is None:
            # (Of a member dropped too: read in the order, the fake timed first can make its
            # holder's vote cut the forker below its fork and keep the forker's own votes on
            # the other chain, against that holder, from counting: a fold that agrees with
            # itself and with no peer. The chain the members still in hold comes first; the
            # drop's kept chain, from the votes of the members still in, agrees with it.)
            chain = run.held_chain(seat)
            if chain is not None and seat in state.dropped:
                chain = {**kept.get(seat, {}), **chain}
        if chain is not None:
            kept[seat] = chain
    return kept


def _unread(sources: Sequence[LogSource]) -> Iterator[LogInfo]:
    for source in sources:
        yield LogInfo(source.name, None, None, 0, 0, False)


def _close(stream: RecordStream) -> None:
    close = getattr(stream, "close", None)
    if close is not None:
        close()


def _find_spec(
    sources: Sequence[LogSource],
    given: GameSpec | None,
    candidates: Sequence[GameSpec],
    opened: dict[int, _Opened],
) -> tuple[GameSpec | None, list[Finding]]:
    """The game spec: the one given, a ``spec`` note at the start of a log, or a candidate.

    Each log whose first record it read is left open in ``opened`` (by its index), with that
    record, for the first pass to read on: opening a log again would decode its first chunk
    again, a fifth of a small log.
    """
    problems: list[Finding] = []
    headless: list[Finding] = []  # why a log has no header: the pass says it, if one runs
    game_ids: list[bytes] = []
    notes: list[tuple[str, bytes]] = []
    for index, source in enumerate(sources):
        try:
            stream = source.open()
        except OSError as exc:
            problems.append(_unreadable(source.name, exc))
            continue
        keep = False
        try:
            first = next(iter(stream), None)
            header = stream.header
            if header is None:
                fatal = stream.summary().fatal
                if fatal is not None:
                    headless.append(
                        Finding(
                            FindingKind.UNREADABLE,
                            f"not a readable log: {fatal.kind.value}: {fatal.detail}",
                            log=source.name,
                            offset=fatal.offset,
                        )
                    )
                continue  # the pass reports why
            game_ids.append(header.game_id)
            if first is not None and first.kind is RecordKind.NOTE and first.name == SPEC_NOTE:
                notes.append((source.name, first.data))
            if first is not None:
                opened[index] = (stream, first)
                keep = True
        except OSError as exc:
            problems.append(_unreadable(source.name, exc))
        finally:
            if not keep:
                _close(stream)
    if given is not None:
        return given, problems
    for name, data in notes:
        try:
            spec = GameSpec.from_wire(data)
        except InvalidRulesError as exc:
            problems.append(
                Finding(
                    FindingKind.UNREADABLE, f"the spec note is not a game spec: {exc}", log=name
                )
            )
            continue
        if spec.game_id in game_ids:
            return spec, problems
    for spec in candidates:
        if spec.game_id in game_ids:
            return spec, problems
    if game_ids:
        problems.append(
            Finding(
                FindingKind.UNREADABLE,
                "no game spec: the logs carry none (no 'spec' note); pass the spec file "
                "(nertz demo writes game.spec next to the logs)",
            )
        )
    return None, headless + problems  # (no pass will run: say here why logs are unreadable)


_Opened = tuple[RecordStream, Record]
"""A log opened by :func:`_find_spec` and the first record read from it."""


def _unreadable(name: str, exc: OSError) -> Finding:
    return Finding(FindingKind.UNREADABLE, f"cannot read the file: {exc.strerror or exc}", log=name)


# -- one pass over the logs ---------------------------------------------------------------------
class _Stop(Exception):
    """Internal: strict mode met its first error."""


class _Feed:
    """What the audit keeps of one author's feed."""

    __slots__ = (
        "beats",
        "copies",
        "first_copy",
        "forked",
        "head",
        "lamports",
        "last_id",
        "last_lamport",
        "pending",
        "prefixes",
        "settled",
        "waiting",
    )

    def __init__(self) -> None:
        self.head = 0
        self.last_id: bytes | None = None
        self.last_lamport = 0
        self.lamports = array("Q")
        self.prefixes = bytearray()
        self.pending: dict[int, tuple[Message, EventBody, int]] = {}
        self.forked = 0  # the first seq where a second version was seen (0: none)
        self.copies: dict[int, list[int]] = {}  # seq -> [logs holding it, first log]
        self.settled = 0  # every seq up to here has its copies counted
        self.first_copy = 1 << 62  # the lowest seq in copies
        self.beats: dict[int, int] = {}  # announced head seq -> highest clock announced with it
        self.waiting: dict[int, list[tuple[int, int, int, Kind, bytes]]] = {}

    def prefix(self, seq: int) -> bytes:
        return bytes(self.prefixes[(seq - 1) * _PREFIX : seq * _PREFIX])


class _Log:
    """One log being read."""

    def __init__(self, index: int, source: LogSource, seats: int) -> None:
        self.index = index
        self.source = source
        self.name = source.name
        self.stream: RecordStream | None = None
        self.records: Iterator[Record] | None = None
        self.header: LogHeader | None = None
        self.owner: int | None = None
        self.readable = False
        self.count = 0  # records read
        self.events = 0
        self.next = [1] * seats  # per seat: the highest seq read + 1
        self.holes: list[list[list[int]]] = [[] for _ in range(seats)]
        self.ended = False
        self.reached = 0  # the Lamport time of the last event read

    def horizon(self, seat: int) -> int:
        """Every seq of ``seat`` below this has been read, or will never be, from this log."""
        holes = self.holes[seat]
        if not holes:  # the usual case: a log holds each feed in order, without holes
            return self.next[seat]
        return min(h[0] for h in holes)


_REASONS = {
    RejectReason.OVERSIZE: FindingKind.MALFORMED,
    RejectReason.MALFORMED: FindingKind.MALFORMED,
    RejectReason.NON_CANONICAL: FindingKind.MALFORMED,
    RejectReason.UNKNOWN_KIND: FindingKind.MALFORMED,
    RejectReason.BAD_VERSION: FindingKind.BAD_VERSION,
    RejectReason.WRONG_GAME: FindingKind.WRONG_GAME,
    RejectReason.UNKNOWN_AUTHOR: FindingKind.UNKNOWN_AUTHOR,
    RejectReason.BAD_SIGNATURE: FindingKind.BAD_SIGNATURE,
    RejectReason.BAD_BODY: FindingKind.BAD_BODY,
}

# What a refusal of the fold is, as a finding: the audit's one reading of a refusal, by its
# code (never its words, which are for people and may change). A move or a claim refused for a
# code not in _PLAY_FINDINGS broke a rule of play; any other event refused for a code not in
# _FINDINGS is out of place (out of its phase, a repeat, a wrong round).
_FINDINGS: dict[RefusalCode, FindingKind] = {
    RefusalCode.NONCE_MISMATCH: FindingKind.REVEAL_MISMATCH,
    RefusalCode.SECRET_MISMATCH: FindingKind.REVEAL_MISMATCH,
    RefusalCode.RESULT_MISMATCH: FindingKind.RESULT_MISMATCH,
}
_PLAY_FINDINGS: dict[RefusalCode, FindingKind] = {
    # Out of place, not against the rules of play: a late or early move.
    RefusalCode.WRONG_ROUND: FindingKind.REFUSED,
    RefusalCode.BEFORE_DEAL: FindingKind.REFUSED,
    RefusalCode.CARD_NOT_THERE: FindingKind.UNAVAILABLE_CARD,
    # A card shown that the seat's public tableau says cannot be there.
    RefusalCode.REVEAL_COUNT: FindingKind.DECK_MISMATCH,
    RefusalCode.REVEAL_REPEATED: FindingKind.DECK_MISMATCH,
    RefusalCode.REVEAL_WRONG: FindingKind.DECK_MISMATCH,
}
# The fold's replay of a seat's round against its deck (seq 0, when the last secret is in).
_REPLAY_CODES = frozenset(
    {
        RefusalCode.DECK_DEAL,
        RefusalCode.DECK_REVEAL,
        RefusalCode.DECK_CLAIM,
        RefusalCode.DECK_ILLEGAL,
    }
)


class _Pass:
    """One read of every log, folding the game (see the module docstring)."""

    def __init__(
        self,
        spec: GameSpec,
        sources: Sequence[LogSource],
        cuts: dict[int, int],
        forks: dict[int, dict[int, bytes]],
        *,
        strict: bool,
        deep: bool = False,
        on_fold: Callable[[FoldStep], None] | None,
        caps: dict[int, tuple[int, int]] | None = None,
        envelopes: EnvelopeCache | None = None,
        gaps: dict[int, tuple[tuple[int, int], ...]] | None = None,
        watch: dict[int, int] | None = None,
    ) -> None:
        self.spec = spec
        self.envelopes = envelopes if envelopes is not None else EnvelopeCache()
        self.deep = deep
        self.game_id = spec.game_id  # computed once: it hashes the whole spec
        self.seats = spec.seats
        self.roster = {pid: seat for seat, pid in enumerate(spec.peer_ids)}
        self.cuts = cuts
        self.forks = forks
        self.strict = strict
        self.on_fold = on_fold
        # The players' folds (protocol.folds): the events delivered and not folded yet are
        # held there, and which of them count is its rule (Folds.admits), the peer's.
        self.folds = Folds(GameState(spec))
        self.state = self.folds.final
        self.caps = dict(caps or {})
        self.state.vote_caps = dict(self.caps)
        #: seat -> ((cut, rejoin request), ...) of a member readmitted, from the last pass: its
        #: events strictly between never count (GameState.counts), even before the readmission
        #: in the order (as with a cut)
        self.gaps = dict(gaps or {})
        self.feeds = [_Feed() for _ in range(self.seats)]
        for seat, first in (watch or {}).items():
            # Known to fork from the last pass (or its proof notes, for one log): events that
            # name more of its feed wait for no more than the fork, as a peer's do (§9.4,
            # "Living with a fork"); else a log whose peer held the other version named the
            # members who held this one for events no log holds.
            self.feeds[seat].forked = first
        self.logs = [_Log(i, s, self.seats) for i, s in enumerate(sources)]
        self.violations: list[Finding] = []
        self.stopped = False
        self.folded_key = (-1, -1, -1)
        self.reported: set[tuple[Any, ...]] = set()
        self.singles: dict[tuple[int, int], list[list[int]]] = {}
        # With one log there is no other copy to count (an event "only one log holds" is
        # a finding about several logs).
        self.count_copies = len(sources) > 1
        # The messages of the last records decoded (with whether each is an event, and its
        # author's seat), by their bytes, when several logs hold copies of each:
        # decode_message is pure and the game id and roster it checks against are fixed for
        # the pass, so a copy decodes to the very message the first one did. A hit skips the
        # call and its checks; a miss (or a copy too far behind) decodes.
        self.recent: dict[bytes, tuple[Message, bool, int]] | None = (
            {} if self.count_copies else None
        )
        # round number -> facts for the report
        self.ended: dict[int, RoundEnded] = {}
        self.scored: dict[int, RoundScored] = {}
        self.matched: dict[int, list[int]] = {}
        self.round_events: dict[int, int] = {}
        self.replayed: set[int] = set()
        self.secret_events: dict[tuple[int, int], Event] = {}
        self.step_violations: list[Finding] = []
        self.opened: dict[int, _Opened] = {}  # logs already open, by index (see _find_spec)
        # Evidence (docs/audit.md, "Evidence"): what the logs prove, and what needs proof.
        self.proof_notes: dict[bytes, None] = {}  # the data of every proof note read
        self.proofs: list[tuple[Proof, str, int]] = []  # verified notes: proof, log, record
        # (seat, seq) -> the id prefixes of the signed versions of a forked event read
        self.versions: dict[tuple[int, int], set[bytes]] = {}
        self.unseen_forks: set[tuple[int, int]] = set()  # losing versions of a kept fork
        # seat -> the first seq at which the last pass saw it fork: which member's log holds
        # which version of each of its events from there on, (seat, seq) -> prefix -> owners
        # (see held_chain)
        self.watch = dict(watch or {})
        self.holders: dict[tuple[int, int], dict[bytes, set[int]]] = {}
        # (seat, seq) -> the version of that event one log's peer delivered last (followed_chain)
        self.followed: dict[tuple[int, int], bytes] = {}
        self.lies: list[tuple[int, int, int]] = []  # (seat, head, seq) from logged beats
        self.accusations: list[Event] = []  # delivered votes on proof of cheating
        # (round, seat) -> why the seat may forfeit that round; and every forfeit scored
        self.causes: dict[tuple[int, int], list[str]] = {}
        self.forfeits: list[tuple[int, int]] = []
        self.proven: dict[int, list[tuple[int, int]]] | None = None  # see _proven
        # Per feed, the kind of each event delivered: only for a log's own view (_view).
        self.kinds: list[bytearray] | None = None
        # The events whose fold ended a round or the game or removed a member, in fold order:
        # where two logs that finished differently part (see _parting).
        self.decisive: list[Event] = []

    # -- reporting -------------------------------------------------------------------------
    def add(self, violation: Finding) -> None:
        self.violations.append(violation)
        self.step_violations.append(violation)
        if self.strict and violation.severity is Severity.ERROR:
            raise _Stop

    def who(self, seat: int) -> dict[str, Any]:
        member = self.spec.members[seat]
        return {"seat": seat, "author": member.name, "fingerprint": member.fingerprint}

    def about(self, event: Event) -> dict[str, Any]:
        """The fields of a finding that name an event."""
        body = event.body
        where = self.who(event.seat)
        where.update(
            seq=event.seq,
            lamport=event.lamport,
            event=event.kind.name.lower(),
            event_id=event.id.hex(),
        )
        number = getattr(body, "round", None)
        if isinstance(number, int):
            where["round"] = number
        if isinstance(body, Play) and body.move.kind not in (MoveKind.PASS, MoveKind.CALL):
            where["move"] = str(body.move)
        return where

    def about_message(self, message: Message) -> dict[str, Any]:
        seat = self.roster.get(message.author)
        where: dict[str, Any] = (
            self.who(seat) if seat is not None else {"fingerprint": fingerprint(message.author)}
        )
        where.update(
            seq=message.seq,
            lamport=message.lamport,
            event=message.kind.name.lower(),
            event_id=message.id.hex(),
        )
        return where

    # -- the pass --------------------------------------------------------------------------
    def run(self) -> None:
        try:
            self._read_all()
            self._finish()
        except _Stop:
            self.stopped = True
        finally:
            for log in self.logs:
                if log.stream is not None:
                    _close(log.stream)

    def _open(self, log: _Log) -> bool:
        opened = self.opened.pop(log.index, None)
        if opened is not None:
            # Read on from the first record, which was read on opening: the same records in
            # the same order as a fresh open gives.
            log.stream, first = opened
            log.records = self._read_ahead(itertools.chain((first,), log.stream))
            return True
        try:
            log.stream = log.source.open()
            log.records = self._read_ahead(iter(log.stream))
            return True
        except OSError as exc:
            self.add(_unreadable(log.name, exc))
            log.ended = True
            return False

    def _read_ahead(self, records: Iterator[Record]) -> Iterator[Record]:
        """The records of ``records``, in order, read :data:`_AHEAD` at a time, the messages of
        each batch verified together first (:func:`verify_batch`: issue 18, the signatures
        checked back to back cost less). What the codec's cache then holds changes no result;
        an error of the reader is raised after the records read before it, where it was."""
        envelopes, game_id, roster = self.envelopes, self.game_id, self.roster
        while True:
            failure: Exception | None = None
            batch = []
            try:
                for record in records:
                    batch.append(record)
                    if len(batch) == _AHEAD:
                        break
            except Exception as exc:  # re-raised below, after the records read before it
                failure = exc
            verify_batch(
                [r.data for r in batch if r.kind is not RECORD_NOTE],
                game_id=game_id,
                roster=roster,
                cache=envelopes,
            )
            yield from batch
            if failure is not None:
                raise failure
            if len(batch) < _AHEAD:
                return

    def _read_all(self) -> None:
        queue: list[tuple[int, int]] = []
        for log in self.logs:
            if self._open(log):
                queue.append((0, log.index))
        heapq.heapify(queue)
        take = self._record
        while queue:
            _, index = heapq.heappop(queue)
            log = self.logs[index]
            records = log.records
            assert records is not None
            while True:
                try:
                    record = next(records, None)
                except OSError as exc:
                    self.add(_unreadable(log.name, exc))
                    record = None
                if record is None:
                    self._end_log(log)
                    break
                if log.header is None and not self._start_log(log):
                    break
                log.count += 1
                take(log, record)
                # Read on from this log while it is still the one to read next: pushing it
                # back and popping the least would give it again (an index breaks a tie).
                reached = log.reached
                if queue:
                    after = queue[0]
                    if reached > after[0] or (reached == after[0] and index > after[1]):
                        heapq.heappush(queue, (reached, index))
                        break

    def _start_log(self, log: _Log) -> bool:
        """Check the header of a log when its first record is read; False to set it aside."""
        assert log.stream is not None
        header = log.stream.header
        assert header is not None  # a record was decoded, so the header was
        log.header = header
        if header.game_id != self.game_id:
            self.add(
                Finding(
                    FindingKind.WRONG_LOG,
                    "the log belongs to another game",
                    log=log.name,
                    expected=self.game_id.hex()[:16],
                    found=header.game_id.hex()[:16],
                )
            )
            self._set_aside(log)
            return False
        seat = self.roster.get(header.peer_id)  # type: ignore[call-overload]
        if seat is None:
            self.add(
                Finding(
                    FindingKind.WRONG_LOG,
                    "the log was written by a peer outside the roster",
                    log=log.name,
                    fingerprint=fingerprint(header.peer_id),
                )
            )
            self._set_aside(log)
            return False
        log.owner = seat
        log.readable = True
        return True

    def _set_aside(self, log: _Log) -> None:
        log.ended = True
        if log.stream is not None:
            _close(log.stream)
        log.records = iter(())

    def _end_log(self, log: _Log) -> None:
        if log.stream is not None and log.header is None and not log.ended:
            log.header = log.stream.header
            if log.header is not None and not self._start_log(log):
                return
        ended_before = log.ended
        log.ended = True
        if log.stream is None or ended_before:
            return
        try:
            summary = log.stream.summary()
        except (OSError, NertzError) as exc:
            self.add(Finding(FindingKind.UNREADABLE, f"cannot read the file: {exc}", log=log.name))
            return
        fatal = summary.fatal
        if fatal is not None:
            log.readable = False
            self.add(
                Finding(
                    FindingKind.UNREADABLE,
                    f"not a readable log: {fatal.kind.value}: {fatal.detail}",
                    log=log.name,
                    offset=fatal.offset,
                )
            )
            return
        for problem in summary.problems:
            if not problem.fatal:
                self.add(
                    Finding(
                        FindingKind.LOG_DAMAGE,
                        f"{problem.kind.value}: {problem.detail}",
                        log=log.name,
                        offset=problem.offset,
                    )
                )
        if summary.tail is TailState.TORN:
            self.add(
                Finding(
                    FindingKind.TRUNCATED,
                    f"the log ends inside a frame: {summary.size - summary.good_end} bytes "
                    "after the last whole record (the file was cut, or its writer died and "
                    "never restarted)",
                    log=log.name,
                    offset=summary.good_end,
                )
            )
        for seat in range(self.seats):
            self._settle(seat)

    # -- records ---------------------------------------------------------------------------
    def _record(self, log: _Log, record: Record) -> None:
        kind = record.kind
        if kind is RECORD_NOTE:
            if record.name == PROOF_NOTE:
                self._proof_note(log, record)
            return
        is_event = kind is RECORD_SENT_EVENT or kind is RECORD_RECEIVED_EVENT
        data = record.data
        recent = self.recent
        known = recent.get(data) if recent is not None else None
        if known is None:
            try:
                message = decode_message(
                    data, game_id=self.game_id, roster=self.roster, cache=self.envelopes
                )
            except InvalidMessageError as exc:
                where = _peek(data)
                self.add(
                    Finding(
                        _REASONS.get(exc.reason, FindingKind.MALFORMED),
                        f"{'an event' if is_event else 'a beat'} refused: {exc}",
                        log=log.name,
                        record=log.count,
                        **where,
                    )
                )
                return
            # (decoded, so its author is in the roster)
            known = (message, message.is_event, self.roster[message.author])
            if recent is not None:
                if len(recent) >= _RECENT:
                    del recent[next(iter(recent))]
                recent[data] = known
        message, message_is_event, seat = known
        if message_is_event != is_event:
            self.add(
                Finding(
                    FindingKind.MISFILED,
                    f"a {message.kind.name.lower()} filed as a {kind.name.lower()} record",
                    log=log.name,
                    record=log.count,
                    **self.about_message(message),
                )
            )
            return
        if kind is RECORD_SENT_EVENT and seat != log.owner:
            self.add(
                Finding(
                    FindingKind.MISFILED,
                    "an event by another member filed as one this log's peer sent",
                    log=log.name,
                    record=log.count,
                    **self.about_message(message),
                )
            )
        if not is_event:
            self._beat(message, seat)
            return
        log.events += 1
        seq = message.seq
        log.reached = max(log.reached, message.lamport)
        self._count_copy(log, seat, seq)
        watch = self.watch
        if watch and seq >= watch.get(seat, seq + 1):
            self._watched(message, seat, log)
        feed = self.feeds[seat]
        if (
            seq <= feed.head
            and feed.prefixes[(seq - 1) * _PREFIX : seq * _PREFIX] == message.id[:_PREFIX]
        ):
            return  # another copy of an event delivered already (its id has the prefix kept)
        try:
            body = parse_body(message.kind, message.body, self.seats)
        except ValueError as exc:
            self._once(
                ("body", message.id),
                Finding(
                    FindingKind.BAD_BODY,
                    f"the signed body does not follow its schema: {exc}",
                    log=log.name,
                    record=log.count,
                    **self.about_message(message),
                ),
            )
            return
        assert not isinstance(body, (Beat, Want))  # (a tuple: no union object made per event)
        self._take(message, body, seat, log)

    def _proof_note(self, log: _Log, record: Record) -> None:
        """A ``proof`` note: verify both signatures and the contradiction (or say why not)."""
        data = bytes(record.data)
        if data in self.proof_notes:
            return  # the same proof, logged by another peer (or twice)
        self.proof_notes[data] = None
        try:
            proof = check_proof(data, game_id=self.game_id, roster=self.roster, seats=self.seats)
        except InvalidProofError as exc:
            self.add(
                Finding(
                    FindingKind.BAD_PROOF,
                    f"a proof note that proves nothing: {exc}",
                    log=log.name,
                    record=log.count,
                    expected="two signed messages of one author that contradict each other",
                    found=exc.problem.value,
                )
            )
            return
        self.proofs.append((proof, log.name, log.count))

    def _once(self, key: tuple[Any, ...], violation: Finding) -> None:
        if key not in self.reported:
            self.reported.add(key)
            self.add(violation)

    def _count_copy(self, log: _Log, seat: int, seq: int) -> None:
        """Follow what ``log`` holds of ``seat``'s feed: holes, reordering, copies."""
        nxt = log.next[seat]
        feed = self.feeds[seat]
        if seq >= nxt:
            if seq > nxt:
                log.holes[seat].append([nxt, seq - 1])
            log.next[seat] = seq + 1
        else:
            for hole in log.holes[seat]:
                if hole[0] <= seq <= hole[1]:
                    self._once(
                        ("reordered", log.index, seat, seq),
                        Finding(
                            FindingKind.REORDERED,
                            f"the log holds this event after the author's event {nxt - 1}: "
                            "a peer logs each feed in order",
                            log=log.name,
                            record=log.count,
                            seq=seq,
                            **self.who(seat),
                        ),
                    )
                    holes = log.holes[seat]
                    holes.remove(hole)
                    if hole[0] < seq:
                        holes.append([hole[0], seq - 1])
                    if seq < hole[1]:
                        holes.append([seq + 1, hole[1]])
                    break
            else:
                return  # a second copy in the same log (received twice): counted already
        if not self.count_copies:
            return
        if seq > feed.settled:
            entry = feed.copies.get(seq)
            if entry is None:
                feed.copies[seq] = [1, log.index]
                feed.first_copy = min(feed.first_copy, seq)
            else:
                entry[0] += 1
        # Settled in batches: a count is final once no log can add to it, whenever it is
        # taken (every log ending settles the rest), and a batch keeps the copies waiting few.
        if len(feed.copies) >= _SETTLE_BATCH:
            self._settle(seat)

    def _settle(self, seat: int) -> None:
        """Count the copies of every event that no log can still add to."""
        feed = self.feeds[seat]
        if not feed.copies:
            return
        upto = 1 << 62
        first_copy = feed.first_copy
        for log in self.logs:
            if not log.ended:
                horizon = log.horizon(seat)
                if horizon <= first_copy:
                    return  # a log may still add a copy of the lowest seq waiting
                upto = min(upto, horizon)
        upto -= 1
        for seq in sorted(s for s in feed.copies if s <= upto):
            count, first = feed.copies.pop(seq)
            # (the readable logs are counted only for an event that one log holds)
            if count == 1 and sum(1 for log in self.logs if log.readable) > 1:
                ranges = self.singles.setdefault((seat, first), [])
                if ranges and ranges[-1][1] == seq - 1:
                    ranges[-1][1] = seq
                else:
                    ranges.append([seq, seq])
        feed.settled = max(feed.settled, upto)
        feed.first_copy = min(feed.copies, default=1 << 62)

    def _beat(self, message: Message, seat: int) -> None:
        """A logged beat: its clock must not lie about the author's later events."""
        try:
            beat = parse_body(message.kind, message.body, self.seats)
        except ValueError:
            return  # beats carry no game state; a bad one proves little
        if not isinstance(beat, Beat):
            return
        feed = self.feeds[seat]
        after = beat.head_seq + 1
        if after <= feed.head:
            if feed.lamports[after - 1] <= message.lamport:
                self._clock_lie(seat, after, feed.lamports[after - 1], message.lamport)
        else:
            feed.beats[beat.head_seq] = max(feed.beats.get(beat.head_seq, 0), message.lamport)

    def _clock_lie(self, seat: int, seq: int, lamport: int, announced: int) -> None:
        self.lies.append((seat, seq - 1, seq))
        self._once(
            ("beat", seat, seq),
            Finding(
                FindingKind.CLOCK_BELOW_ACK,
                f"timed {lamport}, at or below the clock {announced} its author announced "
                f"before it (a beat with head {seq - 1})",
                seq=seq,
                lamport=lamport,
                expected=f"lamport > {announced}",
                found=str(lamport),
                **self.who(seat),
            ),
        )

    # -- feeds -----------------------------------------------------------------------------
    def _take(self, message: Message, body: EventBody, seat: int, log: _Log) -> None:
        feed = self.feeds[seat]
        seq = message.seq
        if seq <= feed.head:
            known = feed.prefix(seq)
            if known != message.id[:_PREFIX]:
                self._equivocation(message, seat, known, log, seen=True)
            return
        pending = feed.pending
        waiting = pending.get(seq) if pending else None
        if waiting is not None:
            if waiting[0].id != message.id:
                self._equivocation(message, seat, waiting[0].id[:_PREFIX], log, seen=True)
            return
        kept = self.forks.get(seat) if self.forks else None
        want = kept.get(seq) if kept is not None else None
        if want is not None and not message.id.startswith(want):
            # The drop kept the chain its votes quote, and the other version: this one is the
            # fork's losing side, at the cut or below it (soak seed 893: a fork 20 events below
            # the cut, read first in its losing version, broke the feed).
            self._equivocation(message, seat, want, log, seen=False)
            return
        if seq == feed.head + 1:
            self._deliver(seat, message, body)  # the usual case: the next event of the feed
        else:
            pending[seq] = (message, body, log.index)
        while pending and feed.head + 1 in pending:
            msg, parsed, _ = pending.pop(feed.head + 1)
            self._deliver(seat, msg, parsed)
        self._fold_ready()

    def _watched(self, message: Message, seat: int, log: _Log) -> None:
        """Every copy of an event of a member the last pass saw fork, from its fork on: which
        member's log holds which version (and, of one log, which its peer delivered last)."""
        seq = message.seq
        if log.owner is not None and log.owner != seat:
            held = self.holders.setdefault((seat, seq), {})
            held.setdefault(message.id[:_PREFIX], set()).add(log.owner)
            if not self.count_copies:  # one log: the version its peer delivered last
                self.followed[(seat, seq)] = message.id[:_PREFIX]

    def followed_chain(self, seat: int) -> dict[int, bytes] | None:
        """Of one log alone: the chain of ``seat`` its peer followed last, seq -> id prefix,
        where the log holds two versions of one of its events (a log holds the events its
        peer delivered, in order: a peer that gave up one version for the other, for the
        chain a drop keeps or the votes quote, or the chain that goes on,
        ``Peer._follow_continued``, delivered the other after it); ``None`` otherwise."""
        chain = {seq: prefix for (author, seq), prefix in self.followed.items() if author == seat}
        switched = any(
            len(held) > 1 for (author, _), held in self.holders.items() if author == seat
        )
        return chain if switched and chain else None

    def held_chain(self, seat: int) -> dict[int, bytes] | None:
        """The chain of ``seat``, watched since it forked, that the logs of the members still
        in hold, seq -> id prefix; ``None`` if none holds any or two of them hold different
        versions of one event (then the votes settle it: :func:`voted_chain`). A log that
        holds both versions of an event does not count for it.

        A fork no vote settled was never seen by a member still in: had one held both
        versions, it would have proven the fork and voted. The version the members still in
        hold is the one that was final among them, whatever its time; the other reached only
        members dropped since (a fake sent to a member asleep, then dropped, and timed before
        the real event: read first in Lamport order, the audit of every log followed it and
        scored another game than every peer's)."""
        dropped = self.state.dropped
        chain: dict[int, bytes] = {}
        for (author, seq), held in self.holders.items():
            if author != seat:
                continue
            # (A log holding both versions says nothing of which counts: its peer proved the
            # fork, and followed one by the votes or the chain that goes on. Counting it made
            # the audit of every log follow the fake while the sleeper was not dropped, and
            # never drop it, since the fake kept the cheater's vote against it from counting.)
            both = set.intersection(*held.values()) if len(held) > 1 else set()
            kept = [
                prefix for prefix, owners in held.items() if not owners - both <= dropped.keys()
            ]
            if len(kept) > 1:
                return None
            if kept:
                chain[seq] = kept[0]
        return chain or None

    def _equivocation(
        self, message: Message, seat: int, other: bytes, log: _Log, *, seen: bool
    ) -> None:
        """Two versions of ``seat``'s event: ``other`` is the prefix of the one read first
        (``seen``) or, for a fork a drop settled, the kept one the votes quote."""
        feed = self.feeds[seat]
        feed.forked = min(feed.forked or message.seq, message.seq)
        versions = self.versions.setdefault((seat, message.seq), set())
        versions.add(message.id[:_PREFIX])
        if seen:
            versions.add(other)
        else:  # the kept version is proof only once read (see _proven)
            self.unseen_forks.add((seat, message.seq))
        self._once(
            ("fork", seat, message.seq, message.id),
            Finding(
                FindingKind.EQUIVOCATION,
                f"two different signed events with seq {message.seq}: the author forked its feed",
                log=log.name,
                record=log.count,
                expected=f"event {other.hex()[:16]}…",
                found=f"event {message.id.hex()[:16]}…",
                **self.about_message(message),
            ),
        )

    def _deliver(self, seat: int, message: Message, body: EventBody) -> None:
        feed = self.feeds[seat]
        seq = message.seq
        lamport = message.lamport
        event = Event(seat, seq, lamport, message.kind, body, message.id)
        in_order = True
        if message.prev != feed.last_id:
            self.add(
                Finding(
                    FindingKind.BROKEN_CHAIN,
                    f"prev does not name the author's event {seq - 1}",
                    expected=(feed.last_id or b"").hex()[:16] or "nil",
                    found=(message.prev or b"").hex()[:16] or "nil",
                    **self.about(event),
                )
            )
        frontier = body.frontier
        if frontier[seat] != seq - 1:
            self.add(
                Finding(
                    FindingKind.BROKEN_CHAIN,
                    "its frontier does not hold the author's own previous event",
                    expected=str(seq - 1),
                    found=str(frontier[seat]),
                    **self.about(event),
                )
            )
        if lamport <= feed.last_lamport:
            in_order = False
            self.add(
                Finding(
                    FindingKind.LAMPORT_ORDER,
                    "the author's clock does not increase along its feed",
                    expected=f"lamport > {feed.last_lamport}",
                    found=str(lamport),
                    **self.about(event),
                )
            )
        feeds = self.feeds
        for q, f in enumerate(frontier):
            if q == seat or f == 0:
                continue
            other = feeds[q]
            if other.forked and f >= other.forked:
                continue  # it may acknowledge the other version of a fork: times differ
            if f <= other.head:
                if other.lamports[f - 1] >= lamport:
                    self._below_ack(event, q, f, other.lamports[f - 1])
            else:
                other.waiting.setdefault(f, []).append(
                    (seat, seq, lamport, message.kind, message.id)
                )
        feed.head = seq
        feed.last_id = message.id
        if in_order:  # (a clock that did not increase leaves the feed's clock as it was)
            feed.last_lamport = lamport
        feed.lamports.append(lamport)
        feed.prefixes += message.id[:_PREFIX]
        if feed.waiting:  # (empty but when an event came before one it acknowledges)
            for w_seat, w_seq, w_lamport, w_kind, w_id in feed.waiting.pop(seq, ()):
                if lamport >= w_lamport:
                    waiting = Event(w_seat, w_seq, w_lamport, w_kind, body, w_id)
                    self._below_ack(waiting, seat, seq, lamport, named=False)
        if feed.beats:  # (empty but when beats were logged)
            announced = feed.beats.pop(seq - 1, None)
            if announced is not None and lamport <= announced:
                self._clock_lie(seat, seq, lamport, announced)
        if self.kinds is not None:
            self.kinds[seat].append(message.kind)
        if message.kind is KIND_DROP:
            assert isinstance(body, Drop)
            if body.reason is DropReason.EQUIVOCATION:
                self.accusations.append(event)
        if in_order:
            # Held until no event still to come can precede it; whether it counts is decided
            # when it is folded (_fold_final). (One timed below what was folded comes too late to
            # count: read, as a peer reads an event timed at or below its stable time.)
            self.folds.add(event, self.folded_key[0] - 1)

    def _below_ack(self, event: Event, q: int, f: int, lamport: int, *, named: bool = True) -> None:
        where = self.about(event) if named else {**self.who(event.seat), "seq": event.seq}
        where.setdefault("lamport", event.lamport)
        where.setdefault("event", event.kind.name.lower())
        self.add(
            Finding(
                FindingKind.CLOCK_BELOW_ACK,
                f"timed at or below {self.spec.members[q].name}'s event {f} (lamport {lamport}), "
                "which its frontier acknowledges",
                expected=f"lamport > {lamport}",
                found=str(event.lamport),
                **where,
            )
        )

    # -- the fold --------------------------------------------------------------------------
    def _fold_ready(self) -> None:
        """Fold every delivered event that no event still to come can precede."""
        folds = self.folds
        held = folds.nonfinal
        if not held:
            return
        state = self.state
        # (A copy: the fold changes its dict in place, and a readmission takes a member out
        # of it, whose feed then holds the time back again.)
        dropped = dict(state.dropped)
        if dropped:
            bound = self._bound(dropped, 0)
        else:  # the usual case: every feed counts (map and attrgetter run in C)
            bound = min(map(_LAST_LAMPORT, self.feeds), default=0)
        while held and held[0].lamport <= bound:
            walk = folds.finals(bound, self.cuts, self.gaps)
            try:
                for event, counts in walk:
                    self._fold_final(event, counts)
                    if state.dropped != dropped:
                        # The time to fold up to changed: walk again, to the new one.
                        dropped = dict(state.dropped)
                        bound = self._bound(dropped, bound)
                        break
            finally:
                walk.close()
            held = folds.nonfinal

    def _fold_final(self, event: Event, counts: bool) -> None:
        """Fold one event no event still to come can precede: if it counts (``Folds.admits``:
        not past a cut, nor in a readmitted member's gap, as the last pass found them, nor
        past a drop this pass folded), else read it only (an abandoned game's end reads it)."""
        if counts:
            self._fold(event)
        else:
            self.state.observe(event)

    def _bound(self, dropped: dict[int, int], default: int) -> int:
        """The time up to which no event still to come can precede: the least clock of the
        feeds that may still bring an event that counts. A member dropped holds it back no
        more once every event of it up to its cut is here (those still count, however late
        the log holds them), unless the last pass found it readmitted from that cut (its
        events from its rejoin request on count again). ``--variants`` soak seed 693: a
        recovered log holds a readmitted member's events after what the fold had passed."""
        gaps = self.gaps
        return min(
            (
                f.last_lamport
                for s, f in enumerate(self.feeds)
                if s not in dropped
                or f.head < dropped[s]
                or (gaps and any(lo == dropped[s] for lo, _ in gaps.get(s, ())))
            ),
            default=default,
        )

    def _fold(self, event: Event) -> None:
        key = (event.lamport, event.seat, event.seq)  # event.key, without the property call
        if key <= self.folded_key:
            return
        self.folded_key = key
        state = self.state
        if self.step_violations:
            self.step_violations = []
        body = event.body
        rs = state.round
        table = rs.table
        # The author's tableau and false calls before the event: a finding about a play
        # quotes them (read only then).
        before = None
        if table is not None and isinstance(body, Play):
            before = table.tableaux[event.seat]
        nerts_call = event.kind is KIND_NERTS
        before_calls = table.false_calls[event.seat] if nerts_call and table is not None else 0
        if isinstance(body, Reveal) and body.what is RevealWhat.SECRET:
            self.secret_events[(body.round, event.seat)] = event
        try:
            notices = state.apply(event)
        except Exception as exc:  # a bug of the fold must not hide the rest of the audit
            self.add(
                Finding(
                    FindingKind.REFUSED,
                    f"the rules fold failed on this event ({type(exc).__name__}: {exc})",
                    **self.about(event),
                )
            )
            notices = []
        number = getattr(body, "round", None)
        if isinstance(number, int):
            self.round_events[number] = self.round_events.get(number, 0) + 1
        for notice in notices:
            self._notice(event, notice, rs, before)
        if isinstance(body, Result) and not any(isinstance(n, Refused) for n in notices):
            self.matched.setdefault(body.round, []).append(event.seat)
        if nerts_call:
            after = state.table
            if after is not None and after.false_calls[event.seat] > before_calls:
                left = len(before.nerts) if before is not None else 0
                self.add(
                    Finding(
                        FindingKind.FALSE_NERTS,
                        "a Nerts call with cards left in the caller's Nerts pile (penalised)",
                        expected="an empty Nerts pile",
                        found=f"{left} card(s) left",
                        **self.about(event),
                    )
                )
        if state.past_rounds:
            for finished in state.past_rounds:
                self._replay(finished)
            state.past_rounds = ()  # kept by the fold for replays; the audit is done with them
        if self.on_fold is not None:
            self.on_fold(FoldStep(event, tuple(notices), state, tuple(self.step_violations)))

    def _notice(self, event: Event, notice: Notice, rs: RoundState, before: Tableau | None) -> None:
        if isinstance(notice, _DECIDING) and (not self.decisive or self.decisive[-1] is not event):
            self.decisive.append(event)
        if isinstance(notice, Refused):
            self._refused(event, notice, rs, before)
        elif isinstance(notice, RoundEnded):
            self.ended[notice.round] = notice
        elif isinstance(notice, RoundScored):
            self.scored[notice.round] = notice
            if notice.round == rs.number:
                self.forfeits.extend((rs.number, seat) for seat in sorted(rs.forfeit))
        elif isinstance(notice, MemberDropped) and rs.number:
            self.causes.setdefault((rs.number, notice.seat), []).append(
                self._drop_cause(event, notice)
            )

    def _drop_cause(self, event: Event, notice: MemberDropped) -> str:
        """Why a member was removed, as a forfeit's cause: ``left``, ``abandoned``,
        ``dropped``, or ``dropped_on_proof`` (which stands only if the logs hold proof)."""
        if notice.left:
            return "left"
        body = event.body
        if isinstance(body, Drop) and body.reason is DropReason.ABANDON:
            return "abandoned"
        votes = self.state.votes.get(notice.seat, ())
        if any(v.reason is DropReason.EQUIVOCATION for _, v in votes):
            return "dropped_on_proof"
        return "dropped"

    def _refused(
        self, event: Event, notice: Refused, rs: RoundState, before: Tableau | None
    ) -> None:
        violation = notice.violation
        reason = violation.reason
        code = violation.code
        if code in _REPLAY_CODES:
            # The replay of a seat's round against its deck, when the last secret came in.
            culprit = self.secret_events.get((rs.number, violation.seat))
            where = self.about(culprit) if culprit is not None else self.who(violation.seat)
            where.setdefault("round", rs.number)
            self.causes.setdefault((rs.number, violation.seat), []).append("deck_mismatch")
            self.add(Finding(FindingKind.DECK_MISMATCH, reason, **where))
            return
        body = event.body
        if event.kind is Kind.MOVE or event.kind is Kind.CLAIM:
            kind = _PLAY_FINDINGS.get(code, FindingKind.ILLEGAL_MOVE)
        else:
            kind = _FINDINGS.get(code, FindingKind.REFUSED)
        expected: str | None = None
        found: str | None = None
        if kind is FindingKind.REVEAL_MISMATCH:
            assert isinstance(body, Reveal)
            commit = rs.commits.get(event.seat)
            if body.what is RevealWhat.NONCE:
                found = nonce_hash(body.value).hex()[:16]
                expected = commit.nonce_hash.hex()[:16] if commit else None
            else:
                found = secret_hash(body.value).hex()[:16]
                expected = commit.secret_hash.hex()[:16] if commit else None
            expected = f"H = {expected}" if expected else "a commit"
            found = f"H = {found}"
            self.causes.setdefault((body.round, event.seat), []).append("reveal_mismatch")
        elif kind is FindingKind.RESULT_MISMATCH:
            assert isinstance(body, Result)
            if rs.expected is not None:
                expected = str([p.total for p in rs.expected.players])
                if rs.digest is not None and body.digest != rs.digest:
                    expected += f" digest {rs.digest.hex()[:16]}"
            found = str(list(body.scores))
            if rs.digest is not None and body.digest != rs.digest:
                found += f" digest {body.digest.hex()[:16]}"
        elif kind is FindingKind.UNAVAILABLE_CARD:
            assert isinstance(body, Play)
            top = _top(before, body.move.source)
            expected = f"{top if top is not None else 'nothing'} at {body.move.source!r}"
            found = str(body.card)
        elif kind is FindingKind.ILLEGAL_MOVE:
            assert isinstance(body, Play)
            found = str(body.move)
        self.add(Finding(kind, reason, expected=expected, found=found, **self.about(event)))

    def _replay(self, rs: RoundState) -> None:
        """Replay a finished round with every revealed deck (legality and conservation)."""
        if not self.deep or rs.number in self.replayed:
            return
        self.replayed.add(rs.number)
        flagged = {
            v.seat
            for v in self.violations
            if v.kind is FindingKind.DECK_MISMATCH and v.round == rs.number
        }
        for problem in replay_round(self.state.rules, rs):
            seat = problem.seat
            if seat in flagged:
                continue  # the fold already named this seat's lie
            culprit = self.secret_events.get((rs.number, seat))
            where = self.about(culprit) if culprit is not None else self.who(seat)
            where.setdefault("round", rs.number)
            self.add(Finding(FindingKind.DECK_MISMATCH, str(problem), **where))

    # -- the end ---------------------------------------------------------------------------
    def _finish(self) -> None:
        for log in self.logs:
            if not log.ended:
                self._end_log(log)
        for seat, feed in enumerate(self.feeds):
            if feed.pending:
                seqs = sorted(feed.pending)
                self.add(
                    Finding(
                        FindingKind.MISSING_EVENT,
                        f"no log holds event {feed.head + 1} of this feed, so its events "
                        f"{seqs[0]}-{seqs[-1]} cannot be verified or counted",
                        seq=feed.head + 1,
                        **self.who(seat),
                    )
                )
            for f, waiting in sorted(feed.waiting.items()):
                for w_seat, w_seq, w_lamport, w_kind, _ in waiting:
                    self.add(
                        Finding(
                            FindingKind.MISSING_EVENT,
                            f"its frontier acknowledges {self.spec.members[seat].name}'s "
                            f"event {f}, which no log holds",
                            seq=w_seq,
                            lamport=w_lamport,
                            event=w_kind.name.lower(),
                            **self.who(w_seat),
                        )
                    )
        # Everything delivered is now safe to fold, in the total order.
        walk = self.folds.finals(_EVERYTHING, self.cuts, self.gaps)
        try:
            for event, counts in walk:
                self._fold_final(event, counts)
        finally:
            walk.close()
        state = self.state
        if state.phase is Phase.OVER or state.round.secrets:
            self._replay(state.round)
        self._gaps()
        self._evidence()
        if state.phase is not Phase.OVER:
            names = ", ".join(self.spec.members[s].name for s in sorted(state.waiting()))
            self.add(
                Finding(
                    FindingKind.INCOMPLETE,
                    f"the game did not finish: round {state.round.number}, "
                    f"{state.phase.value} phase" + (f", waiting for {names}" if names else ""),
                    round=state.round.number or None,
                )
            )

    def _gaps(self) -> None:
        for log in self.logs:
            if not log.readable:
                continue
            for seat in range(self.seats):
                head = self.feeds[seat].head
                who = self.who(seat)
                for lo, last in sorted(log.holes[seat]):
                    hi = min(last, head)
                    if lo <= hi:
                        self.add(
                            Finding(
                                FindingKind.GAP,
                                f"the log lacks {hi - lo + 1} event(s) of this feed that other "
                                "logs hold",
                                log=log.name,
                                seq=lo,
                                last_seq=hi,
                                **who,
                            )
                        )
                held = log.next[seat] - 1
                if held < head:
                    own = seat == log.owner
                    self.add(
                        Finding(
                            FindingKind.GAP if own else FindingKind.LOG_ENDS_EARLY,
                            (
                                "the log lacks events its own peer signed (a peer logs each "
                                "event before sending it)"
                                if own
                                else "the log stops before events of this feed that other logs hold"
                            ),
                            log=log.name,
                            seq=held + 1,
                            last_seq=head,
                            **who,
                        )
                    )
        for (seat, index), ranges in sorted(self.singles.items()):
            for lo, hi in ranges:
                self.add(
                    Finding(
                        FindingKind.SINGLE_COPY,
                        f"{hi - lo + 1} event(s) only this log holds",
                        log=self.logs[index].name,
                        seq=lo,
                        last_seq=hi,
                        **self.who(seat),
                    )
                )

    # -- evidence ----------------------------------------------------------------------------
    def _proven(self) -> dict[int, list[tuple[int, int]]]:
        """Per seat, the seq ranges at which the logs prove it cheated: two signed versions of
        an event read, a logged beat its event contradicts, or a verified proof note (once
        every log is read)."""
        if self.proven is not None:
            return self.proven
        proven: dict[int, list[tuple[int, int]]] = {}
        self.proven = proven
        for seat, seq in self.unseen_forks:
            feed = self.feeds[seat]
            if seq <= feed.head:  # the kept version was read after all
                self.versions[(seat, seq)].add(feed.prefix(seq))
        for (seat, seq), ids in self.versions.items():
            if len(ids) > 1:
                proven.setdefault(seat, []).append((seq, seq))
        for seat, head, seq in self.lies:
            proven.setdefault(seat, []).append((head + 1, seq))
        for proof, _, _ in self.proofs:
            proven.setdefault(self.roster[proof.author], []).append(proof.span)
        return proven

    def _evidence(self) -> None:
        """Every vote and drop on proof of cheating backed by proof in the logs, every proof
        note's cheat named, every forfeit traced to a cause (docs/audit.md)."""
        if not (self.proofs or self.accusations or self.forfeits):
            return  # the usual game: nothing to back
        proven = self._proven()
        names = [m.name for m in self.spec.members]
        # A proof note names its cheat even where the events read show nothing of it (a peer
        # logs one version of a forked event, and no beat).
        shown = {(v.seat, v.seq) for v in self.violations if v.kind is FindingKind.EQUIVOCATION}
        for proof, log, record in self.proofs:
            seat = self.roster[proof.author]
            second = proof.second
            if proof.kind is ProofKind.EQUIVOCATION:
                if (seat, proof.seq) in shown or len(self.versions.get((seat, proof.seq), ())) > 1:
                    continue
                shown.add((seat, proof.seq))
                self._once(
                    ("fork", seat, proof.seq, second.id),
                    Finding(
                        FindingKind.EQUIVOCATION,
                        f"two different signed events with seq {proof.seq} (a proof note): "
                        "the author forked its feed",
                        log=log,
                        record=record,
                        expected=f"event {proof.first.id.hex()[:16]}…",
                        found=f"event {second.id.hex()[:16]}…",
                        **self.about_message(second),
                    ),
                )
            else:
                beat = proof.first
                self._once(
                    ("beat", seat, proof.seq),
                    Finding(
                        FindingKind.CLOCK_BELOW_ACK,
                        f"timed {second.lamport}, at or below the clock {beat.lamport} its "
                        f"author announced with head {proof.head} (a proof note)",
                        log=log,
                        record=record,
                        expected=f"lamport > {beat.lamport}",
                        found=str(second.lamport),
                        **self.about_message(second),
                    ),
                )
        for vote in self.accusations:
            body = vote.body
            assert isinstance(body, Drop)
            target, fork = body.seat, body.fork_seq
            if any(lo <= fork <= hi for lo, hi in proven.get(target, ())):
                continue
            self.add(
                Finding(
                    FindingKind.UNPROVEN_VOTE,
                    f"a vote to drop {names[target]} for cheating at its event {fork}, which "
                    "no log proves",
                    expected=f"proof of {names[target]}'s event {fork}: two signed versions, "
                    "or a beat it contradicts, in the events or a proof note",
                    found="none",
                    **self.about(vote),
                )
            )
        state = self.state
        for target in sorted(state.dropped):
            voters = [
                names[voter]
                for voter, v in state.votes.get(target, ())
                if v.reason is DropReason.EQUIVOCATION
            ]
            if not voters or target in state.left or target in proven:
                continue
            self.add(
                Finding(
                    FindingKind.UNPROVEN_DROP,
                    f"dropped on proof of cheating by the votes of {', '.join(voters)}, and no "
                    "log holds proof of any cheating of it",
                    expected="two signed versions of one of its events, or a beat it "
                    "contradicts, in the events or a proof note",
                    found="none",
                    **self.who(target),
                )
            )
        for number, seat in self.forfeits:
            causes = self.causes.get((number, seat), [])
            if any(c != "dropped_on_proof" or seat in proven for c in causes):
                continue
            why = (
                "its only cause is a drop on proof of cheating that no log proves"
                if causes
                else "the logs hold no cause for it"
            )
            self.add(
                Finding(
                    FindingKind.UNTRACED_FORFEIT,
                    f"forfeits round {number}, and {why}",
                    expected="a reveal that does not match its commit, a lie in its replay, "
                    "a leave or a drop that stands",
                    found=", ".join(causes) or "none",
                    round=number,
                    **self.who(seat),
                )
            )

    # -- each log's own view -------------------------------------------------------------------
    def may_split(self) -> bool:
        """Whether two logs may hold different games: some log lacks events others hold, or
        holds another version of one (otherwise every log folds to the union's game)."""
        if sum(1 for log in self.logs if log.readable) < 2:
            return False
        return any(v.kind in _DIFFERENT_COPIES for v in self.violations)

    def compare(self, views: list[_View | None]) -> None:
        """Name every two logs that each reached a result, and reached different ones.

        A log whose own peer the logs prove a cheater is no side: its fold follows its own
        fork, and the cheat is named already."""
        proven = self._proven()
        sides = [v for v in views if v is not None and v.seat not in proven]
        try:
            for i, first in enumerate(sides):
                for second in sides[i + 1 :]:
                    self._compare(first, second)
        except _Stop:
            self.stopped = True

    def _compare(self, a: _View, b: _View) -> None:
        spec = self.spec
        difference = _difference(
            a,
            b,
            (lambda w: f"team {w + 1}") if spec.rules.pairs else (lambda w: spec.members[w].name),
        )
        if difference is None:
            return
        kind = _split_kind(a, b, round_differs=difference[0] is not None)
        if kind is None:
            return
        what, found_a, found_b = difference
        names = [m.name for m in self.spec.members]
        part_a, part_b = _parting(a, b)
        parts = []
        for view, part, other in ((a, part_a, b), (b, part_b, a)):
            if part is not None:
                parts.append(
                    f"{view.name} holds {names[part.seat]}'s {part.text} (seq {part.seq}, "
                    f"lamport {part.lamport}) that {other.name} lacks"
                )
        where: dict[str, Any] = {}
        first = min((p for p in (part_a, part_b) if p is not None), key=_KEY, default=None)
        if first is not None:
            where = self.who(first.seat)
            where.update(seq=first.seq, lamport=first.lamport, event_id=first.id.hex())
            if first.kind is not None:
                where["event"] = first.kind
        if what is not None:
            where["round"] = what
        self.add(
            Finding(
                kind,
                f"{a.name} ({a.peer}) and {b.name} ({b.peer}) finished with different "
                "results"
                + (f" (the first round they score differently: {what})" if what else "")
                + ("; they part where " + "; ".join(parts) if parts else ""),
                log=a.name,
                expected=f"{a.name}: {found_a}",
                found=f"{b.name}: {found_b}",
                **where,
            )
        )

    def report(self, setup: list[Finding], passes: int) -> AuditReport:
        state = self.state
        rounds = []
        numbers = sorted(set(self.ended) | set(self.scored))
        for number in numbers:
            ended = self.ended.get(number)
            scored = self.scored.get(number)
            digest = ""
            for n, d, _ in state.history:
                if n == number:
                    digest = d.hex()
            rounds.append(
                RoundReport(
                    number=number,
                    status=ended.status.value if ended else RoundStatus.PLAYING.value,
                    cut=ended.cut if ended and ended.status is RoundStatus.NERTS else None,
                    callers=ended.callers if ended else (),
                    scores=tuple(p.total if p.played else None for p in scored.score.players)
                    if scored
                    else (),
                    totals=scored.totals if scored else (),
                    digest=digest,
                    results=tuple(sorted(self.matched.get(number, ()))),
                    events=self.round_events.get(number, 0),
                )
            )
        result = state.game.result
        infos = tuple(
            LogInfo(
                log.name,
                self.spec.members[log.owner].name if log.owner is not None else None,
                log.owner,
                log.count,
                log.events,
                log.readable,
            )
            for log in self.logs
        )
        return AuditReport(
            spec=self.spec,
            logs=infos,
            violations=(*setup, *self.violations),
            rounds=tuple(rounds),
            events=sum(f.head for f in self.feeds),
            finished=state.phase is Phase.OVER,
            totals=tuple(state.game.totals),
            winners=tuple(result.winners) if result is not None else (),
            dropped=tuple(sorted(state.dropped.items())),
            passes=passes,
            stopped=self.stopped,
            digest=state.digest(),
        )


_DECIDING = (MemberDropped, RoundEnded, RoundScored, GameEnded)
_DIFFERENT_COPIES = frozenset(
    {
        FindingKind.GAP,
        FindingKind.LOG_ENDS_EARLY,
        FindingKind.SINGLE_COPY,
        FindingKind.EQUIVOCATION,
    }
)
_KEY = operator.attrgetter("key")


@dataclass(frozen=True, slots=True)
class _View:
    """What one log alone folds to: its peer's own view of the game.

    Attributes:
        name: the log.
        seat: its peer's seat.
        peer: its peer's name.
        history: every round it scored: (number, lake digest, scores).
        result: the game's result, if it reached the end.
        provisional: that result may still change (an abandoned game whose absent member may
            not have seen every round it counts: the union of the logs decides, §9.3).
        decisive: its decisive events (drops, leaves, calls, results) in total order.
        feeds: per seat, the id prefixes of the events it holds, in seq order (16 bytes each).
        lamports: per seat, their Lamport times.
        kinds: per seat, their kinds (wire codes).
    """

    name: str
    seat: int
    peer: str
    history: tuple[tuple[int, bytes, tuple[int, ...]], ...]
    result: GameResult | None
    provisional: bool
    decisive: tuple[Event, ...]
    feeds: tuple[bytes, ...]
    lamports: tuple[array[int], ...]
    kinds: tuple[bytes, ...]


def _view(spec: GameSpec, source: LogSource, envelopes: EnvelopeCache) -> _View | None:
    """Fold one log alone (as often as the cuts need, like the audit itself); ``None`` for a
    log that is not a readable log of this game's members."""
    run, _ = _settled(spec, [source], strict=False, deep=False, view=True, envelopes=envelopes)
    log = run.logs[0]
    if not log.readable or log.owner is None:
        return None
    state = run.state
    return _View(
        log.name,
        log.owner,
        spec.members[log.owner].name,
        state.history,
        state.game.result if state.phase is Phase.OVER else None,
        state.phase is Phase.OVER and state.provisional,
        tuple(run.decisive),  # (folded in the total order)
        tuple(bytes(f.prefixes) for f in run.feeds),
        tuple(f.lamports for f in run.feeds),
        tuple(bytes(k) for k in run.kinds or ()),
    )


def _difference(
    a: _View, b: _View, winner: Callable[[int], str]
) -> tuple[int | None, str, str] | None:
    """How two views differ where both got: the first round both scored differently (or
    ``None``) and each one's result in words (the game's, if both reached its end and it
    differs; else that round's); ``None`` if they agree wherever both got."""
    rounds_b = {number: (digest, scores) for number, digest, scores in b.history}
    first: tuple[int, str, str] | None = None
    for number, digest, scores in a.history:
        other = rounds_b.get(number)
        if other is not None and other != (digest, scores):
            first = (
                number,
                f"round {number} lake {digest.hex()[:16]} scores {list(scores)}",
                f"round {number} lake {other[0].hex()[:16]} scores {list(other[1])}",
            )
            break
    ra, rb = a.result, b.result
    if ra is not None and rb is not None and (ra.totals, ra.winners) != (rb.totals, rb.winners):
        return (first[0] if first else None, _result_text(ra, winner), _result_text(rb, winner))
    return first


def _result_text(result: GameResult, winner: Callable[[int], str]) -> str:
    winners = ", ".join(winner(w) for w in result.winners)
    return f"game totals {list(result.totals)}, won by {winners} ({result.termination.value})"


def _split_kind(a: _View, b: _View, *, round_differs: bool) -> FindingKind | None:
    """How two logs that finished with different results are reported: the classification of a
    split, in one place.

    Two sides must never finish with different results (DESIGN.md §6): an error, unless the
    difference is only in the game's end and one of the two said its result was
    ``provisional`` (an abandoned two-member game whose sides could not hear each other,
    docs/protocol.md §9.3): that result was marked as not yet known, and the union of the logs
    decides it (a notice). A round both scored differently is always an error.
    """
    if not round_differs and (a.provisional or b.provisional):
        return FindingKind.PROVISIONAL_SPLIT
    return FindingKind.SPLIT_RESULT


@dataclass(frozen=True, slots=True)
class _Part:
    """An event one view holds and another does not: where two logs part."""

    seat: int
    seq: int
    lamport: int
    id: bytes
    kind: str | None = None  # the event kind, when known
    text: str = "event"  # the event in the notation, when known

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.lamport, self.seat, self.seq)


def _parting(a: _View, b: _View) -> tuple[_Part | None, _Part | None]:
    """Where two views part: for each, the first event in total order that it holds and the
    other does not, among its decisive ones (the two abandons of a split, say), else among all
    its events (known by their feed position only)."""
    return (
        _part(next((e for e in a.decisive if not _holds(b, e)), None)) or _first_only(a, b),
        _part(next((e for e in b.decisive if not _holds(a, e)), None)) or _first_only(b, a),
    )


def _holds(view: _View, event: Event) -> bool:
    at = (event.seq - 1) * _PREFIX
    return view.feeds[event.seat][at : at + _PREFIX] == event.id[:_PREFIX]


def _part(event: Event | None) -> _Part | None:
    if event is None:
        return None
    return _Part(
        event.seat,
        event.seq,
        event.lamport,
        event.id,
        event.kind.name.lower(),
        event_text(event),
    )


def _first_only(a: _View, b: _View) -> _Part | None:
    """The first event in total order that ``a`` holds and ``b`` does not."""
    best: _Part | None = None
    for seat, (ids, times) in enumerate(zip(a.feeds, a.lamports, strict=True)):
        other = b.feeds[seat]
        for seq in range(1, len(times) + 1):
            at = (seq - 1) * _PREFIX
            if other[at : at + _PREFIX] != ids[at : at + _PREFIX]:
                kind = Kind(a.kinds[seat][seq - 1]).name.lower()
                part = _Part(seat, seq, times[seq - 1], ids[at : at + _PREFIX], kind, kind)
                if best is None or part.key < best.key:
                    best = part
                break
    return best


def _top(tableau: Tableau | None, pile: Pile | None) -> Card | None:
    """The card in play on ``pile`` of ``tableau``; ``None`` if there is none (or no such
    pile: a signed event may name a work pile the rules do not have)."""
    if tableau is None or pile is None:
        return None
    try:
        return tableau.top(pile)
    except IllegalMoveError:
        return None


def _peek(data: bytes) -> dict[str, Any]:
    """Best effort: the author, seq and Lamport time of an envelope that failed its checks."""
    try:
        payload, _ = msgpack.unpackb(data, raw=False)
        fields = msgpack.unpackb(payload, raw=False)
        _, _, author, seq, _, lamport, code, _ = fields
        where: dict[str, Any] = {}
        if isinstance(author, bytes) and len(author) == 32:
            where["fingerprint"] = fingerprint(author)
        if isinstance(seq, int):
            where["seq"] = seq
        if isinstance(lamport, int):
            where["lamport"] = lamport
        if isinstance(code, int):
            with contextlib.suppress(ValueError):
                where["event"] = Kind(code).name.lower()
        return where
    except Exception:  # anything at all: this only decorates a report
        return {}


# -- notation --------------------------------------------------------------------------------
def event_text(event: Event) -> str:
    """An event in the notation, as ``nertz replay --text`` prints it (without the outcome).

    >>> from p2p_nertz.protocol.bodies import Join
    >>> event_text(Event(0, 1, 1, Kind.JOIN, Join((0, 0))))
    'join'
    """
    body = event.body
    if isinstance(body, Play):
        kind = body.move.kind
        if kind is MoveKind.PASS:
            return "stuck P"
        if kind is MoveKind.CALL:
            return "nerts X"
        shown = f" +{' '.join(map(str, body.reveals))}" if body.reveals else ""
        if event.kind is Kind.CLAIM:
            return f"claim {body.move} {body.card}{shown}"
        return f"move {body.move}{shown}"
    if isinstance(body, Commit):
        return "commit"
    if isinstance(body, Reveal):
        return f"reveal {body.what.name.lower()}"
    if isinstance(body, Ready):
        return "ready " + " ".join(map(str, body.visible))
    if isinstance(body, Result):
        return f"result {list(body.scores)} digest {body.digest.hex()[:12]}"
    name = event.kind.name.lower()
    seat = getattr(body, "seat", None)
    if seat is not None:
        reason = getattr(body, "reason", None)
        why = f" {reason.name.lower()}" if reason is not None else ""
        return f"{name} seat {seat} upto {getattr(body, 'last_seq', '?')}{why}"
    return name


def iter_sources(paths: Iterable[Any]) -> list[LogSource]:
    """Log sources for files on disk."""
    return [LogSource.from_path(p) for p in paths]
