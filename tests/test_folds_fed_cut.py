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
time made the claim *final* at the 118th (stable time 127, the claim's Lamport time): the
votes that drop seat 2 at 31 (seat 0's and seat 1's, Lamport 161) were held, but seat 1's
was capped by seat 0's standing vote on seat 1 (counting 37, signed at 181), so no drop was
decided and nothing held the stable time below the claim. Seat 0 withdrew that vote (205,
the 119th) on hearing seat 1 again, which lifted the cap in the past: the drop was decided
at 161, below what was final, and the final fold, never rolled back, kept 4S on 0S under the
cut. Restored from the same events, the core has no 4S on 0S: two honest peers' final
tables differed (seat 0's went on without the claim). Since session 19 a drop that only the
caps of withdrawable votes keep undecided holds finality back as a decided one does
(``Folds.capped_drops``, ``finality.settle``): the stable time stays at 126 until the drop
is final.

The logs were captured at protocol version 2; since session 39 (version 5; 7 since session
41: docs/protocol.md §4.1) the core reads only its own version, so :func:`_signed_now` signs
each event again by its author at today's version, every id it names (``prev``, the
frontier's and a vote's id prefixes) mapped to the new ids: the same events, the same game
(none is a vote on proof, the one body versions 2 and 5 differ in; 7 differs from 5 in the
size of a drop alone).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgpack  # type: ignore[import-untyped]

from p2p_nertz.protocol.envelope import PROTOCOL_VERSION, SIGNATURE_DOMAIN
from p2p_nertz.protocol.identity import Identity
from p2p_nertz.protocol.peer import Peer
from p2p_nertz.protocol.spec import GameSpec
from p2p_nertz.rng import derive_seed
from p2p_nertz.rules import Rules

DATA = Path(__file__).parent / "data" / "chaos603_p2_events.txt"
#: The second run of the seed (another timing, the same game): seat 1's log's first 139.
DATA_G2 = Path(__file__).parent / "data" / "chaos603_g2_p2_events.txt"
SEED = 603  # scripts/chaos.py's game: 3 players, 2 rounds
RESTORED = 113  # events restored from the log before the rest is fed


def _keys() -> list[Identity]:
    """The three members' keys, as ``scripts/chaos.py`` made them for the seed, in seat order."""
    ids = [Identity.generate(derive_seed(b"chaos-key", SEED, k)) for k in range(3)]
    ids.sort(key=lambda i: i.peer_id)
    return ids


def _signed_now(wires: list[bytes]) -> list[bytes]:
    """``wires`` (version-2 events) signed again by their authors at :data:`PROTOCOL_VERSION`,
    in the same order, each id they name (``prev``, 8-byte prefixes in a body) the new one's.
    An event is signed once every event it names is (a frontier may name an event later in
    the log: its author held it first)."""
    keys = {i.peer_id: i for i in _keys()}
    old = []
    for wire in wires:
        payload, signature = msgpack.unpackb(wire)
        old.append((msgpack.unpackb(payload), hashlib.sha256(payload + signature).digest()))
    known = {oid[:8] for _, oid in old}
    new: dict[bytes, bytes] = {}  # old id (and its 8-byte prefix) -> new id
    out: dict[int, bytes] = {}

    def named(value: object) -> list[bytes]:
        if isinstance(value, bytes):
            return [value] if len(value) == 8 and value in known else []
        return [n for v in value for n in named(v)] if isinstance(value, list) else []

    def mapped(value: object) -> object:
        if isinstance(value, bytes) and len(value) == 8 and value in known:
            return new[value][:8]
        return [mapped(v) for v in value] if isinstance(value, list) else value

    while len(out) < len(old):
        progress = False
        for number, (fields, oid) in enumerate(old):
            needs = named(fields[7]) + ([] if fields[4] is None else [fields[4]])
            if number in out or any(n not in new for n in needs):
                continue
            body = mapped(fields[7])
            prev = None if fields[4] is None else new[fields[4]]
            payload = msgpack.packb([PROTOCOL_VERSION, *fields[1:4], prev, *fields[5:7], body])
            signature = keys[fields[2]].sign(SIGNATURE_DOMAIN + payload)
            new[oid] = new[oid[:8]] = hashlib.sha256(payload + signature).digest()
            out[number] = msgpack.packb([payload, signature])
            progress = True
        assert progress, "an event names one no event of the log is"
    return [out[number] for number in range(len(old))]


def _game() -> tuple[Identity, GameSpec]:
    """Seat 1's key and the game, as ``scripts/chaos.py`` made them for the seed."""
    ids = _keys()
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


def _replay(data: Path, restored: int) -> tuple[Peer, Peer]:
    """Seat 1's core restored from the first ``restored`` events of ``data`` and fed the
    received ones after them, one at a time; and a core restored from the same events."""
    identity, spec = _game()
    rows = [line.split() for line in data.read_text().splitlines()]
    wires = _signed_now([bytes.fromhex(data) for _, data in rows])
    peer, _ = Peer.restore(identity, spec, wires[:restored], 0.0)
    held = wires[:restored]
    for number, ((kind, _), wire) in enumerate(zip(rows, wires, strict=True)):
        if number < restored or kind != "R":
            continue  # our own events after the restore point: signed live, not fed
        peer.feed(wire, 1.0 + number / 100)
        held.append(wire)
    fresh, _ = Peer.restore(identity, spec, held, 0.0)
    return peer, fresh


def test_folds_a_fed_core_keeps_no_claim_past_a_cut_decided_later() -> None:
    peer, fresh = _replay(DATA, RESTORED)
    assert dict(fresh.tentative.dropped) == dict(peer.tentative.dropped) == {2: 31}
    assert ("0S", ["AS", "2S", "3S"]) in _lake(fresh, final=True)
    assert dict(fresh.final.dropped) == dict(peer.final.dropped) == {2: 31}
    assert _lake(peer, final=True) == _lake(fresh, final=True)
    assert _lake(peer) == _lake(fresh)


def test_folds_a_fed_core_keeps_no_claim_past_a_cut_decided_later_second_run() -> None:
    """The seed's second run: seats 0 and 1 vote seat 2 out counting 35, seat 1's vote past
    the count (38) of seat 0's later vote on it, which seat 0 withdraws later; seat 2's
    claims past 35 (3H on 0H, 2C on 0C) were final in the fed core, not in a fresh one."""
    peer, fresh = _replay(DATA_G2, 117)
    assert dict(fresh.tentative.dropped) == dict(peer.tentative.dropped) == {2: 35}
    assert ("0H", ["AH", "2H"]) in _lake(fresh, final=True)  # (no 3H: past the cut)
    assert ("0C", ["AC"]) in _lake(fresh, final=True)  # (no 2C)
    assert peer.stable == fresh.stable  # (150: the drop not final yet; 179 before)
    assert _lake(peer, final=True) == _lake(fresh, final=True)
    assert _lake(peer) == _lake(fresh)
