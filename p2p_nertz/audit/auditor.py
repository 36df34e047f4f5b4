"""The audit: stream any subset of one game's peer logs, verify everything, name every fault.

Theory of operation
-------------------
The audit is a spectator that joins after the game, with no secret and no trust in any file.
It reads every log as a stream of records (:mod:`p2p_nertz.logfile`), several logs at once,
always taking the next record from the log whose last event has the smallest Lamport time, so
the logs are read side by side in (roughly) game order and the state it keeps stays small.

Every event goes through four layers, each adding the checks the one below cannot make:

1. **The files.** Damage (a bad frame, a checksum, a torn tail) is reported with its offset by
   the log reader; a log of another game or of a stranger is set aside. Before the first
   pass, a log that is a copy of another log of its member (an old copy, the same file twice)
   is set aside too, with a notice (:mod:`~p2p_nertz.audit.copies`).
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
only the last pass reports. A game without drops is read once. An event that no member still
in took (only dropped members' logs hold it, and its author's own log lacks it) counts for no
peer: the next pass reads it and never folds it (:meth:`_Pass.taken`).

**Evidence.** An accusation must be proven by the logs (docs/audit.md, "Evidence"): while
reading, the audit collects what proves cheating (two versions of one event, a logged beat an
event contradicts, ``proof`` notes verified by :func:`~p2p_nertz.protocol.evidence.check_proof`)
and what needs proof (votes on proof of cheating, drops on them, forfeits and their causes);
at the end of the pass it matches them.

**Each side.** The union is one game, but each log is its own peer's view. When the logs
differ, each is also folded alone (:func:`_view`, the same passes over that log only), and two
views that scored a round, or ended the game, differently are a split
(:func:`~p2p_nertz.audit.views.compare`; what weighs how much is decided by
:func:`~p2p_nertz.audit.views.split_kind` alone). When every log holds every event, every view
is the union's game, and nothing more is read.

Memory: the records themselves are never kept. Per event the audit keeps 24 bytes (a 16-byte id
prefix to recognise an equivocation whenever the second version comes, and the Lamport time to
check frontiers), plus what the fold keeps of the current round; events wait in a small buffer
only until every feed has caught up with them.

The parts of a pass
-------------------
A pass (:class:`_Pass`) is a thin driver: it reads the logs side by side, decodes each record
once (verifying the signatures of a batch together, :meth:`_Pass._read_ahead`) and hands it to
the part that owns what it changes, each in its own module:

- :mod:`~p2p_nertz.audit.logs` — the logs: headers, ends, what each holds of every feed (holes,
  reordering, the copies of each event), and at the end each log's gaps;
- :mod:`~p2p_nertz.audit.delivery` — the feeds: chains, clocks, frontiers, beats, forks, and
  which version of a forked event each log holds;
- :mod:`~p2p_nertz.audit.fold` — the fold: when an event is safe to fold, what each refusal is
  as a finding, the rounds for the report;
- :mod:`~p2p_nertz.audit.evidence` — proof notes, and every accusation matched to its proof;
- :mod:`~p2p_nertz.audit.debt_notes` — the ``debt`` notes: a voter's beat past its vote
  announcing a head of its own feed that the logs prove it never gave;
- :mod:`~p2p_nertz.audit.views` — each log's own view, and the splits between them;
- :mod:`~p2p_nertz.audit.collect` — the findings, in the order found, and what they name;
- :mod:`~p2p_nertz.audit.report` — the values an audit returns.

This module keeps what spans passes: finding the spec, and reading the logs again until the
cuts no longer change (:func:`_settled`).
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgpack  # type: ignore[import-untyped]

from p2p_nertz.audit.collect import Collector, Stop, peek
from p2p_nertz.audit.copies import Copies, same_member
from p2p_nertz.audit.debt_notes import DebtNotes
from p2p_nertz.audit.delivery import Delivery
from p2p_nertz.audit.evidence import Evidence
from p2p_nertz.audit.findings import Finding, FindingKind
from p2p_nertz.audit.fold import Fold
from p2p_nertz.audit.logs import Log, Logs, RecordStream, close
from p2p_nertz.audit.notation import event_text
from p2p_nertz.audit.report import AuditReport, DropReport, FoldStep, LogInfo, RoundReport
from p2p_nertz.audit.views import View, compare, may_split
from p2p_nertz.errors import InvalidRulesError, NertzError
from p2p_nertz.fifo import Fifo
from p2p_nertz.logfile.format import (
    RECORD_NOTE,
    RECORD_RECEIVED_EVENT,
    RECORD_SENT_EVENT,
    LogStream,
    Record,
    RecordKind,
)
from p2p_nertz.protocol.bodies import DropReason
from p2p_nertz.protocol.debts import DEBT_NOTE, DebtNoteError, read_note
from p2p_nertz.protocol.envelope import (
    EnvelopeCache,
    InvalidMessageError,
    Message,
    RejectReason,
    decode_message,
    verify_batch,
)
from p2p_nertz.protocol.evidence import PROOF_NOTE
from p2p_nertz.protocol.folds import Trial, cycle_meet, fresh_caps, impose_cuts, refold
from p2p_nertz.protocol.recovery import RECOVERED_NOTE, RECOVERING_NOTE
from p2p_nertz.protocol.roster import Cap
from p2p_nertz.protocol.share_notes import BAD_SHARE_NOTE
from p2p_nertz.protocol.spec import SPEC_NOTE, GameSpec
from p2p_nertz.protocol.state import (
    Event,
    GameState,
    Phase,
    leave_unannounced,
    voted_chain,
    with_forks,
)

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

_AHEAD = 128  # records read ahead, whose messages are verified as a batch (_Pass._read_ahead)
_RECENT = 1024  # messages kept by their bytes for the records and copies to come (_Pass.recent)


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

    def wire_version(self, limit: int = 4096) -> int | None:
        """The protocol version of the first message among the log's first ``limit`` records
        (``None``: none there, or unreadable: the audit says why). A log of a version this
        nertz does not read (:data:`~p2p_nertz.protocol.envelope.PROTOCOL_VERSIONS`) is not
        read message by message (each would be a ``bad_version`` finding): docs/log-format.md
        §9. (A message of the version the game's spec does not carry is a ``bad_version``
        finding.)

        Raises:
            OSError: the log cannot be opened.
        """
        stream = self.open()
        try:
            for record in itertools.islice(stream, limit):
                if record.kind is RecordKind.NOTE:
                    continue
                return _version_of(record.data)
        except NertzError:
            return None
        finally:
            close(stream)
        return None


def _version_of(data: bytes) -> int | None:
    """Best effort: position 0 of an envelope's payload, unchecked (it may be of any version)."""
    try:
        payload, _ = msgpack.unpackb(data, raw=False)
        version = msgpack.unpackb(payload, raw=False)[0]
    except Exception:  # anything at all: garbage has no version, and the audit says why
        return None
    return version if type(version) is int else None


