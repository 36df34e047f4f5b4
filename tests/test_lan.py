"""A real LAN: one peer process per network namespace, on a bridge, found by UDP discovery.

Each test builds its own :class:`~p2p_nertz.testing.netns.Lab` (namespaces and a bridge that
exist only for the test); beacons go to the lab's broadcast address, never to this machine's
own interfaces. Needs root and iproute2: skipped, with the reason, where namespaces cannot be
made (CI runs as root).
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
from cli_helpers import cli_run

from p2p_nertz.logfile import RecordKind, read_log
from p2p_nertz.protocol.envelope import decode_message
from p2p_nertz.runtime.node import read_session
from p2p_nertz.testing.netns import BROADCAST, Lab, unavailable
from p2p_nertz.testing.said import NeverSaid
from p2p_nertz.testing.stalls import describe as doing_now
from tests.cli_helpers import make_key

_WHY = unavailable()
pytestmark = [
    pytest.mark.netns,
    pytest.mark.slow,
    pytest.mark.skipif(_WHY is not None, reason=f"no network namespaces here: {_WHY}"),
]

#: A game standing still this long (no player's log nor output growing) has hung: twice the
#: longest quiet its timers make (the default drop timer, 30 s), whatever the load (a loaded
#: game moves slower, it does not stop).
STILL = 60.0
#: A whole game's bound, from the check on, if it keeps moving (a livelock's): the bots' pace
#: sets a game's length, not the load (a game of 2 players whose slow link healed took 9 to
#: 99 s more to end at the bots' pace, load 11-42; session 33).
GAME_TIMEOUT = 200.0


class Player:
    """One ``nertz`` process in one namespace, its output in files."""

    def __init__(self, lab: Lab, host: int, tmp: Path, argv: list[str]) -> None:
        self.host = host
        self.dir = tmp / f"h{host}"
        self.dir.mkdir(exist_ok=True)
        self.out = self.dir / "out.jsonl"
        self.err = self.dir / "err.txt"
        self.argv = argv
        self.lab = lab
        self.proc = self._start(argv)

    def _start(self, argv: list[str]) -> subprocess.Popen[bytes]:
        with self.out.open("ab") as out, self.err.open("ab") as err:
            return self.lab.popen(
                self.host,
                [sys.executable, "-m", "cli", *argv],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
            )

    def restart(self, argv: list[str]) -> None:
        self.proc = self._start(argv)

    def events(self) -> list[dict[str, Any]]:
        lines = self.out.read_text(errors="replace").splitlines()
        return [json.loads(line) for line in lines if line.startswith("{")]

    def event(self, kind: str) -> dict[str, Any] | None:
        found = [e for e in self.events() if e.get("event") == kind]
        return found[-1] if found else None

    def log(self) -> Path:
        (path,) = self.dir.glob("logs/*.log")
        return path

    def describe(self) -> str:
        """What it said, and what it is doing if it still runs (:mod:`p2p_nertz.testing.stalls`)."""
        code = self.proc.poll()
        doing = f"(exit {code})" if code is not None else doing_now(self.proc.pid)
        said = f"{self.out.read_text()[-600:]} {self.err.read_text()[-1500:]}"
        return f"host {self.host}: {said}\n{doing}"


def wait_until(what: str, ready: Callable[[], bool], players: list[Player], timeout: float) -> None:
    """Poll an observable condition until it holds (a deadline, not a sleep standing in for it)."""
    deadline = time.monotonic() + timeout
    while not ready():
        for p in players:
            if p.proc.poll() not in (None, 0):
                pytest.fail(f"{what}: a process failed\n" + p.describe())
        if time.monotonic() > deadline:
            pytest.fail(
                f"{what}: not within {timeout} s\n" + "\n".join(map(Player.describe, players))
            )
        time.sleep(0.05)


def own_events(player: Player) -> int:
    """How many events the player signed so far (0 before its log exists; a torn tail is
    tolerated: the file is live)."""
    paths = list(player.dir.glob("logs/*.log"))
    if not paths:
        return 0
    with read_log(paths[0]) as reader:
        return sum(1 for r in reader if r.kind is RecordKind.SENT_EVENT)


def _grown(players: list[Player]) -> list[int]:
    """The sizes of every player's output and log files (a game moving writes to them)."""
    files = [f for p in players for f in (p.out, *p.dir.glob("logs/*.log"))]
    return [f.stat().st_size if f.exists() else 0 for f in files]


