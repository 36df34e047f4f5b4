#!/usr/bin/env python3
"""How long after a cut link comes back two members hear each other again (session 33).

A cut shorter than the link window (``HEARTBEAT_IVL_MS`` + the link timeout,
:func:`p2p_nertz.runtime.mesh.link_timeout_ms`) keeps its TCP connections: what was sent
meanwhile waits for TCP's next retransmission, whose timer doubled at each try during the cut
(200 ms, 400 ms, ...), so it may come up to about the cut's length after the link is back.
A longer cut ends the connection at the window, and the new one's SYNs back off in turn.

This runs two members' meshes (the project's own :class:`~p2p_nertz.runtime.mesh.Mesh`: CURVE,
the DEALERs' heartbeat and link timeout), one in each host of a network-namespace lab
(:class:`~p2p_nertz.testing.netns.Lab`), each sending the other a small message every
``--every`` seconds (a node's beats), cuts host 1 off for each length of ``--cuts``, and
prints, for each, how long after the heal each member first heard the other again.

    python scripts/bench_cut_return.py [--cuts 1,2.5,4,7,10,14,20] [--suspect-after 5]
        [--drop-after 30] [--every 0.5]

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
from p2p_nertz.runtime.mesh import Mesh
from p2p_nertz.testing.netns import Lab, unavailable

MEMBERS = [Identity.generate(derive_seed(b"bench-cut-return", i)) for i in range(2)]


async def probe(me: int, address: str, timers: tuple[float, float], every: float) -> None:
    """One member (a child process in its host): bind, print the endpoint, read the other's
    from stdin, then send every ``every`` s and print the time of each message heard."""
    since33 = {"suspect_after": timers[0]} if hasattr(Mesh, "heard") else {}
    mesh = Mesh(
        MEMBERS[me],
        [m.peer_id for m in MEMBERS],
        bind=f"tcp://{address}:0",
        drop_after=timers[1],
        **since33,  # type: ignore[arg-type]
    )
    heard = getattr(mesh, "heard", lambda user_ids: None)  # (before session 33: none)
    print(mesh.bind(), flush=True)
    other = MEMBERS[1 - me].peer_id
    endpoint = await trio.to_thread.run_sync(sys.stdin.readline)
    mesh.connect({other: endpoint.strip()})
    router = mesh.router
    assert router is not None

    async def send() -> None:
        n, redials = 0, 0
        while True:
            mesh.send(b"beat %d" % n, other)
            n += 1
            await trio.sleep(every)
            if hasattr(mesh, "redialer") and mesh.redialer.redials(other) > redials:
                redials = mesh.redialer.redials(other)
                print(f"redialled {time.monotonic():.4f}", flush=True)

    try:
        async with trio.open_nursery() as nursery:
            mesh.serve_outlets(nursery, b"")
            nursery.start_soon(send)
            while True:
                heard([(await router.recv_multipart())[-1]])
                print(f"heard {time.monotonic():.4f}", flush=True)
    finally:
        mesh.close()


def heard(path: Path, after: float) -> float | None:
    """The first time in ``path`` a message was heard after ``after``."""
    for line in path.read_text().splitlines():
        if line.startswith("heard ") and float(line.split()[1]) > after:
            return float(line.split()[1])
    return None


def run_cut(lab: Lab, tmp: Path, length: float, args: argparse.Namespace) -> list[float | None]:
    outs = [tmp / f"{length}-{h}.txt" for h in range(2)]
    procs = []
    for h in range(2):
        with outs[h].open("w") as out:
            procs.append(
                lab.popen(
                    h,
                    [sys.executable, __file__, "--probe", str(h), lab.address(h),
                     str(args.suspect_after), str(args.drop_after), str(args.every)],
                    stdin=subprocess.PIPE, stdout=out, text=True,
                )
            )  # fmt: skip
    try:
        endpoints = []
        for h in range(2):
            while not outs[h].read_text().strip():
                time.sleep(0.05)
            endpoints.append(outs[h].read_text().splitlines()[0])
        for h in range(2):
            procs[h].stdin.write(endpoints[1 - h] + "\n")  # type: ignore[union-attr]
            procs[h].stdin.flush()  # type: ignore[union-attr]
        start = time.monotonic()
        while any(heard(out, start) is None for out in outs):
            time.sleep(0.05)
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
        while time.monotonic() < bound and any(heard(out, healed) is None for out in outs):
            time.sleep(0.05)
        return [None if (t := heard(out, healed)) is None else t - healed for out in outs]
    finally:
        for p in procs:
            p.kill()
            p.wait()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--probe", nargs=5, help=argparse.SUPPRESS)
    p.add_argument("--cuts", default="1,2.5,4,7,10,14,20")
    p.add_argument("--suspect-after", type=float, default=5.0)
    p.add_argument("--drop-after", type=float, default=30.0)
    p.add_argument("--every", type=float, default=0.5)
    p.add_argument("--link", action="store_true", help="fail the link, not cut host 1 off")
    args = p.parse_args(argv)
    if args.probe:
        me, address, suspect, drop, every = args.probe
        trio.run(probe, int(me), address, (float(suspect), float(drop)), float(every))
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
    with Lab(2) as lab, tempfile.TemporaryDirectory() as tmp:
        for length in (float(c) for c in args.cuts.split(",")):
            back = run_cut(lab, Path(tmp), length, args)
            shown = ", ".join("never" if b is None else f"{b:.2f} s" for b in back)
            lines = [(Path(tmp) / f"{length}-{h}.txt").read_text().splitlines() for h in range(2)]
            redials = [sum(1 for line in ls if line.startswith("redial")) for ls in lines]
            print(
                f"cut {length:g} s: heard again after the heal: {shown} (re-dialled {redials})",
                flush=True,
            )
    print(f"load {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
