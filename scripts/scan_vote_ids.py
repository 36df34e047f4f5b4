#!/usr/bin/env python3
"""How often the fuzzer's ``vote_ids`` lie is the one left open (docs/protocol.md §13, *Two
liars at half the table*), and what it does then.

A ``vote_ids`` vote (:mod:`p2p_nertz.sim.liars`) counts all its liar holds of a member's feed
and quotes the ids of its copies with one of them changed. The kind no fold of the votes
tells from an honest vote of a forked member (§9.2, *a vote's ids are its voter's word*):
the changed id is at exactly the count of an honest vote on the same member, which counts
less. Every game of ``scripts/soak.py --liars`` (one liar, ``--players 2-4``) and of
``--liars --two-liars --players 3-4`` in the seed range whose liars tell ``vote_ids`` is
played; each such vote that an honest peer's copy of the liar's feed holds is compared with
every honest vote on the same member in the honest feeds (for silence, withholding, on
proof or a flap fault: the votes whose ids a cut reads; the true ids: an honest peer's
copies). Printed: the games, the lies told, those at an honest voter's count (*the kind*),
and of the games with one, how many broke an invariant (a split, an honest member blamed:
the soak's own checks). Not part of the suite.

    nice -n 10 python scripts/scan_vote_ids.py [--seeds 0-1499] [--two-seeds 0-2499]

(``--seeds ''`` or ``--two-seeds ''``: that mix not played.)
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scanning import span

from p2p_nertz.protocol.bodies import ID_PREFIX, Drop, DropReason, parse_body
from p2p_nertz.protocol.envelope import Kind
from p2p_nertz.sim.liar_games import game, simulate
from p2p_nertz.sim.liars import Lie

if TYPE_CHECKING:
    from p2p_nertz.protocol.peer import Peer


def quoted(body: Drop) -> dict[int, bytes]:
    """Seq -> the id a vote quotes there."""
    first = body.last_seq - len(body.ids) + 1
    return {first + i: prefix for i, prefix in enumerate(body.ids)}


#: The votes whose ids a cut reads (a withdrawal, an abandon and a rejoin quote none that do).
DROPPING = (DropReason.SILENT, DropReason.WITHHELD, DropReason.EQUIVOCATION, DropReason.FLAPPING)


def votes(peer: Peer, seat: int, seats: int, reasons: Sequence[DropReason]) -> list[Drop]:
    """The votes for ``reasons`` in ``peer``'s copy of ``seat``'s feed."""
    found = []
    for m in peer.events(seat):
        if m.kind is Kind.DROP:
            body = parse_body(m.kind, m.body, seats)
            if isinstance(body, Drop) and body.reason in reasons:
                found.append(body)
    return found


def one(seed: int, *, two: bool) -> Counter[str] | None:
    """The tally of seed ``seed``'s game, ``None`` if no liar of it tells ``vote_ids``."""
    players = (3, 4) if two else (2, 4)
    config, liars = game(seed, players=players, two=two)
    lying = {liar.seat for liar in liars if liar.lie is Lie.VOTE_IDS}
    if not lying:
        return None
    run = simulate(config, liars)
    cheaters = config.faults.cheaters
    peers = [p for s, p in enumerate(run.result.peers) if p is not None and s not in cheaters]
    tally: Counter[str] = Counter(games=1)
    if not peers:
        return tally
    ref = max(peers, key=lambda p: sum(len(p.events(q)) for q in range(config.players)))
    true = {q: [m.id[:ID_PREFIX] for m in ref.events(q)] for q in range(config.players)}
    n = config.players
    honest_votes = [v for s in range(n) if s not in cheaters for v in votes(ref, s, n, DROPPING)]
    hit = False
    for seat in lying:
        for body in votes(ref, seat, n, (DropReason.SILENT,)):
            ids = quoted(body)
            feed = true[body.seat]
            changed = [s for s, i in ids.items() if s <= len(feed) and feed[s - 1] != i]
            if len(changed) != 1:
                continue  # (an honest vote of the liar's own code, or one past our copies)
            tally["told"] += 1
            at = changed[0]
            if any(h.seat == body.seat and h.last_seq == at < body.last_seq for h in honest_votes):
                tally["kind"] += 1
                hit = True
    tally["kind games"] += hit
    tally["kind games broken"] += hit and bool(run.result.violations)
    tally["broken"] += bool(run.result.violations)
    return tally


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-1499", help="one-liar seeds (default 0-1499)")
    parser.add_argument("--two-seeds", default="0-2499", help="two-liar seeds (0-2499)")
    args = parser.parse_args(argv)
    mixes = (("one liar", args.seeds, False), ("two liars", args.two_seeds, True))
    for name, seeds, two in (mix for mix in mixes if mix[1]):
        total: Counter[str] = Counter()
        for seed in span(seeds):
            tally = one(seed, two=two)
            if tally is not None:
                total += tally
                if tally["kind"]:
                    broke = "broken" if tally["broken"] else "ok"
                    print(f"{name} seed {seed}: {tally['kind']} at an honest count, {broke}")
        keys = ("games", "told", "kind", "kind games", "kind games broken", "broken")
        print(f"{name} ({seeds}): " + ", ".join(f"{k} {total[k]}" for k in keys), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
