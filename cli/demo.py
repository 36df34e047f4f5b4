"""``nertz demo``: a bots-only game of separate processes over ZeroMQ on 127.0.0.1.

The demo plays the part of a lobby: it makes one identity per player (from ``--seed``, or a
random seed it prints), the game spec, a free TCP port on loopback per player, keeps the keys
in the key store (cli/keyfile.py: never beside the logs) and writes the spec into its working
directory. It then starts one
``python -m cli node`` process per player, each given every other member's endpoint
explicitly (no broadcast or multicast), shows the rounds as the first player sees them, waits
for all of them, checks that they agree on the final state (the digest) and prints the
scoreboard and where the signed logs are.
"""

from __future__ import annotations

import argparse
import json
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from cli.keyfile import keep_key, write_key  # (write_key re-exported for the tests)
from cli.main import _add_rules_arguments, _players_from, _rules_from, _seed
from p2p_nertz import __version__
from p2p_nertz.bots import STRATEGIES
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.identity import Identity, PeerId
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules

__all__ = ["add_parser", "free_ports", "write_key"]

EXIT_FAILED = 1
DEFAULT_TIMEOUT = 300.0
TARGET_TIMEOUT = 1800.0  # a game to a target score runs many rounds
_POLL = 0.1  # seconds between looks at the children
_PROGRESS = 3.0  # seconds between two progress lines while the game goes on
_LEAVE_PATIENCE = 15.0  # seconds the nodes get to leave cleanly after a Ctrl-C


def add_parser(sub: Any) -> None:
    """Add the ``demo`` subcommand to ``sub`` (the ``nertz`` subparsers).

    Args:
        sub: the object returned by :meth:`argparse.ArgumentParser.add_subparsers`.
    """
    help_text = (
        "play a bots-only game of separate processes over ZeroMQ on this machine and print "
        "the scoreboard"
    )
    p: argparse.ArgumentParser = sub.add_parser(
        "demo",
        help=help_text,
        description=(
            help_text + ". One process per player, explicit peers on 127.0.0.1 (no broadcast). "
            "By default one round (--rounds 1); --target 100 plays a full game."
        ),
    )
    strategies = ", ".join(sorted(STRATEGIES))
    count = p.add_mutually_exclusive_group()
    count.add_argument(
        "--bots",
        type=_bot_count,
        metavar="N",
        help="number of bot players, 2-8, as in `nertz play --bots N` (default 4)",
    )
    count.add_argument("--players", type=int, help="the same as --bots: every player is a bot")
    p.add_argument(
        "--strategy",
        default="greedy",
        help=f"bot strategy, one for all or comma-separated per seat (known: {strategies}; "
        "default greedy)",
    )
    p.add_argument(
        "--speed", default="10", help="bot speed 1-10, one per seat or one for all (default 10)"
    )
    p.add_argument(
        "--seed", type=_seed, default=None, help="seed for the keys and the game (default random)"
    )
    p.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="working directory for the spec and logs (default ./nertz-logs/demo-<game id>)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        help=(
            f"seconds before the game is given up (default {DEFAULT_TIMEOUT:.0f}, "
            f"or {TARGET_TIMEOUT:.0f} with --target)"
        ),
    )
    _add_rules_arguments(p)
    p.set_defaults(func=_cmd_demo)