def check_finished_and_agreed(
    players: list[Player], timeout: float = GAME_TIMEOUT
) -> dict[str, Any]:
    """Every player's process ends with the game over, all on one final digest; the first
    player's final line. A hang's bound, not a pace: the game fails when it stands still for
    :data:`STILL` seconds, or keeps moving past ``timeout``."""
    began = still_from = time.monotonic()
    sizes = _grown(players)
    while any(p.proc.poll() is None for p in players):
        now, grown = time.monotonic(), _grown(players)
        if grown != sizes:
            sizes, still_from = grown, now
        if now - still_from > STILL:
            why = f"it stood still for {STILL:g} s"
        elif now - began > timeout:
            why = f"it kept moving for {timeout:g} s"
        else:
            time.sleep(0.2)
            continue
        pytest.fail(f"the game did not finish: {why}\n" + "\n".join(map(Player.describe, players)))
    for p in players:
        assert p.proc.returncode == 0, p.describe()
    finals = [p.event("final") for p in players]
    assert all(f is not None and f["over"] for f in finals), finals
    assert len({f["digest"] for f in finals if f}) == 1, finals
    assert len({tuple(f["totals"]) for f in finals if f}) == 1, finals
    first = finals[0]
    assert first is not None
    return first


def audited_valid(players: list[Player]) -> dict[str, Any]:
    """The verdict of ``nertz audit --json`` on the players' logs, checked valid."""
    audit = cli_run(
        [sys.executable, "-m", "cli", "audit", "--json", *(str(p.log()) for p in players)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    verdict: dict[str, Any] = json.loads(audit.stdout.splitlines()[-1])
    assert audit.returncode == 0 and verdict["valid"], audit.stdout[-2000:]
    return verdict


def check_nothing_lost(players: list[Player]) -> None:
    """Every log holds its owner's events seq 1..n (none reused) and every other member's."""
    feeds: list[dict[bytes, list[bytes]]] = []
    for p in players:
        with read_log(p.log()) as reader:
            records = list(reader)
            header = reader.header
        session = read_session(records)
        assert header is not None and session is not None
        spec, _ = session
        roster = {pid: s for s, pid in enumerate(spec.peer_ids)}
        held: dict[bytes, list[bytes]] = {}
        own = []
        for r in records:
            if r.kind in (RecordKind.SENT_EVENT, RecordKind.RECEIVED_EVENT):
                m = decode_message(r.data, game_id=spec.game_id, roster=roster)
                held.setdefault(bytes(m.author), []).append(r.data)
                if r.kind is RecordKind.SENT_EVENT:
                    own.append(m.seq)
        assert own == list(range(1, len(own) + 1)), f"host {p.host}: own seqs {own[:5]}..."
        feeds.append({a: sorted(set(w)) for a, w in held.items()})
    for p, feed in zip(players[1:], feeds[1:], strict=True):
        # A game ends only once every event is final, which needs every member to hold it.
        assert feed == feeds[0], f"host {p.host} holds other events than host 0"


def host_argv(players: int, *extra: str) -> list[str]:
    return [
        "host", "--bot", "greedy", "--name", "Ann", "--discover", BROADCAST,
        "--players", str(players), "--rounds", "1", "--json", *extra,
    ]  # fmt: skip


def bot_argv(*extra: str) -> list[str]:
    return ["bot", "--discover", BROADCAST, "--timeout", "30", "--json", *extra]


def start_lan_game(lab: Lab, tmp_path: Path, n: int, *extra: str) -> list[Player]:
    """A game of ``n`` (one round) found by discovery; ``extra``: every player's options."""
    key = tmp_path / "ann.key"
    make_key(key)
    logs = [tmp_path / f"h{host}" / "logs" for host in range(n)]
    players = [
        Player(
            lab,
            0,
            tmp_path,
            [*host_argv(n, *extra), "--key", str(key), "--log-dir", str(logs[0])],
        )
    ]
    for host in range(1, n):
        argv = [*bot_argv("--name", f"bot{host}", *extra), "--log-dir", str(logs[host])]
        players.append(Player(lab, host, tmp_path, argv))
    wait_until(
        "every peer started the game",
        lambda: all(p.event("start") is not None for p in players),
        players,
        60,
    )
    return players


def test_lan_peers_found_by_discovery_play_a_game(tmp_path: Path) -> None:
    with Lab(3) as lab:
        players = start_lan_game(lab, tmp_path, 3)
        found = [p.event("found") for p in players[1:]]
        assert all(f is not None and f["endpoint"].startswith("tcp://10.77.0.1:") for f in found)
        starts = [p.event("start") for p in players]
        assert len({s["game_id"] for s in starts if s}) == 1
        check_finished_and_agreed(players)
        check_nothing_lost(players)


def test_lan_partition_mid_round_heals_and_the_game_agrees(tmp_path: Path) -> None:
    with Lab(4) as lab:
        players = start_lan_game(lab, tmp_path, 4)
        cut = players[3]
        wait_until("host 3 is playing", lambda: own_events(cut) >= 15, players, 60)
        lab.cut(3)
        # Nothing becomes final without host 3's acks: the others notice its silence...
        wait_until(
            "the others suspect host 3",
            lambda: all(p.event("suspected") is not None for p in players[:3]),
            players,
            60,
        )
        assert all(p.event("suspected")["name"] == "bot3" for p in players[:3])  # type: ignore[index]
        lab.heal(3)
        # ...and hear it again once the link is back, before anyone could vote it out.
        wait_until(
            "host 3 is heard again",
            lambda: all(p.event("heard") is not None for p in players[:3]),
            players,
            60,
        )
        check_finished_and_agreed(players)
        check_nothing_lost(players)


def test_lan_peer_killed_mid_round_resumes_from_its_log(tmp_path: Path) -> None:
    with Lab(3) as lab:
        players = start_lan_game(lab, tmp_path, 3)
        victim = players[2]
        wait_until("host 2 is playing", lambda: own_events(victim) >= 15, players, 60)
        victim.proc.kill()  # SIGKILL: no leave, no flush beyond what was durable
        victim.proc.wait()
        log = victim.log()
        victim.restart(["resume", str(log), "--bot", "greedy", "--json"])
        check_finished_and_agreed(players)
        assert victim.event("resume") is not None
        check_nothing_lost(players)


def test_lan_two_players_cut_apart_past_drop_both_abandon_and_agree(tmp_path: Path) -> None:
    # Two players, the link cut for good mid-round: nobody can be dropped at two, so each side
    # abandons the other after --drop-after of silence (§9.3, §9.5). The round in progress is
    # void; no round was scored, so neither result is provisional: both end at once, on the
    # same result, and the two logs together are a valid game (scripts/chaos.py --lab
    # --players 2 --kinds cut-one --length past ran the longer games of this kind).
    with Lab(2) as lab:
        players = start_lan_game(lab, tmp_path, 2, "--suspect-after", "1", "--drop-after", "3")
        wait_until("host 1 is playing", lambda: own_events(players[1]) >= 15, players, 60)
        lab.cut(1)
        final = check_finished_and_agreed(players)
    assert final["rounds"] == 0 and not final["provisional"]
    for p in players:  # each side abandoned the other (the seats go by key, not by host)
        mine, said = p.event("final"), p.event("dropped")
        assert mine is not None and said is not None
        assert mine["dropped"] == [said["seat"]] == [1 - mine["seat"]] and not said["left"]
    verdict = audited_valid(players)
    assert verdict["finished"] and verdict["totals"] == final["totals"]
    assert verdict["dropped"] and verdict["errors"] == 0


#: A listener in a lab host: discover() on port 0, the port it bound printed first, then the
#: table it heard (one JSON line).
_LISTEN = """
import functools, json, sys, trio
from p2p_nertz.runtime.lobby import discover

async def main():
    heard = []
    async with trio.open_nursery() as nursery:
        listen = functools.partial(
            discover, sys.argv[1], port=0, timeout=60, until=lambda o: True, on_offer=heard.append
        )
        print(await nursery.start(listen), flush=True)
    for offer in heard:
        print(json.dumps({"name": offer.beacon.name, "endpoint": offer.lobby_endpoint}))

trio.run(main)
"""


def test_lan_discover_on_port_0_says_the_port_a_host_then_beacons_to(tmp_path: Path) -> None:
    # discover() reports the UDP port it bound (port 0: the system's pick, known only to it);
    # a host told that port broadcasts its beacons there on the lab's LAN, and is heard.
    key = tmp_path / "ann.key"
    make_key(key)
    with Lab(2) as lab:
        listener = lab.start(
            0, [sys.executable, "-c", _LISTEN, BROADCAST], ready="", name="the listener"
        )
        port = int(listener.lines[0])
        assert 0 < port < 65536
        argv = [*host_argv(2), "--key", str(key), "--log-dir", str(tmp_path / "logs")]
        host = Player(lab, 1, tmp_path, [*argv, "--beacon-port", str(port)])
        try:
            listener.wait_for("{", 90)  # (a hang's bound: discover() itself gives up at 60 s)
            listener.proc.wait(60)  # (it heard a table: it says it and ends)
        except (NeverSaid, subprocess.TimeoutExpired) as exc:
            pytest.fail(f"no beacon heard on the port discover() said: {exc}\n{host.describe()}")
        listener.close()
    (line,) = listener.lines[1:]
    heard = json.loads(line)
    assert heard["name"] == "Ann" and heard["endpoint"].startswith(f"tcp://{lab.address(1)}:")
