"""The scripts' ports: every child process binds port 0 and says what it got.

A port picked free and let go (bound to port 0, closed) is anybody's until the child binds
it: another program, another test's bind of port 0, or an outgoing connection's local port can
take it meanwhile, and a benchmark or a chaos scan then reports a fault that is the harness's
own. So no script picks a port for a child on loopback; each child binds first and says its
endpoint (inside a lab's network namespaces, where nothing else runs, the scripts keep their
fixed ports):

* a server child (an echo, a sink) prints the endpoint it bound as its first line
  (:func:`say_bound`), which the parent reads from the pipe (:func:`read_bound`);
* a game's peers, a process each, speak ``nertz node --peers-on-stdin``'s protocol (cli/bots.py,
  as ``nertz demo`` starts its nodes): the bound line first on standard output, then the
  other members' ``SEAT=ENDPOINT`` lines read from standard input up to an empty line
  (:func:`read_peers`); the parent waits for every bound line and gives each child the
  others' (:func:`introduce`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from p2p_nertz.protocol.spec import GameSpec

# (cli.bots, trio and zmq are imported where used: an echo child imports only what it runs.
# A child binds ``cli.bots.FREE_PORT``, port 0 of 127.0.0.1.)
__all__ = ["introduce", "own_player_locks", "read_bound", "read_peers", "say_bound", "zmq_bound"]


def zmq_bound(socket: Any) -> str:
    """The endpoint a bound pyzmq socket resolved (its real port, for a bind of port 0)."""
    import zmq

    endpoint: bytes = socket.getsockopt(zmq.LAST_ENDPOINT)
    return endpoint.decode()


def say_bound(endpoint: str, out: IO[str] | None = None) -> None:
    """Print ``endpoint`` as a child's first line, as ``nertz node --peers-on-stdin --json``."""
    print(json.dumps({"event": "bound", "endpoint": endpoint}), file=out or sys.stdout, flush=True)


def read_bound(proc: subprocess.Popen[str], within: float | None = None) -> str:
    """The endpoint a server child said on its first line (:func:`say_bound`), from its pipe.

    Args:
        within: how long it may take (``said.READY_BOUND`` by default): a hang's bound.

    Raises:
        RuntimeError: it stopped, or said something else, before it bound, or said nothing
            within the bound: then what it is doing (:func:`p2p_nertz.testing.said.first_line`).
            A child that did not bind is ended.
    """
    from p2p_nertz.testing.said import READY_BOUND, NeverSaid, first_line

    try:
        line = first_line(proc, "a server child", READY_BOUND if within is None else within)
    except NeverSaid as exc:
        proc.kill()
        proc.wait()
        raise RuntimeError(str(exc)) from None
    try:
        data = json.loads(line)
    except ValueError:
        data = None
    if not isinstance(data, dict) or data.get("event") != "bound":
        with suppress(subprocess.TimeoutExpired):  # (said something else and lives on: ended)
            proc.wait(10)
        proc.kill()
        proc.wait()
        raise RuntimeError(f"a child did not bind (exit {proc.returncode}): {line[:80]!r}")
    return str(data["endpoint"])


def read_peers(players: int, stdin: IO[str] | None = None) -> dict[int, str]:
    """The other members' endpoints, by seat, as :func:`introduce` gives them: ``SEAT=ENDPOINT``
    lines up to an empty one (at most ``players``)."""
    source = stdin or sys.stdin
    peers: dict[int, str] = {}
    for _ in range(players):
        line = source.readline().strip()
        if not line:
            break
        seat, _, endpoint = line.partition("=")
        peers[int(seat)] = endpoint
    return peers


def introduce(
    spec: GameSpec,
    procs: Sequence[subprocess.Popen[bytes]],
    outs: Sequence[Path],
    errs: Sequence[Path] = (),
) -> list[str]:
    """Wait for each game child to say the endpoint it bound (the first line of its output file
    ``outs[i]``; ``procs[i]`` plays seat ``i``, started with ``stdin=PIPE``), give each the
    others', and return every member's endpoint in seat order.

    Args:
        errs: each child's error file, where it has one (what a child that stopped said).

    Raises:
        p2p_nertz.errors.NertzError: a child stopped, or did not bind in time.
    """
    from cli.bots import NodeChild, introduce_children
    from p2p_nertz.errors import NertzError

    children = []
    for seat, (proc, out) in enumerate(zip(procs, outs, strict=True)):
        err = errs[seat] if seat < len(errs) else out.with_suffix(".err")
        child = NodeChild(seat, f"P{seat + 1}", "", out, out, err)
        child.proc = proc
        children.append(child)
    try:
        endpoint_of = introduce_children(children, spec, {})
    except NertzError:
        for proc in procs:  # (those waiting for the others' hear that none come)
            if proc.stdin is not None:
                with suppress(OSError):
                    proc.stdin.close()
        raise
    return [endpoint_of[pid] for pid in spec.peer_ids]


def own_player_locks() -> None:
    """Give this run's nodes a player-lock scope of their own (``runtime/playerlock.py``).

    A script plays seeded games: two runs of it at once on one machine (two engineers, two
    checkouts) play the same keys in the same game, and each node would refuse the other run's
    as a second process of its player. The scope (the script and its pid) keeps runs apart; the
    nodes of one run still lock each other out, as a player's second process must be. A scope
    already set (a test's) is kept."""
    import os

    from p2p_nertz.runtime.playerlock import SCOPE_ENV

    os.environ.setdefault(SCOPE_ENV, f"{Path(sys.argv[0]).name} {os.getpid()}")
