"""A shuffle game's turn-up latency against a claim's finality, in the same simulated games.

Issue 19's target: a turn-up median under 2x the finality of a claim. Both are measured in one
fault-free simulated shuffle game per table size, on a network of a fixed one-way delay (and a
uniform jitter of ``± --jitter``, none unless given), in round trips of that delay (simulated
time: the CPU of the shares is not in it; it is ``scripts/bench_deck.py``'s, 0.7-3 ms a
turn-up per peer):

- **turn-up**: a move that turns cards up is sent -> its mover has received every other
  member's share of every card it turned (its tentative fold opens them then: shuffle.md §10.3);
- **claim finality**: a claim is sent -> its decision is final at its claimant (and at every
  peer), the ``ClaimDecided`` notice of the final fold.
- **the deal**: the first ``deck_key`` sent -> every peer has sent its shares of the deal's
  face-up cards (its final fold holds every stage);
- **CPU per turn-up**: the process CPU time (``time.process_time``) the peers spend in the
  shuffle's share work of play (the shares they owe found and made, the others' checked, the
  cards opened: ``Duties._sharable`` and ``_shares``, ``DeckRound.turn_up`` and
  ``take_shares``), per position opened and per peer. The simulator runs every peer in one
  process: the deck layer's caches of pure checks are turned off here, so that each peer
  checks each share as it would on its own machine.

Since session 20 (docs/shuffle.md §10.14) a member's turn-up shares also travel in a
``deck_reveal`` beat sent ahead of the log's write: a turn-up counts each other member's share
from the first of its beat (taken by the mover) and its ``deck_shares`` (recorded by the mover);
``feed-only`` counts the events alone, in the same run. ``--sync`` gives the log's write a time
(``Faults.sync``): a message sent after a record of the same input leaves that much later.

Usage: ``python scripts/bench_turnup.py [--delay 0.01] [--players 2 3 4] [--sync 0.005]``.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from p2p_nertz.deck import group, proofs, shares
from p2p_nertz.protocol.bodies import DeckEvent, parse_body
from p2p_nertz.protocol.delivery import Delivery
from p2p_nertz.protocol.duties import Duties
from p2p_nertz.protocol.effects import Record, Send
from p2p_nertz.protocol.envelope import Kind, decode_message
from p2p_nertz.protocol.shuffle import DeckRound
from p2p_nertz.protocol.spec import Deal
from p2p_nertz.protocol.state import ClaimDecided
from p2p_nertz.rules import Rules
from p2p_nertz.sim.network import Faults, SimConfig, Simulation


class ShareCpu:
    """CPU time spent inside the share work of play (outermost calls only)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._depth = 0

    def wrap(self, owner: Any, name: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._depth += 1
            started = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                self._depth -= 1
                if not self._depth:
                    self.seconds += time.process_time() - started

        setattr(owner, name, timed)


def _instrument() -> ShareCpu:
    cpu = ShareCpu()
    for owner, name in (
        (Duties, "_sharable"),
        (Duties, "_shares"),
        (DeckRound, "turn_up"),
        (DeckRound, "take_shares"),
    ):
        cpu.wrap(owner, name)
    # Every peer checks every share itself (one process here: no cache shared among peers).
    # (Nor is a share another member made here taken as proved: session 41's PROVEN.)
    shares.verify_equal = proofs._verified  # type: ignore[assignment]
    group._is_point = group._is_point.__wrapped__  # type: ignore[assignment]
    return cpu


CPU = _instrument()


#: (sim time, receiving seat, author seat, round, its shares) of each deck_reveal taken
REVEALS: list[tuple[float, int, int, int, tuple[Any, ...]]] = []


def _hear_reveals() -> None:
    """Note every ``deck_reveal`` a peer takes (docs/shuffle.md §10.14), with its time."""
    original = Delivery._receive_reveal

    def noted(self: Delivery, *args: Any) -> Any:
        seat, _, body, now, _ = args
        REVEALS.append((now, self.seat, seat, body.round, body.shares))
        return original(self, *args)

    Delivery._receive_reveal = noted  # type: ignore[method-assign]


_hear_reveals()


def measure(
    players: int, delay: float, seed: int, jitter: float = 0.0, sync: float = 0.0
) -> tuple[list[float], list[float], list[float], float, float, list[float]]:
    """Turn-ups, claims final at the claimant, claims final everywhere, the deal (in round
    trips), the share work's CPU seconds per position opened and peer, and the turn-ups
    counted by the others' ``deck_shares`` events alone (the feed's path, beats ignored)."""
    config = SimConfig(
        players=players,
        seed=seed,
        faults=Faults(delay=delay, jitter=jitter, sync=sync),
        rules=Rules(target=None, rounds=1),
        deal=Deal.SHUFFLE,
        record_effects=True,
    )
    CPU.seconds = 0.0
    REVEALS.clear()
    result = Simulation(config).run()
    share_cpu = CPU.seconds
    spec = result.spec
    rtt = 2 * delay
    pending: dict[tuple[int, ...], tuple[float, set[int]]] = {}  # (mover, round, deck, pos)
    by_feed: dict[tuple[int, ...], float] = {}  # (mover, round, deck, pos, author) -> time
    turnups: list[float] = []
    claim_at: dict[tuple[int, int], float] = {}
    decided: dict[tuple[int, int], list[tuple[int, float]]] = {}
    last_move: dict[int, float] = {}
    opened: set[tuple[int, int]] = set()  # (deck, position) a share was sent for
    keyed: list[float] = []
    face_up: dict[int, float] = {}  # seat -> its first deck_shares sent
    for now, seat, effect in result.effects:
        if isinstance(effect, Send) and effect.to is None:
            message = decode_message(effect.data)
            if message.kind in (Kind.MOVE, Kind.CLAIM):
                last_move[seat] = now
                if message.kind is Kind.CLAIM:
                    claim_at[(message.lamport, seat)] = now
            elif message.kind is Kind.DECK_KEY:
                keyed.append(now)
            elif message.kind is Kind.DECK_SHARES:
                face_up.setdefault(seat, now)
                body = parse_body(message.kind, message.body, spec.seats)
                assert isinstance(body, DeckEvent)
                entries = body.message.shares  # type: ignore[union-attr]
                opened.update((share.deck, share.position) for share in entries)
                if now == last_move.get(seat):
                    # The mover's shares in the flush of its move: the cards it turned up.
                    others = set(range(players)) - {seat}
                    for share in entries:
                        where = (seat, body.round, share.deck, share.position)
                        pending[where] = (now, set(others))
        elif isinstance(effect, Record):
            message = decode_message(effect.data)
            author = spec.seat_of(message.author)
            if message.kind is not Kind.DECK_SHARES or author == seat:
                continue
            body = parse_body(message.kind, message.body, spec.seats)
            assert isinstance(body, DeckEvent)
            for share in body.message.shares:  # type: ignore[union-attr]
                if (seat, body.round, share.deck, share.position) in pending:
                    by_feed.setdefault((seat, body.round, share.deck, share.position, author), now)
        elif isinstance(effect, ClaimDecided):
            claim = effect.resolution.claim
            decided.setdefault((claim.lamport, claim.seat), []).append((seat, now))
    by_beat: dict[tuple[int, ...], float] = {}
    for now, seat, author, number, entries in REVEALS:
        for share in entries:
            if (seat, number, share.deck, share.position) in pending:
                by_beat.setdefault((seat, number, share.deck, share.position, author), now)
    feed_only: list[float] = []
    for where, (start, others) in pending.items():
        keys = [(*where, q) for q in others]
        if all(k in by_feed for k in keys):
            feed_only.append((max(by_feed[k] for k in keys) - start) / rtt)
        if all(k in by_feed or k in by_beat for k in keys):
            first = [min(by_feed.get(k, float("inf")), by_beat.get(k, float("inf"))) for k in keys]
            turnups.append((max(first) - start) / rtt)
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
    deal = (max(face_up.values()) - min(keyed)) / rtt if keyed and face_up else float("nan")
    cpu = share_cpu / max(len(opened), 1) / players
    return turnups, own, everywhere, deal, cpu, feed_only


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.01, help="one-way delay, seconds")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument(
        "--jitter", type=float, default=0.0, help="± uniform on each delay, seconds (default 0)"
    )
    parser.add_argument(
        "--sync",
        type=float,
        default=0.0,
        help="the log's write: a message sent after a record of its input leaves this much"
        " later, seconds (default 0; a deck_reveal goes ahead of it)",
    )
    args = parser.parse_args()
    print(
        f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (figures: simulated time)"
    )
    print(
        f"one-way delay {args.delay * 1000:.0f} ms, jitter {args.jitter * 1000:.0f} ms,"
        f" log write {args.sync * 1000:.0f} ms; figures in round trips (RTT of the delay)"
    )
    print(
        " players  turn-ups  median  p90   p99   claims  final@claimant  final@all"
        "  turn-up/claim@all  p99/claim  deal  CPU/turn-up/peer  feed-only/claim@all"
    )
    for players in args.players:
        turnups, own, everywhere, deal, cpu, feed = measure(
            players, args.delay, args.seed, args.jitter, args.sync
        )
        if not turnups or not everywhere:
            print(f"{players:8d}  (no turn-up or no claim measured)")
            continue
        tu = statistics.median(turnups)
        ranked = sorted(turnups)
        p90 = ranked[int(0.9 * (len(ranked) - 1))]
        p99 = ranked[int(0.99 * (len(ranked) - 1))]
        claim = statistics.median(everywhere)
        print(
            f"{players:8d}  {len(turnups):8d}  {tu:6.2f}  {p90:4.2f}  {p99:4.2f}"
            f"  {len(everywhere):6d}"
            f"  {statistics.median(own):14.2f}  {claim:9.2f}  {tu / claim:17.2f}"
            f"  {p99 / claim:9.2f}  {deal:4.1f}  {cpu * 1e3:13.2f} ms"
            f"  {statistics.median(feed) / claim if feed else float('nan'):19.2f}"
            + ("  (target < 2: met)" if tu / claim < 2 else "  (target < 2: NOT met)")
        )


if __name__ == "__main__":
    main()
