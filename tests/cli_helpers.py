"""Helpers for the tests that run the real ``nertz`` command as processes."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import forkserver

from cli.keyfile import default_key_path, save_key, write_key
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import Deal, GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules
from p2p_nertz.testing.said import NeverSaid, first_line, reap
from p2p_nertz.testing.stalls import describe


def nertz(
    *argv: str,
    timeout: float = 60.0,
    cwd: Path | None = None,
    home: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m cli ARGV`` to its end, reading nothing (stdin: /dev/null), its output
    captured as text. ``home``: ``$NERTZ_HOME`` set to it in this process's environment (or
    in ``env``); ``env``: the whole environment (this process's unless given). ``timeout``
    (seconds) is a hang guard: past it, ``subprocess.TimeoutExpired``."""
    if home is not None:
        env = dict(os.environ if env is None else env, NERTZ_HOME=str(home))
    args = [sys.executable, "-m", "cli", *argv]
    if os.environ.get(FORKSERVER_ENV) != "0":
        launcher = forkserver.launcher()
        if launcher.serves(os.environ if env is None else env):
            with open(os.devnull, "rb") as devnull:
                return launcher.run(
                    argv, env=os.environ if env is None else env, cwd=cwd,
                    stdin=devnull.fileno(), timeout=timeout, args=args,
                )  # fmt: skip
    return subprocess.run(
        args, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


def cli_run(
    command: Sequence[str],
    *,
    input: str | bytes | None = None,
    capture_output: bool = False,
    timeout: float | None = None,
    check: bool = False,
    **kw: Any,
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(command, …)`` with its process started by :func:`cli_popen`."""
    if capture_output:
        kw["stdout"] = kw["stderr"] = subprocess.PIPE
    if input is not None:
        kw["stdin"] = subprocess.PIPE
    with cli_popen(command, **kw) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()  # (as subprocess.run on POSIX: killed and reaped, its pipes not read)
            proc.wait()
            raise
        except BaseException:
            proc.kill()
            raise
        status = proc.poll()
        assert status is not None
    if check and status:
        raise subprocess.CalledProcessError(status, proc.args, out, err)
    return subprocess.CompletedProcess(proc.args, status, out, err)


def nertz_process(*argv: str, sigint: str | None = None, **kw: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen([python, -m, cli, *argv], **kw)``: a ``nertz`` process the test
    talks to, signals and waits for, forked from the fork server (tests/forkserver.py) where
    it starts alike (:func:`forkserver.popen`). ``sigint``: started as :func:`foreground`
    (``"default"``) or :func:`background` (``"ignore"``) start it."""
    on = os.environ.get(FORKSERVER_ENV) != "0"
    return forkserver.popen(forkserver.launcher() if on else None, argv, sigint=sigint, **kw)


FORKSERVER_ENV = "NERTZ_TEST_FORKSERVER"
"""Set to ``0``, :func:`nertz`, :func:`cli_run`, :func:`cli_popen` and :func:`nertz_process`
start each command as a process of its own rather than a child of the fork server
(tests/forkserver.py): to measure one against the other, or to rule the server out."""


@contextlib.contextmanager
def held_port() -> Iterator[int]:
    """A free TCP port of 127.0.0.1 for a program the test starts later to bind (a ZeroMQ
    ROUTER: ``nertz watch --bind``), held bound meanwhile and let go when the block ends.

    A port picked and let go (bound to port 0, closed) is anybody's until the program
    binds it: any other process's bind of port 0, or an outgoing connection's local port, may
    take it (the suite runs several workers, each starting processes). A bound port is taken
    by neither, and the hold (SO_REUSEADDR, never listening) does not stop a ZeroMQ bind,
    which sets SO_REUSEADDR too (Linux)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as hold:
        hold.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        hold.bind(("127.0.0.1", 0))
        yield int(hold.getsockname()[1])


@contextlib.contextmanager
def held_udp_port() -> Iterator[int]:
    """A free UDP port for beacons sent to 127.0.0.1 (``--beacon-port``), held for the block:
    the host beacons there and the commands the test starts later listen there, one after
    another, each binding it as they do (127.0.0.1, SO_REUSEADDR and SO_REUSEPORT).

    The hold is bound on 0.0.0.0 with SO_REUSEPORT alone: no other bind of port 0 is given
    it (a port picked and let go could be, and another test's beacons or listener then shared
    it), a listener of this user's on 127.0.0.1 still binds it, and a datagram sent to
    127.0.0.1 goes to that listener, bound to the address itself, never to the hold (Linux)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as hold:
        hold.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        hold.bind(("0.0.0.0", 0))  # (never read, never sent from: a hold)
        yield int(hold.getsockname()[1])


@contextlib.contextmanager
def held_ports(count: int) -> Iterator[list[int]]:
    """``count`` ports of :func:`held_port`, all held until the block ends."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(held_port()) for _ in range(count)]


def ports_held_for_the_test(count: int) -> list[int]:
    """``count`` ports of :func:`held_port`, held until the current test ends
    (:func:`at_end_of_test`): for a setup object whose ports the test's commands are given."""
    stack = contextlib.ExitStack()
    at_end_of_test(stack.close)
    return [stack.enter_context(held_port()) for _ in range(count)]


def lobby_where(lobby: dict[str, Any]) -> str:
    """``127.0.0.1:PORT`` of a host's ``lobby`` JSON line (``nertz host --json``): where a
    guest on this machine joins. The host is started without ``--port`` (a port of 0 binds
    any free one, said here), never with a port picked beforehand that another process
    could take before the host binds it."""
    assert lobby["event"] == "lobby", lobby
    return "127.0.0.1:" + str(lobby["endpoint"]).rsplit(":", 1)[1]


class Screen(Protocol):
    """A program in a pseudo-terminal (tests/test_cli_play.py ``Tty``): what it shows, and
    keys typed to it."""

    def wait(self, check: str | Callable[[str], bool]) -> str: ...

    def send(self, keys: str) -> None: ...


def lobby_table_with_a_bot(tty: Screen, *, start: bool = False) -> str:
    """At ``nertz play``'s terminal lobby (``tty``): a table created here (``c``), a bot of
    the picker's first choice added (``b``, Enter) and seated ready; with ``start``, the game
    started (``s``) once everybody is ready. The screen then."""
    tty.wait("c creates a table here")
    tty.send("c")
    tty.wait("your table at 127.0.0.1:")
    tty.send("b")
    tty.wait("add a bot:")
    tty.send("\r")
    text = tty.wait(lambda t: re.search(r"^  1  greedy1 .* ready", t, re.M) is not None)
    if start:
        tty.wait("everybody is ready: s starts")
        tty.send("s")
    return text


def make_key(path: Path | None = None) -> Identity:
    """A new key at ``path`` (by default where ``nertz keygen`` writes one: $NERTZ_HOME, else
    the config dir), made as that command makes it (``save_key``) but in this process: the
    setup of tests of other commands, without a process of half a second of CPU to start
    (``nertz keygen`` has tests of its own)."""
    identity = Identity.generate()
    save_key(default_key_path() if path is None else path, identity)
    return identity


def foreground(*argv: str) -> list[str]:
    """The command line of ``nertz argv…`` started as a terminal starts a foreground command,
    for a test that sends it SIGINT (what Ctrl-C sends).

    A child inherits an *ignored* SIGINT (and a blocked one), and Python then never raises
    KeyboardInterrupt: started plainly, the child would see Ctrl-C or not depending on how the
    test runner was started (a shell without job control starts a background command with
    SIGINT ignored; session 11's suite failed this way twice and passed alone).

    Given to :func:`cli_popen`, it is forked from the fork server, which sets SIGINT in the
    child as this command line leaves it for ``python -m cli`` (session 37).
    """
    return forkserver.command_line(argv, "default")


def background(*argv: str) -> list[str]:
    """The command line of ``nertz argv…`` started as a shell without job control starts
    ``nertz … &``: SIGINT ignored (a SIGTERM must still stop it, in one line). Given to
    :func:`cli_popen`, it is forked from the fork server as :func:`foreground` is."""
    return forkserver.command_line(argv, "ignore")


TIMED = Path(__file__).with_name("timed_node.py")


def aimed_python(tmp_path: Path, names: str, *options: str) -> str:
    """An interpreter (a script in ``tmp_path``) that runs ``tests/timed_node.py`` with
    ``--aim=names`` (and ``options``: ``--aim-suspicion``), and with itself as the interpreter
    of what it starts: a ``nertz demo`` or ``nertz play`` run by it starts every node aimed (at
    nobody until ``SIGUSR2``; session 44)."""
    script = tmp_path / "aimed-python"
    real, timed = shlex.quote(sys.executable), shlex.quote(str(TIMED))
    more = "".join(f" {shlex.quote(o)}" for o in options)
    script.write_text(f'#!/bin/sh\nexec {real} {timed} 60 --aim={names}{more} -- "$0" "$@"\n')
    script.chmod(0o755)
    return str(script)


def interrupted_by_sigterm(proc: subprocess.Popen[str], command: str) -> None:
    """Send ``proc`` (a ``nertz command`` whose stderr is piped) SIGTERM and check that it
    stops as a Ctrl-C stops it, the one line "nertz COMMAND: interrupted", with the status of
    a SIGTERM, 143 (README, *Exit statuses*; it is killed if it does not stop)."""
    try:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            reap(proc, f"nertz {command}")
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err.splitlines() == [f"nertz {command}: interrupted"], err


SHORT_ROUND = Rules(target=None, rounds=1, work_piles=6)
"""One round on six work piles (RULES.md: the Pounce variant), for a real game whose fault
comes at its start or at one moment (a process killed, a log removed, a node stopped until
the others vote it out: no round ends while a member is silent) and which after it only has
to end: with two piles more for the Nerts pile's cards to go to, the bots empty it in about
half the moves of four piles' round (session 41, two nodes at full speed, load 45: 16-19
cards to the lake and 14 s of play against 33-50 and 20-26 s; the simulator's greedy games,
seeds 0-5: 9 s against 25 at two players, 8 against 19 at three). Not for a fault the game
must play on through (stops it survives, a cut or slow link, a flood): there the game's
length is part of what the test shows. A game of more rounds (a log that must outgrow its
disk before the end: about 30 KiB of one member's log a round at three players):
``dataclasses.replace(SHORT_ROUND, rounds=n)``."""

SHORT_ROUND_ARGS = (
    "--rounds",
    str(SHORT_ROUND.rounds),
    "--work-piles",
    str(SHORT_ROUND.work_piles),
)
""":data:`SHORT_ROUND` as the options of ``nertz demo`` and ``nertz host``."""

#: How long :func:`json_lines_until` waits for its line: a whole game at a load of 40 (a hang's
#: bound, never a timing assertion; a game of bots at speed 1 takes a minute or two there).
GAME_BOUND = 240.0


def json_lines_until(
    proc: subprocess.Popen[str], event: str, bound: float = GAME_BOUND
) -> list[dict[str, Any]]:
    """The JSON lines ``proc`` prints (``--json``) up to and including the first ``event``;
    other output is skipped. Fails if the process ends first, or if ``event`` has not come
    within ``bound`` seconds (then the process, and what it started, is described with
    :func:`~p2p_nertz.testing.stalls.describe`, killed, and what it said is shown)."""
    assert proc.stdout is not None
    seen: list[dict[str, Any]] = []
    said: list[str] = []
    doing: list[str] = []
    ended = threading.Lock()  # (held by the timer while it stops the process)
    came = False

    def stuck() -> None:
        with ended:
            if not came:  # (described first: a killed process says nothing)
                doing.append(describe(proc.pid))
                kill_tree(proc.pid)  # (what it started too: they hold its pipe open)

    timer = threading.Timer(bound, stuck)
    timer.daemon = True
    timer.start()
    try:
        for line in proc.stdout:
            said.append(line.rstrip("\n"))
            if line.startswith("{"):
                seen.append(json.loads(line))
                if seen[-1]["event"] == event:
                    break
    finally:
        with ended:
            came = bool(seen) and seen[-1]["event"] == event
        timer.cancel()
    if doing:
        shown = "\n".join(f"  {line!r}" for line in said[-20:]) or "  (nothing)"
        raise NeverSaid(
            f"no {event!r} line within {bound:g} s; it said:\n{shown}\n{doing[0]}", proc
        )
    if came:
        return seen
    shown = "\n".join(f"  {line!r}" for line in said[-20:]) or "  (nothing)"
    raise AssertionError(f"no {event!r} line before the end; it said:\n{shown}")


def one_error_line(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """The one line a command that refused its input wrote on stderr (no traceback), holding
    each of ``words``."""
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def node_spec(
    names: Sequence[str], rules: Rules, *, keys: bytes, salt: bytes, deal: Deal = Deal.COMMIT
) -> tuple[list[Identity], GameSpec]:
    """The members' keys and the spec of :func:`node_game`'s game (a watcher that must know
    the spec before the nodes start: ``tests/test_node_held_back.py``)."""
    ids = [Identity.generate(derive_seed(keys, n)) for n in range(len(names))]
    spec = GameSpec.create(
        [(i.peer_id, name) for i, name in zip(ids, names, strict=True)], rules, salt, deal=deal
    )
    return ids, spec


def node_game(
    tmp_path: Path,
    names: Sequence[str],
    rules: Rules,
    *,
    keys: bytes,
    salt: bytes,
    args: Callable[[int], Sequence[str]] = lambda n: (),
    deal: Deal = Deal.COMMIT,
    wrap: Callable[[int], Sequence[str]] = lambda n: (),
) -> tuple[GameSpec, list[subprocess.Popen[str]], list[Path]]:
    """A game of ``nertz node`` processes on 127.0.0.1, one per name (the n-th key derived from
    ``keys``, the spec salted with ``salt``, both written to ``tmp_path``), each told every
    other's endpoint and printing ``--json``, with ``args(n)`` more, dealt by ``deal``, the
    n-th started by the command ``wrap(n)`` if any (``unshare …``); the spec, the processes in
    the order of ``names``, and their logs. The caller stops them with :func:`stop_all`."""
    ids, spec = node_spec(names, rules, keys=keys, salt=salt, deal=deal)
    (tmp_path / "game.spec").write_bytes(spec.to_wire())
    procs: list[subprocess.Popen[str]] = []
    at_end_of_test(lambda: _kill_running(procs))  # (however the test ends)
    logs: list[Path] = []
    try:
        for n, identity in enumerate(ids):
            write_key(tmp_path / f"{n}.key", identity)
            logs.append(tmp_path / f"{n}.log")
            procs.append(
                cli_popen(
                    [
                        *wrap(n), sys.executable, "-m", "cli", "node",
                        "--key", str(tmp_path / f"{n}.key"),
                        "--spec", str(tmp_path / "game.spec"),
                        "--bind", "tcp://127.0.0.1:0", "--peers-on-stdin",
                        "--log", str(logs[-1]),
                        "--json", "--speed", "10", *args(n),
                    ],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    stdin=subprocess.PIPE,
                )
            )  # fmt: skip
        introduce(spec, ids, procs)
    except BaseException:
        stop_all(procs)
        raise
    return spec, procs, logs


def cli_popen(command: Sequence[str], **kw: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(command, **kw)``, through :func:`nertz_process` for a command line
    ``[python, -m, cli, …]`` and those of :func:`foreground` and :func:`background`."""
    if list(command[:3]) == [sys.executable, "-m", "cli"]:
        return nertz_process(*command[3:], **kw)
    for sigint, script in forkserver.SIGINT_SCRIPTS.items():
        if list(command[:3]) == [sys.executable, "-c", script]:
            return nertz_process(*command[3:], sigint=sigint, **kw)
    return subprocess.Popen(command, **kw)


def introduce(
    spec: GameSpec, ids: Sequence[Identity], procs: Sequence[subprocess.Popen[str]]
) -> None:
    """Read the endpoint each of ``procs`` (``nertz node --peers-on-stdin --json``, the n-th
    with the n-th of ``ids``) bound, then give each every other's, by seat, on its stdin.

    Each node binds port 0 and says the port it got: a port picked here and bound later by the
    node could be taken meanwhile by another worker's process (a busy machine)."""
    bound: dict[int, str] = {}
    for identity, proc in zip(ids, procs, strict=True):
        try:  # (the first line: said once bound; a hang's bound)
            line = first_line(proc, f"the node of seat {spec.seat_of(identity.peer_id)}")
        except NeverSaid as exc:
            proc.kill()
            _, err = proc.communicate(timeout=60)
            raise AssertionError(f"a node did not bind: {exc}\n{err}") from None
        if not line.startswith("{"):
            _, err = proc.communicate(timeout=60)
            raise AssertionError(f"a node did not bind: {line!r} {err}")
        said = json.loads(line)
        assert said["event"] == "bound", said
        bound[spec.seat_of(identity.peer_id)] = said["endpoint"]
    for identity, proc in zip(ids, procs, strict=True):
        seat = spec.seat_of(identity.peer_id)
        assert proc.stdin is not None
        proc.stdin.write("".join(f"{s}={e}\n" for s, e in bound.items() if s != seat) + "\n")
        proc.stdin.flush()


def _kill_running(procs: Sequence[subprocess.Popen[str]]) -> None:
    """Kill every one of ``procs`` still running, with what it started, reap it, and close its
    pipes: a test that failed before reading them to the end left them to the garbage
    collector, whose ResourceWarning pytest then counted against a later test of the same
    worker (session 34: a simulator test failed for a lab test's leak)."""
    for proc in procs:
        if proc.poll() is None:
            kill_tree(proc.pid)
            proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


def stop_all(procs: Sequence[subprocess.Popen[str]]) -> list[str | None]:
    """Kill every process still running (continued first, if a test stopped it) and reap it:
    what each said on stderr (``None`` where it was not piped)."""
    errs = []
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
        errs.append(reap(proc)[1])
    return errs


#: What :func:`end_of_test` runs when the current test ends: each stops a program a helper
#: started (and every process under it), however the test ended.
_AT_END: list[Callable[[], None]] = []


def at_end_of_test(stop: Callable[[], None]) -> None:
    """Have ``stop`` run when the current test ends, passed or failed (conftest.py's teardown
    calls :func:`end_of_test`): a helper that starts a program registers how to stop it, so
    that no process outlives its test (a failed ``nertz play`` test left its bots playing)."""
    _AT_END.append(stop)


def end_of_test() -> None:
    """Run what :func:`at_end_of_test` registered, the latest first; each runs once."""
    while _AT_END:
        _AT_END.pop()()


def descendants(pid: int) -> set[int]:
    """Every process under ``pid`` (children, their children …), read from /proc."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue  # (gone meanwhile)
            parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and every process under it. It is stopped first (SIGSTOP), so that it
    starts no more while they are read; those under it are reaped by init, ``pid`` by the
    caller."""
    try:
        os.kill(pid, signal.SIGSTOP)
    except ProcessLookupError:
        return  # (gone, and its own children stopped by it or left to init: nothing to reach)
    for victim in (*descendants(pid), pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(victim, signal.SIGKILL)
