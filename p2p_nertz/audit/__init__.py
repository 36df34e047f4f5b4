"""Audit and replay of signed game logs (DESIGN.md §8: every game provable, any game replayable).

- :mod:`p2p_nertz.audit.findings` — :class:`Finding` and its :class:`FindingKind`.
- :mod:`p2p_nertz.audit.auditor` — :func:`audit`: stream any subset of one game's peer logs,
  verify signatures, feeds, clocks, the fair deal, every tableau, the lake, the Nerts calls and
  the scores, and report every finding.
- :mod:`p2p_nertz.audit.report` — :class:`AuditReport` and the values in it.
- :mod:`p2p_nertz.audit.replay` — the game's events in order with the state after each, for
  ``nertz replay``.
- :mod:`p2p_nertz.audit.copies` — two logs given of one member: a copy of the other is read
  as one log, with a notice.

The parts of one pass over the logs, each owning its state (the auditor's docstring tells how
they fit): :mod:`~p2p_nertz.audit.logs`, :mod:`~p2p_nertz.audit.delivery`,
:mod:`~p2p_nertz.audit.fold` (with :mod:`~p2p_nertz.audit.answers`, a dealer's withheld
answer), :mod:`~p2p_nertz.audit.evidence`, :mod:`~p2p_nertz.audit.views` and
:mod:`~p2p_nertz.audit.collect`.

No sockets and no clocks here; files are read only through :mod:`p2p_nertz.logfile`.
"""

from __future__ import annotations

from p2p_nertz.audit.auditor import (
    SPEC_NOTE,
    AuditReport,
    FoldStep,
    LogInfo,
    LogSource,
    RecordStream,
    RoundReport,
    audit,
    event_text,
)
from p2p_nertz.audit.findings import Finding, FindingKind, Severity

__all__ = [
    "SPEC_NOTE",
    "AuditReport",
    "Finding",
    "FindingKind",
    "FoldStep",
    "LogInfo",
    "LogSource",
    "RecordStream",
    "RoundReport",
    "Severity",
    "audit",
    "event_text",
]
