"""Bot processes started by a command for its person: spawning them and stopping them.

One home for both: ``nertz host --bots``, the lobby screen's ``b``, ``nertz play --bots`` and
``nertz demo`` start bots here and stop them here. A bot that is stopped gets SIGTERM, which
makes its node sign a ``leave`` and go (``nertz bot``/``nertz node`` handle it); one that does
not go within :data:`TERM_PATIENCE` is killed.

A bot dies with the command that started it, whatever kills that command: each is started
``--stop-with-stdin`` with a pipe on its standard input whose other end only the command
holds (never inherited: subprocess opens it close-on-exec), and the kernel closes that end
when the command ends, killed (SIGKILL, out of memory) or not; the bot then stops at once,
signing nothing more (cli/node_cmd.py, ``ParentGone``). Left running, it played on alone, and
a resume met it beside the ones it started (session 31). A pipe rather than Linux's
``PR_SET_PDEATHSIG``: it works on every Unix, and it follows the process, where the death
signal follows the *thread* that started the child (a bot started from a worker thread would
die with that thread).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from cli.keyfile import keep_key
from cli.places import game_log_name, kept_key_path
from p2p_nertz.errors import NertzError
from p2p_nertz.logfile import Record as LogRecord
from p2p_nertz.logfile import RecordKind
from p2p_nertz.protocol.envelope import InvalidMessageError, decode_unverified
from p2p_nertz.protocol.identity import Identity, PeerId, fingerprint
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.signals import held
from p2p_nertz.words import plural

TERM_PATIENCE = 5.0  # seconds a bot has to leave after SIGTERM before it is killed
LEAVE_PATIENCE = 15.0  # seconds the bots get to finish by themselves after a game is over
_POLL = 0.05  # seconds between looks at the processes while letting them finish
#: What a node started without endpoints binds: a port of 127.0.0.1 the system picks then.
FREE_PORT = "tcp://127.0.0.1:0"
BIND_PATIENCE = 60.0  # seconds a node started without endpoints has to bind and say its port
#: Seconds a bot started for a table waits for the table's host to answer (first, and again
#: once seated). Its parent stops it when the person leaves, so only a host that died leaves it
#: waiting that long; a host that is merely slow (a busy machine: CI's bot gave up after the
#: 10 s a person's ``nertz join`` waits, and never sat down) does not lose it.
BOT_PATIENCE = 60.0
_BIND_POLL = 0.01  # seconds between looks at its output meanwhile
_BOT_CHECK = 0.5  # seconds between looks at the bots a lobby started


def stop_processes(procs: Sequence[subprocess.Popen[bytes]], patience: float = 0.0) -> None:
    """Let ``procs`` finish by themselves for ``patience`` seconds, then terminate them
    (SIGTERM: a bot leaves cleanly), and kill any still running after
    :data:`TERM_PATIENCE`.

    A person who left a game passes no patience: the bots go at once, and the command that
    started them returns at once too (issue 15: ``q`` at a hosted table with bots).
    """
    end = time.monotonic() + patience
    while time.monotonic() < end and any(p.poll() is None for p in procs):
        time.sleep(_POLL)
    running = [p for p in procs if p.poll() is None]
    for proc in running:
        proc.send_signal(signal.SIGTERM)
    end = time.monotonic() + TERM_PATIENCE
    for proc in running:
        try:
            proc.wait(max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for proc in procs:  # (its pipe, once it has gone: closing it first would stop it unheard)
        if proc.stdin is not None:
            proc.stdin.close()


def spawn_lobby_bot(
    where: str,
    name: str,
    identity: Identity,
    *,
    strategy: str,
    speed: int,
    log_dir: Path,
    options: Sequence[str] = (),
    err: Path | None = None,
    own_session: bool = False,
) -> LobbyBot:
    """Start a ``nertz bot`` process that joins the lobby at ``where`` (``HOST:PORT``).

    Args:
        where: the lobby's address.
        name: the bot's name at the table.
        identity: its key, made by the caller (an invite-only table invites it first), kept
            in the key store: the bot's seat in the game is known by it, for
            :func:`note_lobby_bots`, and ``nertz resume`` finds it there.
        strategy: its strategy.
        speed: its speed, 1-10.
        log_dir: where its log goes.
        options: more options, for ``nertz bot`` now and ``nertz node`` when it is resumed
            (its liveness timers).
        err: a file its stderr is appended to (default: nowhere).
        own_session: start it in its own session, so that a Ctrl-C at our terminal is for the
            player, not the bots (they are then stopped by :func:`stop_processes`).

    Returns:
        The bot, to be watched (:func:`watch_bots`) and stopped.

    Raises:
        NertzError: the log directory cannot be made.
    """
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NertzError(f"cannot create {str(log_dir)!r}: {exc.strerror}") from None
    key = keep_key(identity)
    command = [
        sys.executable, "-m", "cli", "bot", "--peer", where, "--name", name,
        "--key", str(key), "--strategy", strategy, "--speed", str(speed),
        "--log-dir", str(log_dir), "--json", "--timeout", f"{BOT_PATIENCE:g}",
        "--stop-with-stdin", *options,
    ]  # fmt: skip
    if err is None:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=own_session,
        )
        return LobbyBot(name, proc, identity.peer_id, strategy, str(speed), tuple(options))
    with err.open("ab") as errors:
        start = errors.tell()  # (a bot of its name that stopped wrote before: not its lines)
        proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=own_session,
        )
    return LobbyBot(
        name, proc, identity.peer_id, strategy, str(speed), tuple(options), err=err, start=start
    )


@dataclass
class LobbyBot:
    """A bot started for a table (:func:`spawn_lobby_bot`), watched by the lobby that started
    it: a bot that stops before the game is said, with its last error line, not left as a
    seat that never fills."""

    name: str
    proc: subprocess.Popen[bytes]
    peer_id: PeerId
    """Its key's (its seat, once the game starts)."""
    strategy: str
    speed: str
    options: tuple[str, ...] = ()
    """Its ``nertz bot`` options that ``nertz node`` takes too (its liveness timers)."""
    err: Path | None = None
    """The file its stderr is appended to."""
    start: int = 0
    """Where in :attr:`err` its own lines start (an earlier bot of its name wrote before)."""

    def stopped(self) -> str | None:
        """``None`` while it runs; once it has ended, what it said last (its last line on
        stderr, or how it ended)."""
        status = self.proc.poll()
        if status is None:
            return None
        said = last_line(self.err, self.start) if self.err is not None else None
        if said is not None:  # (its command's name is no news where the bot's name is said)
            return said.removeprefix("nertz bot: ").removeprefix("error: ")
        return f"killed by signal {-status}" if status < 0 else f"exit status {status}"


