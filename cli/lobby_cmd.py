"""``nertz host``, ``join``, ``bot``, ``games`` and ``resume``: convening a LAN game.

A player keeps one key (``nertz keygen``, cli/keygen_cmd.py; its short fingerprint is how
others recognise them).
One player hosts a table (``nertz host``), the others join it by address (``--peer``) or find
it on the LAN (``--discover BROADCAST``, opt-in: nothing is broadcast unless asked). When
everybody is seated and ready the host starts the game (``--players N`` starts by itself);
from then on every member is an equal peer and the host has no special role. ``nertz bot`` is
a joining bot peer. A peer that crashed continues its game with ``nertz resume LOG``.

Output is one line per change (seats, rounds, the result), or JSON lines with ``--json``:
``lobby``, ``table``, ``start``, ``round``, then ``final``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import locale
import logging
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from cli.args import (
    EXIT_FAILED,
    GoneError,
    PortHold,
    deal_from,
    error_text,
    expected_errors,
    liveness_argv,
    liveness_from,
    page_address_usable,
    rules_from,
)
from cli.bots import (
    LEAVE_PATIENCE,
    LobbyBot,
    note_lobby_bots,
    resume_bots,
    signed_in,
    spawn_lobby_bot,
    stop_children,
    stop_processes,
    unnoted_bots_words,
    watch_bots,
)
from cli.ended import LEAVE_PENDING, ended_game, pending_leave, say_ended
from cli.files import make_directory, read_invite_file, refuse_a_spec
from cli.keyfile import (
    config_home,
    default_key_path,
    keep_key,
    kept_key_path,
    load_identity,
    load_key,
)
from cli.node_cmd import (
    final_summary,
    notice_line,
    parent_fd,
    reach_line,
    result_lines,
    run_node,
    say_gone,
    watch_recovery,
)
from cli.parsers import require_player
from cli.places import game_log_name, on_its_own_line, person_key_path
from cli.table import Outcome, run_table
from cli.terminal import open_curses
from p2p_nertz.errors import LogFormatError, NertzError
from p2p_nertz.lobby.messages import TableView
from p2p_nertz.lobby.state import (
    HostLobby,
    LobbyError,
    Session,
    StartRefusedError,
    parse_invite,
    waiting_for,
)
from p2p_nertz.logfile.format import LogHeader, LogSummary
from p2p_nertz.logfile.store import check_not_in_use, read_log
from p2p_nertz.protocol.identity import Identity, PeerId, fingerprint
from p2p_nertz.protocol.peer import (
    Effect,
    OutOfReach,
    Peer,
    PeerConfig,
    Recovered,
    Suspected,
    TableGone,
)
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import MemberDropped, Phase, RoundScored
from p2p_nertz.protocol.unmet import DropWaits, FeedHeld, Owed, VoteShort
from p2p_nertz.rules import Rules
from p2p_nertz.runtime.lobby import LobbyHost, Offer, discover, join_lobby, route_address
from p2p_nertz.runtime.node import PeerNode, read_session, recovery_unfinished
from p2p_nertz.signals import note_terminated, open_receiver, signal_status
from p2p_nertz.ui.lobby import loopback_words, no_guest_words
from p2p_nertz.words import counted

__all__ = ["default_key_path"]

log = logging.getLogger("p2p_nertz.cli")


# -- paths and identities ----------------------------------------------------------------------
_home = config_home  # (the key store and the logs share the rule: cli/keyfile.py)


# -- output ------------------------------------------------------------------------------------
class _Out:
    def __init__(self, json_lines: bool) -> None:
        self.json = json_lines

    def emit(self, event: str, text: str, **fields: Any) -> None:
        if self.json:
            print(json.dumps({"event": event, **fields}), flush=True)
        else:
            print(text, flush=True)

    def table(self, seats: list[dict[str, Any]], waiting: str) -> None:
        """The table as it is now, and what it waits for (issue 15: said in words)."""
        cells = "  ".join(
            f"{s['name']} ({s['fingerprint']}){'' if s['ready'] else ' not ready'}" for s in seats
        )
        self.emit("table", f"table: {cells} · {waiting}", seats=seats, waiting=waiting)


def _rules_words(rules: dict[str, Any], deal: Deal = Deal.COMMIT) -> str:
    """The rules a host shows, and its deal, in words (or as given, if they are not rules we
    know)."""
    from p2p_nertz.ui.lobby import rules_text

    try:
        return " · ".join(rules_text(Rules.from_dict(rules), deal))
    except NertzError:
        return f"not rules this version knows: {rules!r}"


def guest_waits_for(view: TableView) -> str:
    """What a guest's table waits for, in words (it does not know the host's ``--players``:
    when the rules' fewest are seated and ready, it waits for the host)."""
    try:
        rules = Rules.from_dict(view.rules)
    except NertzError:
        return "waiting for rules this version knows"
    host = view.seats[0].name if view.seats else "the host"
    return waiting_for(view.seats, rules) or f"waiting for {host} to start"


