"""A shuffle game's turn-up latency against a claim's finality, in the same simulated games.

Issue 19's target: a turn-up median under 2x the finality of a claim. Both are measured in one
fault-free simulated shuffle game per table size, on a network of a fixed one-way delay (no
jitter), in round trips of that delay (simulated time: the CPU of the shares is not in it; it is
``scripts/bench_deck.py``'s, 2-5 ms a turn-up per peer):

- **turn-up**: a move that turns cards up is sent -> its mover has received every other
  member's share of every card it turned (its tentative fold opens them then: shuffle.md §10.3);
- **claim finality**: a claim is sent -> its decision is final at its claimant (and at every
  peer), the ``ClaimDecided`` notice of the final fold.

Usage: ``python scripts/bench_turnup.py [--delay 0.01] [--players 2 3 4]``.
"""

from __future__ import annotations

import argparse
import os
import statistics

from p2p_nertz.protocol.bodies import DeckEvent, parse_body
from p2p_nertz.protocol.effects import Record, Send
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import ClaimDecided
from p2p_nertz.rules import Rules
from p2p_nertz.sim.network import Faults, SimConfig, Simulation


def measure(players: int, delay: float, seed: int) -> tuple[list[float], list[float], list[float]]:
    """Turn-ups, claims final at the claimant, claims final everywhere: in round trips."""
    config = SimConfig(
        players=players,
        seed=seed,
        faults=Faults(delay=delay, jitter=0.0),
        rules=Rules(target=None, rounds=1),
        deal=Deal.SHUFFLE,
        record_effects=True,
    )
    result = Simulation(config).run()
    spec = result.spec
    rtt = 2 * delay
    pending: dict[tuple[int, int, int], tuple[float, set[int]]] = {}  # (mover, deck, pos)
    turnups: list[float] = []
    claim_at: dict[tuple[int, int], float] = {}
    decided: dict[tuple[int, int], list[tuple[int, float]]] = {}
    last_move: dict[int, float] = {}
    for now, seat, effect in result.effects:
        if isinstance(effect, Send) and effect.to is None:
            message = decode_message(effect.data)
            if message.kind in (Kind.MOVE, Kind.CLAIM):
                last_move[seat] = now
                if message.kind is Kind.CLAIM:
                    claim_at[(message.lamport, seat)] = now
            elif message.kind is Kind.DECK_SHARES and now == last_move.get(seat):
                # The mover's shares in the flush of its move: the cards it turned up.
                body = parse_body(message.kind, message.body, spec.seats)
                assert isinstance(body, DeckEvent)
                others = set(range(players)) - {seat}
                for share in body.message.shares:  # type: ignore[union-attr]
                    pending[(seat, share.deck, share.position)] = (now, set(others))
        elif isinstance(effect, Record):
            message = decode_message(effect.data)
            author = spec.seat_of(message.author)
            if message.kind is not Kind.DECK_SHARES or author == seat:
                continue
            body = parse_body(message.kind, message.body, spec.seats)
            assert isinstance(body, DeckEvent)
            for share in body.message.shares:  # type: ignore[union-attr]
                entry = pending.get((seat, share.deck, share.position))
                if entry is not None:
                    entry[1].discard(author)
                    if not entry[1]:
                        turnups.append((now - entry[0]) / rtt)
                        del pending[(seat, share.deck, share.position)]
        elif isinstance(effect, ClaimDecided):
            claim = effect.resolution.claim
            decided.setdefault((claim.lamport, claim.seat), []).append((seat, now))
    own = [
        (t - claim_at[key]) / rtt
        for key, finals in decided.items()
        if key in claim_at
        for s, t in finals
        if s == key[1]
    ]
    everywhere = [
        (max(t for _, t in finals) - claim_at[key]) / rtt
        for key, finals in decided.items()
        if key in claim_at and len(finals) == players
    ]
    return turnups, own, everywhere


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.01, help="one-way delay, seconds")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    print(
        f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (figures: simulated time)"
    )
    print(f"one-way delay {args.delay * 1000:.0f} ms; figures in round trips (RTT)")
    print(" players  turn-ups  median  p90   claims  final@claimant  final@all  turn-up/claim@all")
    for players in args.players:
        turnups, own, everywhere = measure(players, args.delay, args.seed)
        if not turnups or not everywhere:
            print(f"{players:8d}  (no turn-up or no claim measured)")
            continue
        tu = statistics.median(turnups)
        p90 = sorted(turnups)[int(0.9 * (len(turnups) - 1))]
        claim = statistics.median(everywhere)
        print(
            f"{players:8d}  {len(turnups):8d}  {tu:6.2f}  {p90:4.2f}  {len(everywhere):6d}  "
            f"{statistics.median(own):14.2f}  {claim:9.2f}  {tu / claim:6.2f}"
            + ("  (target < 2: met)" if tu / claim < 2 else "  (target < 2: NOT met)")
        )


if __name__ == "__main__":
    main()