async def watch_bots(bots: list[LobbyBot], stopped: Callable[[LobbyBot, str], None]) -> None:
    """Until cancelled (the game starts), call ``stopped(bot, what_it_said)`` for each of
    ``bots`` that stops, and take it out of the list: a seat that never fills says why (CI's
    lobby showed "started a greedy bot" and then nothing, its reason only in a file)."""
    import trio  # (here: ``nertz demo``, which starts node processes, runs no trio itself)

    while True:
        await trio.sleep(_BOT_CHECK)
        for bot in list(bots):
            said = bot.stopped()
            if said is not None:
                bots.remove(bot)
                stopped(bot, said)


def last_line(path: Path, start: int = 0) -> str | None:
    """The last line that is not blank of the file at ``path`` from byte ``start`` on
    (``None``: none, or no file)."""
    try:
        with path.open("rb") as f:
            f.seek(start)
            text = f.read().decode(errors="replace")
    except OSError:
        return None
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else None


@dataclass
class NodeChild:
    seat: int
    name: str
    fingerprint: str
    log: Path
    out: Path
    err: Path
    proc: subprocess.Popen[bytes] | None = None
    files: list[IO[bytes]] = field(default_factory=list)
    stops_with_stdin: bool = False
    """Started ``--stop-with-stdin`` (:func:`start_node_child`): its stdin stays open once the
    others' endpoints are written; else it is closed then (a script's child)."""

    def final(self) -> dict[str, Any] | None:
        for line in reversed(self.out.read_text(errors="replace").splitlines()):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict) and data.get("event") == "final":
                return data
        return None

    def last_error(self) -> str:
        """The last line the node wrote on its stderr (its error file), or why there is none.

        A node that stopped because its disk is full could not write its error there either
        (the file is on the same disk): that is said, not "no message"."""
        line = last_line(self.err)
        if line:
            return line
        try:
            full = os.statvfs(self.err.parent).f_bavail == 0
        except OSError:
            full = False
        if full:
            return (
                f"no message: the disk of {str(self.err.parent)!r} is full (its log and its error)"
            )
        return "no message"


