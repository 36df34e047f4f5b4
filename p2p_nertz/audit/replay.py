"""A finished game, step by step: every event in the total order and the table after it.

:func:`load` audits the logs (so the replay follows exactly the events the audit counts) and
keeps each folded event as a :class:`Step`, with a copy of the fold every
:data:`CHECKPOINT_EVERY` steps; :meth:`Replay.state_at` rebuilds the state after any step from
the nearest checkpoint, so stepping backwards is as cheap as forwards. :func:`step_line` is the
one-line text form ``nertz replay --text`` prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from p2p_nertz.audit.auditor import AuditReport, FoldStep, LogSource, audit, event_text
from p2p_nertz.audit.findings import Finding
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.protocol.state import (
    ClaimDecided,
    Event,
    GameEnded,
    GameState,
    PassedFor,
    Rotated,
    RoundEnded,
)
from p2p_nertz.rules import Outcome

__all__ = ["CHECKPOINT_EVERY", "STEP_LEGEND", "Replay", "Step", "load", "step_line"]

CHECKPOINT_EVERY = 64
"""How many steps apart the replay keeps a copy of the fold."""


@dataclass(frozen=True, slots=True)
class Step:
    """One event folded: what it was, and what it did.

    Attributes:
        index: the step number, from 1.
        event: the event.
        round: the round it belongs to (the round being played when it has none).
        text: the event in the notation (``claim W>L@0S 5S``).
        outcome: for a claim, ``won``, ``tied`` or ``lost to NAME``; else ``""``.
        notes: what else it made happen (``everyone rotated``, ``round over``).
        violations: what the audit found wrong with it.
    """

    index: int
    event: Event
    round: int
    text: str
    outcome: str
    notes: tuple[str, ...]
    violations: tuple[Finding, ...]


STEP_LEGEND = (
    "legend: r1 L13 bob claim 3>L@1C AC won = round 1 (r0: before the first deal),",
    "  Lamport time 13 (the one order every peer counts the events in), who, the",
    "  event (a claim: its move in the notation and the card), a claim's outcome;",
    "  T*=306: a Nerts call ended the round at Lamport time 306 (later plays do not",
    "  count); !! = what the audit found wrong",
)
"""What :func:`step_line`'s columns and marks mean, for the person reading them (a newcomer
read ``L19`` and ``T*=306`` with no idea what they were)."""


def step_line(step: Step, spec: GameSpec) -> str:
    """The ``--text`` line of a step: round, Lamport time, author, event, outcome
    (:data:`STEP_LEGEND` says so in words).

    Columns are separated by single spaces; a claim ends with its outcome, and anything the
    audit found wrong follows ``!!``.
    """
    event = step.event
    parts = [f"r{step.round}", f"L{event.lamport}", spec.members[event.seat].name, step.text]
    if step.outcome:
        parts.append(step.outcome)
    parts.extend(f"({note})" for note in step.notes)
    parts.extend(f"!! {v.kind.value}: {v.detail}" for v in step.violations)
    return " ".join(parts)


class Replay:
    """A game's steps, and the fold's state after any of them."""

    def __init__(self, report: AuditReport, steps: list[Step], checkpoints: list[GameState]):
        assert report.spec is not None
        self.report = report
        self.spec: GameSpec = report.spec
        self.steps = steps
        self._checkpoints = checkpoints  # state after steps 0, K, 2K, ...

    def __len__(self) -> int:
        return len(self.steps)

    def state_at(self, index: int) -> GameState:
        """The fold after step ``index`` (0: before the first event). A fresh copy."""
        index = max(0, min(index, len(self.steps)))
        base = index // CHECKPOINT_EVERY
        state = self._checkpoints[base].copy()
        for step in self.steps[base * CHECKPOINT_EVERY : index]:
            state.apply(step.event)
        return state

    def round_start(self, number: int) -> int | None:
        """The index of the step before round ``number``'s first event, or ``None``."""
        for step in self.steps:
            if step.round == number:
                return step.index - 1
        return None

    def find(self, seat: int, seq: int) -> int | None:
        """The step of ``seat``'s event ``seq``, or ``None`` if it is not folded."""
        for step in self.steps:
            if step.event.seat == seat and step.event.seq == seq:
                return step.index
        return None


def load(
    sources: Sequence[LogSource],
    *,
    spec: GameSpec | None = None,
    candidates: Sequence[GameSpec] = (),
) -> Replay | AuditReport:
    """Audit the logs and keep every step; the report alone if no game could be read."""
    steps: list[Step] = []
    checkpoints: list[GameState] = []
    current = [0]

    def keep(fold: FoldStep) -> None:
        if not checkpoints:
            checkpoints.append(GameState(fold.state.spec))
        number = getattr(fold.event.body, "round", None)
        if isinstance(number, int):
            current[0] = number  # events without a round (join, drop) stay in the last one
        steps.append(_step(len(steps) + 1, fold, current[0]))
        if len(steps) % CHECKPOINT_EVERY == 0:
            checkpoints.append(fold.state.copy())

    report = audit(sources, spec=spec, candidates=candidates, on_fold=keep)
    if report.spec is None:
        return report
    if not checkpoints:
        checkpoints.append(GameState(report.spec))
    return Replay(report, steps, checkpoints)


def _step(index: int, fold: FoldStep, number: int) -> Step:
    names = [m.name for m in fold.state.spec.members]
    outcome = ""
    notes: list[str] = []
    for notice in fold.notices:
        if isinstance(notice, ClaimDecided):
            resolution = notice.resolution
            if resolution.outcome is Outcome.KEPT:
                outcome = "won"
            elif resolution.outcome is Outcome.TIED:
                outcome = "tied"
            elif resolution.winner is not None:
                outcome = f"lost to {names[resolution.winner]}"
            else:
                outcome = "lost"
        elif isinstance(notice, PassedFor):
            why = (
                "its turn stood still"
                if fold.state.rules.turn_based
                else "it played nothing, the rest stuck"
            )
            notes.append(f"passed for {names[notice.seat]}: {why}")
        elif isinstance(notice, Rotated):
            notes.append("everyone stuck: all rotate")
        elif isinstance(notice, RoundEnded):
            how = (
                f"Nerts by {', '.join(names[c] for c in notice.callers)} at T*={notice.cut}"
                if notice.callers
                else notice.status.value
            )
            notes.append(f"round {notice.round} over: {how}")
        elif isinstance(notice, GameEnded) and fold.state.unopposed:
            # One tied team was left to play the extra round (protocol.md §8.9): it won the
            # tie there, the round void.
            pairs = fold.state.rules.pairs
            (winner,) = notice.result.winners
            notes.append(
                f"game over: {f'team {winner + 1}' if pairs else names[winner]} wins the tie, "
                "the other tied players out of the extra round; the round void"
            )
        elif isinstance(notice, GameEnded) and fold.state.left_alone is not None:
            # A leave that left one member in (or one team in contention) ended the game
            # (protocol.md §9.3, Left alone): the leaver forfeits it.
            pairs = fold.state.rules.pairs
            winners = ", ".join(
                f"team {w + 1}" if pairs else names[w] for w in notice.result.winners
            )
            notes.append(
                f"game over: {names[fold.state.left_alone]} left, forfeiting the game; the "
                f"round void, winner(s) {winners} on the rounds scored"
            )
    return Step(
        index, fold.event, number, event_text(fold.event), outcome, tuple(notes), fold.violations
    )
