"""The scripts' children bind port 0 and say the port they got (``scripts/ports.py``): what
``chaos.py``, ``bench_lan.py``, ``bench_flood.py`` and ``bench_transport.py`` stand on, on real
processes and real sockets (tests/test_bench_lan.py and test_bench_flood.py run those whole)."""

from __future__ import annotations

import json
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from subprocess import PIPE, Popen

import pytest
import zmq

from cli.bots import FREE_PORT
from p2p_nertz.errors import NertzError
from p2p_nertz.testing.games import bot_game
from tests.script_helpers import SCRIPTS, load_script

ports = load_script("ports")

pytestmark = pytest.mark.timeout(120)

#: A game child as the scripts' are: binds port 0 (TCP), says it, hears the others', prints them.
_PEER = """
import json, socket, sys
sys.path.insert(0, sys.argv[1])
from ports import read_peers, say_bound
with socket.create_server(("127.0.0.1", 0)) as server:
    say_bound(f"tcp://127.0.0.1:{server.getsockname()[1]}")
    print(json.dumps(read_peers(int(sys.argv[2]))), flush=True)
"""


def test_an_echo_child_says_the_port_it_bound_and_answers_there() -> None:
    argv = [sys.executable, str(SCRIPTS / "bench_transport.py"), "_echo", FREE_PORT]
    with Popen(argv, stdout=PIPE, text=True) as echo:
        try:
            endpoint = ports.read_bound(echo)
            assert endpoint.startswith("tcp://127.0.0.1:") and not endpoint.endswith(":0")
            ctx = zmq.Context()
            try:
                dealer = ctx.socket(zmq.DEALER)
                dealer.setsockopt(zmq.LINGER, 0)
                dealer.setsockopt(zmq.RCVTIMEO, 60_000)  # (a bound on a stuck echo, not a pace)
                dealer.connect(endpoint)
                dealer.send(b"STOP")
                assert dealer.recv() == b"STOP"
                dealer.close()
            finally:
                ctx.term()
            assert echo.wait(60) == 0
        finally:
            echo.kill()


def test_a_child_that_stops_before_it_binds_is_said_not_waited_for() -> None:
    argv = [sys.executable, "-c", "import sys; print('no port here'); sys.exit(3)"]
    with (
        Popen(argv, stdout=PIPE, text=True) as child,
        pytest.raises(RuntimeError, match=r"did not bind \(exit 3\): 'no port here"),
    ):
        ports.read_bound(child)


def test_a_child_that_says_nothing_is_not_waited_for_for_good_and_is_ended() -> None:
    argv = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    with Popen(argv, stdin=PIPE, stdout=PIPE, text=True) as child:
        with pytest.raises(
            RuntimeError, match=r"a server child said nothing: not within 0.2 s"
        ) as raised:
            ports.read_bound(child, within=0.2)  # (it never will: it reads its input)
        # What it was doing said, and it ended.
        assert f"process {child.pid}: " in str(raised.value)
        assert child.returncode == -9


def _start(stack: ExitStack, code: str, players: int, out: Path, err: Path) -> Popen[bytes]:
    """A game child running ``code`` (its stdin a pipe, its output in files)."""
    with out.open("wb") as stdout, err.open("wb") as stderr:
        argv = [sys.executable, "-c", code, str(SCRIPTS), str(players)]
        proc = stack.enter_context(Popen(argv, stdin=PIPE, stdout=stdout, stderr=stderr))
    stack.callback(proc.kill)  # (first: a child left waiting ends with the test)
    return proc


def test_game_children_each_hear_every_other_members_bound_endpoint(tmp_path: Path) -> None:
    n = 3
    _, spec = bot_game(b"ports", n, 1)
    outs = [tmp_path / f"p{s}.out" for s in range(n)]
    with ExitStack() as stack:
        procs = [_start(stack, _PEER, n, out, out.with_suffix(".err")) for out in outs]
        endpoints = ports.introduce(spec, procs, outs)
        assert [p.wait(60) for p in procs] == [0] * n
    assert len(set(endpoints)) == n and not any(e.endswith(":0") for e in endpoints)
    for seat, out in enumerate(outs):
        said, heard = (json.loads(line) for line in out.read_text().splitlines())
        assert said == {"event": "bound", "endpoint": endpoints[seat]}
        assert heard == {str(s): e for s, e in enumerate(endpoints) if s != seat}


def test_a_game_child_that_stops_before_it_binds_stops_the_introduction(
    tmp_path: Path,
) -> None:
    _, spec = bot_game(b"ports", 2, 1)
    outs = [tmp_path / "p0.out", tmp_path / "p1.out"]
    errs = [tmp_path / "p0.err", tmp_path / "p1.err"]
    codes = [_PEER, "raise SystemExit('no such spec')"]
    with ExitStack() as stack:
        procs = [_start(stack, c, 2, o, e) for c, o, e in zip(codes, outs, errs, strict=True)]
        with pytest.raises(NertzError, match="P2 stopped: no such spec"):
            ports.introduce(spec, procs, outs, errs)
        # The one that bound hears that no peers come (its stdin closed), and ends.
        assert procs[0].wait(60) == 0
    assert outs[0].read_text().splitlines()[1] == "{}"


def test_a_scripts_run_has_a_player_lock_scope_of_its_own_unless_one_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two runs of a seeded script at once play the same keys in the same game: without a scope
    # of each run's own, each run's nodes refuse the other's as a player's second process.
    from p2p_nertz.runtime.playerlock import SCOPE_ENV

    monkeypatch.delenv(SCOPE_ENV)
    ports.own_player_locks()
    mine = os.environ[SCOPE_ENV]
    assert str(os.getpid()) in mine.split()
    monkeypatch.setenv(SCOPE_ENV, "a test's")
    ports.own_player_locks()
    assert os.environ[SCOPE_ENV] == "a test's"  # (a scope given is kept)