def start_node_child(
    workdir: Path,
    spec_path: Path,
    spec: GameSpec,
    identity: Identity,
    *,
    seat: int,
    name: str,
    stem: str,
    endpoint_of: Mapping[PeerId, str] | None,
    strategy: str,
    speed: str,
    own_session: bool = False,
    options: Sequence[str] = (),
    fresh: bool = True,
    into: list[NodeChild] | None = None,
) -> NodeChild:
    """Start one bot peer as a ``nertz node`` process; its log and output are
    ``workdir/STEM.log``, ``.out`` and ``.err``, its key is in the key store (never beside the
    logs: cli/keyfile.py).

    It is started ``--fresh`` (``PeerConfig.fresh``), as the person's own node of ``nertz
    play`` is: the command made the game and the key just now and the log is new, so no other
    process of the key can have signed in it, and a member silent from the start is abandoned
    (or voted out) as at a lobby's game, not waited for as a second machine's would be.

    Args:
        endpoint_of: every member's endpoint, its own to bind; or ``None``: the node binds a
            free port of 127.0.0.1 itself and waits for the others' endpoints, which
            :func:`introduce_children` gives it (no port is picked before the bind).
        own_session: start it in its own session, so a Ctrl-C at our terminal does not
            reach it (it is then stopped by :func:`stop_children`).
        options: more ``nertz node`` options (its liveness timers, say).
        fresh: the game was made just now (above); ``False``: the bot is resumed from its
            log (:mod:`cli.bot_resume`), its output appended to the files it wrote before.
        into: the caller's list of the children it stops, the child added to it as it
            starts, both held against a stopping signal (:func:`~p2p_nertz.signals.held`):
            a SIGTERM between the two (the start of a process takes a while at a load of
            40) left a node no stop reached, playing alone until it saw its stdin's end
            (session 44: seconds after ``nertz demo`` was gone).
    """
    append = not fresh
    key = keep_key(identity)
    child = NodeChild(
        seat,
        name,
        identity.fingerprint,
        workdir / f"{stem}.log",
        workdir / f"{stem}.out",
        workdir / f"{stem}.err",
    )
    bind = FREE_PORT if endpoint_of is None else endpoint_of[identity.peer_id]
    command = [
        sys.executable, "-m", "cli", "node", "--key", str(key), "--spec", str(spec_path),
        "--bind", bind, "--log", str(child.log),
        "--bot", strategy, "--speed", speed, "--json", "--stop-with-stdin",
        *(["--fresh"] if fresh else []), *options,
    ]  # fmt: skip
    if endpoint_of is None:
        command.append("--peers-on-stdin")
    else:
        command += [f"--peer={line}" for line in peer_lines(spec, identity.peer_id, endpoint_of)]
    out = child.out.open("ab" if append else "wb")
    err = child.err.open("ab" if append else "wb")
    child.files = [out, err]
    with held():
        child.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,  # (held open: the bot stops when it ends, cli/node_cmd.py)
            stdout=out,
            stderr=err,
            start_new_session=own_session,
        )
        if into is not None:
            into.append(child)
    assert child.proc.stdin is not None  # (closed with the output files: stop_children)
    child.files.append(child.proc.stdin)
    child.stops_with_stdin = True
    return child


def peer_lines(spec: GameSpec, own: PeerId, endpoint_of: Mapping[PeerId, str]) -> list[str]:
    """The ``SEAT=ENDPOINT`` items (``nertz node --peer``) of every member but ``own``."""
    return [f"{seat}={endpoint_of[pid]}" for seat, pid in enumerate(spec.peer_ids) if pid != own]


def introduce_children(
    children: Sequence[NodeChild],
    spec: GameSpec,
    known: Mapping[PeerId, str],
    timeout: float = BIND_PATIENCE,
) -> dict[PeerId, str]:
    """Wait for each child started without endpoints (:func:`start_node_child`) to say the
    port it bound, then give each the other members' endpoints; return every member's.

    The children bind before anyone needs their ports, so no other program can take a port
    between its pick and its bind (the window a pick by the parent left open).

    Args:
        children: the nodes started with ``endpoint_of=None``.
        spec: the game.
        known: the endpoints of the members that are not among ``children`` (the person's own
            node, bound in this process).
        timeout: seconds each child has to bind.

    Raises:
        NertzError: a child stopped, or did not bind in time (its last error line says why).
    """
    endpoint_of = dict(known)
    for child in children:
        endpoint_of[spec.peer_ids[child.seat]] = _bound_endpoint(child, timeout)
    for child in children:
        assert child.proc is not None and child.proc.stdin is not None
        own = spec.peer_ids[child.seat]
        text = "".join(f"{line}\n" for line in peer_lines(spec, own, endpoint_of)) + "\n"
        try:
            child.proc.stdin.write(text.encode())
            if child.stops_with_stdin:  # (then its end is ours: the bot stops with it)
                child.proc.stdin.flush()
            else:
                child.proc.stdin.close()
        except OSError:  # (it stopped: its own error says why, as for any failing node)
            raise NertzError(f"{child.name} stopped: {child.last_error()}") from None
    return endpoint_of