def _seats_of(view: TableView) -> list[dict[str, Any]]:
    return [
        {"name": s.name, "fingerprint": fingerprint(s.peer_id), "ready": s.ready}
        for s in view.seats
    ]


# -- the game, once started --------------------------------------------------------------------


def _finish(
    out: _Out, command: str, peer: Peer | None, signum: int | None, gone: TableGone | None = None
) -> int:
    if peer is None:
        print(f"nertz {command}: stopped before the game started", file=sys.stderr)
        return signal_status(signum or signal.SIGINT)
    summary = final_summary(peer, gone)
    names = [m.name for m in peer.spec.members]
    out.emit(
        "final",
        f"{result_lines(summary, names)}\ndigest: {summary['digest']}",
        **{k: v for k, v in summary.items() if k != "event"},
        names=names,
    )
    if signum is not None:
        print(f"nertz {command}: left the game on signal {signum}", file=sys.stderr)
        return signal_status(signum)
    if gone is not None:
        return say_gone(command, gone)
    if not summary["over"]:
        print(f"nertz {command}: the game did not finish", file=sys.stderr)
        return EXIT_FAILED
    return 0


def _notice_printer(out: _Out, names: list[str]) -> Callable[[Effect], None]:
    """What a bot's node says as the game goes (rounds, silences, drops), as text or JSON
    lines: the same for ``host``, ``join``, ``bot`` and ``resume``."""

    def on_notice(effect: Effect) -> None:
        if isinstance(effect, RoundScored):
            totals = "  ".join(f"{names[s]} {t}" for s, t in enumerate(effect.totals))
            out.emit(
                "round",
                f"round {effect.round}: totals {totals}",
                round=effect.round,
                totals=list(effect.totals),
            )
        elif isinstance(effect, Suspected):
            name = names[effect.seat]
            out.emit(
                "suspected" if effect.suspected else "heard",
                f"{name} is silent" if effect.suspected else f"{name} is heard again",
                seat=effect.seat,
                name=name,
            )
        elif isinstance(effect, OutOfReach):
            event, text, fields = reach_line(effect, names)
            out.emit(event, text, **fields)
        elif isinstance(effect, (VoteShort, FeedHeld, Owed, DropWaits)):
            event, text, fields = notice_line(effect, names)
            out.emit(event, text, **fields)
        elif isinstance(effect, MemberDropped):
            name = names[effect.seat]
            how = "left" if effect.left else "was dropped"
            out.emit("dropped", f"{name} {how}", seat=effect.seat, name=name, left=effect.left)

    return on_notice


def _log_dir(args: argparse.Namespace) -> Path:
    """``--log-dir``, made if it is not there. Called first at the start of a command, so a
    log directory that cannot be (a file's path, say) is one line before the lobby opens,
    not after others have sat down.

    Raises:
        NertzError: it cannot be made.
    """
    log_dir: Path = args.log_dir
    make_directory(log_dir, "log directory", "--log-dir")
    return log_dir


def _node(
    args: argparse.Namespace,
    identity: Identity,
    session: Session,
    out: _Out,
    config: PeerConfig,
    *,
    port: PortHold,
) -> tuple[PeerNode, Path]:
    """Our game's node, bound to the endpoint the lobby said (``port``, held since: let go
    just before the bind)."""
    spec = session.spec
    on_notice = _notice_printer(out, [m.name for m in spec.members])
    log_dir = _log_dir(args)
    path = log_dir / game_log_name(spec.game_id, identity.fingerprint)
    node = PeerNode(
        identity,
        spec,
        path,
        bind=session.endpoints[identity.peer_id],
        strategy=args.bot,
        speed=args.speed,
        on_notice=on_notice if args.bot is not None else None,  # no lines over the table
        watchers=args.watcher,
        config=dataclasses.replace(config, fresh=True),  # (made by the lobby we sat at)
    )
    port.release()
    node.bind()
    return node, path


def _announce_start(out: _Out, identity: Identity, session: Session, path: Path) -> None:
    spec = session.spec
    seat = spec.seat_of(identity.peer_id)
    out.emit(
        "start",
        f"game {spec.game_id.hex()[:16]} started: you are seat {seat} "
        f"(seats 0-{spec.seats - 1}, as the table counts), log {path}",
        game_id=spec.game_id.hex(),
        seat=seat,
        players=[m.name for m in spec.members],
        rules=spec.rules.to_dict(),
        deal=spec.deal.value,
        log=str(path),
    )


