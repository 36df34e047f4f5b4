#!/usr/bin/env python3
"""How long after a cut link comes back the members hear each other again (sessions 33, 34).

A cut shorter than the link window (``HEARTBEAT_IVL_MS`` + the link timeout,
:func:`p2p_nertz.runtime.mesh.link_timeout_ms`) keeps its TCP connections: what was sent
meanwhile waits for TCP's next retransmission, whose timer doubled at each try during the cut
(200 ms, 400 ms, ...), so it may come up to about the cut's length after the link is back.
A longer cut ends the connection at the window, and the new one's SYNs back off in turn.
Session 33 tries a member silent for the suspect timer afresh (:mod:`p2p_nertz.runtime.redial`);
session 34 tries it after 1.5 s of silence, every half second.

This runs ``--members`` members' meshes (the project's own
:class:`~p2p_nertz.runtime.mesh.Mesh`: CURVE, the DEALERs' heartbeat and link timeout), one in
each host of a network-namespace lab (:class:`~p2p_nertz.testing.netns.Lab`), each sending
every other a small message every ``--every`` seconds (a node's beats), cuts host 1 off (or,
with ``--link``, fails the link between hosts 0 and 1) for each length of ``--cuts``, and
prints, for each, how long after the heal member 1 was heard by the last of the others across
and heard the last of them, the re-dials and the members' CPU. Each cut is run as an A/B pair,
in alternating order over ``--runs``: ``now`` (the tries as a node makes them) and
``reference`` (session 33's: from the suspect timer on, every second).

    python scripts/bench_cut_return.py [--cuts 1,2.5,4,7,10,14,20] [--suspect-after 5]
        [--drop-after 30] [--every 0.5] [--link] [--members 2] [--runs 1]

Needs root and iproute2 (the lab).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trio

from p2p_nertz.protocol.identity import Identity
from p2p_nertz.rng import derive_seed
from p2p_nertz.runtime.gate import zap_user_id
from p2p_nertz.runtime.mesh import Mesh
from p2p_nertz.testing.netns import Lab, unavailable
from p2p_nertz.testing.said import READY_BOUND, first_line


def members(n: int) -> list[Identity]:
    """The benchmark's ``n`` members (the same keys every run)."""
    return [Identity.generate(derive_seed(b"bench-cut-return", i)) for i in range(n)]


async def probe(words: Sequence[str]) -> None:
    """One member (a child process in its host): bind, print the endpoint, read every
    member's from stdin (one line), then send each other member a message every ``every`` s
    and print the time of each message heard, and of each re-dial.
    ``words``: ``--probe``'s (me, address, members, suspect, drop, every, early: 1 or 0)."""
    me, address, n, every = int(words[0]), words[1], int(words[2]), float(words[5])
    timers, early = (float(words[3]), float(words[4])), words[6] == "1"
    everyone = members(n)
    since33 = {"suspect_after": timers[0]} if hasattr(Mesh, "heard") else {}
    mesh = Mesh(
        everyone[me],
        [m.peer_id for m in everyone],
        bind=f"tcp://{address}:0",
        drop_after=timers[1],
        **since33,  # type: ignore[arg-type]
    )
    if not early and hasattr(mesh, "redialer"):  # the reference: session 33's tries
        mesh.redialer.silent_after, mesh.redialer.every = timers[0], 1.0
    heard = getattr(mesh, "heard", lambda user_ids: None)  # (before session 33: none)
    print(mesh.bind(), flush=True)
    others = {zap_user_id(m.peer_id): i for i, m in enumerate(everyone) if i != me}
    line = await trio.to_thread.run_sync(sys.stdin.readline)
    mesh.connect(
        {m.peer_id: e for m, e in zip(everyone, line.split(), strict=True) if m != everyone[me]}
    )
    router = mesh.router
    assert router is not None

    async def send() -> None:
        counts = {"redials": 0}
        while True:
            mesh.send(b"beat", None)
            await trio.sleep(every)
            for what, before in counts.items():
                look = getattr(mesh.redialer, what, None)  # (before session 33: none)
                now = sum(look(m.peer_id) for m in everyone if m != everyone[me]) if look else 0
                if now > before:
                    counts[what] = now
                    print(f"{what} {time.monotonic():.4f}", flush=True)

    try:
        async with trio.open_nursery() as nursery:
            mesh.serve_outlets(nursery, b"")
            nursery.start_soon(send)
            while True:
                user_id = (await router.recv_multipart())[-1]
                heard([user_id])
                print(f"heard {others.get(user_id, -1)} {time.monotonic():.4f}", flush=True)
    finally:
        mesh.close()


def heard(path: Path, who: int, after: float) -> float | None:
    """The first time in ``path`` a message from member ``who`` was heard after ``after``."""
    for line in path.read_text().splitlines():
        words = line.split()
        if words[0] == "heard" and int(words[1]) == who and float(words[2]) > after:
            return float(words[2])
    return None


