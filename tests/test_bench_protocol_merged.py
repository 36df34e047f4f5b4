"""``scripts/bench_protocol.py --merged``: seat 0's inputs with message pairs fed as one."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from bench_protocol import merged_inputs, recorded_inputs  # (a script beside the tests)

from p2p_nertz.protocol.envelope import EnvelopeCache
from p2p_nertz.protocol.peer import Peer, Record, Reserve, Send


def _messages(inputs: list[tuple[str, tuple[object, ...]]]) -> list[object]:
    out: list[object] = []
    for name, args in inputs:
        if name == "feed":
            out.append(args[0])
        elif name == "feed_many":
            out.extend(args[0])  # type: ignore[call-overload]
    return out


def test_merged_pairs_feed_the_same_messages_and_end_in_the_same_game() -> None:
    sim, inputs, returned = recorded_inputs(2)
    merged = merged_inputs(inputs, returned)
    assert len(merged) < len(inputs)
    assert _messages(merged) == _messages(inputs)  # every message, in order
    # Only where the first of a pair sent and logged nothing.
    i = 0
    for name, _ in merged:
        if name == "feed_many":
            assert not any(isinstance(e, (Send, Record, Reserve)) for e in returned[i])
            i += 2
        else:
            i += 1
    assert i == len(inputs)
    peers = []
    for replayed in (inputs, merged):
        peer = Peer(sim.identities[0], sim.spec, 0.0, sim.config.peer, envelopes=EnvelopeCache())
        for name, args in replayed:
            getattr(peer, name)(*args)
        peers.append(peer)
    # Our events are the game's, byte for byte, and the final fold is the same.
    assert [m.wire for m in peers[1].events(0)] == [m.wire for m in peers[0].events(0)]
    assert peers[1].final.digest() == peers[0].final.digest()
    assert peers[1].stable == peers[0].stable