def iter_sources(paths: Iterable[Any]) -> list[LogSource]:
    """Log sources for files on disk."""
    return [LogSource.from_path(p) for p in paths]


def audit(
    sources: Sequence[LogSource],
    *,
    spec: GameSpec | None = None,
    candidates: Sequence[GameSpec] = (),
    strict: bool = False,
    deep: bool = False,
    on_fold: Callable[[FoldStep], None] | None = None,
    envelopes: EnvelopeCache | None = None,
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
        envelopes: the codec's memo to parse and verify with (a new one if not given); one
            that has seen these messages already, such as a simulation's, spares their
            checks and answers as they would (:class:`~p2p_nertz.protocol.envelope.EnvelopeCache`).

    Returns:
        The report; :attr:`AuditReport.exit_status` is the command's exit status. Nothing in
        the input makes this raise.
    """
    opened: dict[int, _Opened] = {}
    # The codec's memo for every pass over these logs: a message is parsed and verified once.
    envelopes = EnvelopeCache() if envelopes is None else envelopes
    try:
        found, setup = _find_spec(sources, spec, candidates, opened)
        if found is None:
            return AuditReport(None, tuple(_unread(sources)), tuple(setup))
        # Two logs of one member: a copy of the other is not read (audit.copies).
        headers = {i: h for i, (stream, _) in opened.items() if (h := stream.header) is not None}
        copies = same_member(found, sources, headers) if len(headers) > 1 else None
        given = sources
        if copies is not None:
            setup += copies.notices
            sources, opened = _without_copies(sources, copies, opened)
        run, passes = _settled(
            found, sources, strict=strict, deep=deep, opened=opened, envelopes=envelopes
        )
    finally:
        for stream, _ in opened.values():
            close(stream)
    if on_fold is not None:
        known = run.known
        again = _Known(
            dict(known.cuts), dict(known.forks), dict(known.caps), dict(known.gaps),
            taken=dict(known.taken),
        )  # fmt: skip
        run = _Pass(
            found, sources, again, strict=strict, deep=deep, on_fold=on_fold, envelopes=envelopes
        )
        run.run()
    if not run.stopped and run.may_split():
        # Each peer's own view, folded from its log alone: two that finished differently are
        # a split (DESIGN.md §6), which the union alone cannot show.
        run.compare([_view(found, source, envelopes) for source in sources])
    report = run.report(setup, passes)
    if copies is not None and copies.copies:
        # (The report lists every log given, in the order given: a copy as a copy.)
        read = iter(report.logs)
        logs = tuple(copies.copies.get(i) or next(read) for i in range(len(given)))
        report = dataclasses.replace(report, logs=logs)
    return report


def _without_copies(
    sources: Sequence[LogSource], copies: Copies, opened: dict[int, _Opened]
) -> tuple[list[LogSource], dict[int, _Opened]]:
    """The logs to read, and the ones open among them by their new index (a copy's closed)."""
    at = {old: new for new, old in enumerate(copies.kept)}
    for index in copies.copies:
        if index in opened:
            close(opened.pop(index)[0])
    return [sources[i] for i in copies.kept], {at[i]: v for i, v in opened.items()}


# -- the passes, until the cuts settle ---------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Known:
    """What the last pass found, that the next one reads the logs with (module docstring).

    Attributes:
        cuts: seat -> the last seq that counts of a member dropped.
        forks: a member dropped, or proven to fork: the chain of it that counts, seq -> id
            prefix (:func:`_kept_chains`).
        caps: votes past a standing vote against their author never count.
        gaps: a member readmitted: its events between its cut and its rejoin request never
            count.
        watch: the members seen to fork, from their first forked seq.
        imposed: cuts kept for good, whatever a pass decides
            (:func:`~p2p_nertz.protocol.folds.impose_cuts`).
        taken: seat -> the last seq of its feed the table took, where only dropped
            members' logs hold more (:meth:`_Pass.taken`): those events are never folded.
    """

    cuts: dict[int, int] = field(default_factory=dict)
    forks: dict[int, dict[int, bytes]] = field(default_factory=dict)
    caps: dict[int, Cap] = field(default_factory=dict)
    gaps: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    watch: dict[int, int] = field(default_factory=dict)
    imposed: dict[int, int] = field(default_factory=dict)
    taken: dict[int, int] = field(default_factory=dict)


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
    """Read the logs until the cuts the fold decides no longer change (module docstring),
    then with each cut imposed that no member still in holds the events past
    (:func:`~p2p_nertz.protocol.folds.impose_cuts`); the last pass, and how many were made.
    ``view``: one log alone, as its peer saw the game (:func:`_view`; the kinds of events are
    kept).

    When to read again, the bound (``seats + 2`` passes) and a cycle's meet are the peer's
    iteration rule (:func:`~p2p_nertz.protocol.folds.refold`); what a pass reads with, and
    what it decides, are the audit's (:class:`_Known`, :func:`_next_known`)."""
    envelopes = envelopes if envelopes is not None else EnvelopeCache()
    # (The members the first pass, with no cuts and no caps, dropped: Unheld.cuts.)
    uncapped: list[frozenset[int]] = []

    def read(known: _Known, last: bool) -> tuple[_Pass, _Known | None]:
        nonlocal opened
        run = _Pass(spec, sources, known, strict=strict, deep=deep, envelopes=envelopes, kinds=view)
        if opened is not None:
            run.opened, opened = opened, None  # the first pass reads on from the spec's look
        run.run()
        if not uncapped:
            uncapped.append(frozenset(run.fold.decided.dropped))
        if last or run.stopped:
            return run, None
        return run, _next_known(run, known, view=view)

    limit = spec.seats + 2
    run, passes = refold(read, _Known(), limit, _meet)

    def passes_with(cuts: dict[int, int]) -> Trial:
        nonlocal passes
        trial, made = refold(read, _Known(cuts=dict(cuts), imposed=cuts), limit, _meet)
        passes += made
        return _trial(trial)

    kept = impose_cuts(passes_with, _trial(run), uncapped[0]).result
    assert isinstance(kept, _Pass)  # (Trial is not generic: folds.Trial)
    return kept, passes


def _trial(run: _Pass) -> Trial:
    """A pass as :func:`~p2p_nertz.protocol.folds.impose_cuts` reads it: each cut offered
    that the passes with it imposed make (the member dropped there) is kept for good, in the
    order offered, until none is left (the peer's ``Folds._cut_unheld``, and its
    ``lifted_cuts``: a drop decided before the withdrawals that lift its caps; its
    ``readmitted_cuts``: a member the logs readmit from a cut the passes never made). Rare:
    a member with events past a vote's count that no other member ever announced holding, a
    member gone for good."""
    return Trial(run, run.fold.decided, run.fold.folds.unheld, run.stopped)


def _meet(seen: Sequence[_Known], after: _Known) -> _Known | None:
    """What the next pass reads with, if ``after`` is what one of the passes ``seen`` read
    with already, else ``None``: the meet of the cycle the passes went round
    (:func:`~p2p_nertz.protocol.folds.cycle_meet`, the peer's rule: its cuts, gaps and caps,
    and the kept chains every pass of it kept)."""
    if after not in seen:
        return None
    cycle = seen[seen.index(after) :]
    meet = cycle_meet(
        [(k.cuts, k.gaps, k.caps) for k in cycle], (after.cuts, after.gaps, after.caps)
    )
    assert meet is not None  # (after is the cycle's first)
    cuts, gaps, caps = meet
    forks = {q: f for q, f in after.forks.items() if all(k.forks.get(q) == f for k in cycle)}
    return dataclasses.replace(after, cuts=cuts, gaps=gaps, caps=caps, forks=forks)


def _next_known(run: _Pass, known: _Known, *, view: bool) -> _Known | None:
    """What the pass after ``run`` (which read with ``known``) reads with; ``None`` if nothing
    it reads with changed: the cuts have settled."""
    forked = run.delivery.forked()
    own: int | None = None
    if view or len(run.logs) == 1:
        # One log alone is its peer's view: the peer never capped itself (soak seed 685:
        # the audit counted a forked member's abandon that the log's peer did not, and named
        # a split that was not). (Audited alone too, not only to compare it with others: the
        # forker's cards that its peer saw past the fork and that a claim went on, a race
        # lost to the cut, else read as a claim on a foundation that never was: session 9's
        # scan.)
        own = run.logs[0].owner
    # A peer knew the forks it proved itself and logged as proof notes, whose other version
    # no log may hold as an event read (a lie about time; a version whose chain never came:
    # the lie fuzzer's seq_skip at its join, --join seed 5), and folded with them: so does
    # the fold of every log, not only one log's view. (Seed 5, two players: the liar's join
    # reached the other member only as a lie at seq 2, which proved the fork against the
    # liar's own seq 2, a vote on that member; the audit, blind to the fork, tried the cut
    # that vote asked and kept it, where the member's vote on proof had cut the liar at 0.)
    for seat, first in run.evidence.noted_forks().items():
        forked[seat] = min(forked.get(seat, first), first)
    state = run.fold.decided
    standing = with_forks(state.standing_caps(), forked, own=own)
    kept = _kept_chains(run, forked, own)
    taken = run.taken()
    if (
        state.dropped == known.cuts
        and kept == known.forks
        and standing == known.caps
        and state.gaps == known.gaps
        and forked.keys() <= known.watch.keys()
        and taken == known.taken
    ):
        return None
    watch = known.watch
    if not forked.keys() <= watch.keys():
        # Members first seen to fork: what this pass decided without knowing it may not
        # stand (an abandon on the forked chain, read first, cut the member that proved the
        # fork, and with it the vote that dropped the forker), and kept from the next pass
        # it would settle the passes on a game no peer folded. A peer that finds a fork
        # folds its held events again from its final fold, with the fork known
        # (``Folds.forked_at``): so does the next pass, from no cut.
        imposed = known.imposed
        return _Known(
            cuts=dict(imposed), caps=with_forks({}, forked, own=own), watch=dict(forked),
            imposed=imposed,
        )  # fmt: skip
    # (A readmission found anew: the next pass from no caps, as the peer's next round.)
    standing = fresh_caps(standing, known.gaps, state.gaps, with_forks({}, forked, own=own))
    return _Known(
        cuts={**state.dropped, **known.imposed},
        forks=kept,
        caps=standing,
        gaps=dict(state.gaps),
        watch={seat: min(first, watch.get(seat, first)) for seat, first in forked.items()},
        imposed=known.imposed,
        taken=taken,
    )


def _kept_chains(
    run: _Pass, forked: dict[int, int], own: int | None = None
) -> dict[int, dict[int, bytes]]:
    """The chain of each dropped member the next pass takes (the kept ids, seq -> id prefix)
    and, of a member proven to fork and not dropped yet, the chain its counted votes quote
    (:func:`voted_chain`, §9.2): the other version was never final anywhere (``--variants``
    soak seed 893: read first, it kept the cheater's vote that dropped its holder from
    counting, and the game read as unfinished); of one proven to fork whose fork no vote
    settled, the chain the logs of the members still in hold (:meth:`ForkWatch.held_chain
    <p2p_nertz.audit.delivery.ForkWatch.held_chain>`); of one log alone (``own``: its peer's
    seat) whose peer gave up one version for the other, the chain it followed last
    (:meth:`ForkWatch.followed_chain <p2p_nertz.audit.delivery.ForkWatch.followed_chain>`)."""
    state = run.fold.decided
    kept = dict(state.kept_ids)
    for seat, first in forked.items():
        voted = voted_chain(state, seat, first)
        if voted is not None:
            kept[seat] = voted[1]
            continue
        chain = run.delivery.watched.followed_chain(seat) if own is not None else None
        if chain is None:
            # (Of a member dropped too: read in the order, the fake timed first can make its
            # holder's vote cut the forker below its fork and keep the forker's own votes on
            # the other chain, against that holder, from counting: a fold that agrees with
            # itself and with no peer. The chain the members still in hold comes first; the
            # drop's kept chain, from the votes of the members still in, agrees with it.)
            chain = run.delivery.watched.held_chain(seat, state.dropped)
            if chain is not None and seat in state.dropped:
                chain = {**kept.get(seat, {}), **chain}
        if chain is not None:
            kept[seat] = chain
    return kept


# -- the spec ----------------------------------------------------------------------------------
_Opened = tuple[RecordStream, Record]
"""A log opened by :func:`_find_spec` and the first record read from it."""


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
    look = _Look()
    for index, source in enumerate(sources):
        look.read(index, source, opened)
    problems = look.problems
    if given is not None:
        return given, problems
    # Of the games the logs name, the one most of them hold (the first named of those as many):
    # a log of another game among a game's logs is that one's wrong_log, not the others'.
    held = Counter(look.game_ids)
    found: list[GameSpec] = []
    # Every log of a game starts with the same note: each distinct one is parsed once (its
    # members' keys checked once), not once per log; a note that is no spec is still named in
    # every log that holds it.
    parsed: dict[bytes, GameSpec | InvalidRulesError] = {}
    for name, data in look.notes:
        spec = parsed.get(data)
        if spec is None:
            try:
                spec = GameSpec.from_wire(data)
                found.append(spec)
            except InvalidRulesError as exc:
                spec = exc
            parsed[data] = spec
        if isinstance(spec, InvalidRulesError):
            problems.append(
                Finding(
                    FindingKind.UNREADABLE, f"the spec note is not a game spec: {spec}", log=name
                )
            )
    for specs in (found, candidates):
        best = max(specs, key=lambda spec: held[spec.game_id], default=None)
        if best is not None and held[best.game_id]:
            return best, problems
    if look.game_ids:
        problems.append(
            Finding(
                FindingKind.UNREADABLE,
                "no game spec: the logs carry none (no 'spec' note); pass the spec file "
                "(nertz demo writes game.spec next to the logs)",
            )
        )
    # (no pass will run: say here why logs are unreadable)
    return None, look.headless + problems


@dataclass(slots=True)
class _Look:
    """What the first record of each log says, before any pass: the game ids of the logs,
    their ``spec`` notes, and what could not be read."""

    problems: list[Finding] = field(default_factory=list)
    headless: list[Finding] = field(default_factory=list)  # said by the pass, if one runs
    game_ids: list[bytes] = field(default_factory=list)
    notes: list[tuple[str, bytes]] = field(default_factory=list)

    def read(self, index: int, source: LogSource, opened: dict[int, _Opened]) -> None:
        """Read the first record of a log (left open in ``opened`` if there is one)."""
        try:
            stream = source.open()
        except OSError as exc:
            self.problems.append(_unreadable(source.name, exc))
            return
        keep = False
        try:
            first = next(iter(stream), None)
            header = stream.header
            if header is None:
                fatal = stream.summary().fatal
                if fatal is not None:
                    self.headless.append(
                        Finding(
                            FindingKind.UNREADABLE,
                            fatal.words,
                            log=source.name,
                            offset=fatal.offset,
                        )
                    )
                return  # the pass reports why
            self.game_ids.append(header.game_id)
            if first is not None and first.kind is RecordKind.NOTE and first.name == SPEC_NOTE:
                self.notes.append((source.name, first.data))
            if first is not None:
                opened[index] = (stream, first)
                keep = True
        except OSError as exc:
            self.problems.append(_unreadable(source.name, exc))
        finally:
            if not keep:
                close(stream)


_flat = itertools.chain.from_iterable
"""The records of the batches :meth:`_Pass._read_ahead` reads, one at a time (in C: the
batch's generator runs once a batch, not once a record)."""

_islice = itertools.islice  # (a batch's records taken in C: :meth:`_Pass._read_ahead`)


def _unreadable(name: str, exc: OSError) -> Finding:
    return Finding(FindingKind.UNREADABLE, f"cannot read the file: {exc.strerror or exc}", log=name)


def _unread(sources: Sequence[LogSource]) -> Iterator[LogInfo]:
    for source in sources:
        yield LogInfo(source.name, None, None, 0, 0, False)


# -- one pass over the logs --------------------------------------------------------------------
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


_Decoded = tuple[Message, bool, int]
"""A message decoded, whether it is an event, and its author's seat (:attr:`_Pass.recent`)."""


class _Pass:
    """One read of every log, folding the game (see the module docstring).

    The driver: it reads the logs side by side in time order, decodes each record, and hands
    what it holds to the part that owns the state it changes (``reading``, ``delivery``,
    ``fold``, ``evidence``), which all add to one list of findings (``found``).
    """

    def __init__(
        self,
        spec: GameSpec,
        sources: Sequence[LogSource],
        known: _Known,
        *,
        strict: bool,
        deep: bool = False,
        on_fold: Callable[[FoldStep], None] | None = None,
        envelopes: EnvelopeCache | None = None,
        kinds: bool = False,
    ) -> None:
        self.spec = spec
        self.known = known
        self.envelopes = envelopes if envelopes is not None else EnvelopeCache()
        self.game_id = spec.game_id  # computed once: it hashes the whole spec
        self.roster = {pid: seat for seat, pid in enumerate(spec.peer_ids)}
        self.found = Collector(spec, self.roster, strict=strict)
        self.reading = Logs(spec, self.game_id, sources, self.found)
        self.logs = self.reading.logs
        self.fold = Fold(
            spec,
            self.found,
            cuts=known.cuts,
            gaps=dict(known.gaps),
            caps=known.caps,
            deep=deep,
            on_fold=on_fold,
            masked=frozenset(known.cuts) | frozenset(known.gaps) | frozenset(known.forks),
            forked=frozenset(known.watch),
        )
        self.debts = DebtNotes(self.found)
        self.delivery = Delivery(
            self.found,
            known.forks,
            known.watch,
            self.debts.holding(self.fold.hold),
            one_log=len(sources) <= 1,
            kinds=kinds,
            taken=known.taken,
        )
        self.feeds = self.delivery.feeds
        self.state = self.fold.state
        self.evidence = Evidence(self.found, self.game_id)
        # (bound once: called for every record)
        self._count = self.reading.count
        self._receive = self.delivery.receive
        self.stopped = False
        self.opened: dict[int, _Opened] = {}  # logs already open, by index (see _find_spec)
        # The messages of the last records decoded or verified ahead (with whether each is an
        # event, and its author's seat), by their bytes: decode_message is pure and the game
        # id, roster and version it checks against are fixed for the pass, so a record (or a
        # copy of it in another log) decodes to the very message verify_batch kept, or the
        # first copy decoded. A hit skips the call and its checks; a miss (or a copy too far
        # behind) decodes.
        self.recent: Fifo[bytes, _Decoded] = Fifo(_RECENT)

    def run(self) -> None:
        try:
            self._read_all()
            self._finish()
        except Stop:
            self.stopped = True
        finally:
            for log in self.logs:
                if log.stream is not None:
                    close(log.stream)

    # -- reading ---------------------------------------------------------------------------
    def _open(self, log: Log) -> bool:
        opened = self.opened.pop(log.index, None)
        if opened is not None:
            # Read on from the first record, which was read on opening: the same records in
            # the same order as a fresh open gives.
            log.stream, first = opened
            log.records = _flat(self._read_ahead(itertools.chain((first,), log.stream)))
            return True
        try:
            log.stream = log.source.open()
            log.records = _flat(self._read_ahead(iter(log.stream)))
            return True
        except OSError as exc:
            self.found.add(_unreadable(log.name, exc))
            log.ended = True
            return False

    def _read_ahead(self, records: Iterator[Record]) -> Iterator[list[Record]]:
        """The records of ``records``, in order, in batches of :data:`_AHEAD`, the messages of
        each batch verified together first (:func:`verify_batch`: issue 18, the signatures
        checked back to back cost less). What the codec's cache then holds changes no result;
        an error of the reader is raised after the batch of the records read before it, where
        it was."""
        envelopes, game_id, roster = self.envelopes, self.game_id, self.roster
        versions, remember = self.spec.read_versions, self._remember
        while True:
            failure: Exception | None = None
            batch: list[Record] = []
            try:
                # (In C: list.extend keeps what it took before an error of the reader.)
                batch.extend(_islice(records, _AHEAD))
            except Exception as exc:  # re-raised below, after the records read before it
                failure = exc
            kept = verify_batch(
                [r.data for r in batch if r.kind is not RECORD_NOTE],
                game_id=game_id,
                roster=roster,
                cache=envelopes,
            )
            for data, message in kept:
                if message.version in versions:  # (else decode_message says why not)
                    remember(data, message)
            yield batch
            if failure is not None:
                raise failure
            if len(batch) < _AHEAD:
                return

    def _read_all(self) -> None:
        """Read every log, always the one whose last event is the earliest (an index breaks a
        tie): the logs side by side, in (roughly) game order."""
        reading = self.reading
        logs = self.logs
        queue: list[tuple[int, int]] = []
        for log in logs:
            if self._open(log):
                queue.append((0, log.index))
        heapq.heapify(queue)
        take = self._record
        while queue:
            _, index = heapq.heappop(queue)
            log = logs[index]
            records = log.records
            assert records is not None
            while True:
                try:
                    record = next(records, None)
                except OSError as exc:
                    self.found.add(_unreadable(log.name, exc))
                    record = None
                if record is None:
                    reading.end(log)
                    break
                if log.header is None and not reading.start(log):
                    break
                log.count += 1
                take(log, record)
                # Read on from this log while it is still the one to read next: pushing it
                # back and popping the least would give it again (an index breaks a tie).
                reached = log.reached
                if queue:
                    after = queue[0]
                    if reached > after[0] or (reached == after[0] and index > after[1]):
                        # Back in the queue, and the least out of it, read on from here: one
                        # heap operation, the same order as a push and then a pop.
                        _, index = heapq.heapreplace(queue, (reached, index))
                        log = logs[index]
                        records = log.records
                        assert records is not None

    def _record(self, log: Log, record: Record) -> None:
        """One record: a proof note to the evidence, a beat or an event to the feeds, and the
        events that lets through to the fold."""
        kind = record.kind
        if kind is RECORD_NOTE:
            if record.name == PROOF_NOTE:
                self.evidence.note(log, record)
            elif record.name == BAD_SHARE_NOTE:
                self.fold.share_notes.note(log, record)
            elif record.name == DEBT_NOTE:
                self._debt_note(log, record)
            elif record.name in (RECOVERING_NOTE, RECOVERED_NOTE):
                log.recovering = record.name == RECOVERING_NOTE
                self.debts.recovery(log)
            return
        is_event = kind is RECORD_SENT_EVENT or kind is RECORD_RECEIVED_EVENT
        data = record.data
        known = self.recent.get(data)
        if known is None:  # (a message verified ahead, or a copy of one, skips the call)
            known = self._decode(log, data, is_event)
            if known is None:
                return
        message, message_is_event, seat = known
        if message_is_event != is_event:
            self.found.add(
                Finding(
                    FindingKind.MISFILED,
                    f"a {message.kind.name.lower()} filed as a {kind.name.lower()} record",
                    log=log.name,
                    record=log.count,
                    **self.found.about_message(message),
                )
            )
            return
        if kind is RECORD_SENT_EVENT and seat != log.owner:
            self.found.add(
                Finding(
                    FindingKind.MISFILED,
                    "an event by another member filed as one this log's peer sent",
                    log=log.name,
                    record=log.count,
                    **self.found.about_message(message),
                )
            )
        if not is_event:
            self.delivery.beat(message, seat)
            return
        log.events += 1
        lamport = message.lamport
        if lamport > log.reached:  # noqa: PLR1730  (no max() call: Fold.ready says why)
            log.reached = lamport
        seq = message.seq
        nxt = log.next
        if seq == nxt[seat]:
            nxt[seat] = seq + 1  # (Logs.count's usual case, without the call: the next event)
        else:
            self._count(log, seat, seq)
        if self._receive(message, seat, log):
            self.fold.ready(self.feeds)

    def _debt_note(self, log: Log, record: Record) -> None:
        """A ``debt`` note (docs/log-format.md §5): its beat, signature verified, to the
        answers' watch as a reason its log's peer waited (``AnswerWatch.debt``), and to the
        debt notes' read of its author (``audit.debt_notes``); one that is no signed beat of
        a member proves nothing (``bad_proof``)."""
        spec = self.spec
        try:
            message, beat = read_note(
                bytes(record.data),
                game_id=spec.game_id,
                roster=spec.peer_ids,
                versions=spec.read_versions,
                seats=spec.seats,
            )
        except DebtNoteError as exc:
            detail = f"a debt note that proves nothing: {exc}"
            self.found.add(Finding(FindingKind.BAD_PROOF, detail, log=log.name, record=log.count))
            return
        if log.owner is not None:
            seat = self.roster[message.author]
            self.fold.answers.debt(log.owner, seat, message.lamport, beat)
            self.debts.note(log, seat, message, beat)

    def _decode(self, log: Log, data: bytes, is_event: bool) -> _Decoded | None:
        """The message a record holds, whether it is an event, and its author's seat;
        ``None`` (and a finding) if it fails its checks."""
        try:
            message = decode_message(
                data,
                game_id=self.game_id,
                roster=self.roster,
                cache=self.envelopes,
                version=self.spec.read_versions,
            )
        except InvalidMessageError as exc:
            self.found.add(
                Finding(
                    _REASONS.get(exc.reason, FindingKind.MALFORMED),
                    f"{'an event' if is_event else 'a beat'} refused: {exc}",
                    log=log.name,
                    record=log.count,
                    **peek(data),
                )
            )
            return None
        return self._remember(data, message)

    def _remember(self, data: bytes, message: Message) -> _Decoded:
        """Keep a message decoded (or verified ahead: its author is in the roster), by its
        bytes, for the next copies (:attr:`recent`)."""
        known = (message, message.is_event, self.roster[message.author])
        self.recent.keep(data, known)
        return known

    def _finish(self) -> None:
        for log in self.logs:
            if not log.ended:
                self.reading.end(log)
        self.delivery.missing()
        # Everything delivered is now safe to fold, in the total order.
        self.fold.finish(self.feeds)
        self.reading.gaps(self.delivery.heads())
        self.debts.check(self.logs, self.delivery.forked(), lambda q, h: self.feeds[q].prefix(h))
        self.evidence.check(self.delivery, self.fold)
        self.evidence.name_flaps(self.fold)
        self.delivery.unjudged()
        self.fold.incomplete()

    # -- after the pass --------------------------------------------------------------------
    def taken(self) -> dict[int, int]:
        """Per member, the last seq of its feed the table took where the logs hold more, by
        what this pass decided (:meth:`Logs.taken <p2p_nertz.audit.logs.Logs.taken>`; what
        a member still in announced holding of it is the peers' record,
        :class:`~p2p_nertz.protocol.folds.Unheld`): the next pass folds none of the rest.
        What no member still in took changes no peer's game (a lone fake a cheater sent to
        a sleeper voted out before it woke: soak ``--sleeper-forks`` seed 49007); the
        cheater is still named from the log that holds it."""
        dropped = self.fold.decided.dropped
        announced = self.fold.folds.unheld.announced
        seats = range(self.spec.seats)
        told = [
            max((a[q] for r, a in enumerate(announced) if r != q and r not in dropped), default=0)
            for q in seats
        ]
        feeds = self.feeds
        return self.reading.taken(
            dropped, told, [f.head for f in feeds], lambda q, seq: feeds[q].lamports[seq - 1]
        )

    def may_split(self) -> bool:
        """Whether two logs may hold different games (:func:`~p2p_nertz.audit.views.may_split`)."""
        return may_split(self.reading.readable(), self.found.violations)

    def compare(self, views: list[View | None]) -> None:
        """Name every two logs that each reached a result, and reached different ones
        (:func:`~p2p_nertz.audit.views.compare`)."""
        proven = self.evidence.cheats(self.delivery)
        try:
            compare(views, proven, self.found)
        except Stop:
            self.stopped = True

    def view(self) -> View | None:
        """What this pass over one log alone folded: its peer's own view of the game; ``None``
        for a log that is not a readable log of this game's members."""
        log = self.logs[0]
        if not log.readable or log.owner is None:
            return None
        state = self.state
        return View(
            log.name,
            log.owner,
            self.spec.members[log.owner].name,
            state.history,
            state.game.result if state.phase is Phase.OVER else None,
            state.phase is Phase.OVER
            and (
                state.provisional
                or leave_unannounced(state, log.owner, self.fold.folds.unheld.announced)
            ),
            tuple(self.fold.decisive),  # (folded in the total order)
            tuple(bytes(f.prefixes) for f in self.feeds),
            tuple(f.lamports for f in self.feeds),
            tuple(bytes(k) for k in self.delivery.kinds or ()),
        )

    def report(self, setup: list[Finding], passes: int) -> AuditReport:
        state = self.state
        result = state.game.result
        return AuditReport(
            spec=self.spec,
            logs=self.reading.infos(),
            violations=(*setup, *self.found.violations),
            rounds=self.fold.rounds(),
            events=sum(self.delivery.heads()),
            finished=state.phase is Phase.OVER,
            totals=tuple(state.game.totals),
            winners=tuple(result.winners) if result is not None else (),
            dropped=tuple(sorted(state.dropped.items())),
            drops=_drops(state, self.fold.answers.owed),
            passes=passes,
            stopped=self.stopped,
            digest=state.digest(),
            state=state,
        )


def _drops(
    state: GameState, owed: dict[tuple[int, int, int, int], Event]
) -> tuple[DropReport, ...]:
    """Why each member out is out (:class:`DropReport`): the reasons of the votes folded
    against it, and the complaints of its box ``owed`` (``AnswerWatch.owed``) an answer."""
    roster = state.roster
    out = []
    for seat in sorted(state.dropped):
        reasons = {v.reason for _, v in roster.votes.get(seat, ())} - _NOT_AGAINST
        names = tuple(r.name.lower() for r in sorted(reasons))
        if seat in roster.left:
            names = ("left", *names)
        answers = tuple(
            sorted((number, complainer) for number, _, d, complainer in owed if d == seat)
        )
        out.append(DropReport(seat, names, answers))
    return tuple(out)


#: The votes that are no reason to be out.
_NOT_AGAINST = frozenset({DropReason.WITHDRAW, DropReason.REJOIN})


def _view(spec: GameSpec, source: LogSource, envelopes: EnvelopeCache) -> View | None:
    """Fold one log alone (as often as the cuts need, like the audit itself); ``None`` for a
    log that is not a readable log of this game's members."""
    run, _ = _settled(spec, [source], strict=False, deep=False, view=True, envelopes=envelopes)
    return run.view()
