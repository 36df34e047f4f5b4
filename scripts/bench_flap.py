#!/usr/bin/env python3
"""What a vote flapper costs the honest peers (docs/protocol.md §9.2, *a member that flaps*).

A 4-player game in the simulator where the last seat is a :class:`~p2p_nertz.sim.cheats.
VoteFlapper`: it votes seat 0 out for silence and withdraws, ``N`` times, one step every
5 ms of its inputs. A partition (seats 0 and 1 apart from seats 2 and 3, from 1 s to 6 s)
makes every member vote and withdraw once, seat 0 among them: from then on every fold asks
what the membership events before each withdrawal decide (``Roster.before_lift``,
``roster.lifted_trials``), the path whose cost grew with the flaps. For each ``N`` (and 0,
the same game without the cheat, the run's reference) it prints the CPU the three honest
peers spent on their inputs, per input and in all, and that total over the reference's.
Since session 22 a member that withdraws its votes against one member more than
``FLAP_LIMIT`` (16) times in a round commits a flap fault (``p2p_nertz/protocol/flaps.py``):
the others vote it out, and what it signs after counts for nothing. So the cost stops growing
with ``N`` past the limit; each line says whether the cheater was voted out and at which of
its events the fault was found. Deterministic but for the CPU figures: say the load (printed)
beside them.

    python scripts/bench_flap.py [--flaps 10,40,160,640] [--players 4]
"""

from __future__ import annotations

import argparse
import os
import time

from p2p_nertz.rules import Rules
from p2p_nertz.sim import QUICK_TIMERS, Faults, Partition, SimConfig, Simulation
from p2p_nertz.sim.cheats import VoteFlapper

INPUTS = ("start", "feed", "tick", "play", "release_ready", "leave", "abandon")


def measure(players: int, flaps: int) -> tuple[float, int, bool, int, str]:
    """The honest peers' CPU (s) on their inputs, their inputs, whether the game finished,
    how many votes and withdrawals of the cheater seat 0's final fold read, and what seat 0's
    final fold says of the cheater's flap fault."""
    cheater = players - 1
    halves = (frozenset(range(players // 2)), frozenset(range(players // 2, players)))
    faults = Faults(
        delay=0.005,
        jitter=0.002,
        partitions=(Partition(1.0, 6.0, halves),),
        deck_cheats=(VoteFlapper(cheater, 0, flaps, 0.005, 0.5),) if flaps else (),
    )
    config = SimConfig(
        players=players,
        seed=1,
        rules=Rules(target=None, rounds=1),
        faults=faults,
        peer=QUICK_TIMERS,
        max_time=400.0,
    )
    sim = Simulation(config)
    spent = [0.0]
    inputs = [0]
    for seat, peer in enumerate(sim.peers):
        if seat == cheater or peer is None:
            continue
        for name in INPUTS:
            method = getattr(peer, name)

            def timed(*args: object, _method: object = method) -> object:
                start = time.process_time()
                try:
                    return _method(*args)  # type: ignore[operator]
                finally:
                    spent[0] += time.process_time() - start
                    inputs[0] += 1

            setattr(peer, name, timed)
    result = sim.run()
    peer = result.peers[0]
    assert peer is not None
    final = peer.final
    signed = sum(1 for author, _, body in final.roster.read if author == cheater and body)
    fault = getattr(final, "flaps", None)  # (none before session 22)
    at = fault.faults.get(cheater) if fault is not None else None
    verdict = "no flap fault" if at is None else f"flap fault at its event {at}"
    if cheater in final.dropped:
        verdict += ", voted out"
    return spent[0], inputs[0], result.finished, signed, verdict


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flaps", default="10,40,160,640", help="comma-separated flap counts")
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the start")
    reference, _, _, _, _ = measure(args.players, 0)
    print(f"no flapper (reference): honest CPU {reference:.2f} s")
    for flaps in (int(n) for n in args.flaps.split(",")):
        cpu, inputs, finished, signed, verdict = measure(args.players, flaps)
        print(
            f"{flaps:5} flaps: honest CPU {cpu:7.2f} s ({1e3 * cpu / max(inputs, 1):.3f} ms an "
            f"input, {inputs} inputs; {cpu / reference:6.1f} x reference), "
            f"{signed} membership events of the cheater read, finished: {finished}, {verdict}"
        )
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