def _trio_run(command: str, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` under trio; turn the runtime's expected failures into one line.

    A SIGTERM is taken here as a Ctrl-C, inside trio (:func:`_terminated`), wherever the
    command does not take it itself (a node, a table: they leave cleanly): ``nertz``'s own
    handler (p2p_nertz/signals.py) raised KeyboardInterrupt in the middle of trio
    when SIGINT was ignored (a command started with ``&`` by a shell without job control),
    and a page of trio's tracebacks followed "nertz host: interrupted" (``kill`` of a host
    in its lobby).
    """

    async def guarded() -> Any:
        async with trio.open_nursery() as nursery:
            await nursery.start(_terminated)  # (first: a node's own receiver then overrides it)
            result = await fn()
            nursery.cancel_scope.cancel()
            return result

    try:
        return trio.run(guarded)
    except NertzError as exc:
        raise _again(exc) from None
    except BaseExceptionGroup as group:
        errors = expected_errors(group)
        raise _again(errors[0]) from None


async def _terminated(*, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """Until cancelled, raise KeyboardInterrupt in trio at a SIGTERM (as ``nertz``'s handler
    notes it: the children got no signal, cli/args.py), for :func:`_trio_run`."""
    with open_receiver(signal.SIGTERM) as received:
        task_status.started()
        async for _ in received:
            note_terminated()
            raise KeyboardInterrupt


def _again(exc: BaseException) -> NertzError:
    """``exc`` as the one line a command prints, its exit status kept (:class:`GoneError`)."""
    return GoneError(str(exc)) if isinstance(exc, GoneError) else NertzError(error_text(exc))


async def _play_human(node: PeerNode, endpoints: dict[PeerId, str]) -> Outcome:
    """Play ``node`` at the terminal table (curses) until the game is over and read, or left."""
    with open_curses() as terminal:
        encoding = locale.getpreferredencoding(False).lower().replace("-", "")
        outcome = await run_table(node, endpoints, terminal=terminal, symbols="utf" in encoding)
    return dataclasses.replace(outcome, log=node.log_path)


def _finish_human(out: _Out, command: str, outcome: Outcome) -> int:
    if outcome.errors:
        raise NertzError(error_text(outcome.errors[0]))
    if outcome.left and outcome.signal is None and outcome.peer is not None:
        final = outcome.peer.final
        if final.phase is not Phase.OVER or final.left_alone == outcome.peer.seat:
            # The score and the log, as `nertz play` says them: the table, which showed
            # them, is gone (the log was named before the table came up, off the screen now).
            # (Our leave may have ended the game, leaving one member in: §9.3, Left alone.)
            names = [m.name for m in outcome.peer.spec.members]
            totals = "  ".join(f"{names[s]} {t}" for s, t in enumerate(final.game.totals))
            print(f"after {counted(len(final.game.history), 'round')}: {totals}")
            if final.game.result is not None:
                print("winner(s): " + ", ".join(names[w] for w in final.game.result.winners))
            if outcome.log is not None:
                print(on_its_own_line("your signed log", str(outcome.log)))
            if pending_leave(outcome.peer):
                print(LEAVE_PENDING)
            print(f"nertz {command}: you left the game", file=sys.stderr)
            return 0
    return _finish(out, command, outcome.peer, outcome.signal, outcome.gone)


async def _play(
    args: argparse.Namespace, node: PeerNode, endpoints: dict[PeerId, str]
) -> tuple[Peer | None, int | None] | Outcome:
    """The bot plays (the node runs by itself), or the person at the terminal table."""
    if args.bot is not None:
        peer, signum = await run_node(node, endpoints, parent_fd(args))
        return Outcome(peer, signal=signum, gone=node.gone)
    if getattr(args, "web", False):  # (resume --web)
        from cli.web_cmd import resume_in_page  # (the web server: imported for --web only)

        return await resume_in_page(node, endpoints, bind=args.web_bind, open_page=not args.no_open)
    return await _play_human(node, endpoints)


def _done(out: _Out, command: str, result: tuple[Peer | None, int | None] | Outcome) -> int:
    if isinstance(result, Outcome):
        return _finish_human(out, command, result)
    peer, signum = result
    return _finish(out, command, peer, signum)


# -- host --------------------------------------------------------------------------------------
def _spawn_bots(
    args: argparse.Namespace, lobby_endpoint: str, lobby: LobbyHost | None = None
) -> list[LobbyBot]:
    """Start ``--bots`` bots for our table, their stderr in the log directory (NAME.err)."""
    address = lobby_endpoint.removeprefix("tcp://")
    bots = []
    for n in range(args.bots):
        # Its key made here (kept in the key store): its seat is known by it, for its
        # person's resume to start it again (cli/bots.py, note_lobby_bots).
        identity = Identity.generate()
        if lobby is not None and lobby.table.invited is not None:
            lobby.invite(identity.fingerprint)  # (an invite-only table seats its own bots too)
        name = f"bot{n + 1}"
        bot = spawn_lobby_bot(
            address,
            name,
            identity,
            strategy=args.bot_strategy,
            speed=args.bot_speed,
            log_dir=args.log_dir,
            options=liveness_argv(args),
            err=args.log_dir / f"{name}.err",
        )
        bots.append(bot)
    return bots


async def _say_stopped_bots(bots: list[LobbyBot], out: _Out, scope: trio.CancelScope) -> None:
    """Until ``scope`` is cancelled (the game starts), a ``news`` line for each of ``bots``
    that stops, with its last error line (a seat that never fills says why)."""

    def stopped(bot: LobbyBot, said: str) -> None:
        line = f"{bot.name} stopped: {said}"
        out.emit("news", line, line=line)

    with scope:
        await watch_bots(list(bots), stopped)


def _host_address(args: argparse.Namespace) -> str:
    """The address ``nertz host`` announces, once its options are checked (the numbers of
    players, bots and seats: cli/parsers.py).

    Raises:
        NertzError: no way to say when to start.
    """
    if args.players is None and not sys.stdin.isatty():
        raise NertzError("say when to start: --players N (or run in a terminal and press Enter)")
    if args.address is not None:
        return str(args.address)
    if args.discover is not None:
        return route_address(args.discover)
    return "127.0.0.1"


def _table_printer(out: _Out, players: int | None) -> Callable[[HostLobby], None]:
    """What the host prints as its table changes: a ``news`` line for every key that sits,
    leaves or is removed (with auto-start and no invite list, this is how the host sees who
    took a seat: docs/lobby.md §6), and the table with what it waits for."""
    told = [0]

    def on_change(table: HostLobby) -> None:
        for line in table.log[told[0] :]:
            out.emit("news", line, line=line)
        told[0] = len(table.log)
        if table.started is None:
            waiting = waiting_for(table.seats, table.rules, players=players)
            if waiting is None:
                waiting = "everybody is ready: " + (
                    "starting" if players is not None else "press Enter to start"
                )
            out.table(_seats_of(table.view()), waiting)

    return on_change


def _announce_lobby(
    out: _Out, args: argparse.Namespace, lobby: LobbyHost, endpoint: str, invited: set[str] | None
) -> None:
    """The host's first lines: where others join, and whether anybody may sit."""
    out.emit(
        "lobby",
        hosting_words(args.name, lobby.table.identity.fingerprint, endpoint, args.discover),
        endpoint=endpoint,
        fingerprint=lobby.table.identity.fingerprint,
        lobby_id=lobby.table.lobby_id.hex(),
        invited=sorted(invited) if invited is not None else None,
    )
    if invited is None:
        out.emit("open", OPEN_WORDS, line=OPEN_WORDS.replace("\n", " "))


#: What the host is told when anybody may sit (each line within 80 columns).
OPEN_WORDS = (
    "anybody who reaches this lobby may sit (each is shown as they do);\n"
    "--invite FINGERPRINT makes the table invite-only"
)

#: The host's prompt, under the table (each line within 80 columns).
PROMPT_WORDS = (
    "press Enter to start when everybody is ready\n"
    "(or type: remove SEAT|FINGERPRINT, invite FINGERPRINT, help)"
)


def hosting_words(name: str, fingerprint: str, endpoint: str, discover: str | None) -> str:
    """The host's first lines: who hosts, then the command that joins on a line of its own,
    so an 80-column terminal does not cut the address in two ("--peer 127.0.", "0.1:32867"),
    and, on the loopback, that only this machine reaches it (:func:`loopback_words`)."""
    where = endpoint.removeprefix("tcp://")
    lines = [f"hosting as {name} ({fingerprint})", f"others join with: nertz join --peer {where}"]
    if discover:
        lines.append(f"              or: nertz join --discover {discover}")
    if (only := loopback_words("host", where)) is not None:
        lines.append(only)
    return "\n".join(lines)


def _cmd_host(args: argparse.Namespace) -> int:
    config = liveness_from(args)  # (a player, the numbers: checked by cli/parsers.py)
    rules = rules_from(args)
    identity = load_key(args.key)
    out = _Out(args.json)
    address = _host_address(args)
    invited = _invites(args)
    _log_dir(args)
    game_port = PortHold(address)
    interactive = sys.stdin.isatty()
    lobby = LobbyHost(
        identity,
        args.name,
        rules,
        address=address,
        game_port=game_port.port,
        lobby_port=args.port,
        capacity=args.capacity,
        auto_start=args.players,
        broadcast=args.discover,
        beacon_port=args.beacon_port,
        on_change=_table_printer(out, args.players),
        invited=invited,
        deal=deal_from(args),
    )
    bots: list[LobbyBot] = []

    async def main() -> tuple[Peer | None, int | None] | Outcome:
        async with trio.open_nursery() as nursery:
            endpoint = await nursery.start(lobby.serve)
            _announce_lobby(out, args, lobby, endpoint, invited)
            bots.extend(_spawn_bots(args, endpoint, lobby))
            enter = trio.CancelScope()
            if interactive:
                nursery.start_soon(_host_prompt, lobby, out, enter)
            watching = trio.CancelScope()
            nursery.start_soon(_say_stopped_bots, bots, out, watching)
            session = await lobby.wait_started()
            enter.cancel()  # the keys are the table's now
            watching.cancel()
            node, path = _node(args, identity, session, out, config, port=game_port)
            note_lobby_bots(path, session.spec, bots)  # (for `nertz resume` to start them)
            _announce_start(out, identity, session, path)
            result = await _play(args, node, session.endpoints)  # the lobby keeps serving
            nursery.cancel_scope.cancel()
            return result

    result: tuple[Peer | None, int | None] | Outcome | None = None
    try:
        result = _trio_run("host", main)
    finally:
        # After the game the bots finish by themselves; if the person left (or it failed),
        # they go at once, and so does this command (issue 15: no silence after `q`).
        patience = LEAVE_PATIENCE if result is not None and _over(result) else 0.0
        stop_processes([bot.proc for bot in bots], patience)
    assert result is not None  # (_trio_run returned)
    return _done(out, "host", result)


def _over(result: tuple[Peer | None, int | None] | Outcome) -> bool:
    """Whether the game ``result`` tells of is over (rather than left or stopped)."""
    peer = result[0] if isinstance(result, tuple) else result.peer
    return peer is not None and peer.final.phase is Phase.OVER


_PROMPT_HELP = (
    "Enter starts when everybody is ready; remove SEAT|FINGERPRINT unseats a guest (seats "
    "count from 0: the host is 0; refused for the rest of this lobby); invite FINGERPRINT lets "
    "a key sit"
)


def host_command(lobby: LobbyHost, line: str) -> str:
    """Carry out one line typed at the host's prompt; return what to print.

    Commands: an empty line (or ``start``) starts the game; ``remove SEAT`` or ``remove
    FINGERPRINT`` unseats a guest (the seat number from 0, as the table counts: the host is 0);
    ``invite FINGERPRINT`` lets a key sit (and lifts its removal); ``help``.
    """
    word, _, rest = line.strip().partition(" ")
    rest = rest.strip()
    try:
        if word in ("", "start"):
            session = lobby.start()
            return f"starting game {session.game_id.hex()[:16]}"
        if word == "remove" and rest:
            seats = lobby.table.seats
            if rest.isdigit():
                n = int(rest)
                if not 1 <= n < len(seats):
                    return no_guest_words(n, len(seats))
                who = seats[n].peer_id
            else:
                wanted = parse_invite(rest)
                found = [s.peer_id for s in seats[1:] if fingerprint(s.peer_id) == wanted]
                if not found:
                    return f"no guest {wanted} at the table"
                who = found[0]
            lobby.remove(who)
            return f"removed {fingerprint(who)}: refused for the rest of this lobby"
        if word == "invite" and rest:
            return f"{lobby.invite(rest)} may sit"
    except (LobbyError, ValueError) as exc:
        return str(exc)
    return _PROMPT_HELP


async def _host_prompt(lobby: LobbyHost, out: _Out, scope: trio.CancelScope) -> None:
    """Read the host's commands (:func:`host_command`) on standard input until ``scope`` is
    cancelled: waiting for standard input in trio, so nothing is left reading it afterwards."""
    print(PROMPT_WORDS, flush=True)
    fd = sys.stdin.fileno()
    with scope:
        while lobby.table.started is None:
            await trio.lowlevel.wait_readable(fd)
            data = os.read(fd, 4096)
            if not data:
                return
            for line in data.decode(errors="replace").splitlines() or [""]:
                if lobby.table.started is None:
                    print(host_command(lobby, line), flush=True)


def _invites(args: argparse.Namespace) -> set[str] | None:
    """The invite list from ``--invite`` and ``--invite-file`` (``None``: no list).

    Raises:
        NertzError: an entry is not a fingerprint, or the file cannot be read.
    """
    if not args.invite and args.invite_file is None:
        return None
    entries = [("--invite", text) for text in args.invite]
    if args.invite_file is not None:
        entries += read_invite_file(args.invite_file)
    invited = set()
    for where, word in entries:
        try:
            invited.add(parse_invite(word))
        except ValueError as exc:
            raise NertzError(f"{where}: {exc}") from None
    return invited


# -- join and bot ------------------------------------------------------------------------------
async def _find(args: argparse.Namespace, out: _Out) -> Offer:
    wanted = args.host.lower() if args.host else None

    def matches(offer: Offer) -> bool:
        return wanted is None or offer.beacon.fingerprint == wanted

    offers = await discover(
        args.discover, port=args.beacon_port, timeout=args.timeout, until=matches
    )
    chosen = [o for o in offers if matches(o)]
    if not chosen:
        which = f" hosted by {args.host}" if args.host else ""
        raise NertzError(
            f"no table{which} heard on {args.discover}:{args.beacon_port} in {args.timeout:g} s"
        )
    offer = chosen[0]
    b = offer.beacon
    dealt = f", {b.deal} deal" if b.deal is not Deal.COMMIT else ""
    out.emit(
        "found",
        f"found {b.name}'s table ({b.fingerprint}) at "
        f"{offer.address}:{b.port}, {b.taken}/{b.capacity} seated{dealt}",
        host=b.fingerprint,
        endpoint=offer.lobby_endpoint,
        deal=b.deal.value,
    )
    return offer


def _cmd_join(args: argparse.Namespace) -> int:
    config = liveness_from(args)
    # (a player, where the table is: checked by cli/parsers.py)
    # A key given is read before the log directory is made, and a key made after it: a
    # refused command leaves nothing.
    given = None if args.key is None else load_key(args.key)
    _log_dir(args)
    if given is None:  # a bot with no key of its own: a fresh one, kept for resume
        identity = Identity.generate()
        keep_key(identity)  # in the key store: never beside the logs, which go to auditors
    else:
        identity = given
    out = _Out(args.json)

    async def main() -> tuple[Peer | None, int | None] | Outcome:
        host: PeerId | None = None
        lobby_id: bytes | None = None
        if args.peer is not None:
            target, port = args.peer
            lobby_endpoint = f"tcp://{target}:{port}"
            # Said at once, on stderr (stdout is the --json sequence): an address nobody
            # answers at is otherwise silent until the timeout (issue 15).
            print(f"connecting to {target}:{port}…", file=sys.stderr, flush=True)
        else:
            offer = await _find(args, out)
            target, lobby_endpoint = offer.address, offer.lobby_endpoint
            host, lobby_id = offer.beacon.host, offer.beacon.lobby_id
        address = route_address(target)
        game_port = PortHold(address)
        game_endpoint = f"tcp://{address}:{game_port.port}"
        last: list[list[dict[str, Any]]] = []
        shown: list[tuple[dict[str, Any], Deal]] = []

        def on_table(view: TableView) -> None:
            # The rules we would join, said when first shown (we play those or none: a host
            # that shows others is left, docs/lobby.md §5).
            if not shown or shown[-1] != (view.rules, view.deal):
                shown.append((view.rules, view.deal))
                words = _rules_words(view.rules, view.deal)
                out.emit("rules", f"rules: {words}", rules=view.rules, deal=view.deal.value)
            seats = _seats_of(view)
            if not last or last[-1] != seats:
                last.append(seats)
                out.table(seats, guest_waits_for(view))

        kwargs: dict[str, Any] = {"host": host}
        if lobby_id is not None:
            kwargs["lobby_id"] = lobby_id
        try:
            session = await join_lobby(
                identity,
                args.name,
                game_endpoint,
                lobby_endpoint,
                timeout=args.timeout,
                on_table=on_table,
                **kwargs,
            )
        except StartRefusedError as exc:
            if args.json:  # (in text, the error line says it)
                out.emit("refused", "", reason=str(exc))
            raise NertzError(f"did not join: {exc}") from None
        node, path = _node(args, identity, session, out, config, port=game_port)
        _announce_start(out, identity, session, path)
        return await _play(args, node, session.endpoints)

    return _done(out, args.command, _trio_run(args.command, main))


# -- games -------------------------------------------------------------------------------------
def _cmd_games(args: argparse.Namespace) -> int:
    out = _Out(args.json)

    async def main() -> list[Offer]:
        return await discover(args.discover, port=args.beacon_port, timeout=args.timeout)

    offers: list[Offer] = _trio_run("games", main)
    for offer in offers:
        b = offer.beacon
        dealt = f"{b.deal} deal  " if b.deal is not Deal.COMMIT else ""
        out.emit(
            "game",
            f"{b.name} ({b.fingerprint})  {b.taken}/{b.capacity} seated  {dealt}"
            f"nertz join --peer {offer.address}:{b.port}",
            host=b.fingerprint,
            name=b.name,
            taken=b.taken,
            capacity=b.capacity,
            deal=b.deal.value,
            endpoint=offer.lobby_endpoint,
        )
    if not offers and not args.json:
        print(f"no table heard on {args.discover}:{args.beacon_port} in {args.timeout:g} s")
    return 0


# -- resume ------------------------------------------------------------------------------------
def _read_to_resume(path: Path) -> tuple[list[Any], LogHeader, LogSummary, Any]:
    """The records, header, summary and session of the log ``path`` to resume from, or a
    :class:`NertzError` saying why there is none (a live node writes it; unreadable; damaged)."""
    try:
        check_not_in_use(path)  # (first: the node that writes it holds its address too)
    except BlockingIOError as exc:
        raise NertzError(
            f"{str(path)!r} is {exc.strerror}, still playing the game (stop it to resume here)"
        ) from None
    refuse_a_spec(path, "nertz resume reads your own .log of the game")
    try:
        with read_log(path) as reader:
            records = list(reader)
            header = reader.header
            summary = reader.summary()
        found = read_session(records)
    except OSError as exc:
        raise NertzError(f"cannot read {str(path)!r}: {exc.strerror}") from None
    except LogFormatError as exc:
        raise NertzError(f"{str(path)!r}: {exc}") from None
    if header is None or summary.fatal is not None:
        # What the reader found, said: a log cut inside its header (a crash or a cut at its
        # first bytes) is not garbage, but holds nothing to resume from either.
        # (In the words every command that reads a log uses: LogProblem.words.)
        what = "not a p2p-nertz log we can resume" if summary.fatal is None else summary.fatal.words
        raise NertzError(f"{str(path)!r} is {what}")
    return records, header, summary, found


def _cmd_resume(args: argparse.Namespace) -> int:
    config = liveness_from(args)
    path: Path = args.log
    records, header, summary, found = _read_to_resume(path)
    recover = _recovery_reason(path, summary, args, unfinished=recovery_unfinished(records))
    if found is None:
        raise NertzError(f"{str(path)!r} does not say which game it is (no spec note)")
    spec, endpoints = found
    if args.key is not None:  # (the log's writer named: its public key is no key to give)
        identity = load_key(args.key, players=[header.peer_id])
    else:
        identity = _find_key(path, header.peer_id)
    if identity.peer_id != header.peer_id:
        raise NertzError(f"{str(path)!r} is the log of {fingerprint(header.peer_id)}, not yours")
    if set(endpoints) != set(spec.peer_ids):
        raise NertzError(f"{str(path)!r} does not hold every member's endpoint")
    # Left: no node, no table. Over: no table (a bot's node runs, as ``nertz node`` does, to
    # ack the end for members still waiting on us). cli/ended.py; a cut tail undoes neither.
    ended = ended_game(identity, spec, records, over=args.bot is None)
    if ended is not None and (ended.left_round is not None or args.bot is None):
        return say_ended("resume", path, spec, ended, as_json=args.json)
    require_player(args, "resume")
    page_address_usable(args)
    out = _Out(args.json)
    args.log_dir = path.parent
    session = Session(spec, endpoints)
    names = [m.name for m in spec.members]
    node = PeerNode(
        identity,
        spec,
        path,
        bind=endpoints[identity.peer_id],
        strategy=args.bot,
        speed=args.speed,
        on_notice=_notice_printer(out, names) if args.bot is not None else None,
        watchers=args.watcher,
        config=config,
        recover=args.recover,
        cut_damaged_tail=args.cut_damaged_tail,
    )
    out.emit(
        "resume",
        f"resuming game {spec.game_id.hex()[:16]} from {path}",
        game_id=spec.game_id.hex(),
        log=str(path),
    )
    if recover is not None:
        text, fields = recover
        out.emit("recovering", f"{text}; recovering our own events from the others", **fields)
        if args.bot is not None:  # (no lines over the terminal table)
            node.add_listener(lambda effect: _say_recovered(out, names, effect))

    async def main() -> tuple[Peer | None, int | None] | Outcome:
        async with trio.open_nursery() as nursery:
            if recover is not None:
                say = _say_waiting(out, names) if args.bot else None
                nursery.start_soon(watch_recovery, node, names, say)
            result = await _play(args, node, session.endpoints)
            nursery.cancel_scope.cancel()
            return result

    # A quick game's bots come back with their person (they stopped with the table).
    bots = resume_bots(path, spec, endpoints, signed_in(records, spec))
    if (unnoted := unnoted_bots_words(path, spec, identity.peer_id)) is not None:
        out.emit("bots_not_started", unnoted, line=unnoted)
    result: tuple[Peer | None, int | None] | Outcome | None = None
    try:
        result = _trio_run("resume", main)
    finally:
        stop_children(bots, LEAVE_PATIENCE if result is not None and _over(result) else 0.0)
    return _done(out, "resume", result)


def _find_key(log: Path, peer_id: bytes) -> Identity:
    """The key of the log's writer, found without ``--key``: in the key store by its
    fingerprint (a bot's, or a quick game's person's), else the player's own key if it is
    that one, else beside the log (where earlier versions kept a bot's key).

    Raises:
        NertzError: none of them is the key, or one that is cannot be used.
    """
    name = fingerprint(peer_id)
    candidates = (kept_key_path(name), person_key_path(name), default_key_path())
    for candidate in (*candidates, log.parent / f"{name}.key"):
        if candidate.exists():
            identity = load_identity(candidate)
            if identity.peer_id == peer_id:
                return identity
    raise NertzError(
        f"no key {name} in {str(kept_key_path(name).parent)!r} or {str(default_key_path())!r}; "
        f"give the key of {str(log)!r} with --key"
    )


def _recovery_reason(
    path: Path, summary: LogSummary, args: argparse.Namespace, *, unfinished: bool
) -> tuple[str, dict[str, Any]] | None:
    """Why the resumed peer must learn its own feed from the others first (the words and the
    JSON fields), or ``None``: its log is whole (docs/protocol.md §9.6).

    Raises:
        NertzError: the log is damaged before its end, or its tail is damaged and
            ``--cut-damaged-tail`` was not given.
    """
    at = summary.good_end
    inside = [p for p in summary.problems if p.offset < at]
    if inside:
        raise NertzError(
            f"{str(path)!r} is damaged before its last good record ({inside[0]}); "
            "it cannot be resumed"
        )
    if summary.problems:
        if not args.cut_damaged_tail:
            raise NertzError(
                f"{str(path)!r}: the tail after byte {at} is damaged, not torn "
                f"({summary.problems[0]}); it may hold an event we sent. To cut it and take "
                f"our own events back from the others: nertz resume --cut-damaged-tail {path}"
            )
        return (
            f"the log's tail after byte {at} was damaged ({summary.tail_bytes} bytes cut)",
            {"reason": "damaged", "at": at, "cut": summary.tail_bytes},
        )
    if summary.tail_bytes:
        return (
            f"{summary.torn_words()}; cut at byte {at}",
            {"reason": "torn", "at": at, "cut": summary.tail_bytes},
        )
    if unfinished:
        return (
            "a recovery begun earlier did not finish",
            {"reason": "unfinished", "at": at, "cut": 0},
        )
    if args.recover:
        return ("--recover: the log may have lost its end", {"reason": "asked", "at": at, "cut": 0})
    return None


def _say_waiting(out: _Out, names: list[str]) -> Callable[[tuple[int, ...]], None]:
    """What a resume says while its recovery waits (:func:`~cli.node_cmd.watch_recovery`)."""

    def say(waiting: tuple[int, ...]) -> None:
        who = ", ".join(names[s] for s in waiting) or "our own events they announced"
        out.emit(
            "waiting",
            f"waiting for {who}: nothing is signed until we know what they hold of ours",
            seats=list(waiting),  # (from 0, as the table counts)
            names=[names[s] for s in waiting],
        )

    return say


def _say_recovered(out: _Out, names: list[str], effect: Effect) -> None:
    if not isinstance(effect, Recovered):
        return
    holders = [names[s] for s in effect.holders]
    if effect.head > effect.first:
        span = f"{effect.first + 1}" + (f"-{effect.head}" if effect.head > effect.first + 1 else "")
        text = f"recovered own events {span} from {', '.join(holders)}"
    else:
        text = f"no own event was missing (our log holds all {effect.first} the others hold)"
    out.emit(
        "recovered",
        text + "; playing on",
        first=effect.first + 1,
        last=effect.head,
        holders=holders,
    )