def free_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports on 127.0.0.1 that were free a moment ago."""
    held: list[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            held.append(s)
        return [s.getsockname()[1] for s in held]
    finally:
        for s in held:
            s.close()


def game_dir(given: Path | None, kind: str, spec: GameSpec) -> tuple[Path, Path]:
    """The directory of a game made on this machine (``given``, or ``nertz-logs/KIND-<id>``),
    created, with no logs in it yet, and the game's spec written there; and the spec's path.

    Raises:
        NertzError: it cannot be created, or already holds logs.
    """
    workdir = (
        given if given is not None else Path("nertz-logs") / f"{kind}-{spec.game_id.hex()[:12]}"
    )
    try:
        workdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NertzError(f"cannot create {str(workdir)!r}: {exc.strerror}") from None
    if any(workdir.glob("*.log")):
        raise NertzError(
            f"{str(workdir)!r} already holds game logs; remove them or choose another --dir"
        )
    spec_path = workdir / "game.spec"
    spec_path.write_bytes(spec.to_wire())
    return workdir, spec_path


@dataclass
class _Child:
    seat: int
    name: str
    fingerprint: str
    log: Path
    out: Path
    err: Path
    proc: subprocess.Popen[bytes] | None = None
    files: list[IO[bytes]] = field(default_factory=list)

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
        lines = [ln for ln in self.err.read_text(errors="replace").splitlines() if ln.strip()]
        return lines[-1] if lines else "no message"


def start_node_child(
    workdir: Path,
    spec_path: Path,
    spec: GameSpec,
    identity: Identity,
    *,
    seat: int,
    name: str,
    stem: str,
    endpoint_of: Mapping[PeerId, str],
    strategy: str,
    speed: str,
    own_session: bool = False,
    options: Sequence[str] = (),
) -> _Child:
    """Start one bot peer as a ``nertz node`` process; its log and output are
    ``workdir/STEM.log``, ``.out`` and ``.err``, its key is in the key store (never beside the
    logs: cli/keyfile.py).

    Args:
        own_session: start it in its own session, so a Ctrl-C at our terminal does not
            reach it (it is then stopped by :func:`_stop`).
        options: more ``nertz node`` options (its liveness timers, say).
    """
    key = keep_key(identity)
    child = _Child(
        seat,
        name,
        identity.fingerprint,
        workdir / f"{stem}.log",
        workdir / f"{stem}.out",
        workdir / f"{stem}.err",
    )
    command = [
        sys.executable, "-m", "cli", "node", "--key", str(key), "--spec", str(spec_path),
        "--bind", endpoint_of[identity.peer_id], "--log", str(child.log),
        "--bot", strategy, "--speed", speed, "--json", *options,
    ]  # fmt: skip
    for other, pid in enumerate(spec.peer_ids):
        if pid != identity.peer_id:
            command += ["--peer", f"{other}={endpoint_of[pid]}"]
    out = child.out.open("wb")
    err = child.err.open("wb")
    child.files = [out, err]
    child.proc = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=own_session
    )
    return child


def _bot_count(text: str) -> int:
    """``--bots N``: a number, as in ``nertz play --bots N`` (strategies go in --strategy)."""
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(
            f"--bots is a number of bots, as in `nertz play --bots N`, not {text!r} "
            f"(strategies: --strategy {text})"
        )
    return int(text)


def _cmd_demo(args: argparse.Namespace) -> int:
    if args.rounds is None and args.target is None:
        args.rounds = 1
    args.players = args.bots or args.players or 4
    rules = _rules_from(args)
    if not 2 <= args.players <= 8:
        raise NertzError(f"a demo has 2 to 8 players, not {args.players}")
    rules.validate_players(args.players)
    players = _players_from(args, args.strategy)
    if args.timeout is None:
        args.timeout = DEFAULT_TIMEOUT if rules.racing_demon else TARGET_TIMEOUT
    if args.timeout <= 0:
        raise NertzError("--timeout must be positive")
    seed: int = args.seed if args.seed is not None else secrets.randbits(32)

    identities = [
        Identity.generate(derive_seed(b"nertz-demo-key", seed, n)) for n in range(args.players)
    ]
    identities.sort(key=lambda i: i.peer_id)  # seat order: P1 is seat 0, P2 seat 1…
    spec = GameSpec.create(
        [(i.peer_id, f"P{n + 1}") for n, i in enumerate(identities)],
        rules,
        derive_seed(b"nertz-demo-game", seed)[:16],
    )
    game = spec.game_id.hex()
    workdir, spec_path = game_dir(args.dir, "demo", spec)
    goal = f"{rules.rounds} round(s)" if rules.racing_demon else f"target {rules.target}"
    print(f"p2p-nertz {__version__} - demo: {args.players} bot processes over ZeroMQ on 127.0.0.1")
    print(f"game {game[:16]}  seed {seed}  {goal}  dir {workdir}")

    ports = free_ports(args.players)
    endpoints = [f"tcp://127.0.0.1:{port}" for port in ports]
    children: list[_Child] = []
    by_id = {i.peer_id: endpoint for i, endpoint in zip(identities, endpoints, strict=True)}
    for seat, (identity, player) in enumerate(zip(identities, players, strict=True)):
        child = start_node_child(
            workdir,
            spec_path,
            spec,
            identity,
            seat=seat,
            name=f"P{seat + 1}",
            stem=f"p{seat + 1}",
            endpoint_of=by_id,
            strategy=player.strategy,
            speed=str(player.speed),
            options=["--progress"],  # a line per card to the lake: the progress shown
        )
        print(f"  {child.name}  {child.fingerprint}  {player.strategy:<9} on {endpoints[seat]}")
        children.append(child)
    sys.stdout.flush()
    try:
        finished = _wait(children, args.timeout)
    except KeyboardInterrupt:
        # A Ctrl-C reached the children too: give them time to leave cleanly first.
        _stop(children, patience=_LEAVE_PATIENCE)
        print(f"nertz demo: stopped; the logs so far are in {workdir}", file=sys.stderr)
        raise
    finally:
        _stop(children)
    return _report(children, finished, workdir, rules)


def _wait(children: list[_Child], timeout: float) -> bool:
    """Wait for every child, echoing the rounds the first one reports, and the cards to the
    lake every few seconds (:data:`_PROGRESS`) so that a person sees the game go on;
    ``False`` on timeout."""
    start = time.monotonic()
    deadline = start + timeout
    shown = 0
    lake: dict[int, int] = {}  # cards to the lake per round, as the first node saw them
    said = start
    while True:
        lines = children[0].out.read_text(errors="replace").splitlines()
        for line in lines[shown:]:
            try:
                data = json.loads(line)
            except ValueError:
                break  # a line still being written
            shown += 1
            if isinstance(data, dict) and data.get("event") == "lake":
                lake[data["round"]] = lake.get(data["round"], 0) + 1
            if isinstance(data, dict) and data.get("event") == "round":
                totals = "  ".join(f"P{s + 1} {t:4d}" for s, t in enumerate(data["totals"]))
                print(f"round {data['round']:3d} over   totals  {totals}", flush=True)
                said = time.monotonic()
        now = time.monotonic()
        if now - said >= _PROGRESS:
            if lake:
                number = max(lake)
                what = f"round {number}: {lake[number]} card(s) to the lake so far"
            else:
                what = "dealing: the nodes connect, commit and reveal"
            print(f"  {now - start:5.1f} s  {what}", flush=True)
            said = now
        if all(c.proc is not None and c.proc.poll() is not None for c in children):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(_POLL)


def _stop(children: list[_Child], patience: float = 0.0) -> None:
    """Terminate (then kill) any child still running, and close the output files.

    Args:
        children: the nodes.
        patience: seconds to let them finish by themselves before sending SIGTERM.
    """
    end = time.monotonic() + patience
    while time.monotonic() < end and any(
        c.proc is not None and c.proc.poll() is None for c in children
    ):
        time.sleep(_POLL)
    running = [c.proc for c in children if c.proc is not None and c.proc.poll() is None]
    for proc in running:
        proc.send_signal(signal.SIGTERM)
    end = time.monotonic() + 5.0
    for proc in running:
        try:
            proc.wait(max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for c in children:
        for f in c.files:
            f.close()


def _report(children: list[_Child], finished: bool, workdir: Path, rules: Rules) -> int:
    if not finished:
        print("FAILED: the game did not finish in time; the nodes were stopped", file=sys.stderr)
        return EXIT_FAILED
    failed = False
    finals: list[dict[str, Any]] = []
    for c in children:
        assert c.proc is not None
        final = c.final()
        if c.proc.returncode != 0 or final is None:
            failed = True
            code = c.proc.returncode
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
            print(
                f"FAILED: node {c.name} {how}: {c.last_error()} (see {c.err})",
                file=sys.stderr,
            )
        elif final is not None:
            finals.append(final)
    if failed:
        return EXIT_FAILED
    digests = {f["digest"] for f in finals}
    totals = {tuple(f["totals"]) for f in finals}
    if len(digests) != 1 or len(totals) != 1:
        print("FAILED: the nodes disagree on the final state:", file=sys.stderr)
        for c, f in zip(children, finals, strict=True):
            print(f"  {c.name}: digest {f['digest']} totals {f['totals']}", file=sys.stderr)
        return EXIT_FAILED
    final = finals[0]
    print()
    print(f"scoreboard after {final['rounds']} round(s):")
    team_totals: list[int] = final["totals"]
    for c in children:
        team = rules.team_of(c.seat)
        print(f"  {c.name:<4} {c.fingerprint}  {team_totals[team]:5d}")
    # (Winners are seats, or teams, from 0; the demo's players are named P1, P2, …)
    who = ", ".join(f"team {w + 1}" if rules.pairs else f"P{w + 1}" for w in final["winners"])
    print(f"winner: {who} with {max(team_totals)}")
    print(f"all {len(children)} nodes agree: digest {final['digest']}")
    logs = f"{shlex.quote(str(workdir))}/p*.log"  # (the glob outside the quotes: the shell's)
    nertz = _self_command()
    print(f"signed logs: {logs} (one per player; spec and output alongside)")
    print(f"audit them: {nertz} audit {logs}")
    print(f"replay one: {nertz} replay --text {shlex.quote(str(workdir / 'p1.log'))}")
    return 0


def _self_command() -> str:
    """How to run ``nertz`` again as this process was run: ``nertz`` when that is what was
    typed (and is on the PATH), else this Python with ``-m cli``."""
    typed = Path(sys.argv[0]).name
    if typed == "nertz" and shutil.which("nertz") is not None:
        return "nertz"
    return f"{shlex.quote(sys.executable)} -m cli"