def cpu_seconds(pid: int) -> float:
    """The CPU time process ``pid`` used so far (user and system), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pairs(n: int, link: bool) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(hearer, heard) pairs across the cut: the others hearing member 1, member 1 hearing
    them (a failed link: members 0 and 1 alone)."""
    across = [0] if link else [h for h in range(n) if h != 1]
    return [(h, 1) for h in across], [(1, h) for h in across]


def run_cut(
    lab: Lab, tmp: Path, length: float, args: argparse.Namespace, early: bool
) -> tuple[list[float | None], list[int], float]:
    """One cut: how long after the heal member 1 was heard by all across (the last of them)
    and heard all across; how many re-dials each of the two sides made; and the CPU a member
    used, in percent of one core over its run (the mean of the members)."""
    n = args.members
    outs = [tmp / f"{length}-{int(early)}-{h}.txt" for h in range(n)]
    procs = []
    for h in range(n):
        with outs[h].open("w") as out:
            procs.append(
                lab.popen(
                    h,
                    [sys.executable, __file__, "--probe", str(h), lab.address(h), str(n),
                     str(args.suspect_after), str(args.drop_after), str(args.every),
                     str(int(early))],
                    stdin=subprocess.PIPE, stdout=out, text=True,
                )
            )  # fmt: skip
    try:
        endpoints = []
        for h in range(n):
            name = f"member {h}'s probe"
            endpoints.append(first_line(procs[h], name, path=outs[h]))
        for h in range(n):
            procs[h].stdin.write(" ".join(endpoints) + "\n")  # type: ignore[union-attr]
            procs[h].stdin.flush()  # type: ignore[union-attr]
        everyone = [(a, b) for a in range(n) for b in range(n) if a != b]
        start = time.monotonic()
        while unheard := [(a, b) for a, b in everyone if heard(outs[a], b, start) is None]:
            if time.monotonic() > start + READY_BOUND:  # (a hang's bound, not a timing)
                ended = {h: p.poll() for h, p in enumerate(procs) if p.poll() is not None}
                raise RuntimeError(f"never heard (member, from): {unheard}; ended: {ended}")
            time.sleep(0.05)  # (a poll of files the probes write: nothing to wait on)
        time.sleep(2.0)  # (a steady pace first)
        if args.link:
            lab.cut_link(0, 1)
        else:
            lab.cut(1)
        time.sleep(length)
        if args.link:
            lab.heal_link(0, 1)
        else:
            lab.heal(1)
        healed = time.monotonic()
        bound = healed + length * 2 + args.drop_after + 30
        ways = pairs(n, args.link)
        watched = [pair for way in ways for pair in way]
        while time.monotonic() < bound and any(
            heard(outs[a], b, healed) is None for a, b in watched
        ):
            time.sleep(0.05)
        back: list[float | None] = []
        for way in ways:
            times = [heard(outs[a], b, healed) for a, b in way]
            back.append(None if None in times else max(t for t in times if t) - healed)
        lines = [outs[h].read_text().splitlines() for h in (0, 1)]
        redials = [sum(1 for ln in ls if ln.startswith("redials")) for ls in lines]
        cpu = sum(cpu_seconds(p.pid) for p in procs) / n / (time.monotonic() - start) * 100
        return back, redials, cpu
    finally:
        for p in procs:
            p.kill()
            p.wait()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--probe", nargs=7, help=argparse.SUPPRESS)
    p.add_argument("--cuts", default="1,2.5,4,7,10,14,20")
    p.add_argument("--suspect-after", type=float, default=5.0)
    p.add_argument("--drop-after", type=float, default=30.0)
    p.add_argument("--every", type=float, default=0.5)
    p.add_argument("--link", action="store_true", help="fail the link 0-1, not cut host 1 off")
    p.add_argument("--members", type=int, default=2, help="members, one a host (2 and more)")
    p.add_argument("--runs", type=int, default=1, help="runs of each cut, each an A/B pair")
    args = p.parse_args(argv)
    if args.probe:
        trio.run(probe, args.probe)
        return 0
    why = unavailable()
    if why is not None:
        print(f"no lab here: {why}")
        return 2
    print(
        f"load {os.getloadavg()[0]:.1f}; timers {args.suspect_after:g}/{args.drop_after:g} s,"
        f" a message every {args.every:g} s each way",
        flush=True,
    )
    with Lab(args.members) as lab, tempfile.TemporaryDirectory() as tmp:
        for length in (float(c) for c in args.cuts.split(",")):
            for run in range(args.runs):
                shown = []
                for early in (True, False) if run % 2 == 0 else (False, True):
                    back, redials, cpu = run_cut(lab, Path(tmp), length, args, early)
                    times = ", ".join("never" if b is None else f"{b:.2f}" for b in back)
                    name = "now" if early else "reference"
                    shown.append(
                        (early, f"{name} {times} s (re-dialled {redials}, CPU {cpu:.1f} %)")
                    )
                print(
                    f"cut {length:g} s: heard again after the heal (1 by the others, 1 the"
                    f" others): {'; '.join(text for _, text in sorted(shown, reverse=True))}",
                    flush=True,
                )
    print(f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