def _bound_endpoint(child: NodeChild, timeout: float) -> str:
    """The endpoint ``child`` reports on its first line (``{"event": "bound", ...}``)."""
    assert child.proc is not None
    end = time.monotonic() + timeout
    while True:
        lines = child.out.read_text(errors="replace").splitlines()
        if lines and lines[0].endswith("}"):
            try:
                data = json.loads(lines[0])
            except ValueError:
                data = None
            if isinstance(data, dict) and data.get("event") == "bound":
                return str(data["endpoint"])
            raise NertzError(f"{child.name} did not say its port: {lines[0][:80]!r}")
        if child.proc.poll() is not None:
            raise NertzError(f"{child.name} stopped: {child.last_error()}")
        if time.monotonic() >= end:
            raise NertzError(f"{child.name} did not bind a port in {timeout:g} s")
        time.sleep(_BIND_POLL)


def stop_children(children: list[NodeChild], patience: float = 0.0) -> None:
    """Terminate (then kill) any child still running, and close the output files.

    Args:
        children: the nodes.
        patience: seconds to let them finish by themselves before sending SIGTERM.
    """
    stop_processes([c.proc for c in children if c.proc is not None], patience)
    for c in children:
        for f in c.files:
            f.close()


# -- the bots of a game, resumed with it ---------------------------------------------------------


def bots_note(log: Path) -> Path:
    """Where the bots a command started for the person whose log is ``log`` are named, so
    that ``nertz resume LOG`` starts them again: beside it, ``LOG.bots`` (as ``LOG.page``)."""
    return log.with_name(log.name + ".bots")


@dataclass(frozen=True, slots=True)
class TableBot:
    """One bot of a game started by a person's command, as :func:`bots_note` keeps it."""

    seat: int
    name: str
    stem: str
    """Its log's name without ``.log``, in the person's log's directory."""
    strategy: str
    speed: str
    options: tuple[str, ...] = ()


def note_bots(log: Path, spec: GameSpec, bots: Sequence[TableBot]) -> None:
    """Name ``bots``, of the game ``spec``, beside the person's ``log`` (:func:`bots_note`).

    Raises:
        NertzError: it cannot be written.
    """
    noted = [{**asdict(b), "options": list(b.options)} for b in bots]
    text = json.dumps({"game": spec.game_id.hex(), "bots": noted})
    path = bots_note(log)
    try:
        path.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise NertzError(f"cannot write {str(path)!r}: {exc.strerror}") from None


def note_lobby_bots(log: Path, spec: GameSpec, bots: Sequence[LobbyBot]) -> None:
    """Name the bots a lobby started (``nertz host --bots``, the ``play`` lobby's ``b``) that
    sit in the game ``spec`` beside the person's ``log``: their logs are the lobby game's
    (:func:`~cli.places.game_log_name`) in the same directory. Nothing is written for a game
    without them.

    Raises:
        NertzError: the note cannot be written.
    """
    seated = [
        TableBot(
            spec.seat_of(b.peer_id), b.name,
            game_log_name(spec.game_id, fingerprint(b.peer_id)).removesuffix(".log"),
            b.strategy, b.speed, b.options,
        )
        for b in bots
        if b.peer_id in spec.peer_ids
    ]  # fmt: skip
    if seated:
        note_bots(log, spec, seated)


