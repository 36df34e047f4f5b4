"""What an audit reports: :class:`AuditReport`, with a :class:`LogInfo` per log and a
:class:`RoundReport` per round, and :class:`FoldStep`, each event of the final pass as it is
folded (for replays). Values only: the pass that fills them is :mod:`p2p_nertz.audit.auditor`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p2p_nertz.audit.findings import Finding, FindingKind, Severity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import Event, GameState, Notice

__all__ = ["AuditReport", "DropReport", "FoldStep", "LogInfo", "RoundReport"]


@dataclass(frozen=True, slots=True)
class LogInfo:
    """What one log holds (``copy_of``: the log it is a copy of, read in its place:
    :mod:`~p2p_nertz.audit.copies`; its events are its event records, not read)."""

    name: str
    peer: str | None
    seat: int | None
    records: int
    events: int
    readable: bool
    # (Left out of the repr: a report's repr is what scripts/effect_digest.py --audit hashes.)
    copy_of: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class DropReport:
    """Why a member is out, as the logs say it.

    Attributes:
        seat: the member.
        reasons: the reasons of the votes folded against it (``silent``, ``withheld``,
            ``equivocation``, ``abandon``), or ``left`` for a signed leave: the members'
            judgement, which the logs hold as votes.
        answers_owed: ``(round, complainer's seat)`` of each complaint of its VSS box
            (docs/shuffle.md §6.3) folded and never answered: what a dealer voted out
            *withheld* withheld, whether or not an event of its proves it
            (``withheld_answer``).
    """

    seat: int
    reasons: tuple[str, ...]
    answers_owed: tuple[tuple[int, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (without the seat: the caller's entry holds it)."""
        return {
            "reasons": list(self.reasons),
            "answers_owed": [{"round": r, "complainer": c} for r, c in self.answers_owed],
        }


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
        drops: for each of them, why (:class:`DropReport`), in the same order. Not in the
            ``repr`` (nor the effect digest): it adds to ``dropped`` what the votes and the
            complaints folded already say.
        passes: how many times the logs were read.
        stopped: ``--strict``: the audit stopped at its first error.
        digest: the digest of the fold's final state (:meth:`GameState.digest
            <p2p_nertz.protocol.state.GameState.digest>`): equal to that of every peer that
            finished the game the logs hold (the simulator's agreement check). Not in
            :meth:`to_dict`.
        state: the fold's final state itself (``None`` if no pass ran): the game the logs
            hold, as the peers' own fold holds it, for tests and tools that look further
            than the values above (the simulator's invariants and their tests). Not to be
            changed; not in :meth:`to_dict`, nor compared.
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
    drops: tuple[DropReport, ...] = field(default=(), repr=False)
    passes: int = 0
    stopped: bool = False
    digest: str = ""
    state: GameState | None = field(default=None, compare=False, repr=False)

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
        why = {d.seat: d for d in self.drops}
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
            "deal": spec.deal.value if spec else None,
            "logs": [
                {
                    "name": i.name,
                    "peer": i.peer,
                    "seat": i.seat,
                    "records": i.records,
                    "events": i.events,
                    "readable": i.readable,
                    **({"copy_of": i.copy_of} if i.copy_of is not None else {}),
                }
                for i in self.logs
            ],
            "events": self.events,
            "rounds": [r.to_dict() for r in self.rounds],
            "finished": self.finished,
            "totals": list(self.totals),
            "winners": list(self.winners),
            "dropped": [
                {"seat": s, "cut": c, **(why[s].to_dict() if s in why else {})}
                for s, c in self.dropped
            ],
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
