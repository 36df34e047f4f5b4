"""A peer fed a dropped member's events one at a time folds what a fold from scratch folds.

Found on real processes (``scripts/chaos.py --lab --players 3 --overlap
cut-halves+cut-one,... --suspect-after 1 --drop-after 4 --seed 603``, session 18): seat 2 cut
off alone, then seat 1 cut off while seat 2 came back; seats 0 and 1 dropped seat 2 at its
seq 31 and readmitted it for the next round. Seat 2's seq 32, signed before its drop, is a
claim of 4S on foundation 0S: past the cut, it never counts (docs/protocol.md §9.2). Seat 1's
live table kept it all the same: its bot claimed 5S on 0S some 700 times in three minutes,
every claim lost at finality (every fold of seat 1's log has 0S at 3S), seat 0's bot said it
was stuck, and the game waited in play until the script killed it, every log valid.

The events are seat 1's log's first 122 (``tests/data/chaos603_p2_events.txt``: ``S``
sent, ``R`` received, the wire in hex); the keys and the game spec are the chaos script's
for seed 603. A core restored from the first 113 and fed the next received ones one at a
time makes the claim *final* at the 118th (stable time 127, the claim's Lamport time): no
drop was decided then (three members each voted on by another, the caps undo each drop).
The 122nd decides seat 2's drop at 31; the final fold, never rolled back, keeps 4S on 0S
under the cut, and so does every tentative fold over it. Restored from the same 122 events,
the core has no 4S on 0S. Each peer's final fold then depends on when its events came: two
honest peers' final tables differ (seat 0's went on without the claim), which the game
cannot get past. The rule the fold names ("none of a member's events past its cut", §9.2,
``folds.py``'s theory of operation) holds for a fold from scratch only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules

DATA = Path(__file__).parent / "data" / "chaos603_p2_events.txt"
SEED = 603  # scripts/chaos.py's game: 3 players, 2 rounds
RESTORED = 113  # events restored from the log before the rest is fed


def _game() -> tuple[Identity, GameSpec]:
    """Seat 1's key and the game, as ``scripts/chaos.py`` made them for the seed."""
    ids = [Identity.generate(derive_seed(b"chaos-key", SEED, k)) for k in range(3)]
    ids.sort(key=lambda i: i.peer_id)
    spec = GameSpec.create(
        [(i.peer_id, f"P{k + 1}") for k, i in enumerate(ids)],
        Rules(target=None, rounds=2),
        derive_seed(b"chaos-game", SEED)[:16],
    )
    return ids[1], spec


def _lake(peer: Peer, *, final: bool = False) -> list[tuple[str, list[str]]]:
    table = (peer.final if final else peer.tentative).table
    assert table is not None
    return [(str(f), [str(c.card) for c in table.lake[f]]) for f in table.lake]


@pytest.mark.xfail(
    strict=True,
    reason="open (finality, folds): an event made final before a drop that cuts it is decided "
    "stays in the final fold, unlike a fold from scratch (chaos seed 603, session 18)",
)
def test_folds_a_fed_core_keeps_no_claim_past_a_cut_decided_later() -> None:
    identity, spec = _game()
    rows = [line.split() for line in DATA.read_text().splitlines()]
    wires = [bytes.fromhex(data) for _, data in rows]
    peer, _ = Peer.restore(identity, spec, wires[:RESTORED], 0.0)
    held = wires[:RESTORED]
    for number, ((kind, _), wire) in enumerate(zip(rows, wires, strict=True)):
        if number < RESTORED or kind != "R":
            continue  # our own events after the restore point: signed live, not fed
        peer.feed(wire, 1.0 + number / 100)
        held.append(wire)
    fresh, _ = Peer.restore(identity, spec, held, 0.0)
    assert dict(fresh.tentative.dropped) == dict(peer.tentative.dropped) == {2: 31}
    assert ("0S", ["AS", "2S", "3S"]) in _lake(fresh, final=True)
    assert dict(fresh.final.dropped) == dict(peer.final.dropped) == {2: 31}
    assert _lake(peer, final=True) == _lake(fresh, final=True)
    assert _lake(peer) == _lake(fresh)