def noted_bots(log: Path, spec: GameSpec) -> list[TableBot]:
    """The bots :func:`note_bots` noted beside ``log`` for the game ``spec`` (none: no command
    started bots for its person, or the note is not this game's or not readable as one)."""
    try:
        data = json.loads(bots_note(log).read_text(encoding="utf-8"))
        if data.get("game") != spec.game_id.hex():
            return []
        bots = [TableBot(**{**b, "options": tuple(b["options"])}) for b in data["bots"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return []
    # (Only what a command writes: a seat of the game, a name of a file in its directory.)
    return [
        b
        for b in bots
        if b.seat in range(spec.seats)
        and all(isinstance(v, str) for v in (b.stem, b.strategy, b.speed, *b.options))
        and b.stem
        and Path(b.stem).name == b.stem
    ]


def unnoted_bots_words(log: Path, spec: GameSpec, own: PeerId) -> str | None:
    """What the resume of ``own``'s ``log`` says when no note beside it names the game's
    bots (:func:`noted_bots`: none, or not this game's): which members are bots not started,
    so that the game waits for them (session 35: it said nothing), and what to do. ``None``: a
    note beside ``log`` names them, or no other member is known for a bot here.

    The bots are those a note beside another log of the game in the same directory names
    (the person's, whose resume starts them: the resume of a bot's log beside it, session 36,
    named the person among the bots); else the members whose keys are kept on this machine as
    a bot's (:func:`~cli.places.kept_key_path`; a quick game keeps its person's key apart).
    Their logs do not say how they played (a strategy, a speed), so none is started here.
    """
    if noted_bots(log, spec):
        return None
    for other in sorted(log.parent.glob("*.bots")):
        person = other.with_name(other.name.removesuffix(".bots"))
        seats = {b.seat for b in noted_bots(person, spec)} - {spec.seat_of(own)}
        if person != log and seats:
            names = [spec.members[seat].name for seat in sorted(seats)]
            return (
                f"not started with you: {', '.join(names)} ({plural(len(names), 'bot')} of this "
                f"game): the resume of {str(person)!r}, whose note names them, starts them: "
                f"nertz resume {shlex.quote(str(person))}"
            )
    kept = [
        m.name for m in spec.members if m.peer_id != own and kept_key_path(m.fingerprint).exists()
    ]
    if not kept:
        return None
    n, note = len(kept), str(bots_note(log))
    return (
        f"not started with you: {', '.join(kept)} ({plural(n, 'bot')} of this game, "
        f"{plural(n, 'key')} kept on this machine): no {note!r} says how they played; "
        "start each from its log: nertz resume LOG --bot STRATEGY"
    )


def signed_in(records: Iterable[LogRecord], spec: GameSpec) -> frozenset[PeerId]:
    """The members of ``spec``'s game whose events ``records`` (a member's log) hold: those
    that have signed in it (whatever else a record is, it names no one here)."""
    authors: set[PeerId] = set()
    for record in records:
        if record.kind is RecordKind.RECEIVED_EVENT:
            try:
                message = decode_unverified(record.data, game_id=spec.game_id, roster=spec.peer_ids)
            except InvalidMessageError:
                continue
            authors.add(PeerId(message.author))
    return frozenset(authors)


def resume_bots(
    log: Path,
    spec: GameSpec,
    endpoint_of: Mapping[PeerId, str],
    signed: Collection[PeerId] = frozenset(),
) -> list[NodeChild]:
    """Start again the bots a command started for the person whose log is ``log`` (``nertz
    resume`` of it, the person at the table or a bot for them; ``play --bots``, ``host
    --bots``, the ``play`` lobby's ``b``): each a ``nertz node`` from its own log (which
    names the game), at its endpoint, as it played; none if no bots were noted beside ``log``
    (:func:`noted_bots`). A bot with no log never signed in the game (a node writes its log
    before it sends: its table stopped before the bot's game began): it starts fresh, from
    the person's log (which names the game too), as it would have then.

    ``signed``: the members whose events the person's log holds (:func:`signed_in`). A bot
    among them whose log is not beside the person's (moved away without it, deleted) cannot
    start fresh: it would sign its first events again, differently, and be dropped as a cheat.

    Raises:
        NertzError: a bot of the game is still running (it writes its log: one started by a
            ``nertz play`` of a version whose bots outlived it), or has played and its log is
            not beside the person's; none is started then.
    """
    from cli.keyfile import kept_key_path, load_identity
    from p2p_nertz.logfile.store import check_not_in_use

    bots = noted_bots(log, spec)
    for bot in bots:
        path = log.parent / f"{bot.stem}.log"
        try:
            check_not_in_use(path)
        except BlockingIOError as exc:
            raise NertzError(
                f"{bot.name} of this game still plays alone ({str(path)!r} is {exc.strerror}): "
                "stop it, then resume again"
            ) from None
        if not path.exists() and spec.members[bot.seat].peer_id in signed:
            raise NertzError(
                f"{bot.name} has played in this game and its log is not beside yours "
                f"({str(path)!r}): move the game's files together, then resume again"
            )
    children: list[NodeChild] = []
    try:
        for bot in bots:
            fingerprint = spec.members[bot.seat].fingerprint
            identity = load_identity(kept_key_path(fingerprint))
            own = log.parent / f"{bot.stem}.log"
            kept = own.exists()
            start_node_child(
                log.parent, own if kept else log, spec, identity, seat=bot.seat,
                name=bot.name, stem=bot.stem, endpoint_of=endpoint_of,
                strategy=bot.strategy, speed=bot.speed, own_session=True,
                options=bot.options, fresh=not kept, into=children,
            )  # fmt: skip
    except BaseException:
        stop_children(children)
        raise
    return children
