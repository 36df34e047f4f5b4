"""``nertz demo`` and ``nertz play --bots`` pick no port before a node binds it.

They used to pick free ports (bind port 0, close, hand the numbers to the nodes): another
program could take one between the pick and the node's bind, and the game failed. Now every
node binds a free port itself (``--bind tcp://127.0.0.1:0 --peers-on-stdin``), says it, and
only then hears the others' endpoints (:func:`cli.bots.introduce_children`).

No function to pick one is left (session 29 removed ``cli.args.free_ports``; the tests hold
the ports they name, tests/cli_helpers.py). The node's cases check what it says when the
endpoints it reads are wrong, and the parent's what it says when a node stops before it
bound: a clear line, no traceback.
"""

from __future__ import annotations

import errno
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import cli.args
import cli.demo
from cli.args import PortHold
from cli.bots import NodeChild, introduce_children
from p2p_nertz.errors import NertzError
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rules import Rules
from p2p_nertz.testing.said import READY_BOUND


def _game(tmp_path: Path) -> tuple[Path, Path, GameSpec]:
    ann, bob = (Identity.generate(bytes([i]) * 32) for i in (1, 2))
    spec = GameSpec.create([(ann.peer_id, "Ann"), (bob.peer_id, "Bob")], Rules(), b"s" * 16)
    key = tmp_path / "ann.key"
    key.write_bytes(ann.to_bytes())
    key.chmod(0o600)
    spec_path = tmp_path / "spec"
    spec_path.write_bytes(spec.to_wire())
    return key, spec_path, spec


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("", "no --peer for seat"),  # (end of input: nobody given)
        ("garbage\n\n", "--peer wants WHO=ENDPOINT, not 'garbage'"),
        ("0=127.0.0.1:99999\n\n", "--peer '0=127.0.0.1:99999'"),
    ],
)
def test_a_node_reading_its_peers_binds_says_its_port_and_refuses_wrong_ones_clearly(
    tmp_path: Path, given: str, said: str
) -> None:
    key, spec_path, _ = _game(tmp_path)
    argv = [sys.executable, "-m", "cli", "node", "--key", str(key), "--spec", str(spec_path)]
    argv += ["--bind", "tcp://127.0.0.1:0", "--log", str(tmp_path / "ann.log"), "--json"]
    run = subprocess.run(
        [*argv, "--peers-on-stdin"],
        input=given,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    first = run.stdout.splitlines()[0]
    assert first.startswith('{"event": "bound", "endpoint": "tcp://127.0.0.1:')
    assert not first.endswith(':0"}')  # the port the system gave, not the 0 asked for
    assert run.returncode == cli.args.EXIT_USAGE
    assert said in run.stderr and "Traceback" not in run.stderr


def test_a_child_that_stops_before_it_binds_is_named_with_its_reason(tmp_path: Path) -> None:
    _, _, spec = _game(tmp_path)
    child = NodeChild(0, "P1", "fp", tmp_path / "p1.log", tmp_path / "p1.out", tmp_path / "p1.err")
    with child.out.open("wb") as out, child.err.open("wb") as err:
        child.proc = subprocess.Popen(
            [sys.executable, "-c", "import sys; sys.exit('nertz node: error: no such key')"],
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=err,
        )
        with pytest.raises(NertzError, match=r"^P1 stopped: nertz node: error: no such key$"):
            introduce_children([child], spec, {spec.peer_ids[1]: "tcp://127.0.0.1:9"})
        child.proc.wait(timeout=READY_BOUND)  # (it exits at once: a hang's bound)
        assert child.proc.stdin is not None
        child.proc.stdin.close()


def test_a_held_game_port_is_taken_by_nobody_until_released() -> None:
    """The lobby's game port (cli.args.PortHold): said to the table long before the game's
    node binds it, and held bound meanwhile, so that no other program's bind of port 0, nor
    a bind of that very port, takes it (a port picked and let go could be: the game then
    failed to start); once released, it binds."""
    hold = PortHold("127.0.0.1")
    try:
        others = []
        for _ in range(200):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", 0))
                others.append(s.getsockname()[1])
        assert hold.port not in others
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            with pytest.raises(OSError) as taken:
                s.bind(("127.0.0.1", hold.port))
            assert taken.value.errno == errno.EADDRINUSE
    finally:
        hold.release()
    hold.release()  # (idempotent)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", hold.port))
        s.listen()


def test_a_port_hold_on_an_address_not_here_says_so() -> None:
    with pytest.raises(NertzError, match=r"cannot bind on 192\.0\.2\.1"):
        PortHold("192.0.2.1")
