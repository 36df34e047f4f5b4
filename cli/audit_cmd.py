"""``nertz audit LOG...``: prove a game from its signed logs, or name exactly what is wrong.

Give the logs of one game: any subset of its peers' logs (they are merged by event id). The game
spec is read from a ``spec`` note in the logs, else from ``--spec FILE``, else from a
``game.spec`` file next to the logs (``nertz demo`` writes one); in every case it must hash to
the logs' game id. The audit is lenient by default (every problem collected); ``--strict`` stops
at the first error. Exit status: 0 valid, 1 violations found, 2 unreadable input (or a bad
argument).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cli.files import load_spec, refuse_a_spec
from cli.parsers import SPEC_FILE, log_paths
from p2p_nertz.audit import AuditReport, Finding, FindingKind, LogSource, Severity, audit
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.envelope import PROTOCOL_VERSIONS
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.ui.lobby import rules_text
from p2p_nertz.words import counted

__all__ = [
    "SPEC_FILE",
    "find_spec_files",
    "format_report",
    "json_lines",
    "read_spec",
    "sources",
]


read_spec = load_spec  # one reader of spec files for every command


def find_spec_files(logs: list[Path]) -> list[GameSpec]:
    """The readable ``game.spec`` files next to the logs (unreadable ones are skipped)."""
    found: list[GameSpec] = []
    for folder in dict.fromkeys(log.parent for log in logs):
        candidate = folder / SPEC_FILE
        if candidate.is_file():
            try:
                found.append(read_spec(candidate))
            except NertzError:
                continue
    return found


def sources(logs: list[Path], command: str = "audit") -> list[LogSource]:
    """Log sources for the files named on the command line of ``nertz command``.

    Raises:
        NertzError: a path is not a file, or is the game's spec (a usage error, not a
            finding), or a log holds messages of another protocol version than this
            program's.
    """
    log_paths(logs)  # (checked before this module was imported, and again here)
    for log in logs:
        refuse_a_spec(log, f"nertz {command} reads the players' .log files beside it")
    found = [LogSource.from_path(log) for log in logs]
    for source in found:
        try:
            version = source.wire_version()
        except OSError:
            continue  # (the audit says why it cannot read it)
        if version is not None and version not in PROTOCOL_VERSIONS:
            *others, last = map(str, PROTOCOL_VERSIONS)
            readable = f"{', '.join(others)} and {last}" if others else last
            raise NertzError(
                f"{source.name!r} holds messages of protocol version {version}; this nertz "
                f"reads versions {readable} (docs/log-format.md §9)"
            )
    return found


def _cmd_audit(args: argparse.Namespace) -> int:
    logs: list[Path] = args.logs
    spec = read_spec(args.spec) if args.spec is not None else None
    report = audit(
        sources(logs),
        spec=spec,
        candidates=find_spec_files(logs) if spec is None else (),
        strict=args.strict,
        deep=args.deep,
    )
    if args.json:
        for line in json_lines(report):
            print(line)
    else:
        print(format_report(report))
    return report.exit_status


def json_lines(report: AuditReport) -> list[str]:
    """The report for machines, one JSON object per line (docs/audit.md, "JSON output").

    One ``{"event": "finding", "finding": {...}}`` per finding, in the order found, then one
    ``{"event": "verdict", ...}`` with everything else the report holds (the players, logs,
    rounds, totals, and the counts of errors and notices). The finding is nested because a
    finding's own ``event`` field names the game event it is about.
    """
    lines = [json.dumps({"event": "finding", "finding": v.to_dict()}) for v in report.violations]
    summary = report.to_dict()
    del summary["violations"]  # (each was a line of its own)
    lines.append(json.dumps({"event": "verdict", **summary}))
    return lines


def _not_a_cheat(finding: Finding) -> str:
    """For an error that names a member but accuses it of nothing (a log's damage, events a
    log lacks, a member wronged: ``FindingKind.accuses``), words that say so, lest a person
    read the name as the culprit's."""
    if finding.severity is not Severity.ERROR or finding.kind.accuses or finding.seat is None:
        return ""
    who = finding.author if finding.author is not None else f"seat {finding.seat}"
    if finding.kind is FindingKind.UNTRACED_FORFEIT:
        return f" ({who} is the one wronged, not accused)"
    return f" (not a cheat of {who}: about the logs)"


def format_report(report: AuditReport) -> str:
    """The readable report: players, logs, rounds, scores, findings, verdict."""
    lines: list[str] = []
    spec = report.spec
    if spec is not None:
        names = [m.name for m in spec.members]
        lines.append(f"game {spec.game_id.hex()}")
        lines.append("players:")
        for seat, member in enumerate(spec.members):
            # (Seats from 0, as the findings and the notation count them.)
            lines.append(f"  {seat}. {member.name:<16} {member.fingerprint}")
        # (In words, as the lobby shows them: not the spec's `target=None, rounds=1`.)
        first, second = rules_text(spec.rules)
        lines += [f"rules: {first}", f"       {second}"]
        if spec.deal is not Deal.COMMIT:  # (the default unsaid, as in the spec's wire form)
            lines.append(f"deal: {spec.deal} (docs/shuffle.md)")
    else:
        names = []
    lines.append("logs:")
    for info in report.logs:
        if info.copy_of is not None:
            lines.append(
                f"  {info.name}: a copy of {info.copy_of}, {info.records} records: not read"
            )
        elif info.readable:
            by = f"by {info.peer}" if info.peer else ""
            lines.append(f"  {info.name}: {by}, {info.records} records, {info.events} events")
        else:
            lines.append(f"  {info.name}: unreadable")
    if spec is not None:
        lines.append(f"events: {report.events} distinct")
    for r in report.rounds:
        if r.status == "nerts":
            callers = ", ".join(names[c] for c in r.callers)
            how = f"Nerts by {callers} at T*={r.cut}"
        else:
            how = r.status
        scores = "  ".join(
            f"{names[s]} {score:+d}" for s, score in enumerate(r.scores) if score is not None
        )
        signed = f"{len(r.results)}/{len(names)} signed results match"
        lines.append(f"round {r.number}: {how}; {scores or 'not scored'}; {signed}")
    if report.totals and spec is not None:
        totals = ", ".join(f"{n} {t}" for n, t in zip(names, report.totals, strict=True))
        winners = ", ".join(names[w] for w in report.winners) if not spec.rules.pairs else ""
        if spec.rules.pairs:
            winners = ", ".join(f"team {w + 1}" for w in report.winners)
        lines.append(f"totals: {totals}" + (f"; winner: {winners}" if winners else ""))
    why = {d.seat: d for d in report.drops}
    for seat, cut in report.dropped:
        line = f"dropped: {names[seat]} after its event {cut}"
        drop = why.get(seat)
        if drop is not None and drop.reasons:
            line += f" ({', '.join(drop.reasons)})"
        if drop is not None and drop.answers_owed:
            owed = "; ".join(
                f"round {number}, {names[c] if c < len(names) else f'seat {c}'}'s complaint"
                for number, c in drop.answers_owed
            )
            line += f"; never answered the complaint of its box: {owed}"
        lines.append(line)
    errors = len(report.errors)
    notices = len(report.violations) - errors
    for v in report.violations:
        tag = "ERROR " if v.severity is Severity.ERROR else "notice"
        lines.append(f"{tag} {v}{_not_a_cheat(v)}")
    stop = " (stopped at the first error: --strict)" if report.stopped else ""
    found = f"{counted(errors, 'error')}, {counted(notices, 'notice')}"
    lines.append(f"verdict: {report.verdict.upper()}: {found}{stop}")
    return "\n".join(lines)
