"""``nertz replay LOG...``: step through a finished game, or print it one event per line.

``--text`` prints every event the game counts, in the total order, one line each: round,
Lamport time, author, the event in the notation, and for a claim whether it won, tied or lost
(to whom); a legend saying so comes first, on stderr (stdout stays one line per event for
what reads it). Without ``--text`` the replay is interactive, on plain lines of stdin: it shows the
tableaux and the lake after each step (face-down cards as ``??``, as every peer saw them).

Commands: ``n`` or Enter (next), ``b`` (back), ``n 10``/``b 10`` (ten steps), ``r 2`` (the
start of round 2), ``e 120`` (step 120), ``e alice:14`` (alice's event 14), ``end``, ``q``.
``--web`` steps through it in the browser table instead (:mod:`p2p_nertz.web.replay`).

The logs are audited first (as ``nertz audit``); the game spec is found the same way. Exit
status: 0 when the logs are valid, 1 if the audit found violations (they are shown), 2 if they
cannot be read (one line naming the first unreadable input).
"""

from __future__ import annotations

import argparse
import io
import select
import sys
from pathlib import Path
from typing import TextIO

from cli.audit_cmd import find_spec_files, format_report, read_spec, sources
from p2p_nertz.audit.replay import STEP_LEGEND, Replay, load, step_line
from p2p_nertz.errors import NertzError
from p2p_nertz.words import counted

__all__ = ["interact"]


def _cmd_replay(args: argparse.Namespace) -> int:
    logs: list[Path] = args.logs
    spec = read_spec(args.spec) if args.spec is not None else None
    loaded = load(
        sources(logs, "replay"), spec=spec, candidates=find_spec_files(logs) if spec is None else ()
    )
    if not isinstance(loaded, Replay):
        errors = loaded.errors
        if loaded.unreadable and errors:  # (one line, as every command's unreadable input)
            more = f" (and {len(errors) - 1} more: nertz audit lists them)" if errors[1:] else ""
            raise NertzError(f"cannot replay: {errors[0]}{more}")
        print(format_report(loaded), file=sys.stderr)
        return loaded.exit_status
    if args.web and not args.text:
        from cli.web_cmd import replay_in_browser  # (trio and the page's server: only for --web)

        replay_in_browser(loaded, bind=args.web_bind, open_page=not args.no_open)
    elif args.text:
        # The legend on stderr: a person sees it first, and stdout stays one line per event
        # for anything that reads it. Nobody reads the lines once the reader has gone (`| true`):
        # then no legend either, and the command ends quietly as any other.
        if read_by_someone(sys.stdout):
            print("\n".join(STEP_LEGEND), file=sys.stderr)
        for step in loaded.steps:
            print(step_line(step, loaded.spec))
        for v in loaded.report.violations:
            if v.seq is None or v.event is None:
                print(f"!! {v}")  # findings about files and copies, not about one event
    else:
        interact(loaded, sys.stdin, sys.stdout)
    return loaded.report.exit_status


def read_by_someone(stream: TextIO) -> bool:
    """Whether ``stream`` may still have a reader: ``False`` only for a pipe whose read end is
    closed (poll(2) reports ``POLLERR`` on the write end then); a stream with no descriptor
    (a test's capture) or any other file counts as read."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return True
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return not any(events & select.POLLERR for _, events in poller.poll(0))


def interact(replay: Replay, stdin: TextIO, out: TextIO) -> None:
    """The line-command stepper (module docstring), reading commands from ``stdin``."""
    names = {m.name.lower(): seat for seat, m in enumerate(replay.spec.members)}
    at = 0
    total = len(replay)
    out.write(
        f"replay of game {replay.spec.game_id.hex()[:16]}: {total} events, "
        f"{counted(len(replay.report.rounds), 'round')}, audit {replay.report.verdict}\n"
        "commands: n [k], b [k], r ROUND, e STEP, e NAME:SEQ, end, q\n"
    )
    out.write("".join(f"{line}\n" for line in STEP_LEGEND))
    _show(replay, at, out)
    while True:
        out.write("> ")
        out.flush()
        line = stdin.readline()
        if not line:
            out.write("\n")
            return
        words = line.split()
        command = words[0].lower() if words else "n"
        arg = words[1] if len(words) > 1 else None
        target: int | None = None
        if command in ("q", "quit", "exit"):
            return
        if command in ("n", "next", "b", "back"):
            count = _number(arg, 1)
            if count is None:
                out.write(f"not a number: {arg!r}\n")
                continue
            target = at + count if command.startswith("n") else at - count
        elif command in ("r", "round"):
            number = _number(arg, None)
            found = replay.round_start(number) if number is not None else None
            if found is None:
                rounds = len(replay.report.rounds)
                have = f"rounds 0-{rounds}" if rounds > 1 else f"round 0 or {rounds}"
                what = "r wants a round" if arg is None else f"no round {arg!r} in this game"
                out.write(f"{what}: give {have} (0: before the deal)\n")
                continue
            target = found
        elif command in ("e", "event"):
            target = _event(replay, names, arg)
            if target is None:
                what = "e wants an event" if arg is None else f"no event {arg!r}"
                out.write(f"{what}: give a step number or NAME:SEQ\n")
                continue
        elif command == "end":
            target = total
        else:
            out.write(f"unknown command {command!r}: n [k], b [k], r ROUND, e STEP, end, q\n")
            continue
        at = max(0, min(total, target))
        _show(replay, at, out)


def _number(text: str | None, default: int | None) -> int | None:
    if text is None:
        return default
    return int(text) if text.isdigit() else None


def _event(replay: Replay, names: dict[str, int], arg: str | None) -> int | None:
    if arg is None:
        return None
    if arg.isdigit():
        index = int(arg)
        return index if 0 <= index <= len(replay) else None
    who, _, seq = arg.rpartition(":")
    seat = names.get(who.lower())
    if seat is None and who.isdigit() and 0 <= int(who) < replay.spec.seats:
        seat = int(who)  # (from 0, as the table and the notation count)
    if seat is None or not seq.isdigit():
        return None
    return replay.find(seat, int(seq))


def _show(replay: Replay, at: int, out: TextIO) -> None:
    """Print step ``at`` and the table after it."""
    if at == 0:
        out.write(f"step 0/{len(replay)}: before the first event\n")
        return
    step = replay.steps[at - 1]
    out.write(f"step {at}/{len(replay)}: {step_line(step, replay.spec)}\n")
    state = replay.state_at(at)
    table = state.table
    names = [m.name for m in replay.spec.members]
    out.write(f"round {state.round.number}, {state.phase.value}\n")
    if table is None:
        return
    for line in str(table).splitlines()[1:]:
        head, sep, rest = line.partition("> ")
        label = names[int(head)] if head.isdigit() else "lake"
        out.write(f"  {label:<10} {rest if sep else line}\n")
