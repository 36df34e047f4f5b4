"""The no-majority notice on real nodes: a table of four split 2|2 in a lab, every ``nertz
node`` says who is out of reach, and says when they are back once the halves meet again
(docs/protocol.md §9.5, *No majority here*; protocol/reach.py).

Before session 27 the notice was checked on real nodes by hand only (80 s a game): the unit
tests (tests/test_out_of_reach.py) drive the simulator and the printers apart. Here four
``nertz -v node`` processes, one per namespace of a :class:`~p2p_nertz.testing.netns.Lab`,
each print an ``out_of_reach`` line naming the two across the split and then an ``in_reach``
line, and each logs both on stderr (the runtime's log, ``p2p_nertz.node``). Nobody is
voted out: the split heals long before ``drop_after``. Needs root and iproute2 (skipped with
the reason where namespaces cannot be made).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli.keyfile import write_key
from p2p_nertz.testing.games import bot_game
from p2p_nertz.testing.netns import Lab, unavailable
from p2p_nertz.testing.stalls import describe as doing_now

_WHY = unavailable()
pytestmark = [
    pytest.mark.netns,
    pytest.mark.slow,
    pytest.mark.skipif(_WHY is not None, reason=f"no network namespaces here: {_WHY}"),
]

PORT = 7701
# drop_after far past the split: only suspicion acts, so the notice is the split's alone, and
# a process starved by load for a while is not voted out (a drop would change the roster).
TIMERS = ("--suspect-after", "1", "--drop-after", "30")
# Generous: four Python processes start in namespaces on a loaded machine; only a hang waits
# this long (every wait below ends on what it waits for).
WAIT = 90.0


class Node:
    """One ``nertz node`` process in one namespace, its output in files."""

    def __init__(self, lab: Lab, seat: int, tmp: Path, argv: list[str]) -> None:
        self.seat = seat
        self.out = tmp / f"p{seat}.out"
        self.err = tmp / f"p{seat}.err"
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.proc = lab.popen(
                seat,
                [sys.executable, "-m", "cli", "-v", "node", *argv],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
            )

    def events(self, kind: str) -> list[dict[str, Any]]:
        lines = self.out.read_text(errors="replace").splitlines()
        found = [json.loads(line) for line in lines if line.startswith("{")]
        return [e for e in found if e.get("event") == kind]

    def lake(self) -> int:
        return len(self.events("lake"))

    def describe(self) -> str:
        """What it said, and what it is doing if it still runs (:mod:`p2p_nertz.testing.stalls`)."""
        out = self.out.read_text(errors="replace")
        code = self.proc.poll()
        doing = f"(exit {code})" if code is not None else doing_now(self.proc.pid)
        said = f"{out[-800:]}\n{self.err.read_text(errors='replace')[-1500:]}"
        return f"P{self.seat + 1}: {said}\n{doing}"


def wait_until(what: str, ready: Callable[[], bool], nodes: list[Node]) -> None:
    """Poll an observable condition until it holds (the deadline only against a hang)."""
    deadline = time.monotonic() + WAIT
    while not ready():
        for node in nodes:
            if node.proc.poll() is not None:
                pytest.fail(f"{what}: P{node.seat + 1} ended\n" + node.describe())
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {WAIT} s\n" + "\n".join(map(Node.describe, nodes)))
        time.sleep(0.05)


def start_nodes(lab: Lab, tmp: Path, players: int) -> tuple[list[Node], list[str]]:
    """The nodes of a game of ``players`` (seat ``s`` in host ``s``) and their names."""
    identities, spec = bot_game(b"lan-reach", players, 27)
    (tmp / "game.spec").write_bytes(spec.to_wire())
    endpoints = [f"tcp://{lab.address(s)}:{PORT}" for s in range(players)]
    nodes = []
    for seat, identity in enumerate(identities):
        write_key(tmp / f"p{seat}.key", identity)
        argv = [
            "--key", str(tmp / f"p{seat}.key"), "--spec", str(tmp / "game.spec"),
            "--bind", endpoints[seat], "--log", str(tmp / f"p{seat}.log"),
            "--json", "--progress", "--speed", "10", *TIMERS,
        ]  # fmt: skip
        argv += [f"--peer={o}={endpoints[o]}" for o in range(players) if o != seat]
        nodes.append(Node(lab, seat, tmp, argv))
    return nodes, [m.name for m in spec.members]


def test_lan_two_two_split_every_node_says_who_is_out_of_reach_and_when_they_are_back(
    tmp_path: Path,
) -> None:
    halves = [0, 0, 1, 1]
    across = {0: [2, 3], 1: [2, 3], 2: [0, 1], 3: [0, 1]}
    with Lab(4) as lab:
        nodes, names = start_nodes(lab, tmp_path, 4)
        wait_until("the table plays", lambda: any(n.lake() >= 3 for n in nodes), nodes)
        # What each said before the split (a node starved by load may have been suspected
        # by two at once: a notice of its own, not the split's).
        before = [len(n.events("out_of_reach")) for n in nodes]
        lab.split(halves)

        def split_said(node: Node) -> bool:
            said = node.events("out_of_reach")[before[node.seat] :]
            return any(e["seats"] == across[node.seat] for e in said)

        wait_until("every node says the half across is out of reach", lambda: all(
            split_said(n) for n in nodes
        ), nodes)  # fmt: skip
        back_before = [len(n.events("in_reach")) for n in nodes]
        lab.split([0, 0, 0, 0])

        def back(node: Node) -> list[dict[str, Any]]:
            return node.events("in_reach")[back_before[node.seat] :]

        wait_until("every node says they are back", lambda: all(back(n) for n in nodes), nodes)
        for node in nodes:
            said = node.events("out_of_reach")[before[node.seat] :]
            notice = next(e for e in said if e["seats"] == across[node.seat])
            assert notice["names"] == [names[s] for s in across[node.seat]]
            assert "nobody can be dropped without a majority" in notice["words"]
            # The first of them heard again makes a majority: that is the end of it (heard,
            # not a roster changed: the split was far shorter than drop_after).
            over = back(node)[0]
            assert over["seats"] and set(over["seats"]) <= set(across[node.seat]), over
            assert over["words"].endswith("the table has a majority again"), over
        # The runtime logs both where a person looks (``nertz -v``: stderr).
        for node in nodes:
            err = node.err.read_text(errors="replace")
            them = ", ".join(names[s] for s in across[node.seat])
            assert f"no majority here: {them} out of reach" in err, node.describe()
            assert "a majority again: " in err, node.describe()
            assert "Traceback" not in err, node.describe()
        # (The game then ends alike, as any game whose split healed before a drop: the lab
        # stops the nodes here, the test keeps to the notice, well under 30 s.)
